"""Differences from PyTorch that autograd_lab keeps on purpose, each the fuzzer's side of a line
in README's "Simplifications". A divergence one of them matches is counted, not reported.

Keep this list short and honest: an entry matches only the difference its README line names
(which ops, what differed), never everything an op does.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Simplification:
    readme: str  # the line in README's "Simplifications"
    matches: object  # Divergence -> bool


def _node_name_of(*ops):
    return lambda d: d.what == "grad_fn" and d.op in ops


# ops whose result jumps: a last-bit difference in their input can change the result by a lot
DISCONTINUOUS = {
    "floor",
    "ceil",
    "round",
    "trunc",
    "fix",
    "frac",
    "sign",
    "floor_divide",
    "remainder",
    "fmod",
    "x // y",
    "x % y",
    "number // x",
    "number % x",
    "div",
    "divide",
    "argmax",
    "argmin",
    "argsort",
    "sort",
    "msort",
    "topk",
    "kthvalue",
    "median",
    "max",
    "min",
    "amax",
    "amin",
    "unique",
    "unique_consecutive",
    "histc",
    "histogram",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "x == y",
    "x != y",
    "x < y",
    "x <= y",
    "x > y",
    "x >= y",
    "where",
    "masked_fill",
    "clamp",
    "clip",
    "relu",
    "nonzero",
    "argwhere",
    "count_nonzero",
    "isclose",
    "allclose",
    "equal",
    "masked_select",
    "F.relu",
    "F.one_hot",
}


def _after_rounding(d):
    """A finite value that differs only because an earlier float value differed in its last bits
    and a jumping op (floor, sort, ==, ...) made that big. (NaN/inf and gradients still count.)"""
    op = d.op.removeprefix("Tensor.").removesuffix("_")
    return d.after_rounding and d.what == "values" and op in DISCONTINUOUS


def _tie_order(d):
    """topk or kthvalue gave the same values but other indices: which of several equal elements
    an index points to is an accident of PyTorch's selection algorithm. (The fuzzer asks for
    sorted results only, so the values themselves must agree; a values difference is reported.)"""
    line = d.where.split("  [")[0].rstrip()
    picks_indices = d.where.endswith("][1]") or line.endswith(("[1]", ".indices"))
    op = d.op.removeprefix("Tensor.")
    return d.what == "values" and op in ("topk", "kthvalue") and picks_indices


def _integer_tensor_written_with_grad(d):
    """An integer or bool tensor written in place with a value that requires grad: PyTorch gives
    it a grad_fn and requires_grad (and then refuses most ops on it: "Autograd not support
    dtype"); ours records nothing. (compare.py names the dtype of such a tensor's history.)"""
    in_place = d.op == "setitem" or d.op.endswith("_")
    if d.what in ("grad_fn", "requires_grad"):
        return in_place and d.ours.startswith(("None (", "False (")) and " tensor)" in d.theirs
    return (
        d.what == "raises"
        and d.ours == "ran"
        and d.theirs.startswith("raises RuntimeError: Autograd not support dtype")
    )


COMPOSED = ("kthvalue", "index_add", "dist")  # composed from other ops, so their nodes

SIMPLIFICATIONS = [
    Simplification(
        "the float32 sums behind `sum`/`mean`/`@` are numpy's (equal to PyTorch's to rounding, "
        "not bit for bit)",
        _after_rounding,
    ),
    Simplification(
        "indexing records one node, named after the last view PyTorch makes (`SelectBackward0`, "
        "`SliceBackward0`, `UnsqueezeBackward0` or `IndexBackward0`), where PyTorch records a "
        "chain of them",
        _node_name_of("getitem", "setitem"),
    ),
    Simplification(
        "batched `@` records `UnsafeViewBackward0` over one product node (`BmmBackward0`, or "
        "`MatmulBackward0` when batches broadcast), where PyTorch reshapes and expands its "
        "operands first",
        lambda d: (
            d.what == "grad_fn"
            and d.op in ("x @ y", "matmul", "Tensor.matmul")
            and d.ours.startswith("MatmulBackward0")
        ),
    ),
    Simplification(
        "a few functions are composed from other ops and so record their nodes (`kthvalue`, "
        "`index_add`, `dist`)",
        _node_name_of(
            *COMPOSED,
            *[f"Tensor.{name}" for name in COMPOSED],
            "Tensor.index_add_",
        ),
    ),
    Simplification(
        "`topk` and `kthvalue` among tied values take the earlier element",
        _tie_order,
    ),
    Simplification(
        "`take_along_dim` with `dim=` refuses an index out of range (RuntimeError)",
        lambda d: (
            d.what == "raises"
            and d.op in ("take_along_dim", "Tensor.take_along_dim")
            and d.ours.startswith("raises RuntimeError")
        ),
    ),
    Simplification(
        "a gradient computed with `create_graph=True` records the nodes of our backward "
        "formulas (written with ordinary ops), not PyTorch's `...BackwardBackward0` nodes",
        lambda d: d.what == "grad_fn" and d.op == "grad",
    ),
    Simplification(
        "writing a value that requires grad into an integer or bool tensor in place records "
        "nothing (PyTorch gives the integer tensor a `grad_fn`, e.g. `MaskedFillBackward1`)",
        _integer_tensor_written_with_grad,
    ),
    Simplification(
        "`index_add` into a tensor with no elements gives its source a zero gradient (PyTorch's "
        'backward raises there: "self indexing axis dim should be positive")',
        lambda d: (
            d.what == "raises"
            and d.op in ("backward", "grad")
            and d.ours == "ran"
            and "index_select(): self indexing axis dim should be positive" in d.theirs
        ),
    ),
    Simplification(
        "on Intel CPUs PyTorch draws `bernoulli_(p)` (dropout) through MKL, which is not "
        "reproduced",
        lambda d: (
            d.what == "values"
            and d.op in ("bernoulli", "Tensor.bernoulli", "Tensor.bernoulli_", "F.dropout")
        ),
    ),
]


def accepted_by(divergence):
    """The simplification that explains `divergence`, or None."""
    for simplification in SIMPLIFICATIONS:
        if simplification.matches(divergence):
            return simplification
    return None
