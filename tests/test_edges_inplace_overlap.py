"""Fuzz wave 7 (issue 14): in-place writes that fail part-way, write overlapping memory, or read
the inputs' graph after an in-place change, against PyTorch 2.13."""

import pytest
from conftest import both, raises_alike, values
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


def test_setitem_with_index_tensors_into_an_as_strided_view_whose_elements_overlap_is_refused(
    torch,
):
    # fuzz seed 1522320: v's rows share the place 2 (v[0, 2] is v[1, 0]); PyTorch's index_put_
    # writes row 0, then row 1 reading the value v[0] as it goes, so v[1, 2] reads the 1.0 just
    # written at place 2 (README's Simplifications: we refuse such a view)
    def overlapping_view(lib):
        return lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0]).as_strided((2, 3), (2, 1))

    v = overlapping_view(torch)
    v[[0, 1]] = v[0]
    assert values(v).tolist() == [[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]
    v = overlapping_view(ag)
    with pytest.raises(RuntimeError, match="as_strided view whose elements overlap"):
        v[[0, 1]] = v[0]
    # a row of it does not overlap itself, and one number is the same in any order: written as
    # in PyTorch
    for lib in (torch, ag):
        v = overlapping_view(lib)
        v[1][[0, 2]] = lib.tensor([7.0, 8.0])
        assert values(v).tolist() == [[1.0, 2.0, 7.0], [7.0, 4.0, 8.0]]
        v[[0, 1]] = 9.0
        assert values(v).tolist() == [[9.0] * 3] * 2

    # an index out of range is PyTorch's IndexError first (it would write otherwise)
    def out_of_range(lib):
        overlapping_view(lib)[lib.tensor([0, 5])] = lib.tensor([1.0, 2.0, 3.0])

    raises_alike(torch, out_of_range, IndexError, "out of bounds")


def test_tril_and_triu_in_place_refuse_a_repeating_tensor_they_must_copy_back(torch):
    # fuzz seed 1521758: PyTorch's tril_/triu_ write in place only where their loop can walk the
    # matrices one after another; otherwise they compute aside and copy back, and that copy_
    # refuses a tensor whose elements repeat (x.T of an expanded tensor)
    refused = {
        "x.T of an expanded tensor": lambda lib: lib.zeros(1, 1, 1, 1).expand(2, 1, 1, 1).T,
        "a repeated batch dim after the first": lambda lib: lib.ones(2, 1, 2, 2).expand(2, 3, 2, 2),
        "a repeated row": lambda lib: lib.ones(2, 2, 1, 2).expand(2, 2, 2, 2),
    }
    for make in refused.values():
        for method in ("tril_", "triu_"):
            raises_alike(
                torch,
                lambda lib: getattr(make(lib), method)(),
                RuntimeError,
                "more than one element of the written-to tensor refers to a single memory location",
            )
    # written in place, repeats and all, as PyTorch does: at most 3 dims, or a repeated first dim
    written = {
        "3 dims": lambda lib: lib.arange(4.0).reshape(1, 2, 2).expand(3, 2, 2),
        "a repeated first dim": lambda lib: lib.arange(8.0).reshape(1, 2, 2, 2).expand(3, 2, 2, 2),
        "2 dims, a repeated row": lambda lib: lib.arange(3.0).expand(3, 3),
    }
    for make in written.values():
        for method in ("tril_", "triu_"):
            both(torch, lambda lib: getattr(make(lib), method)(-1 if method == "tril_" else 1))


def test_backward_checks_saved_tensors_even_where_no_gradient_flows(torch):
    # fuzz seed 1529792: dist(y, x, 0) sends no gradient back (a count has none), yet PyTorch's
    # nodes behind it still unpack what they saved, and log_softmax's result was changed in place
    def dist_zero_after_fill(lib):
        x = lib.tensor([[-1.86], [-2.81], [0.27]], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.log_softmax(x, dim=0)
        y.fill_(-0.5)
        lib.dist(y, lib.zeros(3, 1, dtype=lib.float64), 0).backward()

    raises_alike(torch, dist_zero_after_fill, RuntimeError, "modified by an inplace operation")

    # without the in-place change backward runs, and x gets no gradient in either
    def dist_zero(lib):
        x = lib.tensor([[-1.86], [-2.81], [0.27]], dtype=lib.float64, requires_grad=True)
        lib.dist(lib.nn.functional.log_softmax(x, dim=0), lib.zeros(3, 1), 0).backward()
        return x.grad

    assert dist_zero(torch) is None and dist_zero(ag) is None


def test_linear_through_bmm_with_nothing_to_multiply_takes_weights_dtype(torch):
    # fuzz seed 1534240: an expanded input is not folded into one matrix, so PyTorch multiplies
    # as a batch (bmm), which gives zeros of weight's dtype when there is nothing to multiply,
    # without comparing the dtypes; then it adds the bias in place (add_'s dtype rule)
    def expanded(lib, dtype):
        return lib.tensor([0, 1]).to(dtype).reshape(1, 1, 2).expand(2, 1, 2)

    def empty_product(lib, input_dtype, bias_dtype):
        weight = lib.ones(0, 2, dtype=lib.float64)
        bias = None if bias_dtype is None else lib.ones(0, dtype=getattr(lib, bias_dtype))
        return lib.nn.functional.linear(expanded(lib, getattr(lib, input_dtype)), weight, bias)

    # (the result is float64, weight's dtype, in each: `both` compares dtypes too)
    for input_dtype, bias_dtype in [("int64", None), ("int64", "float64"), ("float32", "int64")]:
        both(torch, lambda lib: empty_product(lib, input_dtype, bias_dtype))
    # something to multiply: bmm compares the dtypes
    raises_alike(
        torch,
        lambda lib: lib.nn.functional.linear(expanded(lib, lib.int64), lib.ones(3, 2).double()),
        RuntimeError,
        "same dtype",
    )
    # the bias is added in place: a float32 bias to a float64 product is fine (addmm would
    # refuse it), a float one to an integer product is not
    both(
        torch,
        lambda lib: lib.nn.functional.linear(
            expanded(lib, lib.float64), lib.ones(3, 2).double(), lib.ones(3)
        ),
    )
    raises_alike(
        torch,
        lambda lib: lib.nn.functional.linear(
            expanded(lib, lib.int64), lib.ones(3, 2).long(), lib.ones(3)
        ),
        RuntimeError,
        "can't be cast",
    )
