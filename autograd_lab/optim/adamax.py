"""Adamax: Adam with the root mean square of the gradients replaced by their (decayed) maximum.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step moves every entry by about lr, as Adam's does
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)

The update at step t (Kingma & Ba, 2015, section 7.1, as PyTorch writes it), for p with g = p.grad:

    g <- g + weight_decay * p                   (if weight_decay; L2 regularisation)
    m <- m + (1 - beta1) * (g - m)              running mean of g
    u <- max(beta2 * u, |g| + eps)              a running maximum of |g| that slowly forgets
    p <- p - lr / (1 - beta1^t) * m / u

u is the limit of Adam's (mean of |g|^k)^(1/k) as k grows: the infinity norm, hence the name.
It needs no bias correction (a maximum is not pulled towards its zero start).
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import (
    Optimizer,
    bump_version,
    check_at_least_zero,
    check_betas,
    gradient,
    run_closure,
)


class Adamax(Optimizer):
    """`Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, *, maximize=False)`,
    as `torch.optim.Adamax`. State per parameter: `step` (a float32 count), `exp_avg` (m) and
    `exp_inf` (u)."""

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "foreach",
        "maximize",
        "differentiable",
        "capturable",
    )

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        *,
        maximize=False,
        **switches,
    ):
        check_at_least_zero("learning rate", lr, "the learning rate is a step size, e.g. lr=2e-3")
        check_at_least_zero(
            "epsilon value", eps, "eps keeps the division away from zero; the default is 1e-8"
        )
        check_betas(betas)
        check_at_least_zero(
            "weight_decay value", weight_decay, "e.g. weight_decay=1e-4; 0 turns it off"
        )
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: the mean and the maximum start at zero
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["exp_avg"] = _make(np.zeros_like(param))
                    state["exp_inf"] = _make(np.zeros_like(param))
                count = state["step"]._data
                np.add(count, 1, out=count)
                t = float(count)

                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, group["weight_decay"], group["maximize"], out=g_buf)
                m, u = state["exp_avg"]._data, state["exp_inf"]._data

                # m <- m + (1 - beta1) * (g - m)
                np.add(m, np.multiply(np.subtract(g, m, out=work), 1 - beta1, out=work), out=m)
                # u <- max(beta2 * u, |g| + eps)
                np.multiply(u, beta2, out=u)
                np.maximum(u, np.add(np.abs(g, out=work), eps, out=work), out=u)
                # p <- p - lr / (1 - beta1^t) * m / u
                step = np.divide(np.multiply(m, lr / (1 - beta1**t), out=work), u, out=work)
                np.subtract(param, step, out=param)
                bump_version(p)
        return loss
