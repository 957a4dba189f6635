"""Fuzz wave 7 (issue 14): in-place writes that fail part-way, write overlapping memory, or read
the inputs' graph after an in-place change, against PyTorch 2.13."""

import pytest
from conftest import values
from fuzzing import check
from fuzzing.check import _partly_written_line
from fuzzing.program import Leaf, Program, Step, statements
from fuzzing.runner import Seen

import autograd_lab as ag


def _program(leaves, *steps):
    return Program(tuple(leaves), tuple(Step(*step) for step in steps))


def test_scatter_in_place_with_an_index_out_of_range_writes_nothing_where_pytorch_writes_part(
    torch,
):
    # README's Simplifications: PyTorch has added the elements before the bad index (9) when it
    # raises, ours checks every index first and leaves the tensor unchanged
    def scatter_in_place(lib, method):
        x = lib.zeros(4)
        with pytest.raises(RuntimeError, match="out of bounds"):
            getattr(x, method)(0, lib.tensor([0, 1, 9, 2]), lib.ones(4))
        return values(x).tolist()

    for method in ("scatter_add_", "scatter_"):
        assert scatter_in_place(torch, method) == [1.0, 1.0, 0.0, 0.0]
        assert scatter_in_place(ag, method) == [0.0, 0.0, 0.0, 0.0]


def test_the_fuzzer_counts_values_after_a_refused_scatter_add_as_a_consequence(torch):
    # fuzz seed 1532866: v2 - (-inf) read the elements PyTorch had added before raising
    x = Leaf("x0", (4,), "float64", (1.0, 2.0, 3.0, 4.0))
    index = Leaf("x1", (4,), "int64", (0, 1, 9, 2))
    steps = [
        ("v0", "Tensor.scatter_add_", "{0}.scatter_add_(0, {1}, {0} * 2)", ("x0", "x1")),
        ("v1", "x - y", "({0} - 1.0)", ("x0",)),
    ]
    result = check(_program([x, index], *steps), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what) for d in result.consequences] == [("x - y", "values")]
    # not in place (scatter_add refuses and writes nothing in both): a later difference is a finding
    records = {(0, ""): Seen("raise", error="RuntimeError: index 9 is out of bounds")}
    scatter_add = ("v0", "scatter_add", "torch.scatter_add({0}, 0, {1}, {0})", ("x0", "x1"))
    lines = statements(_program([x, index], scatter_add))[2:]
    assert _partly_written_line(records, records, lines) is None
