"""Rprop: each entry keeps its own step size, grown while its gradient keeps its sign.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ag.optim.Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()          # steps of 0.1, then 0.1 * 1.2: only the gradient's sign is used
    >>> w
    tensor([ 0.7800, -1.7800], requires_grad=True)

The update (Riedmiller & Braun, 1993, "resilient backpropagation", as PyTorch writes it), for
every entry of p, with g = p.grad and g_prev the gradient the last step used:

    s <- s * eta_plus    if g * g_prev > 0     (same direction again: take bigger steps)
    s <- s * eta_minus   if g * g_prev < 0     (overshot a minimum: smaller steps, and skip
         g <- 0                                  this step for that entry)
    s <- clamp(s, step_size_min, step_size_max)
    p <- p - sign(g) * s;   g_prev <- g

Only the gradient's sign is used, never its size: each entry finds its own scale (the step sizes
start at lr). NB: Rprop is made for full-batch training; mini-batch noise flips the signs.
"""

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import _make
from .optimizer import Optimizer, bump_version, check_at_least_zero, gradient, run_closure


class Rprop(Optimizer):
    """`Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False)`, as
    `torch.optim.Rprop`. State per parameter: `step` (a float32 count), `prev` (the last gradient
    used) and `step_size` (s)."""

    # the param-group keys in PyTorch's order (print(optimizer) and state_dict() show them)
    group_keys = (
        "lr",
        "etas",
        "step_sizes",
        "foreach",
        "maximize",
        "differentiable",
        "capturable",
    )

    def __init__(
        self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False, **switches
    ):
        check_at_least_zero("learning rate", lr, "it is where every step size starts, e.g. 1e-2")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(
                f"Invalid eta values: {etas[0]}, {etas[1]}. etas=(eta_minus, eta_plus) shrink and "
                "grow the step sizes, so 0 < eta_minus < 1 < eta_plus; the default is (0.5, 1.2)."
            )
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize)
        super().__init__(params, defaults, switches)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a `.grad`; returns the closure's loss, if any."""
        loss = run_closure(closure)
        for group in self.param_groups:
            (eta_minus, eta_plus), (smallest, largest) = group["etas"], group["step_sizes"]
            for p in group["params"]:
                if p._grad is None:  # no gradient reached it: leave it (and its state) alone
                    continue
                param, state = p._data, self.state[p]
                if not state:  # the first step: no previous gradient, every step size at lr
                    state["step"] = _make(np.zeros((), np.float32))  # a float32 count, as PyTorch
                    state["prev"] = _make(np.zeros_like(param))
                    state["step_size"] = _make(np.full_like(param, group["lr"]))
                count = state["step"]._data
                np.add(count, 1, out=count)

                g = gradient(p, 0, group["maximize"], out=np.empty_like(param))
                prev, size = state["prev"]._data, state["step_size"]._data
                # did each entry's gradient keep its sign (> 0), flip it (< 0), or was one 0?
                product = np.multiply(g, prev, out=np.empty_like(param))
                kept, flipped = np.greater(product, 0), np.less(product, 0)
                as_param = param.dtype.type  # the factors in p's dtype, as PyTorch multiplies
                factor = np.where(
                    kept, as_param(eta_plus), np.where(flipped, as_param(eta_minus), as_param(1))
                )
                # s <- clamp(s * factor, step_size_min, step_size_max)
                np.clip(np.multiply(size, factor, out=size), smallest, largest, out=size)
                # where the sign flipped: no step now, and no sign to compare with next time
                g = np.where(flipped, 0, g)
                # p <- p - sign(g) * s;  g_prev <- g
                np.subtract(param, np.multiply(np.sign(g), size, out=product), out=param)
                np.positive(g, out=prev)  # a copy written into prev
                bump_version(p)
        return loss
