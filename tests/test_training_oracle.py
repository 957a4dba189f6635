"""Training end to end, against PyTorch: the same MLP, weights, data and optimizer give the same
loss curve and the same final weights (the acceptance test of nn + optim + data).

Ours is built and initialised by autograd_lab; its weights are copied into an identical torch
model; both then train on make_moons, step for step.
"""

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
from autograd_lab.data import DataLoader, TensorDataset, make_moons

STEPS = 50
# float64 agrees to rounding; float32 rounding differs (e.g. torch's fused multiply-adds) and
# grows a little over 50 steps of training.
TOLERANCE = {"float64": dict(rtol=1e-6, atol=1e-9), "float32": dict(rtol=1e-4, atol=1e-5)}

MODELS = {  # name: (layer sizes, activation, loss)
    "tanh-mse": ((2, 16, 16, 1), "Tanh", "MSELoss"),
    "relu-cross-entropy": ((2, 16, 16, 2), "ReLU", "CrossEntropyLoss"),
}
OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    ("Adam", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
]
OPTIMIZER_IDS = ["sgd", "sgd-momentum", "sgd-nesterov-decay", "adam", "adamw"]


def build(lib, model, dtype):
    sizes, activation, _ = MODELS[model]
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [lib.nn.Linear(n_in, n_out, dtype=dtype), getattr(lib.nn, activation)()]
    return lib.nn.Sequential(*layers[:-1])  # no activation after the last layer


def twin_models(torch, model, dtype):
    """Our model, initialised by autograd_lab, and a torch model holding the same weights."""
    ours = build(ag, model, getattr(ag, dtype))
    theirs = build(torch, model, getattr(torch, dtype))
    with torch.no_grad():
        for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return ours, theirs


def moons(lib, model, dtype, n_samples=64):
    """make_moons as `lib` tensors: targets (N, 1) floats for MSELoss, class indices otherwise."""
    X, y = make_moons(n_samples, noise=0.1, seed=0)
    X, y = X.numpy().astype(dtype), y.numpy()
    if MODELS[model][2] == "MSELoss":
        y = y.astype(dtype).reshape(-1, 1)
    return lib.from_numpy(X), lib.from_numpy(y)


def train(lib, net, model, optimizer, batches):
    """The four lines of every training loop; returns the loss after each step."""
    loss_fn = getattr(lib.nn, MODELS[model][2])()
    losses = []
    for X, y in batches:
        optimizer.zero_grad()
        loss = loss_fn(net(X), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def assert_same_training(ours, theirs, our_losses, their_losses, dtype):
    np.testing.assert_allclose(our_losses, their_losses, **TOLERANCE[dtype])
    for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), **TOLERANCE[dtype], err_msg=name)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("name", "options"), OPTIMIZERS, ids=OPTIMIZER_IDS)
@pytest.mark.parametrize("model", list(MODELS))
def test_full_batch_training_matches_torch(torch, model, name, options, dtype):
    ours, theirs = twin_models(torch, model, dtype)
    our_data, their_data = moons(ag, model, dtype), moons(torch, model, dtype)
    our_opt = getattr(ag.optim, name)(ours.parameters(), **options)
    their_opt = getattr(torch.optim, name)(theirs.parameters(), **options)
    our_losses = train(ag, ours, model, our_opt, [our_data] * STEPS)
    their_losses = train(torch, theirs, model, their_opt, [their_data] * STEPS)
    assert our_losses[-1] < 0.8 * our_losses[0]  # it learned something: the test is not vacuous
    assert_same_training(ours, theirs, our_losses, their_losses, dtype)


@pytest.mark.parametrize(("name", "options"), [OPTIMIZERS[1], OPTIMIZERS[3]], ids=["sgd", "adam"])
def test_mini_batch_training_through_the_data_loader_matches_torch(torch, name, options):
    """Three epochs of shuffled mini-batches: both loaders serve the same order (sampler=)."""
    model, dtype = "relu-cross-entropy", "float64"
    ours, theirs = twin_models(torch, model, dtype)
    our_data, their_data = moons(ag, model, dtype), moons(torch, model, dtype)
    our_opt = getattr(ag.optim, name)(ours.parameters(), **options)
    their_opt = getattr(torch.optim, name)(theirs.parameters(), **options)
    rng = np.random.default_rng(0)
    our_losses, their_losses = [], []
    for _ in range(3):
        order = rng.permutation(len(our_data[0])).tolist()
        our_loader = DataLoader(TensorDataset(*our_data), batch_size=16, sampler=order)
        their_loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(*their_data), batch_size=16, sampler=order
        )
        our_losses += train(ag, ours, model, our_opt, our_loader)
        their_losses += train(torch, theirs, model, their_opt, their_loader)
    assert len(our_losses) == 3 * 4
    assert_same_training(ours, theirs, our_losses, their_losses, dtype)


def test_optimizer_state_round_trip_mid_training(torch):
    """Save model and optimizer after 20 steps, restore into fresh objects, finish: same as torch
    trained without a break."""
    model, dtype, (name, options) = "tanh-mse", "float64", OPTIMIZERS[3]
    ours, theirs = twin_models(torch, model, dtype)
    our_data, their_data = moons(ag, model, dtype), moons(torch, model, dtype)
    our_opt = getattr(ag.optim, name)(ours.parameters(), **options)
    their_opt = getattr(torch.optim, name)(theirs.parameters(), **options)
    our_losses = train(ag, ours, model, our_opt, [our_data] * 20)
    saved_model, saved_opt = ours.state_dict(), our_opt.state_dict()

    resumed = build(ag, model, ag.float64)  # fresh weights, replaced by the saved ones
    resumed.load_state_dict(saved_model)
    resumed_opt = getattr(ag.optim, name)(resumed.parameters(), **options)
    resumed_opt.load_state_dict(saved_opt)
    our_losses += train(ag, resumed, model, resumed_opt, [our_data] * (STEPS - 20))
    their_losses = train(torch, theirs, model, their_opt, [their_data] * STEPS)
    assert_same_training(resumed, theirs, our_losses, their_losses, dtype)
