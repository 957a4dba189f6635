"""PyTorch's CPU random stream, compiled: the same algorithm as `autograd_lab/random.py`, in numba.

`random.py` is the reference: it explains the generator and computes it with numpy. This module
does the same steps one number at a time, in loops that numba compiles to machine code, so a
million numbers do not cost thousands of numpy calls (the twist alone runs 1,603 times for a
million words). Read random.py to learn what the steps mean; here is which function is whose twin:

    draw_words, join_pairs      MersenneTwister.random and random64: 32- and 64-bit draws
    uniform_float32/64          uniform_bits_to_float: [0, 1) floats from the draws' low bits
    scale_uniform               uniform_array: x * (high - low) + low
    integers                    integers_array: low + draw % span
    box_muller_float32          _box_muller_blocks for float32: the AVX2 log and sin/cos polynomials
    box_muller_float64          _box_muller_blocks for float64: the C library's log, cos and sin
    shuffle                     randperm_array: Fisher-Yates swaps

Both give PyTorch's bits (tests/test_random_stream.py runs every test on each). One difference in
*how*: PyTorch's AVX2 code rounds a * b + c once, a fused multiply-add (fma). numpy has none, so
random.py computes it in float64 and rounds to float32, which is the same number except in rare
ties; here `fma` is the CPU's own instruction, PyTorch's operation exactly. Everything else
rounds where it is written: numba compiles without `fastmath`, so LLVM neither fuses a * b + c by
itself nor reorders a sum, and float32 values stay float32 (np.float32 constants, np.sqrt).

random.py imports this module at the first draw of `random.compiled_from` (10,000) numbers or
more, and from then on lets it make every draw. The first call of each function compiles it
(seconds, once per machine: `cache=True` keeps the machine code in __pycache__; loading it in a
later process takes a fraction of a second, importing numba about as long).
"""

import math

import numpy as np
from numba import njit, types
from numba.core import config
from numba.core.extending import intrinsic

# Where LLVM may turn a loop of log/cos/sin into Intel's SVML vector functions, their last bits
# can differ from the C library's (which PyTorch calls): float64 normals then stay in numpy.
LIBM_MATH = not config.USING_SVML


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once, for three floats of one type: LLVM's fma instruction.

    numba has no fma function (Python's math.fma arrived in 3.13), so this asks LLVM for it
    directly: one vfmadd instruction on a CPU with FMA (as PyTorch's AVX2 code uses), a call to
    the C library's exact fma elsewhere.
    """
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


# ---- the engine: Mersenne Twister mt19937 (constants as in random.py) ----------------------------

STATE_SIZE = 624
SHIFT = 397
MATRIX_A = np.uint64(0x9908B0DF)
UPPER_MASK = np.uint64(0x80000000)
LOWER_MASK = np.uint64(0x7FFFFFFF)
ONE = np.uint64(1)
# Words are worked on as uint64 (numba widens 32-bit integer arithmetic to 64 bits anyway); every
# step keeps them below 2**32, and storing into the uint32 state drops nothing.


@njit(inline="always", cache=True)
def _twist_pair(u, v, far):
    """The new word made from old words u = word[i], v = word[i + 1] and far = word[i + 397]."""
    pair = (u & UPPER_MASK) | (v & LOWER_MASK)
    mixed = pair >> ONE
    if v & ONE:
        mixed ^= MATRIX_A
    return far ^ mixed


@njit(cache=True)
def twist(state):
    """Replace the 624 words of `state` by the next 624, in place (random.py's _twist).

    Going up from i = 0, word i + 1 is still old when word i is made, and word i + 397 is new once
    it has wrapped around (i >= 227): the order of the loop gives both for free.
    """
    for i in range(STATE_SIZE - SHIFT):
        state[i] = _twist_pair(state[i], state[i + 1], state[i + SHIFT])
    for i in range(STATE_SIZE - SHIFT, STATE_SIZE - 1):
        state[i] = _twist_pair(state[i], state[i + 1], state[i - (STATE_SIZE - SHIFT)])
    last = STATE_SIZE - 1
    state[last] = _twist_pair(state[last], state[0], state[SHIFT - 1])


@njit(inline="always", cache=True)
def _temper(word):
    word = np.uint64(word)
    word ^= word >> np.uint64(11)
    word ^= (word << np.uint64(7)) & np.uint64(0x9D2C5680)
    word ^= (word << np.uint64(15)) & np.uint64(0xEFC60000)
    word ^= word >> np.uint64(18)
    return word


@njit(cache=True)
def draw_words(state, left, position, out):
    """Fill `out` (uint32) with the next tempered words; return the engine's new (left, next).

    `left - 1` words of the block are still unused, from index `position` on (random.py's
    MersenneTwister keeps the same two counters, as PyTorch does).
    """
    filled = 0
    while filled < out.size:
        if left == 1:  # the block is used up: twist a new one
            twist(state)
            left, position = STATE_SIZE + 1, 0
        take = min(out.size - filled, left - 1)
        for k in range(take):
            out[filled + k] = _temper(state[position + k])
        filled += take
        position += take
        left -= take
    return left, position


@njit(cache=True)
def join_pairs(words, out):
    """64-bit draws from pairs of words: the first word of a pair gives the high 32 bits.

    `out` may be `words` itself, viewed as uint64: each pair is read before its 8 bytes are
    overwritten (the same holds for the conversions below)."""
    for i in range(out.size):
        out[i] = (np.uint64(words[2 * i]) << np.uint64(32)) | np.uint64(words[2 * i + 1])


# ---- uniform floats and integers -----------------------------------------------------------------


@njit(cache=True)
def uniform_float32(words, out):
    """[0, 1) floats from the low 24 bits of 32-bit draws (random.py's uniform_bits_to_float)."""
    for i in range(out.size):
        out[i] = np.float32(words[i] & np.uint32(0xFFFFFF)) * np.float32(2.0**-24)


@njit(cache=True)
def uniform_float64(draws, out):
    """[0, 1) floats from the low 53 bits of 64-bit draws."""
    for i in range(out.size):
        out[i] = np.float64(draws[i] & np.uint64(2**53 - 1)) * 2.0**-53


@njit(cache=True)
def scale_uniform(x, low, high, out):
    """x * (high - low) + low, one fused multiply-add each; a value rounded up to high becomes low
    (random.py's uniform_array). x, low and high share one float type."""
    width = high - low
    for i in range(x.size):
        value = fma(x[i], width, low)
        out[i] = low if value == high else value


@njit(cache=True)
def integers(draws, span, low, out):
    """low + draw % span for each draw (random.py's integers_array)."""
    span = np.uint64(span)
    for i in range(out.size):
        out[i] = np.int64(np.uint64(draws[i]) % span) + low


# ---- normal samples, float32: the AVX2 polynomials of avx_mathfun.h ------------------------------

_F = np.float32
_LOG_C = tuple(
    _F(c)
    for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1)
    + (1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
)
_L0, _L1, _L2, _L3, _L4, _L5, _L6, _L7, _L8 = _LOG_C
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_SQRT_HALF = _F(0.707106781186547524)
_SMALLEST_NORMAL = _F(1.1754944e-38)
_FOUR_OVER_PI = _F(1.27323954473516)
_DP1, _DP2, _DP3 = _F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)
_S0, _S1, _S2 = _F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1)
_C0, _C1, _C2 = _F(2.443315711809948e-005), _F(-1.388731625493765e-003), _F(4.166664568298827e-002)
_TWO_PI_FLOAT = _F(2.0 * math.pi)
_ONE, _HALF, _ZERO, _MINUS_TWO = _F(1), _F(0.5), _F(0), _F(-2)


@njit(inline="always", cache=True)
def log_avx2(x):
    """Natural log of a positive float32 (random.py's _log_avx2, one number)."""
    bits = np.float32(max(x, _SMALLEST_NORMAL)).view(np.uint32)
    exponent = np.int32(bits >> np.uint32(23)) - 126
    mantissa = np.uint32((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)
    small = mantissa < _SQRT_HALF
    e = np.float32(exponent) - (_ONE if small else _ZERO)
    m = (mantissa - _ONE) + (mantissa if small else _ZERO)
    z = m * m
    y = fma(m, _L0, _L1)
    y = fma(y, m, _L2)
    y = fma(y, m, _L3)
    y = fma(y, m, _L4)
    y = fma(y, m, _L5)
    y = fma(y, m, _L6)
    y = fma(y, m, _L7)
    y = fma(y, m, _L8)
    y = fma(y * m, z, e * _LOG_Q1)
    y = fma(z, -_HALF, y)
    return fma(e, _LOG_Q2, m + y)


@njit(inline="always", cache=True)
def sincos_avx2(x):
    """(sin x, cos x) of a non-negative float32 (random.py's _sincos_avx2, one number)."""
    j = np.int32(x * _FOUR_OVER_PI)
    j = (j + 1) & ~1
    y = np.float32(j)
    x = fma(y, _DP1, x)
    x = fma(y, _DP2, x)
    x = fma(y, _DP3, x)
    z = x * x
    cosine = fma(z, _C0, _C1)
    cosine = fma(cosine, z, _C2)
    cosine = fma(cosine * z, z, -(z * _HALF)) + _ONE
    sine = fma(z, _S0, _S1)
    sine = fma(sine, z, _S2)
    sine = fma(sine * z, x, x)
    # which polynomial gives the sine, and the signs, depend on the eighth of the circle
    swap = (j & 2) != 0
    sin_value = cosine if swap else sine
    cos_value = sine if swap else cosine
    sin_value = -sin_value if (j & 4) != 0 else sin_value
    cos_value = -cos_value if ((j - 2) & 4) == 0 else cos_value
    return sin_value, cos_value


_PIECE = 512  # pairs per piece: the piece's four rows of scratch stay in the CPU's L1 cache


@njit(cache=True)
def box_muller_float32(u, mean, std, scale, out):
    """Blocks of 16 float32 uniforms -> 16 normals: u1 = element j, u2 = element j + 8 of a block.

    `scale`: whether to apply fma(x, std, mean) (PyTorch skips it for mean 0, std 1). `out` may be
    `u` itself: a piece is read before it is overwritten. The pairs are gathered piece by piece
    into contiguous rows, so that the loop doing the arithmetic reads and writes consecutive
    numbers: LLVM then runs it on 8 numbers per instruction (AVX2) instead of one.
    """
    u1, u2 = np.empty(_PIECE, np.float32), np.empty(_PIECE, np.float32)
    first, second = np.empty(_PIECE, np.float32), np.empty(_PIECE, np.float32)
    for start in range(0, u.size, 2 * _PIECE):
        pairs = min(_PIECE, (u.size - start) // 2)
        for p in range(pairs):  # pair p: element p % 8 of block p // 8, and the one 8 after it
            j = start + p // 8 * 16 + p % 8
            u1[p], u2[p] = u[j], u[j + 8]
        for p in range(pairs):
            radius = np.sqrt(_MINUS_TWO * log_avx2(_ONE - u1[p]))
            sine, cosine = sincos_avx2(_TWO_PI_FLOAT * u2[p])
            first[p], second[p] = radius * cosine, radius * sine
        if scale:
            for p in range(pairs):
                first[p], second[p] = fma(first[p], std, mean), fma(second[p], std, mean)
        for p in range(pairs):
            j = start + p // 8 * 16 + p % 8
            out[j], out[j + 8] = first[p], second[p]


# ---- normal samples, float64: the C library's log, cos, sin ---------------------------------------

_TWO_PI = 2.0 * math.pi


@njit(cache=True)
def box_muller_float64(u, mean, std, scale, out):
    """The float64 twin of box_muller_float32, with math.log, math.cos and math.sin (calls into
    the C library, one number at a time, as PyTorch makes them; `out` may be `u` itself)."""
    for start in range(0, u.size, 16):
        for j in range(start, start + 8):
            radius = math.sqrt(-2.0 * math.log(1.0 - u[j]))
            theta = _TWO_PI * u[j + 8]
            first, second = radius * math.cos(theta), radius * math.sin(theta)
            if scale:
                first, second = fma(first, std, mean), fma(second, std, mean)
            out[j], out[j + 8] = first, second


# ---- permutations ------------------------------------------------------------------------------


@njit(cache=True)
def shuffle(order, offsets):
    """Fisher-Yates in place: element i swaps with element i + offsets[i]."""
    for i in range(offsets.size):
        j = i + offsets[i]
        order[i], order[j] = order[j], order[i]
