"""The viewer for compiled functions: fused groups as clusters, the memory plan per node.

Two views (autograd_lab/viz/compiled.py): the IR view `graph_to_viz(graph, plan, memory=...)` of the
traced calls, built here from `trace` + `fuse` + `plan_memory` (no kernel is compiled for it),
and autograd's snapshot of a compiled function's result, whose one `FusedBackward0` node the
viewer opens into the original ops (one small kernel, compiled once for the module).
"""

import re

import pytest

import autograd_lab as ag
from autograd_lab.compile import fuse, trace
from autograd_lab.compile.extras.memory import plan_memory
from autograd_lab.viz import snapshot
from autograd_lab.viz.compiled import graph_to_viz
from autograd_lab.viz.layout import layout, scope_counts
from autograd_lab.viz.svg import FUSED_STYLE, state_at, step_count, to_svg


def mm_chain(x, w):
    """A matmul, an elementwise chain (fused: Mul, Tanh, Add), a sum."""
    return (((x @ w) * 2).tanh() + 1).sum()


def two_kernels(x, w):
    """Two fused groups of one size: the second takes the first's buffer once that is dead."""
    h = (x * 2).tanh()
    return ((h @ w) * 3).sigmoid().sum()


def ir_view(fn, *shapes, memory=True):
    graph = trace(fn, *[ag.ones(*s) for s in shapes])
    plan = fuse(graph)
    mem = plan_memory(plan.graph) if memory else None
    return graph_to_viz(graph, plan, memory=mem), plan, mem


def labels(graph):
    return {n["label"]: n for n in graph.nodes}


# ---- the IR view: clusters ---------------------------------------------------------------------


def test_ir_view_draws_each_fused_group_as_a_cluster_computed_in_one_step():
    g, plan, _ = ir_view(mm_chain, (2, 3), (3, 4), memory=False)
    ops = [n for n in g.nodes if n["kind"] == "op"]
    mul, tanh, add = ops[1:4]
    assert g.clusters == {"fused0": {
        "kind": "fused", "label": "fused: mul·tanh·add",
        "ops": ["MulBackward0", "TanhBackward0", "AddBackward0"], "collapsed": False,
        "node": add["id"]}}  # fmt: skip
    assert [n["scope"] for n in ops] == [None, "fused0", "fused0", "fused0", None]
    # the kernel is one step: Mul and Tanh are computed with Add, as the plan runs them
    assert mul["fused_into"] == tanh["fused_into"] == add["id"] and "fused_into" not in add
    assert step_count(g) == len(plan.graph.calls) == 3
    assert state_at(g, 2)["computed"] >= {mul["id"], tanh["id"], add["id"]}
    assert not state_at(g, 1)["computed"] & {mul["id"], tanh["id"], add["id"]}
    assert "clusters" in g.to_dict() and "memory" not in g.to_dict()


def test_a_kernels_input_is_never_drawn_inside_its_cluster():
    g, _, _ = ir_view(lambda x: ((x * 2).tanh() + 1).sum(), (4,), memory=False)
    assert scope_counts(g) == {"fused0": 3}  # the three ops; %0 (read only by Mul) stays out
    placed = layout(g)
    (cluster,) = placed["groups"]
    x = placed["nodes"]["n0"]
    assert x["x"] + x["w"] < cluster["x"]  # left of the frame, not in it


def test_long_groups_get_a_short_title():
    gelu = lambda x: 0.5 * x * (1 + ((x + 0.044715 * x**3) * 0.7978845608).tanh())  # noqa: E731
    g, _, _ = ir_view(gelu, (4,), memory=False)
    assert g.clusters["fused0"]["label"] == "fused: mul·pow·mul·add·mul·tanh·… (8 ops)"
    assert len(g.clusters["fused0"]["ops"]) == 8


# ---- the IR view: the memory plan --------------------------------------------------------------


def test_each_value_says_where_it_lives_and_when_it_is_freed():
    g, _, mem = ir_view(mm_chain, (2, 3), (3, 4))
    notes = {label: (n.get("memory") or {}).get("note") for label, n in labels(g).items()}
    assert notes == {
        "%0": None, "%1": None,  # the caller's inputs are not the plan's
        "%2 = Mm": "freed after %5",  # the kernel (it makes %5) reads it last
        "%3 = Mul": "in registers", "%4 = Tanh": "in registers",  # never written to memory
        "%5 = Add": "buf 0 · freed after %6",  # the kernel writes into out= buffer 0
        "%6 = Sum": "returned", "%6": "returned",
    }  # fmt: skip
    mm = labels(g)["%2 = Mm"]["memory"]
    assert (mm["bytes"], mm["buffer"], mm["born"], mm["dies"]) == (32, None, 0, 1)
    assert [labels(g)[k]["memory_step"] for k in ("%2 = Mm", "%3 = Mul", "%6 = Sum")] == [0, 1, 2]


def test_the_steps_list_the_nodes_alive_and_freed_after_each_planned_call():
    g, _, mem = ir_view(mm_chain, (2, 3), (3, 4))
    node = {label.split(" = ")[0]: n["id"] for label, n in labels(g).items() if "=" in label}
    steps = g.memory["steps"]
    assert [s["label"] for s in steps] == ["%2", "%5", "%6"]
    assert [s["alive"] for s in steps] == [[node["%2"]], [node["%5"]], [node["%6"], "n7"]]
    assert [s["freed"] for s in steps] == [[], [node["%2"]], [node["%5"]]]
    assert [s["live_bytes"] for s in steps] == [c["live_bytes"] for c in mem.per_call()]
    assert steps[1]["live"] == "64 B"
    assert (g.memory["peak_bytes"], g.memory["eager_peak_bytes"]) == (64, 68)
    # a replay step shows the planned call of the last forward step
    assert [state_at(g, k)["memory"] for k in range(4)] == [-1, 0, 1, 2]
    assert state_at(g)["memory"] is None


def test_a_reused_buffer_names_the_value_that_had_it():
    g, _, mem = ir_view(two_kernels, (4, 4), (4, 4))
    assert mem.reused == [6]
    second = labels(g)["%6 = Sigmoid"]["memory"]
    assert (second["buffer"], second["reused_from"]) == (0, "%3")
    assert second["note"] == "buf 0 (was %3) · freed after %7"
    assert labels(g)["%3 = Tanh"]["memory"]["note"] == "buf 0 · freed after %4"
    assert (g.memory["buffers"], g.memory["reused"]) == (1, 1)


def test_values_saved_for_backward_are_kept_until_that_backward():
    x, w = ag.ones(2, 3, requires_grad=True), ag.ones(3, 4, requires_grad=True)
    graph = trace(lambda x, w: (x @ w).exp().sum(), x, w)
    g = graph_to_viz(graph, None, memory=plan_memory(graph, [x, w]))
    notes = {label: n["memory"]["note"] for label, n in labels(g).items() if n.get("memory")}
    assert notes["%3 = Exp"] == "kept for backward of %3"  # exp's backward reads its result
    assert notes["%2 = Mm"] == "freed after %3"  # Exp saved its result, not its input


# ---- autograd's view: a compiled function's result --------------------------------------------


@pytest.fixture(scope="module")
def compiled_result():
    """y = f(x) of a compiled function with one fused kernel; the kernel is compiled once here."""
    f = ag.compile(lambda x, w: (((x @ w) * 2).tanh() + 1).sum())
    x, w = ag.ones(2, 3, requires_grad=True), ag.full((3, 4), 0.1)
    return f, f(x, w), x


def test_a_fused_node_is_a_collapsed_cluster_that_opens_into_its_ops(compiled_result):
    _, y, _ = compiled_result
    g = snapshot(y)
    (fused,) = [n for n in g.nodes if n.get("fused")]
    assert fused["op"] == "FusedBackward0" and fused["scope"] == "fused0"
    assert fused["fused"] == ["MulBackward0", "TanhBackward0", "AddBackward0"]
    assert g.clusters["fused0"]["collapsed"] and g.clusters["fused0"]["node"] == fused["id"]
    members = [n for n in g.nodes if n.get("fused_into") == fused["id"]]
    assert [n["label"] for n in members] == ["Mul", "Tanh", "Add"]
    assert all(n["value"] is None and n["memory"]["in_registers"] for n in members)
    mm = next(n["id"] for n in g.nodes if n["op"] == "MmBackward0")
    mul, tanh, add = (n["id"] for n in members)
    wires = {(e["source"], e["target"]) for e in g.edges}
    assert {(mm, mul), (mul, tanh), (tanh, add), (add, fused["id"])} <= wires
    assert (mm, fused["id"]) not in wires  # the input goes into the op that reads it
    # one forward step for the kernel, not four
    assert step_count(g) == 3
    # drawn collapsed by default: one box stands for the kernel and its ops
    hidden = layout(g)["hidden"]
    assert {hidden[i] for i in (fused["id"], mul, tanh, add)} == {"scope:fused0"}
    assert layout(g, collapsed=[])["hidden"] == {}


def test_without_the_kernel_the_ops_are_chained_in_the_order_they_ran(compiled_result):
    _, y, _ = compiled_result
    node = y.grad_fn.next_functions[0][0]
    kernel = node.kernel
    try:
        del node.kernel  # a node that only names its ops (its metadata)
        g = snapshot(y)
    finally:
        node.kernel = kernel
    fused = next(n["id"] for n in g.nodes if n.get("fused"))
    members = [n["id"] for n in g.nodes if n.get("fused_into")]
    chain = list(zip(members, members[1:] + [fused], strict=True))
    assert set(chain) <= {(e["source"], e["target"]) for e in g.edges}


def test_backward_events_still_name_the_fused_node(compiled_result):
    f, _, x = compiled_result
    with ag.viz.record() as t:
        y = f(x, ag.full((3, 4), 0.1))
        y.backward()
    g = t.graph(y)
    fused = next(n["id"] for n in g.nodes if n.get("fused"))
    assert any(e["kind"] == "run" and e["node"] == fused for e in g.events)
    assert next(n for n in g.nodes if n["id"] == fused)["value"]["shape"] == [2, 4]


# ---- the static SVG -----------------------------------------------------------------------------


def test_svg_draws_the_cluster_and_the_notes_byte_for_byte_the_same():
    svg = to_svg(ir_view(two_kernels, (4, 4), (4, 4))[0])
    assert svg == to_svg(ir_view(two_kernels, (4, 4), (4, 4))[0])  # a fresh trace: same bytes
    assert ">fused: mul·tanh</text>" in svg and ">fused: mul·sigmoid</text>" in svg
    assert svg.count("<polygon points=") == 2 and svg.count(FUSED_STYLE["svg"]) == 2
    assert ">buf 0 (was %3) · freed after %7</text>" in svg
    assert svg.count(">in registers</text>") == 2
    assert ">fused kernel</text>" in svg and ">alive</text>" in svg  # the legend says so


def test_svg_at_a_step_frames_alive_values_and_greys_freed_ones():
    g, _, _ = ir_view(mm_chain, (2, 3), (3, 4))
    alive = 'stroke="#0d9488" stroke-width="2.5"'
    freed = 'fill="#e5e7eb" stroke="#9ca3af"'
    at_kernel = to_svg(g, step=2)  # after the fused call: %5 alive, %2 freed
    assert at_kernel.count(alive) == 1 + 1 and at_kernel.count(freed) == 1 + 1  # + the legend
    assert "live 64 B of peak 64 B" in at_kernel
    assert "(one kernel runs all of fused: mul·tanh·add)" in at_kernel
    assert to_svg(g, step=0).count(alive) == 1  # nothing computed: only the legend's swatch


def test_svg_of_a_compiled_result_shows_the_kernel_as_one_box(compiled_result):
    _, y, _ = compiled_result
    closed = to_svg(snapshot(y))
    assert ">fused: mul·tanh·add</text>" in closed and ">3 ops in one kernel</text>" in closed
    assert ">Tanh</text>" not in closed
    opened = to_svg(snapshot(y), collapsed=[])
    assert ">Tanh</text>" in opened and ">in registers</text>" in opened


def test_plain_graphs_are_drawn_as_before():
    a = ag.tensor(2.0, requires_grad=True)
    g = snapshot(a * 3 + 1, names={"a": a})
    assert set(g.to_dict()) == {"nodes", "edges", "events"}
    svg = to_svg(g)
    assert "fused" not in svg and "alive" not in svg and "#ea580c" not in svg


# ---- the widget and autograd_lab.show(compiled) --------------------------------------------------


def test_the_widget_carries_clusters_and_the_memory_plan_per_step():
    pytest.importorskip("anywidget")  # the lab extra (CI has it)
    from autograd_lab.viz.widget import GraphWidget

    g, _, _ = ir_view(mm_chain, (2, 3), (3, 4))
    w = GraphWidget(g.to_dict())  # the dict form loads the optional parts too
    assert w.graph["clusters"] == g.clusters and w.n_forward == 3
    assert w.graph["memory"]["steps"] == g.memory["steps"]
    assert w.graph["memory"]["at_step"] == [-1, 0, 1, 2]
    assert len(w.graph["forward"]) == 3
    assert re.search(r"buf 0 · freed after %6", w._repr_mimebundle_()[0]["image/svg+xml"])


def test_the_widget_of_a_compiled_result_starts_with_the_kernel_closed(compiled_result):
    pytest.importorskip("anywidget")
    from autograd_lab.viz.widget import GraphWidget

    _, y, _ = compiled_result
    w = GraphWidget(y, names={})
    assert w.collapsed == ["fused0"] and w.n_forward == 3
    assert not any(n.get("fused_into") for n in w.graph["nodes"])  # inside the closed box
    w.collapsed = []
    assert [n["label"] for n in w.graph["nodes"] if n.get("fused_into")] == ["Mul", "Tanh", "Add"]


def test_show_draws_the_latest_trace_with_a_memory_plan(compiled_result):
    pytest.importorskip("anywidget")
    f, _, _ = compiled_result
    w = ag.show(f)
    assert w.graph["clusters"]["fused0"]["label"] == "fused: mul·tanh·add"
    assert [s["label"] for s in w.graph["memory"]["steps"]] == ["%2", "%5", "%6"]
    svg = ag.show(f, static=True)
    text = svg if isinstance(svg, str) else svg.data
    assert ">buf 0 · freed after %6</text>" in text
