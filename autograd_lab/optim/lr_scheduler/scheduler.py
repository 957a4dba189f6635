"""LRScheduler: the base class of the learning-rate schedules, as `torch.optim.lr_scheduler`.

A scheduler changes `group["lr"]` of its optimizer's parameter groups once per `step()`; the
optimizer reads the new value at its next step. The order in a training loop:

    for epoch in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        scheduler.step()        # after optimizer.step(): the next epoch uses the next rate

What every scheduler shares (PyTorch's design, kept so a script prints the same rates):
- `last_epoch` counts the scheduler's steps. The constructor already takes one step, from -1 to 0,
  which sets the rate of epoch 0 (LinearLR's warm-up starts there).
- Each group remembers its first rate as `group["initial_lr"]`; `base_lrs` lists them.
- Most schedules are *chained*: the next rate is computed from the group's current rate (StepLR
  multiplies it by gamma), so a schedule composes with a change you made to `group["lr"]` by
  hand or with another scheduler. `step(epoch)` (deprecated in PyTorch) instead jumps to an epoch
  with the *closed form*, the rate written as a function of the epoch (`_get_closed_form_lr`).
- `state_dict()` is every attribute except the optimizer, so a checkpoint can resume the schedule.
"""

import warnings
import weakref

from ..optimizer import Optimizer


class LRScheduler:
    """Base class: subclasses write `get_lr()`, the rates of the epoch `self.last_epoch`."""

    _get_lr_called_within_step = False
    _is_initial = False  # True during the constructor's step (some schedules skip their change)

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(optimizer).__name__} is not an Optimizer. Fix: pass the optimizer whose "
                "learning rate should change, e.g. StepLR(optimizer, step_size=10)."
            )
        self.optimizer = optimizer
        if last_epoch == -1:  # a fresh start: remember each group's first rate
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:  # resuming at an epoch: the first rates must come from the saved optimizer
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        f"scheduler with last_epoch >= 0 (here last_epoch={last_epoch}). Fix: "
                        "load the optimizer's state_dict() saved with the scheduler first, or "
                        "leave last_epoch=-1 for a fresh run."
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _watch_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self):
        """The constructor's step: last_epoch -1 -> 0 sets the rates of the first epoch."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The rates for epoch `self.last_epoch`, one per group (each scheduler writes its own).

        To read the current rates, call `get_last_lr()`: get_lr() is what step() uses.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def get_last_lr(self):
        """The rates the last step() set, one per parameter group (a list of floats)."""
        return self._last_lr

    def step(self, epoch=None):
        """Move the schedule on one epoch and write the new rates into the optimizer's groups.

        Call it after `optimizer.step()`. `epoch` (deprecated, as in PyTorch) jumps to that epoch.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            # The constructor took step 0, so this is the first call by the user: before any
            # optimizer.step(), the first rate of the schedule would never be used.
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`. Failure to do this will result "
                "in skipping the first value of the learning rate schedule.",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` was not necessary and is being "
                "deprecated where possible. Please use `scheduler.step()` to step the scheduler. "
                "During the deprecation, if epoch is different from None, the closed form is used "
                "instead of the new chainable form, where available.",
                UserWarning,
                stacklevel=2,
            )
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """The rates of the next epoch (chained), or of `epoch` (closed form), into the groups."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                rates = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", self.get_lr)
                rates = closed_form()
        finally:
            self._get_lr_called_within_step = False
        for group, rate in zip(self.optimizer.param_groups, rates, strict=True):
            group["lr"] = rate
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    # ---- saving and restoring --------------------------------------------------------------------
    def state_dict(self):
        """Every attribute but the optimizer (save the optimizer's own state_dict() beside it)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore a `state_dict()`: the schedule goes on from the saved epoch."""
        self.__dict__.update(state_dict)


def warn_if_called_outside_step(scheduler):
    """get_lr() computes the *next* rates; a user who wants the current ones wants get_last_lr()."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=3,
        )


def group_rates(optimizer):
    """The current rate of every parameter group: the rates of a step that changes nothing."""
    return [group["lr"] for group in optimizer.param_groups]


def one_per_group(name, optimizer, value):
    """A per-group option given once (for every group) or as a list with one value per group."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(value)} values, param_groups has {len(optimizer.param_groups)}. Fix: give "
                f"one {name} for each parameter group, or a single number for all of them."
            )
        return list(value)
    return [value] * len(optimizer.param_groups)


def _watch_optimizer_steps(optimizer):
    """Make `optimizer.step()` note that it ran, so a scheduler can warn about the wrong order.

    PyTorch does the same: it replaces the optimizer's `step` by a wrapper. The wrapper holds the
    optimizer through a weak reference, so the optimizer and its own attribute form no cycle.
    """
    if getattr(optimizer.step, "_watched_by_lr_scheduler", False):
        return
    step = type(optimizer).step
    optimizer_ref = weakref.ref(optimizer)

    def watched_step(*args, **kwargs):
        watched = optimizer_ref()
        watched._opt_called = True
        return step(watched, *args, **kwargs)

    watched_step._watched_by_lr_scheduler = True
    watched_step.__doc__ = step.__doc__
    optimizer.step = watched_step


class _LRScheduler(LRScheduler):
    """PyTorch's old name for LRScheduler, kept there (and here) for scripts that subclass it."""
