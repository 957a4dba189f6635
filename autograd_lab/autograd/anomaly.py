"""Anomaly mode's reports: when a node's backward fails or makes NaN, say where it was created.

Inside `detect_anomaly()` (grad_mode.py) every node keeps the user's stack at its creation
(`node._trace`). The engine calls `note_creation` when a backward raises and `check_nan` after
each backward; both print the last frames of that stack, the user's own lines.

    >>> import autograd_lab as ag
    >>> x = ag.tensor([0.0, 1.0], requires_grad=True)
    >>> with ag.autograd.detect_anomaly():
    ...     (x.sqrt() * 0).sum().backward()   # d sqrt(x)/dx is inf at 0; times 0 it is NaN
    Traceback (most recent call last):
    RuntimeError: SqrtBackward0 produced NaN in the gradient for its input 0. The operation was created at:
    ...
"""

import sys
import traceback

import numpy as np

from ..tensor import Tensor


def note_creation(error, node):
    """Add to `error`, raised by `node`'s backward, where the node was created."""
    text = f"The failing backward belongs to {node.name()}, created at:\n{_format(node._trace)}"
    if hasattr(error, "add_note"):  # Python >= 3.11 shows it under the traceback
        error.add_note(text)
    else:
        print(text, file=sys.stderr)


def check_nan(node, results):
    """Raise if `node`'s backward made a NaN gradient (NaN only, as PyTorch: inf is legitimate)."""
    for i, g in enumerate(results):
        if isinstance(g, Tensor) and np.isnan(g._data).any():
            where = _format(node._trace) if node._trace else "  (created before anomaly mode)"
            raise RuntimeError(
                f"{node.name()} produced NaN in the gradient for its input {i}. The operation was "
                f"created at:\n{where}"
            )


def _format(frames):
    return "".join(traceback.format_list(frames[-5:]))
