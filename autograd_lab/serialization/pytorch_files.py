"""Reading files written by PyTorch's `torch.save`: tensors, state_dicts and plain containers.

    autograd_lab.load("resnet_weights.pt")   # a state_dict saved by PyTorch: autograd_lab tensors

`autograd_lab.load` comes here when the archive is PyTorch's. PyTorch's format (since 1.6) is a
zip archive, `<name>/data.pkl` plus one entry `<name>/data/<key>` per storage:

- each *storage* is a flat run of numbers, written as raw little-endian bytes;
- in data.pkl every tensor is a call `torch._utils._rebuild_tensor_v2(storage, storage_offset,
  size, stride, requires_grad, backward_hooks)`: the tensor is a strided window on a storage, and
  the storage itself is a reference ("persistent id") `('storage', torch.FloatStorage, key,
  location, numel)` to an entry of the archive.

So reading one needs no PyTorch: the unpickler below knows the few names such a file uses (the
storage types, the rebuild functions, torch.Size, torch.device, the dtypes) and maps each to ours;
any other name (a whole model pickled with its classes, say) is refused before anything is called,
whatever `weights_only` says: autograd_lab cannot build PyTorch's classes.
NB: each tensor loads with its own copy of its values (views of one storage do not share memory),
and a tensor saved on a device autograd_lab does not have (e.g. 'mps') loads on the CPU.
"""

import io
import pickle

import numpy as np

from .. import types
from ..nn.parameter import Parameter
from .rebuild import SAFE_GLOBALS, rebuild_tensor

# PyTorch's storage types: the dtype of the numbers in each storage entry.
STORAGE_DTYPES = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}
TORCH_DTYPES = {"float32", "float64", "float16", "int64", "int32", "uint8", "bool"}
OTHER_DTYPES = {  # PyTorch's storages of dtypes autograd_lab lacks, for the error message
    "BFloat16Storage": "bfloat16",
    "CharStorage": "int8",
    "ShortStorage": "int16",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}


class _StorageType:
    """What `torch.FloatStorage` & co stand for here: the name that says the numbers' dtype."""

    def __init__(self, name):
        self.name = name


class _Storage:
    """One storage of the archive: its numbers (shared by the tensors that view it) and device."""

    def __init__(self, values, location):
        self.values, self.location = values, location


class _PyTorchUnpickler(pickle.Unpickler):
    """Maps the names a PyTorch file uses to ours; refuses every other name."""

    def __init__(self, file, archive, folder, map_location):
        super().__init__(file)
        self.archive, self.folder, self.map_location = archive, folder, map_location
        self.storages = {}  # key -> _Storage: tensors that share a storage read it once
        self.byteorder = "<"
        if f"{folder}/byteorder" in archive.namelist():
            self.byteorder = "<" if archive.read(f"{folder}/byteorder") == b"little" else ">"

    def find_class(self, module, name):
        module = "builtins" if module == "__builtin__" else module
        if (module, name) in SAFE_GLOBALS:
            return SAFE_GLOBALS[module, name]
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_parameter"):
            return getattr(self, name)
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        if module == "torch" and name == "Size":
            return types.Size
        if module == "torch" and name == "device":
            return types.device
        if module == "torch" and name in TORCH_DTYPES:
            return types.to_dtype(name)
        if module == "torch" and (name.endswith("Storage") or name in OTHER_DTYPES.values()):
            dtype = OTHER_DTYPES.get(name, name)
            raise _unsupported(f"torch.{name}", f"dtype {dtype}, which autograd_lab does not have")
        raise _unsupported(f"{module}.{name}", "not a tensor, a number or a plain container")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unknown entry in a PyTorch file: {pid!r}")
        _, storage_type, key, location, numel = pid
        if key not in self.storages:
            dtype = np.dtype(STORAGE_DTYPES[storage_type.name]).newbyteorder(self.byteorder)
            raw = self.archive.read(f"{self.folder}/data/{key}")
            values = np.frombuffer(raw, dtype=dtype, count=numel).astype(dtype.newbyteorder("="))
            self.storages[key] = _Storage(values, _location(location))
        return self.storages[key]

    # ---- the two functions a PyTorch file calls to make its tensors ---------------------------
    def _rebuild_tensor_v2(
        self, storage, storage_offset, size, stride, requires_grad, backward_hooks, *metadata
    ):
        """The tensor that sees `storage` from storage_offset with this size and stride."""
        values = storage.values
        window = np.lib.stride_tricks.as_strided(
            values[storage_offset:],
            shape=tuple(size),
            strides=tuple(step * values.itemsize for step in stride),
        )
        return rebuild_tensor(
            np.array(window), requires_grad, False, storage.location, self.map_location
        )

    def _rebuild_parameter(self, data, requires_grad, backward_hooks, *state):
        return Parameter(data, requires_grad)


def _location(location):
    """PyTorch's location strings ('cpu', 'cuda:0', 'mps') as the device a tensor loads on."""
    return location if location.split(":")[0] in ("cpu", "cuda") else "cpu"


def load_pytorch_archive(archive, map_location):
    """The object in a zip archive written by torch.save (see the module docstring)."""
    pickle_name = next(name for name in archive.namelist() if name.endswith("data.pkl"))
    folder = pickle_name.rpartition("/")[0]
    data = io.BytesIO(archive.read(pickle_name))
    return _PyTorchUnpickler(data, archive, folder, map_location).load()


def _unsupported(what, why):
    return pickle.UnpicklingError(
        f"this file was written by PyTorch and holds {what} ({why}), which autograd_lab cannot "
        "rebuild: from PyTorch files it reads tensors (float16/32/64, int32/64, uint8, bool), "
        "state_dicts and plain containers. Fix: in PyTorch, load the file and save what you need "
        "as tensors, e.g. torch.save(model.state_dict(), path) (convert other dtypes with "
        "t.float()), or convert each tensor with autograd_lab.tensor(t.numpy())."
    )
