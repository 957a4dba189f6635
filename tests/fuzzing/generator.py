"""Draw a random program from a seed: read this file to see the shape of the API the fuzzer calls.

    >>> program = generate(seed=7)        # the same seed always draws the same program

A program starts from 1-3 leaves (shapes of rank 0-4 with size-1 and empty dims; float32,
float64, int64 or bool; values with zeros, ±1, ties and sometimes NaN/inf; requires_grad; some
stored transposed, strided or expanded) and takes 1-12 steps. Each step is drawn from `SPECS`,
the table below: one entry per family of calls, which says how to pick its inputs from the values
made so far and how to draw its other arguments (dims incl. negative ones, tuples and `()`,
keepdim, Python scalars, 0-d tensors, index objects). About one choice in twenty is wrong on
purpose (a dim out of range, an int tensor where a float one is needed, shapes that do not
broadcast), so the error paths are compared too.

The ops come from two places: the op records (`autograd_lab/ops/registry.py`: every record that
names a public function is drawn as a function, a method and an in-place method, as the record
says) and the hand-written entries below for calls with arguments. Every public callable is either
drawn here or listed in `EXCLUDED` with its reason; tests/test_fuzz_coverage.py checks that.

While drawing, each step runs in PyTorch, so the next step knows the shapes and dtypes it may use.
"""

import random
import re
import warnings
from dataclasses import dataclass

import numpy as np

from .program import FLOATS, Leaf, Program, Step

MAX_ELEMENTS = 4096  # a step that makes more is drawn again: programs stay small and quick
WRONG_ON_PURPOSE = 0.05  # how often a choice breaks the op's rules, to compare the errors


@dataclass
class Value:
    """A value a step may take: its name in the program, and what PyTorch says it is."""

    name: str
    shape: tuple
    dtype: str
    requires_grad: bool

    @property
    def rank(self):
        return len(self.shape)

    @property
    def is_float(self):
        return self.dtype in FLOATS


@dataclass(frozen=True)
class Spec:
    name: str  # the op's name in divergence reports
    draw: object  # Draw -> (call, inputs) or (call, inputs, is a statement), or None: not now
    covers: tuple  # the public names it can call: "add", "Tensor.add_", "F.relu"
    weight: float = 1.0


SPECS = []


def spec(*covers, weight=1.0):
    """Add the decorated draw function to SPECS as an op named after it."""

    def register(draw):
        SPECS.append(Spec(draw.__name__, draw, covers or (draw.__name__,), weight))
        return draw

    return register


class Draw:
    """The choices a spec makes, all from one seeded random.Random."""

    def __init__(self, rng, pool):
        self.rng = rng
        self.pool = pool

    def wrong(self):
        """Break the op's rules this time?"""
        return self.rng.random() < WRONG_ON_PURPOSE

    def chance(self, probability):
        return self.rng.random() < probability

    def choice(self, options):
        return self.rng.choice(list(options))

    def value(self, floats=True, min_rank=0, max_rank=4, nonempty=False):
        """A value made so far: a float one unless `floats` is False (or by mistake)."""
        if self.wrong():
            return self.choice(self.pool)
        fits = [
            v
            for v in self.pool
            if (v.is_float or not floats)
            and min_rank <= v.rank <= max_rank
            and (not nonempty or 0 not in v.shape)
        ]
        return self.choice(fits) if fits else None

    def partner(self, a, same_shape=False):
        """A second tensor for `a`: another value whose shape broadcasts with a's (or equals it)."""
        fits = [
            v
            for v in self.pool
            if (v.shape == a.shape if same_shape else broadcasts(v.shape, a.shape))
            and (v.is_float or self.chance(0.2))
        ]
        if self.wrong() or not fits:
            return self.choice(self.pool)
        return self.choice(fits)

    def dim(self, v):
        """A dim of v, negative half the time; a 0-d tensor has dims 0 and -1."""
        size = max(v.rank, 1)
        if self.wrong():
            return self.choice([size, -size - 1])
        return self.rng.randrange(-size, size)

    def dims(self, v):
        """None, one dim, a tuple of distinct dims, or () (which means every dim)."""
        roll = self.rng.random()
        if roll < 0.25:
            return None
        if roll < 0.6 or v.rank < 2:
            return self.dim(v)
        if roll < 0.7:
            return ()
        count = self.rng.randint(1, v.rank)
        chosen = self.rng.sample(range(v.rank), count)
        dims = tuple(d - v.rank if self.chance(0.5) else d for d in chosen)
        return dims + (dims[0],) if self.wrong() else dims

    def keepdim(self):
        return self.choice(["", ", keepdim=True", ", keepdim=False"])

    def number(self, kind="float"):
        """A Python scalar: ties, 0, ±1, a half, sometimes inf or NaN; or an int or a bool."""
        if kind == "int" or (kind == "float" and self.chance(0.2)):
            return str(self.choice([0, 1, -1, 2, 3, -2]))
        if kind == "bool" or self.chance(0.05):
            return self.choice(["True", "False"])
        if self.chance(0.05):
            return self.choice(["float('nan')", "float('inf')", "-float('inf')", "-0.0"])
        return repr(self.choice([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1.5, -2.5, 0.25]))

    def scalar_or_tensor(self, a):
        """What goes with tensor `a`: a Python number, a 0-d tensor, or a broadcastable value."""
        roll = self.rng.random()
        if roll < 0.3:
            return self.number(), ()
        if roll < 0.4:
            dtype = self.choice(["", ", dtype=torch.float64", ", dtype=torch.int64"])
            return f"torch.tensor({self.number()}{dtype})", ()
        return "{1}", (self.partner(a).name,)

    def literal(self, shape, dtype="float32", low=-2, high=2):
        """A tensor written out in the call (targets, index tensors, weights)."""
        count = int(np.prod(shape, dtype=int))
        if dtype == "int64":
            numbers = [str(self.rng.randint(low, high)) for _ in range(count)]
        elif dtype == "bool":
            numbers = [self.choice(["True", "False"]) for _ in range(count)]
        else:
            numbers = [repr(round(self.rng.uniform(low, high), 2)) for _ in range(count)]
        if not shape:  # a 0-d tensor
            return f"torch.tensor({numbers[0]}, dtype=torch.{dtype})"
        made = f"torch.tensor([{', '.join(numbers)}], dtype=torch.{dtype})"
        return made if len(shape) == 1 else f"{made}.reshape{tuple(shape)}"


def broadcasts(a, b):
    """Do shapes a and b broadcast together (PyTorch's rule: align right, sizes equal or 1)?"""
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b)))


def call(d, name, v, arguments="", method=True, function=True):
    """`torch.name(v, arguments)` or `v.name(arguments)`, whichever the op has (both: either)."""
    if method and (not function or d.chance(0.5)):
        return "{0}." + f"{name}({arguments.lstrip(', ')})", (v.name,)
    return f"torch.{name}({{0}}{arguments})", (v.name,)


# ---- the op records: one spec per record kind, the names from autograd_lab.ops.registry ----------


def _records(arity):
    from autograd_lab.autograd.function import Op
    from autograd_lab.ops import registry

    found = []
    for cls in registry.op_classes():
        names = cls.__dict__.get("function")
        if names is None or not issubclass(cls, Op):
            continue
        names = (names,) if isinstance(names, str) else tuple(names)
        if len(__import__("inspect").signature(cls.forward).parameters) - 1 == arity:
            found.append((names, cls.method, cls.inplace))
    return found


UNARY_RECORDS = _records(1)  # exp, log, relu, ... each as torch.f(x), x.f(), x.f_()
BINARY_RECORDS = _records(2)  # maximum, minimum


def _record_names(records):
    names = []
    for functions, method, inplace in records:
        for name in functions:
            names += [name] + [f"Tensor.{name}"] * method + [f"Tensor.{name}_"] * inplace
    return tuple(names)


@spec(*_record_names(UNARY_RECORDS), weight=6)
def unary(d):
    functions, method, inplace = d.choice(UNARY_RECORDS)
    name = d.choice(functions)
    v = d.value(floats=not d.chance(0.25))
    if v is None:
        return None
    if inplace and d.chance(0.3):
        return "{0}." + f"{name}_()", (v.name,)
    return call(d, name, v, method=method)


@spec(*_record_names(BINARY_RECORDS))
def binary_record(d):
    functions, method, _ = d.choice(BINARY_RECORDS)
    a = d.value()
    if a is None:
        return None
    other, inputs = d.scalar_or_tensor(a)
    if other != "{1}":  # maximum/minimum take tensors only; a number is a mistake to compare
        other, inputs = ("{1}", (d.partner(a).name,)) if not d.wrong() else (other, ())
    return f"torch.{d.choice(functions)}({{0}}, {other})", (a.name,) + inputs


# ---- arithmetic and comparisons: functions, methods, in-place methods and operators -----------

ARITHMETIC = {  # name: (its aliases, the operator, its keyword arguments)
    "add": (("add",), "+", "alpha"),
    "sub": (("sub", "subtract"), "-", "alpha"),
    "mul": (("mul", "multiply"), "*", ""),
    "div": (("div", "divide", "true_divide"), "/", "rounding_mode"),
    "floor_divide": (("floor_divide",), "//", ""),
    "remainder": (("remainder",), "%", ""),
    "fmod": (("fmod",), "", ""),
    "pow": (("pow",), "**", ""),
}
COMPARISONS = {
    "eq": (("eq",), "=="),
    "ne": (("ne",), "!="),
    "lt": (("lt", "less"), "<"),
    "le": (("le", "less_equal"), "<="),
    "gt": (("gt", "greater"), ">"),
    "ge": (("ge", "greater_equal"), ">="),
}


OPERATOR_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
                  "%": "mod", "**": "pow", "==": "eq", "!=": "ne", "<": "lt", "<=": "le",
                  ">": "gt", ">=": "ge"}  # fmt: skip


def _dunders(operators, reflected=True):
    """Tensor.__add__, __radd__, __iadd__ for "+": what `x + y`, `2 + x` and `x += y` call
    (those autograd_lab has: without __ipow__, Python runs `x **= y` as `x = x ** y`)."""
    from autograd_lab import Tensor

    found = []
    for operator in operators:
        name = OPERATOR_NAMES[operator]
        found.append(f"Tensor.__{name}__")
        if reflected and operator not in ("==", "!=", "<", "<=", ">", ">="):
            found += [f"Tensor.__r{name}__", f"Tensor.__i{name}__"]
    return [name for name in found if hasattr(Tensor, name.removeprefix("Tensor."))]


def _forms(names, inplace=True):
    found = []
    for name in names:
        found += [name, f"Tensor.{name}"] + [f"Tensor.{name}_"] * inplace
    return found


@spec(*[n for names, _, _ in ARITHMETIC.values() for n in _forms(names)],
      *_dunders(o for _, o, _ in ARITHMETIC.values() if o), weight=6)  # fmt: skip
def arithmetic(d):
    names, operator, keyword = ARITHMETIC[d.choice(ARITHMETIC)]
    a = d.value(floats=not d.chance(0.3))
    if a is None:
        return None
    other, inputs = d.scalar_or_tensor(a)
    extra = ""
    if keyword == "alpha" and d.chance(0.3):
        extra = f", alpha={d.number(d.choice(['int', 'float']))}"
    if keyword == "rounding_mode" and d.chance(0.4):
        extra = f", rounding_mode={d.choice(['floor', 'trunc', None])!r}"
    form = d.rng.random()
    name = d.choice(names)
    if operator and not extra and form < 0.35:
        if d.chance(0.3) and not other.startswith("{"):  # the reflected form: 2 - x
            return f"({other} {operator} {{0}})", (a.name,) + inputs
        if d.chance(0.15):  # x += y
            return f"{{0}} {operator}= {other}", (a.name,) + inputs, True
        return f"({{0}} {operator} {other})", (a.name,) + inputs
    if form < 0.55:
        return "{0}." + f"{name}_({other}{extra})", (a.name,) + inputs
    if form < 0.75:
        return "{0}." + f"{name}({other}{extra})", (a.name,) + inputs
    return f"torch.{name}({{0}}, {other}{extra})", (a.name,) + inputs


@spec(*[n for names, _ in COMPARISONS.values() for n in _forms(names, inplace=False)],
      *_dunders([o for _, o in COMPARISONS.values()]), weight=2)  # fmt: skip
def comparison(d):
    names, operator = COMPARISONS[d.choice(COMPARISONS)]
    a = d.value(floats=not d.chance(0.3))
    if a is None:
        return None
    other, inputs = d.scalar_or_tensor(a)
    roll = d.rng.random()
    if roll < 0.4:
        return f"({{0}} {operator} {other})", (a.name,) + inputs
    if roll < 0.7:
        return "{0}." + f"{d.choice(names)}({other})", (a.name,) + inputs
    return f"torch.{d.choice(names)}({{0}}, {other})", (a.name,) + inputs


@spec("Tensor.__and__", "Tensor.__or__", "Tensor.__invert__", "logical_and", "Tensor.logical_and",
      "logical_or", "Tensor.logical_or", "logical_xor", "Tensor.logical_xor", "logical_not",
      "Tensor.logical_not")  # fmt: skip
def logical(d):
    a = d.value(floats=False)
    if a is None:
        return None
    b = d.partner(a)
    roll = d.rng.random()
    if roll < 0.2:
        return "(~{0})", (a.name,)
    if roll < 0.4:
        return f"({{0}} {d.choice('&|')} {{1}})", (a.name, b.name)
    if roll < 0.55:
        return call(d, "logical_not", a)
    name = d.choice(["logical_and", "logical_or", "logical_xor"])
    return f"torch.{name}({{0}}, {{1}})", (a.name, b.name)


@spec("Tensor.__neg__", "Tensor.__pos__", "Tensor.__abs__", "square", "Tensor.square",
      "Tensor.square_", "isnan", "Tensor.isnan", "isinf", "Tensor.isinf", "isfinite",
      "Tensor.isfinite", "isposinf", "Tensor.isposinf", "isneginf", "Tensor.isneginf",
      "logit", "Tensor.logit", "Tensor.logit_", "round", "Tensor.round", "Tensor.round_",
      "fix", "Tensor.fix", "Tensor.fix_", "nan_to_num", "Tensor.nan_to_num",
      "Tensor.nan_to_num_", "Tensor.float", "Tensor.double", "Tensor.long", "Tensor.int",
      "Tensor.bool", "Tensor.half", "Tensor.byte", "Tensor.char", "Tensor.short", "Tensor.to",
      "Tensor.type", "Tensor.type_as", "Tensor.detach", "Tensor.contiguous", "Tensor.clone",
      "Tensor.cpu")  # fmt: skip
def elementwise_more(d):
    v = d.value(floats=not d.chance(0.3))
    if v is None:
        return None
    kind = d.choice(["operator", "square", "is", "logit", "round", "fix", "nan_to_num", "cast"])
    if kind == "operator":
        return d.choice(["(-{0})", "(+{0})", "abs({0})"]), (v.name,)
    if kind == "square":
        return ("{0}.square_()", (v.name,)) if d.chance(0.3) else call(d, "square", v)
    if kind == "is":
        return call(d, d.choice(["isnan", "isinf", "isfinite", "isposinf", "isneginf"]), v)
    if kind == "logit":
        eps = d.choice(["", "0.1", "eps=0.25", "None"])
        if d.chance(0.3):
            return "{0}." + f"logit_({eps})", (v.name,)
        return call(d, "logit", v, f", {eps}" if eps else "")
    if kind in ("round", "fix"):
        if kind == "round" and d.chance(0.4):
            arguments = f", decimals={d.choice([0, 1, 2, -1])}"
        else:
            arguments = ""
        if d.chance(0.3):
            return "{0}." + f"{kind}_({arguments.lstrip(', ')})", (v.name,)
        return call(d, kind, v, arguments)
    if kind == "nan_to_num":
        arguments = "".join(
            f", {k}={d.number()}" for k in ("nan", "posinf", "neginf") if d.chance(0.4)
        )
        if d.chance(0.3):
            return "{0}." + f"nan_to_num_({arguments.lstrip(', ')})", (v.name,)
        return call(d, "nan_to_num", v, arguments)
    cast = d.choice(
        ["float()", "double()", "long()", "int()", "bool()", "half().float()", "byte().long()",
         "char().long()", "short().long()", "to(torch.float64)", "to(dtype=torch.int64)",
         "type(torch.float64)", "detach()", "contiguous()", "clone()", "cpu()",
         "to('cpu')"]
    )  # fmt: skip
    if d.chance(0.1):
        return "{0}.type_as({1})", (v.name, d.choice(d.pool).name)
    return "{0}." + cast, (v.name,)


# ---- elementwise with more arguments ---------------------------------------------------------


@spec("clamp", "Tensor.clamp", "Tensor.clamp_", "clip", "Tensor.clip", "Tensor.clip_", weight=2)
def clamp(d):
    v = d.value(floats=not d.chance(0.3))
    if v is None:
        return None
    bounds, inputs = [], (v.name,)
    for keyword in ("min", "max"):
        roll = d.rng.random()
        if roll < 0.5:
            bounds.append(f"{keyword}={d.number()}")
        elif roll < 0.65:
            inputs += (d.partner(v).name,)
            bounds.append(f"{keyword}={{{len(inputs) - 1}}}")
        elif roll < 0.75:
            bounds.append(f"{keyword}=None")
    name = d.choice(["clamp", "clip"])
    arguments = ", ".join(bounds)
    form = d.rng.random()
    if form < 0.3:
        return "{0}." + f"{name}_({arguments})", inputs
    if form < 0.6:
        return "{0}." + f"{name}({arguments})", inputs
    return f"torch.{name}({{0}}, {arguments})", inputs


@spec("where", "Tensor.where", "lerp", "Tensor.lerp", "Tensor.lerp_", "addcmul", "Tensor.addcmul",
      "Tensor.addcmul_", "addcdiv", "Tensor.addcdiv", "Tensor.addcdiv_", "masked_fill",
      "Tensor.masked_fill", "Tensor.masked_fill_", weight=3)  # fmt: skip
def ternary(d):
    a = d.value(floats=not d.chance(0.2))
    if a is None:
        return None
    b = d.partner(a)
    kind = d.choice(["where", "lerp", "addcmul", "addcdiv", "masked_fill"])
    if kind == "where":
        condition = d.choice(["({0} > 0)", "({1} != 0)", "{0}.isnan()"])
        other, inputs = d.scalar_or_tensor(a)
        first = d.choice(["{0}", d.number()])
        if other == "{1}":
            return f"torch.where({condition}, {first}, {other})", (a.name,) + inputs
        if d.chance(0.3):
            return f"{{0}}.where({condition.replace('{1}', '{0}')}, {other})", (a.name,)
        return f"torch.where({condition.replace('{1}', '{0}')}, {first}, {other})", (a.name,)
    if kind == "lerp":
        weight, inputs = d.scalar_or_tensor(a)
        weight = weight.replace("{1}", "{2}")
        form = d.choice(["torch.lerp({0}, {1}, W)", "{0}.lerp({1}, W)", "{0}.lerp_({1}, W)"])
        return form.replace("W", weight), (a.name, b.name) + inputs
    if kind in ("addcmul", "addcdiv"):
        c = d.partner(a)
        value = f", value={d.number()}" if d.chance(0.5) else ""
        form = d.choice([f"torch.{kind}({{0}}, ", f"{{0}}.{kind}(", f"{{0}}.{kind}_("])
        return form + "{1}, {2}" + value + ")", (a.name, b.name, c.name)
    mask = d.choice(["({1} > 0)", "{1}.bool()", "({0} == 0)"])
    value, inputs = d.number(), ()
    if d.chance(0.3):
        value = d.choice(["torch.tensor(2.5)", "torch.tensor(-1)", "{2}"])
        inputs = (d.choice(d.pool).name,) if "{2}" in value else ()
    form = d.choice(
        ["torch.masked_fill({0}, M, V)", "{0}.masked_fill(M, V)", "{0}.masked_fill_(M, V)"]
    )
    return form.replace("M", mask).replace("V", value), (a.name, b.name) + inputs


@spec("isclose", "Tensor.isclose", "allclose", "Tensor.allclose", "equal", "Tensor.equal",
      "dist", "Tensor.dist")  # fmt: skip
def closeness(d):
    a = d.value(floats=not d.chance(0.2))
    if a is None:
        return None
    b = d.partner(a, same_shape=d.chance(0.5))
    kind = d.choice(["isclose", "allclose", "equal", "dist"])
    if kind in ("isclose", "allclose"):
        options = d.choice(["", ", rtol=0.1", ", atol=0.5, equal_nan=True", ", equal_nan=True"])
        return call(d, kind, a, ", {1}" + options)[0], (a.name, b.name)
    if kind == "equal":
        return call(d, "equal", a, ", {1}")[0], (a.name, b.name)
    p = d.choice(["", ", 1", ", p=3", ", float('inf')", ", 0"])
    return call(d, "dist", a, ", {1}" + p)[0], (a.name, b.name)


# ---- reductions: over every dim, one dim, a tuple of dims, or () -------------------------------


def _dims_text(dims):
    return "" if dims is None else f"dim={dims!r}"


@spec("sum", "Tensor.sum", "mean", "Tensor.mean", "prod", "Tensor.prod", "amax", "Tensor.amax",
      "amin", "Tensor.amin", "logsumexp", "Tensor.logsumexp", "count_nonzero",
      "Tensor.count_nonzero", "all", "Tensor.all", "any", "Tensor.any", "norm", "Tensor.norm",
      weight=4)  # fmt: skip
def reduce(d):
    name = d.choice(["sum", "mean", "prod", "amax", "amin", "logsumexp", "count_nonzero", "all",
                     "any", "norm"])  # fmt: skip
    v = d.value(floats=name not in ("count_nonzero", "all", "any") and not d.chance(0.2))
    if v is None:
        return None
    dims = d.dims(v)
    if name in ("prod", "all", "any", "count_nonzero") and isinstance(dims, tuple):
        dims = d.dim(v) if not d.wrong() else dims  # these take one dim
    if name == "logsumexp" and dims is None:
        dims = d.dim(v)  # logsumexp's dim is required
    parts = [_dims_text(dims)] if dims is not None else []
    if dims is not None and name != "count_nonzero":
        parts.append(d.keepdim().lstrip(", "))
    if name in ("sum", "mean", "prod") and d.chance(0.2):
        parts.append(f"dtype=torch.{d.choice(['float64', 'float32', 'int64'])}")
    if name == "norm" and d.chance(0.6):
        parts.insert(
            0, f"p={d.choice([1, 2, 3, 0.5, float('inf'), 0, -1])!r}".replace("inf", "float('inf')")
        )
    arguments = ", ".join(p for p in parts if p)
    return call(d, name, v, f", {arguments}" if arguments else "")


@spec("max", "Tensor.max", "min", "Tensor.min", "argmax", "Tensor.argmax", "argmin",
      "Tensor.argmin", "median", "Tensor.median", "kthvalue", "Tensor.kthvalue", weight=2)  # fmt: skip
def reduce_with_indices(d):
    name = d.choice(["max", "min", "argmax", "argmin", "median", "kthvalue"])
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    if name == "kthvalue":
        k = d.rng.randint(1, max(1, v.shape[0] if v.shape else 1) + d.wrong())
        return call(d, name, v, f", {k}, {d.dim(v)}{d.keepdim()}")
    if d.chance(0.35):
        return call(d, name, v)  # over every element: one value (no indices)
    return call(d, name, v, f", {d.dim(v)}{d.keepdim()}")


@spec("var", "Tensor.var", "std", "Tensor.std", "var_mean", "std_mean", weight=2)
def spread(d):
    name = d.choice(["var", "std", "var_mean", "std_mean"])
    v = d.value(floats=not d.chance(0.1))
    if v is None:
        return None
    parts = []
    dims = d.dims(v)
    if dims is not None:
        parts.append(_dims_text(dims))
    roll = d.rng.random()
    if roll < 0.3:
        parts.append(f"correction={d.choice([0, 1, 2])}")
    elif roll < 0.45:
        parts.append(f"unbiased={d.choice([True, False])}")
    if dims is not None:
        parts.append(d.keepdim().lstrip(", "))
    arguments = ", ".join(p for p in parts if p)
    return call(d, name, v, f", {arguments}" if arguments else "", method=name in ("var", "std"))


# ---- scans and normalisations along one dim ---------------------------------------------------


@spec("cumsum", "Tensor.cumsum", "Tensor.cumsum_", "cumprod", "Tensor.cumprod", "Tensor.cumprod_",
      "logcumsumexp", "Tensor.logcumsumexp", "softmax", "Tensor.softmax", "log_softmax",
      "Tensor.log_softmax", "diff", "Tensor.diff", weight=2)  # fmt: skip
def scan(d):
    name = d.choice(["cumsum", "cumprod", "logcumsumexp", "softmax", "log_softmax", "diff"])
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    if name == "diff":
        arguments = f", n={d.choice([1, 2, 0])}, dim={d.dim(v)}" if d.chance(0.6) else ""
        if d.chance(0.3):
            return call(d, name, v, arguments + ", prepend={1}")[0], (v.name, d.partner(v).name)
        return call(d, name, v, arguments)
    dtype = ""
    if name != "logcumsumexp" and d.chance(0.2):
        dtype = f", dtype=torch.{d.choice(['float64', 'float32'])}"
    if name in ("cumsum", "cumprod") and d.chance(0.25):
        return "{0}." + f"{name}_({d.dim(v)}{dtype})", (v.name,)
    return call(d, name, v, f", {d.dim(v)}{dtype}")


# ---- shapes and views -------------------------------------------------------------------------


def _factor(rng, n, rank):
    """A shape of `rank` dims whose sizes multiply to n, one of them sometimes -1."""
    sizes = []
    for _ in range(rank - 1):
        divisors = [k for k in range(1, n + 1) if n % k == 0] if n else [0, 1, 2]
        size = rng.choice(divisors)
        sizes.append(size)
        n = n // size if size else 0
    sizes.append(n)
    if sizes and rng.random() < 0.3 and all(sizes):
        sizes[rng.randrange(len(sizes))] = -1
    return tuple(sizes)


@spec("reshape", "Tensor.reshape", "Tensor.view", "flatten", "Tensor.flatten", "unflatten",
      "Tensor.unflatten", weight=3)  # fmt: skip
def reshape(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    numel = int(np.prod(v.shape, dtype=int))
    shape = _factor(d.rng, numel, d.rng.randint(0, 4) if numel == 1 else d.rng.randint(1, 4))
    if d.wrong():
        shape = shape + (2,)
    kind = d.choice(["reshape", "view", "flatten", "unflatten"])
    if kind == "flatten":
        arguments = f", {d.dim(v)}" + (f", {d.dim(v)}" if d.chance(0.5) else "")
        return call(d, "flatten", v, arguments if d.chance(0.6) else "")
    if kind == "unflatten":
        if v.rank == 0:
            return None
        dim = d.dim(v)
        sizes = _factor(d.rng, v.shape[dim % v.rank], d.rng.randint(1, 3))
        return call(d, "unflatten", v, f", {dim}, {sizes}")
    if kind == "view" or d.chance(0.3):
        form = d.choice(["{0}.view(S)", "{0}.view(*S)", "{0}.reshape(*S)"])
        return form.replace("S", repr(shape)), (v.name,)
    return call(d, "reshape", v, f", {shape!r}")


@spec("squeeze", "Tensor.squeeze", "Tensor.squeeze_", "unsqueeze", "Tensor.unsqueeze",
      "Tensor.unsqueeze_", "transpose", "Tensor.transpose", "Tensor.transpose_", "swapaxes",
      "Tensor.swapaxes", "Tensor.swapaxes_", "swapdims", "Tensor.swapdims", "Tensor.swapdims_",
      "t", "Tensor.t", "Tensor.t_", "permute", "Tensor.permute", "movedim", "Tensor.movedim",
      "moveaxis", "Tensor.moveaxis", weight=4)  # fmt: skip
def move_dims(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    kind = d.choice(["squeeze", "unsqueeze", "transpose", "t", "permute", "movedim", "T", "mT"])
    in_place = d.chance(0.25)
    if kind == "squeeze":
        roll = d.rng.random()
        arguments = "" if roll < 0.4 else str(d.dim(v)) if roll < 0.8 else repr(d.dims(v) or ())
        if in_place:
            return "{0}." + f"squeeze_({arguments})", (v.name,)
        return call(d, "squeeze", v, f", {arguments}" if arguments else "")
    if kind == "unsqueeze":
        dim = d.rng.randrange(-v.rank - 1, v.rank + 1) if not d.wrong() else v.rank + 2
        if in_place:
            return "{0}." + f"unsqueeze_({dim})", (v.name,)
        return call(d, "unsqueeze", v, f", {dim}")
    if kind == "transpose":
        name = d.choice(["transpose", "swapaxes", "swapdims"])
        arguments = f"{d.dim(v)}, {d.dim(v)}"
        if in_place:
            return "{0}." + f"{name}_({arguments})", (v.name,)
        return call(d, name, v, f", {arguments}")
    if kind == "t":
        return ("{0}.t_()", (v.name,)) if in_place else call(d, "t", v)
    if kind == "permute":
        order = list(range(v.rank))
        d.rng.shuffle(order)
        order = [o - v.rank if d.chance(0.3) else o for o in order]
        if d.wrong():
            order = order[:-1]
        if d.chance(0.5):
            return "{0}.permute" + f"({', '.join(map(str, order))})", (v.name,)
        return call(d, "permute", v, f", {tuple(order)!r}")
    if kind == "movedim":
        name = d.choice(["movedim", "moveaxis"])
        return call(d, name, v, f", {d.dim(v)}, {d.dim(v)}")
    return "{0}." + kind, (v.name,)


@spec("Tensor.expand", "Tensor.expand_as", "broadcast_to",
      "Tensor.broadcast_to", "broadcast_tensors", "Tensor.repeat", "repeat_interleave",
      "Tensor.repeat_interleave", "meshgrid", weight=2)  # fmt: skip
def broadcast(d):
    v = d.value(floats=not d.chance(0.2), max_rank=3)
    if v is None:
        return None
    kind = d.choice(["expand", "expand_as", "broadcast_to", "broadcast_tensors", "repeat",
                     "repeat_interleave", "meshgrid"])  # fmt: skip
    if kind in ("expand", "broadcast_to"):
        shape = [s if s != 1 or d.chance(0.5) else d.rng.randint(0, 3) for s in v.shape]
        shape = [d.rng.randint(1, 3)] * d.rng.randint(0, 1) + shape
        if d.chance(0.3) and shape:
            shape[-1] = -1
        if kind == "expand" and d.chance(0.5):
            return "{0}.expand" + f"({', '.join(map(str, shape))})".replace(",)", ")"), (v.name,)
        if kind == "expand":
            return "{0}" + f".expand({tuple(shape)!r})", (v.name,)  # no torch.expand
        return call(d, kind, v, f", {tuple(shape)!r}")
    if kind in ("expand_as", "broadcast_tensors"):
        other = d.partner(v)
        if kind == "expand_as":
            return "{0}.expand_as({1})", (v.name, other.name)  # no torch.expand_as
        return "torch.broadcast_tensors({0}, {1})", (v.name, other.name)
    if kind == "repeat":
        times = [d.rng.randint(0, 2) if d.chance(0.2) else d.rng.randint(1, 2) for _ in v.shape]
        times = [d.rng.randint(1, 2)] * d.rng.randint(0, 1) + times
        return "{0}.repeat" + f"({tuple(times)!r})", (v.name,)
    if kind == "repeat_interleave":
        dim = f", dim={d.dim(v)}" if d.chance(0.6) else ""
        return call(d, kind, v, f", {d.rng.randint(0, 3)}{dim}")
    flat = d.value(max_rank=1)
    if flat is None or v.rank > 1:
        return None
    indexing = d.choice(["", ", indexing='ij'", ", indexing='xy'"])
    return f"torch.meshgrid({{0}}, {{1}}{indexing})", (v.name, flat.name)


@spec("narrow", "Tensor.narrow", "flip", "Tensor.flip", "roll", "Tensor.roll", "tril",
      "Tensor.tril", "Tensor.tril_", "triu", "Tensor.triu", "Tensor.triu_", "diag", "Tensor.diag",
      "diagonal", "Tensor.diagonal", "trace", "Tensor.trace", weight=3)  # fmt: skip
def rearrange(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    kind = d.choice(["narrow", "flip", "roll", "tril", "triu", "diag", "diagonal", "trace"])
    if kind == "narrow":
        dim = d.dim(v)
        size = v.shape[dim % v.rank] if v.rank and -v.rank <= dim < v.rank else 1
        start = d.rng.randint(-size, size)
        length = d.rng.randint(0, max(0, size - (start % size if size else 0)))
        return call(d, "narrow", v, f", {dim}, {start}, {length + d.wrong()}")
    if kind == "flip":
        dims = d.dims(v)
        dims = (dims,) if isinstance(dims, int) else dims or (0,)
        return call(d, "flip", v, f", {dims!r}")
    if kind == "roll":
        if d.chance(0.3):
            return call(d, "roll", v, f", {d.rng.randint(-3, 3)}")
        return call(d, "roll", v, f", {d.rng.randint(-3, 3)}, {d.dim(v)}")
    if kind in ("tril", "triu"):
        diagonal = f", {d.rng.randint(-2, 2)}" if d.chance(0.5) else ""
        if d.chance(0.3):
            return "{0}." + f"{kind}_({diagonal.lstrip(', ')})", (v.name,)
        return call(d, kind, v, diagonal)
    if kind == "diag":
        return call(d, "diag", v, f", {d.rng.randint(-2, 2)}" if d.chance(0.5) else "")
    if kind == "diagonal":
        if d.chance(0.5):
            return call(d, "diagonal", v, f", {d.rng.randint(-2, 2)}, {d.dim(v)}, {d.dim(v)}")
        return call(d, "diagonal", v)
    return call(d, "trace", v)


@spec("cat", "concat", "concatenate", "stack", "split", "Tensor.split", "chunk", "Tensor.chunk",
      "unbind", "Tensor.unbind", weight=3)  # fmt: skip
def join_and_split(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    kind = d.choice(["cat", "stack", "split", "chunk", "unbind"])
    if kind in ("cat", "stack"):
        others = [w for w in d.pool if w.rank == v.rank and (kind == "cat" or w.shape == v.shape)]
        other = d.choice(others) if others and not d.wrong() else d.choice(d.pool)
        name = d.choice(["cat", "concat", "concatenate"]) if kind == "cat" else "stack"
        dim = d.dim(v) if kind == "cat" or v.rank == 0 else d.rng.randrange(-v.rank - 1, v.rank + 1)
        inputs = d.choice(["[{0}, {1}]", "({0}, {1}, {0})", "[{0}]"])
        return f"torch.{name}({inputs}, dim={dim})", (v.name, other.name)
    if kind == "split":
        if d.chance(0.5) and v.rank:
            dim = d.dim(v)
            size = v.shape[dim % v.rank] if -v.rank <= dim < v.rank else 1
            first = d.rng.randint(0, size)
            sizes = [first, size - first + d.wrong()]
            return call(d, "split", v, f", {sizes}, dim={dim}")
        return call(d, "split", v, f", {d.rng.randint(1, 3) - d.wrong()}, {d.dim(v)}")
    if kind == "chunk":
        return call(d, "chunk", v, f", {d.rng.randint(1, 4) - d.wrong()}, {d.dim(v)}")
    return call(d, "unbind", v, f", {d.dim(v)}" if d.chance(0.5) else "")


# ---- indexing: reading and assigning with ints, slices, None, ..., lists, masks, index tensors --


def _index(d, v):
    """An index for `v`: a tuple of ints (negative, sometimes out of range), slices (with steps),
    None, Ellipsis, lists, int tensors and bool masks."""
    parts, dims = [], list(v.shape)
    for size in dims[: d.rng.randint(0, max(len(dims), 1))]:
        roll = d.rng.random()
        if roll < 0.25:
            parts.append(str(d.rng.randint(-size, size - 1) if size and not d.wrong() else size))
        elif roll < 0.6:
            start = d.choice(["", str(d.rng.randint(-size - 1, size + 1))])
            stop = d.choice(["", str(d.rng.randint(-size - 1, size + 1))])
            step = d.choice(["", "", ":2", ":3"])
            parts.append(f"{start}:{stop}{step}")
        elif roll < 0.7:
            parts.append("None")
        elif roll < 0.85 and size:
            chosen = [d.rng.randint(-size, size - 1) for _ in range(d.rng.randint(0, 3))]
            parts.append(
                repr(chosen) if d.chance(0.5) else f"torch.tensor({chosen!r}, dtype=torch.int64)"
            )
        else:
            parts.append(d.literal((size,), "bool"))
    if d.chance(0.15):
        parts.insert(d.rng.randint(0, len(parts)), "...")
    if not parts:
        return d.choice(["...", "()", "None", "0"])
    return ", ".join(parts) + ("," if len(parts) == 1 and d.chance(0.3) else "")


@spec("Tensor.__getitem__", weight=4)
def getitem(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    if d.chance(0.15):
        mask = d.value(floats=False)  # a bool value of the same shape is a mask
        if mask is not None and mask.dtype == "bool" and mask.shape == v.shape:
            return "{0}[{1}]", (v.name, mask.name)
    return "{0}" + f"[{_index(d, v)}]", (v.name,)


@spec("Tensor.__setitem__", weight=3)
def setitem(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    value, inputs = d.number(), (v.name,)
    if d.chance(0.4):
        other = d.choice(d.pool)
        value, inputs = "{1}", (v.name, other.name)
        if other.rank > 0 and d.chance(0.5):
            value = "{1}[0]"
    return "{0}" + f"[{_index(d, v)}] = {value}", inputs, True


@spec("gather", "Tensor.gather", "scatter", "Tensor.scatter", "Tensor.scatter_", "scatter_add",
      "Tensor.scatter_add", "Tensor.scatter_add_", "index_select", "Tensor.index_select",
      "index_add", "Tensor.index_add", "Tensor.index_add_", "take_along_dim", "masked_select",
      "Tensor.masked_select", "nonzero", "Tensor.nonzero", "argwhere", "Tensor.argwhere",
      weight=3)  # fmt: skip
def index_ops(d):
    v = d.value(floats=not d.chance(0.2), min_rank=1)
    if v is None or v.rank == 0:
        return None
    dim = d.dim(v)
    size = v.shape[dim % v.rank] if -v.rank <= dim < v.rank else 1
    high = max(size - 1, 0) + d.wrong()
    kind = d.choice(["gather", "scatter", "scatter_add", "index_select", "index_add",
                     "take_along_dim", "masked_select", "nonzero", "argwhere"])  # fmt: skip
    if kind in ("gather", "take_along_dim"):
        shape = list(v.shape)
        shape[dim % v.rank] = d.rng.randint(1, 3)
        index = d.literal(shape, "int64", 0, high)
        if kind == "take_along_dim":
            return f"torch.take_along_dim({{0}}, {index}, dim={dim})", (v.name,)
        return call(d, "gather", v, f", {dim}, {index}")
    if kind in ("scatter", "scatter_add"):
        index = d.literal(v.shape, "int64", 0, high)
        source = d.choice(["{0}", "{0} * 2"])
        if kind == "scatter" and d.chance(0.4):
            source = d.number()
        form = d.choice([f"torch.{kind}({{0}}, ", f"{{0}}.{kind}(", f"{{0}}.{kind}_("])
        return form + f"{dim}, {index}, {source})", (v.name,)
    if kind in ("index_select", "index_add"):
        picks = d.literal((d.rng.randint(0, 3),), "int64", 0, high)
        if kind == "index_select":
            return call(d, "index_select", v, f", {dim}, {picks}")
        count = len(picks.split(",")) if "[]" not in picks else 0
        shape = list(v.shape)
        shape[dim % v.rank] = count
        source = d.literal(shape, v.dtype if v.dtype != "bool" else "float32")
        alpha = f", alpha={d.number()}" if d.chance(0.3) else ""
        index = (
            d.literal((count,), "int64", 0, high)
            if count
            else "torch.tensor([], dtype=torch.int64)"
        )
        form = d.choice(["torch.index_add({0}, ", "{0}.index_add(", "{0}.index_add_("])
        return form + f"{dim}, {index}, {source}{alpha})", (v.name,)
    if kind == "masked_select":
        return call(d, "masked_select", v, ", {0} > 0")
    if kind == "nonzero" and d.chance(0.3):
        return call(d, "nonzero", v, ", as_tuple=True")
    return call(d, kind, v)


# ---- matrix products --------------------------------------------------------------------------


@spec("matmul", "Tensor.matmul", "Tensor.__matmul__", "Tensor.__rmatmul__", "mm", "Tensor.mm",
      "bmm", "Tensor.bmm", "mv", "Tensor.mv", "dot", "Tensor.dot", "outer", "Tensor.outer", "ger",
      "Tensor.ger", "F.linear", weight=3)  # fmt: skip
def matrix_product(d):
    a = d.value(floats=not d.chance(0.1), min_rank=1)
    if a is None:
        return None
    k = a.shape[-1]
    kind = d.choice(["matmul", "mm", "bmm", "mv", "dot", "outer", "linear"])
    dtype = a.dtype if a.dtype in FLOATS and not d.wrong() else "float64"
    n = d.rng.randint(0, 3) if d.chance(0.2) else d.rng.randint(1, 3)
    if kind == "matmul":
        shape = d.choice([(k,), (k, n), (2, k, n), (1, k, n)])
        others = [
            w for w in d.pool if w.rank and w.shape[:1] == (k,) or w.rank >= 2 and w.shape[-2] == k
        ]
        if others and d.chance(0.5):
            form = d.choice(["({0} @ {1})", "torch.matmul({0}, {1})", "{0}.matmul({1})"])
            return form, (a.name, d.choice(others).name)
        form = d.choice(["({0} @ B)", "torch.matmul({0}, B)", "{0}.matmul(B)", "(B.mT @ {0}.mT)"])
        return form.replace("B", d.literal(shape, dtype)), (a.name,)
    if kind in ("mm", "bmm", "mv", "dot"):
        shape = {"mm": (k, n), "bmm": (a.shape[0], k, n), "mv": (k,), "dot": (k,)}[kind]
        return call(d, kind, a, ", " + d.literal(shape, dtype))[0], (a.name,)
    if kind == "outer":
        name = d.choice(["outer", "ger"])
        return call(d, name, a, ", " + d.literal((n,), dtype))[0], (a.name,)
    weight = d.literal((n, k), dtype)
    bias = d.choice(["", ", " + d.literal((n,), dtype), ", None"])
    return f"torch.nn.functional.linear({{0}}, {weight}{bias})", (a.name,)


# ---- sorting, picking the largest, counting ----------------------------------------------------


@spec("sort", "Tensor.sort", "argsort", "Tensor.argsort", "msort", "Tensor.msort", "topk",
      "Tensor.topk", "unique", "Tensor.unique", "unique_consecutive", "Tensor.unique_consecutive",
      "histc", "Tensor.histc", "histogram", "Tensor.histogram", "bincount", "Tensor.bincount",
      weight=2)  # fmt: skip
def sort_and_count(d):
    v = d.value(floats=not d.chance(0.3))
    if v is None:
        return None
    kind = d.choice(["sort", "argsort", "msort", "topk", "unique", "unique_consecutive", "histc",
                     "histogram", "bincount"])  # fmt: skip
    if kind in ("sort", "argsort"):
        arguments = f", dim={d.dim(v)}" if d.chance(0.6) else ""
        arguments += d.choice(["", ", descending=True", ", descending=False"])
        if kind == "sort" and d.chance(0.3):
            arguments += ", stable=True"
        return call(d, kind, v, arguments)
    if kind == "msort":
        return call(d, kind, v)
    if kind == "topk":
        size = v.shape[-1] if v.shape else 1
        k = d.rng.randint(0, size) + d.wrong()
        options = d.choice(["", ", largest=False", f", dim={d.dim(v)}", ", sorted=True"])
        return call(d, "topk", v, f", {k}{options}")
    if kind in ("unique", "unique_consecutive"):
        options = "".join(
            f", {o}=True" for o in ("return_inverse", "return_counts") if d.chance(0.3)
        )
        if d.chance(0.3):
            options += f", dim={d.dim(v)}"
        return call(d, kind, v, options)
    if kind in ("histc", "histogram"):
        bins = d.rng.randint(1, 5)
        if kind == "histogram":
            return call(d, kind, v, f", {bins}")
        bounds = d.choice(["", ", min=-1, max=1", ", 0, 0"])
        return call(d, kind, v, f", bins={bins}{bounds}")
    counts = d.literal((d.rng.randint(0, 5),), "int64", 0 - d.wrong(), 4)
    weights = ", weights={0}" if v.rank == 1 and d.chance(0.3) else ""
    extra = f", minlength={d.rng.randint(0, 6)}" if d.chance(0.4) else ""
    return f"torch.bincount({counts}{weights}{extra})", (v.name,)


# ---- torch.nn.functional: activations, losses, layers ---------------------------------------

F = "torch.nn.functional."


@spec("F.relu", "F.sigmoid", "F.tanh", "F.silu", "F.gelu", "F.leaky_relu", "F.elu", "F.softplus",
      "F.softmax", "F.log_softmax", "F.dropout", "F.normalize", "F.one_hot", weight=3)  # fmt: skip
def activation(d):
    v = d.value(floats=not d.chance(0.1))
    if v is None:
        return None
    kind = d.choice(["relu", "sigmoid", "tanh", "silu", "gelu", "leaky_relu", "elu", "softplus",
                     "softmax", "log_softmax", "dropout", "normalize", "one_hot"])  # fmt: skip
    options = {
        "gelu": d.choice(["", ", approximate='tanh'", ", approximate='none'"]),
        "leaky_relu": d.choice(["", ", 0.2", ", negative_slope=-1.0"]),
        "elu": d.choice(["", ", alpha=0.5", ", 2.0"]),
        "softplus": d.choice(["", ", beta=2.0", ", beta=0.5, threshold=1.0"]),
        "softmax": f", dim={d.dim(v)}" + d.choice(["", ", dtype=torch.float64"]),
        "log_softmax": f", dim={d.dim(v)}",
        "dropout": d.choice([", p=0.0", ", 0.5, training=False", ", p=1.0"]),
        "normalize": d.choice(["", f", p=1.0, dim={d.dim(v)}", f", dim={d.dim(v)}, eps=0.5"]),
    }.get(kind, "")
    if kind == "one_hot":
        count = d.rng.randint(0, 4)
        labels = d.literal((count,), "int64", 0, 3 + d.wrong())
        classes = d.choice(["", ", 4", ", num_classes=5", ", -1"])
        return f"{F}one_hot({labels}{classes})", ()
    if kind == "relu" and d.chance(0.2):
        options = ", inplace=True"
    return f"{F}{kind}({{0}}{options})", (v.name,)


LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
          "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy"]  # fmt: skip


@spec(*[f"F.{name}" for name in LOSSES], weight=3)
def loss(d):
    name = d.choice(LOSSES)
    classified = name in ("nll_loss", "cross_entropy")
    v = d.value(floats=not d.chance(0.1), min_rank=1 if classified else 0)
    if v is None:
        return None
    reduction = d.choice(["", ", reduction='sum'", ", reduction='none'", ", reduction='mean'"])
    if classified and v.rank:  # (N, C, ...) or (C,) scores, class targets
        classes = v.shape[1] if v.rank >= 2 else v.shape[0]
        target_shape = (v.shape[0],) + v.shape[2:] if v.rank >= 2 else ()
        if name == "cross_entropy" and d.chance(0.25):  # class probabilities as targets
            target = d.literal(v.shape, v.dtype, 0, 1)
        else:
            target = d.literal(target_shape, "int64", 0, max(classes - 1, 0) + d.wrong())
            if not target_shape:
                target = target.replace("[", "").replace("]", "")  # a 0-d target
        options = d.choice(["", ", ignore_index=0", ", label_smoothing=0.1"])
        if name == "nll_loss":
            options = options.replace(", label_smoothing=0.1", "")
            if d.chance(0.3):
                options += ", weight=" + d.literal((classes,), v.dtype, 0, 2)
        scores = "{0}.log_softmax(1 if {0}.dim() > 1 else 0)" if name == "nll_loss" else "{0}"
        return f"{F}{name}({scores}, {target}{options}{reduction})", (v.name,)
    target = d.literal(v.shape, v.dtype if d.chance(0.9) else "float64", -1, 2)
    if name.startswith("binary") or d.chance(0.4):
        target = "{1}" if d.chance(0.5) else target
    inputs = (v.name, d.partner(v, same_shape=True).name) if "{1}" in target else (v.name,)
    if name == "binary_cross_entropy":
        probability = d.literal(v.shape, v.dtype, 0, 1)
        target = "{1}.sigmoid()" if "{1}" in target else probability
        return f"{F}{name}({{0}}.sigmoid(), {target}{reduction})", inputs
    options = {"smooth_l1_loss": ", beta=0.5", "huber_loss": ", delta=0.7"}.get(name, "")
    if name == "binary_cross_entropy_with_logits" and d.chance(0.3):
        options = ", pos_weight=" + d.literal(v.shape[-1:], v.dtype, 0, 2)
    return f"{F}{name}({{0}}, {target}{options if d.chance(0.5) else ''}{reduction})", inputs


@spec("F.layer_norm", "F.batch_norm", "F.embedding", "F.pad", "F.conv1d", "F.conv2d",
      "F.max_pool2d", "F.avg_pool2d", weight=2)  # fmt: skip
def layer(d):
    kind = d.choice(["layer_norm", "batch_norm", "embedding", "pad", "conv1d", "conv2d",
                     "max_pool2d", "avg_pool2d"])  # fmt: skip
    low = {"conv1d": 2, "conv2d": 3, "max_pool2d": 3, "avg_pool2d": 3, "batch_norm": 2}
    v = d.value(min_rank=low.get(kind, 1), max_rank=low.get(kind, 3) + 1, nonempty=True)
    if v is None:
        return None
    if kind == "layer_norm":
        shape = v.shape[-d.rng.randint(1, v.rank) :]
        affine = d.choice(["", f", {d.literal(shape, v.dtype)}, {d.literal(shape, v.dtype)}"])
        return f"{F}layer_norm({{0}}, {tuple(shape)!r}{affine})", (v.name,)
    if kind == "batch_norm":
        channels = v.shape[1]
        mean, var = d.literal((channels,), v.dtype), d.literal((channels,), v.dtype, 0, 2)
        training = d.choice(["", ", training=True"])
        return f"{F}batch_norm({{0}}, {mean}, {var}{training})", (v.name,)
    if kind == "embedding":
        indices = d.literal((d.rng.randint(0, 4),), "int64", 0, v.shape[0] - 1 + d.wrong())
        if v.rank != 2:
            return None
        return f"{F}embedding({indices}, {{0}})", (v.name,)
    if kind == "pad":
        pads = tuple(d.rng.randint(-1, 2) for _ in range(2 * d.rng.randint(1, min(v.rank, 3))))
        value = d.choice(["", ", value=1.5", ", mode='constant', value=-1.0"])
        return f"{F}pad({{0}}, {pads!r}{value})", (v.name,)
    spatial = 1 if kind == "conv1d" else 2
    size = d.rng.randint(1, 2)
    stride = d.choice(["", ", stride=2", ", padding=1", ", stride=1, padding=1"])
    if kind.startswith("conv"):
        channels = v.shape[-spatial - 1]
        weight = d.literal((d.rng.randint(1, 2), channels) + (size,) * spatial, v.dtype)
        bias = d.choice(["", ", None"])
        return f"{F}{kind}({{0}}, {weight}{bias}{stride})", (v.name,)
    stride = stride.replace("padding=1", "padding=0")
    return f"{F}{kind}({{0}}, {size}{stride})", (v.name,)


# ---- making tensors: from values, like another, from the seeded random stream -----------------


@spec("zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
      "randint_like", "zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye",
      "tensor", "as_tensor", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
      "Tensor.bernoulli", "multinomial", "Tensor.multinomial", "Tensor.uniform_",
      "Tensor.normal_", "Tensor.bernoulli_", "Tensor.exponential_", "Tensor.random_",
      "Tensor.fill_", "Tensor.zero_", "Tensor.copy_", weight=2)  # fmt: skip
def create(d):
    v = d.value(floats=not d.chance(0.3))
    if v is None:
        return None
    shape = v.shape
    dtype = d.choice(["", ", dtype=torch.float64", ", dtype=torch.int64", ", dtype=torch.bool"])
    kind = d.choice(["like", "shape", "range", "tensor", "random", "in place"])
    if kind == "like":
        name = d.choice(["zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
                         "randn_like", "randint_like"])  # fmt: skip
        value = {"full_like": f", {d.number()}", "randint_like": ", 5"}.get(name, "")
        made = f"torch.{name}({{0}}{value}{dtype})"
        return (made + ".shape" if name == "empty_like" else made), (v.name,)
    if kind == "shape":
        name = d.choice(["zeros", "ones", "full", "empty"])
        value = f", {d.number()}" if name == "full" else ""
        made = f"torch.{name}({tuple(shape)!r}{value}{dtype})"
        return (made + ".shape" if name == "empty" else made), ()
    if kind == "range":
        name = d.choice(["arange", "linspace", "logspace", "eye"])
        if name == "arange":
            bounds = d.choice(["5", "1, 4", "0, 1, 0.25", "3.0", "-2, 2, 3", "0", "2, 0, -1"])
        elif name == "eye":
            bounds = d.choice(["3", "2, 3", "0"])
        else:
            bounds = d.choice(["0, 1, 5", "-1.0, 1.0, 1", "0, 2, steps=3", "2, -2, 0"])
        return f"torch.{name}({bounds}{dtype})", ()
    if kind == "tensor":
        data = d.choice(["[1, 2]", "[1.5, -0.0]", "[True, False]", "3", "[[1, 2], [3, 4.5]]",
                         "[]", "{0}", "[1, 2.5, True]"])  # fmt: skip
        name = d.choice(["tensor", "as_tensor"])
        return f"torch.{name}({data}{dtype})", (v.name,) if "{0}" in data else ()
    if kind == "random":
        return d.choice([
            f"torch.rand({tuple(shape)!r})", f"torch.randn({tuple(shape)!r}{dtype})",
            f"torch.randint(0, 5, {tuple(shape)!r})", f"torch.randperm({d.rng.randint(0, 6)})",
            f"torch.normal(0.0, 2.0, {tuple(shape)!r})", "torch.bernoulli({0}.sigmoid())",
            "{0}.sigmoid().bernoulli()", "torch.multinomial({0}.abs() + 0.1, 2)",
            "{0}.abs().add(0.1).multinomial(3, replacement=True)",
        ]), (v.name,)  # fmt: skip
    return d.choice([
        "{0}.uniform_()", "{0}.normal_(1.0, 2.0)", "{0}.bernoulli_(0.5)", "{0}.exponential_()",
        "{0}.random_(0, 5)", f"{{0}}.fill_({d.number()})", "{0}.fill_(torch.tensor(2.0))",
        "{0}.zero_()", "{0}.copy_({1})",
    ]), (v.name, d.partner(v).name)  # fmt: skip


# ---- asking a tensor about itself -------------------------------------------------------------


@spec("Tensor.item", "Tensor.tolist", "Tensor.numel", "numel", "Tensor.nelement", "Tensor.dim",
      "Tensor.ndimension", "Tensor.size", "Tensor.stride", "Tensor.is_contiguous",
      "Tensor.element_size", "Tensor.is_floating_point", "is_floating_point", "Tensor.is_signed",
      "Tensor.is_complex", "is_complex", "is_tensor", "result_type", "promote_types", "can_cast",
      "Tensor.__len__", "Tensor.__bool__", "Tensor.__float__", "Tensor.__int__",
      "Tensor.__index__", "Tensor.__iter__")  # fmt: skip
def inspect_tensor(d):
    v = d.choice(d.pool)
    question = d.choice([
        "{0}.item()", "{0}.tolist()", "{0}.numel()", "torch.numel({0})", "{0}.nelement()",
        "{0}.dim()", "{0}.ndimension()", "{0}.size()", f"{{0}}.size({d.dim(v)})", "{0}.stride()",
        "{0}.is_contiguous()", "{0}.element_size()", "{0}.is_floating_point()",
        "torch.is_floating_point({0})", "{0}.is_signed()", "{0}.is_complex()",
        "torch.is_complex({0})", "torch.is_tensor({0})", "torch.result_type({0}, 2.5)",
        "torch.result_type({0}, {1})", "torch.promote_types({0}.dtype, torch.int64)",
        "torch.can_cast({0}.dtype, torch.int64)", "len({0})", "bool({0})", "float({0})",
        "int({0})", "[0, 1, 2, 3][{0}]", "list({0})",
    ])  # fmt: skip
    return question, (v.name, d.choice(d.pool).name)


# ---- autograd on the way: leaves, hooks, detaching --------------------------------------------


@spec("Tensor.requires_grad_", "Tensor.retain_grad", "Tensor.register_hook", "Tensor.detach_",
      "Tensor.register_post_accumulate_grad_hook")  # fmt: skip
def autograd_calls(d):
    v = d.choice(d.pool)
    returns_tensor = ["{0}.requires_grad_()", "{0}.requires_grad_(False)", "{0}.detach_()",
                      "{0}.detach().requires_grad_()"]  # fmt: skip
    returns_other = ["{0}.retain_grad()", "{0}.register_hook(lambda grad: grad * 2)",
                     "{0}.register_hook(lambda grad: None)",
                     "{0}.register_post_accumulate_grad_hook(lambda tensor: None)"]  # fmt: skip
    if d.chance(0.5):
        return d.choice(returns_tensor), (v.name,)
    return d.choice(returns_other), (v.name,), True  # a statement: the step's value is v


# ---- what the fuzzer does not call, and why ----------------------------------------------------

EXCLUDED = {
    # state of the library, not of a tensor: the runner sets these before each program
    "manual_seed": "the runner seeds both libraries before each program",
    "seed": "seeds from the clock: nothing to compare",
    "initial_seed": "the seed the runner set",
    "get_rng_state": "the generator's bytes: compared through the numbers it draws",
    "set_rng_state": "the generator's bytes: compared through the numbers it draws",
    "set_default_dtype": "global state the runner fixes to float32",
    "get_default_dtype": "global state the runner fixes to float32",
    "set_default_tensor_type": "global state the runner fixes to float32",
    "set_default_device": "devices: the fuzzer compares on the CPU",
    "get_default_device": "devices: the fuzzer compares on the CPU",
    "is_grad_enabled": "global state the runner fixes",
    "is_inference_mode_enabled": "global state the runner fixes",
    "set_num_threads": "threads do not change results",
    "get_num_threads": "threads do not change results",
    "set_printoptions": "printing",
    # devices, I/O, printing, tools around the engine
    "Tensor.cuda": "devices: the fuzzer compares on the CPU",
    "Tensor.numpy": "gives a numpy array: every observation already reads values through it",
    "Tensor.data_ptr": "an address: differs by nature",
    "from_numpy": "takes a numpy array: the program's source names only torch",
    "save": "I/O (our own file format, by design)",
    "load": "I/O (our own file format, by design)",
    "show": "draws a graph (viz)",
    "record": "records a graph for the viewer (viz)",
    "compile": "autograd_lab's compiler: tests/test_compile.py compares it with eager",
    "as_torch": "an import helper (tests/test_as_torch.py)",
    "load_ipython_extension": "the notebook magic",
    "expand": "not in PyTorch, which has only the method x.expand (drawn)",
    "expand_as": "not in PyTorch, which has only the method x.expand_as (drawn)",
    "view": "not in PyTorch, which has only the method x.view (drawn)",
    "Tensor.backward": "called by every program's backward phase (program.py), not as a step",
}


# ---- drawing a program -------------------------------------------------------------------------


def generate(seed, max_steps=12):
    """The program that `seed` draws: the same seed, the same program."""
    import torch

    rng = random.Random(seed)
    leaves = tuple(_leaf(rng, f"x{i}", None) for i in range(rng.choice([1, 1, 2, 2, 3])))
    leaves = (leaves[0],) + tuple(_leaf(rng, leaf.name, leaves[0]) for leaf in leaves[1:])
    namespace = {"torch": torch}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        exec("nan, inf = float('nan'), float('inf')", namespace)
        for leaf in leaves:
            exec(leaf.source(), namespace)
        steps = []
        for number in range(rng.randint(1, max_steps)):
            step = _step(rng, f"v{number}", namespace)
            if step is not None:
                steps.append(step)
    pool = _pool(namespace, torch)
    losses = [v for v in pool if v.is_float and v.requires_grad]
    if losses and rng.random() < 0.85:
        backward = rng.choice(
            ["backward"] * 3
            + ["backward twice, retain_graph", "backward twice"]
            + ["grad, create_graph, then second order"] * 2
        )
        return Program(leaves, tuple(steps), backward, losses[-1].name, seed)
    return Program(leaves, tuple(steps), None, None, seed)


def _step(rng, name, namespace, attempts=8):
    """One step that runs in PyTorch (or, one time in four, one that raises there)."""
    import torch

    for _ in range(attempts):
        pool = _pool(namespace, torch)
        chosen = rng.choices(SPECS, weights=[s.weight for s in SPECS])[0]
        made = chosen.draw(Draw(rng, pool))
        if made is None:
            continue
        statement = len(made) > 2 and made[2]
        step = Step(name, api_name(made[0], statement), made[0], tuple(made[1]), statement)
        trial = dict(namespace)
        try:
            exec(step.source(), trial)
        except Exception:
            if rng.random() < 0.25:
                return step  # an error path: do both libraries raise the same class?
            continue
        if _elements(trial[name], torch) > MAX_ELEMENTS:
            continue
        namespace.clear()
        namespace.update(trial)
        return step
    return None


def api_name(call, statement=False):
    """The public name a step's call exercises, for reports: "sum", "Tensor.add_", "F.relu",
    "getitem", "setitem", or the operator ("x + y")."""
    if statement and re.match(r"\{0\}\[.*\] = ", call):
        return "setitem"
    found = re.match(r"torch\.nn\.functional\.(\w+)|torch\.(\w+(?:\.\w+)?)\(", call)
    if found:
        return f"F.{found[1]}" if found[1] else found[2]
    found = re.match(r"\{0\}\.(\w+)", call)
    if found:
        return f"Tensor.{found[1]}"
    if call.startswith("{0}["):
        return "getitem"
    if call.startswith("(") and "{0} " in call:  # an operator: (x + y), (2 - x), x += y
        operator = call.split("{0} ")[1].split(" ")[0]
        return f"x {operator} y"
    if call.startswith("{0} "):
        return f"x {call.split(' ')[1]} y"
    if call.startswith("(") and call.endswith(" {0})"):  # reflected: (2.0 - x)
        return f"number {call.split(' ')[1]} x"
    if re.match(r"\([-+~]\{0\}\)", call):
        return f"{call[1]}x"
    if call.endswith("[{0}]"):
        return "Tensor.__index__"
    head = re.match(r"\(?(\S+?)\s*[({]", call)
    return head[1] if head else call[:20]


def _elements(value, torch):
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (tuple, list)):
        return sum(_elements(item, torch) for item in value)
    return 0


def _pool(namespace, torch):
    """The tensors the program has made so far (a tuple's tensors too: v3[0], v3[1])."""
    pool = []
    for name, value in namespace.items():
        if isinstance(value, torch.Tensor):
            pool.append(_value(name, value))
        elif isinstance(value, (tuple, list)) and name != "torch":
            for index, item in enumerate(value[:4]):
                if isinstance(item, torch.Tensor):
                    pool.append(_value(f"{name}[{index}]", item))
    return pool


def _value(name, tensor):
    dtype = str(tensor.dtype).replace("torch.", "")
    return Value(name, tuple(tensor.shape), dtype, tensor.requires_grad)


def _leaf(rng, name, first):
    """A leaf tensor; after the first, most leaves have a shape that broadcasts with the first's."""
    if first is not None and rng.random() < 0.7:
        shape = list(first.shape)
        if shape and rng.random() < 0.4:
            shape = shape[rng.randint(1, len(shape)) :]  # fewer dims
        shape = [1 if rng.random() < 0.25 else size for size in shape]
    else:
        rank = rng.choices([0, 1, 2, 3, 4], weights=[1, 3, 3, 2, 1])[0]
        shape = [rng.choices([0, 1, 2, 3, 4], weights=[0.3, 2, 3, 3, 1])[0] for _ in range(rank)]
    dtype = rng.choices(["float32", "float64", "int64", "bool"], weights=[6, 2, 1.5, 1])[0]
    count = int(np.prod(shape, dtype=int))
    special = rng.random() < 0.15  # NaN, ±inf and -0.0 in this leaf
    values = []
    for _ in range(count):
        if dtype == "bool":
            values.append(rng.random() < 0.5)
        elif dtype == "int64":
            values.append(rng.randint(-3, 4))
        elif special and rng.random() < 0.3:
            values.append(rng.choice([float("nan"), float("inf"), -float("inf"), -0.0]))
        elif rng.random() < 0.4:
            values.append(rng.choice([0.0, 1.0, -1.0, 0.5, 2.0, -2.0]))  # zeros, ±1 and ties
        else:
            values.append(round(rng.uniform(-3, 3), 2))
    layout = rng.choices(["contiguous", "transposed", "strided", "expanded"], weights=[7, 1, 1, 1])[
        0
    ]
    if layout == "expanded" and shape:
        row = count // shape[0] if shape[0] else 0
        values = values[:row] * shape[0]  # an expanded dim repeats one row
    requires_grad = dtype in FLOATS and rng.random() < 0.75
    return Leaf(name, tuple(shape), dtype, tuple(values), requires_grad, layout)
