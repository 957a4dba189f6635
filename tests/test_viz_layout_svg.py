"""Layout and static SVG of graph snapshots: determinism, geometry, collapsing, and what is drawn.

Graphs come from the real recorder (`viz.record`) where the engine matters, and from small
hand-made graphs (the CONTRACT.md format) where the shape matters: chains, fans, random DAGs.
"""

import random
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import traced_seed_example

import autograd_lab as ag
from autograd_lab.autograd import scope
from autograd_lab.viz.graph import record, snapshot
from autograd_lab.viz.layout import CHAR_W, default_collapsed, expand, layout, scope_counts
from autograd_lab.viz.svg import render_svg, state_at, step_count, to_matplotlib, to_png, to_svg

SVG = "{http://www.w3.org/2000/svg}"


# ---- graphs to draw ---------------------------------------------------------------------------------


def ab_example(backward=True):
    """The classic a, b graph (see conftest) and its tensors a, b, c, d, e."""
    t, v = traced_seed_example(backward)
    return t.graph(v["e"], names=v), tuple(v.values())


def mlp_example():
    """A two-layer MLP made in scopes "mlp/layer1" and "mlp/layer2", then a loss outside them."""
    ag.manual_seed(0)
    x = ag.randn(4, 3)
    w1, b1 = ag.randn(3, 5, requires_grad=True), ag.zeros(5, requires_grad=True)
    w2, b2 = ag.randn(5, 1, requires_grad=True), ag.zeros(1, requires_grad=True)
    with record() as t:
        with scope("mlp"):
            with scope("layer1"):
                h = (x @ w1 + b1).tanh()
            with scope("layer2"):
                y = h @ w2 + b2
        loss = (y * y).mean()
        loss.backward()
    return t.graph(loss, names={"w1": w1, "b1": b1, "w2": w2, "b2": b2, "h": h, "loss": loss})


def node(i, kind="op", scope=None, label=None):
    """One node dict in the CONTRACT.md format."""
    return {
        "id": f"n{i}",
        "kind": kind,
        "label": label or ("x" if kind == "tensor" else "Mul") + str(i),
        "op": "MulBackward0" if kind == "op" else None,
        "name": None,
        "role": "input" if kind == "tensor" else "intermediate",
        "shape": [],
        "dtype": "float32",
        "value": None,
        "grad": None,
        "saved": [],
        "is_saved": False,
        "scope": scope,
        "order": i,
        "derivative": None,
    }


def graph_of(nodes, pairs):
    edges = [{"source": f"n{s}", "target": f"n{t}", "input": k} for k, (s, t) in enumerate(pairs)]
    return {"nodes": nodes, "edges": edges, "events": []}


def chain(n):
    return graph_of(
        [node(0, "tensor")] + [node(i) for i in range(1, n)], [(i, i + 1) for i in range(n - 1)]
    )


def fan(n):
    """One input used by n ops, all summed up by a last op: wide columns, edges spreading out."""
    nodes = [node(0, "tensor")] + [node(i) for i in range(1, n + 2)]
    return graph_of(
        nodes, [(0, i) for i in range(1, n + 1)] + [(i, n + 1) for i in range(1, n + 1)]
    )


def random_dag(n, seed=0, scopes=True):
    """Random ops over earlier nodes (mostly recent ones); ops in scopes "blockK" or "blockK/subJ"."""
    rng = random.Random(seed)
    nodes, pairs = [], []
    for i in range(n):
        leaf = i < max(2, n // 10) or rng.random() < 0.15
        where = None
        if scopes and not leaf:
            where = f"block{i * 5 // n}" + (f"/sub{rng.randrange(2)}" if rng.random() < 0.5 else "")
        nodes.append(node(i, "tensor" if leaf else "op", where))
        if not leaf:
            for _ in range(rng.randint(1, 3)):
                pairs.append((rng.randrange(max(0, i - 30), i), i))
    return graph_of(nodes, pairs)


SHAPES = {
    "chain": chain(12),
    "fan": fan(9),
    "random": random_dag(60, seed=1),
    "random_unscoped": random_dag(80, seed=2, scopes=False),
}


# ---- geometry helpers ---------------------------------------------------------------------------------


def overlap(p, q, gap=0.0):
    """Do two boxes (x, y, w, h) overlap (closer than `gap`)?"""
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


def inside(point, polygon):
    """Ray casting: is the point inside the polygon?"""
    x, y = point
    result = False
    for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            result = not result
    return result


def centre(box):
    return box["x"] + box["w"] / 2, box["y"] + box["h"] / 2


def drawn_scope(graph, box_id, placed):
    """The scope a visible box belongs to, as layout() decides it (leaves join their consumers')."""
    if box_id.startswith("scope:"):
        return box_id[len("scope:") :]
    nodes = graph["nodes"] if isinstance(graph, dict) else graph.nodes
    mine = next(n for n in nodes if n["id"] == box_id)
    if mine["scope"] is not None or mine["kind"] == "op":
        return mine["scope"]
    # a leaf made outside any scope joins the scope all its consumers share
    scopes = [
        drawn_scope(graph, e["target"], placed) for e in placed["edges"] if e["source"] == box_id
    ]
    if not scopes or None in scopes:
        return None
    shared = scopes[0].split("/")
    for other in scopes[1:]:
        parts = other.split("/")
        while parts[: len(shared)] != shared:
            shared = shared[:-1]
    return "/".join(shared) or None


# ---- determinism --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_layout_twice_gives_the_same_numbers(name):
    assert layout(SHAPES[name]) == layout(SHAPES[name])


def test_svg_bytes_are_equal_for_the_same_graph_built_twice():
    first, _ = ab_example()
    second, _ = ab_example()
    assert first.nodes == second.nodes and first.events == second.events
    assert to_svg(first) == to_svg(second)
    assert to_svg(first, step=9) == to_svg(second, step=9)
    assert to_svg(mlp_example(), collapsed=[]) == to_svg(mlp_example(), collapsed=[])


def test_svg_of_tensors_uses_the_snapshot_and_is_stable():
    _, (a, b, _, _, e) = ab_example()
    names = {"a": a, "b": b, "e": e}
    assert to_svg(e, names=names) == to_svg(snapshot(e, names=names)) == to_svg(e, names=names)


def test_layout_of_a_graph_equals_layout_of_its_dict():
    graph = mlp_example()
    assert layout(graph) == layout(graph.to_dict())


# ---- geometry -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_no_two_boxes_overlap(name):
    boxes = list(layout(SHAPES[name])["nodes"].values())
    for i, p in enumerate(boxes):
        for q in boxes[i + 1 :]:
            assert not overlap(p, q, gap=4.0), (p, q)


def test_no_two_boxes_overlap_in_a_big_graph():
    placed = layout(random_dag(2000, seed=3), collapsed=[])
    boxes = sorted(placed["nodes"].values(), key=lambda b: (b["x"], b["y"]))
    assert len(boxes) == 2000
    for p, q in zip(boxes, boxes[1:]):  # neighbours in a column, and across columns
        assert not overlap(p, q, gap=4.0), (p, q)
    rng = random.Random(0)
    for _ in range(20000):  # and a sample of all pairs
        p, q = rng.sample(boxes, 2)
        assert not overlap(p, q, gap=4.0), (p, q)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_edge_leaves_its_source_and_reaches_its_target(name):
    placed = layout(SHAPES[name])
    for edge in placed["edges"]:
        assert on_side(edge["points"][0], placed["nodes"][edge["source"]]), edge
        assert on_side(edge["points"][-1], placed["nodes"][edge["target"]]), edge


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_data_flows_left_to_right(name):
    placed = layout(SHAPES[name])
    for edge in placed["edges"]:
        source, target = placed["nodes"][edge["source"]], placed["nodes"][edge["target"]]
        assert source["x"] + source["w"] < target["x"], edge
        xs = [x for x, _ in edge["points"]]
        assert xs == sorted(xs), edge  # no edge doubles back


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_edges_go_around_boxes_not_through_them(name):
    placed = layout(SHAPES[name])
    for edge in placed["edges"]:
        others = [
            b for i, b in placed["nodes"].items() if i not in (edge["source"], edge["target"])
        ]
        for (x0, y0), (x1, y1) in zip(edge["points"], edge["points"][1:]):
            for t in range(21):  # points along the segment
                x, y = x0 + (x1 - x0) * t / 20, y0 + (y1 - y0) * t / 20
                for b in others:
                    assert not (b["x"] < x < b["x"] + b["w"] and b["y"] < y < b["y"] + b["h"]), edge


def test_boxes_are_wide_enough_for_their_text():
    graph, _ = ab_example()
    placed = layout(graph)
    for n in graph.nodes:
        assert placed["nodes"][n["id"]]["w"] >= CHAR_W * len(n["label"])
    assert placed["nodes"]["n1"]["w"] >= CHAR_W * len("grad 15.")  # b's gradient line


def test_an_input_sits_one_column_before_its_first_use():
    # n0 feeds the end of a chain: it is drawn next to that op, not in column 0
    graph = graph_of([node(0, "tensor"), node(1, "tensor")] + [node(i) for i in range(2, 7)],
                     [(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (0, 6)])  # fmt: skip
    placed = layout(graph)["nodes"]
    assert placed["n0"]["x"] > placed["n4"]["x"]


def test_few_crossings_for_a_graph_that_needs_none():
    # two independent chains drawn interleaved in creation order must come out uncrossed
    nodes = [node(0, "tensor"), node(1, "tensor")] + [node(i) for i in range(2, 12)]
    pairs = [(0, 2), (1, 3)] + [(i, i + 2) for i in range(2, 10)]
    placed = layout(graph_of(nodes, pairs))
    ys = {i: centre(b)[1] for i, b in placed["nodes"].items()}
    above = [ys[f"n{i}"] < ys[f"n{i + 1}"] for i in range(0, 12, 2)]
    assert len(set(above)) == 1  # one chain stays above the other all the way


def test_empty_and_single_node_graphs():
    assert layout(graph_of([], []))["nodes"] == {}
    placed = layout(graph_of([node(0, "tensor")], []))
    assert list(placed["nodes"]) == ["n0"] and placed["edges"] == []


# ---- scopes: groups, collapsing, expanding ------------------------------------------------------------


def test_expanded_groups_outline_exactly_their_members():
    for graph in (mlp_example(), random_dag(150, seed=4)):
        placed = layout(graph, collapsed=[])
        assert placed["groups"] and not any(g["collapsed"] for g in placed["groups"])
        for group in placed["groups"]:
            for box_id, box in placed["nodes"].items():
                where = drawn_scope(graph, box_id, placed) or ""
                member = where == group["scope"] or where.startswith(group["scope"] + "/")
                drawn_inside = any(inside(centre(box), p) for p in group["outline"])
                assert drawn_inside == member, (group["scope"], box_id, where)


def test_the_weights_of_a_layer_are_drawn_in_it():
    graph = mlp_example()
    placed = layout(graph, collapsed=["mlp/layer1"])
    assert placed["hidden"]["n0"] == "scope:mlp/layer1"  # w1, made outside any scope
    assert scope_counts(graph) == {"mlp": 9, "mlp/layer1": 5, "mlp/layer2": 4}


def test_big_graphs_collapse_their_top_level_scopes():
    graph = random_dag(300, seed=5)
    assert default_collapsed(graph, threshold=200) == {f"block{k}" for k in range(5)}
    placed = layout(graph)  # 300 nodes > threshold 200
    groups = {g["id"]: g for g in placed["groups"]}
    assert sorted(groups) == [f"scope:block{k}" for k in range(5)]
    assert all(g["collapsed"] for g in groups.values())
    assert len(placed["nodes"]) < 60  # the ops are inside the 5 boxes; only leaves remain
    for box_id, group in groups.items():
        assert placed["nodes"][box_id] == {k: group[k] for k in "xywh"}
        assert group["count"] == sum(1 for b in placed["hidden"].values() if b == box_id)
    visible = set(placed["nodes"])
    assert all(e["source"] in visible and e["target"] in visible for e in placed["edges"])
    assert set(placed["hidden"]) | visible >= {n["id"] for n in graph["nodes"]}


def test_small_graphs_stay_expanded_and_collapsed_can_be_chosen():
    graph = random_dag(300, seed=5)
    assert len(layout(graph, threshold=1000)["nodes"]) == 300
    assert len(layout(graph, collapsed=[])["nodes"]) == 300
    only = layout(graph, collapsed={"block2"})
    assert "scope:block2" in only["nodes"] and "scope:block1" not in only["nodes"]


def test_expand_opens_one_scope_one_level():
    graph = random_dag(300, seed=5)
    folded = default_collapsed(graph, threshold=200)
    opened = expand(graph, folded, "block1")
    assert opened == (folded - {"block1"}) | {"block1/sub0", "block1/sub1"}
    placed = layout(graph, collapsed=opened)
    assert "scope:block1" not in placed["nodes"]
    assert {"scope:block1/sub0", "scope:block1/sub1"} <= set(placed["nodes"])
    outer = next(g for g in placed["groups"] if g["id"] == "scope:block1")
    assert not outer["collapsed"]  # drawn as a group around what it holds


def test_collapsing_that_makes_a_cycle_still_lays_out():
    # x -> A1 -> y -> A2 with A1, A2 in scope "A": collapsed, A -> y -> A is a cycle
    nodes = [node(0, "tensor"), node(1, scope="A"), node(2), node(3, scope="A")]
    placed = layout(graph_of(nodes, [(0, 1), (1, 2), (2, 3)]), collapsed={"A"})
    pairs = {(e["source"], e["target"]) for e in placed["edges"]}
    assert pairs == {("scope:A", "n2"), ("n2", "scope:A")}
    assert placed["hidden"] == {"n0": "scope:A", "n1": "scope:A", "n3": "scope:A"}
    for edge in placed["edges"]:
        assert on_side(edge["points"][0], placed["nodes"][edge["source"]])
        assert on_side(edge["points"][-1], placed["nodes"][edge["target"]])


def test_ten_thousand_nodes_collapse_to_a_small_picture():
    # how fast is for benchmarks/viz_layout.py (timed tests on a shared machine are noise)
    graph = random_dag(10000, seed=6)
    svg = to_svg(graph)
    assert len(layout(graph)["nodes"]) < 1500 and len(svg) < 1_000_000


# ---- the SVG ------------------------------------------------------------------------------------------


def texts(svg):
    return [t.text for t in ET.fromstring(svg).iter(SVG + "text")]


def test_svg_is_well_formed_and_shows_the_ab_example():
    graph, _ = ab_example()
    svg = to_svg(graph)
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    shown = texts(svg)
    for expected in ["a", "b", "c = Add", "d = Add", "e = Mul", "2.", "6.", "8.", "7.", "56."]:
        assert expected in shown
    assert "grad 7." in shown and "grad 15." in shown  # a.grad and b.grad after backward
    assert len(list(root.iter(SVG + "polyline"))) == 6  # one line per edge, arrowheads on them


def test_svg_of_tensors_without_a_trace():
    _, (a, b, _, _, e) = ab_example()
    shown = texts(to_svg(e, names={"a": a, "b": b}))
    assert "grad 7." in shown and "grad 15." in shown and "Mul" in shown


def test_names_are_escaped_for_xml():
    a = ag.tensor(1.0, requires_grad=True)
    svg = to_svg(a * 2, names={"<x&y>": a})
    assert "<x&y>" in texts(svg)
    assert "&lt;x&amp;y&gt;" in svg
    weird = graph_of([node(0, "tensor", scope='s"&<', label="bad\x01name")], [])
    assert "badname" in texts(to_svg(weird))  # control characters are not allowed in XML


def test_steps_go_through_forward_then_backward():
    graph, _ = ab_example()
    total = step_count(graph)
    assert total == 3 + len(graph.events)  # three ops, then the engine's events
    start = texts(to_svg(graph, step=0))
    assert "2." in start and "6." in start and not any(t.startswith("grad ") for t in start)
    assert "8." not in start and "56." not in start  # c and e (op and output) not computed yet
    forward = texts(to_svg(graph, step=3))
    assert "56." in forward and not any(t.startswith("grad ") for t in forward)
    end = texts(to_svg(graph, step=total))
    assert "grad 7." in end and "grad 15." in end
    for k in range(total + 1):
        ET.fromstring(to_svg(graph, step=k))
    with pytest.raises(ValueError, match="use 0 to 15"):
        to_svg(graph, step=total + 1)


def test_a_step_says_what_happened():
    graph, _ = ab_example()
    first_send = next(e["step"] for e in graph.events if e["kind"] == "send")
    caption = texts(to_svg(graph, step=3 + first_send + 1))
    assert "step 5 of 15 (backward): e = Mul (MulBackward0) sends grad 7. to c = Add" in caption


def test_captions_tell_two_ops_of_one_class_apart():
    """c = a + b and d = b + 1 are both AddBackward0: the caption names the box on screen."""
    graph, _ = ab_example()
    runs = [3 + e["step"] + 1 for e in graph.events if e["kind"] == "run"]
    captions = [
        next(x for x in texts(to_svg(graph, step=k)) if x.startswith("step ")) for k in runs
    ]
    ran = [c.split(": ", 1)[1] for c in captions if "AddBackward0" in c]
    assert sorted(ran) == [
        "c = Add (AddBackward0) runs with grad 7.",
        "d = Add (AddBackward0) runs with grad 8.",
    ], captions


def test_a_reused_input_has_two_edges_and_both_gradients_travel():
    """x * x: two lines go into Mul, "×2" sits clear of its box, and each of the two sends
    lights up its own line, so the picture shows both gradients arriving to be added."""
    with record() as t:
        x = ag.tensor(3.0, requires_grad=True)
        y = x * x
        y.backward()
    graph = t.graph(y, names={"x": x, "y": y})
    placed = layout(graph)
    mul = placed["nodes"]["n1"]
    root = ET.fromstring(to_svg(graph))
    lines = [p for p in root.iter(SVG + "polyline")]
    into_mul = [p for p in lines if _ends_at(p, mul)]
    assert len(into_mul) == 2
    ys = {p.get("points").split()[-1] for p in into_mul}
    assert len(ys) == 2  # two distinct lines, not one drawn twice
    times = [t for t in root.iter(SVG + "text") if t.text == "×2"]
    assert len(times) == 1 and float(times[0].get("x")) < mul["x"]  # not under the Mul box
    sends = [1 + e["step"] + 1 for e in graph.events if e["kind"] == "send"]
    assert len(sends) == 2
    lit = []
    for k in sends:
        svg = ET.fromstring(to_svg(graph, step=k))
        red = [p for p in svg.iter(SVG + "polyline") if p.get("stroke") == "#dc2626"]
        assert len(red) == 1
        lit.append(red[0].get("points"))
    assert lit[0] != lit[1]
    assert "where" not in lit[1]
    final = texts(to_svg(graph, step=len(sends) + 1 + 3))
    assert "grad 6." in final  # x.grad = 3 + 3


def _ends_at(polyline, box):
    """Does this line end at the left side of this box (the layout's coordinates + the header)?"""
    x, y = map(float, polyline.get("points").split()[-1].split(","))
    return abs(x - box["x"]) < 1.0


def test_legend_lists_what_is_drawn_and_explains_frames():
    graph, _ = ab_example()
    legend = texts(to_svg(graph))
    assert {"input (leaf)", "output (root)", "op", "saved for backward"} <= set(legend)
    assert "parameter" not in legend  # no parameter in this graph
    assert not any("collapsed" in t or "red frame" in t for t in legend)
    stepped = texts(to_svg(graph, step=4))
    assert "this step's node (red frame)" in stepped
    big = texts(to_svg(random_dag(300, seed=5)))
    assert "collapsed scope (hides its nodes)" in big


def test_the_root_shows_the_seed_gradient():
    """Backward starts at the root with gradient 1: its box says so from the first backward step."""
    graph, _ = ab_example()
    root_grad = state_at(graph, 3)["grads"].get("n5")
    assert root_grad is None  # forward only: no gradient yet
    assert state_at(graph, 4)["grads"]["n5"]["values"] == 1.0
    assert texts(to_svg(graph)).count("grad 1.") == 2  # e = Mul and e itself


def test_the_tooltip_gives_the_local_derivative_at_this_step():
    with record() as t:
        x = ag.tensor(0.5, requires_grad=True)
        y = x.tanh()
        y.backward()
    graph = t.graph(y, names={"x": x, "y": y})
    tips = lambda svg: [e.text for e in ET.fromstring(svg).iter(SVG + "title")]  # noqa: E731
    slope = f"{1 - np.tanh(0.5) ** 2:.4g}"
    assert any(f"1 - tanh(x)² = {slope}" in tip for tip in tips(to_svg(graph)))
    before = [tip for tip in tips(to_svg(graph, step=0)) if "local derivative" in tip]
    assert before and all(tip.endswith("1 - tanh(x)²") for tip in before)  # not computed yet


def test_accumulated_gradients_add_up_step_by_step():
    with record() as t:
        b = ag.tensor(6.0, requires_grad=True)
        e = b * 3
        e.backward(retain_graph=True)
        e.backward()
    graph = t.graph(e, names={"b": b})
    accumulated = [e["step"] for e in graph.events if e["kind"] == "accumulate"]
    assert len(accumulated) == 2
    assert state_at(graph, 1 + accumulated[0] + 1)["grads"]["n0"]["values"] == 3.0
    assert state_at(graph, 1 + accumulated[1] + 1)["grads"]["n0"]["values"] == 6.0
    assert "grad 6." in texts(to_svg(graph))


def test_collapsed_groups_are_dashed_boxes_with_a_count():
    svg = to_svg(random_dag(300, seed=5))
    assert "block0" in texts(svg)
    counts = [t for t in texts(svg) if t.endswith(" nodes")]
    assert len(counts) == 5
    assert svg.count('stroke-dasharray="6 3"') == 5 + 1  # five groups and the legend's swatch


def test_width_scales_the_picture_only():
    graph, _ = ab_example()
    plain, scaled = ET.fromstring(to_svg(graph)), ET.fromstring(to_svg(graph, width=300))
    assert scaled.get("width") == "300.0" and scaled.get("viewBox") == plain.get("viewBox")


def test_marker_ids_are_stable_and_differ_between_pictures():
    graph, _ = ab_example()
    ids = ET.fromstring(to_svg(graph)).find(SVG + "defs")[0].get("id")
    other = ET.fromstring(to_svg(mlp_example())).find(SVG + "defs")[0].get("id")
    assert ids == ET.fromstring(to_svg(graph)).find(SVG + "defs")[0].get("id") != other


def test_render_svg_reuses_a_layout():
    graph = mlp_example()
    assert render_svg(graph, layout(graph, collapsed={"mlp"})) == to_svg(graph, collapsed={"mlp"})


def test_nothing_to_draw_is_a_clear_error():
    with pytest.raises(TypeError, match="nothing to draw"):
        to_svg()


# ---- matplotlib ---------------------------------------------------------------------------------------


def test_matplotlib_figure_and_png(tmp_path):
    pytest.importorskip("matplotlib")
    graph, _ = ab_example()
    fig = to_matplotlib(graph, step=5)
    shown = [t.get_text() for t in fig.axes[0].texts]
    assert "e = Mul" in shown and "grad 1." in shown
    path = to_png(graph, tmp_path / "ab.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_matplotlib_missing_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import now fails
    graph, _ = ab_example()
    with pytest.raises(ImportError, match="pip install matplotlib"):
        to_matplotlib(graph)
