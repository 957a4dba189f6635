"""Indexing, scatter, shape and creation calls where issue 14's fuzzer found autograd_lab raising
where PyTorch does not (or the other way round, or with another exception class): each test
compares with PyTorch 2.13 (values, dtypes, shapes; errors by class and key words)."""

import numpy as np
import pytest
from conftest import both, raises_alike

import autograd_lab as ag


@pytest.mark.parametrize("pieces", ["chunk", "split", "unbind"])
def test_a_piece_of_a_multi_view_op_cannot_be_used_after_its_base_changed_in_place(torch, pieces):
    def use_after_change(lib):
        y = lib.tensor([1.0, 2.0]).requires_grad_() * 1
        piece = {"chunk": y.chunk(2), "split": y.split(1), "unbind": y.unbind()}[pieces][0]
        y.mul_(2)
        assert piece.requires_grad  # asking is allowed
        with lib.no_grad():
            assert piece.item() == 2.0  # and so is using it without recording
        return piece + 1

    raises_alike(torch, use_after_change, RuntimeError, "base or another view of its base")


@pytest.mark.parametrize(
    "index",
    [
        (0, slice(None), [1, 2]),
        (0, slice(None), [1, 2], 1),
        (slice(None), 1, slice(None), [0, 3]),
        ([1, 0], 2, slice(1, 3), [4, 4]),
        (-1, slice(None, -1, 3), Ellipsis, None, [-2]),
    ],
)
def test_an_int_index_is_applied_before_the_index_lists(torch, index):
    """x[0, :, [1, 2]]: PyTorch selects with the 0 first, so the picked dim stays in place
    (numpy would move it to the front); reading, writing and the gradient agree."""
    both(torch, lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5)[index])

    def write(lib):
        x = lib.zeros(2, 3, 4, 5)
        picked = x[index]
        x[index] = lib.arange(float(picked.numel())).reshape(picked.shape)
        return x

    def gradient(lib):
        x = lib.zeros(2, 3, 4, 5).requires_grad_()
        picked = x[index]
        picked.backward(lib.arange(float(picked.numel())).reshape(picked.shape))
        return x.grad

    both(torch, write)
    both(torch, gradient)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("start, end, step", [(0, 3, 1.5), (0.5, 3, 1), (0, 2.5, 1), (-0.5, 2, 1)])
def test_an_integer_arange_cuts_float_arguments_to_whole_numbers(torch, dtype, start, end, step):
    both(torch, lambda lib: lib.arange(start, end, step, dtype=getattr(lib, dtype)))


def test_an_int64_arange_whose_step_cuts_to_zero_is_refused(torch):
    raises_alike(
        torch,
        lambda lib: lib.arange(0, 1, 0.25, dtype=lib.int64),
        ValueError,
        "step must be nonzero",
    )
    both(torch, lambda lib: lib.arange(0, 1, 0.25, dtype=lib.int32))  # counted in float: 4 zeros


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 2.0**70])
def test_full_refuses_a_value_an_integer_dtype_cannot_hold(torch, value):
    raises_alike(torch, lambda lib: lib.full_like(lib.tensor(0), value), RuntimeError, "overflow")
    raises_alike(
        torch, lambda lib: lib.full((2,), value, dtype=lib.int32), RuntimeError, "overflow"
    )


def test_full_cuts_floats_and_wraps_negative_numbers_into_uint8(torch):
    both(torch, lambda lib: lib.full_like(lib.tensor([0, 0]), 2.7))
    both(torch, lambda lib: lib.full((2,), -1, dtype=lib.uint8))
    both(torch, lambda lib: lib.full_like(lib.tensor([0], dtype=lib.uint8), -255))
    raises_alike(torch, lambda lib: lib.full((2,), 256, dtype=lib.uint8), RuntimeError, "overflow")


def test_tensor_of_a_tensor_converts_without_the_overflow_check(torch):
    """torch.tensor(t, dtype=...) converts as t.to(dtype) does; only numbers are checked."""
    both(torch, lambda lib: lib.tensor(lib.tensor([-float("inf"), 2.7, 300.0]), dtype=lib.int64))
    both(torch, lambda lib: lib.tensor(np.array([-np.inf, 2.7]), dtype=lib.int64))
    raises_alike(
        torch, lambda lib: lib.tensor(-float("inf"), dtype=lib.int64), RuntimeError, "overflow"
    )


def test_writing_through_index_tensors_needs_the_same_dtype(torch):
    """x[index_tensor] = value is index_put_, which does not convert: the dtypes must match;
    a mask alone with one value (masked_fill_) and ints/slices alone (copy_) do convert."""

    def put(index, value, dtype="int64"):
        def write(lib):
            x = lib.zeros(2, 3, dtype=getattr(lib, dtype))
            x[index(lib)] = value(lib)
            return x

        return write

    half = lambda lib: lib.tensor(2.5)  # noqa: E731
    for index in (
        lambda lib: [0],
        lambda lib: (slice(-2, 0), lib.tensor([-1, -2])),
        lambda lib: (Ellipsis, [1]),
    ):
        raises_alike(torch, put(index, half), RuntimeError, "Index put requires the source")
    raises_alike(torch, put(lambda lib: [0], half, "float64"), RuntimeError, "dtypes match")
    mask = lambda lib: (0, lib.tensor([True, False, True]))  # noqa: E731
    both(torch, put(mask, half))
    both(torch, put(lambda lib: (0, slice(1, None)), half))
    both(torch, put(lambda lib: [1], lambda lib: 2.5))  # a number is converted


def index(*values):
    return lambda lib: lib.tensor(values, dtype=lib.int64)


def test_cat_checks_the_number_of_dims_and_skips_lone_empty_1d_tensors(torch):
    raises_alike(
        torch, lambda lib: lib.cat([lib.zeros(1, 1), lib.zeros(1)], dim=1), RuntimeError, "same"
    )
    raises_alike(torch, lambda lib: lib.cat([lib.zeros(2, 2), lib.zeros(2)], 3), IndexError, "")
    both(torch, lambda lib: lib.cat([lib.zeros(0)], dim=1))  # only empty 1-d: dim is not read
    both(torch, lambda lib: lib.concat([lib.zeros(0), lib.zeros(0)], dim=-5))


def test_diff_of_order_zero_does_not_read_dim(torch):
    both(torch, lambda lib: lib.tensor([1, 2]).diff(n=0, dim=4))
    raises_alike(torch, lambda lib: lib.tensor([1, 2]).diff(n=1, dim=4), IndexError, "range")


def test_reshape_and_flatten_count_elements_as_pytorch(torch):
    both(torch, lambda lib: lib.zeros(0, 1, 1, dtype=lib.int64).flatten(1))
    for make in (
        lambda lib: lib.tensor([0.0]).expand(3).reshape(27, 2),  # not contiguous: a copy
        lambda lib: lib.zeros(3).view(27, 2),
        lambda lib: lib.zeros(6).reshape(-2, -3),
    ):
        raises_alike(torch, make, RuntimeError, "is invalid for input of size")


def test_index_add_checks_shapes_before_bounds_and_bounds_only_with_elements(torch):
    def index_add(shape, dim, places, source_shape):
        return lambda lib: lib.zeros(*shape).index_add(dim, places(lib), lib.zeros(*source_shape))

    raises_alike(torch, index_add((1, 1, 1, 1), -4, index(1, 1, 1), (3, 1, 2, 2)), RuntimeError, "")
    raises_alike(torch, index_add((2, 2), 0, index(0, 1, 1), (2, 2)), RuntimeError, "Number of")
    raises_alike(torch, index_add((2, 2), 0, index(5), (1, 2)), RuntimeError, "out of bounds")
    raises_alike(torch, index_add((2,), 0, index(5), (1,)), IndexError, "out of range")
    both(torch, index_add((0, 2, 0, 1), 0, index(0, 0, 0), (3, 2, 0, 1)))  # nothing to add


@pytest.mark.parametrize(
    "shape, dim, error",
    [
        ((1, 1, 1), -2, RuntimeError),
        ((2, 2), 1, RuntimeError),
        ((2, 2), 0, IndexError),
        ((2, 2, 2), 2, IndexError),
        ((2,), 0, IndexError),
    ],  # fmt: skip
)
def test_index_select_out_of_range_raises_pytorchs_class(torch, shape, dim, error):
    """PyTorch's CPU kernel for dim 1 raises RuntimeError; its other paths IndexError."""
    select = lambda lib: lib.zeros(*shape).index_select(dim, index(3)(lib))  # noqa: E731
    raises_alike(torch, select, error, "out of range")


@pytest.mark.parametrize("op", ["scatter_", "scatter_add_"])
def test_scatter_in_place_refuses_a_leaf_first_and_a_source_sharing_its_memory(torch, op):
    def on_leaf(lib):
        x = lib.tensor(0.0).requires_grad_()
        return getattr(x, op)(1, index(0, 0)(lib), x * 2)  # dim 1 of a 0-d tensor, too

    def from_itself(lib):
        x = lib.zeros(1, 1)
        return getattr(x, op)(1, lib.zeros(0, 1, dtype=lib.int64), x)  # even writing nothing

    def from_a_view(lib):
        x = lib.zeros(2, 2)
        return getattr(x, op)(0, index(0, 0)(lib).reshape(1, 2), x[1:])

    def dim_out_of_range(lib):  # the op's own checks come before the overlap check
        x = lib.tensor(0)
        return getattr(x, op)(3, lib.zeros(3, 3, 4, dtype=lib.int64), x)

    raises_alike(torch, on_leaf, RuntimeError, "a leaf Variable that requires grad")
    raises_alike(torch, dim_out_of_range, IndexError, "out of range")
    raises_alike(torch, from_itself, RuntimeError, "refer to a single memory location")
    raises_alike(torch, from_a_view, RuntimeError, "refer to a single memory location")
    both(torch, lambda lib: getattr(lib.zeros(2), op[:-1])(0, index(0)(lib), lib.ones(2)))


def test_setitem_with_index_tensors_checks_them_after_refusing_a_leaf(torch):
    def put(index_of, value_of=lambda lib, x: 0.25):
        def write(lib):
            x = lib.zeros(3).requires_grad_()
            x[index_of(lib)] = value_of(lib, x)

        return write

    mask = lambda lib: (Ellipsis, lib.tensor([True]))  # noqa: E731  (the wrong length)
    raises_alike(torch, put(mask), RuntimeError, "a leaf Variable that requires grad")
    raises_alike(torch, put(lambda lib: 5), IndexError, "out of")  # an int is checked first

    def through_a_view_of_a_leaf(lib):
        view = lib.zeros(3).requires_grad_()[None]
        view[..., lib.tensor([True])] = 0.25

    raises_alike(torch, through_a_view_of_a_leaf, RuntimeError, "a view of a leaf Variable")

    def overlapping(lib):
        x = lib.zeros(2, 2)
        x[[0]] = x[:1]

    raises_alike(torch, overlapping, RuntimeError, "refer to a single memory location")


def test_an_empty_bmm_skips_the_dtype_check_and_a_bool_matmul_checks_sizes_first(torch):
    both(torch, lambda lib: lib.bmm(lib.zeros(2, 1, 0), lib.zeros(2, 0, 1, dtype=lib.float64)))
    both(torch, lambda lib: lib.bmm(lib.zeros(2, 3, 4, dtype=lib.float64), lib.zeros(2, 4, 0)))
    raises_alike(
        torch,
        lambda lib: lib.bmm(lib.zeros(2, 3, 1, dtype=lib.float64), lib.zeros(2, 1, 5)),
        RuntimeError,
        "same dtype",
    )
    bools = lambda lib: lib.zeros(2, 1, dtype=lib.bool)  # noqa: E731
    raises_alike(torch, lambda lib: bools(lib) @ lib.zeros(1, 2, 1), RuntimeError, "size")
    raises_alike(
        torch, lambda lib: bools(lib) @ lib.zeros(1, 1, 2, dtype=lib.bool), NotImplementedError, ""
    )


def test_a_one_element_integer_tensor_of_any_shape_is_an_index(torch):
    assert [0, 1, 2][ag.tensor([True])] == [0, 1, 2][torch.tensor([True])] == 1
    assert [0, 1, 2][ag.tensor([[2]])] == [0, 1, 2][torch.tensor([[2]])] == 2
    raises_alike(torch, lambda lib: [0, 1][lib.tensor([1.0])], TypeError, "single element")


@pytest.mark.parametrize("name", ["minimum", "maximum"])
def test_minimum_and_maximum_take_tensors_only(torch, name):
    x = lambda lib: lib.tensor(0.0)  # noqa: E731
    raises_alike(torch, lambda lib: getattr(lib, name)(x(lib), 2.0), TypeError, "must be Tensor")
    raises_alike(torch, lambda lib: getattr(lib, name)(2, x(lib)), TypeError, "'input'")
    raises_alike(torch, lambda lib: getattr(x(lib), name)(2.0), TypeError, "must be Tensor")


def test_meshgrid_needs_one_dtype(torch):
    raises_alike(
        torch,
        lambda lib: lib.meshgrid(lib.tensor(0.0), lib.tensor(0), indexing="xy"),
        RuntimeError,
        "same dtype",
    )


def test_bincount_of_nothing_is_int64_zeros_whatever_the_weights(torch):
    empty = lambda lib: lib.tensor([], dtype=lib.int64)  # noqa: E731
    both(torch, lambda lib: lib.bincount(empty(lib), weights=lib.tensor(0), minlength=0))
    both(torch, lambda lib: lib.bincount(empty(lib), weights=lib.tensor([1.0, 2.0]), minlength=2))
    raises_alike(
        torch, lambda lib: lib.bincount(lib.tensor([1]), weights=lib.tensor(2.0)), RuntimeError, ""
    )


@pytest.mark.parametrize(
    "shape, make_index",
    [
        ((2, 0), lambda lib: (None, lib.tensor([], dtype=lib.bool))),
        ((3,), lambda lib: lib.tensor([True])),
        ((2, 3), lambda lib: (slice(None), lib.tensor([True, False]))),
        ((2, 3), lambda lib: (slice(1, None), lib.tensor([True, False]))),
        (
            (1, 0, 1),
            lambda lib: (lib.tensor([True]), Ellipsis, [0], lib.tensor([], dtype=lib.bool)),
        ),
    ],
)
def test_a_mask_must_have_the_shape_of_the_dims_it_indexes(torch, shape, make_index):
    def read(lib):
        return lib.zeros(*shape)[make_index(lib)]

    def write(lib):
        x = lib.zeros(*shape)
        x[make_index(lib)] = 1.0

    def write_itself(lib):  # the mask is checked before the memory the value shares
        x = lib.zeros(2, 0)
        x[None, lib.tensor([], dtype=lib.bool)] = x

    raises_alike(torch, read, IndexError, "The shape of the mask")
    raises_alike(torch, write, IndexError, "The shape of the mask")
    raises_alike(torch, write_itself, IndexError, "The shape of the mask")
    both(torch, lambda lib: lib.zeros(2, 3)[:1, lib.tensor([True, False, True])])


def test_an_index_out_of_range_is_not_checked_when_nothing_is_picked(torch):
    both(torch, lambda lib: lib.zeros(1, 1)[None, lib.tensor([-1, -3, -1]), :-3:2])
    both(torch, lambda lib: lib.zeros(2, 3)[[5], 1:1])

    def gradient(lib):
        x = lib.zeros(2, 3).requires_grad_()
        x[[5], :0].sum().backward()
        return x.grad

    both(torch, gradient)
    raises_alike(torch, lambda lib: lib.zeros(2, 3)[[5], [0]], IndexError, "out of bounds")
    raises_alike(torch, lambda lib: lib.zeros(0)[[0]], IndexError, "out of bounds")


def test_scans_and_sorts_lay_out_their_results_as_pytorch_so_view_agrees(torch):
    """cumsum writes a row-major result; sort keeps its input's layout: view() can (not) follow."""
    transposed = lambda lib: lib.zeros(2, 2).transpose(0, 1)  # noqa: E731
    both(torch, lambda lib: lib.cumsum(transposed(lib), 1).view(4))
    cube = lambda lib: lib.zeros(3, 3, 3, dtype=lib.bool).transpose(0, -1)  # noqa: E731
    for lib in (ag, torch):
        assert cube(lib).argsort(dim=-1).reciprocal().stride() == (1, 3, 9)
    raises_alike(
        torch,
        lambda lib: cube(lib).argsort(dim=-1).reciprocal().view(9, 3, 1),
        RuntimeError,
        "view size is not compatible",
    )
