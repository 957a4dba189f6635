"""Fusion: which calls form groups, what the generated kernels look like, and that fused forward
and backward passes equal eager mode (float32 and float64), on the CPU and in numba's CUDA simulator.

Kernels are compiled once per source text and cached on disk by numba, so the shapes below are
tiny and repeated: most tests reuse a kernel another test compiled.
"""

import numpy as np
import pytest
from conftest import layer_norm, softmax_cross_entropy
from test_op_table import DOMAINS

import autograd_lab as ag
from autograd_lab.compile import find_groups, fuse, run, trace
from autograd_lab.compile.codegen import collapse
from autograd_lab.compile.rules import rule_for
from autograd_lab.compile.trace import Compare
from autograd_lab.ops import registry
from autograd_lab.ops.table import OPS

TOLERANCE = {"float64": {"rtol": 1e-10, "atol": 1e-12}, "float32": {"rtol": 2e-5, "atol": 2e-6}}


def names(groups):
    return [tuple(n.replace("Backward0", "") for n in g.names) for g in groups]


# ---- grouping decisions -----------------------------------------------------------------------------


def test_a_chain_of_five_elementwise_ops_is_one_group():
    g = trace(lambda x: x.exp().sin().mul(2).add(1).tanh(), ag.ones(4))
    (group,) = find_groups(g)
    assert names([group]) == [("Exp", "Sin", "Mul", "Add", "Tanh")]
    assert [v.id for v in group.inputs] == [0] and [v.id for v in group.outputs] == [5]


def test_a_matmul_splits_groups():
    w = ag.ones(3, 2)
    plan = fuse(trace(lambda x: ((x * 2).tanh() @ w).sigmoid() * 3, ag.ones(4, 3)))
    assert names(plan.groups) == [("Mul", "Tanh"), ("Sigmoid", "Mul")]
    assert [c.name for c in plan.graph.calls] == ["FusedBackward0", "MmBackward0", "FusedBackward0"]


def test_a_value_used_outside_the_group_is_an_output_of_the_group():
    def f(x):
        a = x.tanh()
        return (a * 2).exp(), a.sum()

    (group,) = find_groups(trace(f, ag.ones(3)))
    assert names([group]) == [("Tanh", "Mul", "Exp")]
    assert [v.id for v in group.outputs] == [1, 3]  # a (read by sum) and the result


def test_a_call_that_depends_on_the_group_through_a_reduction_starts_a_new_group():
    def f(x):
        a = x.exp().sin()
        return (a * a.sum()).tanh()  # Mul reads a, and the sum of a: fusing it would be a cycle

    plan = fuse(trace(f, ag.ones(3)))
    assert names(plan.groups) == [("Exp", "Sin"), ("Mul", "Tanh")]
    assert [c.name for c in plan.graph.calls] == [
        "FusedBackward0",
        "SumBackward0",
        "FusedBackward0",
    ]


def test_results_of_other_shapes_or_dtypes_are_not_fused_together():
    g = trace(lambda x, v: (x.exp() + v.sin().cos()).tanh(), ag.ones(3, 4), ag.ones(4))
    assert names(find_groups(g)) == [("Exp", "Add", "Tanh"), ("Sin", "Cos")]
    g = trace(lambda x: x.exp().to(ag.float64).sin(), ag.ones(3))
    assert find_groups(g) == []


def test_broadcast_inputs_are_indexed_not_expanded():
    plan = fuse(trace(lambda x, w, b: (x * w + b).relu(), ag.ones(3, 4), ag.ones(4), ag.ones(3, 1)))
    (kernel,) = plan.kernels
    assert kernel.layout.shape == (3, 4) and kernel.layout.inputs == ((3, 4), (1, 4), (3, 1))
    assert "v1 = x1[0, i1]" in kernel.source and "v2 = x2[i0, 0]" in kernel.source


@pytest.mark.parametrize(
    "full, inputs, loop, shapes",
    [
        ((4, 5, 6), [(4, 5, 6), (4, 5, 6)], (120,), ((120,), (120,))),  # same shape: one flat loop
        ((4, 5, 6), [(4, 5, 6), (6,)], (20, 6), ((20, 6), (1, 6))),
        ((4, 5, 6), [(4, 1, 1), ()], (4, 30), ((4, 1), (1, 1))),
        ((2, 1, 3), [(2, 1, 3), (1, 1, 1)], (6,), ((6,), (1,))),  # size-1 dims do not loop
        ((), [(), ()], (1,), ((1,), (1,))),
    ],
)
def test_collapse_merges_dims_with_the_same_broadcast_pattern(full, inputs, loop, shapes):
    layout = collapse(full, inputs)
    assert layout.shape == loop and layout.inputs == shapes


@pytest.mark.parametrize("shape, loop", [((2, 3), "range"), ((256, 256), "prange")])
def test_generated_source_has_one_loop_for_same_shape_operands(shape, loop):
    x, y = ag.ones(*shape, requires_grad=True), ag.ones(*shape, requires_grad=True)
    plan = fuse(trace(lambda x, y: (x * y).tanh().exp(), x, y))
    source = plan.kernels[0].source
    forward = source[source.index("def fused_forward") : source.index("def fused_backward")]
    assert forward.count("for ") == 1 and f"in {loop}(n0)" in forward  # threads only where they pay
    assert f"@njit(parallel={loop == 'prange'}, cache=True, fastmath=False" in source
    assert "d0 = " in source and "d1 = " in source  # one backward kernel: both inputs' gradients


def test_a_group_big_enough_for_threads_runs_with_prange():
    x = np.random.default_rng(0).uniform(-2, 2, (256, 256))
    ours, eager = ag.tensor(x, requires_grad=True), ag.tensor(x, requires_grad=True)
    compiled = ag.compile(gelu_tanh)
    got, want = compiled(ours), gelu_tanh(eager)
    assert "prange" in compiled.kernels[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), eager.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_fused_node_names_its_ops():
    f = ag.compile(lambda x: (x * 2).sigmoid())
    y = f(ag.ones(3, dtype=ag.float64, requires_grad=True))
    assert y.grad_fn.name() == "FusedBackward0"
    assert y.grad_fn.metadata["fused"] == ("MulBackward0", "SigmoidBackward0")


# ---- fused values and gradients equal eager mode ----------------------------------------------------


def gelu_tanh(x):
    return 0.5 * x * (1 + ((x + 0.044715 * x * x * x) * 0.7978845608028654).tanh())


def sigmoid_tanh_chain(x, y):
    return (x.sigmoid() * y.tanh() + x).tanh().sigmoid() - y


def gelu_op(x):
    return ag.nn.functional.gelu(x, approximate="tanh") * 1.5


CASES = {  # name: (function, input shapes, float inputs that get gradients, fused groups expected)
    "gelu_tanh": (gelu_tanh, [(3, 5)], 1, 1),
    "gelu_op": (gelu_op, [(3, 5)], 1, 1),
    "layer_norm": (layer_norm, [(3, 5), (5,), (5,)], 3, 1),  # one row-wise group (rowwise.py)
    "softmax_cross_entropy": (softmax_cross_entropy, [(3, 5), (3, 5)], 1, 1),  # row-wise too
    "sigmoid_tanh_chain": (sigmoid_tanh_chain, [(3, 5), (3, 5)], 2, 1),
}


def _inputs(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, s) for s in shapes]
    if len(shapes) == 2 and shapes[0] == shapes[1] and shapes[0][0] == 3:
        arrays[1] = np.eye(5)[[0, 3, 1]] if arrays[1].shape == (3, 5) else arrays[1]
    return [np.asarray(a, dtype=dtype) for a in arrays]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_fused_forward_and_backward_equal_eager(case, dtype):
    fn, shapes, n_grads, n_groups = CASES[case]
    compiled = ag.compile(fn)
    compiled(*[ag.tensor(a) for a in _inputs(shapes, dtype, seed=1)])  # the trace: other values
    arrays = _inputs(shapes, dtype)
    ours = [ag.tensor(a, requires_grad=k < n_grads) for k, a in enumerate(arrays)]
    eager = [ag.tensor(a, requires_grad=k < n_grads) for k, a in enumerate(arrays)]
    got, want = compiled(*ours), fn(*eager)
    assert compiled.traces == 2  # requires_grad differs from the first call: a second trace
    assert len(compiled.plan.groups) == n_groups
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **TOLERANCE[dtype])
    weights = ag.tensor(
        np.random.default_rng(3).uniform(0.5, 1.5, tuple(got.shape)), dtype=got.dtype
    )
    (got * weights).sum().backward()
    (want * weights).sum().backward()
    for a, b in zip(ours[:n_grads], eager[:n_grads], strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOLERANCE[dtype])


@pytest.mark.parametrize("reduce", ["sum", "row_means", "weighted"])
def test_broadcast_inputs_and_gradients_are_summed_in_the_kernel(reduce):
    """Inputs of shape (n, 1) and () get their gradient summed in the kernel ("row"/"scalar");
    a gradient arriving as a broadcast view (the backward of sum or mean) is read in place."""

    def f(x, row, scalar):
        return ((x * row).tanh() * scalar + row).exp()

    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, (4, 6)), rng.uniform(-1, 1, (4, 1)), np.array(0.7)]
    weights = ag.tensor(rng.uniform(size=(4, 6)))
    compiled = ag.compile(f)
    results = []
    for fn in (compiled, f):
        xs = [ag.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*xs)
        loss = {"sum": out.sum(), "row_means": out.mean(-1).sum(),
                "weighted": (out * weights).sum()}[reduce]  # fmt: skip
        loss.backward()
        results.append([x.grad.numpy() for x in xs])
    source = compiled.kernels[0]
    assert "s1 += d" in source and "gx1[i0, 0] = s1" in source  # the (4, 1) input: row sums
    assert "s2 += d" in source and "gx2[0, 0] = s2" in source  # the scalar: one sum
    for ours, eager in zip(*results, strict=True):
        assert ours.shape == eager.shape
        np.testing.assert_allclose(ours, eager, rtol=1e-12)


def elementwise_entries():
    """The op-table entries whose call is elementwise: every call it traces to has a rule
    (comparisons aside, whose masks a fused kernel reads). Derived from the table, so a new op
    is in the test below as soon as its record (or table line) exists."""
    found = []
    for spec in OPS:
        inputs = [ag.ones(5, dtype=ag.float64) for _ in range(spec.arity)]
        try:
            calls = trace(lambda *xs, spec=spec: spec.call(ag, *xs), *inputs).calls
        except Exception:  # not for these shapes (a matmul, a loss with its own targets)
            continue
        if calls and all(c.fn is Compare or rule_for(c) is not None for c in calls):
            found.append(spec)
    return found


def test_every_elementwise_op_in_one_kernel_equals_eager():
    """One group of every elementwise op (so each kernel and each derived local derivative is
    checked against eager mode), and one of its first derivative's ops (tanh's and sigmoid's
    backward ops, ...): together they must use every op record that has a kernel."""
    entries = elementwise_entries()
    rng = np.random.default_rng(0)
    arrays = [DOMAINS[spec.domain](rng, (12,)) for spec in entries for _ in range(spec.arity)]

    def everything(*xs):
        feed, total = iter(xs), 0
        for k, spec in enumerate(entries):
            term = spec.call(ag, *[next(feed) for _ in range(spec.arity)])
            total = term * (k + 2) + total  # distinct weights: a wrong term cannot hide
        return total

    def derivative(*xs):
        grads = ag.autograd.grad(everything(*xs).sum(), xs, create_graph=True)
        return sum(g * (k + 1) for k, g in enumerate(grads))

    for fn in (everything, derivative):
        compiled = ag.compile(fn)
        ours = [ag.tensor(a, requires_grad=True) for a in arrays]
        eager = [ag.tensor(a, requires_grad=True) for a in arrays]
        got, want = compiled(*ours), fn(*eager)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-11)
        got.sum().backward()
        want.sum().backward()
        for a, b in zip(ours, eager, strict=True):  # None: an input the result does not reach
            got_grad = a.grad.numpy() if a.grad is not None else np.zeros(12)
            want_grad = b.grad.numpy() if b.grad is not None else np.zeros(12)
            np.testing.assert_allclose(got_grad, want_grad, rtol=1e-10, atol=1e-12)
        fused = {call.fn for group in compiled.plan.groups for call in group.calls}
        if fn is everything:
            assert len(compiled.plan.groups) == 1, "every elementwise op in one group"
            first = fused
    kernels = {  # each op with a kernel, but not a subclass that only renames its node
        cls
        for cls in registry.op_classes()
        if cls.kernel is not None and ("kernel" in vars(cls) or "backward" in vars(cls))
    }
    assert kernels <= first | fused, f"never fused: {kernels - first - fused}"


def test_backward_ops_fuse_too():
    """tanh's and sigmoid's backward ops (TanhGrad, SigmoidGrad) appear in traced grad code."""

    def first_derivative(x):
        y = (x * 2).tanh().sigmoid()
        (g,) = ag.autograd.grad(y.sum(), x, create_graph=True)
        return g * 3

    x = ag.tensor([0.3, -1.2, 2.0], dtype=ag.float64, requires_grad=True)
    compiled = ag.compile(first_derivative)
    got, want = compiled(x), first_derivative(x)
    fused = {n for group in compiled.plan.groups for n in group.names}
    assert {"TanhBackwardBackward0", "SigmoidBackwardBackward0"} <= fused
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_create_graph_through_a_fused_group_gives_eager_second_derivatives(dtype):
    compiled = ag.compile(gelu_tanh)
    values = np.array([[0.5, -1.5, 2.0], [0.1, 1.0, -0.3]], dtype=dtype)
    results = []
    for fn in (compiled, gelu_tanh):
        x = ag.tensor(values, requires_grad=True)
        (g,) = ag.autograd.grad(fn(x).sum(), x, create_graph=True)
        (gg,) = ag.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    assert compiled.plan.groups, "nothing was fused: the test would not test fusion"
    for ours, eager in zip(*results, strict=True):
        np.testing.assert_allclose(ours, eager, **TOLERANCE[dtype])


def test_a_kernel_that_fails_to_compile_falls_back_to_the_ops(monkeypatch):
    compiled = ag.compile(lambda x: (x * 2).exp())
    x = ag.tensor([1.0, 2.0], dtype=ag.float64, requires_grad=True)
    compiled(x)
    (kernel,) = compiled.plan.kernels

    def broken(*args):
        raise ValueError("no kernel today")

    monkeypatch.setattr(kernel, "forward", broken)
    with pytest.warns(RuntimeWarning, match="no kernel today"):
        y = compiled(x)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), np.exp([2.0, 4.0]), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([2.0, 4.0]), rtol=1e-12)


def test_run_with_a_plan_executes_the_fused_graph():
    g = trace(lambda x: (x.exp() * 2).sin(), ag.ones(3, dtype=ag.float64))
    plan = fuse(g)
    y = run(g, [ag.tensor([0.0, 1.0, 2.0], dtype=ag.float64)], plan)
    assert y.grad_fn is None  # nothing required grad: no node, just the kernel's result
    np.testing.assert_allclose(y.numpy(), np.sin(2 * np.exp([0.0, 1.0, 2.0])), rtol=1e-12)


# ---- CUDA (numba's simulator in CI; a real GPU with AUTOGRAD_LAB_REAL_CUDA=1) --------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cuda_fused_kernels_equal_eager_on_the_cpu(dtype):
    def f(x, w):
        return ((x * 2).tanh() * w + 1).sigmoid().exp()

    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-2, 2, (3, 4)).astype(dtype), rng.uniform(-2, 2, 4).astype(dtype)]
    ours = [ag.tensor(a).to("cuda").requires_grad_() for a in arrays]
    eager = [ag.tensor(a, requires_grad=True) for a in arrays]
    compiled = ag.compile(f)
    got, want = compiled(*ours), f(*eager)
    assert got.device.type == "cuda" and got.grad_fn.name() == "FusedBackward0"
    assert "@cuda.jit" in compiled.plan.kernels[0].cuda_source
    np.testing.assert_allclose(
        got.detach().cpu().numpy(), want.detach().numpy(), **TOLERANCE[dtype]
    )
    got.sum().backward()
    want.sum().backward()
    for a, b in zip(ours, eager, strict=True):
        assert a.grad.device.type == "cuda"
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), **TOLERANCE[dtype])


PTX_SCRIPT = """
import os, sys
from numba import cuda, types
from numba.cuda.cudadrv import nvvm
if not nvvm.is_available():
    print("NVVM not found"); sys.exit(3)
import numpy as np
import autograd_lab as ag
from autograd_lab.compile import fuse, trace
from autograd_lab.compile.codegen import load

def f(x, w, c):
    return (ag.where(c, (x * 2).tanh() * w + 1, x).sigmoid().exp() / 3.0) ** 2

for dtype, number in ((np.float32, types.float32), (np.float64, types.float64)):
    x, w = ag.ones(3, 4, dtype=dtype, requires_grad=True), ag.ones(4, dtype=dtype, requires_grad=True)
    (kernel,) = fuse(trace(f, x, w, ag.ones(3, 4) > 0)).kernels
    layout, group = kernel.layout, kernel.group
    array = lambda shape, t=number: types.Array(t, len(shape), "C")
    inputs = [array(s, number if v.dtype.kind == "f" else types.boolean)
              for s, v in zip(layout.inputs, group.inputs)]
    outputs = [array(layout.shape) for _ in group.outputs]
    module = load(kernel.cuda_source)
    ptx, _ = cuda.compile_ptx(module.fused_forward.py_func, tuple(inputs + outputs), cc=(8, 0))
    sizes = [types.int64] * len(layout.shape)
    grads = [array(layout.shape) for _ in kernel.wanted]
    backward = tuple(sizes + inputs + outputs + grads)
    ptx += cuda.compile_ptx(module.fused_backward.py_func, backward, cc=(8, 0))[0]
    assert dtype == np.float64 or ".f64" not in ptx, "a float32 kernel computes in float64"
print("ok")
"""


@pytest.mark.slow  # ~10 s: four kernels compiled by NVVM
def test_cuda_kernels_compile_to_ptx_for_a_real_gpu():
    """The simulator runs kernels as Python; NVVM (no GPU needed) shows a GPU would take them."""
    import os
    import subprocess
    import sys

    environment = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    run = subprocess.run([sys.executable, "-c", PTX_SCRIPT], capture_output=True, text=True,
                         env=environment, timeout=300)  # fmt: skip
    if run.returncode == 3 and not os.environ.get("CI"):
        pytest.skip(run.stdout.strip())
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr
