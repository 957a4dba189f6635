"""Fuzz wave 9 (issue 14): silent wrong values (a partly written assignment, a clone's layout,
dist with p=0, randint_like's order), against PyTorch 2.13."""

import pytest
from conftest import values
from fuzzing import check
from fuzzing.check import _partly_written_line
from fuzzing.program import Leaf, Program, Step, statements
from fuzzing.runner import Seen

import autograd_lab as ag


def _program(leaves, *steps):
    return Program(tuple(leaves), tuple(Step(*step) for step in steps))


def test_assignment_through_a_list_with_an_index_out_of_range_writes_nothing(torch):
    # README's Simplifications: PyTorch's index_put_ has written x[0] before it meets the 3 and
    # raises; ours checks every index first and leaves the tensor unchanged
    def assign(lib):
        x = lib.tensor([1.5, -1.0, 2.0], dtype=lib.float64)
        with pytest.raises(IndexError, match="out of bounds"):
            x[None, [-3, 0, 3]] = 0.25
        return values(x).tolist()

    assert assign(torch) == [0.25, -1.0, 2.0]
    assert assign(ag) == [1.5, -1.0, 2.0]


def test_the_fuzzer_counts_values_after_a_refused_assignment_through_a_list_as_a_consequence(
    torch,
):
    # fuzz seed 1708676: torch.mul(x0, x0) read the element PyTorch had written before raising
    x = Leaf("x0", (3,), "float64", (1.67, -1.0, 1.29))
    steps = [
        ("v0", "setitem", "{0}[None, [-3, 0, 3]] = 0.25", ("x0",), True),
        ("v1", "mul", "torch.mul({0}, {0})", ("x0",)),
    ]
    result = check(_program([x], *steps), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what) for d in result.consequences] == [("mul", "values")]
    # a plain index (x[3] = 1) is checked before PyTorch writes: a later difference is a finding
    records = {(0, ""): Seen("raise", error="IndexError: index 3 is out of bounds")}
    plain = ("v0", "setitem", "{0}[3] = 0.25", ("x0",), True)
    lines = statements(_program([x], plain))[2:]
    assert _partly_written_line(records, records, lines) is None
    lines = statements(_program([x], steps[0]))[2:]
    assert _partly_written_line(records, records, lines) == 0


def test_where_lays_out_its_result_as_its_condition_first(torch):
    # fuzz seed 1716565: the mask is transposed in memory, the other input a broadcast column;
    # PyTorch's TensorIterator reads the condition first, so the result (and its clone) is
    # transposed in memory too, and as_strided reads its memory in that order
    def where_of_a_transposed_mask(lib):
        x = lib.tensor([[0.0, 0.5, 2.5, -1.5], [-1.5, 2.0, 0.5, 1.0], [-1.0, -0.5, 1.5, -0.5]])
        picked = lib.where(x.t() > 0, 0.5, lib.zeros(4, 1))
        read = lib.as_strided(picked.clone(), (2,), (2,), 6)
        return picked.stride(), values(read).tolist()

    assert where_of_a_transposed_mask(torch) == ((1, 4), [0.5, 0.0])
    assert where_of_a_transposed_mask(ag) == where_of_a_transposed_mask(torch)


def test_the_norm_of_a_0d_tensor_over_a_named_dim_takes_the_power_and_the_root(torch):
    # fuzz seed 1732582: PyTorch takes |x| as it is for a norm over one element, except for a 0-d
    # tensor reduced over dim=0 or -1: there (0.19³)^(1/3) is 0.19000000000000003, so dist(x, that,
    # 0) counts one nonzero difference; (1e-200)² underflows, so its 2-norm is 0
    def norms(lib):
        x = lib.tensor(0.19, dtype=lib.float64)
        tiny = lib.tensor(1e-200, dtype=lib.float64)
        over_dim = lib.norm(x, p=3, dim=-1)
        return [
            over_dim.item(),
            lib.dist(x, over_dim, 0).item(),
            lib.linalg.vector_norm(x, 0.5, dim=0).item(),
            lib.linalg.vector_norm(tiny, 2, dim=(0,)).item(),
            lib.linalg.vector_norm(x, 3).item(),  # no dim: |x|
            lib.linalg.vector_norm(x, 3, dim=()).item(),  # dim=() is every dim: |x| too
            lib.linalg.vector_norm(x.reshape(1), 3, dim=0).item(),  # one element of a 1-D: |x|
        ]

    assert norms(torch) == [0.19000000000000003, 1.0, 0.18999999999999997, 0.0, 0.19, 0.19, 0.19]
    assert norms(ag) == norms(torch)


def test_count_nonzero_gives_a_row_major_result_so_randint_like_fills_it_in_pytorchs_order(
    torch,
):
    # fuzz seed 1714528: counting over dim 0 of a permuted tensor; numpy's sum kept the input's
    # order (strides (1, 3)), PyTorch's reduction gives a row-major result, which
    # randint_like's empty_like then copies, and fills row after row
    def counts_and_fill(lib):
        lib.manual_seed(0)
        x = lib.tensor([0, 1, 0, 2, 0, 3, 4, 0, 5], dtype=lib.int64).reshape(3, 3, 1)
        counts = x.transpose(0, -1).count_nonzero(dim=-3)
        filled = lib.randint_like(counts, 5, dtype=lib.int64)
        return counts.stride(), values(counts).tolist(), values(filled).tolist()

    assert counts_and_fill(torch)[0] == (3, 1)
    assert counts_and_fill(ag) == counts_and_fill(torch)
