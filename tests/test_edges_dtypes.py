"""Dtype edges issue 14's differential fuzzing found: result dtypes, and calls PyTorch refuses that
we accepted. Each compares with PyTorch 2.13 (values, dtypes, error classes and key words)."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag


def same(torch, make):
    """make(lib) gives the same values, dtype and shape in both libraries."""
    ours, theirs = make(ag), make(torch)
    np.testing.assert_array_equal(values(ours), values(theirs))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)


def both_raise(torch, make, error, words):
    """make(lib) raises `error` in both libraries, and ours says `words`."""
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error, match=words):
        make(ag)


BOOLS = lambda lib: lib.tensor([True, False])  # noqa: E731
INTS = lambda lib: lib.tensor([1, 2])  # noqa: E731
INT8S = lambda lib: lib.tensor([1, 2], dtype=lib.int8)  # noqa: E731
FLOATS = lambda lib: lib.tensor([1.5, -2.0])  # noqa: E731


@pytest.mark.parametrize("alpha", [2, 0, -1])
@pytest.mark.parametrize(
    "a, b",
    [(BOOLS, BOOLS), (BOOLS, lambda lib: True), (INT8S, BOOLS), (INTS, INT8S), (FLOATS, INTS)],
)
def test_add_computes_alpha_times_other_in_the_result_dtype(torch, a, b, alpha):
    same(torch, lambda lib: lib.add(a(lib), b(lib), alpha=alpha))
    same(torch, lambda lib: a(lib).clone().add_(b(lib), alpha=alpha))
    same(torch, lambda lib: lib.add(2, a(lib), alpha=alpha))  # alpha scales the second argument


@pytest.mark.parametrize(
    "a, b, alpha, words",
    [
        (BOOLS, BOOLS, 2.5, "alpha must not be a floating point number"),
        (INTS, INT8S, 0.5, "alpha must not be a floating point number"),
        (INTS, 3, True, "Boolean alpha only supported for Boolean results"),
        (FLOATS, INTS, False, "Boolean alpha only supported for Boolean results"),
        (INT8S, INT8S, 1000, "without overflow"),
    ],
)
def test_add_and_sub_refuse_an_alpha_the_result_dtype_cannot_hold(torch, a, b, alpha, words):
    other = b if isinstance(b, int) else None
    for op in ("add", "sub"):
        if op == "sub" and a is BOOLS:
            continue  # refused for its bools first (the next test)
        both_raise(
            torch,
            lambda lib: getattr(lib, op)(a(lib), other if other else b(lib), alpha=alpha),
            RuntimeError,
            words,
        )


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda lib: BOOLS(lib) - BOOLS(lib), "with two bool tensors"),
        (lambda lib: BOOLS(lib) - True, "with two bool tensors"),
        (lambda lib: lib.sub(BOOLS(lib), BOOLS(lib), alpha=2), "with two bool tensors"),
        (lambda lib: BOOLS(lib) - INTS(lib), "with a bool tensor"),
        (lambda lib: INTS(lib) - BOOLS(lib), "with a bool tensor"),
        (lambda lib: FLOATS(lib) - True, "with a bool tensor"),
        (lambda lib: 1 - BOOLS(lib), "with a bool tensor"),
        (lambda lib: FLOATS(lib) - lib.tensor(True), "with a bool tensor"),
        (lambda lib: FLOATS(lib).sub_(BOOLS(lib)), "with a bool tensor"),
    ],
)
def test_subtraction_refuses_any_bool_operand(torch, make, words):
    both_raise(torch, make, RuntimeError, f"Subtraction, the `-` operator, {words}")
