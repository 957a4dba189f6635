"""Asking what a value is: torch.is_tensor, torch.numel, torch.is_floating_point, ...

    >>> torch.is_tensor(torch.zeros(2, 3)), torch.numel(torch.zeros(2, 3))
    (True, 6)

PyTorch has these as functions beside the Tensor methods of the same name (`x.numel()`); the
functions refuse anything but a tensor with PyTorch's TypeError.
"""

from .tensor import Tensor


def is_tensor(obj):
    """True for a Tensor (nn.Parameter included), False for anything else, a number or a list."""
    return isinstance(obj, Tensor)


def _tensor_argument(function, input):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{function}(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}. Fix: pass a tensor, e.g. torch.tensor(...)."
        )
    return input


def numel(input):
    """The number of elements of a tensor: the product of its sizes."""
    return _tensor_argument("numel", input).numel()


def is_floating_point(input):
    """Does the tensor hold floats (float16, float32, float64)?"""
    return _tensor_argument("is_floating_point", input).is_floating_point()


def is_complex(input):
    """Does the tensor hold complex numbers? Never here: autograd_lab has no complex dtype."""
    return _tensor_argument("is_complex", input).is_complex()
