"""Row 4: how much a tensor engine saves over a scalar one, on the moons MLP of row 2.

A scalar autograd engine, written here for the comparison (the design every first lesson draws):
each number is a `Value` that remembers its parents and the local derivative to each parent;
backward() visits the graph in reverse topological order and applies the chain rule one number at
a time. Training the 2-16-16-2 MLP on 200 points builds about 137,000 Values per step, so the
scalar engine is timed on a few steps only (`--repeats` is capped at SCALAR_REPEATS), interleaved
with ours (which times many steps per sample, as row 2 does).

    >>> a, b = Value(2.0), Value(3.0)
    >>> c = a * b + a
    >>> c.backward()
    >>> a.grad, b.grad
    (4.0, 2.0)
"""

import math

import numpy as np
from harness import Row, Target, check_all, interleaved, now, quietly
from models import init_weights, moons
from moons_mlp import LEARNING_RATE, MOMENTUM, SIZES, make_trainer, usable_engines

SCALAR_REPEATS = 3  # each scalar step takes about half a second
TARGET = Target(1000, at_least=True)  # the issue's: ours at least 1,000x faster


class Value:
    """One number of a scalar graph: its value, its gradient, its parents and d(self)/d(parent)."""

    __slots__ = ("data", "grad", "_parents", "_local_grads")

    def __init__(self, data, parents=(), local_grads=()):
        self.data = data
        self.grad = 0.0
        self._parents = parents
        self._local_grads = local_grads  # one per parent: the chain rule's local factor

    def __add__(self, other):
        if not isinstance(other, Value):
            return Value(self.data + other, (self,), (1.0,))
        return Value(self.data + other.data, (self, other), (1.0, 1.0))

    def __mul__(self, other):
        if not isinstance(other, Value):
            return Value(self.data * other, (self,), (other,))
        return Value(self.data * other.data, (self, other), (other.data, self.data))

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other)

    def tanh(self):
        t = math.tanh(self.data)
        return Value(t, (self,), (1 - t * t,))

    def relu(self):
        return Value(max(self.data, 0.0), (self,), (float(self.data > 0),))

    def exp(self):
        e = math.exp(self.data)
        return Value(e, (self,), (e,))

    def log(self):
        return Value(math.log(self.data), (self,), (1 / self.data,))

    def backward(self):
        """Fill `.grad` of every Value this one depends on with d(self)/d(that value)."""
        order, visited, stack = [], {id(self)}, [(self, False)]
        while stack:  # depth-first, without recursion: the graph of one step is deep
            value, children_done = stack.pop()
            if children_done:
                order.append(value)  # after all of its parents: a topological order
                continue
            stack.append((value, True))
            for parent in value._parents:
                if id(parent) not in visited:
                    visited.add(id(parent))
                    stack.append((parent, False))
        self.grad = 1.0
        for value in reversed(order):  # outputs first: each gradient is complete when used
            for parent, local in zip(value._parents, value._local_grads):
                parent.grad += local * value.grad

    def __repr__(self):
        return f"Value({self.data:.4g}, grad={self.grad:.4g})"


class ScalarMLP:
    """The moons MLP with one Value per weight, trained by SGD with momentum."""

    def __init__(self, weights):
        self.layers = [
            ([[Value(float(v)) for v in row] for row in w], [Value(float(v)) for v in b])
            for w, b in weights
        ]
        self.params = [v for rows, bias in self.layers for row in [*rows, bias] for v in row]
        self.velocity = [0.0] * len(self.params)

    def __call__(self, x):
        for i, (rows, bias) in enumerate(self.layers):
            x = [sum((w * xi for w, xi in zip(row, x)), b) for row, b in zip(rows, bias)]
            if i < len(self.layers) - 1:
                x = [v.tanh() for v in x]
        return x

    def cross_entropy(self, inputs, labels):
        """Mean over the batch of logsumexp(logits) - logits[label]."""
        total = 0.0
        for x, label in zip(inputs, labels):
            logits = self(x)
            shift = max(v.data for v in logits)  # a constant: keeps exp finite, cancels exactly
            total = total + (sum((v - shift).exp() for v in logits).log() + shift - logits[label])
        return total * (1.0 / len(labels))

    def train_step(self, inputs, labels):
        for p in self.params:
            p.grad = 0.0
        loss = self.cross_entropy(inputs, labels)
        loss.backward()
        for i, p in enumerate(self.params):  # PyTorch's momentum: v = m v + g; p -= lr v
            self.velocity[i] = MOMENTUM * self.velocity[i] + p.grad
            p.data -= LEARNING_RATE * self.velocity[i]
        return loss.data


def rows(settings):
    n_samples, ours_steps = (10, 2) if settings.quick else (200, 20)
    scalar_repeats = min(settings.repeats, SCALAR_REPEATS)
    what = f"moons MLP step {'-'.join(map(str, SIZES))} Tanh, batch {n_samples}, vs scalar engine"
    usable, missing = usable_engines()
    skipped = "; ".join(f"{name} not run: {m} missing" for name, m in missing.items())
    if "ours" in missing:
        return [Row("4", what, "ms/step", None, "scalar", None, TARGET, speedup=True, note=skipped)]
    x, y = moons(n_samples)
    inputs, labels = x.astype(np.float64).tolist(), y.tolist()

    def measure():
        scalar = ScalarMLP(init_weights(SIZES))
        scalar_losses = []

        def scalar_run():
            start = now()
            scalar_losses.append(scalar.train_step(inputs, labels))
            return now() - start

        runners = {name: engine_sample(lib, n_samples, ours_steps) for name, lib in usable.items()}
        runners["scalar"] = scalar_run
        # one sample per turn, no untimed one: each engine's sample starts with its own untimed
        # step, and a scalar step is half a second of pure Python (no threads to wake)
        medians = interleaved(runners, scalar_repeats, warmup=1, block=1, rewarm=False)
        return {name: m[""] * 1e3 for name, m in medians.items()}, scalar_losses

    (ms, scalar_losses), load = quietly(measure)
    # The check: a fresh copy of each engine, trained as many steps as the scalar engine was,
    # from the same weights, must see the same losses (float32 against Python's float64).
    losses = {}
    for name, lib in usable.items():
        fresh_run, losses[name] = make_trainer(lib, n_samples)
        for _ in scalar_losses:
            fresh_run(1)
    check, ok = check_all(losses, "scalar", scalar_losses, tolerance=1e-4, prefix="losses ")
    note = (
        f"scalar engine timed on {scalar_repeats} steps after 1 warm-up; ours on "
        f"{ours_steps} steps per sample, after 1 untimed step"
    )
    return [
        Row(
            "4",
            what,
            "ms/step",
            ms["ours"],
            "scalar",
            ms["scalar"],
            TARGET,
            speedup=True,
            check=check,
            check_ok=ok,
            note="; ".join(filter(None, [note, skipped])),
            before=ms.get("before"),
            load=load,
        )
    ]


def engine_sample(lib, n_samples, steps):
    """A runner: `steps` training steps of `lib`'s moons MLP, after one untimed step."""
    run, _ = make_trainer(lib, n_samples)

    def sample():
        # The untimed step: the step right after a scalar step pays about 4 ms to refill the
        # caches the scalar engine's 137,000 objects emptied, which is not ours to pay.
        run(1)
        return run(steps)

    return sample
