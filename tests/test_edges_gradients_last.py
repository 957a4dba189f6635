"""Gradient values and NaN/inf at the edges (issue 14, seventh wave): where the fuzzer found a
gradient that differs from PyTorch's, each compared with PyTorch bit for bit (nan where nan, the
sign of every infinity and zero)."""

from test_edges_gradients import identical

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
