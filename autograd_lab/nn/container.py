"""Containers: Sequential (a chain of layers) and ModuleList (a list of layers you call yourself).

    >>> import autograd_lab as ag
    >>> from autograd_lab import nn
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> model[0], len(model), model[-1].out_features
    (Linear(in_features=2, out_features=3, bias=True), 3, 1)

Both register their layers under the names "0", "1", ..., so `model.state_dict()` has keys like
'0.weight' (a Sequential built from an OrderedDict uses the names it was given).
"""

import operator
from collections import OrderedDict

from .module import Module, _indent


def _position(container, idx):
    """A non-negative position for the integer `idx` (negative counts from the end)."""
    n, i = len(container), operator.index(idx)
    if not -n <= i < n:
        raise IndexError(f"index {idx} is out of range")
    return i % n


class _Numbered(Module):
    """What Sequential and ModuleList share: a sequence of child modules, by position."""

    def __delitem__(self, idx):
        names = list(self._modules)
        for name in names[idx] if isinstance(idx, slice) else [names[_position(self, idx)]]:
            delattr(self, name)
        # renumber, as PyTorch does, so the names stay "0", "1", ... in order
        self._modules = {str(i): m for i, m in enumerate(self._modules.values())}

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(_Numbered):
    """`Sequential(*modules)` or `Sequential(OrderedDict(name=module, ...))`: forward feeds the
    input through each module in order."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # a new Sequential of the same modules, keeping their names
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_position(self, idx)]

    def __setitem__(self, idx, module):
        setattr(self, list(self._modules)[_position(self, idx)], module)

    def append(self, module):
        """Add `module` at the end (named by its position); returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index + n if index < 0 else index, module)
        self._modules = {str(i): m for i, m in enumerate(modules)}
        return self


class ModuleList(_Numbered):
    """A list of modules that registers them (a plain Python list would hide their parameters).

    It has no forward: loop over it in your own module's forward.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # renumbered from 0, as in PyTorch
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_position(self, idx))]

    def __setitem__(self, idx, module):
        setattr(self, str(_position(self, idx)), module)

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if not hasattr(modules, "__iter__"):
            raise TypeError(
                f"ModuleList.extend should be called with an iterable, but got {type(modules).__name__}"
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules = {}
        for module in modules:
            self.append(module)

    def __repr__(self):
        # Runs of identical layers are written once, "(0-2): 3 x Linear(...)", as PyTorch does.
        runs = []  # [first index, last index, repr]
        for i, module in enumerate(self._modules.values()):
            text = repr(module)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return self._get_name() + "()"
        lines = [
            _indent(
                f"({first}): {text}"
                if first == last
                else f"({first}-{last}): {last - first + 1} x {text}"
            )
            for first, last, text in runs
        ]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"
