"""ReduceLROnPlateau: lower the rate when a measured number (a validation loss) stops improving.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=1.0)
    >>> sched = ag.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> for val_loss in [3.0, 2.0, 2.0, 2.0, 2.0]:  # no progress after 2.0
    ...     sched.step(val_loss)     # the metric, not the epoch: this one watches results
    >>> sched.get_last_lr()
    [0.5]

How it decides, after each `step(metric)`:
- the metric is *better* if it beats the best so far by more than `threshold` (relative: by a
  fraction of the best, `threshold_mode="rel"`; or absolute, `"abs"`); `mode="max"` for a metric
  that should grow, such as accuracy;
- after more than `patience` epochs in a row without a better metric, every group's rate becomes
  max(lr * factor, min_lr) (a change smaller than `eps` is skipped);
- then `cooldown` epochs pass in which bad epochs are not counted.

Unlike the other schedules it has no formula in the epoch, no `initial_lr` and no step in its
constructor: `last_epoch` only counts the calls.
"""

import math
import warnings

from ..optimizer import Optimizer
from .scheduler import LRScheduler, group_rates


class ReduceLROnPlateau(LRScheduler):
    """`ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
    threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8)`, as in PyTorch."""

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ):
        if factor >= 1.0:
            raise ValueError(
                f"Factor should be < 1.0, but got factor={factor}: the new rate is lr * factor, "
                "so a factor of 1 or more would not reduce it. E.g. factor=0.1."
            )
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(optimizer).__name__} is not an Optimizer. Fix: pass the optimizer whose "
                "learning rate should change, e.g. ReduceLROnPlateau(optimizer)."
            )
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}. Fix: "
                    "give one min_lr for each parameter group, or a single number for all."
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = group_rates(optimizer)
        self._set_comparison(mode, threshold, threshold_mode)
        self._reset()

    def _set_comparison(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError(
                f"mode {mode} is unknown! Use mode='min' for a metric that should go down (a "
                "loss) or mode='max' for one that should go up (an accuracy)."
            )
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError(
                f"threshold mode {threshold_mode} is unknown! Use threshold_mode='rel' (better by "
                "a fraction of the best) or 'abs' (better by a fixed amount)."
            )
        self.mode_worse = math.inf if mode == "min" else -math.inf  # any metric beats it
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, metric, best):
        """Does `metric` beat `best` by more than the threshold?"""
        if self.mode == "min" and self.threshold_mode == "rel":
            return metric < best * (1.0 - self.threshold)
        if self.mode == "min":
            return metric < best - self.threshold
        if self.threshold_mode == "rel":
            return metric > best * (self.threshold + 1.0)
        return metric > best + self.threshold

    def step(self, metrics, epoch=None):
        """Record this epoch's metric (a number or a 0-d tensor); lower the rate if it is time."""
        current = float(metrics)
        if epoch is not None:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` was not necessary and is being "
                "deprecated where possible. Please use `scheduler.step()` to step the scheduler.",
                UserWarning,
                stacklevel=2,
            )
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs right after a reduction do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = group_rates(self.optimizer)

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):  # a group was added since the constructor
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from "
                    f"when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually "
                    "due to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:  # skip changes too small to matter
                group["lr"] = new_lr

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_comparison(self.mode, self.threshold, self.threshold_mode)
