"""The public API of the issue, item by item: every name is called at least once here.

Tests that take `lib` run on autograd_lab and on PyTorch (skipped without it): the same code, the
same results. `test_swap_the_import` runs a small PyTorch script with each library and compares
what it prints.
"""

import contextlib
import io
import warnings

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag

# ---- creation ------------------------------------------------------------------------------------


def test_tensor_dtype_defaults_python_floats_float32_ints_int64(lib):
    assert lib.tensor(1.5).dtype == lib.float32
    assert lib.tensor([[1.0, 2.0]]).dtype == lib.float32
    assert lib.tensor([1, 2]).dtype == lib.int64
    assert lib.tensor([True, False]).dtype == lib.bool
    assert lib.tensor([1, 2.5]).dtype == lib.float32  # mixed: float
    assert lib.tensor(np.array([1.0, 2.0])).dtype == lib.float64  # numpy's dtype is kept
    assert lib.tensor([1, 2], dtype=lib.float64).dtype == lib.float64
    t = lib.tensor([1.0, 2.0], requires_grad=True, device="cpu")
    assert t.requires_grad and t.is_leaf and str(t.device) == "cpu"
    assert lib.tensor([[1, 2], [3, 4]]).shape == (2, 2)


def test_tensor_copies_its_data(lib):
    array = np.array([1.0, 2.0], dtype=np.float32)
    t = lib.tensor(array)
    array[0] = 100.0
    assert values(t)[0] == 1.0


def test_zeros_ones_full_and_likes(lib):
    z = lib.zeros(2, 3)
    assert z.shape == (2, 3) and z.dtype == lib.float32 and values(z).sum() == 0
    assert lib.zeros((2, 3)).shape == (2, 3)  # a tuple works as well as separate sizes
    o = lib.ones(4, dtype=lib.float64)
    assert o.dtype == lib.float64 and values(o).tolist() == [1.0] * 4
    assert lib.ones(2, requires_grad=True).requires_grad
    assert lib.full((2, 2), 7.0).dtype == lib.float32
    assert lib.full((2,), 3).dtype == lib.int64
    assert values(lib.full((2, 2), 7.0)).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    ints = lib.tensor([[1, 2, 3]])
    assert lib.zeros_like(ints).dtype == lib.int64 and lib.zeros_like(ints).shape == (1, 3)
    assert values(lib.ones_like(z)).tolist() == [[1.0] * 3] * 2
    assert lib.ones_like(z, dtype=lib.float64).dtype == lib.float64


def test_arange_linspace_eye(lib):
    assert values(lib.arange(4)).tolist() == [0, 1, 2, 3] and lib.arange(4).dtype == lib.int64
    assert values(lib.arange(1, 7, 2)).tolist() == [1, 3, 5]
    r = lib.arange(0.0, 1.0, 0.25)
    assert r.dtype == lib.float32 and values(r).tolist() == [0.0, 0.25, 0.5, 0.75]
    s = lib.linspace(0, 1, 5)
    assert s.dtype == lib.float32 and values(s).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    e = lib.eye(3)
    assert e.dtype == lib.float32 and (values(e) == np.eye(3)).all()
    assert lib.eye(2, 3).shape == (2, 3)


def test_rand_randn_and_manual_seed_reproducibility(lib):
    lib.manual_seed(123)
    a, b = lib.rand(3, 4), lib.randn(3, 4)
    lib.manual_seed(123)
    assert (values(lib.rand(3, 4)) == values(a)).all()
    assert (values(lib.randn(3, 4)) == values(b)).all()
    assert a.dtype == lib.float32 and b.shape == (3, 4)
    assert (values(a) >= 0).all() and (values(a) < 1).all()
    lib.manual_seed(124)
    assert not (values(lib.rand(3, 4)) == values(a)).all()
    big = values(lib.randn(10_000))
    assert abs(big.mean()) < 0.05 and abs(big.std() - 1) < 0.05
    assert lib.rand(2, requires_grad=True).requires_grad


def test_from_numpy_shares_memory(lib):
    array = np.array([1.0, 2.0, 3.0])
    t = lib.from_numpy(array)
    assert t.dtype == lib.float64  # numpy's float64 is kept
    array[0] = 10.0
    assert values(t)[0] == 10.0
    t[1] = 20.0
    assert array[1] == 20.0
    assert lib.from_numpy(np.arange(3)).dtype == lib.int64


def test_dtypes_are_exported():
    assert ag.float32.is_floating_point and ag.float64.is_floating_point
    assert not ag.int64.is_floating_point and not ag.bool.is_floating_point
    assert repr(ag.float32) == "torch.float32" and repr(ag.bool) == "torch.bool"  # as PyTorch
    assert ag.tensor([1.0]).to(ag.float64).dtype is ag.float64


# ---- the Tensor's attributes and methods ---------------------------------------------------------


def test_tensor_describes_itself(lib):
    t = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert t.shape == (2, 3) and t.size() == (2, 3) and t.size(1) == 3 and t.size(-2) == 2
    assert t.ndim == 2 and t.dim() == 2 and t.numel() == 6
    assert t.dtype == lib.float32 and t.device == lib.device("cpu") and str(t.device) == "cpu"
    assert t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None
    assert t._version == 0
    assert t.T.shape == (3, 2) and values(t.T).tolist() == [[1, 4], [2, 5], [3, 6]]
    data = t.data
    assert not data.requires_grad and data.is_leaf
    data[0, 0] = 9.0  # .data shares storage, outside autograd
    assert values(t)[0, 0] == 9.0


def test_item_tolist_numpy(lib):
    assert lib.tensor(2.5).item() == 2.5 and isinstance(lib.tensor(2.5).item(), float)
    assert lib.tensor([[7]]).item() == 7 and isinstance(lib.tensor([7]).item(), int)
    assert lib.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert lib.tensor(1.5).tolist() == 1.5
    t = lib.tensor([1.0, 2.0])
    array = t.numpy()
    assert isinstance(array, np.ndarray) and array.dtype == np.float32
    array[0] = 5.0  # numpy() shares memory, as in PyTorch
    assert t[0].item() == 5.0
    x = lib.tensor([1.0], requires_grad=True)
    assert x.detach().numpy().tolist() == [1.0]


def test_clone_detach_detach_(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn.name() == "CloneBackward0" and not c.is_leaf
    c.sum().backward()
    assert values(x.grad).tolist() == [1.0, 1.0]  # clone is differentiable
    with lib.no_grad():
        c[0] = 50.0
    assert values(x)[0] == 1.0  # ... and has its own storage
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    y = x * 2
    assert y.detach_() is y and y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_requires_grad_and_requires_grad_(lib):
    t = lib.ones(2)
    assert not t.requires_grad
    assert t.requires_grad_() is t and t.requires_grad
    t.requires_grad_(False)
    assert not t.requires_grad
    t.requires_grad = True
    assert t.requires_grad


def test_retain_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert values(y.grad).tolist() == [6.0, 12.0]


def test_retain_grad_accumulates_across_backward_calls(lib):
    x = lib.tensor(3.0, requires_grad=True)  # a 0-d tensor: the common case of a loss
    y = x * 2
    y.retain_grad()
    z = y * y
    z.backward(retain_graph=True)
    z.backward()
    assert y.grad.item() == 24.0  # 12 + 12
    assert y.grad.shape == ()
    y.grad.zero_()  # a real tensor: in-place methods work on it
    assert y.grad.item() == 0.0


def test_register_hook_returns_a_handle_whose_remove_works(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(values(g).tolist()))
    (x * 3).sum().backward()
    handle.remove()
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    doubled = x.register_hook(lambda g: g * 2)  # a hook that returns a tensor replaces the grad
    x.grad = None
    (x * 3).sum().backward()
    assert values(x.grad).tolist() == [6.0, 6.0]
    doubled.remove()


def test_backward_arguments(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    y.backward(gradient=lib.tensor([1.0, 10.0]), retain_graph=True)
    assert values(x.grad).tolist() == [3.0, 40.0] and values(w.grad).tolist() == [1.0, 20.0]
    x.grad, w.grad = None, None
    y.sum().backward(inputs=[w])  # only w.grad is filled
    assert x.grad is None and values(w.grad).tolist() == [1.0, 2.0]
    z = (x**2).sum()
    z.backward(create_graph=True)
    assert x.grad.requires_grad


def test_backward_inputs_with_a_non_leaf_that_retains_grad(lib):
    x = lib.tensor([3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(inputs=[y])
    assert values(y.grad).tolist() == [12.0]  # once, not once per mechanism
    assert x.grad is None


def test_to_float_double_cpu(lib):
    t = lib.tensor([1, 2])
    assert t.float().dtype == lib.float32 and t.double().dtype == lib.float64
    assert t.to(lib.float64).dtype == lib.float64
    assert t.to("cpu") is t and t.cpu() is t and t.to(lib.int64) is t
    assert t.to(dtype=lib.float32).dtype == lib.float32
    assert t.to(lib.ones(1, dtype=lib.float64)).dtype == lib.float64
    x = lib.tensor([1.5], requires_grad=True)
    assert x.float() is x
    xd = x.double()
    assert xd.grad_fn.name() == "ToCopyBackward0"
    (xd * 2).sum().backward()  # the conversion is differentiable; the grad keeps x's dtype
    assert x.grad.dtype == lib.float32 and x.grad.item() == 2.0


# ---- in-place operations and __setitem__ ---------------------------------------------------------


def test_in_place_ops_change_the_tensor_and_bump_its_version(lib):
    t = lib.ones(3)
    assert t.add_(2) is t
    assert values(t).tolist() == [3.0, 3.0, 3.0] and t._version == 1
    t.sub_(lib.tensor([1.0, 2.0, 3.0]), alpha=0.5)
    assert values(t).tolist() == [2.5, 2.0, 1.5]
    t.mul_(2)
    assert values(t).tolist() == [5.0, 4.0, 3.0]
    t.copy_(lib.tensor([7.0]))  # copy_ broadcasts its source
    assert values(t).tolist() == [7.0, 7.0, 7.0]
    assert t.zero_() is t and values(t).tolist() == [0.0, 0.0, 0.0]
    assert t._version == 5
    i = lib.tensor([1, 2])
    i.copy_(lib.tensor([3.7, 4.2]))  # copy_ converts to the destination's dtype
    assert i.dtype == lib.int64 and values(i).tolist() == [3, 4]


def test_in_place_ops_are_recorded_on_non_leaves(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    h = w * 1
    h.mul_(w)  # h = w²
    assert h.grad_fn.name() == "MulBackward0" and h._version == 1
    h.add_(w, alpha=3)  # h = w² + 3w
    h.sub_(1)
    h.sum().backward()
    assert values(w.grad).tolist() == [5.0, 7.0]  # 2w + 3
    c = lib.zeros(2, requires_grad=True)
    d = c * 1
    d.copy_(w * 10)  # the old values are overwritten: no gradient flows to c
    d.sum().backward()
    assert values(c.grad).tolist() == [0.0, 0.0] and values(w.grad).tolist() == [15.0, 17.0]


def test_setitem_without_autograd(lib):
    t = lib.zeros(2, 3)
    t[0] = 1.0
    t[1, 1:] = lib.tensor([5.0, 6.0])
    t[:, 0] += 10
    t[t == 6.0] = -1.0  # a boolean mask
    assert values(t).tolist() == [[11.0, 1.0, 1.0], [10.0, 5.0, -1.0]]
    assert t._version == 5  # `t[:, 0] += 10` is two in-place changes: += on a view, then setitem


def test_setitem_with_autograd(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor(10.0, requires_grad=True)
    c = a * 1
    c[1] = b * 2
    assert values(c).tolist() == [1.0, 20.0, 3.0]
    assert repr(c.grad_fn).startswith("<") and "CopySlices" in c.grad_fn.name()
    (c * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert values(a.grad).tolist() == [1.0, 0.0, 3.0]  # the overwritten element gets no gradient
    assert b.grad.item() == 4.0


# ---- operators -----------------------------------------------------------------------------------


def test_operators_and_their_gradients(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0], requires_grad=True)
    m = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    outputs = {
        "add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "pow": x**y, "pow2": x**2,
        "neg": -x, "matmul": m @ x,
        "radd": 2 + x, "rsub": 2 - x, "rmul": 2 * x, "rdiv": 2 / x, "rpow": 2**x,
    }  # fmt: skip
    expected = {
        "add": [4, 6], "sub": [-2, -2], "mul": [3, 8], "div": [1 / 3, 0.5], "pow": [1, 16],
        "pow2": [1, 4], "neg": [-1, -2], "matmul": [5, 11],
        "radd": [3, 4], "rsub": [1, 0], "rmul": [2, 4], "rdiv": [2, 1], "rpow": [2, 4],
    }  # fmt: skip
    for name, out in outputs.items():
        np.testing.assert_allclose(values(out), expected[name], rtol=1e-6, err_msg=name)
        assert out.requires_grad, name
    sum(out.sum() for out in outputs.values()).backward()
    xs, ys = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    dx = (
        1 + 1 + ys + 1 / ys + ys * xs ** (ys - 1) + 2 * xs - 1
        + m.detach().numpy().sum(axis=0)
        + 1 - 1 + 2 - 2 / xs**2 + 2**xs * np.log(2)
    )  # fmt: skip
    dy = 1 - 1 + xs - xs / ys**2 + xs**ys * np.log(xs)
    np.testing.assert_allclose(values(x.grad), dx, rtol=1e-5)
    np.testing.assert_allclose(values(y.grad), dy, rtol=1e-5)
    np.testing.assert_allclose(values(m.grad), [[1.0, 2.0], [1.0, 2.0]])


def test_type_promotion(lib):
    f32, f64, i64, b = lib.float32, lib.float64, lib.int64, lib.bool
    cases = [  # (a, b, dtype of a + b): categories bool < integer < float; 0-d tensors widen less
        (lib.tensor([1.0]), lib.tensor([1.0], dtype=f64), f64),
        (lib.tensor([1]), lib.tensor([1.0]), f32),
        (lib.tensor([1]), 2.5, f32),
        (lib.tensor([1.0]), lib.tensor(2.0, dtype=f64), f32),  # a 0-d float64 does not widen
        (lib.tensor([1]), lib.tensor(2.0, dtype=f64), f64),  # ... but lifts an int's category
        (lib.tensor([True]), lib.tensor(3), i64),
        (lib.tensor([True]), 1, i64),
        (lib.tensor([1]), lib.tensor(True), i64),
        (lib.tensor([True]), lib.tensor([False]), b),
    ]
    for x, y, dtype in cases:
        assert (x + y).dtype == dtype and (y + x).dtype == dtype, (x, y)
    assert values(lib.tensor([True, False]) < lib.tensor(3)).tolist() == [True, True]
    assert values(lib.tensor([True, False]) * lib.tensor(3)).tolist() == [3, 0]


def test_true_division_of_integers_gives_float32(lib):
    for quotient in (
        lib.tensor([1, 3]) / lib.tensor([2, 4]),
        lib.tensor([1, 3]) / 2,
        lib.tensor([1, 3]) / lib.tensor(2),
        lib.tensor([True, False]) / lib.tensor(4),
    ):
        assert quotient.dtype == lib.float32
    assert values(lib.tensor([1, 3]) / lib.tensor([2, 4])).tolist() == [0.5, 0.75]
    assert values(lib.tensor([True, False]) / lib.tensor(4)).tolist() == [0.25, 0.0]


def test_division_by_zero_gives_inf_and_nan_quietly(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning leaks out
        q = lib.tensor([1.0, -1.0, 0.0]) / lib.tensor(0.0)
    assert values(q)[0] == np.inf and values(q)[1] == -np.inf and np.isnan(values(q)[2])


def test_comparisons_give_bool_tensors_that_never_require_grad(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = lib.tensor([3.0, 2.0, 1.0])
    results = [x < y, x <= y, x > y, x >= y, x == y, x != y, x > 1.5, 2 < x]
    expected = [
        [True, False, False], [True, True, False], [False, False, True], [False, True, True],
        [False, True, False], [True, False, True], [False, True, True], [False, False, True],
    ]  # fmt: skip
    for result, want in zip(results, expected):
        assert result.dtype == lib.bool and values(result).tolist() == want
        assert not result.requires_grad and result.grad_fn is None
    assert ((x > 1) & (x < 3)).tolist() == [False, True, False]
    assert ((x < 2) | (x > 2)).tolist() == [True, False, True]


# ---- indexing ------------------------------------------------------------------------------------


def test_indexing_values(lib):
    t = lib.arange(24).reshape(2, 3, 4)
    assert t[1].shape == (3, 4) and t[1, 2, 3].item() == 23 and t[-1, -1, -1].item() == 23
    assert values(t[0, 1:3, ::2]).tolist() == [[4, 6], [8, 10]]
    assert t[None].shape == (1, 2, 3, 4) and t[:, None, 0].shape == (2, 1, 4)
    assert t[..., 1].shape == (2, 3) and values(t[..., 1])[1].tolist() == [13, 17, 21]
    assert t[1, ..., None].shape == (3, 4, 1)
    assert values(t[0, 0, lib.tensor([3, 0, 3])]).tolist() == [3, 0, 3]
    assert values(t[0, [1, 2], [0, 1]]).tolist() == [4, 9]
    assert values(t[t > 20]).tolist() == [21, 22, 23]
    assert t[lib.tensor([True, False])].shape == (1, 3, 4)


def test_indexing_gradients_and_repeated_indices_accumulate(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    parts = [
        x[0],  # an int
        x[:, 1],  # a slice
        x[None, 1],  # None
        x[..., 2],  # ...
        x[lib.tensor([0, 0, 1])],  # an integer array with a repeated index
        x[x > 4],  # a boolean mask
    ]
    sum(p.sum() for p in parts).backward()
    # row 0: x[0] once, the integer array twice; row 1: None-row once, integer array once;
    # column 1 and column 2 once each; the mask picks 5 and 6
    np.testing.assert_allclose(values(x.grad), [[3.0, 4.0, 4.0], [2.0, 4.0, 4.0]])
    v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v[lib.tensor([0, 0, 2, 0])].sum().backward()
    assert values(v.grad).tolist() == [3.0, 0.0, 1.0]  # index 0 used three times


# ---- elementwise, reductions, shape and linalg ops -----------------------------------------------

_RNG = np.random.default_rng(7)
INPUTS = {
    "p": _RNG.uniform(0.5, 2.0, (2, 3)),  # positive
    "r": np.array([[-1.3, 0.4, 2.1], [0.7, -0.2, -2.6]]),  # real, no ties, away from 0 and ±0.5
    "q": np.array([0.3, -1.1, 1.7]),  # broadcasts against r
    "m": _RNG.standard_normal((3, 4)),
    "n": _RNG.standard_normal((4, 2)),
    "v": _RNG.standard_normal(3),
    "w": _RNG.standard_normal(3),
    "b": _RNG.standard_normal((2, 3, 4)),
    "c": _RNG.standard_normal((2, 4, 2)),
    "s": _RNG.standard_normal((1, 3, 1)),
}

# name: (inputs, call). "Functions and methods": the elementwise entries call both forms.
API_OPS = {
    "exp": ("r", lambda L, x: (L.exp(x), x.exp())),
    "log": ("p", lambda L, x: (L.log(x), x.log())),
    "sqrt": ("p", lambda L, x: (L.sqrt(x), x.sqrt())),
    "sin": ("r", lambda L, x: (L.sin(x), x.sin())),
    "cos": ("r", lambda L, x: (L.cos(x), x.cos())),
    "tanh": ("r", lambda L, x: (L.tanh(x), x.tanh())),
    "sigmoid": ("r", lambda L, x: (L.sigmoid(x), x.sigmoid())),
    "relu": ("r", lambda L, x: (L.relu(x), x.relu())),
    "abs": ("r", lambda L, x: (L.abs(x), x.abs(), abs(x))),
    "neg": ("r", lambda L, x: (L.neg(x), x.neg())),
    "reciprocal": ("p", lambda L, x: (L.reciprocal(x), x.reciprocal())),
    "pow": ("pr", lambda L, x, y: (L.pow(x, 2.5), x.pow(3), L.pow(x, y), x.pow(y))),
    "clamp": ("r", lambda L, x: (L.clamp(x, min=-0.5, max=0.5), x.clamp(min=0.0), x.clamp(max=1))),
    "maximum": ("rq", lambda L, x, y: (L.maximum(x, y), x.maximum(y))),
    "minimum": ("rq", lambda L, x, y: (L.minimum(x, y), x.minimum(y))),
    "where": (
        "rq",
        lambda L, x, y: (L.where(x > 0, x, y), x.where(x < 0, y), L.where(x > 1, x, 0.0)),
    ),
    "log1p": ("p", lambda L, x: (L.log1p(x), x.log1p())),
    "expm1": ("r", lambda L, x: (L.expm1(x), x.expm1())),
    "sum": (
        "r",
        lambda L, x: (x.sum(), L.sum(x, dim=1), x.sum(dim=0, keepdim=True), x.sum((0, 1))),
    ),
    "mean": ("r", lambda L, x: (x.mean(), L.mean(x, dim=-1), x.mean(dim=0, keepdim=True))),
    "max": ("r", lambda L, x: (x.max(), *L.max(x, dim=1), *x.max(dim=0, keepdim=True))),
    "min": ("r", lambda L, x: (L.min(x), *x.min(dim=1), x.min(1).values, x.min(1).indices)),
    "prod": ("r", lambda L, x: (x.prod(), L.prod(x, dim=1), x.prod(dim=0, keepdim=True))),
    "var": ("r", lambda L, x: (x.var(), L.var(x, dim=1), x.var(dim=0, unbiased=False))),
    "std": ("r", lambda L, x: (x.std(), L.std(x, dim=1), x.std(dim=0, keepdim=True))),
    "logsumexp": ("r", lambda L, x: (L.logsumexp(x, dim=1), x.logsumexp(dim=0, keepdim=True))),
    "argmax": ("r", lambda L, x: (x.argmax(), L.argmax(x, dim=1), x.argmax(dim=0, keepdim=True))),
    "argmin": ("r", lambda L, x: (x.argmin(), L.argmin(x, dim=1))),
    "softmax": ("r", lambda L, x: (L.softmax(x, dim=1), x.softmax(dim=0), x.softmax(-1))),
    "log_softmax": ("r", lambda L, x: (L.log_softmax(x, dim=1), x.log_softmax(0))),
    "reshape": ("r", lambda L, x: (x.reshape(3, 2), L.reshape(x, (6,)), x.reshape(-1, 1))),
    "view": ("r", lambda L, x: (x.view(3, 2), x.view(-1), x.view((1, 6)))),
    "transpose": ("b", lambda L, x: (x.transpose(0, 2), L.transpose(x, 1, -1))),
    "permute": ("b", lambda L, x: (x.permute(2, 0, 1), L.permute(x, (1, 2, 0)))),
    "squeeze": ("s", lambda L, x: (x.squeeze(), L.squeeze(x, 0), x.squeeze(-1), x.squeeze(1))),
    "unsqueeze": ("r", lambda L, x: (x.unsqueeze(0), L.unsqueeze(x, -1), x.unsqueeze(1))),
    "flatten": ("b", lambda L, x: (x.flatten(), L.flatten(x, 1), x.flatten(0, 1))),
    "expand": ("s", lambda L, x: (x.expand(2, 3, 4), x.expand(5, -1, -1, 2))),
    "broadcast_to": ("q", lambda L, x: (L.broadcast_to(x, (2, 3)), x.broadcast_to((4, 1, 3)))),
    "cat": ("rp", lambda L, x, y: (L.cat([x, y]), L.cat([x, y, x], dim=1), L.cat((y,), -1))),
    "stack": ("rp", lambda L, x, y: (L.stack([x, y]), L.stack([x, y], dim=2))),
    "split": ("b", lambda L, x: (*x.split(2, dim=2), *L.split(x, [1, 2], dim=1))),
    "chunk": ("b", lambda L, x: (*x.chunk(2, dim=2), *L.chunk(x, 3, dim=1))),
    "matmul": ("bc", lambda L, x, y: (L.matmul(x, y), x @ y, x[0] @ y, x @ y[0, :, 0])),
    "mm": ("mn", lambda L, x, y: (L.mm(x, y), x.mm(y))),
    "bmm": ("bc", lambda L, x, y: (L.bmm(x, y), x.bmm(y))),
    "dot": ("vw", lambda L, x, y: (L.dot(x, y), x.dot(y))),
    "outer": ("vw", lambda L, x, y: (L.outer(x, y), x.outer(y))),
}


def _run_op(lib, name):
    """Call the op on float64 copies of its inputs; return outputs and inputs' gradients."""
    keys, call = API_OPS[name]
    inputs = [lib.tensor(INPUTS[k].copy(), dtype=lib.float64, requires_grad=True) for k in keys]
    outputs = call(lib, *inputs)
    loss = 0
    for i, out in enumerate(outputs):
        if out.requires_grad:  # weights make every element's gradient different
            weight = np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)) + i
            loss = loss + (out * lib.tensor(weight)).sum()
    if not isinstance(loss, int):  # argmax/argmin: nothing to differentiate
        loss.backward()
    return [values(o) for o in outputs], [
        None if x.grad is None else values(x.grad) for x in inputs
    ]


@pytest.mark.parametrize("name", API_OPS)
def test_api_op_matches_pytorch(name, torch):
    ours, theirs = _run_op(ag, name), _run_op(torch, name)
    for our_list, their_list in zip(ours, theirs):
        assert len(our_list) == len(their_list)
        for mine, want in zip(our_list, their_list):
            if mine is None or want is None:  # an input nothing differentiable depends on
                assert mine is None and want is None
                continue
            assert mine.shape == want.shape and mine.dtype == want.dtype
            np.testing.assert_allclose(mine, want, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", API_OPS)
def test_api_op_passes_gradcheck(name):
    keys, call = API_OPS[name]
    inputs = [ag.tensor(INPUTS[k], dtype=ag.float64, requires_grad=True) for k in keys]
    assert ag.autograd.gradcheck(lambda *xs: call(ag, *xs), inputs)


def test_max_and_min_with_dim_give_values_and_indices(lib):
    x = lib.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    result = x.max(dim=1)
    values_, indices = result  # a named pair that unpacks
    assert values(result.values).tolist() == [5.0, 7.0] and result.indices.tolist() == [1, 0]
    assert values_ is result.values and indices is result.indices
    assert indices.dtype == lib.int64 and not indices.requires_grad
    result.values.sum().backward()
    assert values(x.grad).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert x.min(1).indices.tolist() == [0, 1]


@pytest.mark.filterwarnings("ignore:.*degrees of freedom", "ignore:Degrees of freedom")
def test_var_and_std_with_too_few_or_equal_values(lib):
    one = lib.tensor([3.0], requires_grad=True)
    (one.var() + one.std()).backward()  # n - 1 = 0 degrees of freedom: nan, not a crash
    assert np.isnan(values(one.grad)).all()
    same = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
    same.std().backward()  # std is 0 where all values are equal: PyTorch takes the gradient as 0
    assert values(same.grad).tolist() == [0.0, 0.0, 0.0]


# ---- autograd ------------------------------------------------------------------------------------


def test_autograd_grad_returns_a_tuple_and_allows_unused(lib):
    x = lib.tensor(3.0, requires_grad=True)
    unused = lib.tensor(1.0, requires_grad=True)
    result = lib.autograd.grad(x**2, [x, unused], allow_unused=True)
    assert type(result) is tuple and result[0].item() == 6.0 and result[1] is None
    v = lib.tensor([1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad(v * v, v, grad_outputs=lib.tensor([1.0, 0.5]))
    assert values(g).tolist() == [2.0, 2.0]
    ga, gb = lib.autograd.grad([(v * 2).sum(), (v * 3).sum()], [v, v])  # several outputs: summed
    assert values(ga).tolist() == [5.0, 5.0] and values(gb).tolist() == [5.0, 5.0]
    assert x.grad is None and v.grad is None


def test_autograd_backward_with_several_tensors_and_grad_tensors(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.backward([x * 2, x * x], [lib.ones(2), lib.tensor([1.0, 0.5])])
    assert values(x.grad).tolist() == [4.0, 4.0]  # 2 + 2x·[1, ½]
    lib.autograd.backward((x**2).sum())
    assert values(x.grad).tolist() == [6.0, 8.0]


def _scale_and_sign(lib):
    class ScaleAndSign(lib.autograd.Function):
        """out = a * b * scale (b may need no grad); also a sign mask nobody differentiates."""

        @staticmethod
        def forward(ctx, a, b, scale):
            ctx.save_for_backward(a, b)
            ctx.scale = scale
            ctx.seen_needs = ctx.needs_input_grad
            out = a * b * scale
            sign = (out > 0).to(a.dtype)
            ctx.mark_non_differentiable(sign)
            return out, sign

        @staticmethod
        def backward(ctx, grad_out, grad_sign):
            a, b = ctx.saved_tensors
            grad_a = grad_out * b * ctx.scale if ctx.needs_input_grad[0] else None
            grad_b = grad_out * a * ctx.scale if ctx.needs_input_grad[1] else None
            return grad_a, grad_b, None  # None for the number `scale`

    return ScaleAndSign


def test_custom_function(lib):
    ScaleAndSign = _scale_and_sign(lib)
    a = lib.tensor([1.0, -2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0])
    out, sign = ScaleAndSign.apply(a, b, 2.0)
    assert values(out).tolist() == [6.0, -16.0] and values(sign).tolist() == [1.0, 0.0]
    assert out.requires_grad and not sign.requires_grad  # mark_non_differentiable
    assert out.grad_fn.name() == "ScaleAndSignBackward"
    assert out.grad_fn.next_functions[1] == (None, 0)
    out.sum().backward()
    assert values(a.grad).tolist() == [6.0, 8.0]
    b.requires_grad_()
    out, _ = ScaleAndSign.apply(a, b, 2.0)
    assert out.grad_fn.seen_needs == (True, True, False)  # needs_input_grad, one per input


def test_custom_function_passes_gradcheck():
    ScaleAndSign = _scale_and_sign(ag)
    a = ag.tensor([1.0, -2.0], dtype=ag.float64, requires_grad=True)
    b = ag.tensor([3.0, 4.0], dtype=ag.float64, requires_grad=True)
    assert ag.autograd.gradcheck(lambda a, b: ScaleAndSign.apply(a, b, 2.0)[0], (a, b))


class SquareNotTwiceDifferentiable(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x.detach()  # detach() hides x from the second derivative


class SquareWithWrongGradient(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x  # should be 2x


def test_gradcheck_and_gradgradcheck():
    x = ag.tensor([0.3, -1.2, 2.0], dtype=ag.float64, requires_grad=True)
    y = ag.tensor([1.5, 0.5, -0.7], dtype=ag.float64, requires_grad=True)
    f = lambda x, y: (x * y.sin()).exp()
    assert ag.autograd.gradcheck(f, (x, y), eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True)
    assert ag.autograd.gradgradcheck(lambda x, y: (x * y.sin()).exp(), (x, y))
    assert ag.autograd.gradcheck(SquareNotTwiceDifferentiable.apply, (x,))


def test_gradcheck_failing_case_raises_or_returns_false():
    x = ag.tensor([0.3, -1.2, 2.0], dtype=ag.float64, requires_grad=True)
    assert (
        ag.autograd.gradcheck(SquareWithWrongGradient.apply, (x,), raise_exception=False) is False
    )
    with pytest.raises(RuntimeError, match="input 0"):
        ag.autograd.gradcheck(SquareWithWrongGradient.apply, (x,))


def test_gradgradcheck_failing_case_returns_false():
    x = ag.tensor([0.3, -1.2, 2.0], dtype=ag.float64, requires_grad=True)
    check = ag.autograd.gradgradcheck
    assert check(SquareNotTwiceDifferentiable.apply, (x,), raise_exception=False) is False


def test_gradcheck_agrees_with_pytorchs(torch):
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)

    class Wrong(torch.autograd.Function):
        forward = staticmethod(SquareWithWrongGradient.forward)
        backward = staticmethod(SquareWithWrongGradient.backward)

    assert torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False


def test_anomaly_mode_switches():
    assert not ag.autograd.is_anomaly_enabled()
    with ag.autograd.detect_anomaly():
        assert ag.autograd.is_anomaly_enabled()
    assert not ag.autograd.is_anomaly_enabled()
    ag.autograd.set_detect_anomaly(True)
    assert ag.autograd.is_anomaly_enabled()
    ag.autograd.set_detect_anomaly(False)
    assert not ag.autograd.is_anomaly_enabled()
    assert ag.detect_anomaly is ag.autograd.detect_anomaly


def test_grad_mode_functions(lib):
    assert lib.is_grad_enabled()
    with lib.no_grad():
        assert not lib.is_grad_enabled()
        with lib.enable_grad():
            assert lib.is_grad_enabled()
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()


# ---- graph introspection -------------------------------------------------------------------------


def test_grad_fn_names(lib):
    a = lib.tensor([[1.0, 2.0]], requires_grad=True)
    b = lib.tensor([[3.0], [4.0]], requires_grad=True)
    assert (a * 2).grad_fn.name() == "MulBackward0"
    assert (a + 2).grad_fn.name() == "AddBackward0"
    assert a.sum().grad_fn.name() == "SumBackward0"
    assert (a @ b).grad_fn.name() == "MmBackward0"
    assert (a - 1).grad_fn.name() == "SubBackward0"
    assert a.exp().grad_fn.name() == "ExpBackward0"


def test_next_functions_structure(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0])  # needs no grad
    y = x * c
    z = (y + x).sum()
    add = z.grad_fn.next_functions[0][0]
    assert z.grad_fn.name() == "SumBackward0" and len(z.grad_fn.next_functions) == 1
    assert add.name() == "AddBackward0"
    (mul, mul_nr), (acc, acc_nr) = add.next_functions
    assert mul is y.grad_fn and mul_nr == 0 and mul.name() == "MulBackward0"
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and acc_nr == 0
    assert mul.next_functions[1] == (None, 0)  # c needs no grad
    assert mul.next_functions[0][0] is acc  # one AccumulateGrad per leaf
    assert acc.next_functions == ()


def test_saved_tensors_are_readable_until_freed(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    assert values(y.grad_fn._saved_self).tolist() == [1.0, 2.0]
    assert values(y.grad_fn._saved_other).tolist() == [3.0, 4.0]
    e = x.exp()
    np.testing.assert_allclose(values(e.grad_fn._saved_result), np.exp([1.0, 2.0]), rtol=1e-6)
    assert e.grad_fn._saved_result.shape == (2,)
    (y.sum() + e.sum()).backward()
    for node, attr in (
        (y.grad_fn, "_saved_self"),
        (y.grad_fn, "_saved_other"),
        (e.grad_fn, "_saved_result"),
    ):
        with pytest.raises(RuntimeError):
            getattr(node, attr)


# ---- printing and the swap-the-import test -------------------------------------------------------

SCRIPT = """
import torch

torch.manual_seed(0)
x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
w = torch.tensor([0.25, -1.5], requires_grad=True)
b = torch.zeros(2, requires_grad=True)
h = torch.tanh(x @ w + b)
loss = (h ** 2).mean() + x.exp().sum() * 0.01 - torch.sigmoid(w).prod()
loss.backward()
print(h)
print(loss)
print(x.grad)
print(w.grad)
print(b.grad)
print(loss.item() > 0, x.shape, x.dtype, h.grad_fn.name())
print(x.max(dim=1))
print(torch.arange(6).reshape(2, 3).T)
print(torch.linspace(0, 1, 3, dtype=torch.float64))
print(torch.eye(2) * 1e-6, torch.tensor([1, 2, 3]) > 1)
with torch.no_grad():
    w -= 0.1 * w.grad
print(w)
"""


def _printed(source):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<script>", "exec"), {})
    return out.getvalue()


def test_swap_the_import(torch):
    """A PyTorch script prints the same text after `import autograd_lab as torch`."""
    theirs = _printed(SCRIPT)  # "torch.Size([2, 2]) torch.float32" in both
    ours = _printed(SCRIPT.replace("import torch", "import autograd_lab as torch"))
    assert ours == theirs


def test_printing_like_pytorch():
    assert repr(ag.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(ag.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(ag.tensor(3.0, requires_grad=True)) == "tensor(3., requires_grad=True)"
    assert repr(ag.tensor([1, 2]) * 2) == "tensor([2, 4])"
    assert repr(ag.tensor([1.0], dtype=ag.float64)) == "tensor([1.], dtype=torch.float64)"
    assert repr(ag.tensor([2.0], requires_grad=True) * 2) == "tensor([4.], grad_fn=<MulBackward0>)"
    node = (ag.tensor([2.0], requires_grad=True) * 2).grad_fn
    assert repr(node) == f"<MulBackward0 object at {hex(id(node))}>"


# ---- numpy's argument names, which PyTorch accepts too -------------------------------------------
NUMPY_NAMED_CALLS = {
    "sum axis keepdims": lambda lib, x: x.sum(axis=1, keepdims=True),
    "sum axis tuple": lambda lib, x: lib.sum(x, axis=(0, 1)),
    "mean axis": lambda lib, x: x.mean(axis=0),
    "amax axis keepdims": lambda lib, x: lib.amax(x, axis=1, keepdims=True),
    "max axis (values)": lambda lib, x: x.max(axis=1).values,
    "argmax axis": lambda lib, x: x.argmax(axis=1),
    "std axis": lambda lib, x: x.std(axis=1),
    "softmax axis": lambda lib, x: x.softmax(axis=1),
    "cat axis": lambda lib, x: lib.cat([x, x], axis=0),
    "stack axis": lambda lib, x: lib.stack([x, x], axis=1),
    "unsqueeze axis": lambda lib, x: x.unsqueeze(axis=0),
    "nelement": lambda lib, x: lib.tensor(x.nelement()),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", NUMPY_NAMED_CALLS)
def test_numpy_argument_names_work_as_in_pytorch(name, torch):
    call = NUMPY_NAMED_CALLS[name]
    x = np.arange(6.0).reshape(2, 3) - 2.5
    ours, theirs = call(ag, ag.tensor(x)), call(torch, torch.tensor(x))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    assert tuple(ours.shape) == tuple(theirs.shape)


def test_a_dim_given_twice_by_both_names_is_refused():
    with pytest.raises(TypeError, match="both dim= and its numpy name axis="):
        ag.ones(2, 3).sum(dim=0, axis=1)


# ---- creation with size=, empty_like, and the legacy Tensor.type ---------------------------------
CREATION_CALLS = {
    "zeros size=": lambda lib: lib.zeros(size=(2, 3)),
    "ones size=": lambda lib: lib.ones(size=(4,), dtype=lib.float64),
    "empty size=": lambda lib: lib.empty(size=(1, 2)).shape,
    "empty_like": lambda lib: lib.empty_like(lib.ones(2, 3)).shape,
    "randn size=, seeded": lambda lib: (lib.manual_seed(3), lib.randn(size=(2, 17)))[1],
    "rand size=, seeded": lambda lib: (lib.manual_seed(3), lib.rand(size=(5,)))[1],
    "type()": lambda lib: lib.ones(2).type(),
    "type() of int64": lambda lib: lib.arange(3).type(),
    "type() of bool": lambda lib: (lib.ones(2) > 0).type(),
    "type(dtype)": lambda lib: lib.arange(3).type(lib.float64),
    "type(name)": lambda lib: lib.ones(2).type("torch.LongTensor"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", CREATION_CALLS)
def test_creation_and_type_as_in_pytorch(name, torch):
    ours, theirs = CREATION_CALLS[name](ag), CREATION_CALLS[name](torch)
    if isinstance(theirs, torch.Tensor):
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    else:
        assert (tuple(ours) if name.startswith("empty") else ours) == (
            tuple(theirs) if name.startswith("empty") else theirs
        )


def test_a_shape_given_twice_is_refused():
    with pytest.raises(TypeError, match="given twice"):
        ag.zeros(2, size=(2,))
    with pytest.raises(TypeError, match="unknown tensor type 'torch.FancyTensor'"):
        ag.ones(2).type("torch.FancyTensor")
