"""The CUDA backend: `CudaArray` (GPU storage that answers numpy's calls) and its kernels.

    from autograd_lab.backend import cuda
    x = cuda.from_numpy(np.ones((2, 3)))   # host -> device (counted)
    y = np.exp(x) @ x.T                    # CUDA kernels, through numpy's dispatch protocols
    y.to_numpy()                           # device -> host (counted)

The files, for a reader:
    array.py          CudaArray: the class users get, with numpy's protocols; the API summary
    device_array.py   DeviceArray: buffer, shape, strides, views, making arrays, host copies
    kernels.py        elementwise kernels (map, zip, where, fill): start reading here
    scalar_functions.py  what one thread computes for one element (exp, add, maximum, ...)
    reduce_kernels.py sum/max/argmax and softmax: shared-memory trees
    scans.py          cumsum/cumprod: one thread walks each row
    matmul.py         the tiled matmul kernel and its launcher
    index_kernels.py  gather, scatter(-add), nonzero
    elementwise.py, reductions.py, indexing.py, shapes.py   the host side: numpy's rules
    dispatch.py       which numpy ufunc / function runs which of the above
    launch.py         launch sizes; simulator.py fixes a race in numba's simulator
    transfers.py      counts host<->device copies

The modules form layers; each imports only from layers below it (no import circle):
    array.py                    CudaArray (numpy's protocols); from_numpy, zeros, ...
    dispatch.py                 which numpy ufunc / function runs which algorithm
    indexing.py                 the algorithms, numpy's rules on the host; each may use
    matmul.py, reductions.py,   those below it (indexing's nonzero sums with reductions,
    scans.py, shapes.py         most of them reshape with shapes, all use elementwise)
    elementwise.py
    device_array.py             DeviceArray: the data (buffer, shape, strides, dtype), making
                                arrays (empty, full, arange, from_numpy), copies to the host
    index_kernels.py, reduce_kernels.py, kernels.py, scalar_functions.py: the GPU code
    launch.py (simulator.py), transfers.py: launching kernels, counting copies

numpy dispatches on the class of an array, so the class users get must define the protocols, and
those call the algorithms: that class, CudaArray, sits at the top. The algorithms below it know
only its base class, DeviceArray, and make every new array of the class of the arrays they are
given: `type(x).empty(shape, dtype)`, `x.view_of(...)` (or `class_of([a, b])` for an operation
that mixes arrays and numbers). So the arrays a CudaArray's operations give are CudaArrays too,
without any lower module naming that class.

Importing this package imports numba (`import autograd_lab` does not: autograd_lab.cuda loads this
package the first time CUDA is used), so NUMBA_ENABLE_CUDASIM=1 must be set before that.
"""

from .array import CudaArray, arange, empty, eye, from_numpy, full, ones, zeros  # noqa: F401
from .device_array import SUPPORTED_DTYPES  # noqa: F401
from .reductions import softmax  # noqa: F401
from .transfers import count_transfers  # noqa: F401
