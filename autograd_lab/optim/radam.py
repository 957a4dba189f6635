"""RAdam: Adam whose adaptive step is switched on gradually, once v's estimate can be trusted.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first steps are plain momentum steps: lr * m_hat = lr * g
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)

The update at step t (Liu et al., 2020, "rectified" Adam, as PyTorch writes it), g = p.grad:

    p <- p * (1 - lr * weight_decay)       (decoupled_weight_decay, as AdamW; else g += wd * p)
    m <- m + (1 - beta1) * (g - m);   v <- beta2 * v + (1 - beta2) * g * g
    m_hat <- m / (1 - beta1^t)                              bias-corrected mean
    rho_inf <- 2 / (1 - beta2) - 1;   rho_t <- rho_inf - 2 t beta2^t / (1 - beta2^t)
    if rho_t > 5:    (enough steps for v's variance to be finite)
        r <- sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        p <- p - lr * m_hat * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
    else:
        p <- p - lr * m_hat                                 SGD with momentum, no adaptive scale

rho_t estimates how many gradients v effectively averages; r grows from 0 towards 1 with it, so
the early, noisy steps of Adam (the reason for learning-rate warm-up) are damped.
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


class RAdam(Optimizer):
    """`RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, maximize=False)`, as `torch.optim.RAdam`.

    State per parameter: `step` (a float32 count), `exp_avg` (m) and `exp_avg_sq` (v).
    """

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "maximize",
        "foreach",
        "capturable",
        "decoupled_weight_decay",
        "differentiable",
    )

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        maximize=False,
        **switches,
    ):
        check_at_least_zero("learning rate", lr, "the learning rate is a step size, e.g. lr=1e-3")
        check_at_least_zero(
            "epsilon value", eps, "eps keeps the division away from zero; the default is 1e-8"
        )
        check_betas(betas)
        check_at_least_zero(
            "weight_decay value", weight_decay, "e.g. weight_decay=1e-4; 0 turns it off"
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: averages start at zero
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["exp_avg"] = _make(np.zeros_like(param))
                    state["exp_avg_sq"] = _make(np.zeros_like(param))
                count = state["step"]._data
                np.add(count, 1, out=count)
                t = float(count)

                if weight_decay != 0 and decoupled:  # shrink p, apart from the gradient
                    np.multiply(param, 1 - lr * weight_decay, out=param)
                    bump_version(p)
                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, 0 if decoupled else weight_decay, group["maximize"], out=g_buf)

                # m <- m + (1 - beta1) * (g - m);  v <- beta2 * v + (1 - beta2) * g * g
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                np.add(m, np.multiply(np.subtract(g, m, out=work), 1 - beta1, out=work), out=m)
                np.multiply(v, beta2, out=v)
                np.add(v, np.multiply(np.multiply(g, 1 - beta2, out=work), g, out=work), out=v)

                bias_correction1, bias_correction2 = 1 - beta1**t, 1 - beta2**t
                # step <- lr * m_hat, with m_hat = m / (1 - beta1^t)
                step = np.multiply(np.divide(m, bias_correction1, out=g_buf), lr, out=g_buf)
                # how many gradients v averages, in effect; rectify only once there are enough
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * t * (beta2**t) / bias_correction2
                if rho_t > 5.0:
                    # step <- step * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
                    adaptive = np.add(np.sqrt(v, out=work), eps, out=work)
                    np.divide(bias_correction2**0.5, adaptive, out=adaptive)
                    np.multiply(step, adaptive, out=step)
                    rect = (
                        (rho_t - 4)
                        * (rho_t - 2)
                        * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    ) ** 0.5
                    np.multiply(step, rect, out=step)
                np.subtract(param, step, out=param)
                bump_version(p)
        return loss
