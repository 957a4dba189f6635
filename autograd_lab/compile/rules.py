"""Fusion's rules: what an elementwise call computes for one element, and its local derivatives.

Both come from the op's record (ops/), so nothing here names an op. The forward is the record's
`kernel` (ops/scalar.py), called on the names of the call's arguments. The local derivatives are
found by running the op's own `backward` once, on stand-in tensors, while the tracer watches (as
PyTorch's AOTAutograd finds a backward graph): what backward does is made of elementwise ops too,
and their kernels, put together, are the derivative.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> from autograd_lab.ops.scalar import Expr, source
    >>> (call,) = trace(lambda x: x.tanh(), ag.ones(2)).calls
    >>> rule = rule_for(call)
    >>> x, g, y = Expr.variable("x"), Expr.variable("g"), Expr.variable("y")
    >>> source(rule.forward([x], {}))
    'tanh(x)'
    >>> [source(d) for d in rule.grads(g, y, [x], {})]  # TanhBackward0 runs TanhGrad: g * (1 - y²)
    ['g * (1.0 - y * y)']

A rule's derivatives are expressions of `g` (the gradient arriving at the result), `y` (the
result itself) and the arguments; `grads` puts the kernel's own names in their place.
"""

import numpy as np

from ..autograd import enable_grad
from ..autograd.engine import grad as autograd_grad
from ..ops import registry
from ..ops.scalar import Expr
from ..tensor import Tensor
from ..types import CPU, to_dtype
from .ir import Call, Value

_derived = {}  # (op class, the call's form) -> Rule, or None where no rule could be found


class Rule:
    """An elementwise call's forward expression and local derivatives (see the module docstring)."""

    def __init__(self, kernel, derivatives):
        self.kernel = kernel
        self.derivatives = derivatives  # per positional argument: an Expr of g, y, x0, x1, ...

    def forward(self, args, kwargs):
        """The result's expression, for argument expressions `args` (Exprs or numbers)."""
        return _as_expr(self.kernel(*args, **kwargs))

    def grads(self, g, y, args, kwargs):
        """For each positional argument: `g` times d(result)/d(argument), or None."""
        names = {"g": g, "y": y}
        names.update({f"x{k}": _as_expr(a) for k, a in enumerate(args)})
        names.update({k: _as_expr(v) for k, v in kwargs.items()})
        return tuple(None if d is None else d.substitute(names) for d in self.derivatives)


def rule_for(call):
    """The Rule of an IR call, or None when its op is not elementwise (or has no kernel)."""
    kernel = getattr(call.fn, "kernel", None)
    if kernel is None or not isinstance(call.fn, type):
        return None
    form = (call.fn, *_form(call.args), *_form(call.kwargs.items()))
    if form not in _derived:
        derivatives = derive(call)
        _derived[form] = None if derivatives is None else Rule(kernel, derivatives)
    return _derived[form]


def rule_of(fn, arity):
    """The Rule of op class `fn` applied to `arity` float tensors (row programs write softmax
    with the rules of Sub, Exp, ... this way)."""
    values = [Value(k, (1,), np.dtype(np.float64), CPU) for k in range(arity + 1)]
    return rule_for(Call(fn, fn.node_name, tuple(values[:arity]), {}, (values[arity],)))


def _form(items):
    """What a rule depends on besides the op: which arguments are tensors, and the constants."""
    found = []
    for item in items:
        key, value = item if isinstance(item, tuple) else (None, item)
        found.append((key, "tensor") if isinstance(value, Value) else (key, value))
    return found


# ---- deriving the local derivatives ------------------------------------------------------------


def derive(call):
    """Each positional argument's `g * d(result)/d(argument)` as an Expr (None where there is no
    gradient), found by tracing the op's backward on stand-ins; None if backward uses an op that
    has no kernel (then the call is not fused)."""
    from .trace import trace  # the tracer imports this module's users: imported when needed

    positions = [k for k, a in enumerate(call.args) if isinstance(a, Value)]
    keywords = [k for k, v in call.kwargs.items() if isinstance(v, Value)]
    stand_ins = [_stand_in(call.args[k]) for k in positions]
    stand_ins += [_stand_in(call.kwargs[k]) for k in keywords]
    stand_ins.append(_stand_in(call.outputs[0]))  # the gradient arriving at the result

    def backward(*tensors):
        feed = iter(tensors)
        args = [next(feed) if isinstance(a, Value) else a for a in call.args]
        kwargs = {k: next(feed) if isinstance(v, Value) else v for k, v in call.kwargs.items()}
        g = next(feed)
        with enable_grad():
            result = call.fn.apply(*args, **kwargs)
            inputs = [a for a in args if isinstance(a, Tensor) and a.is_floating_point()]
            found = autograd_grad(result, inputs, g, create_graph=True, allow_unused=True)
        return (result, *found)

    try:
        graph = trace(backward, *stand_ins)
    except Exception:  # a backward the tracer cannot follow: no rule, the op runs unfused
        return None
    variables = [f"x{k}" for k in positions] + keywords + ["g"]
    names = {v.id: Expr.variable(n) for v, n in zip(graph.inputs, variables, strict=True)}
    forward, *backward_calls = graph.calls
    names[forward.outputs[0].id] = Expr.variable("y")
    for step in backward_calls:
        expression = _expression(step, names)
        if expression is None:
            return None
        names[step.outputs[0].id] = expression
    gradients = iter(graph.output_tree[1:])
    derivatives = []
    try:
        for arg in call.args:
            if isinstance(arg, Value) and arg.dtype.kind == "f":
                value = next(gradients)
                derivatives.append(None if value is None else _gradient(names, value))
            else:
                derivatives.append(None)
    except KeyError:  # a gradient made from outside the traced backward: not elementwise
        return None
    return tuple(derivatives)


def _gradient(names, value):
    """One traced gradient as an Expr. Zeros that backward made as a new tensor (a derivative
    that is exactly 0, PyTorch's zeros_like) are the constant 0; any other tensor from outside
    the traced backward raises KeyError (not elementwise)."""
    if value.const is not None and not value.const._data.any():
        return Expr("constant", 0.0)
    return _constant_or(names, value)


def _stand_in(value):
    """A one-element tensor of the value's dtype (bool: True; numbers: 0.5, away from 0 and 1)."""
    if value.dtype == np.bool_:
        return Tensor(np.ones(1)).to(to_dtype(np.bool_))
    return Tensor(np.full(1, 0.5)).to(to_dtype(value.dtype))


def _expression(call, names):
    """One backward call as an Expr of the names made so far, or None (no kernel)."""
    if len(call.outputs) != 1 or call.outputs[0] is None:
        return None
    kernel = getattr(call.fn, "kernel", None)
    if call.fn.__name__ == "Compare":  # a comparison the tracer recorded: its function's kernel
        kernel = registry.kernel_of(call.kwargs["op"])
        kwargs = {}
    else:
        kwargs = call.kwargs
    if kernel is None:
        return None
    try:
        args = [_constant_or(names, a) for a in call.args]
        kwargs = {k: _constant_or(names, v) for k, v in kwargs.items()}
    except KeyError:  # a value from outside the backward (a constant tensor): not elementwise
        return None
    return _as_expr(kernel(*args, **kwargs))


def _constant_or(names, value):
    if isinstance(value, Value):
        if value.const is not None:
            raise KeyError(value.id)
        return names[value.id]
    return value


def _as_expr(value):
    return value if isinstance(value, Expr) else Expr("constant", value)
