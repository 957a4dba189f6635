"""Two snapshots of the same computation, node by node: which nodes match, and what differs.

    >>> from autograd_lab.viz import Snapshot
    >>> from autograd_lab.viz.compare import compare
    >>> x = {"id": "n0", "kind": "tensor", "label": "x", "op": None, "name": "x", "role": "input"}
    >>> f = {"id": "n1", "kind": "op", "label": "Exp", "op": "ExpBackward0", "name": None}
    >>> g = dict(f, op="SinBackward0", label="Sin")
    >>> edge = [{"source": "n0", "target": "n1", "input": 0}]
    >>> compare(Snapshot([x, f], edge), Snapshot([x, g], edge)).differences[0]["text"]
    'op: ExpBackward0 in the left graph, SinBackward0 in the right graph'

How nodes are paired: from the end of each graph (the output tensors, then the ops that made
them) backwards along the edges, input number by input number, as backward itself walks. Where
one side has an op the other does not (PyTorch's `TBackward0` in front of a weight that our
`Addmm` reads directly), that op is stepped over and counted as "only on one side". Leaves still
unpaired at the end are paired by name.

What differs, per pair: "name" (the op, or the variable name), "structure" (the inputs are not
the same nodes, or a node has no partner), "value" and "grad" (beyond float32 rounding).
"""

from dataclasses import dataclass, field

import numpy as np

KINDS = ("name", "structure", "value", "grad")


@dataclass
class Comparison:
    """The pairing of two snapshots (`left` id -> `right` id) and their differences."""

    pairs: dict = field(default_factory=dict)
    only_left: list = field(default_factory=list)
    only_right: list = field(default_factory=list)
    differences: list = field(default_factory=list)  # {"left", "right", "kinds", "text"}
    order: str | None = None  # how the backward passes' orders differ, or None: the same

    @property
    def same(self):
        return not self.differences and self.order is None

    def marks(self, side):
        """{node id: [kinds]} for side "left" or "right": what to mark on that picture."""
        marked = {}
        for difference in self.differences:
            node = difference[side]
            if node is not None:
                marked.setdefault(node, []).extend(difference["kinds"])
        return {node: sorted(set(kinds), key=KINDS.index) for node, kinds in marked.items()}

    def __repr__(self):
        if self.same:
            return f"Comparison: the same graph ({len(self.pairs)} nodes paired)"
        counts = {k: sum(k in d["kinds"] for d in self.differences) for k in KINDS}
        parts = [f"{n} {k}" for k, n in counts.items() if n]
        parts += ["the backward order"] if self.order else []
        return f"Comparison: {len(self.pairs)} nodes paired; differences: {', '.join(parts)}"


def compare(
    left,
    right,
    sides=("the left graph", "the right graph"),
    rtol=1e-4,
    atol=1e-6,
    same_op_only=False,
    variable_names=True,
):
    """Pair the nodes of two snapshots and list what differs (see the module's docstring).
    `sides` names the two graphs in the texts, e.g. ("PyTorch", "autograd_lab").

    `same_op_only=True` pairs only nodes of the same kind and op: where the graphs part ways
    (one more loop step, another branch), the nodes are "only on one side" rather than paired
    and marked "name" (diff.py). `variable_names=False` does not report the variable names of
    paired nodes as differences (`short` and `long` for two runs' results); leaves are still
    paired by name."""
    a, b = _Graph(left), _Graph(right)
    both = _Both(*sides)
    result = Comparison()
    pairs, paired_right = result.pairs, set()
    queue = list(zip(a.outputs(), b.outputs()))
    while queue:  # breadth first: nearer the output is paired first
        x, y = queue.pop(0)
        x, y = _step_over(a, x, b, y)
        if x in pairs or y in paired_right:
            continue
        if same_op_only and not a.same_kind(x, b.node[y]):
            continue  # the graphs part ways here: neither node has a partner
        pairs[x] = y
        paired_right.add(y)
        inputs_x, inputs_y = a.inputs(x), b.inputs(y)
        for k in sorted(set(inputs_x) & set(inputs_y)):
            queue.append((inputs_x[k], inputs_y[k]))
    _pair_leaves_by_name(a, b, pairs)

    paired_right = set(pairs.values())
    result.only_left = [n for n in a.ids if n not in pairs]
    result.only_right = [n for n in b.ids if n not in paired_right]
    for x, y in pairs.items():
        kinds, texts = _differences(a, x, b, y, pairs, both, rtol, atol, variable_names)
        if kinds:
            result.differences.append(
                {"left": x, "right": y, "kinds": kinds, "text": "; ".join(texts)}
            )
    for x in result.only_left:
        text = f"only in {sides[0]}: nothing in {sides[1]} matches it"
        result.differences.append({"left": x, "right": None, "kinds": ["structure"], "text": text})
    for y in result.only_right:
        text = f"only in {sides[1]}: nothing in {sides[0]} matches it"
        result.differences.append({"left": None, "right": y, "kinds": ["structure"], "text": text})
    result.order = _order_difference(left, right, pairs, both)
    return result


class _Graph:
    """A snapshot with its nodes by id and each node's inputs by input number."""

    def __init__(self, snapshot):
        data = snapshot if isinstance(snapshot, dict) else snapshot.to_dict()
        self.ids = [n["id"] for n in data["nodes"]]
        self.node = {n["id"]: n for n in data["nodes"]}
        self.events = data.get("events", [])
        self._inputs = {}
        for edge in data["edges"]:
            self._inputs.setdefault(edge["target"], {})[edge["input"]] = edge["source"]

    def inputs(self, node_id):
        return self._inputs.get(node_id, {})

    def outputs(self):
        """Where backward starts: the output tensors; with none drawn, the ops nothing reads."""
        roots = [n for n in self.ids if self.node[n].get("role") == "output"]
        if roots:
            return roots
        read = {source for inputs in self._inputs.values() for source in inputs.values()}
        return [n for n in self.ids if n not in read]

    def same_kind(self, node_id, other):
        mine = self.node[node_id]
        return mine["kind"] == other["kind"] and (
            mine["kind"] == "tensor" or mine["op"] == other["op"]
        )


def _step_over(a, x, b, y):
    """When x and y are not the same kind of node but one side's node is an op with one input
    that is (a TBackward0 before a weight), pair across it: that op has no partner. So is an
    output tensor on one side only (a result the other side's code did not keep)."""
    nx, ny = a.node[x], b.node[y]
    if a.same_kind(x, ny):
        return x, y
    if _passes_through(ny) and len(b.inputs(y)) == 1:
        (inner,) = b.inputs(y).values()
        if a.same_kind(x, b.node[inner]):
            return x, inner
    if _passes_through(nx) and len(a.inputs(x)) == 1:
        (inner,) = a.inputs(x).values()
        if b.same_kind(y, a.node[inner]):
            return inner, y
    return x, y


def _passes_through(node):
    return node["kind"] == "op" or node.get("role") == "output"


def _pair_leaves_by_name(a, b, pairs):
    paired_right = set(pairs.values())
    names = {}
    for y in b.ids:
        node = b.node[y]
        if y not in paired_right and node["kind"] == "tensor" and node.get("name"):
            names.setdefault(node["name"], y)
    for x in a.ids:
        node = a.node[x]
        if x not in pairs and node["kind"] == "tensor" and names.get(node.get("name")):
            pairs[x] = names.pop(node["name"])


class _Both:
    """Says one thing of both graphs: "T in PyTorch, 0.weight in autograd_lab"."""

    def __init__(self, left, right):
        self.left, self.right = left, right

    def __call__(self, x, y):
        return f"{x} in {self.left}, {y} in {self.right}"


def _differences(a, x, b, y, pairs, both, rtol, atol, variable_names=True):
    nx, ny = a.node[x], b.node[y]
    kinds, texts = [], []
    if nx["kind"] != ny["kind"] or nx.get("op") != ny.get("op"):
        kinds.append("name")
        texts.append("op: " + both(nx.get("op") or "a tensor", ny.get("op") or "a tensor"))
    elif variable_names and nx.get("name") != ny.get("name"):
        kinds.append("name")
        texts.append("name: " + both(nx.get("name"), ny.get("name")))
    inputs_x, inputs_y = a.inputs(x), b.inputs(y)
    wrong = [
        k
        for k in sorted(set(inputs_x) | set(inputs_y))
        if pairs.get(inputs_x.get(k), "") != inputs_y.get(k)
    ]
    if wrong:
        kinds.append("structure")
        texts.extend(
            f"input {k}: " + both(_input_label(a, inputs_x, k), _input_label(b, inputs_y, k))
            for k in wrong
        )
    for what in ("value", "grad"):
        differs = _summaries_differ(nx.get(what), ny.get(what), both, rtol, atol)
        if differs:
            kinds.append(what)
            texts.append(f"{what}: {differs}")
    return kinds, texts


def _input_label(graph, inputs, k):
    return graph.node[inputs[k]]["label"] if k in inputs else "nothing"


def _summaries_differ(p, q, both, rtol, atol):
    """Why two value summaries differ, or None. A side that does not know it is not a difference."""
    if p is None or q is None:
        return None
    if list(p["shape"]) != list(q["shape"]):
        return "shape " + both(p["shape"], q["shape"])
    if p.get("values") is not None and q.get("values") is not None:
        x, y = _numbers(p["values"]), _numbers(q["values"])
        if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
            worst = float(np.nanmax(np.abs(x - y))) if x.size else 0.0
            return f"values differ by up to {worst:.3g}"
        return None
    for stat in ("min", "max", "mean", "norm"):  # big tensors: their statistics
        s, t = p.get(stat), q.get(stat)
        if s is None or t is None:
            continue
        if not np.allclose(_numbers(s), _numbers(t), rtol=rtol, atol=atol, equal_nan=True):
            return f"{stat} " + both(s, t)
    return None


def _numbers(values):
    """Summary values (with "nan"/"inf" as text) as a float64 array."""
    return np.asarray(values, dtype=object).astype(np.float64)


def _order_difference(left, right, pairs, both):
    """Whether the backward passes ran the same steps in the same order, seen through the pairs."""
    a = left if isinstance(left, dict) else left.to_dict()
    b = right if isinstance(right, dict) else right.to_dict()
    raw_a = [(e["kind"], e["node"], e["target"]) for e in a.get("events", [])]
    steps_a = [(kind, pairs.get(node), pairs.get(target)) for kind, node, target in raw_a]
    steps_b = [(e["kind"], e["node"], e["target"]) for e in b.get("events", [])]
    if not steps_a or not steps_b or steps_a == steps_b:
        return None  # one side not run (nothing to compare), or the same order
    for i, (p, q) in enumerate(zip(steps_a, steps_b)):
        if p != q:
            return f"backward step {i + 1}: " + both(_step_text(a, raw_a[i]), _step_text(b, q))
    return "backward: " + both(f"{len(steps_a)} steps", f"{len(steps_b)} steps")


def _step_text(graph, step):
    kind, node, target = step
    labels = {n["id"]: n["label"] for n in graph["nodes"]}
    text = f"{kind} {labels[node]}"
    return text + (f" -> {labels[target]}" if target is not None else "")
