"""In-place shape ops: `x.unsqueeze_(0)` makes x itself the unsqueezed view.

An ordinary in-place op (`x.exp_()`) writes new values into x's storage. A shape op has no new
values to write: x keeps its storage and gets a new shape (and strides) instead. For autograd, x
then is the *result* of the shape op: its grad_fn becomes the op's node (PyTorch's names:
UnsqueezeBackward1, TransposeBackward1, ...), whose edge leads to x's old history.

    >>> y = x * 2              # y: (2, 3), grad_fn MulBackward0
    >>> y.unsqueeze_(0)        # y: (1, 2, 3), grad_fn UnsqueezeBackward1 -> MulBackward0

As with every in-place op, a leaf that requires grad is refused while autograd records.
"""

from ..autograd.grad_mode import is_grad_enabled
from .rearrange import T, t
from .reduction import _dims
from .registry import public
from .shape import Squeeze, Transpose, Unsqueeze, _one_dim, squeeze, transpose, unsqueeze


class UnsqueezeInPlace(Unsqueeze):
    node_name = "UnsqueezeBackward1"


class SqueezeInPlace(Squeeze):
    node_name = "SqueezeBackward3"


class SqueezeDimInPlace(Squeeze):
    node_name = "SqueezeBackward4"


class SqueezeDimsInPlace(Squeeze):
    node_name = "SqueezeBackward5"


class TransposeInPlace(Transpose):
    node_name = "TransposeBackward1"


class TInPlace(T):
    node_name = "TBackward1"


def _become(tensor, result):
    """Make `tensor` itself what the shape op gave: the same storage seen through the new shape,
    and (when recording) the op's node as its grad_fn. Its version goes up, as for any change."""
    tensor._data = result._data
    if result._grad_fn is not None:
        tensor._grad_fn, tensor._output_nr = result._grad_fn, result._output_nr
        tensor._requires_grad = True
    tensor._shared_version_counter()[0] += 1
    if tensor._base is not None:  # a view: the node just recorded is its up-to-date history
        tensor._view_version = tensor._version_counter[0]
    return tensor


def _check_not_a_leaf_that_requires_grad(tensor, name):
    recording = is_grad_enabled() and tensor.requires_grad
    if recording and tensor._base is not None and tensor._one_of_several_views is not None:
        raise tensor._inplace_refusal(True)  # a piece of split/chunk/unbind: as any in-place op
    if recording and tensor.grad_fn is None:
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation "
            f"({name}): autograd needs the leaf as it was. Fix: use the out-of-place "
            f"{name.rstrip('_')}() (y = x.{name.rstrip('_')}(...)), or change it inside "
            "`with no_grad():`."
        )
    base = tensor._base
    if is_grad_enabled() and base is not None and tensor.requires_grad and base.grad_fn is None:
        raise RuntimeError(
            f"a view of a leaf Variable that requires grad is being used in an in-place operation "
            f"({name}): changing the view's shape would change how the leaf's gradient is "
            f"recorded. Fix: use the out-of-place {name.rstrip('_')}(), or work on a copy "
            "(y = x.clone(), then view and change y)."
        )


def _checks_of(op, tensor, *args, name):
    """Run the checks of the out-of-place `op` on `tensor`, in PyTorch's order: an argument of
    the wrong type first, then the refusal of a leaf that requires grad, then the rest (a dim
    that is not there)."""
    try:
        op(tensor.detach(), *args)
    except TypeError:
        raise
    except Exception:
        _check_not_a_leaf_that_requires_grad(tensor, name)
        raise


def _in_place(name, record, tensor, **arguments):
    _check_not_a_leaf_that_requires_grad(tensor, name)
    return _become(tensor, record.apply(tensor, **arguments))


@public("unsqueeze_", method=True, function=False)
def unsqueeze_(input, dim):
    _checks_of(unsqueeze, input, dim, name="unsqueeze_")
    return _in_place("unsqueeze_", UnsqueezeInPlace, input, dim=dim % (input.ndim + 1))


@public("squeeze_", method=True, function=False)
def squeeze_(input, dim=None):
    _checks_of(squeeze, input, dim, name="squeeze_")
    if dim is None:
        return _in_place("squeeze_", SqueezeInPlace, input, dims=tuple(range(input.ndim)))
    record = SqueezeDimInPlace if isinstance(dim, int) else SqueezeDimsInPlace
    return _in_place("squeeze_", record, input, dims=_dims(dim, input.ndim))


@public("transpose_", "swapaxes_", "swapdims_", method=True, function=False)
def transpose_(input, dim0, dim1):
    _checks_of(transpose, input, dim0, dim1, name="transpose_")
    dim0, dim1 = _one_dim(dim0, input.ndim), _one_dim(dim1, input.ndim)
    return _in_place("transpose_", TransposeInPlace, input, dim0=dim0, dim1=dim1)


@public("t_", method=True, function=False)
def t_(input):
    _checks_of(t, input, name="t_")
    return _in_place("t_", TInPlace, input, dim0=0, dim1=1)
