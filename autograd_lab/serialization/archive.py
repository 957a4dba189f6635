"""Saving and loading: `save(obj, f)` and `load(f)`, as `torch.save` and `torch.load`.

    >>> import io
    >>> import autograd_lab as ag
    >>> model = ag.nn.Linear(2, 1)
    >>> buffer = io.BytesIO()             # or a path: ag.save(model.state_dict(), "model.pt")
    >>> ag.save(model.state_dict(), buffer)
    >>> _ = buffer.seek(0)
    >>> model.load_state_dict(ag.load(buffer))
    <All keys matched successfully>

`obj` is anything made of tensors, numbers, strings and containers (dict, OrderedDict, list, tuple,
set): a tensor, a model's or an optimizer's `state_dict()`, a checkpoint dict holding both.

The file is our own format (torch.load cannot read it): a zip archive, as PyTorch's is, holding
- `autograd_lab/version`: the format's number;
- `autograd_lab/data.pkl`: `obj`, pickled, with each tensor replaced by a reference to
- `autograd_lab/tensors/<n>.npy`: that tensor's values in numpy's .npy format (dtype, shape and
  the numbers; no code).
A file written by PyTorch's `torch.save` is recognised and read too: see `pytorch_files.py`;
`rebuild.py` lists what a weights-only load accepts.

Safety: unpickling can call any function a file names, so a file from someone else could run
code on your machine. With `weights_only=True` (the default, as in PyTorch since 2.6) the loader
only rebuilds tensors, numbers, strings and plain containers: any other name in the file stops the
load with `pickle.UnpicklingError` *before* anything is called. `weights_only=False` also loads
other objects (a whole model saved with `save(model, f)`): only for files you trust.

What a tensor keeps: its values, dtype, shape, device, `requires_grad`, and whether it was an
`nn.Parameter`; not its `.grad` nor its graph (a tensor saved from the middle of a graph loads as a
leaf that requires grad, as in PyTorch). The same tensor saved twice in `obj` loads as one tensor.
NB: PyTorch also keeps *shared storage* (a view and its base still share memory after loading);
here every tensor's values are stored separately, so they load as independent tensors.
"""

import contextlib
import io
import os
import pickle
import zipfile

import numpy as np

from ..nn.parameter import Parameter
from ..tensor import Tensor
from .pytorch_files import load_pytorch_archive
from .rebuild import SAFE_GLOBALS, rebuild_tensor, refuse_global

FORMAT_VERSION = "1"
_FOLDER = "autograd_lab"  # every entry of our archive is in this folder


def save(obj, f, pickle_module=None, pickle_protocol=2):
    """Write `obj` (tensors, numbers, containers, state_dicts) to `f`, a path or a binary file."""
    _check_pickle_module(pickle_module)
    if pickle_protocol < 2:
        raise ValueError(
            f"pickle_protocol={pickle_protocol} is too old to store tensors; use 2 (the default) "
            "or higher."
        )
    with _opened(f, "wb") as file, zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{_FOLDER}/version", FORMAT_VERSION + "\n")
        data = io.BytesIO()
        _TensorPickler(data, pickle_protocol, archive).dump(obj)
        archive.writestr(f"{_FOLDER}/data.pkl", data.getvalue())


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None):
    """Read what `save` wrote to `f` (a path or a binary file); returns the saved object.

    `map_location` moves tensors: "cpu", a device, a dict {saved device: new device}, e.g.
    {"cuda:0": "cpu"}, or PyTorch's old `lambda storage, loc: storage` (see rebuild.HostStorage). `weights_only` (None means True, as in PyTorch) refuses every object that is
    not a tensor, a number or a plain container, so loading cannot run code hidden in the file.
    """
    _check_pickle_module(pickle_module)
    if mmap:
        raise ValueError(
            "mmap=True is not supported by autograd_lab.load: it reads the whole file into "
            "memory. Fix: leave mmap out."
        )
    weights_only = True if weights_only is None else weights_only
    with _opened(f, "rb") as file:
        start = file.read(4)
        file.seek(-len(start), os.SEEK_CUR)
        if start != b"PK\x03\x04":  # every zip archive starts with these four bytes
            raise _not_our_file(start)
        with zipfile.ZipFile(file) as archive:
            names = archive.namelist()
            if f"{_FOLDER}/data.pkl" in names:
                data = io.BytesIO(archive.read(f"{_FOLDER}/data.pkl"))
                unpickler = _TensorUnpickler(data, archive, map_location, weights_only)
                return unpickler.load()
            if any(name.endswith("data.pkl") for name in names):
                return load_pytorch_archive(archive, map_location)
            raise pickle.UnpicklingError(
                "this zip archive was not written by autograd_lab.save (nor by torch.save): it "
                "has no data.pkl. Fix: load a file written with autograd_lab.save(obj, path)."
            )


# ---- writing ------------------------------------------------------------------------------------
class _TensorPickler(pickle.Pickler):
    """A pickler that stores each tensor as a .npy entry of the archive and pickles a reference."""

    def __init__(self, file, protocol, archive):
        super().__init__(file, protocol)
        self.archive = archive
        self.keys = {}  # id(tensor) -> its entry's number: a tensor met twice is stored once
        self.kept = []  # the tensors stored, alive until the end, so no id() is reused

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None  # everything else is pickled as usual
        key = self.keys.get(id(obj))
        if key is None:
            key = self.keys[id(obj)] = str(len(self.keys))
            self.kept.append(obj)
            values = io.BytesIO()
            np.save(values, np.asarray(obj._data), allow_pickle=False)  # a GPU array: to the host
            self.archive.writestr(f"{_FOLDER}/tensors/{key}.npy", values.getvalue())
        return ("tensor", key, obj.requires_grad, isinstance(obj, Parameter), str(obj.device))


# ---- reading ------------------------------------------------------------------------------------
class _TensorUnpickler(pickle.Unpickler):
    def __init__(self, file, archive, map_location, weights_only):
        super().__init__(file)
        self.archive = archive
        self.map_location = map_location
        self.weights_only = weights_only
        self.loaded = {}  # key -> tensor: a tensor saved twice comes back as one object

    def find_class(self, module, name):
        if not self.weights_only:
            return super().find_class(module, name)
        module = "builtins" if module == "__builtin__" else module  # protocol 2's old name
        if (module, name) not in SAFE_GLOBALS:
            raise refuse_global(module, name)
        return SAFE_GLOBALS[module, name]

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "tensor"):
            raise pickle.UnpicklingError(f"this file refers to an unknown kind of entry: {pid!r}")
        _, key, requires_grad, is_parameter, device = pid
        if key not in self.loaded:
            with self.archive.open(f"{_FOLDER}/tensors/{key}.npy") as entry:
                values = np.load(io.BytesIO(entry.read()), allow_pickle=False)  # data, never code
            self.loaded[key] = rebuild_tensor(
                values, requires_grad, is_parameter, device, self.map_location
            )
        return self.loaded[key]


# ---- files and what is not ours ------------------------------------------------------------------
@contextlib.contextmanager
def _opened(f, mode):
    """`with _opened(f, mode) as file:` for f a path (opened and closed here) or a file object."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as file:
            yield file
        return
    if isinstance(f, io.TextIOBase):
        raise TypeError(
            "the file was opened in text mode; autograd_lab.save and load write bytes. Fix: "
            f"open it with mode '{mode}', or pass the path itself."
        )
    yield f


def _check_pickle_module(pickle_module):
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(
            f"pickle_module={getattr(pickle_module, '__name__', pickle_module)} is not supported: "
            "autograd_lab.save and load use Python's pickle module. Fix: leave pickle_module out."
        )


def _not_our_file(start):
    if start[:1] == b"\x80":  # a pickle stream: PyTorch's legacy format, or pickle.dump
        return pickle.UnpicklingError(
            "this file is a plain pickle, not an archive written by autograd_lab.save: it was "
            "probably written by torch.save in PyTorch's legacy format "
            "(_use_new_zipfile_serialization=False) or by pickle.dump. Fix: load it with PyTorch "
            "and save it again with torch.save(obj, path) (the zip format, which autograd_lab "
            "reads), or convert each tensor with autograd_lab.tensor(t.numpy())."
        )
    return pickle.UnpicklingError(
        f"this file was not written by autograd_lab.save: it starts with {start!r}, where an "
        "archive written by save starts with b'PK\\x03\\x04'. Fix: load a file written with "
        "autograd_lab.save(obj, path)."
    )
