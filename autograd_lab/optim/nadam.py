"""NAdam: Adam with Nesterov momentum: the step uses the mean *after* this step's update.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8944, -1.8944], requires_grad=True)

The update at step t (Dozat, 2016, as PyTorch writes it), for p with gradient g = p.grad:

    p <- p * (1 - lr * weight_decay)       (decoupled_weight_decay, as AdamW; else g += wd * p)
    mu_t <- beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))   the momentum of step t, growing
    prod <- prod * mu_t                                      mu_1 * ... * mu_t (state mu_product)
    m <- m + (1 - beta1) * (g - m);   v <- beta2 * v + (1 - beta2) * g * g
    denom <- sqrt(v / (1 - beta2^t)) + eps
    p <- p - lr * (1 - mu_t) / (1 - prod) * g / denom                    the gradient's part
    p <- p - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom           the look-ahead momentum

The momentum schedule mu_t warms up from about beta1 / 2 to beta1 (Timothy Dozat's choice).
NB: as in PyTorch, `mu_product` is kept as a float32 number whatever the parameters' dtype.
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


class NAdam(Optimizer):
    """`NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, maximize=False)`, as `torch.optim.NAdam`.

    State per parameter: `step` and `mu_product` (float32 numbers), `exp_avg` (m), `exp_avg_sq` (v).
    """

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "momentum_decay",
        "decoupled_weight_decay",
        "maximize",
        "foreach",
        "capturable",
        "differentiable",
    )

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
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
        check_at_least_zero(
            "momentum_decay value", momentum_decay, "how fast mu warms up; the default is 4e-3"
        )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
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
            weight_decay, decay = group["weight_decay"], group["momentum_decay"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: averages at zero, the product of mu's at one
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["mu_product"] = _make(np.ones((), np.float32))
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

                # this step's momentum and the next one's; their running product (in float32)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * decay)))
                product = state["mu_product"]._data
                np.multiply(product, mu, out=product)
                product_next = float(product) * mu_next

                # m <- m + (1 - beta1) * (g - m);  v <- beta2 * v + (1 - beta2) * g * g
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                np.add(m, np.multiply(np.subtract(g, m, out=work), 1 - beta1, out=work), out=m)
                np.multiply(v, beta2, out=v)
                np.add(v, np.multiply(np.multiply(g, 1 - beta2, out=work), g, out=work), out=v)
                # denom <- sqrt(v / (1 - beta2^t)) + eps
                denom = np.empty_like(param)
                np.sqrt(np.divide(v, 1 - beta2**t, out=denom), out=denom)
                np.add(denom, eps, out=denom)
                # p <- p - lr (1 - mu) / (1 - prod) g / denom         (the gradient's part)
                # p <- p - lr mu_next / (1 - prod_next) m / denom      (the momentum's part)
                gradient_part = np.multiply(g, -lr * (1.0 - mu) / (1.0 - float(product)), out=g_buf)
                np.add(param, np.divide(gradient_part, denom, out=work), out=param)
                momentum_part = np.multiply(m, (-lr * mu_next) / (1.0 - product_next), out=work)
                np.add(param, np.divide(momentum_part, denom, out=work), out=param)
                bump_version(p)
        return loss
