"""LayerNorm: standardize each sample's features, the normalization of every transformer block.

    >>> import autograd_lab as ag
    >>> ln = ag.nn.LayerNorm(3)
    >>> ln
    LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> ln(ag.tensor([[1.0, 2.0, 3.0]]))
    tensor([[-1.2247,  0.0000,  1.2247]], grad_fn=<NativeLayerNormBackward0>)

Unlike BatchNorm (batchnorm.py) it looks at one sample at a time, so it behaves the same in
training and in evaluation and keeps no running statistics.
"""

from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, statistics over the last dims of x
    (`normalized_shape`: an int for the features, or a tuple of trailing dims).

    `elementwise_affine=False`: no weight and no bias; `bias=False`: a weight only. The weight
    starts at ones and the bias at zeros, so the layer starts as a plain standardization.
    """

    def __init__(
        self,
        normalized_shape,
        eps=1e-05,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
            f"{self.elementwise_affine}, bias={self.bias is not None}"
        )
