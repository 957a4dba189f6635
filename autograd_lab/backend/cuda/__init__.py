"""The CUDA backend: `CudaArray` (GPU storage that answers numpy's calls) and its kernels.

    from autograd_lab.backend import cuda
    x = cuda.from_numpy(np.ones((2, 3)))   # host -> device (counted)
    y = np.exp(x) @ x.T                    # CUDA kernels, through numpy's dispatch protocols
    y.to_numpy()                           # device -> host (counted)

The files, for a reader:
    array.py          CudaArray: storage, views, the API summary
    kernels.py        elementwise kernels (map, zip, where, fill): start reading here
    reduce_kernels.py sum/max/argmax and softmax: shared-memory trees
    matmul.py         the tiled matmul kernel and its launcher
    index_kernels.py  gather, scatter(-add), nonzero
    elementwise.py, reductions.py, indexing.py, shapes.py   the host side: numpy's rules
    dispatch.py       which numpy ufunc / function runs which of the above
    launch.py         launch sizes; the simulator; transfers.py counts host<->device copies

numba is imported the first time something here is used (not by `import autograd_lab`), so the
choice between a GPU and numba's simulator (NUMBA_ENABLE_CUDASIM=1) stays open until then.
"""

from .transfers import count_transfers  # noqa: F401  (no numba needed)

_FROM_ARRAY = ("CudaArray", "from_numpy", "empty", "zeros", "ones", "full", "arange", "eye",
               "SUPPORTED_DTYPES")  # fmt: skip


def __getattr__(name):
    """Load the numba parts on first use: `cuda.CudaArray`, `cuda.from_numpy`, `cuda.softmax`."""
    if name in _FROM_ARRAY:
        from . import array

        return getattr(array, name)
    if name == "softmax":
        from .reductions import softmax

        return softmax
    raise AttributeError(f"module 'autograd_lab.backend.cuda' has no attribute {name!r}")
