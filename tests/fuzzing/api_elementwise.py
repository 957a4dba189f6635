"""Elementwise calls: the op records' functions, arithmetic, comparisons, logic, clamp, where,
lerp, ..."""

import inspect

from autograd_lab.ops import registry

from .draw import call, spec

# ---- the op records: one spec per record kind, the names from autograd_lab.ops.registry ----------


def _records(arity):
    """(public names, has a method?, has an in-place method?) of each op record whose forward
    takes `arity` tensors and whose function is public (ops/registry.py reads the same fields)."""
    found = []
    for cls in registry.op_classes():
        names = cls.__dict__.get("function")
        if names is None:
            continue
        names = (names,) if isinstance(names, str) else tuple(names)
        if len(inspect.signature(cls.forward).parameters) - 1 == arity:  # without ctx
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


OPERATOR_NAMES = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv",
    "//": "floordiv",
    "%": "mod",
    "**": "pow",
    "==": "eq",
    "!=": "ne",
    "<": "lt",
    "<=": "le",
    ">": "gt",
    ">=": "ge",
}


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


@spec(
    *[n for names, _, _ in ARITHMETIC.values() for n in _forms(names)],
    *_dunders(o for _, o, _ in ARITHMETIC.values() if o),
    weight=6,
)
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


@spec(
    *[n for names, _ in COMPARISONS.values() for n in _forms(names, inplace=False)],
    *_dunders([o for _, o in COMPARISONS.values()]),
    weight=2,
)
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


@spec(
    "Tensor.__and__",
    "Tensor.__or__",
    "Tensor.__invert__",
    "Tensor.__xor__",
    "Tensor.__rand__",
    "Tensor.__ror__",
    "Tensor.__rxor__",
    "bitwise_and",
    "Tensor.bitwise_and",
    "bitwise_or",
    "Tensor.bitwise_or",
    "bitwise_xor",
    "Tensor.bitwise_xor",
    "bitwise_not",
    "Tensor.bitwise_not",
    "logical_and",
    "Tensor.logical_and",
    "logical_or",
    "Tensor.logical_or",
    "logical_xor",
    "Tensor.logical_xor",
    "logical_not",
    "Tensor.logical_not",
)
def logical(d):
    a = d.value(floats=False)
    if a is None:
        return None
    b = d.partner(a)
    roll = d.rng.random()
    if roll < 0.2:
        return "(~{0})", (a.name,)
    if roll < 0.35:
        return f"({{0}} {d.choice('&|^')} {{1}})", (a.name, b.name)
    if roll < 0.4:
        return f"({d.choice(['True', '3', '-1'])} {d.choice('&|^')} {{0}})", (a.name,)
    if roll < 0.5:
        name = d.choice(["bitwise_and", "bitwise_or", "bitwise_xor"])
        return call(d, name, a, ", {1}")[0], (a.name, b.name)
    if roll < 0.55:
        return call(d, d.choice(["logical_not", "bitwise_not"]), a)
    name = d.choice(["logical_and", "logical_or", "logical_xor"])
    return f"torch.{name}({{0}}, {{1}})", (a.name, b.name)


@spec(
    "Tensor.__neg__",
    "Tensor.__pos__",
    "Tensor.__abs__",
    "square",
    "Tensor.square",
    "Tensor.square_",
    "isnan",
    "Tensor.isnan",
    "isinf",
    "Tensor.isinf",
    "isfinite",
    "Tensor.isfinite",
    "isposinf",
    "Tensor.isposinf",
    "isneginf",
    "Tensor.isneginf",
    "logit",
    "Tensor.logit",
    "Tensor.logit_",
    "round",
    "Tensor.round",
    "Tensor.round_",
    "fix",
    "Tensor.fix",
    "Tensor.fix_",
    "nan_to_num",
    "Tensor.nan_to_num",
    "Tensor.nan_to_num_",
    "Tensor.float",
    "Tensor.double",
    "Tensor.long",
    "Tensor.int",
    "Tensor.bool",
    "Tensor.half",
    "Tensor.byte",
    "Tensor.char",
    "Tensor.short",
    "Tensor.to",
    "Tensor.type",
    "Tensor.type_as",
    "Tensor.detach",
    "Tensor.contiguous",
    "Tensor.clone",
    "Tensor.cpu",
)
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
        [
            "float()",
            "double()",
            "long()",
            "int()",
            "bool()",
            "half().float()",
            "byte().long()",
            "char().long()",
            "short().long()",
            "to(torch.float64)",
            "to(dtype=torch.int64)",
            "type(torch.float64)",
            "detach()",
            "contiguous()",
            "clone()",
            "cpu()",
            "to('cpu')",
        ]
    )
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


@spec(
    "where",
    "Tensor.where",
    "lerp",
    "Tensor.lerp",
    "Tensor.lerp_",
    "addcmul",
    "Tensor.addcmul",
    "Tensor.addcmul_",
    "addcdiv",
    "Tensor.addcdiv",
    "Tensor.addcdiv_",
    "masked_fill",
    "Tensor.masked_fill",
    "Tensor.masked_fill_",
    weight=3,
)
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


@spec(
    "isclose",
    "Tensor.isclose",
    "allclose",
    "Tensor.allclose",
    "equal",
    "Tensor.equal",
    "dist",
    "Tensor.dist",
)
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
