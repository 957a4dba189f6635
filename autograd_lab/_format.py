"""Printing tensors the way PyTorch prints them, so swapped-in scripts print the same text.

    tensor([1.0000, 2.5000])      floats with a fraction: 4 decimals
    tensor([1., 2.])              whole floats: a trailing dot
    tensor([1.0000e-05, 1.0000e+05])   a wide range of magnitudes: scientific notation
"""

import numpy as np

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80


def _float_formatter(values):
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    whole = finite.size == 0 or bool(np.all(finite == np.round(finite)))
    if nonzero.size:
        lo, hi = float(nonzero.min()), float(nonzero.max())
        scientific = hi / lo > 1000.0 or hi > 1.0e8 or (not whole and lo < 1.0e-4)
    else:
        scientific = False
    if scientific:
        return lambda v: _special(v) or f"{v:.{PRECISION}e}"
    if whole:
        return lambda v: _special(v) or f"{v:.0f}."
    return lambda v: _special(v) or f"{v:.{PRECISION}f}"


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _formatter(data):
    kind = data.dtype.kind
    if kind == "b":
        return lambda v: "True" if v else "False"
    if kind in "iu":
        return lambda v: str(int(v))
    return _float_formatter(data.astype(np.float64).ravel())


def _summarized(data):
    """The elements that get printed (edges only, for big tensors)."""
    if data.size <= THRESHOLD or data.ndim == 0:
        return data
    parts = []
    for axis in range(data.ndim):
        if data.shape[axis] > 2 * EDGEITEMS:
            index = list(range(EDGEITEMS)) + list(range(data.shape[axis] - EDGEITEMS, data.shape[axis]))
            data = np.take(data, index, axis=axis)
        parts.append(data)
    return data


def _render(data, fmt, width, indent, summarize):
    if data.ndim == 0:
        return fmt(data.item()).rjust(width)
    n = data.shape[0]
    cut = summarize and n > 2 * EDGEITEMS
    rows = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n)) if cut else list(range(n))
    if data.ndim == 1:
        items = ["..." if i is None else fmt(data[i].item()).rjust(width) for i in rows]
        lines, line = [], ""
        for item in items:  # wrap long rows at the line width, as PyTorch does
            piece = item + ", "
            if line and len(line) + len(piece.rstrip()) + indent + 1 > LINEWIDTH:
                lines.append(line.rstrip())
                line = ""
            line += piece
        lines.append(line[:-2])
        return "[" + ("\n" + " " * (indent + 1)).join(lines) + "]"
    inner = [
        "..." if i is None else _render(data[i], fmt, width, indent + 1, summarize) for i in rows
    ]
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(inner) + "]"


def tensor_repr(t):
    data = t._data
    summarize = data.size > THRESHOLD
    shown = _summarized(data) if summarize else data
    fmt = _formatter(shown) if shown.size else str
    width = max((len(fmt(v)) for v in shown.ravel().tolist()), default=0) if shown.size else 0
    prefix = "tensor("
    if data.size == 0:
        body = "[]"
    else:
        body = _render(data, fmt, width, len(prefix), summarize)
    extras = []
    if data.size == 0 and data.shape != (0,):
        extras.append(f"size={tuple(data.shape)}")
    if data.dtype not in (np.float32, np.int64, np.bool_):
        extras.append(f"dtype={t.dtype}")
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return prefix + body + "".join(", " + e for e in extras) + ")"
