"""Conv1d and Conv2d: layers that slide small learned kernels over signals and images.

    >>> import autograd_lab as ag
    >>> conv = ag.nn.Conv2d(1, 6, 5)        # 1 input channel, 6 kernels of 5×5
    >>> conv
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    >>> conv.weight.shape, conv.bias.shape
    (autograd_lab.Size([6, 1, 5, 5]), autograd_lab.Size([6]))
    >>> conv(ag.zeros(1, 1, 32, 32)).shape  # 32 - 5 + 1 = 28
    autograd_lab.Size([1, 6, 28, 28])

The same kernel is used at every position, so a conv layer has few weights and finds a pattern
wherever it is. The arithmetic is in ops/windows.py and ops/conv.py (F.conv1d, F.conv2d); the
initial weights are PyTorch's draws: after manual_seed, the same numbers as torch.nn.Conv2d.
"""

import math

from ..creation import empty
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d and Conv2d share; `_dims` is how many spatial dims they slide over."""

    _dims = None

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer. Fix: groups=1 (the default).")
        if in_channels % groups != 0:
            raise ValueError(
                f"in_channels must be divisible by groups (got {in_channels} and {groups}). Fix: "
                "each group takes in_channels / groups channels."
            )
        if out_channels % groups != 0:
            raise ValueError(
                f"out_channels must be divisible by groups (got {out_channels} and {groups})."
            )
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}. "
                    "Fix: padding='same', 'valid', or a number."
                )
            if padding == "same" and any(s != 1 for s in self._tuple(stride)):
                raise ValueError(
                    "padding='same' is not supported for strided convolutions. Fix: stride=1, "
                    "or a number such as padding=kernel_size // 2."
                )
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {{'circular', 'zeros', 'replicate', 'reflect'}}, "
                f"but got padding_mode={padding_mode!r}."
            )
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"padding_mode={padding_mode!r} is not supported by autograd_lab yet: only "
                "padding_mode='zeros' (the default). Fix: leave padding_mode out."
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = self._tuple(kernel_size)
        self.stride, self.dilation = self._tuple(stride), self._tuple(dilation)
        self.padding = padding if isinstance(padding, str) else self._tuple(padding)
        self.output_padding, self.transposed = self._tuple(0), False
        self.groups, self.padding_mode = groups, padding_mode
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _tuple(self, value):
        return (value,) * self._dims if isinstance(value, int) else tuple(value)

    def reset_parameters(self):
        """PyTorch's default: kaiming_uniform_(a=√5) for the kernels, which is
        U(-1/√fan_in, 1/√fan_in) with fan_in = in_channels / groups · kernel area; the same
        bound for the bias. Drawn in that order from the seeded generator."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):  # 'same' and 'valid' are printed as is
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """Kernels of shape (out_channels, in_channels / groups, kernel_size) slid along signals
    (N, in_channels, L) -> (N, out_channels, L_out)."""

    _dims = 1

    def forward(self, input):
        return F.conv1d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv2d(_ConvNd):
    """Kernels of shape (out_channels, in_channels / groups, k_h, k_w) slid over images
    (N, in_channels, H, W) -> (N, out_channels, H_out, W_out)."""

    _dims = 2

    def forward(self, input):
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )
