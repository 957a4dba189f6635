"""Saving and loading, as `torch.save` and `torch.load` (exported as autograd_lab.save / load).

    ag.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "checkpoint.pt")
    checkpoint = ag.load("checkpoint.pt")       # safe by default: weights_only=True

Where things live: `archive.py` (save, load, and our file format), `rebuild.py` (what a
weights-only load accepts, and how a tensor is rebuilt), `pytorch_files.py` (reading the files
PyTorch's torch.save writes).
"""

from .archive import load, save

__all__ = ["load", "save"]
