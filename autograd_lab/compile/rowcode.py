"""A row-wise group's kernels as Python source for numba: forward here, backward in rowgrad.py.

    >>> import autograd_lab as ag
    >>> f = ag.compile(lambda x: x.softmax(-1))
    >>> y = f(ag.ones(4, 8, dtype=ag.float64, requires_grad=True))
    >>> print(f.kernels[0])                          # doctest: +SKIP
    ...
    def row_forward(n_rows, n_cols, n_blocks, x0, out0, saved):
        per_block = (n_rows + n_blocks - 1) // n_blocks
        for b in range(n_blocks):
            stash = empty((1, n_cols), float64)
            for r in range(b * per_block, min(n_rows, (b + 1) * per_block)):
                keym1 = order_key(-inf)  # compared as integers: kernel_math
                for j in range(n_cols):  # pass 0: m1
                    v0 = x0[r, j]  # %0
                    key = order_key(v0)
                    keym1 = key if key > keym1 else keym1
                m1 = from_order_key(keym1)
                accs4 = 0.0
                for j in range(n_cols):  # pass 1: s4
                    v0 = x0[r, j]  # %0
                    t2 = v0 - m1  # %1 = SoftmaxBackward0(%0, dim=-1)
                    t3 = exp_nonpositive(t2)  # %1 = SoftmaxBackward0(%0, dim=-1)
                    accs4 += t3
                    stash[0, j] = t3
                s4 = accs4
                for j in range(n_cols):  # pass 2: out0
                    t3 = stash[0, j]  # kept by pass 1
                    t5 = t3 / s4  # %1 = SoftmaxBackward0(%0, dim=-1)
                    out0[r, j] = t5
                saved[r, 0] = m1
                saved[r, 1] = s4
    ...

The outer loop runs over blocks of rows (`prange` when the group is big enough: the threads
share the blocks); the passes over one row read memory the first time and the CPU's cache after.
A value a later pass needs again is recomputed, unless it is costly (an exp): then it is kept in
`stash`, one row per value. The forward kernel also writes the row values the backward needs
(`saved`: a few numbers per row), so backward never repeats the forward's passes.

Maxima compare `order_key`s, integers that sort like the floats (compile/kernel_math.py): the
compiler turns an integer max into vector instructions, a float max with NaN rules it does not.
"""

import re

import numpy as np

from .codegen import PARALLEL_MIN_ELEMENTS, _kernel_math_version
from .rowprogram import REDUCE, Node

INDEX = {"full": "[r, j]", "row": "[r]", "col": "[j]", "one": "[0]"}
SHORT_ROW = 16384  # float32 rows up to this length are summed in float32 (see Emitter)


def parallel_pays(group):
    return group.rows * group.columns >= PARALLEL_MIN_ELEMENTS


class Emitter:
    """Lines of one kernel, each value defined once, before its first use ("pull" order)."""

    def __init__(self, program):
        self.program, self.n = program, program.n
        self.dtype = np.dtype(program.group.dtype)
        # sums over a row start from `zero`: float32 sums of float32 rows (8 lanes of a vector
        # register, each adding up a few dozen numbers: an error of ~1e-6, and twice the speed
        # of converting every number to float64), float64 sums for longer rows
        short = self.dtype == np.float32 and program.columns <= SHORT_ROW
        self.zero = self.n(0.0) if short else "0.0"

    def cast(self, text):
        return f"float32({text})" if self.dtype == np.float32 else text

    def expression(self, node, names):
        """The forward expression of an "ew" node, its arguments written by `names(node)`."""
        args = [names(a) if isinstance(a, Node) else a for a in node.args]
        kwargs = {k: names(v) if isinstance(v, Node) else v for k, v in node.kwargs.items()}
        return node.rule.forward(self.n, *args, **kwargs)


def used(text, name):
    """Does the kernel text `text` mention the variable `name`?"""
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


# ---- values shared by the passes of a kernel -----------------------------------------------------------

_COSTLY = re.compile(r"\b(exp|exp_nonpositive|tanh|log|log1p|expm1|sqrt|sin|cos|erf)\(|\*\*")


class Passes:
    """The loops over one row, and the values they share.

    A full-level value one pass computed and a later pass needs again is recomputed (loads and
    arithmetic are cheap), unless computing it is costly (an exp, a tanh, ...): then the first
    pass keeps it in `stash[i, j]` (a row per value, in cache) and later passes read it back."""

    def __init__(self, program):
        self.program, self.loops, self.first = program, [], {}  # first: node -> its loop
        self.n, self.emit = program.n, Emitter(program)
        self.stash = {}  # node -> its row in the stash

    def new_loop(self, title):
        """A loop over the row's columns; `title` names it in comments ("pass 1")."""
        loop = {"title": title, "lines": [], "defined": set(), "makes": []}
        self.loops.append(loop)
        return loop

    def full_value(self, node, loop, row_value):
        """Define full node `node` in `loop` (computing, or reading the stash), once."""
        if node in loop["defined"]:
            return
        loop["defined"].add(node)
        earlier = self.first.get(node)
        if earlier is not None and earlier is not loop and node.op == "ew" and _COSTLY.search(
                self.emit.expression(node, str)):  # fmt: skip
            if node not in self.stash:
                self.stash[node] = len(self.stash)
                earlier["lines"].append(f"stash[{self.stash[node]}, j] = {node.name}")
            loop["lines"].append(f"{node.name} = stash[{self.stash[node]}, j]  # kept by "
                                 f"{earlier['title']}")  # fmt: skip
            return
        for arg in node.deps():
            if arg.level == "full":
                self.full_value(arg, loop, row_value)
            else:
                row_value(arg)
        text = (f"x{node.input}{INDEX[node.pattern]}" if node.op == "load"
                else self.emit.expression(node, str))  # fmt: skip
        loop["lines"].append(f"{node.name} = {text}  # {node.note}")
        self.first.setdefault(node, loop)

    def lines(self, loop):
        """The loop's text. Where it compares column numbers, it counts them in `col`, a float:
        an integer j next to float32 values would take 64-bit vector lanes and halve the speed
        (the compiler turns `col += 1` into a vector of 8 column numbers as well)."""
        body = [f"    {line}" for line in loop["lines"]]
        makes = f": {', '.join(loop['makes'])}" if loop["makes"] else ""
        head = [f"for j in range(n_cols):  # {loop['title']}{makes}"]
        if any(used(line, "col") for line in body):
            head = [f"col = {self.n(0.0)}"] + head
            body.append(f"    col += {self.n(1.0)}")
        return head + body

    def allocation(self, dtype):
        """The stash, made once per block of rows (inside the thread that uses it)."""
        if not self.stash:
            return []
        return [f"stash = empty(({len(self.stash)}, n_cols), {np.dtype(dtype).name})"]


# ---- forward -----------------------------------------------------------------------------------------


def forward_source(program, saved):
    """The forward kernel: outputs, and the row values in `saved` (a list of nodes)."""
    passes = Passes(program)
    assemble, totals, _ = forward_body(program, saved, passes)
    params = inputs(program) + [f"out{k}" for k in range(len(program.outputs))] + ["saved"]
    before_rows, after_rows = block_lines(program, passes, totals)
    return kernel("row_forward", program, params, assemble(), before_rows, after_rows)


def block_lines(program, passes, totals):
    """Lines before and after a block's rows: the stash, and each total's partial sum."""
    before_rows = passes.allocation(program.group.dtype)
    before_rows += [f"total{t.name} = 0.0" for t in totals]
    after_rows = [f"out{k}[b] = total{node.name}" for k, (_, node) in enumerate(program.outputs)
                  if node.op == "total"]  # fmt: skip
    return before_rows, after_rows


def forward_body(program, saved, passes):
    """The forward's lines for one row: (a function returning them, the totals it adds up, the
    row values it defines).

    Call the function last, once every kernel sharing `passes` has been generated: a later
    pass (a backward's, in one fused kernel) may still ask these loops to stash a value."""
    emit, outputs = Emitter(program), program.outputs
    full_out = {node: k for k, (_, node) in enumerate(outputs) if node.level == "full"}
    needed = _closure([node for _, node in outputs] + list(saved))
    totals = [node for node in program.nodes if node.op == "total" and node in needed]
    reductions = [node for node in program.nodes if node.op in REDUCE and node in needed]
    last = max([node.phase for node in full_out] + [r.phase - 1 for r in reductions], default=-1)
    row_ready, body = set(), []

    def row_value(node, into):
        """Define a row node (and the row nodes it needs) in `into`, once."""
        if node in row_ready:
            return
        row_ready.add(node)
        for arg in node.deps():
            if arg.level == "row":
                row_value(arg, into)
        if node.op == "load":
            into.append(f"{node.name} = x{node.input}{INDEX[node.pattern]}  # {node.note}")
        elif node.op == "ew":
            into.append(f"{node.name} = {emit.expression(node, str)}  # {node.note}")
        elif node.op == "pick":  # one element of the row: computed at its column, no loop
            value, column = node.args
            lines = [f"j = int({column.name})  # {node.note}: the target's column"]
            _at_column(value, emit, lines, set(), lambda a: row_value(a, into))
            into += lines + [f"{node.name} = {value.name}"]
        else:
            raise AssertionError(f"{node} is used before its pass ran (a bug in rowcode)")

    pieces = []  # (row lines before the loop, starts, loop, ends), in pass order
    for k in range(last + 1):
        work = [r for r in reductions if r.phase - 1 == k]
        writes = [node for node in full_out if node.phase == k]
        if not work and not writes:
            continue
        loop, before, starts, ends = passes.new_loop(f"pass {k}"), [], [], []
        loop["makes"] = [r.name for r in work] + [f"out{full_out[node]}" for node in writes]
        for r in work:
            for arg in r.args:
                if arg.level == "full":
                    passes.full_value(arg, loop, lambda a, into=before: row_value(a, into))
                else:
                    row_value(arg, before)
            start, update, end = _reduction_lines(r, emit)
            starts.append(start)
            loop["lines"].extend(update)
            ends += [end] if end else []
        for node in writes:
            passes.full_value(node, loop, lambda a, into=before: row_value(a, into))
            loop["lines"].append(f"out{full_out[node]}[r, j] = {node.name}")
        pieces.append((before, starts, loop, ends))
        row_ready.update(work)
    tail = []
    for k, (_, node) in enumerate(outputs):
        if node.level == "row" and node.op != "total":
            row_value(node, tail)
            tail.append(f"out{k}[r] = {node.name}")
    for k, node in enumerate(saved):
        row_value(node, tail)
        tail.append(f"saved[r, {k}] = {node.name}")
    for node in totals:
        row_value(node.args[0], tail)
        tail.append(f"total{node.name} += {node.args[0].name}")

    def assemble():  # last: later passes add stash writes to these loops
        for before, starts, loop, ends in pieces:
            body.extend(before + starts + passes.lines(loop) + ends)
        return body + tail

    return assemble, totals, row_ready


def _reduction_lines(node, emit):
    """(start line, update lines, end line) of a reduction over the row."""
    arg, n, name = node.args[0].name, emit.n, node.name
    if node.op == "sum":
        start = f"acc{name} = {emit.zero}"
        return start, [f"acc{name} += {arg}"], f"{name} = {emit.cast(f'acc{name}')}"
    if node.op in ("max", "min"):
        first, better = ("-inf", ">") if node.op == "max" else ("inf", "<")
        update = [f"key = order_key({arg})",
                  f"key{name} = key if key {better} key{name} else key{name}"]  # fmt: skip
        start = f"key{name} = order_key({n(float(first))})  # compared as integers: kernel_math"
        if node.no_grad:  # a softmax's shift: a NaN in the row makes its sum of exps NaN anyway
            return start, update, f"{name} = from_order_key(key{name})"
        return (start.replace(f"key{name} =", f"key{name}, nans{name} =").replace(
                    "  # compared", ", 0  # compared"),
                update + [f"nans{name} += {arg} != {arg}  # a NaN makes the result NaN, as numpy"],
                f"{name} = from_order_key(key{name}) if nans{name} == 0 else {n(float('nan'))}")  # fmt: skip
    extreme = node.args[1].name  # argmax: the first column holding the max (or the first NaN)
    hit = f"{arg} == {extreme} or ({arg} != {arg} and {extreme} != {extreme})"
    last = n(float(emit.program.columns))
    return f"{name} = {last}", [f"{name} = min({name}, col if {hit} else {last})"], ""


def _at_column(node, emit, lines, done, row_value):
    """Lines computing full node `node` at the one column `j` (its arguments first)."""
    if node in done:
        return
    done.add(node)
    for arg in node.deps():
        _at_column(arg, emit, lines, done, row_value) if arg.level == "full" else row_value(arg)
    text = (f"x{node.input}{INDEX[node.pattern]}" if node.op == "load"
            else emit.expression(node, str))  # fmt: skip
    lines.append(f"{node.name} = {text}  # {node.note}")


def _closure(nodes):
    found, stack = set(), list(nodes)
    while stack:
        node = stack.pop()
        if node not in found:
            found.add(node)
            stack.extend(node.deps())
    return found


# ---- the module ----------------------------------------------------------------------------------------


def inputs(program):
    count = len(program.group.inputs) + program.extra_inputs
    return ["n_rows", "n_cols", "n_blocks"] + [f"x{k}" for k in range(count)]


def kernel(name, program, params, body, before_rows=(), after_rows=()):
    """A kernel: blocks of rows (prange when the group is big enough), the body once per row."""
    group = program.group
    parallel = parallel_pays(group)
    float32 = np.dtype(group.dtype) == np.float32
    # float32: sums in the loop must be reorderable to vectorize (as codegen.reduction_kind
    # explains), and `arcp` lets x / s (s one number per row: a sum, a std) become x * (1 / s),
    # one division per row instead of one per element (within an ulp; backward 1.6x faster).
    # float64 kernels keep numpy's exact rounding instead: no fast-math at all.
    fastmath = '{"reassoc", "arcp"}' if float32 else "False"
    lines = ["", "", "", f'@njit(parallel={parallel}, cache=True, fastmath={fastmath}, '
             'error_model="numpy")', f"def {name}({', '.join(params)}):",
             "    per_block = (n_rows + n_blocks - 1) // n_blocks",
             f"    for b in {'prange' if parallel else 'range'}(n_blocks):"]  # fmt: skip
    lines += [f"        {line}" for line in before_rows]
    lines.append("        for r in range(b * per_block, min(n_rows, (b + 1) * per_block)):")
    lines += [f"            {line}" for line in body] or ["            pass"]
    lines += [f"        {line}" for line in after_rows]
    return "\n".join(lines)


def module_source(program, forward, backward):
    """The generated module: a header naming the group's calls, then the two kernels."""
    group = program.group
    listing = "\n".join(f"    {call!r}" for call in group.calls)
    lines = ['"""Generated by autograd_lab.compile: one row-wise fused group (reductions over '
             "the last axis).", "", listing, '"""', "",
             "from math import cos, erf, expm1, inf, log, log1p, nan, sin, sqrt"]  # fmt: skip
    if np.dtype(group.dtype) == np.float32:
        lines.append("from autograd_lab.compile.kernel_math import exp32 as exp, tanh32 as tanh  "
                     f"# version {_kernel_math_version()}")  # fmt: skip
        lines.append("from autograd_lab.compile.kernel_math import exp_nonpositive32 as "
                     "exp_nonpositive")  # fmt: skip
        lines.append("from autograd_lab.compile.kernel_math import from_order_key32 as "
                     "from_order_key, order_key32 as order_key")  # fmt: skip
    else:
        lines.append("from math import exp, exp as exp_nonpositive, tanh")
        lines.append("from autograd_lab.compile.kernel_math import from_order_key64 as "
                     "from_order_key, order_key64 as order_key")  # fmt: skip
    lines.append("from numpy import empty, float32, float64  # noqa: F401 (constants, the stash)")
    lines.append("from numba import njit, prange")
    return "\n".join(lines) + forward + backward + "\n"
