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
copy_, clamp_, the random fills. Some ops write without it (fill_ with a number, zero_,
masked_fill_, and tril_, triu_ where they write in place), and some refuse any input in the
written-to memory, even one in the same places (index_add_, scatter_, scatter_add_, and
`x[index] = v` through index tensors).
"""

import numpy as np

from .. import storage
from ..layout import dense
from ..tensor import Tensor
from .indexing import check_index_add_arguments
from .shape import (
    _dims_taken,
    _place,
    basic_part,
    expanded_strides,
    is_index_tensor,
    selects_all,
    view_strides,
)
from .views import geometry, places, strided

# the in-place ops that write without looking for overlaps (PyTorch warns for masked_fill_);
# fill_ with a tensor as the value copies it in, and checks as copy_ does
WRITE_WITHOUT_CHECK = {"zero", "masked_fill", "tril", "triu"}
# ... except where tril_ and triu_ compute aside and copy back (triangle_copies_back)
TRIANGLES = {"tril", "triu"}
# the ones that refuse an input in the written-to memory even where it lines up exactly
REFUSE_ANY_OVERLAP = {"index_add", "scatter", "scatter_add"}
# ops whose own checks (dim, index) PyTorch runs before it looks at overlapping memory
CHECKS_FIRST = {"scatter", "scatter_add", "scan_in_place"}  # (the last: cumsum_, cumprod_)
# ... and those whose checks of their arguments come first, but whose other errors come after
# (index_add_: an index value out of range is found only as it is used)
ARGUMENTS_CHECKED_FIRST = {"index_add": check_index_add_arguments}

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
READS_WHAT_IT_WRITES = (  # where PyTorch computes, we refuse: README's Simplifications
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location, in a layout PyTorch 2.13 does not check (a broadcast or strided "
    "input or view): it writes element after element, and an element reads a place another one "
    "writes, so its answer depends on that order; autograd_lab refuses. Fix: .clone() the input "
    "before performing the operation."
)
SHARES = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location: the input would change while it is being read. Fix: .clone() the "
    "input (or the tensor) before performing the operation."
)


def refusal(tensor, op, args, kwargs):
    """PyTorch's error for writing `op(tensor, *args)` into `tensor`, or None when it may."""
    name = op.__name__
    if name in TRIANGLES and triangle_copies_back(tensor._data) and repeats_elements(tensor._data):
        return RuntimeError(REPEATS)  # (copy_'s refusal: see triangle_copies_back)
    if name == "masked_fill" and isinstance(args[0], Tensor):
        # masked_fill_ checks only its mask, as it is: a mask that is part of x (x[1:] filled
        # where x[:2] holds) would change while it is read
        if overlaps_in_part(tensor._data, args[0]._data):
            return RuntimeError(SHARES)
    if name in WRITE_WITHOUT_CHECK or (name == "nan_to_num" and not tensor.is_floating_point()):
        return None  # (an integer has no nan or inf, so nan_to_num_ writes nothing)
    if name == "fill" and not isinstance(args[0], Tensor):
        return None  # filling with one number gives the same result however often it is written
    if name == "index_put":
        return _setitem_refusal(tensor, kwargs["index"], args[0])
    if name in ARGUMENTS_CHECKED_FIRST:
        try:
            ARGUMENTS_CHECKED_FIRST[name](tensor, *args)
        except (IndexError, RuntimeError) as error:
            return error
    inputs = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    numbers = [a for a in (*args, *kwargs.values()) if a is not None and not isinstance(a, Tensor)]
    if name == "clamp" and numbers:
        inputs = []  # beside a number bound, a 0-d tensor bound is read as a number: no memory
    if name in REFUSE_ANY_OVERLAP and any(a is tensor for a in inputs):
        return RuntimeError(SHARES)  # x.scatter_(0, index, x), even when x is empty
    written = tensor._data
    sources = [a._data for a in inputs if a is not tensor]
    if name == "fill":
        sources = []  # fill_ copies a value that shares x's memory before writing it
    if name == "copy_from":
        return _copy_into_view_refusal(written, args[0], broadcast_first=False)
    if repeats_elements(written):
        return RuntimeError(REPEATS)
    if overlaps_itself(written):
        return RuntimeError(OVERLAPS_ITSELF)
    shares = _overlaps if name in REFUSE_ANY_OVERLAP else overlaps_in_part
    if any(shares(written, source) for source in sources):
        return RuntimeError(SHARES)
    expanded = [_expanded(source, written.shape) for source in sources]
    if any(source is not None and reads_what_others_write(written, source) for source in expanded):
        return RuntimeError(READS_WHAT_IT_WRITES)
    return None


def refused_where_pytorch_runs(refusal):
    """Whether `refusal` is one of ours where PyTorch 2.13 writes anyway (README's
    Simplifications): PyTorch would first raise whatever else it finds wrong with the call."""
    return str(refusal) in (OVERLAPS_ITSELF, READS_WHAT_IT_WRITES)


def _setitem_refusal(tensor, index, value):
    """PyTorch's refusal of `x[index] = value`, or None. PyTorch first takes the view
    x[ints, slices, None, ...]; without index tensors it copies the value into that view (copy_'s
    checks), with them it writes through them (index_put_'s checks)."""
    view = _written_view(tensor, basic_part(index))
    parts = index if isinstance(index, tuple) else (index,)
    index_tensors = [part for part in parts if is_index_tensor(part)]
    if not index_tensors:
        if not isinstance(value, Tensor) or value.ndim == 0:
            value = None  # a number or a 0-d value is a fill_ of the view: no overlap check
        return _copy_into_view_refusal(view, value)
    if _is_masked_fill(index_tensors, value):
        # one mask and one number: PyTorch runs masked_fill_, which checks only its mask
        mask = index_tensors[0]
        if isinstance(mask, Tensor) and overlaps_in_part(view, mask._data):
            return RuntimeError(SHARES)
        return None
    # index_put_ writes the places in any order, so it refuses a value or an index tensor that
    # shares any of the view's memory; a view that repeats elements is only warned about. The
    # tensor itself is refused even when empty (PyTorch compares the tensors first: x[mask] = x),
    # except as a value with leading dims of size 1: PyTorch drops those first, which makes it a
    # new view, and a view with no elements shares no memory.
    written_is_tensor = selects_all(basic_part(index), tensor.shape)
    for other in (value, *index_tensors):
        stripped = other is value and tensor.ndim > 0 and tensor.shape[0] == 1
        if other is tensor and written_is_tensor and not stripped:
            return RuntimeError(SHARES)
        if isinstance(other, Tensor) and _overlaps(view, other._data):
            return RuntimeError(SHARES)
    # index_put_ writes (and reads the value) place after place: where the view's own elements
    # share places, PyTorch 2.13 lets it pass and its answer depends on that order (unless one
    # number is written everywhere, as fill_ writes it)
    one_value = not isinstance(value, Tensor) or value.ndim == 0
    if overlaps_itself(view) and not repeats_elements(view) and not one_value:
        return RuntimeError(OVERLAPS_ITSELF)
    # a value that PyTorch does not check (not dense: an expanded row, say) read from places
    # that other elements write: its answer depends on the order it writes them in
    if isinstance(value, Tensor) and _reads_what_index_put_writes(tensor, index, value):
        return RuntimeError(READS_WHAT_IT_WRITES)
    return None


def _reads_what_index_put_writes(tensor, index, value):
    """Whether `x[index] = value` (through index tensors) reads an element of value from a memory
    place that another element writes with a value from elsewhere (reads_what_others_write, for
    the places index names; a place only ever written with its own value never changes)."""
    written, source = tensor._data, value._data
    if not (written.size and source.size and _same_storage(written, source)):
        return False
    part, where = _place(places(*geometry(written)), index)
    try:
        written_places = part[where]
        while source.ndim > written_places.ndim and source.shape[0] == 1:
            source = source[0, ...]  # PyTorch drops a value's extra leading dims of size 1
        read_places = np.broadcast_to(places(*geometry(source)), written_places.shape)
    except (IndexError, ValueError):
        return False  # an index out of range, a value that does not fit: index_put says so
    writes = written_places.reshape(-1).tolist()
    reads = read_places.reshape(-1).tolist()
    return _reads_a_changed_place(writes, reads, copies=True)


def _copy_into_view_refusal(view, value, broadcast_first=True):
    """copy_'s checks for `view[...] = value` and `view.copy_(value)`: value is a tensor, broadcast
    to the view's shape after dropping its leading dims of size 1 (as PyTorch's copy_to does), or
    None for a number. `broadcast_first`: x[...] = value broadcasts the value before it calls
    copy_; copy_ itself compares the value's memory as it is, so a value in the view's places
    seen with another shape (`x.unsqueeze(0).copy_(x)`) overlaps it in part."""
    source = None
    if isinstance(value, Tensor) and value.shape == view.shape:
        source = value._data
    elif isinstance(value, Tensor):
        source = _expanded(_without_leading_ones(value._data), view.shape)
        if source is None and broadcast_first:
            return None  # the shapes do not fit: index_put says so itself
    compared = source  # what PyTorch compares with the view's memory
    if not broadcast_first and isinstance(value, Tensor):
        compared = value._data  # (before copy_ finds that the shapes do not fit, if they don't)
    if compared is not None and same_places(view, compared):
        return None  # the value already is the view: PyTorch has nothing to copy
    if repeats_elements(view):
        return RuntimeError(REPEATS)
    if overlaps_itself(view):
        return RuntimeError(OVERLAPS_ITSELF)
    if compared is not None and overlaps_in_part(view, compared):
        return RuntimeError(SHARES)
    if source is not None and reads_what_others_write(view, source, copies=True):
        return RuntimeError(READS_WHAT_IT_WRITES)
    return None


def _written_view(tensor, parts):
    """The view x[ints, slices, None, ...] that `x[index] = value` writes into, with PyTorch's
    strides: exact strides decide whether a value is that very view, and PyTorch applies the
    parts one by one, a None as an unsqueeze (numpy gives its new dim stride 0, PyTorch the
    stride that keeps the view dense)."""
    tensor.detach()[parts]  # its checks and errors: an int out of range, too many indices, ...
    array, dim = tensor._data, 0
    for position, part in enumerate(parts):
        if part is None or isinstance(part, bool):  # PyTorch's unsqueeze: the stride of a
            # new dim keeps the view dense (numpy's expand_dims may give it and its neighbours
            # of size 1 other strides)
            size, stride, offset = geometry(array)
            step = stride[dim] * size[dim] if dim < len(size) else 1
            size, stride = size[:dim] + (1,) + size[dim:], stride[:dim] + (step,) + stride[dim:]
            array = strided(array, size, stride, offset, writeable=False)
            if part is False:  # x[False] picks nothing
                array = array[(slice(None),) * dim + (slice(0, 0),)]
            dim += 1
        elif part is Ellipsis:
            dim = array.ndim - sum(_dims_taken(p) for p in parts[position + 1 :])
        elif isinstance(part, slice):
            step = geometry(array)[1][dim] * part.indices(array.shape[dim])[2]
            array = array[(slice(None),) * dim + (part,)]
            if array.shape[dim] == 1:  # numpy keeps the old stride there, PyTorch multiplies
                size, stride, offset = geometry(array)
                stride = stride[:dim] + (step,) + stride[dim + 1 :]
                array = strided(array, size, stride, offset, writeable=False)
            dim += 1
        else:  # an int selects: the dim goes
            array = array[(slice(None),) * dim + (part, Ellipsis)]
    return array


def _without_leading_ones(array):
    """`array` with all its leading dims of size 1 dropped as PyTorch's copy_to drops them: with
    view(), whose strides for the dims of size 1 that remain may differ from the array's own
    (shape.view_strides), and so decide whether the expanded value lies in the written view's
    places in the same layout (x[None] = x on a transposed x: not the same strides, refused)."""
    leading_ones = 0
    while leading_ones < array.ndim and array.shape[leading_ones] == 1:
        leading_ones += 1
    size, stride, offset = geometry(array)
    strides = view_strides(size, stride, size[leading_ones:])
    return strided(array, size[leading_ones:], strides, offset, writeable=False)


def _expanded(array, shape):
    """array.expand(shape) with PyTorch's strides (shape.expanded_strides), or None where the
    shapes do not fit."""
    size, stride, offset = geometry(array)
    strides = expanded_strides(size, stride, shape)
    return None if strides is None else strided(array, tuple(shape), tuple(strides), offset)


def _is_masked_fill(index_tensors, value):
    """Whether PyTorch's index_put_ hands `x[mask] = value` to masked_fill_: one bool mask as the
    only index tensor, and a value of one element on the CPU (a number becomes one)."""
    if len(index_tensors) != 1 or not _is_mask(index_tensors[0]):
        return False
    if not isinstance(value, Tensor):
        return True
    return value.numel() == 1 and not storage.is_device_array(value._data)


def _is_mask(part):
    if isinstance(part, Tensor):
        return part._data.dtype in (np.bool_, np.uint8)
    return np.asarray(part).dtype == np.bool_  # a list of True and False


def _overlaps(written, source):
    """PyTorch's full or partial overlap: both dense, in one storage, and their memory ranges
    meet (where either is not dense PyTorch finds it "too hard" to tell, and lets it pass)."""
    if not (written.size and source.size and dense(written) and dense(source)):
        return False
    return _same_storage(written, source) and _ranges_meet(written, source)


def repeats_elements(array):
    """Whether several elements of `array` lie in one memory place, as far as PyTorch tells: a
    dim of stride 0 longer than 1 (other overlapping layouts, from as_strided, pass unchecked)."""
    if array.size == 0 or dense(array):
        return False
    size, stride, _ = geometry(array)
    return any(step == 0 and length > 1 for length, step in zip(size, stride))


def triangle_copies_back(array):
    """Whether PyTorch's tril_/triu_ compute `array`'s new values aside and copy them back with
    copy_ (whose check refuses a tensor that repeats elements). They write in place where their
    loop over the matrices can walk the memory: a contiguous tensor, one of at most 3 dims, or
    one whose batch dims lay its matrices out one after another (the first batch dim may also
    repeat, stride 0, or have size 1)."""
    if array.ndim <= 3 or array.size == 0 or array.flags.c_contiguous:
        return False
    size, stride, _ = geometry(array)
    matrix_after_matrix = size[-2] * size[-1]  # the stride each batch dim would have
    for dim in range(array.ndim - 3, -1, -1):
        if dim == 0 and (stride[0] == 0 or size[0] == 1):
            continue
        if stride[dim] != matrix_after_matrix:
            return True
        matrix_after_matrix *= size[dim]
    return False


def overlaps_itself(array):
    """Whether two elements of `array` lie in one memory place in a way repeats_elements does not
    see (an as_strided view with overlapping windows, such as size (3, 2) and stride (1, 2))."""
    if array.size == 0 or dense(array):
        return False
    return np.unique(places(*geometry(array))).size < array.size


def overlaps_in_part(written, source):
    """PyTorch's partial overlap: both dense, in one storage, their memory ranges meet, and not
    as the same places (same start, same end and the same strides)."""
    if not (written.size and source.size and dense(written) and dense(source)):
        return False
    if not _same_storage(written, source) or same_places(written, source):
        return False
    return _ranges_meet(written, source)


def reads_what_others_write(written, source, copies=False):
    """Whether an element of `source` (of written's shape) lies in a memory place that another
    element of `written` is written to. PyTorch checks only dense tensors (overlaps_in_part)
    and writes element after element, so here its answer would depend on that order.
    `copies`: the op copies source in (copy_, x[...] = v), so an element that reads its own
    place writes back the value already there, and that place never changes (`x[...] = x[1]` on
    a (2, 1) x: row 1 copies itself, row 0 reads row 1 in any order)."""
    if not (written.size and _same_storage(written, source)) or written.itemsize != source.itemsize:
        return False
    writes = places(*geometry(written)).reshape(-1).tolist()
    reads = places(*geometry(source)).reshape(-1).tolist()
    return _reads_a_changed_place(writes, reads, copies)


def _reads_a_changed_place(writes, reads, copies):
    """Whether element i, which writes place writes[i] from place reads[i], reads a place that
    another element changes (with copies, writing a place from itself changes nothing)."""
    changers = {}  # place -> the elements that may change what is there
    for element, (place, read) in enumerate(zip(writes, reads)):
        if not (copies and read == place):
            changers.setdefault(place, set()).add(element)
    return any(changers.get(read, set()) - {element} for element, read in enumerate(reads))


def _ranges_meet(written, source):
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
    """Store `values` (of array's shape) into `array`. Where several elements of `array` share a
    memory place (an expanded tensor, an as_strided view whose windows overlap: only ops that
    PyTorch lets write there get here), only the elements that change are written, as PyTorch's
    kernels write only those: masked_fill_ where the mask is set, x[i] = v at i. Writing the
    others back would put their old values over the new ones of the elements they share a
    place with (`v = as_strided(x, (2, 3), (1, 1)); v[0] = 1` changes row 1 too)."""
    target = _writable(array)
    shares_places = repeats_elements(array) or overlaps_itself(array)
    if not shares_places or storage.is_device_array(array):
        target[...] = values
        return
    values = np.asarray(values, dtype=array.dtype)
    changed = _bits(values) != _bits(array)  # bit for bit: -0.0 over 0.0 changes, a nan does not
    target[changed] = values[changed]


def _bits(array):
    """Each element's bytes as one unsigned integer, to compare elements bit for bit."""
    return np.ascontiguousarray(array).view(f"u{array.itemsize}")


def _writable(array):
    """`array`, or where numpy made it read-only (expand's repeats, np.diagonal) the same memory
    seen through a writable array: the checks above decided that PyTorch writes there."""
    writeable = array.writeable if storage.is_device_array(array) else array.flags.writeable
    return array if writeable else strided(array, *geometry(array), writeable=True)
