"""Fuzz wave 8 (issue 14): values, strides and second-order gradients, against PyTorch 2.13."""

import pytest
from conftest import values
from fuzzing import check
from fuzzing.program import Leaf, Program, Step

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
