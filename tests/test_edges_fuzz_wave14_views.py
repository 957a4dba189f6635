"""Fuzz wave 14, group A (issue 14): views, layouts and error order, each against PyTorch 2.13."""

import pytest

import autograd_lab as ag


def _geometry(views):
    """(size, stride, storage offset, is_contiguous) of each view: what a learner can ask."""
    views = views if isinstance(views, (tuple, list)) else [views]
    return [(tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous()) for v in views]


# ---- empty views: where they start and how they step ---------------------------------------------

EMPTY_VIEWS = {
    "split [2, 0] dim -4": lambda lib, x: lib.split(lib.zeros(2, 1, 1, 1), [2, 0], dim=-4),
    "split [0, 2]": lambda lib, x: lib.split(lib.zeros(2, 1, 1, 1), [0, 2]),
    "split [1, 0, 1]": lambda lib, x: lib.split(x, [1, 0, 1], dim=0),
    "split [2, 0, 1] dim 1": lambda lib, x: lib.split(x, [2, 0, 1], dim=1),
    "split [3, 0] dim 1": lambda lib, x: lib.split(x, [3, 0], dim=1),
    "split of a transposed x": lambda lib, x: x.transpose(0, 2).split([1, 0, 3], 0),
    "split by size of an empty x": lambda lib, x: x[:, 1:1].split(1, 0),
    "chunk of an empty x": lambda lib, x: x[:, 1:1].chunk(3, 2),
    "chunk into empty pieces": lambda lib, x: lib.zeros(0, 4).chunk(3, 0),
    "chunk of (4, 0)": lambda lib, x: lib.zeros(4, 0).chunk(2, 0),
    "narrow to nothing": lambda lib, x: x.narrow(1, 2, 0),
    "narrow at the end": lambda lib, x: x.narrow(1, 3, 0),
    "slice 2:2": lambda lib, x: x[:, 2:2],
    "slice past the end": lambda lib, x: x[:, 5:9],
    "slice backwards": lambda lib, x: x[:, 3:1],
    "slice of a transposed x": lambda lib, x: x.transpose(0, 2)[:, 1:1],
    "unbind of (2, 0)": lambda lib, x: lib.zeros(2, 0).unbind(0),
    "unbind of an empty slice": lambda lib, x: x[:, :, 2:2].unbind(1),
    "unbind of a transposed empty slice": lambda lib, x: x[:, :, 2:2].transpose(0, 2).unbind(2),
    "as_strided (0,) stride (0,) past the end": lambda lib, x: (
        lib.tensor(0.0).clone().as_strided((0,), (0,), 2)
    ),
    "as_strided (0, 3)": lambda lib, x: x.as_strided((0, 3), (7, 5), 4),
    "as_strided (2, 0) past the end": lambda lib, x: lib.arange(4.0).as_strided((2, 0), (5, 7), 9),
    "as_strided zeros, then viewed": lambda lib, x: (
        lib.tensor(0.0).clone().as_strided((0, 2), (0, 0), 1).t()[None]
    ),
    "as_strided zeros, cloned": lambda lib, x: (
        lib.tensor(0.0).clone().as_strided((0, 2), (0, 0), 1).clone()
    ),
    "as_strided with gaps, cloned": lambda lib, x: (
        lib.arange(4.0).as_strided((2, 0), (5, 7), 9).clone()
    ),
    "0-d expanded to nothing": lambda lib, x: lib.tensor(1.0).expand(2, 0),
    "new (0, 3), transposed": lambda lib, x: lib.zeros(0, 3).t(),
    "new (2, 0), transposed": lambda lib, x: lib.empty(2, 0).t(),
    "new from lists, transposed": lambda lib, x: lib.tensor([[], []]).t(),
    "new (0, 2, 3), permuted": lambda lib, x: lib.full((0, 2, 3), 1.0).permute(2, 0, 1),
    "ones_like a transposed empty": lambda lib, x: lib.ones_like(lib.zeros(0, 3).t()),
    "zeros_like as_strided zeros": lambda lib, x: lib.zeros_like(
        lib.tensor(0.0).as_strided((0, 2), (0, 0), 1)
    ),
    "diagonal of (0, 3)": lambda lib, x: lib.zeros(0, 3).diagonal(),
    "diagonal of (2, 0, 3)": lambda lib, x: lib.zeros(2, 0, 3).diagonal(1, 0, 2),
    "diagonal below, of (2, 0, 3)": lambda lib, x: lib.zeros(2, 0, 3).diagonal(-1, 2, 0),
    "diagonal off the matrix": lambda lib, x: x.diagonal(5, 1, 2),
    "diagonal off the matrix, below": lambda lib, x: x.diagonal(-3, 1, 2),
    "diagonal of an empty slice": lambda lib, x: x[:, 1:1].diagonal(1, 2, 0),
}


@pytest.mark.parametrize("make", EMPTY_VIEWS)
def test_regression_empty_views_start_and_step_as_pytorch(torch, make):
    # fuzz seed 2144397: torch.split(x, [2, 0], dim=-4)[1].storage_offset() was 0 where PyTorch
    # says 2 (numpy starts an empty piece where its array starts; PyTorch narrows to it, so it
    # starts where it would start if it had elements). Seed 2114848: as_strided((0,), (0,), 2)
    # showed stride (1,) where PyTorch keeps the stride it is given, (0,). (A new empty tensor's
    # transpose showed (1, 1) for PyTorch's (1, 3): numpy gives new empty arrays strides of 0)
    def geometry(lib):
        return _geometry(EMPTY_VIEWS[make](lib, lib.arange(24.0).reshape(2, 3, 4)))

    assert geometry(ag) == geometry(torch)


@pytest.mark.parametrize("records", [False, True])
def test_an_empty_piece_is_changed_in_place_as_in_pytorch(torch, records):
    # the empty pieces are read-only numpy views now (they start past numpy's empty slice)
    def outcome(lib):
        x = lib.zeros(2, requires_grad=records).clone()
        piece = x.split([2, 0])[1]
        try:
            piece.add_(3)
        except RuntimeError as error:
            return "refused" if "is a view and is being modified inplace" in str(error) else error
        return piece.storage_offset(), x.tolist()

    assert outcome(ag) == outcome(torch)


# ---- view(): the strides of dims of size 1 ---------------------------------------------------------

VIEWED = {
    "transposed (3, 1, 2)": lambda lib: lib.arange(6.0).reshape(3, 1, 2).transpose(0, -1),
    "transposed column": lambda lib: lib.arange(3.0).reshape(1, 3).t()[None],
    "permuted": lambda lib: lib.arange(24.0).reshape(2, 1, 3, 4).permute(2, 1, 0, 3),
    "every other column": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, :, ::2],
    "one column": lambda lib: lib.arange(24.0).reshape(4, 1, 6)[:, :, 1:2],
    "empty": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, 1:1],
    "0-d": lambda lib: lib.arange(24.0)[3],
}
VIEW_SHAPES = [(6,), (2, 1, 3), (1, 6), (3, 1, 2, 1), (1,), (), (2, 3), (4, 3, 2), (0,), (2, 0)]


@pytest.mark.parametrize("x", VIEWED)
@pytest.mark.parametrize("shape", VIEW_SHAPES, ids=str)
def test_view_gives_dims_of_size_1_pytorchs_strides(torch, x, shape):
    # found with fuzz seed 2110536 (below): x.view(2, 1, 3) of a transposed (2, 1, 3) x has
    # strides (1, 6, 2) in PyTorch (a dim of size 1 steps over the dims after it in its run of
    # memory), where numpy, and we, kept (1, 2, 2)
    def viewed(lib):
        try:
            v = VIEWED[x](lib).view(shape)
        except RuntimeError:
            return "refused"
        return v.stride(), v.storage_offset()

    assert viewed(ag) == viewed(torch)


# ---- x[index] = part of x: which overlaps PyTorch's setitem refuses ---------------------------------

SET_XS = {
    "transposed (3, 1, 2)": lambda lib: lib.arange(6.0).reshape(3, 1, 2).transpose(0, -1),
    "transposed (2, 3)": lambda lib: lib.arange(6.0).reshape(2, 3).t(),
    "transposed row": lambda lib: lib.arange(3.0).reshape(1, 3).t(),
    "every other column": lambda lib: lib.arange(12.0).reshape(3, 4)[:, ::2],
    "permuted (2, 1, 3)": lambda lib: lib.arange(6.0).reshape(2, 1, 3).permute(2, 0, 1),
    "(2, 1, 1)": lambda lib: lib.arange(2.0).reshape(2, 1, 1),
    "transposed (2, 2, 1)": lambda lib: lib.arange(4.0).reshape(2, 2, 1).transpose(1, 2),
}
SET_INDICES = {
    "None": None,
    "None, ...": (None, ...),
    "..., None": (..., None),
    "None, None": (None, None),
    "0": 0,
    "0, None": (0, None),
    ":": slice(None),
    "1:": slice(1, None),
    "...": ...,
}
SET_VALUES = {
    "x": lambda x: x,
    "x[None]": lambda x: x[None],
    "x[0]": lambda x: x[0],
    "x[:1]": lambda x: x[:1],
    "x.unsqueeze(-1)": lambda x: x.unsqueeze(-1),
}


@pytest.mark.parametrize("x", SET_XS)
@pytest.mark.parametrize("index", SET_INDICES)
@pytest.mark.parametrize("value", SET_VALUES)
def test_regression_setitem_of_a_part_of_x_refuses_as_pytorch(torch, x, index, value):
    # fuzz seed 2110536: x[None] = x on x = zeros(6).reshape(3, 1, 2).transpose(0, -1) ran where
    # PyTorch refuses: its copy_to views the value with its leading size-1 dims dropped (none
    # here), and that view() gives the dim of size 1 the stride (6) of its place in memory, so
    # the expanded value covers x[None]'s memory with other strides: a partial overlap
    def outcome(lib):
        target = SET_XS[x](lib)
        try:
            target[SET_INDICES[index]] = SET_VALUES[value](target)
        except RuntimeError as error:
            overlap = "refer to a single memory location" in str(error)
            return "overlap refused" if overlap else "refused"
        return target.flatten().tolist()

    assert outcome(ag) == outcome(torch)


def test_a_value_with_more_dims_than_the_written_view_is_refused_for_its_shape():
    x = ag.arange(4.0).reshape(2, 2, 1).transpose(1, 2)
    with pytest.raises(RuntimeError, match=r"value tensor of shape \[2, 1, 2\] cannot be broad"):
        x[0] = x  # not taken for an overlap: a (2, 1, 2) value never expands to (1, 2)


# ---- the sort family: which mistake PyTorch names first ---------------------------------------------

SORTING_CALLS = {
    "topk(2, dim=-5)": lambda x: x.topk(2, dim=-5),
    "topk(1, dim=5)": lambda x: x.topk(1, dim=5),
    "topk(9, dim=-5)": lambda x: x.topk(9, dim=-5),
    "topk(9)": lambda x: x.topk(9),
    "topk(-1)": lambda x: x.topk(-1),
    "topk(1)": lambda x: x.topk(1),
    "sort(dim=-5)": lambda x: x.sort(dim=-5),
    "sort()": lambda x: x.sort(),
    "argsort(dim=3)": lambda x: x.argsort(dim=3),
    "kthvalue(1, dim=-5)": lambda x: x.kthvalue(1, dim=-5),
    "kthvalue(9, dim=-5)": lambda x: x.kthvalue(9, dim=-5),
    "kthvalue(9)": lambda x: x.kthvalue(9),
    "kthvalue(1)": lambda x: x.kthvalue(1),
    "msort()": lambda x: x.msort(),
    "median()": lambda x: x.median(),
    "median(dim=-5)": lambda x: x.median(dim=-5),
    "median(dim=0)": lambda x: x.median(dim=0),
}
SORTED_XS = {
    "bool 0-d": lambda lib: lib.tensor(False),
    "bool (2,)": lambda lib: lib.tensor([True, False]),
    "bool (2, 1)": lambda lib: lib.tensor([[True], [False]]),
    "bool (0,)": lambda lib: lib.zeros(0, dtype=lib.bool),
    "int64 0-d": lambda lib: lib.tensor(3),
    "int8 (2,)": lambda lib: lib.tensor([3, 1], dtype=lib.int8),
    "int64 (2, 0)": lambda lib: lib.zeros(2, 0, dtype=lib.int64),
    "float16 (2,)": lambda lib: lib.tensor([3.0, 1.0], dtype=lib.float16),
    "float32 (1, 2)": lambda lib: lib.tensor([[2.0, 1.0]]),
}


@pytest.mark.parametrize("x", SORTED_XS)
@pytest.mark.parametrize("call", SORTING_CALLS)
def test_regression_sort_family_checks_in_pytorchs_order(torch, x, call):
    # fuzz seed 2117649: torch.tensor(False).topk(2, dim=-5) raised our "topk does not support
    # bool" RuntimeError where PyTorch first finds the dim out of range (IndexError), then k
    # out of range, and only then looks at the dtype. (kthvalue over an empty dim named dim 0, not
    # the dim of x it reduced)
    def outcome(lib):
        try:
            SORTING_CALLS[call](SORTED_XS[x](lib))
        except (IndexError, RuntimeError, NotImplementedError) as error:
            return type(error).__name__, _which_check(str(error))
        return "ran"

    assert outcome(ag) == outcome(torch)


def _which_check(message):
    """Which of the sort family's checks a message comes from: the dim, k, the dtype, or the
    dim of size 0 it names."""
    if "non-zero size" in message:
        return message.split(" to have")[0]  # "kthvalue(): Expected reduction dim 1"
    if " k out of range" in message:
        return "k"
    if "out of range" in message or "dimension" in message.lower():
        return "dim"
    if "support" in message or "Bool" in message:
        return "dtype"
    return message


# ---- matrix products of mixed dtypes: which mistake PyTorch names first ------------------------------

PRODUCT_SHAPES = {  # the shapes each product takes, the sizes fitting or not, empty or not
    "dot": [((3,), (3,)), ((3,), (4,)), ((0,), (0,))],
    "mv": [((2, 3), (3,)), ((2, 3), (4,)), ((0, 3), (3,)), ((2, 0), (0,))],
    "mm": [((2, 3), (3, 4)), ((2, 3), (4, 5)), ((0, 3), (3, 4)), ((2, 0), (0, 4))],
    "bmm": [((2, 2, 3), (2, 3, 1)), ((2, 2, 3), (2, 4, 1)), ((2, 0, 3), (2, 3, 1))],
    "matmul": [
        ((3,), (3,)),
        ((3,), (4,)),
        ((2, 3), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (4, 5)),
        ((2, 0), (0, 4)),
        ((1, 1, 0), (2, 0, 0)),
        ((1, 2, 3), (2, 3, 4)),
        ((2, 2, 3), (2, 3, 1)),
        ((2, 0, 3), (2, 3, 1)),
        ((2, 2, 3), (3,)),
        ((2, 2, 3), (4,)),
        ((3,), (2, 3, 2)),
        ((2, 3), (2, 3, 4)),
        ((0, 2, 3), (3, 4)),
    ],
}
PRODUCTS = {
    "matmul": lambda lib, a, b: lib.matmul(a, b),
    "mm": lambda lib, a, b: lib.mm(a, b),
    "bmm": lambda lib, a, b: lib.bmm(a, b),
    "mv": lambda lib, a, b: lib.mv(a, b),
    "dot": lambda lib, a, b: lib.dot(a, b),
}
PRODUCT_CASES = [(name, shapes) for name in PRODUCTS for shapes in PRODUCT_SHAPES[name]]
PRODUCT_DTYPES = [("float32", "float64"), ("float64", "float32"), ("float32", "int64")]
PRODUCT_DTYPES += [
    ("int64", "float32"),
    ("float32", "bool"),
    ("bool", "bool"),
    ("float16", "float16"),
]


@pytest.mark.parametrize("product, shapes", PRODUCT_CASES, ids=str)
@pytest.mark.parametrize("dtypes", PRODUCT_DTYPES, ids="/".join)
@pytest.mark.parametrize("wants_grad", ["neither", "first", "second"])
def test_regression_matrix_products_of_mixed_dtypes_as_pytorch(
    torch, shapes, product, dtypes, wants_grad
):
    # fuzz seed 2117422: x0 @ y of a (1, 1, 0) float32 x0 requiring grad and a (2, 0, 0) float64
    # y ran where PyTorch refuses the mixed dtypes: it first drops x0's batch of one (x0 wants a
    # gradient), which makes the product a folded mm, and mm compares dtypes even with nothing to
    # multiply. Also: an empty bmm whose result would be an integer one recording a gradient is
    # refused ("Autograd not support dtype"); mm and mv check the sizes before the dtypes, dot
    # the dtypes, then the lengths, then whether bool has a kernel
    def outcome(lib):
        a = lib.ones(shapes[0], dtype=getattr(lib, dtypes[0]))
        b = lib.ones(shapes[1], dtype=getattr(lib, dtypes[1]))
        for tensor, name in ((a, "first"), (b, "second")):
            if wants_grad == name and tensor.is_floating_point():
                tensor.requires_grad_()
        try:
            result = PRODUCTS[product](lib, a, b)
        except (RuntimeError, NotImplementedError) as error:
            return type(error).__name__, _which_product_check(str(error))
        return str(result.dtype), tuple(result.shape), result.requires_grad

    assert outcome(ag) == outcome(torch)


def _which_product_check(message):
    """Which of the matrix products' checks a message comes from."""
    for words, check in [
        ("same dtype", "dtypes"),
        ("expected scalar type", "dtypes"),
        ("Autograd not support", "result dtype"),
        ("not implemented for", "kernel"),
        ("Expected size for first two dimensions", "sizes"),
        ("shapes cannot be multiplied", "sizes"),
        ("size mismatch", "sizes"),
        ("inconsistent tensor size", "sizes"),
        ("must match the size", "sizes"),
        ("batch", "sizes"),
    ]:
        if words in message:
            return check
    return message


# ---- cumsum_ and cumprod_: their own checks before the memory they write -----------------------------

SCANS_IN_PLACE = {
    "expanded, dim out of range": lambda lib: lib.ones(1).expand(2).cumsum_(-2),
    "expanded, cumprod_ dim out of range": lambda lib: lib.ones(1).expand(2).cumprod_(5),
    "expanded, dtype= float64": lambda lib: lib.ones(1).expand(2).cumsum_(0, dtype=lib.float64),
    "expanded": lambda lib: lib.ones(1).expand(2).cumsum_(0),
    "expanded bool": lambda lib: lib.ones(1, dtype=lib.bool).expand(2).cumsum_(0),
    "leaf, dim out of range": lambda lib: lib.ones(2, requires_grad=True).cumsum_(5),
    "leaf, dtype= float64": lambda lib: lib.ones(2, requires_grad=True).cumsum_(
        0, dtype=lib.float64
    ),
    "view of a leaf, dim out of range": lambda lib: lib.ones(2, requires_grad=True)[:1].cumsum_(3),
    "bool, dtype= float64": lambda lib: lib.ones(2, dtype=lib.bool).cumsum_(0, dtype=lib.float64),
    "0-d bool": lambda lib: lib.ones((), dtype=lib.bool).cumsum_(0),
    "uint8 wraps": lambda lib: lib.ones(300, dtype=lib.uint8).cumsum_(0),
    "float": lambda lib: lib.arange(4.0).cumsum_(0),
}


@pytest.mark.parametrize("call", SCANS_IN_PLACE)
def test_regression_cumsum_in_place_checks_in_pytorchs_order(torch, call):
    # fuzz seed 3001125 (found by a sweep while checking this group): x.cumsum_(-2) of an
    # expanded 1-d x raised our "more than one element ... refers to a single memory location"
    # where PyTorch first finds the dim out of range (IndexError): after autograd's refusal of a
    # leaf, it checks the dim, then dtype=, then bool's missing kernel, then x's memory
    def outcome(lib):
        try:
            result = SCANS_IN_PLACE[call](lib)
        except (IndexError, RuntimeError, NotImplementedError) as error:
            words = ["out of range", "Bad in-place call", "leaf Variable", "single memory location"]
            return type(error).__name__, [word for word in words if word in str(error)]
        return result.tolist(), str(result.dtype), type(result.grad_fn).__name__

    assert outcome(ag) == outcome(torch)


def _node_names(node, depth=0):
    """The names of a graph's nodes, depth first (PyTorch's C++ nodes without their namespace)."""
    if node is None or depth > 4:
        return []
    names = [(depth, node.name().removeprefix("torch::autograd::"))]
    for next_node, _ in node.next_functions:
        names += _node_names(next_node, depth + 1)
    return names


@pytest.mark.parametrize("value_shape", [(3,), (1, 3), (1, 1, 3), (2, 3)], ids=str)
def test_setitem_of_all_of_x_records_pytorchs_view_of_the_value(torch, value_shape):
    # PyTorch's copy_to views the value without its leading size-1 dims even when it has none
    # (ViewBackward0 under ExpandBackward0): the view that decides the overlap check above
    def names(lib):
        x, v = lib.zeros(2, 3), lib.ones(value_shape, requires_grad=True)
        x[...] = v * 2
        return _node_names(x.grad_fn)

    assert names(ag) == names(torch)


INDEX_ADDS_IN_PLACE = {
    "expanded, dim out of range": lambda lib, x: x.index_add_(3, lib.tensor([0]), lib.ones(1)),
    "expanded, 2-d index": lambda lib, x: x.index_add_(0, lib.tensor([[0]]), lib.ones(1)),
    "expanded, float index": lambda lib, x: x.index_add_(0, lib.tensor([0.0]), lib.ones(1)),
    "expanded, float64 source": lambda lib, x: x.index_add_(
        0, lib.tensor([0]), lib.ones(1, dtype=lib.float64)
    ),
    "expanded, index out of range": lambda lib, x: x.index_add_(0, lib.tensor([5]), lib.ones(1)),
    "expanded": lambda lib, x: x.index_add_(0, lib.tensor([0]), lib.ones(1)),
    "itself as source, dim out of range": lambda lib, x: x.index_add_(
        5, lib.tensor([0, 1]), x.contiguous()
    ),
}


@pytest.mark.parametrize("call", INDEX_ADDS_IN_PLACE)
def test_index_add_in_place_checks_its_arguments_before_its_memory(torch, call):
    # as cumsum_ above: index_add_ on an expanded x with a dim out of range raised our "more than
    # one element ... single memory location" where PyTorch first checks its arguments (dim,
    # index, source's shape and dtype); an index value out of range it finds only later
    def outcome(lib):
        x = lib.ones(1).expand(2)
        if call.startswith("itself"):
            x = lib.ones(2)
        try:
            INDEX_ADDS_IN_PLACE[call](lib, x)
        except (IndexError, RuntimeError) as error:
            words = ["out of range", "vector", "int32/int64", "scalar type", "memory location"]
            return type(error).__name__, [word for word in words if word in str(error)]
        return x.tolist()

    assert outcome(ag) == outcome(torch)
