"""Module: the base class of every layer and model, as in `torch.nn.Module`.

    >>> import autograd_lab as ag
    >>> from autograd_lab import nn
    >>> class TwoLayer(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1 = nn.Linear(2, 4)   # assigning a Module registers it as a child
    ...         self.fc2 = nn.Linear(4, 1)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())
    >>> [name for name, _ in TwoLayer().named_parameters()]
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']

A Module keeps three registries, filled by plain attribute assignment (`__setattr__`):
`_parameters` (Parameters: what the optimizer updates), `_buffers` (other tensors that belong to
the model's state, saved by `state_dict`) and `_modules` (child modules). Everything else
(`parameters()`, `state_dict()`, `to()`, `train()`, the printed tree) walks these registries.
`state.py` holds what reads or writes the tensors' values (`state_dict`, `load_state_dict`,
`to`); this file holds the rest.
"""

import threading

from ..autograd.grad_mode import _state, no_grad
from ..autograd.graph import scope
from ..tensor import Tensor
from .parameter import Parameter
from .state import apply_to_tensors, load_state_dict, state_dict, to


class Module:
    """Base class for all layers and models: subclass it, register parts in `__init__`, and
    write `forward`. Call the module (`model(x)`), not `forward`."""

    def __init__(self):
        # object.__setattr__: our own __setattr__ needs these registries to exist already.
        set_attribute = object.__setattr__
        set_attribute(self, "training", True)
        set_attribute(self, "_parameters", {})
        set_attribute(self, "_buffers", {})
        set_attribute(self, "_non_persistent_buffers_set", set())
        set_attribute(self, "_modules", {})

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function. Fix: '
            f"define `def forward(self, x): ...` in class {type(self).__name__} (it says what "
            "calling the module computes)."
        )

    def __call__(self, *args, **kwargs):
        if _state.on_node is None:  # nobody is watching the graph: the lean path of every step
            return self.forward(*args, **kwargs)
        return _forward_in_scope(self, args, kwargs)

    # ---- registering parameters, buffers and children ---------------------------------------
    def register_parameter(self, name, param):
        """Add a Parameter (or None, a declared but absent parameter) under `name`."""
        _check_name(self, name, "_parameters", "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(nn.Parameter or None required). Fix: wrap it, nn.Parameter(tensor)."
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is part of the model's state but not trained (e.g. running stats).

        `persistent=False` keeps it out of `state_dict()`.
        """
        _check_name(self, name, "_buffers", "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module under `name` (what `self.name = module` does)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, "_modules", "module")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        registries = self.__dict__
        params, modules = registries.get("_parameters"), registries.get("_modules")
        buffers = registries.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(_before_init(self, "parameters"))
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' (nn.Parameter "
                    f"or None expected). Fix: self.{name} = nn.Parameter(tensor), or change the "
                    f"values in place: with torch.no_grad(): self.{name}.copy_(tensor)."
                )
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError(_before_init(self, "module"))
            self._forget(name)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(nn.Module or None expected)"
                )
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(Tensor or None expected)"
                )
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        """Remove `name` from wherever it is, before registering it anew somewhere else."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        """Called only when normal lookup fails: registered parts live in the registries."""
        registries = self.__dict__
        if "_parameters" not in registries:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}': Module.__init__() was "
                f"never called. Fix: call super().__init__() first in {type(self).__name__}.__init__"
            )
        for registry in ("_parameters", "_buffers", "_modules"):
            found = registries[registry]
            if name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        names = list(dir(type(self))) + list(self.__dict__)
        names += list(self._parameters) + list(self._modules) + list(self._buffers)
        # "0", "1" (Sequential's children) are not valid attribute names; tab completion skips them.
        return sorted({n for n in names if not n[:1].isdigit()})

    # ---- walking the tree ---------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and all below it; "" names this module."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:  # modules hash by identity
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + ("." if prefix else "") + name
                yield from child.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """(name, module) for the direct children, each module once."""
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        """(dotted name, tensor) from one registry of every module; a shared tensor once."""
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) pairs, e.g. ('fc1.weight', Parameter(...))."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every Parameter of the model, once each: what you hand to an optimizer."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn):
        """Call `fn(module)` on every child (recursively), then on self; e.g. custom init."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ---- training state -------------------------------------------------------------------------
    def train(self, mode=True):
        """Training mode (the default) or, with mode=False, evaluation mode, for the whole tree.

        It changes what layers like Dropout do; it does not switch off gradients (no_grad does).
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        """Evaluation mode: `train(False)`."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Switch gradient recording on or off for every parameter (e.g. to freeze a layer)."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Forget the gradients of the last backward: `.grad = None` (or zeros, set_to_none=False)."""
        for param in self.parameters():
            grad = param._grad
            if grad is None:
                continue
            if set_to_none:
                param._grad = None
            else:
                if grad.grad_fn is not None:  # a grad from create_graph=True: cut it off first
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                with no_grad():
                    grad.zero_()

    # ---- converting every parameter and buffer --------------------------------------------------
    _apply = apply_to_tensors
    to = to

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else f"cuda:{device}")

    state_dict = state_dict
    load_state_dict = load_state_dict

    # ---- printing ---------------------------------------------------------------------------------
    def extra_repr(self):
        """The text inside `Name(...)` besides the children; layers override it."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        own = self.extra_repr().split("\n") if self.extra_repr() else []
        children = [f"({name}): {_indent(repr(child))}" for name, child in self._modules.items()]
        if not children and len(own) <= 1:
            return f"{self._get_name()}({''.join(own)})"
        return self._get_name() + "(\n  " + "\n  ".join(own + children) + "\n)"


def _indent(text):
    """Indent every line but the first by two spaces (blank lines stay empty)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + ["  " + line if line.strip() else "" for line in rest])


def _before_init(module, kind):
    cls = type(module).__name__
    return (
        f"cannot assign {kind} before Module.__init__() call. Fix: call super().__init__() as the "
        f"first line of {cls}.__init__, before assigning layers or parameters."
    )


def _check_name(module, name, registry, kind):
    """The checks every register_* makes on a name (PyTorch's exception types)."""
    if registry not in module.__dict__:
        raise AttributeError(_before_init(module, kind))
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in module.__dict__[registry]:
        raise KeyError(f"attribute '{name}' already exists")


# ---- scopes for the graph viewer ---------------------------------------------------------------

_running = threading.local()  # per thread: the modules whose forward is running, innermost last


def _forward_in_scope(module, args, kwargs):
    """Run forward inside `scope(label)`, so a viewer groups the nodes this module creates.

    Its parameters also get their qualified names ('fc1.weight') for the viewer to print, where a
    notebook has no variable of that name to show.
    """
    stack = _running.__dict__.setdefault("stack", [])
    parent, parent_path = stack[-1] if stack else (None, "")
    name, label = _scope_label(module, parent)
    path = f"{parent_path}.{name}" if parent_path and name else (name or parent_path)
    for param_name, param in module._parameters.items():
        if param is not None:
            param._name = f"{path}.{param_name}" if path else param_name
    stack.append((module, path))
    try:
        with scope(label):
            return module.forward(*args, **kwargs)
    finally:
        stack.pop()


def _scope_label(module, parent):
    """('fc1', 'fc1 (Linear)'): the name the calling module registered it under, and its class."""
    kind = type(module).__name__
    if parent is not None:
        for name, child in parent._modules.items():
            if child is module:
                return name, f"{name} ({kind})"
        for name, child in parent.named_modules(remove_duplicate=False):
            if child is module and name:  # a grandchild called directly: 'block.fc (Linear)'
                return name, f"{name} ({kind})"
    return "", kind  # a root module, or one its caller did not register
