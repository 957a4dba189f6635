"""Counting: histograms (histc, histogram), bincount and count_nonzero.

A histogram splits a range [min, max] into equal bins and counts the values falling in each; the
last bin includes max itself. Counts have no useful derivative (a count jumps, or stays put, when
a value moves), so nothing here records a gradient, as in PyTorch.

    >>> autograd_lab.histc(autograd_lab.tensor([1.0, 2.0, 1.0, 4.0]), bins=3, min=1, max=4)
    tensor([2., 1., 1.])

To give PyTorch's counts bit for bit, a value's bin is computed with PyTorch's arithmetic in the
input's own float type: bin = int((x - min) * bins / (max - min)). The bin edges of `histogram`
are PyTorch's `linspace(min, max, bins + 1)`, whose CPU build computes min + step * i with a
single rounding (a fused multiply-add); exact fractions give that one rounding here.
"""

from collections import namedtuple
from fractions import Fraction

import numpy as np

from .. import storage
from ..autograd.function import Op
from ..layout import row_major
from ..tensor import Tensor, _make
from .reduction import _all_if_empty, _dims
from .registry import public


def _on_the_cpu(name, *tensors):
    for t in tensors:
        if isinstance(t, Tensor) and storage.device_of(t._data).type != "cpu":
            raise NotImplementedError(
                f"{name} of a CUDA tensor is not supported by autograd_lab's CUDA backend. Fix: "
                f"count on the CPU, {name}(x.cpu(), ...), and move the result back with .cuda()"
            )


def _float_input(name, input):
    data = input._data
    if data.dtype.kind != "f":
        raise NotImplementedError(
            f'"{name}" is not implemented for {input.dtype} tensors: PyTorch computes histograms '
            f"of floating-point tensors only. Fix: convert first, {name}(x.float(), ...)"
        )
    return data.reshape(-1)


def _check_bins(bins):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _linspace(start, end, steps, dtype):
    """PyTorch's CPU linspace, bit for bit: the first half counts up from start, the second down
    from end (so both ends are exact), each value start + step * i rounded once."""
    kind = np.dtype(dtype).type
    start, end = kind(start), kind(end)
    if steps == 1:
        return np.array([start], dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        step = (end - start) / kind(steps - 1)  # inf where end - start is beyond the dtype
    if not np.isfinite(step):  # no exact fractions of inf: the same sums in the dtype itself
        # (start + inf * 0 is nan, so the two end edges are nan and the others inf or -inf)
        with np.errstate(invalid="ignore"):
            first = [start + step * kind(i) for i in range(steps // 2)]
            second = [end - step * kind(steps - 1 - i) for i in range(steps // 2, steps)]
        return np.array(first + second, dtype)
    values = []
    for i in range(steps):
        if i < steps // 2:
            exact = Fraction(float(start)) + Fraction(float(step)) * i
        else:
            exact = Fraction(float(end)) - Fraction(float(step)) * (steps - 1 - i)
        values.append(_round_once(exact, dtype))
    return np.array(values, dtype)


def _round_once(exact, dtype):
    """A fraction rounded to the nearest `dtype` (float32 too, without an intermediate float64)."""
    if np.dtype(dtype) == np.float64:
        return float(exact)
    nearest = np.float32(float(exact))  # may be one step off only after a double rounding
    with np.errstate(over="ignore"):  # next to float32's largest number is inf: not a candidate
        neighbours = [
            np.nextafter(nearest, np.float32(-np.inf)),
            nearest,
            np.nextafter(nearest, np.float32(np.inf)),
        ]
    neighbours = [v for v in neighbours if np.isfinite(v)]
    return min(
        neighbours, key=lambda v: (abs(Fraction(float(v)) - exact), int(v.view(np.int32)) & 1)
    )


def _bins_of(values, low, high, bins):
    """Each value's bin by PyTorch's formula, in the values' float type; -1 for values outside."""
    inside = (values >= low) & (values <= high)
    kept = values[inside]
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (kept - low) * kept.dtype.type(bins) / (high - low)
    # Where that overflows (a range near the float type's limits), PyTorch's C++ converts an
    # inf or nan to int64 (the smallest int64 on x86), and its pointer arithmetic wraps that
    # round to bin 0: we count those values there too, rather than fail.
    scaled[~np.isfinite(scaled)] = 0
    position = scaled.astype(np.int64)
    position[position == bins] = bins - 1  # max itself goes in the last bin
    return position, inside


@public("histc", method=True, out=True)
def histc(input, bins=100, min=0, max=0):
    """Counts of the values in `bins` equal bins between min and max (min = max: the data's own
    smallest and largest value). Values outside [min, max] are not counted."""
    _on_the_cpu("histc", input)
    values = _float_input("histc", input)
    _check_bins(bins)
    low, high = float(min), float(max)
    if low == high and values.size:
        low, high = float(values.min()), float(values.max())
    if low == high:  # one value (or none): a range of width 2 around it, as PyTorch makes
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(
            f"torch.histc: range of [{low:g}, {high:g}] is not finite. Fix: give finite min= and "
            "max=, or remove the nan and inf values first"
        )
    if not low < high:
        raise RuntimeError(f"torch.histc: max must be larger than min (got min={min}, max={max})")
    kind = values.dtype.type
    low, high = kind(low), kind(high)
    with np.errstate(over="ignore"):
        width = (high - low) / kind(bins)
    if not np.isfinite(width):
        # PyTorch's outer edges come from linspace(min, max, bins + 1), whose first and last
        # are min + width * 0 and max - width * 0: nan when the width overflows, and then no
        # value lies between them
        return _make(np.zeros(bins, dtype=values.dtype))
    position, _ = _bins_of(values, low, high, bins)
    return _make(np.bincount(position, minlength=bins).astype(values.dtype))


class histogram_result(namedtuple("histogram", ["hist", "bin_edges"])):
    """What histogram returns; it prints as PyTorch's `torch.return_types.histogram` does."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.return_types.histogram(\nhist={self.hist!r},\nbin_edges={self.bin_edges!r})"


class HistogramNotDifferentiable(Op):
    """What PyTorch records for a histogram of tensors that require grad: a node whose backward
    says that the derivative is not implemented (so the mistake shows where it is made)."""

    node_name = "NotImplemented"
    no_derivative = True

    @staticmethod
    def forward(ctx, *tensors, results, name):
        ctx.op_name = name
        ctx.set_materialize_grads(False)  # its backward fails anyway: no zeros to make for it
        return results

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            f"the derivative for '{ctx.op_name}' is not implemented: a count does not change "
            "smoothly with the values counted. Fix: call .detach() on its input, or compute the "
            "quantity you want to differentiate some other way"
        )


def _not_differentiable(name, inputs, results):
    """The results, recorded as PyTorch records them when an input requires grad."""
    if not any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        return results
    results = tuple(_make(r._data) for r in results)
    return HistogramNotDifferentiable.apply(*inputs, results=results, name=name)


@public("histogram", method=True)
def histogram(input, bins, *, range=None, weight=None, density=False):
    """histogram(x, bins) -> (hist, bin_edges): `bins` equal bins over `range` (default: from the
    smallest to the largest value), or the bin edges given as a 1-D tensor."""
    _on_the_cpu("histogram", input, bins, weight)
    values = _float_input("histogram", input)
    if isinstance(bins, Tensor):
        edges = bins._data.astype(values.dtype)
        if edges.ndim != 1 or edges.size < 2 or not (np.diff(edges) > 0).all():
            raise RuntimeError(
                "histogram(): bins given as a tensor must be a 1-D, strictly increasing sequence of "
                f"at least 2 bin edges, got {bins}. Fix: sort the edges and remove repeats"
            )
        position = np.searchsorted(edges, values, side="right") - 1
    else:
        _check_bins(bins)
        if range is None:
            low, high = (values.min(), values.max()) if values.size else (0.0, 1.0)
        else:
            low, high = range
        if not (np.isfinite(low) and np.isfinite(high)):
            raise RuntimeError(
                f"histogram(): range of [{low:g}, {high:g}] is not finite. Fix: give a finite "
                "range=, or remove the nan and inf values first"
            )
        if low > high:
            raise RuntimeError(
                f"histogram(): max must be larger than min, got range=({low}, {high})"
            )
        if low == high:  # a bin of width 1 around the single value, as numpy and PyTorch do
            low, high = low - 0.5, high + 0.5
        edges = _linspace(low, high, bins + 1, values.dtype)
        _check_edges_apart(edges, values)
        position = np.searchsorted(edges, values, side="right") - 1
    last = edges.size - 2
    position[values == edges[-1]] = last  # the last edge belongs to the last bin
    inside = (position >= 0) & (position <= last) & (values <= edges[-1])
    counts = np.zeros(last + 1, values.dtype)
    if weight is None:
        np.add.at(counts, position[inside], 1)
    else:
        np.add.at(counts, position[inside], weight._data.reshape(-1)[inside].astype(values.dtype))
    if density:  # as PyTorch: divide by the total, then by each bin's width
        counts = counts / counts.sum()
        counts = counts / np.diff(edges)
    results = (_make(counts), _make(edges))
    return histogram_result(*_not_differentiable("histogram", (input, weight), results))


def _check_edges_apart(edges, values):
    """Refuse a range too narrow for the dtype to tell its bin edges apart (min - 0.5 and
    max + 0.5 of one huge value round back to it): a value there has no bin of its own. PyTorch
    2.13 still counts it, in a bin picked by an undefined conversion (nan to an integer)."""
    if edges[0] == edges[-1] and (values == edges[0]).any():
        raise RuntimeError(
            f"histogram(): the range [{edges[0]:g}, {edges[-1]:g}] is too narrow for "
            f"{values.dtype} to tell its bin edges apart (they are all equal), so the values in it "
            "have no bin (PyTorch 2.13 counts them in a bin picked by an undefined conversion; "
            "autograd_lab refuses). Fix: give a range= whose ends differ as "
            f"{values.dtype} numbers."
        )


@public("bincount", method=True)
def bincount(input, weights=None, minlength=0):
    """How often each whole number 0, 1, 2, ... occurs in a 1-D tensor of non-negative integers;
    with `weights`, the sum of the weights of its occurrences instead."""
    _on_the_cpu("bincount", input, weights)
    data = input._data
    if data.dtype.kind not in "iu":
        raise NotImplementedError(
            f'"bincount" is not implemented for {input.dtype} tensors: it counts whole numbers. '
            "Fix: convert first, x.long().bincount()"
        )
    if data.ndim != 1 or (data < 0).any():
        raise RuntimeError(
            "bincount only supports 1-d non-negative integral inputs. Fix: flatten the tensor "
            "(x.flatten()) and remove or shift negative values"
        )
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0, got {minlength}")
    if data.size == 0:  # PyTorch answers an empty input with int64 zeros, whatever the weights
        return _make(np.zeros(minlength, np.int64))
    length = int(np.max(data, initial=-1)) + 1
    length = length if length > minlength else minlength
    if weights is None:
        return _make(np.bincount(data, minlength=length).astype(np.int64))
    if weights._data.shape != data.shape:
        raise RuntimeError(
            "weights should be 1-d and have the same length as input "
            f"(input: {list(data.shape)}, weights: {list(weights._data.shape)})"
        )
    # float weights keep their dtype, others are counted in float64, as PyTorch does; added one
    # by one in that dtype (numpy's bincount would add in float64, giving other float32 bits)
    dtype = weights._data.dtype if weights._data.dtype.kind == "f" else np.float64
    totals = np.zeros(length, dtype)
    np.add.at(totals, data, weights._data.astype(dtype))
    (result,) = _not_differentiable("bincount", (weights,), (_make(totals),))
    return result


@public("count_nonzero", method=True)
def count_nonzero(input, dim=None):
    """How many elements are not zero, over `dim` (an int or a tuple; all dims by default)."""
    dims = _dims(_all_if_empty(dim, input), input._data.ndim)
    counts = np.sum(input._data != 0, axis=dims, dtype=np.int64)
    return _make(row_major(counts))  # as every reduction's (numpy keeps the input's order)
