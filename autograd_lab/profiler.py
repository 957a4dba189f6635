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
