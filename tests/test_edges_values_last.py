"""Forward values and dtypes at the edges (issue 14, wave 7): the sign of a normalized zero,
clamp's promotion over all its tensors, and what the fuzzer reads after an index_add_ that
PyTorch refused half-way. Each compares with PyTorch 2.13."""

import numpy as np
import pytest
from conftest import both, values
from fuzzing import check
from fuzzing.program import Leaf, Program, Step

import autograd_lab as ag


def _signs(t):
    """1 / t as numpy: inf where t is 0.0, -inf where it is -0.0 (the sign of a zero shows)."""
    with np.errstate(divide="ignore"):
        return 1 / values(t).astype(np.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row", [[-0.0], [-0.0, -0.0], [-0.0, 0.0], [0.0, -0.0]])
@pytest.mark.parametrize("parameters", ["none", "weight", "weight and bias"])
def test_a_missing_bias_adds_zero_so_normalized_zeros_are_positive(torch, dtype, row, parameters):
    # x = -0.0 in a row of zeros standardizes to -0.0; PyTorch adds a missing bias as 0.0 all the
    # same, which makes it 0.0 (and rsqrt_ of it inf, not -inf); a bias of -0.0 keeps the sign
    def signs(lib):
        x = lib.tensor([row], dtype=getattr(lib, dtype))
        minus_ones = -lib.ones(len(row), dtype=getattr(lib, dtype))
        weight = None if parameters == "none" else minus_ones
        bias = minus_ones * 0.0 if parameters == "weight and bias" else None  # -0.0
        return _signs(lib.nn.functional.layer_norm(x, (len(row),), weight, bias))

    np.testing.assert_array_equal(signs(ag), signs(torch))


def test_batch_norm_without_bias_gives_positive_zeros(torch):
    def signs(lib, training, **parameters):
        x = lib.tensor([[-0.0, -0.0], [-0.0, 0.0]])
        mean, var = lib.zeros(2), lib.ones(2)
        return _signs(lib.nn.functional.batch_norm(x, mean, var, training=training, **parameters))

    for training in (True, False):
        np.testing.assert_array_equal(signs(ag, training), signs(torch, training))
        np.testing.assert_array_equal(
            signs(ag, training, weight=-ag.ones(2)), signs(torch, training, weight=-torch.ones(2))
        )


def test_rsqrt_in_place_of_a_layer_norm_of_signed_zeros_is_inf(torch):
    def run(lib):
        x = lib.tensor([0.0, 0.0, 0.0, -0.0], dtype=lib.float64).reshape(2, 2, 1)
        return lib.nn.functional.layer_norm(x, (1,)).rsqrt_()

    both(torch, run)


def _clamp_cases(lib):
    """(x, min, max) triples whose result dtype needs all three tensors at once."""
    return [
        # int64 between a 0-d float64 and a float32 [1]: float32 (pairwise float64 first)
        (lib.tensor([1, 3]), lib.tensor(0.5, dtype=lib.float64), lib.tensor([2.5])),
        # a 0-d int64 min beyond int32 with a 0-d float64 max: float64, the min not wrapped
        (
            lib.tensor([1, 2], dtype=lib.int32),
            lib.tensor(2**40),
            lib.tensor(2.5, dtype=lib.float64),
        ),
        # 0-d float64 bounds do not widen a float32 tensor
        (
            lib.tensor([0.1, 2.0]),
            lib.tensor(0.3, dtype=lib.float64),
            lib.tensor(1.0, dtype=lib.float64),
        ),
        # a bool x with a 0-d int64 min and a float32 max: float32
        (lib.tensor([True, False]), lib.tensor(1), lib.tensor([0.5, 0.75])),
    ]


@pytest.mark.parametrize("case", range(4))
def test_clamp_with_tensor_bounds_promotes_over_all_three_at_once(torch, case):
    def run(lib):
        x, low, high = _clamp_cases(lib)[case]
        return x.clamp(min=low, max=high)

    both(torch, run)


def test_the_fuzzer_counts_values_after_a_refused_index_add_in_place(torch):
    # PyTorch adds source's slice for index 0 before it meets index 3 and raises (IndexError);
    # ours checks the index first and changes nothing: what is read from x later differs as a
    # consequence, not a finding
    x = Leaf("x0", (2, 1, 2), "float32", (0.0, 0.0, 0.0, 0.0))
    source = Leaf("x1", (2, 3, 2), "float32", tuple(float(i) for i in range(12)))
    index = "torch.tensor([0, 3, 0], dtype=torch.int64)"
    steps = [
        Step("v0", "Tensor.index_add_", f"{{0}}.index_add_(1, {index}, {{1}})", ("x0", "x1")),
        Step("v1", "Tensor.masked_fill", "{0}.masked_fill({0} > 0, 2.0)", ("x0",)),
    ]
    result = check(Program((x, source), tuple(steps)), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what) for d in result.consequences] == [("Tensor.masked_fill", "values")]
    # ours indeed left x unchanged, where PyTorch had added the first slice
    for lib, expected in (
        (ag, [[[0.0, 0.0]], [[0.0, 0.0]]]),
        (torch, [[[0.0, 1.0]], [[6.0, 7.0]]]),
    ):
        target = lib.zeros(2, 1, 2)
        with pytest.raises(IndexError):
            target.index_add_(1, lib.tensor([0, 3, 0]), lib.arange(12.0).reshape(2, 3, 2))
        assert target.tolist() == expected


def _strides_of_new_tensors_like(lib, x):
    return [
        lib.ones_like(x).stride(),
        lib.zeros_like(x, dtype=lib.float64).stride(),
        lib.full_like(x, 2).stride(),
        lib.empty_like(x).stride(),
        lib.rand_like(x).stride(),
        lib.randint_like(x, 5).stride(),
    ]


@pytest.mark.parametrize(
    "shape, dims",
    [((3, 1), (1, 0)), ((1, 3, 1), (2, 1, 0)), ((2, 1, 3), (1, 2, 0)), ((2, 3), (1, 0))],
)
def test_new_tensors_like_a_gap_free_tensor_take_its_strides_exactly(torch, shape, dims):
    # PyTorch's empty_like (behind ones_like, rand_like, ...) keeps a gap-free input's strides,
    # those of its size-1 dims too: ones_like(zeros(3, 1).t()).stride() is (1, 1), not (3, 1)
    def strides(lib):
        return _strides_of_new_tensors_like(lib, lib.zeros(shape).permute(dims))

    assert strides(ag) == strides(torch)
    # with gaps (every other column), only the memory order is kept
    assert _strides_of_new_tensors_like(ag, ag.zeros(4, 6).t()[::2]) == (
        _strides_of_new_tensors_like(torch, torch.zeros(4, 6).t()[::2])
    )


def test_randint_like_of_a_layer_norm_fills_it_row_by_row(torch):
    # layer_norm's result is row-major whatever input's layout (PyTorch normalizes a contiguous
    # copy), so the random fill of a tensor like it runs along its rows
    def run(lib):
        lib.manual_seed(0)
        x = lib.zeros(2, 3).t()
        normalized = lib.nn.functional.layer_norm(x, (3, 2))
        assert normalized.stride() == (2, 1)
        return lib.randint_like(normalized, 5)

    both(torch, run)


def test_masked_fill_gives_a_row_major_result_so_as_strided_reads_its_elements(torch):
    # PyTorch fills a contiguous clone of input: the result of a permuted input is row-major,
    # and so is its clone, which as_strided then reads in that order
    def run(lib):
        x = lib.tensor([0.0, 2.0, -1.0, -1.0]).reshape(1, 2, 2).permute(2, 1, 0)
        filled = x.masked_fill(x == 0, -1.0)
        with_tensor = x.masked_fill(x == 0, lib.tensor(-1.0))
        assert filled.stride() == with_tensor.stride() == (2, 1, 1)
        return filled.clone().as_strided((1, 2), (1, 2))

    both(torch, run)


def test_a_masked_fill_of_a_transposed_tensor_can_be_viewed_flat(torch):
    def run(lib):
        x = lib.zeros(3, 2).t()
        return x.masked_fill(x.bool(), -2).tan_().view(-1)

    both(torch, run)
