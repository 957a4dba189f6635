"""Silent wrong values and gradients issue 14's differential fuzzing found: each test compares
with PyTorch (values, NaN/inf and -0, gradients, dtypes) exactly where PyTorch's are exact."""

import numpy as np
import pytest
from conftest import both, values

import autograd_lab as ag

nan, inf = float("nan"), float("inf")


@pytest.mark.parametrize("op", ["arctan_", "sinh_", "tan_", "fix_", "log_", "abs_", "neg_"])
def test_an_in_place_op_through_an_as_strided_view_changes_the_viewed_element(torch, op):
    def change(lib):
        x = lib.tensor([0.0, 1.5, -2.0, 0.25], requires_grad=True)
        base = x.clone()
        view = lib.as_strided(base, (2,), (2,), 1)  # elements 1 and 3 of the storage
        getattr(view, op)()
        return base.detach()

    # sin, tan, log, ... round differently from PyTorch's in the last bit: compare to 1e-6
    np.testing.assert_allclose(values(change(ag)), values(change(torch)), rtol=1e-6)


def test_adding_an_as_strided_view_to_itself_in_place_doubles_it(torch):
    def double(lib):
        view = lib.tensor([0.0, 1.0], requires_grad=True).clone().as_strided((), (), 1)
        view += view
        return view.detach()

    both(torch, double)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_repeat_interleave_once_is_a_copy_not_a_view(torch, dim):
    def repeat_then_change_the_input(lib):
        x = lib.tensor([[1.0, 2.0]])
        repeated = x.repeat_interleave(1, dim=dim)
        x.add_(10)
        return repeated

    both(torch, repeat_then_change_the_input)
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    assert x.repeat_interleave(1).grad_fn.next_functions[0][0].name() == "CloneBackward0"


@pytest.mark.parametrize("eps", [None, 0.0, 0.3])
def test_logit_has_pytorchs_gradient_at_zero_one_and_outside(torch, eps):
    def gradient(lib):
        # (a nan p: test_edges_gradient_values.py, on a short tensor, as PyTorch's vectorized
        # loop for long ones gives 0 there with eps, its element-by-element loop nan)
        p = lib.tensor([0.0, 0.25, 0.3, 1.0, 1.5, -0.5, 0.9], dtype=lib.float64)
        p.requires_grad_()
        logits = lib.logit(p, eps)
        weights = lib.tensor([1.0, -1.0, 0.0, 2.0, 1.0, 1.0, -1.0], dtype=lib.float64)
        (logits * weights).sum().backward()
        assert logits.grad_fn.name() == "LogitBackward0" and logits.grad_fn._saved_eps == eps
        return p.grad

    np.testing.assert_allclose(values(gradient(ag)), values(gradient(torch)), rtol=1e-15)

    def logits(lib):
        return lib.logit(lib.tensor([0.0, 0.2, 1.0, 2.0, -1.0]), eps)

    # float32 logs round differently from PyTorch's in the last bit: compare to 1e-6
    np.testing.assert_allclose(values(logits(ag)), values(logits(torch)), rtol=1e-6)

    def first_derivative(lib):  # create_graph=True: +inf at 0, not the composed form's nan
        p = lib.tensor([0.0, 0.5, 1.0], dtype=lib.float64, requires_grad=True)
        (slope,) = lib.autograd.grad(lib.logit(p, eps).sum(), p, create_graph=True)
        assert slope.requires_grad
        return slope

    both(torch, first_derivative)


def test_logit_of_integers_is_float(torch):
    both(torch, lambda lib: lib.logit(lib.tensor([0, 1, 2])))
    both(torch, lambda lib: lib.tensor([True, False]).logit(eps=0.25))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_power_of_minus_one_half_is_one_over_the_square_root(torch, dtype):
    # PyTorch computes x ** -0.5 as rsqrt(x): -inf at -0.0, nan at -inf, rsqrt's rounding
    def power(lib):
        x = lib.tensor([-0.0, 0.0, -2.0, 3.0, inf, -inf, 0.3], dtype=getattr(lib, dtype))
        return lib.pow(x, -0.5)

    both(torch, power)


def signs(tensor):  # 0.0 and -0.0 compare equal: tell them apart by the sign bit
    return np.signbit(values(tensor))


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_and_minimum_keep_the_first_inputs_zero_at_a_tie(torch, op):
    def pick(lib):
        a = lib.tensor([0.0, -0.0, 0.0, -0.0, nan, 1.0])
        b = lib.tensor([-0.0, 0.0, 0.0, -0.0, 1.0, nan])
        return getattr(lib, op)(a, b)

    both(torch, pick)
    np.testing.assert_array_equal(signs(pick(ag)), signs(pick(torch)))
    # the fuzzer's case: the reciprocal of maximum(0, -0.0) is +inf
    both(torch, lambda lib: lib.maximum(lib.tensor(0), lib.tensor([-0.0])).reciprocal())


def test_clamp_keeps_the_inputs_zero_where_it_equals_a_bound(torch):
    for bounds in [{"min": 0.0}, {"max": -0.0}, {"min": -0.0, "max": 0.0}]:
        clamped = {
            lib: lib.tensor([-0.0, 0.0, 1.0, -1.0, nan]).clamp(**bounds) for lib in (ag, torch)
        }
        both(torch, lambda lib, clamped=clamped: clamped[lib])
        np.testing.assert_array_equal(signs(clamped[ag]), signs(clamped[torch]))
    # a nan bound still makes every element nan
    both(torch, lambda lib: lib.tensor([0.0, 1.0]).clamp(min=nan, max=0.0))


def test_an_empty_view_shares_its_bases_version_counter(torch):
    # pow saved its result; changing an empty view of it in place must still be noticed
    for lib in (ag, torch):
        exponent = lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        result = lib.pow(lib.tensor(2.0, dtype=lib.float64), exponent)
        empty = result[-1, :0]
        assert empty._base is result
        empty.t_()
        assert result._version == 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            empty.sum().backward()


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: lib.cumprod(x, -1),
        lambda lib, x: lib.cumsum(x, 0),
        lambda lib, x: lib.logcumsumexp(x, 0),
        lambda lib, x: lib.cat((x, x)),
        lambda lib, x: lib.stack((x, x), dim=1),
        lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
    ],
    ids=["cumprod", "cumsum", "logcumsumexp", "cat", "stack", "batch_norm"],
)
def test_a_random_fill_of_a_scan_join_or_norm_of_a_transposed_tensor_draws_pytorchs_values(
    torch, make
):
    # PyTorch makes these results row-major whatever the input's layout, and uniform_ fills
    # memory in order: a result laid out like its transposed input got the numbers transposed
    def fill(lib):
        lib.manual_seed(0)
        result = make(lib, lib.zeros(6, dtype=lib.float64).reshape(2, 3).t())
        assert result.is_contiguous()
        return result.uniform_()

    both(torch, fill)


def test_cat_and_batch_norm_of_channels_last_image_batches_stay_channels_last(torch):
    def join(lib):
        images = lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        normalized = lib.nn.functional.batch_norm(images, lib.zeros(3), lib.ones(3))
        return (
            lib.cat((images, images)).stride(),
            lib.stack((images, images)).stride(),
            normalized.stride(),
        )

    assert join(ag) == join(torch)


def test_max_pool_of_a_window_with_several_nans_picks_the_last_nan(torch):
    def picked(lib):
        windows = [[1.0, nan, 2.0, nan], [inf, nan, nan, 1.0], [nan, 1.0, nan, 2.0], [1, 3, 3, 2]]
        x = lib.tensor(windows).reshape(4, 1, 2, 2).requires_grad_()
        pooled, indices = lib.nn.functional.max_pool2d(x, 2, return_indices=True)
        pooled.sum().backward()
        return indices, x.grad

    (our_indices, our_grad), (their_indices, their_grad) = picked(ag), picked(torch)
    both(torch, lambda lib: our_indices if lib is ag else their_indices)
    both(torch, lambda lib: our_grad if lib is ag else their_grad)


@pytest.mark.parametrize("changed", ["end", "weight"])
def test_lerp_saves_only_what_the_needed_gradients_read(torch, changed):
    # with only input requiring grad, lerp's backward reads weight, not end: changing end in
    # place afterwards is no error (PyTorch), changing weight is
    def backward_after_a_change(lib):
        input = lib.zeros(2, requires_grad=True)
        tensors = {"end": lib.ones(2), "weight": lib.full((2,), 0.25)}
        result = lib.lerp(input, tensors["end"], tensors["weight"])
        tensors[changed].add_(1)
        try:
            result.sum().backward()
        except RuntimeError as error:
            assert "modified by an inplace operation" in str(error)
            return None
        return input.grad

    ours, theirs = backward_after_a_change(ag), backward_after_a_change(torch)
    assert (ours is None) == (theirs is None) == (changed == "weight")
    if theirs is not None:
        np.testing.assert_array_equal(values(ours), values(theirs))
