"""nn.utils: clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters,
against PyTorch (the same seeded model, the same gradients, the same clipped result)."""

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab import nn


def values(t):
    return t.detach().numpy()


def model_with_grads(lib, scale=1.0, dtype="float32"):
    """A seeded two-layer model after one backward pass (gradients scaled by `scale`)."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))
    model = model.double() if dtype == "float64" else model
    x = lib.tensor(np.linspace(-2, 2, 12).reshape(3, 4), dtype=getattr(lib, dtype))
    (model(x).sum() * scale).backward()
    return model


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, float("inf")])
@pytest.mark.parametrize("max_norm, scale", [(0.5, 1.0), (100.0, 1.0), (1.0, 1e3)])
def test_clip_grad_norm_matches_pytorch(torch, norm_type, max_norm, scale):
    ours, theirs = model_with_grads(ag, scale), model_with_grads(torch, scale)
    total = nn.utils.clip_grad_norm_(ours.parameters(), max_norm, norm_type=norm_type)
    total_t = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type=norm_type)
    assert total.shape == () and total.dtype == ag.float32 and not total.requires_grad
    np.testing.assert_allclose(values(total), values(total_t), rtol=1e-5)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(values(p.grad), values(q.grad), rtol=1e-5, atol=1e-7)
    if max_norm < values(total_t):  # clipped: the new total norm is max_norm (just under)
        after = nn.utils.clip_grad_norm_(ours.parameters(), 1e9, norm_type=norm_type)
        assert after.item() == pytest.approx(max_norm, rel=1e-4)


def test_clip_grad_norm_of_one_tensor_float64_and_no_grads(torch):
    ours, theirs = model_with_grads(ag, dtype="float64"), model_with_grads(torch, dtype="float64")
    total = nn.utils.clip_grad_norm_(ours[0].weight, 0.1)
    total_t = torch.nn.utils.clip_grad_norm_(theirs[0].weight, 0.1)
    assert total.dtype == ag.float64
    np.testing.assert_allclose(values(total), values(total_t), rtol=1e-12)
    np.testing.assert_allclose(
        values(ours[0].weight.grad), values(theirs[0].weight.grad), rtol=1e-12
    )
    untouched = ag.nn.Linear(2, 2)
    assert nn.utils.clip_grad_norm_(untouched.parameters(), 1.0).item() == 0.0
    assert torch.nn.utils.clip_grad_norm_(torch.nn.Linear(2, 2).parameters(), 1.0).item() == 0.0


def test_clip_grad_norm_non_finite(lib):
    p = lib.nn.Parameter(lib.ones(3))
    p.grad = lib.tensor([1.0, float("inf"), 2.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert lib.nn.utils.clip_grad_norm_([p], 1.0).item() == float("inf")  # scaled by 1/inf
    assert p.grad.tolist()[0] == 0.0


def test_clip_grad_value_matches_pytorch(torch):
    ours, theirs = model_with_grads(ag, 3.0), model_with_grads(torch, 3.0)
    assert nn.utils.clip_grad_value_(ours.parameters(), 0.5) is None
    torch.nn.utils.clip_grad_value_(theirs.parameters(), 0.5)
    for p, q in zip(ours.parameters(), theirs.parameters()):  # float32 backwards: 1e-6 apart
        np.testing.assert_allclose(values(p.grad), values(q.grad), rtol=1e-5, atol=1e-6)
    assert max(np.abs(values(p.grad)).max() for p in ours.parameters()) == 0.5


def test_parameters_to_vector_and_back(torch):
    results = []
    for lib in (ag, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Linear(2, 1))
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * lib.arange(vec.numel())).sum().backward()
        lib.nn.utils.vector_to_parameters(lib.arange(11.0), model.parameters())
        results.append([values(vec), values(model[0].weight.grad), values(model[1].bias)])
        assert type(vec.grad_fn).__name__ == "CatBackward0" or vec.grad_fn.name() == "CatBackward0"
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], nn.Linear(1, 1).parameters())
