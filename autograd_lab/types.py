"""dtypes, devices and sizes: the small value types a Tensor is described by.

>>> import autograd_lab as torch
>>> torch.float32, torch.device("cpu"), torch.Size([2, 3])
(torch.float32, device(type='cpu'), torch.Size([2, 3]))

They print as `torch.float32` and `torch.Size([2, 3])`, not `autograd_lab.float32`: learners run
their PyTorch scripts with `import autograd_lab as torch` and compare the output with PyTorch's,
line by line, so what we print must not depend on this module's name.

The default dtype (float32, or what `set_default_dtype` chose) and the default device live here,
as one piece of state each, and every creation function asks for them.
"""

import warnings

import numpy as np


class dtype:
    """A tensor's element type; wraps the numpy dtype that stores it.

    `supported=False` marks PyTorch dtypes numpy cannot store (bfloat16, complex): they exist, so a
    script can name and compare them, but making a tensor of one raises an error that says so.
    """

    __slots__ = ("name", "numpy", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name, numpy_dtype, itemsize=None, kind=None):
        self.name = name
        self.numpy = None if numpy_dtype is None else np.dtype(numpy_dtype)
        kind = kind or self.numpy.kind  # 'f' float, 'c' complex, 'i' signed, 'u' unsigned, 'b' bool
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind in "fic"
        self.itemsize = itemsize or self.numpy.itemsize

    def __repr__(self):
        return f"torch.{self.name}"  # PyTorch's text, whatever this module is imported as

    def __reduce__(self):  # pickle as the module-level singleton
        return (_named, (self.name,))


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)  # exported as autograd_lab.bool
uint8 = dtype("uint8", np.uint8)

# PyTorch dtypes numpy has no type for: named, so scripts can mention them, but refused on use.
bfloat16 = dtype("bfloat16", None, itemsize=2, kind="f")
complex32 = dtype("complex32", None, itemsize=4, kind="c")
complex64 = dtype("complex64", None, itemsize=8, kind="c")
complex128 = dtype("complex128", None, itemsize=16, kind="c")
UNSUPPORTED = (bfloat16, complex32, complex64, complex128)

_SUPPORTED = (float16, float32, float64, int8, int16, int32, int64, bool_, uint8)
_BY_NUMPY = {d.numpy: d for d in _SUPPORTED}
_BY_NAME = {d.name: d for d in _SUPPORTED + UNSUPPORTED}


def _named(name):
    """The dtype called `name` (how a pickled dtype comes back as the same object)."""
    return _BY_NAME[name]


def to_dtype(value):
    """Turn a dtype, a numpy dtype, a Python type or a name into one of ours."""
    if isinstance(value, dtype):
        found = value
    elif isinstance(value, str) and value in _BY_NAME:
        found = _BY_NAME[value]
    else:
        try:
            return _BY_NUMPY[np.dtype(value)]
        except (TypeError, KeyError):
            known = ", ".join(d.name for d in _SUPPORTED)
            raise TypeError(f"unknown dtype {value!r}; use one of: {known}") from None
    if found.numpy is None:
        raise TypeError(
            f"autograd_lab does not support {found} tensors: numpy, which stores our tensors, has "
            f"no {found.name} type. Fix: use torch.float32 (or torch.float64) instead."
        )
    return found


def of_array(array):
    """The dtype of a numpy array."""
    return _BY_NUMPY[array.dtype]


# ---- which dtypes an operation computes in ------------------------------------------------------
# PyTorch's kernels are written for some dtypes only (relu has no bool version, log_softmax only
# float ones); asked for another, PyTorch raises NotImplementedError naming the dtype by its C++
# name: "not implemented for 'Long'". These are those names, so our errors can be searched for.
_KERNEL_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
}


def kernel_name(dtype):
    """PyTorch's C++ name of a dtype ('Float' for torch.float32), as its error messages say it."""
    return _KERNEL_NAMES[dtype.name]


def not_implemented_for(operation, dtype):
    """The error PyTorch raises when `operation` has no kernel for `dtype`, to be raised."""
    return NotImplementedError(
        f"\"{operation}\" not implemented for '{_KERNEL_NAMES[dtype.name]}': PyTorch computes "
        f"{operation} for some dtypes only, and {dtype} is not one of them. Fix: convert the "
        "tensor first, e.g. x.float() (or x.long() for a bool tensor)."
    )


def check_differentiable(dtype, recording, fix=None):
    """Autograd computes gradients of floating-point tensors only (PyTorch's "differentiable
    types"). Asked for an integer or bool result while recording (x.sum(dtype=torch.int64) with x
    requiring grad), PyTorch refuses rather than cut the graph without a word; so do we. (x.long()
    is different: a conversion, it gives a tensor that does not require grad.)"""
    if recording and not dtype.is_floating_point:
        fix = fix or (
            "ask for a float dtype, or compute it without the graph: "
            "x.detach().sum(dtype=torch.int64)."
        )
        raise RuntimeError(
            f"Autograd not support dtype: {_KERNEL_NAMES[dtype.name]}. This op would record a "
            f"{dtype} result for a tensor that requires grad, and gradients only flow through "
            f"floating-point tensors. Fix: {fix}"
        )


# Most kernels take every dtype, or (floating_point_only below) the float ones; a few take a list
# of their own, as PyTorch's CPU build has them
_KERNEL_DTYPES = {
    "max_pool2d": ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"),
    "avg_pool2d": ("int64", "float16", "float32", "float64"),
}


def check_kernel_dtype(operation, dtype):
    """Refuse a `dtype` that `operation`'s kernel is not written for (max_pool2d of bool)."""
    if dtype.name not in _KERNEL_DTYPES[operation]:
        raise not_implemented_for(operation, dtype)


def floating_point_only(operation, dtype):
    """Refuse a `dtype` that is not floating-point, as PyTorch's float-only kernels do
    (softmax, gelu, lerp: their formulas need fractions)."""
    if not dtype.is_floating_point:
        raise not_implemented_for(operation, dtype)


# ---- the default dtype ----------------------------------------------------------------------------
_default_dtype = float32  # what Python floats become: torch.tensor(1.5), zeros(2), rand(2), ...


def get_default_dtype():
    """The dtype of new floating-point tensors: float32 unless set_default_dtype changed it."""
    return _default_dtype


def set_default_dtype(d):
    """Make `d` (float32, float64 or float16) the dtype of new floating-point tensors.

    >>> torch.set_default_dtype(torch.float64)
    >>> torch.tensor([1.5]).dtype, torch.zeros(2).dtype
    (torch.float64, torch.float64)
    """
    global _default_dtype
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(
            f"only floating-point types are supported as the default type, got {d!r}. Fix: "
            "pass torch.float32 or torch.float64 (integer tensors are always int64 by default)."
        )
    _default_dtype = to_dtype(d)  # refuses bfloat16, which numpy cannot store


# The legacy type names set_default_tensor_type takes: only floating-point ones may be the default
_FLOAT_TENSOR_TYPES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16}


def set_default_tensor_type(t):
    """PyTorch's older way to set the default dtype (and device): 'torch.DoubleTensor',
    'torch.cuda.FloatTensor'. Deprecated since PyTorch 2.1: use set_default_dtype and
    set_default_device."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    if not isinstance(t, str):
        raise TypeError(
            f"set_default_tensor_type takes a type's name here, like 'torch.DoubleTensor', not "
            f"{t!r}: autograd_lab has no legacy tensor classes. Better: "
            "torch.set_default_dtype(torch.float64)."
        )
    prefix, _, name = t.rpartition(".")
    if prefix not in ("torch", "torch.cuda"):
        raise TypeError(f"unknown tensor type {t!r}; use e.g. 'torch.DoubleTensor'")
    if name not in _FLOAT_TENSOR_TYPES:
        raise TypeError(
            f"only floating-point types are supported as the default type, got {t!r}. Fix: use "
            "'torch.FloatTensor' or 'torch.DoubleTensor'."
        )
    set_default_dtype(_FLOAT_TENSOR_TYPES[name])
    set_default_device("cuda" if prefix == "torch.cuda" else None)


def default_float():
    """The numpy dtype of the default dtype (np.float32 unless set_default_dtype changed it)."""
    return _default_dtype.numpy


def default_numpy_dtype(array):
    """PyTorch's defaults for data given as Python numbers: floats become the default dtype
    (float32), ints int64."""
    kind = array.dtype.kind
    if kind == "f":
        return default_float()
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


_default_devices = [None]  # innermost `with device(...)` last; the first: set_default_device's


def default_device():
    """The device creation functions use when given no `device=` (None: the CPU)."""
    return _default_devices[-1]


def set_default_device(where):
    """Make `where` ('cpu', 'cuda' or None for the CPU) the device of new tensors, as PyTorch does.

    Checked when a tensor is made: asking for 'cuda' without a GPU fails there, as in PyTorch.
    """
    _default_devices[0] = None if where is None else device(where)


def get_default_device():
    """The device new tensors are made on: device(type='cpu') unless set_default_device changed it."""
    chosen = default_device()
    if chosen is None or chosen.type == "cpu":
        return CPU
    return CUDA


CPU = device("cpu")
CUDA = device("cuda", 0)  # what `tensor.device` says for a tensor on the GPU


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints like PyTorch's, `torch.Size([2, 3])`.

    Slicing it, adding a tuple to it or repeating it gives a Size again, as in PyTorch; comparing
    it with a tuple compares the numbers (`Size([2, 3]) == (2, 3)`), with a list never matches.
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        if type(sizes) is tuple and all(type(s) is int for s in sizes):  # a numpy shape: fast
            return super().__new__(cls, sizes)
        numbers = []
        for i, s in enumerate(sizes):
            if not hasattr(s, "__index__"):  # ints, numpy ints and 0-d integer tensors
                raise TypeError(
                    f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')"
                )
            numbers.append(s.__index__())
        return super().__new__(cls, numbers)

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(
                f"can only concatenate tuple (not {type(other).__name__}) to torch.Size"
            )
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):  # (1,) + size is a Size too
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, times):
        return Size(tuple(self) * times)

    __rmul__ = __mul__

    def numel(self):
        """How many elements a tensor of this shape has: the product of the sizes (1 for ())."""
        n = 1
        for s in self:
            n *= s
        return n
