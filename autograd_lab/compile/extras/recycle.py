"""Recycled output arrays for generated kernels: a big array is reused once nobody holds it.

    >>> a = empty((1024, 1024), np.float32)     # a new 4 MB array
    >>> del a                                   # nobody holds it any more...
    >>> b = empty((1024, 1024), np.float32)     # ...so the next request gets its memory back

Why: asking the operating system for fresh memory is not free. A new 16 MB array is mapped page
by page on first write (4096 page faults, and the system zeroes every page): about 0.8 ms more
than writing an array used before, on our 2-core machine (measured interleaved, caches equally
cold), when a fused kernel's forward pass over 4M floats takes 1-2 ms. numpy's allocator hands
big blocks back to the system when they are freed (eager mode frees many), so a training loop
would pay this on every step. Keeping the last few big blocks of memory the kernels used, and
handing one out again once no array uses it, saves it (PyTorch keeps a cache of freed blocks for
the same reason). Gradients too: a fused loss step on 4096 x 1024 floats, taking turns with eager
steps, faulted in 487 fresh pages each time (getrusage), and none once its gradient came from here.

How it knows that no array uses a block: the block is a `_Block` (a numpy array subclass that
owns its memory) and what it hands out is a plain array viewing it. Every view made from that
array later (a reshape, a slice, a transpose, a broadcast) refers to the array handed out, not to
the block: numpy links a new view to its base's base only while both are of the same class, and
the block's class is another. So a weak reference to the handed-out array tells when the last
array using the memory is gone. Only blocks of at least `MIN_BYTES` are kept, at most `KEEP` of
them: a small, bounded cache. Kernels take their outputs and gradients from here; a gradient
becomes a leaf's `.grad` without a copy as any other (autograd/engine.py), and once the training
loop sets `.grad = None`, the next step reuses its memory.
"""

import threading
import weakref

import numpy as np

MIN_BYTES = 1 << 20  # smaller arrays come from numpy's own cache quickly enough
KEEP = 6  # the most recently used big blocks that are remembered


class _Block(np.ndarray):
    """A block of memory this cache keeps (its own class only so that views stop at it)."""


_blocks = []  # [block, weak reference to the array it was last handed out as], newest last
_lock = threading.Lock()  # compile(parallel=True) runs kernels from several threads


def empty(shape, dtype):
    """An uninitialized array, like np.empty: the memory of a kept block when one is free."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        for k, (block, handed_out) in enumerate(_blocks):
            if block.nbytes == nbytes and handed_out() is None:
                del _blocks[k]
                break
        else:
            block = np.ndarray.__new__(_Block, (nbytes,), np.uint8)
        array = block.view(dtype).reshape(shape).view(np.ndarray)
        _blocks.append((block, weakref.ref(array)))
        del _blocks[:-KEEP]
        return array


def zeros(shape, dtype):
    array = empty(shape, dtype)
    array.fill(0)
    return array


def holds(array):
    """Does `array` use the memory of a block this cache keeps?"""
    return any(np.shares_memory(array, block) for block, _ in _blocks)
