"""SGD: stochastic gradient descent, with optional momentum (heavy ball or Nesterov).

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.4600, -0.4600], requires_grad=True)

The update, for every parameter p with gradient g = p.grad (PyTorch's formulation):

    g <- g + weight_decay * p                            (if weight_decay; L2 regularisation)
    b <- g  at the first step, later  b <- momentum * b + (1 - dampening) * g   (if momentum)
    g <- g + momentum * b  (nesterov)   or   g <- b                             (if momentum)
    p <- p - lr * g

NB: PyTorch (and so this) puts lr outside the momentum buffer; Sutskever et al. put it inside.
Both give the same steps while lr is constant.
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, add_scaled, bump_version, gradient, run_closure


class SGD(Optimizer):
    """`SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False)`, as `torch.optim.SGD`. State: `momentum_buffer` (when momentum != 0)."""

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "momentum",
        "dampening",
        "weight_decay",
        "nesterov",
        "maximize",
        "foreach",
        "differentiable",
        "fused",
    )

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        **switches,
    ):
        if lr < 0.0:
            raise ValueError(
                f"Invalid learning rate: {lr}. The learning rate is a step size and must be >= 0; "
                "pass e.g. lr=0.01."
            )
        if momentum < 0.0:
            raise ValueError(
                f"Invalid momentum value: {momentum}. momentum must be >= 0; pass e.g. "
                "momentum=0.9 (0 turns it off)."
            )
        if weight_decay < 0.0:
            raise ValueError(
                f"Invalid weight_decay value: {weight_decay}. weight_decay must be >= 0, e.g. "
                "weight_decay=1e-4 (0 turns it off)."
            )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "Nesterov momentum requires a momentum and zero dampening. Fix: pass momentum > 0 "
                "(e.g. momentum=0.9) with dampening=0, or nesterov=False."
            )
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param = p._data
                scratch = None  # a temporary the size of p, made only for the options needing one
                if group["weight_decay"] != 0 or group["maximize"] or group["nesterov"]:
                    scratch = np.empty_like(param)
                g = gradient(p, group["weight_decay"], group["maximize"], out=scratch)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:  # the first step starts the buffer at g itself
                        buf = state["momentum_buffer"] = _make(np.positive(g, out=np.empty_like(g)))
                    else:  # b <- momentum * b + (1 - dampening) * g
                        b = buf._data
                        np.multiply(b, momentum, out=b)
                        if dampening == 0:
                            np.add(b, g, out=b)
                        else:
                            add_scaled(b, g, 1 - dampening)
                    if group["nesterov"]:  # look ahead: g + momentum * b
                        g = np.add(g, np.multiply(buf._data, momentum), out=scratch)
                    else:
                        g = buf._data
                add_scaled(param, g, -lr)  # p <- p - lr * g
                bump_version(p)
        return loss
