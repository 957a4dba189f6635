"""A leaf's first gradient becomes its `.grad` without a copy when nothing else holds it (as in
PyTorch), and is copied whenever something else could see it (autograd/ownership.py)."""

import numpy as np

import autograd_lab as ag
from autograd_lab.autograd import ownership


def _made_by_backward(factor=3.0, keep=None):
    """A Function whose backward records the id of the gradient array it returns (and, with
    `keep`, keeps the gradient tensor itself)."""
    ids = []

    class Scale(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            g = grad * factor
            ids.append(id(g._data))
            if keep is not None:
                keep.append(g)
            return g

    return Scale, ids


def test_calibrated_at_import():
    assert ownership._limits is not None


def test_a_private_gradient_becomes_grad_itself():
    Scale, ids = _made_by_backward()
    x = ag.randn(4, requires_grad=True)
    Scale.apply(x).sum().backward()
    assert id(x.grad._data) == ids[0]
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 3.0, np.float32))


def test_a_gradient_someone_kept_is_copied_and_stays_untouched():
    kept = []
    Scale, ids = _made_by_backward(keep=kept)
    x = ag.randn(4, requires_grad=True)
    Scale.apply(x).sum().backward()
    Scale.apply(x).sum().backward()  # the second backward adds into x.grad in place
    assert not np.shares_memory(x.grad._data, kept[0]._data)
    np.testing.assert_array_equal(kept[0].numpy(), np.full(4, 3.0, np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 6.0, np.float32))


def test_retained_and_user_gradients_are_never_shared_with_grad():
    a = ag.randn(3, requires_grad=True)
    y = a + 0  # AddBackward0 passes the same gradient tensor on to `a`
    y.retain_grad()
    y.sum().backward()
    assert not np.shares_memory(a.grad._data, y.grad._data)
    b = ag.randn(3, requires_grad=True)
    seed = ag.ones(3)
    b.backward(seed)
    b.backward(seed)
    np.testing.assert_array_equal(seed.numpy(), np.ones(3, np.float32))  # not added into
    np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 2.0, np.float32))


def test_hooks_that_keep_gradients_see_them_unchanged_after_a_second_backward():
    kept = []
    w = ag.randn(3, requires_grad=True)
    w.register_hook(lambda g: kept.append(g))
    for _ in range(2):
        (w * 2).sum().backward()
    np.testing.assert_array_equal(kept[0].numpy(), np.full(3, 2.0, np.float32))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 4.0, np.float32))


def test_linear_layer_weight_gradients_accumulate_like_pytorch(torch):
    lin = ag.nn.Linear(4, 3).double()
    ref = torch.nn.Linear(4, 3).double()
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lin.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 4))
    for _ in range(3):
        lin(ag.tensor(x)).tanh().sum().backward()
        ref(torch.tensor(x)).tanh().sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(lin.bias.grad.numpy(), ref.bias.grad.numpy(), rtol=1e-12)
