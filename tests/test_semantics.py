"""PyTorch's autograd semantics, one test per rule of the issue's list; the engine's properties.

Most tests take `lib`: they run once on autograd_lab and once on PyTorch (skipped without it). The
same code must behave the same way on both — that is what "PyTorch-compatible" means, and a test
that passes on PyTorch shows that the rule it checks is PyTorch's rule, not ours.
"""

import threading
import warnings

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag

# ---- the rules (issue: "PyTorch semantics that must hold") ---------------------------------------


def test_requires_grad_propagates_from_any_input(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0])
    for result in (a * b, b * a, b + a, b - a, lib.cat([b, a]), lib.maximum(b, a), 2 * a):
        assert result.requires_grad
    for result in (b * b, b.exp(), lib.cat([b, b]), 2 * b):
        assert not result.requires_grad


def test_leaves_are_tensors_without_grad_fn(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([1.0, 2.0])
    y = x * 2
    assert x.is_leaf and x.grad_fn is None
    assert c.is_leaf and c.grad_fn is None
    assert not y.is_leaf and y.grad_fn is not None
    assert (c * 2).is_leaf  # made by an op, but nothing was recorded: still a leaf
    assert y.detach().is_leaf


def test_gradients_accumulate_into_leaf_grad_across_backward_calls(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(values(x.grad), [2.0, 4.0])
    (x * 3).sum().backward()
    np.testing.assert_allclose(values(x.grad), [5.0, 7.0])
    x.grad = None  # what optimizer.zero_grad() does
    (x * 3).sum().backward()
    np.testing.assert_allclose(values(x.grad), [3.0, 3.0])


def test_non_leaf_grad_is_none_with_a_warning_unless_retain_grad(lib):
    x = lib.tensor(3.0, requires_grad=True)
    y = x * 2
    (y * y).backward()
    with pytest.warns(UserWarning):
        assert y.grad is None
    y2 = x * 2
    y2.retain_grad()
    (y2 * y2).backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y2.grad.item() == 12.0  # d(y²)/dy = 2y


def test_implicit_gradient_only_for_one_element_outputs(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()  # 0-d
    (x * x).sum().reshape(1, 1).backward()  # one element, any number of dims
    np.testing.assert_allclose(values(x.grad), [4.0, 8.0])
    with pytest.raises(RuntimeError):
        (x * x).backward()


def test_gradient_shape_must_match(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(gradient=lib.tensor([1.0, 0.5]))
    np.testing.assert_allclose(values(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError):
        (x * x).backward(gradient=lib.ones(3))
    with pytest.raises(RuntimeError):
        (x * x).backward(gradient=lib.ones(2, 1))


def test_backward_on_something_that_needs_no_grad_fails(lib):
    with pytest.raises(RuntimeError):
        lib.tensor([1.0, 2.0]).sum().backward()
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        y = (x * 2).sum()
    with pytest.raises(RuntimeError):
        y.backward()
    with pytest.raises(RuntimeError):
        (x * 2).sum().detach().backward()


def test_second_backward_fails_unless_retain_graph_which_defaults_to_create_graph(lib):
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()

    y = x * x
    y.backward(retain_graph=True)
    y.backward()  # the graph was kept for this one
    assert x.grad.item() == 4.0 + 4.0 + 4.0

    y = x * x
    y.backward(create_graph=True)  # retain_graph defaults to create_graph: kept
    y.backward()


def test_create_graph_gives_higher_order_gradients(lib):
    x = lib.tensor(3.0, requires_grad=True)
    (first,) = lib.autograd.grad(x**3, x, create_graph=True)
    assert first.item() == 27.0  # 3x²
    (second,) = lib.autograd.grad(first, x)
    assert second.item() == 18.0  # 6x

    (x**3).backward(create_graph=True)  # the same through .grad
    first = x.grad
    assert first.item() == 27.0 and first.requires_grad
    x.grad = None
    first.backward()
    assert x.grad.item() == 18.0


def test_autograd_grad_returns_a_tuple_leaves_grad_untouched_and_fails_on_unused_inputs(lib):
    x = lib.tensor(2.0, requires_grad=True)
    unused = lib.tensor(1.0, requires_grad=True)
    result = lib.autograd.grad(x * x, x)
    assert isinstance(result, tuple) and len(result) == 1 and result[0].item() == 4.0
    assert x.grad is None
    with pytest.raises(RuntimeError):
        lib.autograd.grad(x * x, [x, unused])
    gx, gu = lib.autograd.grad(x * x, [x, unused], allow_unused=True)
    assert gx.item() == 4.0 and gu is None
    assert x.grad is None and unused.grad is None


def test_only_floating_tensors_can_require_grad(lib):
    for data in ([1, 2], [True, False]):
        with pytest.raises(RuntimeError):
            lib.tensor(data, requires_grad=True)
        with pytest.raises(RuntimeError):
            lib.tensor(data).requires_grad_()
    assert lib.tensor([1, 2]).float().requires_grad_().requires_grad
    assert lib.tensor([1.0], dtype=lib.float64, requires_grad=True).requires_grad


def test_no_grad_stops_recording_and_enable_grad_inside_resumes(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        assert not lib.is_grad_enabled()
        y = x * 2
        with lib.enable_grad():
            assert lib.is_grad_enabled()
            z = x * 2
        w = x * 2
    assert lib.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None
    assert not w.requires_grad


def test_detach_shares_storage(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert d.is_leaf and not d.requires_grad and x.requires_grad
    d[0] = 10.0
    np.testing.assert_allclose(values(x), [10.0, 2.0])
    assert x._version == d._version == 1  # one storage, one version counter
    with lib.no_grad():
        x.mul_(2)
    np.testing.assert_allclose(d.numpy(), [20.0, 4.0])


def test_requires_grad_can_be_changed_only_on_leaves(lib):
    x = lib.tensor([1.0])
    x.requires_grad = True
    assert x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError):
        y.requires_grad = False
    with pytest.raises(RuntimeError):
        y.requires_grad_(False)
    x.requires_grad_(False)
    assert not x.requires_grad
    y.detach().requires_grad_(False)  # the fix: a detached copy is a leaf


def test_requires_grad_true_on_a_non_leaf_that_requires_grad_is_a_no_op(lib):
    x = lib.tensor([1.0], requires_grad=True)
    y = x * 2
    assert y.requires_grad_(True) is y  # nothing changes, so PyTorch allows it
    assert y.requires_grad and not y.is_leaf


def test_in_place_on_a_leaf_that_requires_grad_fails_outside_no_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    for modify in (
        lambda: x.add_(1),
        lambda: x.mul_(2),
        lambda: x.zero_(),
        lambda: x.__setitem__(0, 5.0),
    ):
        with pytest.raises(RuntimeError):
            modify()
    np.testing.assert_allclose(values(x), [1.0, 2.0])
    with lib.no_grad():
        x.sub_(0.5)  # the optimizer's update
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    np.testing.assert_allclose(values(x), [0.5, 1.5])


def test_modifying_a_saved_tensor_in_place_makes_backward_fail_naming_the_op_and_versions(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result, y
    loss = y.sum()
    y.mul_(2)
    with pytest.raises(RuntimeError) as error:
        loss.backward()
    message = str(error.value)
    assert "version 0" in message and "version 1" in message
    if lib is ag:  # PyTorch names the op that *made* y ("Exp"); we name the node that saved it
        assert "ExpBackward0" in message


def test_hooks_can_replace_a_gradient_and_be_removed(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 10)  # on a leaf
    (x * 2).sum().backward()
    np.testing.assert_allclose(values(x.grad), [20.0, 20.0])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(values(x.grad), [2.0, 2.0])

    x.grad = None
    y = x * 2
    handle = y.register_hook(lambda g: g + 1)  # on a non-leaf: changes what flows further back
    seen = []
    y.register_hook(
        lambda g: seen.append(values(g).copy())
    )  # a hook returning None changes nothing
    (y * 3).sum().backward(retain_graph=True)
    np.testing.assert_allclose(values(x.grad), [8.0, 8.0])  # (3 + 1) * 2
    np.testing.assert_allclose(seen[0], [4.0, 4.0])  # hooks run in the order they were added
    handle.remove()
    x.grad = None
    (y * 3).sum().backward()
    np.testing.assert_allclose(values(x.grad), [6.0, 6.0])


def test_custom_function_returning_the_wrong_number_or_shape_of_gradients_fails_clearly(lib):
    class TooFew(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad  # forward took two inputs

    class WrongShape(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return lib.ones(3)

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="TooFew"):
        TooFew.apply(a, b).sum().backward()
    with pytest.raises(RuntimeError, match="WrongShape"):
        WrongShape.apply(a).sum().backward()


def test_float32_plus_float64_gives_float64(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
    b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    c = a + b
    assert c.dtype == lib.float64 and (b + a).dtype == lib.float64
    (c * c).sum().backward()
    assert a.grad.dtype == lib.float32  # each gradient has its own tensor's dtype
    assert b.grad.dtype == lib.float64
    assert (lib.tensor([1, 2]) + a).dtype == lib.float32  # int + float32 stays float32


# ---- the seed example (issue's acceptance) -------------------------------------------------------


def test_seed_example_gives_a_grad_7_and_b_grad_15(lib):
    a = lib.tensor(2.0, requires_grad=True)
    b = lib.tensor(6.0, requires_grad=True)
    c = a + b
    d = b + 1
    e = c * d
    e.backward()
    assert a.grad.item() == 7.0  # de/da = d = b + 1
    assert b.grad.item() == 15.0  # de/db = d + c: b reaches e along two paths


def _seed_graph(a, b):
    return (a + b) * (b + 1)


class TutorialE(ag.autograd.Function):
    """e = (a + b)(b + 1) with the popular tutorial's gradients: it forgets the path through c."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return (a + b) * (b + 1)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * (b + 1), grad * 4  # 4 for b.grad: wrong, de/db is 15 at (2, 6)


def test_gradcheck_proves_the_tutorials_b_grad_of_4_wrong():
    a = ag.tensor(2.0, dtype=ag.float64, requires_grad=True)
    b = ag.tensor(6.0, dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradcheck(_seed_graph, (a, b))
    assert ag.autograd.gradcheck(TutorialE.apply, (a, b), raise_exception=False) is False
    with pytest.raises(ag.autograd.GradcheckError) as error:
        ag.autograd.gradcheck(TutorialE.apply, (a, b))
    report = str(error.value)
    assert "input 1" in report and "15" in report and "4" in report  # b: numerical 15, analytical 4


# ---- engine properties --------------------------------------------------------------------------


def test_backward_is_iterative_a_100000_op_chain_does_not_hit_the_recursion_limit():
    x = ag.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()  # a recursive engine would raise RecursionError here
    assert x.grad.item() == 1.0
    assert y.item() == 100_001.0
    del y  # and the deep graph can be dropped without recursion either


def _backward_order(lib):
    """Build a graph with branches of different lengths; record the order its nodes run in.

    A hook on a tensor runs when the node that made it runs (for a leaf: its AccumulateGrad).
    """
    order = []

    def tag(t, name):
        t.register_hook(lambda g: order.append(name))
        return t

    x = tag(lib.tensor([1.0, 2.0], requires_grad=True), "x")
    w = tag(lib.tensor([0.5, -1.0], requires_grad=True), "w")
    a = tag(x.exp(), "a")
    b = tag(x * w, "b")
    c = tag(a.sin(), "c")
    d = tag(b + a, "d")
    e = tag(c * 2, "e")
    f = tag(d.tanh(), "f")
    g = tag(b.cos(), "g")
    h = tag((e + f + g).sum(), "h")
    h.backward()
    return order


NEWEST_FIRST = ["h", "g", "f", "e", "d", "c", "b", "w", "a", "x"]


def test_nodes_run_once_all_gradients_arrived_newest_first_among_ready_nodes():
    # b is ready only after g and d ran (both use it), a only after c and d; leaves as soon as ready
    assert _backward_order(ag) == NEWEST_FIRST


def test_node_order_is_pytorchs(torch):
    assert _backward_order(torch) == _backward_order(ag) == NEWEST_FIRST


def test_gradients_accumulate_at_a_shared_node(lib):
    x = lib.tensor([0.5, 2.0], requires_grad=True)
    y = x * x
    arrivals = []
    y.register_hook(lambda g: arrivals.append(values(g).copy()))
    z = y + y * y + y.sin()  # y feeds three consumers
    z.sum().backward()
    xs = np.array([0.5, 2.0])
    dz_dy = 1 + 2 * xs**2 + np.cos(xs**2)
    assert len(arrivals) == 1  # y's node ran once, with the sum of all three contributions
    np.testing.assert_allclose(arrivals[0], dz_dy, rtol=1e-6)
    np.testing.assert_allclose(values(x.grad), dz_dy * 2 * xs, rtol=1e-6)


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((3, 1), (4,)), ((2, 3, 4), (3, 1)), ((), (2, 3)), ((1, 1), (2, 1, 5)), ((4,), (4,))],
)
def test_broadcasting_is_undone_grad_shapes_equal_input_shapes(shape_a, shape_b):
    rng = np.random.default_rng(0)
    a = ag.tensor(rng.standard_normal(shape_a), requires_grad=True)
    b = ag.tensor(rng.standard_normal(shape_b), requires_grad=True)
    (a * b + a - b).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    full = np.broadcast_shapes(shape_a, shape_b)
    ones = np.ones(full)
    expected_a = _sum_to(ones * (b.detach().numpy() + 1), shape_a)  # d/da of a*b + a: b + 1
    expected_b = _sum_to(ones * (a.detach().numpy() - 1), shape_b)  # d/db of a*b - b: a - 1
    np.testing.assert_allclose(a.grad.numpy(), expected_a, rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), expected_b, rtol=1e-5)


def _sum_to(array, shape):
    """numpy: sum a broadcast array back down to `shape` (leading dims, then dims of size 1)."""
    array = array.sum(axis=tuple(range(array.ndim - len(shape))))
    stretched = tuple(i for i, s in enumerate(shape) if s == 1 and array.shape[i] != 1)
    return array.sum(axis=stretched, keepdims=True).reshape(shape)


def test_broadcasting_is_undone_for_batched_matmul_and_expand():
    a = ag.ones(5, 2, 3, requires_grad=True)
    b = ag.ones(3, 4, requires_grad=True)  # broadcast over the batch of 5
    (a @ b).sum().backward()
    assert b.grad.shape == (3, 4)
    np.testing.assert_allclose(b.grad.numpy(), np.full((3, 4), 10.0))  # 5 batches × 2 rows
    c = ag.ones(3, 1, requires_grad=True)
    c.expand(2, 3, 4).sum().backward()
    assert c.grad.shape == (3, 1)
    np.testing.assert_allclose(c.grad.numpy(), np.full((3, 1), 8.0))


def test_saved_tensors_are_freed_after_backward(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    np.testing.assert_allclose(values(y.grad_fn._saved_self), [1.0, 2.0])  # readable until freed
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.grad_fn._saved_self


def test_saved_tensors_are_kept_with_retain_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(values(y.grad_fn._saved_result), np.exp([1.0, 2.0]), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(values(x.grad), 2 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_version_counter_catches_saved_tensors_modified_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    assert y._version == 0
    y.add_(1)  # modified *before* anything saved it: fine
    y.mul_(1)
    assert y._version == 2
    z = y.sin()  # SinBackward0 saves y at version 2
    y[0] = 0.0
    assert y._version == 3
    with pytest.raises(RuntimeError) as error:
        z.sum().backward()
    message = str(error.value)
    assert "version 2" in message and "version 3" in message
    if lib is ag:
        assert "SinBackward0" in message


# ---- anomaly mode -------------------------------------------------------------------------------


def test_without_anomaly_mode_nan_gradients_pass_silently(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(values(x.grad)[0])


def test_anomaly_mode_names_the_op_that_produced_nan_and_the_users_line():
    x = ag.tensor([0.0, 1.0], requires_grad=True)
    with ag.autograd.detect_anomaly():
        y = x.sqrt()  # the line anomaly mode must show
        loss = (y * 0).sum()
        with pytest.raises(RuntimeError) as error:
            loss.backward()
    message = str(error.value)
    assert "SqrtBackward0" in message
    assert "y = x.sqrt()  # the line anomaly mode must show" in message
    assert "test_semantics.py" in message


def test_anomaly_mode_catches_nan_from_division():
    a = ag.tensor(0.0, requires_grad=True)
    b = ag.tensor(0.0, requires_grad=True)
    ag.autograd.set_detect_anomaly(True)  # the function form
    q = a / b  # zero over zero
    with pytest.raises(RuntimeError) as error:
        q.backward()
    ag.autograd.set_detect_anomaly(False)
    assert "DivBackward0" in str(error.value) and "q = a / b  # zero over zero" in str(error.value)


def test_pytorch_anomaly_mode_also_fails_on_nan(torch):
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly():
        loss = (x.sqrt() * 0).sum()
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            loss.backward()


class Broken(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("a bug in my backward")


def test_anomaly_mode_notes_the_failing_custom_backward_and_the_users_line():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.autograd.detect_anomaly():
        y = Broken.apply(x)  # made here
        with pytest.raises(ValueError, match="a bug in my backward") as error:
            y.sum().backward()
    notes = "\n".join(getattr(error.value, "__notes__", []))
    assert "BrokenBackward" in notes
    assert "y = Broken.apply(x)  # made here" in notes


# ---- grad modes ----------------------------------------------------------------------------------


def test_no_grad_is_thread_local(lib):
    x = lib.tensor([1.0], requires_grad=True)
    inside, entered, done = {}, threading.Event(), threading.Event()

    def other_thread():
        with lib.no_grad():
            entered.set()
            done.wait(5)
            inside["other"] = (x * 2).requires_grad

    thread = threading.Thread(target=other_thread)
    thread.start()
    entered.wait(5)
    inside["main"] = (x * 2).requires_grad  # the other thread is inside no_grad right now
    done.set()
    thread.join(5)
    assert inside == {"main": True, "other": False}

    with lib.no_grad():  # and the other way round: a new thread records by default
        thread = threading.Thread(target=lambda: inside.update(new=(x * 2).requires_grad))
        thread.start()
        thread.join(5)
        assert not (x * 2).requires_grad
    assert inside["new"] is True


def test_grad_modes_are_context_managers_and_decorators(lib):
    x = lib.tensor([1.0], requires_grad=True)

    @lib.no_grad()
    def frozen(t):
        return t * 2

    @lib.enable_grad()
    def recorded(t):
        return t * 2

    @lib.set_grad_enabled(False)
    def switched_off(t):
        return t * 2

    assert lib.is_grad_enabled()  # decorating switched nothing
    assert not frozen(x).requires_grad
    assert not switched_off(x).requires_grad
    with lib.no_grad():
        assert recorded(x).requires_grad
        assert frozen.__name__ == "frozen"
    with lib.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with lib.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()
    lib.set_grad_enabled(False)  # as a plain call it switches at once
    assert not (x * 2).requires_grad
    lib.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_no_grad_and_enable_grad_work_as_bare_decorators(lib):
    x = lib.tensor([1.0], requires_grad=True)

    @lib.no_grad
    def frozen(t):
        return t * 2

    @lib.enable_grad
    def recorded(t):
        return t * 2

    assert not frozen(x).requires_grad
    with lib.no_grad():
        assert recorded(x).requires_grad


def test_observe_on_call_sees_each_recorded_op_with_its_arguments():
    """The tracer's hook: every recorded op arrives with its arguments, enough to replay it."""
    x = ag.tensor([1.0, -2.0, 3.0], requires_grad=True)
    calls, nodes = [], []
    with ag.autograd.observe(
        on_node=lambda node, outputs: nodes.append(node.name()),
        on_call=lambda node, outputs, args, kwargs: calls.append((node, outputs, args, kwargs)),
    ):
        y = (x * 2).sum(0)
    assert [node.name() for node, *_ in calls] == nodes == ["MulBackward0", "SumBackward1"]
    for node, outputs, args, kwargs in calls:
        replayed = node._fn.apply(*args, **kwargs)
        assert np.array_equal(replayed.detach().numpy(), outputs.detach().numpy())
    assert calls[-1][1] is y
    with ag.autograd.observe(on_backward=lambda *event: None):  # no node observers: nothing called
        assert ag.autograd.grad_mode._state.on_node is None


def test_custom_forward_is_never_recorded_even_without_inputs_that_require_grad(lib):
    """PyTorch runs a custom Function's forward under no_grad: a tensor it reads from outside
    (not an input) leaves no graph behind, whether or not an input requires grad."""
    outside = lib.tensor([2.0, 3.0], requires_grad=True)

    class TimesOutside(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * outside

        @staticmethod
        def backward(ctx, grad):
            return grad * outside

    y = TimesOutside.apply(lib.tensor([1.0, 1.0]))
    assert y.requires_grad is False and y.grad_fn is None
