"""A model's values: saving (`state_dict`), restoring (`load_state_dict`), converting (`to`).

    >>> import autograd_lab as ag
    >>> model = ag.nn.Linear(2, 1)
    >>> list(model.state_dict())
    ['weight', 'bias']
    >>> model.load_state_dict(ag.nn.Linear(2, 1).state_dict())
    <All keys matched successfully>

A state dict maps dotted names ('0.weight') to tensors: the parameters and the persistent buffers
of every module. Loading copies the values *into* the existing tensors, so an optimizer that holds
the Parameter objects keeps working after a checkpoint is loaded. For the same reason `to()`
converts every Parameter in place rather than replacing it.
"""

from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from .. import types
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor, to_arguments


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys the model wanted but did not get, and the extra ones."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def state_dict(module, *, destination=None, prefix="", keep_vars=False):
    """An OrderedDict name -> tensor of the parameters and persistent buffers, module by module.

    The tensors are detached (they share storage with the model) unless `keep_vars=True`.
    """
    if destination is None:
        destination = OrderedDict()
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buffer in module._buffers.items():
        if buffer is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buffer if keep_vars else buffer.detach()
    for name, child in module._modules.items():
        if child is not None:
            state_dict(
                child, destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
            )
    return destination


def load_state_dict(module, state_dict, strict=True):
    """Copy the values of `state_dict` into the model's own tensors (under no_grad).

    Returns (missing_keys, unexpected_keys). With strict=True (the default) any missing or
    unexpected key is an error; a shape mismatch is always an error.
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    own = module.state_dict(keep_vars=True)  # the model's tensors themselves, to copy into
    missing = [key for key in own if key not in state_dict]
    unexpected = [key for key in state_dict if key not in own]
    errors = []
    if strict and missing:
        errors.append(f"Missing key(s) in state_dict: {_quoted(missing)}. ")
    if strict and unexpected:
        errors.append(f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
    only_key_errors = len(errors)
    for key, target in own.items():
        if key not in state_dict:
            continue
        value = state_dict[key]
        if not isinstance(value, Tensor):
            errors.append(
                f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                f"object from checkpoint but received {type(value)}"
            )
        elif value.shape != target.shape:
            errors.append(
                f"size mismatch for {key}: copying a param with shape {value.shape} from "
                f"checkpoint, the shape in current model is {target.shape}."
            )
        else:
            with no_grad():  # an optimizer-style update of a leaf: not part of any graph
                target.copy_(value)
    if errors:
        fix = (
            "Fix: load a checkpoint saved from a model of the same architecture (compare "
            "list(model.state_dict()) with the checkpoint's keys and shapes)"
        )
        if len(errors) == only_key_errors:
            fix += ", or pass strict=False to load only the keys that match"
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(module).__name__}:\n\t"
            + "\n\t".join(errors)
            + f"\n{fix}."
        )
    return _IncompatibleKeys(missing, unexpected)


def _quoted(keys):
    return ", ".join(f'"{key}"' for key in keys)


def apply_to_tensors(module, convert):
    """`Module._apply`: replace every parameter's values (and its grad's) by `convert(tensor)`,
    keeping the Parameter objects, and every buffer by `convert(buffer)`; children first."""
    for child in module.children():
        apply_to_tensors(child, convert)
    with no_grad():
        for param in module._parameters.values():
            if param is None:
                continue
            param.data = convert(param)
            if param._grad is not None:
                param._grad.data = convert(param._grad)
            # the leaf's cached AccumulateGrad node remembers the old dtype: let a new one be made
            param._grad_accumulator = None
        for name, buffer in module._buffers.items():
            if buffer is not None:
                module._buffers[name] = convert(buffer)
    return module


def to(module, *args, **kwargs):
    """`model.to(dtype)`, `model.to(device)`, `model.to(tensor)`: convert in place, return the model.

    Only floating-point parameters and buffers change dtype (integer counters stay integers);
    devices are handed on to `Tensor.to`.
    """
    device, dtype = to_arguments(args, kwargs)
    if dtype is not None:
        dtype = types.to_dtype(dtype)
        if not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}. Fix: model.to(torch.float64); integer buffers keep their dtype."
            )

    def convert(t):
        return t.to(device=device, dtype=dtype if t.is_floating_point() else None)

    return apply_to_tensors(module, convert)
