"""A leaf's first gradient becomes its `.grad` without a copy when the engine owns it (a built-in
op made it and nobody else was shown it), and is copied whenever something else could hold it
(autograd/engine.py, `_fresh_results`). The engine also adds a value's gradients in place into a
gradient it owns."""

import numpy as np

import autograd_lab as ag
from autograd_lab.autograd.function import Op


def _scale(base, factor=3.0, keep=None):
    """A Function of class `base` whose backward records the id of the gradient array it
    returns (and, with `keep`, keeps the gradient tensor itself)."""
    ids = []

    class Scale(base):
        @staticmethod
        def forward(ctx, x):
            return x._data * factor

        @staticmethod
        def backward(ctx, grad):
            g = grad * factor
            ids.append(id(g._data))
            if keep is not None:
                keep.append(g)
            return g

    return Scale, ids


def test_a_gradient_a_built_in_op_made_becomes_grad_itself():
    Scale, ids = _scale(Op)
    x = ag.randn(4, requires_grad=True)
    Scale.apply(x).sum().backward()
    assert id(x.grad._data) == ids[0]
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 3.0, np.float32))


def test_a_custom_functions_gradient_is_copied_and_what_it_kept_stays_untouched():
    kept = []
    Scale, ids = _scale(ag.autograd.Function, keep=kept)
    x = ag.randn(4, requires_grad=True)
    Scale.apply(x).sum().backward()
    assert id(x.grad._data) != ids[0]
    Scale.apply(x).sum().backward()  # the second backward adds into x.grad in place
    assert not np.shares_memory(x.grad._data, kept[0]._data)
    np.testing.assert_array_equal(kept[0].numpy(), np.full(4, 3.0, np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 6.0, np.float32))


def test_a_gradient_handed_on_is_not_owned():
    a = ag.randn(3, requires_grad=True)
    y = a + 0  # AddBackward0 passes the same gradient tensor on to `a`
    y.retain_grad()
    y.sum().backward()
    assert not np.shares_memory(a.grad._data, y.grad._data)
    b = ag.randn(2, 3, requires_grad=True)
    view = b.reshape(6)  # the view's backward hands back a view of the incoming gradient
    seed = ag.ones(6)
    view.backward(seed)
    view = b.reshape(6)
    view.backward(seed)
    np.testing.assert_array_equal(seed.numpy(), np.ones(6, np.float32))  # never added into
    np.testing.assert_array_equal(b.grad.numpy(), np.full((2, 3), 2.0, np.float32))


def test_the_callers_gradient_is_never_written_into():
    b = ag.randn(3, requires_grad=True)
    seed = ag.ones(3)
    b.backward(seed)
    b.backward(seed)
    np.testing.assert_array_equal(seed.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 2.0, np.float32))


def test_hooks_that_keep_gradients_see_them_unchanged_after_a_second_backward():
    kept = []
    w = ag.randn(3, requires_grad=True)
    w.register_hook(lambda g: kept.append(g))
    for _ in range(2):
        (w * 2).sum().backward()
    np.testing.assert_array_equal(kept[0].numpy(), np.full(3, 2.0, np.float32))
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 4.0, np.float32))


def test_a_non_leaf_hook_keeps_its_gradient_unchanged_while_others_are_added():
    kept = []
    x = ag.randn(3, requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: kept.append(g))
    (h * 3 + h * 5).sum().backward(
        retain_graph=True
    )  # h's two gradients are summed before the hook sees them
    np.testing.assert_array_equal(kept[0].numpy(), np.full(3, 8.0, np.float32))
    (h * 1).sum().backward()
    np.testing.assert_array_equal(kept[0].numpy(), np.full(3, 8.0, np.float32))
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 18.0, np.float32))


def test_gradients_of_a_value_used_many_times_are_summed(torch):
    values = np.random.default_rng(0).standard_normal((4, 3))
    ours = ag.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    for lib, x in ((ag, ours), (torch, theirs)):
        h = x.tanh()
        (h * h + h.exp() + h.sin() * 2).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


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
