"""The memory timeline, the memory planner and planned runs (autograd_lab.compile.extras.memory),
with the linear layers and ReLUs that share memory (autograd_lab.compile.extras.layers).

Bytes come from tracemalloc and are deterministic enough for orderings (planned < eager); gradients
of planned runs are compared with eager autograd_lab in float64 (and eager with PyTorch elsewhere).
A planned run goes backward through autograd's own engine, so what eager backward offers
(autograd.grad, create_graph, hooks) is tested here through planned runs too.
"""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autograd_lab as ag
from autograd_lab.autograd.function import Function
from autograd_lab.autograd.graph import observe
from autograd_lab.compile import trace
from autograd_lab.compile.extras.layers import HostedLinear, plan_layers
from autograd_lab.compile.extras.layers import (
    _weight_grad_over_its_input as weight_grad_over_its_input,
)
from autograd_lab.compile.extras.memory import (
    find_saved,
    measure_peak,
    plan_memory,
    record_memory,
    run_planned,
)
from autograd_lab.ops.nn import LinearMm

F = ag.nn.functional
RNG = np.random.default_rng(0)


def tensor(*shape, requires_grad=False):
    return ag.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


# ---- the timeline ----------------------------------------------------------------------------------


def test_timeline_labels_every_forward_and_backward_op():
    x = tensor(64, 64, requires_grad=True)
    with record_memory() as timeline:
        x.tanh().exp().sum().backward()
    assert [(s.phase, s.label) for s in timeline.samples] == [
        ("forward", "TanhBackward0"),
        ("forward", "ExpBackward0"),
        ("forward", "SumBackward0"),
        ("backward", "SumBackward0"),
        ("backward", "ExpBackward0"),
        ("backward", "TanhBackward0"),
        ("backward", "AccumulateGrad"),
    ]
    one = 64 * 64 * 8
    forward_live = [s.live for s in timeline.samples[:3]]
    assert forward_live[0] >= one and forward_live[1] >= 2 * one  # tanh's and exp's results held
    assert timeline.peak >= max(s.live for s in timeline.samples)
    assert "TanhBackward0" in repr(timeline)


def test_retain_graph_keeps_saved_tensors_alive_after_backward():
    def live_after_backward(retain):
        x = tensor(128, 128, requires_grad=True)
        with record_memory() as timeline:
            y = x.tanh().exp().sum()
            y.backward(retain_graph=retain)
            timeline.mark("after backward")
        return timeline.samples[-1].live

    released, retained = live_after_backward(False), live_after_backward(True)
    # tanh's and exp's saved results (2 arrays of 128 KiB); small Python objects made or freed in
    # one run and not the other move the difference by some bytes either way
    assert retained - released >= 2 * 128 * 128 * 8 - 4096


# ---- the plan ----------------------------------------------------------------------------------------


def chain(x):
    return (x * 2).tanh().exp().sum()


def test_saved_values_are_found_by_running_the_graph_once():
    x = tensor(3, 4, requires_grad=True)
    graph = trace(chain, x)  # %1 = x * 2, %2 = tanh, %3 = exp, %4 = sum
    assert find_saved(graph, [x]) == {1: [2], 2: [3]}  # tanh and exp save their results


def test_lifetimes_free_at_last_use_and_keep_saved_values_for_backward():
    x = tensor(3, 4, requires_grad=True)
    graph = trace(chain, x)
    plan = plan_memory(graph, [x])
    n = len(graph.calls)  # backward of call i is step 2n-1-i
    assert plan.intervals[1] == (0, 1)  # x * 2: read by tanh only, saved by nobody
    assert plan.intervals[2] == (1, 2 * n - 1 - 1)  # tanh's result: until tanh's backward
    assert plan.intervals[4] == (3, 2 * n - 1)  # the output belongs to the caller
    assert plan.alive_after(1) == [2] and plan.freed_after(1) == [1]
    assert plan.per_call()[1] == {"alive": [2], "freed": [1], "live_bytes": 2 * 3 * 4 * 8}
    assert plan.live_bytes()[2] < plan.live_bytes(eager=True)[2]  # x * 2 went after tanh
    assert "planned" in plan.summary() and "eager estimate" in plan.summary()


def test_without_gradients_nothing_is_kept_for_backward():
    x = tensor(3, 4)
    graph = trace(chain, x)
    plan = plan_memory(graph, [x], saved={})
    assert not plan.backward and plan.intervals[2] == (1, 2)


class Double(Function):
    """x * 2 written into a buffer the caller may hand in (`out=`), as fused kernels do."""

    accepts_out = True
    calls = []

    @staticmethod
    def forward(ctx, x, out=None):
        given = out[0] if out is not None else None
        Double.calls.append(given)
        return np.multiply(x._data, 2, out=given)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def four_doubles(x):
    return Double.apply(Double.apply(Double.apply(Double.apply(x))))


def test_a_dead_values_buffer_is_reused_by_a_later_value_of_the_same_size():
    x = tensor(5, 6)
    graph = trace(four_doubles, x)
    plan = plan_memory(graph, [x], saved={})
    # %1 dies when %2 is made, so %3 takes its buffer; the output %4 takes %2's
    assert plan.buffers == {1: 0, 2: 1, 3: 0, 4: 1} and plan.reused == [3, 4]
    Double.calls.clear()
    y = run_planned(graph, [x], plan)
    np.testing.assert_allclose(y.numpy(), 16 * x.numpy())
    first, second, third, fourth = Double.calls
    assert third is first and fourth is second  # the same arrays, written again


class Square(Function):
    """x * x into a buffer the caller may hand in; backward needs the saved x."""

    accepts_out = True

    @staticmethod
    def forward(ctx, x, out=None):
        ctx.save_for_backward(x)
        return np.multiply(x._data, x._data, out=out[0] if out is not None else None)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def test_a_value_saved_for_backward_keeps_its_buffer():
    def fn(x):  # x ** 8: its gradient 8 x ** 7 reads every saved input
        return Square.apply(Square.apply(Square.apply(x)))

    x = ag.tensor(np.linspace(0.5, 1.5, 6), requires_grad=True)
    want = 8 * x.detach().numpy() ** 7
    graph = trace(fn, x)
    plan = plan_memory(graph, [x])
    assert plan.reused == []  # %1 and %2 are saved by the next call: never overwritten
    run_planned(graph, [x], plan).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
    x.grad = None
    without_grad = plan_memory(graph, [x.detach()])  # nothing saved then: %1's buffer reused
    assert without_grad.reused == [3]
    run_planned(graph, [x], without_grad).sum().backward()  # so with gradients it is not used
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


# ---- planned runs: same numbers as eager ------------------------------------------------------------


def eager_and_planned(fn, inputs, params):
    """Run fn eagerly and planned; return (eager results, planned results) and gradients."""
    outcomes = []
    for planned in (False, True):
        for t in list(inputs) + list(params):
            t.grad = None
        if planned:
            graph = trace(fn, *inputs)
            out = run_planned(graph, list(inputs), plan_memory(graph, list(inputs)))
        else:
            out = fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
        grads = [None if t.grad is None else t.grad.numpy().copy() for t in inputs + params]
        outcomes.append(([o.detach().numpy() for o in outs], grads))
    return outcomes


def assert_same(eager, planned):
    for got, want in zip(planned[0] + planned[1], eager[0] + eager[1], strict=True):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_mlp_step_matches_eager():
    w1, b1 = tensor(8, 5, requires_grad=True), tensor(8, requires_grad=True)
    w2, b2 = tensor(3, 8, requires_grad=True), tensor(3, requires_grad=True)
    x, y = tensor(6, 5), ag.tensor([0, 2, 1, 1, 0, 2])

    def loss(x, y):
        return F.cross_entropy(F.linear(F.linear(x, w1, b1).relu(), w2, b2), y)

    assert_same(*eager_and_planned(loss, [x, y], [w1, b1, w2, b2]))


def test_branches_shared_weights_and_several_outputs_match_eager():
    w = tensor(4, requires_grad=True)
    x = tensor(3, 4, requires_grad=True)

    def fn(x):
        h = x * w
        return h.tanh() + h.sin() * w, (x + w).exp(), x

    assert_same(*eager_and_planned(fn, [x], [w]))


def test_gradients_handed_out_never_share_an_array():
    w = tensor(4, requires_grad=True)
    x = tensor(4, requires_grad=True)
    graph = trace(lambda x: x + w, x)  # AddBackward0 hands the same gradient to both inputs
    run_planned(graph, [x], plan_memory(graph, [x])).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())
    w.grad.add_(1.0)  # an in-place change of one .grad must not show in the other
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(4))


def test_gradients_accumulate_into_grad_over_two_backwards():
    w = tensor(3, 3, requires_grad=True)
    x = tensor(2, 3)
    graph = trace(lambda x: (x @ w).tanh().sum(), x)
    plan = plan_memory(graph, [x])
    run_planned(graph, [x], plan).backward()
    once = w.grad.numpy().copy()
    run_planned(graph, [x], plan).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * once, rtol=1e-12)


def test_a_non_leaf_constant_routes_its_gradient_through_autograd():
    w = tensor(3, requires_grad=True)
    scaled = w * 3  # read by fn, not an input: a constant that is not a leaf
    x = tensor(3)
    graph = trace(lambda x: (x * scaled).sin().sum(), x)
    run_planned(graph, [x], plan_memory(graph, [x])).backward()
    np.testing.assert_allclose(
        w.grad.numpy(), 3 * x.numpy() * np.cos(x.numpy() * 3 * w.detach().numpy())
    )


def test_create_graph_gives_second_derivatives():
    x = tensor(5, requires_grad=True)
    graph = trace(lambda x: (x.tanh() * x).sum(), x)
    out = run_planned(graph, [x], plan_memory(graph, [x]))
    (g,) = ag.autograd.grad(out, x, create_graph=True)
    g.sum().backward()
    t = np.tanh(x.detach().numpy())
    want = 2 * (1 - t**2) - 2 * x.detach().numpy() * t * (1 - t**2)  # d/dx of tanh + x tanh'
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10)


def test_under_no_grad_it_runs_forward_only():
    w = tensor(3, requires_grad=True)
    x = tensor(3)
    graph = trace(lambda x: (x * w).exp(), x)
    with ag.no_grad():
        y = run_planned(graph, [x], plan_memory(graph, [x]))
    assert y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), np.exp(x.numpy() * w.detach().numpy()))


# ---- linear layers and ReLU that share memory (compile/extras/layers.py) ----------------------------


def linear_relu_linear(batch, hidden=40, features=16, requires_grad=False):
    """x -> linear -> relu -> linear -> sum of squares, float64, with its parameters."""
    x = tensor(batch, features, requires_grad=requires_grad)
    w1, b1 = tensor(hidden, features, requires_grad=True), tensor(hidden, requires_grad=True)
    w2, b2 = tensor(3, hidden, requires_grad=True), tensor(3, requires_grad=True)

    def fn(x):
        return F.linear(F.linear(x, w1, b1).relu(), w2, b2).pow(2).sum()

    return fn, x, [w1, b1, w2, b2]


def same_numbers(got, want):
    """Equal to rounding: the plan computes a weight gradient written over its own incoming gradient
    in row blocks, which BLAS may round unlike the whole product (OpenBLAS 0.3.31 does, in the last
    bits); every other number of a planned run is eager's, bit for bit."""
    rtol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def exactly_as_eager(fn, inputs, params):
    """Eager and planned results and gradients are the same (to rounding: `same_numbers`)."""
    eager, planned = eager_and_planned(fn, inputs, params)
    for got, want in zip(planned[0] + planned[1], eager[0] + eager[1], strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            same_numbers(got, want)


def planned_calls(fn, x):
    """The calls a planned run of fn makes as layers.py's Functions, as the listing writes them."""
    return [repr(call) for call in plan_layers(trace(fn, x), [x]).values()]


def test_a_weight_gradient_hosts_the_layer_output_and_its_gradient_when_they_fit():
    fn, x, params = linear_relu_linear(batch=4)  # 2 x (4 x 40) values fit in the 40 x 16 weight's
    assert planned_calls(fn, x) == [
        "%3 = hosted_linear(%1, %0, %2, host=Host %3)",
        "%4 = in_place_relu(%3, host=Host %3, mask_in_place=True)",
        "%7 = hosted_linear(%5, %4, %6, grad_into=Host %3)",
    ]
    exactly_as_eager(fn, [x], params)
    fn, x, params = linear_relu_linear(batch=12)  # 2 x (12 x 40) do not fit: ReLU in place only
    assert planned_calls(fn, x) == ["%4 = in_place_relu(%3, mask_in_place=True)"]
    exactly_as_eager(fn, [x], params)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(2, 24), st.integers(1, 80), st.sampled_from(["f4", "f8"]))
def test_a_weight_gradient_written_over_its_own_incoming_gradient_is_exact(
    batch, width, rows, dtype
):
    width = max(width, 2 * batch)  # the condition under which a gradient buffer hosts g
    rng = np.random.default_rng(rows)
    x, g = rng.standard_normal((batch, width)), rng.standard_normal((batch, rows))
    x, g = x.astype(dtype), g.astype(dtype)
    want, x_before = g.T @ x, x.copy()
    buffer = np.empty((rows, width), dtype)
    back = buffer.reshape(-1)[buffer.size - g.size :].reshape(g.shape)
    back[...] = g
    assert weight_grad_over_its_input(buffer, back, x) is buffer
    same_numbers(buffer, want)
    np.testing.assert_array_equal(x, x_before)


def test_relu_runs_in_place_only_on_a_result_nobody_else_reads():
    w, b = tensor(6, 5, requires_grad=True), tensor(6, requires_grad=True)
    x = tensor(4, 5, requires_grad=True)

    def fn(x):
        h = F.linear(x, w, b)  # read by relu and by the product: relu must not overwrite it
        return (h.relu() * h).sum(), F.linear(x, w).relu()  # this relu's input: its alone

    # the second relu's result is returned, so it cannot host, and its gradient is the caller's
    assert planned_calls(fn, x) == ["%8 = in_place_relu(%7, mask_in_place=False)"]
    exactly_as_eager(fn, [x], [w, b])


def test_a_shared_weight_and_an_input_that_requires_grad_match_eager():
    w = tensor(8, 8, requires_grad=True)
    x = tensor(2, 8, requires_grad=True)

    def fn(x):
        return F.linear(F.linear(x, w).relu(), w).relu().sum()  # w read twice: hosts nothing

    assert not any("Host" in call for call in planned_calls(fn, x))
    exactly_as_eager(fn, [x], [w])


def test_gradients_of_hosting_layers_accumulate_into_grad():
    fn, x, params = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    plan = plan_memory(graph, [x])
    run_planned(graph, [x], plan).backward()
    once = [p.grad.numpy().copy() for p in params]
    run_planned(graph, [x], plan).backward()  # .grad exists now: the buffer is added into it
    for p, first in zip(params, once, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), 2 * first)


def test_a_weight_with_a_hook_keeps_its_own_gradient_buffer():
    """A register_hook hook may keep the gradient it is shown: the weight then hosts nothing, and
    the hook sees its gradient as in eager mode."""
    fn, x, params = linear_relu_linear(batch=4)
    seen = []
    params[0].register_hook(lambda g: seen.append(g.shape))
    assert not any("Host" in call for call in planned_calls(fn, x))
    exactly_as_eager(fn, [x], params)
    assert seen == [(40, 16), (40, 16)]  # once eager, once planned


def hosting(graph, x):
    """For each linear call of the graph: does its weight gradient's buffer host (layers.py)?"""
    replace = plan_layers(graph, [x])
    linear = [call for call in graph.calls if call.fn is LinearMm]
    return ["host" in getattr(replace.get(call.index), "kwargs", {}) for call in linear]


def test_with_the_update_in_backward_only_the_last_layer_that_can_host_does():
    x = tensor(4, 16)
    w1, w2, w3 = (
        tensor(40, 16, requires_grad=True),
        tensor(40, 40, requires_grad=True),
        tensor(3, 40, requires_grad=True),
    )
    graph = trace(lambda x: F.linear(F.linear(F.linear(x, w1).relu(), w2).relu(), w3).sum(), x)
    assert hosting(graph, x) == [True, True, False]
    handles = [w.register_post_accumulate_grad_hook(lambda p: None) for w in (w1, w2, w3)]
    assert hosting(graph, x) == [False, True, False]  # w1's buffer would sit under w2's backward
    handles[0].remove()
    assert hosting(graph, x) == [
        True,
        True,
        False,
    ]  # w1 is not updated in backward: its buffer is idle
    run_planned(graph, [x], plan_memory(graph, [x])).backward()  # these hooks leave .grad alone
    assert all(w.grad is not None for w in (w1, w2, w3))


@pytest.mark.parametrize("batch", [4, 16])  # 2 * 4 * 40 <= 40 * 16: w1's gradient hosts; 16: not
def test_the_planned_estimate_counts_memory_that_layers_share_once(batch):
    fn, x, params = linear_relu_linear(batch)
    graph = trace(fn, x)  # %l = linear, %r = relu(%l), then linear, pow, sum
    plan = plan_memory(graph, [x])
    linear, relu = graph.calls[0].outputs[0].id, graph.calls[1].outputs[0].id
    w1 = graph.calls[0].args[2].id
    activation, results = batch * 40 * 8, sum(p.detach().numpy().nbytes for p in params) + 8
    live, eager = plan.live_bytes(), plan.live_bytes(eager=True)
    if batch == 4:  # %l, %r and their gradients live in w1's gradient buffer, made in forward
        assert {plan.hosted[k] for k in (linear, relu, ("grad", linear), ("grad", relu))} == {
            ("grad", w1)
        }
        assert live[0] == params[0].detach().numpy().nbytes
    else:  # ReLU in place: %r in %l's memory, and %l's gradient in %r's
        assert plan.hosted[relu] == linear and plan.hosted[("grad", linear)] == ("grad", relu)
        assert live[1] == activation and eager[1] == 2 * activation
    # the first layer's backward holds the results and the gradient flowing into that layer,
    # which takes no memory of its own when the weight gradient's buffer hosts it
    assert live[-1] == results + (0 if batch == 4 else activation)
    assert eager[-1] == results + activation


def test_going_backward_twice_is_refused_with_the_fix():
    fn, x, params = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    loss = run_planned(graph, [x], plan_memory(graph, [x]))
    loss.backward(retain_graph=True)  # the weight gradient is written over the hosted memory
    again = [
        lambda: loss.backward(retain_graph=True),  # (retained: both attempts reach the layers)
        lambda: ag.autograd.grad(loss, params, create_graph=True),
    ]
    for attempt in again:
        with pytest.raises(RuntimeError, match="gone backward already.*plan_memory=True"):
            attempt()
    fn(x).backward(retain_graph=True)  # eager: allowed; the first backward was the same
    loss = run_planned(graph, [x], plan_memory(graph, [x]))  # a new run goes backward again
    loss.backward()


def test_the_timeline_of_a_planned_run_shows_the_layers_as_ordinary_nodes():
    fn, x, _ = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    plan = plan_memory(graph, [x])
    with record_memory() as timeline:
        run_planned(graph, [x], plan).backward()
    labels = [(s.phase, s.label) for s in timeline.samples]
    layers = ["HostedLinearBackward0", "InPlaceReluBackward0", "HostedLinearBackward0"]
    assert labels[:3] == [("forward", label) for label in layers]
    steps = [label for phase, label in labels if phase == "backward"]
    assert [label for label in steps if label in layers] == layers[::-1]


# ---- what going backward through autograd's engine gives a planned run ----------------------------


def hosted_nodes(loss):
    """The HostedLinear nodes of the graph behind `loss` that host their weight's gradient."""
    found, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node._fn is HostedLinear and node.host is not None:
            found.append(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return found


def test_a_hosted_weight_gradient_becomes_grad_without_a_copy():
    """The weight gradient that a hosting layer writes over its buffer is a fresh array: the
    engine adopts it as .grad (engine.py, `_owned`), no copy is made."""
    fn, x, params = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    loss = run_planned(graph, [x], plan_memory(graph, [x]))
    (node,) = hosted_nodes(loss)
    buffer = node.host.array  # made by the first layer's forward, its output at the front
    assert buffer.shape == (40, 16)
    accumulated = []
    with observe(
        on_backward=lambda event, node, g: event == "accumulate" and accumulated.append(g)
    ):
        loss.backward()
    assert params[0].grad.numpy() is buffer  # the very array, now the weight's gradient
    assert any(g is params[0].grad for g in accumulated)  # adopted as it arrived
    assert node.host.array is None and node.host.state == "written"


def test_autograd_grad_reaches_the_parameters_of_a_planned_run():
    fn, x, params = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    loss = run_planned(graph, [x], plan_memory(graph, [x]))
    got = ag.autograd.grad(loss, params)
    assert all(p.grad is None for p in params)  # grad() fills no .grad
    fn(x).backward()
    for g, p in zip(got, params, strict=True):
        same_numbers(g.numpy(), p.grad.numpy())
    compiled = ag.compile(fn, plan_memory=True)  # the same through compile()
    for g, p in zip(ag.autograd.grad(compiled(x), params), params, strict=True):
        same_numbers(g.numpy(), p.grad.numpy())


def test_create_graph_through_hosting_layers_gives_second_derivatives():
    """A gradient penalty: differentiate the input's gradient again. Under create_graph=True the
    layers compute as Addmm and Relu do, with nothing in place, and keep their hosted memory as
    forward left it, so the second backward, which goes through them again, reads it intact."""
    fn, x, params = linear_relu_linear(batch=4, requires_grad=True)

    def penalized(run):
        for t in [x, *params]:
            t.grad = None
        loss = run()
        (g,) = ag.autograd.grad(loss, x, create_graph=True)
        (g**2).sum().backward()
        return [t.grad.numpy().copy() for t in [x, *params]]

    graph = trace(fn, x)
    plan = plan_memory(graph, [x])
    assert "host" in plan.replace[0].kwargs
    planned = penalized(lambda: run_planned(graph, [x], plan))
    for got, want in zip(planned, penalized(lambda: fn(x)), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.abs(planned[1]).sum() > 0  # the penalty does reach the first weight


def test_each_run_of_a_plan_has_its_own_hosted_memory():
    """Two runs of one plan alive at once (gradients of two batches summed): each run's layers
    share a buffer of their own, made by that run's forward."""
    fn, x, params = linear_relu_linear(batch=4)
    x2 = tensor(4, 16)
    graph = trace(fn, x)
    plan = plan_memory(graph, [x])
    first, second = run_planned(graph, [x], plan), run_planned(graph, [x2], plan)
    (a,), (b,) = hosted_nodes(first), hosted_nodes(second)
    assert a.host is not b.host and not np.shares_memory(a.host.array, b.host.array)
    (first + second).backward()
    planned = [p.grad.numpy().copy() for p in params]
    for p in params:
        p.grad = None
    (fn(x) + fn(x2)).backward()
    for got, p in zip(planned, params, strict=True):
        same_numbers(got, p.grad.numpy())


def test_compiled_with_checkpoint_the_recomputed_forward_lends_memory_of_its_own():
    """compile(plan_memory=True, checkpoint=True): backward runs the planned forward again (a new
    run, with Hosts of its own) and the layers' nodes read what it saved: same gradients."""
    fn, x, params = linear_relu_linear(batch=4)
    fn(x).backward()
    want = [p.grad.numpy().copy() for p in params]
    compiled = ag.compile(fn, plan_memory=True, checkpoint=True)
    for _ in range(2):  # the second call reuses the trace and its plan
        for p in params:
            p.grad = None
        compiled(x).backward()
        for p, w in zip(params, want, strict=True):
            same_numbers(p.grad.numpy(), w)
    assert "host" in compiled.current().memory_plan.replace[0].kwargs


# ---- the target: the 784-512-512-10 MLP training step ---------------------------------------------


@pytest.fixture(scope="module")
def big_mlp():
    ag.manual_seed(0)
    model = ag.nn.Sequential(
        ag.nn.Linear(784, 512),
        ag.nn.ReLU(),
        ag.nn.Linear(512, 512),
        ag.nn.ReLU(),
        ag.nn.Linear(512, 10),
    )
    x, y = ag.randn(256, 784), ag.randint(0, 10, (256,))
    return model, x, y


def test_planned_mlp_step_holds_little_besides_its_gradients(big_mlp):
    """Peak bytes during forward + backward, measured the same way (tracemalloc, after warm-up).
    Measured: eager 3.21 MB, planned 2.73 MB (0.85x). Forward + backward cannot reach the issue's
    0.7x: its results, the six gradients, are 2.68 MB, 0.83 of eager's peak (besides them eager
    holds 0.54 MB at its peak, the plan 0.05 MB). A training step can, by updating each parameter
    inside backward: see the next test."""
    model, x, y = big_mlp

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    graph = trace(loss_fn, x, y)
    plan = plan_memory(graph, [x, y])

    def step(run):
        def go():
            for p in model.parameters():
                p.grad = None
            run().backward()

        return go

    eager = measure_peak(step(lambda: loss_fn(x, y)))
    eager_grads = [p.grad.numpy().copy() for p in model.parameters()]
    planned = measure_peak(step(lambda: run_planned(graph, [x, y], plan)))
    for p, want in zip(model.parameters(), eager_grads, strict=True):
        same_numbers(p.grad.numpy(), want)
    results = sum(p.grad.numpy().nbytes for p in model.parameters())
    assert planned <= 0.9 * eager, (planned, eager)
    assert planned - results <= 0.25 * (eager - results), (planned, eager, results)
    # The estimates, from the graph alone, model both executors to within 3% (measured: eager
    # 3.203 vs 3.214 MB, planned 2.685 vs 2.731 MB; temporaries inside an op are not counted).
    for estimate, measured in (
        (plan.live_bytes(eager=True).max(), eager),
        (plan.live_bytes().max(), planned),
    ):
        assert abs(estimate - measured) <= 0.03 * measured, (estimate, measured)


def training_step(model, x, y, planned, update_in_backward):
    """One SGD step of `model` as a function: zero_grad, forward, backward, step; or, with the
    update in backward, forward and backward only, each parameter stepped by its own optimizer
    from its post-accumulate hook (PyTorch's pattern), which drops the gradient right after.
    Planned, the plan is made once the hooks are there: it reads them (layers.py, point 3)."""
    params = list(model.parameters())
    if update_in_backward:
        optimizers = {p: ag.optim.SGD([p], lr=0.01) for p in params}

        def update(p):
            optimizers[p].step()
            optimizers[p].zero_grad()  # set_to_none: the gradient's memory goes now

        for p in params:
            p.register_post_accumulate_grad_hook(update)
    forward = lambda: F.cross_entropy(model(x), y)  # noqa: E731
    if planned:
        graph = trace(lambda x, y: F.cross_entropy(model(x), y), x, y)
        plan = plan_memory(graph, [x, y])
        forward = lambda: run_planned(graph, [x, y], plan)  # noqa: E731
    if update_in_backward:
        return lambda: forward().backward()
    optimizer = ag.optim.SGD(params, lr=0.01)

    def step():
        optimizer.zero_grad()  # set_to_none, the default
        forward().backward()
        optimizer.step()

    return step


def test_planned_training_step_with_the_update_in_backward_peaks_under_0_7_of_eager(big_mlp):
    """The issue's target: a training step's peak, planned, at most 0.7x eager's. A step ends
    with the update, which is each gradient's last use; run inside backward, it lets each
    gradient go as soon as it is complete, so the six are never alive together. Peak bytes of a
    whole step (tracemalloc, after warm-up), each way from the same weights. Measured: eager
    3.22 MB; eager with the update in backward 2.70 MB (0.84x); planned 2.75 MB (0.85x); planned
    with the update in backward 2.21 MB (0.69x of eager's, 0.82x of eager's with the update in
    backward). The plan peaks as the first layer's update runs: its weight gradient (1.61 MB),
    the gradient that flowed into the layer (0.52 MB: the engine holds a node's incoming
    gradients until it has sent all its results, and a leaf's hooks run as it sends) and SGD's
    64 KiB scratch. The second layer's update comes second, at 2.18 MB: that layer's weight
    gradient (1.05 MB, in the buffer that hosted the layer's output and incoming gradient:
    layers.py, point 3), the first layer's output and the gradient flowing into it (0.52 MB
    each) and the scratch."""
    model, x, y = big_mlp
    peaks, params = {}, {}
    for planned in (False, True):
        for update_in_backward in (False, True):
            net = copy.deepcopy(model)  # every way from the same weights
            step = training_step(net, x, y, planned, update_in_backward)
            peaks[planned, update_in_backward] = measure_peak(step)  # two steps: warm-up, measured
            params[planned, update_in_backward] = [p.detach().numpy() for p in net.parameters()]
    eager = peaks[False, False]
    assert peaks[True, True] <= 0.7 * eager, peaks
    assert peaks[True, True] < min(peaks[False, True], peaks[True, False]), peaks
    for way in [(False, True), (True, False), (True, True)]:
        for got, want in zip(params[way], params[False, False], strict=True):
            if way[0]:  # the plan's weight gradients are computed in row blocks (same_numbers)
                same_numbers(got, want)
            else:
                np.testing.assert_array_equal(got, want)
    assert not np.array_equal(params[False, False][0], model[0].weight.detach().numpy())


def test_the_plan_estimates_the_update_in_backward_from_the_hooks(big_mlp):
    """With post-accumulate hooks on the parameters when the plan is made, the estimates let
    each gradient go once complete. Measured: eager 2.70 MB, planned 2.21 MB; estimates 2.62 and
    2.13 MB (without the hooks in the model they said 3.20 and 2.69: every gradient to the end)."""
    net = copy.deepcopy(big_mlp[0])
    x, y = big_mlp[1], big_mlp[2]
    optimizers = {p: ag.optim.SGD([p], lr=0.01) for p in net.parameters()}

    def update(p):
        optimizers[p].step()
        optimizers[p].zero_grad()

    for p in net.parameters():
        p.register_post_accumulate_grad_hook(update)

    def loss_fn(x, y):
        return F.cross_entropy(net(x), y)

    graph = trace(loss_fn, x, y)
    plan = plan_memory(graph, [x, y])
    assert len(plan.updated) == 6 and "updated in backward: 6 parameters" in plan.summary()
    eager = measure_peak(lambda: loss_fn(x, y).backward())
    planned = measure_peak(lambda: run_planned(graph, [x, y], plan).backward())
    for estimate, measured in (
        (plan.live_bytes(eager=True).max(), eager),
        (plan.live_bytes().max(), planned),
    ):
        assert abs(estimate - measured) <= 0.04 * measured, (estimate, measured)


# ---- the figures -----------------------------------------------------------------------------------


@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (the lab extra) is missing")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


def test_timeline_figure_draws_each_run_with_its_live_bytes(plt):
    from autograd_lab.viz import memory_plots

    def recorded(retain):
        x = tensor(64, 64, requires_grad=True)
        with record_memory() as timeline:
            x.tanh().exp().sum().backward(retain_graph=retain)
        return timeline

    released, retained = recorded(False), recorded(True)
    ax = memory_plots.memory_timeline(
        {"released": released, "retain_graph=True": retained}, labels=True
    )
    live_lines = ax.lines[0], ax.lines[2]  # each run: live (solid), then its peaks (dotted)
    for line, timeline in zip(live_lines, (released, retained), strict=True):
        np.testing.assert_allclose(line.get_ydata(), [s.live / 1e6 for s in timeline.samples])
    assert ax.get_legend().get_texts()[1].get_text().startswith("retain_graph=True (peak")
    assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["Tanh", "Exp"]
    with pytest.raises(ValueError, match="at least one timeline"):
        memory_plots.memory_timeline({})


def test_plan_figure_draws_eager_estimate_and_plan(plt):
    from autograd_lab.viz import memory_plots

    x = tensor(3, 4, requires_grad=True)
    graph = trace(chain, x)
    plan = plan_memory(graph, [x])
    ax = memory_plots.plan_estimate(plan)
    eager, planned = ax.lines[0], ax.lines[1]
    np.testing.assert_allclose(eager.get_ydata(), plan.live_bytes(eager=True) / 1e6)
    np.testing.assert_allclose(planned.get_ydata(), plan.live_bytes() / 1e6)


# ---- CUDA tensors: the planner plans host memory only --------------------------------------------


def test_planning_cuda_tensors_is_refused_with_the_fix_and_compile_runs_them_unplanned():
    """The planner lays out numpy arrays (layers.py runs Linear/ReLU in numpy): on CUDA tensors
    run_planned says so, and compile(plan_memory=True) warns and replays the graph unplanned."""
    ag.cuda.use_simulator_if_no_gpu()
    w = ag.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True, device="cuda")
    x = ag.tensor([[1.0, 2.0], [-0.5, 0.5], [3.0, 1.0]], device="cuda")

    def fn(x):
        return (x @ w).tanh().sum()

    graph = trace(fn, x)
    with pytest.raises(NotImplementedError, match="host memory.*compile.run"):
        run_planned(graph, [x], plan_memory(graph, [x]))
    fn(x).backward()
    eager, w.grad = w.grad.cpu().numpy(), None
    with pytest.warns(RuntimeWarning, match="plans host .*unplanned"):
        compiled = ag.compile(fn, plan_memory=True)
        compiled(x).backward()
    assert w.grad.device.type == "cuda"
    np.testing.assert_allclose(w.grad.cpu().numpy(), eager, rtol=1e-12)
