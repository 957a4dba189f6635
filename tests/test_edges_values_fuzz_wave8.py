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
