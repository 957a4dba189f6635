"""Is a difference only the order a sort gave tied values? PyTorch runs the program again.

Our sort keeps tied elements in their order (numpy's stable sort); PyTorch's CPU sort, unless
asked for `stable=True`, reorders them once a dim is longer than 16. Which of the tied elements
lands where then decides which gets which share of the gradient, and everything computed from
those shares (README's simplification). The pattern of the shares can differ beyond what a
matcher reads from two printed tensors (a square before the sort ties x with -x, and the chain
rule multiplies each share by 2x), so PyTorch runs the program once more with every sort made
stable: where it then gives our values, the tie order was all that differed.
"""

import contextlib
import functools

from .rounding import same_record
from .runner import run


@contextlib.contextmanager
def stable_sorts(torch):
    """Inside: torch's sort, argsort and msort (functions and methods) sort stably."""
    replaced = []

    def patch(owner, name, stable):
        replaced.append((owner, name, getattr(owner, name)))
        setattr(owner, name, stable)

    for owner in (torch, torch.Tensor):
        for name in ("sort", "argsort"):
            patch(owner, name, _stable(getattr(owner, name)))
        patch(owner, "msort", lambda input: torch.sort(input, dim=0, stable=True)[0])
    try:
        yield
    finally:
        for owner, name, original in reversed(replaced):
            setattr(owner, name, original)


def _stable(sort):
    @functools.wraps(sort)
    def stable(*args, **kwargs):
        kwargs["stable"] = True
        return sort(*args, **kwargs)

    return stable


class TieOrderCheck:
    """PyTorch's record of the program with stable sorts, run once, when first asked for."""

    def __init__(self, lines, ours, torch):
        self.lines, self.ours, self.torch = lines, ours, torch
        self.stable = None

    def explains(self, key):
        """Whether PyTorch, sorting stably, records our values at `key`."""
        if self.stable is None:
            with stable_sorts(self.torch):
                self.stable = run(None, self.torch, self.lines)
        return same_record(self.ours.get(key), self.stable.get(key))
