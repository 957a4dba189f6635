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


# ---- LayerNorm ------------------------------------------------------------------------------------


def _run(layer, lib, x_np, weights_np):
    """layer(x) and its backward with fixed upstream gradients: (output, input's gradient)."""
    x = lib.tensor(x_np, requires_grad=True)
    out = layer(x)
    (out * lib.tensor(weights_np)).sum().backward()
    return out, x.grad


def _compare(torch, build, shape, dtype=np.float64, train=True, steps=1, rtol=1e-10, atol=1e-10):
    """The same layer in both libraries, fed the same batches: outputs, input and parameter
    gradients and buffers agree after every step."""
    ours, theirs = both(torch, build)
    if dtype == np.float64:
        ours, theirs = ours.double(), theirs.double()
    if not train:
        ours.eval(), theirs.eval()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x_np = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
        w_np = rng.standard_normal(shape).astype(dtype)
        (out, grad), (out_t, grad_t) = _run(ours, ag, x_np, w_np), _run(theirs, torch, x_np, w_np)
        assert out.grad_fn.name() == out_t.grad_fn.name()
        np.testing.assert_allclose(values(out), values(out_t), rtol=rtol, atol=atol)
        np.testing.assert_allclose(values(grad), values(grad_t), rtol=rtol, atol=atol)
        if any(p.requires_grad for p in theirs.parameters()):
            assert_same_grads(ours, theirs, rtol=rtol, atol=atol)
        for (name, b), (_, b_t) in zip(ours.named_buffers(), theirs.named_buffers()):
            np.testing.assert_allclose(values(b), values(b_t), rtol=rtol, atol=atol, err_msg=name)
        ours.zero_grad(), theirs.zero_grad()
    return ours, theirs


@pytest.mark.parametrize(
    "args, kwargs, shape",
    [
        ((5,), {}, (4, 5)),
        ((5,), {}, (2, 3, 5)),
        (((3, 5),), {"eps": 1e-3}, (2, 3, 5)),
        ((5,), {"elementwise_affine": False}, (4, 5)),
        ((5,), {"bias": False}, (4, 5)),
        ((5,), {}, (5,)),
    ],
)
def test_layer_norm_values_and_gradients(torch, args, kwargs, shape):
    ours, theirs = _compare(torch, lambda lib: lib.nn.LayerNorm(*args, **kwargs), shape)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # trained parameters (not ones and zeros) as well
    with ag.no_grad(), torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            p.copy_(ag.randn(p.shape, dtype=ag.float64)), q.copy_(torch.tensor(values(p)))
    rng = np.random.default_rng(1)
    x_np, w_np = rng.standard_normal(shape), rng.standard_normal(shape)
    for a, b in zip(_run(ours, ag, x_np, w_np), _run(theirs, torch, x_np, w_np)):
        np.testing.assert_allclose(values(a), values(b), rtol=1e-10, atol=1e-10)
    assert_same_grads(ours, theirs, rtol=1e-10, atol=1e-10)


def test_layer_norm_in_float32(torch):
    _compare(torch, lambda lib: lib.nn.LayerNorm(8), (4, 8), np.float32, rtol=1e-5, atol=1e-5)


def test_layer_norm_gradcheck_and_double_backward():
    x = ag.randn(3, 4, dtype=ag.float64, requires_grad=True)
    w = ag.randn(4, dtype=ag.float64, requires_grad=True)
    b = ag.randn(4, dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    assert gradgradcheck(lambda x: F.layer_norm(x, (3, 4), eps=0.1), (x,))


def test_layer_norm_errors_are_pytorchs(lib):
    x = lib.randn(2, 3)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 4\]"):
        lib.nn.functional.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        lib.nn.functional.layer_norm(x, (3,), lib.ones(4))
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape"):
        lib.nn.functional.layer_norm(x, (3,), None, lib.ones(4))
    with pytest.raises(TypeError, match="must be tuple of ints, not int"):
        lib.nn.functional.layer_norm(x, 3)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 3\]"):
        lib.nn.LayerNorm(3)(lib.randn(2, 4))


# ---- BatchNorm ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layer, kwargs, shape",
    [
        ("BatchNorm1d", {}, (6, 3)),
        ("BatchNorm1d", {}, (4, 3, 5)),
        ("BatchNorm2d", {}, (4, 3, 5, 2)),
        ("BatchNorm1d", {"momentum": None}, (6, 3)),
        ("BatchNorm1d", {"momentum": 0.3, "eps": 1e-3}, (6, 3)),
        ("BatchNorm2d", {"affine": False}, (2, 3, 4, 4)),
        ("BatchNorm1d", {"bias": False}, (6, 3)),
        ("BatchNorm2d", {"track_running_stats": False}, (2, 3, 4, 4)),
    ],
)
def test_batch_norm_training_updates_the_running_stats_as_pytorch(torch, layer, kwargs, shape):
    build = lambda lib: getattr(lib.nn, layer)(3, **kwargs)  # noqa: E731
    ours, theirs = _compare(torch, build, shape, steps=3)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if ours.track_running_stats:
        assert ours.num_batches_tracked.item() == 3 and ours.num_batches_tracked.dtype == ag.int64
    # then evaluation: the running statistics, no update
    ours.eval(), theirs.eval()
    rng = np.random.default_rng(2)
    x_np, w_np = rng.standard_normal(shape), rng.standard_normal(shape)
    (out, grad), (out_t, grad_t) = _run(ours, ag, x_np, w_np), _run(theirs, torch, x_np, w_np)
    np.testing.assert_allclose(values(out), values(out_t), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(values(grad), values(grad_t), rtol=1e-10, atol=1e-10)
    for (name, b), (_, b_t) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(values(b), values(b_t), rtol=1e-10, err_msg=name)


def test_batch_norm_in_float32(torch):
    build = lambda lib: lib.nn.BatchNorm2d(4)  # noqa: E731
    _compare(torch, build, (8, 4, 3, 3), np.float32, steps=2, rtol=1e-5, atol=1e-5)


def test_batch_norm_eval_gradients_of_trained_parameters(torch):
    ours, theirs = _compare(torch, lambda lib: lib.nn.BatchNorm1d(3), (5, 3), steps=2)
    with ag.no_grad(), torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            p.copy_(ag.randn(p.shape, dtype=ag.float64)), q.copy_(torch.tensor(values(p)))
    ours.eval(), theirs.eval()
    rng = np.random.default_rng(3)
    x_np, w_np = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    for a, b in zip(_run(ours, ag, x_np, w_np), _run(theirs, torch, x_np, w_np)):
        np.testing.assert_allclose(values(a), values(b), rtol=1e-10, atol=1e-10)
    assert_same_grads(ours, theirs, rtol=1e-10, atol=1e-10)


def test_batch_norm_functional_with_momentum_and_no_running_stats(torch):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((5, 3, 2))
    outs = []
    for lib in (ag, torch):
        mean, var = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        f = lib.nn.functional.batch_norm
        y = f(lib.tensor(x_np), mean, var, training=True, momentum=0.5)
        z = f(lib.tensor(x_np), None, None, training=True)
        outs.append([values(t) for t in (y, z, mean, var)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_batch_norm_gradcheck_and_double_backward():
    x = ag.randn(4, 3, 2, dtype=ag.float64, requires_grad=True)
    w = ag.randn(3, dtype=ag.float64, requires_grad=True)
    b = ag.randn(3, dtype=ag.float64, requires_grad=True)
    mean, var = ag.randn(3, dtype=ag.float64), ag.rand(3, dtype=ag.float64) + 0.5
    for training in (True, False):

        def f(x, w, b):
            return F.batch_norm(x, mean.clone(), var.clone(), w, b, training=training)

        assert gradcheck(f, (x, w, b))
        assert gradgradcheck(f, (x, w, b))


def test_batch_norm_errors_are_pytorchs(lib):
    f = lib.nn.functional.batch_norm
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        f(lib.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        lib.nn.BatchNorm2d(3)(lib.randn(1, 3, 1, 1))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        f(lib.randn(2, 3), lib.zeros(4), lib.ones(4), training=True)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 4"):
        f(lib.randn(2, 3), None, None, lib.ones(4), training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        f(lib.randn(2, 3), None, None, training=False)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        lib.nn.BatchNorm2d(3)(lib.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        lib.nn.BatchNorm2d(4)(lib.randn(2, 3, 4, 4))


def test_batch_norm_eval_without_running_stats_uses_the_batch(torch):
    _compare(
        torch, lambda lib: lib.nn.BatchNorm1d(3, track_running_stats=False), (4, 3), train=False
    )
