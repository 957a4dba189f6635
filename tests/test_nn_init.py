"""nn.init: fan computations equal PyTorch's, and each initialiser draws from the right
distribution (checked statistically on seeded draws; tests/test_random_stream.py checks that the
numbers themselves are PyTorch's)."""

import math

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.nn import init

SHAPES = [(3, 5), (7, 2), (4, 3, 5), (6, 2, 3, 3), (2, 4, 1, 2, 3), (1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_equal_pytorch(torch, shape):
    expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init._calculate_fan_in_and_fan_out(ag.empty(shape)) == expected


@pytest.mark.parametrize(
    "nonlinearity, param",
    [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
     ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)],
)  # fmt: skip
def test_calculate_gain_equals_pytorch(torch, nonlinearity, param):
    expected = torch.nn.init.calculate_gain(nonlinearity, param)
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(expected, rel=1e-15)


def test_errors_are_pytorchs(torch):
    for lib in (ag, torch):  # same exception class and wording in both libraries
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            lib.nn.init.xavier_uniform_(lib.empty(3))
        with pytest.raises(ValueError, match="Unsupported nonlinearity swish"):
            lib.nn.init.calculate_gain("swish")
        with pytest.raises(ValueError, match="negative_slope a not a valid number"):
            lib.nn.init.calculate_gain("leaky_relu", "a")
        with pytest.raises(ValueError, match="negative_slope True not a valid number"):
            lib.nn.init.calculate_gain("leaky_relu", True)
        with pytest.raises(ValueError, match="Mode fan not supported"):
            lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan")
        with pytest.raises(ValueError, match="Unsupported nonlinearity"):
            lib.nn.init.kaiming_normal_(lib.empty(3, 3), nonlinearity="swish")


def test_fan_in_error_says_what_to_use_for_biases():
    with pytest.raises(ValueError, match="shape \\[4\\].*uniform_, normal_ or zeros_"):
        init.kaiming_uniform_(ag.empty(4))


def test_zero_element_tensor_warns_and_is_left_alone():
    w = ag.empty(0, 3)
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(w) is w


# ---- distributions ------------------------------------------------------------------------------


def _values(t):
    return t.detach().numpy().astype(np.float64)


def test_uniform_stays_in_bounds_and_fills_them():
    w = init.uniform_(ag.empty(200, 100), -0.5, 2.0)
    v = _values(w)
    assert v.min() >= -0.5 and v.max() <= 2.0
    assert v.min() < -0.49 and v.max() > 1.99
    assert v.mean() == pytest.approx(0.75, abs=0.02)


def test_normal_has_the_asked_mean_and_std():
    v = _values(init.normal_(ag.empty(200, 100), mean=3.0, std=0.5))
    assert v.mean() == pytest.approx(3.0, abs=0.01)
    assert v.std() == pytest.approx(0.5, rel=0.02)


def test_trunc_normal_stays_in_bounds_with_the_truncated_std():
    v = _values(init.trunc_normal_(ag.empty(200, 100), mean=0.0, std=1.0, a=-1.0, b=2.0))
    assert v.min() >= -1.0 and v.max() <= 2.0
    assert v.min() < -0.99 and v.max() > 1.9
    # mean of N(0, 1) truncated to [-1, 2]: (phi(-1) - phi(2)) / (Phi(2) - Phi(-1))
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    assert v.mean() == pytest.approx((phi(-1) - phi(2)) / (cdf(2) - cdf(-1)), abs=0.02)


def test_trunc_normal_warns_about_an_interval_far_from_the_mean():
    # As PyTorch: a warning (a and b are absolute bounds), and values inside [a, b] all the same
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        v = _values(init.trunc_normal_(ag.empty(3), mean=0.0, std=0.02, a=5.0, b=6.0))
    assert v.min() >= 5.0 and v.max() <= 6.0


def test_constant_zeros_ones():
    assert np.all(_values(init.constant_(ag.empty(2, 3), 0.25)) == 0.25)
    assert np.all(_values(init.zeros_(ag.ones(4))) == 0)
    assert np.all(_values(init.ones_(ag.zeros(4, dtype=ag.float64))) == 1)


def test_xavier_bounds_and_std():
    w = ag.empty(300, 100)  # fan_in 100, fan_out 300
    v = _values(init.xavier_uniform_(w, gain=2.0))
    bound = 2.0 * math.sqrt(6 / 400)
    assert v.min() >= -bound and v.max() <= bound and v.max() > 0.99 * bound
    v = _values(init.xavier_normal_(w))
    assert v.std() == pytest.approx(math.sqrt(2 / 400), rel=0.02)
    assert abs(v.mean()) < 0.003


@pytest.mark.parametrize("mode, fan", [("fan_in", 100), ("fan_out", 300)])
def test_kaiming_bounds_and_std(mode, fan):
    w = ag.empty(300, 100)
    v = _values(init.kaiming_uniform_(w, mode=mode, nonlinearity="relu"))
    bound = math.sqrt(2) * math.sqrt(3 / fan)
    assert v.min() >= -bound and v.max() <= bound and v.max() > 0.99 * bound
    v = _values(init.kaiming_normal_(w, a=0.2, mode=mode))  # leaky_relu with slope 0.2
    assert v.std() == pytest.approx(math.sqrt(2 / (1 + 0.2**2)) / math.sqrt(fan), rel=0.02)


def test_kaiming_uses_the_kernel_size_in_the_fan():
    v = _values(init.kaiming_normal_(ag.empty(64, 8, 5, 5), nonlinearity="relu"))
    assert v.std() == pytest.approx(math.sqrt(2 / (8 * 25)), rel=0.03)


# ---- how the values are written --------------------------------------------------------------------


def test_init_writes_in_place_into_a_parameter_and_records_nothing():
    p = ag.nn.Parameter(ag.zeros(3, 4))
    storage = p._data
    assert init.xavier_uniform_(p) is p
    assert p._data is storage and p.is_leaf and p.requires_grad and p.grad_fn is None
    assert np.any(p.detach().numpy() != 0)


def test_keeps_the_dtype():
    w = init.normal_(ag.empty(3, 3, dtype=ag.float64))
    assert w.dtype == ag.float64


def test_manual_seed_reproduces_the_values_and_a_generator_can_be_passed():
    ag.manual_seed(7)
    first = _values(init.kaiming_uniform_(ag.empty(4, 4)))
    ag.manual_seed(7)
    assert np.array_equal(first, _values(init.kaiming_uniform_(ag.empty(4, 4))))
    own = _values(init.normal_(ag.empty(4), generator=ag.Generator().manual_seed(3)))
    assert np.array_equal(
        own, _values(init.normal_(ag.empty(4), generator=ag.Generator().manual_seed(3)))
    )
