"""Derivatives of a whole function at a point: PyTorch's `torch.autograd.functional`.

`backward()` and `grad()` differentiate tensors you already computed. These functions take the
function itself and the point, run it, and return the derivative you ask for:

    >>> import autograd_lab as ag
    >>> from autograd_lab.autograd.functional import jacobian, hessian, vjp, jvp
    >>> def f(x):
    ...     return x**2
    >>> x = ag.tensor([1.0, 2.0])
    >>> jacobian(f, x)                       # d f_i / d x_j: diagonal 2 x
    tensor([[2., 0.],
            [0., 4.]])
    >>> vjp(f, x, ag.tensor([1.0, 1.0]))[1]  # v @ J: one backward pass
    tensor([2., 4.])
    >>> jvp(f, x, ag.tensor([1.0, 0.0]))[1]  # J @ v: the derivative along v
    tensor([2., 0.])
    >>> hessian(lambda x: (x**3).sum(), x)   # the Jacobian of the gradient
    tensor([[ 6.,  0.],
            [ 0., 12.]])

What is given as a tuple comes back as a tuple: `inputs` may be one Tensor or a tuple of them, and
so may what `func` returns; a Jacobian is then a tuple (one per output) of tuples (one per input).

How each is computed, from reverse mode (backward passes) alone:
- vjp: one backward pass with `v` as the starting gradient;
- jacobian: one vjp per output element (row by row);
- jvp: the "double-backward trick": `g(u) = u @ J` is linear in u, so the vjp of g with `v` is J @ v;
- hessian: the jacobian of the function that computes the gradient (create_graph=True);
- vhp: the vjp of the gradient; hvp: the jvp of the gradient (the trick again).

NB: PyTorch can compute a Jacobian with forward-mode AD and batch the rows with vmap
(`strategy="forward-mode"`, `vectorize=True`); we have neither, so those options give the same
Jacobian computed row by row with backward passes (slower, same numbers). `strict=True` refuses a
function whose result does not depend on an input, instead of returning zeros for it.
"""

from ..creation import zeros_like
from ..ops import stack
from ..tensor import Tensor
from .engine import grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# ---- one Tensor or a tuple of them ------------------------------------------------------------------


def _as_tensors(value, what, caller):
    """(was it a tuple?, the tensors as a tuple). Only a Tensor or a tuple of Tensors is accepted."""
    was_tuple = isinstance(value, tuple)
    tensors = value if was_tuple else (value,)
    for i, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            where = f"element {i} of the tuple is" if was_tuple else "it is"
            raise TypeError(
                f"{caller}(): the {what} must be a Tensor or a tuple of Tensors, but {where} a "
                f"{type(tensor).__name__}. Fix: wrap numbers with autograd_lab.tensor(...), and use "
                "a tuple, not a list, for several tensors."
            )
    return was_tuple, tensors


def _as_given(results, was_tuple):
    """Undo `_as_tensors`: a tuple of one element becomes that element again, unless a tuple was
    given. `was_tuple` may be a pair (outer, inner) for a tuple of tuples (a Jacobian)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            results = tuple(row[0] for row in results)
        return results if outer else results[0]
    return results if was_tuple else results[0]


def _fresh(tensors, create_graph, requires_grad):
    """New tensor objects for the inputs, so that the function's own uses of the same tensors
    (captured from outside) are not confused with the inputs. With create_graph they stay
    connected to their history (a view), so that the result can be differentiated again."""
    fresh = []
    for tensor in tensors:
        if create_graph and tensor.requires_grad:
            fresh.append(tensor.view(tensor.shape))
        else:
            fresh.append(tensor.detach().requires_grad_(requires_grad))
    return tuple(fresh)


def _finish(tensors, create_graph):
    """Results without their graph, unless the caller asked to differentiate them again."""
    if create_graph:
        return tensors
    return tuple(t.detach() if isinstance(t, Tensor) else _finish(t, False) for t in tensors)


def _check_v(v, like, like_is_tuple, caller):
    """v must have one tensor per tensor of `like`, of the same shape."""
    if len(v) != len(like):
        expected = f"a tuple of {len(like)} tensors" if like_is_tuple else "a single Tensor"
        raise RuntimeError(f"{caller}(): v should be {expected}, but it has {len(v)}.")
    for i, (tensor, reference) in enumerate(zip(v, like)):
        if tensor.shape != reference.shape:
            entry = f"entry {i} of v" if like_is_tuple else "v"
            raise RuntimeError(
                f"{caller}(): {entry} has shape {list(tensor.shape)} but should have shape "
                f"{list(reference.shape)}, the shape of what it multiplies."
            )


def _check_v_may_be_omitted(tensors, caller, what):
    """v may be left out (it is then 1) only when `what` is one tensor with one element."""
    if len(tensors) != 1 or tensors[0].nelement() != 1:
        raise RuntimeError(
            f"{caller}(): v can be left out only when {what} is a single Tensor with a single "
            f"element (then v is 1). Fix: pass v, shaped like {what}."
        )


# ---- strict mode's checks ---------------------------------------------------------------------------


def _check_outputs_require_grad(outputs, strict, caller):
    if not strict:
        return
    for i, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(
                f"{caller}(strict=True): output {i} of the function does not require grad, so it "
                "does not depend on the inputs. Compute the outputs from the inputs with "
                "operations autograd records, or pass strict=False to get zeros."
            )


def _check_depends_on_inputs(grads, strict, caller, what):
    if not strict:
        return
    for i, g in enumerate(grads):
        if g is None or not g.requires_grad:
            raise RuntimeError(
                f"{caller}(strict=True): {what} of the function does not depend on input {i}, "
                "which strict mode forbids. Pass strict=False to get zeros for it."
            )


# ---- gradients: autograd.grad that tolerates outputs without a graph --------------------------------


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """d(outputs)/d(inputs), None for an input the outputs do not depend on. Outputs that do not
    require grad contribute nothing (instead of being an error, as in autograd.grad)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad(
        [o for o, _ in pairs],
        inputs,
        [g for _, g in pairs],
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


def _zeros_where_none(grads, like, strict, create_graph, caller, what):
    """Fill in zeros for the inputs that got no gradient (strict mode refuses instead)."""
    filled = []
    for i, (g, reference) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"{caller}(strict=True): {what} does not depend on input {i}, which strict "
                    "mode forbids. Pass strict=False to get zeros for it."
                )
            g = zeros_like(reference)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(
                f"{caller}(strict=True, create_graph=True): {what} for input {i} does not depend "
                "on the inputs, so it cannot be differentiated again. Pass strict=False."
            )
        filled.append(g)
    return tuple(filled)


# ---- vector-Jacobian and Jacobian-vector products -----------------------------------------------


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """`(func(inputs), v @ J)`: the vector-Jacobian product, by one backward pass from `v`.

    `v` is shaped like func's output (it may be left out when that output has one element);
    the product is shaped like `inputs`.
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, requires_grad=True)
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the function", "vjp")
        _check_outputs_require_grad(outputs, strict, "vjp")
        if v is None:
            _check_v_may_be_omitted(outputs, "vjp", "the function's output")
        else:
            v = _fresh(_as_tensors(v, "v", "vjp")[1], create_graph, requires_grad=False)
            _check_v(v, outputs, outputs_tuple, "vjp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        product = _zeros_where_none(grads, inputs, strict, create_graph, "vjp", "the output")
    outputs, product = _finish(outputs, create_graph), _finish(product, create_graph)
    return _as_given(outputs, outputs_tuple), _as_given(product, inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """`(func(inputs), J @ v)`: the Jacobian-vector product, the derivative of func along `v`.

    `v` is shaped like `inputs` (it may be left out when the input has one element); the product
    is shaped like func's output. Computed with the double-backward trick: `u -> u @ J` is linear
    in the dummy vector u, and the vjp of that function with v is J @ v.
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, requires_grad=True)
        if v is None:
            _check_v_may_be_omitted(inputs, "jvp", "the input")
        else:
            v = _fresh(_as_tensors(v, "v", "jvp")[1], create_graph, requires_grad=False)
            _check_v(v, inputs, inputs_tuple, "jvp")
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the function", "jvp")
        _check_outputs_require_grad(outputs, strict, "jvp")
        # The dummy u: its value never matters (u @ J is linear in u), only that it is finite.
        dummies = tuple(zeros_like(output, requires_grad=True) for output in outputs)
        u_times_jacobian = _grad(outputs, inputs, dummies, create_graph=True)
        _check_depends_on_inputs(u_times_jacobian, strict, "jvp", "the gradient")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(u_times_jacobian, dummies, v, create_graph=create_graph)
        product = _zeros_where_none(grads, outputs, strict, create_graph, "jvp", "the product")
    outputs, product = _finish(outputs, create_graph), _finish(product, create_graph)
    return _as_given(outputs, outputs_tuple), _as_given(product, outputs_tuple)


# ---- whole Jacobians and Hessians ---------------------------------------------------------------


def jacobian(
    func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"
):
    """The Jacobian of `func` at `inputs`: entry [i..., j...] is d output[i...] / d input[j...],
    so its shape is output.shape + input.shape. One backward pass per output element.

    With tuples, a tuple (one per output) of tuples (one per input); a single Tensor where a single
    Tensor was given.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            f'jacobian(): strategy must be "reverse-mode" or "forward-mode", got {strategy!r}.'
        )
    if strategy == "forward-mode":  # PyTorch's rules for its forward-mode option (see NB above)
        if create_graph:
            raise NotImplementedError(
                'jacobian(): strategy="forward-mode" and create_graph=True cannot be used '
                'together. Fix: create_graph=False, or strategy="reverse-mode".'
            )
        if strict:
            raise RuntimeError(
                'jacobian(): strategy="forward-mode" and strict=True cannot be used together. '
                'Fix: strict=False, or strategy="reverse-mode".'
            )
        if not vectorize:
            raise NotImplementedError(
                'jacobian(): strategy="forward-mode" needs vectorize=True (as in PyTorch). Fix: '
                'pass vectorize=True, or use strategy="reverse-mode".'
            )
    if vectorize and strict:
        raise RuntimeError(
            "jacobian(): strict=True and vectorize=True cannot be used together. Fix: set one "
            "of them to False."
        )
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, requires_grad=True)
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the function", "jacobian")
        _check_outputs_require_grad(outputs, strict, "jacobian")
        blocks = tuple(
            _jacobian_of_one_output(i, output, inputs, create_graph, strict)
            for i, output in enumerate(outputs)
        )
    blocks = _finish(blocks, create_graph)
    if strategy == "forward-mode":  # PyTorch's forward-mode path nests lists, not tuples: match it
        blocks = [list(row) for row in blocks]
    return _as_given(blocks, (outputs_tuple, inputs_tuple))


def _jacobian_of_one_output(index, output, inputs, create_graph, strict):
    """For one output, its Jacobian with respect to each input: row k is the gradient of its k-th
    element (one backward pass each; retain_graph keeps the graph for the next row)."""
    rows = [[] for _ in inputs]
    flat = output.reshape(-1)
    for k in range(output.nelement()):
        grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        what = f"output {index}"
        filled = _zeros_where_none(grads, inputs, strict, create_graph, "jacobian", what)
        for row, g in zip(rows, filled):
            row.append(g)
    blocks = []
    for row, input in zip(rows, inputs):
        if row:
            blocks.append(stack(row, dim=0).view(output.shape + input.shape))
        else:  # an output with no elements: an empty Jacobian
            blocks.append(zeros_like(input).reshape(-1)[:0].view(output.shape + input.shape))
    return tuple(blocks)


def hessian(
    func,
    inputs,
    create_graph=False,
    strict=False,
    vectorize=False,
    outer_jacobian_strategy="reverse-mode",
):
    """The Hessian of a function with one output element: the Jacobian of its gradient, shape
    input.shape + input.shape. With a tuple of inputs, a tuple of tuples: entry [i][j] is
    d² f / d input_i d input_j.
    """
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'hessian(): outer_jacobian_strategy must be "reverse-mode" or "forward-mode", got '
            f"{outer_jacobian_strategy!r}."
        )
    inputs_tuple, inputs = _as_tensors(inputs, "inputs", "hessian")

    def one_number(*args):  # func, checked to give one element: the Hessian is of a scalar
        output = func(*args)
        _, outputs = _as_tensors(output, "outputs of the function", "hessian")
        _check_outputs_require_grad(outputs, strict, "hessian")
        _check_one_element(output, "hessian")
        return output.squeeze()

    def gradient(*args):  # the first derivatives, kept differentiable
        first = jacobian(one_number, args, create_graph=True)
        _check_depends_on_inputs(first, strict, "hessian", "the gradient")
        return first

    second = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _as_given(second, (inputs_tuple, inputs_tuple))


def _check_one_element(output, caller):
    if not isinstance(output, Tensor):
        raise RuntimeError(
            f"{caller}(): the function must return a single Tensor (with one element), not a "
            f"{type(output).__name__}."
        )
    if output.nelement() != 1:
        raise RuntimeError(
            f"{caller}(): the function must return a Tensor with a single element, but its "
            f"output has shape {list(output.shape)}. Fix: reduce it to one number, e.g. .sum()."
        )


# ---- products with the Hessian ------------------------------------------------------------------


def _gradient_of_scalar(func, inputs, v, create_graph, strict, caller):
    """Shared start of vhp and hvp: run func, check it gives one element, and take its gradient
    with the graph kept (so that the gradient can be differentiated again)."""
    inputs_tuple, inputs = _as_tensors(inputs, "inputs", caller)
    inputs = _fresh(inputs, create_graph, requires_grad=True)
    if v is None:
        _check_v_may_be_omitted(inputs, caller, "the input")
    else:
        v = _fresh(_as_tensors(v, "v", caller)[1], create_graph, requires_grad=False)
        _check_v(v, inputs, inputs_tuple, caller)
    output = func(*inputs)
    outputs_tuple, outputs = _as_tensors(output, "outputs of the function", caller)
    _check_outputs_require_grad(outputs, strict, caller)
    if outputs_tuple:
        raise RuntimeError(f"{caller}(): the function must return a single Tensor, not a tuple.")
    _check_one_element(output, caller)
    first = _grad(outputs, inputs, create_graph=True)
    _check_depends_on_inputs(first, strict, caller, "the gradient")
    return inputs_tuple, inputs, v, outputs, first


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """`(func(inputs), v @ H)`: a vector times the Hessian of a one-element function, by a
    backward pass through its gradient. Shaped like `inputs`."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, first = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "vhp"
        )
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(first, inputs, v, create_graph=create_graph)
        product = _zeros_where_none(grads, inputs, strict, create_graph, "vhp", "the gradient")
    outputs, product = _finish(outputs, create_graph), _finish(product, create_graph)
    return outputs[0], _as_given(product, inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """`(func(inputs), H @ v)`: the Hessian times a vector, with the double-backward trick applied
    to the gradient (as jvp does to a function). Equal to vhp for a symmetric Hessian, which is
    the usual case; shaped like `inputs`."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, first = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "hvp"
        )
        dummies = tuple(zeros_like(input, requires_grad=True) for input in inputs)
        u_times_hessian = _grad(first, inputs, dummies, create_graph=True)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(u_times_hessian, dummies, v, create_graph=create_graph)
        product = _zeros_where_none(grads, inputs, strict, create_graph, "hvp", "the Hessian")
    outputs, product = _finish(outputs, create_graph), _finish(product, create_graph)
    return outputs[0], _as_given(product, inputs_tuple)
