"""Issue 14's edges of shapes: errors PyTorch raises with another class than numpy would, empty
and 0-d tensors, the node names learners read, and when tensor hooks run for autograd.grad.
Each test compares with PyTorch (values, dtypes, error classes and key words)."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag


def same(torch, make):
    ours, theirs = make(ag), make(torch)
    np.testing.assert_array_equal(values(ours), values(theirs))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)


def both_raise(torch, error, words, make):
    """PyTorch and autograd_lab raise the same class of error; ours names `words`."""
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error, match=words):
        make(ag)


# ---- errors of another class ------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, a, b: lib.where(b > 0, a, a),
        lambda lib, a, b: lib.lerp(a, b, 0.5),
        lambda lib, a, b: lib.lerp(a, a, b),
        lambda lib, a, b: lib.addcmul(a, b, a),
        lambda lib, a, b: lib.addcdiv(a, b, a),
        lambda lib, a, b: a.clone().copy_(b),
        lambda lib, a, b: a.masked_fill(b > 0, 1.0),
        lambda lib, a, b: a.clone().masked_fill_(b > 0, 1.0),
        lambda lib, a, b: lib.isclose(a, b),
        lambda lib, a, b: lib.allclose(a, b),
        lambda lib, a, b: a.clone().copy_(b.reshape(3, 1)[:2].expand(2, 2)),
    ],
    ids=["where", "lerp", "lerp_weight", "addcmul", "addcdiv", "copy_", "masked_fill",
         "masked_fill_", "isclose", "allclose", "copy_more_dims"],
)  # fmt: skip
def test_shapes_that_do_not_broadcast_raise_runtime_error(torch, call):
    both_raise(
        torch, RuntimeError, "broadcast|shape", lambda lib: call(lib, lib.ones(2), lib.ones(3))
    )


def test_integer_powers_with_negative_tensor_exponents_round_toward_zero(torch):
    same(torch, lambda lib: 2 ** lib.tensor([-1, 2]))
    same(torch, lambda lib: 0 ** lib.tensor([-1, 2]))
    same(torch, lambda lib: (-1) ** lib.tensor([-1, -2, -3]))
    same(
        torch, lambda lib: lib.tensor([0, 1, -1, 2, -2, 3]) ** lib.tensor([-1, -1, -1, -1, -2, -3])
    )
    same(torch, lambda lib: lib.tensor([2, 1]) ** lib.tensor(-1))
    same(torch, lambda lib: lib.tensor([0, 1, -1], dtype=lib.int8) ** lib.tensor([-1]))
    same(torch, lambda lib: lib.tensor([True]) ** lib.tensor([-1]))


def test_an_integer_tensor_to_a_negative_python_int_power_raises(torch):
    for base in (lambda lib: lib.tensor([2, 1]), lambda lib: lib.tensor([True])):
        words = "Integers to negative integer powers are not allowed"
        both_raise(torch, RuntimeError, words, lambda lib: base(lib) ** -1)
        both_raise(torch, RuntimeError, words, lambda lib: base(lib).pow(-2))
    same(torch, lambda lib: lib.tensor([2]) ** -1.0)  # a float exponent is fine


@pytest.mark.parametrize("reduce", ["max", "min", "argmax", "argmin", "amax", "amin", "median"])
@pytest.mark.parametrize("shape, dim", [((0, 3), 0), ((3, 0), 1), ((3, 0), -1), ((0,), 0)])
def test_picking_reductions_over_an_empty_dim_raise_index_error(torch, reduce, shape, dim):
    words = f"{reduce}\\(\\): Expected reduction dim {dim % len(shape)} to have non-zero size"
    both_raise(torch, IndexError, words, lambda lib: getattr(lib.zeros(shape), reduce)(dim))
    both_raise(torch, IndexError, "kthvalue", lambda lib: lib.zeros(shape).kthvalue(1, dim))


@pytest.mark.parametrize("reduce", ["argmax", "argmin"])
def test_argmax_of_an_empty_tensor_without_a_dim_raises_index_error(torch, reduce):
    words = "Expected reduction dim to be specified for input.numel\\(\\) == 0"
    both_raise(torch, IndexError, words, lambda lib: getattr(lib.zeros(0, 3), reduce)())


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "logsumexp", "std"])
def test_reductions_with_an_identity_or_nan_accept_an_empty_dim(torch, reduce):
    same(torch, lambda lib: getattr(lib.zeros(0, 3), reduce)(0))
    same(torch, lambda lib: getattr(lib.zeros(3, 0), reduce)(0))


@pytest.mark.parametrize("reduce", ["max", "argmax", "cumsum"])
def test_a_0d_tensor_accepts_only_dims_0_and_minus_1(torch, reduce):
    same(torch, lambda lib: values_of(getattr(lib.tensor(5.0), reduce)(-1)))
    both_raise(torch, IndexError, "out of range", lambda lib: getattr(lib.tensor(5.0), reduce)(1))


def values_of(result):
    """The values of a (values, indices) result, or the result itself."""
    return result[0] if isinstance(result, tuple) else result
