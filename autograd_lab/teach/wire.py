"""What may cross between the grader and a learner's worker process: plain data, and references.

The grader (judge.py) runs the instructor's checks in its own process; the learner's code runs in
a worker process (worker.py). They talk in lines of JSON, and this module says what a value
becomes on the way:

- **plain data crosses by value**: None, bools, ints, floats (nan and inf too), strings, lists,
  tuples, dicts, sets, slices, and numpy arrays and scalars of numbers or bools. Only these exact
  types are copied - a subclass of float, or an object whose `__eq__` always says True, is not
  plain data, so no object of the learner's can pretend to be one on the grader's side.
- **anything else stays where it lives** and crosses as a reference, `{"~": "ref", "id": 7}`: a
  learner's Tensor, a graph node, a function. The grader holds a stand-in for it (judge.Remote)
  through which it can call it, read its attributes, or ask for its value as plain data.
- **a function of the grader** handed to the learner's code (a callback, such as the function
  `measure_peak` times) crosses as `{"~": "callback", "id": 3}`: the worker can call it, and the
  call runs in the grader, but it can read nothing of it.

    >>> decode(encode((1, np.arange(3.0)), refer=None), resolve=None)
    (1, array([0., 1., 2.]))
"""

import base64
import builtins
import math

import numpy as np

PLAIN_DTYPE_KINDS = "biufc"  # bool, int, unsigned, float, complex: never object arrays
MAX_DEPTH = 100  # nesting of plain containers; deeper is not a value a check needs


class WireError(TypeError):
    """A value that cannot cross (too deep, or a reference where none is allowed)."""


def encode(value, refer, depth=0):
    """`value` as JSON-ready data. refer(obj) -> {"~": "ref" or "callback", ...} for a value that
    is not plain data; None means only plain data may cross (WireError otherwise)."""
    if depth > MAX_DEPTH:
        raise WireError("a value nested more than 100 levels deep")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"~": "float", "v": repr(value)}
    if kind is list:
        return [encode(item, refer, depth + 1) for item in value]
    if kind is tuple:
        return {"~": "tuple", "items": [encode(item, refer, depth + 1) for item in value]}
    if kind in (set, frozenset):
        return {"~": "set", "items": [encode(item, refer, depth + 1) for item in value]}
    if kind is dict:
        pairs = [
            [encode(k, refer, depth + 1), encode(v, refer, depth + 1)] for k, v in value.items()
        ]
        return {"~": "dict", "items": pairs}
    if kind is slice:
        parts = (value.start, value.stop, value.step)
        return {"~": "slice", "items": [encode(part, refer, depth + 1) for part in parts]}
    if value is Ellipsis:
        return {"~": "ellipsis"}
    if kind is np.ndarray and value.dtype.kind in PLAIN_DTYPE_KINDS:
        return _encode_array(value)
    if isinstance(value, np.generic) and kind.__module__ == "numpy" and value.dtype.kind in "biufc":
        return {**_encode_array(np.asarray(value)), "~": "scalar"}
    if refer is None:
        raise WireError(f"a {kind.__qualname__} object is not plain data")
    return refer(value)


def _encode_array(array):
    data = array if array.flags.c_contiguous else array.copy(order="C")  # (keeps 0-d arrays 0-d)
    return {
        "~": "array",
        "dtype": data.dtype.str,
        "shape": list(data.shape),
        "data": base64.b64encode(data.tobytes()).decode("ascii"),
    }


def decode(data, resolve, depth=0):
    """The value `data` stands for; resolve(tagged dict) -> the object behind a ref or callback
    (None: references are refused with WireError)."""
    if depth > MAX_DEPTH:
        raise WireError("a value nested more than 100 levels deep")
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(item, resolve, depth + 1) for item in data]
    if type(data) is not dict:
        raise WireError(f"unexpected {type(data).__name__} on the wire")
    tag = data.get("~")
    if tag == "float":
        return float(data["v"])
    if tag in ("tuple", "set", "slice"):
        items = [decode(item, resolve, depth + 1) for item in data["items"]]
        return {"tuple": tuple, "set": set, "slice": lambda parts: slice(*parts)}[tag](items)
    if tag == "dict":
        return {
            decode(k, resolve, depth + 1): decode(v, resolve, depth + 1) for k, v in data["items"]
        }
    if tag == "ellipsis":
        return Ellipsis
    if tag in ("array", "scalar"):
        array = _decode_array(data)
        return array[()] if tag == "scalar" else array
    if tag in ("ref", "callback") and resolve is not None:
        return resolve(data)
    raise WireError(f"unexpected {tag!r} on the wire")


def _decode_array(data):
    dtype = np.dtype(data["dtype"])
    if dtype.kind not in PLAIN_DTYPE_KINDS:
        raise WireError(f"an array of {dtype} is not plain data")
    raw = base64.b64decode(data["data"])
    return np.frombuffer(raw, dtype=dtype).reshape(data["shape"]).copy()  # writable, its own


# ---- exceptions: both sides send theirs as plain data --------------------------------------------


def error_as_data(error, name=None):
    """An exception as plain data: its class's name (`name` overrides it), whether that class is
    Python's own, and its message. Never a traceback: that could show the other side's code."""
    builtin = name is None and type(error).__module__ == "builtins"
    return {"type": name or type(error).__name__, "builtin": builtin, "message": str(error)[:2000]}


def error_from_data(data, other):
    """The exception `data` stands for, to raise on this side: Python's own class by its name (so
    `hasattr` and `except ValueError` work across), `other(name, message)` for any other class."""
    name, message = str(data.get("type", "Exception")), str(data.get("message", ""))
    kind = getattr(builtins, name, None) if data.get("builtin") else None
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except TypeError:  # Python's own, but it takes other arguments (UnicodeError, ...)
            pass
    return other(name, message)
