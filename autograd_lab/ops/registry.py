"""The op records, read back: every list of ops in the package is derived from here.

An op is written once: its class in ops/*.py (forward, backward and the record fields described
by `Op` in autograd/function.py), and, where one public function chooses among several classes
(`mul` records MulBackward0 for a tensor or for a number), that function, marked `@public`:

    functions()        autograd_lab.<name>(...): what `from autograd_lab.ops import *` exports
    methods()          Tensor.<name>(...), bound in tensor.py
    inplace_methods()  Tensor.<name>_(...): x.exp_() stores exp(x) into x, bound in tensor.py
    op_classes()       every op class: compile/rules.py reads their kernels, tests/ the rest
    derivatives()      {node name: its local derivative in words}, for the graph viewer

    >>> functions()["tan"](autograd_lab.tensor(0.5))      # generated from Tan's record
    tensor(0.5463)
"""

import functools
import inspect

from ..autograd.function import Op
from .out import write_into

_public = {}  # name -> (function, is a method?, has an in-place method?), from @public
# names of @public(..., function=False): Tensor methods with no autograd_lab.<name>
_methods_only = set()
_generated = {}  # op class -> the public function made from its record


def public(*names, method=False, inplace=False, out=False, function=True):
    """Make a hand-written function public under `names` (default: its own name), and a Tensor
    method (`method=True`) with an in-place twin (`inplace=True`); `out=True`: it also takes
    PyTorch's `out=` keyword (ops/out.py), as every record's function does. `function=False`: a
    Tensor method only, where PyTorch has no function of that name (x.repeat(2), no torch.repeat).

        @public("mul", "multiply", method=True, inplace=True)
        def mul(input, other): ...
    """

    function_too = function

    def register(function):
        if "dim" in inspect.signature(function).parameters:
            function = _accepting_numpy_names(function)
        if out:
            function = _accepting_out(function, (names or (function.__name__,))[0])
        for name in names or (function.__name__,):
            if name in _public or any(name in _names(cls) for cls in op_classes()):
                raise RuntimeError(f"two ops are both public as {name!r}")
            _public[name] = (function, method, inplace)
            if not function_too:
                _methods_only.add(name)
        return function

    return register


def op_classes():
    """Every op class of autograd_lab.ops, in the order they were defined."""
    package = __name__.rsplit(".", 1)[0] + "."
    found, stack = [], list(reversed(Op.__subclasses__()))
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith(package):
            found.append(cls)
        stack.extend(reversed(cls.__subclasses__()))
    return found


def functions():
    """{public name: function}: the records' own names, then the hand-written public ones."""
    found = {}
    for cls in op_classes():
        for name in _names(cls):
            _add(found, name, _function_of(cls, name))
    for name, (function, _, _) in _public.items():
        if name not in _methods_only:
            _add(found, name, function)
    return found


def methods():
    """{name: function} of the Tensor methods: `x.<name>(...)` is `<name>(x, ...)`."""
    found = {
        name: _function_of(cls, name) for cls in op_classes() if cls.method for name in _names(cls)
    }
    found.update({name: f for name, (f, method, _) in _public.items() if method})
    return found


def inplace_methods():
    """{name: function} of the in-place methods: `x.<name>_(...)` stores `<name>(x, ...)` in x."""
    found = {
        name: _function_of(cls, name) for cls in op_classes() if cls.inplace for name in _names(cls)
    }
    found.update({name: f for name, (f, _, inplace) in _public.items() if inplace})
    return found


def derivatives():
    """{node name: the local derivative in words} of every op class that says it."""
    found = {}
    for cls in op_classes():
        if cls.derivative is None:
            continue
        if found.get(cls.node_name, cls.derivative) != cls.derivative:
            raise RuntimeError(f"two op classes record {cls.node_name} with different derivatives")
        found[cls.node_name] = cls.derivative
    return found


def kernel_of(name):
    """The element-wise kernel of the public function `name` (a comparison's, say), or None."""
    return getattr(functions().get(name), "kernel", None)


def _names(cls):
    """The public names a class declares itself (a subclass does not inherit them)."""
    names = cls.__dict__.get("function")
    return () if names is None else (names,) if isinstance(names, str) else tuple(names)


def _add(found, name, function):
    if name in found and found[name] is not function:
        raise RuntimeError(f"two ops are both public as {name!r}")
    found[name] = function


# PyTorch also accepts numpy's names for two arguments, wherever it takes them: x.sum(axis=0,
# keepdims=True) is x.sum(dim=0, keepdim=True). Scripts written by numpy users rely on it.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def _with_torch_names(kwargs):
    """kwargs with numpy's `axis=`/`keepdims=` renamed to PyTorch's `dim=`/`keepdim=`."""
    for numpy_name, torch_name in NUMPY_NAMES.items():
        if numpy_name in kwargs:
            if torch_name in kwargs:
                raise TypeError(
                    f"got both {torch_name}= and its numpy name {numpy_name}=; pass one"
                )
            kwargs[torch_name] = kwargs.pop(numpy_name)
    return kwargs


def _accepting_numpy_names(function):
    """`function`, also accepting `axis=` for `dim=` and `keepdims=` for `keepdim=`."""

    @functools.wraps(function)
    def accepting(*args, **kwargs):
        return function(*args, **_with_torch_names(kwargs))

    return accepting


def _accepting_out(function, name):
    """`function`, also taking `out=`: its result is written into that tensor (ops/out.py)."""

    @functools.wraps(function)
    def accepting(*args, out=None, **kwargs):
        result = function(*args, **kwargs)
        if out is None:
            return result
        return write_into(out, result, name)

    return accepting


def _function_of(cls, name):
    """The public function of a record: `name(*inputs)` runs `cls.apply(*inputs)`."""
    function = _generated.get((cls, name))
    if function is not None:
        return function
    parameters = list(inspect.signature(cls.forward).parameters.values())[1:]  # without ctx
    inputs = [p.name for p in parameters]

    def function(*args, **kwargs):
        if kwargs:  # inputs given by name, tan(input=x): forward's positional arguments (edges)
            kwargs = _with_torch_names(kwargs)
            args += tuple(kwargs.pop(n) for n in inputs[len(args) :] if n in kwargs)
            if kwargs.get("out") is not None:  # tan(x, out=y): PyTorch's out= (ops/out.py)
                out = kwargs.pop("out")
                return write_into(out, cls.apply(*args, **kwargs), name)
            kwargs.pop("out", None)
        return cls.apply(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__module__ = cls.__module__
    function.__doc__ = cls.__doc__
    function.__signature__ = inspect.Signature(parameters)
    function.kernel = cls.kernel
    _generated[(cls, name)] = function
    return function
