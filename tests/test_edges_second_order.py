"""Gradients of gradients (create_graph=True) as PyTorch 2.13 computes them, found by issue 14's
differential fuzzing: which first-order gradients require grad, and the second-order values,
NaN and inf. Each test runs the same lines in both libraries and compares."""

import numpy as np
import pytest
from conftest import values
from fuzzing.compare import Divergence
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


def first_and_second(lib, make_input, f):
    """grad(f(x) weighted, x, create_graph=True), whether it requires grad, and the gradient of
    its squares' sum (None where nothing requires grad or x is unused): what the fuzzer checks."""
    x = make_input(lib).requires_grad_()
    y = f(lib, x)
    weights = lib.arange(1, y.numel() + 1).reshape(y.shape)
    (g,) = lib.autograd.grad((y * weights).sum(), [x], create_graph=True)
    second = None
    if g.requires_grad:
        (second,) = lib.autograd.grad((g * g).sum(), [x], allow_unused=True)
    return g, second


def agree(torch, make_input, f, exact=True):
    """Both libraries' first and second gradients: values, requires_grad, None-vs-tensor."""
    (g, second), (tg, tsecond) = (first_and_second(lib, make_input, f) for lib in (ag, torch))
    assert g.requires_grad == tg.requires_grad
    compare = np.testing.assert_array_equal if exact else np.testing.assert_allclose
    compare(values(g), values(tg))
    assert (second is None) == (tsecond is None)
    if second is not None:
        compare(values(second), values(tsecond))


def conv1d(lib, x):
    return lib.nn.functional.conv1d(x, lib.tensor([[[0.86, -1.5], [0.25, 1.0]]]), padding=1)


def conv2d(lib, x):
    weight = lib.tensor([-0.06, -0.96]).reshape(1, 2, 1, 1)
    return lib.nn.functional.conv2d(x.reshape(1, 2, 1, 3), weight, stride=2)


def avg_pool2d(lib, x):
    return lib.nn.functional.avg_pool2d(x.reshape(1, 2, 3), (1, 2), padding=(0, 1))


def batch_norm_in_evaluation(lib, x):
    running_mean, running_var = lib.tensor([-1.58, 0.5]), lib.tensor([1.16, 0.75])
    return lib.nn.functional.batch_norm(x.reshape(3, 2), running_mean, running_var)


@pytest.mark.parametrize("f", [conv1d, conv2d, avg_pool2d, batch_norm_in_evaluation])
def test_a_gradient_whose_pytorch_op_takes_the_input_requires_grad(torch, f):
    # These gradients do not depend on x, but PyTorch computes each with one op that takes x
    # (convolution_backward, avg_pool2d_backward, native_batch_norm_backward): so they require
    # grad, and differentiating them again gives x zeros (pooling) or nothing (None).
    agree(torch, lambda lib: lib.tensor([[0.5, -1.0, 2.0], [0.0, 1.5, -0.5]]), f)


def test_a_convolution_weights_gradient_requires_grad_with_the_weight(torch):
    def weight_gradient(lib):
        w = lib.tensor([[[0.86, -1.5], [0.25, 1.0]]]).requires_grad_()
        x = lib.tensor([[0.5, -1.0, 2.0], [0.0, 1.5, -0.5]])
        (g,) = lib.autograd.grad(lib.nn.functional.conv1d(x, w).sum(), [w], create_graph=True)
        (second,) = lib.autograd.grad((g * g).sum(), [w], allow_unused=True)
        return g.requires_grad, values(g), second

    ours, theirs = weight_gradient(ag), weight_gradient(torch)
    assert ours[0] is theirs[0] is True and ours[2] is theirs[2] is None
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize(
    "make_input, f",
    [
        (lambda lib: lib.tensor(2.0), lambda lib, x: x.prod(0)),
        (lambda lib: lib.tensor(2.0), lambda lib, x: x.prod(0, keepdim=True)),
        (lambda lib: lib.tensor([2.0]), lambda lib, x: x.cumprod(0)),
        (lambda lib: lib.zeros(0, 2), lambda lib, x: x.cumprod(1)),
        (lambda lib: lib.zeros(0), lambda lib, x: x.logcumsumexp(0)),
    ],
    ids=["prod_0d", "prod_0d_keepdim", "cumprod_one", "cumprod_empty", "logcumsumexp_empty"],
)
def test_a_gradient_pytorch_hands_on_unchanged_is_a_constant(torch, make_input, f):
    # PyTorch's backward returns grad itself for one element (or none): nothing requires grad
    agree(torch, make_input, f)


@pytest.mark.filterwarnings("ignore:var")  # PyTorch warns: degrees of freedom <= 0
@pytest.mark.filterwarnings("ignore:std")
@pytest.mark.parametrize(
    "f",
    [
        lambda lib, x: x.var(),
        lambda lib, x: x.var(correction=4),
        lambda lib, x: x.var(correction=5),
        lambda lib, x: x.var(0, correction=2),
        lambda lib, x: x.var(-1, correction=3, keepdim=True),
        lambda lib, x: x.std(0, correction=1),
        lambda lib, x: x.std(correction=4),
        lambda lib, x: lib.var_mean(x, correction=6)[0],
        lambda lib, x: sum(lib.var_mean(x, 0, correction=2)),
        lambda lib, x: sum(lib.std_mean(x, -1)),
    ],
    ids=[
        "var",
        "var_no_dof",
        "var_negative_dof",
        "var_dim_no_dof",
        "var_dim_negative_dof",
        "std_dim",
        "std_no_dof",
        "var_mean_no_dof",
        "var_mean_dim_no_dof",
        "std_mean_dim",
    ],
)
def test_var_and_std_gradients_follow_pytorchs_formula(torch, f):
    # 2 (x - mean) / (n - correction) times grad; with n - correction <= 0 over every dim
    # PyTorch gives nan where x equals the mean and inf elsewhere, a constant (no grad)
    agree(torch, lambda lib: lib.tensor([[1.0, 2.0], [3.0, 3.0]], dtype=lib.float64), f)


@pytest.mark.filterwarnings("ignore:var")
def test_var_of_a_single_number_has_a_constant_gradient(torch):
    agree(torch, lambda lib: lib.tensor(2.0), lambda lib, x: x.var(dim=-1, correction=2))
    agree(torch, lambda lib: lib.tensor(2.0), lambda lib, x: lib.var_mean(x, dim=-1)[0])
    agree(torch, lambda lib: lib.zeros(1), lambda lib, x: lib.var_mean(x.diff())[0])


def test_sinh_at_infinity_has_an_infinite_second_derivative(torch):
    # PyTorch's d sinh = cosh(x) (not (exp(x) + exp(-x)) / 2, whose second derivative at inf is
    # inf - inf = nan)
    agree(
        torch, lambda lib: lib.tensor([0.0, float("inf"), -float("inf")]), lambda lib, x: x.sinh()
    )


def test_x_over_x_has_a_zero_gradient_to_the_last_bit(torch):
    # PyTorch's d(a/b)/db = -grad * ((a / b) / b): for x / x the two terms cancel exactly
    x = [-2.0, 2.91, 1.8, 1.0, 0.03, 2.52, -1.27, 0.5]
    agree(torch, lambda lib: lib.tensor(x), lambda lib, x: lib.maximum(x, x / x))


@pytest.mark.parametrize("value", [1, 0.5, -1, 0.3])
def test_addcdiv_and_addcmul_gradients_round_as_pytorchs(torch, value):
    x = [-0.57, -0.73, 1.0, 2.19, 2.24, 0.9, -1.36, 1.89, 0.98, 0.5, 0.75, 2.06]
    agree(torch, lambda lib: lib.tensor(x), lambda lib, x: x.addcdiv(x, x, value=value))
    agree(torch, lambda lib: lib.tensor(x), lambda lib, x: x.addcmul(x, x + 1.5, value=value))
    zeros = [0.0, -0.21, 0.0]  # a zero divisor: nan and inf as in PyTorch
    agree(torch, lambda lib: lib.tensor(zeros), lambda lib, x: x.addcdiv(x, x, value=value))


@pytest.mark.parametrize(
    "index, value",
    [
        (..., 0.0),
        ((slice(None),), 2.5),
        ((slice(0, 5), ...), "one number"),
        ((), "two numbers"),
    ],
    ids=["ellipsis", "whole_slice", "slice_past_the_end", "empty_tuple"],
)
def test_writing_all_of_a_tensor_leaves_its_old_values_a_zero_gradient(torch, index, value):
    # PyTorch's x[...] = v (and x[:] = v, x[()] = v) is a fill_ or copy_ of x itself, whose
    # gradient to x's old values is zeros_like: a constant, even with create_graph=True
    def run(lib):
        x = lib.tensor([[0.5, -1.0], [2.0, 0.0]], requires_grad=True)
        v = x * 1
        if value == "one number":
            v[index] = lib.tensor(3.0)
        elif value == "two numbers":
            v[index] = lib.tensor([[1.0, 2.0]])  # an extra leading 1 is dropped
        else:
            v[index] = value
        loss = (v.abs() * lib.arange(1.0, 5.0).reshape(2, 2)).sum()
        (g,) = lib.autograd.grad(loss, [x], create_graph=True)
        return g.requires_grad, values(g), v.grad_fn.name().removeprefix("torch::autograd::")

    ours, theirs = run(ag), run(torch)
    assert ours[0] is theirs[0] is False and ours[2] == theirs[2]
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_writing_part_of_a_tensor_keeps_a_gradient_that_requires_grad(torch):
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        v = x * 1
        v[1:] = 0.0
        (g,) = lib.autograd.grad((v.abs() * lib.arange(1.0, 4.0)).sum(), [x], create_graph=True)
        return g.requires_grad, values(g)

    ours, theirs = run(ag), run(torch)
    assert ours[0] is theirs[0] is True
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_var_over_no_dims_keeps_the_true_gradient_and_the_fuzzer_accepts_only_that(torch):
    def gradient(lib):
        x = lib.tensor([[0.0], [1.0]], dtype=lib.float64, requires_grad=True)
        x.var(dim=(), correction=0).backward()
        return values(x.grad)

    # PyTorch 2.13 divides by n - correction with n = 1 for dim=(): twice the true gradient here
    np.testing.assert_array_equal(gradient(torch), [[-1.0], [1.0]])
    np.testing.assert_array_equal(gradient(ag), [[-0.5], [0.5]])
    x = ag.tensor([[0.0], [1.0]], dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradcheck(lambda t: t.var(dim=(), correction=0), (x,))

    differ = Divergence("grads = ...", "grad", "values", "tensor([-0.5])", "tensor([-1.])")
    assert accepted_by(differ, "v4 = x0.var(dim=(), correction=0, keepdim=True)") is not None
    assert accepted_by(differ, "v4 = torch.std_mean(x0, dim=())") is not None
    assert accepted_by(differ, "v4 = x0.var(dim=0)") is None
    assert accepted_by(differ, "v4 = x0.sum(dim=())") is None


def test_softplus_second_derivative_keeps_a_nan_input_nan(torch):
    # PyTorch multiplies σ'(βx) by the mask βx < threshold: NaN · 0 stays NaN, inf gives 0
    nan, inf = float("nan"), float("inf")
    x = [0.0, nan, -inf, inf, 30.0, 5.0]
    agree(torch, lambda lib: lib.tensor(x), lambda lib, x: lib.nn.functional.softplus(x, beta=2.0))


@pytest.mark.parametrize("loss", ["huber_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("side", ["input", "target"])
def test_huber_and_smooth_l1_second_derivatives_keep_nan_and_stop_at_the_threshold(
    torch, loss, reduction, side
):
    # PyTorch's double backward is grad · (|input - target| < delta): a NaN error stays NaN, and
    # the threshold itself (|d| = delta) already counts as the linear piece (0)
    nan, inf = float("nan"), float("inf")
    x = [0.0, nan, inf, -inf, 0.5, 2.0, 1.5, -0.5]

    def f(lib, x):
        other = lib.full((8,), 1.0)
        pair = (x, other) if side == "input" else (other, x)
        return getattr(lib.nn.functional, loss)(*pair, reduction=reduction)

    agree(torch, lambda lib: lib.tensor(x), f)


@pytest.mark.parametrize("p", [0.5, 0.25])
def test_a_norm_below_one_has_a_nan_second_derivative_at_zero(torch, p):
    # PyTorch sets |x|^(p-1) (infinite at 0) to 0 after taking the power: differentiating that
    # again multiplies 0 by inf there, so nan
    agree(torch, lambda lib: lib.tensor([0.0, 1.0, -2.0]), lambda lib, x: x.norm(p=p))


@pytest.mark.filterwarnings("ignore:invalid value")  # inf - inf in the formula, as in PyTorch
@pytest.mark.parametrize(
    "x", [[0.0], [[1.0, 2.0]], [[1.0, float("inf")]], [float("nan")], [-float("inf")]]
)
def test_logcumsumexp_along_a_dim_of_one_uses_pytorchs_formula(torch, x):
    # PyTorch passes grad on unchanged only for a 0-d or empty input; along a dim of size 1 its
    # formula exp(x - y) still runs: the gradient requires grad, and is nan at x = ±inf or nan
    agree(torch, lambda lib: lib.tensor(x), lambda lib, x: x.logcumsumexp(0))


@pytest.mark.parametrize("then", ["atan", "masked_fill_"])
def test_an_empty_as_strided_view_has_a_constant_zero_gradient(torch, then):
    # PyTorch's as_strided backward returns zeros of the input's shape for an empty view: a
    # constant, so the first gradient does not require grad
    def f(lib, x):
        view = lib.as_strided(x.clone(), (0,), (0,), 1)
        return view.atan() if then == "atan" else view.masked_fill_(view.bool(), 1.5) * view

    agree(torch, lambda lib: lib.tensor([0.99]), f)


@pytest.mark.parametrize("x", [[0.0, 0.0, 0.0], [0.0, 3.0, 4.0]])
@pytest.mark.parametrize("p", [2.0, 3.0])
def test_normalize_divides_by_the_clamped_norm_as_pytorch(torch, x, p):
    # x / max(‖x‖, eps) with the norm op: a slice of zeros has the first gradient 1/eps and a nan
    # second one; the 2-norm's gradients round as PyTorch's (p = 3: to the last bit or so)
    f = lambda lib, x: lib.nn.functional.normalize(x, p, 0)  # noqa: E731
    agree(torch, lambda lib: lib.tensor(x), f, exact=p == 2.0)
