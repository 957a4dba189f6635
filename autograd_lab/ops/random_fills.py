"""The nodes of random sampling: new values that do not depend on the old ones.

`x.uniform_()` replaces x's values with random numbers, and `bernoulli(p)` draws 0s and 1s with
probabilities p. PyTorch still records a node for them when an input requires grad (one name per
distribution, `UniformBackward0`, `BernoulliBackward0`, ...), and that node's gradient is zero:
a sample does not move smoothly when the old values (or the probabilities, or the mean) move.
(`torch.normal(mean, std)` has a zero gradient too, in PyTorch: no reparameterization trick.)

    >>> y = autograd_lab.ones(3, requires_grad=True) * 2
    >>> y.uniform_().grad_fn
    <UniformBackward0 object at 0x...>

The numbers themselves come from random.py (PyTorch's generator, bit for bit); a record gets a
function `draw` that makes them, and calls it only once the in-place checks have passed, so a
refused fill (a leaf that requires grad, say) draws nothing and leaves the stream as it was.
"""

from ..autograd.function import Op
from .elementwise import _zeros


class RandomFill(Op):
    """Random numbers, `draw()`, that replace the input's old values (`x.uniform_()`, out of
    place) or that take the input tensors as parameters (`bernoulli(p)`, `normal(mean, std)`)."""

    derivative = "0: a random sample does not move smoothly with the old values or parameters"

    @staticmethod
    def forward(ctx, *inputs, draw):
        return draw()

    @staticmethod
    def backward(ctx, grad):  # zeros for every input (the engine sums each to its input's shape)
        return tuple(_zeros(grad.shape, grad) for _ in ctx.needs_input_grad)


# PyTorch's node names; `random_` has one per way of giving its range
class Uniform(RandomFill):
    node_name = "UniformBackward0"


class Normal(RandomFill):
    node_name = "NormalBackward0"


class Exponential(RandomFill):
    node_name = "ExponentialBackward0"


class RandomInRange(RandomFill):
    node_name = "RandomBackward0"  # x.random_(from, to)


class RandomBelow(RandomFill):
    node_name = "RandomBackward1"  # x.random_(to)


class RandomInteger(RandomFill):
    node_name = "RandomBackward2"  # x.random_(): any integer the dtype holds exactly


class BernoulliWithNumber(RandomFill):
    node_name = "BernoulliBackward2"  # x.bernoulli_(0.5)


class BernoulliWithTensor(RandomFill):
    node_name = "BernoulliBackward1"  # x.bernoulli_(p) with a tensor of probabilities p


class Bernoulli(RandomFill):
    node_name = "BernoulliBackward0"  # bernoulli(p): a new tensor, 1 with probability p[i]


class NormalWithTensorMean(RandomFill):
    node_name = "NormalBackward1"  # normal(mean, 2.0): one sample per element of mean


class NormalWithTensorStd(RandomFill):
    node_name = "NormalBackward2"  # normal(0.0, std)


class NormalWithTensors(RandomFill):
    node_name = "NormalBackward3"  # normal(mean, std), both tensors
