"""CosineAnnealingLR and CosineAnnealingWarmRestarts: the rate follows a cosine from initial_lr
down to eta_min (and, with restarts, jumps back up and does it again).

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=1.0)
    >>> sched = ag.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [1.0, 0.853553, 0.5, 0.146447, 0.0]

The closed form (Loshchilov & Hutter, SGDR, 2017, without the restarts), at epoch e:

    lr(e) = eta_min + (initial_lr - eta_min) * (1 + cos(pi * e / T_max)) / 2

`step()` computes it chained, from the current rate, as PyTorch does (T = T_max):

    lr(e) = eta_min + (lr(e-1) - eta_min) * (1 + cos(pi * e / T)) / (1 + cos(pi * (e-1) / T))

NB: past T_max the wave goes on (back up towards initial_lr, with period 2 * T_max); the one
epoch where the ratio above would divide by zero, e = T_max + 1 (mod 2 T_max), adds the step
instead.

CosineAnnealingWarmRestarts (SGDR itself) runs the closed form within a cycle of T_i epochs and
restarts at initial_lr when the cycle ends; each cycle is T_mult times longer than the last:

    lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

where T_cur counts the epochs since the last restart. `step(epoch)` takes fractional epochs
(`scheduler.step(epoch + i / batches)`), to anneal within an epoch.
"""

import math

from .scheduler import LRScheduler, group_rates, warn_if_called_outside_step


class CosineAnnealingLR(LRScheduler):
    """`CosineAnnealingLR(optimizer, T_max, eta_min=0.0, last_epoch=-1)`."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        groups, eta_min, T_max = self.optimizer.param_groups, self.eta_min, self.T_max
        if self._is_initial:
            return group_rates(self.optimizer)
        if self._step_count == 1 and self.last_epoch > 0:  # resumed: no previous rate to chain
            return [
                eta_min
                + (base_lr - eta_min) * (1 + math.cos(self.last_epoch * math.pi / T_max)) / 2
                for base_lr in self.base_lrs
            ]
        if (self.last_epoch - 1 - T_max) % (2 * T_max) == 0:  # the wave's trough: cos ratio is 0/0
            return [
                group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups)
            ]
        ratio_now = 1 + math.cos(math.pi * self.last_epoch / T_max)
        ratio_before = 1 + math.cos(math.pi * (self.last_epoch - 1) / T_max)
        return [ratio_now / ratio_before * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self):
        wave = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base_lr - self.eta_min) * wave / 2 for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """`CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1)`: cycles
    of T_0, T_0 * T_mult, T_0 * T_mult^2, ... epochs."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(
                f"Expected positive integer T_0, but got {T_0}. T_0 is the length of the first "
                "cycle in epochs, e.g. T_0=10."
            )
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(
                f"Expected integer T_mult >= 1, but got {T_mult}. Each cycle is T_mult times "
                "longer than the last; 1 keeps them equal."
            )
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0  # the length of the current cycle
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch  # epochs since the last restart
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        wave = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base_lr - self.eta_min) * wave / 2 for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """The next epoch, or `epoch` (which may be fractional): find the cycle it falls in."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:  # one epoch on; a restart when the cycle is over
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:  # still in the first cycle
            self.T_i = self.T_0
            self.T_cur = epoch
        elif self.T_mult == 1:  # cycles of equal length
            self.T_cur = epoch % self.T_0
        else:  # cycle n starts at T_0 (T_mult^n - 1) / (T_mult - 1): solve for n
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** (n)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            rates = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, rate in zip(self.optimizer.param_groups, rates):
            group["lr"] = rate
        self._last_lr = group_rates(self.optimizer)
