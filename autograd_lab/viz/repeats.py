"""Repeated blocks: the same module applied N times, found in a graph and drawn once as "×N".

    >>> import autograd_lab as ag
    >>> from autograd_lab.autograd import scope
    >>> from autograd_lab.viz import record
    >>> from autograd_lab.viz.repeats import find_repeats
    >>> with record() as r:
    ...     h = ag.ones(3, requires_grad=True)
    ...     for i in range(4):
    ...         with scope(f"block{i}"):
    ...             h = (h * 2).tanh()
    >>> [(rep["name"], rep["count"], rep["each"]) for rep in find_repeats(r.graph(h))]
    [('block0 … block3 ×4', 4, 2)]

A transformer has 12 identical blocks, an RNN applies one cell at every step: a big graph is
mostly the same few nodes again and again. Two kinds of repetition are found:
  - siblings: consecutive scopes under one parent ("block0", "block1", ... or a Sequential's
    "0 (Block)", "1 (Block)", ...) holding the same nodes: the same ops, in the same order, with
    the same shapes, in the same sub-scopes, wired the same way inside;
  - calls: one scope whose ops are the same sequence k times over, as when an RNN cell module is
    called once per step (every call records into the same scope, "cell (RNNCell)").
A repeat is folded by drawing all its nodes as one collapsed box named "block0 … block3 ×4"
(`fold`); the widget opens it on a click. The names, counts and order depend only on the graph.
"""

from .layout import clusters_of, drawn_scopes


def find_repeats(graph, scopes=None):
    """The repeated blocks of a Snapshot (or its `to_dict()`), outermost first, as dicts:
    {"name": the folded box's scope path, "kind": "siblings" | "calls", "scopes": the scope
    paths repeated (one for "calls"), "count": N, "each": nodes made in one repetition (ops, for
    "calls"), "nodes": all of them}. Leaves drawn with a block (its weights) are not counted."""
    nodes = graph["nodes"] if isinstance(graph, dict) else graph.nodes
    edges = graph["edges"] if isinstance(graph, dict) else graph.edges
    scopes = drawn_scopes(graph) if scopes is None else scopes  # a caller may know them already
    clusters = clusters_of(graph)  # fused kernels are compile()'s groups, not a model's modules
    members = {}  # scope path -> indices of the nodes drawn inside it (sub-scopes included)
    for i, scope in enumerate(scopes):
        parts = scope.split("/") if scope else []
        for k in range(1, len(parts) + 1):
            members.setdefault("/".join(parts[:k]), []).append(i)
    position = {node["id"]: i for i, node in enumerate(nodes)}
    inputs = {}  # target index -> [(source index, input number)]
    for e in edges:
        inputs.setdefault(position[e["target"]], []).append((position[e["source"]], e["input"]))

    def own(path):
        """The nodes made inside a scope: not the leaves that joined it to be drawn there (the
        model's input joins the first block that reads it, and would make it look different)."""
        return [i for i in members[path] if _within(nodes[i].get("scope"), path)]

    def signature(path):
        """What makes two blocks the same: their nodes in order, and the edges inside them."""
        inside = own(path)
        where = {i: k for k, i in enumerate(inside)}
        cut = len(path) + 1
        rows = []
        for i in inside:
            node = nodes[i]
            shape = tuple(node.get("shape") or ())
            here = scopes[i][cut:] if scopes[i] != path else ""
            # by input number: inside, the node that feeds it; from outside, a parameter's shape
            # (a weight of another shape makes another block, even where the results' shapes
            # agree), never the data's: the first block reads the model's input, the others the
            # block before, and an input that needs no gradient is no node at all
            wires = tuple(
                sorted(
                    (k, where[s]) if s in where else (k, tuple(nodes[s].get("shape") or ()))
                    for s, k in inputs.get(i, ())
                    if s in where or nodes[s].get("role") == "parameter"
                )
            )
            rows.append((node["kind"], node.get("op"), node.get("role"), shape, here, wires))
        return tuple(rows)

    children = {}  # parent path ("" at the top) -> its direct sub-scopes, in order of first node
    for path in members:
        if path in clusters:
            continue
        parent = path.rpartition("/")[0]
        children.setdefault(parent, []).append(path)
    found = []
    for paths in children.values():
        paths.sort(key=lambda p: members[p][0])
        found += _sibling_runs(paths, signature, own)
    explained = {p for rep in found for p in rep["scopes"]}
    for path in members:
        if path in clusters or any(p in explained for p in prefixes(path)):
            continue
        if any(parent_of(q) == path for q in explained):
            continue  # its children already repeat: "block0 … block11 ×12" says it
        ops = [i for i in own(path) if nodes[i]["kind"] == "op"]
        calls = _calls(path, ops, nodes, scopes, inputs)
        if calls:
            found.append(calls)
    found.sort(key=lambda rep: (rep["scopes"][0].count("/"), members[rep["scopes"][0]][0]))
    return found


def parent_of(path):
    return path.rpartition("/")[0]


def _within(scope, path):
    return scope is not None and (scope == path or scope.startswith(path + "/"))


def prefixes(path):
    """Every scope a path sits in, outermost first: "a/b" gives ["a", "a/b"]; None gives []."""
    if not path:
        return []
    parts = path.split("/")
    return ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]


def _sibling_runs(paths, signature, own):
    """Runs of two or more consecutive sibling scopes with the same signature."""
    runs, start = [], 0
    signatures = [signature(p) for p in paths]
    for end in range(1, len(paths) + 1):
        if end < len(paths) and signatures[end] == signatures[start]:
            continue
        if end - start >= 2:
            scopes = paths[start:end]
            parent = parent_of(scopes[0])
            first, last = scopes[0].rpartition("/")[2], scopes[-1].rpartition("/")[2]
            name = f"{first} … {last} ×{len(scopes)}"
            each = len(own(scopes[0]))
            runs.append(
                {
                    "name": f"{parent}/{name}" if parent else name,
                    "kind": "siblings",
                    "scopes": scopes,
                    "count": len(scopes),
                    "each": each,
                    "nodes": each * len(scopes),
                }
            )
        start = end
    return runs


def _calls(path, ops, nodes, scopes, inputs):
    """One scope whose ops are one sequence k >= 2 times over (a module called at every step).

    Each repetition must read the same leaves (the module's weights) in the same places: that
    tells k calls of one module from one call that happens to apply an op twice (tanh(tanh(x)))."""
    cut = len(path) + 1
    sequence = []
    for i in ops:
        leaves = tuple(
            sorted(
                (nodes[s]["id"], k) for s, k in inputs.get(i, ()) if nodes[s]["kind"] == "tensor"
            )
        )
        sequence.append(
            (nodes[i].get("op"), tuple(nodes[i].get("shape") or ()), scopes[i][cut:], leaves)
        )
    n = len(sequence)
    for period in range(1, n // 2 + 1):
        reads_weights = any(row[3] for row in sequence[:period])
        if reads_weights and n % period == 0 and sequence == sequence[:period] * (n // period):
            count = n // period
            return {
                "name": f"{path} ×{count}",
                "kind": "calls",
                "scopes": [path],
                "count": count,
                "each": period,
                "nodes": n,
            }
    return None


def fold(graph, names, repeats=None, scopes=None):
    """A copy of the graph dict (`Snapshot.to_dict()`) in which the repeats named in `names`
    (from `find_repeats`) each become one scope, their name: collapsed, it is one box "×N".

    The copy's nodes are new dicts only where their scope changes. A leaf a folded block alone
    uses (its weights) joins the box, through the layout's rule for leaves. `repeats` and
    `scopes`: `find_repeats(graph)` and `drawn_scopes(graph)`, where the caller has them."""
    if not names:
        return graph
    scopes = drawn_scopes(graph) if scopes is None else scopes
    repeats = find_repeats(graph, scopes) if repeats is None else repeats
    repeats = [rep for rep in repeats if rep["name"] in set(names)]
    rename = {}  # old scope path -> the folded name that replaces it
    for rep in repeats:  # outermost first: a repeat inside a folded one is folded with it
        for path in rep["scopes"]:
            rename.setdefault(path, rep["name"])
    if not rename:
        return graph
    nodes = []
    for node, scope in zip(graph["nodes"], scopes):
        new = next((rename[p] for p in prefixes(scope) if p in rename), None)
        nodes.append({**node, "scope": new} if new is not None else node)
    return {**graph, "nodes": nodes}
