"""Real PyTorch graphs drawn by our viewers (viz/from_torch.py), and side by side with ours.

The oracle twice over: PyTorch makes the graph we read, and the same script run in autograd_lab
must give the same snapshot (node names, edges, values, gradients). The order of the backward
events is checked against hooks this test registers itself. Skipped without torch.
"""

import subprocess
import sys

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.viz import (
    GraphWidget,
    compare,
    record,
    record_torch,
    side_by_side,
    snapshot,
    to_svg,
    watch_torch,
)

pytestmark = pytest.mark.oracle


# ---- the scripts, each written once for both libraries --------------------------------------------


def readme(torch):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(6.0, requires_grad=True)
    c = a + b
    d = b + 1
    e = c * d
    return e


def mlp_with_loss(torch):
    torch.manual_seed(0)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    W1, b1 = torch.randn(3, 5, requires_grad=True), torch.zeros(5, requires_grad=True)
    W2, b2 = torch.randn(5, 1, requires_grad=True), torch.zeros(1, requires_grad=True)
    h = (x @ W1 + b1).tanh()
    out = h @ W2 + b2
    loss = ((out - y) ** 2).mean()
    return loss


def reuse(torch):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * x
    z = (y + x).sum()
    return z


def view_and_in_place(torch):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 2
    y[0] = 0.5  # in place through a view: CopySlices
    v = y.view(2, 2)
    w = v.sin()
    w.add_(1)
    s = (w * w).sum()
    return s


def nn_mlp(torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    loss = torch.nn.functional.mse_loss(net(x), y)
    return loss


SCRIPTS = [readme, mlp_with_loss, reuse, view_and_in_place]


def recorded(script, library, recorder):
    """Run the script inside a recording, backward included; its graph with the script's names."""
    from autograd_lab.viz.side_by_side import _call_keeping_locals

    with recorder() as recording:
        root, names = _call_keeping_locals(script, library)
        root.backward()
    return recording.graph(root, names=names), root, names


def drawn(graph):
    """What the picture shows of each node, and the edges."""
    fields = ("id", "kind", "label", "op", "name", "role", "shape", "dtype", "is_saved")
    return [tuple(str(n[f]) for f in fields) for n in graph.nodes], graph.edges


def assert_close(p, q):
    """Two value summaries agree (float32 arithmetic in both libraries)."""
    assert (p is None) == (q is None), (p, q)
    if p is None:
        return
    assert p["shape"] == q["shape"]
    if p["values"] is not None:
        np.testing.assert_allclose(p["values"], q["values"], rtol=1e-5, atol=1e-6)
    for stat in ("min", "max", "mean", "norm"):
        np.testing.assert_allclose(p[stat], q[stat], rtol=1e-5, atol=1e-6)


# ---- a torch graph is the snapshot ours is ----------------------------------------------------------


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.__name__)
def test_torch_snapshot_has_our_nodes_edges_values_and_gradients(torch, script):
    theirs, _, _ = recorded(script, torch, record_torch)
    ours, _, _ = recorded(script, ag, record)
    assert drawn(theirs) == drawn(ours)
    for t, o in zip(theirs.nodes, ours.nodes):
        assert_close(t["value"], o["value"])
        assert_close(t["grad"], o["grad"])
        # what ours saves, PyTorch saves too (it also saves a Python number it wrapped in a
        # tensor: x * 2 saves other = 2)
        saved = {s["name"]: s["shape"] for s in t["saved"]}
        assert all(saved.get(s["name"]) == s["shape"] for s in o["saved"]), t["label"]
    assert [e["kind"] for e in theirs.events] and len(theirs.events) == len(ours.events)


def test_readme_example_reads_as_in_the_readme(torch):
    graph, _, _ = recorded(readme, torch, record_torch)
    by_label = {n["label"]: n for n in graph.nodes}
    assert [n["label"] for n in graph.nodes] == ["a", "b", "c = Add", "d = Add", "e = Mul", "e"]
    assert by_label["a"]["grad"]["values"] == 7.0 and by_label["b"]["grad"]["values"] == 15.0
    assert by_label["c = Add"]["value"]["values"] == 8.0  # an intermediate value, recorded
    mul = by_label["e = Mul"]
    assert [(s["name"], s["value"]["values"]) for s in mul["saved"]] == [
        ("self", 8.0),
        ("other", 7.0),
    ]
    assert mul["derivative"].startswith("d(self * other)/d(self) = other")
    assert by_label["d = Add"]["saved_attributes"] == {"alpha": 1}
    assert graph.note == "PyTorch graph"  # everything could be seen: nothing to excuse


def test_modules_give_our_scopes_and_parameter_names(torch):
    theirs, _, _ = recorded(nn_mlp, torch, record_torch)
    ours, _, _ = recorded(nn_mlp, ag, record)
    leaves = lambda g: sorted(n["label"] for n in g.nodes if n["role"] == "parameter")
    assert leaves(theirs) == leaves(ours) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    scopes = lambda g: {(n["op"], n["scope"]) for n in g.nodes if n["op"] == "AddmmBackward0"}
    assert (
        scopes(theirs)
        == scopes(ours)
        == {
            ("AddmmBackward0", "Sequential/0 (Linear)"),
            ("AddmmBackward0", "Sequential/2 (Linear)"),
        }
    )
    # PyTorch's linear transposes the weight in a node of its own (made inside F.linear)
    t_nodes = [n for n in theirs.nodes if n["op"] == "TBackward0"]
    assert [n["scope"] for n in t_nodes] == ["Sequential/0 (Linear)", "Sequential/2 (Linear)"]


# ---- backward, step by step, in PyTorch's order ------------------------------------------------------


def _own_hooks(root):
    """The test's own record of backward: (node name, incoming gradient) as each node runs."""
    runs, handles, stack, seen = [], [], [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        name = node.name().rsplit("::", 1)[-1]
        handles.append(
            node.register_prehook(lambda g, name=name: runs.append((name, g[0].sum().item())))
        )
        stack.extend(n for n, _ in node.next_functions)
    return runs, handles


@pytest.mark.parametrize("script", [*SCRIPTS, nn_mlp], ids=lambda s: s.__name__)
def test_backward_events_follow_pytorchs_engine(torch, script):
    with record_torch() as recording:
        root = script(torch)
        runs, handles = _own_hooks(root)
        root.backward()
    for handle in handles:
        handle.remove()
    graph = recording.graph(root)
    by_id = {n["id"]: n for n in graph.nodes}
    ours = [
        (by_id[e["node"]]["op"] or "AccumulateGrad", e["grad"]["mean"] * e["grad"]["numel"])
        for e in graph.events
        if e["kind"] == "run"
    ]
    assert [name for name, _ in ours] == [name for name, _ in runs]
    np.testing.assert_allclose([g for _, g in ours], [g for _, g in runs], rtol=1e-4, atol=1e-5)
    # every gradient sent arrives before its node runs; each leaf's .grad is what accumulated
    ran = set()
    for event in graph.events:
        if event["kind"] == "run":
            ran.add(event["node"])
        if event["kind"] == "send":
            assert event["target"] not in ran
    for leaf in (n for n in graph.nodes if n["kind"] == "tensor" and n["role"] != "output"):
        added = [
            e["grad"] for e in graph.events if e["kind"] == "accumulate" and e["node"] == leaf["id"]
        ]
        assert len(added) == 1
        assert_close(added[0], leaf["grad"])


def test_readme_backward_order_is_pytorchs(torch):
    graph, _, _ = recorded(readme, torch, record_torch)
    label = {n["id"]: n["label"] for n in graph.nodes}
    steps = [
        (e["kind"], label[e["node"]], label.get(e["target"]), e["grad"]["values"])
        for e in graph.events
    ]
    # PyTorch's engine: a node sends every gradient right after it runs; among the nodes ready,
    # the newest runs first; a leaf's AccumulateGrad runs as soon as it is ready
    assert steps == [
        ("run", "e = Mul", None, 1.0),
        ("send", "e = Mul", "c = Add", 7.0),
        ("send", "e = Mul", "d = Add", 8.0),
        ("run", "d = Add", None, 8.0),
        ("send", "d = Add", "b", 8.0),
        ("run", "c = Add", None, 7.0),
        ("send", "c = Add", "a", 7.0),
        ("send", "c = Add", "b", 7.0),
        ("run", "a", None, 7.0),
        ("accumulate", "a", None, 7.0),
        ("run", "b", None, 15.0),
        ("accumulate", "b", None, 15.0),
    ]


def test_a_graph_built_before_the_recording_still_shows_its_backward(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).exp().sum()
    with record_torch() as recording:
        y.backward()
    graph = recording.graph(y, names={"x": x, "y": y})
    assert [e["kind"] for e in graph.events][:2] == ["run", "send"]
    exp = next(n for n in graph.nodes if n["op"] == "ExpBackward0")
    assert exp["saved"][0]["name"] == "result"  # read before backward freed it
    np.testing.assert_allclose(exp["value"]["values"], np.exp([1.0, 4.0]), rtol=1e-6)


def test_watch_torch_runs_backward_and_returns_its_steps(torch):
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    loss = (w * w).sum()
    recording = watch_torch(loss)
    assert w.grad.tolist() == [1.0, -2.0]
    graph = GraphWidget(recording).snapshot  # the widget reads names from this function
    assert [n["label"] for n in graph.nodes] == ["w", "Mul", "loss = Sum", "loss"]
    assert graph.events[-1]["kind"] == "accumulate"
    # w * w was computed before anything watched, and no op saved it: said so, with the fix
    assert graph.note == (
        "PyTorch graph; 1 intermediate value unknown "
        "(build the graph inside record_torch() to see them)"
    )


def test_watch_torch_refuses_what_it_cannot_watch(torch):
    with pytest.raises(TypeError, match="torch tensor.*autograd_lab.record"):
        watch_torch(ag.tensor(1.0, requires_grad=True))
    with pytest.raises(RuntimeError, match="no grad_fn.*requires_grad=True"):
        watch_torch(torch.tensor(1.0))


def test_autograd_grad_inside_the_recording_is_watched_too(torch):
    with record_torch() as recording:
        x = torch.tensor(3.0, requires_grad=True)
        y = x**3
        (g,) = torch.autograd.grad(y, x)
    assert g.item() == 27.0
    graph = recording.graph(y)
    assert [e["kind"] for e in graph.events] == ["run", "send"]  # grad() fills no .grad
    assert x.grad is None


# ---- what cannot be seen is said, not an error -------------------------------------------------------


def test_backward_ran_unwatched_draws_with_a_note(torch):
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = (a * a).tanh()
    loss = b.sum()
    loss.backward()  # retain_graph=False: the saved tensors are freed
    graph = snapshot(loss, names={"a": a, "b": b, "loss": loss})
    tanh = next(n for n in graph.nodes if n["op"] == "TanhBackward0")
    assert tanh["saved_freed"] and tanh["saved_freed_names"] == ["result"] and tanh["saved"] == []
    assert graph.events == []
    assert graph.node("n0")["grad"]["values"] == pytest.approx(a.grad.tolist())
    assert "backward ran unwatched" in graph.note
    assert "saved tensors freed by backward (retain_graph=False)" in graph.note
    assert "1 intermediate value unknown" in graph.note  # a * a: unnamed, and nothing saved it
    svg = to_svg(loss, names={"a": a, "b": b, "loss": loss})
    assert "backward ran unwatched" in svg and ">b = Tanh</text>" in svg
    assert GraphWidget(graph).graph["note"] == graph.note


def test_a_recorded_graph_keeps_what_backward_freed(torch):
    with record_torch() as recording:
        a = torch.tensor([2.0, 3.0], requires_grad=True)
        loss = (a * a).tanh().sum()
        loss.backward()
    graph = recording.graph(loss)
    tanh = next(n for n in graph.nodes if n["op"] == "TanhBackward0")
    assert tanh["saved_freed"] and tanh["saved"][0]["shape"] == [2]
    assert graph.note == "PyTorch graph"


def test_not_yet_run_says_how_to_see_backward(torch):
    a = torch.tensor(1.0, requires_grad=True)
    graph = snapshot(a * 2)
    assert "backward not run yet (watch_torch(loss)" in graph.note
    assert graph.node("n1")["value"]["values"] == 2.0  # the root's own value


def test_mixing_libraries_is_a_clear_error(torch):
    with pytest.raises(TypeError, match="mix torch tensors with autograd_lab tensors"):
        snapshot(torch.ones(1, requires_grad=True) * 2, ag.ones(1, requires_grad=True) * 2)
    with record() as ours:
        pass
    with pytest.raises(TypeError, match="record_torch"):
        snapshot(torch.ones(1, requires_grad=True) * 2, recording=ours)


def test_a_leaf_alone_and_a_parameter(torch):
    p = torch.nn.Parameter(torch.ones(2))
    graph = snapshot(p, names={"p": p})
    assert [(n["label"], n["role"]) for n in graph.nodes] == [("p", "parameter")]


# ---- every viewer takes a torch tensor -------------------------------------------------------------


def test_to_svg_and_the_widget_take_torch_tensors(torch):
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(6.0, requires_grad=True)
    e = (a + b) * (b + 1)
    svg = to_svg(e, names={"a": a, "e": e})
    assert svg.startswith("<svg") and ">e = Mul</text>" in svg and ">a</text>" in svg
    widget = GraphWidget(e)  # names read from this function's variables, as for ours
    assert [n["label"] for n in widget.snapshot.nodes] == ["a", "b", "Add", "Add", "e = Mul", "e"]
    assert widget.n_forward == 3 and widget.n_steps == 3  # backward not run: forward steps only
    with record_torch() as recording:
        e.backward()
    stepped = GraphWidget(recording.graph(e))
    assert stepped.n_steps == 3 + 12
    stepped.step = stepped.n_steps
    assert GraphWidget(recording).snapshot.events  # a recording itself, as with ours
    assert "image/svg+xml" in stepped._repr_mimebundle_()[0]
    assert ag.show(e, static=True) is not None


def test_show_and_the_magics_draw_torch_cells(torch):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    from autograd_lab.magic import load_ipython_extension

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    load_ipython_extension(shell)
    shell.user_ns["torch"] = torch
    cell = (
        "%%autograd -b -o w\n"
        "net = torch.nn.Linear(2, 1)\n"
        "x = torch.ones(3, 2)\n"
        "loss = net(x).pow(2).mean()\n"
        "loss"
    )
    with capture_output():
        result = shell.run_cell(cell)
    assert result.success, result.error_in_exec
    widget = shell.user_ns["w"]
    labels = [n["label"] for n in widget.snapshot.nodes]
    assert labels[-1] == "loss" and "weight" in labels and "bias" in labels
    assert widget.snapshot.events and shell.user_ns["net"].weight.grad is not None
    assert {n["scope"] for n in widget.snapshot.nodes if n["op"] == "AddmmBackward0"} == {"Linear"}
    with capture_output():  # no result: the cell's unused results are drawn
        result = shell.run_cell(
            "%%autograd -o w2\nh = torch.ones(2, requires_grad=True)\nt = h.tanh()"
        )
    assert result.success, result.error_in_exec
    assert [n["label"] for n in shell.user_ns["w2"].snapshot.nodes] == ["h", "t = Tanh", "t"]
    with capture_output():
        result = shell.run_cell("%autograd --static -o g loss * 2")
    assert result.success, result.error_in_exec
    assert [n["label"] for n in shell.user_ns["g"].nodes][-1] == "output"


def test_autograd_lab_never_imports_torch_itself():
    code = (
        "import sys, autograd_lab, autograd_lab.viz, autograd_lab.magic\n"
        "from autograd_lab.viz import to_svg\n"
        "a = autograd_lab.tensor(1.0, requires_grad=True)\n"
        "to_svg(a * 2)\n"
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- side by side --------------------------------------------------------------------------------


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.__name__)
def test_side_by_side_finds_the_same_graph(torch, script):
    pair = side_by_side(script)
    assert pair.comparison.differences == [], pair.comparison.differences
    assert pair.comparison.only_left == pair.comparison.only_right == []
    svg = pair.to_svg()
    assert ">PyTorch</text>" in svg and ">autograd_lab</text>" in svg
    assert 'stroke="#c026d3"' not in svg  # no node framed


def test_side_by_side_marks_pytorchs_transpose_in_linear(torch):
    pair = side_by_side(nn_mlp)
    c = pair.comparison
    only_torch = [pair.torch.node(i)["op"] for i in c.only_left]
    assert only_torch == ["TBackward0", "TBackward0"] and c.only_right == []
    kinds = {k for d in c.differences for k in d["kinds"]}
    assert kinds == {"structure"}  # names, values and gradients all agree
    texts = [d["text"] for d in c.differences]
    assert "input 2: T in PyTorch, 0.weight in autograd_lab" in texts
    svg = pair.to_svg()
    # PyTorch's side: both T and both Addmm; ours: both Addmm (their input 2 differs)
    assert svg.count('stroke="#c026d3"') == 6
    assert "<title>differs: structure</title>" in svg


def test_side_by_side_takes_a_script(torch):
    pair = side_by_side("x = torch.tensor([1.0, 2.0], requires_grad=True)\nloss = (x * 3).sum()")
    assert [n["label"] for n in pair.torch.nodes] == ["x", "Mul", "loss = Sum", "loss"]
    assert pair.comparison.same
    assert pair.torch.node("n0")["grad"]["values"] == [3.0, 3.0]  # backward called for it


def test_side_by_side_refuses_what_it_cannot_run(torch):
    with pytest.raises(TypeError, match="function taking the library"):
        side_by_side(42)


def test_compare_reports_values_gradients_and_names(torch):
    theirs, _, _ = recorded(readme, torch, record_torch)
    ours, _, _ = recorded(readme, ag, record)
    changed = ours.to_dict()
    changed["nodes"] = [dict(n) for n in changed["nodes"]]
    changed["nodes"][2]["value"] = dict(changed["nodes"][2]["value"], values=8.5, mean=8.5)
    changed["nodes"][1]["grad"] = dict(changed["nodes"][1]["grad"], values=14.0, mean=14.0)
    changed["nodes"][3]["name"] = "dd"
    result = compare(theirs, changed, sides=("PyTorch", "autograd_lab"))
    by_node = {d["right"]: d for d in result.differences}
    assert (
        by_node["n2"]["kinds"] == ["value"]
        and "values differ by up to 0.5" in by_node["n2"]["text"]
    )
    assert by_node["n1"]["kinds"] == ["grad"]
    assert by_node["n3"]["text"] == "name: d in PyTorch, dd in autograd_lab"
    assert result.marks("left") == {"n1": ["grad"], "n2": ["value"], "n3": ["name"]}


def test_compare_reports_the_first_step_where_backward_orders_differ(torch):
    theirs, _, _ = recorded(reuse, torch, record_torch)
    ours, _, _ = recorded(reuse, ag, record)
    assert compare(theirs, ours).order is None  # x * x reuse: the same steps, in the same order
    swapped = ours.to_dict()
    swapped["events"] = list(swapped["events"])
    swapped["events"][1], swapped["events"][2] = swapped["events"][2], swapped["events"][1]
    result = compare(theirs, swapped, sides=("PyTorch", "autograd_lab"))
    assert result.differences == [] and not result.same
    assert (
        result.order == "backward step 2: send z = Sum -> Add in PyTorch, run Add in autograd_lab"
    )
    assert repr(result) == "Comparison: 5 nodes paired; differences: the backward order"


def test_custom_functions_and_nodes_with_two_outputs(torch):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2

    with record_torch() as recording:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = Double.apply(x)
        p, q = y.unbind()
        z = p * q
        z.backward()
    graph = recording.graph(z, names={"x": x, "y": y, "p": p, "q": q, "z": z})
    assert [n["label"] for n in graph.nodes] == ["x", "y = Double", "p = Unbind", "z = Mul", "z"]
    double = graph.node("n1")
    assert double["op"] == "DoubleBackward" and double["saved_freed_names"] == ["saved_tensors"]
    assert double["saved"][0]["value"]["values"] == [1.0, 2.0]  # ctx.saved_tensors, recorded
    assert graph.node("n0")["grad"]["values"] == [8.0, 4.0]
    # p and q are outputs 0 and 1 of one Unbind node: one node, two edges into Mul
    assert [(e["source"], e["input"]) for e in graph.edges if e["target"] == "n3"] == [
        ("n2", 0),
        ("n2", 1),
    ]
    assert "saved_tensors" in snapshot(z).node("n1")["saved_freed_names"]


def test_side_by_side_widgets_step_together(torch):
    pytest.importorskip("ipywidgets")
    row = side_by_side(reuse).widgets()
    left, right = row.children
    assert left.n_steps == right.n_steps == 3 + 10
    left.step = 5
    assert right.step == 5


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.__name__)
def test_our_engine_runs_backward_in_pytorchs_order(torch, script):
    # every send of a node comes before the next node runs, and a ready leaf runs first of all
    theirs, _, _ = recorded(script, torch, record_torch)
    ours, _, _ = recorded(script, ag, record)
    assert compare(theirs, ours).order is None
    steps = [(e["kind"], e["node"], e["target"]) for e in theirs.events]
    assert steps == [(e["kind"], e["node"], e["target"]) for e in ours.events]
