"""Adam and AdamW: steps scaled by running averages of the gradient and of its square.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step moves every entry by about lr, whatever its gradient
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)

The update at step t (Kingma & Ba, 2015, as PyTorch writes it), for p with gradient g = p.grad:

    p <- p * (1 - lr * weight_decay)          (AdamW: decoupled weight decay)
    g <- g + weight_decay * p                 (Adam: weight decay as L2 regularisation)
    m <- m + (1 - beta1) * (g - m)            running mean of g     (= beta1 m + (1 - beta1) g)
    v <- beta2 * v + (1 - beta2) * g * g      running mean of g^2
    v_max <- max(v_max, v); use v_max for v   (amsgrad)
    p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

The `1 - beta^t` factors undo the averages' bias towards their zero start. NB: eps is added after
the bias correction of sqrt(v), as in PyTorch (the paper's "v hat" formulation).
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, bump_version, gradient, run_closure


class Adam(Optimizer):
    """`Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    maximize=False, decoupled_weight_decay=False)`, as `torch.optim.Adam`.

    State per parameter: `step` (a float32 count), `exp_avg` (m), `exp_avg_sq` (v) and, with
    amsgrad, `max_exp_avg_sq`.
    """

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "amsgrad",
        "maximize",
        "foreach",
        "capturable",
        "differentiable",
        "fused",
        "decoupled_weight_decay",
    )

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        maximize=False,
        decoupled_weight_decay=False,
        **switches,
    ):
        if not 0.0 <= lr:
            raise ValueError(
                f"Invalid learning rate: {lr}. The learning rate is a step size and must be >= 0; "
                "pass e.g. lr=1e-3."
            )
        if not 0.0 <= eps:
            raise ValueError(
                f"Invalid epsilon value: {eps}. eps keeps the division away from zero and must be "
                ">= 0; the default is eps=1e-8."
            )
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(
                    f"Invalid beta parameter at index {i}: {betas[i]}. Both averaging factors in "
                    "betas=(beta1, beta2) must be in [0, 1); the default is betas=(0.9, 0.999)."
                )
        if not 0.0 <= weight_decay:
            raise ValueError(
                f"Invalid weight_decay value: {weight_decay}. weight_decay must be >= 0, e.g. "
                "weight_decay=1e-2 (0 turns it off)."
            )
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: averages start at zero
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["exp_avg"] = _make(np.zeros_like(param))
                    state["exp_avg_sq"] = _make(np.zeros_like(param))
                    if amsgrad:
                        state["max_exp_avg_sq"] = _make(np.zeros_like(param))
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                count = state["step"]._data
                np.add(count, 1, out=count)
                t = float(count)

                if weight_decay != 0 and decoupled:  # AdamW: shrink p, apart from the gradient
                    np.multiply(param, 1 - lr * weight_decay, out=param)
                    bump_version(p)
                g_buf, work = np.empty_like(param), np.empty_like(param)  # two scratch arrays
                g = gradient(p, 0 if decoupled else weight_decay, group["maximize"], out=g_buf)

                # m <- m + (1 - beta1) * (g - m)
                np.multiply(np.subtract(g, m, out=work), 1 - beta1, out=work)
                np.add(m, work, out=m)
                # v <- beta2 * v + (1 - beta2) * g * g
                np.multiply(v, beta2, out=v)
                np.multiply(np.multiply(g, 1 - beta2, out=work), g, out=work)
                np.add(v, work, out=v)
                if amsgrad:  # never let the denominator shrink: use the largest v so far
                    v_max = state["max_exp_avg_sq"]._data
                    v = np.maximum(v_max, v, out=v_max)

                # denom = sqrt(v) / sqrt(1 - beta2^t) + eps
                denom = np.sqrt(v, out=work)
                np.divide(denom, (1 - beta2**t) ** 0.5, out=denom)
                np.add(denom, eps, out=denom)
                # p <- p - lr / (1 - beta1^t) * m / denom
                update = np.multiply(m, lr / (1 - beta1**t), out=g_buf)
                np.subtract(param, np.divide(update, denom, out=update), out=param)
                bump_version(p)
        return loss


class AdamW(Adam):
    """`AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
    maximize=False)`, as `torch.optim.AdamW`: Adam with decoupled weight decay (Loshchilov &
    Hutter, 2019), which shrinks p by `lr * weight_decay` instead of adding to the gradient.
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        **switches,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            **switches,
            decoupled_weight_decay=True,
        )
