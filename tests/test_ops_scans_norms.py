"""Scans, rounding, norms and counting (issue 13) as PyTorch has them: keywords, dtypes, dims,
edge cases and errors. The op table (tests/test_op_table.py) already checks each op's values and
gradients on random inputs; this file checks what random inputs never reach.

Each entry of a table below is one call written once for both libraries (`lib` is autograd_lab or
torch); the test runs it with each and compares values and dtypes (exactly where PyTorch's result
is exact), and, for the gradient tables, the gradients of `backward()` too.
"""

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck


def dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def assert_same(ours, theirs, exact=False):
    """Same shape, dtype and values (float: to float32's precision unless `exact`)."""
    assert tuple(ours.shape) == tuple(theirs.shape), "shape"
    assert dtype_name(ours) == dtype_name(theirs), "dtype"
    if exact or theirs.dtype.is_floating_point is False:
        np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))
    else:
        np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=1e-6, atol=1e-7)


def check_values(calls, name, torch, exact=False):
    ours, theirs = calls[name](ag), calls[name](torch)
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for mine, expected in zip(ours, theirs, strict=True):
            assert_same(mine, expected, exact)
    else:
        assert_same(ours, theirs, exact)


def check_gradients(calls, name, torch, data):
    """The call's value, node name and the input's gradient for a random upstream gradient."""
    x, t = (lib.tensor(data, dtype=lib.float64, requires_grad=True) for lib in (ag, torch))
    out, expected = calls[name](ag, x), calls[name](torch, t)
    assert_same(out, expected)
    assert out.grad_fn.name() == type(expected.grad_fn).__name__
    upstream = np.random.default_rng(0).standard_normal(tuple(expected.shape))
    out.backward(ag.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)


# ---- cumsum, cumprod ----------------------------------------------------------------------------

SCAN_CALLS = {
    "cumsum int64 stays int64": lambda lib: lib.tensor([[1, 2], [3, 4]]).cumsum(0),
    "cumsum bool counts as int64": lambda lib: lib.tensor([True, False, True]).cumsum(0),
    "cumsum int32 gives int64": lambda lib: lib.tensor([1, 2], dtype=lib.int32).cumsum(0),
    "cumprod int32 gives int64": lambda lib: lib.tensor([3, 2], dtype=lib.int32).cumprod(-1),
    "cumsum dtype=": lambda lib: lib.cumsum(lib.tensor([1, 2, 3]), dim=0, dtype=lib.float64),
    "cumprod dtype=": lambda lib: lib.tensor([0.5, 2.0]).cumprod(0, dtype=lib.float64),
    "cumsum negative dim": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]).cumsum(-2),
    "cumsum axis=": lambda lib: lib.cumsum(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1),
    "cumsum 0-d": lambda lib: lib.tensor(2.5).cumsum(0),
    "cumprod 0-d dim -1": lambda lib: lib.tensor(2.5).cumprod(-1),
    "cumsum empty": lambda lib: lib.ones(0, 3).cumsum(0),
    "cumprod empty dim": lambda lib: lib.ones(2, 0).cumprod(1),
    "cumprod zeros": lambda lib: lib.tensor([2.0, 0.0, 3.0, 0.0]).cumprod(0),
    "cumsum_ in place": lambda lib: lib.tensor([1.0, 2.0, 3.0]).cumsum_(0),
    "cumprod_ in place": lambda lib: lib.tensor([[1, 2], [3, 4]]).cumprod_(dim=1),
    "cumsum nan and inf": lambda lib: lib.tensor([1.0, float("inf"), float("nan"), 1.0]).cumsum(0),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", SCAN_CALLS)
def test_scans_as_in_pytorch(name, torch):
    check_values(SCAN_CALLS, name, torch, exact=True)


SCAN_GRADIENT_CALLS = {
    "cumsum": lambda lib, x: x.cumsum(1),
    "cumsum dim 0": lambda lib, x: lib.cumsum(x, dim=0),
    "cumsum dtype": lambda lib, x: x.float().cumsum(1, dtype=lib.float64),
    "cumprod": lambda lib, x: x.cumprod(1),
    "cumprod dim 0": lambda lib, x: lib.cumprod(x, 0),
}
WITH_ZEROS = {
    "no zeros": [[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]],
    "one zero": [[1.5, 0.0, 0.5], [3.0, 0.25, -1.0]],
    "zeros": [[0.0, 2.0, 0.0], [3.0, 0.0, 0.0]],
}


@pytest.mark.oracle
@pytest.mark.parametrize("data", WITH_ZEROS)
@pytest.mark.parametrize("name", SCAN_GRADIENT_CALLS)
def test_scan_gradients_as_in_pytorch(name, data, torch):
    check_gradients(SCAN_GRADIENT_CALLS, name, torch, WITH_ZEROS[data])


@pytest.mark.parametrize("data", WITH_ZEROS)
@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_gradcheck_at_zeros(data, dim):
    # PyTorch takes each product explicitly where an input is 0 (dividing would give 0/0)
    x = ag.tensor(WITH_ZEROS[data], dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(dim), (x,))
    assert gradgradcheck(lambda t: t.cumprod(dim), (x,))


def test_cumsum_needs_a_dim(lib):
    with pytest.raises(TypeError, match="dim"):
        lib.ones(3).cumsum()


def test_cumsum_dim_out_of_range(lib):
    with pytest.raises(IndexError, match="out of range"):
        lib.ones(2, 3).cumprod(2)


def test_cumsum_in_place_cannot_change_the_dtype(lib):
    with pytest.raises(RuntimeError):
        lib.tensor([1, 2]).cumsum_(0, dtype=lib.float32)


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_scans_on_cuda_equal_the_cpu(dtype):
    data = (np.arange(24).reshape(2, 3, 4) % 5 - 1).astype(dtype)
    x = ag.tensor(data)
    for dim in (0, 1, -1):
        for name in ("cumsum", "cumprod"):
            on_cuda = getattr(x.to("cuda").transpose(0, 2), name)(dim)
            on_cpu = getattr(x.transpose(0, 2), name)(dim)
            assert on_cuda.device.type == "cuda" and on_cuda.dtype == on_cpu.dtype
            np.testing.assert_array_equal(on_cuda.cpu().numpy(), on_cpu.numpy())


# ---- ceil, floor, round, trunc, frac, rsqrt -----------------------------------------------------

EDGES = [-2.5, -1.5, -0.5, -0.4, -0.0, 0.0, 0.4, 0.5, 1.5, 2.5, 2.675, 1e17, float("nan"),
         float("inf"), -float("inf")]  # fmt: skip
ROUNDING = ("ceil", "floor", "round", "trunc", "frac")


def _rounding_call(name, dtype):
    return lambda lib: getattr(lib.tensor(EDGES, dtype=getattr(lib, dtype)), name)()


ROUNDING_CALLS = {
    **{
        f"{name} {dtype}": _rounding_call(name, dtype)
        for name in ROUNDING
        for dtype in ("float32", "float64")
    },  # fmt: skip
    "fix is trunc": lambda lib: lib.fix(lib.tensor([-1.5, 1.5])),
    "round decimals=2": lambda lib: lib.round(lib.tensor([1.005, 2.675, -0.125, 1e-3]), decimals=2),
    "round decimals=3 float64": lambda lib: lib.tensor([1.0005, 2.6755], dtype=lib.float64).round(
        decimals=3
    ),
    "round decimals=-2": lambda lib: lib.tensor([1234.5, 1250.0, -151.0]).round(decimals=-2),
    "round_ decimals": lambda lib: lib.tensor([0.25, 0.35]).round_(decimals=1),
    "floor_ in place": lambda lib: lib.tensor([-0.5, 1.5]).floor_(),
    "ceil of int64 stays int64": lambda lib: lib.tensor([1, -2]).ceil(),
    "round of int32 stays int32": lambda lib: lib.tensor([1, -2], dtype=lib.int32).round(),
    "trunc of int64": lambda lib: lib.trunc(lib.tensor([3])),
    "rsqrt": lambda lib: lib.tensor([4.0, 0.25, 0.0, -1.0, float("inf")]).rsqrt(),
    "rsqrt of int64 is float32": lambda lib: lib.rsqrt(lib.tensor([1, 4])),
    "rsqrt_": lambda lib: lib.tensor([4.0, 16.0]).rsqrt_(),
    "frac_": lambda lib: lib.tensor([-1.25, 2.5]).frac_(),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ROUNDING_CALLS)
def test_rounding_as_in_pytorch(name, torch):
    ours, theirs = ROUNDING_CALLS[name](ag), ROUNDING_CALLS[name](torch)
    exact = not name.startswith("rsqrt")
    assert_same(ours, theirs, exact=exact)
    if exact:  # -0.0 too: the sign of a rounded zero is PyTorch's
        np.testing.assert_array_equal(np.signbit(to_numpy(ours)), np.signbit(to_numpy(theirs)))


ROUNDING_GRADIENT_CALLS = {
    **{name: lambda lib, x, name=name: getattr(x, name)() for name in (*ROUNDING, "rsqrt")},
    "round decimals": lambda lib, x: lib.round(x, decimals=1),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ROUNDING_GRADIENT_CALLS)
def test_rounding_gradients_as_in_pytorch(name, torch):
    check_gradients(ROUNDING_GRADIENT_CALLS, name, torch, [[0.3, 1.7, 2.5], [0.25, 3.5, 1.01]])


@pytest.mark.parametrize("name", ["ceil", "floor", "round", "trunc", "frac"])
def test_rounding_a_bool_tensor_is_not_implemented(lib, name):
    with pytest.raises(NotImplementedError):
        getattr(lib.tensor([True, False]), name)()


def test_rounding_messages_say_what_to_do():
    with pytest.raises(NotImplementedError, match=r"bool tensors.*x.float\(\).ceil\(\)"):
        ag.tensor([True]).ceil()
    with pytest.raises(NotImplementedError, match="fractional part"):
        ag.tensor([1, 2]).frac()


def test_round_with_decimals_refuses_integers(lib):
    with pytest.raises(NotImplementedError):
        lib.tensor([15, 25]).round(decimals=1)


def test_rounding_in_a_compiled_kernel_keeps_nan_inf_and_the_sign_of_zero():
    # Python's math.floor returns an int; a fused kernel must call a version that stays float
    def f(x):
        return x.ceil() * 2 + x.floor() * 3 + x.round() * 5 + x.trunc() * 7 + x.round(decimals=1)

    for dtype in (ag.float32, ag.float64):
        x = ag.tensor(EDGES, dtype=dtype)
        compiled = ag.compile(f)
        got = compiled(x)
        assert compiled.plan.groups, "nothing was fused: the test would not test the kernel"
        np.testing.assert_array_equal(got.numpy(), f(x).numpy())


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rounding_on_cuda_equals_the_cpu(dtype):
    x = ag.tensor(EDGES, dtype=getattr(ag, dtype))
    for name in ROUNDING:
        on_cuda, on_cpu = getattr(x.to("cuda"), name)(), getattr(x, name)()
        assert on_cuda.device.type == "cuda"
        np.testing.assert_array_equal(on_cuda.cpu().numpy(), on_cpu.numpy())
        np.testing.assert_array_equal(np.signbit(on_cuda.cpu().numpy()), np.signbit(on_cpu.numpy()))
    compiled = ag.compile(lambda t: t.floor() + t.ceil() * 2 + t.round() * 3 + t.trunc() * 4)
    got = compiled(x.to("cuda"))
    np.testing.assert_array_equal(got.cpu().numpy(), (x.floor() + x.ceil() * 2 + x.round() * 3 +
                                                       x.trunc() * 4).numpy())  # fmt: skip
