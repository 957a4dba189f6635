"""Issue 14, in-place refusals: when `x.op_(...)` must raise, and with which class, as in PyTorch
2.13 (what differential fuzzing found: empty views, overlapping memory, the order of the checks)."""

import pytest

import autograd_lab as ag


def raised(make):
    """(class name, message) of the exception `make()` raises, or None."""
    try:
        make()
    except Exception as error:  # noqa: BLE001 - any class: it is what is compared
        return type(error).__name__, str(error)
    return None


def same_refusal(torch, make, words=None):
    """`make(lib)` raises the same class in both libraries (or neither does); `words` in ours."""
    ours, theirs = raised(lambda: make(ag)), raised(lambda: make(torch))
    assert (ours and ours[0]) == (theirs and theirs[0]), (ours, theirs)
    if words is not None:
        assert ours is not None and words in ours[1]


def leaf(lib, *shape):
    return lib.zeros(shape, requires_grad=True)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: leaf(lib, 1)[:-1].atan_(),
        lambda lib: lib.diagonal(leaf(lib, 1, 1), -1, 1, -2).cumsum_(0),
        lambda lib: leaf(lib, 0).unsqueeze(-1).divide_(2.0, rounding_mode="trunc"),
        lambda lib: lib.unflatten(leaf(lib, 0, 1), -2, (-1,)).expm1_(),
        lambda lib: lib.narrow(leaf(lib, 0), 0, 0, 0).random_(0, 5),
        lambda lib: leaf(lib).expand(1, 0).addcdiv_(lib.zeros(()), lib.ones(())),
    ],
)
def test_an_empty_view_of_a_leaf_that_requires_grad_cannot_change_in_place(torch, change):
    # an empty view shares no bytes, but it is still a view of the leaf
    same_refusal(torch, change, "a view of a leaf Variable that requires grad")


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: leaf(lib, 1, 0, 1).chunk(4, 2)[0].__ipow__(-0.5),
        lambda lib: lib.split(leaf(lib, 1, 3), [3, 0], dim=1)[1].__ifloordiv__(1.0),
        lambda lib: leaf(lib, 0).chunk(4)[0].lerp_(leaf(lib), 0.5),
    ],
)
def test_an_empty_piece_of_split_or_chunk_cannot_change_in_place(torch, change):
    same_refusal(torch, change, "is a view and is being modified inplace")


def test_an_empty_reshape_cannot_be_detached_in_place(torch):
    same_refusal(torch, lambda lib: lib.tensor([]).reshape(1, 0).detach_(), "Can't detach views")


def expanded(lib, dtype="float32"):
    """Three elements in one memory place (stride 0)."""
    return lib.zeros(1, dtype=getattr(lib, dtype)).expand(3)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: lib.zeros(1, 1).diagonal().add_(float("nan")),  # np.diagonal is read-only
        lambda lib: lib.zeros(1, 3).diagonal(2).div_(1.0, rounding_mode="trunc"),
        lambda lib: expanded(lib)[0].log10_(),  # one element of an expanded tensor
        lambda lib: expanded(lib)[-1].rsqrt_(),
        lambda lib: expanded(lib, "int64").fill_(0.0),
        lambda lib: expanded(lib).masked_fill_(expanded(lib) == 0, -1.0),
        lambda lib: expanded(lib, "int64").nan_to_num_(posinf=0.0),
        lambda lib: lib.zeros(1, 1, dtype=lib.bool).expand(2, 1).tril_(),
        lambda lib: lib.zeros(1, 1).expand(2, 1).triu_(),
        lambda lib: expanded(lib, "int64").copy_(expanded(lib, "int64")),  # the same places
        lambda lib: expanded(lib).__setitem__(0, 1.0),
    ],
)
def test_a_write_where_no_repeated_place_is_computed_from_others_is_allowed(torch, change):
    same_refusal(torch, change)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: expanded(lib).add_(1.0),
        lambda lib: expanded(lib, "int64").acos_(),  # the overlap is found before the dtype
        lambda lib: expanded(lib, "bool").fmod_(expanded(lib, "bool")),
        lambda lib: expanded(lib).copy_(lib.ones(3)),
        lambda lib: expanded(lib).uniform_(),
        lambda lib: expanded(lib).__setitem__(slice(0, 2), 1.0),
    ],
)
def test_a_write_into_repeated_places_is_refused(torch, change):
    same_refusal(torch, change, "more than one element of the written-to tensor")


def test_a_write_into_repeated_places_writes_what_pytorch_writes(torch):
    def run(lib):
        x = lib.tensor([[1.0], [2.0]]).expand(2, 3)
        x.masked_fill_(lib.tensor([[True, False, False], [False, False, False]]), 5.0)
        y = lib.tensor([[1.0, 2.0]]).expand(3, 2)
        y[[0, 2]] = lib.tensor([[5.0, 6.0], [8.0, 9.0]])
        z = lib.zeros(2, 2)
        z.diagonal().add_(1.0)
        return x.tolist(), y.tolist(), z.tolist()

    assert run(ag) == run(torch)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, a: a[:3].add_(a[1:]),
        lambda lib, a: a[:1].reshape(1, 1)[-2::3, -1:].multiply_(a[:1].reshape(1, 1)),
        lambda lib, a: a[:1][None].copy_(a[0]),  # same places, but other strides
        lambda lib, a: a[:3].lerp_(a[1:], 0.5),
        lambda lib, a: a[:3].index_add_(0, lib.tensor([0, 1, 2]), a[:3]),  # even the same places
    ],
)
def test_an_input_that_shares_memory_with_the_written_tensor_in_part_is_refused(torch, change):
    same_refusal(torch, lambda lib: change(lib, lib.zeros(4)), "some elements of the input tensor")


def test_an_input_that_shares_memory_in_part_is_found_before_the_dtype_error(torch):
    def change(lib):
        flags = lib.tensor([False])
        flags.addcmul_(flags[::2], flags)  # no addcmul for bool, but the overlap comes first

    same_refusal(torch, change, "some elements of the input tensor")


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, a: a[:3].add_(a[:3]),
        lambda lib, a: a.mul_(a),
        lambda lib, a: a[:3].masked_fill_(lib.ones(3, dtype=lib.bool), a[1]),
    ],
)
def test_an_input_in_the_same_places_as_the_written_tensor_is_allowed(torch, change):
    same_refusal(torch, lambda lib: change(lib, lib.zeros(4)))


def test_autograd_refuses_before_the_kernel_checks_shapes_and_dims(torch):
    for make in (
        lambda lib: leaf(lib, 2).add_(lib.zeros(3)),  # would not broadcast
        lambda lib: leaf(lib).cumsum_(3),  # no dim 3
        lambda lib: leaf(lib, 1).expand(3).mul_(2.0),  # repeats elements
    ):
        same_refusal(torch, make, "leaf Variable that requires grad")
    same_refusal(torch, lambda lib: leaf(lib, 2).add_("a"))  # but a wrong type comes first


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("shape", [(), (0,), (2,), (2, 2)])
def test_an_in_place_scan_of_bools_has_no_kernel_unless_there_is_nothing_to_scan(
    torch, name, shape
):
    same_refusal(torch, lambda lib: getattr(lib.ones(shape, dtype=lib.bool), name)(-1))


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32"])
def test_an_in_place_scan_of_integers_is_computed_in_their_own_dtype(torch, name, dtype):
    def run(lib):
        x = lib.tensor([[100, 100, 7], [3, 50, 2]], dtype=getattr(lib, dtype))
        return getattr(x, name)(1).tolist()

    assert run(ag) == run(torch)  # wrapped around as the dtype does, not computed in int64


def test_a_scan_dim_out_of_range_is_found_before_the_dtype(torch):
    same_refusal(torch, lambda lib: lib.tensor(0.0).cumsum_(-2, dtype=lib.float64), "out of range")
    same_refusal(torch, lambda lib: lib.ones(2, dtype=lib.bool).cumprod_(1), "out of range")


@pytest.mark.parametrize(
    "change",
    [
        lambda x: x.unsqueeze_(3),
        lambda x: x.swapaxes_(-1, 1),
        lambda x: x.transpose_(0, 2),
        lambda x: x.squeeze_(4),
        lambda x: x.t_(),  # (3 dims are too many for t_)
    ],
)
@pytest.mark.parametrize("shape", [(), (2, 2, 1)])
def test_an_in_place_shape_op_refuses_a_leaf_before_checking_its_dims(torch, change, shape):
    same_refusal(torch, lambda lib: change(leaf(lib, *shape)))


def test_an_in_place_shape_op_reports_a_wrong_argument_type_before_the_leaf(torch):
    same_refusal(torch, lambda lib: leaf(lib).unsqueeze_(0.5))


@pytest.mark.parametrize("repeats", [1, 2])
def test_repeat_interleave_is_a_copy_that_can_change_in_place(torch, repeats):
    def run(lib):
        x = lib.tensor([2.0], requires_grad=True)
        y = x.repeat_interleave(repeats)  # not a view of x, even when nothing repeats
        y.addcdiv_(x, x + 1, value=0.5).clip_(max=x)
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), y.grad_fn.name()

    assert run(ag) == run(torch)


def test_the_values_kthvalue_returns_are_no_view_and_can_be_detached_in_place(torch):
    def run(lib):
        values, indices = lib.tensor([[3.0, 1.0, 2.0]], requires_grad=True).kthvalue(2, -1)
        values.detach_()
        return values.tolist(), values.requires_grad, indices.detach_().tolist()

    assert run(ag) == run(torch)


def test_scatter_refuses_the_tensor_itself_as_its_source(torch):
    def change(lib):
        x = lib.tensor([0, 0, 0])
        x.scatter_(0, lib.tensor([0, 2, 2]), x)  # even in the same places: refused

    same_refusal(torch, change, "some elements of the input tensor")


def test_a_value_with_extra_leading_size_1_dims_is_written_from_the_same_places(torch):
    def change(lib):
        x = lib.tensor(0.5, dtype=lib.float64).cos()
        x[...] = x.flatten()  # the value's extra dim is dropped first: the same places
        return x.item()

    same_refusal(torch, change)
    assert change(ag) == change(torch)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: lib.zeros(2, dtype=lib.int64).add_(0.5),
        lambda lib: lib.zeros(2, dtype=lib.int64).exp_(),
        lambda lib: lib.zeros(2, dtype=lib.bool).add_(1),
    ],
)
def test_an_in_place_result_that_its_tensor_cannot_hold_is_refused_in_pytorchs_words(torch, change):
    same_refusal(torch, change, "can't be cast to the desired output type")
    assert raised(lambda: change(ag))[1].split(":")[0] == raised(lambda: change(torch))[1]


def test_a_value_that_shares_the_written_places_can_be_assigned_with_an_index(torch):
    def change(lib):
        x = lib.tensor([0.5], dtype=lib.float64).clamp(max=2)
        x[...] = x[0]  # a 0-d value: PyTorch copies it before filling
        return x.tolist()

    same_refusal(torch, change)
    assert change(ag) == change(torch)
