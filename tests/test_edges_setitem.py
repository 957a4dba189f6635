"""Issue 14, `x[index] = value`, index_add, the scatters and in-place refusals: where differential
fuzzing found autograd_lab differing from PyTorch 2.13, each compared with PyTorch."""

import pytest
from conftest import raises_alike, values
from fuzzing import check
from fuzzing.program import Leaf, Program, Step

import autograd_lab as ag


def outcome(lib, change):
    """What `change(lib)` does: the class of the error it raises, or the values it returns."""
    try:
        result = change(lib)
    except Exception as error:  # noqa: BLE001 - any class: it is what is compared
        return type(error).__name__
    return values(result).tolist(), str(result.dtype).removeprefix("torch.")


def same_outcome(torch, change):
    assert outcome(ag, change) == outcome(torch, change)


def assigned(x, index, value):
    """x after `x[index] = value(x)` (the value is made from x, so it may share x's memory)."""
    x[index] = value(x)
    return x


@pytest.mark.parametrize(
    "change",
    [
        # index_put_ cannot tell for an expanded x or a value that is not dense: it lets them pass
        lambda lib: assigned(
            lib.tensor([0]).expand(2), (lib.tensor([-1, -1]), ...), lambda x: x[:1]
        ),
        lambda lib: assigned(lib.zeros(2, 2), ([-1],), lambda x: x[:, 1]),
        lambda lib: assigned(lib.zeros(4)[::2], (lib.tensor([-1]), ...), lambda x: x[0]),
        # the ints and slices come first: an empty view has no memory to share
        lambda lib: assigned(lib.zeros(1, 1), (slice(None, -2, 2), [-2, 1]), lambda x: x[0]),
        # one mask and a value of one element: PyTorch runs masked_fill_, which does not check
        lambda lib: assigned(lib.zeros(1), lib.tensor([True]), lambda x: x),
        lambda lib: assigned(lib.ones(3), lib.tensor([False, True, True]), lambda x: x[0]),
        # otherwise a value in x's own memory is refused, even one in the same places
        lambda lib: assigned(lib.arange(8.0), lib.tensor([2, 3]), lambda x: x[4:6]),
        lambda lib: assigned(lib.ones(3, 2), lib.tensor([True, False, True]), lambda x: x[0]),
        lambda lib: assigned(lib.arange(3.0), lib.tensor([2, 1, 0]), lambda x: x),
    ],
)
def test_setitem_through_index_tensors_refuses_the_overlaps_pytorch_sees(torch, change):
    same_outcome(torch, change)


@pytest.mark.parametrize(
    "change",
    [
        # copy_ of the value onto itself has nothing to do, even into an expanded tensor
        lambda lib: assigned(lib.zeros(1).expand(2), ..., lambda x: x),
        lambda lib: assigned(lib.zeros(1, 3).expand(2, 3), slice(None), lambda x: x[0]),
        # None is an unsqueeze and the value is expanded with PyTorch's strides: the same view
        lambda lib: assigned(lib.zeros(3, 1), None, lambda x: x),
        lambda lib: assigned(lib.zeros(1, 2), ..., lambda x: x[0]),
        lambda lib: assigned(lib.zeros(1, 2, 1), (None, None, 0), lambda x: x[0]),
        # the value, broadcast to the view, covers the view's memory with other strides
        lambda lib: assigned(lib.zeros(1, 1), None, lambda x: x[0]),
        lambda lib: assigned(lib.arange(4.0), slice(1, None), lambda x: x[:3]),
        # a number (or a 0-d value) is a fill: refused only where the view repeats elements
        lambda lib: assigned(lib.zeros(1, 3).expand(2, 3), 0, lambda x: 1.0),
        lambda lib: assigned(lib.arange(3.0), slice(None), lambda x: x[1]),
    ],
)
def test_setitem_with_ints_and_slices_checks_as_copy_does(torch, change):
    same_outcome(torch, change)


def test_setitem_applies_ints_and_slices_before_looking_at_memory(torch):
    # too many indices for a 1-d tensor is an IndexError, before any overlap is looked at
    change = lambda lib: assigned(  # noqa: E731
        lib.tensor([0]), ([-1, -1], slice(1, None), None, []), lambda x: x[0]
    )
    assert outcome(ag, change) == outcome(torch, change) == "IndexError"


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: assigned(lib.zeros(0, 1), (slice(None), [5]), lambda x: 1.0),
        lambda lib: assigned(lib.zeros(2, 0), [5], lambda x: 1.0),
        lambda lib: assigned(lib.zeros(2, 1), ([5], slice(None, 0)), lambda x: 1.0),
        lambda lib: assigned(lib.zeros(0, 1), (slice(None), [5]), lambda x: lib.ones(3)),
    ],
)
def test_setitem_that_writes_nothing_checks_no_index(torch, change):
    # PyTorch looks at an index value only to write there; a value must still fit the shape
    same_outcome(torch, change)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: lib.zeros(1).expand(3).fill_(lib.tensor(2.0)),
        lambda lib: lib.zeros(1).expand(3).fill_(2.0),
        lambda lib: (lambda x: x.fill_(x[1]))(lib.arange(3.0)),
        lambda lib: (lambda x: x.fill_(x[0]))(lib.zeros(1).expand(3)),
    ],
)
def test_fill_with_a_tensor_refuses_an_expanded_tensor_as_copy_does(torch, change):
    # fill_(number) writes one number however often; fill_(tensor) copies the value in (copy_)
    same_outcome(torch, change)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, x: x.index_add_(0, lib.tensor([], dtype=lib.int64), x),
        lambda lib, x: x.scatter_(-1, lib.zeros(0, 3, dtype=lib.int64), x),
        lambda lib, x: x.scatter_add_(-1, lib.zeros(0, 3, dtype=lib.int64), x),
    ],
)
def test_scatter_ops_refuse_their_own_tensor_as_source_even_when_empty(torch, change):
    # PyTorch sees the very same tensor as the written one before it counts elements
    refusals = [outcome(lib, lambda lib: change(lib, lib.zeros(0, 3))) for lib in (ag, torch)]
    assert refusals == ["RuntimeError", "RuntimeError"]


def test_an_integer_tensor_written_with_a_value_that_requires_grad_records_nothing(torch):
    # README's Simplifications: PyTorch marks the integer tensor as requiring grad, with a node,
    # and then refuses most ops on it; ours stays an ordinary integer tensor
    def written(lib):
        x = lib.tensor([0, 0, 0])
        x[lib.tensor([False, True, True])] = lib.tensor(0.5, requires_grad=True)
        return x

    ours, theirs = written(ag), written(torch)
    assert values(ours).tolist() == values(theirs).tolist() == [0, 0, 0]
    assert not ours.requires_grad and ours.grad_fn is None and ours.sum().item() == 0
    assert theirs.requires_grad and type(theirs.grad_fn).__name__ == "IndexPutBackward0"
    with pytest.raises(RuntimeError, match="Autograd not support dtype"):
        theirs.sum()


@pytest.mark.parametrize("dtype, accepted", [("int64", True), ("float32", False)])
def test_the_fuzzer_accepts_a_written_integer_tensors_history_only(torch, dtype, accepted):
    program = Program(
        (Leaf("x0", (3,), dtype, (0, 0, 0)), Leaf("x1", (), "float32", (0.5,), True)),
        (Step("v0", "setitem", "{0}[{0} == 0] = {1}", ("x0", "x1"), statement=True),),
    )
    result = check(program, ag, torch)
    assert not result.divergences
    if accepted:  # requires_grad differs, as README's Simplifications say
        readme = {d.what: s.readme for d, s in result.accepted}["requires_grad"]
        assert "into an integer or bool tensor in place records nothing" in readme
    else:  # a float tensor records the write in both
        assert not result.accepted


@pytest.mark.parametrize(
    "change",
    [
        # a 2-d+ tensor with no elements: PyTorch adds nothing, so it looks at no index value
        lambda lib: lib.zeros(0, 1).index_add(0, lib.tensor([0, 0, 0]), lib.ones(3, 1)),
        lambda lib: lib.zeros(0, 3).index_add_(-2, lib.tensor([0, 0]), lib.ones(2, 3)),
        lambda lib: lib.zeros(2, 0).index_add(0, lib.tensor([5]), lib.ones(1, 0)),
        # a vector has nothing to add to either, but PyTorch checks its indices
        lambda lib: lib.zeros(0).index_add(0, lib.tensor([0]), lib.ones(1)),
        # out of range along the first or last dim (int64, alpha 1): scatter_add's RuntimeError;
        # along a middle dim, with alpha or with int32 indices: PyTorch's own IndexError
        lambda lib: lib.zeros(3, 4).index_add(0, lib.tensor([5]), lib.ones(1, 4)),
        lambda lib: lib.zeros(2, 3, 4).index_add(2, lib.tensor([5]), lib.ones(2, 3, 1)),
        lambda lib: lib.zeros(2, 3, 4).index_add(1, lib.tensor([5]), lib.ones(2, 1, 4)),
        lambda lib: lib.zeros(3, 4).index_add(0, lib.tensor([5]), lib.ones(1, 4), alpha=2),
        lambda lib: lib.zeros(3, 4).index_add(0, lib.tensor([5], dtype=lib.int32), lib.ones(1, 4)),
    ],
)
def test_index_add_checks_an_index_only_where_it_adds(torch, change):
    same_outcome(torch, change)


def test_index_add_into_an_empty_tensor_gives_its_source_a_zero_gradient(torch):
    # README's Simplifications: PyTorch's backward raises there (its index_select finds no rows)
    def backward(lib):
        source = lib.ones(3, 1, requires_grad=True)
        lib.zeros(0, 1).index_add(0, lib.tensor([0, 0, 0]), source).sum().backward()
        return source.grad

    assert values(backward(ag)).tolist() == [[0.0], [0.0], [0.0]]
    with pytest.raises(RuntimeError, match="self indexing axis dim should be positive"):
        backward(torch)


def test_the_fuzzer_accepts_only_that_backward_difference_of_index_add(torch):
    program = Program(
        (Leaf("x0", (0, 1), "float32", ()), Leaf("x1", (3, 1), "float32", (1, 2, 3), True)),
        (
            Step(
                "v0",
                "index_add",
                "torch.index_add({0}, 0, torch.tensor([0, 0, 0]), {1})",
                ("x0", "x1"),
            ),
        ),
        backward="backward",
        loss_of="v0",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert [d.what for d, s in result.accepted if "index_add` into" in s.readme] == ["raises"]


def filled(dtype, index, value):
    def change(lib):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        x[index] = value
        return x

    return change


@pytest.mark.parametrize(
    "change",
    [
        # the number is made a tensor of x's dtype before the index is looked at
        filled("int64", (0, 0), -float("inf")),
        filled("int64", 5, float("nan")),
        filled("int8", 5, 300),
        filled("float32", 5, 1e300),
        filled("int64", 5, "a"),
        filled("float32", slice(0, 2), [1, 2]),
        # a whole number wraps into an unsigned dtype, a float does not
        filled("uint8", 0, -1),
        filled("uint8", 0, -255),
        filled("uint8", 0, -256),
        filled("uint8", 0, -1.0),
        filled("int8", 0, 127.5),
        # float16 rounds a number beyond its range to inf, float64 holds it, bool takes any
        filled("float16", 0, 1e5),
        filled("float64", 0, 1e300),
        filled("bool", 0, float("nan")),
        filled("float32", 0, -float("inf")),
    ],
)
def test_setitem_converts_a_number_to_the_tensors_dtype_first(torch, change):
    same_outcome(torch, change)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: lib.zeros(2).fill_(1e300),
        lambda lib: lib.zeros(2, dtype=lib.uint8).fill_(-1.0),
        lambda lib: lib.zeros(2, dtype=lib.int64).fill_(float("inf")),
        lambda lib: lib.zeros(2).masked_fill(lib.tensor([True, False]), 1e300),
    ],
)
def test_fill_and_masked_fill_refuse_a_number_their_dtype_cannot_hold(torch, change):
    same_outcome(torch, change)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.zeros(2).expand(3, 4, 2).roll(-2, 0),
        lambda lib: lib.zeros(3, 1).expand(3, 2).roll(1, 1),
        lambda lib: lib.arange(12.0).reshape(4, 3).t().roll(1, 0),
    ],
)
def test_roll_gives_a_row_major_tensor_that_view_can_reshape(torch, make):
    ours, theirs = make(ag), make(torch)
    assert ours.stride() == theirs.stride()
    assert values(ours.view(-1)).tolist() == values(theirs.view(-1)).tolist()


def test_unary_plus_refuses_a_bool_tensor_and_hands_back_any_other(torch):
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor"):
            +lib.tensor(False)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert +x is x


def test_the_fuzzer_counts_what_follows_an_accepted_tie_as_its_consequence(torch):
    # kthvalue among three zeros picks another index than PyTorch (accepted); masked_select of
    # that index then has another length: a consequence, not a finding of its own
    program = Program(
        (Leaf("x0", (3,), "float32", (0.0, 0.0, 0.0)),),
        (
            Step("v0", "kthvalue", "torch.kthvalue({0}, 1, -1, keepdim=True)", ("x0",)),
            Step("v1", "masked_select", "{0}[1].masked_select({0}[1] > 0)", ("v0",)),
        ),
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert [d.what for d in result.consequences] == ["shape"]


@pytest.mark.parametrize(
    "change",
    [
        # beside a number bound, a 0-d bound that needs no grad is read as a number: no memory
        lambda lib: (lambda x: x[None].clip_(min=1.0, max=x))(lib.tensor(0.5)),
        lambda lib: (lambda x: x[None].clamp_(x, 2.0))(lib.tensor(0.5)),
        # two tensor bounds are tensors, and one in the written memory is refused
        lambda lib: (lambda x: x[None].clip_(min=x))(lib.tensor(0.5)),
        lambda lib: (lambda x: x[None].clamp_(x, x))(lib.tensor(0.5)),
    ],
)
def test_clamp_in_place_reads_a_0d_bound_beside_a_number_as_a_number(torch, change):
    same_outcome(torch, change)


def test_nonzero_lays_its_rows_out_column_by_column(torch):
    # so a row of it is not dense, and x[mask] = x[0] on it passes PyTorch's overlap check
    for make in (lambda lib: lib.ones(2, 4).nonzero(), lambda lib: lib.ones(3).argwhere()):
        assert make(ag).stride() == make(torch).stride()
    mask = [False, False, True, True, True, False, True, True]
    same_outcome(
        torch, lambda lib: assigned(lib.ones(2, 4).argwhere(), lib.tensor(mask), lambda x: x[0])
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: lib.zeros(2, dtype=lib.float16).fill_(1e5),
        lambda lib: lib.zeros(2, dtype=lib.float16).masked_fill(lib.tensor([True, False]), 1e5),
        lambda lib: lib.full((2,), 1e5, dtype=lib.float16),
        lambda lib: lib.full((2,), 1e300),
        lambda lib: lib.full((2,), -1.0, dtype=lib.uint8),
    ],
)
def test_fill_masked_fill_and_full_refuse_a_float_beyond_float16_or_float32(torch, change):
    # (x[index] = 1e5 into float16 rounds to inf instead: the setitem test above)
    same_outcome(torch, change)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: (lambda b: b.clip_(min=b, max=b))(lib.tensor(False)),  # the fuzzer's
        lambda lib: (lambda b: b.clamp(b, b))(lib.tensor([False, True])),
        lambda lib: (lambda b: b.clamp(b, b))(lib.zeros(0, dtype=lib.bool)),
    ],
)
def test_clamp_of_bools_between_two_bool_tensors_is_not_implemented(torch, change):
    raises_alike(torch, change, NotImplementedError, "clamp_cpu.*Bool")


def test_clamp_of_bools_with_one_tensor_bound_or_a_long_bound_runs(torch):
    # one tensor bound is maximum or minimum, which compare bools; a long bound promotes
    for change in (
        lambda lib: (lambda b: b.clamp(min=b))(lib.tensor([False, True])),
        lambda lib: (lambda b: b.clamp(b, lib.tensor([1])))(lib.tensor([True])),
    ):
        assert outcome(torch, change) != "NotImplementedError"
        same_outcome(torch, change)


@pytest.mark.parametrize(
    "shape, dim",
    [((1, 0), 0), ((2, 0, 3), 0), ((2, 3, 0), 0), ((2, 0, 3), 2), ((2, 3), 0), ((0,), 0)],
)
def test_index_select_out_of_range_on_an_empty_tensor_raises_pytorchs_class(torch, shape, dim):
    # a 2-d+ tensor with no elements has its own bounds check in PyTorch (RuntimeError, "INDICES
    # element is out of DATA bounds"); a tensor with elements, or a 1-d one, raises IndexError
    def select(lib):
        return lib.zeros(shape).index_select(dim, lib.tensor([3, 2, 1]))

    error = RuntimeError if len(shape) > 1 and 0 in shape else IndexError
    raises_alike(torch, select, error, "out of range")


@pytest.mark.parametrize(
    "index",
    [
        lambda lib: ([2, 0], lib.tensor([False]), -3),  # the fuzzer's: a mask picking nothing
        lambda lib: ([2, 0], [0, 1, 2]),
        lambda lib: (
            lib.tensor([[True, False, False], [False] * 3, [False, True, False]]),
            [0, 1, 2],
        ),
    ],
)
def test_setitem_checks_index_tensors_broadcast_before_the_values_dtype(torch, index):
    # PyTorch's index_put_ lines up its index tensors first, so a float64 value written into a
    # float32 tensor is not what it complains about
    def write(lib):
        x = lib.zeros(3, 1, 3) if len(index(lib)) == 3 else lib.zeros(3, 3, 3)
        x[index(lib)] = lib.zeros(1, dtype=lib.float64)

    raises_alike(torch, write, IndexError, "could not be broadcast together")


@pytest.mark.parametrize(
    "change",
    [
        lambda lib: assigned(lib.zeros(1, 2, 1, 0), ([0, -1, -1], -1, 0), lambda x: x),  # fuzzer's
        lambda lib: assigned(lib.zeros(2, 0), (slice(None),), lambda x: lib.zeros(3, 0)),
        lambda lib: assigned(lib.zeros(2, 0), ([0, 1],), lambda x: lib.zeros(1, 1, 0)),  # runs
    ],
)
def test_setitem_into_no_elements_still_checks_the_values_shape(torch, change):
    same_outcome(torch, change)
