"""Printing tensors the way PyTorch prints them, so swapped-in scripts print the same text.

    tensor([1.0000, 2.5000])      floats with a fraction: 4 decimals (the precision)
    tensor([1., 2.])              whole floats: a trailing dot
    tensor([1.0000e-05, 1.0000e+05])   a wide range of magnitudes: scientific notation

The rules, in the order `tensor_repr` applies them:
1. A tensor with more than `threshold` elements is *summarized*: along every axis longer than
   2 * `edgeitems` only the first and last `edgeitems` entries are shown, with "..." between.
2. One style and one width for all elements, chosen from the elements that are shown.
3. Rows of a 1-d block hold a fixed number of elements: as many as fit in `linewidth` at that width.
4. Suffixes (dtype, grad_fn, ...) follow the last line, or start a new one when it is too long.

The numbers in those rules are the print options, changed with `set_printoptions` as in PyTorch:

    >>> torch.set_printoptions(precision=2)
    >>> torch.tensor([1.12345])
    tensor([1.12])
    >>> torch.set_printoptions(profile="default")   # back to the defaults
"""

import contextlib
import math

import numpy as np

from . import types


class _PrintOptions:
    """The options every repr reads; `set_printoptions` changes them."""

    def __init__(self):
        self.precision = 4  # digits after the decimal point
        self.threshold = 1000  # more elements than this: summarize with "..."
        self.edgeitems = 3  # a summarized axis shows this many entries at each end
        self.linewidth = 80  # characters per line before a row wraps
        self.sci_mode = None  # True/False force scientific notation on/off; None: chosen per tensor


OPTIONS = _PrintOptions()

# PyTorch's named profiles: (precision, threshold, edgeitems, linewidth)
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Change how tensors print; an option left out keeps its value, except `sci_mode`, which
    goes back to automatic (None) unless given, as in PyTorch.

    `profile` ("default", "short" or "full") sets the first four options at once, then the others
    given override it: `set_printoptions(profile="full")` prints every element.
    """
    if profile in _PROFILES:  # PyTorch ignores a profile it does not know; so do we
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = _PROFILES[
            profile
        ]
    if precision is not None:
        OPTIONS.precision = precision
    if threshold is not None:
        OPTIONS.threshold = threshold
    if edgeitems is not None:
        OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        OPTIONS.linewidth = linewidth
    OPTIONS.sci_mode = sci_mode


def get_printoptions():
    """The print options as a dict that set_printoptions(**options) accepts."""
    return dict(vars(OPTIONS))


@contextlib.contextmanager
def printoptions(**options):
    """`with printoptions(precision=2): ...` changes the options inside the block only."""
    saved = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---- 1. which elements are shown ----------------------------------------------------------------
def _summarized(data):
    """The elements a summarized tensor shows: the edges of every long axis."""
    edge = OPTIONS.edgeitems
    if edge == 0 and data.ndim > 0:  # nothing is shown but "..."
        return data.reshape(-1)[:0]
    for axis, length in enumerate(data.shape):
        if length > 2 * edge:
            edges = list(range(edge)) + list(range(length - edge, length))
            data = np.take(data, edges, axis=axis)
    return data


# ---- 2. one format for all elements -------------------------------------------------------------
def _formatter(shown):
    """Return `(fmt, width)`: `fmt(value)` is one element's text, right-aligned to `width`."""
    if shown.dtype.kind in "biu":  # bool and integers: str(), padded to the longest
        width = max((len(str(v)) for v in shown.ravel().tolist()), default=1)
        return (lambda v: str(v).rjust(width)), width
    return _float_formatter(shown.ravel())


def _float_formatter(values):
    # Only finite, nonzero values choose the style and the width: 0, nan and inf fit in around them.
    chosen_by = values[np.isfinite(values) & (values != 0)]
    if chosen_by.size == 0:  # PyTorch stops here: whole numbers, width 1, whatever sci_mode says
        return (lambda v: _float_text(v, "whole", 0)), 1
    magnitudes = np.abs(chosen_by.astype(np.float64))
    lo, hi = float(magnitudes.min()), float(magnitudes.max())
    whole = bool(np.all(chosen_by == np.ceil(chosen_by)))
    if OPTIONS.sci_mode is None:  # scientific when magnitudes span more than 1000x, or are extreme
        scientific = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
    else:
        scientific = OPTIONS.sci_mode
    style = "scientific" if scientific else "whole" if whole else "fixed"
    # The width of the widest shown value; a whole number counts its trailing dot.
    width = max(len(_float_text(v, style, 0)) for v in chosen_by.tolist())
    return (lambda v: _float_text(v, style, width)), width


def _float_text(v, style, width):
    """One float's text in `style`, right-aligned to `width`."""
    if style == "scientific":
        text = f"{v:.{OPTIONS.precision}e}"  # nan and inf come out as "nan", "inf", "-inf"
    elif style == "fixed":
        text = f"{v:.{OPTIONS.precision}f}"
    else:
        text = f"{v:.0f}" + ("." if math.isfinite(v) else "")  # "2." says: a float, whole
    return text.rjust(width)


# ---- 3. nested brackets and line wrapping -------------------------------------------------------
def _render(data, fmt, width, indent, summarize):
    """The text of `data`, whose opening bracket sits at column `indent`."""
    if data.ndim == 0:
        return fmt(data.item())
    n, edge = data.shape[0], OPTIONS.edgeitems
    cut = summarize and n > 2 * edge
    shown = [*range(edge), *range(n - edge, n)] if cut else range(n)
    if data.ndim == 1:
        values = data.tolist()
        items = [fmt(values[i]) for i in shown]
        if summarize and edge == 0:
            items = ["..."]
        elif cut:  # PyTorch writes the gap in a row as " ...", an element of its own
            items.insert(edge, " ...")
        # Every line holds the same number of elements: as many as fit, counting ", " after each.
        per_line = max(1, math.floor((OPTIONS.linewidth - indent) / (width + 2)))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    blocks = [_render(data[i], fmt, width, indent + 1, summarize) for i in shown]
    if cut:
        blocks.insert(edge, "...")
    # Blocks of a 3-d tensor are separated by one blank line, of a 4-d tensor by two, ...
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


# ---- 4. the whole repr -------------------------------------------------------------------------
def _with_suffixes(text, suffixes, indent):
    """Close `text` with ", suffix" for each suffix; one that would not fit starts a new line."""
    # PyTorch counts the last line as two characters longer than it is; we count the same way.
    line = len(text.rsplit("\n", 1)[-1]) + 2
    for suffix in suffixes:
        if line + len(suffix) + 2 > OPTIONS.linewidth:
            text += ",\n" + " " * indent + suffix
            line = indent + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"


def tensor_repr(t):
    data = t._data
    prefix = "tensor("
    suffixes = []
    if type(data) is not np.ndarray:  # on the GPU: printing copies the values to the host
        data = np.asarray(data)
        suffixes.append(f"device='{t.device}'")
    default_dtype = types.get_default_dtype()
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:  # only the shape (0,) goes without saying
            suffixes.append(f"size={tuple(data.shape)}")
        if t.dtype is not default_dtype:  # no elements to tell int64 or bool from a float
            suffixes.append(f"dtype={t.dtype}")
    else:
        summarize = data.size > OPTIONS.threshold
        fmt, width = _formatter(_summarized(data) if summarize else data)
        body = _render(data, fmt, width, len(prefix), summarize)
        if OPTIONS.edgeitems == 0:  # only "..." is shown: the size says what is hidden
            suffixes.append(f"size={tuple(data.shape)}")
        if t.dtype not in (default_dtype, types.int64, types.bool_):  # the elements show these
            suffixes.append(f"dtype={t.dtype}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t.requires_grad:  # (a view: or its base)
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, len(prefix))
