"""CUDA device queries. The numba-CUDA backend is not part of this version: there is no GPU device."""


def is_available():
    """False: this version runs on the CPU only (tensors with device='cuda' are refused clearly)."""
    return False


def device_count():
    return 0
