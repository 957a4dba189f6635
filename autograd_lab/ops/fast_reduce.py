"""Sum and max of numpy arrays, with faster routes for the shapes training loops hit most.

numpy's reduction loop has a high fixed cost per row: summing a (200, 16) gradient over its batch
axis (every Linear layer's bias gradient) takes several times longer than the matrix-vector product
`ones @ grad`, which BLAS does in one call; the max over a 2-wide class axis (softmax on a
two-class problem) is one `np.maximum` of the two columns. Same results (sums differ only in
rounding order), so the ops call these instead of np.sum / np.max. Any other case, and any array
that is not a plain numpy array (a CudaArray), goes to numpy unchanged.
"""

import math

import numpy as np

_ONES = {}  # (length, dtype) -> a read-only vector of ones, made once


def _ones(n, dtype):
    ones = _ONES.get((n, dtype))
    if ones is None:
        if len(_ONES) > 256:  # bounded: programs with ever-new sizes must not grow it forever
            _ONES.clear()
        ones = _ONES[(n, dtype)] = np.ones(n, dtype)
        ones.flags.writeable = False
    return ones


# inf + -inf = nan and an overflow to inf are answers of a sum, as in PyTorch: numpy's warnings
# are not (an errstate decorator makes no new object per call)
@np.errstate(invalid="ignore", over="ignore")
def sum_array(data, dims, keepdims, dtype=None):
    """np.sum(data, axis=dims, keepdims=keepdims, dtype=dtype); `dims` a sorted tuple of axes."""
    ndim = len(dims)
    if (
        type(data) is np.ndarray
        and dtype is None
        and data.dtype.kind == "f"
        and 0 < ndim < data.ndim
        and data.size
        and data.flags.c_contiguous
    ):
        shape = data.shape
        if dims[-1] == ndim - 1:  # leading axes: ones(rows) @ (rows, rest)
            rows = data.reshape(-1, data.size // math.prod(shape[:ndim]))
            out = _ones(rows.shape[0], data.dtype) @ rows
            kept = (1,) * ndim + shape[ndim:] if keepdims else shape[ndim:]
            return out.reshape(kept)
        if dims[0] == data.ndim - ndim and dims[-1] == data.ndim - 1:  # trailing axes
            inner = math.prod(shape[dims[0] :])
            out = data.reshape(-1, inner) @ _ones(inner, data.dtype)
            kept = shape[: dims[0]] + (1,) * ndim if keepdims else shape[: dims[0]]
            return out.reshape(kept)
    return np.sum(data, axis=dims, keepdims=keepdims, dtype=dtype)


def max_array(data, dims):
    """np.max(data, axis=dims, keepdims=True); a short single axis by elementwise maximum."""
    if type(data) is np.ndarray and len(dims) == 1 and 1 < data.shape[dims[0]] <= 4:
        index = [slice(None)] * data.ndim
        index[dims[0]] = slice(0, 1)
        peak = data[tuple(index)]
        for i in range(1, data.shape[dims[0]]):
            index[dims[0]] = slice(i, i + 1)
            peak = np.maximum(peak, data[tuple(index)])  # NaN wins, as in np.max
        return peak
    if data.size == 0 and type(data) is np.ndarray:
        # nothing to compare: -inf, max's identity, so softmax and logsumexp of nothing work
        shape = [1 if axis in dims else size for axis, size in enumerate(data.shape)]
        return np.full(shape, -np.inf, data.dtype)
    return np.max(data, axis=dims, keepdims=True)
