"""Edge cases of nn functions and reductions that issue 14's differential fuzzer found: each
compares with PyTorch (values, dtypes, error classes and key words)."""

import numpy as np
import pytest
from conftest import both, values
from fuzzing import check
from fuzzing.compare import Divergence, compare
from fuzzing.program import Leaf, Program, Step, statements
from fuzzing.runner import Seen
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_mean_takes_a_running_mean_that_does_not_overflow(torch, dtype):
    big = float(np.finfo(dtype).max)

    def var_mean(lib):
        x = lib.tensor([[big, 0.0, 0.0, big]], dtype=getattr(lib, dtype))
        return lib.var_mean(x, dim=(-1, 0), correction=2)

    ours, theirs = var_mean(ag), var_mean(torch)
    assert np.isinf(values(ours[0])) and np.isinf(values(theirs[0]))
    np.testing.assert_allclose(values(ours[1]), values(theirs[1]), rtol=1e-6)
    assert np.isfinite(values(ours[1])) and ours[1].dtype == getattr(ag, dtype)


def test_median_of_an_empty_bool_tensor_is_true_and_the_dim_is_checked_first(torch):
    both(torch, lambda lib: lib.tensor([], dtype=lib.bool).median())
    for lib in (ag, torch):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            lib.tensor([True, False]).median()
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            lib.zeros(2, 0, dtype=lib.bool).median(0)
        with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
            lib.zeros(0, 2, dtype=lib.bool).median(0)


def test_cross_entropy_takes_a_target_of_the_inputs_shape_as_probabilities(torch):
    for lib in (ag, torch):
        scores, target = lib.zeros(2, 3, dtype=lib.int64), lib.tensor([[0, 1, 1], [0, 0, 0]])
        with pytest.raises(RuntimeError, match="Expected floating point type for target"):
            lib.nn.functional.cross_entropy(scores, target, ignore_index=0, reduction="none")
        with pytest.raises(RuntimeError, match="Expected floating point type for target"):
            lib.nn.functional.cross_entropy(scores.float(), target)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_cross_entropy_with_label_smoothing_over_no_classes_is_pytorchs_not_a_python_error(
    torch, reduction
):
    def probabilities(lib):
        x = lib.zeros(1, 0, 1, requires_grad=True)
        return lib.nn.functional.cross_entropy(
            x, lib.zeros(1, 0, 1), label_smoothing=0.1, reduction=reduction
        )

    def class_indices(lib):
        x = lib.zeros(0, 0, requires_grad=True)
        target = lib.zeros(0, dtype=lib.int64)
        return lib.nn.functional.cross_entropy(x, target, label_smoothing=0.1, reduction=reduction)

    for make in (probabilities, class_indices):
        both(torch, make)
        assert type(make(ag).grad_fn).__name__ == type(make(torch).grad_fn).__name__


@pytest.mark.parametrize("shape", [(4, 0, 1), (4, 0, 2, 1, 1)])
def test_nll_loss_of_an_input_with_no_classes_refuses_targets(torch, shape):
    for lib in (ag, torch):
        x, target = lib.zeros(shape), lib.zeros((4,) + shape[2:], dtype=lib.int64)
        with pytest.raises(RuntimeError, match="size mismatch"):
            lib.nn.functional.nll_loss(x, target, ignore_index=0)
    both(torch, lambda lib: lib.nn.functional.nll_loss(lib.zeros(4, 0, 0), lib.zeros(4, 0).long()))


@pytest.mark.parametrize("dtype", ["int64", "bool", "uint8"])
def test_dropout_with_p_1_zeroes_any_dtype_and_hands_back_an_empty_input(torch, dtype):
    both(torch, lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=getattr(lib, dtype)), 1.0))
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="can't be cast"):
            lib.nn.functional.dropout(lib.ones(3, dtype=getattr(lib, dtype)), 0.5)
        empty = lib.zeros(0, requires_grad=True)
        assert lib.nn.functional.dropout(empty, 1.0) is empty


@pytest.mark.parametrize("conv", ["conv1d", "conv2d"])
def test_conv_of_a_bool_tensor_is_not_implemented_unless_it_is_empty(torch, conv):
    def run(lib, batch):
        x, w = lib.ones(batch, 3, 4, dtype=lib.bool), lib.ones(2, 3, 2, dtype=lib.bool)
        if conv == "conv2d":
            x, w = x.unsqueeze(2), w.unsqueeze(2)
        return getattr(lib.nn.functional, conv)(x, w, padding=1)

    for lib in (ag, torch):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            run(lib, 1)
    both(torch, lambda lib: run(lib, 0))


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8"])
def test_layer_norm_of_an_integer_or_bool_tensor_is_not_implemented(torch, dtype):
    for lib in (ag, torch):
        for shape in ((3, 1, 1), (0, 4)):
            x = lib.zeros(shape, dtype=getattr(lib, dtype))
            with pytest.raises(NotImplementedError, match="not implemented for"):
                lib.nn.functional.layer_norm(x, shape[1:])


@pytest.mark.parametrize(
    "source", ["torch.topk({0}, 3, sorted=True)", "torch.kthvalue({0}, 2, -1)[1]"]
)
def test_the_fuzzer_accepts_topk_and_kthvalue_ties_only_in_the_indices(torch, source):
    # among four zeros PyTorch's selection picks indices in an order of its own
    program = Program(
        (Leaf("x0", (4,), "float32", (0.0, 0.0, 0.0, 0.0), False),),
        (Step("v0", "topk" if "topk" in source else "kthvalue", source, ("x0",)),),
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == ["values"]
    values_differ = Divergence("v0 = torch.topk(x0, 3)  [v0][0]", "topk", "values", "a", "b")
    assert accepted_by(values_differ) is None


def test_the_fuzzer_compares_a_float64_result_of_a_rounded_float32_value_at_float32s_tolerance():
    # exp(True) in float32 is a last bit apart from PyTorch's; softmax(..., dtype=float64),
    # mse_loss against a float64 target, cumsum(dtype=float64), ... carry that bit into float64
    def tensor(dtype, value):
        return Seen("tensor", dtype, (), np.array(value, dtype=dtype))

    lines = statements(
        Program((), (Step("v0", "exp", "{0}", ("x",)), Step("v1", "cumsum", "{0}", ("v0",))))
    )[1:]
    mine, other = np.float32(1), np.float32(1) + 2 * np.finfo(np.float32).eps  # 2 last bits
    ours = {(0, "v0"): tensor("float32", mine), (1, "v1"): tensor("float64", float(mine))}
    theirs = {(0, "v0"): tensor("float32", other), (1, "v1"): tensor("float64", float(other))}
    assert compare(ours, theirs, lines) == []
    del ours[(0, "v0")], theirs[(0, "v0")]  # without the rounded float32 value: float64's tolerance
    assert [d.what for d in compare(ours, theirs, lines)] == ["values"]


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_a_constant_channel_has_pytorchs_rounding_noise(torch, training):
    # PyTorch computes x·scale + shift with shift = -mean·scale rounded: about 1e-5, not 0
    def normalized(lib):
        x = lib.tensor([[0.0, -0.86466473], [0.0, -0.86466473]])
        stats = lib.tensor([1.75, -1.74]), lib.tensor([0.86, 0.14])
        return lib.nn.functional.batch_norm(x, *stats, training=training)

    ours, theirs = values(normalized(ag)), values(normalized(torch))
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)
    assert ours.dtype == theirs.dtype


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_an_expanded_or_transposed_input_takes_the_plain_formula(torch, training):
    # PyTorch's fast kernel needs a densely laid out input; its other path gives a constant
    # channel exactly 0
    def normalized(lib, layout):
        x = lib.tensor([[0.92]]).expand(4, 1)
        if layout == "transposed":
            x = lib.tensor([[0.92, 0.92], [1.0, 2.0]]).t()
        stats = lib.full((x.shape[1],), 0.15), lib.full((x.shape[1],), 1.4)
        return lib.nn.functional.batch_norm(x, *stats, training=training)

    for layout in ("expanded", "transposed"):
        both(torch, lambda lib: normalized(lib, layout))


def test_binary_cross_entropy_with_logits_checks_the_target_size_before_the_dtype(torch):
    for lib in (ag, torch):
        loss = lib.nn.functional.binary_cross_entropy_with_logits
        with pytest.raises(ValueError, match="must be the same as input size"):
            loss(lib.tensor(1), lib.zeros(3, 2))
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            loss(lib.tensor([1, 2]), lib.zeros(2))
