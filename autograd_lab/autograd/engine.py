"""The backward pass: walk the recorded graph from the outputs back to the leaves.

    >>> import autograd_lab as ag
    >>> a = ag.tensor(2.0, requires_grad=True); b = ag.tensor(6.0, requires_grad=True)
    >>> e = (a + b) * (b + 1)
    >>> e.backward()
    >>> a.grad, b.grad
    (tensor(7.), tensor(15.))

How it works, in four steps (`_run` below):
1. count, for every node reachable from the outputs, how many edges lead into it (its *dependencies*);
2. a node is *ready* when gradients have arrived along all of them; among ready nodes the newest runs
   first (PyTorch's order), except leaves' AccumulateGrad nodes (and NotImplemented ones, of ops
   without a derivative), which run before any other once the node that sent them their gradient
   has finished sending;
3. running a node calls its Function's `backward` with the summed incoming gradients; each result is
   fitted to its input (broadcasting undone, dtype restored: `_fit`, the one place this happens) and
   sent along the edge;
4. unless `retain_graph=True`, the node's saved tensors are freed once it has run.
It is a loop over a heap, not recursion, so a graph 100,000 operations deep is fine.
"""

import heapq
import itertools
import math

import numpy as np

from .. import storage
from ..tensor import Tensor, _make
from . import anomaly
from .function import AccumulateGrad, Op, freed_error, grad_accumulator_of
from .grad_mode import _state


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into `.grad` of every leaf (or only of `inputs`)."""
    tensors = _as_tuple(tensors)
    roots = _roots(tensors, grad_tensors, "backward")
    targets = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("backward(inputs=...) got an empty list; give at least one tensor")
        targets = [_target_edge(t, "backward(inputs=...)") for t in inputs]
        for t in inputs:
            if t._grad_fn is not None:  # a non-leaf input keeps its gradient as PyTorch's does:
                t.retain_grad()  # by retain_grad(), after its hooks (and from now on)
    _run(roots, _retain(retain_graph, create_graph), create_graph, targets, capture=False)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    materialize_grads=False,
):
    """Return d(outputs)/d(inputs) as a tuple, leaving every `.grad` untouched."""
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if not inputs:
        raise RuntimeError(
            "`inputs` argument to `grad()` cannot be empty: grad() returns one gradient per "
            "input, so it needs at least one. Fix: pass the tensors you want gradients for, "
            "e.g. grad(loss, [w, b]); to fill the .grad of every leaf, call loss.backward()."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    roots = _roots(outputs, grad_outputs, "grad")
    targets = [_target_edge(t, "grad") for t in inputs]
    captured = _run(roots, _retain(retain_graph, create_graph), create_graph, targets, capture=True)
    results = []
    for i, (tensor, edge) in enumerate(zip(inputs, targets)):
        g = captured.get(edge)
        if g is None:
            if materialize_grads:
                g = _make(np.zeros_like(tensor._data))
            elif not allow_unused:
                raise RuntimeError(
                    f"input {i} of grad() was not used to compute the outputs, so it has no "
                    "gradient. Fix: pass allow_unused=True to get None for it (or "
                    "materialize_grads=True to get zeros)."
                )
        results.append(g)
    return tuple(results)


# ---- preparing the call ----------------------------------------------------------------------------


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _retain(retain_graph, create_graph):
    return create_graph if retain_graph is None else retain_graph  # PyTorch's default


def _roots(tensors, grads, caller):
    """Pair every output with the gradient it starts from: (edge, gradient tensor)."""
    if grads is None or isinstance(grads, Tensor):
        grads = (grads,) * len(tensors) if grads is None else (grads,)
    grads = tuple(grads)
    if len(grads) != len(tensors):
        raise RuntimeError(
            f"{caller}: got {len(tensors)} outputs but {len(grads)} gradients for them"
        )
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{caller}: output {i} is a {type(t).__name__}, not a Tensor")
        if not t._requires_grad:
            raise RuntimeError(
                f"{caller}: output {i} does not require grad and has no grad_fn, so there is no graph "
                "to go backward through. Was it computed inside `with no_grad():`, from tensors that "
                "all have requires_grad=False, or after .detach()? Fix: create the inputs with "
                "requires_grad=True and compute the output with recording on."
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError(
                    f"{caller}: output {i} has {t._data.size} elements (shape "
                    f"{list(t._data.shape)}); a gradient can be implicitly created only for scalar "
                    "outputs (one element: the starting gradient 1). Fix: reduce it first "
                    "(y.sum().backward()) or pass gradient=<tensor of the same shape>."
                )
            g = _make(np.ones_like(t._data))
        elif not isinstance(g, Tensor):
            g = _make(np.asarray(g, dtype=t._data.dtype))
        if g._data.shape != t._data.shape:
            raise RuntimeError(
                f"{caller}: the gradient for output {i} has shape {list(g._data.shape)} but the "
                f"output has shape {list(t._data.shape)}; they must match exactly."
            )
        storage.check_grad_device(g._data, t._data, f"{caller}: the gradient for output {i}")
        owned = grads[i] is None  # the caller keeps the gradient it passed: never written into
        roots.append((_edge_of(t), g, owned))
    return roots


def _edge_of(t):
    node = t.grad_fn  # the property: a view changed in place gets its history rebuilt
    return (node, t._output_nr) if node is not None else (grad_accumulator_of(t), 0)


def _target_edge(t, caller):
    if not isinstance(t, Tensor) or not t._requires_grad:
        raise RuntimeError(
            f"{caller}: one of the inputs does not require grad, so no gradient can be computed for "
            "it. Fix: create it with requires_grad=True."
        )
    return _edge_of(t)


# ---- the backward pass itself ---------------------------------------------------------------------


def _leads_nowhere(node):
    """Whether none of a built-in node's inputs wants a gradient (a product of a view taken
    before its base's requires_grad_(): such a view has no history to send one along). PyTorch's
    node saved nothing for that, so a second backward through it computes nothing, and does not
    fail for want of what was saved."""
    return issubclass(node._fn, Op) and all(n is None for n, _ in node.next_functions)


def _run(roots, retain_graph, create_graph, targets, capture):
    """Execute the graph backward. Returns the gradients at the `targets` edges if `capture`."""
    dependencies = _count_dependencies([edge[0] for edge, _, _ in roots])
    needed = _needed_nodes(dependencies, targets) if targets is not None else None
    target_edges = set(targets) if targets is not None else ()
    captured = {}
    buffers = {}  # node -> the summed gradient that arrived for each of its outputs
    owned = set()  # (node, output_nr) of those gradients the engine owns (see _owned)
    # heap of (priority, arrival, node): leaves' AccumulateGrad first, then the newest node first.
    # PyTorch gives AccumulateGrad the largest sequence number, so a leaf runs right after the
    # node that made it ready, once that node has sent all its gradients; so does the node of an
    # op without a derivative (NotImplemented), whose error then comes first.
    ready = []
    arrivals = itertools.count()  # ties (two ready leaves) run in the order they became ready
    recorder = _state.on_backward  # an optional listener: the graph viewer (grad_mode.observe)
    check_nan = _state.anomaly and _state.anomaly_check_nan  # anomaly mode: fail on NaN gradients
    profiler = _state.profiler  # profiler.profile(): times each node it runs

    def send(node, output_nr, g, g_owned):
        """Add `g` to the node's input buffer; the node is ready once every edge has reported."""
        buffer = buffers.get(node)
        if buffer is None:
            buffer = buffers[node] = [None] * len(node._outputs)
        if g is not None and buffer[output_nr] is None:  # the first gradient for this output
            buffer[output_nr] = g
            if g_owned:
                owned.add((node, output_nr))
        elif g is not None:
            key = (node, output_nr)
            total, total_owned = _add(buffer[output_nr], key in owned, g, g_owned, create_graph)
            buffer[output_nr] = total
            if total_owned:
                owned.add(key)
            else:
                owned.discard(key)
        count = dependencies[node] - 1
        dependencies[node] = count
        if count == 0 and (needed is None or node in needed):
            priority = -math.inf if node.runs_when_ready else -node._seq
            heapq.heappush(ready, (priority, next(arrivals), node))

    def capture_gradients(node, grads):
        for output_nr, g in enumerate(grads):
            if (node, output_nr) in target_edges and g is not None:
                captured[(node, output_nr)] = g

    def run_node(node):
        grads = buffers.pop(node)
        if profiler is not None:  # closed once the node is done, before gradients move on
            event = profiler.begin_node(node, grads)
        accumulate = type(node) is AccumulateGrad
        # grad() takes an input's gradient as PyTorch does: before that tensor's hooks when the
        # node must still run for another input behind it (the hooks run as the node runs),
        # after them when nothing behind it is needed
        capture_first = capture and any(n in needed for n, _ in node.next_functions)
        if capture_first:
            capture_gradients(node, grads)
        flags = None
        if node._tensor_hooks or node._retained or accumulate:
            flags = [(node, k) in owned for k in range(len(grads))]
            _apply_tensor_hooks(node, grads, flags, create_graph)
        if capture and not capture_first:
            capture_gradients(node, grads)
        if recorder is not None:
            recorder("run", node, grads)
        if accumulate:
            if not capture and grads[0] is not None:
                _accumulate(node.variable, grads[0], flags[0], create_graph)
                if recorder is not None:
                    recorder("accumulate", node, grads[0])
            if not capture:  # as in PyTorch, also when no gradient arrived: .grad is as it was
                run_post_accumulate_grad_hooks(node.variable)
            if profiler is not None:
                profiler.end(event)
            return
        if node._saved is None:  # an earlier backward freed what this node saved
            if not _leads_nowhere(node):
                raise freed_error(node)
            results = (None,) * len(node.next_functions)
        elif grads[0] is None and all(g is None for g in grads) and not node._fn.no_derivative:
            # nothing arrived: send nothing on. A built-in node still unpacks what it saved first,
            # as PyTorch's do before they look at the gradients, so a saved tensor changed in
            # place is refused even where no gradient flows through (dist(x.fill_(0), y, 0)),
            # but not one that PyTorch keeps inside CopySlices (ops/views.py): CopySlices calls
            # it only when a gradient arrives
            if issubclass(node._fn, Op) and not node._within_copy_slices:
                _ = node.saved_tensors
            results = (None,) * len(node.next_functions)
        else:
            results = _call_backward(node, grads, check_nan)
        if not retain_graph and (node._saved or node._fn.saves_constants):
            node._saved = None  # what forward saved is used up: its memory goes back now
        if profiler is not None:
            profiler.end(event)
        for i, ((next_node, output_nr), g) in enumerate(zip(node.next_functions, results)):
            if next_node is None:
                continue
            g_owned = False
            if g is not None:
                # only a leaf's gradient or one summed with others may use being owned: ask then
                if type(next_node) is AccumulateGrad or dependencies[next_node] > 1:
                    g_owned = _owned(g, node, grads, results, create_graph)
                # the receiving node knows the shape and dtype of the tensor this gradient is for
                shape, dtype = next_node._outputs[output_nr]
                if type(g) is not Tensor or g._data.shape != shape or g._data.dtype != dtype:
                    g = _fit(g, shape, dtype, node, i)
                if recorder is not None:
                    recorder("send", node, (next_node, output_nr, g))
            send(next_node, output_nr, g, g_owned)

    previous_mode, previous_needed = _state.enabled, _state.needed
    _state.enabled = create_graph  # record the backward pass itself only for higher-order gradients
    _state.needed = needed  # (Node.task_should_compute_output reads it)
    try:
        for edge, _, _ in roots:
            dependencies[edge[0]] += 1
        for (node, output_nr), g, g_owned in roots:
            send(node, output_nr, g, g_owned)
        while ready:
            run_node(heapq.heappop(ready)[2])
    finally:
        _state.enabled, _state.needed = previous_mode, previous_needed
        send = run_node = None  # the two closures refer to each other: break the cycle, so the
        # graph and the captured gradients are freed now rather than by the garbage collector
    return captured


# ---- who owns a gradient -------------------------------------------------------------------------


def _owned(g, node, grads, results, create_graph):
    """Is `g`, a gradient `node`'s backward returned, an array nobody else holds?

    A built-in op (`Op`) makes its gradients with new operations, except where it hands an
    incoming gradient on (AddBackward0 returns `grad` twice; a view's backward returns a view of
    it): a result that is, or shares memory with, an incoming gradient, or that is returned
    twice, is not owned. A custom Function's backward may have kept what it returns anywhere,
    so its results never are; nor is anything while the backward pass is itself recorded.
    """
    if create_graph or not issubclass(node._fn, Op) or type(g._data) is not np.ndarray:
        return False
    if len(results) > 1 and [other is g for other in results].count(True) > 1:
        return False  # handed to two inputs
    if not g._data.flags.writeable:  # a broadcast view; an empty one shares "no memory" below
        return False
    for incoming in grads:
        if incoming is not None and type(incoming._data) is np.ndarray:
            if g._data.base is None:  # an array of its own: is it the incoming one itself?
                if g._data is incoming._data:
                    return False
            elif np.may_share_memory(g._data, incoming._data):  # a view: of the incoming one?
                return False
    return True


def _add(total, total_owned, g, g_owned, create_graph):
    """Sum gradient `g` into `total` (None for the first one); returns (sum, owned). The sum
    goes into total's own array when the engine owns it, else into a new array, which the
    engine then owns (HIPS autograd's add_outgrads works the same way)."""
    if total is None:
        return g, g_owned
    if total_owned and not create_graph and total._data.shape == g._data.shape:
        np.add(total._data, g._data, out=total._data)
        return total, True
    return total + g, not create_graph


# ---- walking the graph ---------------------------------------------------------------------------


def _count_dependencies(root_nodes):
    """For every node reachable from the roots: how many edges lead into it. Iterative DFS."""
    dependencies = dict.fromkeys(root_nodes, 0)
    stack = list(dependencies)
    while stack:
        for next_node, _ in stack.pop().next_functions:
            if next_node is None:
                continue
            count = dependencies.get(next_node)
            if count is None:
                dependencies[next_node] = 1
                stack.append(next_node)
            else:
                dependencies[next_node] = count + 1
    return dependencies


def _needed_nodes(dependencies, targets):
    """Nodes from which some target can be reached: the only ones worth running for grad()."""
    target_nodes = {node for node, _ in targets}
    remaining = dict(dependencies)
    order = [node for node, count in remaining.items() if count == 0]
    for node in order:  # Kahn's algorithm: parents before children
        for next_node, _ in node.next_functions:
            if next_node is not None:
                remaining[next_node] -= 1
                if remaining[next_node] == 0:
                    order.append(next_node)
    needed = set()
    for node in reversed(order):  # children before parents
        if node in target_nodes or any(n in needed for n, _ in node.next_functions):
            needed.add(node)
    return needed


def _call_backward(node, grads, check_nan):
    """Run one node's backward, turning failures and NaNs into errors that point at the user's line."""
    fn = node._fn
    if len(grads) > 1 and node._materialize_grads and any(g is None for g in grads):
        present = next(g._data for g in grads if g is not None)  # zeros on the same device
        grads = [
            _make(np.zeros_like(present, dtype, shape=shape)) if g is None else g
            for g, (shape, dtype) in zip(grads, node._outputs)
        ]
    try:
        results = fn.backward(node, *grads)
    except Exception as error:
        if node._trace is not None:  # anomaly mode: say where the failing node was created
            anomaly.note_creation(error, node)
        raise
    if type(results) is not tuple:
        results = (results,)
    count = len(node.next_functions)
    if len(results) != count:  # custom Functions get this wrong; ours never do
        if len(results) > count and all(r is None for r in results[count:]):
            results = results[:count]
        else:
            raise RuntimeError(
                f"{node.name()}.backward returned an incorrect number of gradients (expected "
                f"{count}, one per forward input; got {len(results)}). Fix: return exactly one "
                "gradient per forward input, using None for inputs that need none."
            )
    if check_nan:
        anomaly.check_nan(node, results)
    return results


def _fit(g, shape, dtype, node, index):
    """Make a gradient fit its input: undo broadcasting (sum over expanded dims) and restore dtype."""
    if not isinstance(g, Tensor):
        raise TypeError(
            f"{node.name()}.backward returned a {type(g).__name__} for input {index}; gradients must "
            "be Tensors (or None)."
        )
    data = g._data
    if data.shape != shape:
        g = _sum_to(g, shape, node, index)
    if g._data.dtype != dtype:
        g = g.to(dtype)
    return g


def _sum_to(g, shape, node, index):
    """Sum `g` down to `shape`: the inverse of broadcasting `shape` up to `g.shape`."""
    lead = g._data.ndim - len(shape)
    if lead < 0 or any(s != 1 and s != gs for s, gs in zip(shape, g._data.shape[lead:])):
        raise RuntimeError(
            f"{node.name()}.backward returned a gradient of shape {list(g._data.shape)} for input "
            f"{index}, whose shape is {list(shape)}; a gradient must have its input's shape (or one "
            "that broadcasting explains)."
        )
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and g._data.shape[lead + i] != 1
    )
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape) if g._data.shape != shape else g


def _apply_tensor_hooks(node, grads, owned, create_graph):
    """Hooks registered with Tensor.register_hook on this node's outputs, then retain_grad().

    A hook may keep the gradient it is shown, so that gradient is no longer owned (`owned`).
    As in PyTorch, a tensor's hooks run whenever backward runs its node, and are shown None when
    no gradient arrived for that tensor (the other output of a split, say, was not used)."""
    for output_nr, hooks in (node._tensor_hooks or {}).items():
        for hook in list(hooks.values()):
            result = hook(grads[output_nr])
            owned[output_nr] = False
            if result is not None:
                grads[output_nr] = result
    for output_nr, ref in (node._retained or {}).items():
        tensor, g = ref(), grads[output_nr]
        if tensor is not None and g is not None:
            if tensor._grad is None:
                tensor._grad = g if create_graph else _make(g._data.copy())
            else:
                tensor._grad = _make(tensor._grad._data + g._data)
    # a leaf's hooks live on the tensor; PyTorch drops them once an in-place op gives the leaf a
    # history (then its AccumulateGrad refuses the gradient: see _accumulate)
    if type(node) is AccumulateGrad and node.variable.grad_fn is None:
        for hook in list((node.variable._hooks or {}).values()):
            result = hook(grads[0])
            owned[0] = False
            if result is not None:
                grads[0] = result


def _accumulate(variable, g, owned, create_graph):
    """AccumulateGrad: `.grad` is set by the first backward and added to by later ones.

    The first gradient becomes `.grad` itself when the engine owns it (nobody else holds it:
    see _owned), else a copy of it: a later backward adds into `.grad` in place, which
    must not change a tensor someone else holds (a hook's, a retained gradient, the caller's).
    With create_graph, `.grad` keeps its graph, as in PyTorch."""
    if variable.grad_fn is not None:
        # the leaf was changed in place since this graph was recorded, by an op that recorded
        # (x.requires_grad_(False), then x.add_(w) with a w that requires grad): it is now the
        # result of that op, no leaf, and has no .grad to fill
        raise RuntimeError(
            "leaf variable has been moved into the graph interior: a tensor that was a leaf "
            "when this graph was recorded has since been changed in place by an op that was "
            "recorded, so it now has a grad_fn and no longer holds a gradient. Fix: change it "
            "inside `with no_grad():`, or work on a copy (y = x.clone()) or an out-of-place op."
        )
    if not variable._requires_grad:  # requires_grad_(False) since the graph was recorded
        return  # PyTorch then leaves .grad alone (its hooks still run)
    if variable._grad is None:
        variable._grad = g if create_graph or owned else _make(g._data.copy())
    elif create_graph:
        variable._grad = variable._grad + g
    else:
        np.add(variable._grad._data, g._data, out=variable._grad._data, casting="unsafe")


def run_post_accumulate_grad_hooks(variable):
    """Tensor.register_post_accumulate_grad_hook: each hook gets the leaf once its .grad is up to
    date, as soon as it is: a training step can run its update here, gradient by gradient."""
    for hook in list((variable._post_accumulate_grad_hooks or {}).values()):
        result = hook(variable)
        if result is not None:
            error = RuntimeError if isinstance(result, Tensor) else TypeError  # as PyTorch
            raise error(
                "a post accumulate grad hook must return None, but this one returned "
                f"{type(result).__name__!r}: it works on the tensor it is given (p, p.grad) instead. "
                "Fix: return nothing; write a def, as a lambda returns what its expression makes."
            )
