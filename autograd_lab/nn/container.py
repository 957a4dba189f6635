"""Containers: Sequential (a chain of layers), ModuleList (a list of layers you call yourself),
ModuleDict (layers by name) and ParameterList (a list of Parameters).

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
from .parameter import Parameter


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


class ModuleDict(Module):
    """A dict of modules that registers them under their keys (state_dict keys 'key.weight').

    >>> import autograd_lab as ag
    >>> heads = ag.nn.ModuleDict({"cls": ag.nn.Linear(4, 3), "box": ag.nn.Linear(4, 2)})
    >>> list(heads), heads["box"].out_features
    (['cls', 'box'], 2)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add (or replace) modules from a dict, a ModuleDict or (key, module) pairs."""
        pairs = modules.items() if hasattr(modules, "items") else modules
        for j, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is "
                    "required. Fix: (name, module) pairs, or a dict."
                )
            self[pair[0]] = pair[1]


class ParameterList(Module):
    """A list of Parameters, registered under "0", "1", ... (a plain list would hide them from
    `model.parameters()` and the optimizer). A tensor put in becomes a Parameter.

    >>> import autograd_lab as ag
    >>> weights = ag.nn.ParameterList([ag.ones(2, 3), ag.zeros(3)])
    >>> [name for name, _ in weights.named_parameters()]
    ['0', '1']
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._parameters.values())[idx])
        return self._parameters[str(_position(self, idx))]

    def __setitem__(self, idx, param):
        self.register_parameter(str(_position(self, idx)), _as_parameter(param))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        if not hasattr(values, "__iter__"):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                f"{type(values).__name__}"
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        lines = []
        for name, p in self._parameters.items():
            size = "x".join(str(n) for n in p.shape)
            device = "" if p.device.type == "cpu" else f" ({p.device})"
            lines.append(f"  ({name}): Parameter containing: [{p.dtype} of size {size}{device}]")
        return "\n".join(lines)


def _as_parameter(value):
    """A Parameter as is; a tensor wrapped into one (as PyTorch's ParameterList does)."""
    return value if isinstance(value, Parameter) else Parameter(value)
