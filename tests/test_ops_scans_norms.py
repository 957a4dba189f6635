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
    """The call's value, node name and the input's gradient for a random upstream gradient.
    (A call whose name says `dtype` goes through float32: its gradient is float32's too.)"""
    rtol = 1e-6 if "dtype" in name else 1e-12
    x, t = (lib.tensor(data, dtype=lib.float64, requires_grad=True) for lib in (ag, torch))
    out, expected = calls[name](ag, x), calls[name](torch, t)
    assert_same(out, expected)
    assert out.grad_fn.name() == type(expected.grad_fn).__name__
    upstream = np.random.default_rng(0).standard_normal(tuple(expected.shape))
    out.backward(ag.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=rtol * 1e-2)


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


# ---- norms: Tensor.norm, torch.norm, torch.linalg.vector_norm / matrix_norm / norm ----------------

INF = float("inf")
A = [[1.0, -3.0, 0.0], [2.0, 0.5, -3.0]]
NORM_CALLS = {
    "x.norm()": lambda lib, x: x.norm(),
    "norm p=1 dim": lambda lib, x: x.norm(p=1, dim=1),
    "norm 'fro' dim keepdim": lambda lib, x: lib.norm(x, "fro", dim=0, keepdim=True),
    "norm 'fro' two dims": lambda lib, x: lib.norm(x, p="fro", dim=(0, 1)),
    "norm p=3": lambda lib, x: x.norm(3),
    "norm p=inf dim": lambda lib, x: x.norm(INF, dim=-1),
    "norm positional dim keepdim": lambda lib, x: lib.norm(x, 1, 1, True),
    "vector_norm": lambda lib, x: lib.linalg.vector_norm(x),
    "vector_norm ord=-inf": lambda lib, x: lib.linalg.vector_norm(x, ord=-INF, dim=0),
    "vector_norm ord=0.5": lambda lib, x: lib.linalg.vector_norm(x, ord=0.5, dim=1),
    "vector_norm ord=-1 keepdim": lambda lib, x: lib.linalg.vector_norm(x, -1, (0, 1), True),
    "vector_norm ord=1.5": lambda lib, x: lib.linalg.vector_norm(x, ord=1.5),
    "vector_norm dtype=": lambda lib, x: lib.linalg.vector_norm(x.float(), dtype=lib.float64),
    "linalg.norm": lambda lib, x: lib.linalg.norm(x),
    "linalg.norm ord=1 (matrix)": lambda lib, x: lib.linalg.norm(x, 1),
    "linalg.norm ord=inf (matrix)": lambda lib, x: lib.linalg.norm(x, INF),
    "linalg.norm ord=-1 keepdim": lambda lib, x: lib.linalg.norm(x, -1, keepdim=True),
    "linalg.norm 'fro'": lambda lib, x: lib.linalg.norm(x, "fro"),
    "linalg.norm of a vector": lambda lib, x: lib.linalg.norm(x[0], INF),
    "linalg.norm one dim": lambda lib, x: lib.linalg.norm(x, 3, dim=1),
    "matrix_norm": lambda lib, x: lib.linalg.matrix_norm(x),
    "matrix_norm ord=1": lambda lib, x: lib.linalg.matrix_norm(x, 1),
    "matrix_norm ord=inf, dims swapped": lambda lib, x: lib.linalg.matrix_norm(x, INF, dim=(1, 0)),
    "matrix_norm batch dims": lambda lib, x: lib.linalg.matrix_norm(
        x.reshape(1, 2, 3) * lib.tensor([[[1.0]], [[2.0]]], dtype=x.dtype), -INF, dim=(0, 2)
    ),
    "2-norm at zero: gradient 0": lambda lib, x: (x * 0).norm(dim=1),
    "2-norm of one zero row": lambda lib, x: (x * lib.tensor([[0.0], [1.0]], dtype=x.dtype)).norm(
        dim=1
    ),
    "3-norm at zero": lambda lib, x: lib.linalg.vector_norm(x * 0, 3),
    "inf-norm ties share": lambda lib, x: lib.linalg.vector_norm(x, INF),  # -3 twice
    "amax ties share": lambda lib, x: x.abs().amax(),
    "amin dims": lambda lib, x: x.amin(dim=(0, 1)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", NORM_CALLS)
def test_norms_and_their_gradients_as_in_pytorch(name, torch):
    check_gradients(NORM_CALLS, name, torch, A)


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, -1, INF, -INF])
def test_vector_norm_gradcheck(ord):
    x = ag.tensor([[1.5, -2.0, 0.7], [0.3, 2.5, -1.2]], dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda t: ag.linalg.vector_norm(t, ord, dim=1), (x,))
    if ord not in (1, INF, -INF):  # those are piecewise linear: no second derivative to check
        assert gradgradcheck(lambda t: ag.linalg.vector_norm(t, ord, dim=1), (x,))


def test_the_count_norm_has_no_gradient(torch):
    ours, theirs = ag.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    ag.linalg.vector_norm(ours, ord=0).backward()
    torch.linalg.vector_norm(theirs, ord=0).backward()
    assert ours.grad is None and theirs.grad is None


NORM_VALUE_CALLS = {
    "ord=0 counts nonzeros": lambda lib: lib.linalg.vector_norm(lib.tensor([0.0, 2, -3]), ord=0),
    "ord=-1 with a zero": lambda lib: lib.linalg.vector_norm(lib.tensor([0.0, 2.0]), ord=-1),
    "0-d": lambda lib: lib.linalg.vector_norm(lib.tensor(-3.0), dim=0),
    "empty 2-norm": lambda lib: lib.linalg.vector_norm(lib.ones(0)),
    "empty rows, inf": lambda lib: lib.linalg.vector_norm(lib.ones(0, 3), ord=INF, dim=1),
    "float64 stays float64": lambda lib: lib.ones(2, dtype=lib.float64).norm(),
    "norm dtype=": lambda lib: lib.ones(2, 3).norm(dtype=lib.float64),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", NORM_VALUE_CALLS)
def test_norm_values_as_in_pytorch(name, torch):
    check_values(NORM_VALUE_CALLS, name, torch)


NORM_ERRORS = {  # call -> (PyTorch's error class, words our message must contain)
    "norm of an int tensor": (lambda lib: lib.tensor([1, 2]).norm(), RuntimeError, "x.float()"),
    "vector_norm of ints": (
        lambda lib: lib.linalg.vector_norm(lib.tensor([1, 2])),
        RuntimeError,
        "floating point",
    ),  # fmt: skip
    "narrowing dtype": (
        lambda lib: lib.linalg.vector_norm(lib.ones(2, dtype=lib.float64), dtype=lib.float32),
        RuntimeError,
        "narrowing",
    ),  # fmt: skip
    "int dtype": (
        lambda lib: lib.linalg.vector_norm(lib.ones(2), dtype=lib.int64),
        RuntimeError,
        "floating point",
    ),  # fmt: skip
    "inf norm of empty": (
        lambda lib: lib.linalg.vector_norm(lib.ones(0), ord=INF),
        RuntimeError,
        "empty",
    ),  # fmt: skip
    "-1 norm over an empty dim": (
        lambda lib: lib.linalg.vector_norm(lib.ones(0, 3), -1, dim=0),
        RuntimeError,
        "empty",
    ),  # fmt: skip
    "'fro' in vector_norm": (
        lambda lib: lib.linalg.vector_norm(lib.ones(2), ord="fro"),
        TypeError,
        "ord",
    ),  # fmt: skip
    "matrix_norm of a vector": (
        lambda lib: lib.linalg.matrix_norm(lib.ones(3)),
        RuntimeError,
        "at least 2 dimensions",
    ),  # fmt: skip
    "matrix_norm ord=3": (
        lambda lib: lib.linalg.matrix_norm(lib.ones(2, 3), ord=3),
        RuntimeError,
        "not supported",
    ),  # fmt: skip
    "matrix_norm same dims": (
        lambda lib: lib.linalg.matrix_norm(lib.ones(2, 3), dim=(0, 0)),
        RuntimeError,
        "different",
    ),  # fmt: skip
    "linalg.norm 3-D with ord": (
        lambda lib: lib.linalg.norm(lib.ones(2, 3, 4), ord=1),
        RuntimeError,
        "1D or 2D",
    ),  # fmt: skip
    "norm 'fro' over three dims": (
        lambda lib: lib.norm(lib.ones(2, 3, 4), "fro", (0, 1, 2)),
        RuntimeError,
        "2-tuple",
    ),  # fmt: skip
    "norm p='abc'": (lambda lib: lib.norm(lib.ones(2, 3), p="abc"), RuntimeError, "not supported"),
    "amax of an empty tensor": (lambda lib: lib.ones(0).amax(), RuntimeError, "dim"),
    "amax over an empty dim": (lambda lib: lib.ones(0, 3).amax(0), IndexError, "size 0"),
}


@pytest.mark.parametrize("name", NORM_ERRORS)
def test_norm_errors_as_in_pytorch(name, lib):
    call, error, words = NORM_ERRORS[name]
    with pytest.raises(error) as raised:
        call(lib)
    if lib is ag:
        assert words in str(raised.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ag.norm(ag.ones(2, 3), p="nuc"),
        lambda: ag.linalg.matrix_norm(ag.ones(2, 3), ord="nuc"),
        lambda: ag.linalg.norm(ag.ones(2, 3), ord=2),
        lambda: ag.linalg.matrix_norm(ag.ones(2, 3), ord=-2),
    ],
)
def test_norms_that_need_an_svd_are_refused_by_name(call):
    with pytest.raises(NotImplementedError, match="singular values"):
        call()


# ---- histc, histogram, bincount ----------------------------------------------------------------

ON_EDGES = [1.0, 2.0, 1.0, 4.0, 2.5, 7.0, 0.25, 3.75]  # values on bin edges, and max itself
COUNTING_CALLS = {
    "histc min=max=0 uses the data's range": lambda lib: lib.histc(lib.tensor(ON_EDGES), bins=4),
    "histc min, max": lambda lib: lib.tensor(ON_EDGES).histc(6, 0, 3),
    "histc positional float64": lambda lib: lib.histc(
        lib.tensor(ON_EDGES, dtype=lib.float64), 5, 1, 4
    ),  # fmt: skip
    "histc one value": lambda lib: lib.histc(lib.tensor([2.0, 2.0]), bins=3),
    "histc empty": lambda lib: lib.histc(lib.ones(0), bins=3),
    "histc nan outside a given range": lambda lib: lib.histc(
        lib.tensor([1.0, float("nan")]), 2, 0, 2
    ),  # fmt: skip
    "histc min=max=3 uses the data": lambda lib: lib.histc(lib.tensor(ON_EDGES), 4, min=3, max=3),
    "histogram bins=4": lambda lib: tuple(lib.histogram(lib.tensor(ON_EDGES), bins=4)),
    "histogram range=": lambda lib: tuple(lib.histogram(lib.tensor(ON_EDGES), 7, range=(0.1, 5.3))),
    "histogram float64 of 2-D": lambda lib: tuple(
        lib.tensor(ON_EDGES, dtype=lib.float64).reshape(2, 4).histogram(bins=3)
    ),
    "histogram one value": lambda lib: tuple(lib.histogram(lib.tensor([2.0, 2.0]), bins=2)),
    "histogram empty": lambda lib: tuple(lib.histogram(lib.ones(0), bins=2)),
    "histogram tensor bins": lambda lib: tuple(
        lib.histogram(lib.tensor(ON_EDGES), bins=lib.tensor([0.0, 1.5, 2.0, 4.0]))
    ),
    "histogram weight=": lambda lib: tuple(
        lib.histogram(lib.tensor([1.0, 2, 5]), 3, range=(0.0, 4.0), weight=lib.tensor([1.0, 2, 3]))
    ),
    ".hist and .bin_edges": lambda lib: (
        lib.histogram(lib.tensor(ON_EDGES), 3).hist,
        lib.histogram(lib.tensor(ON_EDGES), 3).bin_edges,
    ),
    "bincount": lambda lib: lib.bincount(lib.tensor([1, 3, 1])),
    "bincount minlength": lambda lib: lib.tensor([1, 3, 1]).bincount(minlength=6),
    "bincount float32 weights": lambda lib: lib.bincount(
        lib.tensor([1, 3, 1]), weights=lib.tensor([0.5, 1.0, 2.0])
    ),
    "bincount int weights give float64": lambda lib: lib.bincount(
        lib.tensor([1, 3, 1]), lib.tensor([1, 1, 2])
    ),
    "bincount int32": lambda lib: lib.bincount(lib.tensor([0, 2], dtype=lib.int32)),
    "bincount empty": lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", COUNTING_CALLS)
def test_counting_as_in_pytorch(name, torch):
    check_values(COUNTING_CALLS, name, torch, exact=True)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histograms_of_random_data_equal_pytorch_bit_for_bit(dtype, torch):
    # a value's bin and the bin edges use PyTorch's float arithmetic: no count may differ
    rng = np.random.default_rng(0)
    for trial in range(40):
        data = (
            rng.standard_normal(int(rng.integers(1, 300))) * 10.0 ** rng.integers(-3, 4)
        ).astype(dtype)
        if trial % 2:
            data = np.round(data * 4) / 4  # many values exactly on edges
        bins = int(rng.integers(1, 80))
        for low, high in [(0, 0), (-1.3, 2.7)]:
            ours, theirs = (
                ag.histc(ag.tensor(data), bins, low, high),
                torch.histc(torch.tensor(data), bins, low, high),
            )
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        ours, theirs = (
            ag.histogram(ag.tensor(data), bins),
            torch.histogram(torch.tensor(data), bins),
        )
        np.testing.assert_array_equal(ours.bin_edges.numpy(), theirs.bin_edges.numpy())
        np.testing.assert_array_equal(ours.hist.numpy(), theirs.hist.numpy())


@pytest.mark.oracle
def test_histogram_density_as_in_pytorch(torch):
    data, weights = [1.0, 2.0, 5.0, 2.5, 0.5], [1.0, 2.0, 3.0, 0.5, 1.5]
    ours = ag.histogram(ag.tensor(data), 4, weight=ag.tensor(weights), density=True)
    theirs = torch.histogram(torch.tensor(data), 4, weight=torch.tensor(weights), density=True)
    # PyTorch divides by a total it sums in its own order: equal to rounding, not bit for bit
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(ours.bin_edges.numpy(), theirs.bin_edges.numpy())


def test_histogram_prints_like_pytorchs_named_tuple():
    result = ag.histogram(ag.tensor([1.0, 2.0]), 2)
    assert repr(result).startswith("torch.return_types.histogram(\nhist=tensor([1., 1.])")
    hist, bin_edges = result
    assert hist is result.hist and bin_edges is result.bin_edges


def test_counts_record_no_gradient_as_in_pytorch(lib):
    x = lib.tensor([1.0, 2.0, 5.0], requires_grad=True)
    assert not lib.histc(x, 3).requires_grad  # histc: a plain tensor
    hist, edges = lib.histogram(x, 3)  # histogram: a node that refuses to go backward
    assert hist.requires_grad and type(hist.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for"):
        hist.sum().backward()
    counted = lib.bincount(lib.tensor([0, 2, 2]), weights=x)
    assert type(counted.grad_fn).__name__ == "NotImplemented"


COUNTING_ERRORS = {  # call -> (PyTorch's error class, words our message must contain)
    "histc of ints": (lambda lib: lib.histc(lib.tensor([1, 2]), 3), NotImplementedError, "float"),
    "histc bins=0": (lambda lib: lib.histc(lib.ones(2), bins=0), RuntimeError, "bins must be > 0"),
    "histc nan range": (
        lambda lib: lib.histc(lib.tensor([1.0, float("nan")]), 3),
        RuntimeError,
        "not finite",
    ),  # fmt: skip
    "histc inf range": (
        lambda lib: lib.histc(lib.tensor([1.0, float("inf")]), 3),
        RuntimeError,
        "not finite",
    ),  # fmt: skip
    "histc min > max": (
        lambda lib: lib.histc(lib.ones(2), 3, min=3, max=1),
        RuntimeError,
        "max must be larger than min",
    ),  # fmt: skip
    "histogram of ints": (
        lambda lib: lib.histogram(lib.tensor([1, 2]), 3),
        NotImplementedError,
        "float",
    ),  # fmt: skip
    "bincount of negatives": (
        lambda lib: lib.bincount(lib.tensor([-1, 3])),
        RuntimeError,
        "non-negative",
    ),  # fmt: skip
    "bincount of 2-D": (lambda lib: lib.bincount(lib.tensor([[1, 3]])), RuntimeError, "1-d"),
    "bincount of floats": (
        lambda lib: lib.bincount(lib.tensor([1.0])),
        NotImplementedError,
        "x.long()",
    ),  # fmt: skip
    "bincount of bools": (
        lambda lib: lib.bincount(lib.tensor([True])),
        NotImplementedError,
        "bool",
    ),  # fmt: skip
    "bincount weights length": (
        lambda lib: lib.bincount(lib.tensor([1, 3]), lib.tensor([1.0])),
        RuntimeError,
        "same length",
    ),  # fmt: skip
    "bincount minlength < 0": (
        lambda lib: lib.bincount(lib.tensor([1]), minlength=-1),
        RuntimeError,
        "minlength",
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", COUNTING_ERRORS)
def test_counting_errors_as_in_pytorch(name, lib):
    call, error, words = COUNTING_ERRORS[name]
    with pytest.raises(error) as raised:
        call(lib)
    if lib is ag:
        assert words in str(raised.value)


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
def test_counting_on_cuda_is_refused_by_name():
    x = ag.tensor([1.0, 2.0]).to("cuda")
    for call, name in [(lambda: x.histc(2), "histc"), (lambda: ag.histogram(x, 2), "histogram"),
                       (lambda: ag.bincount(x.long()), "bincount")]:  # fmt: skip
        with pytest.raises(NotImplementedError, match=f"{name} of a CUDA tensor.*x.cpu"):
            call()


# ---- out= ------------------------------------------------------------------------------------------

OUT_CALLS = {  # (call(lib, out), the out tensor's maker)
    "cumsum": (
        lambda lib, o: lib.cumsum(lib.tensor([1.0, 2.0, 3.0]), 0, out=o),
        lambda lib: lib.empty(3),
    ),
    "cumprod": (
        lambda lib, o: lib.cumprod(lib.tensor([1, 2, 3]), 0, out=o),
        lambda lib: lib.empty(3, dtype=lib.int64),
    ),  # fmt: skip
    "round decimals": (
        lambda lib, o: lib.round(lib.tensor([1.25, 2.5]), decimals=1, out=o),
        lambda lib: lib.empty(2),
    ),  # fmt: skip
    "a record's function: ceil": (
        lambda lib, o: lib.ceil(lib.tensor([1.5, -0.5]), out=o),
        lambda lib: lib.empty(2),
    ),  # fmt: skip
    "amax": (
        lambda lib, o: lib.amax(lib.tensor([[1.0, 5.0], [3.0, 2.0]]), 1, out=o),
        lambda lib: lib.empty(2),
    ),  # fmt: skip
    "norm": (lambda lib, o: lib.norm(lib.tensor([3.0, 4.0]), out=o), lambda lib: lib.empty(())),
    "linalg.vector_norm": (
        lambda lib, o: lib.linalg.vector_norm(lib.ones(2, 2), 1, 0, out=o),
        lambda lib: lib.empty(2),
    ),  # fmt: skip
    "linalg.matrix_norm": (
        lambda lib, o: lib.linalg.matrix_norm(lib.ones(2, 2), 1, out=o),
        lambda lib: lib.empty(()),
    ),  # fmt: skip
    "linalg.norm": (
        lambda lib, o: lib.linalg.norm(lib.ones(2, 2), out=o),
        lambda lib: lib.empty(()),
    ),
    "histc": (
        lambda lib, o: lib.histc(lib.tensor([1.0, 2.0, 2.0]), 2, out=o),
        lambda lib: lib.empty(2),
    ),  # fmt: skip
    "an empty out is resized": (
        lambda lib, o: lib.cumsum(lib.ones(2, 2), 1, out=o),
        lambda lib: lib.empty(0),
    ),  # fmt: skip
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", OUT_CALLS)
def test_out_as_in_pytorch(name, torch):
    call, make = OUT_CALLS[name]
    ours, theirs = make(ag), make(torch)
    got, expected = call(ag, ours), call(torch, theirs)
    assert got is ours and expected is theirs
    assert_same(ours, theirs)


def test_out_with_a_gradient_is_refused(lib):
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        lib.cumsum(x, 0, out=lib.empty(3))
    with lib.no_grad():  # nothing is recorded: allowed
        assert lib.cumsum(x, 0, out=lib.empty(3)).tolist() == [1.0, 2.0, 3.0]


def test_out_of_another_dtype_is_refused(lib):
    with pytest.raises(RuntimeError, match="Found dtype"):
        lib.ceil(lib.tensor([1.5]), out=lib.empty(1, dtype=lib.float64))


def test_out_of_another_shape_is_resized_with_pytorchs_warning(lib):
    out = lib.empty(2)
    with pytest.warns(UserWarning, match="resized"):
        lib.cumsum(lib.ones(3), 0, out=out)
    assert tuple(out.shape) == (3,) and out.tolist() == [1.0, 2.0, 3.0]


# ---- isinf, isposinf, isneginf, nan_to_num, count_nonzero, diff ------------------------------------

SPECIAL = [1.0, INF, -INF, float("nan"), 0.0, -2.5]
EXTRA_CALLS = {
    "isinf": lambda lib: lib.isinf(lib.tensor(SPECIAL)),
    "isposinf": lambda lib: lib.tensor(SPECIAL).isposinf(),
    "isneginf": lambda lib: lib.isneginf(lib.tensor(SPECIAL, dtype=lib.float64)),
    "isinf of ints": lambda lib: lib.isinf(lib.tensor([1, 2])),
    "nan_to_num": lambda lib: lib.nan_to_num(lib.tensor(SPECIAL)),
    "nan_to_num float64": lambda lib: lib.tensor(SPECIAL, dtype=lib.float64).nan_to_num(),
    "nan_to_num given": lambda lib: lib.nan_to_num(
        lib.tensor(SPECIAL), nan=2.0, posinf=1.0, neginf=-1.0
    ),  # fmt: skip
    "nan_to_num_": lambda lib: lib.tensor(SPECIAL).nan_to_num_(posinf=9.0),
    "nan_to_num of ints": lambda lib: lib.nan_to_num(lib.tensor([1, 2])),
    "count_nonzero": lambda lib: lib.count_nonzero(lib.tensor([[0, 1], [2, 0.5]])),
    "count_nonzero dim": lambda lib: lib.tensor([[0, 1], [2, 0.5]]).count_nonzero(dim=0),
    "count_nonzero dims": lambda lib: lib.count_nonzero(lib.tensor([[0, 1], [2, 0]]), (0, 1)),
    "diff": lambda lib: lib.diff(lib.tensor([[1.0, 4.0, 9.0], [2.0, 3.0, 7.0]])),
    "diff n=2": lambda lib: lib.tensor([[1.0, 4.0, 9.0], [2.0, 3.0, 7.0]]).diff(n=2, dim=1),
    "diff prepend append": lambda lib: lib.diff(
        lib.tensor([[1, 4, 9]]), dim=-1, prepend=lib.tensor([[0]]), append=lib.tensor([[10, 20]])
    ),
    "diff of bools": lambda lib: lib.diff(lib.tensor([True, False, False])),
    "diff too many times": lambda lib: lib.diff(lib.tensor([1.0, 2.0]), n=5),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", EXTRA_CALLS)
def test_extras_as_in_pytorch(name, torch):
    check_values(EXTRA_CALLS, name, torch, exact=True)


EXTRA_GRADIENT_CALLS = {
    "nan_to_num": lambda lib, x: lib.nan_to_num(x / (x - 1.5), posinf=3.0),  # x = 1.5: inf
    "diff": lambda lib, x: x.diff(dim=0),
    "diff n=2 prepend": lambda lib, x: lib.diff(x, 2, prepend=x[:, :1] * 3),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", EXTRA_GRADIENT_CALLS)
def test_extra_gradients_as_in_pytorch(name, torch):
    check_gradients(EXTRA_GRADIENT_CALLS, name, torch, [[1.5, -2.0, 0.5], [3.0, 1.5, -1.0]])


def test_diff_errors(lib):
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        lib.diff(lib.tensor(1.0))
    with pytest.raises(RuntimeError, match="non-negative"):
        lib.diff(lib.ones(3), n=-1)


# ---- var_mean, std_mean ------------------------------------------------------------------------------

TWO_STATISTICS = {
    "std_mean": lambda lib, x: lib.std_mean(x),
    "var_mean dim keepdim": lambda lib, x: lib.var_mean(x, 1, keepdim=True),
    "var_mean correction=0": lambda lib, x: lib.var_mean(x, dim=0, correction=0),
    "std_mean unbiased=False": lambda lib, x: lib.std_mean(x, unbiased=False),
    "std_mean of equal values": lambda lib, x: lib.std_mean(x * 0 + 1, 1),
    "var_mean two dims": lambda lib, x: lib.var_mean(x, (0, 1)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", TWO_STATISTICS)
def test_two_statistics_and_both_gradients_as_in_pytorch(name, torch):
    data = [[1.0, 4.0, 9.0], [2.0, 3.0, 7.0]]
    x = ag.tensor(data, dtype=ag.float64, requires_grad=True)
    t = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    ours, theirs = TWO_STATISTICS[name](ag, x), TWO_STATISTICS[name](torch, t)
    for mine, expected in zip(ours, theirs, strict=True):
        assert_same(mine, expected)
        assert mine.grad_fn.name() == type(expected.grad_fn).__name__
    # a gradient for both outputs: backward adds what each contributes
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(tuple(theirs[0].shape)) for _ in range(2)]
    sum(((o * ag.tensor(w)).sum() for o, w in zip(ours, weights)), ag.tensor(0.0)).backward()
    sum(
        ((o * torch.tensor(w)).sum() for o, w in zip(theirs, weights)), torch.tensor(0.0)
    ).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)


# ---- median ------------------------------------------------------------------------------------------

NAN = float("nan")
MEDIAN_DATA = {
    "nan, ties, all equal": ([[1.0, NAN, 3.0, NAN], [4.0, 2.0, 2.0, 1.0], [2.0, 2.0, 2.0, 2.0]], 1),
    "odd count with ties": ([[5.0, 1.0, 3.0, 3.0, 3.0]], 1),
    "even count: the lower middle": ([3.0, 1.0, 3.0, 2.0], 0),
    "keepdim over dim 0": ([[1.0, 2.0], [3.0, 4.0]], 0),
    "ints": ([[1, 3, 2]], -1),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", MEDIAN_DATA)
def test_median_values_and_indices_as_in_pytorch(name, torch):
    data, dim = MEDIAN_DATA[name]
    for keepdim in (False, True):
        ours, theirs = ag.tensor(data).median(dim, keepdim), torch.tensor(data).median(dim, keepdim)
        assert_same(ours.values, theirs.values, exact=True)
        assert_same(ours.indices, theirs.indices, exact=True)
    assert_same(ag.median(ag.tensor(data)), torch.median(torch.tensor(data)), exact=True)


MEDIAN_GRADIENTS = {
    "median(): ties share": lambda lib, x: (x * lib.tensor([[1.0, 0, 1], [1, 0, 1]])).median(),
    "median(dim)": lambda lib, x: x.median(1).values,
    "median(dim, keepdim)": lambda lib, x: lib.median(x, dim=0, keepdim=True).values,
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", MEDIAN_GRADIENTS)
def test_median_gradients_as_in_pytorch(name, torch):
    check_gradients(MEDIAN_GRADIENTS, name, torch, [[3.0, 1.0, 2.0], [0.5, 5.0, 4.0]])


MEDIAN_EDGES = {
    "0-d": lambda lib: tuple(lib.tensor(3.0).median(0)),
    "empty rows": lambda lib: tuple(lib.ones(0, 2).median(1)),
    "median() of nothing is nan": lambda lib: lib.tensor([]).median(),
    "nan median shares among the nans": lambda lib: lib.tensor([1.0, NAN, 2.0]).median(),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", MEDIAN_EDGES)
def test_median_edge_cases_as_in_pytorch(name, torch):
    check_values(MEDIAN_EDGES, name, torch, exact=True)


def test_median_over_an_empty_dim_is_an_index_error(lib):
    with pytest.raises(IndexError, match="non-zero size"):
        lib.ones(2, 0).median(1)


def test_median_prints_like_pytorchs_named_tuple():
    assert repr(ag.tensor([1, 3, 2]).median(0)).startswith("torch.return_types.median(")


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_median_gradcheck(dim):
    x = ag.tensor([[3.0, 1.0, 2.0], [0.5, 5.0, 4.0]], dtype=ag.float64, requires_grad=True)
    fn = (lambda t: t.median()) if dim is None else (lambda t: t.median(dim).values)
    assert gradcheck(fn, (x,))


# ---- logcumsumexp -------------------------------------------------------------------------------------

LOGCUMSUMEXP_CALLS = {
    "dim 1": lambda lib, x: x.logcumsumexp(1),
    "dim 0": lambda lib, x: lib.logcumsumexp(x, dim=0),
    "far apart: no overflow": lambda lib, x: (x * 400).logcumsumexp(-1),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", LOGCUMSUMEXP_CALLS)
def test_logcumsumexp_and_its_gradient_as_in_pytorch(name, torch):
    check_gradients(LOGCUMSUMEXP_CALLS, name, torch, [[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]])


def test_logcumsumexp_gradcheck():
    x = ag.tensor([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]], dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda t: t.logcumsumexp(1), (x,))
    assert gradgradcheck(lambda t: t.logcumsumexp(0), (x,))


def test_logcumsumexp_of_ints_is_refused(lib):
    with pytest.raises(RuntimeError):
        lib.tensor([1, 2]).logcumsumexp(0)
