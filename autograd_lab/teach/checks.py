"""Self-checks for the check cells of a lesson: a one-line verdict, and gradient-check tables.

    >>> from autograd_lab.teach import check
    >>> check("ex1", lambda: 2 + 2 == 4)
    ✓ ex1 passed

A failed check raises `CheckFailed`; a notebook shows it as the one line `✗ ex1: <hint>` instead of
a traceback. Everything printed here is deterministic, because nbval compares it with the
instructor's saved outputs.
"""

import contextlib
import inspect
import sys

import numpy as np

from ..autograd.gradcheck import numerical_jacobian
from ..creation import tensor
from ..tensor import Tensor
from ..types import float64

NOT_DONE = "not done yet — replace the `raise NotImplementedError` with your code"
DEFAULT_HINT = "not right yet — reread the exercise and try again"
GRADIENT_HINT = "a row marked ✗ disagrees with finite differences: re-derive that input's gradient"

# Thresholds on the relative error of a gradient (the usual ones for float64 central differences);
# the table's footer and _error() spell them out.
GREAT, OK = 1e-7, 1e-5


class CheckFailed(AssertionError):
    """A check did not pass. Its message is the learner's one line: `✗ ex1: <hint>`."""

    def __init__(self, exercise, line):
        super().__init__(line)
        self.exercise = exercise

    def _render_traceback_(self):
        # IPython calls this instead of formatting the traceback: the learner needs the verdict,
        # not the frames inside check().
        return [str(self)]


def check(exercise, condition, hint=None, message=None):
    """Print `✓ <exercise> passed`, or raise CheckFailed shown as `✗ <exercise>: <hint>`.

    condition: a bool, or a zero-argument callable returning one. Prefer the callable: it runs
    inside the check, so a learner's exception becomes a verdict instead of a traceback, and a
    `raise NotImplementedError` stub reads "not done yet". message: what is being checked, shown
    in both verdicts when an exercise has several checks. The hint must never give the answer.

        >>> check("ex2", lambda: abs(0.1 + 0.2 - 0.3) < 1e-12, message="floats add up")
        ✓ ex2 passed (floats add up)
        >>> check("ex2", lambda: 1 / 0, hint="divide by the batch size")
        Traceback (most recent call last):
        autograd_lab.teach.checks.CheckFailed: ✗ ex2: divide by the batch size (your code raised ZeroDivisionError: division by zero)
    """
    label = f"{exercise} ({message})" if message else exercise
    hint = hint or DEFAULT_HINT
    try:
        passed = _truth(condition() if callable(condition) else condition)
    except CheckFailed:
        raise  # a check inside the condition has already given its verdict
    except Mismatch as mismatch:  # the condition says which input failed, and how
        passed, hint = False, f"{hint} — {mismatch}"
    except NotImplementedError:
        passed, hint = False, NOT_DONE
    except Exception as error:
        passed = False
        hint = NOT_DONE if _stub_ran(exercise, error) else f"{hint} ({_describe(error)})"
    if not passed:
        raise CheckFailed(exercise, f"✗ {label}: {hint}") from None
    print(f"✓ {exercise} passed" + (f" ({message})" if message else ""))


class Mismatch(Exception):
    """Raised by a check's condition (through `expect`) to say which input failed and how: the
    verdict then shows it, so the learner can try that input in the notebook."""


def expect(got, expected, call=None, tolerance=None):
    """True if `got` equals `expected` (numbers and arrays: within `tolerance`, absolute, if
    given; shapes must match), else raise Mismatch naming the call and both values:

        expect(np.shape(unbroadcast(g, (3, 1))), (3, 1), call="unbroadcast(g, (3, 1)).shape")
        # Mismatch: unbroadcast(g, (3, 1)).shape gave (2, 1), expected (3, 1)

    Use it inside a check's condition for each input it tries; `call` says what was called, in a
    form the learner can paste into a cell."""
    if _learners(got):
        got = _value_or_self(got)
    if _same(got, expected, tolerance):
        return True
    what = call or "your code"
    raise Mismatch(f"{what} gave {_short(got)}, expected {_short(expected)}")


def _value_or_self(value):
    try:
        return value._value()
    except Exception:
        return value


def _same(got, expected, tolerance):
    arrays = (np.ndarray, Tensor)
    if isinstance(got, arrays) or isinstance(expected, arrays) or tolerance is not None:
        try:
            got_array, expected_array = np.asarray(got), np.asarray(expected)
        except Exception:
            return False
        if got_array.shape != expected_array.shape:
            return False
        if tolerance is None:
            return bool(np.array_equal(got_array, expected_array))
        return bool(np.allclose(got_array, expected_array, rtol=0, atol=tolerance))
    try:
        return bool(got == expected)
    except Exception:  # a comparison that gives no single answer is no match
        return False


def _short(value, limit=160):
    """A value as the learner would print it, cut to one short line."""
    if isinstance(value, Tensor):
        value = value.detach().numpy()
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=12, precision=4, separator=", ")
        text = f"{text} (shape {value.shape})" if value.ndim else text
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _truth(outcome):
    """Whether a condition's outcome counts as passed. In grading (judge.py), an outcome that is
    the learner's object must be a value (True, a number, a tensor of them): an object that
    merely claims to be true - a `__bool__` or `__eq__` that always says so - passes nothing."""
    if _learners(outcome):
        return bool(np.asarray(outcome._value()).all())
    return bool(outcome)


def _stub_ran(exercise, error):
    """Did this exercise's stub leave its names undefined? (A NameError after the stub raised.)

    IPython keeps a cell's uncaught exception in sys.last_value: if the last one was this
    exercise's stub, the learner has not written the solution yet.
    """
    last = getattr(sys, "last_value", None)
    return (
        isinstance(error, NameError)
        and isinstance(last, NotImplementedError)
        and str(last).startswith(f"{exercise}:")
    )


def _describe(error):
    """One line saying what the learner's code raised (first line, kept short)."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0][:120]}" if lines else type(error).__name__
    if isinstance(error, NameError):
        return f"your code raised {text} — did the cells above run?"
    return f"your code raised {text}"


def type_name(value):
    """The module and name of value's class, e.g. 'numba.core.registry.CPUDispatcher': a check
    asks it of a learner's object instead of type(), which in grading (judge.py) sees only the
    stand-in for that object."""
    if _learners(value):
        return value._type
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


@contextlib.contextmanager
def replacing(name, value):
    """Rebind a name of the notebook while the block runs, then put the old value back: a check
    can slip a spy in place of the lesson's kernel and count how the learner's code launches it.

        with replacing("block_sum_kernel", CountingLaunches()):
            total = gpu_sum(x)

    (In grading, judge.py gives check cells its own `replacing`, which rebinds the name in the
    learner's worker.)"""
    names = sys._getframe(2).f_globals  # the notebook's names: the globals of the check cell
    before = names.get(name, _MISSING)
    names[name] = value
    try:
        yield value
    finally:
        if before is _MISSING:
            names.pop(name, None)
        else:
            names[name] = before


_MISSING = object()


# ---- gradient tables ----------------------------------------------------------------------------


class GradientTable:
    """The rows of a gradient check; shows itself as an aligned text table.

    rows: (name, analytic, numerical, error, verdict) tuples; `ok` is False when any row is wrong.
    """

    def __init__(self, rows, summarized=False):
        self.rows = rows
        self.summarized = summarized  # some rows stand for a whole input (norms): say so below
        self.ok = all(verdict != "✗ wrong" for *_, verdict in rows)

    def __str__(self):
        header = ("input", "analytic", "numerical", "rel. error", "verdict")
        cells = [header] + [
            (name, _number(a), _number(n), _error(e), verdict)
            for name, a, n, e, verdict in self.rows
        ]
        widths = [max(len(row[k]) for row in cells) for k in range(5)]
        lines = []
        for row in cells:
            name, a, n, e, verdict = row
            lines.append(
                f"{name:<{widths[0]}}  {a:>{widths[1]}}  {n:>{widths[2]}}  "
                f"{e:>{widths[3]}}  {verdict}".rstrip()
            )
        lines.append("(rel. error < 1e-7: great, < 1e-5: ok, larger: wrong)")
        if self.summarized:
            lines.append(
                "(rows 'all N' compare gradient norms; their error is the largest entry's)"
            )
        return "\n".join(lines)

    __repr__ = __str__  # the last line of a notebook cell shows the table itself


def gradient_table(fn, inputs, analytic, eps=1e-6, max_rows=8):
    """Compare hand-written gradients with numerical ones (float64 central differences).

    fn(*inputs) -> output (a Tensor, numpy array or number; several outputs: a tuple). The
    gradients compared are those of the SUM of the outputs, so for a scalar output they are just
    d output / d input. inputs: a tuple/list (names taken from fn's parameters) or a dict
    {name: value} (fn is then called with keywords); values are numbers, numpy arrays or
    Tensors, and fn receives float64 values of the same kind. analytic: one gradient per input
    (None means zero, as in PyTorch), or a callable taking the inputs like fn and returning them.
    An input with more than `max_rows` elements gets one row comparing gradient norms.

        >>> import numpy as np
        >>> gradient_table(lambda x, y: x * y, (2.0, 3.0), lambda x, y: (y, x))
        input  analytic  numerical  rel. error  verdict
        x             3          3      < 1e-7  ✓ great
        y             2          2      < 1e-7  ✓ great
        (rel. error < 1e-7: great, < 1e-5: ok, larger: wrong)

    rel. error = |analytic - numerical| / max(|analytic|, |numerical|, 1): relative for large
    gradients, absolute below 1, where finite differences cannot resolve relative differences
    (like PyTorch's gradcheck, which mixes an absolute and a relative tolerance).
    """
    names, values, by_keyword = _named_inputs(fn, inputs)
    kinds = [_kind(v) for v in values]
    arrays = [_float64_array(v) for v in values]
    numerical = _numerical_gradients(fn, names, kinds, arrays, by_keyword, eps)
    if callable(analytic):
        arguments = [_as_kind(t, k) for t, k in zip(_leaves(arrays), kinds)]
        analytic = _call(analytic, names, arguments, by_keyword)
    analytic = _gradients_per_input(analytic, names, arrays)
    rows, summarized = [], False
    for name, x, a, n in zip(names, arrays, analytic, numerical):
        error = np.abs(a - n) / np.maximum(np.maximum(np.abs(a), np.abs(n)), 1.0)
        if x.size <= max_rows:
            for index in np.ndindex(x.shape):
                rows.append((_element(name, index), a[index], n[index], error[index]))
        else:
            summarized = True
            rows.append(
                (f"{name} (all {x.size})", np.linalg.norm(a), np.linalg.norm(n), np.max(error))
            )
    return GradientTable([(*row, _verdict(row[3])) for row in rows], summarized)


def check_gradients(exercise, fn, inputs, analytic_backward, hint=None, eps=1e-6, message=None):
    """Print the gradient table of `analytic_backward` against fn, then check that no row is wrong.
    message: what is being checked, as for check() (needed when an exercise has several checks).

    >>> check_gradients("ex3", lambda x: x**3, (2.0,), lambda x: 3 * x**2)
    input  analytic  numerical  rel. error  verdict
    x            12         12      < 1e-7  ✓ great
    (rel. error < 1e-7: great, < 1e-5: ok, larger: wrong)
    ✓ ex3 passed
    """

    def all_rows_right():
        # Inside check(): a stub's NotImplementedError reads "not done yet", a shape error a hint.
        table = gradient_table(fn, inputs, analytic_backward, eps=eps)
        print(table)
        return table.ok

    check(exercise, all_rows_right, hint=hint or GRADIENT_HINT, message=message)


def _named_inputs(fn, inputs):
    """(names, values, by_keyword) for the ways inputs can be given."""
    if isinstance(inputs, dict):
        return list(inputs), list(inputs.values()), True
    values = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # some builtins have no signature
        parameters = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in parameters if p.kind in positional]
    if len(names) < len(values):
        names = [f"inputs[{i}]" for i in range(len(values))]
    return names[: len(values)], values, False


def _kind(value):
    if isinstance(value, Tensor):
        return "tensor"
    if _learners(value):
        return value  # a tensor of the learner's engine, in grading (judge.py): made like it
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return "array"


def _float64_array(value):
    if isinstance(value, Tensor):
        value = value.detach().numpy()
    return np.array(value, dtype=np.float64)  # a copy: nudging it never touches the learner's


def _leaves(arrays):
    """Fresh float64 leaves that require grad, one per input."""
    return [tensor(a, dtype=float64, requires_grad=True) for a in arrays]


def _learners(value):
    """Whether `value` is the learner's object, seen from the grader's process: a judge.Remote,
    which says so (this module is the learner's too, and does not import the judge's)."""
    return getattr(type(value), "stands_for_a_learners_object", False)


def _as_kind(t, kind):
    """The leaf t as the kind of value the learner passed: fn sees what it was written for."""
    if _learners(kind):  # a tensor made by the learner's engine, in the learner's worker
        return kind._new_tensor(t.detach().numpy())
    if kind == "tensor":
        return t
    if kind == "number":
        return t.item()
    return t.detach().numpy().copy()


def _call(fn, names, args, by_keyword):
    return fn(**dict(zip(names, args))) if by_keyword else fn(*args)


def _numerical_gradients(fn, names, kinds, arrays, by_keyword, eps):
    """d sum(outputs) / d input, for each input, by gradcheck's central differences."""

    def on_tensors(*ts):
        # numerical_jacobian nudges Tensors; hand fn the kinds it expects, return Tensors.
        out = _call(fn, names, [_as_kind(t, k) for t, k in zip(ts, kinds)], by_keyword)
        return tuple(map(_as_tensor, out)) if isinstance(out, tuple) else _as_tensor(out)

    leaves = [tensor(a, dtype=float64, requires_grad=True) for a in arrays]
    jacobians = numerical_jacobian(on_tensors, leaves, eps)
    gradients = [np.zeros(x.size) for x in arrays]
    for (i, _), jacobian in jacobians.items():
        # a Jacobian is [input element, output element]: the gradient of the sum adds up each row
        gradients[i] += jacobian.sum(axis=1)
    return [g.reshape(x.shape) for g, x in zip(gradients, arrays)]


def _as_tensor(value):
    return value if isinstance(value, Tensor) else tensor(np.asarray(value, dtype=np.float64))


def _gradients_per_input(analytic, names, arrays):
    if isinstance(analytic, dict):
        analytic = [analytic.get(name) for name in names]
    elif len(arrays) == 1 and not isinstance(analytic, (tuple, list)):
        analytic = [analytic]  # one input: a bare gradient is fine
    analytic = list(analytic)
    if len(analytic) != len(arrays):
        raise ValueError(
            f"expected {len(arrays)} gradients (one per input: {', '.join(names)}), "
            f"got {len(analytic)}"
        )
    gradients = []
    for name, x, g in zip(names, arrays, analytic):
        g = np.zeros(x.shape) if g is None else _float64_array(g)
        if g.shape != x.shape:
            raise ValueError(
                f"the gradient for {name} has shape {g.shape} but {name} has shape {x.shape}: "
                "a gradient always has the shape of its input"
            )
        gradients.append(g)
    return gradients


def _element(name, index):
    return f"{name}[{', '.join(map(str, index))}]" if index else name


def _verdict(error):
    if error < GREAT:
        return "✓ great"
    return "✓ ok" if error < OK else "✗ wrong"  # NaN fails both tests: wrong


def _number(value):
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    # Finite differences in float64 leave noise around 1e-10: rounding to 7 decimals hides it, so
    # the table is the same on every machine (nbval compares it) and a zero gradient reads as 0.
    value = round(value, 7)
    return "0" if value == 0 else f"{value:.6g}"


def _error(error):
    # Tiny errors are noise that differs between machines: show only that they are tiny.
    return "< 1e-7" if error < GREAT else f"{error:.1e}"
