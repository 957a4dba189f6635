"""LambdaLR and MultiplicativeLR: schedules given as a Python function of the epoch.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=1.0)
    >>> sched = ag.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.25]

- LambdaLR:          lr(epoch) = initial_lr * f(epoch)      (f gives the factor itself)
- MultiplicativeLR:  lr(epoch) = lr(epoch - 1) * f(epoch)   (f gives the factor of one step)

A list of functions gives one per parameter group. NB: as in PyTorch, `state_dict()` cannot save
a plain function or lambda (it stores None); a callable object's attributes are saved.
"""

import types

from .scheduler import LRScheduler, group_rates, warn_if_called_outside_step


def _one_function_per_group(optimizer, lr_lambda, check_callable):
    groups = len(optimizer.param_groups)
    if not isinstance(lr_lambda, (list, tuple)):
        functions = [lr_lambda] * groups
    elif len(lr_lambda) != groups:
        raise ValueError(
            f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}. Fix: pass one function for "
            "every parameter group, or a single function for all of them."
        )
    else:
        functions = list(lr_lambda)
    for function in functions if check_callable else ():
        if not callable(function):
            raise TypeError(
                f"lr_lambda should be a function, but got {type(function).__name__}. Fix: pass a "
                "function of the epoch, e.g. lr_lambda=lambda epoch: 0.95."
            )
    return functions


class _FunctionSchedule(LRScheduler):
    """What the two share: the functions, and a state_dict that leaves them out."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        # A function's code cannot go into a checkpoint; a callable object's fields can.
        state["lr_lambdas"] = [
            None if isinstance(f, types.FunctionType) else f.__dict__.copy()
            for f in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict):
        state = {k: v for k, v in state_dict.items() if k != "lr_lambdas"}
        self.__dict__.update(state)
        for function, saved in zip(self.lr_lambdas, state_dict["lr_lambdas"]):
            if saved is not None:
                function.__dict__.update(saved)


class LambdaLR(_FunctionSchedule):
    """`LambdaLR(optimizer, lr_lambda, last_epoch=-1)`: lr = initial_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _one_function_per_group(optimizer, lr_lambda, check_callable=False)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        return [
            base_lr * function(self.last_epoch)
            for function, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]


class MultiplicativeLR(_FunctionSchedule):
    """`MultiplicativeLR(optimizer, lr_lambda, last_epoch=-1)`: lr <- lr * lr_lambda(epoch) at
    every step after the constructor's."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _one_function_per_group(optimizer, lr_lambda, check_callable=True)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        warn_if_called_outside_step(self)
        if self._is_initial:  # the constructor's step keeps the rates as they are
            return group_rates(self.optimizer)
        return [
            group["lr"] * function(self.last_epoch)
            for function, group in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]
