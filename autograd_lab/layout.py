"""Memory layout: where a new tensor's elements lie in memory, as PyTorch lays them out.

A tensor's strides say how far apart in memory its neighbours along each dim are; PyTorch picks
them for every new result, and a learner sees them in `stride()`, `is_contiguous()`, in whether
`view` works, in what `as_strided` reads and in the order `x.uniform_()` fills elements:

    >>> x = ag.ones(2, 3).t()                     # transposed: strides (1, 3)
    >>> x.clone().stride(), x.exp().stride()      # a copy keeps the layout...
    ((1, 3), (1, 3))
    >>> x.contiguous().stride(), x.cumsum(0).stride()  # ...other ops make a row-major one
    ((2, 1), (2, 1))

The rules, each written once here: an elementwise result follows its inputs' layout (PyTorch's
TensorIterator: `laid_out_like_inputs`, applied to every op with a `kernel` by Op._laid_out),
a copy keeps its input's (`copy_keeping_layout`: clone, x.float(), sort), most other new results
are row-major (`row_major`), and a few stay channels-last (`in_suggested_layout`). numpy lays out
its own results by similar rules that differ in the details (a broadcast dim, a dim of size 1).
"""

import functools

import numpy as np

from . import storage
from .backend import contiguous_strides


def copy_keeping_layout(array, like=None, dtype=None):
    """A copy of `array` (converted to `dtype`, if given) laid out in memory as `like` is (by
    default array itself): PyTorch's preserve_format, as in clone, sort or x.float(). The clone of
    a transposed matrix is transposed in memory too, `ones(2, 3).t().clone().stride()` is (1, 3).
    Copy with the dims put outermost-first, then permute them back; when `like` has no gaps, the
    copy also takes its strides exactly. (numpy's own astype keeps the input's order, but for a
    broadcast dim, stride 0, it picks another one than PyTorch.)"""
    like = array if like is None else like
    return _with_strides_of(like, copy_in_order(array, memory_order(like), dtype))


def laid_out_as(array, like):
    """`array` (new, of like's shape) laid out in memory as PyTorch's empty_like(like) lays it out
    (preserve_format, behind zeros_like, ones_like, rand_like, ...): like's strides where like is
    gap-free, else gap-free in like's memory order. `ones_like(x.t())` is transposed in memory
    too, and `randint_like(x.t(), 9)` fills it column after column. (`array` itself when like is
    row-major, the common case.)"""
    if storage.is_device_array(array) or storage.is_device_array(like):
        return array
    if has_row_major_strides(like):
        return row_major(array)
    return copy_keeping_layout(array, like)


def copy_in_order(array, order, dtype=None):
    """A gap-free copy of `array` (converted to `dtype`, if given) whose dims lie in memory in
    `order`, outermost first: copy with the dims put in that order, then permute them back."""
    back = tuple(order.index(dim) for dim in range(len(order)))  # the inverse permutation
    outermost_first = np.transpose(array, order)
    if dtype is None:
        copy = outermost_first.copy()
    else:
        # nan, inf and floats beyond the integer's range convert silently, as in PyTorch (whose
        # results there are the C library's; numpy's are the same, but come with a warning)
        with np.errstate(invalid="ignore"):
            copy = outermost_first.astype(dtype, order="C")
    return np.transpose(copy, back)


def laid_out_like_operands(result, operands, broadcast):
    """`result` (a new array of the broadcast shape) in the layout PyTorch's TensorIterator gives
    the result of an op over `operands` (numpy arrays, each seen with result's shape, stride 0
    where repeated); `broadcast`: whether any operand had another shape. Without broadcasting:
    row-major when every operand is row-major, channels-last when every one is gap-free
    channels-last, the operands' own strides when all are gap-free with the same ones. Otherwise
    gap-free in the memory order of the operands (memory_order: the first decides). A copy only
    where numpy laid it out otherwise."""
    if not broadcast and all(operand.flags.c_contiguous for operand in operands):
        return row_major(result)
    if not broadcast and all(_channels_last_contiguous(operand) for operand in operands):
        return copy_in_order(result, _channels_last_order(result.ndim))
    if not broadcast and all(_dense_like(operand, operands[0]) for operand in operands):
        if result.strides == operands[0].strides:
            return result  # numpy laid it out so already
        return _with_strides_of(operands[0], copy_in_order(result, memory_order(operands[0])))
    order = memory_order(*operands)
    if result.strides == _gap_free_strides(result, order):
        return result  # numpy laid it out so already
    return copy_in_order(result, order)


def _gap_free_strides(array, order):
    """The byte strides of a gap-free array of array's shape whose dims lie in memory in `order`
    (outermost first), as copy_in_order makes them."""
    strides, step = [0] * array.ndim, array.itemsize
    for dim in reversed(order):
        strides[dim] = step
        step *= array.shape[dim]
    return tuple(strides)


def _channels_last_order(ndim):
    """The dims of a channels-last image batch, outermost first: (N, H, W, C) or (N, D, H, W, C)."""
    return [0, *range(2, ndim), 1]


def _channels_last_contiguous(array):
    """Whether `array` is a gap-free channels-last image batch (4-D or 5-D): channels innermost,
    each image dim stepping exactly over the dims inside it (dims of size 1 never step)."""
    if array.ndim not in (4, 5):
        return False
    needed = array.itemsize
    for dim in reversed(_channels_last_order(array.ndim)):
        if array.shape[dim] != 1:
            if array.strides[dim] != needed:
                return False
            needed *= array.shape[dim]
    return True


def _dense_like(operand, first):
    """Whether `operand` has no gaps and no repeats, and the strides of `first`."""
    return operand.strides == first.strides and dense(operand)


def dense(array):
    """Whether `array`'s elements fill a block of memory, each place once, in some order of its
    dims (PyTorch's is_non_overlapping_and_dense): its dims longer than 1, sorted by stride,
    step exactly over each other."""
    needed = array.itemsize
    for step, length in sorted((s, n) for n, s in zip(array.shape, array.strides) if n > 1):
        if step != needed:
            return False
        needed *= length
    return True


def element_strides(array):
    """`array`'s strides in elements, as PyTorch's stride() shows them. numpy gives a new empty
    array strides of 0 (there is no element to step to) where PyTorch gives row-major ones;
    strides chosen on purpose (as_strided, expand: made through numpy's as_strided) stay as
    they are, zeros too: `ag.tensor(0.0).as_strided((0,), (0,)).stride()` is (0,)."""
    if array.size == 0 and not any(array.strides) and not strides_chosen(array):
        return contiguous_strides(array.shape)
    return tuple(step // array.itemsize for step in array.strides)


def strides_chosen(array):
    """Whether numpy's as_strided made `array` (or the array it is a view of): its result looks
    at its input through a helper object (not an array) that numpy keeps as its `.base`."""
    below = getattr(array, "base", None)
    while below is not None:
        if not isinstance(below, np.ndarray):
            return True
        below = below.base
    return False


def _with_strides_of(like, copy):
    """`copy` with like's strides where they describe the same memory (PyTorch's empty_like keeps
    a gap-free tensor's strides exactly, those of its size-1 dims too, which never step)."""
    if storage.is_device_array(copy):
        return copy
    like_steps = element_strides(like)
    copy_steps = [step // copy.itemsize for step in copy.strides]
    gaps = any(size > 1 and a != b for size, a, b in zip(like.shape, like_steps, copy_steps))
    if gaps and like.size:  # (PyTorch counts an empty tensor as gap-free, whatever its strides)
        return copy  # like has gaps: the copy keeps only its order
    strides = tuple(step * copy.itemsize for step in like_steps)
    return np.lib.stride_tricks.as_strided(copy, strides=strides, writeable=True)


def row_major(array):
    """`array` itself if it is row-major (C-contiguous), else a row-major copy: the layout PyTorch
    gives the results of ops that do not follow their input's layout (cat, cumsum, ...).
    (np.ascontiguousarray would do on the host, but it copies a CUDA array to the host.)"""
    if has_row_major_strides(array):
        return array  # the common case, asked first: it is the cheapest question
    if not array.flags.c_contiguous:
        return array.copy()
    if storage.is_device_array(array):
        return array
    # numpy lets a dim of size 0 or 1 have any stride (it never steps along it); PyTorch gives
    # it the row-major one, and stride() shows it: the same memory, seen with those strides
    strides = tuple(step * array.itemsize for step in contiguous_strides(array.shape))
    return np.lib.stride_tricks.as_strided(array, strides=strides, writeable=array.flags.writeable)


def has_row_major_strides(array):
    """Whether `array` is row-major with the row-major strides exactly (its size-1 dims' too)."""
    return array.strides == _row_major_byte_strides(array.shape, array.itemsize)


@functools.lru_cache(maxsize=4096)
def _row_major_byte_strides(shape, itemsize):
    # Asked for every elementwise result (laid_out_like_inputs), mostly for a few shapes that a
    # program uses again and again: remembering the answer keeps tiny ops cheap (benchmark row 1)
    return tuple(step * itemsize for step in contiguous_strides(shape))


def in_suggested_layout(result, inputs):
    """A new result (of cat, stack, batch_norm, pooling, ...) in the layout PyTorch suggests for it
    (suggest_memory_format): row-major, unless every input is a channels-last image batch (4-D
    or 5-D, channels innermost in memory), which it stays. numpy follows its inputs' layout
    instead (a transposed input gives a transposed result); the layout shows in stride() and in
    the order x.uniform_() fills the result."""
    if all(is_channels_last(array) for array in inputs):
        # numpy laid it out so already (np.pad, np.concatenate do; np.stack keeps each input's
        # layout inside its new dim); a pooled batch it did not
        stacked = result.ndim != inputs[0].ndim
        if stacked or storage.is_device_array(result) or _channels_last_contiguous(result):
            return result
        return copy_in_order(result, _channels_last_order(result.ndim))
    return row_major(result)


def is_channels_last(array):
    """Whether PyTorch sees `array` as a channels-last image batch (4-D or 5-D), laid out in
    memory as (N, H, W, C): walking from channels through the image dims (W, H, ...) to the batch,
    each dim steps at least over all the dims before it span (gaps allowed). PyTorch's
    is_channels_last_strides_2d/3d, behind suggest_memory_format."""
    if array.ndim not in (4, 5):
        return False
    shape, strides = array.shape, [step // array.itemsize for step in array.strides]
    if strides[1] == 0:  # one channel repeated: row-major by default
        return False
    spanned = 0
    for dim in reversed(_channels_last_order(array.ndim)):  # channels first, the batch last
        if shape[dim] == 0 or strides[dim] < spanned:
            return False
        if dim == 0 and spanned == strides[1]:
            return False  # ambiguous (a batch of 1x1 images of one channel): row-major by default
        spanned = strides[dim] * shape[dim] if shape[dim] > 1 else strides[dim]
    return True


def memory_order(*arrays):
    """The dims from the outermost in memory (largest stride) to the innermost: the order in
    which PyTorch lays out a new tensor made like `arrays` (empty_like, clone, and the results of
    elementwise ops: TensorIterator).

    PyTorch sorts the dims innermost first, each new dim walking inwards past the dims it lies
    outside of. The first array decides each comparison; where it cannot (a broadcast dim, stride
    0, or equal strides over dims of equal size) the next array is asked, and where none can the
    dim walks on to compare with the next one (a dim that nothing places stays where it is)."""
    innermost_first = list(range(arrays[0].ndim))[::-1]
    for i in range(1, len(innermost_first)):  # insertion sort
        walking = i
        for other in reversed(range(i)):
            comparison = _compare_places(innermost_first[other], innermost_first[walking], arrays)
            if comparison > 0:  # the dim inside lies outside: swap them
                innermost_first[other], innermost_first[walking] = (
                    innermost_first[walking],
                    innermost_first[other],
                )
                walking = other
            elif comparison < 0:
                break
    return innermost_first[::-1]


def _compare_places(inner, outer, arrays):
    """1 if dim `inner` lies outside dim `outer` in memory (they must swap), -1 if it lies inside,
    0 if no array tells."""
    for array in arrays:
        inner_step, outer_step = array.strides[inner], array.strides[outer]
        if inner_step == 0 or outer_step == 0:
            continue  # broadcast: this array says nothing about these two dims
        if inner_step != outer_step:
            return 1 if inner_step > outer_step else -1
        if array.shape[inner] > array.shape[outer]:  # equal steps: the longer dim goes outside
            return 1
    return 0


def laid_out_like_inputs(result, inputs, number=False, computing=None):
    """An elementwise op's `result` laid out as PyTorch lays it out over the op's tensor `inputs`
    (arrays): each input is broadcast to the result's shape, and laid_out_like_operands decides.
    A 0-d input counts as a number, as PyTorch reads it (it says nothing about layout); `number`:
    the op had a number operand too (`x == 1`), which PyTorch wraps as a 0-d tensor;
    `computing`: the dtype the op computes in, where an input has another one."""
    if result.ndim == 0:
        return result
    if computing is not None and type(result) is np.ndarray and result.size:
        inputs = [as_converted(array, computing) for array in inputs]
    if result.size == 0 and not storage.is_device_array(result):
        return _empty_laid_out(result, inputs, number)
    if type(result) is np.ndarray:  # the common case, answered first and cheaply (row 1 of the
        # benchmarks): row-major inputs of the result's shape, and numpy laid it out so already
        shape, strides = result.shape, result.strides
        if strides == _row_major_byte_strides(shape, result.itemsize) and all(
            [array.shape == shape and array.strides == strides for array in inputs]
        ):
            return result
    elif storage.is_device_array(result):
        return result
    # a number or a 0-d input is an operand of another shape to PyTorch too: its shortcuts for
    # operands of one shape (row-major when all are) are then not taken, and a size-1 dim keeps
    # its place in memory (`x.t() == 3` on a (2, 1) x has strides (1, 2))
    broadcast = number or any(array.shape != result.shape for array in inputs)
    inputs = [array for array in inputs if array.ndim > 0]
    if all([has_row_major_strides(array) for array in inputs]):
        # the common case: PyTorch's sort leaves row-major operands (broadcast or not) in order
        return row_major(result)
    operands = [_as_operand(array, result.shape) for array in inputs]
    return laid_out_like_operands(result, operands, broadcast)


def as_converted(array, dtype):
    """An input as PyTorch's TensorIterator sees it on the CPU when the op computes in another
    dtype: converted first, with x.to(dtype), which keeps the strides of a tensor without gaps
    or repeats and lays any other (an expanded one) out row-major. (For its layout only: a
    stand-in of the right strides, its values never read.)"""
    if storage.is_device_array(array) or array.dtype == dtype or array.ndim == 0 or dense(array):
        return array
    return np.empty(array.shape, dtype)


def _empty_laid_out(result, inputs, number):
    """An empty `result` with the strides PyTorch gives it. When every operand has the result's
    shape, TensorIterator's fast path finds them all contiguous (an empty tensor always is) and
    makes a row-major result. Otherwise (broadcast, a 0-d operand or a number) it sorts the dims
    as for any result (memory_order); unless they stay in their own order (a row-major result),
    it multiplies their sizes from the innermost outwards, so every dim outside one of size 0
    gets stride 0: `(zeros(0, 1, 1, 4) == 1).stride()` is (4, 0, 0, 1). (With no element to
    read, any strides are safe.)"""
    same_shape = all(array.shape == result.shape for array in inputs)
    if same_shape and not number:
        return row_major(result)
    # (numpy gives a new empty array strides of 0; PyTorch, and so stride(), row-major ones)
    seen = [array if any(array.strides) else row_major(array) for array in inputs if array.ndim]
    return empty_in_order(result, memory_order(*[_as_operand(a, result.shape) for a in seen]))


def empty_in_order(result, order):
    """An empty `result` whose dims lie in memory in `order` (outermost first), with the strides
    PyTorch's TensorIterator gives it: row-major when the dims stay in their own order, else
    their sizes multiplied from the innermost outwards, so that every dim outside one of size 0
    gets stride 0."""
    if order == list(range(result.ndim)):
        return row_major(result)  # the dims in their own order: PyTorch's contiguous result
    strides, step = [0] * result.ndim, result.itemsize
    for dim in reversed(order):
        strides[dim] = step
        step *= result.shape[dim]  # 0 after a dim of size 0 (PyTorch's compatible_stride)
    return np.lib.stride_tricks.as_strided(result, strides=tuple(strides), writeable=True)


def _as_operand(array, shape):
    """`array` seen with the result's `shape`, as TensorIterator sees an input: stride 0 where it
    is broadcast (a new leading dim, a dim of size 1 repeated), its own strides elsewhere (a dim
    of size 1 that stays 1 too: numpy's broadcast_to would give it 0)."""
    if array.shape == shape:
        return array
    new = len(shape) - array.ndim
    strides = [0] * new + [
        0 if size == 1 and wanted != 1 else step
        for size, wanted, step in zip(array.shape, shape[new:], array.strides)
    ]
    return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=False)
