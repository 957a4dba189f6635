"""DeviceArray: the data of an n-dimensional array in GPU memory, and how arrays are made.

Storage: a 1-D numba device buffer, plus shape, element strides and an offset into the buffer.
Views (reshape, transpose, slicing, broadcast_to) share the buffer and only change those three:
`x.view_of(shape, element_strides, offset)`.

This class knows nothing of numpy's dispatch: the algorithms (elementwise.py, shapes.py,
reductions.py, matmul.py, indexing.py) take and make DeviceArrays, and `CudaArray` (array.py), the
class users get, is a DeviceArray that adds numpy's protocols on top of them. So that users only
ever see CudaArrays, every new array has the class of the array it is made from: views are
`type(self)(...)`, and the constructors are class methods, called on that class:

    out = type(x).empty(x.shape, np.float32)      # a new array of x's class (a CudaArray)
    out = class_of([a, b]).empty(shape, dtype)    # for an operation on a mix of arrays and numbers

The constructors (empty, full, arange, eye, from_numpy) make the array on the device: only
from_numpy copies values from the host, and to_numpy back (each copy counted, transfers.py).
"""

import numpy as np
from numba import cuda

from .. import contiguous_strides
from . import transfers
from .index_kernels import check_index_errors
from .kernels import MAP_KERNELS, arange_kernel, fill_kernel
from .launch import device_array, launch_over

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


class Flags:
    """The two numpy flags the ops read: `x.flags.c_contiguous`, `x.flags.writeable`."""

    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c_contiguous, writeable):
        self.c_contiguous, self.writeable = c_contiguous, writeable


class DeviceArray:
    """Buffer, shape, strides, dtype: an array in GPU memory, without numpy's protocols.

    >>> x = DeviceArray.from_numpy(np.arange(6.0).reshape(2, 3))
    >>> x.view_of((2,), (3,), 1).to_numpy()  # the second column, as a view
    array([1., 4.])
    """

    __slots__ = ("buffer", "shape", "element_strides", "offset", "dtype", "writeable")

    def __init__(self, buffer, shape, element_strides=None, offset=0, writeable=True):
        self.buffer = buffer  # the 1-D numba device array holding the elements
        self.shape = tuple(int(s) for s in shape)
        if element_strides is None:
            element_strides = contiguous_strides(self.shape)
        self.element_strides = tuple(int(s) for s in element_strides)
        self.offset = int(offset)
        self.dtype = np.dtype(buffer.dtype)
        self.writeable = writeable  # False for broadcast views, whose elements share memory

    # ---- making arrays: on the device, of the class they are called on ---------------------------
    @classmethod
    def empty(cls, shape, dtype=np.float64):
        """A new contiguous array; its values are whatever the memory held."""
        shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
        dtype = check_dtype(dtype)
        return cls(device_array(int(np.prod(shape, dtype=np.int64)), dtype), shape)

    @classmethod
    def full(cls, shape, fill_value, dtype=None):
        """Filled by a kernel, so no values cross from the host (the number goes with the launch)."""
        if dtype is None:
            dtype = np.asarray(fill_value).dtype
        out = cls.empty(shape, dtype)
        out.fill(fill_value)
        return out

    @classmethod
    def arange(cls, start, stop=None, step=1, dtype=None):
        """numpy's arange (same length and dtype rules), computed on the device."""
        if stop is None:
            start, stop = 0, start
        if dtype is None:
            dtype = np.result_type(start, stop, step)
        count = max(int(np.ceil((stop - start) / step)), 0)
        out = cls.empty((count,), dtype)
        kind = np.float64 if out.dtype.kind == "f" else np.int64  # numpy steps in double precision
        launch_over(arange_kernel, out.size, out.buffer, kind(start), kind(step))
        return out

    @classmethod
    def eye(cls, n, m=None, k=0, dtype=np.float64):
        """Ones on the k-th diagonal: zeros, then a fill of the diagonal seen as a strided view."""
        m = n if m is None else m
        out = cls.full((n, m), 0, dtype)
        length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
        if length:
            out.view_of((length,), (m + 1,), k if k >= 0 else -k * m).fill(1)
        return out

    @classmethod
    def from_numpy(cls, array):
        """An array with the values (and shape, dtype) of a numpy array: a counted copy."""
        array = np.asarray(array)
        check_dtype(array.dtype)
        flat = np.ascontiguousarray(array).reshape(-1)
        buffer = cuda.to_device(flat) if flat.size else device_array(0, array.dtype)
        transfers.record_host_to_device(flat.nbytes)
        return cls(buffer, array.shape)

    # ---- description ------------------------------------------------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    strides = property(lambda self: tuple(s * self.dtype.itemsize for s in self.element_strides))
    device = property(lambda self: "cuda:0")

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
        """Another array of this class over the same buffer (no copy)."""
        keep = self.writeable if writeable is None else writeable
        return type(self)(self.buffer, shape, element_strides, offset, keep)

    # ---- the memory itself: fill, copy, and the copy to the host ---------------------------------
    def fill(self, value):
        """Every element (of any strided view) becomes `value`; no host copy."""
        if not self.writeable:
            raise ValueError("assignment destination is read-only")
        value = bool(value) if self.dtype == np.bool_ else value
        args = (self.shape or (1,), *_operand(self), self.dtype.type(value))
        launch_over(fill_kernel, self.size, *args)

    def copy(self):
        """A contiguous copy (how a strided view is made contiguous), made by a kernel."""
        out = type(self).empty(self.shape, self.dtype)
        args = (*_operand(out), *_operand(self))
        launch_over(MAP_KERNELS["copy"], out.size, out.shape or (1,), *args)
        return out

    def to_numpy(self):
        """A numpy copy of the values: one counted device -> host copy."""
        check_index_errors()  # a bad index found on the device is reported at the next sync
        source = self if self.is_c_contiguous() else self.copy()
        start = source.offset
        host = source.buffer[start : start + self.size].copy_to_host()
        transfers.record_device_to_host(host.nbytes)
        return host.reshape(self.shape)


def _operand(x):
    """(buffer, offset, strides) of x, the way every kernel takes an operand (0-d: strides (0,),
    numba cannot index an empty tuple)."""
    return x.buffer, x.offset, x.element_strides or (0,)


def class_of(values):
    """The class of the first DeviceArray among `values` (the others: numbers, host arrays): the
    class of the arrays an operation on them makes, so CudaArrays in give CudaArrays out."""
    return next(type(v) for v in values if isinstance(v, DeviceArray))
