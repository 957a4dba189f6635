"""Run one program in one library (`lib` = torch or autograd_lab) and record what it gave.

The record is a dict, in the order things happened:

    (line number, "")    -> Seen: did the line run, or which exception did it raise
    (line number, expr)  -> Seen: the value of `expr` after the line ran (a tensor's values as
                            float64/int64/bool numpy, dtype, shape, grad_fn's name, requires_grad)

Both libraries run the same lines, so the two records have the same keys wherever both ran.
"""

import builtins
import re
import warnings
from dataclasses import dataclass

import numpy as np

from .program import statements


@dataclass(frozen=True)
class Seen:
    """What one expression (or one line) gave, in a form both libraries share."""

    kind: str  # "ran", "raise", "skipped", "tensor", "sequence", "none", "python"
    dtype: str = ""
    shape: tuple = ()
    values: object = None  # numpy array (tensor), tuple of Seen (sequence), the value (python)
    node: str = ""  # type(grad_fn).__name__, or "" without one
    requires_grad: bool = False
    error: str = ""  # the exception's class (the nearest built-in one) and its message

    def __str__(self):
        if self.kind == "tensor":
            body = np.array2string(self.values, precision=5, threshold=12)
            grad = f", grad_fn={self.node}" if self.node else ""
            flag = ", requires_grad" if self.requires_grad and not self.node else ""
            return f"tensor({body}, {self.dtype}, shape={list(self.shape)}{grad}{flag})"
        if self.kind == "sequence":
            return "(" + ", ".join(str(item) for item in self.values) + ")"
        if self.kind == "raise":
            return f"raises {self.error}"
        if self.kind == "python":
            return f"{self.dtype} {self.values!r}"
        return self.kind


# A value the program names: a leaf x0, a step's value v3, the loss, the gradients.
_PROGRAM_NAME = re.compile(r"^(x\d+|v\d+|loss|grads2?)$")


def run(program, lib, lines=None, default_dtype=None, follow=None):
    """Run `program` with `torch` bound to `lib`; the record (see the module's docstring).
    `default_dtype`: the default float dtype while it runs (float32 unless given).
    `follow`: another library's record of the program; where a float value there differs from
    this run's only by rounding, this run takes that value (after recording its own) and goes
    on from it: what would `lib` give, had it rounded as the other did so far?"""
    lines = statements(program) if lines is None else lines
    record = {}
    namespace = {"torch": lib}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _fresh_state(lib)
        if default_dtype is not None:
            lib.set_default_dtype(default_dtype)
        try:
            for number, line in enumerate(lines):
                ran = _execute(line.source, namespace)
                record[(number, "")] = ran
                if ran.kind != "ran":
                    continue
                for expression in line.observe:
                    seen = _evaluate(expression, namespace, lib)
                    record[(number, expression)] = seen
                    if follow is not None and (number, expression) in follow:
                        _take_rounding(expression, namespace, seen, follow[(number, expression)])
        finally:
            _fresh_state(lib)
    return record


def _take_rounding(expression, namespace, seen, other):
    """Give the tensors that `expression` names the values `other` (another library's record)
    holds, where the two differ only by rounding (within the fuzzer's tolerance)."""
    from .compare import same_values  # (compare imports this module)

    value = eval(expression, namespace)
    pairs = [(value, seen, other)]
    if seen.kind == other.kind == "sequence" and isinstance(value, (tuple, list)):
        if len(value) == len(seen.values) == len(other.values):
            pairs = list(zip(value, seen.values, other.values))
    for tensor, mine, theirs in pairs:
        if not (mine.kind == theirs.kind == "tensor" and mine.dtype == theirs.dtype):
            continue
        if not mine.dtype.startswith("float") or mine.shape != theirs.shape:
            continue
        if np.array_equal(mine.values, theirs.values, equal_nan=True):
            continue
        if not same_values(theirs.values, mine.values, mine.dtype):
            continue  # a divergence of its own, not rounding
        try:  # .data: the same memory, without a change the version counter would see
            values = namespace["torch"].tensor(theirs.values, dtype=tensor.dtype)
            tensor.data.copy_(values.reshape(tensor.shape))
        except Exception:  # noqa: S110 (an expanded or overlapping tensor: leave it as it is)
            pass


def _fresh_state(lib):
    """Neither library may leak state into the next program: grad mode, default dtype, seed."""
    lib.set_grad_enabled(True)
    lib.set_default_dtype(lib.float32)
    lib.manual_seed(0)


def _execute(source, namespace):
    try:
        exec(source, namespace)
    except NameError as error:
        if _PROGRAM_NAME.match(getattr(error, "name", "") or ""):
            return Seen("skipped")  # an earlier line that makes this name raised
        return _raised(error)
    except Exception as error:  # the library's own error: recorded, then compared
        return _raised(error)
    return Seen("ran")


def _evaluate(expression, namespace, lib):
    try:
        return observe(eval(expression, namespace), lib)
    except Exception as error:  # reading a value can raise too (a freed tensor, say)
        return _raised(error)


def _raised(error):
    return Seen("raise", error=f"{builtin_class(error)}: {str(error)[:300]}")


def builtin_class(error):
    """The nearest built-in exception class: PyTorch's own classes (torch.OutOfMemoryError,
    _LinAlgError) and ours derive from them, and learners catch those."""
    for cls in type(error).__mro__:
        if getattr(builtins, cls.__name__, None) is cls:
            return cls.__name__
    return type(error).__name__


def observe(value, lib):
    """A library's value as a Seen that the other library's can be compared with."""
    if isinstance(value, lib.Tensor):
        return _tensor(value)
    if value is None:
        return Seen("none")
    if isinstance(value, (tuple, list)):
        return Seen("sequence", values=tuple(observe(item, lib) for item in value))
    if isinstance(value, (bool, int, float)):
        return Seen("python", dtype=type(value).__name__, values=value)
    if isinstance(value, lib.dtype):
        return Seen("python", dtype="dtype", values=str(value))
    return Seen("python", dtype=type(value).__name__, values=repr(value)[:80])


def _tensor(tensor):
    detached = tensor.detach()
    if getattr(detached, "_is_zerotensor", lambda: False)():
        # PyTorch hands back a "ZeroTensor" for a gradient that is zero everywhere (zeros it
        # never allocated); it refuses .numpy(), so read it as the zeros it stands for
        detached = detached.new_zeros(detached.shape)
    data = np.asarray(detached.numpy())
    if data.dtype.kind == "f":
        data = data.astype(np.float64)
    elif data.dtype.kind in "iu":
        data = data.astype(np.int64)
    node = type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else ""
    return Seen(
        "tensor",
        dtype=str(tensor.dtype).replace("torch.", ""),
        shape=tuple(tensor.shape),
        values=data.copy(),
        node=node,
        requires_grad=bool(tensor.requires_grad),
    )
