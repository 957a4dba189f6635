"""APIs the learner-script corpus (tests/scripts/) met that no other file covers: kthvalue,
repeat_interleave, unflatten, index_add, dist, logit, data_ptr and view's error words, each
against PyTorch (values, dtypes, gradients, error classes)."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag


def both(torch, make):
    """make(lib) with autograd_lab and with PyTorch."""
    return make(ag), make(torch)


def assert_same(ours, theirs):
    np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6, atol=1e-7)
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize(
    "k, dim, keepdim", [(1, 1, False), (2, 1, True), (2, 0, False), (3, -1, False)]
)
def test_kthvalue(torch, k, dim, keepdim):
    def make(lib):
        x = lib.tensor([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0], [2.0, 6.0, 5.0]], requires_grad=True)
        result = x.kthvalue(k, dim, keepdim)
        result.values.sum().backward()
        return result, x.grad

    (ours, our_grad), (theirs, their_grad) = both(torch, make)
    assert_same(ours.values, theirs.values)
    assert_same(ours.indices, theirs.indices)
    assert_same(our_grad, their_grad)
    assert repr(ag.tensor([2.0, 1.0]).kthvalue(1)).startswith("torch.return_types.kthvalue(")
    with pytest.raises(RuntimeError, match="out of range"):
        ag.ones(3).kthvalue(4)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([1, 2]).repeat_interleave(3),
        lambda lib: lib.arange(6.0).reshape(2, 3).repeat_interleave(2),
        lambda lib: lib.arange(6.0).reshape(2, 3).repeat_interleave(2, dim=1),
        lambda lib: lib.arange(6.0).reshape(2, 3).repeat_interleave(lib.tensor([1, 3]), dim=0),
        lambda lib: lib.repeat_interleave(lib.tensor([2, 0, 1])),
    ],
)
def test_repeat_interleave(torch, call):
    assert_same(*both(torch, call))


def test_repeat_interleave_gradients_add_up_the_copies(torch):
    def make(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        (
            x.repeat_interleave(lib.tensor([2, 1]), dim=0) * lib.arange(6.0).reshape(3, 2)
        ).sum().backward()
        return x.grad

    assert_same(*both(torch, make))
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        ag.ones(3).repeat_interleave(ag.tensor([1, 2]), dim=0)


def test_unflatten(torch):
    ours, theirs = both(torch, lambda lib: lib.arange(24).reshape(2, 12).unflatten(1, (3, -1)))
    assert_same(ours, theirs)
    assert_same(*both(torch, lambda lib: lib.arange(24).unflatten(-1, (2, 3, 4))))


@pytest.mark.parametrize("alpha", [1, 2.5])
def test_index_add(torch, alpha):
    def make(lib):
        source = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        base = lib.zeros(4, 2, requires_grad=True)
        out = base.index_add(0, lib.tensor([0, 3, 0]), source, alpha=alpha)
        (out * lib.arange(8.0).reshape(4, 2)).sum().backward()
        return out, source.grad, base.grad

    for ours, theirs in zip(*both(torch, make)):
        assert_same(ours, theirs)
    in_place = both(
        torch, lambda lib: lib.zeros(3).index_add_(0, lib.tensor([0, 2, 0]), lib.ones(3))
    )
    assert_same(*in_place)


def test_dist_and_logit(torch):
    assert_same(*both(torch, lambda lib: lib.dist(lib.tensor([1.0, 2.0]), lib.tensor([4.0, 6.0]))))
    assert_same(*both(torch, lambda lib: lib.dist(lib.tensor([1.0, 2.0]), lib.zeros(2), 1)))
    assert_same(*both(torch, lambda lib: lib.logit(lib.tensor([0.25, 0.5, 0.9]))))
    assert_same(*both(torch, lambda lib: lib.tensor([0.0, 1.0]).logit(eps=1e-6)))

    def grad(lib):
        p = lib.tensor([0.2, 0.7], requires_grad=True)
        p.logit().sum().backward()
        return p.grad

    assert_same(*both(torch, grad))


def test_data_ptr_says_whether_two_tensors_share_memory():
    x = ag.arange(24).reshape(2, 3, 4)
    assert x.view(6, 4).data_ptr() == x.data_ptr()
    assert x[1].data_ptr() - x.data_ptr() == 12 * x.element_size()
    assert x.clone().data_ptr() != x.data_ptr()


def test_view_error_carries_pytorchs_words(torch):
    for lib in (ag, torch):
        with pytest.raises(
            RuntimeError, match="view size is not compatible with input tensor's size"
        ):
            lib.arange(24).reshape(2, 3, 4).transpose(0, 2).view(-1)


def test_out_for_products_and_joins(torch):
    def make(lib):
        a = lib.arange(6.0).reshape(2, 3)
        into = [lib.empty(2, 2), lib.empty(4, 3), lib.empty(0), lib.empty(2), lib.empty(3, 3)]
        results = [
            lib.matmul(a, a.T, out=into[0]),
            lib.cat([a, a], out=into[1]),
            lib.stack([a, a], out=into[2]),
            lib.mv(a.T.contiguous().T, lib.ones(3), out=into[3]),
            lib.outer(lib.ones(3), lib.arange(3.0), out=into[4]),
        ]
        assert all(result is out for result, out in zip(results, into))  # out= is returned
        return into

    for ours, theirs in zip(*both(torch, make)):
        assert_same(ours, theirs)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ag.matmul(ag.ones(2, 2, requires_grad=True), ag.ones(2, 2), out=ag.empty(2, 2))


@pytest.mark.parametrize("a, b", [(1.0, 0.0), (1, 0), (True, False), (1, 0.5)])
def test_where_with_two_numbers_takes_pytorchs_default_dtypes(torch, a, b):
    assert_same(*both(torch, lambda lib: lib.where(lib.tensor([True, False]), a, b)))
