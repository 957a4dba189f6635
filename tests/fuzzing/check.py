"""One program through both libraries: run, compare, set the accepted simplifications apart."""

import re
from dataclasses import dataclass, field

from .compare import compare
from .program import statements
from .rounding import RoundingCheck
from .runner import run
from .simplifications import (
    FLOAT32_NOISE,
    TIED_GRADIENTS,
    TIES_IN_ORDER,
    accepted_by,
    integer_tensor_written_with_grad,
)
from .ties import TieOrderCheck


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
    source = "\n".join(line.source for line in lines)
    accepted_nodes = {}  # (our node name, PyTorch's) of an accepted grad_fn divergence -> why
    # After an accepted difference in values or length (which of tied elements kthvalue picks, how
    # many slices unique finds), later lines computed from it differ as its consequence: they are
    # not findings either; nor are the other results of that same call (unique's inverse). So
    # after an accepted refusal: one library raised where the other went on (and perhaps changed
    # a tensor in place), so the later lines read other values.
    accepted_line = None
    # After an integer tensor was written in place with a value that requires grad (PyTorch then
    # records a node, we record nothing), what is computed from it later lacks the history too.
    unrecorded_write_line = None
    partly_written_line = _partly_written_line(*records, lines)
    # is a difference of values float32 rounding? (PyTorch runs the program again to tell)
    rounding = RoundingCheck(program, lines, *records, theirs)
    # is it the order a sort gave tied values? (PyTorch runs the program again, sorting stably)
    ties = TieOrderCheck(lines, records[0], theirs) if _sorts(source) else None
    for divergence in compare(*records, lines):
        if (
            partly_written_line is not None
            and divergence.line > partly_written_line
            # (nonzero of other values has another length, which a later op may refuse)
            and divergence.what in ("values", "NaN/inf", "shape", "raises", "exception class")
        ):
            result.consequences.append(divergence)
            continue
        if accepted_line is not None and divergence.line >= accepted_line:
            result.consequences.append(divergence)
            continue
        history = divergence.what in ("grad_fn", "requires_grad")
        if (
            unrecorded_write_line is not None
            and divergence.line > unrecorded_write_line
            and history
        ):
            result.consequences.append(divergence)
            continue
        simplification = accepted_by(divergence, source)
        if simplification is None and divergence.what in ("values", "NaN/inf"):
            key = divergence.line, divergence.expression
            if ties is not None and ties.explains(key):
                gradient = divergence.op in ("backward", "grad")
                simplification = TIED_GRADIENTS if gradient else TIES_IN_ORDER
            elif rounding.explains(key):
                simplification = FLOAT32_NOISE
        if simplification is None and divergence.what == "grad_fn":
            # an op that hands on its input (dropout in eval mode) shows the same accepted node
            simplification = accepted_nodes.get((divergence.ours, divergence.theirs))
        if simplification is None:
            result.divergences.append(divergence)
        else:
            result.accepted.append((divergence, simplification))
            if divergence.what == "grad_fn":
                accepted_nodes[(divergence.ours, divergence.theirs)] = simplification
            elif accepted_line is None and divergence.what in (
                "values",
                "NaN/inf",
                "shape",
                "raises",
            ):
                accepted_line = divergence.line
            if simplification.matches is integer_tensor_written_with_grad and history:
                unrecorded_write_line = divergence.line
    # Once the libraries part ways (one raised where the other changed a tensor in place, say),
    # later lines differ as a consequence: only the first diverging line is a finding.
    if result.divergences:
        first = result.divergences[0].line
        result.consequences += [d for d in result.divergences if d.line != first]
        result.divergences = [d for d in result.divergences if d.line == first]
    return result


def _partly_written_line(ours, theirs, lines):
    """The first line where both libraries refused an in-place integer division by zero
    (x.fmod_(y) with a 0 in y: PyTorch's "ZeroDivisionError"), an in-place index_add_,
    scatter_ or scatter_add_ with an index out of range, or an assignment through a list or index
    tensor with an index out of range (x[[0, 3]] = 1: PyTorch's index_put_), or None. PyTorch has
    written the elements before the zero (or added the slices, written the elements, before the
    bad index) by then, ours nothing (README's Simplifications): the values read from x later
    differ as a consequence."""
    for key, seen in theirs.items():
        number, expression = key
        mine = ours.get(key)
        both_raised = mine is not None and seen.kind == mine.kind == "raise"
        op = lines[number].op
        method = op.removeprefix("Tensor.")
        # (index_add_ along the first or last dim of a 2-d+ tensor is scatter_add_'s work in
        # PyTorch's CPU kernel, and so is its error: "out of bounds")
        partly_written = (
            "ZeroDivisionError" in seen.error
            or (method == "index_add_" and "index out of range" in seen.error)
            or (
                method in ("index_add_", "scatter_", "scatter_add_")
                and "out of bounds" in seen.error
            )
        )
        partly_written = partly_written or (
            op == "setitem"
            and _indexes_with_a_list_or_tensor(lines[number].source)
            and "out of bounds" in seen.error
        )
        # (x %= y is x.remainder_(y); an assignment x[...] = v writes x in place too)
        in_place = op.endswith("_") or op in ("x //= y", "x %= y", "setitem")
        if not expression and in_place and both_raised and partly_written:
            return number
    return None


def _indexes_with_a_list_or_tensor(source):
    """Whether an assignment `x[...] = value` indexes with a list or an index tensor (a bracket
    inside the subscript): only then does PyTorch write element after element (index_put_); a
    plain `x[3] = 1` checks the index before it writes."""
    target = source.splitlines()[0].split(" = ")[0]
    subscript = target[target.index("[") + 1 :] if "[" in target else ""
    return "[" in subscript


def _sorts(source):
    """Whether the program sorts (so that tied values may come out in another order)."""
    return re.search(r"\b(sort|argsort|msort)\(", source) is not None
