"""nn.Embedding, F.embedding, F.one_hot, and the normalization layers (LayerNorm, BatchNorm1d/2d),
against PyTorch: the seeded initial weights bit for bit, values and gradients (inputs and
parameters), running statistics, state_dict keys, reprs and errors.

Tests that take `lib` run with autograd_lab and with PyTorch: passing with torch shows the rule
tested is PyTorch's. Layers are compared by building both after the same `manual_seed`.
"""

import numpy as np
import pytest

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab import nn
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck


def values(t):
    return t.detach().numpy()


def both(torch, build):
    """`build(lib)` for autograd_lab and for torch, each right after manual_seed(0)."""
    ag.manual_seed(0)
    ours = build(ag)
    torch.manual_seed(0)
    return ours, build(torch)


def assert_same_grads(ours, theirs, rtol=1e-6, atol=1e-6):
    for (name, p), (their_name, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == their_name
        np.testing.assert_allclose(
            values(p.grad), values(q.grad), rtol=rtol, atol=atol, err_msg=name
        )


# ---- Embedding ------------------------------------------------------------------------------------


def test_embedding_initial_weight_is_pytorchs_bit_for_bit(torch):
    ours, theirs = both(torch, lambda lib: lib.nn.Embedding(27, 10))
    np.testing.assert_array_equal(values(ours.weight), values(theirs.weight))
    ours, theirs = both(torch, lambda lib: lib.nn.Embedding(5, 3, padding_idx=-2))
    np.testing.assert_array_equal(values(ours.weight), values(theirs.weight))
    assert ours.padding_idx == theirs.padding_idx == 3
    assert not values(ours.weight)[3].any()


def test_embedding_repr_state_dict_and_parameters(torch):
    for kwargs in (
        {},
        {"padding_idx": 0},
        {"max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True, "sparse": True},
    ):
        ours, theirs = both(torch, lambda lib: lib.nn.Embedding(27, 10, **kwargs))
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert isinstance(ours.weight, nn.Parameter) and ours.weight.requires_grad


@pytest.mark.parametrize(
    "kwargs", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True}, {"padding_idx": 0}]
)
def test_embedding_values_and_weight_gradient(torch, kwargs):
    ours, theirs = both(torch, lambda lib: lib.nn.Embedding(6, 4, **kwargs))
    idx = [[1, 2, 1, 5], [0, 1, 4, 4]]  # repeats: their gradients add up
    outs = [layer(lib.tensor(idx)) for layer, lib in ((ours, ag), (theirs, torch))]
    np.testing.assert_array_equal(values(outs[0]), values(outs[1]))
    assert outs[0].grad_fn.name() == outs[1].grad_fn.name() == "EmbeddingBackward0"
    rng = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    for out, lib in zip(outs, (ag, torch)):
        (out * lib.tensor(rng)).sum().backward()
    assert_same_grads(ours, theirs)


def test_embedding_of_int32_indices_and_any_rank(torch):
    w = np.arange(12.0).reshape(4, 3)
    for idx in ([2], 3, [[[0, 3]]]):
        ours = F.embedding(ag.tensor(idx, dtype=ag.int32), ag.tensor(w))
        theirs = torch.nn.functional.embedding(
            torch.tensor(idx, dtype=torch.int32), torch.tensor(w)
        )
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(values(ours), values(theirs))


def test_embedding_max_norm_renormalizes_the_rows_looked_up_in_place(torch):
    ours, theirs = both(torch, lambda lib: lib.nn.Embedding(5, 3, max_norm=1.0))
    for layer, lib in ((ours, ag), (theirs, torch)):
        layer(lib.tensor([1, 1, 2])).sum().backward()
    np.testing.assert_allclose(values(ours.weight), values(theirs.weight), rtol=1e-6)
    assert_same_grads(ours, theirs)
    norms = np.linalg.norm(values(ours.weight), axis=1)
    assert (norms[1:3] <= 1.0).all() and (norms[[0, 3, 4]] > 1.0).any()  # only rows 1, 2 changed


def test_embedding_gradcheck_and_double_backward():
    idx = ag.tensor([[0, 2, 2], [3, 0, 1]])
    w = ag.randn(4, 3, dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    # padding_idx and scale_grad_by_freq change the gradient on purpose (not the derivative of
    # the look-up), in PyTorch too: their backward is checked against torch above; here that
    # its own derivative (the double backward, with respect to the incoming gradient) is right
    assert gradgradcheck(lambda w: F.embedding(idx, w) ** 2, (w,))
    for kwargs in ({"padding_idx": 2}, {"scale_grad_by_freq": True}):
        assert gradgradcheck(lambda w: F.embedding(idx, w, **kwargs) * 3.0, (w,))


def test_embedding_from_pretrained(torch):
    table = np.arange(6.0).reshape(3, 2)
    for kwargs in ({}, {"freeze": False, "padding_idx": 1}):
        ours = nn.Embedding.from_pretrained(ag.tensor(table), **kwargs)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), **kwargs)
        assert repr(ours) == repr(theirs)
        assert ours.weight.requires_grad == theirs.weight.requires_grad
        np.testing.assert_array_equal(values(ours.weight), table)  # the padding row is kept
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(ag.ones(3))


def test_embedding_errors_are_pytorchs(lib):
    w = lib.randn(5, 3)
    with pytest.raises(RuntimeError, match="Long, Int"):
        lib.nn.functional.embedding(lib.tensor([1.0]), w)
    for bad in ([5], [-1]):
        with pytest.raises(IndexError, match="index out of range in self"):
            lib.nn.functional.embedding(lib.tensor(bad), w)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        lib.nn.functional.embedding(lib.tensor([1]), lib.randn(5))
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        lib.nn.functional.embedding([1], w)
    for padding_idx in (5, -6):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            lib.nn.Embedding(5, 3, padding_idx=padding_idx)


def test_embedding_sparse_gradients_are_refused_by_name():
    layer = nn.Embedding(5, 3, sparse=True)
    with pytest.raises(NotImplementedError, match=r"sparse=True\) is not supported"):
        layer(ag.tensor([1]))


def test_embedding_on_cuda_is_refused_by_name():
    w = ag.randn(5, 3).cuda()
    with pytest.raises(NotImplementedError, match="embedding.*CUDA backend"):
        F.embedding(ag.tensor([1]).cuda(), w)


# ---- one_hot --------------------------------------------------------------------------------------


def test_one_hot_values_and_dtype(torch):
    for idx, num_classes in (([0, 2, 1], -1), ([[1], [3]], 5), (4, -1), ([], 3)):
        t = torch.tensor(idx, dtype=torch.long)
        theirs = torch.nn.functional.one_hot(t, num_classes)
        ours = F.one_hot(ag.tensor(idx, dtype=ag.int64), num_classes=num_classes)
        assert ours.dtype == ag.int64 and theirs.dtype == torch.int64
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(values(ours), values(theirs))


@pytest.mark.parametrize(
    "idx, num_classes, dtype, words",
    [
        ([1.0], -1, "float32", "LongTensor"),
        ([1], -1, "int32", "LongTensor"),
        ([-1], -1, "int64", "non-negative"),
        ([3], 3, "int64", "smaller than num_classes"),
        ([], -1, "int64", "empty tensor"),
    ],
)
def test_one_hot_errors_are_pytorchs(lib, idx, num_classes, dtype, words):
    with pytest.raises(RuntimeError, match=words):
        lib.nn.functional.one_hot(lib.tensor(idx, dtype=getattr(lib, dtype)), num_classes)
