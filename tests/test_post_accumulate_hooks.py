"""Tensor.register_post_accumulate_grad_hook, and the optimizer step run inside backward with it.

Tests that take `lib` run on autograd_lab and on PyTorch: the rules tested are PyTorch's. The
training tests check PyTorch's documented pattern (one optimizer per parameter, stepped by the
parameter's hook) against the standard loop, eagerly and with the planned executor; its memory
target is tested in test_memory_plan.py.
"""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag
from autograd_lab.compile import trace
from autograd_lab.compile.extras.memory import plan_memory, run_planned

# ---- the hook itself -------------------------------------------------------------------------------


def test_hooks_get_the_leaf_once_its_grad_is_accumulated_in_registration_order(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    for name in "ab":
        w.register_post_accumulate_grad_hook(
            lambda p, name=name: seen.append((name, p is w, values(p.grad).tolist()))
        )
    (w * 3).sum().backward()
    (w * w).sum().backward()  # a second backward adds into .grad: the hooks see the sum
    assert seen == [("a", True, [3, 3]), ("b", True, [3, 3]), ("a", True, [5, 7]),
                    ("b", True, [5, 7])]  # fmt: skip


def test_a_leaf_used_twice_gets_one_call_with_its_whole_gradient(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(values(p.grad).tolist()))
    (w * 2 + w * 3).sum().backward()
    assert seen == [[5.0, 5.0]]


def test_a_removed_hook_runs_no_more(lib):
    w = lib.tensor([1.0], requires_grad=True)
    seen = []
    first = w.register_post_accumulate_grad_hook(lambda p: seen.append("first"))
    w.register_post_accumulate_grad_hook(lambda p: seen.append("second"))
    first.remove()
    (w * 2).sum().backward()
    assert seen == ["second"]


def test_register_hook_sees_the_gradient_before_it_is_accumulated_and_this_one_after(lib):
    w = lib.tensor([1.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(("post", values(p.grad).item())))
    w.register_hook(lambda g: seen.append(("pre", None if w.grad is None else 0.0)))
    (w * 2).sum().backward()
    assert seen == [("pre", None), ("post", 2.0)]


def test_the_hook_runs_without_recording_and_may_drop_grad(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    recording = []

    def hook(p):
        recording.append(lib.is_grad_enabled())
        p.grad = None

    w.register_post_accumulate_grad_hook(hook)
    (w * w).sum().backward()
    assert recording == [False] and w.grad is None


def test_autograd_grad_fills_no_grad_so_it_runs_no_hook(lib):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    seen = []
    a.register_post_accumulate_grad_hook(lambda p: seen.append("a"))
    b.register_post_accumulate_grad_hook(lambda p: seen.append("b"))
    lib.autograd.grad((a * b).sum(), [a, b])
    assert seen == []
    (a * b).sum().backward(inputs=[a])  # only the leaves whose .grad backward fills
    assert seen == ["a"]


def test_only_a_leaf_that_requires_grad_takes_one(lib):
    w = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf tensors") as error:
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="require"):
        lib.tensor([1.0]).register_post_accumulate_grad_hook(lambda p: None)
    if lib is ag:
        assert "MulBackward0" in str(error.value) and "Fix: register it on the leaf" in str(
            error.value
        )


def test_a_hook_must_return_none(lib):
    w = lib.tensor([1.0], requires_grad=True)
    handle = w.register_post_accumulate_grad_hook(lambda p: p.grad * 2)
    with pytest.raises(RuntimeError, match="return None"):
        (w * 2).sum().backward()
    handle.remove()
    w.grad = None
    optimizer = lib.optim.SGD([w], lr=0.5)
    # A lambda returns what its expression makes: here a tuple, so the pattern needs a def.
    w.register_post_accumulate_grad_hook(lambda p: (optimizer.step(), optimizer.zero_grad()))
    with pytest.raises(TypeError, match="tuple"):
        (w * 2).sum().backward()
    assert values(w).tolist() == [0.0]  # the hook ran (1 - 0.5 * 2) before its result was checked
    if lib is ag:
        w.grad = None
        with pytest.raises(TypeError, match="Fix: return nothing; write a def"):
            (w * 2).sum().backward()


# ---- the optimizer step inside backward ------------------------------------------------------------

OPTIMIZERS = {
    "SGD with momentum": lambda lib, params: lib.optim.SGD(params, lr=0.1, momentum=0.9),
    "Adam": lambda lib, params: lib.optim.Adam(params, lr=0.01),
}
RNG = np.random.default_rng(0)
WEIGHTS = [RNG.standard_normal(shape) for shape in [(8, 6), (8,), (3, 8), (3,)]]
X, Y = RNG.standard_normal((5, 6)), np.array([0, 2, 1, 1, 0])


def train(lib, make_optimizer, in_backward, planned=False, steps=3):
    """A 6-8-3 ReLU MLP (float64) trained a few steps; its parameters after them, as numpy."""
    params = [lib.tensor(w, requires_grad=True) for w in WEIGHTS]
    x, y = lib.tensor(X), lib.tensor(Y)
    F = lib.nn.functional

    def loss_fn(x, y):
        return F.cross_entropy(F.linear(F.linear(x, *params[:2]).relu(), *params[2:]), y)

    if in_backward:  # PyTorch's pattern: an optimizer per parameter, stepped by its hook
        optimizers = {p: make_optimizer(lib, [p]) for p in params}

        def step_in_backward(p):
            optimizers[p].step()
            optimizers[p].zero_grad()

        for p in params:
            p.register_post_accumulate_grad_hook(step_in_backward)
    else:
        optimizer = make_optimizer(lib, params)
    if planned:
        graph = trace(loss_fn, x, y)
        plan = plan_memory(graph, [x, y])
        loss_fn = lambda x, y: run_planned(graph, [x, y], plan)  # noqa: E731
    for _ in range(steps):
        if not in_backward:
            optimizer.zero_grad()
        loss_fn(x, y).backward()
        if not in_backward:
            optimizer.step()
        else:
            assert all(p.grad is None for p in params)  # each dropped by its hook
    return [values(p).copy() for p in params]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_stepping_in_backward_gives_the_standard_loops_parameters(lib, name):
    standard = train(lib, OPTIMIZERS[name], in_backward=False)
    for got, want in zip(train(lib, OPTIMIZERS[name], in_backward=True), standard, strict=True):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(standard[0], WEIGHTS[0])  # it did train


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_planned_executor_steps_in_backward_to_the_same_parameters(name):
    standard = train(ag, OPTIMIZERS[name], in_backward=False)
    for in_backward in (False, True):
        planned = train(ag, OPTIMIZERS[name], in_backward, planned=True)
        for got, want in zip(planned, standard, strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_stepping_in_backward_matches_pytorch_doing_it(torch, name):
    want = train(torch, OPTIMIZERS[name], in_backward=True)
    for planned in (False, True):
        got = train(ag, OPTIMIZERS[name], in_backward=True, planned=planned)
        for mine, theirs in zip(got, want, strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_the_planned_executor_runs_each_hook_as_soon_as_that_gradient_is_complete():
    """Not at the end of backward: when the first layer's hook runs, the second layer's has run
    and its gradient is gone, and the first layer's own gradient is complete."""
    params = [ag.tensor(w, requires_grad=True) for w in WEIGHTS]
    F = ag.nn.functional
    x = ag.tensor(X)
    graph = trace(lambda x: F.linear(F.linear(x, *params[:2]).relu(), *params[2:]).sum(), x)
    events = []

    def hook(p):
        index = next(i for i, q in enumerate(params) if q is p)
        events.append((index, [q.grad is not None for q in params]))
        p.grad = None

    for p in params:
        p.register_post_accumulate_grad_hook(hook)
    run_planned(graph, [x], plan_memory(graph, [x])).backward()
    assert sorted(index for index, _ in events) == [0, 1, 2, 3]
    assert [index for index, _ in events][:2] in ([2, 3], [3, 2])  # the last layer first
    for index, alive in events:
        assert alive == [i == index for i in range(4)]  # only its own gradient exists then
