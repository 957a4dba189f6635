"""repr() and str() print exactly what PyTorch prints, "torch.float64" included.

Each case is a recipe `make(lib)` run once with autograd_lab and once with torch on the same numpy
data, so both libraries print the same numbers.
"""

import numpy as np
import pytest

import autograd_lab as ag

rng = np.random.default_rng(0)
f32, f64 = np.float32, np.float64


def leaf(values, dtype=None, **kwargs):
    """A recipe for a leaf tensor made from `values` (converted by numpy to `dtype`)."""
    array = np.array(values, dtype=dtype)
    return lambda lib: lib.tensor(array, **kwargs)


def made_by(op, values, dtype=f32):
    """A recipe for a non-leaf: `op(x)` of a leaf x that requires grad."""
    array = np.array(values, dtype=dtype)
    return lambda lib: op(lib.tensor(array, requires_grad=True))


NAN, INF = float("nan"), float("inf")

CASES = {
    # ---- 0-d tensors --------------------------------------------------------------------------
    "0d_whole": leaf(2.0, f32),
    "0d_fraction": leaf(3.14159, f32),
    "0d_negative": leaf(-0.5, f32),
    "0d_zero": leaf(0.0, f32),
    "0d_tiny": leaf(1e-8, f32),
    "0d_huge": leaf(3e10, f32),
    "0d_nan": leaf(NAN, f32),
    "0d_minus_inf": leaf(-INF, f32),
    "0d_int64": leaf(7),
    "0d_bool": leaf(True),
    "0d_float64": leaf(0.25, f64),
    "0d_requires_grad": leaf(1.5, f32, requires_grad=True),
    # ---- 1-d: the float formats ---------------------------------------------------------------
    "1d_single": leaf([5.0], f32),
    "1d_whole": leaf([1.0, 2.0, 3.0], f32),
    "1d_whole_wide": leaf([0.0, 10.0, -200.0, 999.0], f32),
    "1d_fraction": leaf([1.0, 2.5, -0.125], f32),
    "1d_negative": leaf([-1.5, -2.25, -3.0], f32),
    "1d_zeros": leaf([0.0, 0.0], f32),
    "1d_negative_zero": leaf([-0.0, 1.0], f32),
    "1d_mixed_magnitudes": leaf([1e-5, 1.0, 1e5], f32),
    "1d_small_only": leaf([1e-5, 2e-5], f32),
    "1d_ratio_just_under_1000": leaf([1.0, 999.0, 0.5], f32),
    "1d_whole_ratio_over_1000": leaf([1.0, 2000.0], f32),
    "1d_nan_inf_whole": leaf([1.0, NAN, INF, -INF], f32),
    "1d_nan_inf_fraction": leaf([1.5, NAN, -INF], f32),
    "1d_nan_inf_scientific": leaf([1e-6, NAN, INF, 0.0], f32),
    "1d_only_nan_inf": leaf([NAN, INF, -INF], f32),
    "1d_random": leaf(rng.standard_normal(5), f32),
    # ---- dtypes -------------------------------------------------------------------------------
    "int64": leaf([1, -20, 300]),
    "int32": leaf([1, -20, 300], np.int32),
    "bool": leaf([True, False, True]),
    "float64": leaf([0.1, 0.2, 0.3], f64),
    "float64_whole": leaf([1.0, 2.0], f64),
    "float16": leaf([0.5, 1.0, 1.5], np.float16),
    # ---- very large values (above 1e8: scientific) ---------------------------------------------
    "large_whole": leaf([1e9, 2e9], f32),
    "large_and_one": leaf([1.5e8, 1.0], f32),
    "large_fraction": leaf([123456789.5, 0.5], f64),
    "large_exponent_3_digits": leaf([1e100, 1.0, -1e-100], f64),
    "large_int64": leaf([10**12, -(10**15), 3]),
    # ---- 2-d and 3-d --------------------------------------------------------------------------
    "2d_random": leaf(rng.standard_normal((3, 4)), f32),
    "2d_whole": leaf(np.arange(6).reshape(2, 3), f32),
    "2d_int64": leaf(np.arange(-3, 9).reshape(3, 4)),
    "2d_bool": leaf(rng.standard_normal((2, 3)) > 0),
    "2d_one_row": leaf([[1.5, 2.5]], f32),
    "2d_scientific": leaf(rng.standard_normal((2, 2)) * 1e6, f32),
    "3d_arange": leaf(np.arange(24).reshape(2, 3, 4), f32),
    "3d_random": leaf(rng.standard_normal((2, 2, 3)), f64),
    "4d": leaf(np.arange(16).reshape(2, 2, 2, 2), f32),
    # ---- empty tensors ------------------------------------------------------------------------
    "empty_1d": leaf(np.zeros(0), f32),
    "empty_2d": leaf(np.zeros((2, 0)), f32),
    "empty_3d": leaf(np.zeros((0, 3, 1)), f32),
    "empty_int64": leaf(np.zeros(0, dtype=np.int64)),
    "empty_bool": leaf(np.zeros((0, 2), dtype=bool)),
    "empty_float64": leaf(np.zeros(0), f64),
    "empty_requires_grad": leaf(np.zeros(0), f32, requires_grad=True),
    # ---- autograd suffixes --------------------------------------------------------------------
    "requires_grad": leaf([1.0, 2.0], f32, requires_grad=True),
    "requires_grad_float64": leaf([1.0, 2.5], f64, requires_grad=True),
    "grad_fn_mul": made_by(lambda x: x * 2, [1.0, 2.0]),
    "grad_fn_tanh": made_by(lambda x: x.tanh(), [0.5, -1.0]),
    "grad_fn_sum_0d": made_by(lambda x: x.sum(), [0.5, 1.0]),
    "grad_fn_float64": made_by(lambda x: x + 1, [0.5, 1.0], f64),
    "grad_fn_2d": made_by(lambda x: x.exp(), rng.standard_normal((2, 3))),
    # ---- long rows wrap at 80 characters -------------------------------------------------------
    "wrap_fraction": leaf(np.arange(30) * 1.5, f32),
    "wrap_random": leaf(rng.standard_normal(50), f32),
    "wrap_int64": leaf(np.arange(100)),
    "wrap_int32": leaf(np.arange(-40, 40), np.int32),
    "wrap_bool": leaf(rng.standard_normal(40) > 0),
    "wrap_scientific": leaf(rng.standard_normal(20) * 1e-6, f32),
    "wrap_2d": leaf(rng.standard_normal((3, 30)), f32),
    "wrap_3d": leaf(rng.standard_normal((2, 2, 20)), f32),
    "wrap_requires_grad": leaf(rng.standard_normal(17), f32, requires_grad=True),
    "wrap_float64_grad_fn": made_by(lambda x: x * 3, rng.standard_normal(19), f64),
    "suffix_wraps_after_full_line": leaf(rng.standard_normal(10), f64, requires_grad=True),
    "suffix_wraps_2d": made_by(lambda x: x * 1, rng.standard_normal((2, 10)), f64),
    # ---- more than 1000 elements: summarized with "..." ----------------------------------------
    "summarized_40x40": leaf(rng.standard_normal((40, 40)), f32),
    "summarized_2000": leaf(np.arange(2000), f32),
    "summarized_2000_fraction": leaf(np.arange(2000) / 7, f32),
    "summarized_1001": leaf(rng.standard_normal(1001), f32),
    "summarized_int64": leaf(np.arange(2000)),
    "summarized_bool": leaf(rng.standard_normal(1500) > 0),
    "summarized_3d": leaf(rng.standard_normal((10, 10, 11)), f32),
    "summarized_short_axis": leaf(rng.standard_normal((2, 600)), f32),
    "summarized_wide_rows": leaf(rng.standard_normal((5, 300)), f64),
    "summarized_hidden_middle": leaf(np.r_[1.0, 2.0, 3.0, np.full(1000, 1e-9), 4.0, 5.0, 6.0], f32),
    "summarized_requires_grad": leaf(np.arange(1200) * 0.5, f32, requires_grad=True),
    "summarized_grad_fn": made_by(lambda x: x * 2, rng.standard_normal((40, 40))),
    "summarized_with_nan": leaf(np.r_[NAN, np.arange(1500.0), -INF], f32),
    "not_summarized_1000": leaf(np.arange(1000), f32),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", CASES)
def test_repr_matches_pytorch(name, torch):
    expected = repr(CASES[name](torch))
    tensor = CASES[name](ag)
    assert str(tensor) == repr(tensor) == expected


# ---- format(): a 0-d tensor formats as its number, as in PyTorch ----------------------------------
FORMAT_CASES = [
    ("loss", lambda lib: (lib.tensor([0.25, 0.5], requires_grad=True) ** 2).mean(), ""),
    ("loss, .4f", lambda lib: (lib.tensor([0.25, 0.5], requires_grad=True) ** 2).mean(), ".4f"),
    ("float64", lambda lib: lib.tensor(1 / 3, dtype=lib.float64), ""),
    ("int", lambda lib: lib.tensor(7), ""),
    ("int, >5", lambda lib: lib.tensor(7), ">5"),
    ("bool", lambda lib: lib.tensor(True), ""),
    ("item of a sum, .2e", lambda lib: lib.arange(4.0).sum(), ".2e"),
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    "make, spec", [case[1:] for case in FORMAT_CASES], ids=[c[0] for c in FORMAT_CASES]
)
def test_format_of_a_0d_tensor_matches_pytorch(make, spec, torch):
    assert format(make(ag), spec) == format(make(torch), spec)
    assert f"loss {make(ag)}" == f"loss {make(torch)}"
