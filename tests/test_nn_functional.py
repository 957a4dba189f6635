"""autograd_lab.nn.functional beyond the op table: errors, warnings, reductions, ignore_index,
dropout, and float32 against PyTorch.

The op table (autograd_lab/ops/table.py, kind "nn") already checks every function's values,
gradients, second derivatives and grad_fn name on drawn inputs. Tests here take `lib` when the rule
is PyTorch's (they run on both libraries) and `torch` when PyTorch is the oracle for numbers.
"""

import math
import warnings

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab.ops.scalar import erf_of_array as erf


def F_of(lib):
    return lib.nn.functional


def leaves(lib, *arrays, dtype="float64"):
    return [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]


def assert_close(ours, theirs, rtol=1e-10, atol=1e-12):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=rtol, atol=atol)


def same_values_and_grads(torch, fn, arrays, dtype="float64", rtol=1e-10, atol=1e-12):
    """Run fn(lib, *leaves) on both libraries; compare value, grad_fn name and every gradient."""
    ours, theirs = leaves(ag, *arrays, dtype=dtype), leaves(torch, *arrays, dtype=dtype)
    out, expected = fn(ag, *ours), fn(torch, *theirs)
    assert_close(out, expected, rtol, atol)
    assert out.grad_fn.name() == expected.grad_fn.name()
    upstream = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(ag.tensor(upstream, dtype=getattr(ag, dtype)))
    expected.backward(torch.tensor(upstream, dtype=getattr(torch, dtype)))
    for x, t in zip(ours, theirs):
        assert_close(x.grad, t.grad, rtol, atol)


RNG = np.random.default_rng(0)
SCORES = RNG.standard_normal((3, 4))


def test_importing_the_functions_keeps_autograd_lab_nn_the_package():
    # `from .ops import *` in autograd_lab/__init__.py must not replace ag.nn by ops/nn.py
    assert ag.nn.functional is F
    assert hasattr(ag.nn, "init")


# ---- errors: PyTorch's exception class on both libraries, our message names the fix -----------------


def scores(lib, shape=(3, 4), requires_grad=False):
    return lib.tensor(np.zeros(shape), requires_grad=requires_grad)


ERRORS = {  # name: (action, exception class, words of our message)
    "reduction": (lambda lib: F_of(lib).mse_loss(scores(lib), scores(lib), reduction="avg"),
                  ValueError, "reduction='mean' (the default), 'sum' or 'none'"),
    "float_target": (lambda lib: F_of(lib).nll_loss(scores(lib), lib.tensor([0.0, 1.0, 2.0])),
                     RuntimeError, "target.long()"),
    "int32_target": (lambda lib: F_of(lib).nll_loss(scores(lib), lib.tensor([0, 1, 2]).int()),
                     RuntimeError, "expected target dtype to be Long or Byte"),
    "target_out_of_range": (lambda lib: F_of(lib).nll_loss(scores(lib), lib.tensor([0, 5, 1])),
                            IndexError, "Target 5 is out of bounds. Fix: class indices go from 0 to 3"),
    "negative_target": (lambda lib: F_of(lib).cross_entropy(scores(lib), lib.tensor([0, -1, 1])),
                        IndexError, "Target -1 is out of bounds"),
    "batch_mismatch": (lambda lib: F_of(lib).cross_entropy(scores(lib), lib.tensor([0, 1])),
                       ValueError, "Expected input batch_size (3) to match target batch_size (2)"),
    "multi_target": (lambda lib: F_of(lib).nll_loss(scores(lib), lib.tensor([[0, 1]] * 3)),
                     RuntimeError, "one class index per sample"),
    "target_size_3d": (lambda lib: F_of(lib).nll_loss(scores(lib, (2, 4, 3)), lib.tensor([[0, 1]] * 2)),
                       RuntimeError, "Expected target size [2, 3], got [2, 2]"),
    "scalar_input": (lambda lib: F_of(lib).nll_loss(scores(lib, ()), lib.tensor(0)),
                     ValueError, "Expected 1 or more dimensions (got 0)"),
    "one_sample_two_targets": (lambda lib: F_of(lib).nll_loss(scores(lib, (4,)), lib.tensor([0, 1])),
                               ValueError, "For 1D input, 1D target must have size 1"),
    "class_weight_size": (lambda lib: F_of(lib).cross_entropy(scores(lib), lib.tensor([0, 1, 2]),
                                                             weight=lib.ones(3, dtype=lib.float64)),
                          RuntimeError, "one weight per class, shape [4]"),
    "class_weight_grad": (lambda lib: F_of(lib).nll_loss(
                              scores(lib), lib.tensor([0, 1, 2]),
                              weight=lib.ones(4, dtype=lib.float64, requires_grad=True)),
                          RuntimeError, "weight.detach()"),
    "class_weight_dtype": (lambda lib: F_of(lib).nll_loss(scores(lib), lib.tensor([0, 1, 2]),
                                                         weight=lib.ones(4)),
                           RuntimeError, "weight.to(input.dtype)"),
    "bce_input_range": (lambda lib: F_of(lib).binary_cross_entropy(lib.tensor([0.5, 1.5]),
                                                                   lib.tensor([0.0, 1.0])),
                        RuntimeError, "all elements of input should be between 0 and 1"),
    "bce_target_range": (lambda lib: F_of(lib).binary_cross_entropy(lib.tensor([0.5, 0.5]),
                                                                    lib.tensor([0.0, 2.0])),
                         RuntimeError, "all elements of target should be between 0 and 1"),
    "bce_shape": (lambda lib: F_of(lib).binary_cross_entropy(lib.tensor([[0.5, 0.5]]),
                                                             lib.tensor([0.0, 1.0])),
                  ValueError, "target.view(input.shape)"),
    "bce_dtype": (lambda lib: F_of(lib).binary_cross_entropy(lib.tensor([0.5], dtype=lib.float64),
                                                             lib.tensor([1.0])),
                  RuntimeError, "target.to(input.dtype)"),
    "bce_weight_grad": (lambda lib: F_of(lib).binary_cross_entropy(
                            lib.tensor([0.5]), lib.tensor([1.0]),
                            weight=lib.tensor([2.0], requires_grad=True)),
                        RuntimeError, "weight.detach()"),
    "logits_shape": (lambda lib: F_of(lib).binary_cross_entropy_with_logits(
                         scores(lib), scores(lib, (3, 1))),
                     ValueError, "Target size"),
    "logits_pos_weight_grad": (lambda lib: F_of(lib).binary_cross_entropy_with_logits(
                                   scores(lib), scores(lib),
                                   pos_weight=lib.ones(4, dtype=lib.float64, requires_grad=True)),
                               RuntimeError, "pos_weight.detach()"),
    "mse_shapes": (lambda lib: F_of(lib).mse_loss(scores(lib), scores(lib, (2, 4))),
                   RuntimeError, "cannot be broadcast"),
    "mse_weight_shape": (lambda lib: F_of(lib).mse_loss(scores(lib), scores(lib),
                                                        weight=scores(lib, (4,))),
                         ValueError, "one weight per element"),
    "label_smoothing": (lambda lib: F_of(lib).cross_entropy(scores(lib), lib.tensor([0, 1, 2]),
                                                            label_smoothing=1.5),
                        RuntimeError, "label_smoothing must be between 0.0 and 1.0"),
    "probabilities_ignore_index": (lambda lib: F_of(lib).cross_entropy(scores(lib), scores(lib),
                                                                       ignore_index=1),
                                   RuntimeError, "ignore_index is not supported"),
    "dropout_p": (lambda lib: F_of(lib).dropout(scores(lib), p=1.5),
                  ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
    "dropout_int": (lambda lib: F_of(lib).dropout(lib.tensor([1, 2]), p=0.5),
                    RuntimeError, "input.float()"),
    "gelu_approximate": (lambda lib: F_of(lib).gelu(scores(lib), approximate="fast"),
                         RuntimeError, "approximate='tanh'"),
    "gelu_positional_approximate": (lambda lib: F_of(lib).gelu(scores(lib), "tanh"), TypeError, ""),
    "linear_features": (lambda lib: F_of(lib).linear(scores(lib), scores(lib, (5, 3))),
                        RuntimeError, "input has 4 features in its last dim but weight has shape"),
    "linear_features_3d": (lambda lib: F_of(lib).linear(scores(lib, (2, 3, 4)), scores(lib, (5, 3))),
                           RuntimeError, "expects 3"),
    "linear_dtype": (lambda lib: F_of(lib).linear(scores(lib), lib.ones(5, 4)),
                     RuntimeError, "input.to(weight.dtype)"),
    "linear_bias_dtype": (lambda lib: F_of(lib).linear(scores(lib), scores(lib, (5, 4)), lib.ones(5)),
                          RuntimeError, "bias.to(weight.dtype)"),
    "linear_bias_shape": (lambda lib: F_of(lib).linear(scores(lib), scores(lib, (5, 4)),
                                                       scores(lib, (4,))),
                          RuntimeError, "a bias of shape [out_features] = [5]"),
    "linear_scalar": (lambda lib: F_of(lib).linear(scores(lib, ()), scores(lib, (5, 4))),
                      RuntimeError, "both arguments to linear need to be at least 1D"),
    "linear_not_a_tensor": (lambda lib: F_of(lib).linear([[1.0]], scores(lib, (5, 1))),
                            TypeError, "must be Tensor, not list"),
    "relu_inplace_leaf": (lambda lib: F_of(lib).relu(scores(lib, requires_grad=True), inplace=True),
                          RuntimeError, "no_grad"),
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS)
def test_bad_arguments_raise_pytorchs_exception_class(lib, case):
    action, error, _ = ERRORS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mse_shapes warns about broadcasting before it fails
        with pytest.raises(error):
            action(lib)


@pytest.mark.parametrize("case", ERRORS)
def test_error_messages_say_what_to_do(case):
    action, error, words = ERRORS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            action(ag)
    assert words in str(info.value)


# ---- warnings ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((4,), 0), ((3, 4), 1), ((2, 3, 4), 0), ((2, 2, 1, 3), 1)])
def test_softmax_without_dim_warns_and_picks_pytorchs_dim(lib, name, shape, dim):
    x = lib.tensor(np.random.default_rng(2).standard_normal(shape))
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name}") as record:
        implicit = getattr(F_of(lib), name)(x)
    assert record[0].filename == __file__  # the warning points at the caller's line
    np.testing.assert_array_equal(to_numpy(implicit), to_numpy(getattr(F_of(lib), name)(x, dim)))


def test_mse_loss_warns_when_shapes_broadcast_and_matches_pytorch(torch):
    def loss(lib, x, t):
        with pytest.warns(UserWarning, match="different to the input size") as record:
            out = F_of(lib).mse_loss(x, t)
        assert lib is torch or record[0].filename == __file__
        return out

    same_values_and_grads(torch, loss, [SCORES, SCORES[:, :1]])  # target broadcast
    same_values_and_grads(torch, loss, [SCORES[:1], SCORES])  # input broadcast: ExpandBackward0


@pytest.mark.parametrize("size_average, reduce, reduction", [
    (False, None, "sum"), (None, False, "none"), (True, True, "mean"), (False, True, "sum"),
])  # fmt: skip
def test_legacy_size_average_and_reduce_map_to_reduction(lib, size_average, reduce, reduction):
    x, t = lib.tensor(SCORES), lib.tensor(SCORES[::-1].copy())
    with pytest.warns(UserWarning, match=f"reduction='{reduction}'"):
        legacy = F_of(lib).mse_loss(x, t, size_average=size_average, reduce=reduce)
    np.testing.assert_array_equal(
        to_numpy(legacy), to_numpy(F_of(lib).mse_loss(x, t, reduction=reduction))
    )


# ---- reductions and ignore_index, against PyTorch -------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mean_is_the_weighted_average_and_sum_the_sum_of_none(lib, reduction):
    x, t = lib.tensor(SCORES), lib.tensor([3, 0, 1])
    w = lib.tensor([1.0, 2.0, 0.5, 4.0], dtype=lib.float64)
    each = F_of(lib).cross_entropy(x, t, weight=w, reduction="none")
    out = F_of(lib).cross_entropy(x, t, weight=w, reduction=reduction)
    expected = {"none": each, "sum": each.sum(), "mean": each.sum() / w[t].sum()}[reduction]
    np.testing.assert_allclose(to_numpy(out), to_numpy(expected), rtol=1e-12)


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_ignore_index_leaves_samples_out_like_pytorch(torch, loss, reduction, ignore_index):
    target = [2, -100, 0, 2, 1]

    def fn(lib, x):
        w = lib.tensor([0.5, 1.0, 3.0, 2.0], dtype=lib.float64)
        return getattr(F_of(lib), loss)(x, lib.tensor(target), w, ignore_index=ignore_index,
                                        reduction=reduction)  # fmt: skip

    if ignore_index == 2:
        target[1] = 3  # -100 is a class index like any other when ignore_index is not -100
    same_values_and_grads(torch, fn, [RNG.standard_normal((5, 4))])


@pytest.mark.parametrize("label_smoothing", [0.1, 0.9])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_label_smoothing_with_ignored_targets_and_weights_like_pytorch(
    torch, label_smoothing, reduction
):
    def fn(lib, x):
        w = lib.tensor([0.5, 1.0, 3.0], dtype=lib.float64)
        return F_of(lib).cross_entropy(x, lib.tensor([[2, 1], [-100, 0]]), w,
                                       reduction=reduction, label_smoothing=label_smoothing)  # fmt: skip

    same_values_and_grads(torch, fn, [RNG.standard_normal((2, 3, 2))])


def test_negative_label_smoothing_is_ignored_as_in_pytorch(lib):
    x, t = lib.tensor(SCORES), lib.tensor([0, 1, 2])
    smoothed = F_of(lib).cross_entropy(x, t, label_smoothing=-0.5)
    assert to_numpy(smoothed) == to_numpy(F_of(lib).cross_entropy(x, t))


def test_mean_over_nothing_is_nan_and_its_gradient_zero(lib):
    x = lib.tensor(SCORES, requires_grad=True)
    every_target_ignored = lib.tensor([-100, -100, -100])
    loss = F_of(lib).nll_loss(x, every_target_ignored)
    assert math.isnan(loss.item())
    loss.backward()
    assert not to_numpy(x.grad).any()
    assert F_of(lib).nll_loss(x, every_target_ignored, reduction="sum").item() == 0
    empty = lib.tensor(np.zeros((0, 4)))
    assert math.isnan(F_of(lib).cross_entropy(empty, lib.tensor([], dtype=lib.int64)).item())
    assert math.isnan(F_of(lib).mse_loss(empty, empty).item())


def test_byte_targets_are_class_indices_too(lib):
    x = lib.tensor(SCORES)
    as_long = F_of(lib).nll_loss(x, lib.tensor([3, 0, 1]))
    assert F_of(lib).nll_loss(x, lib.tensor([3, 0, 1], dtype=lib.uint8)).item() == as_long.item()


def test_one_sample_takes_a_scalar_or_one_element_target(lib):
    x = lib.tensor(SCORES[0])
    assert F_of(lib).cross_entropy(x, lib.tensor([2]), reduction="none").shape == ()
    assert F_of(lib).nll_loss(x, lib.tensor(2)).item() == -SCORES[0, 2]


# ---- edge values -------------------------------------------------------------------------------


def test_binary_cross_entropy_clamps_its_logs_like_pytorch(torch):
    def fn(lib, p):
        return F_of(lib).binary_cross_entropy(p, lib.tensor([1.0, 0.0, 1.0, 0.0], dtype=lib.float64),
                                              reduction="none")  # fmt: skip

    same_values_and_grads(torch, fn, [[0.0, 1.0, 1.0, 0.0]])  # loss 100, gradients ±1e12


def test_binary_cross_entropy_with_logits_is_finite_for_huge_scores(torch):
    def fn(lib, x, t):
        return F_of(lib).binary_cross_entropy_with_logits(x, t, reduction="none",
                                                          pos_weight=lib.tensor([2.0] * 4, dtype=lib.float64))  # fmt: skip

    same_values_and_grads(torch, fn, [[-1000.0, 1000.0, 0.0, -30.0], [1.0, 0.0, 0.5, 0.25]])


def test_gelu_tails_and_exact_points_match_pytorch(torch):
    points = [-40.0, -10.0, -5.5, -0.3, 0.0, 0.46875, 2.0, 4.0, 40.0]
    for approximate in ("none", "tanh"):
        same_values_and_grads(
            torch, lambda lib, x: F_of(lib).gelu(x, approximate=approximate), [points]
        )


def test_erf_is_accurate_to_float64_rounding():
    x = np.concatenate([np.linspace(-7, 7, 4001), [0.46875, 4.0, 1e-300, -1e-8, 30.0, -np.inf]])
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), expected, rtol=0, atol=4.5e-16)
    assert math.isnan(erf(np.array([np.nan]))[0])
    assert erf(np.linspace(-3, 3, 7, dtype=np.float32)).dtype == np.float32


# ---- linear ----------------------------------------------------------------------------------------


def test_linear_is_one_node_over_bias_input_and_weight():
    x, w, b = leaves(ag, SCORES, SCORES[:2], SCORES[0, :2])
    node = F.linear(x, w, b).grad_fn
    # PyTorch puts a TBackward0 between the node and the weight; we use the weight directly
    assert [edge.name() for edge, _ in node.next_functions] == ["AccumulateGrad"] * 3
    assert all(edge.variable is t for (edge, _), t in zip(node.next_functions, [b, x, w]))


def test_linear_gradients_when_only_the_parameters_require_grad(torch):
    def fn(lib, w, b):
        return F_of(lib).linear(lib.tensor(SCORES), w, b)  # a batch of data: no gradient

    same_values_and_grads(torch, fn, [RNG.standard_normal((5, 4)), RNG.standard_normal(5)])


@pytest.mark.parametrize("case", ["transposed", "vector_weight", "bias_of_ones", "scalar_bias"])
def test_linear_other_layouts_match_pytorch(torch, case):
    x = RNG.standard_normal((3, 2, 4))
    if case == "transposed":  # not contiguous: PyTorch multiplies, then adds the bias
        fn = lambda lib, x, w, b: F_of(lib).linear(x.transpose(0, 1), w, b)  # noqa: E731
        arrays = [x, RNG.standard_normal((5, 4)), RNG.standard_normal(5)]
    elif case == "vector_weight":
        fn = lambda lib, x, w: F_of(lib).linear(x, w)  # noqa: E731
        arrays = [x[0], RNG.standard_normal(4)]  # PyTorch records MvBackward0
    else:
        fn = lambda lib, x, w, b: F_of(lib).linear(x, w, b)  # noqa: E731
        bias = RNG.standard_normal((1, 5) if case == "bias_of_ones" else ())
        arrays = [x, RNG.standard_normal((5, 4)), bias]
    same_values_and_grads(torch, fn, arrays)


# ---- dropout ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [dict(p=0.0), dict(training=False), dict(p=0.5, training=False)])
def test_dropout_that_drops_nothing_returns_the_input_itself(lib, kwargs):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    assert F_of(lib).dropout(x, **kwargs) is x


def test_dropout_zeroes_about_p_and_scales_the_rest():
    x = ag.ones(20000, requires_grad=True)
    y = F.dropout(x, p=0.3)
    values = y.detach().numpy()
    assert 0.28 < (values == 0).mean() < 0.32  # seeded (conftest), so this cannot flake
    np.testing.assert_allclose(values[values != 0], 1 / 0.7, rtol=1e-6)
    assert y.grad_fn.name() == "MulBackward0"  # as PyTorch records it on the CPU
    y.backward(ag.ones(20000))
    np.testing.assert_array_equal(x.grad.numpy(), values)  # grad = mask / (1 - p)


def test_dropout_is_reproducible_with_manual_seed():
    x = ag.ones(3, 4)
    ag.manual_seed(7)
    first = F.dropout(x).numpy()
    ag.manual_seed(7)
    np.testing.assert_array_equal(F.dropout(x).numpy(), first)
    assert not np.array_equal(F.dropout(x).numpy(), first)  # the generator moved on


def test_dropout_p_one_zeroes_everything(lib):
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = F_of(lib).dropout(x, p=1.0)
    y.sum().backward()
    assert not to_numpy(y).any() and not to_numpy(x.grad).any()


def test_dropout_in_place_and_keeps_float32(lib):
    x = lib.ones(4, 5, requires_grad=True)
    y = x * 1
    out = F_of(lib).dropout(y, p=0.5, inplace=True)
    assert out is y and y.grad_fn.name() == "MulBackward0"
    assert set(np.unique(to_numpy(y))) <= {0.0, 2.0} and y.dtype == lib.float32


# ---- float32 against PyTorch -----------------------------------------------------------------------

F32 = dict(dtype="float32", rtol=1e-5, atol=1e-6)


def test_a_float32_mlp_step_matches_pytorch(torch):
    def mlp(lib, x, w1, b1, w2, b2):
        hidden = F_of(lib).gelu(F_of(lib).linear(x, w1, b1))
        hidden = F_of(lib).relu(F_of(lib).linear(hidden, w2, b2))
        return F_of(lib).cross_entropy(hidden, lib.tensor([0, 2, 1, 2]), label_smoothing=0.1)

    shapes = [(4, 3), (6, 3), (6,), (3, 6), (3,)]
    same_values_and_grads(torch, mlp, [RNG.standard_normal(s) for s in shapes], **F32)


@pytest.mark.parametrize("loss", ["mse_loss", "binary_cross_entropy", "bce_with_logits"])
def test_float32_losses_match_pytorch(torch, loss):
    def fn(lib, x, t):
        if loss == "mse_loss":
            return F_of(lib).mse_loss(x, t, reduction="sum")
        if loss == "binary_cross_entropy":
            return F_of(lib).binary_cross_entropy(x.sigmoid(), t.sigmoid())
        return F_of(lib).binary_cross_entropy_with_logits(
            x, t.sigmoid(), pos_weight=lib.ones(4) * 2
        )

    same_values_and_grads(torch, fn, [RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))],
                          **F32)  # fmt: skip


def test_mixed_float_dtypes_promote_like_pytorch(lib):
    x = lib.tensor(SCORES, dtype=lib.float32)
    assert F_of(lib).mse_loss(x, lib.tensor(SCORES)).dtype == lib.float64
    probabilities = lib.tensor(np.full((3, 4), 0.25))
    assert F_of(lib).cross_entropy(x, probabilities).dtype == lib.float64
