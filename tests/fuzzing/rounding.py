"""Is a float32 difference from PyTorch only float32's own rounding? Three checks.

Some programs magnify the last bits of float32 arithmetic: terms that cancel (`layer_norm` of
nearly equal values, a second derivative that is 0 in exact arithmetic), a remainder by a tiny
divisor, exp or sin of a large number. There our answer and PyTorch's can differ beyond the
fuzzer's tolerance although neither is nearer the truth: each library rounds its float32 steps
in its own order. A value difference is accepted as rounding (README's simplification) when
one of these, each a run of the same program in PyTorch, says so:

1. float64: the program once more with every float32 tensor made float64 (the leaves keep their
   float32 values, so it answers the same question 2**29 times more finely). Our answer may be
   NOISE times as far from it as PyTorch's float32 answer is (its largest error in that tensor).
2. following: PyTorch runs the program again, and after each line takes over our values where
   they differ from its own only within tolerance (runner.run's `follow`): if it then computes
   ours, the difference came from earlier last bits, which this line magnified.
3. last bits of the inputs: PyTorch runs the program with its float32 literals a few float32
   steps larger or smaller: our answer may differ from PyTorch's NOISE times as much as those
   answers move (their largest move in that tensor).

Where PyTorch's float32 answer is close to the float64 one, does not follow ours, and hardly
moves with its inputs' last bits, and ours differs, it is a finding. (All three allow float32's
tolerance on top; tensor-wide noise levels let a residue land on another element in each
library.)
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


class RoundingCheck:
    """The three checks for one program, each run once, when first asked for."""

    def __init__(self, program, lines, ours, theirs, torch):
        self.program, self.lines, self.ours, self.theirs = program, lines, ours, theirs
        self.torch = torch
        self.float64 = self.following = self.perturbed = None

    def explains(self, key):
        """Whether the values recorded at `key` differ by float32 rounding only."""
        mine, other = self.ours.get(key), self.theirs.get(key)
        if self.float64 is None:
            self.float64 = float64_record(self.lines, self.torch)
        if only_float32_noise(mine, other, self.float64.get(key)):
            return True
        if self.following is None:
            self.following = run(self.program, self.torch, self.lines, follow=self.ours)
        if same_record(mine, self.following.get(key)):
            return True
        if self.perturbed is None:
            self.perturbed = perturbed_records(self.lines, self.torch)
        return within_input_noise(mine, other, [record.get(key) for record in self.perturbed])


# each float32 literal times these: one or two float32 steps (2**-23) up or down
PERTURBATIONS = ("(1 + 2**-23)", "(1 - 2**-23)", "(1 + 2**-22)", "(1 - 2**-22)")


def perturbed_records(lines, torch):
    """PyTorch's records of the program with its float32 literals moved by PERTURBATIONS."""
    records = []
    for factor in PERTURBATIONS:
        moved = [
            replace(line, source=_FLOAT32_LITERAL.sub(rf"\1.mul({factor})", line.source))
            for line in lines
        ]
        records.append(run(None, torch, moved))
    return records


def within_input_noise(ours, theirs, moved):
    """Whether `ours` differs from `theirs` (PyTorch's) by at most NOISE times the largest move
    of PyTorch's answer in `moved` (its records with the inputs' last bits changed)."""
    arrays = _float_arrays(ours), _float_arrays(theirs)
    if None in arrays or len(arrays[0]) != len(arrays[1]) or not arrays[0]:
        return False
    rtol, atol = TOLERANCE["float32"]
    for index, (mine, other) in enumerate(zip(*arrays)):
        moves = []
        for record in moved:
            others = _float_arrays(record)
            if others and len(others) == len(arrays[1]) and others[index].shape == other.shape:
                with np.errstate(invalid="ignore"):  # (inf - inf: nan, dropped below)
                    move = np.abs(others[index] - other)
                moves.append(move[np.isfinite(move)])
        moves = [move for move in moves if move.size]
        if mine.shape != other.shape or not moves:
            return False
        noise = max(move.max() for move in moves)
        with np.errstate(invalid="ignore"):
            close = np.abs(mine - other) <= NOISE * noise + atol + rtol * np.abs(other)
            close |= (mine == other) | (np.isnan(mine) & np.isnan(other))
        if not close.all():
            return False
    return True


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
        noise = np.abs(other[finite] - truth[finite]).max()
        with np.errstate(invalid="ignore"):  # (inf - inf where both are inf: nan, not close)
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
