"""A one-sample convolution's sums of products where a product may overflow, as PyTorch sums them.

A convolution adds up products a·b. BLAS, which numpy's einsum calls, fuses each product into
its sum (one rounding for a·b + s), so a product beyond float32's range (1.5 · 3.4e38) never
becomes inf on its own: [3.4e38, 3.4e38] ⊛ [-1.42, 1.5] gives -inf there. PyTorch's kernel for
one sample rounds each product first (-inf and inf), then adds: nan. (Its kernel for a batch,
and its matrix products, fuse them in orders of their own: README's Simplifications.)

The two differ only where a finite product overflows, so the fast product runs as before and
is redone, one product at a time, only when the largest finite numbers of the two operands
could overflow together: a check of the largest |x| of each, small beside a convolution. (A
matrix product does not pay for it: it is too cheap for that check, which would make a small
model's training step a tenth slower.)

    >>> import numpy as np
    >>> big = np.full((1, 1, 1, 2), 3.4e38, np.float32)
    >>> kernel = np.array([-1.42, 1.5], np.float32).reshape(1, 1, 1, 2)
    >>> einsum("nchw,ochw->no", big, kernel, sources=(big, kernel))
    array([[nan]], dtype=float32)
"""

import itertools
import math

import numpy as np


def _silently():
    """inf - inf = nan and an overflow to inf are answers here, as in PyTorch: numpy's warnings
    are not. (A new errstate each time: one object cannot be entered twice at once.)"""
    return np.errstate(invalid="ignore", over="ignore")


def einsum(subscripts, a, b, sources):
    """np.einsum(subscripts, a, b) of two operands, each product rounded before it is added where
    one may overflow. `sources` are the arrays whose numbers a and b hold (a convolution's
    windows repeat the input's numbers: checking the input is cheaper); None: BLAS's fused sums
    all the same."""
    inputs, output = subscripts.split("->")
    first, second = inputs.split(",")
    summed = sorted(set(first + second) - set(output))
    sizes = dict(zip(first, a.shape, strict=True)) | dict(zip(second, b.shape, strict=True))
    terms = math.prod(sizes[i] for i in summed)
    if sources is not None and nothing_can_overflow(*sources, terms=terms):
        return np.einsum(subscripts, a, b, optimize=True)  # the common case, nothing to silence
    with _silently():
        if sources is None or not products_may_overflow(*sources):
            return np.einsum(subscripts, a, b, optimize=True)
        kept = "".join(i for i in first if i not in summed) + ","
        kept += "".join(i for i in second if i not in summed) + "->" + output
        total = None
        for values in itertools.product(*(range(sizes[i]) for i in summed)):
            at = dict(zip(summed, values, strict=True))
            a_part = a[tuple(at.get(i, slice(None)) for i in first)]
            b_part = b[tuple(at.get(i, slice(None)) for i in second)]
            term = np.einsum(kept, a_part, b_part)  # products only: nothing is summed here
            total = term if total is None else np.add(total, term, out=total)
        if total is None:  # nothing to sum over: zeros
            return np.einsum(subscripts, a, b)
        return total


# the largest finite number of each float dtype, looked up once (np.finfo is slow to ask)
_LARGEST = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32, np.float64)}


def nothing_can_overflow(a, b, terms=None):
    """Whether a·b is sure to hold no inf or nan and to overflow nowhere: both finite, and even
    a sum of the largest products (`terms` of them; a matrix product: a's last dim) stays in
    range. One |x|.max() of each: a few microseconds, the whole cost of this module for the
    products a learner's model computes."""
    limit = _LARGEST.get(a.dtype)
    if limit is None or type(a) is not np.ndarray or type(b) is not np.ndarray:
        return True  # integers wrap the same either way; a GPU's arrays are not checked
    if a.size == 0 or b.size == 0:
        return True
    if terms is None:
        terms = a.shape[-1] if a.ndim else 1
    # (nan or inf in either makes the product nan or inf: the comparison is then False)
    return float(np.abs(a).max()) * float(np.abs(b).max()) * terms <= limit


def products_may_overflow(a, b):
    """Could a product of a finite number of `a` and one of `b` lie beyond their float dtype?"""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype.kind != "f":
        return False  # (integers wrap the same either way; a GPU's arrays are not checked)
    if a.size == 0 or b.size == 0:
        return False
    return _largest_finite(a) * _largest_finite(b) > float(np.finfo(a.dtype).max)


def _largest_finite(array):
    """The largest |x| of the finite numbers in `array` (0.0 when none), as a Python float."""
    largest = float(np.abs(array).max())
    if math.isfinite(largest):  # the common case: no inf or nan among them
        return largest
    return float(np.max(np.abs(array), initial=0.0, where=np.isfinite(array)))
