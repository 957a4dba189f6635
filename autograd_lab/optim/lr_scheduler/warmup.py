"""LinearLR and ConstantLR: a different rate for the first epochs, usually a warm-up.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=1.0)
    >>> sched = ag.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.25, 0.5, 0.75, 1.0, 1.0]

- LinearLR:    the factor goes in a straight line from start_factor (epoch 0) to end_factor
               (epoch total_iters), then stays: initial_lr * (start + (end - start) * min(e, T) / T)
- ConstantLR:  initial_lr * factor until epoch total_iters, then initial_lr.

Chained, LinearLR multiplies the current rate by the ratio of this epoch's factor to the last
one's: 1 + (end - start) / (T * start + (e - 1) * (end - start)).
"""

from .scheduler import LRScheduler, group_rates, warn_if_called_outside_step


class LinearLR(LRScheduler):
    """`LinearLR(optimizer, start_factor=1/3, end_factor=1.0, total_iters=5, last_epoch=-1)`."""

    def __init__(
        self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1
    ):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal "
                f"to 1, but got start_factor={start_factor}. It multiplies the learning rate at "
                "epoch 0, e.g. start_factor=0.1 for a warm-up from a tenth of the rate."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(
                f"Ending multiplicative factor expected to be between 0 and 1, but got "
                f"end_factor={end_factor}. It multiplies the learning rate from epoch total_iters "
                "on; 1.0 (the default) ends at the optimizer's rate."
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:  # the first epoch: the rate times start_factor
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:  # the line has ended
            return group_rates(self.optimizer)
        # this epoch's factor / the last epoch's factor, written as 1 + (the line's slope / ...)
        change = self.end_factor - self.start_factor
        last = self.total_iters * self.start_factor + (self.last_epoch - 1) * change
        return [group["lr"] * (1.0 + change / last) for group in groups]

    def _get_closed_form_lr(self):
        done = min(self.total_iters, self.last_epoch)
        return [
            base_lr
            * (self.start_factor + (self.end_factor - self.start_factor) * done / self.total_iters)
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """`ConstantLR(optimizer, factor=1/3, total_iters=5, last_epoch=-1)`: the rate times factor
    for the first total_iters epochs."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError(
                f"Constant multiplicative factor expected to be between 0 and 1, but got "
                f"factor={factor}. It multiplies the rate of the first total_iters epochs."
            )
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in groups]
        if self.last_epoch != self.total_iters:
            return group_rates(self.optimizer)
        return [group["lr"] * (1.0 / self.factor) for group in groups]  # back to the full rate

    def _get_closed_form_lr(self):
        after = self.last_epoch >= self.total_iters
        return [base_lr * (self.factor + after * (1 - self.factor)) for base_lr in self.base_lrs]
