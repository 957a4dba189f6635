"""SequentialLR and ChainedScheduler: schedules made of other schedules.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=1.0)
    >>> schedulers = ag.optim.lr_scheduler
    >>> warmup = schedulers.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = schedulers.ExponentialLR(opt, gamma=0.5)
    >>> sched = schedulers.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.5, 0.75, 1.0, 0.5, 0.25]

- SequentialLR: one schedule after the other. Before milestones[0] the first runs, then the
  second, ...; at each milestone the next one starts from its epoch 0 (its closed form at 0, so
  it starts from initial_lr whatever the previous one left).
- ChainedScheduler: all of them at every step, one after the other: the chained forms multiply,
  e.g. a warm-up times a decay.
"""

from bisect import bisect_right

from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler


def _check_schedulers(kind, schedulers, optimizer):
    if len(schedulers) < 1:
        raise ValueError(
            f"{kind} expects at least one scheduler, but got no scheduler. Fix: pass a list, "
            f"e.g. {kind}(optimizer, [warmup, decay], ...)."
        )
    for index, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{kind} at index {index} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{kind} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                "kwargs to be specified when calling `step`, but got one at index "
                f"{index} in the given schedulers sequence. Fix: call its step(metric) yourself."
            )
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                f"{kind} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {index} with another optimizer."
            )


class _SchedulerOfSchedulers(LRScheduler):
    """What the two share: a state_dict that holds each inner scheduler's own state_dict."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for scheduler, saved in zip(self._schedulers, state_dict["_schedulers"]):
            scheduler.load_state_dict(saved)


class SequentialLR(_SchedulerOfSchedulers):
    """`SequentialLR(optimizer, schedulers, milestones, last_epoch=-1)`: schedulers[i] runs from
    milestones[i - 1] to milestones[i]."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_schedulers("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than "
                f"the number of milestone points, but got number of schedulers {len(schedulers)} "
                f"and the number of milestones to be equal to {len(milestones)}. Fix: give the "
                "epoch at which each scheduler after the first takes over."
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Each scheduler's constructor took its own step 0: put the rates back, count it undone,
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in schedulers:
            _undo_step(scheduler)
        # and take step 0 again, with the scheduler that runs first.
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self):
        """One epoch on, with the scheduler whose turn it is (restarted at its milestone)."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)  # its first epoch: the closed form at epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_step(scheduler):
    """One step fewer on the count of a scheduler (and of the ones inside it)."""
    if hasattr(scheduler, "_schedulers"):
        for inner in scheduler._schedulers:
            _undo_step(inner)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ChainedScheduler(_SchedulerOfSchedulers):
    """`ChainedScheduler(schedulers, optimizer=None)`: every step() steps all of them in order."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(
                "ChainedScheduler expects at least one scheduler to be chained, but got no "
                "scheduler. Fix: pass a list, e.g. ChainedScheduler([warmup, decay])."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self):
        """Step every scheduler, in the order given."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
