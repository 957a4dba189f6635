"""The nodes of random sampling: new values that do not depend on the old ones.

`x.uniform_()` replaces x's values with random numbers, and `bernoulli(p)` draws 0s and 1s with
probabilities p. PyTorch still records a node for them when an input requires grad (one name per
distribution, `UniformBackward0`, `BernoulliBackward0`, ...), and that node's gradient is zero:
a sample does not move smoothly when the old values (or the probabilities) move.

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
    """`x.<distribution>_()`, out of place: the input's old values are replaced by `draw()`."""

    derivative = "0: the new values are random numbers, whatever the old values were"

    @staticmethod
    def forward(ctx, input, draw):
        return draw()

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad)


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


class Bernoulli(RandomFill):
    """`bernoulli(p)`: 1 with probability p[i]; a new tensor, the probabilities are the input."""

    node_name = "BernoulliBackward0"


class BernoulliWithTensor(Op):
    """`x.bernoulli_(p)` with a tensor of probabilities p: zero for the old values and for p."""

    node_name = "BernoulliBackward1"
    derivative = RandomFill.derivative

    @staticmethod
    def forward(ctx, input, p, draw):
        return draw()

    @staticmethod
    def backward(ctx, grad):
        return _zeros(grad.shape, grad), _zeros(grad.shape, grad)  # the engine sums to p's shape
