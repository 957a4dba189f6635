"""What an op computes for ONE element, written once for numpy arrays and for fused kernels.

An elementwise op's record (its `kernel` in ops/*.py) is a small function of its inputs, written
with + - * / **, comparisons, `where` and the math functions of this module:

    kernel = staticmethod(lambda x: where(x > 0, x, 0.0))      # relu

Called on numpy arrays, it computes with numpy (`exp(array)` is `np.exp(array)`). Called on
`Expr`s, the names of values inside a kernel the fusion compiler is writing, it builds an
expression tree instead, which `source` prints as Python for numba to compile:

    >>> x = Expr.variable("v0")
    >>> source(1 + tan(x) * tan(x))
    '1.0 + tan(v0) * tan(v0)'

So one formula serves both, and the tests check that the two agree for every op.
"""

import math

import numpy as np


class Expr:
    """A node of an expression tree: `op` applied to `args` (Exprs, or numbers for constants).

    ops: "variable" (args: its name), "constant" (its value), the operators "+", "-", "*", "/",
    "**", "neg", "<", "<=", ">", ">=", "==", "!=", "and", "or", "not", "where" (condition,
    then, else), and otherwise the name of a function it calls ("exp", "tanh", ...).
    """

    __slots__ = ("op", "args")

    def __init__(self, op, *args):
        self.op, self.args = op, args

    @staticmethod
    def variable(name):
        return Expr("variable", name)

    def __repr__(self):
        return f"Expr({source(self)})"

    # ---- arithmetic and comparisons build trees --------------------------------------------------
    def __add__(self, other):
        return Expr("+", self, _expr(other))

    def __radd__(self, other):
        return Expr("+", _expr(other), self)

    def __sub__(self, other):
        return Expr("-", self, _expr(other))

    def __rsub__(self, other):
        return Expr("-", _expr(other), self)

    def __mul__(self, other):
        return Expr("*", self, _expr(other))

    def __rmul__(self, other):
        return Expr("*", _expr(other), self)

    def __truediv__(self, other):
        return Expr("/", self, _expr(other))

    def __rtruediv__(self, other):
        return Expr("/", _expr(other), self)

    def __pow__(self, other):
        return Expr("**", self, _expr(other))

    def __rpow__(self, other):
        return Expr("**", _expr(other), self)

    def __neg__(self):
        return Expr("neg", self)

    def __lt__(self, other):
        return Expr("<", self, _expr(other))

    def __le__(self, other):
        return Expr("<=", self, _expr(other))

    def __gt__(self, other):
        return Expr(">", self, _expr(other))

    def __ge__(self, other):
        return Expr(">=", self, _expr(other))

    def __eq__(self, other):
        return Expr("==", self, _expr(other))

    def __ne__(self, other):
        return Expr("!=", self, _expr(other))

    def __and__(self, other):
        return Expr("and", self, _expr(other))

    def __rand__(self, other):
        return Expr("and", _expr(other), self)

    def __or__(self, other):
        return Expr("or", self, _expr(other))

    def __ror__(self, other):
        return Expr("or", _expr(other), self)

    def __invert__(self):
        return Expr("not", self)

    def __abs__(self):
        return Expr("abs", self)

    __hash__ = object.__hash__  # == builds a tree, so hashing is by identity

    def __bool__(self):
        raise TypeError(
            "a kernel expression has no truth value while the kernel is being written: `if x > 0`"
            " cannot be decided for every element at once. Fix: write where(x > 0, a, b)."
        )

    # ---- questions the code generators ask ---------------------------------------------------
    def is_bool(self):
        """Is this a truth value (a comparison or a logical operation)?"""
        return self.op in _BOOLEAN or (self.op == "constant" and type(self.args[0]) is bool)

    def variables(self):
        """The names of the variables this expression reads."""
        if self.op == "variable":
            return {self.args[0]}
        found = set()
        for arg in self.args:
            if isinstance(arg, Expr):
                found |= arg.variables()
        return found

    def costly(self):
        """Does it call a function that costs far more than + or * (exp, tanh, **, ...)?"""
        if self.op == "**" or self.op in self.functions() - _CHEAP:
            return True
        return any(isinstance(arg, Expr) and arg.costly() for arg in self.args)

    def functions(self):
        """The names of the functions it calls (what a kernel module must import)."""
        found = {self.op} if _is_call(self.op) else set()
        for arg in self.args:
            if isinstance(arg, Expr):
                found |= arg.functions()
        return found

    def substitute(self, values):
        """This expression with each variable named in `values` replaced by its Expr."""
        if self.op == "variable":
            return values.get(self.args[0], self)
        if self.op == "constant":
            return self
        args = [arg.substitute(values) if isinstance(arg, Expr) else arg for arg in self.args]
        return Expr(self.op, *args)


_BOOLEAN = {"<", "<=", ">", ">=", "==", "!=", "and", "or", "not"}
_CHEAP = {"abs", "float", "float32", "float64"}  # calls that cost no more than arithmetic


def _is_call(op):
    return op not in _PRECEDENCE and op not in ("variable", "constant")


def _expr(value):
    return value if isinstance(value, Expr) else Expr("constant", value)


def _is_expr(*values):
    return any(isinstance(v, Expr) for v in values)


# ---- the functions: numpy's on arrays, a tree on Exprs -------------------------------------------


def _function(name, numpy_function):
    def function(x):
        return Expr(name, x) if isinstance(x, Expr) else numpy_function(x)

    function.__name__ = name
    function.__doc__ = f"{name} of an array (numpy's) or of a kernel expression"
    return function


FUNCTIONS = {
    "exp": np.exp,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "erf": lambda x: erf_of_array(x),  # numpy has none: ours, below
    "abs": np.abs,
}
exp, expm1, log, log1p, sqrt, sin, cos, tan, tanh, erf, abs = (
    _function(name, f) for name, f in FUNCTIONS.items()
)


# Rounding to the nearest whole number, halves to even (numpy's rint; Python's math has none).
rint = _function("rint", np.rint)


def __getattr__(name):
    """Any other function that Python's math module (what a kernel calls) and numpy (what arrays
    use) both have, by that name: `scalar.sinh`, `scalar.atan`, `scalar.log2`, ..."""
    numpy_function = getattr(np, name, None)
    if callable(getattr(math, name, None)) and isinstance(numpy_function, np.ufunc):
        return _function(name, numpy_function)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def where(condition, then, otherwise):
    """`then` where condition holds, else `otherwise` (np.where on arrays)."""
    if _is_expr(condition, then, otherwise):
        return Expr("where", _expr(condition), _expr(then), _expr(otherwise))
    return np.where(condition, then, otherwise)


def isnan(x):
    """NaN is the one value that differs from itself."""
    return x != x


# ---- printing a tree as Python ----------------------------------------------------------------------

# how tightly each operator binds: a child binding more loosely than its parent gets parentheses
_PRECEDENCE = {"where": 0, "or": 1, "and": 2, "not": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
               "==": 4, "!=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "neg": 7, "**": 8}  # fmt: skip


def source(expr, literal=None, cast=None):
    """`expr` as a Python expression. `literal(number)` writes constants (default: a float, as
    `repr(float(number))`); `cast(text)` converts a truth value used as a number (default:
    `float(...)`): a float32 kernel passes `float32(...)` for both, so its math stays float32."""
    literal = literal or (lambda number: repr(float(number)))
    cast = cast or (lambda text: f"float({text})")
    return _source(expr, literal, cast)


def _source(expr, literal, cast):
    op, args = expr.op, expr.args
    if op == "variable":
        return args[0]
    if op == "constant":
        value = args[0]
        return repr(value) if type(value) is bool else literal(value)
    if _is_call(op):
        return f"{op}({', '.join(_source(a, literal, cast) for a in args)})"
    if op == "where":  # a conditional expression; one inside another gets parentheses
        condition, then, otherwise = (
            f"({_source(a, literal, cast)})" if a.op == "where" else _source(a, literal, cast)
            for a in args
        )
        return f"{then} if {condition} else {otherwise}"
    level = _PRECEDENCE[op]
    numeric = op not in _BOOLEAN or op in ("<", "<=", ">", ">=")

    def operand(arg, right=False):
        text = _source(arg, literal, cast)
        if numeric and arg.is_bool():  # True * x: numba would widen it; say which float
            return cast(text)
        inner = _PRECEDENCE.get(arg.op, 9)
        # a - (b - c), a / (b * c), (a ** b) ** c: the right side of - and / and the left of **
        # need parentheses even at the same level
        tight = right and op in ("-", "/") or not right and op == "**"
        return f"({text})" if inner < level or (inner == level and tight) else text

    if op == "neg":
        return f"-{operand(args[0])}"
    if op == "not":
        return f"not {operand(args[0])}"
    return f"{operand(args[0])} {op} {operand(args[1], right=True)}"


# ---- erf, which numpy lacks -------------------------------------------------------------------------
# W. J. Cody's rational Chebyshev approximations (Math. Comp. 23, 1969), the ones C libraries use:
# erf(x) = x·R1(x²) for |x| <= 0.46875, erfc(x) = e^(-x²)·R2(x) up to 4, e^(-x²)/x·(1/√π - R3(1/x²))
# beyond. Each R = numerator/denominator polynomial; coefficients highest degree first. Checked against
# math.erf: at most 2.3e-16 absolute error (a few units in the last place), in one vectorised pass.
_R1 = ((1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
        3.77485237685302021e02, 3.20937758913846947e03),
       (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
        2.84423683343917062e03))  # fmt: skip
_R2 = ((2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
        6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
        1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03),
       (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
        1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
        3.43936767414372164e03, 1.23033935480374942e03))  # fmt: skip
_R3 = ((1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
        1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4),
       (1.0, 2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
        6.05183413124413191e-2, 2.33520497626869185e-3))  # fmt: skip
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _ratio(coefficients, z):
    """numerator(z) / denominator(z), both evaluated by Horner's rule (highest degree first)."""
    numerator, denominator = coefficients
    num, den = numerator[0], denominator[0]
    for a, b in zip(numerator[1:], denominator[1:], strict=True):
        num, den = num * z + a, den * z + b
    return num / den


def _exp_minus_square(y):
    """e^(-y²), with y² split into an exact part and a small rest so that no digits are lost."""
    head = np.trunc(y * 16) / 16
    return np.exp(-head * head) * np.exp(-(y - head) * (y + head))


def erf_of_array(x):
    """The error function of a numpy array, elementwise (float64 or float32; NaN stays NaN).

    >>> erf_of_array(np.array([0.0, 0.5, -3.0]))  # doctest: +ELLIPSIS
    array([ 0.        ,  0.52049988, -0.99997791...])
    """
    if x.ndim == 0:  # boolean masks below need a dimension (the CUDA backend's indexing does)
        return erf_of_array(x.reshape(1)).reshape(())
    y = np.abs(x)
    out = y.copy()  # NaN falls in no branch below and stays NaN
    small = y <= 0.46875
    out[small] = y[small] * _ratio(_R1, y[small] * y[small])
    middle = (y > 0.46875) & (y <= 4.0)
    ym = y[middle]
    out[middle] = 1 - _exp_minus_square(ym) * _ratio(_R2, ym)
    large = y > 4.0
    yl = y[large]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # y² may overflow
        z = 1 / (yl * yl)
        tail = _exp_minus_square(yl) * (_INV_SQRT_PI - z * _ratio(_R3, z)) / yl
    # beyond 6, erfc(y) < 2e-17 is lost in 1 - erfc(y) even in float64: erf is 1 (and the tail,
    # whose y² overflows for the largest numbers, inf · 0, is not asked)
    out[large] = 1 - np.where(yl < 6, tail, 0)
    return np.copysign(out, x)
