"""RMSprop: each entry's step divided by a running root-mean-square of its recent gradients.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step moves each entry by lr / sqrt(1 - alpha) = 0.1
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)

The update (Hinton's lecture 6e, as PyTorch writes it), for p with gradient g = p.grad:

    g <- g + weight_decay * p                          (if weight_decay; L2 regularisation)
    v <- alpha * v + (1 - alpha) * g * g               running mean of g^2
    m <- m + (1 - alpha) * (g - m)                     running mean of g           (if centered)
    avg <- sqrt(v - m * m) + eps   (centered)   or   avg <- sqrt(v) + eps
    b <- momentum * b + g / avg;   p <- p - lr * b     (if momentum)
    p <- p - lr * g / avg                              (otherwise)

`centered` divides by an estimate of the gradient's standard deviation instead of its root mean
square. NB: unlike Adam there is no bias correction, so the first steps are large (v starts at 0).
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, bump_version, check_at_least_zero, gradient, run_closure


class RMSprop(Optimizer):
    """`RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, *, maximize=False)`, as `torch.optim.RMSprop`.

    State per parameter: `step` (a float32 count), `square_avg` (v), and `momentum_buffer` (b, when
    momentum > 0) and `grad_avg` (m, when centered).
    """

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "momentum",
        "alpha",
        "eps",
        "centered",
        "weight_decay",
        "capturable",
        "foreach",
        "maximize",
        "differentiable",
    )

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        *,
        maximize=False,
        **switches,
    ):
        check_at_least_zero("learning rate", lr, "the learning rate is a step size, e.g. lr=1e-2")
        check_at_least_zero(
            "epsilon value", eps, "eps keeps the division away from zero; the default is 1e-8"
        )
        check_at_least_zero("momentum value", momentum, "e.g. momentum=0.9; 0 turns it off")
        check_at_least_zero(
            "weight_decay value", weight_decay, "e.g. weight_decay=1e-4; 0 turns it off"
        )
        check_at_least_zero(
            "alpha value",
            alpha,
            "alpha is how much of the running average of g^2 is kept; the default is 0.99",
        )
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            maximize=maximize,
        )
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: every average starts at zero
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["square_avg"] = _make(np.zeros_like(param))
                    if momentum > 0:
                        state["momentum_buffer"] = _make(np.zeros_like(param))
                    if group["centered"]:
                        state["grad_avg"] = _make(np.zeros_like(param))
                count = state["step"]._data
                np.add(count, 1, out=count)

                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, group["weight_decay"], group["maximize"], out=g_buf)

                # v <- alpha * v + (1 - alpha) * g * g
                v = state["square_avg"]._data
                np.multiply(v, alpha, out=v)
                np.add(v, np.multiply(np.multiply(g, 1 - alpha, out=work), g, out=work), out=v)
                if group["centered"]:
                    # m <- m + (1 - alpha) * (g - m);  avg <- sqrt(v - m * m)
                    m = state["grad_avg"]._data
                    np.add(m, np.multiply(np.subtract(g, m, out=work), 1 - alpha, out=work), out=m)
                    avg = np.sqrt(np.subtract(v, np.multiply(m, m, out=work), out=work), out=work)
                else:
                    avg = np.sqrt(v, out=work)
                np.add(avg, eps, out=avg)

                if momentum > 0:
                    # b <- momentum * b + g / avg;  p <- p - lr * b
                    b = state["momentum_buffer"]._data
                    np.multiply(b, momentum, out=b)
                    np.add(b, np.divide(g, avg, out=avg), out=b)
                    np.subtract(param, np.multiply(b, lr, out=avg), out=param)
                else:
                    # p <- p - lr * g / avg
                    step = np.divide(np.multiply(g, lr, out=g_buf), avg, out=avg)
                    np.subtract(param, step, out=param)
                bump_version(p)
        return loss
