"""Issue 14, in-place writes through views, backward errors, and which error comes first: where
differential fuzzing found autograd_lab differing from PyTorch 2.13, each compared with PyTorch
(the `torch` fixture): gradients exactly, errors by class and key words."""

import numpy as np
import pytest
from conftest import both, same, values
from fuzzing import check
from fuzzing.compare import Divergence
from fuzzing.program import Leaf, Program, Step
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


def expanded_and_written(lib, write, weights=None):
    """x's gradient after writing into e = x.clone().expand(3, 2) and summing e (times weights)."""
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    e = x.clone().expand(3, 2)
    write(lib, x, e)
    loss = e.sum() if weights is None else (e * lib.tensor(weights, dtype=lib.float64)).sum()
    loss.backward()
    return x.grad


def set_row(lib, x, e):
    e[2] = 1.5


def set_one_element(lib, x, e):
    e[2, 0] = 1.5


def set_row_to_x(lib, x, e):
    e[2] = x * 3


def set_nothing(lib, x, e):
    e[2:0] = 1.5


def set_through_index_tensor(lib, x, e):
    e[2, lib.tensor([1])] = 1.5


def set_through_none(lib, x, e):
    e[2][None] = 1.5


@pytest.mark.parametrize(
    "write",
    [
        set_row,
        set_one_element,
        set_row_to_x,
        set_nothing,
        set_through_index_tensor,
        set_through_none,
    ],
)
@pytest.mark.parametrize("weights", [None, [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]])
def test_setitem_on_an_expanded_tensor_writes_only_the_indexed_view(torch, write, weights):
    # e[2] = v writes into the view e[2], whose places are all of x's clone: PyTorch's gradient
    # for those places is that of the new values (zero for a number), for the others the sum
    # over the expanded copies; no error at backward, since e[2] repeats no element
    both(torch, lambda lib: expanded_and_written(lib, write, weights))


def test_setitem_on_an_expanded_tensor_from_a_tensor_without_grad_gives_the_value_its_gradient(
    torch,
):
    def grad(lib):
        x = lib.tensor([0.5], requires_grad=True)
        e = lib.tensor([0.0, 0.0]).expand(3, 2)
        e[1] = x[0]  # one row of e is the base's two places, both now x[0]
        (e * lib.arange(1.0, 7.0).reshape(3, 2)).sum().backward()
        return x.grad, e

    both(torch, grad)


def test_setitem_through_an_expanded_view_that_still_repeats_is_refused(lib):
    e = lib.tensor([1.0, 2.0], requires_grad=True).clone().expand(3, 2)
    with pytest.raises(RuntimeError, match="single memory location"):
        e[1:] = 1.5


def test_a_write_that_reads_places_it_writes_in_a_layout_pytorch_does_not_check_is_refused(torch):
    # x.mT[...] = x[0]: the row x[0], broadcast, is read while x's places are written; PyTorch
    # checks overlaps of dense layouts only, so it writes element after element and its answer
    # depends on that order (here all zeros); ours refuses (README "Simplifications")
    def write(lib):
        x = lib.tensor([[0.0, 1.0], [0.0, 0.0]])
        x.mT[...] = x[0]
        return x

    assert values(write(torch)).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(RuntimeError, match="in a layout PyTorch 2.13 does not check"):
        write(ag)
    # the fuzzer's program (W5#32) is accepted by that line, and by no other
    program = Program(
        (Leaf("x0", (2, 2), "float32", (0.0, 1.0, 0.0, 0.0)),),
        (Step("v0", "setitem", "{0}.mT[...] = {0}[0]", ("x0",), statement=True),),
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ["does not check that layout" in s.readme for _, s in result.accepted] == [True]


def test_a_write_from_a_copy_or_from_the_same_places_still_runs(torch):
    def write(lib):
        x = lib.tensor([[0.0, 1.0], [2.0, 3.0]])
        x.mT[...] = x[0].clone()
        x[::2].add_(x[::2])  # each element reads only its own place
        return x

    both(torch, write)


@pytest.mark.parametrize("shape, dim", [((1, 2), 1), ((2, 3), 1), ((2, 1, 3), 2), ((2, 2), 0)])
def test_unique_consecutive_along_a_dim_lays_its_slices_out_as_pytorch(torch, shape, dim):
    # its strides decide whether a later write sees the value in the same places (W5#12)
    def strides(lib):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        return lib.unique_consecutive(x, dim=dim).stride()

    assert strides(ag) == strides(torch)


def test_a_row_written_with_itself_after_unique_consecutive_runs(torch):
    def write(lib):
        x = lib.unique_consecutive(lib.tensor([[1.0, 0.0]], dtype=lib.float64), dim=1)
        x[::2] = x[0]  # the same places as the view written: nothing to copy
        return x

    both(torch, write)


def written(lib, shape, index, value):
    """x = zeros(shape); x[index(lib)] = value(lib, x); x."""
    x = lib.zeros(shape)
    x[index(lib)] = value(lib, x)
    return x


@pytest.mark.parametrize(
    "shape, index, value",
    [
        # index_put_ checks the value's shape before the index values: no IndexError for 1 here
        (
            (2, 2, 1, 1),
            lambda lib: (slice(None, None, 3), ..., -1, [1]),
            lambda lib, x: lib.ones(2, 2),
        ),
        ((2, 2, 1, 1), lambda lib: (..., -1, [1]), lambda lib, x: lib.zeros(2, 2)),
        # an empty indexing result takes only a value that broadcasts to it
        ((3,), lambda lib: lib.tensor([], dtype=lib.int64), lambda lib, x: lib.zeros(3, 0)),
        ((3,), lambda lib: lib.tensor([], dtype=lib.int64), lambda lib, x: lib.zeros(0, 1)),
    ],
)
def test_setitem_refuses_a_value_that_cannot_broadcast_before_looking_at_the_indices(
    lib, shape, index, value
):
    with pytest.raises(RuntimeError, match="shape mismatch"):
        written(lib, shape, index, value)


def test_setitem_takes_a_value_with_extra_leading_ones_into_an_empty_result(torch):
    both(
        torch,
        lambda lib: written(
            lib, (3,), lambda lib: lib.tensor([], dtype=lib.int64), lambda lib, x: lib.zeros(1, 0)
        ),
    )


@pytest.mark.parametrize(
    "shape, index",
    [
        ((0, 5), lambda lib: lib.tensor([], dtype=lib.bool)),
        ((0, 5), lambda lib: (slice(None), lib.zeros(5, dtype=lib.bool))),  # a whole dim: x itself
        ((0,), lambda lib: lib.tensor([], dtype=lib.int64)),
        ((2, 0), lambda lib: lib.tensor([0])),  # the overlap is found before the shapes' misfit
    ],
)
def test_setitem_of_a_tensor_into_itself_through_index_tensors_is_refused_even_when_empty(
    lib, shape, index
):
    with pytest.raises(RuntimeError, match="single memory location"):
        written(lib, shape, index, lambda lib, x: x)


@pytest.mark.parametrize("shape", [(1, 0), (1, 1, 0), (1, 2, 0)])
@pytest.mark.parametrize(
    "index",
    [lambda lib: ([0],), lambda lib: lib.tensor([0]), lambda lib: lib.zeros(1, dtype=lib.bool)],
)
def test_setitem_of_an_empty_tensor_into_itself_runs_when_it_starts_with_a_dim_of_one(
    torch, shape, index
):
    # PyTorch drops the value's leading dims of size 1 before index_put_: a new view, and an
    # empty view shares no memory (fuzz seed 1413166)
    both(torch, lambda lib: written(lib, shape, index, lambda lib, x: x))


def test_setitem_of_an_empty_view_of_itself_runs(torch):
    both(
        torch,
        lambda lib: written(
            lib, (0, 5), lambda lib: lib.tensor([], dtype=lib.int64), lambda lib, x: x[:]
        ),
    )


def clamped_with_broad_bounds(lib):
    x = lib.tensor([[-2.0, 0.72]], dtype=lib.float64, requires_grad=True)
    low = lib.tensor(0.54, dtype=lib.float64, requires_grad=True)
    high = lib.tensor([[[-1.0, 0.9]], [[0.1, 0.6]], [[3.0, 0.3]]], dtype=lib.float64)
    return x, low, high.requires_grad_()


def test_clamp_with_bounds_broader_than_its_input_has_the_gradient_of_its_formula(torch):
    # PyTorch 2.13's backward fails here (README "Simplifications"); ours is the formula's gradient,
    # checked with finite differences and against PyTorch's for the input broadcast beforehand
    x, low, high = clamped_with_broad_bounds(torch)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.clamp(x, min=low, max=high).sum().backward()
    inputs = clamped_with_broad_bounds(ag)
    assert ag.autograd.gradcheck(lambda x, low, high: ag.clamp(x, min=low, max=high), inputs)

    def gradients(lib, broadcast_first):
        x, low, high = clamped_with_broad_bounds(lib)
        seen = x.expand(3, 1, 2) if broadcast_first else x
        lib.clamp(seen, min=low, max=high).sum().backward()
        return x.grad, low.grad, high.grad

    same(gradients(ag, False), gradients(torch, True))


def test_the_fuzzer_accepts_the_clamp_backward_failure_only_in_programs_calling_clamp():
    failure = Divergence(
        "loss.backward()",
        "backward",
        "raises",
        "ran",
        "raises RuntimeError: output with shape [1, 1, 2] doesn't match the broadcast shape [2, 3, 2]",
    )
    assert accepted_by(failure, "v1 = torch.clamp(x0, min=x1, max=v0)") is not None
    assert accepted_by(failure, "v1 = x0.clip(min=x1, max=v0)") is not None
    assert accepted_by(failure, "v1 = x0.add_(v0)") is None


@pytest.mark.parametrize("convert", [lambda t: t.byte(), lambda t: t.long(), lambda t: t.to(bool)])
def test_a_split_piece_whose_base_changed_in_place_converts_to_integers(torch, convert):
    # an integer result records nothing, so PyTorch never asks for the stale piece's history
    def converted(lib):
        x = lib.tensor([[1.5], [-2.0]], dtype=lib.float64, requires_grad=True)
        base = x.cumsum(0)
        piece = base.split([1, 1], dim=0)[0]
        base.triu_()
        return convert(piece)

    both(torch, converted)


def test_a_split_piece_whose_base_changed_in_place_still_refuses_a_float_conversion(lib):
    x = lib.tensor([[1.5], [-2.0]], dtype=lib.float64, requires_grad=True)
    base = x.cumsum(0)
    piece = base.split([1, 1], dim=0)[0]
    base.triu_()
    with pytest.raises(RuntimeError, match="modified inplace"):
        piece.float()


def test_the_second_derivative_of_an_embedding_with_no_indices_is_zero(torch):
    def second_order(lib):
        weight = lib.tensor([[-2.0], [1.0]], dtype=lib.float64, requires_grad=True)
        looked_up = lib.nn.functional.embedding(lib.tensor([], dtype=lib.int64), weight)
        (first,) = lib.autograd.grad(looked_up.sin().sum(), [weight], create_graph=True)
        return lib.autograd.grad((first * first).sum(), [weight], allow_unused=True)[0]

    with pytest.raises(RuntimeError, match="cannot reshape tensor of 0 elements"):
        second_order(torch)  # PyTorch 2.13's double backward fails (README "Simplifications")
    assert values(second_order(ag)).tolist() == [[0.0], [0.0]]
    weight = ag.tensor([[-2.0], [1.0]], dtype=ag.float64, requires_grad=True)
    empty = ag.tensor([], dtype=ag.int64)
    assert ag.autograd.gradgradcheck(
        lambda w: ag.nn.functional.embedding(empty, w).sin().sum(), (weight,)
    )
    failure = Divergence(
        "again = ...",
        "grad",
        "raises",
        "ran",
        "raises RuntimeError: cannot reshape tensor of 0 elements into shape [0, -1] because ...",
    )
    assert accepted_by(failure, "v4 = torch.nn.functional.embedding(i, x0)") is not None
    assert accepted_by(failure, "v4 = x0.reshape(0, -1)") is None


@pytest.mark.parametrize(
    "reduce",
    [
        lambda lib, x: lib.sum(x, dim=-3, keepdim=True, dtype=lib.int64),
        lambda lib, x: lib.sum(x, dim=(0, 5), dtype=lib.int64),
        lambda lib, x: lib.cumsum(x, dim=-3, dtype=lib.int64),
        lambda lib, x: lib.cumprod(x, dim=2, dtype=lib.int64),
    ],
)
def test_a_dim_out_of_range_is_reported_before_an_integer_dtype_autograd_cannot_record(lib, reduce):
    x = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
    with pytest.raises(IndexError):
        reduce(lib, x)


def test_index_add_refuses_another_dtype_before_it_looks_at_the_index_values(lib):
    x = lib.zeros(1, 2, dtype=lib.bool)
    index = lib.tensor([1, 0, 1, 1])  # 1 is out of range, but the dtypes are checked first
    with pytest.raises(RuntimeError, match="must have the same scalar type"):
        x.index_add_(-2, index, lib.ones(4, 2), alpha=0.5)


@pytest.mark.parametrize(
    "shape, index, source_shape",
    [((3, 2, 1), [], (3, 2, 0)), ((0, 2), [0], (0, 1))],  # nothing added: alpha is not converted
)
def test_index_add_of_nothing_takes_an_alpha_its_integer_dtype_cannot_hold(
    torch, shape, index, source_shape
):
    def added(lib):
        x = lib.zeros(shape, dtype=lib.int64)
        picked = lib.tensor(index, dtype=lib.int64)
        source = lib.zeros(source_shape, dtype=lib.int64)
        return lib.index_add(x, -1 if len(shape) == 3 else 1, picked, source, alpha=float("inf"))

    both(torch, added)


def test_index_add_into_a_vector_converts_alpha_even_when_adding_nothing(lib):
    x, nothing = lib.zeros(1, dtype=lib.int64), lib.tensor([], dtype=lib.int64)
    with pytest.raises(RuntimeError, match="overflow"):
        lib.index_add(x, 0, nothing, lib.zeros(0, dtype=lib.int64), alpha=float("inf"))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_matmul_of_a_matrix_and_an_empty_batch_of_another_dtype(lib, requires_grad):
    # a matrix that requires grad is folded into one product (mm), which refuses mixed dtypes
    # even with nothing to multiply; without grad the batched product returns empty zeros
    matrix = lib.ones(0, 2, dtype=lib.float64, requires_grad=requires_grad)
    batch = lib.ones(0, 2, 1, dtype=lib.int64)
    if requires_grad:
        with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
            matrix @ batch
    else:
        assert (matrix @ batch).shape == (0, 0, 1)


def view_made_before_its_base_required_grad(lib, look_at_history):
    y = lib.zeros(2)
    w = y[None]  # made while y records nothing: w has no history of its own
    y[:1] = lib.tensor(1.0, requires_grad=True)  # y now requires grad, and so does w
    if look_at_history:
        w.grad_fn  # rebuilds w's history (AsStridedBackward0): w is no longer a leaf
    return w


@pytest.mark.parametrize("change", [lambda w: w.floor_divide_(1.0), lambda w: w.mul_(2.0)])
def test_a_view_whose_history_was_not_rebuilt_is_a_leaf_to_an_in_place_op(lib, change):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        change(view_made_before_its_base_required_grad(lib, look_at_history=False))
    changed = change(view_made_before_its_base_required_grad(lib, look_at_history=True))
    assert changed.requires_grad


@pytest.mark.parametrize(
    "combine",
    [lambda lib, a, b: a & b, lambda lib, a, b: a ^ b, lambda lib, a, b: lib.bitwise_not(a)],
)
def test_a_bitwise_op_reads_a_stale_split_piece_history_before_refusing_floats(lib, combine):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    base = x * 1
    piece = base.split(1, 0)[0]
    base[1:] = 0.0  # the split piece's storage changes in place
    with pytest.raises(RuntimeError, match="Output 0 of Split"):
        combine(lib, piece, lib.tensor(1.0))


def test_a_bitwise_op_on_floats_that_require_grad_is_not_implemented(lib):
    with pytest.raises(NotImplementedError):
        lib.tensor([1.0], requires_grad=True) & lib.tensor(1.0)


@pytest.mark.parametrize("p", [0, 2])
def test_dist_saves_both_operands_so_changing_one_in_place_is_caught_at_backward(lib, p):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = lib.tensor([0.5, 0.5], dtype=lib.float64)  # saved although it needs no gradient
    distance = x.dist(y, p)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        distance.backward()


@pytest.mark.parametrize("p", [0, 2])
def test_dist_saves_its_result_so_changing_it_in_place_is_caught_at_backward(lib, p):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    distance = x.dist(lib.tensor([0.5, 0.5], dtype=lib.float64), p)
    loss = distance * 1  # computed before distance changes: its backward reaches DistBackward0
    distance.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_dist_records_dist_backward_and_keeps_its_gradient(torch):
    def gradient(lib):
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        distance = x.dist(lib.tensor([0.5, 0.5], dtype=lib.float64), 3)
        distance.backward()
        return x.grad, type(distance.grad_fn).__name__

    both(torch, gradient)


def test_kthvalue_saves_its_indices_so_changing_them_in_place_is_caught_at_backward(lib):
    x = lib.tensor([[3.0, 1.0, 2.0]], dtype=lib.float64, requires_grad=True)
    values, indices = lib.kthvalue(x, 2, -1)
    indices.floor_()  # an in-place op on the int64 indices: a new version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        values.sum().backward()


def test_kthvalue_records_kthvalue_backward_and_keeps_its_gradient(torch):
    def gradient(lib):
        x = lib.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], dtype=lib.float64, requires_grad=True)
        values = lib.kthvalue(x, 2, -1).values
        (values * lib.tensor([1.0, 2.0], dtype=lib.float64)).sum().backward()
        return x.grad, type(values.grad_fn).__name__, values.stride()

    both(torch, gradient)


def test_an_in_place_change_through_a_view_of_unique_along_a_dim_runs(torch):
    # unique's values are a storage of their own (numpy's view another dtype's buffer), so the
    # view's history can be rebuilt from them
    def changed(lib):
        x = lib.tensor([[0.0], [0.0]], requires_grad=True)
        view = lib.unique(x, dim=1).swapaxes(-2, -1)
        view.clamp_(min=2, max=-1)
        return view, view.stride(), type(view.grad_fn).__name__

    both(torch, changed)


@pytest.mark.parametrize("index", [(slice(None, 2, 3), None), (None, slice(None, 2, 3))])
def test_setitem_sees_the_strides_pytorch_gives_a_slice_of_one_and_a_new_dim(lib, index):
    # x[:2:3] of one row has PyTorch's stride 3 x 2 = 6, not the value's: not the same places,
    # so the value x[0] overlaps the written view in part, and is refused
    x = lib.zeros(1, 2)
    with pytest.raises(RuntimeError, match="single memory location"):
        x[index] = x[0]


@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x, other: lib.addcmul(x, other, x),  # x's gradient needs other: saved
        lambda lib, x, other: lib.addcdiv(x, other, other),  # tensor2 is always saved
    ],
)
def test_an_operand_of_another_dtype_changed_in_place_is_caught_at_backward(lib, op):
    # the node saves the operand converted to the common dtype; PyTorch's saves the operand
    # itself, so changing it in place before backward is refused
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    other = lib.tensor([3.0, 4.0], dtype=lib.float32)
    result = op(lib, x, other)
    other.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        result.sum().backward()
