"""StepLR, MultiStepLR, ExponentialLR, PolynomialLR: the rate decays on a fixed timetable.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=1.0)
    >>> sched = ag.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(sched.get_last_lr()[0])   # the rate this epoch trains with
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [1.0, 1.0, 0.5, 0.5, 0.25]

Closed forms (the rate at epoch e, used by the deprecated `step(epoch)`):

- StepLR:         initial_lr * gamma ** (e // step_size)                every step_size epochs
- MultiStepLR:    initial_lr * gamma ** (number of milestones <= e)     at chosen epochs
- ExponentialLR:  initial_lr * gamma ** e                               every epoch
- PolynomialLR:   initial_lr * (1 - min(e, total_iters) / total_iters) ** power   to 0, then stays

`step()` computes them chained instead, multiplying the current rate by this epoch's factor over
the last one's (gamma, when the timetable says so; see scheduler.py); both agree unless something
else changes the rate.
"""

from bisect import bisect_right
from collections import Counter

from .scheduler import LRScheduler, group_rates, warn_if_called_outside_step


class StepLR(LRScheduler):
    """`StepLR(optimizer, step_size, gamma=0.1, last_epoch=-1)`: lr *= gamma every step_size
    epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return group_rates(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """`MultiStepLR(optimizer, milestones, gamma=0.1, last_epoch=-1)`: lr *= gamma at each
    milestone epoch (a milestone listed twice multiplies by gamma twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)  # epoch -> how many times it is listed
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self.last_epoch not in self.milestones:
            return group_rates(self.optimizer)
        times = self.milestones[self.last_epoch]
        return [group["lr"] * self.gamma**times for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        passed = bisect_right(milestones, self.last_epoch)  # milestones at or before this epoch
        return [base_lr * self.gamma**passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """`ExponentialLR(optimizer, gamma, last_epoch=-1)`: lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self._is_initial:  # the constructor's step keeps the rates (also when resuming)
            return group_rates(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """`PolynomialLR(optimizer, total_iters=5, power=1.0, last_epoch=-1)`: the rate falls to 0 at
    epoch total_iters along (1 - e / total_iters) ** power (power=1: a straight line)."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_rates(self.optimizer)
        now = 1.0 - self.last_epoch / self.total_iters
        before = 1.0 - (self.last_epoch - 1) / self.total_iters
        factor = (now / before) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * left**self.power for base_lr in self.base_lrs]
