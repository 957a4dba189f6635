"""Reductions, statistics, sorting and comparisons at the edges, as issue 14's differential fuzzer
found them: each test compares with PyTorch (values, NaN/inf, dtypes, error classes and key
words)."""

import numpy as np
import pytest
from conftest import both, raises_alike, values

import autograd_lab as ag

inf, nan = float("inf"), float("nan")


def test_prod_takes_a_result_dtype_and_one_int_dim(torch):
    both(torch, lambda lib: lib.tensor([1.5, 2.0, 3.0], dtype=lib.float64).prod(dtype=lib.float32))
    both(torch, lambda lib: lib.tensor([[1, 2], [3, 4]]).prod(1, dtype=lib.float32))
    both(torch, lambda lib: lib.tensor([[1, 2], [3, 4]]).prod(0, keepdim=True, dtype=lib.int32))

    def grad(lib):
        x = lib.tensor([1.5, 0.0, 3.0], dtype=lib.float64).requires_grad_()
        x.prod(0, dtype=lib.float32).backward()
        return x.grad

    both(torch, grad)
    raises_alike(torch, lambda lib: lib.tensor([1.0]).prod(dim=(0,)), TypeError, "single int")
    raises_alike(
        torch, lambda lib: lib.tensor(1.0).prod(1, dtype=lib.int64), IndexError, "out of range"
    )
    x = lambda lib: lib.tensor(1.0).requires_grad_()  # noqa: E731
    raises_alike(
        torch,
        lambda lib: x(lib).prod(0, dtype=lib.int64),
        RuntimeError,
        "Autograd not support dtype",
    )


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_and_std_mean_reduce_every_dim_for_an_empty_dim_tuple(torch, name):
    both(torch, lambda lib: getattr(lib, name)(lib.zeros(3), dim=(), correction=2, keepdim=True))
    both(torch, lambda lib: getattr(lib, name)(lib.arange(6.0).reshape(2, 3), dim=[]))


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("line", [[inf], [1.0, inf], [inf, 1.0], [-inf, inf], [0.0, -inf, 0.0]])
def test_var_mean_s_mean_is_a_running_mean_at_infinities(torch, name, line):
    both(torch, lambda lib: getattr(lib, name)(lib.tensor(line)))
    both(torch, lambda lib: getattr(lib, name)(lib.tensor([line, line[::-1]]), dim=1, keepdim=True))


@pytest.mark.parametrize("k", [0, 1])
def test_topk_of_a_zero_dim_tensor_is_the_tensor_itself(torch, k):
    both(torch, lambda lib: lib.topk(lib.tensor(2.5), k))
    both(torch, lambda lib: lib.topk(lib.tensor([1.0, 2.0]), 0))


def test_kthvalue_checks_k_before_refusing_bool_and_takes_a_zero_dim_bool(torch):
    both(torch, lambda lib: lib.kthvalue(lib.tensor(False), 1))
    raises_alike(
        torch, lambda lib: lib.kthvalue(lib.tensor(False), 4), RuntimeError, "k out of range"
    )
    raises_alike(
        torch, lambda lib: lib.kthvalue(lib.tensor([False]), 1), NotImplementedError, "Bool"
    )


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_unique_along_a_dim_is_refused_as_pytorch_refuses_it(torch, name):
    def along(shape, dim):
        return lambda lib: getattr(lib, name)(lib.zeros(shape), dim=dim, return_counts=True)

    raises_alike(torch, along((), 0), IndexError, "has no dimensions")
    raises_alike(torch, along((), -1), IndexError, "has no dimensions")
    raises_alike(torch, along((2, 0), 0), RuntimeError, "aren't selected")
    raises_alike(torch, along((0, 1, 1), 2), RuntimeError, "aren't selected")
    raises_alike(torch, along((0, 0), 0), RuntimeError, "more than one")
    both(torch, along((0, 2), 0))


@pytest.mark.parametrize("keepdim", [False, True])
def test_norm_and_count_nonzero_reduce_every_dim_for_an_empty_dim_tuple(torch, keepdim):
    x = lambda lib: lib.tensor([[0.0, -3.0, 4.0], [1.0, 0.0, 2.0]])  # noqa: E731
    for p in [0.5, 1, 2, "fro", inf]:
        both(torch, lambda lib: lib.norm(x(lib), p=p, dim=(), keepdim=keepdim))
    both(torch, lambda lib: lib.linalg.vector_norm(x(lib), dim=[], keepdim=keepdim))
    both(torch, lambda lib: x(lib).count_nonzero(dim=()))
    both(torch, lambda lib: lib.tensor([]).count_nonzero(dim=()))


def test_logsumexp_over_an_empty_dim_tuple_works_where_pytorch_s_does(torch):
    both(torch, lambda lib: lib.tensor([], dtype=lib.int64).logsumexp(dim=()))
    both(torch, lambda lib: lib.zeros(2, 0).logsumexp(dim=(), keepdim=True))
    both(torch, lambda lib: lib.tensor(2.0).logsumexp(dim=()))
    np.testing.assert_allclose(
        values(ag.arange(6.0).reshape(2, 3).logsumexp(dim=(), keepdim=True)),
        values(torch.arange(6.0).reshape(2, 3).logsumexp(dim=(), keepdim=True)),
        rtol=1e-6,
    )
    words = "doesn't match the broadcast shape"
    raises_alike(torch, lambda lib: lib.zeros(2, 3).logsumexp(dim=()), RuntimeError, words)


@pytest.mark.parametrize("name", ["isclose", "allclose"])
def test_isclose_and_allclose_refuse_mixed_dtypes_and_numbers(torch, name):
    def compare(dtype, other):
        return lambda lib: getattr(lib.tensor([1.0]).to(getattr(lib, dtype)), name)(other(lib))

    raises_alike(
        torch,
        compare("float64", lambda lib: lib.tensor([1.0])),
        RuntimeError,
        "Double did not match Float",
    )
    raises_alike(
        torch,
        compare("int64", lambda lib: lib.tensor([1.0])),
        RuntimeError,
        "Long did not match Float",
    )
    raises_alike(torch, compare("float32", lambda lib: 1.0), TypeError, "must be Tensor")
    both(torch, lambda lib: lib.isclose(lib.tensor([1, 2]), lib.tensor([1, 3])))  # one dtype: fine


def test_trace_refuses_bool_before_checking_the_shape(torch):
    raises_alike(
        torch,
        lambda lib: lib.tensor([[True]]).trace(),
        NotImplementedError,
        "not implemented for 'Bool'",
    )
    raises_alike(
        torch,
        lambda lib: lib.tensor(False).trace(),
        NotImplementedError,
        "not implemented for 'Bool'",
    )
    raises_alike(torch, lambda lib: lib.zeros(2).trace(), RuntimeError, "expected a matrix")
    both(torch, lambda lib: lib.tensor([[1, 2], [3, 4]], dtype=lib.uint8).trace())


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float16", "float64"])
def test_median_of_no_elements_keeps_the_dtype(torch, dtype):
    both(torch, lambda lib: lib.median(lib.tensor([], dtype=getattr(lib, dtype))))


@pytest.mark.filterwarnings("ignore")  # both libraries warn: no degrees of freedom
@pytest.mark.parametrize("shape, dim", [((0, 3), 0), ((2, 0), 1), ((0,), None), ((2, 0), 0)])
def test_var_mean_of_no_elements_is_nan(torch, shape, dim):
    both(torch, lambda lib: lib.var_mean(lib.zeros(shape), dim, keepdim=True))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_checks_the_dim_first_and_passes_an_empty_int_tensor(torch, name):
    raises_alike(
        torch, lambda lib: getattr(lib, name)(lib.tensor(0), -4), IndexError, "out of range"
    )
    both(torch, lambda lib: getattr(lib, name)(lib.zeros(1, 0, dtype=lib.int64), 0))
    raises_alike(
        torch, lambda lib: getattr(lib, name)(lib.tensor([1]), 0), NotImplementedError, "Long"
    )
