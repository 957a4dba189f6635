"""ASGD: SGD with a slowly shrinking step, that also keeps a running average of the parameters.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)

The update at step t (Polyak & Juditsky, 1992, averaged SGD, as PyTorch writes it), g = p.grad:

    g <- g + weight_decay * p                     (if weight_decay; L2 regularisation)
    p <- p * (1 - lambd * eta) - eta * g          an SGD step of size eta, with a decay term
    ax <- ax + mu * (p - ax)                      the running average of p (mu = 1: ax <- p)
    eta <- lr / (1 + lambd * lr * t) ** alpha     the next step size, slowly shrinking
    mu <- 1 / max(1, t - t0)                      averaging starts after t0 steps

The parameters themselves take plain SGD steps; `optimizer.state[p]["ax"]` is the averaged
parameter, which is what the method's guarantees are about (copy it into the model to evaluate).
NB: as in PyTorch, `eta` and `mu` are kept as float32 numbers whatever the parameters' dtype.
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, bump_version, check_at_least_zero, gradient, run_closure


class ASGD(Optimizer):
    """`ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, *, maximize=False)`,
    as `torch.optim.ASGD`. State per parameter: `step`, `eta`, `mu` (float32 numbers) and `ax`
    (the averaged parameter)."""

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "lambd",
        "alpha",
        "t0",
        "weight_decay",
        "foreach",
        "maximize",
        "differentiable",
        "capturable",
    )

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        *,
        maximize=False,
        **switches,
    ):
        check_at_least_zero("learning rate", lr, "the learning rate is a step size, e.g. lr=1e-2")
        check_at_least_zero(
            "weight_decay value", weight_decay, "e.g. weight_decay=1e-4; 0 turns it off"
        )
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: step size lr, no averaging yet (mu = 1)
                    state["step"] = _make(np.zeros((), np.float32))  # float32 numbers, as PyTorch
                    state["eta"] = _make(np.array(lr, np.float32))
                    state["mu"] = _make(np.ones((), np.float32))
                    state["ax"] = _make(np.zeros_like(param))
                count = state["step"]._data
                np.add(count, 1, out=count)
                t = float(count)

                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, group["weight_decay"], group["maximize"], out=g_buf)
                eta, mu = float(state["eta"]._data), float(state["mu"]._data)
                # p <- p * (1 - lambd * eta) - eta * g
                np.multiply(param, 1 - lambd * eta, out=param)
                np.add(param, np.multiply(g, -eta, out=work), out=param)
                # ax <- ax + mu * (p - ax), or simply p while mu is 1
                ax = state["ax"]._data
                if mu != 1:
                    np.add(ax, np.multiply(np.subtract(param, ax, out=work), mu, out=work), out=ax)
                else:
                    np.positive(param, out=ax)  # a copy written into ax
                # the next step's eta and mu, rounded to float32 numbers as PyTorch makes them
                # (also once a loaded state_dict has cast the entries to the parameter's dtype)
                state["eta"]._data[...] = np.float32(lr / ((1 + lambd * lr * t) ** alpha))
                state["mu"]._data[...] = np.float32(1 / max(1, t - t0))
                bump_version(p)
        return loss
