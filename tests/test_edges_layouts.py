"""Strides, memory layouts and the node names of reshapes and matrix products, as the
differential fuzzer found them differing from PyTorch (issue 14): each compares with PyTorch."""

import pytest
from conftest import both

import autograd_lab as ag


def node_name(tensor):
    return type(tensor.grad_fn).__name__


@pytest.mark.parametrize(
    "left, right, left_requires_grad",
    [
        ((1, 1, 1), (2, 1, 1), True),  # the fuzzer's: the batch of one is dropped, then transposed
        ((1, 2, 3), (2, 3, 2), True),
        ((1, 2, 3), (2, 3, 2), False),  # only a batch of one that requires grad is dropped
        ((2, 2, 3), (1, 3, 2), False),
        ((1, 2, 3), (1, 3, 2), True),  # both batches of one: a batched product
        ((1, 2, 3), (2, 1, 3, 2), True),  # a 4-D partner: a batched product
    ],
)
def test_matmul_of_a_batch_of_one_records_pytorchs_last_node(
    torch, left, right, left_requires_grad
):
    def product(lib):
        a = lib.ones(left, dtype=lib.float64).requires_grad_(left_requires_grad)
        b = lib.ones(right, dtype=lib.float64).requires_grad_(not left_requires_grad)
        return a @ b

    ours, theirs = product(ag), product(torch)
    assert node_name(ours) == node_name(theirs)
    assert ours.stride() == theirs.stride()
    both(torch, product)
