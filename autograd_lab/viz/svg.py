"""A static picture of the graph: deterministic SVG text, and a matplotlib figure for slides.

    >>> import autograd_lab as ag
    >>> from autograd_lab.viz.svg import to_svg
    >>> a = ag.tensor(2.0, requires_grad=True)
    >>> svg = to_svg(a * 3, names={"a": a})
    >>> svg.startswith("<svg") and ">a</text>" in svg
    True

The same graph always gives the same bytes (fixed number formats, no ids from memory addresses,
no clocks), so nbval can compare the output of a notebook cell and GitHub can show it.
`step=k` draws the picture after k steps of the whole story: first the forward pass, one op per
step in creation order, then the backward pass, one engine event per step (needs `record()`).

How: `layout()` places the boxes, `scene()` turns them into plain shapes (rectangles, lines,
text), and two small renderers draw those shapes: `_svg_text` and `to_matplotlib`.
"""

import hashlib

from .layout import (
    CHAR_W,
    LINE_H,
    PAD_Y,
    _parts,
    clusters_of,
    group_lines,
    layout,
    memory_line,
    node_lines,
    number_text,
    shape_text,
    summary_text,
)
from .marks import KINDS as MARK_KINDS
from .marks import marks_of

FONT_SIZE, SMALL_FONT = 12, 11  # layout.CHAR_W is the width of one 12px monospace character
TEXT_DROP = 11.5  # from the top of a line of text to its baseline
LEGEND_H, CAPTION_H = 24.0, 18.0
GRAD_COLOUR, HIGHLIGHT = "#c2410c", "#dc2626"


def _style(fill="none", stroke="#6b7280", width=1.2, rx=0, dash=None, opacity=None):
    """One drawing style, with its SVG attributes written once (thousands of boxes share it)."""
    style = {
        "fill": fill,
        "stroke": stroke,
        "width": width,
        "rx": rx,
        "dash": dash,
        "opacity": opacity,
    }
    attrs = f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"'
    attrs += f' rx="{rx}"' if rx else ""
    attrs += f' stroke-dasharray="{dash}"' if dash else ""
    attrs += f' opacity="{opacity}"' if opacity is not None else ""
    style["svg"] = attrs
    return style


# Colours by role: tensors are filled (data), ops are white with round corners (functions).
ROLE_COLOURS = {  # role -> (fill, border)
    "input": ("#dbeafe", "#2563eb"),
    "parameter": ("#ede9fe", "#7c3aed"),
    "output": ("#dcfce7", "#16a34a"),
    "intermediate": ("#ffffff", "#6b7280"),
}
SAVED_BORDER = "#d97706"  # an amber outline: some op saved this value for its backward
_NODE_STYLES = {}


def _node_style(node, faded=False):
    """The style of a node's box: its role's colours, an amber border when saved, pale when not
    yet computed."""
    fill, stroke = ROLE_COLOURS.get(node.get("role"), ROLE_COLOURS["intermediate"])
    saved = bool(node.get("is_saved"))
    key = (fill, stroke, node["kind"], saved, faded)
    if key not in _NODE_STYLES:
        _NODE_STYLES[key] = _style(
            fill,
            SAVED_BORDER if saved else stroke,
            2.5 if saved else 1.2,
            8 if node["kind"] == "op" else 0,
            opacity=0.35 if faded else None,
        )
    return _NODE_STYLES[key]


GROUP_STYLE = _style("#f8fafc", "#cbd5e1", 1, rx=6)
COLLAPSED_STYLE = _style("#f1f5f9", "#64748b", 1.2, rx=6, dash="6 3")
# A fused kernel (compile): orange, so it never looks like a module's scope.
FUSED_STYLE = _style("#fff7ed", "#ea580c", 1.5, rx=6)
FUSED_COLLAPSED_STYLE = _style("#ffedd5", "#ea580c", 2, rx=8)
# The memory plan at a step: a teal frame around values alive now, freed ones greyed.
ALIVE_STYLE = _style(stroke="#0d9488", width=2.5, rx=10)
FREED_STYLE = _style("#e5e7eb", "#9ca3af", 1.2, dash="3 2")
MEMORY_COLOUR = "#0f766e"
EDGE_STYLE = _style(stroke="#9ca3af", width=1.2)
HIGHLIGHT_BOX = _style(stroke=HIGHLIGHT, width=3, rx=10)
HIGHLIGHT_EDGE = _style(stroke=HIGHLIGHT, width=3)
TEXT = {  # text styles: (size, colour, bold, anchor)
    "label": (FONT_SIZE, "#111827", True, "middle"),
    "value": (FONT_SIZE, "#374151", False, "middle"),
    "grad": (FONT_SIZE, GRAD_COLOUR, False, "middle"),
    "group": (SMALL_FONT, "#64748b", False, "start"),
    "fused": (SMALL_FONT, "#c2410c", True, "start"),
    "memory": (SMALL_FONT, MEMORY_COLOUR, False, "middle"),
    "legend": (SMALL_FONT, "#374151", False, "start"),
    "caption": (FONT_SIZE, "#111827", False, "start"),
    "note": (SMALL_FONT, "#92400e", False, "start"),
    "edge": (SMALL_FONT, "#6b7280", False, "middle"),
    "edge_grad": (SMALL_FONT, HIGHLIGHT, True, "middle"),
}


# ---- what to draw: a graph, or tensors to snapshot ------------------------------------------------


def as_graph(roots_or_graph, names=None):
    """A Snapshot (or its dict) as it is; a recording's; otherwise the snapshot of these tensors."""
    if len(roots_or_graph) == 1:
        only = roots_or_graph[0]
        if isinstance(only, dict) or (hasattr(only, "nodes") and hasattr(only, "edges")):
            return only
        if hasattr(only, "graph") and hasattr(only, "events"):  # a record()ing
            return only.graph(names=names)
        if isinstance(only, (list, tuple)):
            roots_or_graph = tuple(only)
    if not roots_or_graph:
        raise TypeError(
            "nothing to draw: pass the tensors whose graph you want to see, e.g. to_svg(loss), "
            "or a Snapshot from snapshot() or record()"
        )
    from .graph import snapshot  # only needed for tensors; the drawing itself reads plain data

    return snapshot(*roots_or_graph, names=names)


# ---- the state after k steps ----------------------------------------------------------------------


def step_count(graph):
    """How many steps `step=` can show: one per op (forward), then one per backward event."""
    nodes, _, events = _parts(graph)
    return len(forward_ops(nodes)) + len(events)


def forward_ops(nodes):
    """The op nodes that are forward steps, in creation order. The ops drawn inside a fused
    kernel (`fused_into`) are not: the kernel computes them all in its one step."""
    ops = [n for n in nodes if n["kind"] == "op" and not n.get("fused_into")]
    return sorted(ops, key=lambda n: n["order"])


def state_at(graph, step=None):
    """What the picture shows after `step` steps: which nodes are computed, each node's gradient,
    and the step's event (None for the finished picture).

    Forward: leaves exist from the start, and op k is computed at step k (creation order).
    Backward: an op shows the gradient it ran with; a leaf's .grad adds up what accumulated.
    With a memory plan, "memory" is the planned call whose aftermath the step shows (-1: none
    has run yet), else None.
    """
    nodes, edges, events = _parts(graph)
    if step is None:
        return {
            "computed": None,
            "grads": {n["id"]: n.get("grad") for n in nodes},
            "event": None,
            "memory": None,
        }
    ops = forward_ops(nodes)
    total = len(ops) + len(events)
    if not isinstance(step, int) or not 0 <= step <= total:
        raise ValueError(
            f"step={step!r} is not a step of this graph: it has {len(ops)} forward steps (one per "
            f"op) and {len(events)} backward steps, so use 0 to {total} (or step=None for the end)"
        )
    computed = {n["id"] for n in ops[:step]}
    computed.update(n["id"] for n in nodes if n.get("fused_into") in computed)
    kind_of = {n["id"]: n["kind"] for n in nodes}
    for edge in edges:  # an output tensor appears with the op that makes it
        if edge["source"] in computed and kind_of[edge["target"]] == "tensor":
            computed.add(edge["target"])
    outputs_of = {}  # an op -> the tensor nodes drawn for its results (the roots)
    for edge in edges:
        if kind_of[edge["target"]] == "tensor":
            outputs_of.setdefault(edge["source"], []).append(edge["target"])
    grads, sends = {}, {}
    for event in events[: max(0, step - len(ops))]:
        if event["kind"] == "run" and kind_of[event["node"]] == "op":
            grads[event["node"]] = event["grad"]
            for out in outputs_of.get(event["node"], ()):  # a root: backward's seed, "grad 1."
                grads.setdefault(out, event["grad"])
            sends = {}
        elif event["kind"] == "send":  # x * x sends to x twice: along its first, then second edge
            pair = (event["node"], event["target"])
            sends[pair] = sends.get(pair, -1) + 1
        elif event["kind"] == "accumulate":  # .grad += this (twice for two backward calls)
            grads[event["node"]] = _added(grads.get(event["node"]), event["grad"])
    if step == 0:
        event = None
    elif step <= len(ops):
        event = {"kind": "forward", "node": ops[step - 1]["id"], "target": None, "grad": None}
    else:
        event = events[step - len(ops) - 1]
        if event["kind"] == "send":  # which of the edges between the two this gradient takes
            event = {**event, "edge": sends.get((event["node"], event["target"]), 0)}
    memory = None
    if _memory_of(graph) is not None:  # after the forward pass, its last call's aftermath
        done = [op.get("memory_step") for op in ops[:step]]
        memory = next((k for k in reversed(done) if k is not None), -1)
    return {
        "computed": computed,
        "grads": grads,
        "event": event,
        "step": step,
        "total": total,
        "memory": memory,
    }


def _memory_of(graph):
    """The graph's memory plan, step by step (CONTRACT.md), or None."""
    return graph.get("memory") if isinstance(graph, dict) else getattr(graph, "memory", None)


def memory_state(graph, index):
    """(alive node ids, freed node ids, the step's dict) after planned call `index` (-1: before
    the first); freed counts every value freed so far."""
    steps = _memory_of(graph)["steps"]
    if index < 0:
        return set(), set(), None
    freed = {node_id for step in steps[: index + 1] for node_id in step["freed"]}
    return set(steps[index]["alive"]), freed, steps[index]


def _added(total, extra):
    """The summary of total + extra: exact for the values and the mean, which is all we print."""
    if total is None or extra is None:
        return extra if total is None else total
    summed = {"shape": extra["shape"], "numel": extra["numel"], "values": None}
    try:
        summed["values"] = _add_values(total["values"], extra["values"])
        summed["mean"] = total["mean"] + extra["mean"]
    except TypeError:  # values not kept (a big tensor), or "nan"/"inf" given as text
        summed["mean"] = None
    return summed


def _add_values(a, b):
    if isinstance(a, list):
        return [_add_values(x, y) for x, y in zip(a, b)]
    return a + b


# ---- the scene: plain shapes ----------------------------------------------------------------------


def scene(graph, placed, step=None):
    """Everything to draw, as plain shapes both renderers understand.

    Returns {"width", "height", "header", "top", "graph"}: the header (legend, and the caption
    of a step) and the graph are each (shapes, texts); the graph is drawn `top` pixels lower, in
    the layout's own coordinates. Shapes are ("rect", x, y, w, h, style, tooltip), ("polygon",
    points, style, tooltip) and ("line", points, style, arrow), in painting order; texts are
    (x, y, text, kind) and go on top.
    """
    nodes, _, _ = _parts(graph)
    by_id = {node["id"]: node for node in nodes}
    clusters, memory = clusters_of(graph), _memory_of(graph)
    state = state_at(graph, step)
    header = ([], [])
    width = _legend(
        *header,
        nodes,
        collapsed=any(g["collapsed"] and g["scope"] not in clusters for g in placed["groups"]),
        fused=bool(clusters),
        memory=memory is not None,
        step=step is not None,
    )
    alive_freed = None
    if step is not None:
        caption = _caption(state, by_id, clusters)
        header[1].append((12.0, LEGEND_H + 13.0, caption, "caption"))
        width = max(width, 24.0 + CHAR_W * len(caption))
        if memory is not None:
            alive, freed, now = memory_state(graph, state["memory"])
            alive_freed = (alive, freed)
            width = _live_bar(*header, width, now, memory)
    shapes, texts = [], []
    for group in placed["groups"]:
        if not group["collapsed"]:
            _draw_group(shapes, texts, group, clusters.get(group["scope"]))
    for edge in placed["edges"]:
        _draw_edge(shapes, texts, edge)
    for box_id, box in placed["nodes"].items():
        if box_id in by_id:
            _draw_node(shapes, texts, by_id[box_id], box, state, alive_freed)
    for group in placed["groups"]:
        if group["collapsed"]:
            cluster = clusters.get(group["scope"])
            _draw_collapsed(shapes, texts, group, cluster, _kernel_memory(cluster, alive_freed))
    if state["event"] is not None:
        _draw_event(shapes, texts, state["event"], placed)
    _draw_marks(shapes, texts, marks_of(graph), placed)
    top = LEGEND_H + (CAPTION_H if step is not None else 0.0)
    # what this drawing cannot show (a PyTorch graph: from_torch.py), one fact a line
    note = graph.get("note") if isinstance(graph, dict) else getattr(graph, "note", None)
    for line in note.split("; ") if note else ():
        header[1].append((12.0, top + 13.0, line, "note"))
        width, top = max(width, 24.0 + 6.6 * len(line)), top + CAPTION_H
    return {
        "width": max(width, placed["width"]),
        "height": placed["height"] + top,
        "header": header,
        "top": top,
        "graph": (shapes, texts),
    }


def _legend(shapes, texts, nodes, collapsed=False, fused=False, memory=False, step=False):
    """A row of swatches: what the colours and frames in this picture mean (only those that
    occur in it). Returns its width."""
    present = {n.get("role") for n in nodes if n["kind"] == "tensor"}
    roles = {"input": "input (leaf)", "parameter": "parameter", "output": "output (root)"}
    entries = [
        (text, _node_style({"kind": "tensor", "role": role}))
        for role, text in roles.items()
        if role in present
    ]
    if any(n["kind"] == "op" for n in nodes):
        entries += [("op", _node_style({"kind": "op", "role": "intermediate"}))]
    if any(n.get("is_saved") for n in nodes):
        entries += [("saved for backward", _node_style({"kind": "tensor", "is_saved": True}))]
    entries += [("collapsed scope (hides its nodes)", COLLAPSED_STYLE)] if collapsed else []
    entries += [("fused kernel", FUSED_COLLAPSED_STYLE)] if fused else []
    entries += [("alive", ALIVE_STYLE), ("freed", FREED_STYLE)] if memory else []
    entries += [("this step's node (red frame)", HIGHLIGHT_BOX)] if step else []
    entries += [("grad", None)]
    x = 12.0
    for name, style in entries:
        if style is None:  # the gradient's colour is a text colour
            texts.append((x + CHAR_W * 4, 16.0, "gradient", "grad"))  # centred on its middle
            x += CHAR_W * 8 + 14.0
            continue
        shapes.append(("rect", x, 6.0, 18.0, 12.0, style, name))
        texts.append((x + 22.0, 16.0, name, "legend"))
        x += 22.0 + 6.6 * len(name) + 14.0  # 6.6: one character at 11px
    return x


def _caption(state, by_id, clusters):
    """One line saying what the step did."""
    event = state["event"]
    head = f"step {state['step']} of {state['total']}"
    if event is None:
        return f"{head}: nothing computed yet, only the leaves exist"
    label = _on_screen(by_id[event["node"]])
    grad = summary_text(event.get("grad"), by_id[event["node"]].get("dtype"))
    if event["kind"] == "forward":
        kernel = next((c for c in clusters.values() if c.get("node") == event["node"]), None)
        if kernel is not None:
            return (
                f"{head} (forward): {label} is computed (one kernel runs all of {kernel['label']})"
            )
        return f"{head} (forward): {label} is computed"
    if event["kind"] == "run" and by_id[event["node"]]["kind"] == "tensor":
        return f"{head} (backward): grad {grad} arrives at the leaf {label}"
    if event["kind"] == "run":
        return f"{head} (backward): {label} runs with grad {grad}"
    if event["kind"] == "send":
        return f"{head} (backward): {label} sends grad {grad} to {by_id[event['target']]['label']}"
    return f"{head} (backward): {label}.grad += {grad}"


def _on_screen(node):
    """How a caption names a node: its box's label, and for an op PyTorch's node name too,
    "d = Add (AddBackward0)", so two Adds are told apart and the class is still named."""
    if node["kind"] == "op" and node.get("op") and node["op"] != node["label"]:
        return f"{node['label']} ({node['op']})"
    return node["label"]


def _live_bar(shapes, texts, width, now, memory):
    """After the caption: a bar of the bytes the plan keeps alive now, out of its peak."""
    x, y, bar = width + 12.0, LEGEND_H + 3.0, 120.0
    live = now["live_bytes"] if now else 0
    filled = bar * live / memory["peak_bytes"] if memory["peak_bytes"] else 0.0
    shapes.append(("rect", x, y, bar, 12.0, _style("#f3f4f6", "#9ca3af", 1), "live bytes"))
    shapes.append(("rect", x, y, filled, 12.0, _style("#99f6e4", MEMORY_COLOUR, 1), None))
    text = f"live {now['live'] if now else '0 B'} of peak {memory['peak']}"
    texts.append((x + bar + 8.0, y + 10.0, text, "legend"))
    return x + bar + 8.0 + 6.6 * len(text)


def _draw_group(shapes, texts, group, cluster=None):
    """An expanded scope: its outline (it steps from column to column) and its name; a fused
    kernel's in orange, titled with its ops."""
    style, title = GROUP_STYLE, group["scope"]
    tip = f"scope {title}: {group['count']} nodes"
    if cluster is not None:
        style, title = FUSED_STYLE, cluster["label"]
        tip = f"{title}: one kernel runs these {len(cluster['ops'])} ops in one pass"
    for polygon in group["outline"]:
        shapes.append(("polygon", polygon, style, tip))
    x, y = group["outline"][0][0]  # the top left corner of its first column
    texts.append((x + 6.0, y + 13.0, title, "group" if cluster is None else "fused"))


def _kernel_memory(cluster, alive_freed):
    """The memory state of what a collapsed fused kernel made: "alive", "freed" or None."""
    if cluster is None or not alive_freed:
        return None
    alive, freed = alive_freed
    return "alive" if cluster["node"] in alive else "freed" if cluster["node"] in freed else None


def _draw_collapsed(shapes, texts, group, cluster=None, memory=None):
    """A collapsed scope: one dashed box with its name and how many nodes it hides; a fused
    kernel: one orange box with its ops (framed in teal while its result is alive)."""
    x, y, w, h = group["x"], group["y"], group["w"], group["h"]
    style, tip = COLLAPSED_STYLE, f"scope {group['scope']}: {group['count']} nodes, collapsed"
    if cluster is not None:
        style = FREED_STYLE if memory == "freed" else FUSED_COLLAPSED_STYLE
        tip = f"{cluster['label']}: one kernel ({' -> '.join(cluster['ops'])})"
    shapes.append(("rect", x, y, w, h, style, tip))
    if memory == "alive":
        shapes.append(("rect", x - 3, y - 3, w + 6, h + 6, ALIVE_STYLE, None))
    for i, line in enumerate(group_lines(group["scope"], group["count"], cluster)):
        texts.append((x + w / 2, y + PAD_Y + LINE_H * i + TEXT_DROP, line, "value"))


EDGE_SPREAD = 10.0  # pixels between the parallel lines of one input used twice (x * x)


def parallel_points(points, k, count):
    """Line k of `count` parallel lines drawn for one edge: `x * x` reads x twice, so two lines
    arrive at Mul and both of its gradients are seen going back (and adding up)."""
    dy = (k - (count - 1) / 2) * EDGE_SPREAD
    return [[x, y + dy] for x, y in points]


def _draw_edge(shapes, texts, edge):
    count = edge.get("count", 1)
    for k in range(count):
        shapes.append(("line", parallel_points(edge["points"], k, count), EDGE_STYLE, True))
    if count > 1:  # "×2" above the lines near their start, clear of the box they go into
        (x0, y0), (x1, y1) = edge["points"][0], edge["points"][1]
        top = min(y0, y1) - (count - 1) / 2 * EDGE_SPREAD
        texts.append((x0 + min(24.0, (x1 - x0) / 2), top - 4.0, f"×{count}", "edge"))


def _draw_node(shapes, texts, node, box, state, alive_freed=None):
    """A node's box (with a tooltip of details) and its lines of text; with a memory plan at a
    step, a teal frame when its value is alive, grey when it was freed."""
    leaf = node["kind"] == "tensor" and node.get("role") != "output"  # exists before step 1
    known = state["computed"] is None or leaf or node["id"] in state["computed"]
    shown = node.get("value") if known else None
    faded = not known
    grad = state["grads"].get(node["id"])
    x, y, w, h = box["x"], box["y"], box["w"], box["h"]
    style = _node_style(node, faded)
    if alive_freed and known and node["id"] in alive_freed[1]:
        style = FREED_STYLE
    shapes.append(("rect", x, y, w, h, style, _details(node, shown, grad)))
    if alive_freed and known and node["id"] in alive_freed[0]:
        shapes.append(("rect", x - 3, y - 3, w + 6, h + 6, ALIVE_STYLE, None))
    lines = node_lines(node, value=shown, grad=grad)
    kinds = ("label", "value", "grad")
    for i, line in enumerate(lines):
        texts.append((x + w / 2, y + PAD_Y + LINE_H * i + TEXT_DROP, line, kinds[min(i, 2)]))
    if memory_line(node):  # always the bottom line (the layout made room for it)
        texts.append((x + w / 2, y + h - PAD_Y - LINE_H + TEXT_DROP, memory_line(node), "memory"))


def _details(node, value, grad):
    """The tooltip: everything the snapshot knows about a node, one fact a line."""
    head = f"{node['op']} ({node['label']})" if node["kind"] == "op" else node["label"]
    lines = [
        f"{head}: {node.get('role')}",
        f"shape {shape_text(node.get('shape') or [])} {node.get('dtype')}",
    ]
    if node.get("scope"):
        lines.append(f"scope {node['scope']}")
    if value is not None:
        lines.append("value " + _stats(value, node.get("dtype")))
    if grad is not None:
        lines.append("grad " + _stats(grad, node.get("dtype")))
    if node.get("saved"):
        saved = ", ".join(f"{s['name']} {shape_text(s['shape'])}" for s in node["saved"])
        lines.append(f"saves for backward: {saved}")
    if node.get("is_saved"):
        lines.append("its value is saved for backward by the op that uses it")
    if node.get("derivative"):  # with its value at this step once the op has run
        known = value is not None and node.get("derivative_value")
        lines.append(f"local derivative: {known or node['derivative']}")
    if node.get("fused"):
        lines.append(f"fused kernel of: {' -> '.join(node['fused'])}")
    if node.get("fused_into"):
        lines.append("inside a fused kernel: computed with it, kept in registers")
    lines += _memory_details(node.get("memory"))
    return "\n".join(lines)


def _memory_details(memory):
    """The memory plan's facts about a node's value, for its tooltip."""
    if not memory or memory.get("in_registers"):
        return ["memory: in registers (never written to memory)"] if memory else []
    lines = [f"memory: {memory['value']}, {memory['bytes']} bytes, {memory['note']}"]
    if memory.get("reused_from"):
        lines.append(f"reuses buffer {memory['buffer']} of {memory['reused_from']} (dead by then)")
    return lines


def _stats(summary, dtype):
    text = summary_text(summary, dtype, max_numbers=16)
    if summary.get("numel", 1) > 1 and summary.get("min") is not None:
        stats = (f"{k} {number_text(summary[k])}" for k in ("min", "max", "mean", "norm"))
        text += f" ({', '.join(stats)})"
    return text


def _draw_event(shapes, texts, event, placed):
    """Mark what the current step did: a red frame on the node, and for a "send" the edge, with
    the gradient on it, drawn from the node back to the input it goes to."""
    boxes, hidden = placed["nodes"], placed.get("hidden", {})
    node = hidden.get(event["node"], event["node"])
    if event["kind"] == "send" and event["target"] is not None:
        source = hidden.get(event["target"], event["target"])
        for edge in placed["edges"]:
            if (edge["source"], edge["target"]) == (source, node):
                count = edge.get("count", 1)
                k = min(event.get("edge", 0), count - 1)
                points = parallel_points(edge["points"], k, count)[::-1]
                shapes.append(("line", points, HIGHLIGHT_EDGE, True))
                (x0, y0), (x1, y1) = points[0], points[1]
                text = "grad " + summary_text(event["grad"])
                if CHAR_W * len(text) < abs(x1 - x0):  # only where it fits (the caption says it)
                    texts.append(((x0 + x1) / 2, (y0 + y1) / 2 - 6.0, text, "edge_grad"))
                break
    if node in boxes:
        b = boxes[node]
        shapes.append(("rect", b["x"] - 3, b["y"] - 3, b["w"] + 6, b["h"] + 6, HIGHLIGHT_BOX, None))


# A diff's and a failed cell's marks (marks.py): a frame in the mark's colour, its letters above
# the right corner; a node inside a collapsed scope marks the scope's box.
MARK_STYLES = {
    kind: _style(stroke=colour, width=3, rx=10, dash=None if kind == "failed" else "6 3")
    for kind, (colour, *_) in MARK_KINDS.items()
}


def _draw_marks(shapes, texts, marks, placed):
    hidden = placed.get("hidden", {})
    for node_id, mark in marks.items():
        box = placed["nodes"].get(hidden.get(node_id, node_id))
        if box is None:
            continue
        x, y, w, h = box["x"] - 5, box["y"] - 5, box["w"] + 10, box["h"] + 10
        shapes.append(("rect", x, y, w, h, MARK_STYLES[mark["kind"]], mark["text"]))
        if mark["letters"]:
            texts.append((x + w, y - 3, mark["letters"], f"mark_{mark['kind']}"))


# ---- SVG ------------------------------------------------------------------------------------------


def to_svg(*roots_or_graph, names=None, collapsed=None, step=None, width=None, threshold=200):
    """The graph as SVG text: tensors (snapshot taken here), a Snapshot, or a record()ing.

        to_svg(loss)                              # the graph behind loss
        to_svg(t.graph(), step=5)                 # after 5 steps of forward then backward
        to_svg(big, collapsed=[])                 # every node, even in a big graph

    `collapsed`/`threshold` as in `layout()`; `width` scales the picture to that many pixels.
    """
    graph = as_graph(roots_or_graph, names)
    return render_svg(graph, layout(graph, collapsed, threshold), step=step, width=width)


def render_svg(graph, placed, step=None, width=None):
    """SVG text for a graph already laid out (`placed = layout(graph)`)."""
    drawn = scene(graph, placed, step)
    body = _svg_text(*drawn["header"])
    body += f'<g transform="translate(0,{_num(drawn["top"])})">\n{_svg_text(*drawn["graph"])}</g>\n'
    # Ids must differ between pictures on one page, yet stay the same for the same picture: name
    # the arrowhead after a hash of what is drawn ("\0" cannot occur in text: _escape drops it).
    uid = "ag" + hashlib.sha1(body.encode()).hexdigest()[:10]
    w, h = _num(drawn["width"]), _num(drawn["height"])
    shown_w, shown_h = (
        (w, h) if width is None else (_num(width), _num(drawn["height"] * width / drawn["width"]))
    )
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{shown_w}" height="{shown_h}" '
        f'viewBox="0 0 {w} {h}" font-family="monospace" font-size="{FONT_SIZE}">\n'
        f"<defs>{_marker(uid, 'a', EDGE_STYLE['stroke'])}{_marker(uid, 'h', HIGHLIGHT)}</defs>\n"
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>\n'
    )
    return head + body.replace("\0", uid) + "</svg>\n"


def _marker(uid, name, colour):
    return (
        f'<marker id="{uid}-{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        f'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto">'
        f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
    )


def _svg_text(shapes, texts):
    # Hot loops (thousands of shapes): coordinates are formatted inline, all with one decimal.
    out = []
    for shape in shapes:
        if shape[0] == "rect":
            _, x, y, w, h, style, tip = shape
            rect = f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" {style["svg"]}'
            out.append(f"{rect}><title>{_escape(tip)}</title></rect>\n" if tip else rect + "/>\n")
        elif shape[0] == "polygon":
            _, points, style, tip = shape
            coords = " ".join([f"{x:.1f},{y:.1f}" for x, y in points])
            out.append(
                f'<polygon points="{coords}" {style["svg"]}><title>{_escape(tip)}</title></polygon>\n'
            )
        else:
            _, points, style, arrow = shape
            marker = "h" if style is HIGHLIGHT_EDGE else "a"
            end = f' marker-end="url(#\0-{marker})"' if arrow else ""
            coords = " ".join([f"{x:.1f},{y:.1f}" for x, y in points])
            out.append(f'<polyline points="{coords}" {style["svg"]}{end}/>\n')
    out.append('<g pointer-events="none">\n')  # text never hides a box's tooltip
    for x, y, text, kind in texts:
        out.append(f'<text x="{x:.1f}" y="{y:.1f}"{_TEXT_ATTRS[kind]}>{_escape(text)}</text>\n')
    out.append("</g>\n")
    return "".join(out)


def _text_attrs(size, colour, bold, anchor):
    attrs = f' fill="{colour}"' + (f' font-size="{size}"' if size != FONT_SIZE else "")
    attrs += ' font-weight="bold"' if bold else ""
    return attrs + (f' text-anchor="{anchor}"' if anchor != "start" else "")


TEXT.update(
    {f"mark_{kind}": (FONT_SIZE, colour, True, "end") for kind, (colour, *_) in MARK_KINDS.items()}
)
_TEXT_ATTRS = {kind: _text_attrs(*style) for kind, style in TEXT.items()}


def _num(v):
    """Coordinates with one decimal, always the same text for the same number (and no "-0.0")."""
    return f"{v + 0.0:.1f}"


# XML forbids most control characters even when escaped: drop them (also keeps "\0" ours).
_CONTROL = dict.fromkeys(c for c in range(32) if c not in (9, 10, 13))


def _escape(text):
    """Text safe inside XML: a name like "<x&y>" is drawn as written."""
    text = str(text)
    if not text.isprintable():  # rare (a newline in a tooltip, a control character in a name)
        text = text.translate(_CONTROL)
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


# ---- matplotlib (for slides) ----------------------------------------------------------------------


def to_matplotlib(*roots_or_graph, names=None, collapsed=None, step=None, threshold=200, scale=1.0):
    """The same picture as a matplotlib Figure: `fig.savefig("graph.pdf")`. Needs matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "to_matplotlib() and to_png() draw with matplotlib, which is not installed. "
            "Fix: pip install matplotlib (or pip install 'autograd_lab[lab]'); "
            "to_svg() needs nothing extra."
        ) from error
    graph = as_graph(roots_or_graph, names)
    drawn = scene(graph, layout(graph, collapsed, threshold), step)
    w, h = drawn["width"], drawn["height"]
    scale = min(scale, 200 * 72 / max(w, h))  # one SVG pixel is one point, up to 200 inches
    fig = Figure(figsize=(w * scale / 72, h * scale / 72))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, w)
    ax.set_ylim(h, 0)  # y grows downwards, as in SVG
    ax.set_axis_off()
    for (shapes, texts), dy in ((drawn["header"], 0.0), (drawn["graph"], drawn["top"])):
        _draw_mpl(ax, shapes, texts, dy, scale)
    return fig


def _draw_mpl(ax, shapes, texts, dy, scale):
    """Draw shapes and texts on matplotlib axes, `dy` lower (one SVG pixel is `scale` points)."""
    from matplotlib.patches import FancyBboxPatch, Polygon

    for shape in shapes:
        if shape[0] == "rect":
            _, x, y, bw, bh, style, _ = shape
            box = f"round,pad=0,rounding_size={style['rx']}" if style["rx"] else "square,pad=0"
            patch = FancyBboxPatch((x, y + dy), bw, bh, boxstyle=box, **_mpl_style(style, scale))
            ax.add_patch(patch)
        elif shape[0] == "polygon":
            points = [(x, y + dy) for x, y in shape[1]]
            ax.add_patch(Polygon(points, closed=True, **_mpl_style(shape[2], scale)))
        else:
            _draw_mpl_line(ax, shape, dy, scale)
    for x, y, text, kind in texts:
        size, colour, bold, anchor = TEXT[kind]
        ax.text(
            x,
            y + dy,
            text,
            fontsize=size * scale,
            family="monospace",
            color=colour,
            weight="bold" if bold else "normal",
            ha={"start": "left"}.get(anchor, "center"),
            va="baseline",
        )


def _mpl_style(style, scale):
    return {
        "facecolor": style["fill"],
        "edgecolor": style["stroke"],
        "linewidth": style["width"] * scale,
        "linestyle": "--" if style["dash"] else "-",
        "alpha": style["opacity"],
    }


def _draw_mpl_line(ax, shape, dy, scale):
    _, points, style, arrow = shape
    points = [(x, y + dy) for x, y in points]
    xs, ys = zip(*points)
    ax.plot(xs, ys, color=style["stroke"], linewidth=style["width"] * scale)
    if arrow:
        ax.annotate(
            "",
            xy=points[-1],
            xytext=points[-2],
            arrowprops={
                "arrowstyle": "-|>",
                "color": style["stroke"],
                "linewidth": style["width"] * scale,
                "shrinkA": 0,
                "shrinkB": 0,
                "mutation_scale": 10 * scale,
            },
        )


def to_png(graph_or_roots, path, dpi=150, **kw):
    """Save the picture as a PNG (or any format matplotlib knows from the suffix). Needs matplotlib.

    to_png(loss, "graph.png", names={"w": w})
    """
    args = graph_or_roots if isinstance(graph_or_roots, (list, tuple)) else (graph_or_roots,)
    fig = to_matplotlib(*args, **kw)
    fig.savefig(path, dpi=dpi, facecolor="white")
    return path
