"""How kernels are launched: how many threads, and what the CUDA simulator needs.

Every kernel in this package loops over its work ("grid-stride": thread t of T handles items t,
t + T, t + 2T, ...), so the number of threads changes the speed, never the answer. On a GPU we
launch enough threads to fill it. numba's simulator runs each CUDA thread as a Python thread, so
there a handful of threads is far faster, and still runs every loop and every shared-memory step.

The tile and block sizes below are compile-time constants of the kernels that use shared memory
(a shared array's size must be known when the kernel is compiled); `tests/test_cuda_ptx.py`
compiles the GPU sizes to PTX, and the kernel tests run both sizes in the simulator.
"""

import sys
import warnings

import numba
from numba import cuda

SIMULATOR = bool(numba.config.ENABLE_CUDASIM)
if SIMULATOR:  # the short switch interval below needs thread-safe shared arrays (simulator.py)
    from .simulator import make_shared_arrays_thread_safe

    make_shared_arrays_thread_safe()

# (threads per block, blocks at most) for the elementwise kernels
GPU_THREADS, GPU_BLOCKS = 256, 65535
SIM_THREADS, SIM_BLOCKS = 8, 2
# threads per block of a reduction (a power of two: the shared-memory tree halves it each step)
GPU_REDUCE_THREADS, SIM_REDUCE_THREADS = 256, 8
# matmul: (thread rows, thread columns, output rows per thread, output columns per thread, K tile)
GPU_MATMUL, SIM_MATMUL = (16, 16, 4, 4, 16), (2, 2, 4, 4, 8)

THREADS, MAX_BLOCKS = (SIM_THREADS, SIM_BLOCKS) if SIMULATOR else (GPU_THREADS, GPU_BLOCKS)
REDUCE_THREADS = SIM_REDUCE_THREADS if SIMULATOR else GPU_REDUCE_THREADS
MATMUL = SIM_MATMUL if SIMULATOR else GPU_MATMUL


def blocks_for(n, threads):
    """Enough blocks of `threads` to give every item its own thread, up to MAX_BLOCKS."""
    return max(1, min((n + threads - 1) // threads, MAX_BLOCKS))


def launch(kernel, blocks, threads, *args):
    """Run `kernel[blocks, threads](*args)`.

    Under the simulator two things change, neither of them a result: numpy's warnings about inf
    and nan are silenced (a GPU computes the same values silently, and the simulator's threads
    ignore `np.errstate`), and Python switches threads more often, because the simulated threads
    wait for each other at every `syncthreads()` (that makes shared-memory kernels ~10x faster).
    """
    if not SIMULATOR:
        try:
            kernel[blocks, threads](*args)
        except AttributeError as error:
            if "module 'numpy' has no attribute" in str(error):
                raise _numpy_too_new(error) from error
            raise
        return
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            kernel[blocks, threads](*args)
    finally:
        sys.setswitchinterval(switch_interval)


def _numpy_too_new(error):
    """numba-cuda compiles a kernel on its first launch, and a numba-cuda release older than the
    installed numpy fails then, looking up a numpy function that numpy has removed (numba-cuda
    0.30.4 with numpy 2.5: `np.row_stack`). Say so, and how to fix it, instead of numba's trace."""
    from importlib.metadata import version

    import numpy

    this_minor = ".".join(numpy.__version__.split(".")[:2])
    return RuntimeError(
        f"numba-cuda {version('numba-cuda')} cannot compile CUDA kernels with numpy "
        f'{numpy.__version__} ({error}). Fix: pip install "numpy<{this_minor}", or a '
        "numba-cuda release that supports this numpy."
    )


def launch_over(kernel, n, *args):
    """Run `kernel(n, *args)`, a grid-stride loop over `n` items (nothing to do when n is 0)."""
    if n:
        launch(kernel, blocks_for(n, THREADS), THREADS, n, *args)


def device_array(size, dtype):
    """A new, uninitialised 1-D device buffer of `size` elements (no host copy involved)."""
    return cuda.device_array(max(size, 1), dtype)  # one spare element keeps empty arrays simple
