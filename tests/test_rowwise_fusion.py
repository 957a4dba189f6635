"""Row-wise fusion: reductions over the last axis fused with their elementwise neighbours.

Which calls form a row-wise group, that the fused forward and backward equal eager mode (float64
tight, float32 close) and PyTorch, edge cases (NaN rows, bad class targets, broadcast incoming
gradients, second derivatives), and the float32 math and output recycling the kernels rely on.
Kernels are compiled once per source text and cached on disk by numba: shapes are tiny and
repeated, so most tests reuse a kernel another test compiled.
"""

import numpy as np
import pytest
from conftest import layer_norm, softmax_cross_entropy
from numba import njit

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab.autograd.gradcheck import gradcheck
from autograd_lab.compile import fuse, trace
from autograd_lab.compile.extras import recycle
from autograd_lab.compile.extras.kernel_math import (
    exp32,
    exp_nonpositive32,
    from_order_key32,
    from_order_key64,
    order_key32,
    order_key64,
    tanh32,
)
from autograd_lab.compile.extras.rowkernel import RowKernel
from autograd_lab.compile.extras.rowprogram import RowProgram
from autograd_lab.compile.extras.rowwise import find_row_groups
from autograd_lab.viz.compiled import graph_to_viz

TOLERANCE = {"float64": {"rtol": 1e-10, "atol": 1e-12}, "float32": {"rtol": 2e-5, "atol": 2e-6}}


def names(group):
    return [n.replace("Backward0", "").replace("Backward1", "'") for n in group.names]


# ---- grouping decisions -----------------------------------------------------------------------------


def test_a_layer_norm_is_one_row_wise_group():
    plan = fuse(trace(layer_norm, ag.ones(3, 5), ag.ones(5), ag.ones(5)))
    (group,) = plan.groups
    assert names(group) == ["Mean'", "Sub", "Mul", "Mean'", "Add", "Sqrt", "Div", "Mul", "Add"]
    assert group.patterns == {0: "full", 1: "col", 2: "col"}  # x per element, w and b per column
    assert [c.name for c in plan.graph.calls] == ["FusedBackward0"]
    assert isinstance(plan.kernels[0], RowKernel)


def test_a_hand_written_softmax_cross_entropy_is_one_group_with_an_eager_scalar_tail():
    plan = fuse(trace(softmax_cross_entropy, ag.ones(3, 5), ag.ones(3, 5)))
    (group,) = plan.groups
    assert names(group) == ["Max", "Sub", "Exp", "Sum'", "Log", "Sub", "Mul", "Sum"]
    assert [c.name for c in plan.graph.calls] == ["FusedBackward0", "NegBackward0", "DivBackward0"]


def test_softmax_and_cross_entropy_calls_fuse_on_their_own():
    targets = ag.tensor([0, 2, 1])
    for fn in (lambda x: x.softmax(-1), lambda x: F.log_softmax(x, dim=1),
               lambda x: x.logsumexp(-1), lambda x: x.var(-1), lambda x: x.std(-1, keepdim=True),
               lambda x: F.cross_entropy(x, targets)):  # fmt: skip
        (group,) = find_row_groups(trace(fn, ag.ones(3, 4)))
        assert len(group.calls) == 1


@pytest.mark.parametrize("fn", [
    lambda x: x.sum(-1),  # a lone sum: numpy does it in one pass already
    lambda x: (x * 2).softmax(0),  # not the last axis
    lambda x: x.var(-1, correction=4),  # 4 numbers per row, correction 4: eager's nan
    lambda x: (x.exp() * 2).tanh(),  # no reduction: an elementwise group
    lambda x: x.max(-1).indices + x.max(-1).values,  # the indices are used
])  # fmt: skip
@pytest.mark.filterwarnings("ignore:Degrees of freedom")  # eager's var, run while tracing
def test_calls_a_row_kernel_does_not_take_are_left_out(fn):
    assert find_row_groups(trace(fn, ag.ones(3, 4))) == []


def test_losses_with_options_the_kernel_lacks_stay_one_call():
    targets, weight = ag.tensor([0, 2, 1]), ag.tensor([1.0, 2.0, 1.0, 1.0])
    for fn in (lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
               lambda x, t: F.cross_entropy(x, t, weight=weight),
               lambda x, t: F.nll_loss(x.unsqueeze(-1), t.unsqueeze(-1))):  # fmt: skip
        graph = trace(fn, ag.ones(3, 4), targets)
        assert find_row_groups(graph) == []
        assert graph.calls[-1].name in ("cross_entropy", "nll_loss")


def test_a_per_row_value_without_keepdim_is_not_broadcast_along_the_row():
    """x - x.sum(-1) of a square x subtracts the sums along the *columns* (broadcasting aligns
    the last axis): that mixes rows, so the Sub must stay out of the sum's group."""

    def f(x):
        return (x - x.sum(-1)).exp().sum(-1, keepdim=True).log() * 2

    x = np.arange(16.0).reshape(4, 4) / 10
    compiled = ag.compile(f)
    np.testing.assert_allclose(compiled(ag.tensor(x)).numpy(), f(ag.tensor(x)).numpy(), rtol=1e-12)
    assert all("SubBackward0" not in g.names or "SumBackward1" not in g.names[:1]
               for g in compiled.plan.groups)  # fmt: skip


def test_no_row_groups_on_cuda_the_elementwise_parts_fuse_as_before():
    x = ag.ones(3, 4).to("cuda")
    assert find_row_groups(trace(layer_norm, x, ag.ones(4).to("cuda"), ag.ones(4).to("cuda"))) == []


def test_the_program_listing_shows_passes():
    (group,) = find_row_groups(trace(lambda x: x.softmax(-1), ag.ones(4, 8)))
    assert RowProgram(group).listing().splitlines() == [
        "v0 = x0[r, j]                 full   pass 0",
        "m1 = max(v0)  (no gradient)   row    after pass 0",
        "t2 = v0 - m1                  full   pass 1",
        "t3 = exp_nonpositive(t2)      full   pass 1",
        "s4 = sum(t3)                  row    after pass 1",
        "t5 = t3 / s4                  full   pass 2",
    ]


def test_the_generated_source_keeps_row_values_for_backward_and_costly_values_across_passes():
    compiled = ag.compile(lambda x: x.softmax(-1))
    compiled(ag.ones(4, 8, requires_grad=True))
    source = compiled.kernels[0]
    forward, backward = source.split("def row_backward")
    assert forward.count("for j in range(n_cols)") == 3  # max; sum of exps; write
    assert "stash[0, j] = t3" in forward and "t3 = stash[0, j]" in forward  # exp computed once
    assert "saved[r, 0] = m1" in forward and "m1 = saved[r, 0]" in backward
    assert "order_key" not in backward  # backward never recomputes the max


# ---- values and gradients equal eager mode ------------------------------------------------------------

T = [1, 0, 4, 2, 3, 1]
CASES = {  # name: (function, input shapes or integer targets, float inputs that get gradients)
    "softmax": (lambda x: x.softmax(-1) * 2, [(6, 5)], 1),
    "log_softmax": (lambda x: F.log_softmax(x * 1.5, dim=-1), [(6, 5)], 1),
    "logsumexp": (lambda x: x.logsumexp(-1, keepdim=True) * x, [(6, 5)], 1),
    "var_std": (
        lambda x: x.var(-1, keepdim=True) + x.std(-1, correction=0).sin().sum(),
        [(6, 5)],
        1,
    ),  # fmt: skip
    "sum_mean_max_min": (
        lambda x: (
            (x - x.sum(-1, keepdim=True)).tanh() / x.mean(-1, keepdim=True)
            + x.max(-1).values.unsqueeze(-1) * x.min(-1, keepdim=True).values
        ),
        [(6, 5)],
        1,
    ),  # fmt: skip
    "layer_norm": (layer_norm, [(6, 5), (5,), (5,)], 3),
    "layer_norm_3d": (layer_norm, [(2, 3, 5), (5,), (5,)], 3),
    "softmax_cross_entropy": (softmax_cross_entropy, [(6, 5), "onehot"], 1),
    "cross_entropy": (lambda x, t: F.cross_entropy(x * 2, t), [(6, 5), T], 1),
    "cross_entropy_none": (lambda x, t: F.cross_entropy(x, t, reduction="none"), [(6, 5), T], 1),
    "cross_entropy_ignored": (
        lambda x, t: F.cross_entropy(x, t, reduction="sum"),
        [(6, 5), [1, -100, 4, 2, -100, 1]],
        1,
    ),  # fmt: skip
    "nll_of_log_softmax": (lambda x, t: F.nll_loss(F.log_softmax(x, 1), t), [(6, 5), T], 1),
    "row_and_scalar_inputs": (
        lambda x, r, s: (x * r * s).softmax(-1).mean(),
        [(6, 5), (6, 1), ()],
        3,
    ),  # fmt: skip
}
FLOAT32 = ["softmax", "layer_norm", "softmax_cross_entropy", "cross_entropy", "var_std"]  # each
# case and dtype is a kernel to compile: float32 on the cases that use its own paths


def _inputs(spec, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for item in spec:
        if item == "onehot":
            arrays.append(np.eye(5, dtype=dtype)[[0, 3, 1, 2, 4, 0]])
        elif isinstance(item, list):
            arrays.append(np.array(item))
        else:
            arrays.append(rng.uniform(-2, 2, item).astype(dtype))
    return arrays


def _run(fn, arrays, n_grads, loss):
    xs = [ag.tensor(a, requires_grad=k < n_grads) for k, a in enumerate(arrays)]
    out = fn(*xs)
    loss(out).backward()
    return [out.detach().numpy()] + [x.grad.numpy() for x in xs[:n_grads]]


def _weighted(out):
    if out.ndim == 0:
        return out
    weights = np.random.default_rng(3).uniform(0.5, 1.5, tuple(out.shape))
    return (out * ag.tensor(weights, dtype=out.dtype)).sum()


@pytest.mark.parametrize("case, dtype", [(case, "float64") for case in CASES] + [
    (case, "float32") for case in FLOAT32])  # fmt: skip
def test_fused_forward_and_backward_equal_eager(case, dtype):
    fn, spec, n_grads = CASES[case]
    compiled = ag.compile(fn)
    compiled(*[ag.tensor(a) for a in _inputs(spec, dtype, seed=1)])  # traced on other values
    arrays = _inputs(spec, dtype)
    got, want = _run(compiled, arrays, n_grads, _weighted), _run(fn, arrays, n_grads, _weighted)
    assert any(isinstance(k, RowKernel) for k in compiled.plan.kernels)
    for ours, eager in zip(got, want, strict=True):
        np.testing.assert_allclose(ours, eager, **TOLERANCE[dtype])


@pytest.mark.parametrize("loss", ["sum", "row_means", "column_sums", "rows_weighted"])
def test_broadcast_incoming_gradients_are_read_in_place(loss):
    """y.sum() sends one number, y.sum(-1) one per row, y.sum(0) one per column: the backward
    kernel reads each as it is (a kernel per layout), never expanded to full size."""
    losses = {
        "sum": lambda y: y.sum(),
        "row_means": lambda y: y.mean(-1).sum(),
        "column_sums": lambda y: (y.sum(0) * ag.arange(5.0, dtype=ag.float64)).sum(),
        "rows_weighted": lambda y: (y.sum(-1) * ag.arange(6.0, dtype=ag.float64)).sum(),
    }
    fn, spec, n_grads = CASES["layer_norm"]
    arrays = _inputs(spec, "float64")
    compiled = ag.compile(fn)
    got = _run(compiled, arrays, n_grads, losses[loss])
    want = _run(fn, arrays, n_grads, losses[loss])
    for ours, eager in zip(got, want, strict=True):
        np.testing.assert_allclose(ours, eager, rtol=1e-10, atol=1e-12)
    (kernel,) = compiled.plan.kernels
    # mean(-1)'s backward divides the expanded gradient by the count: that one arrives full-size
    layout = {"sum": "one", "row_means": "full", "column_sums": "col", "rows_weighted": "row"}
    assert (layout[loss],) in kernel._modules


def test_layer_norm_and_cross_entropy_match_pytorch(torch):
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(6, 5)), rng.uniform(0.5, 1.5, 5), rng.normal(size=5)
    target = np.array([1, -100, 4, 2, 0, 1])
    ours = [ag.tensor(a, requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    fused = ag.compile(lambda x, w, b, t: F.cross_entropy(layer_norm(x, w, b), t))
    fused(*ours, ag.tensor(target)).backward()
    y = torch.nn.functional.layer_norm(theirs[0], (5,), theirs[1], theirs[2], eps=1e-5)
    torch.nn.functional.cross_entropy(y, torch.tensor(target)).backward()
    (group,) = fused.plan.groups  # the loss reads the layer norm's rows: one kernel for both
    assert group.names[-1] == "cross_entropy"
    for a, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_fused_gradients_pass_finite_differences():
    rng = np.random.default_rng(1)
    x = ag.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    w = ag.tensor(rng.uniform(0.5, 1.5, 4), requires_grad=True)
    b = ag.tensor(rng.normal(size=4), requires_grad=True)
    assert gradcheck(ag.compile(layer_norm), (x, w, b))
    t = ag.tensor([3, 0, 1])
    assert gradcheck(ag.compile(lambda x: F.cross_entropy(x.tanh(), t)), (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_second_derivatives_through_a_row_group_equal_eager(dtype):
    def f(x):
        return (layer_norm(x, 1.0, 0.0) * 3).softmax(-1)

    values = np.random.default_rng(2).normal(size=(3, 6)).astype(dtype)
    weights = ag.tensor(np.arange(18.0).reshape(3, 6), dtype=getattr(ag, dtype))
    results = []
    for fn in (ag.compile(f), f):
        x = ag.tensor(values, requires_grad=True)
        (g,) = ag.autograd.grad((fn(x) * weights).sum(), x, create_graph=True)
        (gg,) = ag.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    for ours, eager in zip(*results, strict=True):
        np.testing.assert_allclose(ours, eager, **TOLERANCE[dtype])


def test_nan_and_infinite_rows_give_eager_results():
    x = np.random.default_rng(0).uniform(-2, 2, (5, 4))
    x[1, 2], x[2], x[3, 0], x[4, 1] = np.nan, -np.inf, np.inf, -np.inf
    fn = lambda t: t.softmax(-1) + t.logsumexp(-1, keepdim=True) + t.max(-1, keepdim=True).values  # noqa: E731
    with np.errstate(all="ignore"):
        got, want = ag.compile(fn)(ag.tensor(x)).numpy(), fn(ag.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_bad_class_targets_raise_eager_modes_error_and_the_kernel_stays():
    compiled = ag.compile(lambda x, t: F.cross_entropy(x, t))
    x = ag.randn(4, 3, dtype=ag.float64, requires_grad=True)
    compiled(x, ag.tensor([0, 1, 2, 1]))
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        compiled(x, ag.tensor([0, 3, 1, 1]))
    (kernel,) = compiled.plan.kernels
    assert kernel.failed is None
    loss = compiled(x, ag.tensor([-100, -100, -100, -100]))  # all ignored: nan, as eager
    assert np.isnan(loss.item()) and np.isnan(F.cross_entropy(x, ag.tensor([-100] * 4)).item())
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)


def test_big_groups_run_on_threads_and_agree():
    x = np.random.default_rng(3).normal(size=(256, 260)).astype(np.float32)
    t = ag.tensor(np.random.default_rng(4).integers(0, 260, 256))
    compiled = ag.compile(lambda x, t: F.cross_entropy(x, t))
    got, want = _run(lambda x: compiled(x, t), [x], 1, _weighted), _run(
        lambda x: F.cross_entropy(x, t), [x], 1, _weighted)  # fmt: skip
    assert "for b in prange(n_blocks)" in compiled.kernels[0]
    for ours, eager in zip(got, want, strict=True):
        np.testing.assert_allclose(ours, eager, **TOLERANCE["float32"])


def test_memory_plan_and_checkpoint_run_row_groups_too():
    fn, spec, n_grads = CASES["layer_norm"]
    arrays = _inputs(spec, "float64")
    want = _run(fn, arrays, n_grads, _weighted)
    for options in ({"plan_memory": True}, {"checkpoint": True}):
        got = _run(ag.compile(fn, **options), arrays, n_grads, _weighted)
        for ours, eager in zip(got, want, strict=True):
            np.testing.assert_allclose(ours, eager, rtol=1e-10, err_msg=str(options))


def test_explain_and_viewer_show_the_row_group():
    compiled = ag.compile(layer_norm)
    compiled(ag.ones(6, 5), ag.ones(5), ag.ones(5))
    assert "group 0: mean -> sub -> mul -> mean -> add -> sqrt -> div -> mul -> add" in (
        compiled.explain().replace("Backward1", ""))  # fmt: skip
    scopes = {
        n["scope"] for n in graph_to_viz(compiled.graph, compiled.plan).nodes if n["kind"] == "op"
    }
    assert scopes == {"fused0"}


# ---- the float32 math of the kernels, and recycled outputs -------------------------------------------


@njit
def _apply32(fn, x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = fn(x[i])
    return out


def _ulps(got, exact):
    """|got - exact| in units of the last place of float32 at `exact`."""
    spacing = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


def test_float32_exp_is_within_one_ulp_and_keeps_ieee_special_values():
    x = np.linspace(-87.3, 88.7, 400_001).astype(np.float32)
    exact = np.exp(x.astype(np.float64))
    assert _ulps(_apply32(exp32, x), exact).max() <= 1.0
    special = np.array([np.nan, np.inf, -np.inf, 0.0, 89.0, -88.0], np.float32)
    np.testing.assert_array_equal(_apply32(exp32, special), [np.nan, np.inf, 0, 1, np.inf, 0])


def test_float32_exp_of_nonpositive_numbers_is_within_one_ulp_and_keeps_special_values():
    """Softmax kernels take e^(x - max): never positive, so exp_nonpositive32 skips overflow."""
    x = np.concatenate([np.linspace(-87.3, 0.0, 400_001), -np.geomspace(1e-30, 1.0, 2001)])
    x = x.astype(np.float32)
    exact = np.exp(x.astype(np.float64))
    assert _ulps(_apply32(exp_nonpositive32, x), exact).max() <= 1.0
    special = np.array([np.nan, -np.inf, 0.0, -0.0, -88.0, -1e-45], np.float32)
    np.testing.assert_array_equal(_apply32(exp_nonpositive32, special), [np.nan, 0, 1, 1, 0, 1])


def test_float32_tanh_is_within_five_ulp_and_keeps_signs():
    x = np.concatenate([np.linspace(-10, 10, 400_001), np.geomspace(1e-30, 1.0, 2001)])
    x = x.astype(np.float32)
    exact = np.tanh(x.astype(np.float64))
    assert _ulps(_apply32(tanh32, x), exact).max() <= 5.0
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, -1e30], np.float32)
    got = _apply32(tanh32, special)
    np.testing.assert_array_equal(got, [np.nan, 1, -1, 0, 1, -1])
    assert np.signbit(got[3])  # tanh(-0.0) is -0.0


@pytest.mark.parametrize("width", [32, 64])
def test_order_keys_sort_like_the_floats(width):
    key, back = (order_key32, from_order_key32) if width == 32 else (order_key64, from_order_key64)
    dtype = np.float32 if width == 32 else np.float64
    # -0.0 listed before 0.0: the sort keeps equal floats in order, and -0.0's key is the lower
    x = np.concatenate([np.random.default_rng(5).normal(scale=1e3, size=500), [-np.inf, np.inf,
                        -0.0, 0.0, 1e-45, -1e-45]]).astype(dtype)  # fmt: skip
    keys = np.array([key(v) for v in x], dtype=np.int64)
    order = np.argsort(x, kind="stable")
    assert np.all(keys[order][1:] > keys[order][:-1])
    assert np.array_equal(np.array([back(k) for k in keys], dtype=dtype), x)


def test_recycled_arrays_are_reused_only_once_nobody_holds_them():
    shape = (512, 1024)  # 2 MB: big enough to be recycled
    first = recycle.empty(shape, np.float32)
    address = first.__array_interface__["data"][0]
    held = ag.tensor(first)  # a tensor holds it (or a view of it)
    view = first[:10]
    del first
    assert recycle.empty(shape, np.float32).__array_interface__["data"][0] != address
    del held, view
    assert recycle.empty(shape, np.float32).__array_interface__["data"][0] == address


@pytest.mark.parametrize("fn", [layer_norm, lambda x, w, b: (x * w + b).tanh() * 2])
def test_fused_gradients_become_grad_without_a_copy(fn, monkeypatch):
    """A kernel's gradient is a fresh array nothing else holds: AccumulateGrad adopts it as .grad
    (autograd/ownership.py) instead of copying it, for row-wise and elementwise kernels alike."""
    x, w, b = (ag.tensor(np.full(s, 0.5), requires_grad=True) for s in ((4, 6), (6,), (6,)))
    compiled = ag.compile(fn)
    compiled(x, w, b)
    (kernel,) = compiled.plan.kernels
    made = []
    backward = type(kernel).backward

    def spy(self, *args):  # notes where x's gradient lives (holding it would make it shared)
        found = backward(self, *args)
        made.append(found[0].__array_interface__["data"][0])
        return found

    monkeypatch.setattr(type(kernel), "backward", spy)
    compiled(x, w, b).sum().backward()
    assert made == [x.grad._data.__array_interface__["data"][0]]  # a copy would live elsewhere


# ---- a loss's gradients computed by its forward kernel ------------------------------------------------


def _spied_loss(monkeypatch):
    """A compiled cross-entropy, and a list that records which kernel functions ran."""
    compiled = ag.compile(lambda x, t: F.cross_entropy(x * 2, t))
    x = ag.tensor(_inputs([(6, 5)], "float64")[0], requires_grad=True)
    t = ag.tensor(CASES["cross_entropy"][1][1])
    compiled(x, t)
    (kernel,) = compiled.plan.kernels
    module, ran = kernel._module(kernel.grad_patterns), []
    for name in ("row_forward", "row_backward", "row_forward_backward"):
        function = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, f=function, n=name: (ran.append(n), f(*a))[1])
    return compiled, x, t, ran


def _eager_grad(x, t, scale=1.0, create_graph=False):
    x = ag.tensor(x.detach().numpy(), requires_grad=True)
    (F.cross_entropy(x * 2, t) * scale).backward(create_graph=create_graph)
    return x


def test_a_loss_gets_its_gradients_from_the_forward_kernel(monkeypatch):
    """One output, a total: forward also runs backward for an incoming 1 while each row is in
    the cache; backward only scales those gradients by the real incoming gradient."""
    compiled, x, t, ran = _spied_loss(monkeypatch)
    assert "def row_forward_backward(" in compiled.kernels[0]
    for scale in (1.0, 3.0):
        x.grad = None
        (compiled(x, t) * scale).backward()
        np.testing.assert_allclose(x.grad.numpy(), _eager_grad(x, t, scale).grad.numpy(),
                                   rtol=1e-12, atol=1e-15)  # fmt: skip
    assert ran == ["row_forward_backward"] * 2
    ran.clear()
    with ag.no_grad():  # no gradient wanted: the forward alone
        compiled(x, t)
    assert ran == ["row_forward"]


def test_a_second_backward_runs_the_backward_kernel_and_create_graph_the_ops(monkeypatch):
    compiled, x, t, ran = _spied_loss(monkeypatch)
    loss = compiled(x, t)
    loss.backward(retain_graph=True)  # gradients computed ahead, used once
    loss.backward()  # they are gone (and .grad may have changed them): the backward kernel
    assert ran == ["row_forward_backward", "row_backward"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * _eager_grad(x, t).grad.numpy(), rtol=1e-12)
    x.grad = None
    (grad,) = ag.autograd.grad(compiled(x, t), x, create_graph=True)
    eager = _eager_grad(x, t, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), eager.grad.detach().numpy(), rtol=1e-12)
    assert grad.requires_grad  # composed of the original ops: differentiable again


def test_fused_gradients_are_recycled_once_grad_lets_go():
    """A kernel's gradient comes from compile/recycle.py's cache: .grad adopts it without a copy
    all the same, and once the loop sets .grad = None the next step writes into the same memory
    (fresh pages from the system cost more than the kernel itself on a busy machine)."""
    x = ag.tensor(
        np.random.default_rng(0).normal(size=(512, 1024)).astype(np.float32), requires_grad=True
    )
    t = ag.tensor(np.random.default_rng(1).integers(0, 1024, 512))
    compiled = ag.compile(lambda x, t: F.cross_entropy(x, t))
    for step in range(3):
        x.grad = None
        kept_before = [address(block) for block, _ in recycle._blocks]
        compiled(x, t).backward()
        assert recycle.holds(x.grad._data)  # adopted as it was made: no copy
        if step:  # after the first step: memory the cache had (last step's), no new memory
            assert address(x.grad._data) in kept_before
    once, kept = x.grad.numpy().copy(), x.grad._data
    compiled(x, t).backward()  # .grad kept: the new gradient is added into it, in place
    assert x.grad._data is kept
    np.testing.assert_allclose(x.grad.numpy(), 2 * once, rtol=1e-6)
    fresh = recycle.empty((512, 1024), np.float32)
    assert not np.shares_memory(fresh, kept)  # held by .grad: never handed out again


def address(array):
    return array.__array_interface__["data"][0]


def test_a_recycled_array_is_not_handed_out_while_a_view_of_it_lives():
    first = recycle.empty((1024, 512), np.float32)
    view = first.reshape(-1)[10:].T
    del first
    second = recycle.empty((1024, 512), np.float32)
    assert not np.shares_memory(second, view)
    del view, second
    third = recycle.empty((512, 1024), np.float32)  # the same bytes in another shape: reused
    assert recycle.holds(third)


def test_a_picked_columns_gradient_is_summed_over_the_row_without_a_pass():
    """Cross-entropy picks one column's log-probability: the gradient of log(sum of exps) is
    that column's gradient alone, so backward needs no pass adding up zeros: one loop per row."""
    compiled = ag.compile(lambda x, t: F.cross_entropy(x, t))
    compiled(ag.ones(4, 6, requires_grad=True), ag.tensor([0, 5, 2, 1]))
    source = compiled.kernels[0]
    backward = source[source.index("def row_backward") : source.index("def row_forward_backward")]
    assert backward.count("for j in range(n_cols)") == 1
    assert "sum_d" not in backward
