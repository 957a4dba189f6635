"""`autograd_lab.utils.data` mirrors `torch.utils.data`, so `from torch.utils.data import ...` survives
the import swap. The code lives in `autograd_lab.data`. `utils.checkpoint` mirrors
`torch.utils.checkpoint` (activation checkpointing)."""

from . import checkpoint, data  # noqa: F401
