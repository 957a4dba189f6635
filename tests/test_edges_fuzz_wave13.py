"""Fuzz wave 13 (issue 14): the kinds the wave-13 run found, each against PyTorch 2.13."""

import warnings

import numpy as np
import pytest
from fuzzing import check, generator

import autograd_lab as ag

SHAPES = [(1,), (2,), (1, 1), (2, 1), (1, 2), (2, 2), (1, 1, 1), (2, 1, 1), (1, 2, 1)]
VALUES = {
    "x[0]": lambda x: x[0],
    "x[-1]": lambda x: x[-1],
    "x[None]": lambda x: x[None],
    "x[:1]": lambda x: x[:1],
    "x[1:]": lambda x: x[1:],
    "one element": lambda x: x.reshape(-1)[0],
    "flat row": lambda x: x.reshape(-1)[None],
}


def _assign_all(lib, shape, value_of):
    """x[...] = value_of(x) on x = 1, 2, ... of `shape`: x's numbers after, or the error class."""
    x = lib.arange(1.0, 1.0 + lib.zeros(shape).numel()).reshape(shape)
    try:
        x[...] = value_of(x)
    except Exception as error:  # the class is what we compare with PyTorch's
        return type(error).__name__
    return x.reshape(-1).tolist()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("value", VALUES)
def test_regression_assigning_all_of_x_a_part_of_itself_refuses_as_pytorch(torch, shape, value):
    # fuzz seed 2000690 (#1, 5 programs): x[...] = x[0] on a (1, 1) x ran where PyTorch refuses:
    # its setitem drops all of the value's leading size-1 dims (x[0] becomes 0-d) and expands
    # that to (1, 1) with strides (0, 0): the same memory place as x, in another layout, which
    # copy_ refuses. On a (2, 1) x, x[...] = x[1] we refused where PyTorch copies: row 1 copies
    # itself, so row 0 reads the same number whatever the order.
    ours = _assign_all(ag, shape, VALUES[value])
    theirs = _assign_all(torch, shape, VALUES[value])
    if theirs == "RuntimeError" or ours != "RuntimeError":
        assert ours == theirs
    else:  # where PyTorch's answer depends on the order it writes in (README's Simplifications)
        x = ag.arange(1.0, 1.0 + ag.zeros(shape).numel()).reshape(shape)
        with pytest.raises(RuntimeError, match="depends on that order"):
            x[...] = VALUES[value](x)


def test_assigning_x_its_own_second_row_copies_it(torch):
    x = ag.tensor([[1.0], [2.0]])
    x[...] = x[1]
    assert x.tolist() == [[2.0], [2.0]]


def _stale_piece(lib):
    """A piece of unbind whose base was changed in place since: its history cannot be used."""
    base = lib.zeros(2).requires_grad_() * 1
    piece = base.unbind()[0]
    base.mul_(2)
    return piece


@pytest.mark.parametrize("into", ["int64", "float32"])
@pytest.mark.parametrize("shape", [(0,), (2,), ()], ids=str)
@pytest.mark.parametrize("how", ["copy_", "fill_", "add_", "x[()] = v", "x[...] = v"])
def test_regression_copying_a_stale_piece_into_an_integer_tensor_runs(torch, into, shape, how):
    # fuzz seed 2052637 (#10): `indices[()] = piece` into an empty int64 tensor raised our
    # "Output 0 of Unbind is a view ..." where PyTorch runs: its copy_ into a tensor that records
    # nothing (an integer one) never asks for the source's history; fill_ and add_ still do
    def outcome(lib):
        x, value = lib.zeros(shape, dtype=getattr(lib, into)), _stale_piece(lib)
        try:
            if how.startswith("x["):
                x[() if "()" in how else ...] = value
            else:
                getattr(x, how)(value)
        except RuntimeError as error:
            return "refused" if "modified inplace" in str(error) else str(error)
        return x.tolist(), x.grad_fn is None

    assert outcome(ag) == outcome(torch)


@pytest.mark.parametrize(
    "index",
    [slice(None), 0, (0,), (None, slice(None)), (..., 0), [0], (0, 0)],
    ids=["[:]", "[0]", "[(0,)]", "[None, :]", "[..., 0]", "[[0]]", "[0, 0]"],
)
@pytest.mark.parametrize("write", [False, True])
def test_indexing_a_0d_tensor_says_what_pytorch_says(torch, index, write):
    # numpy's "too many indices for array: array is 0-dimensional, but 1 were indexed" showed
    # through, and (..., :) gave "list index out of range"
    def message(lib):
        x = lib.tensor(1.0)
        with pytest.raises(IndexError) as error:
            if write:
                x[index] = 2.0
            else:
                x[index]
        return str(error.value)

    ours, theirs = message(ag), message(torch)
    assert ours.startswith(theirs.split(". Use")[0].rstrip("."))


def test_too_many_indices_names_the_count():
    with pytest.raises(IndexError, match="tensor of dimension 1: the index names 2 dims"):
        ag.zeros(3)[0, 0]


BIG = 3.4028234663852886e38  # float32's largest number


@pytest.mark.parametrize(
    "values", [[BIG, 0.0, -2.0], [BIG, -BIG, 0.0], [-BIG, 0.0, 1.0], [BIG / 2, -BIG / 2, 0.0]]
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bins", [1, 2, 7])
@pytest.mark.parametrize("bounds", [(0, 0), (-BIG, BIG), (-2, BIG)], ids=str)
def test_regression_histc_over_a_range_near_the_float_limit_counts_as_pytorch(
    torch, values, dtype, bins, bounds
):
    # fuzz seed 2061059 (#8): histc([3.4e38, 0, -2], bins=2) leaked numpy's ValueError ("'list'
    # argument must have no negative elements"): (x - min) * bins overflowed to inf, which
    # became a negative bin. PyTorch counts such a value in bin 0, and counts nothing where the
    # bins' width itself overflows.
    def counts(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        return lib.histc(x, bins=bins, min=bounds[0], max=bounds[1]).tolist()

    assert counts(ag) == counts(torch)


def test_a_later_refusal_after_a_partly_written_division_is_its_consequence(torch):
    # fuzz seed 2153942: x.fmod_(x) on int64 with a 0 in x: PyTorch writes the elements before
    # the 0, then raises ZeroDivisionError; ours writes nothing (README's Simplifications). So
    # nonzero() later finds another number of elements, and broadcast_to((1, 37)) runs in
    # PyTorch only: a consequence, not a finding
    result = check(generator.generate(2153942), ag, torch)
    assert not result.divergences
    assert any(d.what == "raises" for d in result.consequences)


@pytest.mark.parametrize("big", [BIG, 1e20, 1e19, 1e18])
@pytest.mark.parametrize("create_graph", [False, True])
def test_regression_batch_norm_gradient_of_values_near_the_float_limit(torch, big, create_graph):
    # fuzz seed 2023707 (wave 13 #7): batch_norm over a channel [0, 3.4e38, -2.5]: PyTorch's
    # gradient is nan there ((x - mean)·grad overflows in its kernel's sum), ours was 0 (we
    # multiplied by x_hat, which 1/sqrt(inf) makes 0); now in PyTorch's order. And no numpy
    # RuntimeWarning reaches the learner: PyTorch gives inf and nan silently.
    def gradient(lib):
        x = lib.tensor([[0.0, 0.0], [0.0, big], [0.0, -2.5]]).requires_grad_()
        y = lib.nn.functional.batch_norm(
            x, lib.tensor([0.15, -1.5]), lib.tensor([1.17, 1.09]), training=True
        )
        loss = (y * lib.arange(1, y.numel() + 1).reshape(y.shape)).sum()
        (grad,) = lib.autograd.grad(loss, [x], create_graph=create_graph)
        return grad.detach().numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = gradient(ag)
    np.testing.assert_allclose(ours, gradient(torch), rtol=1e-5, atol=1e-30)
