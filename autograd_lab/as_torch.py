"""`autograd_lab.as_torch()`: after it, `import torch` imports autograd_lab. How Python's import
system makes a one-line switch possible.

    import autograd_lab
    autograd_lab.as_torch()          # the one line
    import torch                     # autograd_lab
    import torch.nn.functional as F  # autograd_lab.nn.functional
    from torch.utils.data import DataLoader

What `import torch.nn as nn` does, step by step:

1. It looks for "torch", then "torch.nn", in `sys.modules`, the dictionary of every module already
   imported. A name found there is used as it is: nothing is read from disk a second time.
2. A name not found there is offered to each *finder* on the list `sys.meta_path`, in order. The
   first finder that answers with a *module spec* (a name and a loader) wins; the usual finders
   look in the folders of `sys.path`, where they would find PyTorch.
3. The spec's loader makes the module; Python files it in `sys.modules` under the name asked for,
   and a submodule also becomes an attribute of its parent (`torch.nn`).

So `as_torch()` puts one small finder at the *front* of `sys.meta_path`. It answers for "torch"
and every "torch.<something>", and its loader hands back the autograd_lab module of the same
place (`torch.nn.functional` is `autograd_lab.nn.functional`, the very same object), which
Python then files under the torch name. Undoing it takes the finder off the list and the torch
names out of `sys.modules`, so the next `import torch` finds PyTorch on disk again.

NB: nothing here changes autograd_lab or PyTorch; only the lookup of the *name* "torch" changes,
for the whole process: a library that itself imports torch after the switch gets autograd_lab too.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

TORCH = "torch"
OURS = "autograd_lab"


def as_torch(on=True):
    """Make every later `import torch[.x]` give `autograd_lab[.x]`; `as_torch(False)` undoes it.

    Returns the switch, which also works as a context manager:

        with autograd_lab.as_torch():
            import torch              # autograd_lab inside the block, PyTorch again after it

    Call it before anything imports PyTorch: a process cannot have both under one name.
    """
    if not on:
        SWITCH.undo()
        return SWITCH
    SWITCH.turn_on()
    return SWITCH


def _our_name(torch_name):
    """'torch.nn.functional' -> 'autograd_lab.nn.functional'."""
    return OURS + torch_name[len(TORCH) :]


def _is_torch_name(name):
    return name == TORCH or name.startswith(TORCH + ".")


class TorchSwitch:
    """The state of the switch: whether its finder is on `sys.meta_path`, and `undo()`."""

    def __init__(self):
        self.finder = TorchToAutogradLab()

    @property
    def active(self):
        return self.finder in sys.meta_path

    def turn_on(self):
        if self.active:
            return
        real = sys.modules.get(TORCH)
        if real is not None and getattr(real, "__name__", None) != OURS:
            # Objects already made by real PyTorch would mix with ours, and `torch` in the
            # notebook's namespace would still be PyTorch: refuse rather than half switch.
            raise RuntimeError(
                "as_torch() was called after the real PyTorch was already imported in this "
                "process, so `import torch` would keep giving PyTorch. Restart the kernel (or "
                "Python) and call autograd_lab.as_torch() before anything imports torch."
            )
        sys.meta_path.insert(0, self.finder)

    def undo(self):
        """Take the finder away and forget the torch names it made; PyTorch imports as usual."""
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        for name in list(sys.modules):
            module = sys.modules[name]
            if _is_torch_name(name) and getattr(module, "__name__", "").startswith(OURS):
                del sys.modules[name]

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.undo()

    def __repr__(self):
        state = "on: `import torch` gives autograd_lab" if self.active else "off"
        return f"<autograd_lab.as_torch switch, {state}>"


class TorchToAutogradLab(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A finder (and its own loader) that answers for the name torch with autograd_lab."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_torch_name(fullname):
            return None  # not ours to answer: the next finder on sys.meta_path looks
        ours = _our_name(fullname)
        module = our_module(ours)
        if module is None:
            raise ModuleNotFoundError(
                f"No module named '{fullname}' in autograd_lab: `import torch` gives autograd_lab "
                f"here (autograd_lab.as_torch() is on), and autograd_lab does not provide "
                f"'{ours}'. Run this script with real PyTorch, or call autograd_lab.as_torch(False) "
                "before importing it.",
                name=fullname,
            )
        # loader_state carries our module to create_module, and its own spec to exec_module.
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=module)

    def create_module(self, spec):
        """The module Python files under the torch name: our own, already made and initialised."""
        module = spec.loader_state
        spec.loader_state = module.__spec__  # Python overwrites __spec__ next: keep the real one
        return module

    def exec_module(self, module):
        # Its code already ran when autograd_lab imported it: only undo Python's relabelling, so
        # that autograd_lab's modules keep saying where they really come from.
        module.__spec__ = module.__spec__.loader_state


def our_module(name):
    """autograd_lab's module called `name` (imported now if needed), or None when there is none.

    A module is a file of the package, or a module object the package keeps as an attribute (a
    namespace such as `linalg` may be made that way): both are what `torch.<name>` means.
    """
    if importlib.util.find_spec(name) is not None:
        return importlib.import_module(name)
    parent_name, _, child = name.rpartition(".")
    candidate = getattr(importlib.import_module(parent_name), child, None)
    return candidate if isinstance(candidate, types.ModuleType) else None


SWITCH = TorchSwitch()  # one per process, as there is one sys.meta_path
