"""arange, linspace and logspace give PyTorch's numbers to the last bit (autograd_lab/ranges.py).

Equal to the bit, not close: `linspace(-pi, pi, 2000)` feeds a training script, and a difference in
the last place of one input shows up in its printed losses. The thread count is pinned where it
matters (arange above 32768 values) so both libraries split the range the same way.
"""

import math

import numpy as np
import pytest

import autograd_lab as ag

pytestmark = pytest.mark.oracle

FLOATS = ["float16", "float32", "float64"]

LINSPACES = [
    (-math.pi, math.pi, 2000),  # the issue's example: 604 float32 values differed
    (0, 1, 100),
    (-3, 7.5, 37),
    (5, -2, 1001),  # counting down
    (0.1, 0.2, 7),
    (1e-3, 1e3, 333),
    (-1e6, 1e-6, 50_001),  # above the grain size: PyTorch's threads split it
    (3, 3, 5),  # start == end
    (0, 1, 2),
    (2.5, -1, 1),  # one step: just start
    (0, 1, 0),  # none
    (0, 1.7e308, 3),  # near float64's largest: float32 and float16 refuse it
    (-1.7e308, 1.7e308, 5),  # a step beyond float64: inf and nan, as in PyTorch
    (-3e38, 3e38, 5),
]


def assert_same_bits(ours, theirs):
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), strict=True)  # nan == nan


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "int32"])
@pytest.mark.parametrize("start, end, steps", LINSPACES)
def test_linspace_bit_for_bit(start, end, steps, dtype, torch):
    if dtype.startswith("float") and max(abs(start), abs(end)) > ag.finfo(getattr(ag, dtype)).max:
        for lib in (ag, torch):  # beyond the dtype's largest number
            with pytest.raises(RuntimeError, match="without overflow"):
                lib.linspace(start, end, steps, dtype=getattr(lib, dtype))
        return
    if dtype.startswith("int") and max(abs(start), abs(end)) > 1e18:
        return  # PyTorch's float-to-int conversion of such numbers is undefined behaviour in C++
    ours = ag.linspace(start, end, steps, dtype=getattr(ag, dtype))
    theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
    assert_same_bits(ours, theirs)


def test_linspace_default_dtype_matches_the_issue_example(torch):
    ours, theirs = ag.linspace(-math.pi, math.pi, 2000), torch.linspace(-math.pi, math.pi, 2000)
    assert_same_bits(ours, theirs)
    assert ours.dtype is ag.float32


ARANGES = [
    (0, 1, 0.1),
    (-math.pi, math.pi, 0.001),
    (0.3, 17.9, 0.7),
    (5, -3, -0.3),  # counting down
    (0, 100, 1 / 3),
    (1e-3, 5, 0.0123),
    (-2.5, 2.5, 0.5),
    (0, 1, 1e-5),  # 100000 values: above the grain size
    (0, 10, 3),  # integers given, a float dtype asked for
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("start, end, step", ARANGES)
def test_arange_bit_for_bit(start, end, step, dtype, torch):
    saved, ours_saved = torch.get_num_threads(), ag.get_num_threads()
    try:
        for threads in (1, 2, 3):  # long ranges are split among the threads
            torch.set_num_threads(threads)
            ag.set_num_threads(threads)
            ours = ag.arange(start, end, step, dtype=getattr(ag, dtype))
            theirs = torch.arange(start, end, step, dtype=getattr(torch, dtype))
            assert_same_bits(ours, theirs)
    finally:
        torch.set_num_threads(saved)
        ag.set_num_threads(ours_saved)


@pytest.mark.parametrize(
    "args", [(5,), (2, 9), (10, 0, -3), (-7, 8, 4), (0, 1), (3, 3), (1.5,), (0, 2.5, 0.5)]
)
def test_arange_default_dtypes_and_values(args, torch):
    assert_same_bits(ag.arange(*args), torch.arange(*args))


@pytest.mark.parametrize("base", [10.0, 2.0, math.e])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "start, end, steps", [(-3, 3, 1000), (0, 1, 7), (-1.5, 2.7, 333), (2, -2, 50), (0, 5, 1)]
)
def test_logspace_bit_for_bit(start, end, steps, base, dtype, torch):
    ours = ag.logspace(start, end, steps, base=base, dtype=getattr(ag, dtype))
    theirs = torch.logspace(start, end, steps, base=base, dtype=getattr(torch, dtype))
    assert_same_bits(ours, theirs)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.arange(0, 5, 0),
        lambda lib: lib.arange(0, 5, -1),
        lambda lib: lib.arange(5, 0, 0.5),
        lambda lib: lib.arange(0, float("inf"), 1.0),
        lambda lib: lib.linspace(0, 1, -1),
    ],
    ids=["zero step", "wrong sign", "wrong sign float", "infinite end", "negative steps"],
)
def test_range_errors_are_pytorchs(make, torch):
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError) as ours:
        make(ag)
    # our message starts with what PyTorch says, then explains
    words = {"zero step": "nonzero", "negative steps": "non-negative", "infinite end": "finite"}
    assert any(w in str(ours.value) for w in [*words.values(), "inconsistent with step sign"])
    assert "step" in str(theirs.value) or "range" in str(theirs.value)


def test_the_fused_multiply_add_rounds_once():
    """fma32 and fma64 equal a * b + c computed exactly (with fractions) and rounded once."""
    from fractions import Fraction

    from autograd_lab.ranges import fma32, fma64

    rng = np.random.default_rng(0)
    for dtype, fma in ((np.float32, fma32), (np.float64, fma64)):
        a, b, c = (
            rng.standard_normal(2000).astype(dtype) * 10.0 ** rng.integers(-3, 3, 2000)
            for _ in range(3)
        )
        got = np.array([fma(x, y, z) for x, y, z in zip(a, b, c)], dtype=dtype)
        exact = [
            Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) for x, y, z in zip(a, b, c)
        ]
        # rounding a fraction to float64 is correct in Python; to float32 go via the nearest float64
        # only where that cannot double-round: compare with neighbours instead
        for value, fraction in zip(got, exact):
            below, above = np.nextafter(value, dtype(-np.inf)), np.nextafter(value, dtype(np.inf))
            error = abs(Fraction(float(value)) - fraction)
            assert error <= abs(Fraction(float(below)) - fraction)
            assert error <= abs(Fraction(float(above)) - fraction)


def test_halfway_float32_fma_goes_the_way_the_exact_value_says():
    """A float64 sum exactly halfway between two float32s must not be rounded to even blindly."""
    from autograd_lab.ranges import fma32

    # a * b = 2**-24 - 2**-70, so a * b + c is just below 1 + 3 * 2**-24: the float64 sum rounds
    # to that midpoint of the float32s 1 + 2**-23 and 1 + 2**-22 (the even one). The exact value
    # is below the midpoint: the answer is 1 + 2**-23.
    a, b = np.float32(2.0**-24 * (1 + 2.0**-23)), np.float32(1 - 2.0**-23)
    c = np.float32(1 + 2.0**-23)
    assert np.float64(a) * np.float64(b) + np.float64(c) == 1 + 3 * 2.0**-24  # the trap
    assert fma32(a, b, c) == np.float32(1 + 2.0**-23)
    assert fma32(-a, b, -c) == -np.float32(1 + 2.0**-23)


@pytest.mark.parametrize(
    "start, end, steps, base",
    [(0, 400, 5, 10.0), (-400, 0, 3, 10.0), (-2, 2, 5, 0.0), (0, 3, 4, -2.0), (0, 0.5, 3, -2.0)],
)
def test_logspace_overflow_zero_and_negative_bases_as_pytorch(torch, start, end, steps, base):
    # the C library's pow raises where numpy gives inf or nan: logspace gives what PyTorch does
    ours = ag.logspace(start, end, steps, base, dtype=ag.float64).numpy()
    theirs = torch.logspace(start, end, steps, base, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(ours, theirs)
