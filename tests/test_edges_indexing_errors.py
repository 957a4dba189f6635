"""Indexing, scatter, shape and creation calls where issue 14's fuzzer found autograd_lab raising
where PyTorch does not (or the other way round, or with another exception class): each test
compares with PyTorch 2.13 (values, dtypes, shapes; errors by class and key words)."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag


def same(torch, make):
    ours, theirs = make(ag), make(torch)
    np.testing.assert_array_equal(values(ours), values(theirs))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)


def raises_alike(torch, make, error, words):
    """Both libraries raise `error` (the same class); ours says `words`."""
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error, match=words):
        make(ag)


@pytest.mark.parametrize("pieces", ["chunk", "split", "unbind"])
def test_a_piece_of_a_multi_view_op_cannot_be_used_after_its_base_changed_in_place(torch, pieces):
    def use_after_change(lib):
        y = lib.tensor([1.0, 2.0]).requires_grad_() * 1
        piece = {"chunk": y.chunk(2), "split": y.split(1), "unbind": y.unbind()}[pieces][0]
        y.mul_(2)
        assert piece.requires_grad  # asking is allowed
        with lib.no_grad():
            assert piece.item() == 2.0  # and so is using it without recording
        return piece + 1

    raises_alike(torch, use_after_change, RuntimeError, "base or another view of its base")
