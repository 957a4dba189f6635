"""How many CPU threads an operation may use: torch.get_num_threads / torch.set_num_threads.

    >>> torch.set_num_threads(1)
    >>> torch.get_num_threads()
    1

The eager core is numpy, which runs on one thread; the number is used by the compiled kernels
(numba, see compile/) and by `arange`, whose last bits depend on how PyTorch splits a long range
among its threads (ranges.py).
"""

import os

from . import optional


def _default_num_threads():
    """PyTorch's default: OMP_NUM_THREADS or MKL_NUM_THREADS if set, else the CPUs we may use.

    (PyTorch's MKL builds count physical cores, so on a CPU with hyper-threading its default is
    half of ours; set_num_threads makes the two agree.)
    """
    for name in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):  # MKL's wins, as in PyTorch
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


_num_threads = _default_num_threads()


def get_num_threads():
    """The number of threads operations may use on the CPU."""
    return _num_threads


def set_num_threads(n):
    """Let operations use `n` CPU threads (numba's kernels included, up to the threads it has)."""
    global _num_threads
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError(
            f"set_num_threads expects a positive integer number of threads, got {n!r}"
        )
    _num_threads = n
    if not optional.installed("numba"):  # no compiled kernels to tell: the number is all there is
        return
    import numba  # only now: importing numba is slow, and most scripts never call this

    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
