"""Activation layers: each wraps one function of `nn.functional`, so it can sit in a Sequential.

>>> import autograd_lab as ag
>>> ag.nn.ReLU()(ag.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from . import functional as F
from .module import Module


class ReLU(Module):
    """max(0, x), elementwise."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), elementwise: squashes into (-1, 1)."""

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise: squashes into (0, 1)."""

    def forward(self, input):
        return F.sigmoid(input)


class GELU(Module):
    """x * Phi(x) (Phi: the standard normal CDF); approximate='tanh' uses the tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """exp(x) / sum(exp(x)) along `dim`: turns scores into probabilities."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)  # warnings point at the caller's line

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along `dim`, computed stably (pairs with NLLLoss)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
