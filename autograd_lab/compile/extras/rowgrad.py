"""A row-wise group's backward kernel: reverse mode over its program, in passes over each row.

    >>> import autograd_lab as ag
    >>> f = ag.compile(lambda x: x.softmax(-1))
    >>> y = f(ag.ones(4, 8, dtype=ag.float64, requires_grad=True))
    >>> print(f.kernels[0])                          # doctest: +SKIP
    ...
    def row_backward(n_rows, n_cols, n_blocks, x0, saved, g0, gx0):
        ...
                m1 = saved[r, 0]  # %1 = softmax(%0, dim=-1)
                s4 = saved[r, 1]  # %1 = softmax(%0, dim=-1)
                sum_ds4 = 0.0
                for j in range(n_cols):  # backward pass 0: sum_ds4
                    dt5 = g0[r, j]
                    ...
                    t3 = exp_nonpositive(t2)  # %1 = softmax(%0, dim=-1)
                    sum_ds4 += -dt5 * t3 / (s4 * s4)
                    stash[0, j] = t3
                ds4 = sum_ds4
                for j in range(n_cols):  # backward pass 1: gx0
                    dt5 = g0[r, j]
                    dt3 = ds4 + dt5 / s4
                    t3 = stash[0, j]  # kept by backward pass 0
                    dt2 = dt3 * t3
                    dv0 = dt2
                    gx0[r, j] = dv0

`d<name>` is the gradient of value `<name>`: each step sends back to its arguments their rules'
local derivatives (compile/rules.py), newest step first. A value that is one number per row but
was used by every element of the row (a sum, a max, a mean) gets the SUM of what the elements
send back: `sum_d<name>`, added up during one pass and known after it. So gradients, too, take a
few passes over the row (RowProgram.backward_plan says which node's gradient is known in which
pass). Row values the forward computed are read from `saved`, never recomputed.
"""

from functools import reduce

from ...ops.scalar import Expr, where
from ..codegen import Block
from .rowcode import INDEX, Emitter, Passes, block_lines, forward_body, inputs, kernel
from .rowprogram import Step


def backward_source(program, wanted, grad_patterns, printer):
    """The backward kernel and the row values it reads from `saved`: (source, saved steps).

    `wanted`: the kernel inputs that get a gradient; `grad_patterns`: how each output's incoming
    gradient is laid out ("full", "row", "col", "one": a broadcast gradient is read in place)."""
    loops = Passes(program, Emitter(program, printer))
    body, saved = backward_body(program, wanted, grad_patterns, loops)
    source = kernel(
        "row_backward",
        program,
        backward_params(program, wanted),
        body,
        loops.allocation(program.group.dtype),
    )
    return source, saved


def backward_params(program, wanted):
    params = inputs(program) + ["saved"]
    params += [f"g{k}" for k in range(len(program.outputs))]
    return params + [f"gx{k}" for k in sorted(wanted)]


def ahead_source(program, wanted, saved, printer):
    """ONE kernel for a loss (a group whose one output is a total): the forward, then in the same
    visit of each row the backward for an incoming gradient of 1 (g0 = [1.0]).

    Why: the loss is one number, and a gradient is linear in the gradient coming in, so the
    inputs' gradients for any incoming g are g times these. Computed while the row is still in
    the cache, backward re-reads nothing from memory, and a costly value (a softmax's exp) is
    computed once and kept in the stash for the backward's pass instead of twice."""
    passes = Passes(program, Emitter(program, printer))
    forward, totals, defined = forward_body(program, saved, passes)
    backward, _ = backward_body(program, wanted, ("one",), passes, defined)
    params = inputs(program) + ["out0", "saved", "g0"] + [f"gx{k}" for k in sorted(wanted)]
    before_rows, after_rows = block_lines(program, passes, totals)
    body = Block()
    body.items += [forward, backward]
    return kernel("row_forward_backward", program, params, body, before_rows, after_rows)


def _sum(terms):
    return reduce(lambda a, b: a + b, terms)


def backward_body(program, wanted, grad_patterns, loops, defined=None):
    """The backward's statements for one row (a Block), and the row values they read from
    `saved`; or, after the forward in one kernel, none: the row values it `defined` are at hand."""
    emit = loops.emit
    saved, prelude, row_ready, adjoints_ready = [], Block(), set(), set()

    def forward_row(node):
        """A row value in the backward: loaded from an input or from what forward saved."""
        if node not in row_ready:
            row_ready.add(node)
            if node.op == "load":
                prelude.add(emit.definition(node))
            elif defined is not None:
                assert node in defined, f"{node} is not computed by the forward part (a bug)"
            else:
                saved.append(node)
                prelude.add(f"{node.name} = saved[r, {len(saved) - 1}]  # {node.note}")

    def mentioned(expr, define):
        """Define every forward value `expr` reads (with `define`) before it is used."""
        names = expr.variables()
        for node in program.nodes:
            if node.name in names and node.op != "total":
                define(node)

    def contribution(consumer, node):
        """What `consumer` sends back to its argument `node`: an Expr, or None."""
        grad, col = Expr.variable(f"d{consumer.name}"), Expr.variable("col")
        if consumer.op == "total":
            return grad * consumer.scale
        if consumer.op == "sum":
            return grad
        if consumer.op in ("max", "min"):  # the gradient goes to the first column holding it
            return where(col == program.argmax(consumer).variable(), grad, 0.0)
        if consumer.op == "pick":  # to the picked column only
            return where(col == consumer.args[1].variable(), grad, 0.0)
        args = [a.variable() if isinstance(a, Step) else a for a in consumer.args]
        kwargs = {k: v.variable() if isinstance(v, Step) else v for k, v in consumer.kwargs.items()}
        grads = consumer.rule.grads(grad, consumer.variable(), args, kwargs)
        terms = [
            g for a, g in zip(consumer.args, grads, strict=False) if a is node and g is not None
        ]
        return _sum(terms) if terms else None

    def at_column(full, node):
        """May `full`'s contribution to row step `node` be taken at its one nonzero column?"""
        term = full.op == "ew" and contribution(full, node)
        return (
            term is not None
            and term is not False
            and not any(m.level == "full" and m.name in term.variables() for m in program.nodes)
        )

    # one_column: the full consumers whose gradient is one column's, summed without a pass
    flowing, consumers, passes, complete, one_column = program.backward_plan(wanted, at_column)
    outputs = {node: k for k, (_, node) in enumerate(program.outputs)}
    order = [node for node in program.nodes if node in flowing]  # arguments before results

    def incoming(node):
        k = outputs.get(node)
        return [] if k is None else [Expr.variable(f"g{k}{INDEX[grad_patterns[k]]}")]

    sums = [
        node
        for node in order
        if node.level == "row"
        and any(c.level == "full" and c not in one_column[node] for c in consumers[node])
    ]

    def total(terms):
        return emit.print(_sum(terms)) if terms else emit.n(0.0)

    def row_adjoint(node, into):
        """d<node> of a row step, once every pass that contributes to it has run."""
        if node in adjoints_ready:
            return
        adjoints_ready.add(node)
        terms = [emit.cast(Expr.variable(f"sum_d{node.name}"))] if node in sums else []
        for full in one_column[node]:  # its gradient at the picked column: the picks' gradients
            for pick in consumers[full]:
                row_adjoint(pick, into)
            at_pick = _sum([Expr.variable(f"d{pick.name}") for pick in consumers[full]])
            term = contribution(full, node).substitute({f"d{full.name}": at_pick})
            mentioned(term, forward_row)
            terms.append(term)
        for consumer in consumers[node]:
            if consumer.level == "row":
                row_adjoint(consumer, into)
                term = contribution(consumer, node)
                if term is not None:
                    mentioned(term, forward_row)
                    terms.append(term)
        into.add(f"d{node.name} = {total(terms + incoming(node))}")

    body = Block().add(*[f"sum_d{node.name} = {emit.zero}" for node in sums])
    for node in reversed(order):
        if node.level == "row" and complete[node] == -1:
            row_adjoint(node, body)
    loads = [node for node in order if node.op == "load"]
    for p in range(max(passes.values(), default=-1) + 1):
        loop, done = loops.new_loop(f"backward pass {p}"), set()
        define = lambda node, loop=loop: (  # noqa: E731
            forward_row(node) if node.level == "row" else loops.full_value(node, loop, forward_row)
        )

        def full_adjoint(node, loop=loop, done=done, define=define):
            if node not in done:
                done.add(node)
                terms = []
                for consumer in consumers[node]:
                    if consumer.level == "full":
                        full_adjoint(consumer)
                    term = contribution(consumer, node)
                    if term is not None:
                        mentioned(term, define)
                        terms.append(term)
                loop.uses(*terms)
                loop.add(f"d{node.name} = {total(terms + incoming(node))}")
            return f"d{node.name}"

        for node in sums:
            for consumer in consumers[node]:
                if (
                    consumer.level == "full"
                    and passes[consumer] == p
                    and (consumer not in one_column[node])
                ):
                    full_adjoint(consumer)
                    term = contribution(consumer, node)
                    mentioned(term, define)
                    loop.uses(term)
                    loop.add(f"sum_d{node.name} += {emit.print(term)}")
                    if f"sum_d{node.name}" not in loop.makes:
                        loop.makes.append(f"sum_d{node.name}")
        for node in loads:
            if node.level == "full" and passes[node] == p:
                grad = full_adjoint(node)
                if node.pattern == "full":
                    loop.add(f"gx{node.input}[r, j] = {grad}")
                else:  # a column input: summed over the rows of this block
                    loop.add(f"gx{node.input}[b, j] += {grad}")
                loop.makes.append(f"gx{node.input}")
        if loop.items:
            body.items.append(loop)
        for node in reversed(order):
            if node.level == "row" and complete[node] == p:
                row_adjoint(node, body)
    for node in loads:
        if node.level == "row":
            row_adjoint(node, body)
            body.add(
                f"gx{node.input}[r] = d{node.name}"
                if node.pattern == "row"
                else f"gx{node.input}[b] += d{node.name}"
            )
    whole = Block()
    whole.items += [prelude, body]
    return whole, saved
