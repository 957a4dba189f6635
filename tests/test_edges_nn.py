"""Edge cases issue 14's differential fuzzing found in elementwise ops, losses and
nn.functional, each compared with PyTorch (values, dtypes, node names, error classes)."""

import numpy as np
import pytest
from conftest import both, values

import autograd_lab as ag


def same_error(torch, make, error, words):
    for lib in (ag, torch):
        with pytest.raises(error, match=words):
            make(lib)


@pytest.mark.parametrize("convert", [int, float])
def test_int_and_float_of_a_tensor_of_several_elements_raise_value_error(torch, convert):
    same_error(torch, lambda lib: convert(lib.tensor([1.0, 2.0])), ValueError, "one element")
    assert convert(ag.tensor([[3.0]])) == convert(torch.tensor([[3.0]]))


def tensors(lib, first, second):
    return lib.tensor([0.5, 2.0], dtype=getattr(lib, first)), lib.tensor(
        [1.0, 0.0], dtype=getattr(lib, second)
    )


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("first, second", [("int64", "int64"), ("bool", "bool")])
def test_regression_losses_of_integer_or_bool_tensors_are_not_implemented(
    torch, loss, first, second
):
    def make(lib):
        return getattr(lib.nn.functional, loss)(*tensors(lib, first, second))

    same_error(torch, make, NotImplementedError, "not implemented for")


@pytest.mark.parametrize("loss", ["mse_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize(
    "first, second", [("float32", "float64"), ("float64", "float32"), ("float32", "int64")]
)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_regression_losses_take_pytorchs_result_dtype(torch, loss, first, second, reduction):
    """mse_loss and smooth_l1_loss promote; huber_loss keeps the input's dtype."""

    def make(lib):
        input, target = tensors(lib, first, second)
        return getattr(lib.nn.functional, loss)(input, target, reduction=reduction)

    both(torch, make)


def test_huber_loss_of_an_integer_input_cannot_hold_a_float_result(torch):
    def make(lib):
        return lib.nn.functional.huber_loss(*tensors(lib, "int64", "float32"))

    same_error(torch, make, RuntimeError, "can't be cast to the desired output type")


def test_bce_with_logits_refuses_integer_scores_and_gives_the_targets_dtype(torch):
    def refused(lib):
        return lib.nn.functional.binary_cross_entropy_with_logits(*tensors(lib, "int64", "float32"))

    same_error(torch, refused, NotImplementedError, "log_sigmoid")
    for first, second in [("float32", "float64"), ("float64", "float32")]:

        def make(lib, first=first, second=second):
            input, target = tensors(lib, first, second)
            return lib.nn.functional.binary_cross_entropy_with_logits(
                input, target, reduction="none"
            )

        ours, theirs = make(ag), make(torch)
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6)


@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
@pytest.mark.parametrize("weight", [False, True])
def test_nll_loss_over_no_classes_with_every_target_ignored(torch, reduction, weight):
    for shape, target in [((0,), 0), ((2, 0), [0, 0])]:

        def make(lib, shape=shape, target=target):
            x = lib.zeros(shape, requires_grad=True)
            loss = lib.nn.functional.nll_loss(
                x,
                lib.tensor(target),
                weight=lib.zeros(0) if weight else None,
                ignore_index=0,
                reduction=reduction,
            )
            loss.sum().backward()
            assert type(loss.grad_fn).__name__ == "NllLossBackward0"
            assert tuple(x.grad.shape) == shape
            return loss

        both(torch, make)


@pytest.mark.parametrize("shape", [(0, 3, 2), (0, 0, 1)])
def test_cross_entropy_mean_over_no_samples_is_nan_recorded_as_a_negation(torch, shape):
    def make(lib):
        x = lib.zeros(shape, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.zeros(shape))
        loss.backward()
        assert type(loss.grad_fn).__name__ == "NegBackward0"
        return loss

    both(torch, make)


@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_batch_norm_of_an_integer_or_bool_input_is_not_implemented(torch, dtype):
    def make(lib):
        x = lib.zeros(2, 2, dtype=getattr(lib, dtype))
        return lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2), training=True)

    same_error(torch, make, NotImplementedError, "batch_norm")


@pytest.mark.parametrize("name", ["clamp", "clip", "clamp_", "clip_"])
def test_clamp_takes_two_numbers_or_two_tensors_not_one_of_each(torch, name):
    def number_and_tensor(lib):
        x = lib.tensor([0.0, 2.0])
        return getattr(x, name)(min=0.25, max=x)

    def tensor_and_number(lib):
        x = lib.tensor([0.0, 2.0])
        return getattr(x, name)(min=x, max=0.25)

    same_error(torch, number_and_tensor, TypeError, "invalid combination of arguments")
    same_error(torch, tensor_and_number, TypeError, "invalid combination of arguments")


@pytest.mark.parametrize("name", ["clamp", "clamp_"])
def test_clamp_takes_a_single_value_tensor_without_grad_as_a_number(torch, name):
    def make(lib):
        x = lib.tensor([-2.0, 0.5, 2.0])
        out = getattr(x, name)(min=lib.tensor(-1.0, dtype=lib.float64), max=1)
        return out

    both(torch, make)
    same_error(
        torch,
        lambda lib: lib.tensor([-2.0, 0.5]).clamp(min=lib.tensor(-1.0, requires_grad=True), max=1),
        TypeError,
        "invalid combination of arguments",
    )


def test_clamp_in_place_to_bounds_that_require_grad_requires_grad(torch):
    def make(lib):
        x = lib.zeros(1, 3)
        bound = lib.tensor([[-2.1, 1.72, 2.0]], requires_grad=True)
        out = x.clamp_(min=bound)
        assert out.requires_grad
        return out.detach()

    both(torch, make)


def node_name(tensor):
    return type(tensor.grad_fn).__name__


@pytest.mark.parametrize(
    "divide",
    [
        lambda x, y: x.div(y, rounding_mode=None),
        lambda x, y: x.div(2.0, rounding_mode=None),
        lambda x, y: x.divide(y, rounding_mode=None),
        lambda x, y: x.clone().div_(-2.5, rounding_mode=None),
        lambda x, y: x.div(y),
        lambda x, y: x / 2.0,
    ],
)
def test_div_with_rounding_mode_none_given_is_recorded_as_its_own_overload(torch, divide):
    def make(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        out = divide(x, y)
        out.sum().backward()
        return out, x.grad

    (ours, our_grad), (theirs, their_grad) = make(ag), make(torch)
    assert node_name(ours) == node_name(theirs)
    np.testing.assert_array_equal(values(ours), values(theirs))
    np.testing.assert_array_equal(values(our_grad), values(their_grad))


def test_round_with_decimals_given_is_recorded_as_its_own_overload(torch):
    for decimals in ({}, {"decimals": 0}, {"decimals": 1}):
        ours = ag.tensor([0.25, 1.5], requires_grad=True).round(**decimals)
        theirs = torch.tensor([0.25, 1.5], requires_grad=True).round(**decimals)
        assert node_name(ours) == node_name(theirs)
        np.testing.assert_array_equal(values(ours), values(theirs))
    same_error(
        torch,
        lambda lib: lib.tensor([1, 2]).round(decimals=0),
        NotImplementedError,
        "not implemented for",
    )


@pytest.mark.parametrize("question", ["isinf", "isposinf", "isneginf"])
def test_infinity_questions_about_bool_and_integer_tensors_answer_false(torch, question):
    both(torch, lambda lib: getattr(lib.tensor([True, False]), question)())
    both(torch, lambda lib: getattr(lib.tensor(False), question)())
    both(torch, lambda lib: getattr(lib.tensor([1, -2]), question)())


def test_integer_division_of_an_empty_tensor_by_zero_divides_nothing(torch):
    empty, zero = (lambda lib: lib.zeros(0, dtype=lib.int64)), (lambda lib: lib.tensor(0))
    both(torch, lambda lib: empty(lib) // zero(lib))
    both(torch, lambda lib: empty(lib) % zero(lib))
    both(torch, lambda lib: empty(lib).div(0, rounding_mode="trunc"))
    same_error(torch, lambda lib: lib.tensor([1]) // 0, RuntimeError, "ZeroDivisionError")


def test_a_batched_product_of_a_bool_tensor_is_not_implemented_before_dtypes_are_compared(
    torch,
):
    def bool_first(lib):
        return lib.tensor([[[True]]]) @ lib.tensor([[[0.21]]], dtype=lib.float64)

    def float_first(lib):
        return lib.tensor([[[0.21]]]) @ lib.tensor([[[True]]])

    same_error(torch, bool_first, NotImplementedError, "bmm")
    same_error(torch, float_first, RuntimeError, "(?i)bool")
    same_error(torch, lambda lib: lib.tensor([[True]]) @ lib.tensor([[1.0]]), RuntimeError, "dtype")


def test_stack_promotes_as_pytorch(torch):
    both(torch, lambda lib: lib.stack([lib.tensor([0]), lib.tensor([2.47])]))
    both(torch, lambda lib: lib.stack([lib.tensor(1.0), lib.tensor(2.0, dtype=lib.float64)]))
    both(torch, lambda lib: lib.stack([lib.tensor(True), lib.tensor(2, dtype=lib.uint8)]))


@pytest.mark.parametrize(
    "count",
    [
        lambda lib: lib.arange(-2, 2, 3, dtype=lib.bool),
        lambda lib: lib.arange(0, dtype=lib.bool),
        lambda lib: lib.linspace(0, 2, steps=3, dtype=lib.bool),
        lambda lib: lib.logspace(0, 1, 5, dtype=lib.bool),
    ],
)
def test_counting_ops_have_no_bool_kernel(torch, count):
    same_error(torch, count, NotImplementedError, "not implemented for 'Bool'")


def test_linspace_and_logspace_of_at_most_one_bool_step_count_nothing(torch):
    for steps in (0, 1):
        both(torch, lambda lib, steps=steps: lib.linspace(0, 2, steps, dtype=lib.bool))
        both(torch, lambda lib, steps=steps: lib.logspace(0, 2, steps, dtype=lib.bool))


@pytest.mark.parametrize("weight", [0.3, 0.7, 1.0])
def test_lerp_of_infinite_ends_spreads_nan_and_inf_as_pytorch(torch, weight):
    inf = float("inf")

    def ends(lib):
        return lib.tensor([inf, -inf, 1.0, 2.0, inf]), lib.tensor([1.0, 2.0, inf, -inf, inf])

    def with_number(lib):
        start, end = ends(lib)
        return start.lerp(end, weight)

    def with_tensor(lib):
        start, end = ends(lib)
        return start.lerp(end, lib.full((5,), weight))

    both(torch, with_number)
    both(torch, with_tensor)


def test_remainder_keeps_the_sign_of_a_zero_as_pytorch(torch):
    """-1.0 % 0.25 is -0.0 in PyTorch: 1 / it is -inf (the fuzzer met it as x ** -1)."""
    inf = float("inf")

    def make(lib):
        x = lib.tensor([-1.0, 1.0, -0.5, 2.0, inf, -3.7, 3.7])
        return x % 0.25, x % lib.full((7,), -0.25), 1 / (x % 0.25), x % inf

    for ours, theirs in zip(make(ag), make(torch)):
        np.testing.assert_array_equal(values(ours), values(theirs))
        np.testing.assert_array_equal(np.signbit(values(ours)), np.signbit(values(theirs)))
