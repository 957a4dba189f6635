"""PyTorch's CPU random numbers, rebuilt in numpy: the same seed gives the same bits.

    >>> import autograd_lab as ag
    >>> g = ag.Generator().manual_seed(0)
    >>> ag.rand(3, generator=g)        # torch.rand(3, generator=torch.Generator().manual_seed(0))
    tensor([0.4963, 0.7682, 0.0885])

How PyTorch's CPU generator works
---------------------------------
1. **The engine: Mersenne Twister (mt19937).** Its state is 624 unsigned 32-bit words. Seeding
   puts the low 32 bits of the 64-bit seed in word 0 and fills the rest with the recurrence
   `word[j] = 1812433253 * (word[j-1] ^ (word[j-1] >> 30)) + j` (mod 2**32). So seeds that agree
   in their low 32 bits (3 and 2**40 + 3) give the same numbers; `initial_seed()` still returns
   the full seed. Whenever the 624 words are used up, a *twist* mixes them into 624 new ones:
   `new[i] = word[i + 397] ^ twist(word[i], word[i + 1])` (indices wrap around, and a wrapped
   index reads a word already renewed). Each word handed out is first *tempered* (four
   shift-and-xor steps) so its bits are well mixed.
2. **32- and 64-bit draws.** `random()` is one tempered word. `random64()` is two: the first word
   gives the high 32 bits, the second the low 32 bits.
3. **Uniform floats.** float32 keeps the low 24 bits of one 32-bit draw, float64 the low 53 bits
   of one 64-bit draw, and multiplies by 2**-24 (2**-53): every value is a multiple of that step
   in [0, 1), exactly representable. `uniform_(a, b)` then computes `x * (b - a) + a` in the
   tensor's precision, as one fused multiply-add (and maps a value rounded up to b back to a).
4. **Normal samples (Box-Muller).** Two uniforms u1, u2 give two normals:
   `r = sqrt(-2 log(1 - u1))`, `r cos(2 pi u2)` and `r sin(2 pi u2)`. PyTorch has two code paths:
   - a contiguous tensor of 16 or more elements: first *all* its elements are filled with
     uniforms, then each block of 16 becomes 16 normals (elements j and j + 8 of a block are a
     pair: u1 = element j, u2 = element j + 8). When the size is not a multiple of 16, 16 *more*
     uniforms are drawn for the last 16 elements, which are recomputed (overwriting some normals
     already made). float64 uses the C library's log/cos/sin; float32 on an x86-64 CPU with AVX2
     uses the polynomial log and sin/cos of `avx_mathfun.h` (cephes), 8 lanes at a time. Both
     are reproduced here operation by operation (see `_log_avx2`, `_sincos_avx2`).
   - fewer than 16 elements (or a non-contiguous tensor): one normal at a time in float64, from
     two 53-bit uniforms, `r = sqrt(-2 log1p(-u2))`, `theta = 2 pi u1`; `r cos(theta)` is
     returned and `r sin(theta)` is *kept in the generator* for the next such draw: `randn(3)`
     uses 2 pairs and keeps one sample, so a following `randn(3)` needs only 1 more pair.
     `manual_seed` throws the kept sample away.
5. **Integers.** `randint(low, high)` is `low + draw % (high - low)`, one 32-bit draw per element
   (a 64-bit draw when high - low >= 2**28). `random_()` with no range uses `draw % 2**63` for
   int64 (64-bit draws), `draw % 2**31` for int32, `draw % (2**24 + 1)` for float32 and
   `draw % (2**53 + 1)` for float64 (the largest integers they hold exactly).
6. **Everything else is built from these.** `bernoulli_(p)` keeps `u < p` for a uniform u (53
   bits; 24 bits when p is a float32 tensor); `exponential_(lambd)` is `(-1 / lambd) * log1p(-u)`;
   `randperm(n)` swaps element i with element `i + draw % (n - i)` (Fisher-Yates);
   `multinomial` with replacement searches a uniform in the cumulative probabilities, and
   `multinomial` without replacement (or with a single sample) takes the largest `p / q` for
   exponential q (the "Gumbel-max" trick).

`device="cuda"` makes the numbers on the host, as for the CPU, and copies them to the GPU: the same
seed gives the same numbers on both devices (PyTorch's CUDA generator, Philox, gives others).

All these are checked bit for bit against torch 2.13 on an x86-64 CPU with AVX2 (see
tests/test_random_stream.py). What is *not* reproduced exactly:
- On Intel CPUs, PyTorch builds with MKL (the x86-64 wheels) draw `bernoulli_(p)` with a float p
  (and so dropout's mask) through MKL's own generator, seeded by one 32-bit draw (so says
  DistributionKernels.cpp; this could not be checked on the AMD CPU the tests ran on). Here it
  always takes the portable path above, which is what PyTorch does on AMD and ARM CPUs.
- numpy has no fused multiply-add. A float32 one (the AVX2 polynomials, `normal_(mean, std)`,
  `uniform_(a, b)`) is computed in float64, where the product is exact, and rounded to float32:
  that equals one rounding except when the float64 sum lands exactly halfway between two float32
  numbers (about one time in 2**29; none in the tests' millions of samples). A float64 one is
  built from exact products and sums (ranges.fma64, shared with linspace), correct except in rare
  near-ties. The compiled path (below) uses the CPU's fma instruction, as PyTorch does: 40
  million float32 and 10 million float64 normals came out the same on both paths.
- CPUs without AVX2 (and PyTorch builds for ARM) use other float32 log/sin/cos for float32
  normals: PyTorch's values there differ from these in the last bit now and then.
- Floating-point `random_(from, to)` beyond +-2**24 (float32) or +-2**53 (float64): PyTorch warns
  and shifts the bounds; here it is an error.
- Speed (benchmarks/random_stream.py). This file's numpy code is the reference, written to be
  read: a million float32 normals take it 15 to 20 times as long as PyTorch (the twist runs once
  per 624 numbers, 1603 numpy steps of ~12 calls each; each fused multiply-add takes two numpy
  passes). So the same steps also exist compiled with numba (backend/cpu_random.py), at about
  PyTorch's speed: loaded by the first draw of `compiled_from` (10,000) numbers or more, they then
  make every draw. Loading them imports numba and its machine code (about a second, once per
  process; the first time on a machine it also compiles them, several seconds more).
"""

import contextlib
import functools
import math
import numbers
import os

import numpy as np

from . import storage, types
from .creation import _finish, _shape, _size
from .layout import laid_out_as
from .ops import random_fills
from .ranges import fma64  # float64 a * b + c rounded once (numpy has no fused multiply-add)
from .tensor import Tensor, _make

# ---- the engine: Mersenne Twister mt19937 ----------------------------------------------------

STATE_SIZE = 624  # words of state
SHIFT = 397  # the twist of word i mixes in word i + 397
MATRIX_A = np.uint32(0x9908B0DF)  # xored in when the twisted pair's low bit is 1
UPPER_MASK = np.uint32(0x80000000)  # the top bit of word i ...
LOWER_MASK = np.uint32(0x7FFFFFFF)  # ... joined to the 31 low bits of word i + 1
DEFAULT_SEED = 67280421310721  # PyTorch's default generator starts from this seed


# ---- the compiled path ------------------------------------------------------------------------
#
# backend/cpu_random.py runs the same steps as this file, compiled with numba: a million normals in
# a few milliseconds instead of a hundred. Loading it (importing numba and its machine code) takes
# about a second, once: more than numpy spends on a small draw. So it is loaded by the first draw
# of `compiled_from` numbers or more, and from then on it makes every draw, small ones included
# (a call into compiled code costs less than a numpy call). compiled_from = None, or
# AUTOGRAD_LAB_RANDOM=numpy in the environment, keeps every draw on the numpy code of this file;
# so does a missing numba.
compiled_from = None if os.environ.get("AUTOGRAD_LAB_RANDOM") == "numpy" else 10_000
_compiled = None  # backend.cpu_random once loaded (False: numba could not be imported)


def _compiled_path(n):
    """The compiled module if it should make a draw of n numbers, else None (use numpy)."""
    global _compiled
    if compiled_from is None:
        return None
    if _compiled is None and n >= compiled_from:
        try:
            from .backend import cpu_random
        except (ImportError, RuntimeError):  # no numba, or nowhere to cache its machine code:
            cpu_random = False  # the numpy code does everything
        _compiled = cpu_random
    return _compiled or None


def _twist(old, new, scratch):
    """Write the 624 words that follow the state `old` into `new` (both uint32 arrays of 624).

    Word i of the new block is `old[i + 397] ^ twist(old[i], old[i + 1])`. The pair
    (old[i], old[i + 1]) is always read before it is overwritten (except word 0 for i = 623),
    so all 623 twists are computed at once. The word at i + 397 is past the end of the block for
    i >= 227: it is then new word i - 227, already computed, so the new block is made in three
    slices of at most 227 words, each reading the one before. `scratch`: two uint32 arrays of
    623 words to work in (every operation writes into them with out=, as this runs once per
    624 numbers: 1603 times for a million).
    """
    twisted, low_bits = scratch
    # twist(u, v) = (top bit of u, 31 low bits of v) >> 1, xor MATRIX_A when v is odd
    np.bitwise_and(old[:-1], UPPER_MASK, out=twisted)
    np.bitwise_and(old[1:], LOWER_MASK, out=low_bits)
    np.bitwise_or(twisted, low_bits, out=twisted)
    np.right_shift(twisted, 1, out=twisted)
    np.bitwise_and(old[1:], 1, out=low_bits)
    np.multiply(low_bits, MATRIX_A, out=low_bits)  # MATRIX_A where v is odd, else 0
    np.bitwise_xor(twisted, low_bits, out=twisted)
    first = STATE_SIZE - SHIFT  # 227
    np.bitwise_xor(old[SHIFT:], twisted[:first], out=new[:first])
    np.bitwise_xor(new[:first], twisted[first : 2 * first], out=new[first : 2 * first])
    np.bitwise_xor(new[first : SHIFT - 1], twisted[2 * first :], out=new[2 * first : -1])
    # the last word pairs with word 0 of the *new* block (plain Python ints: one word)
    u, v = int(old[-1]), int(new[0])
    mixed = (u & 0x80000000) | (v & 0x7FFFFFFF)
    new[-1] = int(new[SHIFT - 1]) ^ (mixed >> 1) ^ (0x9908B0DF if v & 1 else 0)


def _temper(words):
    """Mix the bits of raw state words into the numbers handed out (in place)."""
    words ^= words >> 11
    words ^= (words << 7) & np.uint32(0x9D2C5680)
    words ^= (words << 15) & np.uint32(0xEFC60000)
    words ^= words >> 18
    return words


class MersenneTwister:
    """The mt19937 engine, as PyTorch keeps it: 624 words, `left` and `next` counters.

    `next` is the index of the next word to hand out; `left - 1` words are left before the next
    twist (`left` is 1 right after seeding: the first draw twists).
    """

    def __init__(self, seed=5489):
        self.seed(seed)

    def seed(self, seed):
        word = int(seed) & 0xFFFFFFFF
        state = [word]
        for j in range(1, STATE_SIZE):  # a recurrence: each word needs the one before
            word = (1812433253 * (word ^ (word >> 30)) + j) & 0xFFFFFFFF
            state.append(word)
        self.state = np.array(state, dtype=np.uint32)
        self.left, self.next = 1, 0

    def random(self, n):
        """The next n tempered 32-bit words, as a uint32 array."""
        out = np.empty(n, dtype=np.uint32)
        compiled = _compiled_path(n)
        if compiled:  # the same words, made one by one in machine code
            self.left, self.next = compiled.draw_words(self.state, self.left, self.next, out)
            return out
        # words still waiting in the current block
        take = min(n, self.left - 1)
        out[:take] = self.state[self.next : self.next + take]
        self.next += take
        self.left -= take
        filled = take
        if filled < n:
            # Twist block after block straight into `out`: each block is made from the one
            # before it, so the only copy is the last block, which becomes the new state.
            blocks = -(-(n - filled) // STATE_SIZE)
            stream = np.empty((blocks + 1) * STATE_SIZE, dtype=np.uint32)
            stream[:STATE_SIZE] = self.state
            scratch = np.empty((2, STATE_SIZE - 1), dtype=np.uint32)
            for b in range(blocks):
                block = stream[b * STATE_SIZE : (b + 1) * STATE_SIZE]
                _twist(block, stream[(b + 1) * STATE_SIZE : (b + 2) * STATE_SIZE], scratch)
            rest = n - filled
            out[filled:] = stream[STATE_SIZE : STATE_SIZE + rest]
            self.state = stream[-STATE_SIZE:].copy()
            used = rest - (blocks - 1) * STATE_SIZE  # words used from the last block
            self.next, self.left = used, STATE_SIZE - used + 1
        return _temper(out)

    def random64(self, n):
        """n 64-bit draws: two 32-bit words each, the first one giving the high half."""
        compiled = _compiled_path(n)
        if compiled:  # each pair of words becomes one draw in the same 8 bytes
            words = self.random(2 * n)
            draws = words.view(np.uint64)
            compiled.join_pairs(words, draws)
            return draws
        words = self.random(2 * n).astype(np.uint64)
        return (words[0::2] << np.uint64(32)) | words[1::2]


# ---- the generator: an engine, its seed, and the spare normal sample ----------------------------


class Generator:
    """A seeded random-number generator that draws PyTorch's CPU numbers.

    g = autograd_lab.Generator().manual_seed(2147483647)
    autograd_lab.rand(2, generator=g)   # the same as torch.rand(2, generator=g) in PyTorch
    """

    def __init__(self, device="cpu"):
        if str(device) not in ("cpu", "cuda") and not str(device).startswith("cuda:"):
            raise ValueError(
                f"Generator(device=...) expects 'cpu' (or 'cuda'); got {device!r}. Fix: to seed "
                "a generator, write Generator().manual_seed(seed), as in PyTorch."
            )
        self.device = device
        self.engine = MersenneTwister(DEFAULT_SEED)
        self._initial_seed = DEFAULT_SEED
        # Box-Muller makes normals in pairs; the scalar path keeps the second one here.
        self.next_double_normal_sample = None
        self.next_float_normal_sample = None  # kept only for get_state()'s layout

    def manual_seed(self, seed):
        """Seed from an integer (any Python int: negative seeds wrap around 2**64)."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise TypeError(
                f"manual_seed expected an integer seed, got {type(seed).__name__} ({seed!r}). "
                "Fix: pass an int such as manual_seed(0)."
            )
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise ValueError(
                f"Overflow when unpacking long: the seed {seed} does not fit in 64 bits. "
                "Fix: use a seed in [-2**63, 2**64)."
            )
        seed %= 2**64  # PyTorch stores the seed as an unsigned 64-bit number
        self.engine.seed(seed)
        self._initial_seed = seed
        self.next_double_normal_sample = None
        self.next_float_normal_sample = None
        return self

    def seed(self):
        """Seed from the operating system's entropy (not reproducible); return the seed."""
        value = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(value)
        return value

    def initial_seed(self):
        """The seed last given to manual_seed (or seed())."""
        return self._initial_seed

    # -- draws, used by the functions below --

    def random(self, n):
        return self.engine.random(n)

    def random64(self, n):
        return self.engine.random64(n)

    # -- saving and restoring: the same 5056 bytes as torch.Generator.get_state() --

    def get_state(self):
        """The whole state as a uint8 tensor of 5056 bytes, laid out as PyTorch lays it out."""
        return _make(_pack_state(self))

    def set_state(self, new_state):
        """Restore a state from get_state() (ours or PyTorch's: the bytes are the same)."""
        data = getattr(new_state, "_data", new_state)
        data = np.asarray(data)
        if data.dtype != np.uint8 or data.size != STATE_BYTES:
            raise RuntimeError(
                f"set_state expects a uint8 tensor of {STATE_BYTES} bytes (from get_state()), got "
                f"{data.dtype} with {data.size} elements. Fix: pass what get_state() returned."
            )
        _unpack_state(self, data.reshape(-1))
        return self

    def __repr__(self):
        return f"<autograd_lab.Generator seed={self._initial_seed}>"


# The layout of PyTorch's CPU generator state (little-endian, with C struct padding):
_STATE_LAYOUT = np.dtype(
    {
        "names": [
            "initial_seed",
            "left",
            "seeded",
            "next",
            "state",
            "normal_x",
            "normal_y",
            "normal_rho",
            "normal_is_valid",
            "next_float_normal_sample",
            "is_next_float_normal_sample_valid",
        ],
        "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", 624), "<f8", "<f8", "<f8", "<i4"]
        + ["<f4", "u1"],
        "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
        "itemsize": 5056,
    }
)
STATE_BYTES = _STATE_LAYOUT.itemsize


def _pack_state(generator):
    record = np.zeros((), dtype=_STATE_LAYOUT)
    engine = generator.engine
    record["initial_seed"] = generator._initial_seed
    record["left"], record["seeded"], record["next"] = engine.left, 1, engine.next
    record["state"] = engine.state.astype(np.uint64)  # PyTorch keeps each word in 64 bits
    if generator.next_double_normal_sample is not None:
        record["normal_y"] = generator.next_double_normal_sample
        record["normal_is_valid"] = 1
    if generator.next_float_normal_sample is not None:
        record["next_float_normal_sample"] = generator.next_float_normal_sample
        record["is_next_float_normal_sample_valid"] = 1
    return np.frombuffer(record.tobytes(), dtype=np.uint8).copy()


def _unpack_state(generator, data):
    record = np.frombuffer(data.tobytes(), dtype=_STATE_LAYOUT)[0]
    left, nxt = int(record["left"]), int(record["next"])
    if not (0 < left <= STATE_SIZE and nxt <= STATE_SIZE):
        raise RuntimeError(
            "set_state: this is not a valid generator state (its counters are out of range). "
            "Fix: pass a tensor returned by get_state() or torch.get_rng_state()."
        )
    generator.engine.state = record["state"].astype(np.uint32)
    generator.engine.left, generator.engine.next = left, nxt
    generator._initial_seed = int(record["initial_seed"])
    valid = bool(record["normal_is_valid"])
    generator.next_double_normal_sample = float(record["normal_y"]) if valid else None
    valid = bool(record["is_next_float_normal_sample_valid"])
    generator.next_float_normal_sample = (
        float(record["next_float_normal_sample"]) if valid else None
    )


default_generator = Generator().manual_seed(DEFAULT_SEED)


def _generator(generator):
    """The generator to draw from: `generator=` if given, else the default one."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(
            f"generator= expects an autograd_lab.Generator, got {type(generator).__name__}. "
            "Fix: g = autograd_lab.Generator().manual_seed(0); then pass generator=g."
        )
    return generator


# ---- torch.random's functions -----------------------------------------------------------------


def manual_seed(seed):
    """Seed the default generator: the same seed gives the same numbers as PyTorch's."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator from the operating system (not reproducible)."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, a uint8 tensor (as torch.get_rng_state())."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, **_ignored):
    """Run a block and then put the default generator back as it was before it."""
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)


# ---- uniform floats ------------------------------------------------------------------------------


def uniform_bits_to_float(words, dtype):
    """[0, 1) floats from draws: 24 low bits of 32-bit draws (float32), 53 of 64-bit (float64)."""
    if dtype == np.float32:
        return (words & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0**-24)
    return (words & np.uint64(2**53 - 1)).astype(np.float64) * (2.0**-53)


def uniform_floats(generator, n, dtype):
    """n [0, 1) floats of `dtype` from n new draws (32-bit ones for float32, 64-bit for float64)."""
    words = generator.random(n) if dtype == np.float32 else generator.random64(n)
    compiled = _compiled_path(n)
    if compiled:  # each float is written over its own draw: one array for both
        floats = words.view(np.float32 if dtype == np.float32 else np.float64)
        (compiled.uniform_float32 if dtype == np.float32 else compiled.uniform_float64)(
            words, floats
        )
        return floats
    return uniform_bits_to_float(words, dtype)


def uniform_array(generator, n, dtype, low=0.0, high=1.0):
    """n uniform numbers on [low, high) of `dtype` (float32 or float64), as uniform_ makes them."""
    generator = _generator(generator)
    dtype = np.dtype(dtype)
    x = uniform_floats(generator, n, dtype)
    low_, high_ = dtype.type(low), dtype.type(high)
    if low_ == 0 and high_ == 1:
        return x
    compiled = _compiled_path(n)
    if compiled:
        compiled.scale_uniform(x, low_, high_, x)
        return x
    # x * (high - low) + low, rounded once (PyTorch's compiler fuses it into one multiply-add)
    values = _fma(x, high_ - low_, low_, dtype)
    return np.where(values == high_, low_, values)  # rounded up to `high`: wrap to `low`


def _fma(a, b, c, dtype):
    """a * b + c rounded once to `dtype` (a fused multiply-add)."""
    if dtype == np.float32:
        # a * b is exact in float64 (24 + 24 bits); the sum is rounded to float64 and then to
        # float32, which equals a single rounding except in very rare ties.
        exact = a.astype(np.float64) * np.float64(b) + np.float64(c)
        return exact.astype(np.float32)
    return fma64(a, b, c)


# ---- normal samples ------------------------------------------------------------------------------

# The float32 path's constants, as the AVX2 code spells them (each rounded to float32)
_F = np.float32
_LOG_COEFFICIENTS = [_F(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1)] + [
    _F(c)
    for c in (-1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1)
    + (-2.4999993993e-1, 3.3333331174e-1)
]
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_SQRT_HALF = _F(0.707106781186547524)
_FOUR_OVER_PI = _F(1.27323954473516)
_MINUS_DP = (_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8))
_SIN_COEFFICIENTS = (_F(-1.9515295891e-4), _F(8.3321608736e-3), _F(-1.6666654611e-1))
_COS_COEFFICIENTS = (_F(2.443315711809948e-005), _F(-1.388731625493765e-003))
_COS_COEFFICIENTS += (_F(4.166664568298827e-002),)
_TWO_PI_FLOAT = _F(2.0 * math.pi)


def _fma32(a, b, c):
    """float32 a * b + c rounded once (the AVX2 build fuses these multiply-adds).

    a * b is exact in float64 (24 + 24 bits); the sum is rounded to float64 and then to float32,
    which equals one rounding except, in principle, in very rare ties. Two numpy calls: the
    product in float64, and the sum written straight into a float32 array.
    """
    product = np.multiply(a, b, dtype=np.float64)
    out = np.empty(product.shape, dtype=np.float32)
    return np.add(product, c, out=out, casting="same_kind")


def _log_avx2(x):
    """Natural log of positive float32 values, the cephes polynomial of avx_mathfun.h."""
    bits = np.maximum(x, _F(1.1754944e-38)).view(np.uint32)  # no subnormals
    exponent = (bits >> 23).astype(np.int32) - 127 + 1
    mantissa = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)  # [.5, 1)
    # Fold the mantissa into [sqrt(1/2), sqrt(2)) - 1, so the polynomial's argument is small.
    small = mantissa < _SQRT_HALF
    e = exponent.astype(np.float32) - small.astype(np.float32)
    m = (mantissa - _F(1)) + np.where(small, mantissa, _F(0))
    z = m * m
    y = _fma32(m, _LOG_COEFFICIENTS[0], _LOG_COEFFICIENTS[1])
    for coefficient in _LOG_COEFFICIENTS[2:]:
        y = _fma32(y, m, coefficient)
    # The compiler fused these multiply-adds in its own way; this order is the one that
    # reproduces torch's bits (z * 0.5 and e * _LOG_Q2 are exact, so only e * _LOG_Q1 rounds).
    y = _fma32(y * m, z, e * _LOG_Q1)
    y = _fma32(z, _F(-0.5), y)
    return _fma32(e, _LOG_Q2, m + y)


def _sincos_avx2(x):
    """(sin x, cos x) of non-negative float32 values, as sincos256_ps of avx_mathfun.h."""
    # Which eighth of the circle: j is the even integer nearest above x * 4/pi.
    j = (x * _FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    # x - j * pi/4 in three pieces of pi/4, so the subtraction loses no precision
    for piece in _MINUS_DP:
        x = _fma32(y, piece, x)
    sin_sign = (j & 4) != 0
    cos_sign = ((j - 2) & 4) == 0
    use_sin_polynomial = (j & 2) != 0
    z = x * x
    cosine = _fma32(z, _COS_COEFFICIENTS[0], _COS_COEFFICIENTS[1])
    cosine = _fma32(cosine, z, _COS_COEFFICIENTS[2])
    cosine = _fma32(cosine * z, z, -(z * _F(0.5))) + _F(1)  # z * 0.5 is exact
    sine = _fma32(z, _SIN_COEFFICIENTS[0], _SIN_COEFFICIENTS[1])
    sine = _fma32(sine, z, _SIN_COEFFICIENTS[2])
    sine = _fma32(sine * z, x, x)
    sin = np.where(use_sin_polynomial, cosine, sine)
    cos = np.where(use_sin_polynomial, sine, cosine)
    return np.where(sin_sign, -sin, sin), np.where(cos_sign, -cos, cos)


_PIECE = 16 * 1024  # uniforms per piece: a piece's temporaries stay in the CPU's cache


def _box_muller_blocks(u, mean, std):
    """Turn uniforms (a multiple of 16 of them, blocks of 16) into normals, PyTorch's way.

    The normals are written over the uniforms (each piece is read before it is overwritten), and
    that array is returned.
    """
    compiled = _compiled_path(u.size)
    if compiled and (u.dtype == np.float32 or compiled.LIBM_MATH):
        box_muller = (
            compiled.box_muller_float32 if u.dtype == np.float32 else compiled.box_muller_float64
        )
        box_muller(u, mean, std, not (mean == 0 and std == 1), u)
        return u
    for start in range(0, u.size, _PIECE):  # piece by piece: the same numbers, just faster
        u[start : start + _PIECE] = _box_muller_piece(u[start : start + _PIECE], mean, std)
    return u


def _libm(function, x):
    """`function` (math.log, math.cos, ...) of each float64 in x, computed by the C library, as
    PyTorch computes it. numpy's own float64 log, cos and sin run SIMD code on CPUs with AVX-512,
    whose last bit sometimes differs from the C library's: a normal would then differ from
    PyTorch's in its last bit."""
    values = map(function, x.ravel().tolist())
    return np.fromiter(values, dtype=np.float64, count=x.size).reshape(x.shape)


def _box_muller_piece(u, mean, std):
    blocks = u.reshape(-1, 2, 8)  # per block: 8 values of u1, then 8 values of u2
    u1, u2 = np.ascontiguousarray(blocks[:, 0]), np.ascontiguousarray(blocks[:, 1])
    if u.dtype == np.float32:
        radius = np.sqrt(_F(-2) * _log_avx2(_F(1) - u1))
        sin, cos = _sincos_avx2(_TWO_PI_FLOAT * u2)
        first, second = radius * cos, radius * sin
    else:
        radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - u1))
        theta = (2.0 * math.pi) * u2
        first, second = radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)
    if not (mean == 0 and std == 1):  # fma(x, std, mean)
        first = _fma(first, std, mean, u.dtype)
        second = _fma(second, std, mean, u.dtype)
    return np.stack([first, second], axis=1).reshape(-1)


def normal_array(generator, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """n normal samples N(mean, std**2) of `dtype`, as normal_ makes them (see the docstring)."""
    generator = _generator(generator)
    dtype = np.dtype(dtype)
    if n >= 16 and contiguous:
        mean, std = dtype.type(mean), dtype.type(std)
        values = uniform_array(generator, n, dtype)
        whole = n - n % 16
        _box_muller_blocks(values[:whole], mean, std)  # the normals replace the uniforms
        if n % 16:
            # PyTorch draws 16 new uniforms for the last 16 elements and redoes them; the
            # uniforms of the tail drawn first are never used.
            values[-16:] = _box_muller_blocks(uniform_array(generator, 16, dtype), mean, std)
        return values
    return _normal_one_by_one(generator, n, mean, std).astype(dtype)


def _normal_one_by_one(generator, n, mean, std):
    """The scalar path: float64 Box-Muller, the pair's second value kept for the next call."""
    values = []
    if n > 0 and generator.next_double_normal_sample is not None:
        values.append(generator.next_double_normal_sample)
        generator.next_double_normal_sample = None
    pairs = (n - len(values) + 1) // 2
    u = uniform_floats(generator, 2 * pairs, np.float64).reshape(-1, 2)
    u1, u2 = u[:, 0], u[:, 1]
    radius = np.sqrt(-2.0 * _libm(math.log1p, -u2))
    theta = 2.0 * math.pi * u1
    both = np.stack([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], axis=1)
    both = both.reshape(-1)
    values = np.concatenate([np.array(values, dtype=np.float64), both])
    if len(values) > n:  # one sine left over: the generator keeps it
        generator.next_double_normal_sample = float(values[-1])
        values = values[:n]
    return fma64(values, std, mean)


# ---- integers --------------------------------------------------------------------------------


def integers_array(generator, n, low, high, dtype=np.int64):
    """n integers uniform on [low, high): low + draw % (high - low), as random_(low, high)."""
    generator = _generator(generator)
    span = int(high) - int(low)
    if span <= 0:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}. "
            "Fix: the upper bound is exclusive, e.g. randint(0, 10) for 0..9."
        )
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        digits = np.finfo(dtype).nmant + 1  # 24 for float32, 53 for float64
        if not (-(2**digits) <= low and high - 1 <= 2**digits):
            raise RuntimeError(
                f"random integers for {dtype} must lie in [-2**{digits}, 2**{digits}] (where "
                f"{dtype} holds every integer); got [{low}, {high}). Fix: dtype=int64, or a "
                "smaller range (PyTorch warns and shifts such bounds; that is not reproduced)."
            )
    else:  # integers, and bool (which holds 0 and 1)
        smallest, largest = (
            (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        )
        if not (smallest <= low and high - 1 <= largest):
            raise RuntimeError(
                f"random integers in [{low}, {high}) do not fit in {dtype} ([{smallest}, "
                f"{largest}]): 'to - 1' is out of bounds for {dtype}. Fix: a larger dtype such as "
                "int64, or a smaller range."
            )
    # 64-bit draws from a range of 2**28 on, where `draw % span` of a 32-bit draw would favour
    # the small numbers too much (by up to 1/16)
    wide = span >= 2**28
    draws = generator.random64(n) if wide else generator.random(n)
    compiled = _compiled_path(n)
    if compiled:
        values = np.empty(n, dtype=np.int64)
        compiled.integers(draws, span, low, values)
        return values.astype(dtype, copy=False)
    values = (draws.astype(np.uint64) % np.uint64(span)).astype(np.int64) + np.int64(low)
    return values.astype(dtype)


def random_integers_array(generator, n, dtype):
    """random_() with no range: from 0 to the largest integer `dtype` holds exactly."""
    generator = _generator(generator)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (generator.random(n) & 1).astype(np.bool_)
    if dtype in (np.int64, np.float64):
        top = 2**63 if dtype == np.int64 else 2**53 + 1
        return (generator.random64(n) % np.uint64(top)).astype(dtype)
    if dtype == np.float32:
        top = 2**24 + 1
    elif dtype == np.float16:
        top = 2**11 + 1
    else:
        top = int(np.iinfo(dtype).max) + 1
    return (generator.random(n) % np.uint32(top) if top < 2**32 else generator.random(n)).astype(
        dtype
    )


def randperm_array(generator, n):
    """A random permutation of 0..n-1 (int64), as torch.randperm makes it on the CPU."""
    generator = _generator(generator)
    order = np.arange(n, dtype=np.int64)
    if n < (2**32 - 1) // 20:
        # Fisher-Yates: element i swaps with one of the elements i..n-1
        offsets = generator.random(max(n - 1, 0)).astype(np.int64) % np.arange(n, 1, -1)
        compiled = _compiled_path(n)
        if compiled:
            compiled.shuffle(order, offsets)
            return order
        for i, offset in enumerate(offsets.tolist()):
            j = i + offset
            order[i], order[j] = order[j], order[i]
        return order
    # huge n: the "inside-out" variant with 64-bit draws (PyTorch's path for n >= ~2**28)
    draws = generator.random64(n)
    for i in range(n):
        j = int(draws[i] % np.uint64(i + 1))
        order[i] = order[j]
        order[j] = i
    return order


# ---- built on the uniforms: bernoulli, exponential, multinomial --------------------------------------


def bernoulli_array(generator, p, n=None):
    """0/1 float64 samples: 1 where a uniform draw is below p.

    p: a Python float (53-bit uniforms, n of them) or a numpy array of probabilities (one draw
    per element; 24-bit uniforms when p is float32, as PyTorch compares in p's precision).
    """
    generator = _generator(generator)
    if isinstance(p, np.ndarray):
        if p.dtype == np.float32:
            u = uniform_floats(generator, p.size, np.float32)
        else:
            u = uniform_floats(generator, p.size, np.float64)
            p = p.astype(np.float64)
        return (u.reshape(p.shape) < p).astype(np.float64)
    u = uniform_floats(generator, n, np.float64)
    return (u < float(p)).astype(np.float64)


def exponential_array(generator, n, lambd=1.0):
    """n float64 samples of Exp(lambd): -1/lambd * log1p(-u) for 53-bit uniforms u."""
    generator = _generator(generator)
    if not (lambd > 0 and math.isfinite(lambd)):
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={lambd}. Fix: the rate lambd "
            "is the inverse of the mean, e.g. exponential_(1.0)."
        )
    u = uniform_floats(generator, n, np.float64)
    return (-1.0 / lambd) * _libm(math.log1p, -u)


def multinomial_indices(generator, probs, num_samples, replacement=False):
    """Indices (int64) drawn from the rows of a 1-d or 2-d numpy array of weights."""
    generator = _generator(generator)
    probs = np.asarray(probs)
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {probs.ndim} dimensions")
    if probs.dtype.kind != "f":
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got {probs.dtype}. "
            "Fix: probs.float()."
        )
    rows = probs.reshape(math.prod(probs.shape[:-1]), probs.shape[-1])  # (-1 fails for no rows)
    categories = rows.shape[1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > categories:
        raise RuntimeError(
            f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
            f"({num_samples} > {categories}). Fix: replacement=True, or fewer samples."
        )
    # (the array methods .all() and .any(): this runs once per character in a makemore loop)
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement or num_samples == 1:
        # Gumbel-max: with q ~ Exp(1), argmax(p / q) picks index i with probability p_i; the
        # num_samples largest give a sample without replacement.
        # q is drawn in the memory order of the weights (PyTorch: empty_like(probs).exponential_())
        q = exponential_array(generator, rows.size).astype(rows.dtype)
        q = _in_memory_order(q, rows.shape, rows.strides)
        keys = rows / q
        if num_samples == 1:
            chosen = keys.argmax(axis=1)[:, None]
        else:  # largest first; ties keep the lower index
            chosen = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        chosen = np.empty((rows.shape[0], num_samples), dtype=np.int64)
        for r, row in enumerate(rows):
            cumulative = np.cumsum(row)  # in the row's precision, left to right
            cumulative = cumulative / cumulative[-1]
            cumulative[-1] = 1
            u = uniform_floats(generator, num_samples, np.float64)
            # the first category whose cumulative probability reaches u
            chosen[r] = np.searchsorted(cumulative.astype(np.float64), u, side="left")
    chosen = chosen.astype(np.int64)
    return chosen.reshape(probs.shape[:-1] + (num_samples,))


# ---- tensors: in-place fills --------------------------------------------------------------------
#
# Tensor's random fills live here, next to the generator they draw from: `x.uniform_(0, 1)` is
# `autograd_lab.random.uniform_(x, 0, 1)` (they are bound to Tensor at the end of this file).
# While recording, each is a node of the graph whose gradient is zero (ops/random_fills.py).


def _in_memory_order(values, shape, strides):
    """`values` (drawn one after another) as an array of `shape`, the i-th draw at the i-th place
    of the memory order that `strides` give: PyTorch fills a tensor in its memory order (for a
    contiguous tensor simply row-major order)."""
    order = sorted(range(len(shape)), key=lambda axis: -abs(strides[axis]))  # largest stride first
    # Lay the draws out along the axes in memory order, then view them in the tensor's own axis
    # order (a view, no copy).
    in_memory_order = values.reshape([shape[axis] for axis in order])
    return in_memory_order.transpose(np.argsort(order))


def _laid_out(tensor, values):
    """`values` (drawn one after another) in `tensor`'s shape, memory order, dtype and device."""
    values = values.astype(types.to_dtype(tensor.dtype).numpy, copy=False)
    array = _in_memory_order(values, tuple(tensor.shape), tensor.stride())
    return storage.move(array, tensor.device)


def _fill(tensor, record, draw, *inputs):
    """Store the numbers `draw()` makes into `tensor` in place, recorded as the node `record`.
    The record calls `draw` only once the in-place checks have passed: a refused fill (of a leaf
    that requires grad, say) draws nothing, as in PyTorch."""

    def laid_out():
        return _laid_out(tensor, draw())

    return tensor._inplace(record.apply, *inputs, check_first=True, draw=laid_out)


def _float_dtype(dtype, method, n=1):
    """The numpy dtype of a tensor of n elements that `method` fills with floats. PyTorch has no
    kernel for other dtypes (NotImplementedError); it never runs one for no elements, except
    uniform's, which checks its bounds first."""
    dtype = types.to_dtype(dtype)
    if not dtype.is_floating_point and (n > 0 or method == "uniform_"):
        raise types.not_implemented_for(method, dtype)
    return np.dtype(dtype.numpy)


def _uniform_values(generator, n, dtype, from_, to):
    if not from_ <= to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}. "
            "Fix: swap the bounds."
        )
    if dtype == np.float16:  # made in float32, then rounded (not checked bit for bit)
        values = uniform_array(generator, n, np.float32, from_, to).astype(np.float16)
        values[values == np.float16(to)] = np.float16(from_)
        return values
    return uniform_array(generator, n, dtype, from_, to)


def _normal_values(generator, n, dtype, mean, std, contiguous=True):
    if not std >= 0.0:
        raise RuntimeError(
            f"normal expects std >= 0.0, but found std {std}. Fix: std is a standard deviation."
        )
    if n == 0:  # nothing drawn (an empty tensor of any dtype)
        return np.empty(0, dtype=dtype)
    if dtype == np.float16 and n >= 16 and contiguous:
        # float16: whole blocks of 16 uniforms, one block at a time, in float32 (no extra tail
        # uniforms as for float32, which draws all its uniforms first)
        values = np.empty(n, dtype=np.float32)
        whole = n - n % 16
        u = uniform_array(generator, whole, np.float32)
        values[:whole] = _box_muller_blocks(u, np.float32(mean), np.float32(std))
        if n % 16:
            u = uniform_array(generator, 16, np.float32)
            values[-16:] = _box_muller_blocks(u, np.float32(mean), np.float32(std))
        return values.astype(np.float16)
    return normal_array(generator, n, dtype, mean, std, contiguous)


def uniform_(tensor, from_=0.0, to=1.0, *, generator=None):
    """Fill `tensor` with numbers drawn uniformly from [from_, to)."""
    n = tensor.numel()
    dtype = _float_dtype(tensor.dtype, "uniform_", n)
    draw = functools.partial(_uniform_values, generator, n, dtype, from_, to)
    return _fill(tensor, random_fills.Uniform, draw)


def normal_(tensor, mean=0.0, std=1.0, *, generator=None):
    """Fill `tensor` with samples of N(mean, std**2)."""
    n, contiguous = tensor.numel(), tensor.is_contiguous()
    dtype = _float_dtype(tensor.dtype, "normal_", n)
    draw = functools.partial(_normal_values, generator, n, dtype, mean, std, contiguous)
    return _fill(tensor, random_fills.Normal, draw)


def random_(tensor, from_=None, to=None, *, generator=None):
    """Fill with integers: random_() from 0 to the dtype's largest (exact) integer,
    random_(to) from [0, to), random_(from_, to) from [from_, to)."""
    dtype = np.dtype(types.to_dtype(tensor.dtype).numpy)
    n = tensor.numel()
    if from_ is None and to is None:
        record = random_fills.RandomInteger
        draw = functools.partial(random_integers_array, generator, n, dtype)
    else:
        record = random_fills.RandomInRange if to is not None else random_fills.RandomBelow
        if to is None:  # random_(to)
            from_, to = 0, from_
        draw = functools.partial(integers_array, generator, n, int(from_), int(to), dtype)
    return _fill(tensor, record, draw)


def exponential_(tensor, lambd=1.0, *, generator=None):
    """Fill with samples of the exponential distribution of rate `lambd` (mean 1 / lambd)."""
    n = tensor.numel()
    if n > 0 and not tensor.is_floating_point():
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution: dtype must be a "
            f"floating point, but you specified {tensor.dtype}. Fix: make the tensor with "
            "dtype=torch.float32 (or call .float() first)."
        )
    draw = functools.partial(exponential_array, generator, n, lambd)
    return _fill(tensor, random_fills.Exponential, draw)


def bernoulli_(tensor, p=0.5, *, generator=None):
    """Fill with 0 or 1: 1 with probability p (a number, or a tensor of probabilities)."""
    if isinstance(p, Tensor):
        probabilities = np.broadcast_to(p.detach().cpu().numpy(), tuple(tensor.shape))
        _check_probabilities(probabilities)
        flat = np.ascontiguousarray(probabilities).reshape(-1)
        draw = functools.partial(bernoulli_array, generator, flat)
        return _fill(tensor, random_fills.BernoulliWithTensor, draw, p)
    if not 0 <= p <= 1:
        raise RuntimeError(
            f"bernoulli_ expects p to be in [0, 1], but got p={p}. Fix: p is a probability."
        )
    draw = functools.partial(bernoulli_array, generator, float(p), tensor.numel())
    return _fill(tensor, random_fills.BernoulliWithNumber, draw)


def _check_probabilities(probabilities):
    if probabilities.dtype.kind != "f":
        raise RuntimeError(
            f"bernoulli needs floating-point probabilities, got {probabilities.dtype}. "
            "Fix: p.float()."
        )
    if not np.all((probabilities >= 0) & (probabilities <= 1)):
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true: every probability must be in [0, 1]."
        )


# ---- tensors: new random tensors ------------------------------------------------------------------


def _empty(size, dtype, default, device):
    dtype = types.to_dtype(dtype).numpy if dtype is not None else default
    return _finish(np.zeros(_size(size), dtype=dtype), None, False, device)


def _leaf(tensor, requires_grad):
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _new(values, size, requires_grad, device):
    """A new tensor of shape `size` holding `values` (drawn in row-major order)."""
    return _leaf(_finish(values.reshape(_size(size)), None, False, device), requires_grad)


def rand(*shape, size=None, generator=None, dtype=None, requires_grad=False, device=None):
    """Uniform on [0, 1): torch.rand, the same numbers for the same seed."""
    shape = _shape(shape, size)
    dtype = _float_dtype(dtype or types.get_default_dtype(), "uniform_", math.prod(shape))
    values = _uniform_values(generator, math.prod(shape), dtype, 0.0, 1.0)
    return _new(values, shape, requires_grad, device)


def randn(*shape, size=None, generator=None, dtype=None, requires_grad=False, device=None):
    """Standard normal N(0, 1): torch.randn, the same numbers for the same seed."""
    shape = _shape(shape, size)
    dtype = _float_dtype(dtype or types.get_default_dtype(), "normal_", math.prod(shape))
    values = _normal_values(generator, math.prod(shape), dtype, 0.0, 1.0)
    return _new(values, shape, requires_grad, device)


def randint(
    low=0, high=None, size=None, *, generator=None, dtype=None, requires_grad=False, device=None
):
    """Integers uniform on [low, high): randint(high, size) or randint(low, high, size)."""
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError(
                "randint() needs a size, e.g. randint(10, (3,)) or randint(0, 10, (3,))"
            )
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() needs `high`, e.g. randint(0, 10, (3,))")
    dtype = np.dtype(types.to_dtype(dtype).numpy if dtype is not None else np.int64)
    shape = _size((size,))
    values = integers_array(generator, math.prod(shape), int(low), int(high), dtype)
    return _new(values, shape, requires_grad, device)


def randperm(n, *, generator=None, dtype=None, requires_grad=False, device=None):
    """A random permutation of 0..n-1 (int64 unless told otherwise)."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    order = randperm_array(generator, int(n))
    out = _finish(
        order.astype(types.to_dtype(dtype).numpy if dtype else np.int64), None, False, device
    )
    return _leaf(out, requires_grad)


def _like(input, dtype, device):
    """A new tensor of input's shape, laid out in memory as input is (PyTorch's preserve_format:
    the draws of randn_like(x.t()) fill it in x.t()'s memory order, column after column)."""
    dtype = types.to_dtype(dtype if dtype is not None else input.dtype).numpy
    array = laid_out_as(np.zeros(tuple(input.shape), dtype), input.detach().cpu().numpy())
    return _finish(array, None, False, device if device is not None else input.device)


def rand_like(input, *, generator=None, dtype=None, requires_grad=False, device=None):
    out = uniform_(_like(input, dtype, device), generator=generator)
    return _leaf(out, requires_grad)


def randn_like(input, *, generator=None, dtype=None, requires_grad=False, device=None):
    out = normal_(_like(input, dtype, device), generator=generator)
    return _leaf(out, requires_grad)


def randint_like(
    input, low=0, high=None, *, generator=None, dtype=None, requires_grad=False, device=None
):
    """Integers on [low, high) in the shape of `input`: randint_like(x, high) or (x, low, high)."""
    if high is None:
        low, high = 0, low
    out = random_(_like(input, dtype, device), low, high, generator=generator)
    return _leaf(out, requires_grad)


def normal(
    mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False, device=None
):
    """Normal samples. normal(mean, std, size) for numbers; with a tensor mean and/or std, one
    sample per element (their broadcast shape), recorded with a zero gradient as in PyTorch
    (NormalBackward1, 2 or 3: no reparameterization through mean + std * noise)."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal(mean, std) with numbers needs a size, e.g. normal(0, 1, (3,))")
        out = normal_(_empty((size,), dtype, np.float32, device), mean, std, generator=generator)
        return _leaf(out, requires_grad)
    if isinstance(std, Tensor) and bool((std < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    inputs = [t for t in (mean, std) if isinstance(t, Tensor)]
    mean_value = mean.detach() if isinstance(mean, Tensor) else mean
    std_value = std.detach() if isinstance(std, Tensor) else std
    if not isinstance(std, Tensor):
        # PyTorch: samples of N(0, std**2), then + mean
        empty = _empty(tuple(mean.shape), mean.dtype, None, mean.device)
        noise = normal_(empty, 0.0, std, generator=generator)
        samples, record = mean_value + noise, random_fills.NormalWithTensorMean
    else:
        template = std_value if not isinstance(mean, Tensor) else mean_value * 0 + std_value * 0
        empty = _empty(tuple(template.shape), template.dtype, None, template.device)
        noise = normal_(empty, generator=generator)
        samples = noise * std_value + mean_value  # PyTorch: N(0, 1) samples, * std, then + mean
        both = isinstance(mean, Tensor)
        record = random_fills.NormalWithTensors if both else random_fills.NormalWithTensorStd
    return record.apply(*inputs, draw=lambda: samples._data)  # (drawn: nothing can refuse)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability input[i] (or with probability p for every element).
    Recorded (BernoulliBackward0) when input requires grad, with a zero gradient."""
    if p is not None:  # input only gives the shape and dtype
        out = _empty(tuple(input.shape), input.dtype, None, input.device)
        return bernoulli_(out, p, generator=generator)
    dtype = types.to_dtype(input.dtype)
    if not dtype.is_floating_point:
        raise types.not_implemented_for("bernoulli", dtype)
    probabilities = input.detach().cpu().numpy()
    _check_probabilities(probabilities)
    values = bernoulli_array(generator, np.ascontiguousarray(probabilities).reshape(-1))
    values = storage.move(values.reshape(probabilities.shape).astype(dtype.numpy), input.device)
    return random_fills.Bernoulli.apply(input, draw=lambda: values)  # (drawn: nothing can refuse)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categories of `input` (1-d or 2-d, rows of non-negative weights).

    The makemore loop: `ix = multinomial(p, num_samples=1, replacement=True, generator=g)`.
    """
    probabilities = input.detach().cpu().numpy()
    chosen = multinomial_indices(generator, probabilities, int(num_samples), bool(replacement))
    return _finish(chosen, None, False, input.device)


# In-place fills and the sampling methods, as Tensor methods (`x.normal_()`, `p.multinomial(1)`)
Tensor.uniform_ = uniform_
Tensor.normal_ = normal_
Tensor.random_ = random_
Tensor.exponential_ = exponential_
Tensor.bernoulli_ = bernoulli_
Tensor.bernoulli = bernoulli
Tensor.multinomial = multinomial
