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
                    t2 = v0 - m1  # %1 = softmax(%0, dim=-1)
                    t3 = exp_nonpositive(t2)  # %1 = softmax(%0, dim=-1)
                    accs4 += t3
                    stash[0, j] = t3
                s4 = accs4
                for j in range(n_cols):  # pass 2: out0
                    t3 = stash[0, j]  # kept by pass 1
                    t5 = t3 / s4  # %1 = softmax(%0, dim=-1)
                    out0[r, j] = t5
                saved[r, 0] = m1
                saved[r, 1] = s4
    ...

The outer loop runs over blocks of rows (`prange` when the group is big enough: the threads
share the blocks); the passes over one row read memory the first time and the CPU's cache after.
A value a later pass needs again is recomputed, unless it is costly (an exp): then it is kept in
`stash`, one row per value. The forward kernel also writes the row values the backward needs
(`saved`: a few numbers per row), so backward never repeats the forward's passes.

Maxima compare `order_key`s, integers that sort like the floats (compile/extras/kernel_math.py): the
compiler turns an integer max into vector instructions, a float max with NaN rules it does not.
"""

import numpy as np

from ...ops.scalar import Expr, where
from ..codegen import PARALLEL_MIN_ELEMENTS, Block, function, header
from .rowprogram import REDUCE

INDEX = {"full": "[r, j]", "row": "[r]", "col": "[j]", "one": "[0]"}
SHORT_ROW = 16384  # float32 rows up to this length are summed in float32 (see Emitter)


def parallel_pays(group):
    return group.rows * group.columns >= PARALLEL_MIN_ELEMENTS


class Emitter:
    """How one row-wise kernel writes its expressions (one Printer for the kernel's module)."""

    def __init__(self, program, printer):
        self.program, self.print = program, printer
        self.n = printer.literal
        self.dtype = np.dtype(program.group.dtype)
        # sums over a row start from `zero`: float32 sums of float32 rows (8 lanes of a vector
        # register, each adding up a few dozen numbers: an error of ~1e-6, and twice the speed
        # of converting every number to float64), float64 sums for longer rows
        short = self.dtype == np.float32 and program.columns <= SHORT_ROW
        self.zero = self.n(0.0) if short else "0.0"

    def cast(self, expr):
        """A float64 accumulator read as the kernel's dtype."""
        return Expr("float32", expr) if self.dtype == np.float32 else expr

    def definition(self, node):
        """`name = <its value>  # the call it comes from`: a load, or an "ew" step's expression."""
        if node.op == "load":
            return f"{node.name} = x{node.input}{INDEX[node.pattern]}  # {node.note}"
        return f"{node.name} = {self.print(node.expression())}  # {node.note}"


# ---- the passes over a row, and the values they share ---------------------------------------------------


class Pass(Block):
    """One loop over the row's columns (`j`). Where its statements compare column numbers, it
    counts them in `col`, a float: an integer j next to float32 values would take 64-bit vector
    lanes and halve the speed (the compiler turns `col += 1` into a vector of 8 column numbers)."""

    def __init__(self, title, n):
        super().__init__("for j in range(n_cols):")
        self.title, self.n = title, n
        self.makes = []  # what the loop computes, for its comment
        self.defined = set()  # full-level steps defined inside
        self.counts_columns = False

    def uses(self, *exprs):
        """Note the variables of the expressions about to be added (`col`, the column number)."""
        if any("col" in e.variables() for e in exprs if isinstance(e, Expr)):
            self.counts_columns = True

    def lines(self, indent=""):
        makes = f": {', '.join(self.makes)}" if self.makes else ""
        self.header = f"for j in range(n_cols):  # {self.title}{makes}"
        if not self.counts_columns:
            return super().lines(indent)
        loop = super().lines(indent)
        return [f"{indent}col = {self.n(0.0)}", *loop, f"{indent}    col += {self.n(1.0)}"]


class Passes:
    """The loops over one row, and the values they share.

    A full-level value one pass computed and a later pass needs again is recomputed (loads and
    arithmetic are cheap), unless computing it is costly (an exp, a tanh, ...): then the first
    pass keeps it in `stash[i, j]` (a row per value, in cache) and later passes read it back."""

    def __init__(self, program, emit):
        self.program, self.emit, self.n = program, emit, emit.n
        self.loops, self.first = [], {}  # first: step -> the pass that computed it first
        self.stash = {}  # step -> its row in the stash

    def new_loop(self, title):
        """A loop over the row's columns; `title` names it in comments ("pass 1")."""
        loop = Pass(title, self.n)
        self.loops.append(loop)
        return loop

    def full_value(self, node, loop, row_value):
        """Define full step `node` in `loop` (computing, or reading the stash), once."""
        if node in loop.defined:
            return
        loop.defined.add(node)
        earlier = self.first.get(node)
        if (
            earlier is not None
            and earlier is not loop
            and node.op == "ew"
            and (node.expression().costly())
        ):
            if node not in self.stash:
                self.stash[node] = len(self.stash)
                earlier.add(f"stash[{self.stash[node]}, j] = {node.name}")
            loop.add(f"{node.name} = stash[{self.stash[node]}, j]  # kept by {earlier.title}")
            return
        for arg in node.deps():
            if arg.level == "full":
                self.full_value(arg, loop, row_value)
            else:
                row_value(arg)
        loop.add(self.emit.definition(node))
        self.first.setdefault(node, loop)

    def allocation(self, dtype):
        """The stash, made once per block of rows (inside the thread that uses it)."""
        if not self.stash:
            return []
        return [f"stash = empty(({len(self.stash)}, n_cols), {np.dtype(dtype).name})"]


# ---- forward -----------------------------------------------------------------------------------------


def forward_source(program, saved, printer):
    """The forward kernel: outputs, and the row values in `saved` (a list of steps)."""
    emit = Emitter(program, printer)
    passes = Passes(program, emit)
    body, totals, _ = forward_body(program, saved, passes)
    params = inputs(program) + [f"out{k}" for k in range(len(program.outputs))] + ["saved"]
    before_rows, after_rows = block_lines(program, passes, totals)
    return kernel("row_forward", program, params, body, before_rows, after_rows)


def block_lines(program, passes, totals):
    """Lines before and after a block's rows: the stash, and each total's partial sum."""
    before_rows = passes.allocation(program.group.dtype)
    before_rows += [f"total{t.name} = 0.0" for t in totals]
    after_rows = [
        f"out{k}[b] = total{node.name}"
        for k, (_, node) in enumerate(program.outputs)
        if node.op == "total"
    ]
    return before_rows, after_rows


def forward_body(program, saved, passes):
    """The forward's statements for one row (a Block), the totals it adds up, and the row
    values it defines. A later pass (a backward's, in one fused kernel) may still ask these
    loops to stash a value: Blocks are printed last, when every kernel sharing `passes` is done."""
    emit, outputs = passes.emit, program.outputs
    full_out = {node: k for k, (_, node) in enumerate(outputs) if node.level == "full"}
    needed = _closure([node for _, node in outputs] + list(saved))
    totals = [node for node in program.nodes if node.op == "total" and node in needed]
    reductions = [node for node in program.nodes if node.op in REDUCE and node in needed]
    last = max([node.phase for node in full_out] + [r.phase - 1 for r in reductions], default=-1)
    row_ready, body = set(), Block()

    def row_value(node, into):
        """Define a row step (and the row steps it needs) in Block `into`, once."""
        if node in row_ready:
            return
        row_ready.add(node)
        for arg in node.deps():
            if arg.level == "row":
                row_value(arg, into)
        if node.op in ("load", "ew"):
            into.add(emit.definition(node))
        elif node.op == "pick":  # one element of the row: computed at its column, no loop
            value, column = node.args
            into.add(f"j = int({column.name})  # {node.note}: the target's column")
            _at_column(value, emit, into, set(), lambda a: row_value(a, into))
            into.add(f"{node.name} = {value.name}")
        else:
            raise AssertionError(f"{node} is used before its pass ran (a bug in rowcode)")

    for k in range(last + 1):
        work = [r for r in reductions if r.phase - 1 == k]
        writes = [node for node in full_out if node.phase == k]
        if not work and not writes:
            continue
        before, starts, ends = Block(), [], []
        body.items.append(before)
        loop = passes.new_loop(f"pass {k}")
        loop.makes = [r.name for r in work] + [f"out{full_out[node]}" for node in writes]
        for r in work:
            for arg in r.args:
                if arg.level == "full":
                    passes.full_value(arg, loop, lambda a, into=before: row_value(a, into))
                else:
                    row_value(arg, before)
            start, update, end = _reduction_lines(r, emit, loop)
            starts.append(start)
            loop.add(*update)
            ends += [end] if end else []
        for node in writes:
            passes.full_value(node, loop, lambda a, into=before: row_value(a, into))
            loop.add(f"out{full_out[node]}[r, j] = {node.name}")
        body.add(*starts)
        body.items.append(loop)
        body.add(*ends)
        row_ready.update(work)
    for k, (_, node) in enumerate(outputs):
        if node.level == "row" and node.op != "total":
            row_value(node, body)
            body.add(f"out{k}[r] = {node.name}")
    for k, node in enumerate(saved):
        row_value(node, body)
        body.add(f"saved[r, {k}] = {node.name}")
    for node in totals:
        row_value(node.args[0], body)
        body.add(f"total{node.name} += {node.args[0].name}")
    return body, totals, row_ready


def _reduction_lines(node, emit, loop):
    """(start line, update lines, end line) of a reduction over the row (in `loop`)."""
    arg, n, name, print_ = node.args[0].name, emit.n, node.name, emit.print
    if node.op == "sum":
        start = f"acc{name} = {emit.zero}"
        total = print_(emit.cast(Expr.variable(f"acc{name}")))
        return start, [f"acc{name} += {arg}"], f"{name} = {total}"
    if node.op in ("max", "min"):  # compared as integers (kernel_math's order_key)
        first, better = ("-inf", ">") if node.op == "max" else ("inf", "<")
        key = f"key{name}"
        update = [
            f"key = {print_(Expr('order_key', Expr.variable(arg)))}",
            f"{key} = key if key {better} {key} else {key}",
        ]
        start = f"{key} = {print_(Expr('order_key', Expr('constant', float(first))))}"
        value = print_(Expr("from_order_key", Expr.variable(key)))
        if node.no_grad:  # a softmax's shift: a NaN in the row makes its sum of exps NaN anyway
            return f"{start}  # compared as integers: kernel_math", update, f"{name} = {value}"
        nans = f"nans{name}"
        return (
            f"{key}, {nans} = {start.split(' = ', 1)[1]}, 0  # compared as integers",
            update + [f"{nans} += {arg} != {arg}  # a NaN makes the result NaN, as numpy"],
            f"{name} = {value} if {nans} == 0 else {n(float('nan'))}",
        )
    # argmax: the first column holding the max (or the first NaN)
    x, extreme, col = Expr.variable(arg), node.args[1].variable(), Expr.variable("col")
    last = float(emit.program.columns)
    hit = (x == extreme) | ((x != x) & (extreme != extreme))
    candidate = where(hit, col, last)
    loop.uses(candidate)
    emit.print.functions.add("min")
    return f"{name} = {n(last)}", [f"{name} = min({name}, {print_(candidate)})"], ""


def _at_column(node, emit, into, done, row_value):
    """Statements computing full step `node` at the one column `j` (its arguments first)."""
    if node in done:
        return
    done.add(node)
    for arg in node.deps():
        _at_column(arg, emit, into, done, row_value) if arg.level == "full" else row_value(arg)
    into.add(emit.definition(node))


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
    fastmath = '{"reassoc", "arcp"}' if float32 else False
    outer = Block().add("per_block = (n_rows + n_blocks - 1) // n_blocks")
    blocks = outer.loop(f"for b in {'prange' if parallel else 'range'}(n_blocks):")
    blocks.add(*before_rows)
    rows = blocks.loop("for r in range(b * per_block, min(n_rows, (b + 1) * per_block)):")
    rows.items.append(body)
    blocks.add(*after_rows)
    return function(name, params, outer, parallel, fastmath)


def module_source(program, printer, forward, backward):
    """The generated module: a header naming the group's calls and importing what the kernels
    call, then the two kernels."""
    group = program.group
    lines = header(
        "Generated by autograd_lab.compile: one row-wise fused group (reductions over the last "
        "axis).",
        [repr(call) for call in group.calls],
        printer.functions,
        group.dtype,
        "cpu",
        extra=[
            "from math import inf, nan  # noqa: F401 (constants)",
            "from numpy import empty  # noqa: F401 (the stash)",
        ],
    )
    return "\n".join(lines + ["", "", "", forward, "", "", "", backward]) + "\n"
