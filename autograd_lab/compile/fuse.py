"""Fusion: find groups of elementwise calls and replace each by ONE call of a generated kernel.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace, fuse
    >>> g = trace(lambda x: ((x * 2).tanh() + 1).sigmoid(), ag.ones(4))
    >>> plan = fuse(g)
    >>> [group.names for group in plan.groups]
    [('MulBackward0', 'TanhBackward0', 'AddBackward0', 'SigmoidBackward0')]
    >>> plan.graph
    graph(%0: float32[4]):
      %4 = fused(%0)  # mul -> tanh -> add -> sigmoid
      return %4

Why: eager mode runs each op as its own pass over memory: `x * 2` reads x and writes a temporary,
`tanh` reads that temporary and writes another, and so on. A fused kernel reads x once, keeps the
intermediates in registers, and writes only what the rest of the program needs. Elementwise chains
are limited by memory traffic, not arithmetic, so fewer passes means faster.

How groups are found (`find_groups`, one algorithm for every kind of group): the calls are taken
in program order; a call joins the group of a call whose result it reads when the group's
*policy* says it fits, and two groups meeting at a call merge. A group never swallows a call that
depends on the group through an outside call (a matmul, a reduction): that would be a cycle, so
such calls split groups. A group's outputs are the values used after it (by other calls or as
the function's results); the rest stay in registers.

The elementwise policy (`Elementwise`): a call fits when its op has a rule (compile/rules.py) and
its result has the group's shape and float dtype. Groups of one call, or of one-element results
(a loss's scalar tail), are left to eager mode: there is nothing to save. compile/extras/rowwise.py
is a second policy: reductions over the last axis with their elementwise neighbours.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..autograd import enable_grad, grad, no_grad
from ..autograd.function import Op
from ..autograd.grad_mode import _state
from ..optional import MissingExtraError
from ..tensor import _make
from .ir import Call, Graph, Value, map_values
from .kernel import FusedKernel
from .rules import rule_for

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(eq=False)
class Group:
    """Calls fused into one kernel: all produce `shape`/`dtype` results on one device."""

    calls: list
    shape: tuple
    dtype: np.dtype
    device: object
    mask: int = 0  # bit k set: call k of the graph is a member
    inputs: list = field(default_factory=list)  # Values read from outside, in first-use order
    outputs: list = field(default_factory=list)  # Values used outside (or returned)

    @property
    def names(self):
        return tuple(call.name for call in self.calls)


@dataclass(eq=False)
class Plan:
    """What `run` executes instead of the traced graph: `graph` with fused calls."""

    graph: Graph
    groups: list
    kernels: list
    buffers: dict = field(default_factory=dict)  # value id -> buffer slot (the memory planner's)


class Fused(Op):
    """A fused group as ONE autograd Function: the node `FusedBackward0`.

    Its node's `metadata["fused"]` lists the ops inside, for viewers. Backward runs the
    generated backward kernel; when the backward pass is itself recorded (`create_graph=True`)
    it composes the original ops' differentiable backwards instead, so higher-order gradients
    stay right.
    """

    node_name = "FusedBackward0"
    accepts_out = True  # run() may hand it reused output buffers

    @staticmethod
    def forward(ctx, *inputs, kernel, out=None):
        ctx.kernel = kernel
        ctx.metadata["fused"] = kernel.op_names
        ctx.save_for_backward(*inputs)
        if kernel.failed is None:
            try:
                outs = kernel.forward([x._data for x in inputs], out)
            except MissingExtraError:  # numba is not installed: say which extra brings it
                raise
            except Exception as error:  # numba could not compile it: run the ops one by one
                kernel.failed = error
                message = f"fused kernel {kernel!r} failed ({type(error).__name__}: {error})"
                warnings.warn(f"{message}; running its ops unfused", RuntimeWarning, stacklevel=2)
        if kernel.failed is not None:
            with no_grad():
                outs = [t._data for t in replay(kernel.group, inputs)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        inputs, kernel, needs = ctx.saved_tensors, ctx.kernel, ctx.needs_input_grad
        unplanned = any(need and k not in kernel.wanted for k, need in enumerate(needs))
        if _state.enabled or kernel.failed is not None or unplanned:
            return compose_backward(kernel.group, inputs, grads, needs)
        found = kernel.backward([x._data for x in inputs], [g._data for g in grads])
        return tuple(
            _make(a) if a is not None and need else None
            for a, need in zip(found, needs, strict=True)
        )


def replay(group, inputs):
    """Run the group's original calls on tensors (recorded if autograd records)."""
    env = {value.id: tensor for value, tensor in zip(group.inputs, inputs, strict=True)}
    for call in group.calls:
        args = map_values(call.args, lambda v: env[v.id])
        kwargs = map_values(call.kwargs, lambda v: env[v.id])
        env[call.outputs[0].id] = call.fn.apply(*args, **kwargs)
    return [env[value.id] for value in group.outputs]


def compose_backward(group, inputs, grads, needs):
    """The group's gradients by autograd over its original ops (differentiable: create_graph)."""
    create_graph = _state.enabled
    targets = [x for x, need in zip(inputs, needs, strict=True) if need]
    with enable_grad():
        outputs = replay(group, inputs)
        found = iter(grad(outputs, targets, grads, create_graph=create_graph, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)


# ---- finding groups ------------------------------------------------------------------------------


def fusable(call):
    """Can this call go into a fused kernel? (see the module docstring for the rules)"""
    if len(call.outputs) != 1 or call.outputs[0] is None or call.outputs[0].dtype not in _FLOATS:
        return False
    out = call.outputs[0]
    for arg in call.args:
        if isinstance(arg, Value):
            if arg.dtype != out.dtype or not _fits(arg, out):
                return False
        elif not isinstance(arg, (int, float, np.number, np.bool_)):
            return False
    for value in call.kwargs.values():
        if isinstance(value, Value):  # a mask (where's condition): read like an input
            if value.dtype != np.bool_ or not _fits(value, out):
                return False
        elif not (value is None or isinstance(value, (int, float, str, np.number))):
            return False
    return rule_for(call) is not None  # last: finding a rule traces the op's backward once


def _fits(value, out):
    """Same device, and a shape that broadcasts to the result's without growing it."""
    if value.device != out.device or len(value.shape) > len(out.shape):
        return False
    tail = out.shape[len(out.shape) - len(value.shape) :]
    return all(s in (1, t) for s, t in zip(value.shape, tail, strict=True))


class Dependencies:
    """Which calls each call depends on (a bitset per call), to keep fused groups acyclic."""

    def __init__(self, graph):
        self.producer = {v.id: c for c in graph.calls for v in c.outputs if v is not None}
        self.ancestors = {}  # call index -> bitset of every call it depends on
        for call in graph.calls:
            bits = 0
            for value in call.inputs():
                made_by = self.producer.get(value.id)
                if made_by is not None:
                    bits |= self.ancestors[made_by.index] | (1 << made_by.index)
            self.ancestors[call.index] = bits

    def acyclic(self, calls, mask):
        """No member reads a value made outside the group from something the group made (that
        outside call would have to run both after and before the fused kernel)."""
        for call in calls:
            for value in call.inputs():
                made_by = self.producer.get(value.id)
                if made_by is not None and not mask >> made_by.index & 1:
                    if self.ancestors[made_by.index] & mask:
                        return False
        return True


class Elementwise:
    """The policy of elementwise groups (see the module docstring); find_groups asks it:
    role(call) (can the call be in such a group?), start(call, role) (a new group of it),
    fit(group, call, role) / merge(group, other) (None if not, else what joining adds, for
    absorb), keep(group) (is the group worth a kernel?), and `kernel` makes a kept group's."""

    kernel = FusedKernel

    def __init__(self, min_size=2):
        self.min_size = min_size

    def role(self, call):
        return "elementwise" if fusable(call) else None

    def start(self, call, role):
        out = call.outputs[0]
        return Group([call], out.shape, out.dtype, out.device, 1 << call.index)

    def fit(self, group, call, role):
        out = call.outputs[0]
        return (
            True
            if (group.shape, group.dtype, group.device) == (out.shape, out.dtype, out.device)
            else None
        )

    def merge(self, group, other):
        same = (group.shape, group.dtype, group.device) == (other.shape, other.dtype, other.device)
        return True if same else None

    def absorb(self, group, update):
        pass  # an elementwise group has no layout of its own to update

    def keep(self, group):
        # a one-element group costs more to launch than it computes: scalar tails stay eager
        return len(group.calls) >= self.min_size and np.prod(group.shape) > 1


def find_groups(graph, policy=None, exclude=0):
    """The groups of `graph` that `policy` accepts (default: elementwise ones), in execution
    order; `exclude`: a bitset of calls already taken (by another policy's groups)."""
    policy = Elementwise() if policy is None else policy
    dependencies = Dependencies(graph)
    producer, acyclic = dependencies.producer, dependencies.acyclic
    groups, group_of = [], {}
    for call in graph.calls:
        role = None if exclude >> call.index & 1 else policy.role(call)
        if role is None:
            continue
        joined, bit = None, 1 << call.index
        for value in call.inputs():
            made_by = producer.get(value.id)
            group = group_of.get(made_by.index) if made_by is not None else None
            if group is None or group is joined:
                continue
            if joined is None:  # the call joins this group...
                update = policy.fit(group, call, role)
                if update is None or not acyclic(group.calls + [call], group.mask | bit):
                    continue
                group.calls.append(call)
                group.mask |= bit
                joined = group
            else:  # ...and links it to another one: merge that one into it
                update = policy.merge(joined, group)
                mask = joined.mask | group.mask
                if update is None or not acyclic(joined.calls + group.calls, mask):
                    continue
                joined.calls = sorted(joined.calls + group.calls, key=lambda c: c.index)
                joined.mask = mask
                groups.remove(group)
            policy.absorb(joined, update)
            for member in joined.calls:
                group_of[member.index] = joined
        if joined is None:
            group = policy.start(call, role)
            if group is not None:
                groups.append(group)
                group_of[call.index] = group
    groups = [group for group in groups if policy.keep(group)]
    for group in groups:
        _connect(group, graph)
    return groups


def _connect(group, graph):
    """Fill in a group's inputs (read from outside) and outputs (used outside)."""
    made = {call.outputs[0].id for call in group.calls}
    seen = set()
    for call in group.calls:
        for value in call.inputs():
            if value.id not in made and value.id not in seen:
                seen.add(value.id)
                group.inputs.append(value)
    used_outside = {v.id for v in graph.outputs}
    for call in graph.calls:
        if not group.mask >> call.index & 1:
            used_outside.update(v.id for v in call.inputs())
    group.outputs = [c.outputs[0] for c in group.calls if c.outputs[0].id in used_outside]


# ---- the plan ------------------------------------------------------------------------------------


def plan(graph, policies):
    """A Plan that runs `graph` with every group the `policies` find (the first ones first, each
    among the calls the earlier ones left) replaced by one Fused call."""
    found, taken = [], 0
    for policy in policies:
        for group in find_groups(graph, policy, exclude=taken):
            found.append((group, policy.kernel))
            taken |= group.mask
    groups, kernels = [], []
    for group, make in sorted(found, key=lambda pair: pair[0].calls[0].index):
        try:
            kernels.append(make(group))
        except (TypeError, ValueError) as error:  # a rule that cannot express this call's form
            warnings.warn(f"not fused: {group.names} ({error})", RuntimeWarning, stacklevel=2)
            continue
        groups.append(group)
    fused_at = {}  # index of a group's last call -> the fused call that replaces the group
    members = set()
    for number, (group, kernel) in enumerate(zip(groups, kernels, strict=True)):
        members.update(call.index for call in group.calls)
        function = getattr(kernel, "function", Fused)  # a RowKernel runs as RowFused
        fused_at[group.calls[-1].index] = Call(
            function,
            Fused.node_name,
            tuple(group.inputs),
            {"kernel": kernel},
            tuple(group.outputs),
            metadata={"fused": group.names, "group": number},
        )
    calls = [
        fused_at.get(c.index, c)
        for c in graph.calls
        if c.index not in members or c.index in fused_at
    ]
    return Plan(
        Graph(graph.inputs, _in_dependency_order(calls, graph), graph.outputs, graph.output_tree),
        groups,
        kernels,
    )


def _in_dependency_order(calls, graph):
    """Renumbered copies of `calls`, each after the calls that make its inputs (original order
    where possible: a fused call sits at its last member, which some outside reader of an
    earlier member may precede)."""
    made_by = {v.id: k for k, c in enumerate(calls) for v in c.outputs if v is not None}
    done, ordered, waiting = set(), [], list(range(len(calls)))
    while waiting:
        ready = [
            k
            for k in waiting
            if all(made_by[v.id] in done for v in calls[k].inputs() if v.id in made_by)
        ]
        if not ready:
            raise RuntimeError("fusion produced a cycle; this is a bug in autograd_lab.compile")
        k = ready[0]
        waiting.remove(k)
        done.add(k)
        call = calls[k]
        ordered.append(
            Call(
                call.fn,
                call.name,
                call.args,
                call.kwargs,
                call.outputs,
                len(ordered),
                dict(call.metadata),
            )
        )
    return ordered
