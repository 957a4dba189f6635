"""dtypes, devices and sizes: the small value types a Tensor is described by.

>>> import autograd_lab as ag
>>> ag.float32, ag.device("cpu"), ag.Size([2, 3])
(autograd_lab.float32, device(type='cpu'), autograd_lab.Size([2, 3]))
"""

import numpy as np


class dtype:
    """A tensor's element type; wraps the numpy dtype that stores it."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize")

    def __init__(self, name, numpy_dtype):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.is_floating_point = self.numpy.kind == "f"
        self.itemsize = self.numpy.itemsize

    def __repr__(self):
        return f"autograd_lab.{self.name}"

    def __reduce__(self):  # pickle as the module-level singleton
        return (to_dtype, (self.name,))


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)  # exported as autograd_lab.bool
uint8 = dtype("uint8", np.uint8)

_BY_NUMPY = {d.numpy: d for d in (float16, float32, float64, int32, int64, bool_, uint8)}
_BY_NAME = {d.name: d for d in _BY_NUMPY.values()}


def to_dtype(value):
    """Turn a dtype, a numpy dtype, a Python type or a name into one of ours."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        return _BY_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        known = ", ".join(sorted(_BY_NAME))
        raise TypeError(f"unknown dtype {value!r}; use one of: {known}") from None


def of_array(array):
    """The dtype of a numpy array."""
    return _BY_NUMPY[array.dtype]


def default_numpy_dtype(array):
    """PyTorch's defaults for data given as Python numbers: floats become float32, ints int64."""
    kind = array.dtype.kind
    if kind == "f":
        return np.float32
    if kind in "iu":
        return np.int64
    if kind == "b":
        return np.bool_
    raise TypeError(
        f"cannot make a tensor from data of type {array.dtype}; give numbers, nested lists of "
        "numbers, or a numpy array"
    )


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}  # numpy dtype kind -> bool < integer < float


def result_type(a, b):
    """The numpy dtype of a binary op's result under PyTorch's promotion rules.

    numpy and PyTorch agree except in two places we fix here: mixing categories (bool < integer <
    float) gives the higher category's dtype (int64 * float32 is float32; numpy would go to
    float64), and a 0-dim tensor does not widen a dimensioned tensor of the same category
    (float32 tensor * float64 scalar tensor stays float32).
    """
    if a.dtype == b.dtype:
        return a.dtype
    a_category, b_category = _CATEGORY[a.dtype.kind], _CATEGORY[b.dtype.kind]
    if a_category != b_category:
        return a.dtype if a_category > b_category else b.dtype
    if a.ndim == 0 and b.ndim > 0:
        return b.dtype
    if b.ndim == 0 and a.ndim > 0:
        return a.dtype
    return np.promote_types(a.dtype, b.dtype)


class device:
    """Where a tensor's storage lives: 'cpu' (numpy) or 'cuda' (numba-CUDA, `autograd_lab.cuda`).

    `device("cuda:0")`, `device("cuda", 0)` and `device(0)` name the same GPU, as in PyTorch.
    As in PyTorch, `with device("cuda"):` makes it the default device of the creation functions
    (tensor, zeros, arange, ...) inside the block.
    """

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):  # device(0) is cuda:0
            type, index = "cuda", type
        name, _, number = str(type).partition(":")
        if name not in ("cpu", "cuda"):
            raise RuntimeError(f"unknown device {type!r}; expected 'cpu' or 'cuda'")
        self.type = name
        self.index = int(number) if number else index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __enter__(self):
        _default_devices.append(self)
        return self

    def __exit__(self, *exc_info):
        _default_devices.pop()


_default_devices = [None]  # innermost `with device(...)` last; None: the CPU


def default_device():
    """The device creation functions use when given no `device=` (None: the CPU)."""
    return _default_devices[-1]


CPU = device("cpu")
CUDA = device("cuda", 0)  # what `tensor.device` says for a tensor on the GPU


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's `torch.Size`."""

    __slots__ = ()

    def __repr__(self):
        return f"autograd_lab.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
