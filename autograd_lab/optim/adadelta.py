"""Adadelta: a step whose size comes from the running averages of past steps and past gradients.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.Adadelta([w])
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first steps are tiny: the average of past steps starts at 0
    >>> w
    tensor([ 0.9968, -1.9968], requires_grad=True)

The update (Zeiler, 2012, as PyTorch writes it), for p with gradient g = p.grad:

    g <- g + weight_decay * p                          (if weight_decay; L2 regularisation)
    v <- rho * v + (1 - rho) * g * g                   running mean of g^2
    delta <- sqrt(u + eps) / sqrt(v + eps) * g         the step, in the units of p
    u <- rho * u + (1 - rho) * delta * delta           running mean of the steps' squares
    p <- p - lr * delta

Zeiler's point: g / sqrt(v) has no units, so multiplying by the root of past squared steps gives a
step measured like p itself; lr (1.0 by default) only scales it. The state names are PyTorch's:
`square_avg` is v and `acc_delta` is u.
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, bump_version, check_at_least_zero, gradient, run_closure


class Adadelta(Optimizer):
    """`Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False)`, as
    `torch.optim.Adadelta`.

    State per parameter: `step` (a float32 count), `square_avg` (v) and `acc_delta` (u).
    """

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "rho",
        "eps",
        "weight_decay",
        "maximize",
        "capturable",
        "foreach",
        "differentiable",
    )

    def __init__(
        self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False, **switches
    ):
        check_at_least_zero("learning rate", lr, "it scales every step; the default is lr=1.0")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(
                f"Invalid rho value: {rho}. rho is how much of each running average is kept, so "
                "it must be in [0, 1]; the default is rho=0.9."
            )
        check_at_least_zero(
            "epsilon value", eps, "eps keeps the division away from zero; the default is 1e-6"
        )
        check_at_least_zero(
            "weight_decay value", weight_decay, "e.g. weight_decay=1e-4; 0 turns it off"
        )
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: both averages start at zero
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["square_avg"] = _make(np.zeros_like(param))
                    state["acc_delta"] = _make(np.zeros_like(param))
                count = state["step"]._data
                np.add(count, 1, out=count)

                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, group["weight_decay"], group["maximize"], out=g_buf)
                v, u = state["square_avg"]._data, state["acc_delta"]._data

                # v <- rho * v + (1 - rho) * g * g
                np.multiply(v, rho, out=v)
                np.add(v, np.multiply(np.multiply(g, 1 - rho, out=work), g, out=work), out=v)
                # delta <- sqrt(u + eps) / sqrt(v + eps) * g
                delta = np.empty_like(param)
                np.sqrt(np.add(u, eps, out=delta), out=delta)
                np.divide(delta, np.sqrt(np.add(v, eps, out=work), out=work), out=delta)
                np.multiply(delta, g, out=delta)
                # u <- rho * u + (1 - rho) * delta * delta
                np.multiply(u, rho, out=u)
                np.add(
                    u, np.multiply(np.multiply(delta, 1 - rho, out=work), delta, out=work), out=u
                )
                # p <- p - lr * delta
                np.subtract(param, np.multiply(delta, lr, out=delta), out=param)
                bump_version(p)
        return loss
