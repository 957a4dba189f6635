"""OneCycleLR: one cycle per training run, the rate up to max_lr and down far below its start.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> sched = ag.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=100)
    >>> sched.get_last_lr(), opt.param_groups[0]["momentum"]   # max_lr / div_factor; max_momentum
    ([0.040000000000000036], 0.95)

The "1cycle" policy (Smith & Topin, 2018). Called once per *batch*, not per epoch:

    phase 1 (the first pct_start of the steps):  lr  initial_lr -> max_lr,   momentum  0.95 -> 0.85
    phase 2 (the rest):                          lr  max_lr -> min_lr,       momentum  0.85 -> 0.95

where initial_lr = max_lr / div_factor and min_lr = initial_lr / final_div_factor. Each phase
anneals with half a cosine (`anneal_strategy="cos"`) or a straight line ("linear").
`three_phase=True` goes back down to initial_lr symmetrically, then on to min_lr in a third phase.
Momentum moves against the rate (for Adam: beta1), unless `cycle_momentum=False`.

NB: the optimizer's own lr is replaced: the schedule starts at max_lr / div_factor. Stepping more
than total_steps times is an error, as in PyTorch.
"""

import math

from ..optimizer import Optimizer
from .scheduler import LRScheduler, one_per_group, warn_if_called_outside_step


def _annealing_cos(start, end, pct):
    """From start (pct=0) to end (pct=1) along half a cosine: slow, fast, slow."""
    cos_out = math.cos(math.pi * pct) + 1
    return end + (start - end) / 2.0 * cos_out


def _annealing_linear(start, end, pct):
    """From start (pct=0) to end (pct=1) along a straight line."""
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """`OneCycleLR(optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
    pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
    max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1)`.
    """

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
        last_epoch=-1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(optimizer).__name__} is not an Optimizer. Fix: pass the optimizer whose "
                "learning rate should change, e.g. OneCycleLR(optimizer, max_lr=0.1, "
                "total_steps=1000)."
            )
        self.optimizer = optimizer
        self.total_steps = _count_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _phases(pct_start, self.total_steps, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(
                f"Expected float between 0 and 1 pct_start, but got {pct_start}. It is the "
                "fraction of the steps spent raising the rate, e.g. pct_start=0.3."
            )
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy

        # Each group keeps the three rates its phases go between.
        max_lrs = one_per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option "
                    f"enabled; {type(optimizer).__name__} has neither. Fix: pass "
                    "cycle_momentum=False."
                )
            self.use_beta1 = "betas" in optimizer.defaults  # Adam's beta1 plays momentum's part
            max_momentums = one_per_group("max_momentum", optimizer, max_momentum)
            base_momentums = one_per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(
                    max_momentums, base_momentums, optimizer.param_groups
                ):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return _annealing_cos(start, end, pct)
        return _annealing_linear(start, end, pct)

    def get_lr(self):
        warn_if_called_outside_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is "
                f"{self.total_steps}. Fix: make total_steps (or epochs * steps_per_epoch) the "
                "number of times you call scheduler.step(), i.e. the number of batches trained."
            )
        rates = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)  # done of this phase
                    rate = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                        self._set_momentum(group, momentum)
                    break
                start_step = phase["end_step"]
            rates.append(rate)
        return rates


def _count_steps(total_steps, epochs, steps_per_epoch):
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(
                f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
            )
        return epochs * steps_per_epoch
    raise ValueError(
        "You must define either total_steps OR (epochs AND steps_per_epoch), e.g. "
        "OneCycleLR(optimizer, max_lr=0.1, epochs=10, steps_per_epoch=len(train_loader))."
    )


def _phases(pct_start, total_steps, three_phase):
    """Each phase: the step it ends at, and the names of the group entries it goes between."""

    def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
        return dict(
            end_step=end_step,
            start_lr=start_lr,
            end_lr=end_lr,
            start_momentum=start_momentum,
            end_momentum=end_momentum,
        )

    warm_up_end = float(pct_start * total_steps) - 1
    if three_phase:
        return [
            phase(warm_up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            phase(
                float(2 * pct_start * total_steps) - 2,
                "max_lr",
                "initial_lr",
                "base_momentum",
                "max_momentum",
            ),
            phase(total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
        ]
    return [
        phase(warm_up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
        phase(total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
    ]
