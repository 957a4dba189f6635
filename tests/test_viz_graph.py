"""The graph snapshot (autograd_lab.viz.graph): what every viewer reads."""

import json

import numpy as np
import pytest
from conftest import traced_seed_example as seed_example

import autograd_lab as ag
from autograd_lab.viz import record, snapshot, summarize
from autograd_lab.viz.layout import summary_text


def test_seed_example_nodes_roles_values_and_grads():
    t, v = seed_example()
    g = t.graph(v["e"], names=v)
    rows = [(n["id"], n["kind"], n["label"], n["role"]) for n in g.nodes]
    assert rows == [
        ("n0", "tensor", "a", "input"),
        ("n1", "tensor", "b", "input"),
        ("n2", "op", "c = Add", "intermediate"),
        ("n3", "op", "d = Add", "intermediate"),
        ("n4", "op", "e = Mul", "intermediate"),
        ("n5", "tensor", "e", "output"),
    ]
    values = {n["label"]: n["value"]["values"] for n in g.nodes}
    assert values == {
        "a": 2.0,
        "b": 6.0,
        "c = Add": 8.0,
        "d = Add": 7.0,
        "e = Mul": 56.0,
        "e": 56.0,
    }
    grads = {n["label"]: n["grad"] and n["grad"]["values"] for n in g.nodes}
    # leaves: their .grad; ops: the gradient of their output, as it arrived in backward; the
    # root: the seed gradient backward started from (1 for a scalar)
    assert grads == {"a": 7.0, "b": 15.0, "c = Add": 7.0, "d = Add": 8.0, "e = Mul": 1.0, "e": 1.0}
    mul = g.node("n4")
    assert mul["op"] == "MulBackward0" and mul["derivative"].startswith("d(self * other)")
    assert [s["name"] for s in mul["saved"]] == ["self", "other"]  # as saved in forward
    assert mul["saved_freed"]  # ... and freed by backward
    assert g.node("n2")["is_saved"] and g.node("n3")["is_saved"]  # c and d were saved by Mul


def test_edges_point_in_the_forward_direction_with_input_numbers():
    t, v = seed_example()
    g = t.graph(v["e"], names=v)
    edges = [(e["source"], e["target"], e["input"]) for e in g.edges]
    assert edges == [
        ("n0", "n2", 0),
        ("n1", "n2", 1),
        ("n1", "n3", 0),
        ("n2", "n4", 0),
        ("n3", "n4", 1),
        ("n4", "n5", 0),
    ]


def test_backward_events_follow_the_engines_real_order():
    t, v = seed_example()
    g = t.graph(v["e"], names=v)
    events = [(e["kind"], e["node"], e["target"], e["grad"]["values"]) for e in g.events]
    assert events == [
        ("run", "n4", None, 1.0),  # e's node starts with d(e)/d(e) = 1
        ("send", "n4", "n2", 7.0),  # to c: d = 7
        ("send", "n4", "n3", 8.0),  # to d: c = 8
        ("run", "n3", None, 8.0),  # the newest ready node first: d = b + 1 was made after c
        ("send", "n3", "n1", 8.0),  # b is not ready yet: it still waits for c's share
        ("run", "n2", None, 7.0),
        ("send", "n2", "n0", 7.0),
        ("send", "n2", "n1", 7.0),  # c sends both its gradients before anything else runs
        ("run", "n0", None, 7.0),  # then the ready leaves, before any other node (PyTorch's rule)
        ("accumulate", "n0", None, 7.0),
        ("run", "n1", None, 15.0),  # 8 + 7: b's two paths meet
        ("accumulate", "n1", None, 15.0),
    ]
    assert [e["step"] for e in g.events] == list(range(len(events)))


def test_run_events_match_the_order_hooks_fire_in():
    fired = []
    with record() as t:
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        ys = [x * k for k in (1.0, 2.0, 3.0)]
        for k, y in enumerate(ys):
            y.register_hook(lambda g, k=k: fired.append(k))
        total = ys[0].sum() + ys[1].sum() + ys[2].sum()
        total.backward()
    g = t.graph(total)
    by_id = {n["id"]: n for n in g.nodes}
    mul_runs = [
        e["node"]
        for e in g.events
        if e["kind"] == "run" and by_id[e["node"]]["op"] == "MulBackward0"
    ]
    order_of = {by_id[i]["order"]: i for i in mul_runs}
    assert len(mul_runs) == 3
    # hooks fire as each Mul node starts; the events list those nodes in the same order
    assert [sorted(order_of).index(by_id[i]["order"]) for i in mul_runs] == fired


def test_snapshot_without_trace_knows_leaves_values_but_not_intermediate_ones():
    a = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (a * 3).sum()
    g = snapshot(y, names={"a": a, "y": y})
    assert [n["label"] for n in g.nodes] == ["a", "Mul", "y = Sum", "y"]
    assert g.node("n1")["value"] is None  # nobody kept the intermediate tensor a * 3
    assert g.node("n0")["value"]["values"] == [1.0, 2.0]
    assert g.events == []


def test_snapshot_after_backward_reads_named_results_and_retained_grads():
    """Lesson 01 draws e's graph after e.backward(): c, d, e are still held, c retains its grad."""
    a = ag.tensor(2.0, requires_grad=True)
    b = ag.tensor(6.0, requires_grad=True)
    c = a + b
    d = b + 1
    e = c * d
    c.retain_grad()
    e.backward()
    g = snapshot(e, names={"a": a, "b": b, "c": c, "d": d, "e": e})
    by_label = {n["label"]: n for n in g.nodes}
    values = {
        label: by_label[label]["value"]["values"] for label in ("c = Add", "d = Add", "e = Mul")
    }
    assert values == {"c = Add": 8.0, "d = Add": 7.0, "e = Mul": 56.0}
    assert by_label["c = Add"]["grad"]["values"] == 7.0  # retain_grad() kept it
    assert by_label["d = Add"]["grad"] is None  # not retained: backward did not keep it
    assert by_label["b"]["grad"]["values"] == 15.0
    # backward freed what the nodes saved: no value is marked as saved any more
    assert by_label["e = Mul"]["saved_freed"] and not any(n["is_saved"] for n in g.nodes)
    unnamed = {n["label"]: n for n in snapshot(e).nodes}
    assert unnamed["Mul"]["value"]["values"] == 56.0  # a root's own op: read from the root
    assert unnamed["Add"]["value"] is None  # c and d unnamed: nothing says they are still held


def test_names_first_alias_wins_and_private_names_are_ignored():
    a = ag.tensor(1.0, requires_grad=True)
    y = a * 2
    g = snapshot(y, names={"_hidden": a, "first": a, "second": a, "y": y})
    assert g.node("n0")["label"] == "first"


def test_scopes_are_recorded_as_slash_paths():
    with record() as t:
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        with ag.autograd.scope("mlp"):
            with ag.autograd.scope("layer1"):
                h = (x * 2).relu()
            out = h.sum()
    g = t.graph(out)
    scopes = {n["label"]: n["scope"] for n in g.nodes if n["kind"] == "op"}
    assert scopes == {"Mul": "mlp/layer1", "Relu": "mlp/layer1", "Sum": "mlp"}


def test_trace_roots_default_to_results_nothing_consumed():
    with record() as t:
        x = ag.tensor(3.0, requires_grad=True)
        y = x * x
        z = y + 1
    g = t.graph()
    assert g.nodes[-1]["role"] == "output" and g.nodes[-1]["value"]["values"] == 10.0
    assert [n["label"] for n in g.nodes] == ["tensor", "Mul", "Add", "output"]
    del z


def test_same_graph_built_twice_gives_identical_data():
    first = seed_example()
    second = seed_example()
    one = first[0].graph(first[1]["e"], names=first[1]).to_dict()
    two = second[0].graph(second[1]["e"], names=second[1]).to_dict()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_summaries_are_json_safe_and_summarize_big_tensors():
    s = summarize(ag.tensor([1.0, float("nan"), float("inf")]))
    assert s["values"] == [1.0, "nan", "inf"] and s["max"] == "nan"
    json.dumps(s)
    big = summarize(ag.arange(100).float())
    assert big["values"] is None and big["numel"] == 100
    assert (big["min"], big["max"], big["mean"]) == (0.0, 99.0, 49.5)
    assert big["norm"] == pytest.approx(float(np.sqrt((np.arange(100.0) ** 2).sum())), rel=1e-6)


def test_a_deep_chain_snapshots_without_recursion():
    x = ag.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    g = snapshot(y)
    assert len(g.nodes) == 5002  # the leaf, 5000 ops, the output


def test_snapshot_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="snapshot\\(\\) draws tensors"):
        snapshot([1, 2, 3])


def test_unknown_node_id_is_a_clear_error():
    t, v = seed_example()
    with pytest.raises(KeyError, match="no node 'n99'"):
        t.graph(v["e"]).node("n99")


def test_trace_graph_keeps_results_that_are_already_gone():
    with record() as t:
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()  # neither x * x nor its sum is kept in a variable
    g = t.graph()
    assert [n["label"] for n in g.nodes] == ["tensor", "Mul", "Sum"]
    assert g.node("n2")["value"]["values"] == 5.0  # summarized when it was computed
    assert [e["kind"] for e in g.events][:2] == ["run", "send"]


def test_local_derivative_values_at_this_step_match_pytorch():
    """Each elementwise op carries its local derivative's value at this forward pass, next to the
    formula: d tanh(x)/dx = 1 - tanh(x)² = 0.5 where tanh(x)² = 0.5. Checked against PyTorch."""
    torch = pytest.importorskip("torch")
    x0 = float(np.arctanh(np.sqrt(0.5)))
    with record() as t:
        x = ag.tensor(x0, requires_grad=True, dtype=ag.float64)
        w = ag.tensor([1.5, -2.0, 0.25], requires_grad=True, dtype=ag.float64)
        y = x.tanh()
        z = (w * y).exp()
        z.sum().backward()
    g = t.graph(names={"x": x, "w": w, "y": y, "z": z})
    by_label = {n["label"]: n for n in g.nodes}
    assert by_label["y = Tanh"]["derivative_value"] == "d tanh(x)/dx = 1 - tanh(x)² = 0.5"

    tx = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    tw = torch.tensor([1.5, -2.0, 0.25], dtype=torch.float64, requires_grad=True)
    ty = tx.tanh()
    (slope,) = torch.autograd.grad(ty, tx, retain_graph=True)
    assert summary_text(summarize(slope.numpy())) == "0.5"
    mul = by_label["Mul"]
    (d_w,) = torch.autograd.grad((tw * ty).sum(), tw, retain_graph=True)
    assert mul["derivative_value"] == (
        f"d(self * other)/d(self) = other = {summary_text(summarize(d_w.numpy()))},"
        f"  d/d(other) = self = [1.5, -2., 0.25]"
    )
    exp = by_label["z = Exp"]
    want = torch.exp(tw * ty).detach().numpy()  # d exp(u)/du = exp(u)
    assert exp["derivative_value"].startswith("d exp(x)/dx = exp(x) = [")
    shown = exp["derivative_value"].split("= exp(x) = ")[1].split("]")[0].strip("[").split(", ")
    assert np.allclose([float(v) for v in shown], want, rtol=1e-3)
    # ops that mix elements have no one number per element: the formula only
    assert by_label["Sum"]["derivative_value"] is None
    assert all(n["derivative_value"] is None for n in g.nodes if n["kind"] == "tensor")


def test_local_derivative_values_record_nothing_and_skip_numbers():
    """Computing the values runs backward formulas under no_grad: no extra nodes are recorded,
    and an input that is a plain number (the 2 of x * 2) gets no value."""
    with record() as t:
        x = ag.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
    g = t.graph(names={"x": x, "y": y})
    assert [n["op"] for n in g.nodes if n["kind"] == "op"] == ["MulBackward0", "SumBackward0"]
    mul = next(n for n in g.nodes if n["op"] == "MulBackward0")
    assert (
        mul["derivative_value"] == "d(self * other)/d(self) = other = [2., 2.],  d/d(other) = self"
    )
    s = snapshot(y, names={"x": x, "y": y})  # no recording: read from the live saved tensors
    live = next(n for n in s.nodes if n["op"] == "MulBackward0")
    assert live["derivative_value"] == mul["derivative_value"]


def _op_table_cases():
    from autograd_lab.ops.table import OPS

    return [pytest.param(spec, id=spec.name) for spec in OPS]


@pytest.mark.parametrize("spec", _op_table_cases())
def test_every_op_records_and_its_local_derivative_is_its_gradient(spec):
    """Recording never breaks an op of the table, and the local derivative's value it shows is
    what backward multiplies by: for an elementwise op with same-shape inputs, d out_i / d x_i
    is the gradient of out.sum() (the engine's gradients are checked against PyTorch elsewhere)."""
    from test_op_table import DOMAINS

    from autograd_lab.viz.graph import local_derivative_values

    if isinstance(spec.shapes, str):
        shapes = [(2, 3)] * spec.arity
    else:
        shapes = spec.shapes[0]
    rng = np.random.default_rng(0)
    arrays = [np.asarray(DOMAINS[spec.domain](rng, s), dtype=np.float64) for s in shapes]
    xs = [ag.tensor(a, dtype=ag.float64, requires_grad=True) for a in arrays]
    with record() as r:
        out = spec.call(ag, *xs)
    out = out[0] if isinstance(out, (tuple, list)) else out
    node = out.grad_fn
    values = local_derivative_values(node, max_values=64)
    out.sum().backward()
    r.graph()  # the snapshot is made without error
    if values is None:
        return  # not elementwise: no one number per element
    for (next_node, _), value in zip(node.next_functions, values):
        x = getattr(next_node, "variable", None)  # an input straight from a leaf (2 / a is not)
        if value is not None and x is not None and list(x.shape) == list(out.shape):
            want = summarize(x.grad, max_values=64)["values"]
            assert np.allclose(value["values"], want, rtol=1e-5), (spec.name, value, want)
