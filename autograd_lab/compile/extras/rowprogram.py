"""A row-wise group as a program of scalar steps, and when each step can run.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> from autograd_lab.compile.rowwise import find_row_groups
    >>> (group,) = find_row_groups(trace(lambda x: x.softmax(-1), ag.ones(4, 8)))
    >>> print(RowProgram(group).listing())
    v0 = x0[r, j]                 full   pass 0
    m1 = max(v0)  (no gradient)   row    after pass 0
    t2 = v0 - m1                  full   pass 1
    t3 = exp_nonpositive(t2)      full   pass 1
    s4 = sum(t3)                  row    after pass 1
    t5 = t3 / s4                  full   pass 2

Each call of the group becomes one or more *steps*: a load of an input, an elementwise expression
(compile/rules.py), or a reduction over the row (`sum`, `max`, `min`). Softmax, var, logsumexp and
cross-entropy are written out as their few steps (above: softmax). A step is at the *full* level
(one number per element: computed inside a loop over the row's columns `j`) or at the *row* level
(one number per row). A reduction's result is known only after a whole loop over the row, so the
forward kernel makes several passes over each row: pass k computes what needs the reductions of
passes < k. Since the row is in cache after the first pass, only the first one reads memory.

The backward runs reverse mode over the same steps. The gradient of a row-level value is a sum
over the row (it was broadcast along the row), so gradients, too, come in passes: `backward_plan`
gives each full-level step the pass in which its gradient is computed, and each row-level step
the pass after which its gradient is summed. Softmax's max shift, var's mean and logsumexp's
shift are marked *no gradient*: mathematically the result does not depend on them (eager mode's
formulas say so too), so no gradient is sent through them.
"""

from dataclasses import dataclass, field

from ...ops import elementwise as ew
from ...ops import reduction as red
from ...ops.scalar import Expr, source, sqrt, where
from ..ir import Value
from ..rules import Rule, rule_for, rule_of
from .rowwise import loss_form, pattern, role

REDUCE = ("sum", "max", "min", "argmax")


@dataclass(eq=False)
class Step:
    """One scalar step: `name` is its variable in the kernel, `level` "full" or "row"."""

    name: str
    level: str
    op: str  # "load", "ew" (an expression), "sum", "max", "min", "argmax", "pick", "total"
    args: tuple = ()  # Steps, or numbers
    kwargs: dict = field(default_factory=dict)
    rule: Rule = None  # for "ew": the expression and its local derivatives
    no_grad: bool = False  # no gradient flows into this step (see the module docstring)
    input: int = None  # for loads: which kernel argument
    pattern: str = None  # for loads: "full", "row", "col" or "one"
    scale: float = 1.0  # for totals: mean() of everything is the sum times 1/count
    note: str = ""  # the call this node comes from, as a comment in the kernel
    phase: int = 0  # full: the forward pass computing it; row: the pass after which it is known

    def deps(self):
        return [a for a in list(self.args) + list(self.kwargs.values()) if isinstance(a, Step)]

    def variable(self):
        return Expr.variable(self.name)

    def expression(self):
        """An "ew" step's expression, of its arguments' variables."""
        args = [a.variable() if isinstance(a, Step) else a for a in self.args]
        kwargs = {k: v.variable() if isinstance(v, Step) else v for k, v in self.kwargs.items()}
        return self.rule.forward(args, kwargs)

    def __repr__(self):
        return self.name


# Steps that are not ops of their own: their expression, and their local derivative (of g, the
# gradient arriving at the result y, and the arguments x0, x1), as a rule's are
_g, _y, _x1 = Expr.variable("g"), Expr.variable("y"), Expr.variable("x1")
_NLL = Rule(lambda a, c: -(a * c), (-(_g * _x1), None))
_FINITE = Rule(lambda a: where(a - a == 0, a, 0.0), (None,))  # inf and nan become 0
_SHIFTED_EXP = Rule(lambda a: Expr("exp_nonpositive", a), (_g * _y,))  # kernel_math: a <= 0
_STD = Rule(lambda a: sqrt(a), (where(_y == 0, 0.0, _g / (2 * _y)),))  # 0 where std is 0, as eager
_SUB, _MUL, _DIV, _ADD = (rule_of(fn, 2) for fn in (ew.Sub, ew.Mul, ew.Div, ew.Add))
_EXP, _LOG = rule_of(ew.Exp, 1), rule_of(ew.Log, 1)


def _divide_by(count):
    return Rule(lambda a: a / count, (_g / count,))


class RowProgram:
    """The steps of a RowGroup, in an order where every step follows its arguments."""

    def __init__(self, group, n=repr):
        self.group, self.n = group, n  # n(number): how the kernel writes a number
        self.nodes, self.value_node, self.loads = [], {}, {}
        self.outputs = []  # (Value, Step)
        self.targets = []  # per loss: (target input, ignore_index, reduction, 1st extra input, result)
        self.extra_inputs = 0  # kernel arguments after the group's inputs (the losses' targets)
        self.columns = group.columns
        for call in group.calls:  # (max(dim)'s unused indices were checked by find_row_groups)
            self._expand(call, role(call, unused=lambda value: True))
        self.outputs = [(v, self.value_node[v.id]) for v in group.outputs]
        self._forward_phases()

    # ---- making nodes ------------------------------------------------------------------------
    def _add(self, prefix, level, op, args=(), **fields):
        node = Step(f"{prefix}{len(self.nodes)}", level, op, tuple(args), **fields)
        self.nodes.append(node)
        return node

    def _load(self, value, use):
        """The node of an input read as `use`; a kernel argument per input."""
        number = next(k for k, v in enumerate(self.group.inputs) if v.id == value.id)
        use = "row" if use == "flat" else use
        key = (number, use)
        if key not in self.loads:
            level = "full" if use in ("full", "col") else "row"
            self.loads[key] = self._add(
                "v", level, "load", input=number, pattern=use, note=f"%{value.id}"
            )
        return self.loads[key]

    def _operand(self, value, level):
        """An argument of an op at `level`: a node made before, or a load of an input."""
        if not isinstance(value, Value):
            return value
        if value.id in self.value_node:
            return self.value_node[value.id]
        if level == "full":
            return self._load(value, pattern(value.shape, self.group.shape))
        return self._load(value, "one" if all(s == 1 for s in value.shape) else "row")

    def _ew(self, rule, args, note, kwargs=None, prefix="t", level=None, **fields):
        nodes = [a for a in list(args) + list((kwargs or {}).values()) if isinstance(a, Step)]
        if level is None:
            level = "full" if any(a.level == "full" for a in nodes) else "row"
        return self._add(
            prefix, level, "ew", args, kwargs=kwargs or {}, rule=rule, note=note, **fields
        )

    def _reduce(self, op, arg, note, **fields):
        return self._add(
            {"sum": "s", "max": "m", "min": "m"}[op], "row", op, (arg,), note=note, **fields
        )

    def _expand(self, call, kind):
        note, out = repr(call), call.outputs[0]
        if kind == "elementwise":
            level = "full" if tuple(out.shape) == tuple(self.group.shape) else "row"
            args = [self._operand(a, level) for a in call.args]
            kwargs = {
                k: self._operand(v, level) if isinstance(v, Value) else v
                for k, v in call.kwargs.items()
            }
            node = self._ew(rule_for(call), args, note, kwargs, prefix="v", level=level)
        elif kind == "total":  # sum() or mean() of everything: per-row sums, added up
            arg, per_row = self.value_node[call.args[0].id], 1
            if arg.level == "full":
                arg, per_row = self._reduce("sum", arg, note), self.columns
            count = self.group.rows * per_row if issubclass(call.fn, red.Mean) else 1
            node = self._add("v", "row", "total", (arg,), scale=1.0 / count, note=note)
        elif kind == "loss":
            node = self._loss(call, note)
        else:
            x = self._operand(call.args[0], "full")
            node = self._reduction(call.fn, call.kwargs, x, note)
        self.value_node[out.id] = node

    def _reduction(self, fn, kwargs, x, note):
        """Sum, mean, max/min(dim), var, std, logsumexp, softmax, log_softmax of a full node."""
        columns = self.columns
        if issubclass(fn, (red.SumDim, red.MeanDim)):
            total = self._reduce("sum", x, note)
            if issubclass(fn, red.SumDim):
                return total
            return self._ew(_divide_by(columns), [total], note)
        if issubclass(fn, (red.MaxDim, red.MinDim)):
            return self._reduce("min" if issubclass(fn, red.MinDim) else "max", x, note)
        if issubclass(fn, (red.Var, red.Std)):
            mean = self._ew(_divide_by(columns), [self._reduce("sum", x, note)], note, no_grad=True)
            centred = self._ew(_SUB, [x, mean], note)
            squares = self._reduce("sum", self._ew(_MUL, [centred, centred], note), note)
            dof = columns - kwargs.get("correction", 1)
            var = self._ew(_divide_by(dof), [squares], note)
            return self._ew(_STD, [var], note) if issubclass(fn, red.Std) else var
        # the softmax family: shift by the row's max so exp never overflows
        shift = self._reduce("max", x, note, no_grad=True)
        if issubclass(fn, red.LogSumExp):  # an infinite max (a row of -inf) shifts by 0, as eager
            shift = self._ew(_FINITE, [shift], note, no_grad=True)
        shifted = self._ew(_SUB, [x, shift], note)
        # x - max(x) <= 0 (or NaN): an exp for those; logsumexp's shift may be 0 instead of max
        exps = self._ew(_EXP if issubclass(fn, red.LogSumExp) else _SHIFTED_EXP, [shifted], note)
        total = self._reduce("sum", exps, note)
        if issubclass(fn, red.Softmax):
            return self._ew(_DIV, [exps, total], note)
        log_total = self._ew(_LOG, [total], note)
        if issubclass(fn, red.LogSoftmax):
            return self._ew(_SUB, [shifted, log_total], note)
        return self._ew(_ADD, [log_total, shift], note)  # logsumexp

    def _loss(self, call, note):
        """cross_entropy = nll_loss(log_softmax(x)); nll_loss = -coef[r] * x[r, target[r]], where
        the kernel's RowKernel computes, from the targets, a safe class index per row and the
        coefficient (0 for an ignored row, 1/count of kept rows for reduction="mean")."""
        name, reduction, ignore_index = loss_form(call)
        x = self._operand(call.args[0], "full")
        if name == "cross_entropy":
            x = self._reduction(red.LogSoftmax, {}, x, note)
        target = next(k for k, v in enumerate(self.group.inputs) if v.id == call.args[1].id)
        index_input = len(self.group.inputs) + self.extra_inputs
        self.extra_inputs += 2
        index = self._add("v", "row", "load", input=index_input, pattern="row", note="class")
        coef = self._add("v", "row", "load", input=index_input + 1, pattern="row", note="weight")
        picked = self._add("p", "row", "pick", (x, index), note=note)  # x[r, class[r]]
        loss = self._ew(_NLL, [picked, coef], note)
        if reduction != "none":
            loss = self._add("v", "row", "total", (loss,), note=note)
        self.targets.append((target, ignore_index, reduction, index_input, loss))
        return loss

    # ---- forward passes ----------------------------------------------------------------------
    def _forward_phases(self):
        """Full nodes: the pass computing them; row nodes: the pass after which they are known."""
        for node in self.nodes:
            known = [a.phase for a in node.deps()]
            if node.op in REDUCE:
                node.phase = max(known) + 1
            else:
                node.phase = max(known, default=0)

    def argmax(self, node):
        """The (first) column where a max/min node's argument reached it: where its gradient
        goes, as eager mode's max(dim) sends it to its index. Made when the backward needs it."""
        found = getattr(node, "_argmax", None)
        if found is None:
            found = self._add("i", "row", "argmax", (node.args[0], node), note=node.note)
            found.phase = max(node.args[0].phase, node.phase) + 1
            node._argmax = found
        return found

    # ---- backward passes ---------------------------------------------------------------------
    def flows(self, wanted):
        """Nodes a gradient flows into: on a path from a wanted input's load, never through a
        no-gradient node."""
        found = set()
        for node in self.nodes:
            if node.no_grad:
                continue
            if node.op == "load":
                if node.input in wanted:
                    found.add(node)
            elif node.op != "argmax" and any(a in found for a in node.deps()):
                found.add(node)
        return found

    def backward_plan(self, wanted, at_column=None):
        """(flowing nodes, {node: consumers}, {full node: pass}, {row node: complete},
        one_column).

        A full node whose consumers all pick the same column (as cross-entropy picks the
        target's log-probability) has a gradient that is nonzero in that column only. A row node
        it reads gets that part of its gradient's sum over the row from the one column, with no
        pass over the row, where `at_column(full node, row node)` says the local gradient
        mentions no other full value (0 elsewhere, so the sum is it). `one_column`: {row node:
        those full consumers} (their picks are their consumers)."""
        flowing = self.flows(wanted)
        for node in list(self.nodes):  # max/min that pass a gradient need their column
            if node in flowing and node.op in ("max", "min"):
                self.argmax(node)
        consumers = {node: [] for node in self.nodes}
        for node in self.nodes:
            if node in flowing:
                for arg in dict.fromkeys(node.deps()):
                    if arg in flowing:
                        consumers[arg].append(node)
        outputs = {node for _, node in self.outputs}
        picked = {
            node: consumers[node]
            for node in self.nodes  # its picks
            if node in flowing
            and node.level == "full"
            and node not in outputs
            and consumers[node]
            and all(c.op == "pick" for c in consumers[node])
            and len({c.args[1] for c in consumers[node]}) == 1
        }
        passes, complete, one_column = {}, {}, {}
        for node in reversed(self.nodes):
            if node not in flowing:
                continue
            late = [-1]  # an output's incoming gradient is there from the start
            if node.level == "row":
                one_column[node] = [
                    c for c in consumers[node] if c in picked and at_column and at_column(c, node)
                ]
            for c in consumers[node]:
                if c in one_column.get(node, ()):
                    late += [complete[p] for p in picked[c]]
                    continue
                late.append(
                    passes[c]
                    if c.level == "full"
                    else complete[c] + (1 if node.level == "full" else 0)
                )
            if node.level == "full":
                passes[node] = max(0, *late)
            else:
                complete[node] = max(late)
        return flowing, consumers, passes, complete, one_column

    def listing(self):
        """The steps, one a line (what the module docstring shows)."""
        lines = []
        for node in self.nodes:
            if node.op == "load":
                index = {"full": "[r, j]", "row": "[r]", "col": "[j]", "one": "[0]"}[node.pattern]
                text = f"x{node.input}{index}"
            elif node.op == "ew":
                text = source(node.expression(), self.n)
            else:
                text = f"{node.op}({', '.join(a.name for a in node.args)})"
            text = f"{node.name} = {text}" + ("  (no gradient)" if node.no_grad else "")
            when = (
                f"pass {node.phase}"
                if node.level == "full"
                else f"after pass {node.phase - 1}"
                if node.phase
                else "before pass 0"
            )
            lines.append(f"{text:<30}{node.level:<7}{when}")
        return "\n".join(lines)
