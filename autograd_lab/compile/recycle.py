"""Recycled output arrays for generated kernels: a big array is reused once nobody holds it.

    >>> a = empty((1024, 1024), np.float32)     # a new 4 MB array
    >>> del a                                   # nobody holds it any more...
    >>> b = empty((1024, 1024), np.float32)     # ...so the next request gets it back

Why: asking the operating system for fresh memory is not free. A new 16 MB array is mapped page
by page on first write (4096 page faults, and the system zeroes every page): about 0.8 ms more
than writing an array used before, on our 2-core machine (measured interleaved, caches equally
cold), when a fused kernel's forward pass over 4M floats takes 1-2 ms. numpy's allocator hands
big blocks back to the system when they are freed (eager mode frees many), so a training loop
would pay this on every step. Keeping the last few big arrays the kernels handed out, and handing
one out again once its reference count says only this list holds it, saves it (PyTorch keeps a
cache of freed blocks for the same reason). Gradients too: a fused loss step on 4096 x 1024
floats, taking turns with eager steps, faulted in 487 fresh pages each time (getrusage), and
none once its gradient came from here.

Safe by construction: an array someone still references (a tensor, a view of it, a saved tensor
in the graph) has a higher reference count, so it is never handed out twice. Only arrays of at
least `MIN_BYTES` are kept, at most `KEEP` of them: a small, bounded cache. Kernels take their
outputs and gradients from here. A gradient nothing else references becomes a leaf's `.grad`
without a copy (autograd/ownership.py): this list's reference does not count against that, as it
never shares the array; once the training loop sets `.grad = None`, the next step reuses it.
"""

import sys
import threading

import numpy as np

from ..autograd import ownership

MIN_BYTES = 1 << 20  # smaller arrays come from numpy's own cache quickly enough
KEEP = 6  # the most recently handed-out big arrays that are remembered
_kept = []  # arrays handed out, newest last
_lock = threading.Lock()  # compile(parallel=True) runs kernels from several threads


def empty(shape, dtype):
    """An uninitialized array, like np.empty: a recycled one when a kept array is free."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize < MIN_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        for k in range(len(_kept)):
            array = _kept[k]
            # references: the list, `array`, getrefcount's argument: 3 means nobody else
            if array.shape == shape and array.dtype == dtype and sys.getrefcount(array) == 3:
                del _kept[k]
                break
        else:
            array = np.empty(shape, dtype)
        _kept.append(array)
        del _kept[:-KEEP]
        return array


def zeros(shape, dtype):
    array = empty(shape, dtype)
    array.fill(0)
    return array


def holds(array):
    """Is `array` one this cache keeps? (Then its reference to it shares nothing: see above.)"""
    return any(kept is array for kept in _kept)


ownership.pool = sys.modules[__name__]
