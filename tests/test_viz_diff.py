"""diff(a, b): two graphs aligned, added/removed/changed nodes marked (viz/diff.py, marks.py)."""

import re

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.viz import GraphDiff, diff, record, to_svg
from autograd_lab.viz.marks import KINDS, mark


def model(x, w):
    """A data-dependent model: how many steps it takes depends on x."""
    h = x * w
    for _ in range(int(x.sum().item())):
        h = (h * w + x).tanh()
    return h.sum()


def two_runs():
    w = ag.tensor([1.5, -0.5], requires_grad=True)
    with record() as first:
        short = model(ag.tensor([1.0, 1.0]), w)  # 2 steps
        short.backward()
    grad_short = w.grad.numpy().copy()
    w.grad = None
    with record() as second:
        long = model(ag.tensor([1.5, 1.5]), w)  # 3 steps
        long.backward()
    return first, second, short, long, grad_short, w


def labels(graph, ids):
    return sorted(graph.node(i)["label"] for i in ids)


def test_one_more_loop_step_is_added_and_the_values_that_follow_change():
    first, second, short, long, _, w = two_runs()  # w is named here: diff() reads the names
    d = diff(first, second, sides=("run 1", "run 2"))
    # run 2's extra step (Mul, Add, Tanh) and its first h = x * w are only in run 2; run 1's
    # first Mul pairs with nothing of the same op at that depth
    assert labels(d.right, d.added) == ["Add", "Mul", "Mul", "Tanh"]
    assert labels(d.left, d.removed) == ["Mul"]
    assert repr(d) == "GraphDiff(run 1 -> run 2: 4 added, 1 removed, 8 changed, 9 paired)"
    # the outputs are paired: their value difference is the one between the two losses
    out_left = next(n["id"] for n in d.left.nodes if n["role"] == "output")
    change = next(c for c in d.changed if c["left"] == out_left)
    assert change["kinds"] == ["value"]  # the names (short, long) are not a difference
    gap = abs(short.item() - long.item())
    shown = float(re.search(r"differ by up to ([0-9.e-]+)", change["text"]).group(1))
    assert shown == pytest.approx(gap, abs=5e-4)  # printed to 3 digits
    # w is the same leaf in both runs: paired by name
    w_left = next(n["id"] for n in d.left.nodes if n["name"] == "w")
    assert d.right.node(d.pairs[w_left])["name"] == "w"


def test_the_marks_are_in_both_snapshots():
    first, second, *_ = two_runs()
    d = diff(first, second, sides=("run 1", "run 2"))
    assert {m["kind"] for m in d.left.marks.values()} == {"removed", "changed"}
    assert {m["kind"] for m in d.right.marks.values()} == {"added", "changed"}
    for node_id in d.added:
        assert d.right.marks[node_id] == mark("added", "added: only in run 2")
    for c in d.changed:
        assert d.left.marks[c["left"]]["letters"] == "".join(k[0].upper() for k in c["kinds"])
        assert d.right.marks[c["right"]]["text"] == c["text"]
    # the snapshots the diff was given are left unmarked
    assert not first.graph().marks


def test_another_branch_is_a_removed_op_and_an_added_one():
    x = ag.tensor([0.5, -1.0], requires_grad=True)
    a = x.exp().sum()
    b = x.sin().sum()
    d = diff(a, b, sides=("exp branch", "sin branch"))
    assert labels(d.left, d.removed) == ["Exp"]
    assert labels(d.right, d.added) == ["Sin"]
    # the sums are paired: their value is exp's sum against sin's sum
    change = next(c for c in d.changed if d.left.node(c["left"])["op"] == "SumBackward0")
    assert "value" in change["kinds"] and "structure" in change["kinds"]
    np.testing.assert_allclose(a.item(), np.exp([0.5, -1.0]).sum(), rtol=1e-6)


def test_the_same_graph_twice_is_the_same():
    w = ag.tensor([1.5, -0.5], requires_grad=True)
    d = diff(model(ag.tensor([1.0, 1.0]), w), model(ag.tensor([1.0, 1.0]), w))
    assert d.same and not d.added and not d.removed and not d.changed
    assert repr(d).endswith("the same graph, 10 nodes)")
    assert "The same graph" in d.to_svg()


def test_the_picture_frames_each_difference_in_its_colour():
    first, second, *_ = two_runs()
    d = diff(first, second, sides=("run 1", "run 2"))
    svg = d.to_svg()
    assert svg.count(f'stroke="{KINDS["added"][0]}" stroke-width="3"') == len(d.added)
    assert svg.count(f'stroke="{KINDS["removed"][0]}" stroke-width="3"') == len(d.removed)
    assert svg.count(f'stroke="{KINDS["changed"][0]}" stroke-width="3"') == 2 * len(d.changed)
    assert ">run 1</text>" in svg and ">run 2</text>" in svg
    assert "+ Tanh: only in run 2" in svg
    # the marks are the Snapshot's: to_svg of one side draws them too
    assert to_svg(d.right).count('stroke-width="3" rx="10" stroke-dasharray="6 3"') >= 4


def test_diff_says_what_it_needs():
    with pytest.raises(TypeError, match="its second argument is a int. Give a tensor"):
        diff(ag.tensor(1.0, requires_grad=True) * 2, 3)
    with pytest.raises(TypeError, match="sides names the two graphs"):
        diff(
            ag.tensor(1.0, requires_grad=True) * 2,
            ag.tensor(1.0, requires_grad=True) * 3,
            sides="ab",
        )
    with pytest.raises(ValueError, match="a mark's kind is one of"):
        mark("moved", "?")


def test_the_widget_steps_both_sides_through_the_alignment():
    pytest.importorskip("anywidget", reason="anywidget (the lab extra) is not installed")
    first, second, *_ = two_runs()
    d = diff(first, second, sides=("run 1", "run 2"))
    w = d.widget()
    assert isinstance(d, GraphDiff) and w.left.graph["marks"] == d.left.marks
    assert w.right.graph["marks"] == d.right.marks
    # the last forward step of run 1 (its Sum) shows run 2's Sum
    w.left.step = w.left.n_forward
    assert w.right.step == w.right.n_forward
    # the first backward step runs the Sum on both sides
    w.right.step = w.right.n_forward + 1
    assert w.left.step == w.left.n_forward + 1
    # a step of a node only run 2 has leaves run 1 where it was
    only = d.added[0]
    ids = [n["id"] for n in sorted(d.right.nodes, key=lambda n: n["order"]) if n["kind"] == "op"]
    before = w.left.step
    w.right.step = ids.index(only) + 1
    assert w.left.step == before
    # a gradient sent along an edge both graphs have: the other side shows the same edge's send
    back = {y: x for x, y in d.pairs.items()}
    sends = [
        (k, e)
        for k, e in enumerate(d.right.events)
        if e["kind"] == "send" and e["node"] in back and e["target"] in back
    ]
    k, event = sends[-1]
    w.right.step = w.right.n_forward + k + 1
    shown = d.left.events[w.left.step - w.left.n_forward - 1]
    assert (shown["kind"], shown["node"], shown["target"]) == (
        "send",
        back[event["node"]],
        back[event["target"]],
    )
    # the ends meet
    w.left.step = w.left.n_steps
    assert w.right.step == w.right.n_steps


def test_torch_against_ours():
    torch = pytest.importorskip("torch", reason="PyTorch (the test oracle) is not installed")
    a = torch.tensor([0.5, -1.0], requires_grad=True)
    b = ag.tensor([0.5, -1.0], requires_grad=True)
    theirs, ours = (a.tanh() * 2).sum(), (b.tanh() * 3).sum()
    d = diff(theirs, ours, sides=("PyTorch", "autograd_lab"))
    assert not d.added and not d.removed and len(d.pairs) == 5
    # drawn after the fact, only the results still held have values: the sums differ
    (change,) = [c for c in d.changed if d.left.node(c["left"])["op"] == "SumBackward0"]
    gap = abs(theirs.item() - ours.item())
    shown = float(re.search(r"differ by up to ([0-9.e-]+)", change["text"]).group(1))
    assert shown == pytest.approx(gap, abs=5e-3)


def test_eager_against_compiled():
    from autograd_lab.viz.compiled import compiled_view

    def f(x, w):
        return ((x * w).tanh() + x).sum()

    x = ag.tensor([0.5, -1.0, 2.0])
    w = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)
    compiled = ag.compile(f)
    compiled(x, w)
    with record() as eager:
        f(x, w)  # its result is not kept: the eager graph ends at Sum, the compiled one at %5
    d = diff(eager, compiled_view(compiled.current()), sides=("eager", "compiled"))
    # the same four ops, paired, and their values agree (no V). Only the compiled trace draws
    # x (%0: it needs no gradient, so eager's graph has no node for it) and the result (%5)
    ops = {d.left.node(x)["op"] for x in d.pairs if d.left.node(x)["kind"] == "op"}
    assert ops == {"MulBackward0", "TanhBackward0", "AddBackward0", "SumBackward0"}
    assert not d.removed and labels(d.right, d.added) == ["%0", "%5"]
    assert all(c["kinds"] == ["structure"] for c in d.changed)


def test_in_a_notebook_the_two_graphs_stack_in_the_column_with_an_image_copy():
    # side by side they would be scaled into the column and shrink their text; stacked, each is
    # wrapped to 880 px at full size, and the <img> copy shows in untrusted notebooks
    first, second, *_ = two_runs()
    d = diff(first, second, sides=("run 1", "run 2"))
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "image/svg+xml", "text/html"}
    svg = bundle["image/svg+xml"]
    width = float(re.search(r'width="([\d.]+)"', svg).group(1))
    assert width <= 880 and float(re.search(r'width="([\d.]+)"', d.to_svg()).group(1)) > width
    assert bundle["text/html"].startswith('<img src="data:image/svg+xml;base64,')
    title_1, title_2 = (
        float(re.search(rf'y="([\d.]+)"[^>]*>{t}<', svg).group(1)) for t in ("run 1", "run 2")
    )
    assert title_2 > title_1  # one under the other
    assert svg.count(f'stroke="{KINDS["added"][0]}" stroke-width="3"') == len(d.added)
    assert "+ Tanh: only in run 2" in svg
