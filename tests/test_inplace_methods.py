"""In-place methods (`x.exp_()`, `x.addcmul_(a, b)`, ...) and the compound ops optimizers are written in.

The op table checks addcmul/addcdiv/lerp's values and gradients; here: the in-place forms change the
tensor itself, bump its version, and let an optimizer be written exactly as in PyTorch.
"""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag

UNARY = "neg exp log log1p expm1 sqrt sin cos tanh sigmoid relu abs reciprocal sign square".split()


@pytest.mark.parametrize("name", UNARY)
def test_unary_in_place_method_stores_the_op_result(lib, name):
    x = lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64)
    expected = values(getattr(x, name)())
    version = x._version
    out = getattr(x, name + "_")()
    assert out is x
    np.testing.assert_allclose(values(x), expected)
    assert x._version == version + 1


def test_compound_in_place_methods(lib):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
    a = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
    b = lib.tensor([2.0, 4.0, 8.0], dtype=lib.float64)
    x.addcmul_(a, b, value=0.5).addcdiv_(a, b, value=-2.0).lerp_(b, 0.25).lerp_(a, b / 10)
    xs, an, bn = np.array([1.0, 2.0, 3.0]), values(a), values(b)
    xs = xs + 0.5 * an * bn - 2.0 * an / bn
    xs = xs + 0.25 * (bn - xs)
    xs = xs + bn / 10 * (an - xs)
    np.testing.assert_allclose(values(x), xs, rtol=1e-12)


def test_in_place_method_through_recorded_graph_gives_pytorchs_gradient(lib):
    w = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
    y = (w * 2).addcmul_(w, w, value=3.0).exp_()
    y.sum().backward()
    assert y.grad_fn.name() == "ExpBackward0"
    wn = values(w)
    np.testing.assert_allclose(values(w.grad), np.exp(2 * wn + 3 * wn**2) * (2 + 6 * wn))


def test_adam_written_the_pytorch_way_matches_optim_adam():
    """A learner's Adam with mul_/add_/addcmul_/addcdiv_ gives optim.Adam's parameters."""
    ag.manual_seed(0)
    p_ref = ag.randn(5, dtype=ag.float64, requires_grad=True)
    p = p_ref.detach().clone().requires_grad_()
    exp_avg, exp_avg_sq = ag.zeros_like(p), ag.zeros_like(p)
    reference = ag.optim.Adam([p_ref], lr=0.1)
    beta1, beta2, eps, lr = 0.9, 0.999, 1e-8, 0.1
    for step in range(1, 6):
        for param in (p, p_ref):
            param.grad = None
            ((param - 0.5) ** 4).sum().backward()
        reference.step()
        with ag.no_grad():
            exp_avg.mul_(beta1).add_(p.grad, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            denom = (exp_avg_sq / (1 - beta2**step)).sqrt().add_(eps)
            p.addcdiv_(exp_avg, denom, value=-lr / (1 - beta1**step))
    np.testing.assert_allclose(values(p), values(p_ref), rtol=1e-12)
