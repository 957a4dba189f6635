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
    consequences: list = field(default_factory=list)  # later lines' divergences, not findings
    raising: set = field(default_factory=set)  # lines that raised (or could not run) in either


def check(program, ours=None, theirs=None):
    """Run `program` in autograd_lab and in PyTorch and compare what they gave."""
    if ours is None or theirs is None:
        import torch

        import autograd_lab

        ours, theirs = autograd_lab, torch
    lines = statements(program)
    result = Result(program)
    records = run(program, ours, lines), run(program, theirs, lines)
    for record in records:
        result.raising |= {
            line for (line, _), seen in record.items() if seen.kind in ("raise", "skipped")
        }
    accepted_nodes = {}  # (our node name, PyTorch's) of an accepted grad_fn divergence -> why
    for divergence in compare(*records, lines):
        simplification = accepted_by(divergence)
        if simplification is None and divergence.what == "grad_fn":
            # an op that hands on its input (dropout in eval mode) shows the same accepted node
            simplification = accepted_nodes.get((divergence.ours, divergence.theirs))
        if simplification is None:
            result.divergences.append(divergence)
        else:
            result.accepted.append((divergence, simplification))
            if divergence.what == "grad_fn":
                accepted_nodes[(divergence.ours, divergence.theirs)] = simplification
    # An accepted difference in values (tied elements picked in another order, say) parts the
    # libraries' ways as a real one does: what later lines compute from it differs in turn.
    parted = min((d.line for d, _ in result.accepted if d.what == "values"), default=None)
    if parted is not None:
        result.consequences = [d for d in result.divergences if d.line > parted]
        result.divergences = [d for d in result.divergences if d.line <= parted]
    # Once the libraries part ways (one raised where the other changed a tensor in place, say),
    # later lines differ as a consequence: only the first diverging line is a finding.
    if result.divergences:
        first = result.divergences[0].line
        result.consequences += [d for d in result.divergences if d.line != first]
        result.divergences = [d for d in result.divergences if d.line == first]
    return result
