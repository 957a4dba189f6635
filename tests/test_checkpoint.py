"""Activation checkpointing (autograd_lab.utils.checkpoint): same gradients, less memory held.

Gradients are compared with the same computation run without checkpointing, and with PyTorch's
torch.utils.checkpoint on the same numbers (the `lib` fixture runs a test with both libraries).
"""

import tracemalloc

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck
from autograd_lab.utils.checkpoint import checkpoint, checkpoint_sequential

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3))
W1, B1 = RNG.standard_normal((5, 3)), RNG.standard_normal(5)
W2, B2 = RNG.standard_normal((2, 5)), RNG.standard_normal(2)


def block(lib, w1, b1):
    """A layer whose parameters are read from the enclosing scope, as a module's would be."""
    return lambda h: lib.nn.functional.linear(h, w1, b1).tanh() * 2


def grads_of_mlp(lib, mode):
    """Gradients of a 2-layer net with the first layer run plainly or checkpointed."""
    x = lib.tensor(X, requires_grad=True)
    w1, b1 = lib.tensor(W1, requires_grad=True), lib.tensor(B1, requires_grad=True)
    w2, b2 = lib.tensor(W2, requires_grad=True), lib.tensor(B2, requires_grad=True)
    layer = block(lib, w1, b1)
    if mode == "plain":
        h = layer(x)
    else:
        h = lib.utils.checkpoint.checkpoint(layer, x, use_reentrant=(mode == "reentrant"))
    loss = (lib.nn.functional.linear(h, w2, b2) ** 2).sum()
    loss.backward()
    return [to_numpy(t.grad) for t in (x, w1, b1, w2, b2)] + [to_numpy(loss)]


@pytest.mark.parametrize("mode", ["non_reentrant", "reentrant"])
def test_gradients_equal_plain_run_and_pytorch(lib, mode):
    for ours, plain in zip(grads_of_mlp(lib, mode), grads_of_mlp(ag, "plain"), strict=True):
        np.testing.assert_allclose(ours, plain, rtol=1e-12, atol=1e-12)


def test_saved_tensors_are_dropped_then_recomputed_on_demand():
    x = ag.tensor([0.5, -1.0], dtype=ag.float64, requires_grad=True)
    y = checkpoint(lambda t: t.tanh().exp(), x)
    assert type(y.grad_fn._saved).__name__ == "_Recompute"  # nothing kept from forward
    np.testing.assert_allclose(
        y.grad_fn._saved_result.detach().numpy(), np.exp(np.tanh([0.5, -1.0]))
    )
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.tanh([0.5, -1])) / np.cosh([0.5, -1]) ** 2)


def test_grad_reaches_parameters_inside_the_segment():
    """Non-reentrant: the graph is recorded as usual, so autograd.grad reaches closed-over weights."""
    x, w1, b1 = ag.tensor(X), ag.tensor(W1, requires_grad=True), ag.tensor(B1, requires_grad=True)
    loss = checkpoint(block(ag, w1, b1), x).sum()
    got = ag.autograd.grad(loss, [w1, b1])
    want = ag.autograd.grad(block(ag, w1, b1)(x).sum(), [w1, b1])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_checkpointed_segment_passes_gradcheck_and_gradgradcheck():
    def fn(t, w):
        return checkpoint(lambda a, b: (a * b).sin() * a, t, w)

    t = ag.tensor(RNG.standard_normal(3), requires_grad=True)
    w = ag.tensor(RNG.standard_normal(3), requires_grad=True)
    assert gradcheck(fn, (t, w))
    assert gradgradcheck(fn, (t, w))


def test_dropout_recomputes_the_same_mask_and_leaves_the_generator_as_without_checkpoint():
    def run(use_checkpoint, preserve=True):
        ag.manual_seed(3)
        x = ag.tensor(RNG_DROPOUT, requires_grad=True)

        def f(t):
            return ag.nn.functional.dropout(t.exp(), p=0.5) * t

        y = checkpoint(f, x, preserve_rng_state=preserve) if use_checkpoint else f(x)
        y.sum().backward()
        return x.grad.numpy(), ag.rand(3).numpy()  # the next numbers drawn after the step

    plain_grad, plain_next = run(False)
    grad, following = run(True)
    np.testing.assert_allclose(grad, plain_grad, rtol=1e-12)
    np.testing.assert_array_equal(following, plain_next)  # the re-run did not consume draws
    lost_grad, _ = run(True, preserve=False)
    assert not np.allclose(lost_grad, plain_grad)  # without the saved state the mask differs


RNG_DROPOUT = np.random.default_rng(1).standard_normal(64)


def test_checkpoint_sequential_equals_pytorch(lib):
    lib.manual_seed(0)
    layers = [lib.nn.Linear(3, 3, dtype=lib.float64) for _ in range(5)]
    for layer, seed in zip(layers, range(5), strict=True):  # the same weights in both libraries
        weights = np.random.default_rng(seed).standard_normal((3, 4))
        layer.weight.data = lib.tensor(weights[:, :3])
        layer.bias.data = lib.tensor(weights[:, 3])
    model = lib.nn.Sequential(*[m for layer in layers for m in (layer, lib.nn.Tanh())])
    x = lib.tensor(X, requires_grad=True)
    out = lib.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=False)
    out.sum().backward()
    plain_x = ag.tensor(X, requires_grad=True)
    reference = plain_x
    for seed in range(5):
        weights = np.random.default_rng(seed).standard_normal((3, 4))
        reference = (reference @ ag.tensor(weights[:, :3]).T + ag.tensor(weights[:, 3])).tanh()
    reference.sum().backward()
    np.testing.assert_allclose(to_numpy(out), reference.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(x.grad), plain_x.grad.numpy(), rtol=1e-12)
    assert layers[0].weight.grad is not None


def test_checkpoint_holds_less_memory_on_a_deep_mlp():
    """Peak traced bytes of forward + backward of a 16-layer MLP, with and without checkpointing
    (measured: about 0.54x with 4 segments)."""
    ag.manual_seed(0)
    layers = [m for _ in range(16) for m in (ag.nn.Linear(64, 64), ag.nn.Tanh())]
    x = ag.randn(1024, 64)  # activations (256 KiB each) dominate, not the weights (16 KiB)

    def peak(segments):
        tracemalloc.start()
        tracemalloc.reset_peak()
        if segments:
            out = checkpoint_sequential(layers, segments, x)
        else:
            out = ag.nn.Sequential(*layers)(x)
        out.sum().backward()
        del out
        peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        for layer in layers[::2]:
            layer.weight.grad = layer.bias.grad = None
        return peak_bytes

    plain, checkpointed = peak(0), peak(4)
    assert checkpointed < 0.7 * plain, (plain, checkpointed)


def test_errors_name_the_fix():
    with pytest.raises(TypeError, match="needs a function"):
        checkpoint(ag.ones(2), ag.ones(2))
    with pytest.raises(ValueError, match="use_reentrant=False"):
        checkpoint(lambda t, k: t * k, ag.ones(2), use_reentrant=True, k=2)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda t: t * 2, ag.ones(2), use_reentrant=True)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential([ag.nn.Tanh()], 2, ag.ones(2))

    flips = iter([True, False])

    def moody(t):  # takes another path when run again: the re-run cannot restore saved tensors
        return t.exp() if next(flips) else t.sin().cos()

    y = checkpoint(moody, ag.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="deterministic"):
        y.sum().backward()


def test_under_no_grad_it_just_runs_and_viewers_still_see_every_node():
    with ag.no_grad():
        y = checkpoint(lambda t: t * 2, ag.ones(2, requires_grad=True))
    assert y.grad_fn is None
    seen = []
    with ag.autograd.observe(on_node=lambda node, outputs: seen.append(node.name())):
        checkpoint(lambda t: t.tanh() * 2, ag.ones(2, requires_grad=True))
    assert seen == ["TanhBackward0", "MulBackward0"]
