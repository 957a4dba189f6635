"""L1Loss, SmoothL1Loss and HuberLoss (and F.l1_loss, F.smooth_l1_loss, F.huber_loss) against
PyTorch: values and gradients for every reduction, at the kinks too (an error of exactly 0 and
of exactly ±beta/±delta), weights, broadcasting, reprs and errors.

The generated op-table tests (tests/test_op_table.py, -k "l1_loss or huber") add gradcheck,
gradgradcheck, the CUDA simulator, compile and fusion for the same losses.
"""

import warnings

import numpy as np
import pytest

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck

# the errors input - target include 0 and sit exactly on ±0.5, ±1 and ±2: every kink tested
INPUT = [[0.0, 0.5, -0.5, 1.0], [-1.0, 2.0, -2.0, 0.25], [3.0, -0.75, 1.5, -4.0]]
TARGET = [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, 0.25, 0.0, -1.0]]

CASES = [
    ("l1_loss", {}),
    ("smooth_l1_loss", {}),
    ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 2.0}),
    ("smooth_l1_loss", {"beta": 0.0}),
    ("huber_loss", {}),
    ("huber_loss", {"delta": 0.5}),
    ("huber_loss", {"delta": 2.0}),
]


def values(t):
    return t.detach().numpy()


def run(lib, name, kwargs, reduction, dtype="float64"):
    x = lib.tensor(INPUT, dtype=getattr(lib, dtype), requires_grad=True)
    t = lib.tensor(TARGET, dtype=getattr(lib, dtype), requires_grad=True)
    loss = getattr(lib.nn.functional, name)(x, t, reduction=reduction, **kwargs)
    upstream = lib.arange(loss.numel(), dtype=loss.dtype).reshape(loss.shape) + 1
    (loss * upstream).sum().backward()
    return loss, x.grad, t.grad


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name, kwargs", CASES)
def test_values_and_gradients_at_and_away_from_the_kinks(torch, name, kwargs, reduction):
    for dtype, tol in (("float64", 1e-12), ("float32", 1e-6)):
        ours, theirs = (
            run(ag, name, kwargs, reduction, dtype),
            run(torch, name, kwargs, reduction, dtype),
        )
        assert ours[0].grad_fn.name() == type(theirs[0].grad_fn).__name__
        assert ours[0].dtype == ag.float64 if dtype == "float64" else ag.float32
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(values(a), values(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("name, kwargs", [c for c in CASES if c[0] != "l1_loss"])
def test_gradcheck_and_double_backward_away_from_the_kinks(name, kwargs):
    x = ag.tensor([[0.1, 0.7, -0.35], [2.5, -1.7, 0.05]], dtype=ag.float64, requires_grad=True)
    t = ag.tensor([[0.3, -0.1, 0.2], [0.0, 0.4, -0.6]], dtype=ag.float64, requires_grad=True)
    f = getattr(F, name)
    for reduction in ("mean", "none"):
        assert gradcheck(lambda x, t: f(x, t, reduction=reduction, **kwargs), (x, t))
        assert gradgradcheck(lambda x, t: f(x, t, reduction=reduction, **kwargs), (x, t))


@pytest.mark.parametrize("name", ["l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted(torch, name, reduction):
    rng = np.random.default_rng(0)
    x_np, t_np, w_np = (
        rng.standard_normal((3, 4)) * 2,
        rng.standard_normal((3, 4)),
        rng.random((3, 4)),
    )
    results = []
    for lib in (ag, torch):
        x = lib.tensor(x_np, requires_grad=True)
        loss = getattr(lib.nn.functional, name)(
            x, lib.tensor(t_np), reduction=reduction, weight=lib.tensor(w_np)
        )
        loss.sum().backward()
        results.append((values(loss), values(x.grad)))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["l1_loss", "smooth_l1_loss", "huber_loss"])
def test_a_target_of_another_shape_broadcasts_with_pytorchs_warning(torch, name):
    results = []
    for lib in (ag, torch):
        x = lib.tensor([[1.0], [-2.0], [0.5]], requires_grad=True)
        with pytest.warns(UserWarning, match="Please ensure they have the same size"):
            loss = getattr(lib.nn.functional, name)(x, lib.tensor([0.0, 3.0]))
        loss.backward()
        results.append((values(loss), values(x.grad)))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_modules_repr_and_options(torch):
    for name, kwargs in (
        ("L1Loss", {}),
        ("L1Loss", {"reduction": "sum"}),
        ("SmoothL1Loss", {"beta": 0.5}),
        ("HuberLoss", {"delta": 2.0, "reduction": "none"}),
    ):
        ours, theirs = getattr(ag.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
        assert repr(ours) == repr(theirs)
        assert ours.reduction == theirs.reduction
        x, t = ag.tensor(INPUT), ag.tensor(TARGET)
        np.testing.assert_allclose(
            values(ours(x, t)), values(theirs(torch.tensor(INPUT), torch.tensor(TARGET))), rtol=1e-6
        )
    assert ag.nn.SmoothL1Loss(beta=0.5).beta == 0.5 and ag.nn.HuberLoss(delta=2).delta == 2


def test_legacy_size_average_warns_and_sums(lib):
    x, t = lib.tensor(INPUT), lib.tensor(TARGET)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = lib.nn.L1Loss(size_average=False)(x, t)
    assert loss.item() == pytest.approx(float(np.abs(np.subtract(INPUT, TARGET)).sum()))


def test_errors_are_pytorchs(lib):
    x, t = lib.tensor(INPUT), lib.tensor(TARGET)
    with pytest.raises(
        RuntimeError, match="smooth_l1_loss does not support negative values for beta"
    ):
        lib.nn.functional.smooth_l1_loss(x, t, beta=-1.0)
    for delta in (0.0, -1.0):
        with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values"):
            lib.nn.functional.huber_loss(x, t, delta=delta)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        lib.nn.functional.l1_loss(x, t, reduction="average")
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        lib.nn.functional.huber_loss(x, t, weight=lib.ones(4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="must match the size of tensor|cannot be broadcast"):
            lib.nn.functional.l1_loss(x, t[:, :3])
