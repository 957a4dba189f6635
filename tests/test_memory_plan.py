"""The memory timeline, the memory planner and the planned executor (autograd_lab.compile.extras.memory).

Bytes come from tracemalloc and are deterministic enough for orderings (planned < eager); gradients
of planned runs are compared with eager autograd_lab in float64 (and eager with PyTorch elsewhere).
"""

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autograd_lab as ag
from autograd_lab.autograd.function import Function
from autograd_lab.compile import trace
from autograd_lab.compile.extras.layers import LinearStep, layer_steps
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
        ("forward", "TanhBackward0"), ("forward", "ExpBackward0"), ("forward", "SumBackward0"),
        ("backward", "SumBackward0"), ("backward", "ExpBackward0"), ("backward", "TanhBackward0"),
        ("backward", "AccumulateGrad"),
    ]  # fmt: skip
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
    assert retained - released >= 2 * 128 * 128 * 8  # tanh's and exp's saved results


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


# ---- the planned executor: same numbers as eager ----------------------------------------------------


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


# ---- linear layers and ReLU, run by the executor itself (compile/layers.py) ------------------------


def linear_relu_linear(batch, hidden=40, features=16, requires_grad=False):
    """x -> linear -> relu -> linear -> sum of squares, float64, with its parameters."""
    x = tensor(batch, features, requires_grad=requires_grad)
    w1, b1 = tensor(hidden, features, requires_grad=True), tensor(hidden, requires_grad=True)
    w2, b2 = tensor(3, hidden, requires_grad=True), tensor(3, requires_grad=True)

    def fn(x):
        return F.linear(F.linear(x, w1, b1).relu(), w2, b2).pow(2).sum()

    return fn, x, [w1, b1, w2, b2]


def same_numbers(got, want):
    """Equal to rounding: the plan computes a weight gradient in row blocks, which OpenBLAS (numpy's
    wheels on Linux) rounds exactly as the whole product, but another BLAS need not."""
    rtol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def exactly_as_eager(fn, inputs, params):
    """Eager and planned results and gradients are the same (bit for bit with OpenBLAS)."""
    eager, planned = eager_and_planned(fn, inputs, params)
    for got, want in zip(planned[0] + planned[1], eager[0] + eager[1], strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            same_numbers(got, want)


def test_a_weight_gradient_hosts_the_layer_output_and_its_gradient_when_they_fit():
    fn, x, params = linear_relu_linear(batch=4)  # 2 x (4 x 40) values fit in the 40 x 16 weight's
    steps = layer_steps(trace(fn, x), [x], routed=set())
    assert [repr(steps[i]) for i in (0, 1, 2)] == [
        "linear %3 (weight gradient hosts %3 and its gradient)", "relu %4 (in place)", "linear %7"
    ]  # fmt: skip
    exactly_as_eager(fn, [x], params)
    fn, x, params = linear_relu_linear(batch=12)  # 2 x (12 x 40) do not fit
    steps = layer_steps(trace(fn, x), [x], routed=set())
    assert not steps[0].hosts and steps[1].in_place
    exactly_as_eager(fn, [x], params)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(2, 24), st.integers(1, 80), st.sampled_from(["f4", "f8"]))
def test_a_weight_gradient_written_over_its_own_incoming_gradient_is_exact(batch, width, rows,
                                                                           dtype):  # fmt: skip
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

    steps = list(layer_steps(trace(fn, x), [x], routed=set()).values())
    assert [repr(s).split(" %")[0] for s in steps] == ["linear", "relu"] * 2
    assert [steps[1].in_place, steps[3].in_place] == [False, True]
    assert not any(s.hosts for s in steps[::2])  # the returned relu result cannot be overwritten
    exactly_as_eager(fn, [x], [w, b])


def test_a_shared_weight_and_an_input_that_requires_grad_match_eager():
    w = tensor(8, 8, requires_grad=True)
    x = tensor(2, 8, requires_grad=True)

    def fn(x):
        return F.linear(F.linear(x, w).relu(), w).relu().sum()  # w read twice: hosts nothing

    steps = layer_steps(trace(fn, x), [x], routed=set())
    assert not any(getattr(s, "hosts", False) for s in steps.values())
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


def test_a_weight_with_a_hook_gets_its_gradient_through_autograd():
    fn, x, params = linear_relu_linear(batch=4)
    seen = []
    params[0].register_hook(lambda g: seen.append(g.shape))
    graph = trace(fn, x)
    assert not layer_steps(graph, [x], routed={graph.calls[0].args[2].id})[0].hosts
    exactly_as_eager(fn, [x], params)
    assert seen == [(40, 16), (40, 16)]  # once eager, once planned


def test_with_the_update_in_backward_only_the_last_layer_that_can_host_does():
    x = tensor(4, 16)
    w1, w2, w3 = (tensor(40, 16, requires_grad=True), tensor(40, 40, requires_grad=True),
                  tensor(3, 40, requires_grad=True))  # fmt: skip
    graph = trace(lambda x: F.linear(F.linear(F.linear(x, w1).relu(), w2).relu(), w3).sum(), x)

    def hosting():
        steps = layer_steps(graph, [x], routed=set()).values()
        return [step.hosts for step in steps if isinstance(step, LinearStep)]

    assert hosting() == [True, True, False]
    handles = [w.register_post_accumulate_grad_hook(lambda p: None) for w in (w1, w2, w3)]
    assert hosting() == [False, True, False]  # w1's buffer would sit under w2's backward
    handles[0].remove()
    assert hosting() == [True, True, False]  # w1 is not updated in backward: its buffer is idle
    # a leaf with post-accumulate hooks only is not routed through autograd (hooks run in order)
    run_planned(graph, [x], plan_memory(graph, [x])).backward()
    assert w1.grad is not None and w2.grad is not None


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
    fn, x, _ = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    loss = run_planned(graph, [x], plan_memory(graph, [x]))
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="gone backward already.*plan_memory=True"):
        loss.backward()


def test_the_timeline_of_a_planned_run_shows_the_executors_own_steps():
    fn, x, _ = linear_relu_linear(batch=4)
    graph = trace(fn, x)
    plan = plan_memory(graph, [x])
    with record_memory() as timeline:
        run_planned(graph, [x], plan).backward()
    labels = [(s.phase, s.label) for s in timeline.samples]
    assert labels[:3] == [("forward", "AddmmBackward0"), ("forward", "ReluBackward0"),
                          ("forward", "AddmmBackward0")]  # fmt: skip
    steps = [label for phase, label in labels if phase == "backward"]
    assert ["AddmmBackward0", "ReluBackward0", "AddmmBackward0"] == [
        label for label in steps if label in ("AddmmBackward0", "ReluBackward0")
    ]


# ---- the target: the 784-512-512-10 MLP training step ---------------------------------------------


@pytest.fixture(scope="module")
def big_mlp():
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(784, 512), ag.nn.ReLU(), ag.nn.Linear(512, 512),
                             ag.nn.ReLU(), ag.nn.Linear(512, 10))  # fmt: skip
    x, y = ag.randn(256, 784), ag.randint(0, 10, (256,))
    return model, x, y


def test_planned_mlp_step_holds_little_besides_its_gradients(big_mlp):
    """Peak bytes during forward + backward, measured the same way (tracemalloc, after warm-up).
    Measured: eager 3.22 MB, planned 2.74 MB (0.85x). Forward + backward cannot reach the issue's
    0.7x: its results, the six gradients, are 2.68 MB, 0.83 of eager's peak (besides them eager
    holds 0.54 MB at its peak, the plan 0.06 MB). A training step can, by updating each parameter
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
    # 3.203 vs 3.217 MB, planned 2.685 vs 2.726 MB; temporaries inside an op are not counted).
    for estimate, measured in ((plan.live_bytes(eager=True).max(), eager),
                               (plan.live_bytes().max(), planned)):  # fmt: skip
        assert abs(estimate - measured) <= 0.03 * measured, (estimate, measured)


def training_step(model, x, y, planned, update_in_backward):
    """One SGD step of `model` as a function: zero_grad, forward, backward, step; or, with the
    update in backward, forward and backward only, each parameter stepped by its own optimizer
    from its post-accumulate hook (PyTorch's pattern), which drops the gradient right after."""
    params = list(model.parameters())
    forward = lambda: F.cross_entropy(model(x), y)  # noqa: E731
    if planned:
        graph = trace(lambda x, y: F.cross_entropy(model(x), y), x, y)
        plan = plan_memory(graph, [x, y])
        forward = lambda: run_planned(graph, [x, y], plan)  # noqa: E731
    if update_in_backward:
        optimizers = {p: ag.optim.SGD([p], lr=0.01) for p in params}

        def update(p):
            optimizers[p].step()
            optimizers[p].zero_grad()  # set_to_none: the gradient's memory goes now

        for p in params:
            p.register_post_accumulate_grad_hook(update)
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
    with the update in backward 2.17 MB (0.67x of eager's, 0.80x of eager's with the update in
    backward). The plan peaks as the second layer's update runs: that layer's weight gradient
    (1.05 MB, in the buffer that hosted the layer's output and incoming gradient: layers.py,
    point 3), the first layer's output and the gradient flowing into it (0.52 MB each) and SGD's
    64 KiB scratch; the first layer's backward (its weight gradient, 1.61 MB, and that incoming
    gradient) comes second, at 2.14 MB."""
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
    each gradient go once complete. Measured: eager 2.70 MB, planned 2.17 MB; estimates 2.62 and
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
    for estimate, measured in ((plan.live_bytes(eager=True).max(), eager),
                               (plan.live_bytes().max(), planned)):  # fmt: skip
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
    ax = memory_plots.memory_timeline({"released": released, "retain_graph=True": retained},
                                      labels=True)  # fmt: skip
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
