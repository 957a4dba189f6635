"""A fix for numba's CUDA simulator: shared arrays made safely when threads ask at once.

The simulator runs each CUDA thread as a Python thread. `cuda.shared.array(...)` returns the
block's one array for that line of code, made by the first thread that asks: it looks the line up
in a dict and, when missing, makes the array and stores it. Two threads between the look-up and
the store (likely once launch() shortens Python's thread switch interval) each made their own
array, so the block's threads stopped sharing and results came out wrong now and then. The same
look-up under a lock fixes it. Nothing changes on a GPU.
"""

import sys
import threading
import traceback

import numpy as np
from numba.core import types
from numba.np import numpy_support


def make_shared_arrays_thread_safe():
    from numba.cuda.simulator import kernelapi

    if getattr(kernelapi.FakeCUDAShared.array, "thread_safe", False):
        return
    lock, make = threading.Lock(), kernelapi.FakeCUDAShared.array

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory, errors: as before
            return make(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = traceback.extract_stack(sys._getframe(1), limit=1)[0][0:2]  # (file, line)
        with lock:
            shared = self._allocations.get(caller)
            if shared is None:
                shared = self._allocations[caller] = np.empty(shape, dtype)
        return shared

    array.thread_safe = True
    kernelapi.FakeCUDAShared.array = array
