"""The float64 re-check: is a float32 difference from PyTorch only float32's own rounding?

Some programs magnify the last bits of float32 arithmetic: terms that cancel (`layer_norm` of
nearly equal values, a second derivative that is 0 in exact arithmetic), a remainder by a tiny
divisor. There our answer and PyTorch's can differ beyond the fuzzer's tolerance although
neither is nearer the truth: each library rounds its float32 steps in its own order.

To tell that apart from a bug, the program runs once more in PyTorch with every float32 tensor
made float64 (the leaves keep their float32 values, so it answers the same question, 2**29
times more finely). A difference is float32's noise when, element by element, our answer is no
farther from that float64 answer than NOISE times the largest error of PyTorch's float32 answer
in that tensor (plus float32's tolerance): PyTorch's own answer is that far off there, so ours
is as right as float32 allows. Where PyTorch's float32 answer is close to the float64 one and
ours is not, it is a finding.
"""

import re
from dataclasses import replace

import numpy as np

from .compare import TOLERANCE, same_values
from .runner import run

NOISE = 4  # how many times PyTorch's own float32 error our difference may be

# a literal tensor of float32 numbers: the program's leaves and written-out arguments
_FLOAT32_LITERAL = re.compile(
    r"(torch\.tensor\((?:\[[^\[\]]*\]|[^()\[\]]*), dtype=torch\.float32\))"
)


def in_float64(source):
    """`source` with its float32 tensors made float64: literals keep their float32 values."""
    source = _FLOAT32_LITERAL.sub(r"\1.double()", source)
    source = re.sub(r"torch\.float32\b(?!\)\.double\(\))", "torch.float64", source)
    return re.sub(r"\.float\(\)", ".double()", source)


def float64_record(lines, torch):
    """What PyTorch gives for the program's lines run in float64 (default dtype float64 too)."""
    lines64 = [replace(line, source=in_float64(line.source)) for line in lines]
    return run(None, torch, lines64, default_dtype=torch.float64)


def only_float32_noise(ours, theirs, exact):
    """Whether our record `ours` of one expression differs from PyTorch's `theirs` by no more
    than float32's noise, judged against `exact`, PyTorch's float64 record of it."""
    arrays = _float_arrays(ours), _float_arrays(theirs), _float_arrays(exact)
    if None in arrays or len({len(a) for a in arrays}) != 1 or not arrays[0]:
        return False
    rtol, atol = TOLERANCE["float32"]
    for mine, other, truth in zip(*arrays):
        if not mine.shape == other.shape == truth.shape:
            return False
        finite = np.isfinite(other) & np.isfinite(truth)
        if not finite.any():
            return False
        # PyTorch's largest float32 error in this tensor: the noise level of the computation
        # (a residue that is 0 in exact arithmetic lands on other elements in each library)
        noise = np.abs(other - truth)[finite].max()
        with np.errstate(invalid="ignore"):
            allowed = NOISE * noise + atol + rtol * np.abs(truth)
            close = (np.abs(mine - truth) <= allowed) | (mine == other)
            close |= np.isnan(mine) & np.isnan(other)
        if not close.all():
            return False
    return True


def _float_arrays(seen):
    """The float tensors' values in a record (a tensor, or a sequence of them), or None where it
    holds anything else."""
    if seen is None:
        return None
    if seen.kind == "sequence":
        parts = [_float_arrays(item) for item in seen.values]
        return None if None in parts else [array for part in parts for array in part]
    if seen.kind == "tensor" and seen.dtype.startswith("float"):
        return [np.asarray(seen.values, dtype=np.float64)]
    if seen.kind == "none":
        return []
    return None  # an integer or bool result, an error: not a matter of rounding


def same_record(ours, theirs):
    """Whether two records of one expression hold the same tensors: floats equal to their
    dtype's tolerance, integers and bools exactly (and nothing but tensors)."""
    if ours is None or theirs is None:
        return False
    mine, other = _tensors(ours), _tensors(theirs)
    if mine is None or other is None or len(mine) != len(other) or not mine:
        return False
    return all(
        a.dtype == b.dtype and a.shape == b.shape and same_values(a.values, b.values, a.dtype)
        for a, b in zip(mine, other)
    )


def _tensors(seen):
    """The tensors in a record (a tensor, or a sequence of them), or None where it holds
    anything else."""
    if seen.kind == "sequence":
        parts = [_tensors(item) for item in seen.values]
        return None if None in parts else [tensor for part in parts for tensor in part]
    if seen.kind == "tensor":
        return [seen]
    return [] if seen.kind == "none" else None
