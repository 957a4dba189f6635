"""May a gradient become a leaf's `.grad` without a copy? Only if nothing else can see it.

AccumulateGrad stores the first gradient a leaf receives as its `.grad`, and a later backward adds
into that storage in place. Storing a gradient some other tensor also holds (a retained gradient, a
tensor a hook kept, the user's `backward(gradient=...)`) would let that addition change it too, so
the engine copies — unless the gradient is provably private, which it usually is: then it is used
as it is, as PyTorch does. That saves a copy of every weight gradient in every training step (and
the memory of the copy, at the moment memory peaks).

"Provably private" is a reference count: the engine's own frames hold a fixed number of references
to a gradient on its way to a leaf, and the gradient's tensor holds its array. That number depends
on the Python version, so it is measured once, on a real backward pass whose gradient nothing else
holds (`calibrate`, run when autograd_lab is imported). Before that, and for anything unusual (a
view, a CUDA array), the answer is no: a copy is always correct.
"""

import sys

import numpy as np

_limits = None  # (references to the tensor, references to its array) of a private gradient
_seen = []
pool = None  # compile/recycle.py, once imported: the one holder whose reference shares nothing
# (it hands an array out again only when nothing but itself references it)


def unshared(g):
    """True when only the engine holds the gradient tensor `g`, and `g` alone holds its array."""
    data = g._data
    refs = (sys.getrefcount(g), sys.getrefcount(data))
    if _limits is None:  # not calibrated (or calibrating): record what a private gradient shows
        _seen.append(refs)
        return False
    if type(data) is not np.ndarray or data.base is not None or not data.flags.c_contiguous:
        return False  # a view, or another device: copy
    if g._requires_grad:  # only a create_graph pass makes gradients that require grad
        return False
    kept = pool is not None and pool.holds(data)
    return refs[0] <= _limits[0] and refs[1] <= _limits[1] + kept


def calibrate():
    """Measure the references a private gradient has when it reaches a leaf (see the docstring)."""
    global _limits
    from ..tensor import _make

    leaf = _make(np.ones(2))
    leaf.requires_grad_()
    _seen.clear()
    (leaf * 2.0).backward(_make(np.ones(2)))  # MulBackward0 makes a fresh gradient for the leaf
    _limits = _seen[0] if len(_seen) == 1 else None  # anything unexpected: keep copying
