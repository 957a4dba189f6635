"""Reduction kernels: sum/prod/max/min (and so any/all), argmax/argmin, softmax/log-softmax.

How the threads split the work: the input is seen as (kept dims) x (reduced dims). A *block* of
threads owns one output element (blocks loop over outputs if there are more outputs than blocks).
Each thread first combines a strided share of the reduced elements on its own; then the block
combines the threads' partial results in shared memory as a tree: in each step the first half of
the threads adds in the second half's values, so 256 partials need 8 steps, not 255.

    step 1: t0 += t4, t1 += t5, t2 += t6, t3 += t7      (threads 4..7 idle)
    step 2: t0 += t2, t1 += t3
    step 3: t0 += t1                                     t0 holds the block's result

`cuda.syncthreads()` between steps makes every thread wait until all have written their partial.
The shared arrays' size and dtype are compile-time constants, hence the kernel factories (cached).
"""

import functools

import numba
import numpy as np
from numba import cuda

from .kernels import position
from .scalar_functions import add, exp, log, maximum, minimum, multiply

COMBINE = {"add": add, "multiply": multiply, "maximum": maximum, "minimum": minimum}


@functools.cache
def reduce_kernel(combine_name, dtype, threads):
    """A reduction kernel for one combine function, accumulator dtype and block size."""
    combine = COMBINE[combine_name]
    shared_dtype = numba.from_dtype(np.dtype(dtype))

    def reduce(
        x,
        x_offset,
        kept_shape,
        kept_strides,
        red_shape,
        red_strides,
        n_out,
        n_red,
        parts,
        identity,
        out,
    ):
        # `parts` > 1 splits each output's elements over several blocks (for few, long rows);
        # each block then writes one partial result and a second launch combines them.
        partial = cuda.shared.array(threads, shared_dtype)
        tid = cuda.threadIdx.x
        chunk = (n_red + parts - 1) // parts
        for work in range(cuda.blockIdx.x, n_out * parts, cuda.gridDim.x):
            base = position(work // parts, kept_shape, kept_strides, x_offset)
            start = (work % parts) * chunk
            stop = min(start + chunk, n_red)
            acc = identity
            for r in range(start + tid, stop, threads):  # this thread's share
                acc = combine(acc, x[position(r, red_shape, red_strides, base)])
            partial[tid] = acc
            cuda.syncthreads()
            step = threads // 2
            while step > 0:  # the tree
                if tid < step:
                    partial[tid] = combine(partial[tid], partial[tid + step])
                cuda.syncthreads()
                step //= 2
            if tid == 0:
                out[work] = partial[0]
            cuda.syncthreads()  # partial[0] is read before the next output overwrites it

    return cuda.jit(reduce)


@cuda.jit(device=True)
def argmax_better(value, index, best, best_index):
    """Does (value, index) beat (best, best_index) for argmax? numpy: the first nan, else the
    first maximum. An index of -1 means "nothing yet"."""
    if best_index < 0:
        return index >= 0
    if index < 0:
        return False
    if best != best:
        return value != value and index < best_index
    return value != value or value > best or (value == best and index < best_index)


@cuda.jit(device=True)
def argmin_better(value, index, best, best_index):
    if best_index < 0:
        return index >= 0
    if index < 0:
        return False
    if best != best:
        return value != value and index < best_index
    return value != value or value < best or (value == best and index < best_index)


BETTER = {"argmax": argmax_better, "argmin": argmin_better}


@functools.cache
def arg_reduce_kernel(name, dtype, threads):
    """argmax/argmin: the same tree, carrying (value, index) pairs; one block per output."""
    better = BETTER[name]
    shared_dtype = numba.from_dtype(np.dtype(dtype))

    def arg_reduce(
        x, x_offset, kept_shape, kept_strides, red_shape, red_strides, n_out, n_red, out
    ):
        values = cuda.shared.array(threads, shared_dtype)
        indices = cuda.shared.array(threads, numba.int64)
        tid = cuda.threadIdx.x
        for j in range(cuda.blockIdx.x, n_out, cuda.gridDim.x):
            base = position(j, kept_shape, kept_strides, x_offset)
            best, best_index = x[base], -1
            for r in range(tid, n_red, threads):
                value = x[position(r, red_shape, red_strides, base)]
                if better(value, r, best, best_index):
                    best, best_index = value, r
            values[tid], indices[tid] = best, best_index
            cuda.syncthreads()
            step = threads // 2
            while step > 0:
                if tid < step and better(
                    values[tid + step], indices[tid + step], values[tid], indices[tid]
                ):
                    values[tid], indices[tid] = values[tid + step], indices[tid + step]
                cuda.syncthreads()
                step //= 2
            if tid == 0:
                out[j] = indices[0]
            cuda.syncthreads()

    return cuda.jit(arg_reduce)


@functools.cache
def softmax_kernel(dtype, threads, log_softmax):
    """softmax (or log-softmax) along one axis: one block per row, three passes over the row.

    1. m = max of the row (a tree), so that exp(x - m) <= 1 never overflows;
    2. s = sum of exp(x - m) (a tree);
    3. write exp(x - m) / s, or (x - m) - log(s).
    """
    shared_dtype = numba.from_dtype(np.dtype(dtype))

    def softmax(
        x,
        x_offset,
        x_kept_strides,
        x_step,
        out,
        out_kept_strides,
        out_step,
        kept_shape,
        n_rows,
        n,
        zero,
    ):
        partial = cuda.shared.array(threads, shared_dtype)
        tid = cuda.threadIdx.x
        for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
            x_base = position(row, kept_shape, x_kept_strides, x_offset)
            out_base = position(row, kept_shape, out_kept_strides, 0)
            peak = x[x_base]
            for k in range(tid, n, threads):
                peak = maximum(peak, x[x_base + k * x_step])
            partial[tid] = peak
            cuda.syncthreads()
            step = threads // 2
            while step > 0:
                if tid < step:
                    partial[tid] = maximum(partial[tid], partial[tid + step])
                cuda.syncthreads()
                step //= 2
            peak = partial[0]
            cuda.syncthreads()
            total = zero
            for k in range(tid, n, threads):
                total += exp(x[x_base + k * x_step] - peak)
            partial[tid] = total
            cuda.syncthreads()
            step = threads // 2
            while step > 0:
                if tid < step:
                    partial[tid] = partial[tid] + partial[tid + step]
                cuda.syncthreads()
                step //= 2
            total = partial[0]
            for k in range(tid, n, threads):
                shifted = x[x_base + k * x_step] - peak
                if log_softmax:
                    out[out_base + k * out_step] = shifted - log(total)
                else:
                    out[out_base + k * out_step] = exp(shifted) / total
            cuda.syncthreads()

    return cuda.jit(softmax)
