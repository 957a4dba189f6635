"""Views, shape ops and indexing at the edges, second round (issue 14): node names PyTorch records,
and which calls it refuses. Each test runs the same code in autograd_lab and in PyTorch."""

import pytest
from conftest import both
from test_edges_views import node


def test_reshape_records_a_view_an_alias_or_a_copy_as_pytorch_does(torch):
    def run(lib):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        column = lib.zeros(1, 1, 1).expand(2, 1, 1).requires_grad_()
        names = [
            node(x.reshape(4, 3)),  # contiguous: ViewBackward0
            node(x.t().reshape(4, 3)),  # not contiguous, but a view: ReshapeAliasBackward0
            node(column.flatten(1)),  # flatten is a reshape: the same rule
            node(lib.tensor(0.0, requires_grad=True).reshape(1)),  # 0-d is contiguous
        ]
        copied = x.t().reshape(6, 2)  # must copy: CloneBackward0, then UnsafeViewBackward0
        names += [node(copied), type(copied.grad_fn.next_functions[0][0]).__name__]
        (copied * lib.arange(12.0).reshape(6, 2)).sum().backward()
        return names, copied.detach(), x.grad

    both(torch, run)


def test_squeeze_with_a_tuple_of_dims_records_its_own_overload(torch):
    def run(lib):
        x = lib.zeros(1, 2, 1, requires_grad=True)
        zero_d = lib.tensor(0.0, requires_grad=True)
        return [
            node(x.squeeze()),
            node(x.squeeze(0)),
            node(x.squeeze((0, 2))),
            node(zero_d.squeeze(())),
            node((x * 1).squeeze_()),
            node((x * 1).squeeze_(0)),
            node((x * 1).squeeze_([0, 2])),
            node((zero_d * 1).squeeze_(())),
        ]

    both(torch, run)


def test_squeeze_in_place_accepts_dim_0_of_a_0d_tensor(torch):
    both(torch, lambda lib: lib.tensor(5).squeeze_(0))
    both(torch, lambda lib: lib.tensor(5).squeeze_(-1))


@pytest.mark.parametrize("change", [lambda v: v.squeeze_(0), lambda v: v.t_()])
def test_in_place_shape_ops_refuse_a_view_of_a_leaf_that_requires_grad(torch, change):
    for lib in (torch, __import__("autograd_lab")):
        view = lib.tensor([1.0], requires_grad=True)[...]
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            change(view)
        with lib.no_grad():
            change(lib.tensor([1.0], requires_grad=True)[...])  # allowed while not recording


def test_movedim_of_a_0d_tensor_records_an_alias(torch):
    def run(lib):
        x = lib.tensor(2.0, requires_grad=True)
        moved = x.movedim(0, -1)
        moved.backward()
        return node(moved), node(lib.moveaxis(x, 0, 0)), moved.detach(), x.grad

    both(torch, run)


def test_chunk_of_an_empty_dim_records_split_with_sizes(torch):
    def run(lib):
        pieces = lib.zeros(0, 3, requires_grad=True).chunk(2)
        return [node(p) for p in pieces], [tuple(p.shape) for p in pieces]

    both(torch, run)


def test_iterating_over_a_tensor_unbinds_it(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        rows = list(x)
        (rows[0] * 2 + rows[2]).backward()
        return [node(r) for r in rows], x.grad

    both(torch, run)


def test_diff_of_order_0_copies_the_input_alone_after_checking_prepend(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
        copied = lib.diff(x, n=0, prepend=x, append=x[:1])  # checked, then left out
        copied.sum().backward()
        return copied.detach(), node(copied), x.grad

    both(torch, run)
    for lib in (torch, __import__("autograd_lab")):
        with pytest.raises(RuntimeError, match="same dimension as input"):
            lib.diff(lib.zeros(1, 1), n=0, dim=-1, prepend=lib.zeros(1))
        with pytest.raises(RuntimeError, match="except along the differencing dimension"):
            lib.diff(lib.zeros(2, 3), n=1, prepend=lib.zeros(3, 3))


@pytest.mark.parametrize("rows", [1, 2])  # one row: the final transpose is contiguous already
def test_matmul_of_a_matrix_needing_grad_and_a_batch_records_the_final_transpose(torch, rows):
    def run(lib):
        x = lib.arange(rows * 3.0).reshape(rows, 3).requires_grad_()
        batch = lib.arange(24.0).reshape(2, 3, 4)
        product = x @ batch
        (product * lib.arange(rows * 8.0).reshape(2, rows, 4)).sum().backward()
        return product.detach(), node(product), node(lib.matmul(x.detach(), batch)), x.grad

    both(torch, run)


def test_matmul_with_a_bool_batch_raises_bmms_not_implemented(torch):
    for lib in (torch, __import__("autograd_lab")):
        left = lib.zeros(3, 1, dtype=lib.bool)
        with pytest.raises(NotImplementedError, match="bmm"):
            left @ lib.zeros(1, 1, 1, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="same dtype"):
            lib.zeros(1, 1, 1, dtype=lib.bool) @ lib.zeros(1, 1, dtype=lib.float64)


def test_an_index_put_through_a_narrowing_view_is_recorded_as_copy_slices(torch):
    def run(lib):
        names = []
        for write in (
            lambda x, m, i: x.__setitem__((m, slice(None, -1, 2)), 1.0),  # CopySlices
            lambda x, m, i: x.__setitem__((m, 0), 1.0),  # CopySlices
            lambda x, m, i: x.__setitem__((None, i), 1.0),  # CopySlices
            lambda x, m, i: x.__setitem__((i, slice(1, None)), 1.0),  # CopySlices
            lambda x, m, i: x.__setitem__((m, slice(None)), 1.0),  # a whole dim: IndexPut
            lambda x, m, i: x.__setitem__((Ellipsis, i), 1.0),  # IndexPutBackward0
        ):
            x = lib.zeros(2, 3, requires_grad=True) * 1
            write(x, lib.tensor([True, False]), lib.tensor([1, 0]))
            names.append(node(x))
        return names

    both(torch, run)


def test_indexing_records_the_last_view_it_made(torch):
    def run(lib):
        x = lib.zeros(2, 3, requires_grad=True)
        picks = [
            (slice(None, -1), 1),  # slice, then select: SelectBackward0
            (0, slice(None)),  # a whole-dim slice is skipped: SelectBackward0
            (0, slice(0, 1)),  # SliceBackward0
            (slice(0, 1), None),  # UnsqueezeBackward0
            (slice(0, 2), slice(0, 3)),  # nothing narrowed: AliasBackward0
            slice(None),  # a lone slice is always applied: SliceBackward0
        ]
        return [node(x[pick]) for pick in picks]

    both(torch, run)


def test_detach_in_place_refuses_a_view(torch):
    for lib in (torch, __import__("autograd_lab")):
        with pytest.raises(RuntimeError, match="detach views in-place"):
            lib.tensor([0.0])[:].detach_()
        lib.tensor([0.0]).detach_()  # not a view: allowed


def test_in_place_change_of_a_view_made_a_leaf_by_requires_grad_is_refused(torch):
    for lib in (torch, __import__("autograd_lab")):
        leaf_view = lib.zeros(4).reshape(2, 2).requires_grad_()  # a view, and a leaf
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            leaf_view[()].index_add_(0, lib.tensor([1, 1, 0]), lib.ones(3, 2))


def test_index_select_and_index_add_raise_pytorchs_classes_at_an_empty_dim(torch):
    for lib in (torch, __import__("autograd_lab")):
        with pytest.raises(RuntimeError, match="axis dim should be positive"):
            lib.zeros(1, 0).index_select(1, lib.tensor([0, 0]))
        with pytest.raises(IndexError, match="index out of range in self"):
            lib.zeros(0).index_select(0, lib.tensor([0]))
        with pytest.raises(IndexError, match="index out of range in self"):
            lib.index_add(lib.zeros(0), -1, lib.tensor([0, 0]), lib.ones(2))
        with pytest.raises(IndexError, match="index out of range in self"):
            lib.index_add(lib.zeros(3), 0, lib.tensor([-1]), lib.ones(1))


def test_index_add_of_integers_truncates_alpha_to_an_integer(torch):
    def run(lib):
        counts = lib.tensor([1, 2, 3])
        index, source = lib.tensor([0, 2]), lib.tensor([3, 5])
        return [
            lib.index_add(counts, 0, index, source, alpha=0.25),
            lib.index_add(counts, 0, index, source, alpha=2.7),
            counts.clone().index_add_(-1, index, source, alpha=2.0),
        ]

    both(torch, run)


def test_a_bad_index_on_a_leaf_that_requires_grad_is_an_index_error(torch):
    for lib in (torch, __import__("autograd_lab")):
        number = lib.tensor(0.0, requires_grad=True)
        with pytest.raises(IndexError):
            number[0] = -0.5
        with pytest.raises(IndexError):
            lib.zeros(2, requires_grad=True)[5] = 1.0


def test_writing_inf_or_nan_into_an_integer_tensor_is_refused(torch):
    for lib in (torch, __import__("autograd_lab")):
        counts = lib.tensor([0, 0, 0, 0])
        with pytest.raises(RuntimeError, match="without overflow"):
            counts[3] = -float("inf")
        with pytest.raises(RuntimeError, match="without overflow"):
            lib.masked_fill(counts, counts == 0, float("nan"))
    both(torch, lambda lib: lib.masked_fill(lib.tensor([1, 2]), lib.tensor([True, False]), 2.7))


def test_roll_of_an_empty_tensor_does_not_check_its_dims(torch):
    def run(lib):
        x = lib.zeros(0, requires_grad=True)
        rolled = lib.roll(x, 2, 4)
        rolled.sum().backward()
        return rolled.detach(), node(rolled), node(lib.roll(x, (1, 2), (0, 5))), x.grad

    both(torch, run)
    for lib in (torch, __import__("autograd_lab")):
        with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
            lib.roll(lib.zeros(0), (1, 2), (0,))


def test_unflatten_works_out_its_minus_one_from_the_dim_even_in_an_empty_tensor(torch):
    both(torch, lambda lib: lib.unflatten(lib.zeros(0, 3), -1, (3, -1, 1)))
    both(torch, lambda lib: lib.unflatten(lib.arange(12.0).reshape(2, 6), 1, (-1, 2)))
