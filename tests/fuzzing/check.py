"""One program through both libraries: run, compare, set the accepted simplifications apart."""

from dataclasses import dataclass, field

from .compare import compare
from .program import statements
from .runner import run
from .simplifications import accepted_by


@dataclass
class Result:
    program: object
    divergences: list = field(default_factory=list)  # what the lead must look at
    accepted: list = field(default_factory=list)  # (divergence, the simplification it matches)


def check(program, ours=None, theirs=None):
    """Run `program` in autograd_lab and in PyTorch and compare what they gave."""
    if ours is None or theirs is None:
        import torch

        import autograd_lab

        ours, theirs = autograd_lab, torch
    lines = statements(program)
    result = Result(program)
    for divergence in compare(run(program, ours, lines), run(program, theirs, lines), lines):
        simplification = accepted_by(divergence)
        if simplification is None:
            result.divergences.append(divergence)
        else:
            result.accepted.append((divergence, simplification))
    return result
