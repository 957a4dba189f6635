"""A small profiler: where does the time go, op by op? PyTorch's `torch.autograd.profiler`.

    >>> import autograd_lab as ag
    >>> x = ag.ones(4, 3, requires_grad=True)
    >>> with ag.autograd.profiler.profile(record_shapes=True) as prof:
    ...     with ag.autograd.profiler.record_function("forward"):
    ...         loss = (x * 2).sum()
    ...     loss.backward()
    >>> [e.name for e in prof.function_events][:3]
    ['forward', 'aten::mul', 'aten::sum']
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))  # doctest: +SKIP

While a `profile` is active (in this thread), every operation's `apply` (function.py) and every
node the backward engine runs (engine.py) opens an event and closes it when done; an event opened
while another is open is its child, which is how self time (excluding children) and total time
(including them) are told apart. The names are PyTorch's: an op's forward is `aten::<op>` (from
its node's name: MulBackward0 is aten::mul), a backward node shows as
`autograd::engine::evaluate_function: MulBackward0` with a `MulBackward0` child, and a custom
Function's forward as its class name. When no profiler is active, apply and the engine pay one
check each.

NB: this profiler measures time on the CPU only (and per thread); PyTorch's can also time CUDA
kernels, memory and FLOPs: those options raise an error here instead of being ignored.
"""

import functools
import re
import threading
import time

from .function import AccumulateGrad, Op
from .grad_mode import _state
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

_UNSUPPORTED = {  # option: what it would need
    "use_cuda": "timing CUDA kernels on the device",
    "use_device": "timing kernels on a device",
    "with_flops": "counting floating-point operations",
    "profile_memory": "tracking memory",
    "with_stack": "recording the Python stack of each op",
    "with_modules": "recording which module ran each op",
}


class profile:
    """Time every operation run inside the block; read the results once it is over.

        with profile(record_shapes=True) as prof:
            model(x).sum().backward()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
        prof.export_chrome_trace("trace.json")

    `record_shapes=True` keeps the shapes of each op's tensor inputs (see `key_averages(
    group_by_input_shape=True)`); `enabled=False` makes the block record nothing.
    """

    def __init__(self, enabled=True, *, record_shapes=False, use_cpu=True, **options):
        for option, value in options.items():
            if option in _UNSUPPORTED:
                if value:
                    raise NotImplementedError(
                        f"profile({option}={value!r}): this profiler measures CPU time only, "
                        f"so it cannot do {_UNSUPPORTED[option]}. Fix: leave {option} out."
                    )
            elif option not in ("use_kineto", "experimental_config", "acc_events"):
                raise TypeError(f"profile() got an unexpected keyword argument {option!r}")
        if not use_cpu:
            raise NotImplementedError(
                "profile(use_cpu=False): this profiler only measures CPU time. Fix: leave "
                "use_cpu out."
            )
        self.enabled, self.record_shapes = bool(enabled), bool(record_shapes)
        self.function_events = None
        self._events, self._open = [], []  # every event in start order; the ones still open

    # ---- switching it on and off -------------------------------------------------------------------
    def __enter__(self):
        if self.enabled:
            self._started_ns = time.perf_counter_ns()
            self._outer = _state.profiler  # a profile inside another records into the inner one
            _state.profiler = self
        return self

    def __exit__(self, *exc):
        if self.enabled:
            _state.profiler = self._outer
            self._close_down_to(None)
            self.function_events = EventList(self._events)
        return False

    def _now_us(self):
        return (time.perf_counter_ns() - self._started_ns) / 1000.0

    # ---- events: called by apply, the engine and record_function -------------------------------------
    def begin(self, name, input_shapes=()):
        """Open an event; it is a child of the event open now, if any."""
        parent = self._open[-1] if self._open else None
        event = FunctionEvent(
            len(self._events),
            name,
            self._now_us(),
            threading.get_ident(),
            list(input_shapes) if self.record_shapes else [],
            parent,
        )
        if parent is not None:
            parent.cpu_children.append(event)
        self._events.append(event)
        self._open.append(event)
        return event

    def end(self, event):
        """Close `event`, and any event opened inside it that an error left open."""
        self._close_down_to(event)

    def _close_down_to(self, event):
        now = self._now_us()
        while self._open:
            last = self._open.pop()
            last.end_us = now
            if last is event:
                return

    def begin_op(self, function_class, args):
        """An operation's forward: `aten::mul`, or a custom Function's class name."""
        shapes = _shapes(args) if self.record_shapes else ()
        return self.begin(op_name(function_class), shapes)

    def begin_node(self, node, grads):
        """A node the backward engine runs: the engine's event, with the node's own inside."""
        name = "torch::autograd::AccumulateGrad" if type(node) is AccumulateGrad else node.name()
        outer = self.begin("autograd::engine::evaluate_function: " + name)
        self.begin(name, _shapes(grads) if self.record_shapes else ())
        return outer

    # ---- the results -----------------------------------------------------------------------------
    def events(self):
        return self._results()

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """One row per op name (and input shapes, if asked): see EventList.key_averages."""
        return self._results().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def total_average(self):
        return self._results().total_average()

    @property
    def self_cpu_time_total(self):
        """The time profiled: the sum of every event's self time, in microseconds."""
        return sum(event.self_cpu_time_total for event in self._results())

    def table(self, sort_by=None, row_limit=100, **options):
        return self._results().table(sort_by=sort_by, row_limit=row_limit, **options)

    def export_chrome_trace(self, path, use_python_export=False):
        self._results().export_chrome_trace(path)

    def _results(self):
        if self.function_events is None:
            if self.enabled and _state.profiler is self:
                raise RuntimeError(
                    "the profiler is still running: its results are ready once the `with "
                    "profile() as prof:` block has ended. Fix: read them after the block."
                )
            return EventList()
        return self.function_events

    def __str__(self):
        return self.table()


class record_function:
    """Name a part of the program in the profile: a context manager or a decorator.

        with record_function("data loading"):
            batch = next(loader)

    Outside an active profiler it does nothing.
    """

    def __init__(self, name, args=None):
        self.name, self.args = str(name), args
        self._event = self._profiler = None

    def __enter__(self):
        self._profiler = _state.profiler
        if self._profiler is not None:
            self._event = self._profiler.begin(self.name)
        return self

    def __exit__(self, *exc):
        if self._profiler is not None:
            self._profiler.end(self._event)
            self._event = self._profiler = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


# ---- names -----------------------------------------------------------------------------------------
_op_names = {}  # Function class -> the name its forward shows in the profile


def op_name(function_class):
    """PyTorch's name for an op's forward: aten::<name> from its node's name (MulBackward0 ->
    aten::mul, LogSoftmaxBackward0 -> aten::log_softmax); a custom Function's class name."""
    name = _op_names.get(function_class)
    if name is None:
        if issubclass(function_class, Op):
            stem = re.sub(r"Backward\d*$", "", function_class.node_name)
            name = "aten::" + re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()
        else:
            name = function_class.__name__
        _op_names[function_class] = name
    return name


def _shapes(values):
    """Input shapes as PyTorch records them: a list per argument, [] for a non-tensor."""
    return [list(v.shape) if hasattr(v, "shape") and hasattr(v, "grad_fn") else [] for v in values]
