"""Indexing, sorting and shape ops beyond the op table: keyword forms, negative dims, ties, empty
tensors, in-place forms, and the errors PyTorch raises (by class and by the words a student needs).

Tests that take `lib` run the same code on autograd_lab and on PyTorch (skipped without it): passing
with both shows the behaviour asserted is PyTorch's. Tests marked `oracle` compare values and
gradients with PyTorch's directly. The op table (autograd_lab/ops/table.py) already checks each op's
values, gradients, node names, gradcheck and CUDA on its example shapes.
"""

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck


def _same(ours, theirs):
    """Values, shape and dtype equal (indices and integer results: exactly)."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).rsplit(".", 1)[-1] == str(theirs.dtype).rsplit(".", 1)[-1]
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=1e-12, atol=0)


def _grads_match(torch, fn, *arrays):
    """fn(lib, *leaves) on both libraries (float64): equal values, and equal gradients for one
    random upstream gradient."""
    results = []
    for lib in (ag, torch):
        leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        upstream = np.random.default_rng(3).standard_normal(tuple(out.shape))
        out.backward(lib.tensor(upstream, dtype=lib.float64))
        results.append((out, [x.grad for x in leaves]))
    (out, grads), (expected, expected_grads) = results
    _same(out, expected)
    assert out.grad_fn.name() == expected.grad_fn.name()
    for g, expected_g in zip(grads, expected_grads):
        _same(g, expected_g)


X = np.arange(12.0).reshape(3, 4) - 5.5  # distinct values, so every pick is visible

# ---- gather, scatter, scatter_add, take_along_dim -----------------------------------------------


def test_gather_keyword_forms_and_negative_dim(lib):
    x = lib.tensor(X)
    index = lib.tensor([[0, 3], [1, 1], [2, 0]])
    expected = lib.gather(x, 1, index)
    _same(lib.gather(input=x, dim=-1, index=index), expected)
    _same(x.gather(-1, index=index), expected)
    assert expected.tolist() == [[-5.5, -2.5], [-0.5, -0.5], [4.5, 2.5]]


def test_gather_takes_int32_and_an_index_smaller_than_the_input(lib):
    x = lib.tensor(X)
    out = x.gather(0, lib.tensor([[2, 0]], dtype=lib.int32))  # 1 row, 2 columns of the 4
    assert out.tolist() == [[2.5, -4.5]]


def test_gather_of_an_empty_index_is_empty(lib):
    out = lib.tensor(X).gather(1, lib.zeros(3, 0, dtype=lib.int64))
    assert tuple(out.shape) == (3, 0)


@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_gather_and_scatter_refuse_an_index_that_is_not_integer(lib, dtype):
    x, index = lib.tensor(X), lib.tensor([[0]], dtype=getattr(lib, dtype))
    for call in (lambda: x.gather(1, index), lambda: x.scatter(1, index, 0.0)):
        with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
            call()


def test_the_index_error_says_how_to_fix_it():
    with pytest.raises(RuntimeError, match=r"index\.long\(\)"):
        ag.tensor(X).gather(1, ag.tensor([[0.0]]))


def test_gather_refuses_sparse_grad_by_name():
    with pytest.raises(RuntimeError, match="sparse_grad=True"):
        ag.tensor(X).gather(1, ag.tensor([[0]]), sparse_grad=True)


@pytest.mark.parametrize("bad", [4, -1])
def test_gather_and_scatter_refuse_an_index_out_of_range(lib, bad):
    x, index = lib.tensor(X), lib.tensor([[0, bad]])
    message = f"index {bad} is out of bounds for dimension 1 with size 4"
    for call in (lambda: x.gather(1, index), lambda: x.scatter(1, index, 1.0)):
        with pytest.raises(RuntimeError, match=message):
            call()
    with pytest.raises(RuntimeError, match=message):
        lib.scatter_add(x, 1, index, lib.ones(1, 2, dtype=x.dtype))


def test_gather_refuses_an_index_of_another_rank_or_too_large(lib):
    x = lib.tensor(X)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(1, lib.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="no larger than self"):
        x.gather(1, lib.zeros(5, 1, dtype=lib.int64))
    with pytest.raises(TypeError, match="must be Tensor"):
        x.gather(1, [[0]])


def test_scatter_number_value_and_keyword_forms(lib):
    x, index = lib.tensor(X), lib.tensor([[1, 3]])
    expected = lib.scatter(x, 1, index, 9.0)
    _same(x.scatter(1, index, value=9.0), expected)
    _same(x.scatter(dim=-1, index=index, src=lib.full((1, 2), 9.0, dtype=lib.float64)), expected)
    assert expected[0].tolist() == [-5.5, 9.0, -3.5, 9.0]
    assert x[0].tolist() == [-5.5, -4.5, -3.5, -2.5]  # out of place: x is unchanged


def test_scatter_refuses_a_src_of_another_dtype(lib):
    x = lib.tensor(X, dtype=lib.float32)
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter(1, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float64))


def test_scatter_refuses_an_index_larger_than_src(lib):
    with pytest.raises(RuntimeError, match="to be no larger .*src"):
        lib.tensor(X).scatter(1, lib.tensor([[0, 1]]), lib.ones(1, 1, dtype=lib.float64))


def test_scatter_and_scatter_add_in_place(lib):
    x = lib.tensor(X)
    index = lib.tensor([[0, 0], [3, 1]])
    src = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
    assert x.scatter_add_(1, index, src) is x  # a repeated index adds up: 1 + 2 at [0][0]
    assert x[:2].tolist() == [[-2.5, -4.5, -3.5, -2.5], [-1.5, 3.5, 0.5, 4.5]]
    assert x.scatter_(0, lib.tensor([[2]]), -1.0) is x
    assert x[2, 0].item() == -1.0


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize(
    "reduce, expected", [("add", [4.0, 7.0, 1.0]), ("multiply", [3.0, 8.0, 1.0])]
)
def test_scatter_with_reduce(lib, reduce, expected):
    x = lib.ones(3, dtype=lib.float64)
    src = lib.tensor([2.0, 3.0, 4.0], dtype=lib.float64)
    out = x.scatter(0, lib.tensor([1, 0, 1]), src, reduce=reduce)
    assert out.tolist() == expected
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(0, lib.tensor([1]), src, reduce="max")


def test_scatter_with_reduce_has_no_derivative_as_in_pytorch(lib):
    x = lib.ones(3, dtype=lib.float64, requires_grad=True)
    out = (x * 1).scatter(0, lib.tensor([1, 0]), 2.0, reduce="add")
    with pytest.raises(RuntimeError, match="derivative for .*scatter.* is not implemented"):
        out.sum().backward()


def test_scatter_gives_src_a_gradient_where_it_was_used():
    # PyTorch raises in backward when index is smaller than src ("invalid gradient"); the elements
    # of src that scatter did not use get gradient 0, and finite differences agree.
    x = ag.tensor(X, requires_grad=True)
    src = ag.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    index = ag.tensor([[0, 1], [3, 2]])
    for op in (ag.scatter, ag.scatter_add):
        assert gradcheck(lambda a, b, op=op: op(a, 1, index, b), (x, src))
    ag.scatter(x, 1, index, src).sum().backward()
    assert src.grad.tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]


@pytest.mark.oracle
def test_scatter_add_and_gather_gradients_with_repeated_indices(torch):
    index = [[0, 0, 2], [1, 1, 1]]
    _grads_match(torch, lambda L, a: a.gather(1, L.tensor(index)), X)
    _grads_match(torch, lambda L, a, b: a.scatter_add(1, L.tensor(index), b), X[:2], X[:2, :3])
    _grads_match(torch, lambda L, a: (a * 2).scatter_(0, L.tensor([[2, 0, 1, 0]]), 0.5), X)


def test_gather_scatter_gradcheck_second_order():
    x = ag.tensor(X, requires_grad=True)
    src = ag.tensor(X[:2, :2] * 0.5, requires_grad=True)
    index = ag.tensor([[1, 3], [0, 0]])
    assert gradgradcheck(lambda a: a.gather(1, index) ** 2, (x,))
    assert gradgradcheck(lambda a, b: ag.scatter_add(a, 1, index, b) ** 2, (x, src))
    assert gradgradcheck(lambda a, b: ag.scatter(a, 1, index[:, :1], b) ** 2, (x, src))


@pytest.mark.oracle
def test_take_along_dim_broadcasts_and_flattens(torch):
    _grads_match(torch, lambda L, a: L.take_along_dim(a, L.tensor([[0], [3], [1]]), 1), X)
    _grads_match(torch, lambda L, a: L.take_along_dim(a, L.tensor([[2, 0]]), dim=-1), X)
    _grads_match(torch, lambda L, a: L.take_along_dim(a, L.tensor([[11, 0], [5, 5]])), X)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        ag.take_along_dim(ag.tensor(X), ag.tensor([0]), 1)


# ---- index_select -----------------------------------------------------------------------------------


def test_index_select_keyword_forms_and_errors(lib):
    x = lib.tensor(X)
    expected = lib.index_select(x, 0, lib.tensor([2, 0, 2]))
    _same(x.index_select(dim=-2, index=lib.tensor([2, 0, 2])), expected)
    _same(lib.index_select(x, 1, lib.tensor([], dtype=lib.int64)), lib.zeros(3, 0, dtype=x.dtype))
    _same(x.index_select(0, lib.tensor(1)), x[1:2])  # a 0-d index is one index
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, lib.tensor([3]))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_select(0, lib.tensor([[0]]))
    with pytest.raises(RuntimeError, match="int32 or int64|int32/int64"):
        x.index_select(0, lib.tensor([0.0]))


@pytest.mark.oracle
def test_index_select_gradient_adds_up_repeats(torch):
    _grads_match(torch, lambda L, a: a.index_select(1, L.tensor([3, 3, 0])), X)
    x = ag.tensor(X, requires_grad=True)
    assert gradgradcheck(lambda a: a.index_select(0, ag.tensor([1, 1])) ** 2, (x,))


# ---- masked_fill, masked_select ------------------------------------------------------------------


def test_masked_fill_broadcasts_the_mask_and_fills_in_place(lib):
    x = lib.tensor(X)
    row = lib.tensor([True, False, False, True])
    out = x.masked_fill(row, 0.0)
    assert out[:, 0].tolist() == [0.0, 0.0, 0.0] and out[:, 1].tolist() == x[:, 1].tolist()
    assert x.masked_fill_(row, lib.tensor(7.0, dtype=lib.float64)) is x
    assert x[:, 3].tolist() == [7.0, 7.0, 7.0]
    ints = lib.tensor([1, 2, 3]).masked_fill(lib.tensor([False, True, False]), 9)
    assert ints.tolist() == [1, 9, 3] and ints.dtype == lib.int64


def test_masked_fill_errors(lib):
    x = lib.tensor(X)
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(lib.ones(3, 4), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(x > 0, lib.ones(2, dtype=lib.float64))


@pytest.mark.oracle
def test_masked_fill_gradient_reaches_a_tensor_value(torch):
    mask = [[True, False, False, True]]
    fill = lambda L, a, v: a.masked_fill(L.tensor(mask), v)  # noqa: E731
    _grads_match(torch, fill, X, np.array(1.5))
    _grads_match(torch, lambda L, a, v: (a * 1).masked_fill_(L.tensor(mask), v), X, np.array(1.5))
    x, v = ag.tensor(X, requires_grad=True), ag.tensor(0.5, dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda a, b: fill(ag, a, b), (x, v))


@pytest.mark.oracle
def test_masked_select_broadcasts_and_sends_the_gradient_back(torch):
    _grads_match(torch, lambda L, a: a.masked_select(a > 0), X)
    _grads_match(torch, lambda L, a: L.masked_select(a, L.tensor([[True], [False], [True]])), X)
    _grads_match(torch, lambda L, a: a[0].masked_select(L.tensor([[True], [False]])), X)
    empty = ag.tensor(X).masked_select(ag.zeros(3, 4, dtype=ag.bool))
    _same(empty, torch.tensor(X).masked_select(torch.zeros(3, 4, dtype=torch.bool)))


# ---- nonzero, argwhere ---------------------------------------------------------------------------


def test_nonzero_and_argwhere_forms(lib):
    x = lib.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    expected = [[0, 1], [1, 0], [1, 2]]
    assert x.nonzero().tolist() == expected and x.nonzero().dtype == lib.int64
    assert lib.argwhere(x).tolist() == expected and x.argwhere().tolist() == expected
    rows, cols = lib.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2]
    assert x[x.nonzero(as_tuple=True)].tolist() == [1.5, 2.0, -1.0]  # ready for indexing
    assert tuple(lib.tensor(3.0).nonzero().shape) == (1, 0)  # a 0-d tensor: PyTorch's shapes
    assert tuple(lib.tensor(0.0).nonzero().shape) == (0, 0)
    assert tuple(lib.zeros(2, 0).nonzero().shape) == (0, 2)
    assert not x.requires_grad or x.nonzero().grad_fn is None


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
def test_nonzero_and_argwhere_on_cuda_stay_on_the_gpu():
    x = ag.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], device="cuda")
    places = x.nonzero()
    assert places.device == ag.device("cuda:0") and places.dtype == ag.int64
    assert places.cpu().tolist() == [[0, 1], [1, 0], [1, 2]] == ag.argwhere(x).cpu().tolist()
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.cpu().tolist() == [0, 1, 1] and cols.cpu().tolist() == [1, 0, 2]


# ---- triangles, flip, roll, repeat, t ------------------------------------------------------------


def test_tril_triu_diagonals_and_in_place(lib):
    x = lib.tensor(X)
    assert x.tril().tolist()[0] == [-5.5, 0.0, 0.0, 0.0]
    assert lib.triu(x, diagonal=2).tolist()[0] == [0.0, 0.0, -3.5, -2.5]
    assert x.tril(-1).tolist()[0] == [0.0] * 4
    ints = lib.ones(2, 2, dtype=lib.int64).triu()
    assert ints.tolist() == [[1, 1], [0, 1]] and ints.dtype == lib.int64
    assert x.triu_(1) is x and x.tolist()[1] == [0.0, 0.0, 0.5, 1.5]
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        lib.ones(3).tril()


def test_in_place_tril_of_a_leaf_that_requires_grad_is_refused(lib):
    x = lib.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.tril_()


def test_flip_and_roll_forms(lib):
    x = lib.arange(6).reshape(2, 3)
    assert x.flip(0).tolist() == [[3, 4, 5], [0, 1, 2]]
    assert lib.flip(x, dims=(0, -1)).tolist() == [[5, 4, 3], [2, 1, 0]]
    assert x.flip([1]).tolist() == [[2, 1, 0], [5, 4, 3]]
    assert x.roll(1).tolist() == [[5, 0, 1], [2, 3, 4]]  # no dims: rolled as if flattened
    assert lib.roll(x, shifts=(1, -1), dims=(0, 1)).tolist() == [[4, 5, 3], [1, 2, 0]]
    assert x.roll(4, -1).tolist() == [[2, 0, 1], [5, 3, 4]]  # shifts wrap around
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        x.flip(0, 0)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        x.roll((1, 2), (0,))
    with pytest.raises(IndexError, match="out of range"):
        x.roll(1, 2)


def test_flip_is_a_copy(lib):
    x = lib.arange(3)
    y = x.flip(0)
    y[0] = 7
    assert x.tolist() == [0, 1, 2]


def test_repeat_forms_and_errors(lib):
    x = lib.tensor([[1, 2]])
    assert x.repeat(2, 2).tolist() == [[1, 2, 1, 2], [1, 2, 1, 2]]
    assert tuple(x.repeat((2, 1, 3)).shape) == (2, 1, 6)
    assert tuple(x.repeat(0, 1).shape) == (0, 2)
    y = x.repeat(1, 1)
    y[0, 0] = 9
    assert x.tolist() == [[1, 2]]  # always a copy
    with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
        x.repeat(2)
    assert not hasattr(lib, "repeat")  # a Tensor method only, as in PyTorch


def test_t_of_vectors_matrices_and_more(lib):
    assert lib.tensor([[1, 2, 3]]).t().tolist() == [[1], [2], [3]]
    assert lib.tensor([1, 2]).t().tolist() == [1, 2]
    assert lib.tensor(5).t().item() == 5
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        lib.ones(2, 2, 2).t()


# ---- diagonals and trace ---------------------------------------------------------------------------


def test_diag_builds_a_matrix_or_reads_a_diagonal(lib):
    v = lib.tensor([1, 2])
    assert lib.diag(v).tolist() == [[1, 0], [0, 2]]
    assert v.diag(1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert v.diag(diagonal=-1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    m = lib.arange(12).reshape(3, 4)
    assert m.diag().tolist() == [0, 5, 10] and m.diag(2).tolist() == [2, 7]
    assert m.diag(-2).tolist() == [8] and m.diag(9).tolist() == []
    with pytest.raises(RuntimeError, match="Supports 1D or 2D tensors"):
        lib.ones(2, 2, 2).diag()


def test_diagonal_dims_and_its_view(lib):
    x = lib.arange(24).reshape(2, 3, 4)
    assert x.diagonal().tolist() == [[0, 16], [1, 17], [2, 18], [3, 19]]  # the diagonal goes last
    assert lib.diagonal(x, offset=1, dim1=-1, dim2=-2).tolist() == [[4, 9], [16, 21]]
    assert tuple(x.diagonal(7).shape) == (4, 0)
    y = lib.zeros(3, 3)
    assert y.diagonal()._base is y  # a view of y, as in PyTorch
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        x.diagonal(0, 1, -2)


def test_writing_into_a_diagonal_view_changes_the_matrix(lib):
    # PyTorch writes through the view into x (numpy's diagonal is read-only: the write goes
    # through a writable view of the same memory, ops/overlap.py)
    x = lib.zeros(3, 3)
    x.diagonal().fill_(1.0)
    assert x.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_trace_dtypes_and_errors(lib):
    assert lib.tensor([[1, 2], [3, 4]]).trace().item() == 5
    assert lib.tensor([[1, 2], [3, 4]]).trace().dtype == lib.int64
    assert lib.trace(lib.arange(6.0).reshape(2, 3)).item() == 4.0  # a rectangle: its diagonal
    with pytest.raises(RuntimeError, match="expected a matrix"):
        lib.ones(3).trace()


@pytest.mark.oracle
def test_diagonal_gradients_second_order():
    x = ag.tensor(np.arange(24.0).reshape(2, 3, 4) / 7, requires_grad=True)
    for call in (
        lambda a: a.diagonal(1, 0, 2) ** 2,
        lambda a: a.diagonal(-1, 2, 1) ** 2,
        lambda a: a[0].diag() ** 2,
        lambda a: a[0, 0].diag(-1) ** 2,
        lambda a: a[1].trace() ** 2,
    ):
        assert gradgradcheck(call, (x,))


# ---- grids and broadcasting ------------------------------------------------------------------------


def test_meshgrid_indexing_forms(lib):
    x, y = lib.tensor([1, 2, 3]), lib.tensor([10, 20])
    rows, cols = lib.meshgrid(x, y, indexing="ij")
    assert rows.tolist() == [[1, 1], [2, 2], [3, 3]] and cols.tolist() == [[10, 20]] * 3
    gx, gy = lib.meshgrid([x, y], indexing="xy")  # x along the columns
    assert gx.tolist() == [[1, 2, 3]] * 2 and gy.tolist() == [[10, 10, 10], [20, 20, 20]]
    (only,) = lib.meshgrid(x, indexing="xy")
    assert only.tolist() == [1, 2, 3]
    assert tuple(lib.meshgrid(lib.tensor(5), y, indexing="ij")[0].shape) == (1, 2)
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        lib.meshgrid(x, y, indexing="yx")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        lib.meshgrid(lib.ones(2, 2), indexing="ij")


def test_broadcast_tensors(lib):
    a, b = lib.ones(2, 1), lib.tensor([1.0, 2.0, 3.0])
    big_a, big_b = lib.broadcast_tensors(a, b)
    assert tuple(big_a.shape) == tuple(big_b.shape) == (2, 3)
    assert big_b.tolist() == [[1.0, 2.0, 3.0]] * 2
    c = lib.ones(2, 3)
    assert lib.broadcast_tensors(c, b)[0] is c  # already the shape: the tensor itself
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        lib.broadcast_tensors(lib.ones(2), lib.ones(3))


# ---- sort, argsort, msort, topk --------------------------------------------------------------------

TIES = [3.0, 1.0, 3.0, 2.0, 1.0, 3.0, float("nan"), 2.0, 1.0]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
def test_sort_keeps_ties_in_order_and_puts_nan_last_as_pytorch(lib, descending, stable):
    values, indices = lib.tensor(TIES).sort(descending=descending, stable=stable)
    ascending = [1, 4, 8, 3, 7, 0, 2, 5, 6]  # PyTorch's CPU order (printed by torch 2.13)
    assert indices.tolist() == ([6, 0, 2, 5, 3, 7, 1, 4, 8] if descending else ascending)
    assert values.tolist()[1 if descending else 0] == (3.0 if descending else 1.0)


def test_sort_forms(lib):
    x = lib.tensor([[3, 1, 2], [0, 2, 2]])
    by_column = lib.sort(x, dim=0, descending=True)
    assert by_column.values.tolist() == [[3, 2, 2], [0, 1, 2]]
    assert by_column.indices.tolist() == [[0, 1, 0], [1, 0, 1]]
    values, indices = x.sort(-1)
    assert values.dtype == lib.int64 and indices.dtype == lib.int64
    assert lib.argsort(x, dim=1, descending=True).tolist() == [[0, 2, 1], [1, 2, 0]]
    assert x.argsort(stable=True).tolist() == [[1, 2, 0], [0, 1, 2]]
    assert lib.msort(x).tolist() == [[0, 1, 2], [3, 2, 2]]
    assert lib.sort(lib.tensor(5.0)).indices.item() == 0
    assert lib.sort(lib.tensor([True, False])).indices.tolist() == [1, 0]
    assert "return_types.sort(" in repr(x.sort())


def test_topk_forms_and_errors(lib):
    x = lib.tensor([[1.0, 5.0, 2.0], [3.0, 0.0, 4.0]])
    top = x.topk(2)
    assert top.values.tolist() == [[5.0, 2.0], [4.0, 3.0]] and top.indices.tolist() == [
        [1, 2],
        [2, 0],
    ]
    low = lib.topk(x, k=1, dim=0, largest=False)
    assert low.values.tolist() == [[1.0, 0.0, 2.0]] and low.indices.tolist() == [[0, 1, 0]]
    assert tuple(x.topk(0).values.shape) == (2, 0)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(4)


def test_topk_with_ties_gives_the_tied_values():
    # Values always equal PyTorch's; among tied values PyTorch's CPU topk picks by its selection
    # algorithm (partial sort), we pick the earlier element, as sort does.
    values, indices = ag.tensor(TIES).topk(3)
    assert values.tolist()[1:] == [3.0, 3.0] and indices.tolist() == [6, 0, 2]


@pytest.mark.oracle
def test_sort_and_topk_gradients_go_back_where_the_values_came_from(torch):
    x = np.random.default_rng(5).standard_normal((3, 4))
    _grads_match(torch, lambda L, a: a.sort(0, descending=True).values, x)
    _grads_match(torch, lambda L, a: L.sort(a, stable=True).values, x)
    _grads_match(torch, lambda L, a: a.topk(2, dim=0, largest=False).values, x)
    _grads_match(torch, lambda L, a: L.msort(a), x)
    leaf = ag.tensor(x, requires_grad=True)
    assert gradgradcheck(lambda a: a.topk(3).values ** 2, (leaf,))


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
def test_sorting_refuses_cuda_tensors_with_the_fix():
    x = ag.tensor([3.0, 1.0], device="cuda")
    for call in (x.sort, x.argsort, lambda: x.topk(1), x.unique, x.unique_consecutive):
        with pytest.raises(RuntimeError, match="not implemented for CUDA tensors.*cpu"):
            call()


# ---- unique, unique_consecutive ------------------------------------------------------------------


def test_unique_forms(lib):
    x = lib.tensor([3, 1, 2, 3, 1])
    assert lib.unique(x).tolist() == [1, 2, 3] and x.unique(sorted=True).tolist() == [1, 2, 3]
    values, inverse, counts = lib.unique(x, return_inverse=True, return_counts=True)
    assert inverse.tolist() == [2, 0, 1, 2, 0] and counts.tolist() == [2, 1, 2]
    assert values[inverse].tolist() == x.tolist()  # inverse rebuilds the input
    rows, inverse = lib.tensor([[1, 2], [1, 2], [0, 5]]).unique(dim=0, return_inverse=True)
    assert rows.tolist() == [[0, 5], [1, 2]] and inverse.tolist() == [1, 1, 0]
    matrix_inverse = lib.unique(lib.tensor([[1, 2], [2, 1]]), return_inverse=True)[1]
    assert matrix_inverse.tolist() == [[0, 1], [1, 0]]  # the input's shape
    assert lib.unique(lib.tensor([1.0, float("nan"), float("nan")])).numel() == 3  # NaNs differ
    empty = lib.unique(lib.tensor([]), return_counts=True)
    assert empty[0].numel() == 0 and empty[1].dtype == lib.int64


def test_unique_consecutive_forms(lib):
    x = lib.tensor([1, 1, 2, 2, 3, 1, 1])
    values, inverse, counts = lib.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3, 1] and counts.tolist() == [2, 2, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3]
    rows, counts = lib.tensor([[1, 1], [1, 1], [2, 3]]).unique_consecutive(
        dim=0, return_counts=True
    )
    assert rows.tolist() == [[1, 1], [2, 3]] and counts.tolist() == [2, 1]


def test_unique_has_no_derivative_as_in_pytorch(lib):
    x = lib.tensor([1.0, 2.0, 1.0], requires_grad=True)
    for out in (x.unique(), x.unique_consecutive(), lib.unique(x.reshape(3, 1), dim=0)):
        assert out.requires_grad
        with pytest.raises(NotImplementedError, match="the derivative for .* is not implemented"):
            out.sum().backward()


# ---- moving dims, and shape ops in place ---------------------------------------------------------


def test_movedim_moveaxis_swapdims_forms_and_errors(lib):
    x = lib.zeros(2, 3, 4)
    assert tuple(lib.movedim(x, 0, -1).shape) == (3, 4, 2)
    assert tuple(x.moveaxis((0, 1), (2, 0)).shape) == (3, 4, 2)
    assert tuple(lib.moveaxis(x, source=-1, destination=0).shape) == (4, 2, 3)
    assert tuple(lib.swapdims(x, 0, 2).shape) == (4, 3, 2) == tuple(x.swapaxes(0, -1).shape)
    with pytest.raises(RuntimeError, match="repeated dim in `source`"):
        lib.movedim(x, (0, 0), (1, 2))
    with pytest.raises(RuntimeError, match="same number of dims"):
        lib.movedim(x, (0, 1), (2,))
    with pytest.raises(IndexError):
        lib.movedim(x, 3, 0)


@pytest.mark.parametrize(
    "call, shape, node",
    [
        (lambda y: y.unsqueeze_(0), (1, 1, 2, 3), "UnsqueezeBackward1"),
        (lambda y: y.squeeze_(), (2, 3), "SqueezeBackward3"),
        (lambda y: y.squeeze_(0), (2, 3), "SqueezeBackward4"),
        (lambda y: y.transpose_(-1, 1), (1, 3, 2), "TransposeBackward1"),
        (lambda y: y.swapaxes_(1, 2), (1, 3, 2), "TransposeBackward1"),
        (lambda y: y.swapdims_(2, 1), (1, 3, 2), "TransposeBackward1"),
        (lambda y: y[0].t_(), (3, 2), "TBackward1"),
    ],
    ids=["unsqueeze_", "squeeze_", "squeeze_dim", "transpose_", "swapaxes_", "swapdims_", "t_"],
)
def test_in_place_shape_ops_on_a_non_leaf_record_a_view_op(lib, call, shape, node):
    x = lib.tensor(np.arange(6.0).reshape(1, 2, 3), requires_grad=True)
    y = x * 2
    before = y._version
    target = call(y)
    assert tuple(target.shape) == shape and target.grad_fn.name() == node
    assert target._version == before + 1
    weights = lib.tensor(np.arange(1.0, 7.0).reshape(shape), dtype=x.dtype)
    (target * weights).sum().backward()
    assert x.grad is not None and tuple(x.grad.shape) == (1, 2, 3)


@pytest.mark.oracle
def test_in_place_shape_ops_give_pytorch_gradients(torch):
    weights = np.arange(1.0, 7.0)
    for call in (
        lambda y: y.unsqueeze_(1),
        lambda y: y.transpose_(0, 1),
        lambda y: y.t_(),
        lambda y: y.unsqueeze_(0).squeeze_(0),
    ):
        grads = []
        for lib in (ag, torch):
            x = lib.tensor(np.arange(6.0).reshape(2, 3) / 3, requires_grad=True)
            y = x * x
            assert call(y) is y  # the method returns the tensor itself
            w = lib.tensor(weights.reshape(tuple(y.shape)))
            (y * w).sum().backward()
            grads.append((tuple(y.shape), y.grad_fn.name(), x.grad))
        (shape, node, grad), (t_shape, t_node, t_grad) = grads
        assert (shape, node) == (t_shape, t_node)
        _same(grad, t_grad)


def test_in_place_shape_ops_refuse_a_leaf_that_requires_grad(lib):
    x = lib.ones(2, 3, requires_grad=True)
    for call in (lambda: x.unsqueeze_(0), lambda: x.t_(), lambda: x.transpose_(0, 1)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            call()
    with lib.no_grad():  # as optimizers do: allowed
        x.unsqueeze_(0)
    assert tuple(x.shape) == (1, 2, 3) and x.is_leaf


def test_in_place_shape_op_on_a_view_changes_the_view_only(lib):
    base = lib.ones(2, 3)
    row = base[0]
    row.unsqueeze_(0)
    assert tuple(row.shape) == (1, 3) and tuple(base.shape) == (2, 3)
    row[0, 1] = 5.0  # still a view of base's storage
    assert base[0, 1].item() == 5.0


def test_in_place_shape_op_errors(lib):
    with pytest.raises(IndexError):
        lib.ones(2).unsqueeze_(3)
    with pytest.raises(RuntimeError, match="expects a tensor with <= 2 dimensions"):
        lib.ones(2, 2, 2).t_()
