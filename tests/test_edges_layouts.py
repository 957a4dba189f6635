"""Strides, memory layouts and the node names of reshapes and matrix products, as the
differential fuzzer found them differing from PyTorch (issue 14): each compares with PyTorch."""

import numpy as np
import pytest
from conftest import both, raises_alike, values
from fuzzing.generator import _shares_places

import autograd_lab as ag


def node_name(tensor):
    return type(tensor.grad_fn).__name__


@pytest.mark.parametrize(
    "left, right, left_requires_grad",
    [
        ((1, 1, 1), (2, 1, 1), True),  # the fuzzer's: the batch of one is dropped, then transposed
        ((1, 2, 3), (2, 3, 2), True),
        ((1, 2, 3), (2, 3, 2), False),  # only a batch of one that requires grad is dropped
        ((2, 2, 3), (1, 3, 2), False),
        ((1, 2, 3), (1, 3, 2), True),  # both batches of one: a batched product
        ((1, 2, 3), (2, 1, 3, 2), True),  # a 4-D partner: a batched product
    ],
)
def test_matmul_of_a_batch_of_one_records_pytorchs_last_node(
    torch, left, right, left_requires_grad
):
    def product(lib):
        a = lib.ones(left, dtype=lib.float64).requires_grad_(left_requires_grad)
        b = lib.ones(right, dtype=lib.float64).requires_grad_(not left_requires_grad)
        return a @ b

    ours, theirs = product(ag), product(torch)
    assert node_name(ours) == node_name(theirs)
    assert ours.stride() == theirs.stride()
    both(torch, product)


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "std", "var", "amax", "logsumexp"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_a_reduction_of_a_permuted_input_is_row_major(torch, reduce, dim):
    def reduced(lib):
        x = lib.arange(24.0, dtype=lib.float64).reshape(4, 2, 3).permute(2, 0, 1)
        return getattr(x, reduce)(dim, keepdim=True)

    ours, theirs = reduced(ag), reduced(torch)
    assert ours.stride() == theirs.stride()  # size-1 dims too: (8, 2, 1), not (1, 2, 1)
    assert ours.is_contiguous() and theirs.is_contiguous()
    np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-12)


@pytest.mark.parametrize("reduce", ["max", "median", "softmax", "log_softmax"])
def test_max_median_and_softmax_of_a_permuted_input_are_row_major(torch, reduce):
    def reduced(lib):
        x = lib.arange(24.0, dtype=lib.float64).reshape(4, 2, 3).permute(2, 0, 1)
        result = getattr(x, reduce)(1)
        return result if isinstance(result, tuple) else (result,)

    for ours, theirs in zip(reduced(ag), reduced(torch)):
        assert ours.stride() == theirs.stride()


def test_reshape_of_a_reduction_of_a_transposed_input_is_a_view(torch):
    def reshaped(lib):
        x = lib.zeros(4, 2, 1, dtype=lib.float64).transpose(0, -1).requires_grad_()
        return x.mean(dim=-3, keepdim=True).reshape(4, 2, 1)

    assert node_name(reshaped(ag)) == node_name(reshaped(torch)) == "ViewBackward0"


def test_sort_keeps_the_strides_of_a_gap_free_input_exactly(torch):
    def sorted_(lib):
        x = lib.tensor([-1.44, 1.0, -1.44, 1.0]).reshape(2, 2, 1)[::2]  # stride (4, 1, 1)
        return x.sort(dim=2, stable=True)

    for ours, theirs in zip(sorted_(ag), sorted_(torch)):
        assert ours.stride() == theirs.stride() == (4, 1, 1)  # the size-1 dim's 4 too
    assert ag.ones(2, 3).t().sort(0).indices.stride() == (1, 3)


@pytest.mark.parametrize("shape", [(3, 3), (4,), (2, 0), (), (0,)])
def test_nonzero_is_column_major_and_its_clone_too(torch, shape):
    def indices(lib):
        return lib.ones(shape).nonzero()

    ours, theirs = indices(ag), indices(torch)
    assert ours.stride() == theirs.stride()
    assert ours.clone().stride() == theirs.clone().stride()
    # the fuzzer's: as_strided reads the clone's storage, in PyTorch's memory order
    both(torch, lambda lib: lib.ones(3, 3).nonzero().clone().as_strided((3,), (2,), 1))


def test_a_new_empty_tensor_has_row_major_strides(torch):
    for make in (lambda lib: lib.tensor([]), lambda lib: lib.zeros(2, 0, 3)):
        assert make(ag).stride() == make(torch).stride()


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.tensor(0.0)[None],  # the fuzzer's
        lambda lib: lib.ones(3, 4)[None],
        lambda lib: lib.ones(3, 4)[:, None],
        lambda lib: lib.ones(3, 4)[..., None],
        lambda lib: lib.ones(3, 4)[None, ::2, None, 1],
        lambda lib: lib.ones(3, 4).t()[None],
        lambda lib: lib.ones(3).unsqueeze(0),
        lambda lib: lib.ones(3).unsqueeze(1),
        lambda lib: lib.ones(2, 1, 3).expand(1, 2, 1, 3),
        lambda lib: lib.ones(2, 1, 3).expand(4, 2, 1, 3),
        lambda lib: lib.ones(3).expand(1, 3),
        lambda lib: lib.tensor(1.0).expand(1, 1),
        lambda lib: lib.ones(2, 1, 3).broadcast_to((1, 1, 2, 1, 3)),
    ],
)
def test_a_new_dim_of_size_one_gets_pytorchs_stride(torch, make):
    assert make(ag).stride() == make(torch).stride()


def test_a_number_to_the_power_of_a_transposed_tensor_is_row_major(torch):
    def power(lib):
        x = lib.tensor([0.0, 3.0, 0.0, 0.0]).reshape(2, 2).t()
        return 1.0**x + x

    assert power(ag).stride() == power(torch).stride() == (2, 1)
    # the fuzzer's: as_strided reads the clone's storage, so the layout shows in its values
    both(torch, lambda lib: lib.as_strided(power(lib).clone(), (3,), (1,), 1))


@pytest.mark.parametrize("pad", [(0, 0, -1, 0), (1, 0, 1, 0), (-1, 2)])
def test_pad_of_a_transposed_input_is_laid_out_as_pytorchs(torch, pad):
    def padded(lib):
        x = lib.arange(9.0, dtype=lib.float64).reshape(3, 3).t()
        return lib.nn.functional.pad(x, pad, value=-1.0)

    assert padded(ag).stride() == padded(torch).stride()
    # the fuzzer's: only cuts, then a clone's as_strided reads PyTorch's element
    both(torch, lambda lib: padded(lib).clone().as_strided((), (), 2))


def test_median_of_an_expanded_tensor_is_the_true_median_and_the_fuzzer_does_not_draw_it(torch):
    # PyTorch 2.13 reads unwritten memory here (values, and indices that change from run to run):
    # README's Simplifications; ours is the median of the same values, stored once each
    ours = ag.tensor([-1.0]).expand(3).median(0)
    theirs = torch.tensor([-1.0]).expand(3).contiguous().median(0)
    assert (ours.values.item(), ours.indices.item()) == (
        theirs.values.item(),
        theirs.indices.item(),
    )
    for make in (
        lambda: torch.tensor([3.0]).expand(2),
        lambda: torch.zeros(1).as_strided((2,), (0,)),
    ):
        assert _shares_places(make().shape, make().stride())
    assert not _shares_places(torch.ones(2, 3).t().shape, torch.ones(2, 3).t().stride())


def test_an_in_place_op_on_an_overlapping_as_strided_view_is_refused(torch):
    def sinh_in_place(lib):
        x = lib.tensor([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], dtype=lib.float64)
        return lib.as_strided(x, (3, 2), (1, 2)).sinh_()  # storage place 2 is read twice

    # PyTorch computes sinh twice at the shared place (sinh(sinh(1)) = 1.465...): its order shows
    assert sinh_in_place(torch)[2, 0].item() == pytest.approx(np.sinh(np.sinh(1.0)))
    with pytest.raises(RuntimeError, match="as_strided view whose elements overlap.*clone"):
        sinh_in_place(ag)
    # a view whose elements do not overlap is written as PyTorch writes it
    both(torch, lambda lib: lib.as_strided(lib.ones(8, dtype=lib.float64), (3, 2), (2, 1)).sinh_())


@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_masked_fill_of_an_integer_tensor_with_a_value_that_requires_grad_records_no_history(
    torch, dtype
):
    def filled(lib):
        value = lib.tensor(1.5, requires_grad=True)
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        return x.masked_fill_(lib.tensor([True, False, True]), value)

    both(torch, filled)  # the same values
    theirs = filled(torch)  # PyTorch records a node on an integer tensor, and its backward fails
    assert type(theirs.grad_fn).__name__ == "MaskedFillBackward1"
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        theirs.float().sum().backward()
    ours = filled(ag)
    assert ours.grad_fn is None and not ours.requires_grad


@pytest.mark.parametrize(
    "convert",
    [
        lambda x: x.float(),
        lambda x: x / x,
        lambda x: x / 2,
        lambda x: x * 1.5,
        lambda x: x + x.double(),
        lambda x: x.exp(),
    ],
)
def test_converting_an_expanded_or_transposed_integer_tensor_lays_it_out_as_pytorch(torch, convert):
    # PyTorch's conversions keep the input's memory order, and a broadcast dim (stride 0) does
    # not count: the result is row-major, so view(-1) works on it
    for make in (
        lambda lib: lib.tensor([1, 2]).reshape(1, 2).expand(3, 2),
        lambda lib: lib.arange(6).reshape(2, 3).t(),
    ):
        ours, theirs = convert(make(ag)), convert(make(torch))
        assert ours.stride() == theirs.stride()
        np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6)  # (exp: last bits)
    both(torch, lambda lib: (lib.tensor([1, 2]).reshape(1, 2).expand(3, 2) / 2).view(-1))


def test_linear_of_a_bool_batch_raises_bmms_not_implemented_before_comparing_dtypes(torch):
    # the fuzzer's: a 3-D bool input whose batch cannot be folded (sliced with [::2]) goes to
    # bmm, which has no bool kernel; PyTorch says so before comparing the dtypes
    def linear(lib):
        x = lib.zeros(2, 1, 3, dtype=lib.bool)[::2]
        weight = lib.ones(1, 3, dtype=lib.float64)
        return lib.nn.functional.linear(x, weight)

    raises_alike(torch, linear, NotImplementedError, "bmm.*Bool")


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.zeros(3, 3, dtype=lib.float64).t(),  # the fuzzer's
        lambda lib: lib.zeros(3, 1).expand(3, 4),
        lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1),
        lambda lib: lib.zeros(3, 1, 2).transpose(0, 2),
    ],
)
def test_flip_lays_its_result_out_as_its_input(torch, make):
    # PyTorch's flip writes into empty_like(input): a flipped transposed matrix stays transposed
    # in memory, so .contiguous() of it copies (CloneBackward0)
    def flipped(lib):
        return lib.flip(make(lib).requires_grad_(), (0, -1))

    ours, theirs = flipped(ag), flipped(torch)
    assert ours.stride() == theirs.stride()
    assert node_name(ours.contiguous()) == node_name(theirs.contiguous())


@pytest.mark.parametrize(
    "index",
    [
        lambda lib: ([-2, -1], None),  # the fuzzer's: the new dim's stride
        lambda lib: (slice(None), [0, 1], None),  # numpy lays these out transposed
        lambda lib: ([0, 1], slice(None), [0, 1]),
        lambda lib: (slice(None), lib.tensor([[0, 1], [1, 0], [0, 0]])),
        lambda lib: (slice(None), lib.tensor([True, False])),
        lambda lib: (0, [0, 1], None),
    ],
)
def test_indexing_a_row_major_tensor_with_index_tensors_gives_a_row_major_result(torch, index):
    def picked(lib):
        return lib.zeros(2, 2, 3)[index(lib)]

    ours, theirs = picked(ag), picked(torch)
    assert ours.shape == theirs.shape
    assert ours.stride() == theirs.stride()


@pytest.mark.parametrize(
    "change",
    [
        # the fuzzer's: `...` stands for no dims, so the two masks sit side by side
        lambda lib: lib.zeros(1, 0, 1)[
            -1:2, lib.tensor([], dtype=lib.bool), ..., lib.tensor([True])
        ],
        lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, [0, 1], ..., [1, 2]],
        lambda lib: (lambda z: z.__setitem__((slice(None), [0, 1], ..., [1, 2]), 1.0) or z)(
            lib.zeros(2, 3, 4)
        ),
    ],
)
def test_an_ellipsis_standing_for_no_dims_keeps_index_tensors_side_by_side(torch, change):
    ours, theirs = change(ag), change(torch)
    assert ours.shape == theirs.shape
    assert values(ours).tolist() == values(theirs).tolist()


def test_tanh_of_an_expanded_tensor_is_row_major_as_pytorch(torch):
    # tanh is computed in float64 and rounded once; the conversion keeps PyTorch's layout
    for dtype in ("float32", "float64"):
        make = lambda lib: lib.tensor([0.0, 0.5, 1.0], dtype=getattr(lib, dtype)).expand(2, 3)  # noqa: E731
        assert make(ag).tanh().stride() == make(torch).tanh().stride()
        both(torch, lambda lib: make(lib).tanh().clone().as_strided((), (), 4))


@pytest.mark.parametrize("data", [[[True], [False], [True], [True]], [[1, 0], [2, 3]], 5, [0, 1]])
def test_nonzero_as_tuple_gives_the_columns_of_one_storage(torch, data):
    ours, theirs = ag.tensor(data).nonzero(as_tuple=True), torch.tensor(data).nonzero(as_tuple=True)
    assert [t.storage_offset() for t in ours] == [t.storage_offset() for t in theirs]
    assert [t.stride() for t in ours] == [t.stride() for t in theirs]
    both(torch, lambda lib: lib.tensor(data).nonzero(as_tuple=True))
