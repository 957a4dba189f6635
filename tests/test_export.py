"""The exported page (viz/export.py): self-contained, its data round-trips, and the CLI.

The page is opened in chromium by tests/test_browser_export.py; here the file itself is read:
no http(s) address in any src/href (nothing to fetch), the graph's JSON gives back the
snapshot and, for every saved layout, exactly the graph object the widget would be sent.
"""

import html.parser
import json
import re
import subprocess
import sys

import pytest
from test_browser import _new_notebook

import autograd_lab as ag
from autograd_lab.viz import record, save_html
from autograd_lab.viz.export import page_data
from autograd_lab.viz.graph import tensor_names
from autograd_lab.viz.layout import drawn_scopes
from autograd_lab.viz.repeats import find_repeats
from autograd_lab.viz.view import view_graph


def two_scopes():
    with record() as r:
        x = ag.ones(2, 3)
        with ag.autograd.scope("layer1"):
            w1 = ag.full((3, 2), 0.5, requires_grad=True)
            h = (x @ w1).tanh()
        with ag.autograd.scope("layer2"):
            w2 = ag.full((2, 2), 0.25, requires_grad=True)
            y = (h @ w2).tanh()
        loss = y.sum()
        loss.backward()
    return r.graph(names=tensor_names(locals()))


class Tags(html.parser.HTMLParser):
    """Every tag with its attributes, and the text of each <script>."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self._in = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([self._in, ""])

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None


def read(path):
    tags = Tags()
    tags.feed(path.read_text(encoding="utf-8"))
    return tags


def graphs_in(tags):
    return [
        json.loads(text) for attrs, text in tags.scripts if attrs.get("type") == "application/json"
    ]


def as_js_builds_it(data, i):
    """standalone.js's PageModel.stateGraph, in Python."""
    own, nodes = data["states"][i]["graph"], data["nodes"]
    hidden = {nodes[k]["id"]: box for box, ks in own["layout"]["hidden"].items() for k in ks}
    about = [nodes[k] for k in own["hidden_nodes"]]
    return {
        **data["shared"],
        **own,
        "nodes": [nodes[k] for k in own["nodes"]],
        "edges": [data["edges"][k] for k in own["edges"]],
        "layout": {**own["layout"], "hidden": hidden},
        "hidden_nodes": {
            n["id"]: {"label": n["label"], "kind": n["kind"], "op": n["op"], "name": n["name"]}
            for n in about
        },
    }


def test_the_page_is_self_contained(tmp_path):
    path = save_html(two_scopes(), tmp_path / "graph.html")
    text = path.read_text(encoding="utf-8")
    tags = read(path)
    for tag, attrs in tags.tags:
        for name in ("src", "href"):
            assert not re.match(r"\s*(https?:)?//", attrs.get(name) or ""), (tag, attrs)
    assert not any(tag in ("link", "iframe", "img") for tag, _ in tags.tags)  # nothing loaded
    assert "@import" not in text and not re.search(r"url\(\s*['\"]?(https?:)?//", text)
    assert not re.search(r"\bimport\s*\(|\bfetch\s*\(|XMLHttpRequest", text)  # nor from JS
    code = [a for a, _ in tags.scripts if a.get("type") == "module"]
    assert code == [{"type": "module"}]  # graph.js and standalone.js inline, in one module
    assert "const graphWidget = {" in text and "export default" not in text
    assert "class PageModel" in text and ".agl-widget" in text  # the JS and the widget's CSS


def test_the_data_round_trips_for_every_layout(tmp_path):
    snapshot = two_scopes()
    path = save_html(snapshot, tmp_path / "graph.html", step=4, selected="n1")
    [data] = graphs_in(read(path))
    assert data["nodes"] == snapshot.to_dict()["nodes"]
    assert data["edges"] == snapshot.to_dict()["edges"]
    assert data["start"] == {"state": 0, "step": 4, "selected": "n1"}
    # layer1 and layer2, each open or closed: four layouts, all saved
    assert sorted(s["shown"] for s in data["states"]) == [
        [],
        ["layer1"],
        ["layer1", "layer2"],
        ["layer2"],
    ]
    assert data["complete"] is True
    for i, state in enumerate(data["states"]):
        repeats = find_repeats(snapshot, drawn_scopes(snapshot))  # listed, drawn unfolded
        expected, shown = view_graph(snapshot, state["shown"], repeats=repeats)
        assert shown == state["shown"]
        assert as_js_builds_it(data, i) == json.loads(json.dumps(expected))
        # what graph.js asks for on a click comes back to this layout
        assert data["requests"]["\n".join(sorted(shown))] == i
    # the events, the forward order, ... are written once, not per layout
    assert "events" in data["shared"] and "layout" not in data["shared"]


def test_text_in_the_graph_cannot_end_its_script(tmp_path):
    graph = two_scopes().to_dict()
    graph["note"] = "</script><script>alert(1)</script> & <b>"
    path = save_html(graph, tmp_path / "graph.html")
    tags = read(path)
    assert [a.get("type") for a, _ in tags.scripts] == ["application/json", "module"]
    [data] = graphs_in(tags)
    assert data["shared"]["note"] == graph["note"]  # the same text, read back


def test_max_layouts_keeps_the_nearest_and_says_so():
    data = page_data(two_scopes(), max_layouts=3)
    assert len(data["states"]) == 3 and data["complete"] is False
    # one click from the first view (all open) is saved; both closed, two clicks away, is not
    assert [s["shown"] for s in data["states"]] == [[], ["layer1"], ["layer2"]]
    assert "layer1\nlayer2" not in data["requests"]


def test_a_big_graph_opens_collapsed_and_saves_its_expansions():
    with record() as r:
        z = ag.ones(1, requires_grad=True)
        for layer in range(3):
            with ag.autograd.scope(f"layer{layer}"):
                for _ in range(40):
                    z = (z * 1.001).tanh()
        z.sum().backward()
    data = page_data(r.graph(), max_nodes=100)
    assert data["states"][0]["shown"] == ["layer0", "layer1", "layer2"]
    start = as_js_builds_it(data, 0)
    assert len(start["nodes"]) < len(data["nodes"])  # hidden nodes stay out of the first view
    assert len(data["states"]) == 8 and data["complete"]


def test_the_selected_node_inside_a_collapsed_scope_opens_it():
    snapshot = two_scopes()
    w1 = next(n["id"] for n in snapshot.nodes if n["name"] == "w1")
    data = page_data(snapshot, selected=w1, collapsed=["layer1", "layer2"])
    assert data["states"][0]["shown"] == ["layer2"]  # as GraphWidget does
    assert w1 in [n["id"] for n in as_js_builds_it(data, 0)["nodes"]]


def test_widget_save_html_opens_where_the_widget_is(tmp_path):
    pytest.importorskip("anywidget")
    from autograd_lab.viz.widget import GraphWidget

    w = GraphWidget(two_scopes(), step=6, selected="n0", collapsed=["layer2"])
    path = w.save_html(tmp_path / "deep" / "w.html", title="Two layers")
    assert path.exists() and "<title>Two layers</title>" in path.read_text(encoding="utf-8")
    [data] = graphs_in(read(path))
    assert data["start"] == {"state": 0, "step": 6, "selected": "n0"}
    assert data["states"][0]["shown"] == ["layer2"]
    assert as_js_builds_it(data, 0) == json.loads(json.dumps(w.graph))  # what the widget has


def test_save_html_takes_tensors_and_names_them(tmp_path):
    a = ag.tensor(2.0, requires_grad=True)
    b = a * a + a
    path = save_html(b, tmp_path / "b.html")
    [data] = graphs_in(read(path))
    assert {n["name"] for n in data["nodes"]} >= {"a", "b"}


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"step": 99}, ValueError, "step=99 is out of range: this graph has steps 0 to 20"),
        ({"selected": "n99"}, ValueError, "selected='n99': no such node"),
        ({"max_layouts": 0}, ValueError, "at least its first layout"),
    ],
)
def test_bad_arguments_say_what_is_wrong(tmp_path, kwargs, error, words):
    with pytest.raises(error, match=re.escape(words)):
        save_html(two_scopes(), tmp_path / "g.html", **kwargs)


def test_a_folder_is_not_a_file_name(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a folder: give a file name"):
        save_html(two_scopes(), tmp_path)


def test_nothing_to_draw():
    with pytest.raises(TypeError, match="needs something to draw"):
        save_html((), "x.html")


# ---- the command line -------------------------------------------------------------------------


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "autograd_lab.cli", "export-html", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
    )


def test_cli_missing_notebook(tmp_path):
    done = cli(tmp_path / "nope.ipynb")
    assert done.returncode == 2
    assert "nope.ipynb: no such notebook" in done.stderr
    assert not list(tmp_path.iterdir())


def test_cli_not_a_notebook(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    done = cli(tmp_path / "notes.txt")
    assert done.returncode == 2 and "is not a notebook" in done.stderr
    (tmp_path / "broken.ipynb").write_text("{not json")
    done = cli(tmp_path / "broken.ipynb")
    assert done.returncode == 2 and "could not be read as a Jupyter notebook" in done.stderr


def test_cli_max_layouts_must_be_positive(tmp_path):
    _notebook(tmp_path / "any.ipynb", ["1 + 1"])
    done = cli(tmp_path / "any.ipynb", "--max-layouts", "0")
    assert done.returncode == 2 and "max_layouts=0: a page needs at least" in done.stderr


def _notebook(path, cells):
    import nbformat

    nbformat.write(_new_notebook(cells), path)


@pytest.mark.slow
def test_cli_notebook_without_graphs(tmp_path):
    pytest.importorskip("nbclient")
    _notebook(
        tmp_path / "plain.ipynb",
        ["1 + 1", "import autograd_lab as ag\nag.show(ag.ones(2) * 2, static=True)"],
    )
    done = cli(tmp_path / "plain.ipynb", "-o", tmp_path / "site")
    assert done.returncode == 2
    assert "plain.ipynb shows no graph" in done.stderr and "save_html" in done.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
def test_cli_a_failing_cell_is_reported(tmp_path):
    pytest.importorskip("nbclient")
    _notebook(tmp_path / "fails.ipynb", ["raise ValueError('this lesson is broken')"])
    done = cli(tmp_path / "fails.ipynb")
    assert done.returncode == 2
    assert (
        "a cell raised while the notebook ran" in done.stderr
        and "this lesson is broken" in done.stderr
    )


@pytest.mark.slow
def test_cli_writes_beside_the_notebook_and_leaves_it_unchanged(tmp_path):
    pytest.importorskip("nbclient")
    nb = tmp_path / "one.ipynb"
    _notebook(
        nb,
        [
            "import autograd_lab as ag\nfrom autograd_lab.viz import GraphWidget, record",
            "with record() as r:\n    a = ag.tensor(3.0, requires_grad=True)\n    y = a * a\n    y.backward()\nw = GraphWidget(r)\nw",
            "w.step = 2  # a later cell moves the widget: the page opens there, as after Run All",
        ],
    )
    before = nb.read_bytes()
    done = cli(nb)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "one.html")
    assert nb.read_bytes() == before  # the notebook's own outputs are not touched
    tags = read(tmp_path / "one.html")
    [data] = graphs_in(tags)
    assert [n["name"] for n in data["nodes"]] == ["a", "y", "y"]
    assert data["start"] == {"state": 0, "step": 2, "selected": None}
    assert not any(a.get("src") for _, a in tags.tags)  # no widget manager, no CDN


@pytest.mark.slow
@pytest.mark.oracle
def test_cli_a_row_of_widgets_becomes_a_row_of_live_graphs(tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("torch", reason="PyTorch (the test oracle) is not installed")
    nb = tmp_path / "pair.ipynb"
    _notebook(
        nb,
        [
            "from autograd_lab.viz import side_by_side",
            "side_by_side('a = torch.tensor(2.0, requires_grad=True)\\nloss = (a * a).tanh()').widgets()",
        ],
    )
    done = cli(nb, "-o", tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "pair.html").read_text(encoding="utf-8")
    torch_graph, ours = graphs_in(read(tmp_path / "pair.html"))
    assert text.count('<div class="agl-export-row">') == 1  # both in one row, as in the notebook
    assert torch_graph["shared"]["note"].startswith("PyTorch graph")
    assert [n["op"] for n in torch_graph["nodes"] if n["kind"] == "op"] == [
        n["op"] for n in ours["nodes"] if n["kind"] == "op"
    ]
