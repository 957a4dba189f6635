"""BatchNorm1d and BatchNorm2d: standardize each channel with the statistics of the batch.

    >>> import autograd_lab as ag
    >>> bn = ag.nn.BatchNorm1d(2)
    >>> bn
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> bn(ag.tensor([[1.0, 10.0], [3.0, 30.0]]))   # training mode: each column to mean 0, var 1
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)
    >>> bn.running_mean     # moved 10% of the way towards the batch's mean
    tensor([0.2000, 2.0000])

Training and evaluation differ: in training (`model.train()`) the layer standardizes with the
batch's own mean and variance and updates its buffers `running_mean` and `running_var` (with the
unbiased variance, and `num_batches_tracked` counts the batches); in evaluation (`model.eval()`)
it uses those running statistics, so one sample gives the same answer whatever batch it is in.
"""

from ..creation import empty, ones, tensor, zeros
from ..types import int64
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share; they differ only in the input ranks they accept."""

    def __init__(
        self,
        num_features,
        eps=1e-05,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
        *,
        bias=True,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Forget the statistics gathered so far: mean 0, variance 1, no batches counted."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        return F._batch_norm_layer(
            input,
            self.running_mean,
            self.running_var,
            self.num_batches_tracked,
            self.weight,
            self.bias,
            self.training,
            self.track_running_stats,
            self.momentum,
            self.eps,
        )

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) features or (N, C, L) sequences: one mean and variance per channel C."""

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(
                f"expected 2D or 3D input (got {input.ndim}D input). Fix: BatchNorm1d takes "
                "(N, C) or (N, C, L); for images (N, C, H, W) use BatchNorm2d."
            )


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) images: one mean and variance per channel C."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(
                f"expected 4D input (got {input.ndim}D input). Fix: BatchNorm2d takes images "
                "(N, C, H, W); for (N, C) features use BatchNorm1d."
            )
