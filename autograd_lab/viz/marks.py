"""Marks on a graph's nodes: what a diff found (added, removed, changed) and where a cell failed.

A mark is plain data kept in the Snapshot (`snapshot.marks`, {node id: mark}), so every viewer
draws it: svg.py frames the node in the mark's colour with its letters above the corner, and
graph.js does the same live, with the mark's text in the node's tooltip and inspector.

    >>> mark("changed", "value: 0.5 in run 1, 0.7 in run 2", letters="V")
    {'kind': 'changed', 'letters': 'V', 'text': 'value: 0.5 in run 1, 0.7 in run 2'}

The kinds, and how each is drawn (the same colours in graph.css):
    added    green dashed frame, "+": only in the second graph of a diff
    removed  red dashed frame, "−": only in the first graph of a diff
    changed  magenta dashed frame, letters N/S/V/G: paired, but its name, inputs, value or
             gradient differs (compare.py)
    failed   red solid frame, "✗": the op a `%%autograd` cell failed in (viz/failed.py)
"""

KINDS = {  # kind -> (colour, the letters drawn when a mark brings none, what it means)
    "added": ("#15803d", "+", "only in the second graph"),
    "removed": ("#dc2626", "\u2212", "only in the first graph"),
    "changed": ("#c026d3", "", "in both graphs, but different"),
    "failed": ("#b91c1c", "\u2717", "the op the cell failed in"),
}


def mark(kind, text, letters=None):
    """One mark: its kind (a key of KINDS), the text shown on hover, the letters drawn on it."""
    if kind not in KINDS:
        raise ValueError(f"a mark's kind is one of {', '.join(KINDS)}; got {kind!r}")
    return {"kind": kind, "letters": KINDS[kind][1] if letters is None else letters, "text": text}


def marks_of(graph):
    """The marks of a Snapshot or of its dict ({} when it has none)."""
    marks = graph.get("marks") if isinstance(graph, dict) else getattr(graph, "marks", None)
    return marks or {}
