"""Edge cases issue 14's differential fuzzing found, fixed one by one: each compares with PyTorch
(values, dtypes, error classes and key words)."""

import numpy as np
import pytest
from conftest import both, values

import autograd_lab as ag


@pytest.mark.parametrize("start, length", [(-1, 1), (-3, 2), (0, 0), (2, 1)])
def test_narrow_counts_a_negative_start_from_the_end(torch, start, length):
    both(torch, lambda lib: lib.arange(3.0).narrow(0, start, length))
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        ag.arange(3.0).narrow(0, 2, 2)


@pytest.mark.parametrize("reduce", ["sum", "mean", "var", "std"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_an_empty_dim_tuple_reduces_every_dim(torch, reduce, keepdim):
    both(torch, lambda lib: getattr(lib.arange(6.0).reshape(2, 3), reduce)(dim=(), keepdim=keepdim))

    def grad(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        getattr(x, reduce)(dim=()).backward()
        return x.grad

    if reduce in ("sum", "mean"):
        np.testing.assert_allclose(values(grad(ag)), values(grad(torch)), rtol=1e-6)
    else:  # PyTorch 2.13's var/std backward for dim=() gives inf; ours is the true gradient
        x = ag.arange(6.0, dtype=ag.float64).reshape(2, 3).requires_grad_()
        assert ag.autograd.gradcheck(lambda t: getattr(t, reduce)(dim=()), (x,))


def test_clamp_of_an_int_tensor_to_float_bounds_is_float(torch):
    both(torch, lambda lib: lib.tensor([0, 3]).clamp(-0.5, 1.5))
    both(torch, lambda lib: lib.tensor([0, 3]).clamp(1, 2))  # int bounds keep int64


def test_cat_promotes_as_pytorch(torch):
    both(torch, lambda lib: lib.cat([lib.tensor([1]), lib.tensor([2.0])]))
    both(torch, lambda lib: lib.cat([lib.tensor([True]), lib.tensor([2])]))
    both(torch, lambda lib: lib.cat([lib.tensor([1.0]), lib.tensor([2.0], dtype=lib.float64)]))


def test_bool_negation_and_subtraction_are_refused_with_pytorchs_words(torch):
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
            -lib.tensor([True])
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
            lib.tensor([True]) - lib.tensor([False])
        with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices"):
            lib.ones(3).mT


def test_indexing_with_an_empty_list_picks_nothing(torch):
    both(torch, lambda lib: lib.arange(3.0)[[]])
    both(torch, lambda lib: lib.arange(6.0).reshape(2, 3)[[]])

    def assign(lib):
        y = lib.zeros(3)
        y[[]] = 1.0
        return y

    both(torch, assign)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.zeros(0).softmax(0),
        lambda lib: lib.zeros(0, 3).log_softmax(1),
        lambda lib: lib.zeros(2, 0).softmax(1),
        lambda lib: lib.zeros(0).logsumexp(0),
        lambda lib: lib.zeros(2, 0).logsumexp(1),
    ],
)
def test_softmax_and_logsumexp_of_nothing(torch, make):
    both(torch, make)


def test_narrow_always_records_a_slice(torch):
    for lib in (ag, torch):  # a whole-dim narrow too (indexing would record no slice there)
        x = lib.zeros(1, 1, requires_grad=True)
        assert type(lib.narrow(x, 1, -1, 1).grad_fn).__name__ == "SliceBackward0"


def test_repeat_interleave_ends_in_a_view_of_a_copy(torch):
    for lib in (ag, torch):
        x = lib.zeros(1, 1, requires_grad=True)
        assert type(x.repeat_interleave(2, dim=1).grad_fn).__name__ == "ViewBackward0"
    both(torch, lambda lib: lib.tensor([[1, 2], [3, 4]]).repeat_interleave(2, dim=1))


def test_in_place_power_keeps_the_tensors_shape(torch):
    for lib in (ag, torch):  # x **= y is x.pow_(y), not x = x ** y
        x = lib.tensor(2.0)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            x **= lib.tensor([True])
        y = lib.tensor([2.0, 3.0])
        alias = y
        y **= 2
        assert alias is y and y.tolist() == [4.0, 9.0]


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e30, [1.0, float("-inf")]])
def test_floats_that_do_not_fit_an_integer_tensor_are_refused(torch, value):
    for lib in (ag, torch):
        with pytest.raises(
            RuntimeError, match="cannot be converted to type int64 without overflow"
        ):
            lib.tensor(value, dtype=lib.int64)
    both(torch, lambda lib: lib.tensor([2.5, -1.5], dtype=lib.int64))


def test_a_set_value_may_carry_extra_leading_ones(torch):
    def write(lib):
        x = lib.zeros(2, 3)
        x[0] = lib.ones(1, 1, 3) * 2
        scalar = lib.tensor(0.0)
        scalar[()] = lib.tensor([[3.0]])
        return x, scalar

    for ours, theirs in zip(write(ag), write(torch)):
        np.testing.assert_array_equal(values(ours), values(theirs))

    def gradient(lib):
        v = lib.ones(1, 1, requires_grad=True)
        b = lib.zeros(3, requires_grad=True) * 1
        b[1] = v * 5
        b.sum().backward()
        return v.grad

    np.testing.assert_array_equal(values(gradient(ag)), values(gradient(torch)))
    for lib in (ag, torch):  # a value that is really bigger is still refused
        with pytest.raises(RuntimeError):
            lib.zeros(2, 3)[0] = lib.ones(2, 3)
