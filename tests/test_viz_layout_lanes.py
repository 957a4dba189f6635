"""Any graph shape laid out: a tensor reused far apart (a shared leaf, an RNN's weights), fan-in
from all over the picture, and transformer blocks with residuals.

The long edges of a reused tensor run along one lane above the boxes instead of a waypoint per
column each (issue 17, item 5). These tests check the pictures stay correct for those shapes and
that the routing grows no faster than the graph. How fast it is lives in benchmarks/viz_layout.py
(timed tests on a shared machine are noise).
"""

import pytest

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab.autograd import scope
from autograd_lab.viz.graph import record
from autograd_lab.viz.layout import LANE_GAP, layout
from autograd_lab.viz.svg import render_svg

# ---- the shapes (small versions of the benchmark's) ------------------------------------------------


def shared_leaf(steps):
    """`y = (y * 1.01).tanh() + x`, `steps` times: one leaf feeds every step."""
    x = ag.tensor(0.5, requires_grad=True)
    with record() as t:
        y = x
        for _ in range(steps):
            y = (y * 1.01).tanh() + x
    return t.graph(y, names={"x": x, "y": y})


def rnn(steps):
    """`h = (w * h + u * x[t] + b).tanh()`: w, u and b are used by every step."""
    ag.manual_seed(0)
    w, u, b = (ag.randn(()).requires_grad_() for _ in range(3))
    xs = ag.randn(steps)
    with record() as t:
        h = ag.zeros(())
        for step in range(steps):
            h = (w * h + u * xs[step] + b).tanh()
    return t.graph(h, names={"w": w, "u": u, "b": b, "h": h})


def rnn_stacked(steps):
    """An RNN whose outputs are stacked at the end: every step's output feeds one last op."""
    w = ag.randn(()).requires_grad_()
    with record() as t:
        h, outputs = ag.ones(()).requires_grad_(), []
        for _ in range(steps):
            h = (w * h).tanh()
            outputs.append(h)
        total = ag.stack(outputs).sum()
    return t.graph(total, names={"w": w, "total": total})


def attention_over_states(steps):
    """Each step's state times the last one: long edges with a different source each."""
    with record() as t:
        h = ag.tensor(0.3, requires_grad=True)
        states = []
        for _ in range(steps):
            h = (h * 1.1).sin()
            states.append(h)
        scores = [s * h for s in states]
        total = scores[0]
        for s in scores[1:]:
            total = total + s
    return t.graph(total)


def transformer(blocks, width=4, tokens=3):
    """Pre-norm blocks: attention, then an MLP, each with its residual, in scopes."""
    ag.manual_seed(0)

    def weight(*shape):
        return ag.randn(*shape).requires_grad_()

    x = ag.randn(tokens, width)
    with record() as t:
        for i in range(blocks):
            with scope(f"block{i}"):
                with scope("attention"):
                    h = F.layer_norm(x, (width,), weight(width), weight(width))
                    q, k, v = (h @ weight(width, width) for _ in range(3))
                    scores = F.softmax((q @ k.transpose(0, 1)) * width**-0.5, dim=-1)
                    x = x + (scores @ v) @ weight(width, width)
                with scope("mlp"):
                    h = F.layer_norm(x, (width,), weight(width), weight(width))
                    x = x + F.relu(h @ weight(width, 2 * width)) @ weight(2 * width, width)
        loss = x.sum()
    return t.graph(loss)


SHAPES = {
    "shared_leaf": lambda: shared_leaf(12),
    "rnn": lambda: rnn(8),
    "rnn_stacked": lambda: rnn_stacked(8),
    "attention_over_states": lambda: attention_over_states(10),
    "transformer": lambda: transformer(2),
}


# ---- geometry helpers ------------------------------------------------------------------------------


def overlap(p, q, gap=0.0):
    return (
        p["x"] < q["x"] + q["w"] + gap
        and q["x"] < p["x"] + p["w"] + gap
        and p["y"] < q["y"] + q["h"] + gap
        and q["y"] < p["y"] + p["h"] + gap
    )


def on_side(point, box):
    """Is the point on the left or right side of the box?"""
    x, y = point
    on_x = abs(x - box["x"]) <= 0.11 or abs(x - box["x"] - box["w"]) <= 0.11
    return on_x and box["y"] - 0.11 <= y <= box["y"] + box["h"] + 0.11


def crosses(segment, box):
    """Does a straight segment pass through the inside of a box? (exact, by clipping)"""
    (x0, y0), (x1, y1) = segment
    t0, t1 = 0.0, 1.0
    for p, q in (
        (-(x1 - x0), x0 - box["x"]),
        (x1 - x0, box["x"] + box["w"] - x0),
        (-(y1 - y0), y0 - box["y"]),
        (y1 - y0, box["y"] + box["h"] - y0),
    ):
        if p == 0:
            if q <= 0:  # parallel to this side and outside it (or on it)
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
    return t1 - t0 > 1e-9


def segments(edge):
    return list(zip(edge["points"], edge["points"][1:]))


def lane_segments(placed):
    """{(source, target): the level part of each edge drawn along a lane}: its longest level
    segment, on an edge whose route goes up from its source first."""
    lanes = {}
    for edge in placed["edges"]:
        points = edge["points"]
        if len(points) == 6 and points[1][1] == points[0][1] and points[2][1] < points[1][1]:
            lanes[(edge["source"], edge["target"])] = (points[2], points[3])
    return lanes


def column_of(placed):
    """Each box's column number, from the distinct left-to-right positions of box centres."""
    centres = sorted({round(b["x"] + b["w"] / 2, 1) for b in placed["nodes"].values()})
    index = {x: k for k, x in enumerate(centres)}
    return {i: index[round(b["x"] + b["w"] / 2, 1)] for i, b in placed["nodes"].items()}


def points_in_all(placed):
    return sum(len(edge["points"]) for edge in placed["edges"])


# ---- the pictures are right ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_no_two_boxes_overlap(name):
    boxes = list(layout(SHAPES[name](), collapsed=[])["nodes"].values())
    for i, p in enumerate(boxes):
        for q in boxes[i + 1 :]:
            assert not overlap(p, q, gap=4.0), (p, q)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_edge_leaves_its_source_and_reaches_its_target(name):
    graph = SHAPES[name]()
    placed = layout(graph, collapsed=[])
    wanted = {(e["source"], e["target"]) for e in graph.edges}
    assert {(e["source"], e["target"]) for e in placed["edges"]} == wanted  # none lost or made up
    for edge in placed["edges"]:
        assert on_side(edge["points"][0], placed["nodes"][edge["source"]]), edge
        assert on_side(edge["points"][-1], placed["nodes"][edge["target"]]), edge


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_layers_follow_the_edges(name):
    placed = layout(SHAPES[name](), collapsed=[])
    for edge in placed["edges"]:
        source, target = placed["nodes"][edge["source"]], placed["nodes"][edge["target"]]
        assert source["x"] + source["w"] < target["x"], edge
        xs = [x for x, _ in edge["points"]]
        assert xs == sorted(xs), edge  # no edge doubles back


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_edges_go_around_boxes_not_through_them(name):
    placed = layout(SHAPES[name](), collapsed=[])
    for edge in placed["edges"]:
        for box_id, box in placed["nodes"].items():
            if box_id not in (edge["source"], edge["target"]):
                for segment in segments(edge):
                    assert not crosses(segment, box), (edge, box_id)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_svg_draws_every_edge(name):
    graph = SHAPES[name]()
    placed = layout(graph, collapsed=[])
    svg = render_svg(graph, placed)
    assert svg.count("<polyline") + svg.count("<path") >= len(placed["edges"])


# ---- lanes -----------------------------------------------------------------------------------------


def test_a_shared_leaf_sends_its_long_edges_along_one_lane_above_the_boxes():
    placed = layout(shared_leaf(12), collapsed=[])
    lanes = lane_segments(placed)
    x_id = next(e["source"] for e in placed["edges"] if e["target"] == "n1")  # x * 1.01's input
    from_x = [key for key in lanes if key[0] == x_id]
    assert len(from_x) == 12  # every addition (x's multiply by 1.01 sits next to x)
    heights = {lanes[key][0][1] for key in from_x}
    assert len(heights) == 1  # one straight lane
    lane_y = heights.pop()
    assert all(lane_y < box["y"] for box in placed["nodes"].values())  # above every box
    # one port on x for the whole lane: all its edges leave x at the same point
    starts = {
        tuple(e["points"][0]) for e in placed["edges"] if (e["source"], e["target"]) in from_x
    }
    assert len(starts) == 1


def test_each_reused_weight_has_its_own_lane_and_lanes_never_run_together():
    placed = layout(rnn(8), collapsed=[])
    lanes = lane_segments(placed)
    sources = {source for source, _ in lanes}
    assert len(sources) == 3, sorted(sources)  # w, u and b
    level = {}
    for (source, _), ((_, y), _) in lanes.items():
        level.setdefault(source, set()).add(y)
    assert all(len(ys) == 1 for ys in level.values())  # one straight lane each
    ys = sorted(y for ys in level.values() for y in ys)
    assert all(b - a >= LANE_GAP for a, b in zip(ys, ys[1:])), ys
    # vertical parts: two lanes never share one (they climb and drop at different x)
    verticals = {}
    for (source, _), (start, end) in lanes.items():
        for x in (start[0], end[0]):
            verticals.setdefault(x, set()).add(source)
    assert all(len(s) == 1 for s in verticals.values())


def test_what_is_made_from_inputs_alone_sits_next_to_its_use():
    # u * x[t] (x needs no gradient) is drawn one column before step t's addition, not in one
    # column of all the steps' products at the far left
    graph = rnn(6)
    placed = layout(graph, collapsed=[])
    column = column_of(placed)
    ops = {n["id"]: n for n in graph.nodes}
    for edge in graph.edges:
        source, target = ops[edge["source"]], ops[edge["target"]]
        if source.get("op") == "MulBackward0" and target.get("op") == "AddBackward0":
            assert column[target["id"]] - column[source["id"]] == 1, edge


def test_fan_in_from_every_step_comes_along_one_lane():
    graph = rnn_stacked(10)
    placed = layout(graph, collapsed=[])
    lanes = lane_segments(placed)
    stack = next(n["id"] for n in graph.nodes if n.get("op") == "StackBackward0")
    into_stack = [key for key in lanes if key[1] == stack]
    assert len(into_stack) == 9  # every step's output but the last, which sits next to it
    assert len({tuple(lanes[key][1]) for key in into_stack}) == 1  # one lane in: one end


def test_a_tensor_used_twice_far_apart_keeps_its_bending_edges():
    # the lesson-sized case: x used by the first and last of a few steps is no lane
    x = ag.tensor(1.0, requires_grad=True)
    with record() as t:
        y = (x * 2).exp().sin().cos() + x
    placed = layout(t.graph(y), collapsed=[])
    assert lane_segments(placed) == {}


def test_lanes_are_the_same_every_time():
    assert layout(rnn(6), collapsed=[]) == layout(rnn(6), collapsed=[])


# ---- the routing grows no faster than the graph ----------------------------------------------------


@pytest.mark.parametrize(
    "shape, sizes",
    [
        (shared_leaf, (20, 40, 80)),
        (rnn, (15, 30, 60)),
        (rnn_stacked, (15, 30, 60)),
        (attention_over_states, (15, 30, 60)),
        (transformer, (2, 4, 8)),
    ],
    ids=["shared_leaf", "rnn", "rnn_stacked", "attention_over_states", "transformer"],
)
def test_routing_points_grow_linearly(shape, sizes):
    # a waypoint per column per long edge grew as the square of the steps: 4x the steps gave
    # 16x the points; now the points per node stay about the same as the graph doubles
    per_node = []
    for size in sizes:
        graph = shape(size)
        per_node.append(points_in_all(layout(graph, collapsed=[])) / len(graph.nodes))
    assert max(per_node) <= 1.25 * min(per_node), per_node
