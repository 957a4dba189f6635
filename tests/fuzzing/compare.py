"""Two records of one program side by side: what differs, each difference with a kind.

What counts as the same:
- integers and bools: equal, element for element;
- floats: NaN where PyTorch has NaN, ±inf with the same sign (else "NaN/inf" differs), and the
  finite values within rtol/atol for the dtype (else "values": float32 sums in another order
  differ in the last bits, float64 far less); once a float32 value was equal only within its
  tolerance, later float64 values (x.double(), dtype=torch.float64) get float32's tolerance too:
  they carry that float32 rounding; so do the float64 results of the few ops that compute in
  float32 inside (FLOAT32_INSIDE), and the float64 gradients of a program whose graph holds a
  float32 tensor (x.float(), log_softmax(x, dtype=torch.float32)): their backward ran in
  float32 there, with numpy's exp where PyTorch has its vectorized one;
- dtype, shape, grad_fn's name, requires_grad: equal; None is not a tensor of zeros;
- errors: when both raise, the same built-in exception class (the message is ours to word);
  one raising and the other not is a divergence.
"""

from dataclasses import dataclass, replace

import numpy as np

TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}  # (rtol, atol)
# ops whose float64 result (a float64 target) is computed from a float32 intermediate: the
# log-sigmoid of a float32 input, taken with numpy's exp and log1p, equal to PyTorch's vectorized
# (SLEEF) ones only to rounding; such a result gets float32's tolerance, as later values do
FLOAT32_INSIDE = {"F.binary_cross_entropy_with_logits"}


@dataclass(frozen=True)
class Divergence:
    where: str  # the line, and the expression recorded after it: "v3 = x0.sum(0)  [v3]"
    op: str  # the op the line exercises (the generator's name for it)
    what: str  # "raises", "exception class", "dtype", "shape", "values", "grad_fn", ...
    ours: str
    theirs: str
    line: int = 0  # which of the program's statements (program.statements)
    expression: str = ""  # what was recorded after it ("" for the line itself: did it raise?)
    after_rounding: bool = False  # an earlier float value was equal only within tolerance
    after_zero_sign: str = ""  # the op of the first line that gave a zero of the other sign
    totals: tuple = ()  # (ours, theirs): the sums of two float tensors whose values differ

    @property
    def kind(self):
        """Divergences of one kind are one finding: op (x.sum() and torch.sum(x) are one),
        what differed, and the error classes."""
        classes = ""
        if self.what in ("raises", "exception class"):
            classes = f"{_class(self.ours)} vs {_class(self.theirs)}"
        return (self.op.removeprefix("Tensor."), self.what, classes)

    def __str__(self):
        return (
            f"{self.what} differs at {self.where}\n    ours : {self.ours}\n    torch: {self.theirs}"
        )


def _class(text):
    return text.removeprefix("raises ").split(":")[0] if text.startswith("raises") else "no error"


def compare(ours, theirs, lines):
    """The divergences between two records (runner.run) of the same `lines`, in program order."""
    found, rounded, float32_rounded, zero_sign = [], False, False, ""
    float32_in_graph = False  # a float32 tensor that requires grad was recorded
    for key, seen in theirs.items():
        if key not in ours:
            continue  # that line did not run in ours: already reported where it raised
        number, expression = key
        line = lines[number]
        where = line.source.splitlines()[0][:100] + (f"  [{expression}]" if expression else "")
        float32_inside = line.op in FLOAT32_INSIDE
        gradient_in_float32 = float32_in_graph and line.op in ("backward", "grad")
        loosest = "float32" if float32_rounded or float32_inside or gradient_in_float32 else None
        for divergence in _differences(ours[key], seen, where, line.op, loosest):
            found.append(
                replace(
                    divergence,
                    line=number,
                    expression=expression,
                    after_rounding=rounded,
                    after_zero_sign=zero_sign,
                )
            )
        if not zero_sign and _zero_signs_differ(ours[key], seen):
            zero_sign = line.op
        float32_in_graph = float32_in_graph or _float32_requiring_grad(seen)
        rounded_dtypes = _rounded(ours[key], seen)
        if rounded_dtypes:
            rounded = True
            float32_rounded = float32_rounded or "float32" in rounded_dtypes or float32_inside
    return found


def _zero_signs_differ(ours, theirs):
    """Whether two float tensors (or sequences of them) hold a zero of opposite signs in one
    place (-0.0 == 0.0, so the comparison of values passes it; 1/x later shows it)."""
    if ours.kind == theirs.kind == "sequence" and len(ours.values) == len(theirs.values):
        return any(_zero_signs_differ(a, b) for a, b in zip(ours.values, theirs.values))
    if ours.kind != "tensor" or theirs.kind != "tensor" or ours.shape != theirs.shape:
        return False
    if theirs.dtype not in TOLERANCE or ours.dtype != theirs.dtype:
        return False
    mine, other = np.asarray(ours.values), np.asarray(theirs.values)
    both_zero = (mine == 0) & (other == 0)
    return bool((np.signbit(mine) != np.signbit(other))[both_zero].any())


def _float32_requiring_grad(record):
    """Whether a record is a float32 tensor that requires grad (or a sequence holding one)."""
    if record.kind == "sequence":
        return any(_float32_requiring_grad(item) for item in record.values)
    return record.kind == "tensor" and record.dtype == "float32" and record.requires_grad


def _rounded(ours, theirs):
    """The dtypes of the tensors (of a sequence too: std_mean's pair) that are equal within
    tolerance but not bit for bit (a float sum taken in another order); empty if none."""
    if ours.kind == theirs.kind == "sequence" and len(ours.values) == len(theirs.values):
        return set().union(*[_rounded(a, b) for a, b in zip(ours.values, theirs.values)])
    if ours.kind != "tensor" or theirs.kind != "tensor" or ours.shape != theirs.shape:
        return set()
    if theirs.dtype not in TOLERANCE:
        return set()
    return set() if np.array_equal(ours.values, theirs.values, equal_nan=True) else {theirs.dtype}


def _differences(ours, theirs, where, op, loosest=None):
    def differ(what, mine=str(ours), other=str(theirs)):
        return [Divergence(where, op, what, mine, other)]

    if "skipped" in (ours.kind, theirs.kind):
        return []  # a consequence of an earlier difference, not a new one
    if ours.kind != theirs.kind:
        if "raise" in (ours.kind, theirs.kind):
            return differ("raises")
        if "none" in (ours.kind, theirs.kind):
            return differ("None vs tensor")
        return differ("kind of result")
    if ours.kind == "raise":
        if ours.error.split(":")[0] != theirs.error.split(":")[0]:
            return differ("exception class")
        return []
    if ours.kind == "sequence":
        if len(ours.values) != len(theirs.values):
            return differ("length")
        found = []
        for index, (mine, other) in enumerate(zip(ours.values, theirs.values)):
            found += _differences(mine, other, f"{where}[{index}]", op, loosest)
        return found
    if ours.kind == "python":
        if ours.dtype != theirs.dtype:
            return differ("python type")
        if not _same_python(ours.values, theirs.values):
            return differ("values")
        return []
    if ours.kind == "tensor":
        return _tensor_differences(ours, theirs, differ, loosest)
    return []


def _same_python(mine, other):
    if isinstance(mine, float) and isinstance(other, float):
        return bool(same_values(np.array(mine), np.array(other), "float32"))
    return mine == other


def _tensor_differences(ours, theirs, differ, loosest=None):
    if ours.dtype != theirs.dtype:
        return differ("dtype")
    if ours.shape != theirs.shape:
        return differ("shape")
    found = []
    tolerance = loosest if loosest and theirs.dtype == "float64" else theirs.dtype
    if not same_values(ours.values, theirs.values, tolerance):
        finite = np.isfinite(ours.values) == np.isfinite(theirs.values)
        same_specials = finite.all() and np.array_equal(
            np.where(np.isfinite(ours.values), 0, ours.values),
            np.where(np.isfinite(theirs.values), 0, theirs.values),
            equal_nan=True,
        )
        what = "values" if same_specials else "NaN/inf"
        with np.errstate(all="ignore"):  # (inf + -inf: a nan total, silently)
            totals = (float(np.sum(ours.values)), float(np.sum(theirs.values)))
        found.append(replace(differ(what)[0], totals=totals))
    # the history of an integer or bool tensor names its dtype: README's Simplifications list
    # what differs there (simplifications.py matches it by this)
    of_dtype = "" if theirs.dtype.startswith("float") else f" ({theirs.dtype} tensor)"
    if ours.node != theirs.node:
        found += differ(
            "grad_fn", (ours.node or "None") + of_dtype, (theirs.node or "None") + of_dtype
        )
    if ours.requires_grad != theirs.requires_grad:
        mine, other = str(ours.requires_grad), str(theirs.requires_grad)
        found += differ("requires_grad", mine + of_dtype, other + of_dtype)
    return found


def same_values(mine, other, dtype):
    """Equal for ints and bools; for floats NaN == NaN, inf signs equal, the rest within tolerance."""
    mine, other = np.asarray(mine), np.asarray(other)
    if mine.shape != other.shape:
        return False
    if dtype not in TOLERANCE:
        return bool(np.array_equal(mine, other))
    mine, other = mine.astype(np.float64), other.astype(np.float64)
    if not np.array_equal(np.isnan(mine), np.isnan(other)):
        return False
    infinite = np.isinf(mine) | np.isinf(other)
    if not np.array_equal(mine[infinite], other[infinite]):
        return False
    finite = ~(np.isnan(mine) | infinite)
    rtol, atol = TOLERANCE[dtype]
    return bool(np.allclose(mine[finite], other[finite], rtol=rtol, atol=atol))
