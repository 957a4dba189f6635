"""autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp) against PyTorch: the same values and
the same nesting of tuples, for single and tuple inputs and outputs; create_graph results that can
be differentiated again; strict mode's refusals and the errors for wrong arguments."""

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.autograd import functional


def _assert_same(ours, theirs, path="result", requires_grad=True):
    """Same structure (a Tensor, or a tuple of the same length, recursively) and values (and
    requires_grad, unless told not to compare it)."""
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs), (
            f"{path}: PyTorch gives a {type(theirs)}, not {type(ours)}"
        )
        assert len(ours) == len(theirs), f"{path}: {len(ours)} elements, PyTorch {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{path}[{i}]", requires_grad)
        return
    assert isinstance(ours, ag.Tensor), f"{path}: PyTorch gives a Tensor, we give {type(ours)}"
    assert tuple(ours.shape) == tuple(theirs.shape), path
    if requires_grad:
        assert ours.requires_grad == theirs.requires_grad, path
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=path
    )


def _inputs(lib, shapes):
    """Float64 inputs of the given shapes, the same numbers in both libraries."""
    rng = np.random.default_rng(0)
    made = tuple(lib.tensor(rng.uniform(0.5, 1.5, shape)) for shape in shapes)
    return made


# Functions of the autograd tutorial and PyTorch's docs, and a few shapes beyond them. Each is
# (function of lib, input shapes, given as a tuple?).
FUNCTIONS = {
    "exp_reducer (docs)": (lambda lib: lambda x: x.exp().sum(dim=1), [(4, 4)], False),
    "exp_adder, tuple inputs (docs)": (
        lambda lib: lambda x, y: 2 * x.exp() + 3 * y,
        [(2,), (2,)],
        True,
    ),
    "vector to vector": (lambda lib: lambda x: x.sin() * x.pow(3), [(3,)], False),
    "matrix to scalar": (lambda lib: lambda x: (x @ x).tanh().sum(), [(2, 2)], False),
    "one input given as a tuple": (lambda lib: lambda x: x**2, [(3,)], True),
    "tuple outputs": (lambda lib: lambda x: (x.exp(), (x * x).sum()), [(3,)], False),
    "tuple in, tuple out": (
        lambda lib: lambda x, y: (x * y, x.sum() + y.pow(2).sum()),
        [(2,), (2,)],
        True,
    ),
    "an unused input": (lambda lib: lambda x, y: x.sigmoid(), [(2,), (3,)], True),
    "linear model (docs)": (
        lambda lib: lambda x: x @ lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64),
        [(4, 2)],
        False,
    ),
}

SCALAR_FUNCTIONS = {
    "pow_reducer (docs)": (lambda lib: lambda x: x.pow(3).sum(), [(2, 2)], False),
    "pow_adder_reducer (docs)": (
        lambda lib: lambda x, y: (2 * x.pow(2) + 3 * y.pow(2)).sum(),
        [(2,), (2,)],
        True,
    ),
    "softmax cross term": (
        lambda lib: lambda x, y: (x.softmax(0) * y).sum() * x.sum(),
        [(3,), (3,)],
        True,
    ),
    "scalar input": (lambda lib: lambda x: x.sin() * x.exp(), [()], False),
    "an unused input": (lambda lib: lambda x, y: (x * x * x).sum(), [(2,), (1,)], True),
}


def _call(lib, table, name, op, **kwargs):
    make, shapes, as_tuple = table[name]
    inputs = _inputs(lib, shapes)
    inputs = inputs if as_tuple else inputs[0]
    return getattr(lib.autograd.functional, op)(make(lib), inputs, **kwargs)


def _v(lib, like):
    """A vector shaped like `like` (a Tensor or tuple of them), the same in both libraries."""
    if isinstance(like, tuple):
        return tuple(_v(lib, t) for t in like)
    values = np.linspace(-1.0, 2.0, int(np.prod(like.shape))).reshape(tuple(like.shape))
    return lib.tensor(values)


@pytest.mark.oracle
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_jacobian_as_in_pytorch(name, vectorize, torch):
    ours = _call(ag, FUNCTIONS, name, "jacobian", vectorize=vectorize)
    theirs = _call(torch, FUNCTIONS, name, "jacobian", vectorize=vectorize)
    _assert_same(ours, theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["exp_reducer (docs)", "tuple in, tuple out"])
def test_forward_mode_jacobian_gives_the_same_numbers(name, torch):
    kwargs = dict(vectorize=True, strategy="forward-mode")
    ours = _call(ag, FUNCTIONS, name, "jacobian", **kwargs)
    _assert_same(ours, _call(torch, FUNCTIONS, name, "jacobian", **kwargs))


@pytest.mark.oracle
@pytest.mark.parametrize("name", FUNCTIONS)
def test_vjp_and_jvp_as_in_pytorch(name, torch):
    make, shapes, as_tuple = FUNCTIONS[name]
    for op in ("vjp", "jvp"):
        results = []
        for lib in (ag, torch):
            inputs = _inputs(lib, shapes)
            inputs = inputs if as_tuple else inputs[0]
            like = make(lib)(*(inputs if as_tuple else (inputs,))) if op == "vjp" else inputs
            v = _v(lib, like)
            results.append(getattr(lib.autograd.functional, op)(make(lib), inputs, v))
        _assert_same(*results, path=op)


@pytest.mark.oracle
@pytest.mark.parametrize("name", SCALAR_FUNCTIONS)
def test_hessian_vhp_hvp_as_in_pytorch(name, torch):
    _assert_same(
        _call(ag, SCALAR_FUNCTIONS, name, "hessian"),
        _call(torch, SCALAR_FUNCTIONS, name, "hessian"),
    )
    make, shapes, as_tuple = SCALAR_FUNCTIONS[name]
    for op in ("vhp", "hvp", "vjp"):
        results = []
        for lib in (ag, torch):
            inputs = _inputs(lib, shapes)
            inputs = inputs if as_tuple else inputs[0]
            v = _v(lib, inputs) if op != "vjp" else None  # one output element: v may be left out
            results.append(getattr(lib.autograd.functional, op)(make(lib), inputs, v))
        _assert_same(*results, path=op)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["pow_reducer (docs)", "pow_adder_reducer (docs)"])
def test_hessian_options_give_pytorchs_numbers_and_nesting(name, torch):
    options = dict(vectorize=True)
    ours = _call(ag, SCALAR_FUNCTIONS, name, "hessian", **options)
    _assert_same(ours, _call(torch, SCALAR_FUNCTIONS, name, "hessian", **options))
    # PyTorch's forward-mode Hessian comes back attached to a graph (requires_grad=True) even
    # without create_graph=True, because that path sets requires_grad on the inputs themselves;
    # ours is detached, as every result without create_graph is. Values and nesting agree.
    options = dict(vectorize=True, outer_jacobian_strategy="forward-mode")
    ours = _call(ag, SCALAR_FUNCTIONS, name, "hessian", **options)
    theirs = _call(torch, SCALAR_FUNCTIONS, name, "hessian", **options)
    _assert_same(ours, theirs, requires_grad=False)


@pytest.mark.oracle
def test_v_may_be_left_out_for_a_one_element_input(torch):
    for op in ("jvp", "hvp", "vhp"):
        results = [
            getattr(lib.autograd.functional, op)(
                lambda x: x.exp() * x, lib.tensor(0.7, dtype=lib.float64)
            )
            for lib in (ag, torch)
        ]
        _assert_same(*results, path=op)


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_create_graph_results_can_be_differentiated_again(op, torch):
    """With create_graph=True the result keeps its graph back to the inputs: its gradient is a
    third derivative, the same as PyTorch's."""
    results = []
    for lib in (ag, torch):
        x = lib.tensor([0.3, 0.9], dtype=lib.float64, requires_grad=True)
        f = lambda t: (t.sin() * t.pow(2)).sum()  # noqa: E731
        function = getattr(lib.autograd.functional, op)
        if op in ("jacobian", "hessian"):
            result = function(f, x, create_graph=True)
        else:
            result = function(
                f,
                x,
                lib.tensor([1.0, -2.0], dtype=lib.float64) if op != "vjp" else None,
                create_graph=True,
            )[1]
        assert result.requires_grad
        (g,) = lib.autograd.grad(result.sum(), x)
        results.append((result, g))
    _assert_same(results[0], results[1])


def test_results_are_detached_without_create_graph():
    x = ag.tensor([0.3, 0.9], requires_grad=True)
    output, product = functional.vjp(lambda t: t * t, x, ag.ones(2))
    assert not output.requires_grad and not product.requires_grad
    assert not functional.jacobian(lambda t: t * t, x).requires_grad
    assert x.grad is None  # nothing was accumulated into the caller's tensors


# ---- strict mode and wrong arguments -------------------------------------------------------------

FAILURES = {
    "strict: an unused input": (
        lambda lib: lib.autograd.functional.jacobian(
            lambda x, y: x * 2, (lib.ones(2), lib.ones(2)), strict=True
        ),
        RuntimeError,
        "input 1",
    ),
    "strict: an output that does not need grad": (
        lambda lib: lib.autograd.functional.vjp(
            lambda x: lib.ones(2), lib.ones(2), lib.ones(2), strict=True
        ),
        RuntimeError,
        "output 0",
    ),
    "strict: a linear function's hessian": (
        lambda lib: lib.autograd.functional.hessian(lambda x: x.sum(), lib.ones(2), strict=True),
        RuntimeError,
        "strict",
    ),
    "strict with vectorize": (
        lambda lib: lib.autograd.functional.jacobian(
            lambda x: x, lib.ones(2), strict=True, vectorize=True
        ),
        RuntimeError,
        "vectorize",
    ),
    "forward-mode without vectorize": (
        lambda lib: lib.autograd.functional.jacobian(
            lambda x: x, lib.ones(2), strategy="forward-mode"
        ),
        NotImplementedError,
        "vectorize=True",
    ),
    "forward-mode with create_graph": (
        lambda lib: lib.autograd.functional.jacobian(
            lambda x: x, lib.ones(2), create_graph=True, vectorize=True, strategy="forward-mode"
        ),
        NotImplementedError,
        "create_graph",
    ),
    "a list of inputs": (
        lambda lib: lib.autograd.functional.jacobian(lambda x: x, [lib.ones(2)]),
        TypeError,
        "tuple",
    ),
    "a function returning a number": (
        lambda lib: lib.autograd.functional.jacobian(lambda x: 3.0, lib.ones(2)),
        TypeError,
        "outputs",
    ),
    "v left out for a vector output": (
        lambda lib: lib.autograd.functional.vjp(lambda x: x * 2, lib.ones(2)),
        RuntimeError,
        "single element",
    ),
    "v of the wrong shape": (
        lambda lib: lib.autograd.functional.jvp(lambda x: x * 2, lib.ones(2), lib.ones(3)),
        RuntimeError,
        "shape",
    ),
    "v with too many tensors": (
        lambda lib: lib.autograd.functional.vjp(
            lambda x: x * 2, lib.ones(2), (lib.ones(2), lib.ones(2))
        ),
        RuntimeError,
        "single Tensor",
    ),
    "hessian of a vector": (
        lambda lib: lib.autograd.functional.hessian(lambda x: x * x, lib.ones(2)),
        RuntimeError,
        "single element",
    ),
    "hvp of a tuple": (
        lambda lib: lib.autograd.functional.hvp(
            lambda x: (x.sum(), x.sum()), lib.ones(2), lib.ones(2)
        ),
        RuntimeError,
        "single Tensor",
    ),
}


@pytest.mark.parametrize("name", FAILURES)
def test_wrong_calls_raise_pytorchs_error_class_with_a_clear_message(name, lib):
    action, error, words = FAILURES[name]
    with pytest.raises(error) as caught:
        action(lib)
    if lib is ag:
        assert words in str(caught.value)
