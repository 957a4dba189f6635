"""GraphWidget without a browser: the state it syncs, its checks, its text and SVG fallbacks.

The drawing itself (graph.js) is exercised in a real browser by test_browser.py.
"""

import base64
import json
import os
import re
from importlib.resources import files
from pathlib import Path

import pytest

import autograd_lab as ag
from autograd_lab.viz import record

try:
    import anywidget  # noqa: F401
except ImportError:  # the widget needs the lab extra; CI installs it, so there it is an error
    if os.environ.get("CI"):
        raise
    pytest.skip("anywidget is not installed: pip install -e .[lab]", allow_module_level=True)

from conftest import traced_seed_example as seed_example  # noqa: E402
from traitlets import TraitError  # noqa: E402

from autograd_lab.viz.svg import step_count  # noqa: E402
from autograd_lab.viz.widget import GraphWidget  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def scoped_example():
    """A two-layer network whose layers are named with autograd.scope."""
    with record() as t:
        x = ag.ones(4, 3)
        with ag.autograd.scope("mlp"):
            with ag.autograd.scope("layer1"):
                w1 = ag.full((3, 4), 0.5, requires_grad=True)
                h = (x @ w1).relu()
            with ag.autograd.scope("layer2"):
                w2 = ag.full((4, 2), -0.25, requires_grad=True)
                out = h @ w2
        loss = (out * out).mean()
        loss.backward()
    return t, dict(x=x, w1=w1, h=h, w2=w2, out=out, loss=loss)


@pytest.fixture
def widget():
    t, names = seed_example()
    return GraphWidget(t, names=names)


def by_label(widget):
    return {n["label"]: n for n in widget.graph["nodes"]}


# ---- what is synced to the browser ---------------------------------------------------------------


def test_graph_trait_holds_the_snapshot_and_its_layout(widget):
    graph = widget.graph
    assert [n["label"] for n in graph["nodes"]] == ["a", "b", "c = Add", "d = Add", "e = Mul", "e"]
    assert graph["forward"] == ["n2", "n3", "n4"]  # the ops, in creation order
    assert len(graph["events"]) == 12 and graph["events"][0]["kind"] == "run"
    assert graph["n_steps"] == widget.n_steps == 3 + 12
    assert set(graph["layout"]["nodes"]) == {f"n{i}" for i in range(6)}
    assert {(e["source"], e["target"]) for e in graph["edges"]} == {
        ("n0", "n2"), ("n1", "n2"), ("n1", "n3"), ("n2", "n4"), ("n3", "n4"), ("n4", "n5")
    }  # fmt: skip
    json.dumps(graph)  # plain JSON: what the comm sends


def test_values_and_gradients_of_the_seed_example(widget):
    nodes = by_label(widget)
    assert nodes["e"]["value"]["values"] == 56.0
    assert nodes["a"]["grad"]["values"] == 7.0 and nodes["b"]["grad"]["values"] == 15.0
    # b's gradient arrives twice (8 from d, 7 from c) and is accumulated once, as 15
    sends_to_b = [ev["grad"]["values"] for ev in widget.graph["events"] if ev["target"] == "n1"]
    assert sends_to_b == [8.0, 7.0]
    accumulated = [ev for ev in widget.graph["events"] if ev["kind"] == "accumulate"]
    assert [(ev["node"], ev["grad"]["values"]) for ev in accumulated] == [("n0", 7.0), ("n1", 15.0)]


def test_the_browser_gets_derivative_values_and_the_root_seed(widget):
    """graph.js shows these as they come: the local derivative's value after its formula, and
    the root's "grad 1." (room for it is reserved in the layout)."""
    nodes = by_label(widget)
    assert nodes["e = Mul"]["derivative_value"] == (
        "d(self * other)/d(self) = other = 7.,  d/d(other) = self = 8."
    )
    assert nodes["e"]["grad"]["values"] == 1.0
    box = widget.graph["layout"]["nodes"][nodes["e"]["id"]]
    assert box["h"] >= 3 * 15.0  # three lines: label, value, grad


def test_initial_state_and_options():
    t, names = seed_example()
    w = GraphWidget(t, names=names, step=5, selected="n1")
    assert (w.step, w.selected, w.collapsed) == (5, "n1", [])
    assert GraphWidget(t, names=names).step == 0


def test_built_from_tensors_a_trace_or_a_graph_alike():
    t, names = seed_example()
    e = names["e"]
    from_trace = GraphWidget(t, names=names)
    from_graph = GraphWidget(t.graph(names=names))
    from_root = GraphWidget(e, recording=t, names=names)
    assert from_trace.graph == from_graph.graph == from_root.graph
    # without recording=: the graph e keeps (no backward events, no intermediate values)
    plain = GraphWidget(e, names=names)
    assert plain.n_steps == 3 and plain.graph["events"] == []


def test_variable_names_come_from_the_caller():
    t, names = seed_example()
    a, b, e = names["a"], names["b"], names["e"]  # noqa: F841 - read by GraphWidget
    labels = [n["label"] for n in GraphWidget(e).graph["nodes"]]
    assert labels[:2] == ["a", "b"] and labels[-1] == "e"


def test_needs_something_to_draw():
    with pytest.raises(TypeError, match="needs something to draw"):
        GraphWidget()


# ---- step and selection, set from Python -------------------------------------------------------


def test_step_moves_within_bounds(widget):
    widget.step = widget.n_steps
    assert widget.step == 15
    widget.step = 0
    assert widget.step == 0


@pytest.mark.parametrize("bad", [-1, 16, 1000])
def test_step_out_of_range_is_a_clear_error(widget, bad):
    with pytest.raises(
        TraitError, match=r"step -?\d+ is out of range: this graph has steps 0 to 15"
    ):
        widget.step = bad
    assert widget.step == 0  # unchanged


def test_step_must_be_an_integer(widget):
    with pytest.raises(TraitError):
        widget.step = "3"


def test_select_a_node_and_unselect(widget):
    widget.selected = "n1"
    assert widget.selected == "n1"
    widget.selected = None
    assert widget.selected is None


def test_unknown_node_id_is_a_clear_error(widget):
    with pytest.raises(TraitError, match=r"no node 'n99' in this graph: its node ids are n0 to n5"):
        widget.selected = "n99"


def test_steps_match_the_static_picture(widget):
    assert widget.n_steps == step_count(widget.snapshot)


# ---- what a notebook stores: short text and a static picture -------------------------------------


def test_mimebundle_has_widget_view_text_svg_and_html(widget):
    data, _ = widget._repr_mimebundle_()
    assert set(data) == {"text/plain", WIDGET_VIEW, "image/svg+xml", "text/html"}
    assert data["text/plain"] == "GraphWidget(6 nodes, 12 backward events, step 0)"
    assert data[WIDGET_VIEW]["model_id"] == widget.model_id
    svg = data["image/svg+xml"]
    assert svg.startswith("<svg") and ">b</text>" in svg
    assert "Run this cell to step through it live" in svg  # what to do where it is not live
    # the html is the same picture as an image: untrusted notebooks keep it, they drop <svg>
    html = data["text/html"]
    assert html.startswith('<img src="data:image/svg+xml;base64,') and "<svg" not in html
    encoded = html.split("base64,")[1].split('"')[0]
    assert base64.b64decode(encoded).decode() == svg


def test_stored_picture_shows_the_step_the_widget_shows(widget):
    finished = widget._repr_mimebundle_()[0]["image/svg+xml"]
    assert "The finished graph" in finished and "grad 15." in finished
    widget.step = widget.n_forward + 4  # after the first four backward events
    at_step = widget._repr_mimebundle_()[0]["image/svg+xml"]
    assert f"Step {widget.n_forward + 4} of {widget.n_steps}" in at_step
    assert f"step {widget.n_forward + 4} of {widget.n_steps} (backward)" in at_step  # its caption
    assert "grad 15." not in at_step  # b has not received both of its gradients yet


def test_stored_picture_prints_what_the_inspector_shows_for_the_pinned_node(widget):
    def pinned():
        svg = widget._repr_mimebundle_()[0]["image/svg+xml"]
        return " ".join(re.findall(r'font-style="italic">([^<]*)<', svg)).split("Pinned in ")[1]

    widget.step = widget.n_forward + 4  # b has received 8 from d, not yet 7 from c
    widget.selected = "n1"
    assert pinned().startswith("the inspector: b: input · shape scalar float32 · value 6.")
    assert "grad" not in pinned()  # b.grad is not there yet at this step
    widget.step = widget.n_steps
    assert "grad 15." in pinned()


def test_filmstrip_stores_the_key_steps(widget):
    picture = widget.filmstrip()
    bundle = picture._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/svg+xml", "text/html"}
    assert bundle["text/plain"] == "film strip: steps 3, 4, 7, 9, 13, 15 of 15"
    # the end of forward, each op running (e, then d, then c: newest first), each .grad += ...
    frames = re.findall(r">step (\d+) of 15 \((\w+)\)", bundle["image/svg+xml"])
    assert frames == [("3", "forward")] + [(s, "backward") for s in ("4", "7", "9", "13", "15")]
    assert "grad += 7." in bundle["image/svg+xml"] and "grad += 15." in bundle["image/svg+xml"]
    chosen = widget.filmstrip([4, 9])._repr_mimebundle_()["image/svg+xml"]
    assert re.findall(r">step (\d+) of 15", chosen) == ["4", "9"]
    with pytest.raises(ValueError, match="steps from 0 to 15"):
        widget.filmstrip([16])


def test_text_and_svg_are_deterministic():
    bundles = []
    for _ in range(2):
        t, names = seed_example()
        data, _ = GraphWidget(t, names=names)._repr_mimebundle_()
        bundles.append((data["text/plain"], data["image/svg+xml"], data["text/html"]))
    assert bundles[0] == bundles[1]


def test_text_repr_is_short_and_follows_the_step(widget):
    widget.step = 7
    assert repr(widget) == "GraphWidget(6 nodes, 12 backward events, step 7)"
    assert widget.model_id not in repr(widget)


# ---- the front end is shipped and self-contained ------------------------------------------------


def test_javascript_and_css_are_in_the_package(widget):
    viz = files("autograd_lab.viz")
    js, css = (viz / "graph.js").read_text(), (viz / "graph.css").read_text()
    assert "export default" in js and "render" in js and ".agl-widget" in css
    assert (widget._esm, widget._css) == (js, css)  # what anywidget sends to the browser


def test_javascript_imports_nothing_and_fetches_nothing():
    js = files("autograd_lab.viz").joinpath("graph.js").read_text()
    assert not re.search(r"^\s*import\b", js, re.M), "no static imports: dependency-free"
    assert not re.search(r"\bimport\s*\(", js), "no dynamic imports"
    assert not re.search(r"""from\s+["']https?:""", js)
    assert "fetch(" not in js and "XMLHttpRequest" not in js
    # the only URL is the SVG namespace, a name rather than something to download
    assert set(re.findall(r"https?://[^\s\"'`]+", js)) == {"http://www.w3.org/2000/svg"}


def test_package_data_ships_the_front_end():
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert re.search(r'"autograd_lab\.viz" = \["\*\.js", "\*\.css"\]', pyproject)


# ---- collapsing scopes ---------------------------------------------------------------------------


def test_collapsing_a_scope_sends_a_new_layout():
    t, names = scoped_example()
    w = GraphWidget(t, names=names)
    everything = {n["id"] for n in w.graph["nodes"]}
    assert w.collapsed == [] and "scope:mlp" not in w.graph["layout"]["nodes"]

    w.collapsed = ["mlp"]  # what graph.js does when the "mlp" frame's title is clicked
    inside = set(w.graph["layout"]["hidden"])
    assert inside and "scope:mlp" in w.graph["layout"]["nodes"]
    assert {n["id"] for n in w.graph["nodes"]} == everything - inside
    assert [g["scope"] for g in w.graph["layout"]["groups"] if g["collapsed"]] == ["mlp"]
    assert w.n_steps == step_count(w.snapshot)  # steps do not depend on what is visible

    w.collapsed = []
    assert {n["id"] for n in w.graph["nodes"]} == everything


def test_big_graphs_start_collapsed():
    t, names = scoped_example()
    w = GraphWidget(t, names=names, max_nodes=3)
    assert w.collapsed == ["mlp"]
    assert len(w.graph["nodes"]) < len(w.snapshot.nodes)


def test_selecting_a_hidden_node_expands_its_scope():
    t, names = scoped_example()
    w = GraphWidget(t, names=names, collapsed=["mlp"])
    hidden = sorted(w.graph["layout"]["hidden"])[0]
    w.selected = hidden
    assert w.collapsed == [] and hidden in {n["id"] for n in w.graph["nodes"]}
    assert w.selected == hidden
