"""What a load may build: tensors, and the few plain values a weights-only load accepts.

Both readers (archive.py for our files, pytorch_files.py for PyTorch's) unpickle with a
`find_class` that looks names up in SAFE_GLOBALS, and make their tensors with `rebuild_tensor`.
"""

import codecs
import pickle
from collections import Counter, OrderedDict

from .. import storage, types
from ..nn.parameter import Parameter
from ..tensor import _make

# What a weights-only load may rebuild besides tensors: plain containers and values (PyTorch's list,
# less its own classes, plus ours). Each only builds data and can call nothing else.
SAFE_GLOBALS = {
    ("collections", "OrderedDict"): OrderedDict,
    ("collections", "Counter"): Counter,  # MultiStepLR's milestones
    ("builtins", "set"): set,
    ("builtins", "complex"): complex,
    ("builtins", "bytearray"): bytearray,
    ("_codecs", "encode"): codecs.encode,  # how pickle protocol 2 writes bytes
    ("autograd_lab.types", "_named"): types._named,  # a dtype (autograd_lab.float32 & co)
    ("autograd_lab.types", "to_dtype"): types.to_dtype,
    ("autograd_lab.types", "device"): types.device,
    ("autograd_lab.types", "Size"): types.Size,
}


def refuse_global(module, name):
    """The error of a weights-only load that met a name it will not call."""
    return pickle.UnpicklingError(
        f"Weights only load failed: Unsupported global: GLOBAL {module}.{name} was not an allowed "
        "global. With weights_only=True (the default) loading only rebuilds tensors, numbers, "
        "strings and plain containers, so that a file cannot run code on your machine; this file "
        f"needs {module}.{name} to be called. If you trust where the file came from, load it with "
        "weights_only=False. To share a model, save its numbers instead: "
        "save(model.state_dict(), path), then model.load_state_dict(load(path))."
    )


def rebuild_tensor(values, requires_grad, is_parameter, saved_device, map_location):
    """A loaded tensor: a leaf holding `values` on the device map_location picks."""
    device = storage.resolve_device(target_device(saved_device, map_location))
    tensor = _make(storage.move(values, device))
    if is_parameter:
        return Parameter(tensor, bool(requires_grad))
    tensor._requires_grad = bool(requires_grad)
    return tensor


def target_device(saved, map_location):
    """Where a tensor saved on device `saved` (a string, e.g. 'cuda:0') loads."""
    if map_location is None:
        return saved
    if isinstance(map_location, dict):  # {saved device: new device}; others stay where they were
        return map_location.get(saved, saved)
    if callable(map_location) and not isinstance(map_location, types.device):
        return _ask_function(map_location, saved)
    return map_location


class HostStorage:
    """What a map_location function receives here, in place of PyTorch's storage on the CPU.

    PyTorch calls `map_location(storage, location)` and uses the storage it returns. The old idiom
    `lambda storage, loc: storage` (keep it on the CPU) and `lambda storage, loc: storage.cuda()`
    work with this stand-in; the numbers themselves are never handed to the function.
    """

    def cpu(self):
        return "cpu"

    def cuda(self, device=None):
        return "cuda" if device is None else str(types.device(device))


def _ask_function(map_location, saved):
    answer = map_location(HostStorage(), saved)
    if answer is None:  # PyTorch's rule: None leaves the tensor where it was saved
        return saved
    if isinstance(answer, HostStorage):
        return "cpu"
    if isinstance(answer, (str, types.device)):
        return answer
    raise TypeError(
        f"map_location returned {type(answer).__name__}; autograd_lab understands a function "
        "that returns its storage argument (the CPU), storage.cuda(), storage.cpu() or None. "
        "Fix: pass map_location='cpu' (or a device, or a dict such as {'cuda:0': 'cpu'})."
    )
