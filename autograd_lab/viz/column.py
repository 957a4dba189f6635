"""Pictures that fit a notebook's column: what a notebook stores for a graph, so that GitHub,
nbconvert and a notebook opened without a kernel show it legibly.

    >>> import autograd_lab as ag
    >>> from autograd_lab.viz.column import fitted_svg
    >>> a = ag.tensor(2.0, requires_grad=True)
    >>> svg = fitted_svg(a * 3, names={"a": a})
    >>> float(svg.split('width="')[1].split('"')[0]) <= 880
    True

A notebook column is about 880 px wide (JupyterLab, Notebook 7, GitHub). A wider picture would be
scaled down until its 12 px text reads as 5 px, so a wide graph is *wrapped* instead: cut between
two columns of boxes into bands that are stacked like lines of text, read left to right, then the
next band. Edges cut at a band's right end carry a letter, and the same letter marks where they
go on in the next band. The legend and the caption wrap like words. Nothing is scaled.

`filmstrip_svg(graph, steps)` stacks the pictures of a few steps of the story (each with its
caption) under one legend: the step-by-step for readers without a kernel.
`Picture` is what a cell shows: the SVG, and the same SVG as an <img> in HTML, which JupyterLab and
Notebook 7 show even in an untrusted notebook (where they hide SVG output).
"""

import base64
import re
import string

from .layout import CHAR_W, layout
from .svg import (
    CAPTION_H,
    EDGE_STYLE,
    HIGHLIGHT,
    LEGEND_H,
    TEXT,
    _escape,
    _marker,
    _num,
    _svg_text,
    as_graph,
    scene,
    state_at,
    step_count,
)

COLUMN_W = 880.0  # a notebook's output column: pictures up to this wide are never scaled down
BAND_GAP = 18.0  # between two bands of a wrapped graph
ITEM_GAP = 14.0  # between two entries of the legend
FRAME_GAP = 16.0  # between two frames of a film strip
RUN_HINT = "Run this cell to step through it live."
# A stored picture keeps at most this many bands: a 2,000-op chain wraps into hundreds, and a
# picture that size (megabytes, every band a window onto the whole drawing) stalls the browser
# that opens the notebook. The bands kept are those around the step's node.
MAX_BANDS = 12
CUT_COLOUR = "#2563eb"


def fitted_svg(
    *roots_or_graph,
    names=None,
    collapsed=None,
    step=None,
    threshold=200,
    max_width=COLUMN_W,
    note=None,
):
    """`to_svg()`, but never wider than `max_width` (default 880 px): wide graphs wrap into bands.

    `note=` adds a line under the picture (a widget's stored picture says how to see it live).
    """
    graph = as_graph(roots_or_graph, names)
    placed = layout(graph, collapsed, threshold)
    return render_fitted(graph, placed, step=step, max_width=max_width, note=note)


def render_fitted(graph, placed, step=None, max_width=COLUMN_W, note=None):
    """SVG text for a graph already laid out, wrapped to `max_width` pixels (at most MAX_BANDS
    bands: those around the step's node, and the note says which part is drawn)."""
    _check_width(max_width)
    drawn = scene(graph, placed, step)
    header, y, header_w = _reflow_header(drawn["header"], max_width)
    focus = _focus_x(graph, placed, step)
    bands, y, width, shown = _bands(drawn["graph"], placed, max_width, y, focus=focus)
    if shown is not None:
        first, last, total = shown
        part = f"The picture draws rows {first} to {last} of the {total} this wide graph wraps into"
        part += " (around the step's node)." if step else "."
        note = part if note is None else f"{part}\n{note}"
    return _document([header, bands], y, max(width, header_w), note, max_width)


def _focus_x(graph, placed, step):
    """The x of the node the step is about (the middle of its box), or None."""
    if not step:
        return None
    event = state_at(graph, step)["event"]
    box = placed["nodes"].get(event["node"]) if event else None
    return None if box is None else box["x"] + box["w"] / 2


def _within(part, left, right):
    """The shapes and texts of a drawing that reach between x = left and x = right."""
    shapes, texts = part

    def reaches(shape):
        if shape[0] == "rect":
            return shape[1] < right and shape[1] + shape[3] > left
        xs = [x for x, _ in shape[1]]
        return min(xs) < right and max(xs) > left

    margin = 400.0  # a label is drawn from its box's x: keep those whose box may be in view
    kept_texts = [t for t in texts if left - margin < t[0] < right + margin]
    return [s for s in shapes if reaches(s)], kept_texts


def filmstrip_svg(graph, steps=None, collapsed=None, threshold=200, max_width=COLUMN_W, note=None):
    """The pictures after `steps` (default: `key_steps(graph)`), each with the caption of its
    step, under one legend: a film strip of the story to read without a kernel. Small graphs sit
    side by side, as many as fit the column; wider ones one under the other, wrapped.
    """
    _check_width(max_width)
    graph = as_graph((graph,))
    steps = key_steps(graph) if steps is None else list(steps)
    last = step_count(graph)
    bad = [s for s in steps if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s <= last]
    if not steps or bad:
        raise ValueError(
            f"filmstrip steps must be a non-empty list of steps from 0 to {last} (0: before "
            f"the forward pass, {last}: the end of backward); got {steps!r}"
        )
    placed = layout(graph, collapsed, threshold)
    scenes = [scene(graph, placed, step) for step in steps]
    shapes, texts = scenes[0]["header"]
    legend = ([s for s in shapes if _top(s) < LEGEND_H], [t for t in texts if t[1] < LEGEND_H])
    parts, y, width = [], 0.0, 0.0
    legend_svg, y, width = _reflow_header(legend, max_width)
    parts.append(legend_svg)
    frame_w = max(placed["width"], 240.0)  # room for a caption of a few words
    columns = max(1, int((max_width + FRAME_GAP) // (frame_w + FRAME_GAP)))
    for first in range(0, len(scenes), columns):
        row_bottom = y
        for k, drawn in enumerate(scenes[first : first + columns]):
            shapes, texts = drawn["header"]
            caption = (
                [s for s in shapes if _top(s) >= LEGEND_H],
                [t for t in texts if t[1] >= LEGEND_H],
            )
            box_w = frame_w if columns > 1 else max_width
            header, below, header_w = _reflow_header(caption, box_w, legend=False)
            focus = _focus_x(graph, placed, steps[first + k])
            body, below, body_w, _ = _bands(
                drawn["graph"], placed, box_w, below, f"frame{first + k}", focus=focus
            )
            x = k * (frame_w + FRAME_GAP)
            parts.append(f'<g transform="translate({_num(x)},{_num(y)})">\n{header}{body}</g>\n')
            row_bottom = max(row_bottom, y + below)
            width = max(width, x + max(header_w, body_w))
        y = row_bottom + FRAME_GAP / 2
        if first + columns < len(scenes):  # a dashed rule between rows of frames
            parts.append(
                f'<line x1="0" x2="{_num(max_width)}" y1="{_num(y)}" y2="{_num(y)}" '
                f'stroke="#d1d5db" stroke-dasharray="4 4"/>\n'
            )
            y += FRAME_GAP / 2
    return _document(parts, y, width, note, max_width)


def _check_width(max_width):
    if not isinstance(max_width, (int, float)) or max_width < 200:
        raise ValueError(
            f"max_width={max_width!r} is too narrow for a graph picture: its legend and "
            "captions need at least 200 px (a notebook's column is about 880)"
        )


def key_steps(graph):
    """The steps a reader needs to follow backward: the end of the forward pass, then every step
    at which an op runs (with the gradient of its output) or a leaf's .grad is added to."""
    from .svg import _parts, forward_ops

    nodes, _, events = _parts(graph)
    ops = forward_ops(nodes)
    is_op = {n["id"]: n["kind"] == "op" for n in nodes}
    return [len(ops)] + [
        len(ops) + i + 1
        for i, event in enumerate(events)
        if (event["kind"] == "run" and is_op[event["node"]]) or event["kind"] == "accumulate"
    ]


def inspector_text(graph, node_id, step=None):
    """What the live widget's inspector shows for a pinned node after `step` steps (None: the
    end), as one line of facts: a stored picture prints it under the drawing."""
    from .svg import _details, _parts, state_at

    node = next(n for n in _parts(graph)[0] if n["id"] == node_id)
    state = state_at(graph, step)
    # as the drawing decides: a leaf exists from the start, an op's output once it ran
    leaf = node["kind"] == "tensor" and node.get("role") != "output"
    known = state["computed"] is None or leaf or node_id in state["computed"]
    details = _details(node, node.get("value") if known else None, state["grads"].get(node_id))
    return "Pinned in the inspector: " + " · ".join(details.split("\n"))


# ---- what a cell shows ----------------------------------------------------------------------------


class Picture:
    """A static picture for a notebook: SVG for GitHub and nbconvert, an <img> in HTML for
    JupyterLab and Notebook 7 (trusted or not), and a line of text for everything else."""

    def __init__(self, svg, text="graph picture"):
        self.svg, self.text = svg, text

    @property
    def data(self):
        """The SVG text, under the name IPython's `SVG(...).data` uses."""
        return self.svg

    def __repr__(self):
        return self.text

    def _repr_mimebundle_(self, **kwargs):
        return picture_bundle(self.svg, self.text)


def stacked_svg(titled_graphs, lines=(), threshold=200, max_width=COLUMN_W):
    """Graphs one under the other, each under its title and wrapped to `max_width`, then `lines`
    ([(colour, text)]) wrapped too: two graphs compared (a diff, PyTorch beside ours) drawn for a
    notebook's column, where side by side they would shrink their text."""
    _check_width(max_width)
    parts, y, width = [], 0.0, 0.0
    for title, graph in titled_graphs:
        parts.append(
            f'<text x="12" y="{_num(y + 18.0)}" font-weight="bold" font-size="14" '
            f'fill="#111827">{_escape(title)}</text>\n'
        )
        y += 26.0
        picture = fitted_svg(graph, threshold=threshold, max_width=max_width)
        w, h = (
            float(v) for v in re.search(r'width="([\d.]+)" height="([\d.]+)"', picture).groups()
        )
        parts.append(picture.replace("<svg ", f'<svg x="0" y="{_num(y)}" ', 1))
        y, width = y + h + 12.0, max(width, w)
    chars = int((max_width - 24.0) // CHAR_W)
    for colour, text in lines:
        for line in _wrap_words(text, chars):
            parts.append(
                f'<text x="12" y="{_num(y + 14.0)}" fill="{colour}">{_escape(line)}</text>\n'
            )
            y += 16.0
            width = max(width, 24.0 + CHAR_W * len(line))
    w, h = _num(min(width, max_width)), _num(y + 8.0)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="monospace" font-size="12">\n'
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>\n' + "".join(parts) + "</svg>\n"
    )


def picture_bundle(svg, text):
    """The mimebundle of a static picture (see `Picture`)."""
    return {"text/plain": text, "image/svg+xml": svg, "text/html": picture_html(svg, text)}


def picture_html(svg, alt):
    """The SVG as an <img>: untrusted notebooks sanitize HTML but keep images with data: URLs,
    and drawing it as an image keeps its tooltips and styles out of the page's."""
    data = base64.b64encode(svg.encode()).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" alt="{_escape(alt)}"/>'


# ---- wrapping ------------------------------------------------------------------------------------


def _top(shape):
    return shape[2] if shape[0] == "rect" else min(y for _, y in shape[1])


def _text_extent(text):
    """(left, right) of a text, from its size, anchor and length (monospace: all widths equal)."""
    x, _, words, kind = text
    size, _, _, anchor = TEXT[kind]
    width = CHAR_W * size / 12.0 * len(words)
    left = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    return left, left + width


def _items(shapes, texts):
    """Group a header row into items (a swatch with its word): elements that touch or overlap."""
    elements = [(s[1], s[1] + s[3], s, None) for s in shapes if s[0] == "rect"]
    elements += [(*_text_extent(t), None, t) for t in texts]
    items = []
    for left, right, shape, text in sorted(elements, key=lambda e: e[0]):
        if items and left <= items[-1]["right"] + 8.0:
            item = items[-1]
            item["right"] = max(item["right"], right)
        else:
            item = {"left": left, "right": right, "shapes": [], "texts": []}
            items.append(item)
        (item["shapes"].append(shape) if shape is not None else item["texts"].append(text))
    return items


def _pack(items, row_top, row_h, max_width, y, shapes, texts):
    """Place items in rows no wider than max_width, from height y: (height below, widest row)."""
    cursor, top, widest = 12.0, y, 0.0
    for item in items:
        w = item["right"] - item["left"]
        if cursor > 12.0 and cursor + w > max_width - 12.0:
            cursor, top = 12.0, top + row_h
        dx, dy = cursor - item["left"], top - row_top
        shapes += [("rect", s[1] + dx, s[2] + dy, *s[3:]) for s in item["shapes"]]
        texts += [(t[0] + dx, t[1] + dy, t[2], t[3]) for t in item["texts"]]
        widest = max(widest, cursor + w + 12.0)
        cursor += w + ITEM_GAP
    return (top + row_h if items else y), widest


def _wrap_words(text, width):
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line]


def _reflow_header(header, max_width, top=0.0, legend=True):
    """The legend, the caption and what follows it, wrapped into rows: (SVG text, height below,
    width of the widest row)."""
    shapes, texts = header
    out_shapes, out_texts = [], []
    y, widest = top, 0.0
    if legend:
        row = _items(
            [s for s in shapes if _top(s) < LEGEND_H],
            [t for t in texts if t[1] < LEGEND_H and t[3] != "caption"],
        )
        y, widest = _pack(row, 0.0, LEGEND_H, max_width, y, out_shapes, out_texts)
    for caption in (t for t in texts if t[3] == "caption"):
        for line in _wrap_words(caption[2], int((max_width - 24.0) // CHAR_W)):
            out_texts.append((12.0, y + 13.0, line, "caption"))
            widest = max(widest, 24.0 + CHAR_W * len(line))
            y += CAPTION_H
    rest = _items(
        [s for s in shapes if _top(s) >= LEGEND_H],
        [t for t in texts if t[1] >= LEGEND_H and t[3] != "caption"],
    )
    y, rest_w = _pack(rest, LEGEND_H, CAPTION_H, max_width, y, out_shapes, out_texts)
    return _svg_text(out_shapes, out_texts), y, max(widest, rest_w)


def _cuts(placed, max_width):
    """Where to cut a wide drawing: x positions in the gaps between columns of boxes, each band
    as wide as fits. A column wider than the band is cut through (no gap can help there)."""
    width = placed["width"]
    if width <= max_width:
        return [0.0, width]
    spans = sorted((b["x"], b["x"] + b["w"]) for b in placed["nodes"].values())
    gaps, reach = [], 0.0
    for left, right in spans:
        if left > reach + 2.0:
            gaps.append((reach + left) / 2)
        reach = max(reach, right)
    cuts = [0.0]
    while width - cuts[-1] > max_width:
        fitting = [g for g in gaps if cuts[-1] < g <= cuts[-1] + max_width]
        cuts.append(max(fitting) if fitting else cuts[-1] + max_width)
    return cuts + [width]


def _crossings(edges, x):
    """The heights at which edges cross the vertical line at x."""
    found = []
    for edge in edges:
        points = edge["points"]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            if min(x0, x1) < x <= max(x0, x1) and x0 != x1:
                found.append(y0 + (y1 - y0) * (x - x0) / (x1 - x0))
    return sorted(found)


def _extent(placed, left, right):
    """The heights drawn between left and right: the band shows only those (plus a margin)."""
    ys = [
        y
        for b in placed["nodes"].values()
        if b["x"] < right and b["x"] + b["w"] > left
        for y in (b["y"], b["y"] + b["h"])
    ]
    ys += [y for e in placed["edges"] for x, y in e["points"] if left <= x <= right]
    for group in placed["groups"]:
        ys += [y for polygon in group.get("outline", []) for x, y in polygon if left <= x <= right]
    if not ys:
        return 0.0, placed["height"]
    return max(0.0, min(ys) - 16.0), min(placed["height"], max(ys) + 12.0)


def _bands(graph_part, placed, max_width, y, name="graph", focus=None):
    """The graph drawn as bands no wider than max_width, from height y: (SVG text, y below, width,
    None or (first, last, total) when only MAX_BANDS of the bands are drawn). The drawing is
    written once (`name` is its id) and each band shows a window onto it."""
    cuts = _cuts(placed, max_width)
    shown = None
    total = len(cuts) - 1
    if total > MAX_BANDS:  # keep the bands around the focus, and only what they show
        at = 0 if focus is None else max(i for i in range(total) if cuts[i] <= focus)
        first = min(max(0, at - MAX_BANDS // 2), total - MAX_BANDS)
        cuts = cuts[first : first + MAX_BANDS + 1]
        graph_part = _within(graph_part, cuts[0], cuts[-1])
        shown = (first + 1, first + MAX_BANDS, total)
    body = _svg_text(*graph_part)
    if len(cuts) == 2 and shown is None:
        height = placed["height"]
        svg = f'<g transform="translate(0,{_num(y)})">\n{body}</g>\n'
        return svg, y + height, placed["width"], None
    out = [f'<defs><g id="\0-{name}">\n{body}</g></defs>\n']
    letters = {}  # cut x -> [(height, letter)] of the edges it cuts
    for x in cuts[1:-1]:
        heights = _crossings(placed["edges"], x)
        letters[x] = [(h, string.ascii_uppercase[i % 26]) for i, h in enumerate(heights)]
    for left, right in zip(cuts, cuts[1:]):
        top, bottom = _extent(placed, left, right)
        w, h = right - left, bottom - top
        marks = []
        for h_cut, letter in letters.get(right, []):  # leaves this band here ...
            marks.append((right - 3.0, h_cut - 3.0, letter, "end"))
        for h_cut, letter in letters.get(left, []):  # ... and comes back in the next one
            marks.append((left + 3.0, h_cut - 3.0, letter, "start"))
        mark_svg = "".join(
            f'<text x="{mx:.1f}" y="{my:.1f}" fill="{CUT_COLOUR}" font-size="11" '
            f'font-weight="bold" text-anchor="{anchor}">{letter}</text>\n'
            for mx, my, letter, anchor in marks
        )
        out.append(
            f'<svg x="0" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" '
            f'viewBox="{_num(left)} {_num(top)} {_num(w)} {_num(h)}">\n'
            f'<use href="#\0-{name}"/>\n{mark_svg}</svg>\n'
        )
        if right < cuts[-1]:  # a dashed line under the band: the graph goes on below
            out.append(
                f'<line x1="12" x2="{_num(w - 12)}" y1="{_num(y + h + BAND_GAP / 2)}" '
                f'y2="{_num(y + h + BAND_GAP / 2)}" stroke="{CUT_COLOUR}" stroke-width="0.8" '
                f'stroke-dasharray="2 4"/>\n'
            )
            y += BAND_GAP
        y += h
    return "".join(out), y, max_width, shown


def _document(parts, height, width, note, max_width):
    """The whole SVG: marker definitions, a white background, the parts, and the note."""
    import hashlib

    body = "".join(parts)
    if note:
        chars = int((max_width - 24.0) // (CHAR_W * 11 / 12))
        lines = [line for part in note.split("\n") for line in _wrap_words(part, chars)]
        for line in lines:
            width = max(width, 24.0 + CHAR_W * 11 / 12 * len(line))
            body += (
                f'<text x="12" y="{_num(height + 15.0)}" fill="#374151" font-size="11" '
                f'font-style="italic">{_escape(line)}</text>\n'
            )
            height += 16.0
        height += 6.0
    width = min(max(width, 1.0), max_width) if width else max_width
    uid = "ag" + hashlib.sha1(body.encode()).hexdigest()[:10]
    w, h = _num(width), _num(height)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="monospace" font-size="12">\n'
        f"<defs>{_marker(uid, 'a', EDGE_STYLE['stroke'])}{_marker(uid, 'h', HIGHLIGHT)}</defs>\n"
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>\n'
    )
    return head + body.replace("\0", uid) + "</svg>\n"
