"""CudaArray: an n-dimensional array in GPU memory that answers numpy's calls with CUDA kernels,
and the functions that make one.

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

A CudaArray is a DeviceArray (device_array.py: buffer, shape, strides, views, copies to and from
the host) with numpy's protocols added: the numpy-facing methods below call the algorithms
(elementwise.py, shapes.py, indexing.py) and dispatch.py, none of which import this module. They
make new arrays of their operands' class, so the results of a CudaArray are CudaArrays.
"""

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from . import dispatch, elementwise, indexing, shapes
from .device_array import DeviceArray


def _numpy_method(function):
    """x.sum(...) is np.sum(x, ...): one implementation, reached through numpy's dispatch."""

    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    return method


class CudaArray(DeviceArray, NDArrayOperatorsMixin):
    """An array in GPU memory; see the module docstring for what it supports.

    >>> x = from_numpy(np.arange(6.0).reshape(2, 3))
    >>> (x.T * 2).sum(axis=0).to_numpy()
    array([ 6., 24.])
    """

    __slots__ = ()
    __array_priority__ = 100  # numpy array <op> CudaArray calls our reflected operator

    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))

    # ---- values on the host (each a counted device -> host copy, see DeviceArray.to_numpy) --------
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

    # ---- methods: the numpy array methods the ops call (copy and fill: DeviceArray's) -------------
    def astype(self, dtype, copy=True):
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return elementwise.astype(self, dtype)

    def reshape(self, *shape, copy=None):
        return shapes.reshape(self, shape[0] if len(shape) == 1 else shape, copy)

    def transpose(self, *axes):
        return shapes.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def ravel(self):
        return shapes.reshape(self, -1)

    def flatten(self):
        return shapes.reshape(self, -1, copy=True)

    sum = _numpy_method(np.sum)
    mean = _numpy_method(np.mean)
    prod = _numpy_method(np.prod)
    max = _numpy_method(np.max)
    min = _numpy_method(np.min)
    argmax = _numpy_method(np.argmax)
    argmin = _numpy_method(np.argmin)
    any = _numpy_method(np.any)
    all = _numpy_method(np.all)
    var = _numpy_method(np.var)
    std = _numpy_method(np.std)
    clip = _numpy_method(np.clip)
    nonzero = _numpy_method(np.nonzero)
    swapaxes = _numpy_method(np.swapaxes)
    squeeze = _numpy_method(np.squeeze)

    # ---- numpy's dispatch protocols (NEP 13 and NEP 18): dispatch.py does the work ---------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return dispatch.array_function(func, types, args, kwargs)

    def __getitem__(self, index):
        return indexing.getitem(self, index)

    def __setitem__(self, index, value):
        indexing.setitem(self, index, value)


# ---- making arrays (DeviceArray's constructors, called on CudaArray) --------------------------------


def from_numpy(array):
    """A CudaArray with the values (and shape, dtype) of a numpy array: a counted copy."""
    return CudaArray.from_numpy(array)


def empty(shape, dtype=np.float64):
    return CudaArray.empty(shape, dtype)


def full(shape, fill_value, dtype=None):
    """Filled by a kernel, so no values cross from the host (the number goes with the launch)."""
    return CudaArray.full(shape, fill_value, dtype)


def zeros(shape, dtype=np.float64):
    return CudaArray.full(shape, 0, dtype)


def ones(shape, dtype=np.float64):
    return CudaArray.full(shape, 1, dtype)


def arange(start, stop=None, step=1, dtype=None):
    """numpy's arange (same length and dtype rules), computed on the device."""
    return CudaArray.arange(start, stop, step, dtype)


def eye(n, m=None, k=0, dtype=np.float64):
    return CudaArray.eye(n, m, k, dtype)
