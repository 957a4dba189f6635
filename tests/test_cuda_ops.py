"""Every op of the op table on device='cuda' gives the CPU backend's values and gradients.

numpy defines the semantics; the CUDA backend (CudaArray, numba kernels) must agree with it op by
op. For each entry of `autograd_lab.ops.table.OPS` (so an op added to the table is covered here
too), on one or two tiny fixed shapes (the simulator is slow: no hypothesis here):

- the forward value on CUDA equals the CPU's: shape, dtype and values (float64 to rounding error,
  float32 to float32's precision), and it stays on the GPU;
- the recorded node is the same;
- backward from the same upstream gradient gives the same gradients, on the GPU.

Runs in numba's CUDA simulator (tests/conftest.py switches it on); on a GPU with
AUTOGRAD_LAB_REAL_CUDA=1.
"""

import numpy as np
import pytest
from test_op_table import DOMAINS

import autograd_lab as ag
from autograd_lab.ops.table import OPS

pytestmark = pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")

# One or two small shapes per shape family (ops that list example shapes use theirs).
FAMILY_SHAPES = {
    "any": (((2, 3),), ((),)),
    "nonempty": (((2, 3),),),
    "matrix": (((2, 3),),),
}
BROADCAST_SHAPES = ((2, 3), (3,), (2, 1))  # the first `arity` of them broadcast to (2, 3)
TOLERANCES = {"float64": (1e-12, 1e-14), "float32": (1e-5, 1e-6)}


# Ops the CUDA backend has no kernel for yet. Each refuses a CUDA tensor with an error that names
# it and says to sort on the CPU (tests/test_ops_indexing_sorting.py checks the error).
NOT_ON_CUDA = {"sort", "sort_descending", "msort", "topk", "topk_smallest"}  # no sorting kernel


def _shape_id(shapes):
    return ",".join("x".join(map(str, s)) or "scalar" for s in shapes)


def _cases():
    for spec in OPS:
        if spec.name in NOT_ON_CUDA:
            continue
        if spec.shapes == "broadcast":
            examples = (BROADCAST_SHAPES[: spec.arity],)
        elif isinstance(spec.shapes, str):
            examples = FAMILY_SHAPES[spec.shapes]
        else:
            examples = spec.shapes
        for shapes in examples:
            yield pytest.param(spec, shapes, id=f"{spec.name}-{_shape_id(shapes)}")


CASES = list(_cases())


def run(spec, arrays, dtype, device):
    """The op's output and its inputs' gradients, computed on `device`."""
    inputs = [ag.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    with ag.device(device):  # constants the call makes (targets, weights) go to `device` too
        out = spec.call(ag, *inputs)
    # a random upstream gradient, not ones: a gradient sent to the wrong element would show
    upstream = np.random.default_rng(1).standard_normal(tuple(out.shape))
    out.backward(ag.tensor(upstream, dtype=dtype, device=device))
    return out, [x.grad for x in inputs]


def assert_same(on_cuda, on_cpu, dtype, what):
    assert on_cuda.device == ag.device("cuda:0"), f"{what}: left the GPU"
    assert on_cuda.shape == on_cpu.shape, f"{what}: shape"
    assert on_cuda.dtype == on_cpu.dtype, f"{what}: dtype"
    rtol, atol = TOLERANCES[dtype]
    np.testing.assert_allclose(
        on_cuda.detach().cpu().numpy(), on_cpu.detach().numpy(), rtol=rtol, atol=atol, err_msg=what
    )


@pytest.mark.parametrize("dtype", TOLERANCES)
@pytest.mark.parametrize("spec, shapes", CASES)
def test_cuda_matches_cpu(spec, shapes, dtype):
    rng = np.random.default_rng(0)
    arrays = [np.asarray(DOMAINS[spec.domain](rng, shape), dtype=np.float64) for shape in shapes]
    ag_dtype = getattr(ag, dtype)
    out, grads = run(spec, arrays, ag_dtype, "cuda")
    expected, expected_grads = run(spec, arrays, ag_dtype, "cpu")
    assert_same(out, expected, dtype, "forward value")
    assert out.grad_fn.name() == expected.grad_fn.name(), "grad_fn name"
    for i, (g, expected_g) in enumerate(zip(grads, expected_grads)):
        assert_same(g, expected_g, dtype, f"gradient of input {i}")
