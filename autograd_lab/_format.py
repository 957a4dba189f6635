"""Printing tensors the way PyTorch prints them, so swapped-in scripts print the same text.

    tensor([1.0000, 2.5000])      floats with a fraction: 4 decimals
    tensor([1., 2.])              whole floats: a trailing dot
    tensor([1.0000e-05, 1.0000e+05])   a wide range of magnitudes: scientific notation

The rules, in the order `tensor_repr` applies them:
1. A tensor with more than THRESHOLD elements is *summarized*: along every axis longer than
   2 * EDGEITEMS only the first and last EDGEITEMS entries are shown, with "..." between.
2. One style and one width for all elements, chosen from the elements that are shown.
3. Rows of a 1-d block hold a fixed number of elements: as many as fit in LINEWIDTH at that width.
4. Suffixes (dtype, grad_fn, ...) follow the last line, or start a new one when it is too long.
"""

import math

import numpy as np

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80


# ---- 1. which elements are shown ----------------------------------------------------------------
def _summarized(data):
    """The elements a summarized tensor shows: the edges of every long axis."""
    for axis, length in enumerate(data.shape):
        if length > 2 * EDGEITEMS:
            edges = list(range(EDGEITEMS)) + list(range(length - EDGEITEMS, length))
            data = np.take(data, edges, axis=axis)
    return data


# ---- 2. one format for all elements -------------------------------------------------------------
def _formatter(shown):
    """Return `(fmt, width)`: `fmt(value)` is one element's text, right-aligned to `width`."""
    if shown.dtype.kind in "biu":  # bool and integers: str(), padded to the longest
        width = max((len(str(v)) for v in shown.ravel().tolist()), default=1)
        return (lambda v: str(v).rjust(width)), width
    return _float_formatter(shown.astype(np.float64).ravel())


def _float_formatter(values):
    # Only finite, nonzero values choose the style and the width: 0, nan and inf fit in around them.
    chosen_by = values[np.isfinite(values) & (values != 0)]
    if chosen_by.size == 0:
        return (lambda v: _float_text(v, "whole")), 1
    magnitudes = np.abs(chosen_by)
    lo, hi = float(magnitudes.min()), float(magnitudes.max())
    whole = bool(np.all(chosen_by == np.ceil(chosen_by)))
    # Scientific when magnitudes span more than 1000x, or are huge, or (for fractions) tiny.
    if hi / lo > 1000.0 or hi > 1.0e8 or (not whole and lo < 1.0e-4):
        style = "scientific"
    else:
        style = "whole" if whole else "fixed"
    width = max(len(_float_text(v, style)) for v in chosen_by.tolist())
    return (lambda v: _float_text(v, style).rjust(width)), width


def _float_text(v, style):
    if style == "scientific":
        return f"{v:.{PRECISION}e}"  # nan and inf come out as "nan", "inf", "-inf"
    if style == "fixed":
        return f"{v:.{PRECISION}f}"
    text = f"{v:.0f}"
    return text + "." if math.isfinite(v) else text  # "2." says: a float that happens to be whole


# ---- 3. nested brackets and line wrapping -------------------------------------------------------
def _render(data, fmt, width, indent, summarize):
    """The text of `data`, whose opening bracket sits at column `indent`."""
    if data.ndim == 0:
        return fmt(data.item())
    n = data.shape[0]
    cut = summarize and n > 2 * EDGEITEMS
    shown = [*range(EDGEITEMS), *range(n - EDGEITEMS, n)] if cut else range(n)
    if data.ndim == 1:
        values = data.tolist()
        items = [fmt(values[i]) for i in shown]
        if cut:  # PyTorch writes the gap in a row as " ...", an element of its own
            items.insert(EDGEITEMS, " ...")
        # Every line holds the same number of elements: as many as fit, counting ", " after each.
        per_line = max(1, (LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    blocks = [_render(data[i], fmt, width, indent + 1, summarize) for i in shown]
    if cut:
        blocks.insert(EDGEITEMS, "...")
    # Blocks of a 3-d tensor are separated by one blank line, of a 4-d tensor by two, ...
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


# ---- 4. the whole repr -------------------------------------------------------------------------
def _with_suffixes(text, suffixes, indent):
    """Close `text` with ", suffix" for each suffix; one that would not fit starts a new line."""
    # PyTorch counts the last line as two characters longer than it is; we count the same way.
    line = len(text.rsplit("\n", 1)[-1]) + 2
    for suffix in suffixes:
        if line + len(suffix) + 2 > LINEWIDTH:
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
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:  # only the shape (0,) goes without saying
            suffixes.append(f"size={tuple(data.shape)}")
        if data.dtype != np.float32:  # no elements to tell int64 or bool from float32
            suffixes.append(f"dtype={t.dtype}")
    else:
        summarize = data.size > THRESHOLD
        fmt, width = _formatter(_summarized(data) if summarize else data)
        body = _render(data, fmt, width, len(prefix), summarize)
        if data.dtype not in (np.float32, np.int64, np.bool_):  # the elements show these three
            suffixes.append(f"dtype={t.dtype}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, len(prefix))
