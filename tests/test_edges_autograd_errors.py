"""Autograd's errors at the edges: which saved tensors an in-place change breaks, which tensors
detach_() refuses, and which of two problems a call reports first. Issue 14's differential fuzzing
found these; each test runs the same lines with autograd_lab and with PyTorch (the `torch`
fixture) and compares results, or error classes and key words."""

import pytest
from conftest import both, raises_alike, same
from fuzzing import check
from fuzzing.compare import Divergence
from fuzzing.program import Leaf, Program, Step
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


def test_fmod_saves_nothing_when_only_the_dividend_needs_a_gradient(torch):
    def grad(lib):
        x = lib.tensor([2.0, 5.0, -7.5], requires_grad=True)
        divisor = lib.tensor([1.5, 2.0, 2.0])
        out = lib.fmod(x * 1, divisor)
        divisor.mul_(2)  # FmodBackward1 saved nothing: x's slope is 1, it reads no tensor
        out.sum().backward()
        return x.grad

    both(torch, grad)


def test_fmod_saves_its_operands_when_the_divisor_needs_a_gradient(torch):
    def run(lib):
        x = lib.tensor([2.0, 5.0, -7.5])
        divisor = lib.tensor([1.5, 2.0, 2.0], requires_grad=True)
        out = lib.fmod(x, divisor)
        x.mul_(2)  # the divisor's slope, -trunc(x / divisor), reads x
        out.sum().backward()

    raises_alike(torch, run, RuntimeError, "modified by an inplace operation")


def test_nonzero_as_tuple_gives_views_that_detach_in_place_refuses(torch):
    def run(lib):
        lib.tensor(0).nonzero(as_tuple=True)[0].detach_()

    raises_alike(torch, run, RuntimeError, "detach views in-place")
    for lib in (torch, ag):  # views of nonzero()'s result, column by column
        rows, cols = lib.nonzero(lib.ones(2, 3), as_tuple=True)
        assert rows._base is not None and rows._base.shape == (6, 2)
        assert cols.storage_offset() == 6 and cols.tolist() == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize(
    "index, value, error",
    [
        # the fuzzer's: index_put_ checks overlapping memory before the masks' shapes
        (
            lambda lib: (None, lib.tensor([True, False, True]), lib.tensor([-1, -1, 0])),
            0,
            RuntimeError,
        ),
        (lambda lib: (lib.tensor([0]), lib.tensor([True, False])), 0, RuntimeError),
        (lambda lib: (lib.tensor([0]), lib.tensor([True, False])), (0, 0), RuntimeError),
        # one element: PyTorch first tries masked_fill_, which checks a leading mask's shape
        (lambda lib: (lib.tensor([True, False]),), (0, 0), IndexError),
        (lambda lib: (lib.tensor([True, False]), lib.tensor([0])), (0, 0), IndexError),
    ],
)
def test_setitem_checks_overlapping_memory_before_a_masks_shape(torch, index, value, error):
    def write(lib):
        x = lib.zeros(1, 3)
        x[index(lib)] = x[value]

    words = "single memory location" if error is RuntimeError else "shape of the mask"
    raises_alike(torch, write, error, words)


@pytest.mark.parametrize(
    "change, error, words",
    [
        # the fuzzer's: a Long result cannot be written into a bool tensor, whatever lerp allows
        (lambda lib, x: x.lerp_(x, lib.tensor(0)), RuntimeError, "can't be cast"),
        (lambda lib, x: x.long().lerp_(x.long(), lib.tensor(0.5)), RuntimeError, "can't be cast"),
        (lambda lib, x: x.lerp_(x, lib.tensor(True)), NotImplementedError, "not implemented"),
        (lambda lib, x: x.int().lerp_(x.int(), lib.tensor(1)), NotImplementedError, "not impl"),
    ],
)
def test_an_inplace_result_that_cannot_be_cast_is_refused_before_a_missing_kernel(
    torch, change, error, words
):
    raises_alike(torch, lambda lib: change(lib, lib.tensor([False, True])), error, words)


@pytest.mark.parametrize(
    "values, bins, range",
    [
        ([-3.4028234663852886e38, 3.4028234663852886e38], 5, None),  # the step overflows: inf
        ([1.0, 3.3e38], 4, (-3.4028234663852886e38, 3.4028234663852886e38)),
        ([1.0, 3.3e38], 4, (3e38, 3.4028234663852886e38)),
        ([1.0], 4, (1e38, 1e38)),  # edges all equal, but no value in them: nothing counted
    ],
)
def test_histogram_of_huge_values_gives_pytorchs_edges(torch, values, bins, range):
    def run(lib):
        return tuple(lib.tensor(values).histogram(bins, range=range))

    both(torch, run)


def test_histogram_refuses_a_value_whose_bin_edges_are_all_equal(torch):
    # min - 0.5 and max + 0.5 of one huge float32 round back to it: every edge is the same
    # number. PyTorch 2.13 still counts the value, in a bin picked by an undefined conversion
    # (nan to an integer); ours refuses (a README simplification)
    huge = -3.4028234663852886e38
    hist, edges = torch.tensor([huge]).histogram(5)
    same(edges, torch.full((6,), huge))
    assert hist.sum() == 1
    with pytest.raises(RuntimeError, match="too narrow for float32 to tell its bin edges apart"):
        ag.tensor([huge]).histogram(5)
    program = Program(
        (Leaf("x0", (1,), "float32", (huge,), False),),
        (Step("v0", "histogram", "{0}.histogram(5)", ("x0",)),),
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == ["raises"]
    other_error = Divergence(
        "v0 = x0.histogram(5)", "histogram", "raises", "raises RuntimeError: x", "ran"
    )
    assert accepted_by(other_error) is None


def test_batched_matmul_sees_a_saved_operand_changed_in_place_as_pytorch_does(torch):
    # PyTorch 2.13 folds a (3, 2, 1) @ (1,) product into a (6, 1) matrix first: a reshape that
    # copies a strided x (so x's later change is not seen, and backward runs) but views a
    # contiguous one (so it is refused). Ours lowers `@` the same way, so it does the same
    def grad(lib, strided):
        x = lib.zeros(6, 2, 1)[::2] if strided else lib.zeros(3, 2, 1)
        w = lib.tensor([0.0], requires_grad=True)
        product = x.matmul(w)
        x.squeeze_()  # an in-place change: the version counter moves on
        return lib.autograd.grad(product.sum(), [w])

    for lib in (torch, ag):
        (grad_w,) = grad(lib, strided=True)
        assert grad_w.tolist() == [0.0]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            grad(lib, strided=False)
    program = Program(
        (
            Leaf("x0", (6, 2, 1), "float32", (0.0,) * 12, False),
            Leaf("x1", (1,), "float32", (0.0,), True),
        ),
        (
            Step("v0", "matmul", "{0}[::2].matmul({1})", ("x0", "x1")),
            Step("v1", "squeeze_", "{0}.squeeze_()", ("x0",)),
        ),
        backward="backward",
        loss_of="v0",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert not result.accepted
