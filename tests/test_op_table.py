"""The op table is the specification: every entry of `autograd_lab.ops.table.OPS` is tested here.

For each op, over shapes drawn from its shape family (or its explicit example shapes) and values
drawn inside its `domain`:

- gradcheck:      backward's gradients equal finite differences (float64);
- gradgradcheck:  so do the gradients of the gradients, where `spec.second_order`;
- node:           the result's `grad_fn.name()` is `spec.node`;
- oracle:         values, dtype, gradients and the grad_fn name equal PyTorch's — float64 to
                  rounding error, float32 to float32's precision.

Nothing here names an op: adding a line to the table adds its tests.
"""

import numpy as np
import pytest
from conftest import to_numpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck
from autograd_lab.ops.table import OPS

# Few examples per op: the table is long, and every example runs a full gradient check.
# (`function_scoped_fixture`: the fixtures used here hold no state that one example could leak.)
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# ---- drawing inputs ------------------------------------------------------------------------------

SIDES = {"min_side": 1, "max_side": 4}
SHAPE_FAMILIES = {  # family -> (arity -> strategy of a tuple of input shapes)
    "any": lambda arity: array_shapes(min_dims=0, max_dims=3, **SIDES).map(lambda s: (s,)),
    "nonempty": lambda arity: array_shapes(min_dims=1, max_dims=3, **SIDES).map(lambda s: (s,)),
    "matrix": lambda arity: array_shapes(min_dims=2, max_dims=2, **SIDES).map(lambda s: (s,)),
    "broadcast": lambda arity: mutually_broadcastable_shapes(
        num_shapes=arity, min_dims=0, max_dims=3, **SIDES
    ).map(lambda shapes: shapes.input_shapes),
}

DOMAINS = {  # where the values are drawn: away from the kinks and poles finite differences trip on
    "real": lambda rng, shape: rng.uniform(-2.0, 2.0, shape),
    "positive": lambda rng, shape: rng.uniform(0.2, 2.0, shape),
    "unit": lambda rng, shape: rng.uniform(-0.9, 0.9, shape),
    "nonzero": lambda rng, shape: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.1, 2.0, shape),
    # a grid of step 0.01: two inputs are either equal (a tie, where both sides agree on half the
    # gradient) or 0.01 apart, never within finite differences' eps of the kink
    "grid": lambda rng, shape: rng.integers(-200, 201, shape) * 0.01,
}


def _shape_id(shapes):
    return ",".join("x".join(map(str, s)) or "scalar" for s in shapes)


def _cases():
    """One case per op with a shape family; one per example shape for ops that list them."""
    for spec in OPS:
        if isinstance(spec.shapes, str):
            yield pytest.param(spec, spec.shapes, id=spec.name)
        else:
            for shapes in spec.shapes:
                yield pytest.param(spec, shapes, id=f"{spec.name}-{_shape_id(shapes)}")


CASES = list(_cases())
SECOND_ORDER_CASES = [case for case in CASES if case.values[0].second_order]
NAMED_CASES = [case for case in CASES if case.values[0].node]


def input_arrays(spec, shapes):
    """A strategy for the op's float64 input arrays: shapes from the family, values from a seed."""
    if isinstance(shapes, str):
        shape_strategy = SHAPE_FAMILIES[shapes](spec.arity)
    else:
        shape_strategy = st.just(tuple(shapes))

    def values(shapes, seed):
        rng = np.random.default_rng(seed)
        return [np.asarray(DOMAINS[spec.domain](rng, shape), dtype=np.float64) for shape in shapes]

    return st.builds(values, shape_strategy, st.integers(0, 2**32 - 1))


def leaves(lib, arrays, dtype):
    return [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]


def call(spec, lib):
    return lambda *tensors: spec.call(lib, *tensors)


def dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]  # autograd_lab.float32 / torch.float32 -> float32


def assert_same(ours, theirs, rtol, atol, what):
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape"
    assert dtype_name(ours) == dtype_name(theirs), f"{what}: dtype"
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=rtol, atol=atol, err_msg=what)


# ---- the table covers the API --------------------------------------------------------------------

DIFFERENTIABLE_API = (
    "exp log sqrt sin cos tanh sigmoid relu abs neg reciprocal pow clamp maximum minimum where "
    "log1p expm1 sum mean max min prod var std logsumexp softmax log_softmax reshape view "
    "transpose permute squeeze unsqueeze flatten expand broadcast_to cat stack split chunk matmul "
    "mm bmm dot outer cumsum cumprod amax amin norm"
).split()


@pytest.mark.parametrize("name", DIFFERENTIABLE_API)
def test_every_differentiable_function_has_a_table_entry(name):
    assert callable(getattr(ag, name)), f"autograd_lab.{name} is missing"
    assert any(spec.name.startswith(name) for spec in OPS), f"no entry of the op table tests {name}"


def test_table_entries_are_well_formed():
    names = [spec.name for spec in OPS]
    assert len(names) == len(set(names)), "op names must be unique: they are the test ids"
    for spec in OPS:
        assert spec.kind in {"elementwise", "reduction", "shape", "linalg", "nn"}, spec.name
        assert spec.domain in DOMAINS, spec.name
        if isinstance(spec.shapes, str):
            assert spec.shapes in SHAPE_FAMILIES, spec.name
            assert spec.shapes == "broadcast" or spec.arity == 1, spec.name
        else:
            assert all(len(shapes) == spec.arity for shapes in spec.shapes), spec.name


# ---- gradients against finite differences --------------------------------------------------------


@pytest.mark.parametrize("spec, shapes", CASES)
@SETTINGS
@given(data=st.data())
def test_gradcheck(spec, shapes, data):
    inputs = leaves(ag, data.draw(input_arrays(spec, shapes)), "float64")
    assert gradcheck(call(spec, ag), inputs)


@pytest.mark.parametrize("spec, shapes", SECOND_ORDER_CASES)
@SETTINGS
@given(data=st.data())
def test_gradgradcheck(spec, shapes, data):
    inputs = leaves(ag, data.draw(input_arrays(spec, shapes)), "float64")
    assert gradgradcheck(call(spec, ag), inputs)


# ---- the recorded node ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec, shapes", NAMED_CASES)
@SETTINGS
@given(data=st.data())
def test_records_the_node_named_in_the_table(spec, shapes, data):
    out = spec.call(ag, *leaves(ag, data.draw(input_arrays(spec, shapes)), "float64"))
    assert out.grad_fn is not None and out.grad_fn.name() == spec.node


# ---- PyTorch, the oracle -------------------------------------------------------------------------

TOLERANCES = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}

# PyTorch lowers `@` on anything but two vectors or two matrices into several nodes (unsqueeze,
# expand, reshape, mm or bmm, _unsafe_view, squeeze): the result's grad_fn is the last of them,
# and ours lowers it the same way (tests/test_edges_matmul_lowering.py checks the whole chain).


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", TOLERANCES)
@pytest.mark.parametrize("spec, shapes", CASES)
@SETTINGS
@given(data=st.data())
def test_matches_pytorch(torch, spec, shapes, dtype, data):
    rtol, atol = TOLERANCES[dtype]
    arrays = data.draw(input_arrays(spec, shapes))
    ours, theirs = leaves(ag, arrays, dtype), leaves(torch, arrays, dtype)
    out, expected = spec.call(ag, *ours), spec.call(torch, *theirs)
    assert_same(out, expected, rtol, atol, "forward value")

    our_node, their_node = (t.grad_fn.name() if t.grad_fn else None for t in (out, expected))
    assert our_node == their_node, "grad_fn name"

    # a random upstream gradient, not ones: a gradient sent to the wrong element would show
    upstream = np.random.default_rng(0).standard_normal(tuple(out.shape))
    out.backward(ag.tensor(upstream, dtype=getattr(ag, dtype)))
    expected.backward(torch.tensor(upstream, dtype=getattr(torch, dtype)))
    for i, (x, t) in enumerate(zip(ours, theirs)):
        assert_same(x.grad, t.grad, rtol, atol, f"gradient of input {i}")


# ---- inputs that random draws never hit --------------------------------------------------------


@pytest.mark.parametrize("zeros", [[0], [0, 2], [1, 3, 4]], ids=["one-zero", "two-zeros", "three"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_first_and_second_derivatives_at_exact_zeros(zeros, dim):
    # random inputs are never exactly 0, where prod's gradient cannot divide by the element
    data = np.arange(1.0, 7.0).reshape(2, 3)
    data.flat[zeros] = 0.0
    x = ag.tensor(data, dtype=ag.float64, requires_grad=True)
    fn = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
