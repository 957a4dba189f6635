"""`torch.profiler`, PyTorch's newer profiler API, over the same profiler as autograd.profiler.

    with autograd_lab.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with autograd_lab.profiler.record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

Only CPU time is measured (see autograd/profiler.py); asking for anything else is an error.
"""

import enum

from .autograd import profiler as _autograd_profiler
from .autograd.profiler import record_function  # noqa: F401 - the same in both namespaces
from .autograd.profiler_util import EventList  # noqa: F401


class ProfilerActivity(enum.Enum):
    """What a profiler can measure: PyTorch's names. Only CPU is supported here."""

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    return {ProfilerActivity.CPU}


class profile(_autograd_profiler.profile):
    """`torch.profiler.profile`: the autograd profiler with PyTorch's newer arguments."""

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        **options,
    ):
        for activity in activities or ():
            if activity is not ProfilerActivity.CPU:
                raise NotImplementedError(
                    f"profile(activities=[..., {activity}]): this profiler measures CPU time "
                    "only. Fix: activities=[ProfilerActivity.CPU]."
                )
        for name, value in (("schedule", schedule), ("on_trace_ready", on_trace_ready)):
            if value is not None:
                raise NotImplementedError(
                    f"profile({name}=...): this profiler records the whole block; it has no "
                    f"schedule of steps. Fix: leave {name} out and profile fewer steps."
                )
        super().__init__(record_shapes=record_shapes, **options)

    def start(self):
        self.__enter__()

    def stop(self):
        self.__exit__(None, None, None)

    def step(self):
        """Mark the end of a training step: with no schedule, nothing changes."""


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """PyTorch's step schedule (wait, warm up, record, repeat): refused here, as profile() has no
    schedule; profiling a few steps without one gives the same table."""
    raise NotImplementedError(
        "profiler.schedule(...): this profiler records the whole `with profile():` block and has "
        "no schedule of steps. Fix: leave the schedule out and run only the steps to measure "
        "inside the block."
    )


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """PyTorch's handler that writes TensorBoard traces: refused here (no on_trace_ready)."""
    raise NotImplementedError(
        "profiler.tensorboard_trace_handler(...): this profiler writes no TensorBoard traces. "
        "Fix: after the block, call prof.export_chrome_trace('trace.json') and open it in "
        "chrome://tracing or https://ui.perfetto.dev."
    )
