"""The basic layers: Linear, Identity, Flatten, Dropout (activations: activation.py, losses: loss.py,
Sequential and ModuleList: container.py).

    >>> import autograd_lab as ag
    >>> layer = ag.nn.Linear(3, 2)
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)
    >>> layer(ag.ones(5, 3)).shape
    torch.Size([5, 2])

Each layer keeps its settings as attributes (shown by `extra_repr`) and its weights as Parameters;
`forward` is one call to the matching function of `nn.functional`.
"""

import math

from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features).

    Default init, as in PyTorch: weight ~ U(-1/sqrt(in_features), 1/sqrt(in_features)) (that is
    kaiming_uniform_ with a=sqrt(5)), bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)  # declared, so `layer.bias` is None
        self.reset_parameters()

    def reset_parameters(self):
        """Draw fresh initial weights (from autograd_lab's seeded generator)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored): a placeholder layer."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Merge dims start_dim..end_dim into one; the default keeps the batch dim: (N, ...) -> (N, -1)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """In training mode, zero each element with probability p and scale the rest by 1/(1-p);
    in eval mode (`model.eval()`), pass the input through unchanged."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(
                f"dropout probability has to be between 0 and 1, but got {p}. Fix: p is the "
                "chance that an element is zeroed, e.g. nn.Dropout(p=0.5)."
            )
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
