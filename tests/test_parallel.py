"""Graph levels and parallel execution of independent calls (autograd_lab.compile.extras.parallel).

Parallel runs must equal sequential ones exactly (values, gradients, node order); speed is
measured and reported (measure_two_branches), never asserted.
"""

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.compile import run, trace
from autograd_lab.compile.extras.parallel import (
    autograd_levels,
    describe_levels,
    levels,
    measure_two_branches,
    run_parallel,
)

RNG = np.random.default_rng(3)


def tensor(*shape, requires_grad=False):
    return ag.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def names(groups):
    return [[item.name if isinstance(item.name, str) else item.name() for item in level]
            for level in groups]  # fmt: skip


def diamond(x):
    """x feeds three branches that meet again: levels of 1, 3, 1, 1 calls."""
    return (x.exp() * x.sin() + x.tanh()).sum()


# ---- levels ----------------------------------------------------------------------------------------


def test_levels_of_a_traced_graph_group_independent_calls():
    graph = trace(diamond, tensor(4))
    assert names(levels(graph)) == [
        ["ExpBackward0", "SinBackward0", "TanhBackward0"],
        ["MulBackward0"],
        ["AddBackward0"],
        ["SumBackward0"],
    ]
    assert describe_levels(graph).splitlines()[0] == (
        "level 0: %1 = exp(%0) | %2 = sin(%0) | %4 = tanh(%0)"
    )


def test_a_chain_has_one_call_per_level():
    graph = trace(lambda x: x.exp().sin().cos(), tensor(3))
    assert [len(level) for level in levels(graph)] == [1, 1, 1]


def test_autograd_levels_walk_backward_from_the_loss():
    x = tensor(4, requires_grad=True)
    loss = diamond(x)
    assert names(autograd_levels(loss)) == [
        ["SumBackward0"],
        ["AddBackward0"],
        ["MulBackward0", "TanhBackward0"],
        ["ExpBackward0", "SinBackward0"],
        ["AccumulateGrad"],  # x's, once every branch has sent its gradient
    ]
    assert autograd_levels(loss.grad_fn)[0] == [loss.grad_fn]


def test_autograd_levels_need_a_graph():
    with pytest.raises(RuntimeError, match="requires_grad=True"):
        autograd_levels(ag.ones(2))


# ---- running in parallel equals running in order ---------------------------------------------------


def three_uses(x, w):
    """x is read by three independent branches: its gradient sums three contributions, so the
    order backward adds them in must not depend on which thread finished first."""
    a, b, c = (x @ w).tanh(), (x * 3).exp(), (x - w.sum()).sin()
    return (a.sum() + b.sum()) * c.mean(), b


def test_parallel_run_equals_sequential_values_and_gradients():
    x, w = tensor(6, 6, requires_grad=True), tensor(6, 6, requires_grad=True)
    graph = trace(three_uses, x, w)
    results = []
    for runner in (run, lambda g, inputs: run_parallel(g, inputs, min_bytes=0)):
        x.grad = w.grad = None
        loss, b = runner(graph, [x, w])
        loss.backward()
        results.append([loss.detach().numpy(), b.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_array_equal(got, want)  # bitwise: same ops, same order of sums


def test_backward_visits_nodes_in_the_same_order_as_after_a_sequential_run():
    def backward_order(runner):
        x, w = tensor(5, 5, requires_grad=True), tensor(5, 5, requires_grad=True)
        loss, _ = runner(trace(three_uses, x, w), [x, w])
        seen = []
        with ag.autograd.observe(on_backward=lambda event, node, detail: seen.append(
                (event, node.name()))):  # fmt: skip
            loss.backward()
        return seen

    parallel = backward_order(lambda g, inputs: run_parallel(g, inputs, min_bytes=0))
    assert parallel == backward_order(run)


def test_workers_use_the_callers_grad_mode_and_observers_see_nodes_in_program_order():
    x = tensor(4, requires_grad=True)
    graph = trace(diamond, x)
    with ag.no_grad():
        assert run_parallel(graph, [x], min_bytes=0).grad_fn is None
    seen = []
    with ag.autograd.observe(on_node=lambda node, outputs: seen.append(node.name())):
        run_parallel(graph, [x], min_bytes=0)
    assert seen == [call.name for call in graph.calls]


def test_compile_parallel_matches_eager():
    w = tensor(5, 5, requires_grad=True)

    def fn(x):
        return (x @ w).tanh().sum() + (x * w).exp().sum()

    compiled = ag.compile(fn, fuse=False, parallel=True)
    x = tensor(5, 5)
    compiled(x).backward()
    got = w.grad.numpy().copy()
    w.grad = None
    fn(x).backward()
    np.testing.assert_allclose(got, w.grad.numpy(), rtol=1e-12)


def test_measure_two_branches_reports_two_durations():
    """The figure for the report: on the 2-core machine, two 768x768 matmuls or two 2M-element
    tanh-exp-sin chains (see the module docstring); here tiny, only to check it runs."""
    sequential, parallel = measure_two_branches(
        lambda: [tensor(8, 8), tensor(8, 8)], lambda a, b: (a @ a) + (b @ b), repeats=3, min_bytes=0
    )
    assert sequential > 0 and parallel > 0
