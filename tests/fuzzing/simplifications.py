"""Differences from PyTorch that autograd_lab keeps on purpose, each the fuzzer's side of a line
in README's "Simplifications". A divergence one of them matches is counted, not reported.

Keep this list short and honest: an entry matches only the difference its README line names
(which ops, what differed), never everything an op does.
"""

import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Simplification:
    readme: str  # the line in README's "Simplifications"
    matches: object  # Divergence -> bool
    # A gradient's divergence shows at loss.backward(), far from the op that caused it: such an
    # entry also names (a regular expression) the call the program must make.
    in_program: str = ""


def _gradient_differs(*whats):
    """A gradient (backward's or grad's) differs in `whats`."""
    return lambda d: d.op in ("backward", "grad") and d.what in whats


def _backward_fails_in_pytorch(words):
    """PyTorch's backward (or grad) fails with `words` in its message where ours runs."""
    return lambda d: (
        d.what == "raises"
        and d.op in ("backward", "grad")
        and d.ours == "ran"
        and words in d.theirs
    )


def _node_name_of(*ops):
    return lambda d: d.what == "grad_fn" and d.op in ops


# ops whose result jumps: a last-bit difference in their input can change the result by a lot
DISCONTINUOUS = {
    "floor",
    "ceil",
    "round",
    "trunc",
    "fix",
    "frac",
    "sign",
    "floor_divide",
    "remainder",
    "fmod",
    "x // y",
    "x % y",
    "number // x",
    "number % x",
    "div",
    "divide",
    "argmax",
    "argmin",
    "argsort",
    "sort",
    "msort",
    "topk",
    "kthvalue",
    "median",
    "max",
    "min",
    "amax",
    "amin",
    "unique",
    "unique_consecutive",
    "histc",
    "histogram",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "x == y",
    "x != y",
    "x < y",
    "x <= y",
    "x > y",
    "x >= y",
    "where",
    "masked_fill",
    "clamp",
    "clip",
    "relu",
    "nonzero",
    "argwhere",
    "count_nonzero",
    "isclose",
    "allclose",
    "equal",
    "masked_select",
    "F.relu",
    "F.one_hot",
}


# conversions: to an integer dtype they cut the fraction off (as trunc does), to bool they jump
# at 0, so they jump too then (to a float dtype they do not)
CONVERSIONS = {"to", "type", "type_as", "long", "int", "short", "char", "byte", "bool"}
# ops whose result's length depends on the values: a last-bit difference can change the shape
COUNTING = {"unique", "unique_consecutive", "nonzero", "argwhere", "masked_select"}


def _after_rounding(d):
    """A finite value that differs only because an earlier float value differed in its last bits
    and a jumping op (floor, sort, ==, a conversion to int64, ...) made that big; or the length
    of unique (two elements equal in one library, a last bit apart in the other). (NaN/inf and
    gradients still count.)"""
    op = d.op.removeprefix("Tensor.").removesuffix("_")
    if not d.after_rounding:
        return False
    if d.what == "shape":
        return op in COUNTING
    to_integer = op in CONVERSIONS and re.search(r", (u?int\d+|bool), shape=", d.theirs)
    return d.what == "values" and (op in DISCONTINUOUS or bool(to_integer))


# ops whose slope is unbounded at the edge of their domain (acos and asin at ±1)
STEEP = {"acos", "arccos", "asin", "arcsin"}


def _steep_after_rounding(d):
    """acos or asin of a float value that already differed from PyTorch's in its last bits (a
    layer_norm row: numpy's two-pass variance against PyTorch's Welford update): near ±1 their
    slope, -1/sqrt(1 - x²), grows without bound, so that last bit reaches the fourth digit.
    (NaN/inf, outside [-1, 1], still counts.)"""
    op = d.op.removeprefix("Tensor.").removesuffix("_")
    return d.after_rounding and d.what == "values" and op in STEEP


def _tie_order(d):
    """topk or kthvalue gave the same values but other indices: which of several equal elements
    an index points to is an accident of PyTorch's selection algorithm. (The fuzzer asks for
    sorted results only, so the values themselves must agree; a values difference is reported.)"""
    line = d.where.split("  [")[0].rstrip()
    picks_indices = d.where.endswith("][1]") or line.endswith(("[1]", ".indices"))
    op = d.op.removeprefix("Tensor.")
    return d.what == "values" and op in ("topk", "kthvalue") and picks_indices


# what a node without a derivative (floor_divide's NotImplemented, unique's) raises when the
# backward pass reaches it
_NO_DERIVATIVE = re.compile(r"derivative for \S+ is not implemented")


def _dist_zero_backward(d):
    """PyTorch 2.13's backward of dist(x, y, 0) fails inside its own code (it hands an undefined
    tensor on); ours runs, and dist with p=0, a count, gives no gradient, as norm(x, 0) does.
    That internal message comes from nowhere else a program reaches."""
    return _pytorch_fails_where_ours_goes_on(d, "Expected a proper Tensor but got None")


def _pytorch_fails_where_ours_goes_on(d, words):
    """PyTorch's backward (or grad) fails with `words` in its message, and ours went on past
    that node: it ran, or it reached a node further back that has no derivative
    (unique_consecutive's) and raised there, or a tensor hook further back, which is shown None
    (no gradient arrived), as PyTorch shows its hooks, and whose `grad * 2` then fails: as
    PyTorch's would had it not failed first."""
    if not (d.op in ("backward", "grad") and d.what in ("raises", "exception class")):
        return False
    ours_went_on = (
        d.ours == "ran" or bool(_NO_DERIVATIVE.search(d.ours)) or _A_HOOK_SHOWN_NONE in d.ours
    )
    return words in d.theirs and ours_went_on


# what the fuzzer's hook `lambda grad: grad * 2` raises when it is shown no gradient (None)
_A_HOOK_SHOWN_NONE = "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'"


# PyTorch's C++ formula for addcdiv's tensor1 gradient computes `value / tensor2` in tensor2's own
# dtype (a tensor filled with the number, then divided in place): for an integer or bool tensor2
# the float quotient cannot be stored, and backward fails with this message
_NUMBER_OVER_AN_INTEGER_TENSOR = re.compile(
    r"result type \w+ can't be cast to the desired output type (Long|Int|Short|Char|Byte|Bool)"
    r"|value cannot be converted to type int64_t without overflow"  # value=inf
)


def _addcdiv_integer_divisor_backward(d):
    """Backward (or grad) raised that error in PyTorch: ours computes the formula's gradient
    (and may then fail later, at a node PyTorch never reached)."""
    return (
        d.what in ("raises", "exception class")
        and d.op in ("backward", "grad")
        and _NUMBER_OVER_AN_INTEGER_TENSOR.search(d.theirs) is not None
    )


def _tie_order_of_a_sort(d):
    """sort's indices or argsort differ (without stable=True): which of several equal elements
    comes first is an accident of PyTorch's unstable sort. (sort's values must still agree.)"""
    line = d.where.split("  [")[0].rstrip()
    op = d.op.removeprefix("Tensor.")
    indices = op == "argsort" or d.where.endswith("][1]") or line.endswith(("[1]", ".indices"))
    unstable = "stable=True" not in line
    return d.what == "values" and op in ("sort", "argsort") and indices and unstable


def _assignment_into_shared_places(d):
    """`x[[0, 2, 1]] = v` (index tensors or lists) into an expanded x changed other values than
    PyTorch's: several elements share one memory place, and which value stays there depends on
    the order of writing."""
    target = d.where.split(" = ")[0]
    subscript = target[target.index("[") + 1 :] if "[" in target else ""
    return d.op == "setitem" and d.what == "values" and "[" in subscript


def _tied_values_gradient(d):
    """A gradient that differs only in which of several tied elements got which share: a sort
    among tied values handed each tie's gradient to another of the equal elements (PyTorch's
    unstable sort reorders ties). Its values are then the same in another order, or, where an
    element also gets gradient from elsewhere (it was repeated or copied before the sort), they
    differ but add up to the same total: the shares moved, none was lost or made."""
    if not (d.op in ("backward", "grad") and d.what == "values"):
        return False
    if _numbers(d.ours) == _numbers(d.theirs):
        return True
    return bool(d.totals) and bool(np.isclose(*d.totals, rtol=1e-4, atol=1e-5))


def _numbers(shown):
    """The numbers a tensor's text shows, sorted (its dtype and shape left out)."""
    return sorted(_numbers_in_order(shown))


def _numbers_in_order(shown):
    """The numbers a tensor's text shows, as written (its dtype and shape left out)."""
    return re.findall(r"[-+]?(?:nan|inf|[\d.]+(?:e[-+]?\d+)?)", shown.split(",")[0])


def _non_finite_differences(d):
    """The (ours, theirs) numbers of a gradient where either side shows nan or inf and the two
    differ; None when `d` is not a gradient's NaN/inf divergence of tensors of one size."""
    if not (d.op in ("backward", "grad") and d.what == "NaN/inf"):
        return None
    ours, theirs = _numbers_in_order(d.ours), _numbers_in_order(d.theirs)
    if len(ours) != len(theirs):
        return None
    return [
        (our, their)
        for our, their in zip(ours, theirs, strict=True)
        if our != their and (_non_finite(our) or _non_finite(their))
    ]


def _nan_only_on_their_side(d):
    """A gradient that PyTorch makes nan at some elements where ours is a number (finite, or
    ±inf where the slope met an infinite factor on the way), and that agrees about nan and inf
    everywhere else: elu's vectorized loop at a nan input."""
    differing = _non_finite_differences(d)
    return bool(differing) and all(their == "nan" and our != "nan" for our, their in differing)


def _nan_only_on_our_side(d):
    """A gradient that is nan at some elements where PyTorch's is a number (finite or ±inf), and
    that agrees about nan and inf everywhere else: a zero by construction that PyTorch keeps as
    an efficient zero tensor, and we as an ordinary 0 (0 * inf, 0 / 0)."""
    differing = _non_finite_differences(d)
    return bool(differing) and all(our == "nan" and their != "nan" for our, their in differing)


def _efficient_zero_tensor(d):
    """What PyTorch's efficient zero tensors do that our ordinary zeros do not: stay 0 times
    NaN or inf (so only we have NaN), refuse an in-place change, and require no grad (so a
    program's second derivative is None there)."""
    if _nan_only_on_our_side(d) or _backward_fails_in_pytorch("ZeroTensors are immutable")(d):
        return True
    if _gradient_differs("requires_grad")(d):
        return (d.ours, d.theirs) == ("True", "False")
    second_order = d.op == "grad" and d.where.startswith("again =")
    return second_order and d.what == "None vs tensor" and d.theirs == "none"


def _gelu_at_infinity_element_by_element(d):
    """gelu (erf form) is inf at x = +inf in ours, where PyTorch's vectorized float32 loop (a
    tensor long enough to fill its vector lanes) gives nan, and it is x itself at the largest
    float32 numbers (about 3.4e38), where that loop rounds x·Φ(x) up to inf; its element-by-
    element rule gives ours. Every other element agrees about nan and inf."""
    if not (d.what == "NaN/inf" and d.op in ("F.gelu", "gelu") and "float32" in d.theirs):
        return False
    ours, theirs = _numbers_in_order(d.ours), _numbers_in_order(d.theirs)
    if len(ours) != len(theirs):
        return False
    pairs = list(zip(ours, theirs, strict=True))
    differing = [(our, their) for our, their in pairs if _non_finite(our) or _non_finite(their)]
    differing = [(our, their) for our, their in differing if our != their]
    finite = [
        (float(our), float(their))
        for our, their in pairs
        if not (_non_finite(our) or _non_finite(their))
    ]
    # (the other elements as printed, 5 decimals: the erf of numpy and of PyTorch's loop round
    # their last bits apart)
    close = all(abs(our - their) <= 2e-5 + 1e-4 * abs(their) for our, their in finite)
    return bool(differing) and close and all(_vector_lanes_differ(*pair) for pair in differing)


def _vector_lanes_differ(our, their):
    """One element of gelu where PyTorch's vectorized float32 loop differs from its rule for
    one element (ours): nan at +inf, inf at the largest numbers."""
    if our.lstrip("+") == "inf" and their == "nan":
        return True
    return their.lstrip("+") == "inf" and not _non_finite(our) and float(our) >= 3.4e38


def _rounding_residue_of_a_zero(d):
    """A float32 gradient that differs only at elements that are 0 in exact arithmetic: there
    both sides are rounding residues, small next to the gradient's largest element (at most a
    thousandth of it), whose last bits follow each library's float32 exp and log."""
    if not (d.op in ("backward", "grad") and d.what == "values" and "float32" in d.theirs):
        return False
    return _differs_only_in_residues(d)


def _constant_channel_after_rounding(d):
    """batch_norm or layer_norm of a channel (a row) whose values are all equal is 0 in exact
    arithmetic; both libraries leave there a rounding residue (x·scale rounded: about 1e-5) that
    follows the last bit of x. When an earlier float value already differed in its last bit
    (numpy's float32 sin), the residues differ; the other elements agree."""
    if not (d.after_rounding and d.op in ("F.batch_norm", "F.layer_norm")):
        return False
    return d.what == "values" and _differs_only_in_residues(d)


def _differs_only_in_residues(d):
    """Whether a values divergence of finite float tensors differs only at elements where both
    sides are rounding residues of a zero: at most a thousandth of the largest element (or of 1)."""
    ours, theirs = _numbers_in_order(d.ours), _numbers_in_order(d.theirs)
    if len(ours) != len(theirs) or not ours or any(map(_non_finite, ours + theirs)):
        return False
    ours, theirs = np.array(ours, dtype=float), np.array(theirs, dtype=float)
    residue = 1e-3 * max(1.0, np.abs(theirs).max())
    differing = ~np.isclose(ours, theirs, rtol=1e-4, atol=1e-5)  # compare.py's float32 tolerance
    small = (np.abs(ours) <= residue) & (np.abs(theirs) <= residue)
    return bool(differing.any()) and bool(small[differing].all())


def _rounding_of_terms_that_cancel(d):
    """A float32 gradient whose finite elements differ by at most compare.py's float32 tolerance
    taken of the gradient's largest element, not of each element: a second derivative that sums
    terms as large as that element which nearly cancel, so last-bit differences in its inputs
    (numpy's float32 exp) grow to the fourth digit of a smaller element, on both sides alike.
    nan and inf agree (else it is a NaN/inf divergence)."""
    if not (d.op in ("backward", "grad") and d.what == "values" and "float32" in d.theirs):
        return False
    ours, theirs = _numbers_in_order(d.ours), _numbers_in_order(d.theirs)
    if len(ours) != len(theirs) or not ours:
        return False
    pairs = [
        (our, their)
        for our, their in zip(ours, theirs, strict=True)
        if not (_non_finite(our) or _non_finite(their))
    ]
    if not pairs:
        return False
    ours, theirs = np.array(pairs, dtype=float).T
    largest = np.abs(theirs).max()
    return bool(np.all(np.abs(ours - theirs) <= 1e-4 * largest + 1e-5))


def _non_finite(number):
    return number.lstrip("+-") in ("nan", "inf")


def integer_tensor_written_with_grad(d):
    """An integer or bool tensor written in place with a value that requires grad: PyTorch gives
    it a grad_fn and requires_grad (and then refuses most ops on it: "Autograd not support
    dtype"); ours records nothing. (compare.py names the dtype of such a tensor's history.)"""
    in_place = d.op == "setitem" or d.op.endswith("_")
    if d.op.removeprefix("Tensor.") == "retain_grad":  # so ours refuses retain_grad() there
        return d.what == "raises" and d.theirs == "ran" and "is an integer or bool type" in d.ours
    if d.op.removeprefix("Tensor.") == "register_hook":  # and a hook on it: it requires no grad
        return d.what == "raises" and d.theirs == "ran" and "does not require grad" in d.ours
    if d.what in ("grad_fn", "requires_grad"):
        return in_place and d.ours.startswith(("None (", "False (")) and " tensor)" in d.theirs
    if d.op in ("backward", "grad"):  # PyTorch's backward reached the integer tensor's node
        return d.what == "raises" and d.ours == "ran" and "isDifferentiableType" in d.theirs
    return (
        d.what == "raises"
        and d.ours == "ran"
        and d.theirs.startswith("raises RuntimeError: Autograd not support dtype")
    )


def _layer_norm_overflow(d):
    """layer_norm's result is nan on one side only: the float32 variance of a row overflowed
    (values beyond about 1e19), and PyTorch's Welford loop then gives 0 or nan depending on how it
    merges its partial sums. (A nan or inf input gives nan on both sides, so this is the one
    forward NaN/inf difference of layer_norm.)"""
    return (
        d.what == "NaN/inf" and d.op == "F.layer_norm" and ("nan" in d.ours) != ("nan" in d.theirs)
    )


def _nan_slices_in_another_order(d):
    """unique(dim=...) sorts its slices with a comparison that NaN breaks (neither smaller nor
    greater), so where its slices hold NaN, PyTorch's sort leaves them in an order that is an
    accident of its algorithm: the NaN land elsewhere, and equal slices that NaN came between are
    not merged (one more slice: the shape differs; its values hold the NaN)."""
    with_dim = d.op in ("unique", "Tensor.unique") and "dim=" in d.where.split("  [")[0]
    nan_shape = d.what == "shape" and "nan" in d.theirs
    return with_dim and (d.what == "NaN/inf" or nan_shape)


# products that add up products (their zeros' sign is their matrix routine's): README's "@/mm/conv"
MATRIX_PRODUCTS = {"x @ y", "matmul", "mm", "bmm", "mv", "dot", "F.linear", "F.conv1d", "F.conv2d"}


def _zero_sign_of_a_matrix_product(d):
    """NaN/inf differ (1/x is inf where PyTorch's is -inf, say) after a matrix product gave a zero
    of the other sign than PyTorch's: which sign a sum of zero products has depends on the matrix
    routine PyTorch picks for the shapes (-0.0 from a 2-D mm, 0.0 from a small batched @)."""
    return d.what == "NaN/inf" and d.after_zero_sign.removeprefix("Tensor.") in MATRIX_PRODUCTS


def _overflowing_products_of_a_batched_convolution(d):
    """A float32 matrix product, or a convolution of a batch of two or more samples, differs in
    NaN/inf: where a finite product overflows, ours fuses the products into their sums as BLAS
    does (-inf where rounding each product first gives inf + -inf = nan, or a finite sum where
    it gives inf); PyTorch's matrix products round each product first, its batched convolution
    fuses them in an order of its own. (One sample: ours rounds each product, as PyTorch's
    one-sample kernel does: products.py.)"""
    if d.what == "NaN/inf" and d.op in MATRIX_PRODUCTS - {"F.conv1d", "F.conv2d"}:
        return "float32" in d.theirs
    if not (d.what == "NaN/inf" and d.op in ("F.conv1d", "F.conv2d") and "float32" in d.theirs):
        return False
    shape = re.search(r"shape=\[([\d, ]*)\]", d.theirs)
    sizes = [int(size) for size in shape.group(1).split(",")] if shape else []
    batched = len(sizes) == (3 if d.op == "F.conv1d" else 4)
    return batched and sizes[0] >= 2


def _overflowing_products_in_a_convolutions_gradient(d):
    """A float32 gradient behind a convolution differs in NaN/inf: its backward kernels, too,
    fuse products that overflow into their sums, in orders of their own (in_program: a conv)."""
    differences = _non_finite_differences(d)
    return bool(differences) and "float32" in d.theirs


def _zero_sign_of_a_maximum_among_tied_zeros(d):
    """NaN/inf differ after amax/amin (or max()/min()/median() of all elements) gave a zero of
    the other sign than PyTorch's: among tied 0.0 and -0.0 ours keeps the first (amax, amin),
    numpy's (max(), min()) or median(0)'s (median()), where PyTorch's vectorized loop over a
    long row may keep another, and its median() the one std::nth_element leaves in the middle."""
    picks = ("amax", "amin", "max", "min", "median")
    return d.what == "NaN/inf" and d.after_zero_sign.removeprefix("Tensor.") in picks


def _welford_overflow(d):
    """var_mean or std_mean differ in NaN/inf: values so large that their squares overflow
    (about 1e154 in float64) make PyTorch's running (Welford) update give nan and a mean of inf;
    ours are what var (or std) and mean give on their own, as PyTorch's var and mean do too."""
    op = d.op.removeprefix("Tensor.")
    return d.what == "NaN/inf" and op in ("var_mean", "std_mean")


def _our_floor_divide_backward_raises_where_pytorch_runs(d):
    """Our autograd.grad reached floor_divide's NotImplemented node and raised, or a node on the
    path to it that refuses to run (one whose saved tensor was changed in place since, as
    AminBackward0's result in fuzz seed 1956456); PyTorch's never reached either (grad runs
    only the nodes on a path to its inputs). Its NotImplemented node keeps an edge only for the
    operands that require grad, and the CopySlices node of an in-place change through a view
    takes that node's first edge for the view's own: with a view that needs no gradient, the
    divisor's edge is the one it drops."""
    return (
        d.what == "raises"
        and d.op in ("backward", "grad")
        and d.theirs == "ran"
        and (
            "derivative for aten::floor_divide is not implemented" in d.ours
            or "has been modified by an inplace operation" in d.ours
        )
    )


def _an_argument_reported_before_a_stale_piece(d):
    """PyTorch refused a piece of unbind/split/chunk whose base changed in place (its autograd
    layer asks for the piece's history before the kernel checks the arguments); ours refused
    an argument, which our ops check before they record."""
    return (
        d.what == "exception class"
        and "This view is the output of a function that returns multiple views" in d.theirs
        and "is a view and its base" not in d.ours
    )


# one README line, two matchers: the products themselves, and the gradients behind them
OVERFLOWING_PRODUCTS = (
    "a float32 matrix product (`@`, `matmul`, `mm`, `bmm`, `mv`, `dot`, `F.linear`) or a "
    "`conv1d`/`conv2d` of a batch of two or more samples where a finite product overflows "
    "(numbers beyond about 1e19) may differ in inf and nan: ours fuses the products into their "
    "sums as BLAS does, where PyTorch's kernels round each product first (inf + -inf = nan) "
    "or, for a batched convolution, fuse them in an order of their own; and so may the "
    "gradients behind them (a convolution of one sample rounds each product first in both)"
)


# named, as check.py also accepts by them what a run of PyTorch with stable sorts explains (ties.py)
TIES_IN_ORDER = Simplification(
    "`sort`/`argsort` keep tied elements in their order, where PyTorch's unstable sort may "
    "reorder them",
    _tie_order_of_a_sort,
)
TIED_GRADIENTS = Simplification(
    "the gradients of `sort`/`msort` among tied values follow that order (so which of the "
    "tied elements gets which share differs; the shares add up to PyTorch's)",
    _tied_values_gradient,
    in_program=r"\b(sort|msort)\(",
)


SIMPLIFICATIONS = [
    Simplification(
        "the float32 sums behind `sum`/`mean`/`@` are numpy's (equal to PyTorch's to rounding, "
        "not bit for bit)",
        _after_rounding,
    ),
    Simplification(
        "`acos`/`asin` near ±1, where their slope is unbounded, magnify a last-bit difference of "
        "their input (numpy's two-pass float32 variance in `layer_norm`, where PyTorch runs a "
        "Welford update) beyond float32's tolerance",
        _steep_after_rounding,
    ),
    Simplification(
        "indexing records one node, named after the last view PyTorch makes (`SelectBackward0`, "
        "`SliceBackward0`, `UnsqueezeBackward0` or `IndexBackward0`), where PyTorch records a "
        "chain of them",
        _node_name_of("getitem", "setitem"),
    ),
    Simplification(
        "`topk` and `kthvalue` among tied values take the earlier element",
        _tie_order,
    ),
    Simplification(
        "an in-place op on an `as_strided` view whose elements overlap is refused (RuntimeError; "
        "PyTorch writes them one after another, so its answer depends on that order), and so is "
        "a backward pass through one that wrote a single number there (PyTorch writes the "
        "gradient back in that order too)",
        lambda d: (
            d.what == "raises"
            and d.ours.startswith("raises RuntimeError")
            and "an as_strided view whose elements overlap" in d.ours
        ),
    ),
    Simplification(
        "an in-place write whose input is read through a broadcast or strided layout that shares "
        "memory places with other written elements (`x.mT[...] = x[0]`) is refused "
        "(RuntimeError; PyTorch does not check that layout and writes element after element, so "
        "its answer depends on that order)",
        lambda d: (
            d.what == "raises"
            and d.ours.startswith("raises RuntimeError")
            and "in a layout PyTorch 2.13 does not check" in d.ours
        ),
    ),
    Simplification(
        "`histogram` refuses a range too narrow for the dtype to tell its bin edges apart when a "
        "value lies in it (RuntimeError; PyTorch counts such a value in a bin picked by an "
        "undefined conversion of nan to an integer)",
        lambda d: (
            d.what == "raises"
            and d.op in ("histogram", "Tensor.histogram")
            and d.ours.startswith("raises RuntimeError")
            and "to tell its bin edges apart" in d.ours
        ),
    ),
    Simplification(
        "`take_along_dim` with `dim=` refuses an index out of range (RuntimeError)",
        lambda d: (
            d.what == "raises"
            and d.op in ("take_along_dim", "Tensor.take_along_dim")
            and d.ours.startswith("raises RuntimeError")
        ),
    ),
    Simplification(
        "a gradient computed with `create_graph=True` records the nodes of our backward "
        "formulas (written with ordinary ops), not PyTorch's `...BackwardBackward0` nodes",
        lambda d: d.what == "grad_fn" and d.op == "grad",
    ),
    Simplification(
        "`var`/`std` over `dim=()` have the true gradient (PyTorch divides by n − correction "
        "with n = 1 there)",
        _gradient_differs("values", "NaN/inf"),
        in_program=r"\b(var|std|var_mean|std_mean)\([^\n]*\bdim=\(\)",
    ),
    Simplification(
        "the gradients of `prod`/`cumprod` on inputs that mix NaN or inf with zeros",
        _gradient_differs("values", "NaN/inf"),
        in_program=r"\b(cumprod_?|prod)\(",
    ),
    Simplification(
        "`unique(dim=...)` may order slices that hold NaN differently",
        _nan_slices_in_another_order,
    ),
    Simplification(
        "`logit`'s gradient at p = -0.0 and at a nan p is PyTorch's element-by-element rule "
        "(+inf, nan), not that of its vectorized loop for long tensors (-inf, 0 with `eps`)",
        _gradient_differs("NaN/inf"),
        in_program=r"\blogit_?\(",
    ),
    Simplification(
        "`elu`'s gradient at a nan input is PyTorch's element-by-element rule "
        "(the slope for x > 0, as `x <= 0` is false), not that of its vectorized loop for long "
        "tensors (nan)",
        _nan_only_on_their_side,
        in_program=r"\belu_?\(",
    ),
    Simplification(
        "`gelu` (its erf form) of +inf is inf, and of the largest float32 numbers (about 3.4e38) "
        "the number itself, PyTorch's element-by-element rule, not the nan and inf of its "
        "vectorized loop for long float32 tensors",
        _gelu_at_infinity_element_by_element,
    ),
    Simplification(
        "a derivative that is zero by construction (`sgn`'s: of `sgn` itself, and in a second "
        "derivative inside the backward of `abs`, and so of `l1_loss`, and of `norm`/`dist`) is "
        "an ordinary 0, so times a NaN or infinite gradient, or divided by zero in a later "
        "backward (`log`'s at 0), it gives NaN (PyTorch's efficient zero tensors keep it 0), it "
        'can be changed in place (PyTorch 2.13 refuses with "ZeroTensors are immutable" where '
        "a second `backward()` adds to a `.grad` that holds one, or a backward formula, as "
        "`std`'s, writes into it), and a gradient taken with `create_graph=True` that it alone "
        "reaches requires grad (PyTorch's does not, so it takes no second derivative)",
        _efficient_zero_tensor,
        in_program=r"(?s)\bsgn_?\(|\b(abs|absolute|l1_loss|(vector_)?norm|dist)_?\(.*create_graph=True",
    ),
    Simplification(
        "a float32 second derivative of `logcumsumexp` that is 0 in exact arithmetic keeps a "
        "rounding residue (up to a thousandth of the gradient's largest element) other than "
        "PyTorch's: its backward takes exp and log of logs, and numpy's float32 `exp` and `log` "
        "round the last bit differently from PyTorch's vectorized ones",
        _rounding_residue_of_a_zero,
        in_program=r"(?s)\blogcumsumexp_?\(.*create_graph=True",
    ),
    Simplification(
        "a second derivative through `logcumsumexp` where the gradient it was handed is 0 in "
        "exact arithmetic (ours exactly 0, where a last bit of PyTorch's `exp` leaves a residue, "
        "in float64 too) may differ by about that gradient's size: its backward takes "
        "log|gradient|, whose slope jumps from one side of 0 to the other",
        lambda d: d.op == "grad" and d.what == "values" and d.where.startswith("again ="),
        in_program=r"(?s)\blogcumsumexp_?\(.*create_graph=True",
    ),
    Simplification(
        "a float32 second derivative of `std` that is 0 in exact arithmetic (over two elements "
        "std is linear) keeps a rounding residue (up to a thousandth of the gradient's largest "
        "element) other than PyTorch's: its terms cancel, each rounded in float32 in its own order",
        _rounding_residue_of_a_zero,
        in_program=r"(?s)\b(std|std_mean)\(.*create_graph=True",
    ),
    Simplification(
        "a float32 second derivative through `elu` that is 0 in exact arithmetic "
        "(`log1p(elu(x))` is x for x ≤ 0) keeps a rounding residue (up to a thousandth of the "
        "gradient's largest element) other than PyTorch's: its backward multiplies by e^x, and "
        "numpy's float32 `exp`, `expm1` and `log1p` round the last bit differently from "
        "PyTorch's vectorized ones (in float64 both give the same residues, about 1e-13)",
        _rounding_residue_of_a_zero,
        in_program=r"(?s)\belu_?\(.*create_graph=True",
    ),
    Simplification(
        "`batch_norm`/`layer_norm` of a float32 channel whose values are all equal leave a "
        "rounding residue (about 1e-5, where the exact answer is 0) that follows the last bit of "
        "the input, so it differs from PyTorch's after an op whose float32 result is a last bit "
        "off (numpy's `sin`)",
        _constant_channel_after_rounding,
    ),
    Simplification(
        "a float32 second derivative through `softmax` sums terms that nearly cancel, so the last "
        "bits in which numpy's float32 `exp` differs from PyTorch's grow there (up to a "
        "ten-thousandth of the gradient's largest element)",
        _rounding_of_terms_that_cancel,
        in_program=r"(?s)\bsoftmax\(.*create_graph=True",
    ),
    Simplification(
        "the rounding left in the gradients of `layer_norm`/`batch_norm` where their terms cancel",
        _gradient_differs("values"),
        in_program=r"\b(layer_norm|batch_norm)\(",
    ),
    Simplification(
        "`layer_norm` of a float32 row whose variance overflows (values beyond about 1e19) is 0 "
        "or nan as numpy's sums overflow, where PyTorch's answer (0 or nan) depends on the order "
        "its loop merges partial sums",
        _layer_norm_overflow,
    ),
    Simplification(
        "the sign of a zero that `@`/`mm`/`conv` give when every product is zero is numpy's",
        _zero_sign_of_a_matrix_product,
    ),
    Simplification(
        OVERFLOWING_PRODUCTS,
        _overflowing_products_of_a_batched_convolution,
    ),
    Simplification(
        OVERFLOWING_PRODUCTS,
        _overflowing_products_in_a_convolutions_gradient,
        # a convolution; or a matrix product and numbers that big (nan_to_num's inf → 3.4e38)
        in_program=r"(?s)\bconv[12]d\(|(?=.*nan_to_num)(?=.*(@|\b(matmul|mm|bmm|mv|dot|linear)\())",
    ),
    Simplification(
        "`amax`/`amin` among tied zeros (0.0 and -0.0) give the first of them, as PyTorch's loop "
        "does over a row of fewer than 16 float64 (32 float32) elements or across an outer dim; "
        "its vectorized loop over a longer row may give the other, and so may its `max()`/`min()` "
        "of all elements, where ours gives numpy's, and its `median()` of all elements (the "
        "order of C++'s `std::nth_element`), where ours gives the one that `median(0)` of the "
        "flattened tensor gives",
        _zero_sign_of_a_maximum_among_tied_zeros,
    ),
    Simplification(
        "`var_mean`/`std_mean` of values whose squares overflow (beyond about 1e154 in float64) "
        "give what `var`/`std` and `mean` give on their own (inf and the mean), where PyTorch's "
        "running (Welford) update gives nan and a mean of inf",
        _welford_overflow,
    ),
    TIES_IN_ORDER,
    Simplification(
        "an assignment through index tensors into an expanded tensor (whose elements share "
        "memory places; PyTorch warns that this is deprecated) leaves in a shared place the "
        "value of an element that changed, where PyTorch writes the elements in index order and "
        "the last one wins",
        _assignment_into_shared_places,
        in_program=r"\.expand(_as)?\(|broadcast_to\(",
    ),
    TIED_GRADIENTS,
    Simplification(
        "writing a value that requires grad into an integer or bool tensor in place records "
        "nothing (PyTorch gives the integer tensor a `grad_fn`, e.g. `MaskedFillBackward1`, "
        "and a backward through it may then fail with an internal assert, "
        '"isDifferentiableType(grad.scalar_type())")',
        integer_tensor_written_with_grad,
    ),
    Simplification(
        "`index_add` into a tensor with no elements gives its source a zero gradient (PyTorch's "
        'backward raises there: "self indexing axis dim should be positive")',
        _backward_fails_in_pytorch("index_select(): self indexing axis dim should be positive"),
    ),
    Simplification(
        "on Intel CPUs PyTorch draws `bernoulli_(p)` (dropout) through MKL, which is not "
        "reproduced",
        lambda d: (
            d.what == "values"
            and d.op in ("bernoulli", "Tensor.bernoulli", "Tensor.bernoulli_", "F.dropout")
        ),
    ),
    Simplification(
        "`dist(x, y, 0)` has no gradient, as `norm(x, 0)` (PyTorch 2.13's backward fails there "
        'with an internal error, "Expected a proper Tensor but got None"; ours goes on, so a '
        "node further back that has no derivative, as `unique`'s, raises instead, or a hook "
        "further back is shown `None` for the gradient, as PyTorch shows a hook where none "
        "arrives)",
        _dist_zero_backward,
    ),
    Simplification(
        "`addcdiv` with an integer or bool `tensor2` has the gradient of its formula (PyTorch "
        "2.13's backward computes `value / tensor2` in tensor2's dtype and fails: \"result type "
        "Float can't be cast to the desired output type Long\", or for an infinite `value` "
        '"value cannot be converted to type int64_t without overflow")',
        _addcdiv_integer_divisor_backward,
        in_program=r"addcdiv",
    ),
    Simplification(
        "`clamp`/`clip` with tensor bounds that broadcast beyond the input's shape have the "
        "gradient of their formula (PyTorch 2.13's backward combines the masks in place, in a "
        "tensor of the input's shape, and fails: \"output with shape [1, 1, 2] doesn't match the "
        'broadcast shape [2, 3, 2]"; ours goes on, so a node further back that has no '
        "derivative, as `unique`'s, may raise instead)",
        lambda d: _pytorch_fails_where_ours_goes_on(d, "doesn't match the broadcast shape"),
        in_program=r"\b(clamp|clip)\(",
    ),
    Simplification(
        "the second derivative of `F.embedding` with no indices is zero (PyTorch 2.13's double "
        'backward reshapes the empty gradient to [0, -1] and fails: "cannot reshape tensor of 0 '
        'elements")',
        _backward_fails_in_pytorch("cannot reshape tensor of 0 elements into shape [0, -1]"),
        in_program=r"\bembedding\(",
    ),
    Simplification(
        "the second derivative of `smooth_l1_loss` with a bool input or target is that of its "
        "formula, the bool counted as 0 or 1 as in its loss and gradient (PyTorch 2.13's double "
        'backward subtracts the bool tensor and fails: "Subtraction, the `-` operator, with a '
        'bool tensor is not supported")',
        _backward_fails_in_pytorch("Subtraction, the `-` operator, with a bool tensor"),
        in_program=r"(?s)\bsmooth_l1_loss\(.*create_graph=True",
    ),
    Simplification(
        "`True ** x` and `False ** x` (a bool base, a tensor exponent) have the gradient of "
        "`1 ** x` and `0 ** x` (PyTorch 2.13's backward takes the bool as a number and fails "
        'with an internal assert, "unknown ivalue tag 4")',
        _backward_fails_in_pytorch("unknown ivalue tag 4"),
        in_program=r"\b(True|False)\s*\*\*|\bpow\(\s*(True|False)\s*,",
    ),
    Simplification(
        "`a.floor_divide_(b)` (`a //= b`) through a view of a tensor that does not require grad "
        "keeps its `NotImplemented` node on b's path, so `autograd.grad` for b raises there, "
        "or at a node before it whose saved tensor was changed in place since (PyTorch 2.13's "
        "`CopySlices` node drops b's edge, so its `grad` gives b None; its `backward()` raises)",
        _our_floor_divide_backward_raises_where_pytorch_runs,
        in_program=r"\.floor_divide_\(|//=",
    ),
    Simplification(
        "`F.linear` (and `nn.Linear`) multiplies by the weight itself, where PyTorch multiplies "
        "by the view `weight.t()`: its graph has no `TBackward0` in front of the weight, and "
        "`detach_()` of a weight that is not a leaf, after the layer ran, is refused at backward "
        "(PyTorch's saved view keeps the weight's old history)",
        lambda d: (
            d.what == "raises"
            and d.op in ("backward", "grad")
            and d.theirs == "ran"
            and "has been detached in-place" in d.ours
            and ("AddmmBackward0 saved" in d.ours or "MmBackward0 saved" in d.ours)
        ),
        in_program=r"\blinear\(",
    ),
    Simplification(
        "a call with two faults, a piece of `unbind`/`split`/`chunk` that can no longer be used "
        "(its base was changed in place since) and an invalid argument (a dim out of range), "
        "reports the argument first, where PyTorch reports the piece",
        _an_argument_reported_before_a_stale_piece,
        in_program=r"\b(unbind|split|chunk)\(",
    ),
]


# Judged by check.py, which runs the program again (rounding.py): never matched by a divergence
# alone, so it is not in SIMPLIFICATIONS.
FLOAT32_NOISE = Simplification(
    "a float32 result that differs from PyTorch's by no more than float32's own rounding, as "
    "the fuzzer measures it by running the program again in PyTorch: in float64 (ours no "
    "farther from that answer than four times PyTorch's float32 answer is), or handed our "
    "earlier values (equal to its own to float32's tolerance: it then computes ours), or with "
    "its float32 inputs a few last bits up or down (ours no farther from PyTorch's than four "
    "times those answers move); the program magnifies the last bits that each library rounds "
    "in its own order",
    lambda divergence: False,
)


def accepted_by(divergence, source=""):
    """The simplification that explains `divergence` (in a program of that `source`), or None."""
    for simplification in SIMPLIFICATIONS:
        if simplification.matches(divergence) and re.search(simplification.in_program, source):
            return simplification
    return None
