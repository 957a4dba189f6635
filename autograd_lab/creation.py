"""Making tensors: from data, filled with a value, and ranges (random tensors: see random.py).

    >>> import autograd_lab as torch
    >>> torch.tensor([1, 2]).dtype, torch.tensor([1.0, 2.0]).dtype
    (torch.int64, torch.float32)

Python floats become the default dtype, float32 unless `set_default_dtype` changed it (types.py).

`rand`, `randn`, `randint`, `manual_seed` & co live in random.py: they draw PyTorch's CPU numbers
(the same seed gives the same numbers as PyTorch).
"""

import numpy as np

from . import promotion, ranges, storage, types
from .layout import copy_keeping_layout, laid_out_as, row_major, strides_chosen
from .tensor import Tensor, _make


def _device(device):
    """The `device=` argument, or the default device (`with autograd_lab.device("cuda"):`)."""
    return storage.resolve_device(device if device is not None else types.default_device())


def _new(make, *args, device, **kwargs):
    return storage.new(make, *args, device=_device(device), **kwargs)


def _finish(array, dtype, requires_grad, device):
    """Apply the options every creation function shares."""
    device = _device(device)
    if dtype is not None:
        _check_fits(array, types.to_dtype(dtype))
        array = array.astype(types.to_dtype(dtype).numpy, copy=False)
    if device is not None:
        array = storage.move(array, device)
    fresh_empty = array.size == 0 and not storage.is_device_array(array)
    if fresh_empty and not any(array.strides) and not strides_chosen(array):
        # numpy gives a new empty array strides of 0, PyTorch row-major ones: with those the
        # tensor's transpose shows PyTorch's strides too (`zeros(0, 3).t().stride()` is (1, 3))
        array = row_major(array)
    out = _make(array)
    if requires_grad:
        out.requires_grad_(True)
    return out


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new leaf tensor holding a copy of `data` (a number, nested lists, a numpy array)."""
    if isinstance(data, Tensor):  # a copy laid out as data is (PyTorch: data.to(copy=True))
        array = data._data
        array = array.copy() if storage.is_device_array(array) else copy_keeping_layout(array)
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy arrays and scalars keep their dtype
        array = np.array(data, copy=True)
        if array.dtype not in types._BY_NUMPY:
            array = array.astype(types.default_numpy_dtype(array))
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
            data = [d.item() if isinstance(d, Tensor) else d for d in data]
        try:
            array = np.array(data)
        except ValueError:
            raise ValueError(
                "tensor() needs rectangular data: every inner list must have the same length"
            ) from None
        default = types.default_numpy_dtype(array)  # also refuses data that is not numbers
        if dtype is None:  # with a dtype, convert once (in _finish): float64 keeps 1.1 exact
            array = array.astype(default, copy=False)
    if dtype is not None and isinstance(data, (Tensor, np.ndarray)):
        # a tensor or array is converted as .to(dtype) converts it, unchecked (-inf into int64
        # gives its lowest value); only numbers and lists are checked to fit (_check_fits)
        array, dtype = array.astype(types.to_dtype(dtype).numpy), None
    return _finish(array, dtype, requires_grad, device)


def _check_fits(array, dtype):
    """Floats made into an integer tensor must fit it: PyTorch refuses inf, nan and too large
    numbers (numpy would wrap them silently, e.g. inf into -9223372036854775808)."""
    if array.dtype.kind == "f" and dtype is not types.bool_ and not dtype.is_floating_point:
        if array.size and not dtype.is_complex:  # min() and max() are nan if any value is
            promotion.check_fits("value", float(array.min()), dtype)
            promotion.check_fits("value", float(array.max()), dtype)


def _flat(data):
    for d in data:
        if isinstance(d, (list, tuple)):
            yield from _flat(d)
        else:
            yield d


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but shares memory with a numpy array (or Tensor) when no conversion is needed."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and data.dtype in types._BY_NUMPY:
        return _finish(data, dtype, False, device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor sharing memory with a numpy array: changing one changes the other."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy() expects a numpy.ndarray, got {type(array).__name__}")
    types.of_array(array)
    return _make(array)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _shape(positional, size):
    """The shape, given as zeros(2, 3), zeros((2, 3)) or zeros(size=(2, 3)): PyTorch takes all three."""
    if size is None:
        return _size(positional)
    if positional:
        raise TypeError(
            f"the shape was given twice, as {positional} and as size={size}: write zeros(2, 3) "
            "or zeros(size=(2, 3)), not both"
        )
    return _size((size,))


def _dtype_or(dtype, default):
    return types.to_dtype(dtype).numpy if dtype is not None else default


# zeros, ones, full, arange and eye fill their array on the device itself (see storage.new)


def zeros(*shape, size=None, dtype=None, requires_grad=False, device=None):
    array = _new(
        np.zeros, _shape(shape, size), _dtype_or(dtype, types.default_float()), device=device
    )
    return _finish(array, None, requires_grad, device)


def ones(*shape, size=None, dtype=None, requires_grad=False, device=None):
    array = _new(
        np.ones, _shape(shape, size), _dtype_or(dtype, types.default_float()), device=device
    )
    return _finish(array, None, requires_grad, device)


def empty(*shape, size=None, dtype=None, requires_grad=False, device=None):
    """Zeros: PyTorch leaves the memory uninitialized; here it is never anything but zeros."""
    return zeros(_shape(shape, size), dtype=dtype, requires_grad=requires_grad, device=device)


def _fill_value(value, dtype):
    """fill_value as one number of `dtype`, as PyTorch converts it: an integer dtype refuses a
    number it cannot hold (inf, nan, 1e30), cuts 2.7 to 2, and uint8 wraps -1 to 255."""
    promotion.check_value_fits(value, types.to_dtype(dtype))
    return np.asarray(value).astype(dtype).item()


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    if isinstance(fill_value, Tensor):
        # PyTorch takes a 0-d tensor that needs no gradient as the number it holds (so that
        # number must fit dtype); any other tensor is not a number
        if fill_value.ndim != 0 or fill_value.requires_grad:
            raise TypeError(
                "full(): argument 'fill_value' (position 2) must be Number, not Tensor: only a "
                "0-d tensor that does not require grad counts as a number. Fix: pass "
                "t.item(), or build the result from the tensor, e.g. t.expand(size)."
            )
        fill_value = fill_value.item()
    dtype = _dtype_or(dtype, types.default_numpy_dtype(np.asarray(fill_value)))
    fill = _fill_value(fill_value, dtype)
    array = _new(np.full, _size((size,)), fill, dtype, device=device)
    return _finish(array, None, requires_grad, device)


def _like(fill, input, dtype, requires_grad, device):
    """zeros_like & co: input's shape, and input's dtype and device unless told otherwise."""
    dtype = input._data.dtype if dtype is None else types.to_dtype(dtype).numpy
    device = input.device if device is None else device
    array = _new(np.full, input._data.shape, _fill_value(fill, dtype), dtype, device=device)
    return _finish(laid_out_as(array, input._data), None, requires_grad, device)


def zeros_like(input, dtype=None, requires_grad=False, device=None):
    return _like(0, input, dtype, requires_grad, device)


def ones_like(input, dtype=None, requires_grad=False, device=None):
    return _like(1, input, dtype, requires_grad, device)


def full_like(input, fill_value, dtype=None, requires_grad=False, device=None):
    return _like(fill_value, input, dtype, requires_grad, device)


def empty_like(input, dtype=None, requires_grad=False, device=None):
    """Zeros of input's shape (PyTorch's memory is uninitialized: never read it before writing)."""
    return _like(0, input, dtype, requires_grad, device)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    """start, start + step, ... below end. Integers give int64; any float gives the default dtype
    (float32). The values are PyTorch's to the last bit (see ranges.py)."""
    if end is None:
        start, end = 0, start
    numbers = (start, end, step)
    is_float = any(
        isinstance(v, float) or getattr(v, "is_floating_point", lambda: False)() for v in numbers
    )
    start, end, step = (float(v) if is_float else int(v) for v in numbers)
    dtype = _dtype_or(dtype, types.default_float() if is_float else np.int64)
    if not is_float and np.dtype(dtype).kind in "iu":  # exact integers: filled on the device itself
        ranges.arange_length(start, end, step)  # refuses a zero or wrong-signed step
        array = _new(np.arange, start, end, step, dtype=dtype, device=device)
    else:  # floats: PyTorch's bits are computed on the host (ranges.py), then moved
        array = ranges.arange(start, end, step, dtype)
    return _finish(array, None, requires_grad, device)


def _steps(steps):
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative, got {steps}")
    return int(steps)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    """`steps` evenly spaced numbers from start to end, PyTorch's to the last bit (ranges.py)."""
    array = ranges.linspace(start, end, _steps(steps), _dtype_or(dtype, types.default_float()))
    return _finish(array, None, requires_grad, device)


def logspace(start, end, steps, base=10.0, dtype=None, requires_grad=False, device=None):
    """base ** linspace(start, end, steps): `steps` numbers evenly spaced on a log scale."""
    dtype = _dtype_or(dtype, types.default_float())
    array = ranges.logspace(start, end, _steps(steps), base, dtype)
    return _finish(array, None, requires_grad, device)


def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    array = _new(np.eye, n, m, dtype=_dtype_or(dtype, types.default_float()), device=device)
    return _finish(array, None, requires_grad, device)
