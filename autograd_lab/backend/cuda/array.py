"""CudaArray: an n-dimensional array in GPU memory that answers numpy's calls with CUDA kernels.

API summary (what the rest of autograd_lab uses; `from autograd_lab.backend import cuda`):

    x = cuda.from_numpy(a)            # = CudaArray.from_numpy(a): a counted host -> device copy
    x.to_numpy(), np.asarray(x)       # a counted device -> host copy (so is item(), tolist(), repr)
    cuda.empty/zeros/ones(shape, dtype), cuda.full(shape, value, dtype),
    cuda.arange(start, stop, step, dtype), cuda.eye(n, m, dtype)   # made on the device, no copy
    cuda.softmax(x, axis, log=False)  # the fused softmax / log-softmax kernel
    cuda.transfers.host_to_device, cuda.count_transfers()          # see transfers.py

    attributes  shape dtype ndim size itemsize nbytes strides (bytes, as numpy) element_strides
                offset flags.c_contiguous flags.writeable T mT device
    methods     astype copy reshape transpose swapaxes squeeze ravel flatten fill item tolist
                sum mean prod max min argmax argmin any all var std clip nonzero to_numpy
                x[index] and x[index] = v: ints, slices, None, ..., integer and boolean arrays
    operators   + - * / ** @ == != < <= > >= & | ^ ~ - abs, and the in-place forms (+= ...)
    numpy       ufuncs: np.exp(x), np.add(a, b, out=a), np.add.at(a, index, v), np.add.reduce,
                np.matmul, ...; functions: np.sum, np.where, np.broadcast_to, np.concatenate,
                np.transpose, np.zeros_like, ...: the tables in dispatch.py list them all.
                Anything else raises NotImplementedError naming the numpy function.

Supported dtypes: bool, int32, int64, float32, float64. Shapes, dtypes and results follow numpy,
which is the reference the tests compare against. Mixing a CudaArray with a numpy array of more
than one element raises RuntimeError (as PyTorch does for tensors on two devices); Python numbers
and 0-d arrays mix freely, as in PyTorch.

Storage: a 1-D numba device buffer, plus shape, element strides and an offset into the buffer.
Views (reshape, transpose, slicing, broadcast_to) share the buffer and only change those three.
"""

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from . import transfers
from .launch import device_array

SUPPORTED_DTYPES = tuple(
    np.dtype(d) for d in (np.bool_, np.int32, np.int64, np.float32, np.float64)
)


def check_dtype(dtype):
    """The numpy dtype, or a TypeError when the CUDA backend has no kernels for it."""
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        names = ", ".join(d.name for d in SUPPORTED_DTYPES)
        raise TypeError(
            f"dtype {dtype.name} is not supported on the CUDA backend (supported: {names}). "
            "Fix: convert first, e.g. .float() or .long(), or keep this tensor on the CPU."
        )
    return dtype


def contiguous_strides(shape):
    """Element strides of a row-major (C-order) array: the last dim varies fastest."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class Flags:
    """The two numpy flags the ops read: `x.flags.c_contiguous`, `x.flags.writeable`."""

    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c_contiguous, writeable):
        self.c_contiguous, self.writeable = c_contiguous, writeable


class CudaArray(NDArrayOperatorsMixin):
    """An array in GPU memory; see the module docstring for what it supports.

    >>> x = from_numpy(np.arange(6.0).reshape(2, 3))
    >>> (x.T * 2).sum(axis=0).to_numpy()
    array([ 6., 24.])
    """

    __slots__ = ("buffer", "shape", "element_strides", "offset", "dtype", "writeable")
    __array_priority__ = 100  # numpy array <op> CudaArray calls our reflected operator

    def __init__(self, buffer, shape, element_strides=None, offset=0, writeable=True):
        self.buffer = buffer  # the 1-D numba device array holding the elements
        self.shape = tuple(int(s) for s in shape)
        if element_strides is None:
            element_strides = contiguous_strides(self.shape)
        self.element_strides = tuple(int(s) for s in element_strides)
        self.offset = int(offset)
        self.dtype = np.dtype(buffer.dtype)
        self.writeable = writeable  # False for broadcast views, whose elements share memory

    @staticmethod
    def from_numpy(array):
        """A CudaArray with the values of a numpy array (a counted host -> device copy)."""
        return from_numpy(array)

    # ---- description -----------------------------------------------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    strides = property(lambda self: tuple(s * self.dtype.itemsize for s in self.element_strides))
    device = property(lambda self: "cuda:0")
    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    @property
    def flags(self):
        return Flags(self.is_c_contiguous(), self.writeable)

    def is_c_contiguous(self):
        """Row-major and gap-free (strides of size-1 dims do not matter, as in numpy)."""
        if self.size == 0:
            return True
        expected = contiguous_strides(self.shape)
        return all(n == 1 or s == e for n, s, e in zip(self.shape, self.element_strides, expected))

    def view_of(self, shape, element_strides, offset, writeable=None):
        """Another array over the same buffer (no copy)."""
        keep = self.writeable if writeable is None else writeable
        return CudaArray(self.buffer, shape, element_strides, offset, keep)

    # ---- host <-> device (the only places data crosses, each one counted) -------------------------
    def to_numpy(self):
        """A numpy copy of the values: one counted device -> host copy."""
        from .index_kernels import check_index_errors

        check_index_errors()  # a bad index found on the device is reported at the next sync
        source = self if self.is_c_contiguous() else self.copy()
        start = source.offset
        host = source.buffer[start : start + self.size].copy_to_host()
        transfers.record_device_to_host(host.nbytes)
        return host.reshape(self.shape)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a CudaArray cannot be seen as a numpy array without a copy")
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self, *index):
        if index:
            return self[index].item()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.to_numpy().item()

    def tolist(self):
        return self.to_numpy().tolist()

    def __repr__(self):  # shows the values: a counted copy, as printing a CUDA tensor is
        return f"CudaArray({np.array2string(self.to_numpy(), separator=', ')}, dtype={self.dtype})"

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self.item())

    __float__ = lambda self: float(self.item())
    __int__ = lambda self: int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # ---- methods: the numpy array methods the ops call --------------------------------------------
    def astype(self, dtype, copy=True):
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return elementwise.astype(self, dtype)

    def copy(self):
        return elementwise.copy(self)

    def fill(self, value):
        elementwise.fill(self, value)

    def reshape(self, *shape, copy=None):
        return shapes.reshape(self, shape[0] if len(shape) == 1 else shape, copy)

    def transpose(self, *axes):
        return shapes.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def ravel(self):
        return shapes.reshape(self, -1)

    def flatten(self):
        return shapes.reshape(self, -1, copy=True)

    # ---- numpy's dispatch protocols (NEP 13 and NEP 18): dispatch.py does the work ---------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return dispatch.array_function(func, types, args, kwargs)

    def __getitem__(self, index):
        return indexing.getitem(self, index)

    def __setitem__(self, index, value):
        indexing.setitem(self, index, value)


# ---- making arrays -----------------------------------------------------------------------------------


def from_numpy(array):
    """A CudaArray with the values (and shape, dtype) of a numpy array: a counted copy."""
    from numba import cuda

    array = np.asarray(array)
    check_dtype(array.dtype)
    flat = np.ascontiguousarray(array).reshape(-1)
    buffer = cuda.to_device(flat) if flat.size else device_array(0, array.dtype)
    transfers.record_host_to_device(flat.nbytes)
    return CudaArray(buffer, array.shape)


def empty(shape, dtype=np.float64):
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    dtype = check_dtype(dtype)
    return CudaArray(device_array(int(np.prod(shape, dtype=np.int64)), dtype), shape)


def full(shape, fill_value, dtype=None):
    """Filled by a kernel, so no values cross from the host (the number goes with the launch)."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype)
    elementwise.fill(out, fill_value)
    return out


def zeros(shape, dtype=np.float64):
    return full(shape, 0, dtype)


def ones(shape, dtype=np.float64):
    return full(shape, 1, dtype)


def arange(start, stop=None, step=1, dtype=None):
    """numpy's arange (same length and dtype rules), computed on the device."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.result_type(start, stop, step)
    count = max(int(np.ceil((stop - start) / step)), 0)
    out = empty((count,), dtype)
    elementwise.arange(out, start, step)
    return out


def eye(n, m=None, k=0, dtype=np.float64):
    """Ones on the k-th diagonal: zeros, then a fill of the diagonal seen as a strided view."""
    m = n if m is None else m
    out = zeros((n, m), dtype)
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    if length:
        diagonal = out.view_of((length,), (m + 1,), k if k >= 0 else -k * m)
        elementwise.fill(diagonal, 1)
    return out


from . import dispatch, elementwise, indexing, shapes  # noqa: E402  (they need CudaArray above)


def _numpy_method(function):
    """x.sum(...) is np.sum(x, ...): one implementation, reached through numpy's dispatch."""

    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    return method


_METHODS = "sum mean prod max min argmax argmin any all var std clip nonzero swapaxes squeeze"
for _name in _METHODS.split():
    setattr(CudaArray, _name, _numpy_method(getattr(np, _name)))
