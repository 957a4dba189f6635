"""Fuzz wave 8 (issue 14): values, strides and second-order gradients, against PyTorch 2.13."""

import numpy as np
import pytest
from conftest import values
from fuzzing import check
from fuzzing.compare import Divergence
from fuzzing.program import Leaf, Program, Step
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


def _program(leaves, *steps):
    return Program(tuple(leaves), tuple(Step(*step) for step in steps))


def test_index_add_in_place_along_the_last_dim_out_of_range_writes_nothing_where_pytorch_writes_part(
    torch,
):
    # fuzz seed 1604914 (#1): along the last dim of a matrix PyTorch's index_add_ is scatter_add_'s
    # work, which adds what comes before the bad index (2) and then raises "out of bounds";
    # README's Simplifications: ours checks every index first and leaves the tensor unchanged
    def index_add_in_place(lib):
        x = lib.full((2, 2), 0.5)
        with pytest.raises(RuntimeError, match="out of bounds"):
            x.index_add_(1, lib.tensor([1, 2]), lib.tensor([[0.25, 0.5], [1.0, 1.5]]))
        return values(x).tolist()

    assert index_add_in_place(torch) == [[0.5, 0.75], [0.5, 0.5]]
    assert index_add_in_place(ag) == [[0.5, 0.5], [0.5, 0.5]]
    # so the fuzzer counts what is read from x afterwards (a pad that crops it) as a consequence
    x = Leaf("x0", (2, 2), "float32", (0.5, 0.5, 0.5, 0.5))
    steps = [
        ("v0", "Tensor.index_add_", "{0}.index_add_(1, torch.tensor([1, 2]), {0} * 2)", ("x0",)),
        ("v1", "F.pad", "torch.nn.functional.pad({0}, (-1, 0), value=-1.0)", ("x0",)),
    ]
    result = check(_program([x], *steps), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what) for d in result.consequences] == [("F.pad", "values")]


@pytest.mark.parametrize("pool", ["avg_pool2d", "max_pool2d"])
@pytest.mark.parametrize(
    "layout",
    [
        "one transposed image",  # fuzz seed 1614599 (#8): (C, H, W) with dims swapped
        "a batch of permuted images",
        "a channels-last batch",  # pixel by pixel, channels innermost
    ],
)
def test_pooling_lays_its_result_and_gradient_out_as_pytorch_suggests(torch, pool, layout):
    # PyTorch pools into a new row-major tensor, or a channels-last one for a channels-last batch
    # (its suggest_memory_format), whatever the input's own strides; its gradient the same
    def pooled(lib):
        if layout == "one transposed image":
            x = lib.zeros(1, 3, 2).transpose(0, -1)
        elif layout == "a batch of permuted images":
            x = lib.zeros(3, 2, 4, 5).permute(1, 0, 2, 3)
        else:
            x = lib.zeros(2, 4, 5, 3).permute(0, 3, 1, 2)
        x.requires_grad_()
        y = getattr(lib.nn.functional, pool)(x, 1)
        (grad,) = lib.autograd.grad(y.sum(), x)
        return y.stride(), grad.stride()

    assert pooled(ag) == pooled(torch)


def test_softmaxs_float32_second_derivative_keeps_the_rounding_of_terms_that_cancel(torch):
    # fuzz seed 1606308 (#5): the second derivative at x[0, 3, 1] is 73.31 (float64, both sides
    # to 14 digits), a sum of terms as large as the -1037.9 beside it; float32 leaves 73.3059 in
    # ours and 73.3234 in PyTorch, as numpy's float32 exp (softmax) and PyTorch's differ in a
    # last bit (a README simplification), each about 0.009 from the true value
    x = [1.0, 1.83, -0.87, 0.0, 2.95, -0.84, 1.0, 1.0, 0.05, 0.13, 0.08, 0.67]
    x += [-2.18, 0.0, 0.61, 0.0, 1.14, 0.0, 1.67, 1.0, -2.08, 2.07, 1.0, 1.0]

    def second_derivative(lib, dtype):
        x0 = lib.tensor(x, dtype=dtype).reshape(2, 4, 3, 1).requires_grad_()
        y = lib.softmax(x0.rsqrt(), -4)
        loss = (y * lib.arange(1, 25).reshape(y.shape)).sum()
        (g,) = lib.autograd.grad(loss, [x0], create_graph=True)
        return lib.autograd.grad((g * g).sum(), [x0])[0].detach().numpy()

    ours, theirs = second_derivative(ag, ag.float64), second_derivative(torch, torch.float64)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    exact = theirs
    ours, theirs = second_derivative(ag, ag.float32), second_derivative(torch, torch.float32)
    assert not np.allclose(ours, theirs, rtol=1e-4, atol=1e-5, equal_nan=True)
    largest = np.nanmax(np.abs(exact))
    for float32 in (ours, theirs):  # both are the true value to float32's rounding of the terms
        np.testing.assert_allclose(float32, exact, rtol=0, atol=2e-5 * largest)
    # the fuzzer accepts that difference only after softmax with create_graph, and only as small
    # next to the gradient's largest element
    program = Program(
        (Leaf("x0", (2, 4, 3, 1), "float32", tuple(x), True),),
        (
            Step("v0", "Tensor.rsqrt", "{0}.rsqrt()", ("x0",)),
            Step("v1", "softmax", "torch.softmax({0}, -4)", ("v0",)),
        ),
        backward="grad, create_graph, then second order",
        loss_of="v1",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("grad", "values") in [(d.op, d.what) for d, _ in result.accepted]
    shown = "tensor([nan -1037.89 {} -30.774], float32, shape=[4])"
    source = "v1 = torch.softmax(v0, -4)\ngrads = torch.autograd.grad(create_graph=True)"
    seen = Divergence(
        "second order", "grad", "values", shown.format(73.3059), shown.format(73.3234)
    )
    assert "softmax" in accepted_by(seen, source).readme
    wrong = Divergence("second order", "grad", "values", shown.format(74.0), shown.format(73.3234))
    assert accepted_by(wrong, source) is None
    log_softmax = source.replace("softmax", "log_softmax")
    assert accepted_by(seen, log_softmax) is None
    assert accepted_by(seen, source.replace("create_graph=True", "")) is None


@pytest.mark.parametrize("others", [0, 1], ids=["only empty vectors", "beside a matrix"])
def test_cat_gives_an_empty_vector_new_zeros_for_its_gradient_with_no_history(torch, others):
    # fuzz seed 1618756 (#4): PyTorch's cat backward gives each 1-D empty input (shape [0], its
    # legacy "leave it out" case) fresh zeros, even when every input is one, so the gradient that
    # create_graph=True gives it does not require grad; an empty input of another shape gets a
    # slice of the gradient, which does
    def gradients(lib):
        empty, matrix = lib.zeros(0).requires_grad_(), lib.zeros(2, 0).requires_grad_()
        pieces = [empty, empty] + [lib.ones(2, 3).requires_grad_()] * others
        joined = lib.cat(pieces, dim=-1)
        grads = lib.autograd.grad(joined.exp().sum(), [empty], create_graph=True)
        grads += lib.autograd.grad(
            lib.cat([matrix, matrix]).exp().sum(), [matrix], create_graph=True
        )
        return [(tuple(g.shape), g.requires_grad) for g in grads]

    assert gradients(ag) == gradients(torch) == [((0,), False), ((2, 0), True)]


def test_pad_of_a_channels_last_batch_stays_channels_last(torch):
    # found beside #8: np.pad lays a channels-last batch out row-major; PyTorch keeps it
    # channels-last (in_suggested_layout now copies it so)
    def padded(lib):
        images = lib.zeros(2, 4, 5, 3).permute(0, 3, 1, 2)
        return lib.nn.functional.pad(images, (1, 0)).stride()

    assert padded(ag) == padded(torch) == (72, 1, 18, 3)
