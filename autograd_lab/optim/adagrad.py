"""Adagrad: each entry's step divided by the root of the sum of all its squared gradients so far.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step moves each entry by about lr, whatever its gradient
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)

The update at step t (Duchi et al., 2011, as PyTorch writes it), for p with gradient g = p.grad:

    g <- g + weight_decay * p                       (if weight_decay; L2 regularisation)
    clr <- lr / (1 + (t - 1) * lr_decay)            the learning rate, decayed with the step count
    s <- s + g * g                                  the sum of squared gradients (starts at
                                                    initial_accumulator_value)
    p <- p - clr * g / (sqrt(s) + eps)

Entries that often get large gradients take ever smaller steps; rarely updated ones keep large
steps. NB: s only grows, so the steps of a long run shrink towards zero (RMSprop and Adam average
instead of summing).
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, bump_version, check_at_least_zero, gradient, run_closure


class Adagrad(Optimizer):
    """`Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, *, maximize=False)`, as `torch.optim.Adagrad`.

    State per parameter: `step` (a float32 count) and `sum` (s). As in PyTorch the state is made
    by the constructor, so `state_dict()` lists every parameter before the first step.
    """

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "lr_decay",
        "eps",
        "weight_decay",
        "initial_accumulator_value",
        "foreach",
        "maximize",
        "differentiable",
        "fused",
    )

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        *,
        maximize=False,
        **switches,
    ):
        check_at_least_zero("learning rate", lr, "the learning rate is a step size, e.g. lr=1e-2")
        check_at_least_zero("lr_decay value", lr_decay, "e.g. lr_decay=1e-4; 0 turns it off")
        check_at_least_zero(
            "weight_decay value", weight_decay, "e.g. weight_decay=1e-4; 0 turns it off"
        )
        check_at_least_zero(
            "initial_accumulator_value value",
            initial_accumulator_value,
            "it is where the sum of squared gradients starts; the default is 0",
        )
        check_at_least_zero(
            "epsilon value", eps, "eps keeps the division away from zero; the default is 1e-10"
        )
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            maximize=maximize,
        )
        super().__init__(params, defaults, switches)
        for group in self.param_groups:
            for p in group["params"]:
                self._start_state(p)

    def _start_state(self, p):
        """The step count at 0 and the sum at initial_accumulator_value.

        NB: PyTorch starts every sum at the constructor's initial_accumulator_value, even for a
        group that sets its own; so does this, to give the same numbers.
        """
        state = self.state[p]
        state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
        state["sum"] = _make(np.full_like(p._data, self.defaults["initial_accumulator_value"]))

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # a parameter of a group added after the constructor
                    self._start_state(p)
                count = state["step"]._data
                np.add(count, 1, out=count)
                t = float(count)

                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, group["weight_decay"], group["maximize"], out=g_buf)
                # clr <- lr / (1 + (t - 1) * lr_decay)
                clr = lr / (1 + (t - 1) * lr_decay)
                # s <- s + g * g
                s = state["sum"]._data
                np.add(s, np.multiply(g, g, out=work), out=s)
                # p <- p - clr * g / (sqrt(s) + eps)
                denom = np.add(np.sqrt(s, out=work), eps, out=work)
                step = np.divide(np.multiply(g, clr, out=g_buf), denom, out=work)
                np.subtract(param, step, out=param)
                bump_version(p)
        return loss
