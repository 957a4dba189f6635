"""The networks the benchmarks train, built the same way in any PyTorch-compatible library.

    weights = init_weights([2, 16, 16, 2], seed=0)          # numpy float32, shared by all
    model = build_mlp(torch, weights, activation="Tanh")  # or autograd_lab: the same numbers

Every library starts from the same numpy weights, so ours, PyTorch, the numpy floor and the
scalar engine compute the same losses: that is how each benchmark checks it times the same work.
"""

import numpy as np


def init_weights(sizes, seed=0):
    """[(W, b), ...] for a fully connected net, float32, drawn like nn.Linear's default:
    uniform in ±1/sqrt(fan_in)."""
    rng = np.random.default_rng(seed)
    weights = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        bound = 1 / np.sqrt(n_in)
        weights.append((
            rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32),
            rng.uniform(-bound, bound, n_out).astype(np.float32),
        ))  # fmt: skip
    return weights


def build_mlp(lib, weights, activation):
    """`lib.nn.Sequential(Linear, activation, Linear, ...)` holding copies of `weights`."""
    layers = []
    for i, (w, b) in enumerate(weights):
        linear = lib.nn.Linear(w.shape[1], w.shape[0])
        with lib.no_grad():  # as an optimizer does: changing parameters is not recorded
            linear.weight.copy_(lib.tensor(w))
            linear.bias.copy_(lib.tensor(b))
        layers.append(linear)
        if i < len(weights) - 1:
            layers.append(getattr(lib.nn, activation)())
    return lib.nn.Sequential(*layers)


def raw_parameters(lib, weights):
    """[W1, b1, W2, b2, ...] as plain leaf tensors that require grad (no nn.Module)."""
    return [lib.tensor(a, requires_grad=True) for pair in weights for a in pair]


def train_step(model, loss_fn, optimizer, x, y):
    """One training step, the four lines every PyTorch tutorial has."""
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


MODULES_API = (
    "nn.Linear",
    "nn.Sequential",
    "nn.ReLU",
    "nn.Tanh",
    "nn.CrossEntropyLoss",
    "optim.SGD",
)


def missing_api(lib, needed=MODULES_API):
    """What `lib` lacks of the `needed` API (dotted names under lib), e.g. 'x.nn.Linear', or ''."""
    missing = []
    for dotted in needed:
        thing = lib
        for part in dotted.split("."):
            thing = getattr(thing, part, None)
        if thing is None:
            missing.append(f"{lib.__name__}.{dotted}")
    return ", ".join(missing)


def moons(n_samples, noise=0.1, seed=0):
    """The moons data set as numpy arrays (x float32 [n, 2], labels int64 [n]), from
    autograd_lab.data, so that every library trains on the same points."""
    from autograd_lab.data import make_moons

    x, y = make_moons(n_samples, noise=noise, seed=seed)
    return x.numpy(), y.numpy()
