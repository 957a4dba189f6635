"""Gradients at the edges (issue 14, items 7, 8 and 9), each compared with PyTorch bit for bit:
a flat piece passes an exact 0 even to an infinite gradient (a select, not grad * mask), nan
follows PyTorch's rules, pow's gradients at 0, clamp with min > max, binary cross-entropy at
0 and 1, and second derivatives that are zeros (not None) where PyTorch gives zeros."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag

INF, NAN = float("inf"), float("nan")


def identical(ours, theirs, close=False):
    """Equal values, nan where nan, and the same sign of every zero (0. is not -0. here);
    `close`: equal up to float32 rounding (where the two compute in a different order)."""
    ours, theirs = values(ours), values(theirs)
    if close:
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == theirs.dtype
    zeros = (ours == 0) & (theirs == 0)
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]))


def gradients(lib, make, inputs, upstream=None):
    """The output of make(lib, *inputs) and the gradient of each input, with `upstream` (a number)
    as the gradient arriving at every element of the output (1 by default)."""
    tensors = [lib.tensor(x, requires_grad=True) for x in inputs]
    out = make(lib, *tensors)
    arriving = lib.full_like(out, 1.0 if upstream is None else upstream)
    return (out, *lib.autograd.grad(out, tensors, arriving))


def same_gradients(torch, make, *inputs, upstream=None, close=False):
    for ours, theirs in zip(
        gradients(ag, make, inputs, upstream), gradients(torch, make, inputs, upstream), strict=True
    ):
        identical(ours, theirs, close)


# ---- item 8: where an op is flat, an infinite gradient gives 0 (PyTorch selects) -------------------

X = [-1.0, 0.0, 2.0, 2.0]
FLAT_PIECES = {
    "relu": lambda lib, x: x.relu(),
    "leaky_relu_0": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.0),
    "maximum": lambda lib, x: lib.maximum(x, lib.zeros(4)),
    "minimum": lambda lib, x: lib.minimum(x, lib.zeros(4)),
    "max": lambda lib, x: x.max(),
    "min": lambda lib, x: x.min(),
    "median": lambda lib, x: x.median(),
    "max_dim": lambda lib, x: x.reshape(2, 2).max(1).values,
    "min_dim": lambda lib, x: x.reshape(2, 2).min(0).values,
    "median_dim": lambda lib, x: x.reshape(2, 2).median(1).values,
    "sign": lambda lib, x: x.sign(),
    "pow_0": lambda lib, x: x**0,
    "clamp": lambda lib, x: x.clamp(0.0, 1.0),
    "clamp_tensor": lambda lib, x: x.clamp(lib.zeros(4), lib.ones(4)),
    "where": lambda lib, x: lib.where(x > 0, x, 0.0),
    "masked_fill": lambda lib, x: x.masked_fill(x < 0, 0.0),
    "floor": lambda lib, x: x.floor(),
    "ceil": lambda lib, x: x.ceil(),
    "round": lambda lib, x: x.round(),
    "round_decimals": lambda lib, x: x.round(decimals=1),
    "trunc": lambda lib, x: x.trunc(),
    "div_floor": lambda lib, x: lib.div(x, lib.full_like(x, 2.0), rounding_mode="floor"),
    "div_trunc": lambda lib, x: x.div(2.0, rounding_mode="trunc"),
    "copy_": lambda lib, x: (x * 1).copy_(lib.ones(4)),
    "embedding_padding": lambda lib, x: lib.nn.functional.embedding(
        lib.tensor([0, 1, 1]), x.reshape(2, 2), padding_idx=1
    ),
    # PyTorch multiplies for these: inf * 0 is nan there too, and so it is here
    "abs": lambda lib, x: x.abs(),
    "amax": lambda lib, x: x.reshape(2, 2).amax(1),
    "nan_to_num": lambda lib, x: lib.nan_to_num(x.log()),
}


@pytest.mark.parametrize("op", FLAT_PIECES)
def test_a_flat_piece_passes_zero_not_nan_to_an_infinite_gradient(torch, op):
    same_gradients(torch, FLAT_PIECES[op], X, upstream=INF)
    same_gradients(torch, FLAT_PIECES[op], X)


def test_maximum_of_two_inputs_gives_the_other_one_zero_not_nan(torch):
    same_gradients(torch, lambda lib, a, b: 1 / lib.maximum(a, b), [-1.0, 2.0], [0.0, 0.0])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_ignored_targets_get_a_zero_loss_and_a_zero_gradient(torch, loss, reduction):
    """0. (not -0.), and not nan even where the ignored row holds inf or nan."""

    def make(lib, x):
        target = lib.tensor([-100, 1, 0])
        return getattr(lib.nn.functional, loss)(x, target, reduction=reduction)

    close = loss == "cross_entropy"  # its log_softmax rounds differently in the last bit
    same_gradients(torch, make, [[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]], close=close)
    if loss == "nll_loss":
        same_gradients(torch, make, [[-INF, NAN], [3.0, 4.0], [-1.0, 0.5]])

    def all_ignored(lib, x):  # "mean" over nothing: a nan loss, zero gradients
        return getattr(lib.nn.functional, loss)(x, lib.tensor([-100]), reduction=reduction)

    same_gradients(torch, all_ignored, [[1.0, 2.0]])


@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
@pytest.mark.parametrize("output", [0, 1])
def test_var_mean_with_one_output_used_leaves_the_other_out(torch, op, output):
    """Only the used output's gradient counts: the mean's is 1/n even where x holds a nan (the
    spread's slope there is nan, and 0 times nan would be nan)."""
    pick = lambda lib, x: getattr(lib, op)(x, 0)[output]  # noqa: E731
    same_gradients(torch, pick, [NAN, 1.0, -2.0, 2.0], close=True)
    same_gradients(torch, pick, [NAN, 1.0, -2.0, 2.0], upstream=INF, close=True)
    both = lambda lib, x: sum(getattr(lib, op)(x, 0))  # noqa: E731
    same_gradients(torch, both, [3.0, 1.0, -2.0, 2.0], close=True)


# ---- item 9: nan follows PyTorch's rules -----------------------------------------------------------


@pytest.mark.parametrize("op", ["max", "min", "median"])
def test_a_nan_result_of_all_elements_is_shared_among_the_nans(torch, op):
    same_gradients(torch, lambda lib, x: getattr(x, op)(), [NAN, 1.0, NAN])
    same_gradients(torch, lambda lib, x: getattr(x, op)(), [INF, 1.0, INF])


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_and_minimum_give_both_inputs_the_gradient_where_one_is_nan(torch, op):
    pick = lambda lib, a, b: getattr(lib, op)(a, b)  # noqa: E731
    same_gradients(torch, pick, [NAN, 1.0, NAN, 2.0, 3.0], [0.0, NAN, NAN, 2.0, 1.0])
    same_gradients(torch, lambda lib, a: getattr(lib, op)(a, lib.tensor(0.0)), [NAN, 1.0])


@pytest.mark.parametrize(
    "activation",
    [
        lambda lib, x: x.relu(),
        lambda lib, x: lib.nn.functional.elu(x),
        lambda lib, x: lib.nn.functional.leaky_relu(x),
    ],
)
def test_relu_and_elu_pass_the_gradient_on_at_nan(torch, activation):
    same_gradients(torch, activation, [NAN, 1.0, -INF, 0.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: x.sign(),
        lambda lib, x: x.abs(),
        lambda lib, x: lib.nn.functional.l1_loss(x, lib.zeros(5), reduction="none"),
    ],
)
def test_sign_of_nan_and_of_minus_zero_is_zero_so_abs_has_gradient_zero_at_nan(torch, make):
    same_gradients(torch, make, [NAN, -0.0, 0.0, -2.0, 3.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: x.max(1).values,
        lambda lib, x: x.min(1).values,
        lambda lib, x: x.amax(1),
        lambda lib, x: x.amin(1),
        lambda lib, x: x.clamp(0.0, 2.0),
        lambda lib, x: x.sort(1).values * lib.arange(3.0),
        lambda lib, x: x.topk(2, 1).values * lib.arange(2.0),
    ],
)
def test_reductions_and_sorting_with_nan_follow_pytorch(torch, make):
    same_gradients(torch, make, [[NAN, 1.0, NAN], [1.0, NAN, 3.0], [2.0, 5.0, 2.0]])
    for lib in (ag, torch):  # the index of the nan, as PyTorch gives it
        assert values(lib.tensor([[1.0, NAN, 3.0, NAN]]).max(1).indices).tolist() == [1]


# ---- item 7: pow at 0, clamp with min > max, binary cross-entropy at 0 and 1 -------------------


@pytest.mark.parametrize("upstream", [1.0, INF])
@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: 0.0**x,
        lambda lib, x: 2.0**x,
        lambda lib, x: lib.zeros(4) ** x,
        lambda lib, x: x**0,
        lambda lib, x: x ** lib.zeros(4),
        lambda lib, x: x**2,
        lambda lib, x: x**-1,
    ],
)
def test_pow_gradients_at_zero_match_pytorch(torch, make, upstream):
    same_gradients(torch, make, [-1.0, 0.0, 0.5, 2.0], upstream=upstream)


@pytest.mark.parametrize("upstream", [1.0, INF])
def test_pow_of_two_tensors_at_base_zero_matches_pytorch(torch, upstream):
    same_gradients(
        torch, lambda lib, a, b: a**b, [0.0] * 4, [-1.0, 0.0, 0.5, 2.0], upstream=upstream
    )


@pytest.mark.parametrize(
    "low, high",
    [
        ([2.0] * 4, [1.0] * 4),  # min > max: the result is max, and max gets the gradient
        ([1.0] * 4, [1.0] * 4),
        ([NAN, 1.0, 0.0, 1.0], [1.0, NAN, 0.0, 0.0]),
        ([0.0, 3.0, 1.0, 2.0], [1.0, 1.0, 1.0, 3.0]),
    ],
)
def test_clamp_with_tensor_bounds_sends_the_gradient_where_pytorch_does(torch, low, high):
    x = [0.0, 1.0, 1.5, 3.0]
    same_gradients(torch, lambda lib, x, lo, hi: x.clamp(lo, hi), x, low, high)
    same_gradients(torch, lambda lib, x, lo: x.clamp(min=lo), x, low)
    same_gradients(torch, lambda lib, x, hi: x.clamp(max=hi), x, high)
    same_gradients(torch, lambda lib, x: x.clamp(2.0, 1.0), x)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_at_0_and_1_matches_pytorch(torch, reduction, weighted):
    """The target's gradient, -logit(input), is ±inf at 0 and 1 (the loss's logs are clamped at
    -100, its gradients are not)."""

    def bce(lib, p, t):
        weight = lib.tensor([2.0, 2.0, 2.0, 0.0, 0.5, 1.0]) if weighted else None
        return lib.nn.functional.binary_cross_entropy(p, t, weight, reduction=reduction)

    same_gradients(torch, bce, [0.0, 1.0, 0.5, 0.0, 1.0, 1e-45], [0.5, 0.5, 0.5, 0.0, 1.0, 1.0])

    def with_logits(lib, x, t):
        weight = lib.tensor([2.0, 2.0, 2.0, 0.0, 0.5, 1.0]) if weighted else None
        f = lib.nn.functional.binary_cross_entropy_with_logits
        return f(x, t, weight, reduction=reduction)

    # close: float32 exp/log1p round their last bit by the CPU's SIMD code, in PyTorch and numpy
    same_gradients(
        torch,
        with_logits,
        [0.0, 1.0, -INF, INF, 100.0, -200.0],
        [0.0, 1.0, 0.5, 0.5, 0.0, 0.5],
        close=True,
    )


SECOND_ORDER = {
    "relu": lambda lib, x: x.relu(),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x),
    "abs": lambda lib, x: x.abs(),
    "nll_loss": lambda lib, x: lib.nn.functional.nll_loss(x.reshape(1, 3), lib.tensor([0])),
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(
        x.reshape(1, 3), lib.tensor([0])
    ),
    "nll_loss_ignored": lambda lib, x: lib.nn.functional.nll_loss(
        x.reshape(3, 1), lib.tensor([0, -100, 0]), reduction="none"
    ),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(1, 1, 1, 3), (1, 2), 1),
}


def second_derivative(lib, make):
    x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    (g,) = lib.autograd.grad(make(lib, x).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return gg + 0  # + 0: PyTorch may give a lazy zero tensor, which has no values to read


@pytest.mark.parametrize("op", SECOND_ORDER)
def test_second_derivatives_of_piecewise_linear_ops_are_zeros_not_none(torch, op):
    ours, theirs = (
        second_derivative(ag, SECOND_ORDER[op]),
        second_derivative(torch, SECOND_ORDER[op]),
    )
    identical(ours, theirs, close=op == "cross_entropy")  # its zeros are rounding noise


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: x.clamp(-1.0, 1.0),
        lambda lib, x: x.max(),
        lambda lib, x: lib.maximum(x, lib.zeros(3)),
        lambda lib, x: x.sign(),
        lambda lib, x: x**0,
    ],
)
def test_a_second_derivative_pytorch_refuses_is_refused(lib, make):
    """Their gradients do not depend on x at all (no graph back to it): grad() of one raises."""
    with pytest.raises(RuntimeError, match="does not require grad"):
        second_derivative(lib, make)


def test_grad_with_no_inputs_is_refused_as_in_pytorch(torch):
    """grad(loss, []) has nothing to return: PyTorch raises RuntimeError (the fuzzer's third
    largest kind in the wave-3 run, 87 programs), where ours returned an empty tuple."""
    for lib in (torch, ag):
        x = lib.ones(2, requires_grad=True)
        loss = (x * 2).sum()
        for inputs in ([], ()):
            with pytest.raises(
                RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty"
            ):
                lib.autograd.grad(loss, inputs, allow_unused=True)
