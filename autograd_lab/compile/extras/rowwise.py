"""Row-wise fusion: a reduction over the last axis, fused with its elementwise neighbours.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace, fuse
    >>> def layer_norm(x):
    ...     centred = x - x.mean(-1, keepdim=True)
    ...     return centred / ((centred * centred).mean(-1, keepdim=True) + 1e-5).sqrt()
    >>> plan = fuse(trace(layer_norm, ag.ones(4, 8)))
    >>> [group.names for group in plan.groups]
    [('MeanBackward1', 'SubBackward0', 'MulBackward0', 'MeanBackward1', 'AddBackward0', 'SqrtBackward0', 'DivBackward0')]

Why: an elementwise group stops at a reduction, so eager-style, `x.mean(-1)` reads x, `x - mean`
reads x again and writes a temporary, and so on: a layer norm is ~9 passes over memory. But a
reduction over the LAST axis only mixes the numbers of one row, and a row (1024 floats = 4 KiB)
fits in the CPU's fastest cache. So one kernel can take each row in turn, loop over it a few times
(one loop per reduction: the mean must be known before `x - mean`), and write only the results:
x is read from memory once, the rest comes from cache. A row-wise group is that kernel's plan.

What joins a row-wise group ("the frame" is the full shape: rows of C numbers):
    reductions over the last axis    sum, mean, max/min(dim).values, var, std, logsumexp
    the softmax family               softmax, log_softmax, cross_entropy / nll_loss (class targets)
    totals                           sum() / mean() of everything, as the group's result
    elementwise ops                  on full rows, on one number per row (a `keepdim` reduction's
                                     result), on a vector per column (a layer norm's weight)
Each call joins the group of a call whose result it reads, as in `fuse.find_groups`; a group
must hold a reduction (else it is an elementwise group). CPU only: on CUDA the elementwise parts
fuse as before and the reductions run as ops.
"""

from dataclasses import dataclass, field

import numpy as np

from ...autograd.function import Op
from ...nn import functional as F
from ...ops import reduction as red
from ..fuse import Group, find_groups, fusable
from ..ir import Value
from ..rules import rule_for
from ..trace import WholeCall

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
REDUCTIONS = (red.SumDim, red.MeanDim, red.MaxDim, red.MinDim, red.Var, red.Std, red.LogSumExp)
COMPOSITES = (red.Softmax, red.LogSoftmax, red.Var, red.Std, red.LogSumExp)  # worth a kernel alone
TOTALS = (red.Sum, red.Mean)  # reductions of everything: sum(), mean()
LOSSES = ("cross_entropy", "nll_loss")  # nn.functional's, recorded as one WholeCall each
MAX_COLUMNS = 1 << 24  # kernels count columns in float32, exact up to 2^24


@dataclass(eq=False)
class RowGroup(Group):
    """A Group whose calls work row by row on a frame of `rows` x `columns` numbers.

    `kinds`: how each value made inside is laid out: "full" (a number per element), "row" (one per
    row, shape (..., 1)), "flat" (one per row, keepdim=False: shape (...)), "total" (one in all).
    `patterns`: how each value read from outside is indexed: "full", "row", "col" (one per
    column: broadcast over the rows) or "one" (a single number)."""

    kinds: dict = field(default_factory=dict)
    patterns: dict = field(default_factory=dict)

    @property
    def rows(self):
        return int(np.prod(self.shape[:-1], dtype=np.int64))

    @property
    def columns(self):
        return self.shape[-1]


# ---- what a call is, row-wise ----------------------------------------------------------------------


def _last_axis(dim, ndim):
    """Is `dim` (an int, or a tuple/list of one int) the last axis of an ndim tensor?"""
    if isinstance(dim, (tuple, list)):
        if len(dim) != 1:
            return False
        dim = dim[0]
    return (
        isinstance(dim, (int, np.integer)) and not isinstance(dim, bool) and dim % ndim == ndim - 1
    )


def role(call, unused):
    """What a call does in a row-wise group: "elementwise", "reduction" (over the last axis),
    "softmax" (softmax/log_softmax over it), "total", "loss", or None (it cannot join).
    `unused(value)` says whether nobody reads a value (max(dim)'s indices must be unused)."""
    fn, kwargs = call.fn, call.kwargs
    if fn is WholeCall:
        return "loss" if loss_form(call) else None
    if not isinstance(fn, type) or not issubclass(fn, Op) or not call.outputs:
        return None
    first = call.args[0] if call.args else None
    if not isinstance(first, Value) or first.dtype not in _FLOATS:
        return None
    if rule_for(call) is not None:
        return "elementwise" if fusable(call) else None
    ndim = len(first.shape)
    if issubclass(fn, TOTALS) and not issubclass(fn, (red.SumDim, red.MeanDim)):
        plain = kwargs.get("dim") is None and not kwargs.get("keepdim") and not kwargs.get("dtype")
        return "total" if plain and len(call.args) == 1 else None
    if ndim < 2 or not 2 <= first.shape[-1] < MAX_COLUMNS or len(call.args) != 1:
        return None
    if issubclass(fn, (red.Softmax, red.LogSoftmax)):
        return "softmax" if _last_axis(kwargs.get("dim"), ndim) else None
    if not issubclass(fn, REDUCTIONS) or not _last_axis(kwargs.get("dim"), ndim):
        return None
    if issubclass(fn, (red.Var, red.Std)) and first.shape[-1] - kwargs.get("correction", 1) <= 0:
        return None  # too few numbers per row: eager gives nan with warnings, leave it to eager
    if issubclass(fn, red.SumDim) and kwargs.get("dtype") is not None:
        return None
    if issubclass(fn, (red.MaxDim, red.MinDim)) and not unused(call.outputs[1]):
        return None  # the indices are used: the kernel does not make them
    return "reduction"


def loss_form(call):
    """cross_entropy / nll_loss(input (N, C) float, target (N,) class indices) with the default
    weight and smoothing: the forms a row kernel computes. None when it is another form."""
    function = call.kwargs.get("function")
    if getattr(function, "__name__", None) not in LOSSES or function is not getattr(
        F, function.__name__
    ):
        return None
    if len(call.args) != 2 or not all(isinstance(a, Value) for a in call.args):
        return None
    x, target = call.args
    options = {k: v for k, v in call.kwargs.items() if k != "function"}
    defaults = {"weight": None, "size_average": None, "reduce": None, "label_smoothing": 0.0}
    if any(options.get(k, d) != d for k, d in defaults.items()):
        return None
    reduction, ignore_index = options.get("reduction", "mean"), options.get("ignore_index", -100)
    if reduction not in ("mean", "sum", "none") or not isinstance(ignore_index, int):
        return None
    if len(x.shape) != 2 or x.dtype not in _FLOATS or not 2 <= x.shape[1] < MAX_COLUMNS:
        return None
    if target.dtype not in (np.dtype(np.int64), np.dtype(np.uint8)) or target.shape != x.shape[:1]:
        return None
    return function.__name__, reduction, ignore_index


# ---- fitting a call into a frame ---------------------------------------------------------------------


def pattern(shape, frame):
    """How an operand of `shape` is indexed inside a full-level op of the frame (lead..., C)."""
    aligned = (1,) * (len(frame) - len(shape)) + tuple(shape)
    if len(aligned) != len(frame):
        return None
    if aligned == tuple(frame):
        return "full"
    if all(s == 1 for s in aligned):
        return "one"
    if aligned[:-1] == tuple(frame[:-1]) and aligned[-1] == 1:
        return "row"
    if all(s == 1 for s in aligned[:-1]) and aligned[-1] == frame[-1]:
        return "col"
    return None


def _compatible(kind, use):
    """Can a value made inside the group, laid out as `kind`, be read as `use`? ("one": a row
    value of a frame with a single row has shape (1, 1) and reads as one number.)"""
    return use == kind or (use == "one" and kind in ("row", "flat"))


def uses(call, kind, frame, dtype):
    """{value id: how the call reads it} and the layout of its result, or None if it cannot."""
    lead, out = tuple(frame[:-1]), call.outputs[0]
    if kind == "loss":
        x, target = call.args
        result = "flat" if loss_form(call)[1] == "none" else "total"
        return ({x.id: "full", target.id: "flat"}, result) if x.dtype == dtype else None
    if kind in ("reduction", "softmax"):
        if call.args[0].dtype != dtype or tuple(call.args[0].shape) != tuple(frame):
            return None
        result = "full" if kind == "softmax" else "row" if call.kwargs.get("keepdim") else "flat"
        return {call.args[0].id: "full"}, result
    if kind == "total":
        return {call.args[0].id: "any"}, "total"
    if out.dtype != dtype:  # elementwise: at full level if its result is full, else at row level
        return None
    shape = tuple(out.shape)
    level = (
        "full"
        if shape == tuple(frame)
        else "row"
        if shape == lead + (1,)
        else "flat"
        if shape == lead and lead
        else None
    )
    if level is None:
        return None
    wanted = {}
    operands = [a for a in call.args if isinstance(a, Value)]
    operands += [v for v in call.kwargs.values() if isinstance(v, Value)]
    for value in operands:
        if value.dtype != dtype and value.dtype != np.bool_:
            return None
        if level == "full":
            use = pattern(value.shape, frame)
        elif all(s == 1 for s in value.shape):
            use = "one"
        else:
            use = level if tuple(value.shape) == shape else None
        if use is None:
            return None
        wanted[value.id] = use
    return wanted, level


def fit(call, kind, kinds, patterns, frame, dtype, device):
    """The layouts this call adds to a group with these `kinds` (values made inside) and
    `patterns` (values read from outside): ({value id: kind}, {value id: pattern}), or None when
    the call does not fit (see the module docstring)."""
    found = uses(call, kind, frame, dtype)
    out = call.outputs[0]
    if found is None or out is None or out.device != device:
        return None
    wanted, result = found
    new_patterns = {}
    for value_id, use in wanted.items():
        inside = kinds.get(value_id)
        if use == "any":  # a total: sums any value the group made, except another total
            if inside is None or inside == "total":
                return None
        elif inside is not None:
            if not _compatible(inside, use):
                return None
        else:
            use = "row" if use == "flat" else use  # read from outside: one per row, by row
            if patterns.get(value_id, use) != use:
                return None
            new_patterns[value_id] = use
    for value in call.inputs():
        if value.id in new_patterns and (
            value.device != device or (value.dtype.kind == "f" and value.dtype != dtype)
        ):
            return None
    return {out.id: result}, new_patterns


def frame_of(call, kind):
    """The frame a call starts a new group with, or None (it can only join one)."""
    if kind in ("reduction", "softmax", "loss"):
        return tuple(call.args[0].shape)
    if kind == "elementwise":
        shape = tuple(call.outputs[0].shape)
        return shape if len(shape) >= 2 and shape[-1] >= 2 else None
    return None


def _merged(a, b):
    """(kinds, patterns) of two groups together, or None if they read a value differently."""
    kinds, patterns = {**a.kinds, **b.kinds}, {}
    for source in (a.patterns, b.patterns):
        for value_id, use in source.items():
            if value_id in kinds:
                if not _compatible(kinds[value_id], use):
                    return None
            elif patterns.setdefault(value_id, use) != use:
                return None
    return kinds, patterns


# ---- the policy fuse.find_groups follows ----------------------------------------------------------


class Rows:
    """The policy of row-wise groups (compile/fuse.py's find_groups asks it, as it asks
    Elementwise): which calls can be in a group, whether a call fits a group's frame and
    layouts, and which groups are worth a kernel. `kernel` makes a kept group's (RowKernel)."""

    def __init__(self, graph, kernel=None):
        self.kernel = kernel
        readers, returned = graph.consumers(), {v.id for v in graph.outputs}
        # is nobody reading a value? (max(dim)'s indices must be unused: the kernel makes none)
        self.unused = lambda value: (
            value is None or (value.id not in readers and value.id not in returned)
        )

    def role(self, call):
        return role(call, self.unused)

    def start(self, call, kind):
        frame = frame_of(call, kind)
        dtype = call.outputs[0].dtype if kind == "elementwise" else call.args[0].dtype
        if frame is None or dtype not in _FLOATS or np.prod(frame) <= 1:
            return None
        fits = fit(call, kind, {}, {}, frame, dtype, call.outputs[0].device)
        if fits is None:
            return None
        group = RowGroup([call], frame, dtype, call.outputs[0].device, 1 << call.index)
        group.kinds, group.patterns = dict(fits[0]), dict(fits[1])
        return group

    def fit(self, group, call, kind):
        fits = fit(call, kind, group.kinds, group.patterns, group.shape, group.dtype, group.device)
        return None if fits is None else ({**group.kinds, **fits[0]}, {**group.patterns, **fits[1]})

    def merge(self, group, other):
        if (group.shape, group.dtype, group.device) != (other.shape, other.dtype, other.device):
            return None
        return _merged(group, other)

    def absorb(self, group, update):
        group.kinds, group.patterns = update

    def keep(self, group):
        roles = [self.role(call) for call in group.calls]
        if str(group.device) != "cpu" or not {"reduction", "softmax", "loss"} & set(roles):
            return False
        # a lone sum or max: numpy does it in one pass already
        return (
            len(group.calls) > 1 or roles[0] == "loss" or issubclass(group.calls[0].fn, COMPOSITES)
        )


def find_row_groups(graph):
    """The row-wise groups of a graph, in execution order (fuse.find_groups with this policy)."""
    return find_groups(graph, Rows(graph))
