"""autograd_lab.compile: trace -> IR -> replay (fused or not) gives eager mode's values and gradients.

The op table is the specification here too: every entry, compiled, must match eager mode on new
inputs (the trace is taken on other values of the same shapes), forward and gradients, float64.
Fusion is on (the default), so the op table's elementwise chains run as generated kernels.
"""

import warnings

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.compile import TracerWarning, run, trace
from autograd_lab.compile.ir import forward_name
from autograd_lab.ops.table import OPS
from autograd_lab.viz.compiled import graph_to_viz

DEFAULT_SHAPES = {"any": ((2, 3),), "nonempty": ((2, 3),), "matrix": ((2, 3),)}
DOMAINS = {
    "real": lambda rng, shape: rng.uniform(-2.0, 2.0, shape),
    "positive": lambda rng, shape: rng.uniform(0.2, 2.0, shape),
    "unit": lambda rng, shape: rng.uniform(-0.9, 0.9, shape),
    "nonzero": lambda rng, shape: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.1, 2.0, shape),
    "grid": lambda rng, shape: rng.integers(-200, 201, shape) * 0.01,
}


def _example_shapes(spec):
    """One or two shape tuples per op: its first example shapes, and a broadcasting pair."""
    if spec.shapes == "broadcast":
        return [((2, 3),) * spec.arity, ((2, 1, 3),) + ((3,),) * (spec.arity - 1)]
    if isinstance(spec.shapes, str):
        return [DEFAULT_SHAPES[spec.shapes]]
    return list(spec.shapes[:2])


CASES = [pytest.param(spec, shapes, id=f"{spec.name}-{'-'.join('x'.join(map(str, s)) or 'scalar' for s in shapes)}")
         for spec in OPS for shapes in _example_shapes(spec)]  # fmt: skip


def _arrays(spec, shapes, seed):
    rng = np.random.default_rng(seed)
    return [np.asarray(DOMAINS[spec.domain](rng, s), dtype=np.float64) for s in shapes]


def _leaves(arrays):
    return [ag.tensor(a, requires_grad=True) for a in arrays]


def _loss(out, seed=7):
    """A scalar that weighs every output element differently, so each gradient entry counts."""
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, tuple(out.shape))
    return (out * ag.tensor(weights, dtype=out.dtype)).sum()


@pytest.mark.parametrize("spec, shapes", CASES)
def test_compiled_op_table_matches_eager(spec, shapes):
    fn = lambda *xs: spec.call(ag, *xs)  # noqa: E731
    compiled = ag.compile(fn)
    compiled(*_leaves(_arrays(spec, shapes, seed=1)))  # traced on these values...
    arrays = _arrays(spec, shapes, seed=2)  # ...replayed on others of the same shapes
    ours, eager = _leaves(arrays), _leaves(arrays)
    got, want = compiled(*ours), fn(*eager)
    assert compiled.traces == 1
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)
    _loss(got).backward()
    _loss(want).backward()
    for k, (a, b) in enumerate(zip(ours, eager, strict=True)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14,
                                   err_msg=f"gradient of input {k}")  # fmt: skip


# ---- the cache: one trace per input signature -------------------------------------------------------


def test_same_shapes_reuse_the_trace_and_new_shapes_retrace():
    f = ag.compile(lambda x: (x * 2).tanh().sum(-1))
    for values in ([[1.0, 2.0]], [[-1.0, 0.5]]):
        x = ag.tensor(values)
        np.testing.assert_allclose(f(x).numpy(), np.tanh(np.array(values) * 2).sum(-1), rtol=1e-6)
    assert f.traces == 1
    x = ag.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]])  # a new shape: traced again
    np.testing.assert_allclose(f(x).numpy(), np.tanh(x.numpy() * 2).sum(-1), rtol=1e-6)
    assert f.traces == 2
    f(ag.tensor([[1.0, 2.0]], dtype=ag.float64))  # a new dtype: again
    f(ag.tensor([[1.0, 2.0]], requires_grad=True))  # requires_grad changes what is recorded
    assert f.traces == 4
    f(ag.tensor([[5.0, 6.0]]))
    assert f.traces == 4


def test_non_tensor_arguments_are_part_of_the_signature():
    f = ag.compile(lambda x, power: x**power)
    x = ag.tensor([2.0, 3.0])
    assert f(x, 2).tolist() == [4.0, 9.0]
    assert f(x, 3).tolist() == [8.0, 27.0]
    assert f.traces == 2
    with pytest.raises(TypeError, match="hashable"):
        f(x, [1, 2])


def test_decorator_forms_and_options():
    @ag.compile
    def plain(x):
        return x.exp() + 1

    @ag.compile(fuse=False)
    def unfused(x):
        return x.exp() + 1

    x = ag.tensor([0.0, 1.0])
    np.testing.assert_allclose(plain(x).numpy(), unfused(x).numpy(), rtol=1e-6)
    assert plain.plan is not None and len(plain.plan.groups) == 1
    assert unfused.plan is None and unfused.kernels == []
    assert "fusion off" in unfused.explain()
    with pytest.raises(TypeError, match="takes a function"):
        ag.compile(3)


def test_nothing_to_show_before_the_first_call():
    f = ag.compile(lambda x: x * 2)
    with pytest.raises(RuntimeError, match="call it once"):
        f.graph  # noqa: B018


# ---- what the trace captures -----------------------------------------------------------------------


def test_parameters_are_captured_and_get_gradients_and_updates():
    w = ag.tensor([1.0, 2.0], requires_grad=True)
    f = ag.compile(lambda x: (x * w).tanh().sum())
    x = ag.tensor([0.5, -0.5])
    f(x).backward()
    want = x.numpy() * (1 - np.tanh(x.numpy() * [1, 2]) ** 2)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-6)  # float32 tanh: a few ulp
    with ag.no_grad():
        w -= 1.0  # an optimizer step: the compiled function must see the new values
    np.testing.assert_allclose(f(x).item(), np.tanh(x.numpy() * [0.0, 1.0]).sum(), rtol=1e-6)
    assert f.traces == 1
    assert [v.kind for v in f.graph.values()][:2] == ["input", "const"]


def test_constant_tensors_made_inside_are_constants():
    f = ag.compile(lambda x: x * ag.tensor([1.0, 10.0]))
    assert f(ag.tensor([2.0, 3.0])).tolist() == [2.0, 30.0]
    assert f(ag.tensor([4.0, 5.0])).tolist() == [4.0, 50.0]


def test_integer_targets_are_replayed_with_new_values():
    f = ag.compile(lambda logits, target: ag.nn.functional.cross_entropy(logits, target))
    logits = ag.randn(4, 3, dtype=ag.float64)
    for target in ([0, 2, 1, 2], [1, 1, 0, 2]):
        ours = logits.clone().requires_grad_()
        theirs = logits.clone().requires_grad_()
        t = ag.tensor(target)
        got, want = f(ours, t), ag.nn.functional.cross_entropy(theirs, t)
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
        got.backward()
        want.backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    assert f.traces == 1


def test_dropout_draws_a_new_mask_on_every_call():
    f = ag.compile(lambda x: ag.nn.functional.dropout(x * 1.0, 0.5))
    x = ag.ones(64)
    ag.manual_seed(3)
    first, second = f(x), f(x)  # the first call traces too: the generator is put back after it
    ag.manual_seed(3)
    assert first.tolist() == ag.nn.functional.dropout(x, 0.5).tolist()  # eager's numbers
    assert second.tolist() == ag.nn.functional.dropout(x, 0.5).tolist()
    assert first.tolist() != second.tolist()
    assert f.graph.calls[-1].name == "dropout"


def test_integer_inputs_flow_through_recorded_ops():
    f = ag.compile(lambda x, index: x * (index.view(-1) + 1))
    x = ag.tensor([1.0, 1.0, 1.0])
    assert f(x, ag.tensor([[0, 1, 2]])).tolist() == [1.0, 2.0, 3.0]
    assert f(x, ag.tensor([[5, 5, 5]])).tolist() == [6.0, 6.0, 6.0]


def test_masks_follow_new_inputs():
    where = ag.compile(lambda x, y: ag.where(x > 0, x, y))
    select = ag.compile(lambda x: x[x > 0].sum())
    both = ag.compile(lambda x: x * ((x > 1) & ~(x > 2.5)))
    for values in ([1.0, -2.0, 3.0], [-1.0, 2.0, -3.0]):
        x, y = ag.tensor(values), ag.tensor([10.0, 20.0, 30.0])
        assert where(x, y).tolist() == np.where(np.array(values) > 0, values, [10, 20, 30]).tolist()
        assert select(x).item() == sum(v for v in values if v > 0)
        assert both(x).tolist() == [v * (1 < v <= 2.5) for v in values]
    assert where.traces == select.traces == 1


def test_item_and_bool_warn_that_the_branch_is_baked_in():
    def branchy(x):
        if x.sum() > 0:  # Python control flow on a tensor value
            return x * 2
        return x * 3

    f = ag.compile(branchy)
    with pytest.warns(TracerWarning, match="branch or number"):
        f(ag.tensor([1.0, 2.0]))
    assert f(ag.tensor([-1.0, -2.0])).tolist() == [-2.0, -4.0]  # the traced branch, as documented
    with pytest.warns(TracerWarning, match="item"):
        ag.compile(lambda x: x * x.max().item())(ag.tensor([1.0, 2.0]))


def test_no_warning_for_tensor_only_code():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.compile(lambda x: ag.where(x > 0, x, -x).sum())(ag.tensor([1.0, -2.0]))


def test_modifying_an_input_in_place_is_refused_with_a_fix():
    def bump(x):
        x.add_(1)
        return x

    with pytest.raises(RuntimeError, match=r"x = x.clone\(\)"):
        ag.compile(bump)(ag.tensor([1.0]))


def test_backward_inside_the_function_is_refused_with_a_fix():
    w = ag.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match=r"call loss.backward\(\) outside"):
        ag.compile(step)(ag.tensor([1.0, 1.0]))


def test_in_place_ops_on_intermediates_are_replayed():
    def f(x):
        y = x * 2
        y.add_(1)
        y[0] = 0.0
        return y.exp()

    compiled = ag.compile(f)
    for values in ([1.0, 2.0], [3.0, -1.0]):
        x = ag.tensor(values)
        np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy(), rtol=1e-6)


def test_results_structures_come_back():
    f = ag.compile(lambda x: {"double": x * 2, "parts": (x + 1, 3.5), "none": None})
    out = f(ag.tensor([1.0]))
    assert out["double"].tolist() == [2.0] and out["parts"][0].tolist() == [2.0]
    assert out["parts"][1] == 3.5 and out["none"] is None
    returns_input = ag.compile(lambda x: x)
    assert returns_input(ag.tensor([4.0])).tolist() == [4.0]


def test_non_tensor_results_are_refused():
    with pytest.raises(TypeError, match="may return"):
        ag.compile(lambda x: object())(ag.tensor([1.0]))


def test_checkpoint_memory_plan_and_parallel_give_the_same_gradients():
    w = ag.randn(3, 3, dtype=ag.float64, requires_grad=True)
    fn = lambda x: ((x @ w).tanh() * 2).sum()  # noqa: E731
    x = ag.randn(2, 3, dtype=ag.float64)
    fn(x).backward()
    want = w.grad.clone()
    for options in ({"checkpoint": True}, {"plan_memory": True}, {"parallel": True}):
        w.grad = None
        ag.compile(fn, **options)(x).backward()
        np.testing.assert_allclose(w.grad.numpy(), want.numpy(), rtol=1e-12, err_msg=str(options))


# ---- the IR and run ----------------------------------------------------------------------------


def test_graph_listing_and_helpers():
    g = trace(lambda x, y: (x.exp() + y.sin()) * x, ag.ones(2), ag.ones(2))
    assert repr(g) == (
        "graph(%0: float32[2], %1: float32[2]):\n"
        "  %2 = exp(%0)\n"
        "  %3 = sin(%1)\n"
        "  %4 = add(%2, %3)\n"
        "  %5 = mul(%4, %0)\n"
        "  return %5"
    )
    assert {k: [c.index for c in cs] for k, cs in g.consumers().items()} == {
        0: [0, 3], 1: [1], 2: [2], 3: [2], 4: [3]}  # fmt: skip
    assert g.last_use() == {0: 3, 1: 1, 2: 2, 3: 2, 4: 3}
    assert [[c.name for c in level] for level in g.levels()] == [
        ["ExpBackward0", "SinBackward0"], ["AddBackward0"], ["MulBackward0"]]  # fmt: skip
    viz = graph_to_viz(g)
    assert [n["label"] for n in viz.nodes] == ["%0", "%1", "Exp", "Sin", "Add", "Mul", "%5"]
    assert {"source": "n0", "target": "n5", "input": 1} in viz.edges


def test_the_listing_uses_forward_names_and_call_name_keeps_the_node():
    """Lesson 01 teaches that XBackward0 is the backward step of X: the IR lists the forward op."""
    g = trace(lambda x: (x.tanh() * 2).log_softmax(0).sum(), ag.ones(3))
    listing = repr(g)
    assert "Backward" not in listing, listing
    assert [c.forward_name for c in g.calls] == ["tanh", "mul", "log_softmax", "sum"]
    assert [c.name for c in g.calls] == [
        "TanhBackward0",
        "MulBackward0",
        "LogSoftmaxBackward0",
        "SumBackward0",
    ]
    assert "  %3 = log_softmax(%2, dim=0)\n" in listing
    names = ("TanhBackwardBackward0", "Log1PBackward0", "MaxPool2DWithIndicesBackward0", "gt")
    assert [forward_name(n) for n in names] == [
        "tanh_backward",
        "log1p",
        "max_pool2d_with_indices",
        "gt",
    ]
    fused = ag.compile(lambda x: (x * 2).tanh().exp())
    fused(ag.ones(3))
    (call,) = fused.current().executed.calls
    assert repr(call).endswith("= fused(%0)  # mul -> tanh -> exp"), repr(call)


def test_to_viz_draws_fused_groups_as_scopes():
    f = ag.compile(lambda x: (x.exp() * 2).sum().tanh())
    f(ag.ones(3))
    nodes = graph_to_viz(f.graph, f.plan).nodes
    assert [n["scope"] for n in nodes if n["kind"] == "op"] == ["fused0", "fused0", None, None]


def test_run_drops_values_after_their_last_use():
    import weakref

    seen = []
    g = trace(lambda x: x.exp().sin().cos(), ag.ones(3))
    original = g.calls[1].fn

    class Spy(original):
        @classmethod
        def apply(cls, *args, **kwargs):
            seen.append(weakref.ref(args[0]))  # the exp result, read by sin only
            return original.apply(*args, **kwargs)

    g.calls[1].fn = Spy
    out = run(g, [ag.ones(3)])
    assert seen[0]() is None  # dropped once sin had run: only the result is alive
    np.testing.assert_allclose(out.numpy(), np.cos(np.sin(np.exp(np.ones(3)))), rtol=1e-6)


def test_run_refuses_inputs_of_other_shapes():
    g = trace(lambda x: x * 2, ag.ones(3))
    with pytest.raises(RuntimeError, match="traced with float32"):
        run(g, [ag.ones(4)])
    with pytest.raises(TypeError, match="1 inputs but got 2"):
        run(g, [ag.ones(3), ag.ones(3)])


def test_explain_reports_groups_and_traffic():
    f = ag.compile(lambda x: (x * 2).tanh() + 1)
    f(ag.ones(1000))
    text = f.explain()
    assert "traced 3 calls on inputs float32[1000]" in text
    assert "group 0: mul -> tanh -> add over float32[1000]" in text
    assert "8000 bytes moved instead of 24000 bytes op by op" in text
