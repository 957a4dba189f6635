"""The CUDA backend: `CudaArray` (GPU storage that answers numpy's calls) and its kernels.

    from autograd_lab.backend import cuda
    x = cuda.from_numpy(np.ones((2, 3)))   # host -> device (counted)
    y = np.exp(x) @ x.T                    # CUDA kernels, through numpy's dispatch protocols
    y.to_numpy()                           # device -> host (counted)

The files, for a reader:
    array.py          CudaArray: storage, views, the API summary
    kernels.py        elementwise kernels (map, zip, where, fill): start reading here
    scalar_functions.py  what one thread computes for one element (exp, add, maximum, ...)
    reduce_kernels.py sum/max/argmax and softmax: shared-memory trees
    matmul.py         the tiled matmul kernel and its launcher
    index_kernels.py  gather, scatter(-add), nonzero
    elementwise.py, reductions.py, indexing.py, shapes.py   the host side: numpy's rules
    dispatch.py       which numpy ufunc / function runs which of the above
    launch.py         launch sizes; simulator.py fixes a race in numba's simulator
    transfers.py      counts host<->device copies

Importing this package imports numba (`import autograd_lab` does not: autograd_lab.cuda loads this
package the first time CUDA is used), so NUMBA_ENABLE_CUDASIM=1 must be set before that.
"""

from .array import (  # noqa: F401  (array first: it loads the other modules in a working order)
    SUPPORTED_DTYPES,
    CudaArray,
    arange,
    empty,
    eye,
    from_numpy,
    full,
    ones,
    zeros,
)
from .reductions import softmax  # noqa: F401
from .transfers import count_transfers  # noqa: F401
