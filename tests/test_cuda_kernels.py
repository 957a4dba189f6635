"""The CUDA backend's CudaArray against numpy, operation by operation ("numpy defines the
semantics"): values, dtypes and shapes, broadcasting, non-contiguous views, 0-d and empty arrays,
every supported dtype, errors, and the counted host<->device copies.

Runs in numba's CUDA simulator (tests/conftest.py switches it on before numba is imported), or on
a real GPU with AUTOGRAD_LAB_REAL_CUDA=1. The simulator runs every CUDA thread as a Python thread:
shapes stay tiny.
"""

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

cuda_backend = pytest.importorskip(
    "autograd_lab.backend.cuda", reason="numba-cuda is not installed"
)
from autograd_lab.backend.cuda import (  # noqa: E402
    CudaArray,
    count_transfers,
    dispatch,
    from_numpy,
    launch,
    reductions,
    scalar_functions,  # noqa: E402
    transfers,
)
from autograd_lab.backend.cuda import matmul as matmul_module  # noqa: E402

if not __import__("numba").cuda.is_available():
    pytest.skip("no CUDA device and the simulator is off", allow_module_level=True)

DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]
FLOATS = [np.float32, np.float64]


def values(dtype, shape=(3, 4)):
    """Small test values of a dtype; floats include the edge cases (0, -0, inf, nan, big)."""
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if np.dtype(dtype).kind == "i":
        return (np.arange(n) % 7 - 3).astype(dtype).reshape(shape)
    edges = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan, 700.0, -0.75]
    return np.resize(np.array(edges, dtype), n).reshape(shape)


def same(result, expected):
    """result (a CudaArray) has numpy's values, dtype and shape (float32 to ~1e-6)."""
    assert isinstance(result, CudaArray), type(result)
    got, expected = result.to_numpy(), np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if expected.dtype.kind == "f":
        rtol = 2e-6 if expected.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-30, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def same_or_same_error(run, arrays):
    """run(*device arrays) matches run(*numpy arrays); or both raise TypeError (numpy has no such
    loop), or numpy's result has a dtype the CUDA backend does not support and it says so."""
    try:
        with np.errstate(all="ignore"):
            expected = run(*arrays)
    except TypeError:
        with pytest.raises(TypeError):
            run(*[from_numpy(a) for a in arrays])
        return
    if np.asarray(expected).dtype not in cuda_backend.SUPPORTED_DTYPES:  # e.g. square(bool): int8
        with pytest.raises(TypeError, match="not supported on the CUDA backend"):
            run(*[from_numpy(a) for a in arrays])
        return
    with np.errstate(all="ignore"):
        same(run(*[from_numpy(a) for a in arrays]), expected)


# ---- host <-> device ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3)])
def test_round_trip_keeps_values_shape_and_dtype(dtype, shape):
    array = values(dtype, shape) if 0 not in shape else np.zeros(shape, dtype)
    x = from_numpy(array)
    assert (x.shape, x.dtype, x.ndim, x.size) == (array.shape, array.dtype, array.ndim, array.size)
    same(x, array)


def test_copies_are_counted_with_their_sizes():
    array = np.arange(6, dtype=np.float32)
    with count_transfers() as moved:
        x = from_numpy(array)
        y = np.exp(x) * 2 + x
        y.sum().item()
        np.asarray(y)
    assert (moved.host_to_device, moved.bytes_host_to_device) == (1, 24)
    assert (moved.device_to_host, moved.bytes_device_to_host) == (2, 4 + 24)
    assert transfers.host_to_device >= 1  # the module-wide counters count since start-up
    assert "host_to_device=1" in repr(moved)


def test_uploading_copies_so_later_host_changes_do_not_leak():
    array = np.arange(3.0)
    x = from_numpy(array)
    array[0] = 100
    same(x, [0.0, 1.0, 2.0])


def test_unsupported_dtype_is_refused_clearly():
    with pytest.raises(TypeError, match="float16 is not supported on the CUDA backend"):
        from_numpy(np.zeros(2, np.float16))
    with pytest.raises(TypeError, match="supported: bool, int32, int64, float32, float64"):
        from_numpy(np.zeros(2)).astype(np.uint8)


def test_made_on_the_device_without_copies():
    with count_transfers() as moved:
        made = [cuda_backend.zeros((2, 3), np.float32), cuda_backend.ones(4, np.int64),
                cuda_backend.full((2,), 7.5), cuda_backend.arange(2, 11, 3),
                cuda_backend.arange(0.0, 1.0, 0.25), cuda_backend.eye(3, 4, k=1, dtype=bool),
                cuda_backend.eye(3, k=-1), cuda_backend.empty((2, 0))]  # fmt: skip
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    expected = [np.zeros((2, 3), np.float32), np.ones(4, np.int64), np.full((2,), 7.5),
                np.arange(2, 11, 3), np.arange(0.0, 1.0, 0.25), np.eye(3, 4, k=1, dtype=bool),
                np.eye(3, k=-1), np.empty((2, 0))]  # fmt: skip
    for result, reference in zip(made, expected):
        same(result, reference)


# ---- elementwise --------------------------------------------------------------------------------

# every numpy ufunc the backend has a device function for (scalar_functions.py): np.tan -> tan
UNARY = sorted(n for n in scalar_functions.UNARY if isinstance(getattr(np, n, None), np.ufunc))
BINARY = sorted(n for n in scalar_functions.BINARY if isinstance(getattr(np, n, None), np.ufunc))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_ufuncs_match_numpy_at_the_edges_too(name, dtype):
    same_or_same_error(getattr(np, name), [values(dtype, (2, 6))])


def test_missing_ufuncs_and_functions_name_themselves():
    x = from_numpy(np.ones(3))
    for call, name in [(np.exp2, "numpy.exp2"), (np.logaddexp, "numpy.logaddexp"),
                       (np.add.accumulate, "numpy.add.accumulate"), (np.sort, "numpy.sort")]:  # fmt: skip
        args = (x, 2) if call is np.logaddexp else (x,)
        with pytest.raises(NotImplementedError, match=f"{name} is not implemented on the CUDA"):
            call(*args)
    with pytest.raises(NotImplementedError, match="with where="):
        np.add(x, x, where=np.bool_(True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_ufuncs_broadcast_by_strides(name, dtype):
    a = values(dtype, (3, 1))
    b = np.abs(values(dtype, (4,))) if name == "power" else values(dtype, (4,))[::-1]
    same_or_same_error(getattr(np, name), [a, b])


def _strided(shape, data):
    """A float array of `shape` and its CudaArray, as a transposed or reversed view (drawn)."""
    base = np.cos(np.arange(int(np.prod(shape)), dtype=np.float64))
    if not shape:
        return base.reshape(()), from_numpy(base.reshape(()))
    if data.draw(st.booleans(), label="transposed"):
        return base.reshape(shape[::-1]).T, from_numpy(base.reshape(shape[::-1])).T
    return base.reshape(shape)[..., ::-1], from_numpy(base.reshape(shape))[..., ::-1]


@settings(max_examples=25, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(0, 3), max_size=3).map(tuple))
def test_broadcasting_over_strided_views_property(data, shape):
    other = tuple(
        data.draw(st.sampled_from([1, n])) for n in shape[data.draw(st.integers(0, len(shape))) :]
    )
    (a, x), (b, y) = _strided(shape, data), _strided(other, data)
    if data.draw(st.booleans(), label="swap operands"):
        (a, x), (b, y) = (b, y), (a, x)
    op = data.draw(st.sampled_from([np.add, np.multiply, np.maximum, np.less, np.divide]))
    with np.errstate(all="ignore"):
        same(op(x, y), op(a, b))
    axis = data.draw(st.sampled_from([None, *range(a.ndim)]))
    same(np.sum(x, axis=axis), np.sum(a, axis=axis))


def test_non_contiguous_views_and_scalars_in_elementwise_ops():
    a = np.arange(12.0).reshape(3, 4)
    x = from_numpy(a)
    same(x.T * 2 - 1, a.T * 2 - 1)
    same(x[:, ::2] + x[:, 1::2], a[:, ::2] + a[:, 1::2])
    same(1 - x[::-1], 1 - a[::-1])
    same(2.0**x, 2.0**a)
    with np.errstate(divide="ignore", invalid="ignore"):
        same(x / 0, np.divide(a, 0))
    same(x + np.float64(0.5), a + 0.5)
    same(x * np.array(3), a * 3)  # a 0-d numpy array travels with the launch
    same(x + np.ones((1, 1)), a + 1)  # so does a one-element one, its shape counted
    same(-x, -a)
    same(abs(-x), a)
    same(~(x > 3), ~(a > 3))


def test_numpy_type_promotion_is_numpy_own():
    ints, f32 = np.arange(4), np.linspace(0, 1, 4, dtype=np.float32)
    same(from_numpy(ints) * 1.5, ints * 1.5)  # a Python float is "weak": float64 here
    same(from_numpy(f32) * 2.5, f32 * 2.5)  # ... and float32 here
    same(from_numpy(f32) + from_numpy(ints), f32 + ints)  # float64, numpy's rule
    same(from_numpy(ints) / 2, ints / 2)
    same(np.add(from_numpy(f32), 1, dtype=np.float64), np.add(f32, 1, dtype=np.float64))


def test_out_arguments_and_in_place_operators():
    a, b = np.arange(6.0).reshape(2, 3), np.ones(3, np.float32)
    x, y = from_numpy(a), from_numpy(b)
    result = np.add(x, y, out=x)
    assert result is x
    same(x, a + b)
    x *= 2
    same(x, (a + b) * 2)
    g = from_numpy(np.zeros(3, np.float32))
    np.add(g, from_numpy(np.arange(3.0)), out=g, casting="unsafe")  # what the engine does
    same(g, np.arange(3, dtype=np.float32))
    counts = from_numpy(np.zeros(3, np.int64))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        np.add(counts, from_numpy(np.arange(3.0)), out=counts)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        np.add(x, x, out=from_numpy(np.zeros(3)))


def test_an_output_overlapping_an_input_is_read_first():
    a = np.arange(6.0)
    x = from_numpy(a)
    np.add(x[1:], x[:-1], out=x[1:])
    a[1:] = a[1:] + a[:-1].copy()
    same(x, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_astype_follows_numpy(dtype):
    for source in [values(np.float64, (2, 3))[:, ::-1], values(np.int64), values(np.bool_)]:
        with np.errstate(all="ignore"):
            expected = source.astype(dtype)
        if source.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
            source = np.nan_to_num(source, posinf=9, neginf=-9)  # inf/nan -> int is undefined
            expected = source.astype(dtype)
        same(from_numpy(source).astype(dtype), expected)
    x = from_numpy(np.zeros(2))
    assert x.astype(np.float64, copy=False) is x


def test_where_clip_isclose_allclose():
    a, b = values(np.float32, (2, 3)), np.arange(3, dtype=np.float32)
    x, y = from_numpy(a), from_numpy(b)
    same(np.where(x > 0, x, 0.0), np.where(a > 0, a, 0.0))
    same(np.where(y > 0, 1, y), np.where(b > 0, 1, b))
    same(np.where(from_numpy(b > 0), x, y), np.where(b > 0, a, b))
    with np.errstate(all="ignore"):
        same(np.clip(x, -1, 1), np.clip(a, -1, 1))
        same(np.clip(x, None, 0.5), np.clip(a, None, 0.5))
        same(np.isclose(x, x + 1e-7), np.isclose(a, a + 1e-7))
        same(np.isclose(x, x, equal_nan=True), np.isclose(a, a, equal_nan=True))
    assert np.allclose(y, y + 1e-9) is True and np.allclose(y, y + 1) is False


def test_fill_and_setitem_on_views():
    a = np.zeros((3, 4))
    x = from_numpy(a)
    x[:, 1].fill(5)
    a[:, 1] = 5
    x[1:, ::2] = np.float64(2)
    a[1:, ::2] = 2
    x[0] = from_numpy(np.arange(4.0))
    a[0] = np.arange(4.0)
    same(x, a)
    with pytest.raises(ValueError, match="read-only"):
        np.broadcast_to(x[0], (2, 4))[0] = 1.0


# ---- reductions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_over_any_axes(dtype):
    if np.dtype(dtype).kind == "f":  # finite values here; inf and nan: the test below
        a = np.cos(np.arange(24)).astype(dtype).reshape(2, 3, 4)
    else:
        a = values(dtype, (2, 3, 4))
    x = from_numpy(a).transpose(2, 0, 1)  # non-contiguous on purpose
    a = a.transpose(2, 0, 1)
    for axis, keepdims in [(None, False), (-1, True), ((0, 2), False)]:
        for name in ["sum", "prod", "max", "min", "any", "all"]:
            same(getattr(np, name)(x, axis=axis, keepdims=keepdims),
                 getattr(np, name)(a, axis=axis, keepdims=keepdims))  # fmt: skip
    same(np.sum(x, axis=()), np.sum(a, axis=()))
    for axis in [None, -1]:
        same(np.argmax(x, axis=axis), np.argmax(a, axis=axis))
        same(x.argmin(axis=axis, keepdims=True), a.argmin(axis=axis, keepdims=True))
    if dtype != np.bool_:
        same(x.mean(), a.mean())
        same(np.var(x, axis=(1, 2), ddof=1), np.var(a, axis=(1, 2), ddof=1))
        same(x.std(axis=0, keepdims=True), a.std(axis=0, keepdims=True))


def test_reduction_edges_nan_empty_and_zero_d():
    a = np.array([[1.0, np.nan, 3.0], [2.0, -1.0, np.nan]])
    x = from_numpy(a)
    same(x.max(axis=1), a.max(axis=1))
    same(x.argmax(axis=1), a.argmax(axis=1))  # the first nan, as numpy
    same(x.argmin(axis=0), a.argmin(axis=0))
    e = from_numpy(np.zeros((0, 3)))
    same(e.sum(axis=0), np.zeros(3))
    same(e.prod(), np.float64(1.0))
    same(e.max(axis=1), np.zeros((0,)))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        e.max()
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        e.argmax()
    with np.errstate(all="ignore"):
        same(e.mean(axis=0), np.full(3, np.nan))  # 0 / 0, as numpy (which also warns)
        same(np.var(from_numpy(np.ones(1)), ddof=1), np.float64(np.nan))
    s = from_numpy(np.array(2.5))
    same(s.sum(), np.float64(2.5))
    same(s.argmax(), np.int64(0))
    same(np.sum(from_numpy(np.ones(3, np.int32)), dtype=np.float32), np.float32(3))
    with pytest.raises(np.exceptions.AxisError):
        x.sum(axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        x.sum(axis=(0, -2))


def test_reductions_as_ufunc_methods_and_with_out():
    a = np.arange(12).reshape(3, 4)
    x = from_numpy(a)
    same(np.add.reduce(x), np.add.reduce(a))
    same(np.maximum.reduce(x, axis=1, keepdims=True), np.maximum.reduce(a, axis=1, keepdims=True))
    out = from_numpy(np.zeros(4, np.int64))
    assert np.sum(x, axis=0, out=out) is out
    same(out, a.sum(axis=0))


def test_two_pass_reduction_splits_long_rows_over_blocks():
    a = np.cos(np.arange(40.0)).reshape(2, 20)
    x = from_numpy(a)
    for name, expected in [("add", a.sum(1)), ("maximum", a.max(1)), ("multiply", a.prod(1))]:
        same(reductions.reduce(name, x, axis=1, parts=3), expected)
    same(reductions.reduce("add", x, axis=None, parts=4), a.sum())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax_kernel(dtype, axis):
    a = np.array([[1.0, 2.0, 3.0, 1000.0], [-np.inf, 0.0, 0.5, -1.0], [0.0, 0.0, 0.0, 0.0]], dtype)
    x = from_numpy(a)[:, ::-1]  # a strided view
    a = a[:, ::-1]
    shifted = a - a.max(axis=axis, keepdims=True)
    expected = np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)
    same(cuda_backend.softmax(x, axis), expected)
    same(
        cuda_backend.softmax(x, axis, log=True),
        shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True)),
    )


def test_softmax_of_zero_d_and_empty_and_ints():
    same(cuda_backend.softmax(from_numpy(np.array(3.0)), -1), np.float64(1.0))
    same(cuda_backend.softmax(from_numpy(np.array(3.0)), 0, log=True), np.float64(0.0))
    same(cuda_backend.softmax(from_numpy(np.zeros((0, 3))), 1), np.zeros((0, 3)))
    with pytest.raises(TypeError, match="float32 or float64"):
        cuda_backend.softmax(from_numpy(np.arange(3)), 0)


# ---- matmul ---------------------------------------------------------------------------------------

MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((9, 10), (10, 17)), ((3, 0), (0, 2))]  # fmt: skip


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
def test_matmul_shapes_batches_and_broadcasting(shapes):
    a, b = (np.cos(np.arange(np.prod(s))).reshape(s) for s in shapes)
    same(from_numpy(a) @ from_numpy(b), a @ b)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_matmul_dtypes_and_transposed_operands(dtype):
    a = (np.arange(12) % 5 - 2).astype(dtype).reshape(4, 3)
    b = (np.arange(20) % 3).astype(dtype).reshape(5, 4)
    x, y = from_numpy(a), from_numpy(b)
    same(x.T @ y.T, a.T @ b.T)  # transposed through strides, not copies
    same(np.matmul(y, x), b @ a)
    same(x.mT @ from_numpy(a.astype(np.float64)), a.T @ a.astype(np.float64))  # promoted


def test_matmul_with_other_tile_shapes_including_the_gpu_ones():
    a, b = np.cos(np.arange(35.0)).reshape(5, 7), np.sin(np.arange(21.0)).reshape(7, 3)
    for tiles in [launch.GPU_MATMUL, (2, 2, 2, 2, 4), (1, 2, 3, 1, 2)]:
        same(matmul_module.matmul(from_numpy(a), from_numpy(b), tiles=tiles), a @ b)


def test_matmul_errors_follow_numpy():
    x = from_numpy(np.ones((2, 3)))
    with pytest.raises(ValueError, match="size 2 is different from 3"):
        x @ x
    with pytest.raises(ValueError, match="not have enough dimensions"):
        np.matmul(x, from_numpy(np.array(1.0)))
    with pytest.raises(NotImplementedError, match="matmul of bool"):
        from_numpy(np.ones((2, 2), bool)) @ from_numpy(np.ones((2, 2), bool))


def test_shared_memory_kernels_at_gpu_block_sizes(monkeypatch):
    """The reduction, arg-reduction, softmax and nonzero kernels compiled with the GPU's block
    size (256 threads) give the same answers; the simulator usually runs 8."""
    monkeypatch.setattr(launch, "REDUCE_THREADS", launch.GPU_REDUCE_THREADS)
    a = np.cos(np.arange(5.0)).reshape(1, 5)  # one row: one block of 256 simulated threads
    x = from_numpy(a)
    same(x.sum(axis=1), a.sum(axis=1))
    same(x.argmax(axis=1), a.argmax(axis=1))
    same(cuda_backend.softmax(x, 1), np.exp(a) / np.exp(a).sum(1, keepdims=True))
    same(x[x > 0], a[a > 0])


def test_simulated_threads_of_a_block_share_one_shared_array(monkeypatch):
    """numba's simulator makes a block's shared array on first use without a lock, so threads
    arriving together each made their own (random wrong sums); simulator.py adds the lock."""
    if not launch.SIMULATOR:
        pytest.skip("a fix of the simulator")
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    real_empty = np.empty

    def slow_empty(*args, **kwargs):  # widen the gap between "is it made?" and "store it"
        time.sleep(0.002)
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(np, "empty", slow_empty)
    shared, got, start = FakeCUDAShared(0), [], threading.Barrier(8)

    def simulated_thread():
        start.wait()
        got.append(shared.array(4, np.float64))

    threads = [threading.Thread(target=simulated_thread) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(array) for array in got}) == 1


# ---- shapes --------------------------------------------------------------------------------------


def test_views_share_the_buffer_and_match_numpy_strides():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = from_numpy(a)
    for view, reference in [(x.T, a.T), (x[:, 1], a[:, 1]), (x[..., ::-2], a[..., ::-2]),
                            (x.reshape(6, 4), a.reshape(6, 4)), (np.swapaxes(x, 0, 2), a.swapaxes(0, 2)),
                            (np.expand_dims(x, (0, 3)), np.expand_dims(a, (0, 3))), (x[None, :, None], a[None, :, None]),
                            (x.transpose(1, 0, 2).reshape(3, 2, 2, 2), a.transpose(1, 0, 2).reshape(3, 2, 2, 2))]:  # fmt: skip
        assert view.buffer is x.buffer
        assert view.flags.c_contiguous == reference.flags.c_contiguous
        same(view, reference)
    assert x.T.strides == a.T.strides and x[:, 1].strides == a[:, 1].strides


def test_reshape_copies_only_when_it_must():
    a = np.arange(6.0).reshape(2, 3)
    x = from_numpy(a)
    flat = x.T.reshape(-1)
    assert flat.buffer is not x.buffer
    same(flat, a.T.reshape(-1))
    with pytest.raises(ValueError, match="copy"):
        np.reshape(x.T, 6, copy=False)
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        x.reshape(4, -1)
    same(np.ravel(x.T), np.ravel(a.T))
    same(x.flatten(), a.flatten())


def test_squeeze_broadcast_to_and_their_errors():
    a = np.arange(3.0).reshape(1, 3, 1)
    x = from_numpy(a)
    same(np.squeeze(x), np.squeeze(a))
    same(x.squeeze(axis=-1), a.squeeze(axis=-1))
    with pytest.raises(ValueError, match="size not equal to one"):
        x.squeeze(axis=1)
    b = np.broadcast_to(x, (2, 1, 3, 4))
    same(b, np.broadcast_to(a, (2, 1, 3, 4)))
    assert b.element_strides[0] == 0 and not b.flags.writeable
    with pytest.raises(ValueError, match="could not be broadcast"):
        np.broadcast_to(x, (2, 3))


def test_concatenate_stack_split():
    a, b = np.arange(6).reshape(2, 3), np.arange(4.0).reshape(2, 2)
    x, y = from_numpy(a), from_numpy(b)
    same(np.concatenate([x, y], axis=1), np.concatenate([a, b], axis=1))
    same(np.concatenate([x, x[:0]]), np.concatenate([a, a[:0]]))
    same(np.concatenate([x, x], axis=None), np.concatenate([a, a], axis=None))
    same(np.stack([x, x.T.T], axis=-1), np.stack([a, a], axis=-1))
    for got, expected in zip(np.split(x, [1, 2], axis=1), np.split(a, [1, 2], axis=1)):
        same(got, expected)
    for got, expected in zip(np.array_split(x, 2, axis=1), np.array_split(a, 2, axis=1)):
        same(got, expected)
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3"):
        np.concatenate([x, y])
    with pytest.raises(ValueError, match="same shape"):
        np.stack([x, y])
    with pytest.raises(ValueError, match="equal division"):
        np.split(x, 2, axis=1)


# ---- indexing ------------------------------------------------------------------------------------

INDICES = [
    (1, -1), (slice(None, None, -2),), (Ellipsis, 0), (None, 1, slice(1, 3)), ([2, 0, 2],),
    (slice(None), [3, -1]), ([[0], [1]], [1, 2]), ([0, 1], slice(None), [1, 0]),
    (1, slice(None), [0, 1]), (slice(None), [0, 2], [1]), (np.array([True, False, True]),),
    (slice(0, 0), [1]), (np.array([[True, False, False, True]] * 2 + [[False] * 4]),), ([],),
    (from_numpy(np.array([[0, 1]])), Ellipsis, None),
]  # fmt: skip


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_follows_numpy_incl_advanced_placement(index):
    a = np.arange(48.0).reshape(3, 4, 4)[..., ::2]  # a strided 3 x 4 x 2 view
    x = from_numpy(np.arange(48.0).reshape(3, 4, 4))[..., ::2]
    host_index = tuple(p.to_numpy() if isinstance(p, CudaArray) else p for p in index)
    same(x[index], a[host_index])


def test_take_put_and_put_along_axis():
    a = np.arange(12.0).reshape(3, 4)
    x, flat = from_numpy(a), from_numpy(np.array([0, 5, -1]))
    same(np.take(x, flat), np.take(a, [0, 5, -1]))
    same(np.take(x, [2, 0], axis=1), np.take(a, [2, 0], axis=1))
    out, expected = np.zeros_like(x), np.zeros_like(a)
    np.put(out, flat, from_numpy(np.array([1.0, 2.0, 3.0])))
    np.put(expected, [0, 5, -1], [1.0, 2.0, 3.0])
    where = np.array([[1], [0], [3]])
    np.put_along_axis(out, from_numpy(where), 9.0, axis=1)
    np.put_along_axis(expected, where, 9.0, axis=1)
    same(out, expected)
    with pytest.raises(NotImplementedError, match="numpy.put on a non-contiguous array"):
        np.put(x.T, flat, 1.0)


def test_indexing_with_device_arrays_copies_nothing_but_a_mask_count():
    a = np.arange(12.0).reshape(3, 4)
    x, rows = from_numpy(a), from_numpy(np.array([2, -3]))
    mask = x > 5
    with count_transfers() as moved:
        picked = x[rows, 1:]
        taken = np.take_along_axis(x, x.argmax(axis=1, keepdims=True), axis=1)
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    with count_transfers() as moved:
        masked = x[mask]
    assert (moved.host_to_device, moved.device_to_host) == (0, 1)  # how many are True
    same(picked, a[[2, -3], 1:])
    same(taken, np.take_along_axis(a, a.argmax(axis=1, keepdims=True), axis=1))
    same(masked, a[a > 5])
    same(np.where(x > 5)[1], np.where(a > 5)[1])


def test_index_errors():
    x = from_numpy(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[0, 3]
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        x[[0, -3]]
    with pytest.raises(IndexError, match="too many indices for array: array is 2-dimensional"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match="integer .or boolean. type"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    bad = x[
        from_numpy(np.array([5]))
    ]  # found on the device: reported at the next sync, as CUDA does
    with pytest.raises(IndexError, match="index out of range in an indexing operation on the GPU"):
        bad.to_numpy()
    same(x[from_numpy(np.array([1]))], np.arange(6.0).reshape(2, 3)[[1]])  # the flag was reset


def test_setitem_with_index_arrays_and_masks():
    a = np.zeros((3, 4))
    x = from_numpy(a)
    x[[0, 2], 1:3] = from_numpy(np.array([1.0, 2.0]))
    a[[0, 2], 1:3] = [1.0, 2.0]
    x[x == 0] = -1
    a[a == 0] = -1
    x[1, [0, 3]] = 7
    a[1, [0, 3]] = 7
    same(x, a)
    with pytest.raises(ValueError, match="shape mismatch: value array of shape .3,."):
        x[[0, 1]] = from_numpy(np.ones(3))


def test_add_at_accumulates_repeated_indices():
    a, grad = np.zeros((3, 2), np.float32), np.arange(8, dtype=np.float32).reshape(4, 2)
    x = from_numpy(a)
    np.add.at(x, ([0, 2, 0, 0],), from_numpy(grad))
    np.add.at(a, ([0, 2, 0, 0],), grad)
    np.add.at(x, (slice(None), 1), 1.0)
    np.add.at(a, (slice(None), 1), 1.0)
    same(x, a)
    with pytest.raises(NotImplementedError, match="add.at on a bool array"):
        np.add.at(from_numpy(np.zeros(2, bool)), [0], True)


# ---- one device at a time ------------------------------------------------------------------------


def test_mixing_with_a_numpy_array_names_both_devices():
    x = from_numpy(np.ones(3))
    message = r"found at least two devices, cuda:0 and cpu!.*Fix: move one with .to\('cuda'\)"
    for mixed in [lambda: x + np.ones(3), lambda: np.ones(3) * x, lambda: np.where(x > 0, np.ones(3), x),
                  lambda: np.concatenate([x, np.ones(3)]), lambda: np.matmul(np.ones((2, 3)), x)]:  # fmt: skip
        with pytest.raises(RuntimeError, match=message):
            mixed()
    same(x + np.ones(1) + np.float32(1) + 1, np.full(3, 4.0))  # one element: a number


def test_methods_and_python_protocols():
    a = np.arange(6.0).reshape(2, 3)
    x = from_numpy(a)
    assert x.tolist() == a.tolist() and x[1, 2].item() == 5.0 and x.item(0, 1) == 1.0
    assert float(x[0, 1]) == 1.0 and int(x[1, 0]) == 3 and bool(x[0, 1]) and len(x) == 2
    assert [row.tolist() for row in x] == a.tolist()
    assert x.nbytes == 48 and x.itemsize == 8 and x.device == "cuda:0" and x.mT.shape == (3, 2)
    assert np.shape(x) == (2, 3) and np.ndim(x) == 2 and np.size(x) == 6
    assert np.result_type(x, np.float32) == np.float64 and np.can_cast(x, np.float32, "same_kind")
    assert np.may_share_memory(x, x.T) and not np.shares_memory(x, x.copy())
    assert repr(x[0]) == "CudaArray([0., 1., 2.], dtype=float64)"
    same(np.zeros_like(x), np.zeros_like(a))
    same(np.ones_like(x, dtype=np.int32), np.ones_like(a, dtype=np.int32))
    same(np.full_like(x, 2.5), np.full_like(a, 2.5))
    assert np.empty_like(x[:, 0]).shape == (2,)
    same(np.copy(x.T), a.T.copy())
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    with pytest.raises(ValueError, match="without a copy"):
        np.array(x, copy=False)


def test_every_dispatched_numpy_function_is_listed():
    """The table in dispatch.py is the documented surface; an unlisted function is refused."""
    assert {np.sum, np.where, np.broadcast_to, np.concatenate, np.transpose, np.ones_like,
            np.take_along_axis, np.var, np.argmax} <= set(dispatch.FUNCTIONS)  # fmt: skip
    with pytest.raises(NotImplementedError, match="numpy.sort is not implemented on the CUDA"):
        np.sort(from_numpy(np.ones(2)))


def test_a_numba_cuda_too_old_for_numpy_says_how_to_fix_it(monkeypatch):
    """On a GPU, numba-cuda 0.30.4 fails its first kernel compile under numpy 2.5, looking up the
    removed `np.row_stack` (seen on an H200, 2026-11-26): the error says what to install."""

    class KernelNeedingRowStack:
        def __getitem__(self, launch_config):
            def run(*args):
                raise AttributeError("module 'numpy' has no attribute 'row_stack'")

            return run

    class KernelWithItsOwnBug(KernelNeedingRowStack):
        def __getitem__(self, launch_config):
            def run(*args):
                raise AttributeError("'NoneType' object has no attribute 'shape'")

            return run

    monkeypatch.setattr(launch, "SIMULATOR", False)
    with pytest.raises(
        RuntimeError,
        match=r"cannot compile CUDA kernels with numpy .*row_stack.*Fix: pip install \"numpy<\d+\.\d+\"",
    ):
        launch.launch(KernelNeedingRowStack(), 1, 1)
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'shape'"):
        launch.launch(KernelWithItsOwnBug(), 1, 1)
