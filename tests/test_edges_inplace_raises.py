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
