"""Parallel execution: which operations are independent, and running big independent ones at once.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> from autograd_lab.compile.parallel import describe_levels
    >>> graph = trace(lambda x, y: (x @ x).tanh() + (y @ y).exp(), ag.ones(2, 2), ag.ones(2, 2))
    >>> print(describe_levels(graph))
    level 0: %2 = mm(%0, %0) | %4 = mm(%1, %1)
    level 1: %3 = tanh(%2) | %5 = exp(%4)
    level 2: %6 = add(%3, %5)

A call's *level* is one more than the deepest call it reads from; calls of one level read nothing
the others make, so they may run in any order, or at the same time. `run_parallel` runs a graph
level by level and hands the big calls of a level to a pool of threads. That pays because numpy's
ufuncs and matrix products release Python's GIL while they loop over large arrays (and numba's
kernels do too), so two threads really compute at once on two cores. For small arrays the cost of
handing work to a thread (~10 microseconds) is more than the work: those calls run inline.
The other kind of parallelism, inside one op, is in the fused kernels: numba's `prange` splits
one loop across the cores (compile/codegen.py), and numpy's matrix product already uses every
core through BLAS, so two matmuls at once only pay when BLAS runs one thread each. Threads need
idle cores: on a machine already busy they lose (measure with `measure_two_branches`).

Results are identical to `run`: every call computes what it computes alone, and the nodes of the
graph are renumbered afterwards in the program's order, so backward runs in the same order too.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

from ...autograd import function
from ...autograd.grad_mode import _state
from ...tensor import Tensor
from ..ir import map_values
from ..run import check_inputs

# Below this many bytes read and written, a call runs in the calling thread. Measured on the 2-core
# machine: handing a task to a waiting thread and collecting it costs ~10 us (median), and numpy's
# tanh moves 1 MiB (0.5 in, 0.5 out) in ~35 us, so smaller calls would save less than they cost.
MIN_BYTES = 1 << 20
THREADS = 2

_pool = None
_pool_lock = threading.Lock()


def _get_pool(threads):
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers != threads:
            _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="autograd_lab")
        return _pool


# ---- levels ----------------------------------------------------------------------------------------


def levels(graph):
    """The calls of an IR Graph grouped into levels of mutually independent calls."""
    return graph.levels()


def describe_levels(graph):
    """One line per level: the calls that may run at the same time, separated by `|`."""
    return "\n".join(
        f"level {k}: " + " | ".join(repr(call) for call in level)
        for k, level in enumerate(levels(graph))
    )


def autograd_levels(root):
    """The nodes of an autograd graph (a loss tensor or its grad_fn) grouped by backward level.

    Level 0 is the root; a node's level is one more than the deepest node that sends it a gradient,
    so nodes of one level get no gradient from each other and their backwards are independent.

        >>> import autograd_lab as ag
        >>> x = ag.ones(3, requires_grad=True)
        >>> loss = (x.exp() + x.sin()).sum()
        >>> [[node.name() for node in level] for level in autograd_levels(loss)]
        [['SumBackward0'], ['AddBackward0'], ['ExpBackward0', 'SinBackward0'], ['AccumulateGrad']]
    """
    node = root.grad_fn if isinstance(root, Tensor) else root
    if node is None:
        raise RuntimeError(
            "autograd_levels: this tensor has no grad_fn, so there is no graph to walk. Fix: pass "
            "a result computed from tensors with requires_grad=True (e.g. the loss)."
        )
    waiting, order = _count_incoming(node), [node]
    depth = {node: 0}
    for current in order:  # Kahn's algorithm from the root: a node once all its senders are done
        for next_node, _ in current.next_functions:
            if next_node is None:
                continue
            depth[next_node] = max(depth.get(next_node, 0), depth[current] + 1)
            waiting[next_node] -= 1
            if waiting[next_node] == 0:
                order.append(next_node)
    grouped = [[] for _ in range(max(depth.values()) + 1)]
    for current in order:
        grouped[depth[current]].append(current)
    return grouped


def _count_incoming(root):
    """How many edges lead into every node reachable from `root`."""
    counts, stack = {root: 0}, [root]
    while stack:
        for next_node, _ in stack.pop().next_functions:
            if next_node is None:
                continue
            if next_node not in counts:
                counts[next_node] = 0
                stack.append(next_node)
            counts[next_node] += 1
    return counts


# ---- running levels in parallel ---------------------------------------------------------------------


def work_bytes(call):
    """What a call reads and writes, in bytes: the size that decides whether a thread pays."""
    return sum(v.nbytes for v in call.inputs()) + sum(v.nbytes for v in call.outputs if v)


def run_parallel(graph, inputs, threads=THREADS, min_bytes=MIN_BYTES):
    """`run(graph, inputs)`, with the big calls of each level run by `threads` threads at once."""
    check_inputs(graph, inputs)
    env = {value.id: tensor for value, tensor in zip(graph.inputs, inputs, strict=True)}
    keep = {value.id for value in graph.outputs}
    last_use = graph.last_use()
    mode = (_state.enabled, _state.anomaly)
    recorded = {}  # call index -> [(node, outputs, args, kwargs)] the call recorded

    def lookup(value):
        return value.const if value.const is not None else env[value.id]

    for level in levels(graph):
        jobs = [
            (call, map_values(call.args, lookup), map_values(call.kwargs, lookup)) for call in level
        ]
        big = [job for job in jobs if work_bytes(job[0]) >= min_bytes]
        if len(big) < 2:
            big = []  # one big call alone gains nothing from a thread
        offloaded = {id(job) for job in big[1:]}  # the first big one runs here, meanwhile
        futures = [_get_pool(threads).submit(_run_call, job, mode) for job in big[1:]]
        done = [_run_call(job, mode) for job in jobs if id(job) not in offloaded]
        done += [future.result() for future in futures]
        for call, result, events in done:
            recorded[call.index] = events
            results = result if isinstance(result, tuple) else (result,)
            for value, tensor in zip(call.outputs, results, strict=False):
                if value is not None:
                    env[value.id] = tensor
        for call in level:
            for value in call.inputs():
                if last_use.get(value.id) == call.index and value.id not in keep:
                    env.pop(value.id, None)  # its last reader ran: drop our reference
    _renumber(graph, recorded)
    return map_values(graph.output_tree, lookup)


def _run_call(job, mode):
    """Run one call in this thread with the caller's grad mode; note the nodes it records."""
    call, args, kwargs = job
    events, previous = [], (_state.enabled, _state.anomaly, _state.on_node)
    _state.enabled, _state.anomaly = mode  # grad mode is per thread: take the caller's
    _state.on_node = lambda *event: events.append(event)
    try:
        return call, call.fn.apply(*args, **kwargs), events
    finally:
        _state.enabled, _state.anomaly, _state.on_node = previous


def _renumber(graph, recorded):
    """Give the nodes creation numbers in the program's order (backward runs newest first, so the
    order must not depend on which thread finished first), then show them to an observer."""
    observer = _state.on_node
    for call in graph.calls:
        for event in recorded.get(call.index, ()):
            event[0]._seq = next(function._sequence)
            if observer is not None:
                observer(*event)


# ---- measuring -------------------------------------------------------------------------------------


def measure_two_branches(make_inputs, fn, repeats=7, threads=THREADS, min_bytes=MIN_BYTES):
    """Median seconds of `fn` traced and run sequentially vs with `run_parallel` (for reports and
    the lesson; tests never assert on time). Returns (sequential, parallel)."""
    import time

    from ..run import run
    from ..trace import trace

    inputs = make_inputs()
    graph = trace(fn, *inputs)

    def median(runner):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            runner()
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]

    run(graph, inputs)  # warm caches (and numba) before timing either
    sequential = median(lambda: run(graph, inputs))
    parallel = median(lambda: run_parallel(graph, inputs, threads, min_bytes))
    return sequential, parallel
