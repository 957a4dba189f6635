"""gradcheck: compare the gradients backward computes with finite differences, in float64.

    >>> import autograd_lab as ag
    >>> x = ag.tensor([0.5, 2.0], dtype=ag.float64, requires_grad=True)
    >>> ag.autograd.gradcheck(lambda x: (x * x.sin()).sum(), (x,))
    True

For every input element x_k we nudge it by ±eps and watch every output move: the *numerical*
Jacobian (f(x+eps) - f(x-eps)) / 2eps. The *analytical* Jacobian comes from backward, one output
element at a time. They must agree within atol + rtol * |numerical|.
"""

import warnings

import numpy as np

from ..tensor import Tensor, _make
from .engine import grad
from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """The analytical and numerical gradients disagree."""


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _outputs(fn, inputs):
    return tuple(o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor))


def numerical_jacobian(fn, inputs, eps=1e-6):
    """{(input index, output index): matrix[input element, output element]} by central differences."""
    with no_grad():
        outputs = _outputs(fn, inputs)
    jacobians = {}
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        columns = {j: np.zeros((x.numel(), o.numel())) for j, o in enumerate(outputs)}
        base = x._data
        for k in range(base.size):
            diffs = []
            for sign in (1, -1):
                nudged = base.astype(
                    np.float64 if base.dtype.kind == "f" else base.dtype, copy=True
                )
                nudged.flat[k] += sign * eps
                args = list(inputs)
                # requires_grad as x had: gradgradcheck's fn differentiates with respect to it
                args[i] = _make(nudged.astype(base.dtype, copy=False)).requires_grad_()
                with no_grad():
                    diffs.append([o._data.astype(np.float64) for o in _outputs(fn, args)])
            for j, (plus, minus) in enumerate(zip(*diffs)):
                columns[j][k] = ((plus - minus) / (2 * eps)).ravel()
        for j in columns:
            jacobians[(i, j)] = columns[j]
    return jacobians


def analytical_jacobian(fn, inputs):
    """The same matrices, computed by backward: one backward pass per output element."""
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outputs = _outputs(fn, inputs)
    jacobians = {
        (i, j): np.zeros((inputs[i].numel(), o.numel()))
        for i in diff
        for j, o in enumerate(outputs)
    }
    for j, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        for m in range(out.numel()):
            seed = np.zeros(out.shape, dtype=out._data.dtype)
            seed.flat[m] = 1
            grads = grad(
                out, [inputs[i] for i in diff], _make(seed), retain_graph=True, allow_unused=True
            )
            for i, g in zip(diff, grads):
                if g is not None:
                    jacobians[(i, j)][:, m] = g._data.astype(np.float64).ravel()
    return jacobians


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """True when backward's gradients match finite differences; otherwise raise (or return False)."""
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise ValueError("gradcheck needs at least one input tensor with requires_grad=True")
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.name != "float64":
            warnings.warn(
                f"gradcheck input is {x.dtype}; finite differences are only reliable in float64. "
                "Fix: create the inputs with dtype=float64 (or call .double()).",
                UserWarning,
                stacklevel=2,
            )
    numerical = numerical_jacobian(fn, inputs, eps)
    analytical = analytical_jacobian(fn, inputs)
    for key, num in numerical.items():
        ana = analytical[key]
        bad = np.abs(ana - num) > atol + rtol * np.abs(num)
        if bad.any():
            if not raise_exception:
                return False
            raise GradcheckError(_mismatch_report(key, num, ana, bad))
    return True


def _mismatch_report(key, numerical, analytical, bad):
    i, j = key
    lines = [
        f"gradient mismatch for output {j} with respect to input {i}: backward's gradient "
        "(analytical) disagrees with finite differences (numerical) at these entries:",
        f"  {'input elem':>10} {'output elem':>11} {'numerical':>14} {'analytical':>14}",
    ]
    for k, m in list(zip(*np.nonzero(bad)))[:8]:
        lines.append(f"  {k:>10} {m:>11} {numerical[k, m]:>14.6g} {analytical[k, m]:>14.6g}")
    lines.append("Check the backward formula of the operation (or custom Function) under test.")
    return "\n".join(lines)


def gradgradcheck(
    fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True
):
    """gradcheck of the gradient itself: checks second derivatives (backward of backward)."""
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    with no_grad():
        outputs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)  # fixed, so a failure can be reproduced
        grad_outputs = tuple(
            _make(rng.standard_normal(o.shape).astype(o._data.dtype)).requires_grad_()
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)

    def first_derivative(*args):
        xs, gos = args[: len(inputs)], args[len(inputs) :]
        with enable_grad():  # numerical_jacobian calls us under no_grad(); the graph is needed here
            outs = _outputs(fn, xs)
            grads = grad(outs, [xs[i] for i in diff], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps, atol, rtol, raise_exception)
