"""LeakyReLU, SiLU, Softplus, ELU and their F functions against PyTorch: values and gradients at
the special points (0, the softplus threshold, large inputs), reprs, in-place forms, errors.

The generated op-table tests (-k "leaky_relu or silu or softplus or elu") add gradcheck,
gradgradcheck, the CUDA simulator, compile and fusion.
"""

import numpy as np
import pytest

import autograd_lab as ag

POINTS = [-30.0, -3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 1.5, 2.0, 3.0, 10.0, 30.0]

CASES = [
    ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}),
    ("silu", {}),
    ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 3.0}),  # 1.5 sits on the threshold
    ("softplus", {"beta": 0.5, "threshold": 1.0}),
    ("elu", {}),
    ("elu", {"alpha": 0.5}),
]


def values(t):
    return t.detach().numpy()


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float32", 1e-6)])
@pytest.mark.parametrize("name, kwargs", CASES)
def test_values_and_gradients(torch, name, kwargs, dtype, tol):
    results = []
    for lib in (ag, torch):
        x = lib.tensor(POINTS, dtype=getattr(lib, dtype), requires_grad=True)
        out = getattr(lib.nn.functional, name)(x, **kwargs)
        (grad,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        (second,) = lib.autograd.grad(grad.sum(), x, allow_unused=True)
        node = out.grad_fn.name() if lib is ag else type(out.grad_fn).__name__
        results.append((node, out, grad, second))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1:], results[1][1:]):
        if a is None or b is None:  # no second derivative recorded (piecewise linear)
            assert a is None or not values(a).any()
            continue
        np.testing.assert_allclose(values(a), values(b), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("LeakyReLU", (), {}),
        ("LeakyReLU", (0.2, True), {}),
        ("SiLU", (), {}),
        ("SiLU", (), {"inplace": True}),
        ("Softplus", (), {}),
        ("Softplus", (2, 10), {}),
        ("ELU", (), {}),
        ("ELU", (2.0,), {"inplace": True}),
    ],
)
def test_layers_repr_and_forward(torch, name, args, kwargs):
    ours, theirs = getattr(ag.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    x = np.linspace(-3, 3, 7)
    a, b = ag.tensor(x), torch.tensor(x)
    out, their_out = ours(a), theirs(b)
    np.testing.assert_allclose(values(out), values(their_out), rtol=1e-12, atol=1e-12)
    if kwargs.get("inplace") or (args and args[-1] is True):  # written into the input
        np.testing.assert_allclose(values(a), values(b), rtol=1e-12, atol=1e-12)
        assert out is a


def test_in_place_on_a_non_leaf_keeps_the_gradient_right(lib):
    x = lib.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    y = x * 2
    lib.nn.functional.elu(y, alpha=0.5, inplace=True)
    y.sum().backward()
    expected = [2 * 0.5 * np.exp(-4.0), 2.0, 2.0]
    np.testing.assert_allclose(values(x.grad), expected, rtol=1e-5)  # float32


def test_integer_inputs_are_refused(lib):
    for name in ("leaky_relu", "silu", "elu"):
        with pytest.raises(RuntimeError):
            getattr(lib.nn.functional, name)(lib.tensor([1, -2]))
