"""Memory overlap: where PyTorch refuses an in-place write because one memory place is seen twice.

`x = zeros(1).expand(3)` has three elements in one memory place (a stride of 0). An in-place op
that computes each element from old values cannot write them all there, so PyTorch refuses:

    >>> ag.zeros(1).expand(3).add_(1)
    RuntimeError: unsupported operation: more than one element of the written-to tensor refers to
    a single memory location ...

An input that covers the written-to tensor's memory only in part (`a[:3].add_(a[1:])`) would be
read while it is being written, and is refused too. An input in exactly the same places
(`x.add_(x)`) is fine: each element reads its own old value before writing it.

PyTorch checks in the machinery most element-wise kernels share (TensorIterator): add_, exp_,
copy_, clamp_, the random fills. Some ops write without it (fill_, zero_, masked_fill_, tril_,
triu_, and `x[index] = v` through index tensors), and some refuse any input in the written-to
memory, even one in the same places (index_add_, scatter_, scatter_add_).
"""

import numpy as np

from .. import storage
from ..tensor import Tensor
from .views import geometry, places, strided

# the in-place ops that write without looking for overlaps (PyTorch warns for masked_fill_)
WRITE_WITHOUT_CHECK = {"fill", "zero", "masked_fill", "tril", "triu"}
# the ones that refuse an input in the written-to memory even where it lines up exactly
REFUSE_ANY_OVERLAP = {"index_add", "scatter", "scatter_add"}
# ops whose own checks (dim, index) PyTorch runs before it looks at overlapping memory
CHECKS_FIRST = {"scatter", "scatter_add"}

REPEATS = (  # (lesson 04 shows it)
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location (this tensor repeats elements with expand or broadcast_to, so writing one "
    "would write several). Fix: .clone() the tensor before modifying it."
)
OVERLAPS_ITSELF = (  # where PyTorch computes, we refuse: README's Simplifications
    "unsupported operation: some elements of the written-to tensor refer to a single memory "
    "location (an as_strided view whose elements overlap): PyTorch 2.13 writes them one after "
    "another, so its answer depends on that order; autograd_lab refuses. Fix: .clone() the "
    "tensor before modifying it."
)
SHARES = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location: the input would change while it is being read. Fix: .clone() the "
    "input (or the tensor) before performing the operation."
)


def refusal(tensor, op, args, kwargs):
    """PyTorch's error for writing `op(tensor, *args)` into `tensor`, or None when it may."""
    name = op.__name__
    if name in WRITE_WITHOUT_CHECK or (name == "nan_to_num" and not tensor.is_floating_point()):
        return None  # (an integer has no nan or inf, so nan_to_num_ writes nothing)
    inputs = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    if name in REFUSE_ANY_OVERLAP and tensor._data.size and any(a is tensor for a in inputs):
        return RuntimeError(SHARES)  # x.scatter_(0, index, x)
    written = tensor._data
    sources = [a._data for a in inputs if a is not tensor]
    if name == "index_put":
        # x[i] = v writes into the view x[i] for ints and slices, which must not repeat elements;
        # PyTorch writes through index tensors without the check (an index tensor's x[i] is a
        # copy here). Whether v may overlap x[i] depends on how PyTorch reshapes and copies v
        # first; that is not modelled: v is not checked
        written = tensor.detach()[kwargs["index"]]._data
        sources = []
    if name == "copy_from" and all(same_places(written, source) for source in sources):
        return None  # copying a tensor onto itself: PyTorch has nothing to do
    if repeats_elements(written):
        return RuntimeError(REPEATS)
    if overlaps_itself(written):
        return RuntimeError(OVERLAPS_ITSELF)
    for source in sources:
        if overlaps_in_part(written, source) or (
            name in REFUSE_ANY_OVERLAP and same_places(written, source) and source.size
        ):
            return RuntimeError(SHARES)
    return None


def value_shares_memory(tensor, value):
    """Whether `x[index tensors] = value` would read `value` from x's own memory: PyTorch's
    index_put_ refuses that (it gathers no copy of the value first)."""
    if not isinstance(value, Tensor) or not (value._data.size and tensor._data.size):
        return False
    return _same_storage(value._data, tensor._data) and np.may_share_memory(
        value._data, tensor._data
    )


def repeats_elements(array):
    """Whether several elements of `array` lie in one memory place, as far as PyTorch tells: a
    dim of stride 0 longer than 1 (other overlapping layouts, from as_strided, pass unchecked)."""
    if array.size == 0 or dense(array):
        return False
    size, stride, _ = geometry(array)
    return any(step == 0 and length > 1 for length, step in zip(size, stride))


def overlaps_itself(array):
    """Whether two elements of `array` lie in one memory place in a way repeats_elements does not
    see (an as_strided view with overlapping windows, such as size (3, 2) and stride (1, 2))."""
    if array.size == 0 or dense(array):
        return False
    return np.unique(places(*geometry(array))).size < array.size


def dense(array):
    """Whether `array`'s elements fill a block of memory, each place once (some order of dims)."""
    size, stride, _ = geometry(array)
    needed = 1
    for step, length in sorted((s, n) for n, s in zip(size, stride) if n > 1):
        if step != needed:
            return False
        needed *= length
    return True


def overlaps_in_part(written, source):
    """PyTorch's partial overlap: both dense, in one storage, their memory ranges meet, and not
    as the same places (same start, same end and the same strides)."""
    if not (written.size and source.size and dense(written) and dense(source)):
        return False
    if not _same_storage(written, source) or same_places(written, source):
        return False
    start, end = _memory_range(written)
    source_start, source_end = _memory_range(source)
    return start < source_end and source_start < end


def same_places(written, source):
    """Whether two arrays of one storage start and end at the same place with the same strides."""
    return (
        _same_storage(written, source)
        and _memory_range(written) == _memory_range(source)
        and geometry(written)[1] == geometry(source)[1]
    )


def _memory_range(array):
    """(first, last + 1) of the bytes a dense array covers, counted from its storage's start."""
    start = geometry(array)[2] * array.itemsize
    return start, start + array.size * array.itemsize


def _same_storage(a, b):
    if storage.is_device_array(a) != storage.is_device_array(b):
        return False  # one on the GPU, one on the host
    return storage.same_storage(a, b)


def write(array, values):
    """Store `values` (of array's shape) into `array`. Where `array` repeats memory places (only
    ops that PyTorch lets write there get here), only the elements that change are written, as
    PyTorch's kernels write only those: masked_fill_ where the mask is set, x[i] = v at i."""
    target = _writable(array)
    if not repeats_elements(array) or storage.is_device_array(array):
        target[...] = values
        return
    changed = values != array  # (a nan compares unequal to itself: written again, still nan)
    target[changed] = values[changed]


def _writable(array):
    """`array`, or where numpy made it read-only (expand's repeats, np.diagonal) the same memory
    seen through a writable array: the checks above decided that PyTorch writes there."""
    writeable = array.writeable if storage.is_device_array(array) else array.flags.writeable
    return array if writeable else strided(array, *geometry(array), writeable=True)
