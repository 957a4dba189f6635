"""Forward values at the edges (issue 14, wave 6): rows whose statistics cancel, norms of one
element, NaN/inf and signed zeros. Each compares with PyTorch 2.13, bit for bit where PyTorch's
result is exact."""

import pytest
from conftest import both, values

import autograd_lab as ag


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [0.1, 0.7615941559557649, -3.3])
def test_layer_norm_of_a_constant_row_gives_exactly_the_bias(torch, dtype, value):
    def run(lib):
        row = lib.full((2, 3), value, dtype=getattr(lib, dtype))
        weight = lib.tensor([1.46, -1.72, 0.85], dtype=getattr(lib, dtype))
        bias = lib.tensor([0.56, 0.07, -1.07], dtype=getattr(lib, dtype))
        return lib.nn.functional.layer_norm(row, (3,), weight, bias)

    both(torch, run)


@pytest.mark.parametrize("p", [2, 0.5, 1.5, 3, -0.5, 0.3])
def test_the_norm_of_one_element_is_its_size(torch, p):
    # no power and root: (-2)^0.5 squared is not exactly 2, 3e38 squared overflows float32
    both(torch, lambda lib: lib.tensor([[-2.0], [0.3]], dtype=lib.float64).norm(p=p, dim=1))
    both(torch, lambda lib: lib.tensor([[3e38], [-1e-30]]).norm(p=p, dim=-1, keepdim=True))
    both(torch, lambda lib: lib.tensor(3e38).norm(p=p))
    # two elements: the power and the root, which overflow as PyTorch's do
    both(torch, lambda lib: lib.tensor([3e38, 0.0]).norm(p=p))


def test_the_norm_counting_nonzeros_of_one_element_is_still_a_count(torch):
    both(torch, lambda lib: lib.tensor([[5.0], [0.0]]).norm(p=0, dim=1))


def test_normalize_of_one_huge_element_is_one(torch):
    both(
        torch,
        lambda lib: lib.nn.functional.normalize(
            lib.tensor([1.797e308], dtype=lib.float64), dim=0, eps=0.5
        ),
    )


def test_pow_by_the_half_norm_of_one_element(torch):
    def run(lib):
        x = lib.tensor([-2.0], dtype=lib.float64)
        return x.pow(x.norm(p=0.5, dim=-1, keepdim=True))

    both(torch, run)


def signs_and_values(t):
    """A float tensor's values as text, so -0.0 and +0.0 differ (and nan equals nan)."""
    return [repr(v) for v in values(t).flatten().tolist()], tuple(t.shape), str(t.dtype)


def same_with_signed_zeros(torch, run):
    assert signs_and_values(run(ag)) == signs_and_values(run(torch))


ZEROS = [-0.0, 0.0, -1.5, 2.0, float("nan"), -0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x: lib.relu(x),
        lambda lib, x: lib.nn.functional.relu(x),
        lambda lib, x: x.clone().relu_(),
        lambda lib, x: lib.nn.functional.elu(x),
        lambda lib, x: lib.nn.functional.elu(x, alpha=-0.5),
        lambda lib, x: x.cumsum(0),
        lambda lib, x: x.reshape(2, 3).cumsum(1),
        lambda lib, x: x.reshape(6, 1).logcumsumexp(1),
        lambda lib, x: x[:2].logcumsumexp(0),
    ],
    ids=[
        "relu",
        "F.relu",
        "relu_",
        "elu",
        "elu_negative_alpha",
        "cumsum",
        "cumsum_rows",
        "logcumsumexp_one",
        "logcumsumexp",
    ],
)
def test_a_negative_zero_keeps_its_sign_where_pytorch_keeps_it(torch, dtype, op):
    # relu and elu pass x on unless x < 0; a running sum starts from 0 (or log 0), and
    # 0 + -0.0 is +0.0: a 1/x or x // y later shows the sign as -inf or inf
    same_with_signed_zeros(torch, lambda lib: op(lib, lib.tensor(ZEROS, dtype=getattr(lib, dtype))))


def test_a_zero_dim_running_sum_is_its_element(torch):
    same_with_signed_zeros(torch, lambda lib: lib.tensor(-0.0).cumsum(0))
    same_with_signed_zeros(torch, lambda lib: lib.tensor(-0.0).logcumsumexp(0))


def test_the_fuzzers_signed_zero_programs(torch):
    zeros = [0.0, -0.0, 0.0]
    # rsqrt of elu's -0.0 is -inf
    same_with_signed_zeros(torch, lambda lib: lib.nn.functional.elu(lib.tensor(zeros)).rsqrt())

    def addcdiv(lib):  # divided by relu's -0.0: -inf
        x = lib.tensor(zeros).reshape(3, 1)
        return x.addcdiv(x.logcumsumexp(-2), x.relu())

    same_with_signed_zeros(torch, addcdiv)

    def floor_divide(lib):  # divided by logcumsumexp's +0.0: inf
        x = lib.tensor(zeros).reshape(3, 1)
        return lib.where(x != 0, 0.5, 0.25).floor_divide(x.logcumsumexp(1))

    same_with_signed_zeros(torch, floor_divide)
