"""Gradient values and NaN/inf at the edges (issue 14, seventh wave): where the fuzzer found a
gradient that differs from PyTorch's, each compared with PyTorch bit for bit (nan where nan, the
sign of every infinity and zero)."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import values
from fuzzing.compare import Divergence
from fuzzing.simplifications import accepted_by
from test_edges_gradient_values import _fuzzed
from test_edges_gradients import NAN, identical

import autograd_lab as ag


def test_pow_of_a_float32_base_to_float64_exponents_takes_log_in_float64(torch):
    # x32.pow_(e64) keeps a float32 result, but the exponent's gradient a^b * log(a) takes log(a)
    # in float64, the dtype a ** b computes in (fuzz seed 1427914)
    base = [0.7, -1.3, 2.9, 0.0, 3.3, 1e-3]
    exponents = [0.5, 2.0, -1.3, 2.0, 3.7, 2.2]

    def exponent_gradient(lib):
        e = lib.tensor(exponents, dtype=lib.float64, requires_grad=True)
        result = lib.tensor(base).pow_(e)
        (result * lib.arange(1.0, 7.0)).sum().backward()
        return e.grad

    identical(exponent_gradient(ag), exponent_gradient(torch))


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_elu_gradient_at_nan_is_the_element_rule_not_pytorchs_vector_loop(torch, alpha):
    # PyTorch's element loop (a short tensor, or the tail after whole vectors of 16) takes the
    # slope of x > 0 at a nan input, as `x <= 0` is false; its vectorized loop gives nan. Ours is
    # the element rule at every length, accepted as a simplification (fuzz seed 1430012)
    def gradient(lib, length):
        x = lib.full((length,), NAN, requires_grad=True)
        lib.nn.functional.elu(x, alpha).sum().backward()
        return x.grad

    identical(gradient(ag, 3), gradient(torch, 3))
    assert not np.isnan(values(gradient(ag, 16))).any()
    # which loop PyTorch runs depends on the CPU: its AVX2 loop gives nan, an AVX-512 one not
    vector_loop_nan = np.isnan(values(gradient(torch, 16))).all()
    if not vector_loop_nan:
        identical(gradient(ag, 16), gradient(torch, 16))
    steps = [("v0", "F.elu", f"torch.nn.functional.elu({{0}}, {alpha})", ("x0",))]
    result = _fuzzed(torch, steps, [NAN] * 16 + [1.0, -1.0], "backward", True)
    assert not result.divergences and bool(result.accepted) == vector_loop_nan


def test_only_a_nan_on_pytorchs_side_after_elu_is_accepted():
    nan_there = Divergence(
        "loss.backward()  [x0.grad]",
        "backward",
        "NaN/inf",
        "tensor([2. 1.5], float32)",
        "tensor([nan 1.5], float32)",
    )
    assert accepted_by(nan_there, "v0 = torch.nn.functional.elu(x0, 2.0)") is not None
    assert accepted_by(nan_there, "v0 = x0.exp()") is None
    nan_here = replace(nan_there, ours=nan_there.theirs, theirs=nan_there.ours)
    assert accepted_by(nan_here, "v0 = torch.nn.functional.elu(x0, 2.0)") is None
    inf_there = replace(nan_there, theirs="tensor([inf 1.5], float32)")
    assert accepted_by(inf_there, "v0 = torch.nn.functional.elu(x0, 2.0)") is None


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_cross_entropy_second_derivative_is_pytorchs_formula(
    torch, reduction, weighted, dtype
):
    # PyTorch's double backward adds 1e-12 to x and 1 - x where the first derivative clamps
    # x (1 - x) at 1e-12: near x = 0 or 1 the two differ in the 7th digit (fuzz seed 1404947)
    def second(lib):
        x = lib.tensor(
            [0.5, 0.3, 0.9999, 1e-7, 0.0, 1.0], dtype=getattr(lib, dtype), requires_grad=True
        )
        t = lib.tensor(
            [0.0, 0.24, 0.45, 0.38, 0.5, 1.0], dtype=getattr(lib, dtype), requires_grad=True
        )
        arriving = lib.tensor(1.7, dtype=getattr(lib, dtype), requires_grad=True)
        weight = lib.arange(1.0, 7.0, dtype=getattr(lib, dtype)) if weighted else None
        loss = lib.nn.functional.binary_cross_entropy(x, t, weight, reduction=reduction)
        if reduction == "none":
            arriving = arriving.expand(6)
        (g,) = lib.autograd.grad(loss, [x], arriving, create_graph=True)
        upstream = lib.arange(1.0, 7.0, dtype=getattr(lib, dtype))
        return lib.autograd.grad(g, [x, t, arriving], upstream)

    # (float32: the gradient of `arriving` is a float32 sum, numpy's, equal to rounding)
    for ours, theirs in zip(second(ag), second(torch), strict=True):
        identical(ours, theirs, close=dtype == "float32")


@pytest.mark.parametrize("arriving", [[[0.0], [0.0]], [[2.0], [0.0]], [[-1.0], [3.0]]])
def test_logcumsumexp_second_derivative_at_a_zero_gradient_is_nan(torch, arriving):
    # PyTorch's backward takes log|grad| as it is (-inf at 0, then not chosen): differentiated
    # again, log's slope 1/|grad| makes the second derivative nan there (fuzz seed 1403966)
    def second(lib):
        x = lib.tensor([[0.0], [1.5]], dtype=lib.float64, requires_grad=True)
        upstream = lib.tensor(arriving, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.logcumsumexp(0), [x], upstream, create_graph=True)
        return lib.autograd.grad((g * g).sum(), [x, upstream])

    for ours, theirs in zip(second(ag), second(torch), strict=True):
        identical(ours, theirs)
