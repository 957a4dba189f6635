"""Repeated blocks (viz/repeats.py): found by structure, folded into one box "×N", opened again.

The browser side (the "×N" box, its click, the search box) is tests/test_browser_navigate.py.
"""

import pytest
import traitlets

import autograd_lab as ag
from autograd_lab import nn
from autograd_lab.autograd import scope
from autograd_lab.viz import layout, record
from autograd_lab.viz.repeats import find_repeats, fold


class Block(nn.Module):
    """A residual block, as a transformer stacks them: x + tanh(fc(x))."""

    def __init__(self, width=4):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = nn.Tanh()

    def forward(self, x):
        return x + self.act(self.fc(x))


def stacked(blocks):
    """The graph of `blocks` identical blocks and a head, trained one step's backward."""
    ag.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(blocks)], nn.Linear(4, 1))
    with record() as r:
        x = ag.randn(2, 4)
        loss = model(x).sum()
        loss.backward()
    return r.graph(loss, names={"x": x, "loss": loss})


def rnn(steps):
    """One Linear cell applied at every step: h = tanh(cell(x[t]) + h)."""
    ag.manual_seed(0)
    cell = nn.Linear(3, 3)
    with record() as r:
        h = ag.zeros(1, 3)
        xs = ag.randn(steps, 1, 3)
        for t in range(steps):
            h = (cell(xs[t]) + h).tanh()
        h.sum().backward()
    return r.graph(h)


def summary(graph):
    return [(r["name"], r["kind"], r["count"], r["each"], r["nodes"]) for r in find_repeats(graph)]


def test_identical_blocks_of_a_sequential_are_one_repeat():
    graph = stacked(12)
    (repeat,) = find_repeats(graph)
    assert repeat == {
        "name": "Sequential/0 (Block) … 11 (Block) ×12",
        "kind": "siblings",
        "scopes": [f"Sequential/{i} (Block)" for i in range(12)],
        "count": 12,
        "each": 3,
        "nodes": 36,
    }
    # each block: its Linear's Addmm, the Tanh, the residual Add (its weights are leaves, drawn
    # with it but made outside it); the first block reads x, which needs no gradient
    inside = [n for n in graph.nodes if (n["scope"] or "").startswith("Sequential/3 (Block)")]
    assert [n["op"] for n in inside] == ["AddmmBackward0", "TanhBackward0", "AddBackward0"]


def test_scopes_named_in_a_loop_repeat_and_the_input_joining_the_first_does_not_break_it():
    with record() as r:
        x = ag.ones(3, requires_grad=True)  # drawn inside block0, its only reader
        h = x
        for i in range(5):
            with scope(f"block{i}"):
                h = (h * 2).tanh()
    graph = r.graph(h)
    assert summary(graph) == [("block0 … block4 ×5", "siblings", 5, 2, 10)]


def test_only_consecutive_blocks_of_the_same_shapes_repeat():
    with record() as r:
        h = ag.ones(1, 4, requires_grad=True)
        for i, (rows, cols) in enumerate([(4, 4), (4, 4), (4, 4), (4, 2), (2, 2), (2, 2)]):
            with scope(f"layer{i}"):
                h = (h @ nn.Parameter(ag.ones(rows, cols))).tanh()
    # layer3 makes the same shapes as layer4 but reads a 4x2 weight: not the same block
    assert summary(r.graph(h)) == [
        ("layer0 … layer2 ×3", "siblings", 3, 2, 6),
        ("layer4 … layer5 ×2", "siblings", 2, 2, 4),
    ]


def test_a_cell_called_at_every_step_repeats_as_calls():
    assert summary(rnn(7)) == [("Linear ×7", "calls", 7, 1, 7)]


def test_the_same_op_twice_in_one_call_is_not_a_repeat():
    with record() as r:
        x = ag.ones(3, requires_grad=True)
        with scope("double"):
            y = x.tanh().tanh()  # reads no weights: one call, not two
    assert find_repeats(r.graph(y)) == []


def test_a_graph_without_scopes_has_no_repeats():
    with record() as r:
        y = ag.ones(2, requires_grad=True)
        for _ in range(10):
            y = (y * 1.01).tanh()
    assert find_repeats(r.graph(y)) == []


def test_fold_draws_a_repeat_as_one_collapsed_box():
    graph = stacked(12)
    (repeat,) = find_repeats(graph)
    folded = fold(graph.to_dict(), [repeat["name"]])
    moved = [n for n in folded["nodes"] if n["scope"] == repeat["name"]]
    # the 36 nodes made in the blocks and the 24 weights and biases they alone read
    assert len(moved) == 36 + 24
    boxes = layout(folded, collapsed=[repeat["name"]])
    (group,) = [g for g in boxes["groups"] if g["scope"] == repeat["name"]]
    assert group["collapsed"] and group["count"] == 60
    assert len(boxes["nodes"]) == len(graph.nodes) - 60 + 1
    assert fold(graph.to_dict(), []) == graph.to_dict()


def test_repeats_are_found_fast_in_a_big_graph():
    import time

    graph = stacked(200)
    start = time.perf_counter()
    (repeat,) = find_repeats(graph)
    elapsed = time.perf_counter() - start
    assert repeat["count"] == 200
    assert len(graph.nodes) == 200 * 5 + 5  # 3 ops, 2 weights a block; the head's 3, Sum, loss
    assert elapsed < 1.0, f"find_repeats took {elapsed:.2f} s on {len(graph.nodes)} nodes"


# ---- the widget's side: which repeats are folded, and opening them ------------------------------

widget = pytest.importorskip("autograd_lab.viz.widget", reason="the widget needs anywidget")


def test_a_big_graph_starts_folded_and_a_small_one_open():
    graph = stacked(12)
    big = widget.GraphWidget(graph, max_nodes=50, collapsed=[])
    name = "Sequential/0 (Block) … 11 (Block) ×12"
    assert big.folded == [name]
    assert [r["name"] for r in big.repeats] == [name]
    groups = {g["scope"]: g["collapsed"] for g in big.graph["layout"]["groups"]}
    assert groups[name] is True
    # `collapsed` keeps real scopes only: the folded blocks, one box each where nothing folds them
    # (the static SVG of the widget's output)
    assert big.collapsed == [f"Sequential/{i} (Block)" for i in range(12)]
    assert big.graph["repeats"][0]["folded"] is True
    # 60 nodes in the one box: 12 blocks and their weights
    assert len(big.graph["nodes"]) == len(graph.nodes) - 60
    small = widget.GraphWidget(graph)
    assert small.folded == []
    assert len(small.graph["nodes"]) == len(graph.nodes)
    assert widget.GraphWidget(graph, folded=True).folded == [name]
    # the default rule for a big graph also collapses the top-level scope: opened, it shows "×12"
    default = widget.GraphWidget(graph, max_nodes=50)
    assert default.collapsed == ["Sequential"] and default.folded == [name]
    default.collapsed = []
    groups = {g["scope"]: g["collapsed"] for g in default.graph["layout"]["groups"]}
    assert groups == {"Sequential": False, name: True, "Sequential/12 (Linear)": False}


def test_selecting_a_node_inside_a_folded_repeat_opens_it():
    graph = stacked(12)
    w = widget.GraphWidget(graph, folded=True)
    tanh = [n["id"] for n in graph.nodes if n["op"] == "TanhBackward0"][5]
    assert tanh in w.graph["layout"]["hidden"]
    w.selected = tanh
    assert w.folded == []
    assert w.selected == tanh
    assert tanh in w.graph["layout"]["nodes"]
    assert w.collapsed == []  # 36 nodes: every block opens, not only the one around the Tanh
    big = widget.GraphWidget(graph, folded=True, max_nodes=30, collapsed=[])
    big.selected = tanh  # 36 nodes > 30: only the block around it opens
    assert set(big.collapsed) == {f"Sequential/{i} (Block)" for i in range(12) if i != 5}
    assert tanh in big.graph["layout"]["nodes"]


def test_folding_again_and_opening_a_big_repeat_block_by_block():
    graph = stacked(12)
    w = widget.GraphWidget(graph, max_nodes=30, folded=True, collapsed=[])
    name = w.repeats[0]["name"]
    w.folded = []  # 36 nodes > max_nodes: each block opens as its own box
    shut = {g["scope"] for g in w.graph["layout"]["groups"] if g["collapsed"]}
    assert shut == {f"Sequential/{i} (Block)" for i in range(12)}
    w.folded = [name]
    shut = [g["scope"] for g in w.graph["layout"]["groups"] if g["collapsed"]]
    assert name in shut


def test_an_unknown_repeat_name_is_a_clear_error():
    w = widget.GraphWidget(stacked(3))
    with pytest.raises(traitlets.TraitError, match=r"no repeated block 'blocks'.*w\.repeats"):
        w.folded = ["blocks"]
    w2 = widget.GraphWidget(rnn(2).to_dict())
    with pytest.raises(traitlets.TraitError, match="Linear ×2"):
        w2.folded = ["Linear"]


# ---- PyTorch's graph of the same model repeats the same way -------------------------------------


def test_a_torch_sequential_repeats_like_ours():
    torch = pytest.importorskip("torch", reason="PyTorch (the test oracle) is not installed")
    from autograd_lab.viz import record_torch

    class TorchBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.act = torch.nn.Tanh()

        def forward(self, x):
            return x + self.act(self.fc(x))

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[TorchBlock() for _ in range(12)], torch.nn.Linear(4, 1))
    with record_torch() as r:
        loss = model(torch.randn(2, 4)).sum()
        loss.backward()
    (repeat,) = find_repeats(r.graph(loss))
    assert repeat["name"] == "Sequential/0 (TorchBlock) … 11 (TorchBlock) ×12"
    assert repeat["count"] == 12 and repeat["kind"] == "siblings"
