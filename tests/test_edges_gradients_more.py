"""Gradient values, first and second order, as PyTorch 2.13 computes them: the differential
fuzzer's wave-6 findings of issue 14 (grad: values, requires_grad, NaN/inf). Each test runs the
same lines in both libraries and compares."""

import warnings

import pytest
from conftest import both, values
from fuzzing.compare import Divergence
from fuzzing.simplifications import accepted_by
from test_edges_second_order import agree

import autograd_lab as ag

COLUMNS = [1.37, 1.0, 1.0, -2.57, 1.17, -1.15, 1.43, -0.71, 0.0]


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_var_and_std_of_float32_are_summed_in_float64_and_rounded_once(torch, name):
    # PyTorch's kernel keeps its running sums in double; numpy's float32 sums put the std and
    # the mean of the middle column a last bit off
    both(torch, lambda lib: getattr(lib, name)(lib.tensor(COLUMNS).reshape(3, 3), dim=0))


def test_the_second_order_rounding_of_std_mean_is_pytorch_s(torch):
    # (g * g).sum() of std's gradient is a constant, so the exact second-order gradient is 0 and
    # what both libraries give is rounding noise: the same noise once std and mean agree bit
    # for bit (fuzzer seed 1204090)
    def std_then_repeat(lib, x):
        std = lib.std_mean(x, dim=-2, correction=1)[0]
        return lib.repeat_interleave(std, 3, dim=-1)

    agree(torch, lambda lib: lib.tensor(COLUMNS).reshape(3, 3), std_then_repeat)


def test_bce_with_logits_target_gradient_is_smooth_at_a_zero_logit(torch):
    # The target's gradient, log σ(-x) - pos_weight·log σ(x), has the slope -σ(x) - p·σ(-x)
    # at x = 0 too (max(-x, 0) + log1p(e^-|x|) gave the kinks' one-sided slopes: -1 + 0)
    def target_is_the_input(lib, x):
        pos_weight = lib.tensor([0.93, 0.0, 2.0])
        F = lib.nn.functional
        return F.binary_cross_entropy_with_logits(x, x, pos_weight=pos_weight, reduction="none")

    agree(torch, lambda lib: lib.tensor([0.0, -0.0, 0.0]), target_is_the_input)


def test_the_gradient_of_repeat_with_a_zero_count_requires_no_grad(torch):
    # no copies: PyTorch's repeat_backward returns zeros, a constant (fuzzer seed 1209316)
    def repeat_none(lib, x):
        return lib.nn.functional.softplus(x.repeat((2, 0)))

    agree(torch, lambda lib: lib.tensor(0.0), repeat_none)


@pytest.mark.parametrize("dim", [0, None])
def test_the_gradient_of_a_product_of_one_zero_requires_no_grad(torch, dim):
    # one element per product, and a zero: PyTorch hands the gradient through as it is (the
    # product of no others is 1), so it requires no grad; without a zero it is grad·result/x,
    # which does (fuzzer seed 1000647)
    def product(lib, x):
        return x.prod() if dim is None else x.prod(dim=dim)

    for value in (0.0, 3.0):
        agree(torch, lambda lib: lib.tensor([[value, 2.0]])[:, :1], product)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
def test_the_gradient_of_trace_reaches_the_diagonal_only(torch):
    # a nan gradient of the trace stays on the diagonal, as PyTorch fills the diagonal with it
    # (grad * eye gave nan * 0 = nan everywhere): fuzzer seeds 1208846, 1003446
    agree(torch, lambda lib: lib.zeros(3, 1), lambda lib, x: lib.var_mean(lib.trace(x), dim=0)[0])


def test_elu_second_derivative_multiplies_by_its_mask(torch):
    # PyTorch's elu_double_backward multiplies by (x < 0), so an infinite gradient on the linear
    # piece gives inf * 0 = nan there (fuzzer seed 1214880)
    def elu_times_infinity(lib, x):
        return lib.nn.functional.elu(x, alpha=0.5) * lib.tensor([float("inf"), float("inf")])

    agree(torch, lambda lib: lib.tensor([float("inf"), 0.0]), elu_times_infinity)


def test_cumprod_second_derivative_with_zeros_is_pytorch_s(torch):
    # with a zero in the input, PyTorch's create_graph gradient of cumprod multiplies, for each
    # position k, the product before k by the running product after it; its second derivative
    # then has PyTorch's nan and inf (fuzzer seed 1214880)
    agree(torch, lambda lib: lib.tensor([float("inf"), 0.0]), lambda lib, x: x.cumprod(0))


def test_the_gradient_of_msort_among_ties_follows_their_order(torch):
    # Accepted (README "Simplifications"): PyTorch's unstable sort reorders 18 equal elements,
    # and each one's gradient goes with it; ours keeps them in order (fuzzer seed 1031097)
    def gradient(lib):
        x = lib.zeros(18, requires_grad=True)
        lib.msort(x).backward(lib.arange(1.0, 19.0))
        return values(x.grad)

    ours, theirs = gradient(ag), gradient(torch)
    assert ours.tolist() == list(range(1, 19))
    assert sorted(theirs.tolist()) == ours.tolist() and theirs.tolist() != ours.tolist()

    def divergence(ours, theirs):
        shown = (
            "tensor([{}], float32, shape=[18])".format(" ".join(map(str, v)))
            for v in (ours, theirs)
        )
        return Divergence("loss.backward()  [x0.grad]", "backward", "values", *shown)

    reordered = divergence(ours, theirs)
    assert accepted_by(reordered, "v3 = torch.msort(v1)") is not None
    assert accepted_by(reordered, "v3 = torch.argsort(v1)") is None
    doubled = divergence(ours, ours * 2)  # not a reordering: still reported
    assert accepted_by(doubled, "v3 = torch.msort(v1)") is None


def test_no_numpy_warning_where_nan_or_inf_is_the_answer(torch):
    # PyTorch computes inf * 0, inf - inf, x / 0 and 0 ** -1 silently; numpy's RuntimeWarnings
    # about them ("invalid value encountered in multiply") must not reach the learner
    nan, inf = float("nan"), float("inf")

    def nonfinite(lib):
        x, y = lib.tensor([inf, 0.0, -inf, 2.0]), lib.tensor([0.0, inf, -inf, 0.0])
        square = lib.tensor([[inf, 0.0], [1.0, nan]])
        return (
            x * y,
            x * 0.0,
            x - x,
            x + y,
            lib.addcdiv(x, x, y),
            lib.pow(y, lib.full((4,), -1.0)),
            lib.softmax(x, 0),
            lib.log_softmax(x, 0),
            square @ square,
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        both(torch, nonfinite)
        agree(torch, lambda lib: lib.tensor([inf, 0.0]), lambda lib, x: x.cumprod(0))


@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_too_few_elements_for_the_correction_warn_as_pytorch(torch, name):
    # a UserWarning that names the degrees of freedom, as PyTorch's; numpy's own RuntimeWarning
    # ("Degrees of freedom <= 0 for slice") is not shown
    for lib in (ag, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with pytest.warns(UserWarning, match=f"{name}\\(\\): degrees of freedom is <= 0"):
                getattr(lib, name)(lib.zeros(2, 1), dim=1)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv_keep_their_tensors_dtype_for_backward(torch, name):
    # the op computes in the common dtype (float32 here) but PyTorch's backward reads tensor1
    # and tensor2 as they were (float64), so their gradients round as float64·float32, not as
    # a float32 copy (fuzzer seed 1376395)
    def gradients(lib):
        t1 = lib.tensor(0.7, dtype=lib.float64).requires_grad_()
        t2 = lib.tensor(0.9, dtype=lib.float64).requires_grad_()
        y = getattr(lib, name)(lib.zeros(1), t1, t2, value=1.5)
        return lib.autograd.grad(y.sum(), [t1, t2])

    both(torch, gradients)


def test_the_gradient_of_a_power_false_takes_the_formula(torch):
    # PyTorch's pow_backward gives zeros (a constant) for the exponent 0 but does not count False
    # as 0: x ** False is differentiated as False · x^-1, nan at x = 0 (fuzzer seed 1371877)
    agree(torch, lambda lib: lib.tensor([0.0, 2.0, float("inf")]), lambda lib, x: x**False)


def test_in_place_cumprod_and_logit_fall_under_their_accepted_simplifications():
    # the accepted gradient differences of cumprod and logit (README "Simplifications") are the
    # same for their in-place forms, cumprod_ and logit_ (fuzzer seeds 1008356, 1377322)
    differ = Divergence("loss.backward()  [x0.grad]", "backward", "NaN/inf", "", "")
    assert accepted_by(differ, "v6 = v0.cumprod_(1)") is not None
    assert accepted_by(differ, "v11 = v4.logit_(eps=0.25)") is not None
    assert accepted_by(differ, "v11 = v4.exp_()") is None
