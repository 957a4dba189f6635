"""The limits of each dtype: torch.finfo for floats, torch.iinfo for integers.

    >>> torch.finfo(torch.float32).eps      # the gap between 1.0 and the next float32
    1.1920928955078125e-07
    >>> torch.iinfo(torch.int8).max
    127

The numbers come from numpy, which stores our tensors in the same IEEE formats PyTorch uses.
"""

import numpy as np

from . import types


class finfo:
    """Limits of a floating-point dtype (the default dtype when none is given).

    bits: its size; eps: the gap between 1 and the next number; max, min: the largest and lowest
    finite numbers; tiny (also smallest_normal): the smallest positive normal number;
    resolution: 10 ** -(the decimal digits it holds).
    """

    def __init__(self, type=None):
        dtype = types.get_default_dtype() if type is None else types.to_dtype(type)
        if not dtype.is_floating_point:
            raise TypeError(
                f"torch.finfo() requires a floating point input type, got {dtype}. Use "
                "torch.iinfo to handle 'torch.finfo' of integer types."
            )
        info = np.finfo(dtype.numpy)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # exactly 1e-06, not float32's nearest
        self.dtype = dtype.name  # a string, as in PyTorch: 'float32'

    def __repr__(self):  # %g: six significant digits, PyTorch's text
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype: bits (its size), max and min (the largest and lowest values)."""

    def __init__(self, type):
        dtype = types.to_dtype(type)
        if dtype.is_floating_point or dtype is types.bool_:
            raise TypeError(
                f"torch.iinfo() requires an integer input type, got {dtype}. Use torch.finfo "
                "to handle 'torch.iinfo' of floating-point types."
            )
        info = np.iinfo(dtype.numpy)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = dtype.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # as PyTorch
