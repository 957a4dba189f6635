"""The planned executor: run a traced Graph with its MemoryPlan (see compile/memory.py).

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> from autograd_lab.compile.memory import plan_memory, run_planned
    >>> w = ag.randn(3, 3, requires_grad=True)
    >>> x = ag.randn(4, 3)
    >>> graph = trace(lambda x: (x @ w).tanh().sum(), x)
    >>> loss = run_planned(graph, [x], plan_memory(graph, [x]))
    >>> loss.grad_fn
    <PlannedGraphBackward0>
    >>> loss.backward()               # w.grad is the gradient array itself, not a copy of it
    >>> w.grad.shape
    autograd_lab.Size([3, 3])

Forward runs every call through `call.fn.apply`, as eager mode does, but each call on leaves
detached from its arguments, so the call's nodes form a small graph of their own, and frees every
value after its last reader. Linear layers and ReLU it runs itself, in numpy, into buffers it
chooses (layers.py: a weight's gradient buffer holds the layer's output and the gradient flowing
back into it until the weight's gradient is written there). The whole program is one autograd
node, `PlannedGraphBackward0`, whose backward walks the calls in reverse (a valid order: they
were recorded in execution order), runs one call's backward at a time, drops each gradient once
used, adds repeated gradients in place, and writes each leaf parameter's gradient straight into
`.grad` as soon as it is complete (once the first call that reads the parameter has gone
backward), then runs that parameter's post-accumulate hooks (`register_post_accumulate_grad_hook`)
right there, as eager's AccumulateGrad does. With the optimizer's step in such a hook, each
gradient is used and dropped as backward goes, so the gradients are never all alive together:

    >>> optimizers = {p: ag.optim.SGD([p], lr=0.1) for p in [w]}  # one per parameter
    >>> def update(p):
    ...     optimizers[p].step()
    ...     optimizers[p].zero_grad()  # the gradient's memory goes now, before backward ends
    >>> handle = w.register_post_accumulate_grad_hook(update)
    >>> run_planned(graph, [x], plan_memory(graph, [x])).backward()
    >>> w.grad is None
    True

It frees (and overwrites) what forward kept as it goes: it runs once per forward.

NB: like PyTorch's reentrant checkpoint, the parameters' gradients are written by this node
itself, so `autograd.grad(loss, params)` does not reach them: use `loss.backward()`.
With `create_graph=True` it runs the graph again eagerly (higher-order gradients stay right).
"""

import weakref
from dataclasses import replace

import numpy as np

from ...autograd import engine
from ...autograd.function import Function
from ...autograd.grad_mode import _state, enable_grad
from ...tensor import Tensor, _make
from ..ir import map_values
from ..run import check_inputs, run
from .layers import layer_steps

watchers = []  # timelines recording now (memory.record_memory): they get a sample per step that
# the executor runs itself, since those steps make no autograd node that they could observe


def run_planned(graph, inputs, plan):
    """Run `graph` on `inputs` as `plan` says; gradients of the results take the planned backward."""
    check_inputs(graph, inputs)
    if not on_host(graph, inputs):
        raise NotImplementedError(
            "run_planned plans host memory (numpy arrays), and these tensors are on a GPU. Fix: run "
            "the graph unplanned with autograd_lab.compile.run(graph, inputs), or use "
            "compile(fn) without plan_memory=True on CUDA tensors (fusion still applies)."
        )
    params = [(v, t) for v, t in _const_items(graph) if t.requires_grad]
    if not (_state.enabled and (params or any(t.requires_grad for t in inputs))):
        return run(graph, inputs, plan)  # nothing to differentiate: forward with reuse only
    # Leaf parameters get their gradient straight into .grad, each as soon as it is complete (then
    # their post-accumulate hooks run); others (a non-leaf constant, a leaf with register_hook
    # hooks) get theirs through autograd, which routes it on and runs the hooks.
    routed = {v.id for v, t in params if t.grad_fn is not None or t._hooks}
    results = PlannedGraph.apply(graph, plan, routed, len(inputs), *inputs,
                                 *[t for _, t in params])  # fmt: skip
    values = dict(zip([v.id for v in graph.outputs], _as_tuple(results), strict=True))
    return map_values(graph.output_tree, lambda v: values[v.id])


def on_host(graph, inputs):
    """Are the inputs and the graph's constants numpy arrays (what the planner plans)?"""
    tensors = list(inputs) + [t for _, t in _const_items(graph)]
    return all(type(t._data) is np.ndarray for t in tensors)


def _const_items(graph):
    return [(v, v.const) for v in graph.values() if v.const is not None]


class _CallRecord:
    """One call of the planned forward, as backward needs it: its results' nodes and the leaves
    its arguments were detached into (its own small graph, so it can go backward alone)."""

    __slots__ = ("call", "roots", "targets")

    def __init__(self, call, roots, targets):
        self.call, self.roots, self.targets = call, roots, targets


class PlannedGraph(Function):
    """The whole planned program as one node: forward runs the calls, backward runs theirs in
    reverse with the plan's lifetimes (see the module docstring)."""

    node_name = "PlannedGraphBackward0"

    @staticmethod
    def forward(ctx, graph, plan, routed, n_inputs, *tensors):
        ctx.graph, ctx.routed, ctx.n_inputs = graph, routed, n_inputs
        ctx.save_for_backward(*tensors[:n_inputs])  # only the create_graph fallback reads them
        env = {v.id: t for v, t in zip(graph.inputs, tensors, strict=False)}
        ctx.params = [v.id for v, t in _const_items(graph) if t.requires_grad]
        env.update(zip(ctx.params, tensors[n_inputs:], strict=True))
        last_use, keep = graph.last_use(), {v.id for v in graph.outputs}
        ctx.records, slots = [], {}
        # A plan made without gradients (nothing was saved then) may reuse buffers that backward
        # now needs: such a plan's buffers are not used here.
        buffers = plan.buffers if plan.backward else {}
        steps = layer_steps(graph, tensors[:n_inputs], routed)  # linear layers, ReLU: layers.py
        for call in graph.calls:
            step = steps.get(call.index)
            if step is None:
                record, outs = _forward_call(call, env, buffers, slots)
            else:
                record, outs = step, (_run_step(step, call, env),)
            ctx.records.append(record)
            for value, out in zip(call.outputs, outs, strict=False):
                if value is not None:
                    env[value.id] = out
            for value in call.inputs():
                if last_use.get(value.id) == call.index and value.id not in keep:
                    env.pop(value.id, None)  # its last reader ran: free it now
        found = {v.id: v.const for v in graph.outputs if v.const is not None} | env
        return tuple(_make(found[v.id]._data) for v in graph.outputs)

    @staticmethod
    def backward(ctx, *grads):
        if _state.enabled:  # create_graph=True: the gradients must be differentiable: go eager
            return _backward_eagerly(ctx, grads)
        graph, pending = ctx.graph, {}  # value id -> [gradient so far, is its array ours?]
        for value, g in zip(graph.outputs, grads, strict=True):
            if g is not None:
                _add(pending, value.id, g)
        records, ctx.records = ctx.records, None
        if records is None:
            raise RuntimeError(
                "this planned graph has gone backward already: its backward frees (and partly "
                "overwrites) what forward kept as it goes, so retain_graph=True cannot keep it. "
                "Fix: run the planned function again to go backward again, or compile without "
                "plan_memory=True."
            )
        given = [_weak(g._data) for g in grads if g is not None]  # arrays the caller may hold
        params = {v.id: t for v, t in _const_items(graph)}
        direct = [i for i in ctx.params if i not in ctx.routed]  # their gradients go into .grad
        complete_after = {}  # {call index: the parameters whose gradients are complete after it}
        for value_id, index in graph.first_use().items():
            if value_id in direct:
                complete_after.setdefault(index, []).append(value_id)
        for i in range(len(records) - 1, -1, -1):
            record, records[i] = records[i], None  # this call's saved tensors go once it has run
            if type(record) is _CallRecord:
                _call_backward(record, pending)
            else:
                _step_backward(record, pending)
            for value_id in complete_after.get(i, ()):  # no earlier call adds to its gradient
                _hand_over(params[value_id], pending.pop(value_id, None), given)
        for value_id in direct:  # read by no call (a parameter the function returns as it is)
            _hand_over(params[value_id], pending.pop(value_id, None), given)
        returned = [v.id for v in graph.inputs] + [i if i in ctx.routed else None
                                                    for i in ctx.params]  # fmt: skip
        return (None,) * 4 + tuple(
            _exclusive(pending[i], given) if i in pending else None for i in returned
        )


def _forward_call(call, env, buffers, slots):
    """Run one call on leaves detached from its arguments, so its nodes form a graph of their own."""
    leaves = {}
    for value in call.inputs():
        tensor = value.const if value.const is not None and value.id not in env else env[value.id]
        leaf = _make(tensor._data)
        if tensor.requires_grad and tensor._data.dtype.kind == "f":
            leaf._requires_grad = True
        leaves[value.id] = leaf
    args = map_values(call.args, lambda v: leaves[v.id])
    kwargs = map_values(call.kwargs, lambda v: leaves[v.id])
    if getattr(call.fn, "accepts_out", False) and buffers:
        kwargs["out"] = _out_arrays(call, buffers, slots)
    nodes, outer = [], _state.on_node  # a watching timeline still sees every node

    def watch(node, outputs, op_args, op_kwargs):
        nodes.append(node)
        if outer is not None:
            outer(node, outputs, op_args, op_kwargs)

    _state.on_node = watch
    try:
        with enable_grad():
            outs = _as_tuple(call.fn.apply(*args, **kwargs))
    finally:
        _state.on_node = outer
    roots = [(value.id, _stand_in(out._data, out.grad_fn, out.output_nr))
             for value, out in zip(call.outputs, outs, strict=False)
             if value is not None and out.grad_fn is not None]  # fmt: skip
    targets = [(i, leaf) for i, leaf in leaves.items() if leaf._requires_grad]
    kept = {id(t) for node in nodes for t in _held_tensors(node)}
    for _, leaf in targets:
        if id(leaf) not in kept:  # its graph needs the leaf, not its values: let the array go
            leaf._data = _stand_in(leaf._data)._data
    return _CallRecord(call, roots, targets), outs


def _call_backward(record, pending):
    """One call's backward through its own small graph: its results' gradients leave `pending`
    (their last use) and its inputs' gradients join it."""
    roots, seeds = [], []
    for value_id, root in record.roots:
        if value_id in pending:
            roots.append(root)
            seeds.append(pending.pop(value_id)[0])
    if not roots or not record.targets:
        return
    results = engine.grad(roots, [leaf for _, leaf in record.targets], seeds, allow_unused=True)
    del roots, seeds  # the incoming gradients go before the next call's backward makes more
    for (value_id, _), g in zip(record.targets, results, strict=True):
        if g is not None:
            _add(pending, value_id, g)


def _step_backward(step, pending):
    """The backward of a step of layers.py: the gradients it makes are ours (new arrays or
    planned buffers), so later ones may be added into them, and ReLU may mask them in place."""
    entry = pending.pop(step.out.id, None)
    if entry is not None:
        for value_id, g, ours in step.backward(*entry):
            _add(pending, value_id, g, ours)
        _note(step.call.name, "backward")


def _run_step(step, call, env):
    """Run a step of layers.py; its result requires grad when one of its inputs does."""
    lookup = lambda value: env[value.id] if value.id in env else value.const  # noqa: E731
    out = _make(step.forward(lookup))
    out._requires_grad = any(lookup(value).requires_grad for value in call.inputs())
    _note(call.name, "forward")
    return out


def _note(label, phase):
    for timeline in watchers:
        timeline.mark(label, phase)


def _held_tensors(node):
    """Tensors a node keeps: saved for backward, or put on ctx by forward."""
    for saved in node._saved or ():
        if saved is not None and saved.tensor is not None:
            yield saved.tensor
    yield from (v for v in node.__dict__.values() if isinstance(v, Tensor))


def _stand_in(array, grad_fn=None, output_nr=0):
    """A tensor of `array`'s shape and dtype that holds no memory (a broadcast zero)."""
    return _make(np.broadcast_to(np.zeros((), array.dtype), array.shape), grad_fn, output_nr)


def _out_arrays(call, buffers, slots):
    """The planned out= arrays of a call: the slot's array, reused when a dead value left it."""
    out = []
    for value in call.outputs:
        slot = buffers.get(value.id) if value is not None else None
        array = slots.get(slot)
        if slot is not None and (array is None or array.shape != value.shape):
            array = slots[slot] = np.empty(value.shape, value.dtype)
        out.append(array if slot is not None else None)
    return tuple(out)


def _add(pending, value_id, g, ours=False):
    """Sum a gradient into the pending one: in place once the array is one we made (`ours`)."""
    entry = pending.get(value_id)
    if entry is None:  # not ours: the op that made it may have handed it out elsewhere too
        pending[value_id] = [g, ours]
    elif entry[1] and entry[0]._data.shape == g._data.shape:
        np.add(entry[0]._data, g._data, out=entry[0]._data)
    else:
        pending[value_id] = [_make(entry[0]._data + g._data), True]


def _exclusive(entry, given):
    """A pending gradient ready to hand out, copied if its array may be shared (a view, or an
    array handed out already or given to us): whoever receives it may add into it in place."""
    g, ours = entry
    array = g._data
    if not ours:
        alive = [other for other in (ref() for ref in given) if other is not None]
        if array.base is not None or any(np.may_share_memory(array, o) for o in alive):
            g = _make(array.copy())
    given.append(_weak(g._data))
    return g


def _weak(array):
    """A reference that does not keep a handed-out gradient alive: one that a hook drops (after
    the optimizer's step) is freed at once, not at the end of backward. CUDA arrays have none."""
    return weakref.ref(array) if type(array) is np.ndarray else lambda: array


def _hand_over(tensor, entry, given):
    """AccumulateGrad, planned: adopt the (exclusive) gradient as `.grad`, or add it into `.grad`
    in place; then the tensor's post-accumulate hooks run (they may update it and drop `.grad`)."""
    if entry is None:
        return
    g = _exclusive(entry, given)
    if tensor._grad is None:
        tensor._grad = _make(g._data)
    else:
        np.add(tensor._grad._data, g._data, out=tensor._grad._data, casting="unsafe")
    del g, entry  # the hooks may drop .grad: nothing here may keep its array alive
    engine.run_post_accumulate_grad_hooks(tensor)


def _backward_eagerly(ctx, grads):
    """create_graph=True: run the graph again with recording on and differentiate that; every
    gradient goes back through autograd, so it stays differentiable."""
    inputs, graph = list(ctx.saved_tensors), ctx.graph
    params = {v.id: t for v, t in _const_items(graph)}
    flat = run(replace(graph, output_tree=tuple(graph.outputs)), inputs)
    wanted = [t for t in inputs if t.requires_grad] + [params[i] for i in ctx.params]
    pairs = [(out, g) for out, g in zip(flat, grads, strict=True)
             if g is not None and out.requires_grad]  # fmt: skip
    results = engine.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                          create_graph=True, allow_unused=True)  # fmt: skip
    results = iter(results)
    return (None,) * 4 + tuple(next(results) if t.requires_grad else None
                               for t in inputs + [params[i] for i in ctx.params])  # fmt: skip


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)
