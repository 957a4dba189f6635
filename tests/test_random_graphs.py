"""Random graphs: gradients stay right when values are shared, leaves reused and ops mixed.

Hypothesis writes a *recipe*: a few float64 leaves, then steps that each apply an op from the op
table to earlier values. Any value may feed several later steps (a shared node: its gradient is the
sum over all its uses) and a binary op may take the same value twice (x * x). Every value that no
step uses is folded into a scalar loss with fixed random weights, so every leaf reaches the loss.

The same recipe then runs three ways: backward on autograd_lab, central finite differences of the
loss, and backward on PyTorch. Every leaf's .grad must agree.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from conftest import to_numpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import numerical_jacobian
from autograd_lab.ops.table import BY_NAME

SETTINGS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

LEAF_SHAPES = [(), (3,), (2, 3)]
MAX_DIMS, MAX_NUMEL = 3, 24  # keeps every graph small, so finite differences stay cheap


# ---- which table ops may appear, and the shape each one makes ------------------------------------
# Only smooth ops: finite differences of a random composition must never straddle a kink.


def _same(s):
    return s


def _needs_dim(rule):
    return lambda s: rule(s) if s else None


def _swap_first_last(s):
    return s if len(s) < 2 else (s[-1],) + s[1:-1] + (s[0],)


UNARY = {  # op name -> input shape -> output shape (None: the op does not apply to that shape)
    "sin": _same,
    "cos": _same,
    "tanh": _same,
    "sigmoid": _same,
    "neg": _same,
    "mul_scalar": _same,
    "add_scalar": _same,
    "sum": lambda s: (),
    "mean": lambda s: (),
    "sum_dim": _needs_dim(lambda s: s[1:]),
    "mean_dim": _needs_dim(lambda s: s[:-1] + (1,)),
    "prod_dim": _needs_dim(lambda s: s[1:]),
    "logsumexp": _needs_dim(lambda s: s[:-1]),
    "softmax": _needs_dim(_same),
    "transpose": _needs_dim(_swap_first_last),
    "unsqueeze": lambda s: s + (1,),
    "index_repeated": lambda s: (3,) + s[1:] if s and s[0] >= 3 else None,  # a[[0, 2, 0]]
}


def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _matmul(a, b):
    try:
        return np.matmul(np.empty(a), np.empty(b)).shape
    except ValueError:
        return None


BINARY = {  # op name -> (shape, shape) -> output shape, or None
    "add": _broadcast,
    "sub": _broadcast,
    "mul": _broadcast,
    "matmul": _matmul,
    "stack": lambda a, b: a[:1] + (2,) + a[1:] if a and a == b else None,  # stack([a, b], dim=1)
}
RULES = {**UNARY, **BINARY}


# ---- recipes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipe:
    leaf_shapes: tuple
    steps: tuple  # (op name, indices of the values it takes); value i < len(leaves) is a leaf
    seed: int

    @property
    def sinks(self):
        """Values no step uses: the loss is made of these."""
        used = {i for _, args in self.steps for i in args}
        return [i for i in range(len(self.leaf_shapes) + len(self.steps)) if i not in used]

    def leaf_values(self):
        rng = np.random.default_rng(self.seed)
        return [rng.uniform(-1.0, 1.0, shape) for shape in self.leaf_shapes]

    def run(self, lib, leaves):
        """Apply the steps with `lib` (autograd_lab or torch); return the loss and every value."""
        values = list(leaves)
        for name, args in self.steps:
            values.append(BY_NAME[name].call(lib, *(values[i] for i in args)))
        rng = np.random.default_rng(self.seed + 1)  # the loss weights: the same for every lib
        loss = 0.0
        for i in self.sinks:
            weight = lib.tensor(rng.standard_normal(tuple(values[i].shape)), dtype=lib.float64)
            loss = loss + (values[i] * weight).sum()
        return loss, values

    def _repr_pretty_(self, printer, cycle):  # hypothesis prints a failing recipe with this
        printer.text(repr(self))

    def __repr__(self):
        n = len(self.leaf_shapes)
        lines = [f"Recipe(seed={self.seed})"]
        lines += [f"  v{i} = leaf {shape}" for i, shape in enumerate(self.leaf_shapes)]
        for k, (name, args) in enumerate(self.steps):
            lines.append(f"  v{n + k} = {name}({', '.join(f'v{i}' for i in args)})")
        lines.append("  loss = " + " + ".join(f"(v{i} * w{i}).sum()" for i in self.sinks))
        return "\n".join(lines)


@st.composite
def recipes(draw, min_steps=3, max_steps=12):
    leaf_shapes = draw(st.lists(st.sampled_from(LEAF_SHAPES), min_size=1, max_size=3))
    shapes, steps = list(leaf_shapes), []
    target = draw(st.integers(min_steps, max_steps))
    for _ in range(3 * target):  # some draws do not fit (no operand of a usable shape): redraw
        if len(steps) == target:
            break
        name = draw(st.sampled_from(sorted(RULES)))
        if name in UNARY:
            options = [(i,) for i in range(len(shapes))]
        else:  # any pair, a value with itself included: x * x uses x twice
            options = [(i, j) for i in range(len(shapes)) for j in range(len(shapes))]
        options = [args for args in options if RULES[name](*(shapes[i] for i in args)) is not None]
        if not options:
            continue
        args = draw(st.sampled_from(options))
        shape = RULES[name](*(shapes[i] for i in args))
        if len(shape) > MAX_DIMS or int(np.prod(shape)) > MAX_NUMEL:
            continue
        steps.append((name, args))
        shapes.append(shape)
    return Recipe(tuple(leaf_shapes), tuple(steps), draw(st.integers(0, 2**32 - 2)))


def leaves(lib, recipe):
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in recipe.leaf_values()]


# ---- the tests -----------------------------------------------------------------------------------


@SETTINGS
@given(recipe=recipes())
def test_leaf_gradients_match_finite_differences(recipe):
    xs = leaves(ag, recipe)
    loss, _ = recipe.run(ag, xs)
    loss.backward()
    numerical = numerical_jacobian(lambda *inputs: recipe.run(ag, inputs)[0], xs)
    for i, x in enumerate(xs):
        assert x.grad is not None, f"leaf v{i} got no gradient"
        expected = numerical[(i, 0)].reshape(tuple(x.shape))
        np.testing.assert_allclose(
            to_numpy(x.grad), expected, rtol=1e-5, atol=1e-7, err_msg=f"v{i}"
        )


@pytest.mark.oracle
@SETTINGS
@given(recipe=recipes())
def test_values_and_gradients_match_pytorch(torch, recipe):
    ours, theirs = leaves(ag, recipe), leaves(torch, recipe)
    loss, values = recipe.run(ag, ours)
    expected_loss, expected_values = recipe.run(torch, theirs)
    for v in values[len(ours) :] + expected_values[len(theirs) :]:
        v.retain_grad()  # shared intermediate nodes: their summed gradient is compared too
    loss.backward()
    expected_loss.backward()

    np.testing.assert_allclose(to_numpy(loss), to_numpy(expected_loss), rtol=1e-10)
    for i, (v, expected) in enumerate(zip(values, expected_values)):
        assert tuple(v.shape) == tuple(expected.shape), f"v{i}: shape"
        np.testing.assert_allclose(to_numpy(v), to_numpy(expected), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(
            to_numpy(v.grad), to_numpy(expected.grad), rtol=1e-9, atol=1e-12, err_msg=f"v{i}.grad"
        )
