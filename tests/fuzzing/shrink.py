"""Make a diverging program as small as it will go while it still diverges the same way.

Delta debugging (Zeller's ddmin, greedily): try a smaller program; keep it if a divergence of
the same *kind* (op, what differed, exception classes) is still there; repeat until no smaller
program keeps it. Smaller, in the order tried (the big cuts first, since each try runs both
libraries):

    1. no backward phase, or a plain backward() instead of the fancier ones;
    2. fewer leaves (with the steps that read them);
    3. fewer steps: halves, quarters, ... then single steps (a step that reads a dropped value
       goes too); a step reading a leaf instead of an earlier step's value;
    4. simpler leaves: no requires_grad, contiguous, smaller dims, fewer dims, values 0 or 1.
"""

from dataclasses import replace

import numpy as np

from .check import check as check_both
from .program import FLOATS


def shrink(program, kind, check=check_both, budget=400):
    """The smallest program found (within `budget` runs of both libraries) still showing `kind`."""
    runs = 0

    def still_diverges(candidate):
        nonlocal runs
        runs += 1
        try:
            return any(d.kind == kind for d in check(candidate).divergences)
        except Exception:  # a candidate the fuzzer itself cannot run is simply not smaller
            return False

    current, improved = program, True
    while improved and runs < budget:
        improved = False
        for candidate in smaller(current):
            if runs >= budget:
                break
            if still_diverges(candidate):
                current, improved = candidate, True
                break
    return current


def smaller(program):
    """Candidate programs smaller than `program`, the biggest cuts first."""
    if program.backward is not None:
        yield program.replace(backward=None, loss_of=None)
        if program.backward != "backward":
            yield program.replace(backward="backward")
    if len(program.leaves) > 1:
        for leaf in program.leaves:
            yield without(program, {leaf.name})
    steps = program.steps
    size = len(steps) // 2
    while size >= 1:
        for start in range(0, len(steps), size):
            yield without(program, {step.name for step in steps[start : start + size]})
        size //= 2
    leaf_names = {leaf.name for leaf in program.leaves}
    for index, step in enumerate(steps):  # read a leaf instead, so the steps between can go
        for position, name in enumerate(step.inputs):
            for leaf in program.leaves if name not in leaf_names else ():
                inputs = step.inputs[:position] + (leaf.name,) + step.inputs[position + 1 :]
                changed = steps[:index] + (replace(step, inputs=inputs),) + steps[index + 1 :]
                yield program.replace(steps=changed)
    for index, leaf in enumerate(program.leaves):
        for simpler in simpler_leaves(leaf):
            leaves = program.leaves[:index] + (simpler,) + program.leaves[index + 1 :]
            yield program.replace(leaves=leaves)


def without(program, names):
    """`program` without the leaves and steps in `names`, and without every step that reads them."""
    gone = set(names)
    steps = []
    for step in program.steps:
        if step.name in gone or any(_base(name) in gone for name in step.inputs):
            gone.add(step.name)
        else:
            steps.append(step)
    leaves = tuple(leaf for leaf in program.leaves if leaf.name not in gone)
    if program.loss_of is not None and _base(program.loss_of) in gone:
        return program.replace(leaves=leaves, steps=tuple(steps), backward=None, loss_of=None)
    return program.replace(leaves=leaves, steps=tuple(steps))


def _base(name):
    return name.split("[")[0]  # v3[0] is a part of v3


def simpler_leaves(leaf):
    """The same leaf made simpler in one way: no grad, contiguous, a smaller or missing dim,
    plainer values."""
    if leaf.requires_grad:
        yield _with(leaf, requires_grad=False)
    if leaf.layout != "contiguous":
        yield _with(leaf, layout="contiguous")
    values = np.array(leaf.values, dtype=object).reshape(leaf.shape)
    for dim, size in enumerate(leaf.shape):
        if size > 1:  # keep the first half (at least one) along this dim
            kept = np.take(values, range(max(1, size // 2)), axis=dim)
            yield _with(leaf, shape=kept.shape, values=tuple(kept.reshape(-1)))
        if size == 1:
            kept = values.reshape(leaf.shape[:dim] + leaf.shape[dim + 1 :])
            yield _with(leaf, shape=kept.shape, values=tuple(kept.reshape(-1)))
    # plainer values: 0 is plainer than 1, and 1 than anything else (so no two candidates
    # undo each other and the loop ends)
    plain = {"bool": (False, True), "int64": (0, 1)}.get(leaf.dtype, (0.0, 1.0))
    for value in plain:
        if any(_plainness(v, plain) > _plainness(value, plain) for v in leaf.values):
            yield _with(leaf, values=(value,) * len(leaf.values))
    if leaf.dtype in FLOATS:
        rounded = tuple(float(round(v)) if np.isfinite(v) else v for v in leaf.values)
        if rounded != tuple(leaf.values):
            yield _with(leaf, values=rounded)
    if len(leaf.values) <= 8:
        for index, value in enumerate(leaf.values):
            for simple in plain:
                if _plainness(value, plain) > _plainness(simple, plain):
                    changed = leaf.values[:index] + (simple,) + leaf.values[index + 1 :]
                    yield _with(leaf, values=changed)


def _plainness(value, plain):
    """0 for the plainest value (0), 1 for the next (1), 2 for any other."""
    for rank, simple in enumerate(plain):
        if value == simple and str(value) == str(simple):  # -0.0 is not 0.0 here
            return rank
    return len(plain)


def _with(leaf, **changes):
    return replace(leaf, **changes)
