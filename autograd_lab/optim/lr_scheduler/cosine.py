"""CosineAnnealingLR: the rate follows half a cosine wave from initial_lr down to eta_min.

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
