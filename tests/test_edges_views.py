"""Views and in-place changes at the edges (issue 14): each test runs the same code in autograd_lab
and in PyTorch and compares values, gradients, node names and error classes."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag


def same(ours, theirs):
    """Equal values (nested tuples of tensors, names, numbers), dtypes and shapes."""
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    elif hasattr(ours, "dtype"):
        np.testing.assert_array_equal(values(ours), values(theirs))
        assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    else:
        assert ours == theirs


def both(torch, run):
    """run(lib) in both libraries, compared."""
    same(run(ag), run(torch))


def node(t):
    return type(t.grad_fn).__name__


@pytest.mark.parametrize(
    "overwrite",
    [
        lambda lib, y: y.fill_(3.0),  # FillBackward2
        lambda lib, y: y.fill_(lib.tensor(3.0, requires_grad=True)),  # FillBackward3
        lambda lib, y: y.zero_(),  # ZeroBackward0
        lambda lib, y: y.copy_(lib.tensor([float("inf"), 1.0])),  # CopyBackwards
    ],
)
def test_fill_zero_and_copy_overwrite_a_result_and_pass_it_zeros(torch, overwrite):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        overwrite(lib, y)
        y.backward(lib.full((2,), float("inf")))  # zeros even for an infinite gradient
        return y.detach(), node(y), x.grad

    both(torch, run)

    def fill_value_grad(lib):
        value = lib.tensor(3.0, requires_grad=True)
        y = lib.ones(3) * 1
        y.fill_(value)
        y.sum().backward()
        return value.grad

    both(torch, fill_value_grad)
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
            lib.ones(2).fill_(lib.tensor([1.0]))
