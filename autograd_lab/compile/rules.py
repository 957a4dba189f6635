"""What each elementwise op computes for ONE element, and its local derivatives: fusion's table.

A fused kernel is a loop whose body is these expressions, one per op of the group, written as
Python source (numba compiles it). Each rule has two halves:

    forward(n, *args, **kwargs)        -> the result's expression
    grads(n, g, y, *args, **kwargs)    -> one expression per positional input: g times the local
                                          derivative d(result)/d(input), or None (no gradient)

`args` are expressions (variable names such as `v3`, or literals), `g` is the expression of the
gradient arriving at the result and `y` the result itself. `n(0.5)` writes a number in the kernel's
dtype (`float32(0.5)` in a float32 kernel, so the arithmetic stays in float32 as numpy's does).

    >>> rule = RULES[ew.Tanh]
    >>> rule.forward(repr, "v0")
    'tanh(v0)'
    >>> rule.grads(repr, "d1", "v1", "v0")
    ('d1 * (1.0 - v1 * v1)',)

The formulas are the same as the ops' own backward methods in `ops/`; tests compare the two.
"""

from dataclasses import dataclass

from ..ops import elementwise as ew
from ..ops.nn import Gelu

_SQRT_HALF, _INV_SQRT_2PI = 0.7071067811865476, 0.3989422804014327
_TANH_SCALE, _TANH_CUBIC = 0.7978845608028654, 0.044715  # gelu's tanh form (as ops/nn.py)


@dataclass(frozen=True)
class Rule:
    forward: object
    grads: object
    tensor_kwargs: tuple = ()  # keyword arguments that are (non-differentiable) tensor inputs


def _sign(n, a):
    return f"({n(1.0)} if {a} > {n(0.0)} else ({n(-1.0)} if {a} < {n(0.0)} else {a}))"


def _sigmoid(n, a):
    """Two forms, so exp never overflows (as ops/elementwise.py's Sigmoid)."""
    return (f"({n(1.0)} / ({n(1.0)} + exp(-{a})) if {a} >= {n(0.0)} "
            f"else exp({a}) / ({n(1.0)} + exp({a})))")  # fmt: skip


def _share(n, a, b, wins):
    """1 where `a` wins (a > b for maximum), 1/2 at a tie, else 0: how max/min split gradients."""
    return f"({n(1.0)} if {a} {wins} {b} else ({n(0.5)} if {a} == {b} else {n(0.0)}))"


def _pick(n, a, b, wins):
    """max/min that return NaN when either side is NaN, as np.maximum/np.minimum do."""
    return f"({a} if {a} {wins} {b} or {a} != {a} else {b})"


def _clamp(n, x, min=None, max=None):
    low = x if min is None else f"({n(min)} if {x} < {n(min)} else {x})"
    return low if max is None else f"({n(max)} if {low} > {n(max)} else {low})"


def _inside(n, x, min=None, max=None):
    tests = ([] if min is None else [f"{x} >= {n(min)}"]) + ([] if max is None else
                                                              [f"{x} <= {n(max)}"])  # fmt: skip
    return " and ".join(tests) or "True"


def _gelu(n, x, approximate="none"):
    if approximate == "tanh":
        inner = f"{n(_TANH_SCALE)} * ({x} + {n(_TANH_CUBIC)} * {x} * {x} * {x})"
        return f"{n(0.5)} * {x} * ({n(1.0)} + tanh({inner}))"
    return f"{n(0.5)} * {x} * ({n(1.0)} + erf({x} * {n(_SQRT_HALF)}))"


def _gelu_slope(n, x, approximate="none"):
    if approximate == "tanh":
        t = f"tanh({n(_TANH_SCALE)} * ({x} + {n(_TANH_CUBIC)} * {x} * {x} * {x}))"
        inner = f"{n(_TANH_SCALE)} * ({n(1.0)} + {n(3 * _TANH_CUBIC)} * {x} * {x})"
        return (f"({n(0.5)} * ({n(1.0)} + {t}) + "
                f"{n(0.5)} * {x} * ({n(1.0)} - {t} * {t}) * {inner})")  # fmt: skip
    return (f"({n(0.5)} * ({n(1.0)} + erf({x} * {n(_SQRT_HALF)})) + "
            f"{x} * exp({n(-0.5)} * {x} * {x}) * {n(_INV_SQRT_2PI)})")  # fmt: skip


def _pow_scalar_grad(n, g, y, x, exponent):
    if exponent == 0:
        return (f"{g} * {n(0.0)}",)
    return (f"{g} * {n(exponent)} * {x} ** {n(exponent - 1)}",)


def _pow_grads(n, g, y, a, b):
    zero = n(0.0)
    return (f"({zero} if {b} == {zero} else {g} * {b} * {a} ** ({b} - {n(1.0)}))",
            f"({zero} if {a} == {zero} and {b} >= {zero} else {g} * {y} * log({a}))")  # fmt: skip


RULES = {
    # ---- arithmetic ----------------------------------------------------------------------------
    ew.Add: Rule(lambda n, a, b: f"{a} + {b}", lambda n, g, y, a, b: (g, g)),
    ew.Sub: Rule(lambda n, a, b: f"{a} - {b}", lambda n, g, y, a, b: (g, f"-{g}")),
    ew.Rsub: Rule(lambda n, x, number: f"{n(number)} - {x}", lambda n, g, y, x, number: (f"-{g}",)),
    ew.Mul: Rule(lambda n, a, b: f"{a} * {b}", lambda n, g, y, a, b: (f"{g} * {b}", f"{g} * {a}")),
    ew.MulNumber: Rule(lambda n, a, c: f"{a} * {c}", lambda n, g, y, a, c: (f"{g} * {c}", None)),
    ew.Div: Rule(lambda n, a, b: f"{a} / {b}",
              lambda n, g, y, a, b: (f"{g} / {b}", f"-{g} * {a} / ({b} * {b})")),
    ew.Neg: Rule(lambda n, x: f"-{x}", lambda n, g, y, x: (f"-{g}",)),
    ew.PowScalar: Rule(lambda n, x, exponent: f"{x} ** {n(exponent)}", _pow_scalar_grad),
    ew.Pow: Rule(lambda n, a, b: f"{a} ** {b}", _pow_grads),
    ew.RPow: Rule(lambda n, x, base: f"{n(base)} ** {x}",
               lambda n, g, y, x, base: (f"{g} * {y} * log({n(base)})",)),
    ew.Reciprocal: Rule(lambda n, x: f"{n(1.0)} / {x}", lambda n, g, y, x: (f"-{g} * {y} * {y}",)),
    ew.Clone: Rule(lambda n, x: x, lambda n, g, y, x: (g,)),
    # ---- functions -----------------------------------------------------------------------------
    ew.Exp: Rule(lambda n, x: f"exp({x})", lambda n, g, y, x: (f"{g} * {y}",)),
    ew.Log: Rule(lambda n, x: f"log({x})", lambda n, g, y, x: (f"{g} / {x}",)),
    ew.Log1p: Rule(lambda n, x: f"log1p({x})", lambda n, g, y, x: (f"{g} / ({x} + {n(1.0)})",)),
    ew.Expm1: Rule(lambda n, x: f"expm1({x})", lambda n, g, y, x: (f"{g} * ({y} + {n(1.0)})",)),
    ew.Sqrt: Rule(lambda n, x: f"sqrt({x})", lambda n, g, y, x: (f"{g} / ({n(2.0)} * {y})",)),
    ew.Sin: Rule(lambda n, x: f"sin({x})", lambda n, g, y, x: (f"{g} * cos({x})",)),
    ew.Cos: Rule(lambda n, x: f"cos({x})", lambda n, g, y, x: (f"-{g} * sin({x})",)),
    ew.Tanh: Rule(lambda n, x: f"tanh({x})", lambda n, g, y, x: (f"{g} * ({n(1.0)} - {y} * {y})",)),
    ew.Sigmoid: Rule(_sigmoid, lambda n, g, y, x: (f"{g} * {y} * ({n(1.0)} - {y})",)),
    Gelu: Rule(_gelu, lambda n, g, y, x, approximate="none": (
        f"{g} * {_gelu_slope(n, x, approximate)}",)),
    ew.TanhGrad: Rule(lambda n, g0, r: f"{g0} * ({n(1.0)} - {r} * {r})",
                   lambda n, g, y, g0, r: (f"{g} * ({n(1.0)} - {r} * {r})",
                                           f"{g} * {g0} * {r} * {n(-2.0)}")),
    ew.SigmoidGrad: Rule(lambda n, g0, r: f"{g0} * {r} * ({n(1.0)} - {r})",
                      lambda n, g, y, g0, r: (f"{g} * {r} * ({n(1.0)} - {r})",
                                              f"{g} * {g0} * ({n(1.0)} - {n(2.0)} * {r})")),
    # ---- piecewise -----------------------------------------------------------------------------
    ew.Relu: Rule(lambda n, x: f"({x} if {x} > {n(0.0)} or {x} != {x} else {n(0.0)})",
               lambda n, g, y, x: (f"({g} if {y} > {n(0.0)} else {n(0.0)})",)),
    ew.Abs: Rule(lambda n, x: f"abs({x})", lambda n, g, y, x: (f"{g} * {_sign(n, x)}",)),
    ew.Sign: Rule(_sign, lambda n, g, y, x: (f"{g} * {n(0.0)}",)),
    ew.Clamp: Rule(_clamp, lambda n, g, y, x, min=None, max=None: (
        f"({g} if {_inside(n, x, min, max)} else {n(0.0)})",)),
    ew.Maximum: Rule(lambda n, a, b: _pick(n, a, b, ">"), lambda n, g, y, a, b: (
        f"{g} * {_share(n, a, b, '>')}", f"{g} * ({n(1.0)} - {_share(n, a, b, '>')})")),
    ew.Minimum: Rule(lambda n, a, b: _pick(n, a, b, "<"), lambda n, g, y, a, b: (
        f"{g} * {_share(n, a, b, '<')}", f"{g} * ({n(1.0)} - {_share(n, a, b, '<')})")),
    ew.Where: Rule(lambda n, a, b, condition: f"({a} if {condition} else {b})",
                lambda n, g, y, a, b, condition: (f"({g} if {condition} else {n(0.0)})",
                                                  f"({n(0.0)} if {condition} else {g})"),
                tensor_kwargs=("condition",)),
}  # fmt: skip


def rule_for(fn):
    """The rule of a Function class (or of the op it subclasses, e.g. MulScalar), or None."""
    for cls in getattr(fn, "__mro__", ()):
        if cls in RULES:
            return RULES[cls]
    return None
