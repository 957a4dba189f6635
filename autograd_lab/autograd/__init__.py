"""autograd: the graph's nodes, the backward engine, grad modes and gradcheck (PyTorch's names)."""

from . import functional, profiler  # noqa: F401 - autograd.functional.jacobian, autograd.profiler
from .engine import backward, grad
from .function import AccumulateGrad, Function, Node, RemovableHandle, once_differentiable
from .grad_mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import current_scope, observe, scope

__all__ = [
    "AccumulateGrad",
    "backward",
    "current_scope",
    "detect_anomaly",
    "enable_grad",
    "Function",
    "grad",
    "gradcheck",
    "GradcheckError",
    "gradgradcheck",
    "inference_mode",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "Node",
    "observe",
    "once_differentiable",
    "RemovableHandle",
    "scope",
    "set_detect_anomaly",
    "set_grad_enabled",
]
