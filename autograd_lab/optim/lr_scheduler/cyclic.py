"""CyclicLR: the rate goes up and down between base_lr and max_lr, again and again.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> sched = ag.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> rates = []
    >>> for batch in range(6):
    ...     rates.append(round(sched.get_last_lr()[0], 6))
    ...     opt.step()
    ...     sched.step()
    >>> rates
    [0.1, 0.3, 0.5, 0.3, 0.1, 0.3]

Smith's cyclical learning rates (2017). Called once per *batch*. A cycle is step_size_up steps up
from base_lr to max_lr and step_size_down steps back (the same by default), in straight lines; the
height of each cycle is scaled by
- "triangular": 1 (every cycle the same);
- "triangular2": 1/2 ** (cycle - 1) (each cycle half as high as the last);
- "exp_range": gamma ** step (shrinking with every step);
- or your own `scale_fn(x)`, of the cycle number or of the step (`scale_mode`).
Momentum moves against the rate, from max_momentum down to base_momentum (for Adam: beta1).
"""

import math
import types

from ..optimizer import Optimizer
from .scheduler import LRScheduler, one_per_group, warn_if_called_outside_step


class CyclicLR(LRScheduler):
    """`CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
    mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True,
    base_momentum=0.8, max_momentum=0.9, last_epoch=-1)`, as in PyTorch."""

    def __init__(
        self,
        optimizer,
        base_lr,
        max_lr,
        step_size_up=2000,
        step_size_down=None,
        mode="triangular",
        gamma=1.0,
        scale_fn=None,
        scale_mode="cycle",
        cycle_momentum=True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch=-1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(optimizer).__name__} is not an Optimizer. Fix: pass the optimizer whose "
                "learning rate should change, e.g. CyclicLR(optimizer, base_lr=0.01, max_lr=0.1)."
            )
        self.optimizer = optimizer
        base_lrs = one_per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:  # the cycle starts at base_lr, whatever the optimizer's lr was
            for rate, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = rate
        self.max_lrs = one_per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down  # the steps of one cycle
        self.step_ratio = step_size_up / self.total_size  # the part of a cycle spent going up
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError(
                f"mode is invalid and scale_fn is None: mode={mode!r}. Fix: use mode="
                "'triangular', 'triangular2' or 'exp_range', or pass your own scale_fn."
            )
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._set_scale_mode()

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option "
                    f"enabled; {type(optimizer).__name__} has neither. Fix: pass "
                    "cycle_momentum=False."
                )
            self.use_beta1 = "betas" in optimizer.defaults  # Adam's beta1 plays momentum's part
            self.base_momentums = one_per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = one_per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_scale_mode(self):
        """The built-in modes decide what their scale is a function of: the cycle or the step."""
        if self._scale_fn_custom is None:
            self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x):
        """How high the cycle (or step) `x` goes, as a fraction of max_lr - base_lr."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x  # exp_range

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def get_lr(self):
        warn_if_called_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)  # counted from 1
        x = 1.0 + self.last_epoch / self.total_size - cycle  # how far into it, 0 to 1
        if x <= self.step_ratio:  # going up: 0 -> 1
            scale_factor = x / self.step_ratio
        else:  # coming down: 1 -> 0
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        rates = [
            base_lr + (max_lr - base_lr) * scale_factor * scale
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:  # momentum goes the other way, max -> base -> max
            for group, bottom, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                self._set_momentum(group, top - (top - bottom) * scale_factor * scale)
        return rates

    def state_dict(self):
        state = super().state_dict()
        function = state.pop("_scale_fn_custom")
        # a plain function cannot be saved; a callable object's attributes can (as LambdaLR)
        keep = function is not None and not isinstance(function, types.FunctionType)
        state["_scale_fn_custom"] = function.__dict__.copy() if keep else None
        return state

    def load_state_dict(self, state_dict):
        state = {k: v for k, v in state_dict.items() if k != "_scale_fn_custom"}
        super().load_state_dict(state)
        if state_dict["_scale_fn_custom"] is not None:
            self._scale_fn_custom.__dict__.update(state_dict["_scale_fn_custom"])
        self._set_scale_mode()
