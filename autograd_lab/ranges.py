"""arange, linspace and logspace computed as PyTorch's CPU computes them, to the last bit.

    >>> torch.linspace(-3.14159, 3.14159, 2000)[1234].item()   # the same float32 as PyTorch

Counting from `start` in steps of `step` can be written several ways that agree on paper and differ
in the last bit of a float. PyTorch's CPU kernels (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp)
choose these, and we choose the same, so `linspace(-pi, pi, 2000)` prints and trains the same:

- linspace: `step = (end - start) / (steps - 1)` in the output dtype. The first half counts up from
  start, `start + step * i`; the second half counts down from the end, `end - step * (steps - 1 - i)`,
  so both ends are exact. Each `a + step * i` is a *fused* multiply-add (one rounding): PyTorch's
  AVX2 build lets the compiler fuse it.
- arange: `start + step * i` fused, in float64 (float32 for a float16 result), then rounded to the
  output dtype. The CPU makes them 8 float32s (4 float64s, 16 float16s) at a time: for each group
  the first value is computed that way and rounded, and the others are that rounded first value
  plus `k * step`. The count is `ceil((end - start) / step)`, computed in float64.
- logspace: `base ** (start + step * i)` in float64 (not fused: another file, built without FMA),
  counting down from the end for the second half as linspace does.

Integer arange is exact; we use integer arithmetic there. None of them counts in bool (PyTorch has
no such kernel), except linspace and logspace of 0 or 1 steps, which count nothing.
"""

import math

import numpy as np

from . import threads, types


def _no_bool(name, dtype):
    """PyTorch has no bool kernel for counting (what is True + a step?): NotImplementedError."""
    if dtype == np.bool_:
        raise types.not_implemented_for(name, types.bool_)


# What PyTorch's AVX2 kernels group (two groups per loop step): 256 bits of the output dtype.
_VECTOR_SIZE = {np.dtype(np.float16): 16, np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_GRAIN_SIZE = 32768  # PyTorch splits a range among threads only above this many elements


# ---- a fused multiply-add: a * b + c with one rounding ------------------------------------------
def _two_sum(a, b):
    """(s, e) with s = a + b rounded and s + e == a + b exactly (Knuth's TwoSum)."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _split(a):
    """a == high + low, each half of 26 bits or fewer, so their products are exact (Dekker)."""
    t = a * 134217729.0  # 2**27 + 1
    high = t - (t - a)
    return high, a - high


def _finite_or_plain(fma):
    """Near overflow the exact steps themselves overflow; there `a * b + c` (inf or nan) is the
    answer anyway, as PyTorch's fused one would give."""

    def checked(a, b, c):
        with np.errstate(all="ignore"):
            result = fma(a, b, c)
            plain = np.float64(a) * np.float64(b) + np.float64(c)
        if np.all(np.isfinite(result)):
            return result
        return np.where(np.isfinite(result), result, plain.astype(result.dtype))

    checked.__doc__ = fma.__doc__
    return checked


@_finite_or_plain
def fma64(a, b, c):
    """float64 a * b + c rounded once (numpy has no fused multiply-add)."""
    a, b, c = np.float64(a), np.float64(b), np.float64(c)
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    product_error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    s, s_error = _two_sum(product, c)
    return s + (product_error + s_error)  # the small rest, added with one last rounding


@_finite_or_plain
def fma32(a, b, c):
    """float32 a * b + c rounded once: the exact product and sum in float64, then to float32."""
    product = np.float64(a) * np.float64(b)  # 24-bit by 24-bit: exact in float64's 53 bits
    s, error = _two_sum(product, np.float64(c))  # s + error is a * b + c exactly
    rounded = s.astype(np.float32)
    # Rounding s to float32 can go the wrong way only when s lies exactly halfway between two
    # float32s and `error` says which side the true value is on: step to that side.
    halfway = (error != 0) & (rounded.astype(np.float64) != s)
    upper = np.where(rounded > s, rounded, np.nextafter(rounded, np.float32(np.inf)))
    lower = np.where(rounded < s, rounded, np.nextafter(rounded, np.float32(-np.inf)))
    neighbours_mid = (upper.astype(np.float64) + lower.astype(np.float64)) / 2 == s
    return np.where(halfway & neighbours_mid, np.where(error > 0, upper, lower), rounded)


def _check_fits(dtype, *numbers):
    """PyTorch refuses a start or end the dtype cannot hold (float16 stops at 65504)."""
    if dtype.kind != "f":
        return
    largest = float(np.finfo(dtype).max)
    for number in numbers:
        if math.isfinite(number) and abs(number) > largest:
            raise RuntimeError(
                f"value cannot be converted to type {dtype} without overflow: {number} is beyond "
                f"the largest {dtype}, {largest:g}. Fix: use a wider dtype (float32)."
            )


# ---- linspace -----------------------------------------------------------------------------------
def linspace(start, end, steps, dtype):
    """`steps` evenly spaced numbers from start to end (both included), as a numpy array."""
    dtype = np.dtype(dtype)
    _check_fits(dtype, start, end)
    if steps == 1:
        return np.array([start]).astype(dtype)
    if steps == 0:
        return np.zeros(0, dtype)
    _no_bool("linspace", dtype)
    index = np.arange(steps)
    first_half, second_half = index[: steps // 2], index[steps // 2 :]
    if dtype == np.float16:
        return _linspace_half(start, end, steps, first_half, second_half)
    if dtype == np.float32:
        start, end = np.float32(start), np.float32(end)
        with np.errstate(over="ignore"):  # a range wider than float32 holds: inf, as in PyTorch
            step = (end - start) / np.float32(steps - 1)
        up = fma32(first_half.astype(np.float32), step, start)
        down = fma32(-(steps - 1 - second_half).astype(np.float32), step, end)
        return np.concatenate([up, down])
    if dtype.kind in "iu":  # integers: a float64 step, values truncated toward zero
        start, end = int(start), int(end)
    start, end = np.float64(start), np.float64(end)
    with np.errstate(over="ignore"):
        step = (end - start) / (steps - 1)
    up = fma64(first_half.astype(np.float64), step, start)
    down = fma64(-(steps - 1 - second_half).astype(np.float64), step, end)
    values = np.concatenate([up, down])
    return (np.trunc(values) if dtype.kind in "iu" else values).astype(dtype)


def _linspace_half(start, end, steps, first_half, second_half):
    """float16 arithmetic: each operation is done in float32 and rounded to float16 (unfused)."""
    half, single = np.float16, np.float32

    def times_step(counts):  # step * count, the count itself first rounded to float16
        return (single(step) * counts.astype(half).astype(single)).astype(half).astype(single)

    start, end = half(start), half(end)
    step = half(single(end - start) / single(half(steps - 1)))
    up = single(start) + times_step(first_half)
    down = single(end) - times_step(steps - 1 - second_half)
    return np.concatenate([up, down]).astype(half)


# ---- logspace -----------------------------------------------------------------------------------
def logspace(start, end, steps, base, dtype):
    """base ** linspace(start, end, steps), the exponents counted as PyTorch counts them."""
    dtype = np.dtype(dtype)
    if steps == 1:
        return np.array([float(base) ** float(start)]).astype(dtype)
    if steps == 0:
        return np.zeros(0, dtype)
    _no_bool("logspace", dtype)
    start, end = dtype.type(start), dtype.type(end)
    step = np.float64(end - start) / (steps - 1)  # the difference in the dtype, the step in float64
    index = np.arange(steps).astype(np.float64)
    up = np.float64(start) + step * index
    down = np.float64(end) - step * (steps - 1 - index)
    exponents = np.where(np.arange(steps) < steps // 2, up, down)
    # the C library's pow, element by element, as PyTorch computes it: numpy's own float64 power
    # runs SIMD code on CPUs with AVX-512 whose last bit sometimes differs
    powers = [_pow(float(base), e) for e in exponents.tolist()]
    return np.array(powers, dtype=np.float64).astype(dtype)


def _pow(base, exponent):
    """math.pow, with inf where the result is too large for a float (math.pow raises there)."""
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return math.inf
    except ValueError:  # 0 to a negative power (inf), a negative base to a fractional one (nan)
        return math.inf if base == 0 else math.nan


# ---- arange -------------------------------------------------------------------------------------
def arange_length(start, end, step):
    """How many values arange(start, end, step) has, refusing a step that never reaches `end`."""
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end}; both must be finite")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError(
            f"arange(): upper bound and larger bound inconsistent with step sign: counting from "
            f"{start} in steps of {step} never reaches {end}. Fix: swap start and end, or flip "
            "the sign of step."
        )
    if all(isinstance(v, int) for v in (start, end, step)):
        return max(0, -((start - end) // step))  # ceil((end - start) / step), exactly
    return int(math.ceil((float(end) - float(start)) / float(step)))


def arange(start, end, step, dtype):
    """start, start + step, ... up to (not including) end, as a numpy array of `dtype`."""
    dtype = np.dtype(dtype)
    _no_bool("arange", dtype)
    if dtype == np.int64 and all(math.isfinite(v) for v in (start, end, step)):
        # PyTorch counts an int64 range in whole numbers: start, end and step are cut to integers
        # first (a step of 0.25 becomes 0), and the length is counted from those
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError(
                "arange(): step must be nonzero: an int64 range cuts the step to a whole number "
                "first (0.25 becomes 0). Fix: give a step of at least 1, or a float dtype."
            )
    n = arange_length(start, end, step)
    if dtype.kind in "iub":
        if all(isinstance(v, int) for v in (start, end, step)):
            return (start + step * np.arange(n, dtype=np.int64)).astype(dtype)
        start, step = int(start), int(step)  # PyTorch converts the numbers to the integer dtype
        return (start + step * np.arange(n, dtype=np.int64)).astype(dtype)
    out = np.empty(n, dtype)
    for begin, stop in _thread_chunks(n):
        _arange_chunk(out, begin, stop, float(start), float(step))
    return out


def _thread_chunks(n):
    """The index ranges PyTorch's threads fill: one range unless n is above the grain size."""
    workers = threads.get_num_threads()
    if n <= _GRAIN_SIZE or workers == 1:
        return [(0, n)]
    workers = min(workers, -(-n // _GRAIN_SIZE))
    chunk = -(-n // workers)
    return [(begin, min(n, begin + chunk)) for begin in range(0, n, chunk)]


def _arange_chunk(out, begin, stop, start, step):
    """Fill out[begin:stop] as one thread of PyTorch's arange does: in groups, then one by one."""
    group = _VECTOR_SIZE[out.dtype]
    # PyTorch counts in float64, except for float16 results, which it counts in float32
    fma, counting = (fma32, np.float32) if out.dtype == np.float16 else (fma64, np.float64)
    start, step = counting(start), counting(step)
    grouped_stop = begin + (stop - begin) // (2 * group) * (2 * group)  # loops do two groups a step
    firsts = np.arange(begin, grouped_stop, group)
    if firsts.size:
        # each group: its first value rounded to the dtype, then that value plus k * step
        first_values = fma(firsts.astype(counting), step, start).astype(out.dtype)
        k = np.arange(group).astype(counting)
        grid = fma(k[None, :], step, first_values.astype(counting)[:, None])
        out[begin:grouped_stop] = grid.reshape(-1).astype(out.dtype)
    rest = np.arange(grouped_stop, stop).astype(counting)
    out[grouped_stop:stop] = fma(rest, step, start).astype(out.dtype)
