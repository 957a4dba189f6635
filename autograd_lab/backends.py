"""torch.backends: what a script asks before choosing a device, answered for autograd_lab.

    >>> device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"

There is no Apple-GPU (MPS) backend and no cuDNN here: `is_available()` says False. The switches
scripts set for speed or reproducibility (`torch.backends.cudnn.benchmark = True`,
`.deterministic = True`, `allow_tf32`) are accepted and kept, and change nothing: our GPU kernels
(backend/cuda) are always deterministic and never use TF32.
"""

from types import SimpleNamespace


def _no():
    return False


# Apple's Metal GPUs (torch.backends.mps)
mps = SimpleNamespace(is_available=_no, is_built=_no)

# NVIDIA's cuDNN library; autograd_lab's CUDA backend is numba kernels of its own
cudnn = SimpleNamespace(
    is_available=_no, enabled=True, benchmark=False, deterministic=False, allow_tf32=True
)

# CUDA matmul settings (torch.backends.cuda.matmul.allow_tf32); is_built: PyTorch's CUDA build
cuda = SimpleNamespace(is_built=_no, matmul=SimpleNamespace(allow_tf32=False))
