"""Issue 14, in-place ops: what differential fuzzing found where `x.op_(...)` differed from
PyTorch 2.13 (which calls raise and with which class, node names, requires_grad)."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag


def raised_by(make):
    """The class of the exception that `make()` raises, or None."""
    try:
        make()
    except Exception as error:  # noqa: BLE001 - any class: it is what is compared
        return type(error)
    return None


def leaf_view(lib):
    """A view (reshape) that requires grad, of a leaf that does not: a view of a leaf."""
    return lib.tensor([1.0, -2.0, 3.0, 4.0]).reshape(2, 2).requires_grad_()


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.mul_(0.0),
        lambda v: v.add_(1.0),
        lambda v: v.atan_(),
        lambda v: v.clamp_(min=2),
        lambda v: v.cumsum_(0),
    ],
)
def test_a_view_that_requires_grad_of_a_leaf_cannot_change_in_place(torch, change):
    # the view is refused even though its base needs no gradient, and before the leaf check
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            change(leaf_view(lib).unsqueeze(0))
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            change(leaf_view(lib))


@pytest.mark.parametrize(
    "bounds",
    [
        {"min": "vector", "max": 0.5},
        {"min": 2, "max": "vector"},
        {"min": "grad scalar", "max": 2},
        {"min": -1.0, "max": True},
        {"min": "scalar", "max": 2},
        {"min": "scalar", "max": None},
    ],
)
@pytest.mark.parametrize("name", ["clamp", "clamp_", "clip_"])
def test_clamp_takes_two_tensor_bounds_or_two_number_bounds(torch, bounds, name):
    def run(lib):
        known = {
            "vector": lib.zeros(3),
            "scalar": lib.tensor(0.0),
            "grad scalar": lib.tensor(0.0, requires_grad=True),
        }
        kwargs = {key: known.get(bound, bound) for key, bound in bounds.items()}
        return getattr(lib.tensor([-2.0, 0.5, 3.0]), name)(**kwargs)

    assert raised_by(lambda: run(ag)) is raised_by(lambda: run(torch))
    if raised_by(lambda: run(torch)) is None:
        np.testing.assert_array_equal(values(run(ag)), values(run(torch)))


def test_the_argument_error_comes_before_the_leaf_check(torch):
    for lib in (ag, torch):
        x = lib.ones(2, 2, requires_grad=True)
        with pytest.raises(TypeError, match="received an invalid combination"):
            x.clip_(min=0.25, max=x)


def test_a_bound_that_requires_grad_records_the_in_place_clamp(torch):
    def run(lib):
        x = lib.tensor([-2.0, 1.0, 3.0, 0.5]).reshape(2, 2)  # a view of a leaf, no grad
        bound = lib.tensor([[0.5], [-2.0]], dtype=lib.float64).requires_grad_()
        x.clamp_(max=bound)
        return x

    ours, theirs = run(ag), run(torch)
    assert ours.requires_grad and theirs.requires_grad
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "AsStridedBackward0"
    np.testing.assert_array_equal(values(ours), values(theirs))


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, x: x.addcdiv_(x, lib.ones(1, 2, 1, 1)),
        lambda lib, x: x.pow_(lib.ones(3, 4)),
        lambda lib, x: x.true_divide_(lib.ones(2, 1, 4)),
        lambda lib, x: x.divide_(lib.ones(0, 4), rounding_mode=None),
    ],
)
def test_an_in_place_op_that_would_broadcast_self_to_a_larger_shape_is_a_runtime_error(
    torch, change
):
    for lib in (ag, torch):
        base = lib.ones(2, 4, requires_grad=True).clone()
        for view in (base[:1], base[:1].clone()):  # through a view and on its own
            with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
                change(lib, view)


@pytest.mark.parametrize("name", ["div", "divide", "div_", "divide_"])
@pytest.mark.parametrize("other", [2.0, "tensor"])
def test_div_with_rounding_mode_none_given_is_recorded_as_divbackward2(torch, name, other):
    def node(lib, **kwargs):
        x = lib.tensor([1.0, -3.0], requires_grad=True).clone()
        divisor = lib.tensor([2.0, 4.0]) if other == "tensor" else other
        return getattr(x, name)(divisor, **kwargs).grad_fn.name()

    assert node(ag, rounding_mode=None) == node(torch, rounding_mode=None) == "DivBackward2"
    assert node(ag) == node(torch) == "DivBackward0"

    def grad(lib):
        x = lib.tensor([1.0, -3.0], requires_grad=True)
        getattr(x.clone(), name)(lib.tensor([2.0, 4.0]), rounding_mode=None).sum().backward()
        return x.grad

    np.testing.assert_array_equal(values(grad(ag)), values(grad(torch)))


@pytest.mark.parametrize(
    "change",
    [lambda v: v.sqrt_(), lambda v: v.sub_(v), lambda v: v.mul_(2.0), lambda v: v.log10_()],
)
def test_an_empty_tensor_with_a_zero_stride_can_change_in_place(torch, change):
    # no element repeats when there are none: PyTorch's overlap check lets it pass
    for lib in (ag, torch):
        empty = lib.tensor([1.0]).clone().as_strided((0, 3), (2, 0))
        assert tuple(change(empty).shape) == (0, 3)
        assert tuple(change(lib.zeros(1, 1).repeat_interleave(0, dim=0)).shape) == (0, 1)


@pytest.mark.parametrize(
    "pieces, node",
    [
        (lambda x: x.unbind(0), "Unbind"),
        (lambda x: x.reshape(-1).unbind(0), "Unbind"),  # 0-d pieces are views too
        (lambda x: x.split(1), "Split"),
        (lambda x: x.split([1, 1]), "SplitWithSizes"),
        (lambda x: x.chunk(2), "Split"),
        (lambda x: [x.unbind(0)[1][:1]], r"\w+"),  # a view of such a piece keeps the rule
    ],
)
def test_a_view_returned_with_others_cannot_change_in_place_while_recording(torch, pieces, node):
    for lib in (ag, torch):
        x = lib.ones(2, 2, requires_grad=True).clone()
        with pytest.raises(
            RuntimeError, match=f"Output \\d of {node} is a view and is being modified inplace"
        ):
            pieces(x)[-1].mul_(2.0)
        with lib.no_grad():  # not recording: allowed
            pieces(x)[-1].mul_(2.0)
        with pytest.raises(RuntimeError, match="returns multiple views"):  # a leaf base too
            pieces(lib.ones(2, 2, requires_grad=True))[-1].mul_(2.0)


def test_backward_leaves_grad_alone_on_a_leaf_that_stopped_requiring_grad(torch):
    def run(lib):
        x = lib.tensor([-1.0, 1.0, 2.0], requires_grad=True)
        calls = []
        x.register_hook(lambda grad: calls.append("hook"))
        x.register_post_accumulate_grad_hook(lambda leaf: calls.append("post"))
        loss = (lib.minimum(x, x) * lib.arange(1, 4)).sum()
        x.requires_grad_(False)  # after the graph was recorded
        loss.backward()
        return x.grad, calls

    (ours, our_calls), (theirs, their_calls) = run(ag), run(torch)
    assert ours is None and theirs is None
    assert our_calls == their_calls == ["hook", "post"]


def test_copying_a_tensor_that_requires_grad_into_an_int_tensor_records_nothing(torch):
    def run(lib):
        return lib.tensor([5, 6]).copy_(lib.tensor(1.5, requires_grad=True))

    ours, theirs = run(ag), run(torch)
    assert not ours.requires_grad and not theirs.requires_grad
    assert ours.grad_fn is None and theirs.grad_fn is None
    np.testing.assert_array_equal(values(ours), values(theirs))
    assert str(ours.dtype) == str(theirs.dtype)


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_an_in_place_scan_keeps_its_dtype(torch, name):
    for lib in (ag, torch):
        x = lib.ones(2, 2, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="Bad in-place call"):
            getattr(x, name)(1, dtype=lib.float32)
        with pytest.raises(RuntimeError, match="Bad in-place call"):
            getattr(x, name)(1, dtype=lib.int64)
    same = getattr(ag.ones(2, 2, dtype=ag.float64), name)(1, dtype=ag.float64)
    theirs = getattr(torch.ones(2, 2, dtype=torch.float64), name)(1, dtype=torch.float64)
    np.testing.assert_array_equal(values(same), values(theirs))
