"""Where each box goes: a deterministic layered layout of a graph snapshot, in pure Python.

    >>> from autograd_lab.viz.layout import layout
    >>> graph = {"nodes": [{"id": "n0", "kind": "tensor", "label": "a"},
    ...                    {"id": "n1", "kind": "op", "label": "Exp"}],
    ...          "edges": [{"source": "n0", "target": "n1", "input": 0}]}
    >>> boxes = layout(graph)["nodes"]
    >>> boxes["n0"]["x"] < boxes["n1"]["x"]  # data flows left to right
    True

The four steps of the classic method for drawing a DAG in layers (Sugiyama's), each a pass or a
few over the nodes and edges, so that 2,000 nodes take a few tens of milliseconds:
1. layers:      a node goes one column right of its furthest input (longest path from the inputs),
                then as far right as its consumers allow: a value is drawn just before its first use;
2. waypoints:   an edge that skips columns gets an invisible waypoint in every column it crosses,
                so it bends around the boxes there instead of running through them; but a tensor
                used many columns apart (`x` in `y = (y * 1.01).tanh() + x`, an RNN's weight) sends
                its long edges along one straight lane above the boxes instead (see `_choose_lanes`);
3. order:       in each column, sort the boxes by the mean position of their neighbours (the
                barycenter), sweeping right and left a few times, so that fewer edges cross;
4. coordinates: a column is as wide as its widest box; in a column, boxes get the height closest
                to their neighbours' that keeps their order and a gap between them (no overlaps).
Nodes made inside `autograd.scope("mlp")` are drawn inside a group box; a big graph shows each
top-level scope collapsed into one box ("scope:mlp"), and `expand()` opens one on demand.

Sizes are SVG pixels for a 12px monospace font, so a box's width follows from its text.
"""

import heapq
from bisect import bisect_right, insort

CHAR_W, LINE_H = 7.2, 15.0  # one character and one line of 12px monospace text
PAD_X, PAD_Y, MIN_W = 8.0, 6.0, 48.0  # text to box border; the narrowest box
LAYER_GAP = 48.0  # between columns: room for edges to bend (groups add their borders to it)
NODE_GAP, WAYPOINT_GAP = 14.0, 6.0  # between boxes of a column; next to an edge's waypoint
GROUP_PAD, GROUP_TITLE = 8.0, 14.0  # a group's border around its boxes; the band for its name
CLEARANCE = 4.0  # the least space between a group's border and anything outside the group
ZONE = 16.0  # the width over which a group's outline narrows from one column to the next
MARGIN = 12.0
SWEEPS = 4  # at most this many rounds of ordering (a sweep right, a sweep left): bounded time
Y_PASSES = 2  # at most this many rounds of pulling boxes towards their neighbours (both sides)
LANE_MIN_EDGES = 3  # a box with this many long edges out (or in) sends them along one lane
WAYPOINT_BUDGET = 2  # waypoints per box and edge at most; longer edges beyond it get lanes
LANE_CLEARANCE, LANE_GAP = 10.0, 8.0  # lanes: above the boxes they pass; between two lanes
LANE_SPACING = 6.0  # between two lanes' vertical lines in the gap between two columns


# ---- what a box says (its size follows from its text) ----------------------------------------------


def number_text(x, integer=False):
    """One number, short and stable: `7.` (a whole float, as PyTorch prints it), `0.5`, `1e-05`."""
    if x is None or isinstance(x, (str, bool)):  # nan and inf arrive as the strings "nan", "inf"
        return str(x)
    if integer:
        return str(int(x))
    if x == int(x) and abs(x) < 1e6:
        return f"{int(x)}."
    return f"{x:.4g}"


def _values_text(values, integer):
    if isinstance(values, list):
        return "[" + ", ".join(_values_text(v, integer) for v in values) + "]"
    return number_text(values, integer)


def shape_text(shape):
    """`[2, 3]`; a scalar (shape []) says so."""
    return f"[{', '.join(map(str, shape))}]" if shape else "scalar"


def summary_text(summary, dtype=None, max_numbers=4):
    """A tensor summary (see CONTRACT.md) in one short line: the values when few, else shape and mean.

    >>> summary_text({"shape": [], "numel": 1, "values": 7.0, "mean": 7.0})
    '7.'
    """
    if summary is None:
        return ""
    integer = str(dtype).startswith(("int", "uint", "bool"))
    if summary.get("values") is not None and summary["numel"] <= max_numbers:
        text = _values_text(summary["values"], integer)
        if len(text) <= 6 * max_numbers:  # [[0.25], [0.25], ...] is no help in a small box
            return text
    if summary.get("mean") is None:
        return shape_text(summary["shape"])
    return f"{shape_text(summary['shape'])} mean {number_text(summary['mean'])}"


def node_lines(node, value=..., grad=...):
    """The text of a node's box, top to bottom: label, value (or shape), gradient when known.

    `value`/`grad` replace the node's own summaries (None: not known yet), for pictures of a step.
    """
    value = node.get("value") if value is ... else value
    grad = node.get("grad") if grad is ... else grad
    lines = [node.get("label") or node["id"]]
    if node.get("failed"):  # the op a cell failed in (failed.py): it has no result to show
        lines.append("\u2717 failed")
    else:
        lines.append(summary_text(value, node.get("dtype")) or shape_text(node.get("shape") or []))
    if grad is not None:
        lines.append("grad " + summary_text(grad, node.get("dtype")))
    return lines


def memory_line(node):
    """The line under a box that says where its value lives in a memory plan, or None."""
    return (node.get("memory") or {}).get("note")


def group_lines(path, count, cluster=None):
    """The text of a collapsed scope's box; a fused cluster says which ops its kernel runs."""
    if cluster is not None:
        return [cluster["label"], f"{len(cluster['ops'])} ops in one kernel"]
    return [path, f"{count} nodes"]


def _box_size(lines):
    width = max(MIN_W, CHAR_W * max(len(line) for line in lines) + 2 * PAD_X)
    return width, LINE_H * len(lines) + 2 * PAD_Y


def _grad_texts(events, dtype_of):
    """Per node, its longest "grad ..." line during backward, so stepping never outgrows the box.
    `dtype_of` holds the nodes drawn as boxes; the others are skipped."""
    longest = {}
    for event in events:
        node = event["node"]
        if event["kind"] in ("run", "accumulate") and event.get("grad") and node in dtype_of:
            text = "grad " + summary_text(event["grad"], dtype_of.get(node))
            if len(text) > len(longest.get(node, "")):
                longest[node] = text
    return longest


# ---- scopes: which nodes a box stands for ---------------------------------------------------------


def _parts(graph):
    """Nodes, edges and events of a Snapshot or of its `to_dict()`."""
    if isinstance(graph, dict):
        return graph["nodes"], graph["edges"], graph.get("events") or []
    return graph.nodes, graph.edges, getattr(graph, "events", None) or []


def clusters_of(graph):
    """{scope path: cluster} of the fused groups drawn as clusters (none in older graphs)."""
    if isinstance(graph, dict):
        return graph.get("clusters") or {}
    return getattr(graph, "clusters", None) or {}


def _prefixes(scope):
    """Every group a scope sits in, outermost first: "mlp/layer1" gives ("mlp", "mlp/layer1")."""
    if not scope:
        return ()
    parts = scope.split("/")
    return tuple("/".join(parts[: i + 1]) for i in range(len(parts)))


def scope_counts(graph):
    """{scope path: number of nodes drawn inside it, nested scopes included}, sorted by path."""
    nodes, edges, _ = _parts(graph)
    index = {node["id"]: i for i, node in enumerate(nodes)}
    pairs = [(index[e["source"]], index[e["target"]]) for e in edges]
    return dict(sorted(_counts(_drawn_scopes(nodes, pairs, clusters_of(graph))).items()))


def drawn_scopes(graph):
    """Each node's scope as drawn, in node order: a layer's weights join the layer that uses them."""
    nodes, edges, _ = _parts(graph)
    index = {node["id"]: i for i, node in enumerate(nodes)}
    pairs = [(index[e["source"]], index[e["target"]]) for e in edges]
    return _drawn_scopes(nodes, pairs, clusters_of(graph))


def default_collapsed(graph, threshold=200):
    """The scopes collapsed when the caller chooses none: every top-level one, in a big graph,
    and the clusters that start collapsed (a snapshot's fused kernels)."""
    nodes = _parts(graph)[0]
    folded = {path for path, cluster in clusters_of(graph).items() if cluster.get("collapsed")}
    if len(nodes) <= threshold:
        return folded
    return folded | {node["scope"].split("/")[0] for node in nodes if node.get("scope")}


def expand(graph, collapsed, path):
    """`collapsed` with `path` opened one level: its direct sub-scopes stay collapsed.

    >>> expand(graph, {"mlp"}, "mlp")     # doctest: +SKIP
    {'mlp/layer1', 'mlp/layer2'}
    """
    children = {p for p in scope_counts(graph) if p.rsplit("/", 1)[0] == path and p != path}
    return (set(collapsed) - {path}) | children


def _box_of(nodes, scopes, collapsed):
    """For each node, the id of the box that shows it: its own, or its outermost collapsed scope's."""
    box_of_scope = {}  # the same few scopes repeat over thousands of nodes: decide each once
    boxes = []
    for node, scope in zip(nodes, scopes):
        if scope not in box_of_scope:
            hidden_in = next((p for p in _prefixes(scope) if p in collapsed), None)
            box_of_scope[scope] = None if hidden_in is None else "scope:" + hidden_in
        boxes.append(box_of_scope[scope] or node["id"])
    return boxes


def _drawn_scopes(nodes, pairs, clusters=()):
    """Each node's scope as drawn: a leaf made outside any scope joins the scope that all its
    consumers share, so a layer's weights sit, and collapse, with the layer that uses them.
    Never a fused cluster, though: a kernel's inputs are not part of the kernel."""
    scopes = [node.get("scope") for node in nodes]
    consumers, has_input = {}, set()
    for s, t in pairs:
        consumers.setdefault(s, []).append(scopes[t])
        has_input.add(t)
    for i, node in enumerate(nodes):
        if scopes[i] is None and node.get("kind") == "tensor" and i not in has_input:
            shared = None
            for scope in consumers.get(i, ()):
                if scope is None:
                    shared = None
                    break
                shared = scope if shared is None else _shared_scope(shared, scope)
            while shared and shared in clusters:  # step out of the cluster
                shared = shared.rpartition("/")[0]
            scopes[i] = shared or None
    return scopes


def _shared_scope(p, q):
    """The scope two scopes share: "mlp/a" and "mlp/b" share "mlp"."""
    return "/".join(_common_prefix(p.split("/"), q.split("/")))


# ---- the sketch: boxes and edges as the layout sees them ------------------------------------------


class _Sketch:
    """Boxes 0..n-1 (visible nodes and collapsed scopes, then edges' waypoints) as parallel lists."""

    def __init__(self):
        self.ids, self.w, self.h = [], [], []
        self.groups = []  # per box, the expanded scopes around it, outermost first
        self.rank = []  # per box, its place in a topological order: the starting order
        self.layer, self.pred, self.succ, self.y = [], [], [], []
        self.edges = []  # [source box, target box, how many graph edges, drawn reversed?]
        self.chains = []  # per edge, its boxes from left to right, waypoints included
        self.lanes = []  # lanes: {"edges": [edge index, ...], "shared": box its edges share, "y"}
        self.lane_of = {}  # edge index -> its lane's index, for edges drawn along a lane
        self.scopes, self.box_ids, self.counts = [], [], {}  # per graph node; per scope path

    def add(self, box_id, size, groups, rank):
        self.ids.append(box_id)
        self.w.append(size[0])
        self.h.append(size[1])
        self.groups.append(groups)
        self.rank.append(rank)
        self.pred.append([])
        self.succ.append([])
        return len(self.ids) - 1


def _topological_positions(n, edges):
    """Each node's place in a topological order that keeps list order where it can (Kahn)."""
    indegree, out = [0] * n, [[] for _ in range(n)]
    for s, t in edges:
        out[s].append(t)
        indegree[t] += 1
    ready = [i for i in range(n) if indegree[i] == 0]  # sorted, so already a heap
    position = [None] * n
    for k in range(n):
        if not ready:  # a cycle (autograd never makes one): the rest keep list order
            break
        i = heapq.heappop(ready)
        position[i] = k
        for t in out[i]:
            indegree[t] -= 1
            if indegree[t] == 0:
                heapq.heappush(ready, t)
    rest = iter(range(n - sum(p is None for p in position), n))
    return [p if p is not None else next(rest) for p in position]


def _sketch(graph, collapsed):
    """Boxes for the visible nodes and collapsed scopes, and the edges between them, merged."""
    nodes, edges, events = _parts(graph)
    sk, index_of = _Sketch(), {}
    node_index = {node["id"]: i for i, node in enumerate(nodes)}
    pairs = [(node_index[e["source"]], node_index[e["target"]]) for e in edges]
    position = _topological_positions(len(nodes), pairs)
    clusters = clusters_of(graph)
    sk.scopes = _drawn_scopes(nodes, pairs, clusters)
    sk.box_ids = _box_of(nodes, sk.scopes, collapsed)
    sk.counts = _counts(sk.scopes)
    shown = {n["id"]: n.get("dtype") for n, box in zip(nodes, sk.box_ids) if box == n["id"]}
    grads = _grad_texts(events, shown)
    for i, (node, box_id) in enumerate(zip(nodes, sk.box_ids)):
        if box_id in index_of:  # one more node inside an already placed collapsed scope
            b = index_of[box_id]
            sk.rank[b] = min(sk.rank[b], position[i])
            continue
        if box_id == node["id"]:
            lines = node_lines(node)
            if box_id in grads:  # reserve room for the widest gradient shown while stepping
                if node.get("grad") is None:
                    lines.append(grads[box_id])
                lines[-1] = max(lines[-1], grads[box_id], key=len)
            if memory_line(node):
                lines.append(memory_line(node))
            groups = _prefixes(sk.scopes[i])
        else:
            path = box_id[len("scope:") :]
            lines = group_lines(path, sk.counts[path], clusters.get(path))
            groups = _prefixes(path)[:-1]
        index_of[box_id] = sk.add(box_id, _box_size(lines), groups, position[i])
    merged = {}  # (source box, target box) -> its edge: x * x is one line, marked "x2"
    for s, t in pairs:
        a, b = index_of[sk.box_ids[s]], index_of[sk.box_ids[t]]
        if a == b:  # both ends inside one collapsed scope
            continue
        if (a, b) not in merged:
            merged[(a, b)] = [a, b, 0, False]
            sk.edges.append(merged[(a, b)])
        merged[(a, b)][2] += 1
    for edge in sk.edges:  # collapsing can make a cycle (A -> x -> A): lay it out as a DAG
        if sk.rank[edge[0]] > sk.rank[edge[1]]:
            edge[0], edge[1], edge[3] = edge[1], edge[0], True
    return sk


def _counts(scopes):
    """{scope path: number of nodes inside, nested scopes included}."""
    counts = {}
    for scope in scopes:
        for path in _prefixes(scope):
            counts[path] = counts.get(path, 0) + 1
    return counts


# ---- 1. layers ------------------------------------------------------------------------------------


def _assign_layers(sk):
    """Longest path from the inputs; then every box moves right, next to its first consumer."""
    n = len(sk.ids)
    preds, succs = [[] for _ in range(n)], [[] for _ in range(n)]
    for a, b, _, _ in sk.edges:
        preds[b].append(a)
        succs[a].append(b)
    layer = [0] * n
    by_rank = sorted(range(n), key=sk.rank.__getitem__)  # every edge goes up in rank
    for b in by_rank:
        layer[b] = max((layer[a] + 1 for a in preds[b]), default=0)
    # A weight used only by layer 9 would otherwise sit in column 0 with a long edge across the
    # whole picture; one column before its first use reads better and needs no waypoints. So
    # does an RNN's `u * x[t]` (x needs no gradient): next to step t's addition, not in a column
    # of every step's product at the far left. Consumers first: their columns are then final.
    for b in reversed(by_rank):
        if succs[b]:
            layer[b] = min(layer[t] for t in succs[b]) - 1
    sk.layer = layer


# ---- 2. waypoints and lanes -----------------------------------------------------------------------


def _choose_lanes(sk):
    """Pick the long edges that run along a lane instead of through a waypoint in every column.

    A waypoint per column crossed is the right price for one long edge: it bends around the
    boxes near them. But `x` in `y = (y * 1.01).tanh() + x` feeds 666 additions, one every three
    columns: a waypoint in every column each edge crosses is 665,000 waypoints (a band of lines
    hundreds deep, 13 s to lay out). Drawn instead as one straight lane above the boxes, with a
    branch down into each use, `x` stays one box whose line visibly reaches every place it is
    used: the picture of "one tensor, many uses, its gradients add up" (and of an RNN's weight
    shared by every step). Copies of `x` beside each use would read locally but hide exactly that.
    So: a box with LANE_MIN_EDGES long edges out gets a lane for them (fan-out), a box with as
    many long edges in gets one for the rest (fan-in, `torch.stack(outputs)`); and if the other
    long edges would still need more than WAYPOINT_BUDGET waypoints per box and edge, the longest
    of them get a lane each, so waypoints never grow faster than the graph.
    """
    spans = {e: sk.layer[b] - sk.layer[a] for e, (a, b, _, _) in enumerate(sk.edges)}
    long = [e for e, span in spans.items() if span > 1]
    for end in (0, 1):  # 0: edges out of the same box, 1: edges into the same box
        by_box = {}
        for e in long:
            if e not in sk.lane_of:
                by_box.setdefault(sk.edges[e][end], []).append(e)
        for box, edges in by_box.items():
            if len(edges) >= LANE_MIN_EDGES:
                _add_lane(sk, edges, box)
    rest = sorted((e for e in long if e not in sk.lane_of), key=lambda e: (-spans[e], e))
    waypoints = sum(spans[e] - 1 for e in rest)
    budget = WAYPOINT_BUDGET * (len(sk.ids) + len(sk.edges))
    for e in rest:
        if waypoints <= budget:
            break
        _add_lane(sk, [e], None)
        waypoints -= spans[e] - 1


def _add_lane(sk, edges, shared):
    for e in edges:
        sk.lane_of[e] = len(sk.lanes)
    sk.lanes.append({"edges": edges, "shared": shared, "y": None})


def _add_waypoints(sk):
    """Split every edge into one-column steps; a waypoint sits in each column it crosses.
    An edge along a lane gets none, and is left out of the ordering and placement of the boxes."""
    for e, (a, b, _, _) in enumerate(sk.edges):
        if e in sk.lane_of:
            sk.chains.append([a, b])
            continue
        # a waypoint belongs to the groups both ends share, so it is sorted among their boxes
        shared = _common_prefix(sk.groups[a], sk.groups[b])
        chain = [a]
        for layer in range(sk.layer[a] + 1, sk.layer[b]):
            waypoint = sk.add(None, (0.0, 0.0), shared, sk.rank[a])
            sk.layer.append(layer)
            chain.append(waypoint)
        chain.append(b)
        for u, v in zip(chain, chain[1:]):
            sk.succ[u].append(v)
            sk.pred[v].append(u)
        sk.chains.append(chain)


def _common_prefix(p, q):
    """The start two sequences share."""
    k = 0
    while k < min(len(p), len(q)) and p[k] == q[k]:
        k += 1
    return p[:k]


# ---- 3. order within columns (crossing reduction) -------------------------------------------------


def _order_columns(sk):
    """Columns of box indices, top to bottom, with few edge crossings (barycenter sweeps)."""
    columns = [[] for _ in range(max(sk.layer, default=-1) + 1)]
    # Start in creation order (waypoints after boxes of the same rank): already a fair picture.
    for b in sorted(range(len(sk.ids)), key=lambda b: (sk.rank[b], sk.ids[b] is None, b)):
        columns[sk.layer[b]].append(b)
    pos = [0] * len(sk.ids)
    alone = [()] * len(sk.ids)  # sorted with no neighbours, a box keeps its place...
    for column in columns:
        for i, b in enumerate(column):
            pos[b] = i
        _sort_column(column, alone, pos, 1, sk.groups)  # ...but joins its group's boxes
    best, fewest = [list(c) for c in columns], _crossings(columns, sk.succ, pos)
    for sweep in range(2 * SWEEPS):
        if fewest == 0:
            break
        if sweep % 2 == 0:  # left to right: each column follows the one before
            for k in range(1, len(columns)):
                _sort_column(columns[k], sk.pred, pos, len(columns[k - 1]), sk.groups)
        else:  # right to left: each column follows the one after
            for k in range(len(columns) - 2, -1, -1):
                _sort_column(columns[k], sk.succ, pos, len(columns[k + 1]), sk.groups)
        crossings = _crossings(columns, sk.succ, pos)
        if crossings >= fewest:  # no better (a sweep can make it worse): keep the best, stop
            break
        best, fewest = [list(c) for c in columns], crossings
    return best


def _sort_column(column, neighbours, pos, fixed_size, groups):
    """Sort one column by its boxes' barycenters; boxes of one group stay together."""
    size = len(column)
    bary = {}
    for b in column:
        near = neighbours[b]
        # positions scaled to 0..1, so a box with no neighbour there keeps its own place
        if near:
            bary[b] = (sum([pos[u] for u in near]) / len(near) + 0.5) / fixed_size
        else:
            bary[b] = (pos[b] + 0.5) / size
    if any(groups[b] for b in column):
        key = _group_keys(column, bary, groups, pos)
    else:
        key = {b: (bary[b], pos[b]) for b in column}
    column.sort(key=key.__getitem__)
    for i, b in enumerate(column):
        pos[b] = i


def _group_keys(column, bary, groups, pos):
    """Sort keys that keep each group's boxes together: a group sorts by the mean barycenter of
    its boxes, and inside it each box (or inner group) by its own.

    A key is (mean, path) for each group around the box, outermost first, then (barycenter, "",
    position): "" is no group's path, so a lone box never lands in the middle of a group.
    """
    total = {}
    for b in column:
        for path in groups[b]:
            s, c = total.get(path, (0.0, 0))
            total[path] = (s + bary[b], c + 1)
    prefix = {}  # group path -> the start of its members' keys
    keys = {}
    for b in column:
        outer = ()
        for path in groups[b]:
            if path not in prefix:
                prefix[path] = outer + (total[path][0] / total[path][1], path)
            outer = prefix[path]
        keys[b] = outer + (bary[b], "", pos[b])
    return keys


def _crossings(columns, succ, pos):
    """How many pairs of edges cross, between every two neighbouring columns."""
    total = 0
    for column in columns[:-1]:
        ends = []  # where the edges seen so far (from boxes higher up) land, sorted
        for b in column:
            mine = [pos[t] for t in succ[b]]
            if len(mine) > 1:
                mine.sort()
            for p in mine:  # an earlier edge landing lower than this one crosses it
                total += len(ends) - bisect_right(ends, p)
            for p in mine:
                insort(ends, p)
    return total


# ---- 4. coordinates -------------------------------------------------------------------------------


def _assign_y(sk, columns):
    """Vertical centres: close to the neighbours' centres, in column order, never overlapping."""
    sk.y = [0.0] * len(sk.ids)
    gaps = [[_gap(sk, a, b) for a, b in zip(c, c[1:])] for c in columns]
    for column, gap in zip(columns, gaps):  # start stacked from the top
        for b, y in zip(column, _spaced([0.0] * len(column), gap)):
            sk.y[b] = y
    for k in range(1, len(columns)):  # first follow the inputs, left to right
        _pull(columns[k], gaps[k], sk.pred, sk.y)
    # Then pull towards inputs and consumers together: pulling towards one side at a time would
    # see-saw, each pass undoing the last; both at once settles.
    near = [p + s for p, s in zip(sk.pred, sk.succ)]
    for sweep in range(Y_PASSES):
        ks = range(len(columns)) if sweep % 2 else range(len(columns) - 1, -1, -1)
        moved = max((_pull(columns[k], gaps[k], near, sk.y) for k in ks), default=0.0)
        if moved < 0.5:  # settled: more passes would change nothing visible
            break


def _gap(sk, a, b):
    """Centre-to-centre distance of two neighbours in a column, room for group borders included."""
    waypoints = (sk.ids[a] is None) + (sk.ids[b] is None)
    gap = (NODE_GAP, (NODE_GAP + WAYPOINT_GAP) / 2, WAYPOINT_GAP)[waypoints]
    if sk.groups[a] == sk.groups[b]:  # the usual case: no group border between them
        return (sk.h[a] + sk.h[b]) / 2 + gap
    shared = len(_common_prefix(sk.groups[a], sk.groups[b]))
    gap += GROUP_PAD * (len(sk.groups[a]) - shared)  # borders of groups that end after a
    gap += (GROUP_PAD + GROUP_TITLE) * (len(sk.groups[b]) - shared)  # and of those b starts
    return (sk.h[a] + sk.h[b]) / 2 + gap


def _pull(column, gaps, neighbours, y):
    """Move a column's boxes towards the mean height of their neighbours, keeping order and gaps.
    Returns the largest move."""
    wanted = []
    for b in column:
        near = neighbours[b]
        wanted.append(sum([y[u] for u in near]) / len(near) if near else y[b])
    moved = 0.0
    for b, new in zip(column, _spaced(wanted, gaps)):
        moved = max(moved, abs(new - y[b]))
        y[b] = new
    return moved


def _spaced(wanted, gaps):
    """The heights closest to `wanted` (least squares) with y[i+1] - y[i] >= gaps[i].

    Subtracting the running sum of the gaps turns the rule into "never decreasing", and the closest
    never-decreasing list replaces each run of out-of-order values by its mean (pool adjacent
    violators): one pass, linear time.
    """
    offsets = [0.0]
    for gap in gaps:
        offsets.append(offsets[-1] + gap)
    runs = []  # (sum, count) of merged values; all values of a run become its mean
    for w, offset in zip(wanted, offsets):
        total, count = w - offset, 1
        while runs and runs[-1][0] * count > total * runs[-1][1]:  # previous mean is larger
            t, c = runs.pop()
            total, count = total + t, count + c
        runs.append((total, count))
    fitted = []
    for total, count in runs:
        fitted += [total / count] * count
    return [f + offset for f, offset in zip(fitted, offsets)]


def _columns_x(sk, columns):
    """Left edge and width of every column: as wide as its widest box, borders of groups between."""
    depth = max((len(g) for g in sk.groups), default=0)
    gap = LAYER_GAP + 2 * GROUP_PAD * depth
    left, widths, x = [], [], 0.0
    for column in columns:
        width = max(sk.w[b] for b in column)
        left.append(x)
        widths.append(width)
        x += width + gap
    return left, widths


# ---- edges and groups -----------------------------------------------------------------------------


def _place_lanes(sk, columns, left, widths, groups):
    """Give each lane its height: just above everything it passes over (boxes, edges' waypoints,
    group outlines), and above the lanes placed before it there. Short lanes first, so they keep
    close to their boxes and long ones run above them.

    A lane climbs out of its source in the gap after the source's column, runs right, and drops
    into each target in the gap before the target's column. Places are counted in half columns,
    gap k = 2k and column k = 2k + 1, so two lanes that meet in a gap are kept apart too.
    """
    top = [float("inf")] * (2 * len(columns) + 1)
    for k, column in enumerate(columns):
        for b in column:
            above = sk.h[b] / 2 if sk.ids[b] is not None else WAYPOINT_GAP
            top[2 * k + 1] = min(top[2 * k + 1], sk.y[b] - above)
    rights = [x + w for x, w in zip(left, widths)]
    for group in groups:  # an outline (title band included) may reach above its boxes
        first = bisect_right(rights, group["x"])
        last = bisect_right(left, group["x"] + group["w"]) - 1
        for k in range(first, last + 1):
            top[2 * k + 1] = min(top[2 * k + 1], group["y"])
    # nothing in a gap limits a lane until a lane passes there (every lane passes a column)
    ceiling = [t - LANE_CLEARANCE for t in top]
    spans = []
    for i, lane in enumerate(sk.lanes):
        ends = [sk.edges[e][:2] for e in lane["edges"]]
        start = min(2 * (sk.layer[a] + 1) for a, _ in ends)
        stop = max(2 * sk.layer[b] for _, b in ends)
        spans.append((stop - start, start, i))
    for length, start, i in sorted(spans):
        y = min(ceiling[start : start + length + 1])
        sk.lanes[i]["y"] = y
        ceiling[start : start + length + 1] = [y - LANE_GAP] * (length + 1)


def _lane_slots(sk, left, widths):
    """The x of each lane's vertical line in each gap it climbs or drops in: {(lane, gap): x}.
    In a gap, dropping lanes sit left of climbing ones, a higher lane drops further right and
    climbs further left: so no lane's vertical line crosses another lane's level part."""
    in_gap = {}
    for e, i in sk.lane_of.items():
        a, b = sk.edges[e][:2]
        y = sk.lanes[i]["y"]
        in_gap.setdefault(sk.layer[a] + 1, set()).add((1, y, i))  # climbs out of its source
        in_gap.setdefault(sk.layer[b], set()).add((0, -y, i))  # drops into its target
    x_of = {}
    for gap, lanes in in_gap.items():
        x0, x1 = left[gap - 1] + widths[gap - 1], left[gap]
        spacing = min(LANE_SPACING, (x1 - x0) * 0.8 / len(lanes))
        middle = (x0 + x1) / 2 - spacing * (len(lanes) - 1) / 2
        for k, (_, _, i) in enumerate(sorted(lanes)):
            x_of[(i, gap)] = round(middle + spacing * k, 1)
    return x_of


def _port_order(towards, key):
    """Ports top to bottom by where their edges go; on a tie, edges in their own order and a
    lane's shared port after them."""
    if isinstance(key, int):
        return (towards[key], 0, key)
    return (towards[key], 1, key[1])


def _route(sk, left, widths):
    """Each edge as a polyline: out of the right side of its source, through its waypoints (across
    their columns), into the left side of its target. Several edges at one side spread out; the
    edges of one lane share their port at the box they share.
    An edge along a lane: out of its source, up to the lane in the next gap, along it, and down
    into its target in the gap before it: six points, however many columns it spans.
    Coordinates are final (rounded to 0.1 px) as they are made: thousands of points, made once."""
    out_ports, in_ports = {}, {}
    for e, chain in enumerate(sk.chains):  # order each side's edges by where they go: no tangles
        lane = sk.lanes[sk.lane_of[e]] if e in sk.lane_of else None
        if lane is None:
            out_ports.setdefault(chain[0], {})[e] = sk.y[chain[1]]
            in_ports.setdefault(chain[-1], {})[e] = sk.y[chain[-2]]
            continue
        shared = ("lane", sk.lane_of[e])
        out_ports.setdefault(chain[0], {})[shared if lane["shared"] == chain[0] else e] = lane["y"]
        in_ports.setdefault(chain[-1], {})[shared if lane["shared"] == chain[-1] else e] = lane["y"]
    port_y = {}
    for side, ports in (("out", out_ports), ("in", in_ports)):
        for b, towards in ports.items():
            keys = sorted(towards, key=lambda key: _port_order(towards, key))
            top = sk.y[b] - sk.h[b] / 2
            for k, key in enumerate(keys):
                port_y[(side, b, key)] = round(top + sk.h[b] * (k + 1) / (len(keys) + 1), 1)
    col_left = [round(x, 1) for x in left]
    col_right = [round(x + w, 1) for x, w in zip(left, widths)]
    slots = _lane_slots(sk, left, widths)
    routes = []
    for e, chain in enumerate(sk.chains):
        a, b = chain[0], chain[-1]
        la, lb = sk.layer[a], sk.layer[b]
        i = sk.lane_of.get(e)
        ya = port_y[("out", a, ("lane", i) if i is not None and sk.lanes[i]["shared"] == a else e)]
        yb = port_y[("in", b, ("lane", i) if i is not None and sk.lanes[i]["shared"] == b else e)]
        points = [[round(left[la] + (widths[la] + sk.w[a]) / 2, 1), ya]]
        if i is not None:  # up to the lane, along it, down to the target
            up, down, y = slots[(i, la + 1)], slots[(i, lb)], round(sk.lanes[i]["y"], 1)
            points += [[up, ya], [up, y], [down, y], [down, yb]]
        else:
            if sk.w[a] < widths[la]:  # leave the column level, clear of wider boxes nearby
                points.append([col_right[la], ya])
            for w in chain[1:-1]:
                y = round(sk.y[w], 1)
                points += [[col_left[sk.layer[w]], y], [col_right[sk.layer[w]], y]]
            if sk.w[b] < widths[lb]:
                points.append([col_left[lb], yb])
        points.append([round(left[lb] + (widths[lb] - sk.w[b]) / 2, 1), yb])
        routes.append(points[::-1] if sk.edges[e][3] else points)
    return routes


def _group_boxes(sk, columns, left, widths, boxes, collapsed_ids):
    """The expanded scopes' outlines, and the collapsed scopes' boxes, outer groups first.

    A rectangle around a group's boxes would also cover other nodes that share its columns.
    Instead a group's outline follows it column by column: in each column it spans its own boxes
    (which the ordering keeps together, with room for borders), so outlines never overlap; where
    nothing else is in the way, a column's span grows to match its neighbours' (fewer steps).
    """
    where, direct = {}, {}  # (path, column) -> [first, last] row; path -> spans of its own boxes
    for k, column in enumerate(columns):
        for i, b in enumerate(column):
            for path in sk.groups[b]:
                where.setdefault((path, k), [i, i])[1] = i
            if sk.groups[b]:
                _widen(
                    direct.setdefault(sk.groups[b][-1], {}),
                    k,
                    sk.y[b] - sk.h[b] / 2,
                    sk.y[b] + sk.h[b] / 2,
                )
    paths = sorted({path for path, _ in where}, key=lambda p: (-p.count("/"), p))
    children = {}
    for path in paths:
        children.setdefault(path.rpartition("/")[0], []).append(path)
    spans, reach, groups = {}, {}, []
    for path in paths:  # inner groups first
        inner = children.get(path, [])
        span = {k: list(tb) for k, tb in direct.get(path, {}).items()}
        for child in inner:  # a group holds its inner groups, borders and all
            for k, (top, bottom) in spans[child].items():
                _widen(span, k, top, bottom)
        span = {k: [t - GROUP_PAD - GROUP_TITLE, b + GROUP_PAD] for k, (t, b) in span.items()}
        spans[path] = _smoothed(path, span, columns, where, sk)
        reach[path] = GROUP_PAD + max((reach[c] for c in inner), default=0.0)
        outline = _outline(spans[path], left, widths, reach[path])
        xs = [x for polygon in outline for x, _ in polygon]
        ys = [y for polygon in outline for _, y in polygon]
        group = _group(
            path, min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys), False, sk.counts[path]
        )
        groups.append({**group, "outline": outline})
    for box_id in collapsed_ids:
        box, path = boxes[box_id], box_id[len("scope:") :]
        group = _group(path, box["x"], box["y"], box["w"], box["h"], True, sk.counts[path])
        x0, y0, x1, y1 = box["x"], box["y"], box["x"] + box["w"], box["y"] + box["h"]
        groups.append({**group, "outline": [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]]})
    groups.sort(key=lambda g: g["scope"])  # outer before inner: the order to draw them in
    return groups


def _widen(span, k, top, bottom):
    if k in span:
        span[k] = [min(span[k][0], top), max(span[k][1], bottom)]
    else:
        span[k] = [top, bottom]


def _smoothed(path, span, columns, where, sk):
    """Grow each column's span towards its neighbours', up to whatever is next to the group in
    that column, leaving room for that thing's own group borders. Repeat until settled."""
    ks = sorted(span)
    limits = [_room(path, columns[k], *where[(path, k)], sk) for k in ks]
    tops, bottoms = [span[k][0] for k in ks], [span[k][1] for k in ks]
    n = len(ks)
    # whether the column before / after is one the group also spans (a group may skip a column)
    joined = [i + 1 < n and ks[i + 1] == ks[i] + 1 for i in range(n)]
    for _ in range(10):  # every column grows from the spans of the round before, at once
        new_tops, new_bottoms = list(tops), list(bottoms)
        for i in range(n):
            top, bottom = tops[i], bottoms[i]
            if i > 0 and joined[i - 1]:
                top, bottom = min(top, tops[i - 1]), max(bottom, bottoms[i - 1])
            if joined[i]:
                top, bottom = min(top, tops[i + 1]), max(bottom, bottoms[i + 1])
            limit_top, limit_bottom = limits[i]
            new_tops[i] = min(tops[i], max(top, limit_top))
            new_bottoms[i] = max(bottoms[i], min(bottom, limit_bottom))
        if new_tops == tops and new_bottoms == bottoms:
            break
        tops, bottoms = new_tops, new_bottoms
    return {k: [t, b] for k, t, b in zip(ks, tops, bottoms)}


def _room(path, column, first, last, sk):
    """How far up and down a group may grow in a column: up to the nearest box outside any group
    (an edge passing by is no limit); not at all towards another group's box, whose outline may
    grow towards this one."""
    mine = _prefixes(path)
    limits = []
    for rows, side in ((range(first - 1, -1, -1), -1), (range(last + 1, len(column)), 1)):
        limit = side * float("inf")  # nothing there: no limit
        for i in rows:
            b = column[i]
            other = len(sk.groups[b]) - len(_common_prefix(sk.groups[b], mine))
            if sk.ids[b] is None and other == 0:
                continue
            # -side * inf: the limit lies inside the group's own span, so it stays as it is
            limit = -side * float("inf") if other else sk.y[b] - side * (sk.h[b] / 2 + CLEARANCE)
            break
        limits.append(limit)
    return limits


def _outline(spans, left, widths, reach):
    """Polygons around a group's column spans, left to right.

    Between two columns the outline narrows, in a short zone, to what both spans share: two
    groups' zones are then apart as their spans are, so their borders never run together. Where
    two neighbouring spans share nothing (or a column is missing), the outline splits in two.
    At its two ends a piece reaches `reach` past the column.
    """
    polygons, top, bottom = [], [], []  # top: left to right; bottom: collected left to right
    columns = sorted(spans)
    for i, k in enumerate(columns):
        (t, b), x1 = spans[k], left[k] + widths[k]
        after = columns[i + 1] if i + 1 < len(columns) else None
        joined = after == k + 1 and max(t, spans[after][0]) < min(b, spans[after][1])
        x0 = top[-1][0] if top else left[k] - reach  # where the previous zone ended
        x_end = (x1 + left[k + 1]) / 2 - ZONE / 2 if joined else x1 + reach
        top += [[x0, t], [x_end, t]]
        bottom += [[x0, b], [x_end, b]]
        if joined:  # the zone: only what both columns' spans share
            zone_t, zone_b = max(t, spans[after][0]), min(b, spans[after][1])
            top += [[x_end, zone_t], [x_end + ZONE, zone_t]]
            bottom += [[x_end, zone_b], [x_end + ZONE, zone_b]]
        else:
            polygons.append(_without_straight_points(top + bottom[::-1]))
            top, bottom = [], []
    return polygons


def _without_straight_points(polygon):
    """The same outline without repeated points and points in the middle of a straight side:
    where neighbouring columns' spans are equal (the usual case) that is most of them, and a
    2,000-node graph's outlines then take 1,600 points instead of 17,000."""
    kept = []
    for point in polygon:
        if kept and point == kept[-1]:
            continue
        if len(kept) >= 2 and _between(kept[-2], kept[-1], point):
            kept[-1] = point  # the middle of a straight run: the run now ends here
        else:
            kept.append(point)
    return kept


def _between(a, b, c):
    """Is b on the straight, axis-parallel segment from a to c?"""
    if a[0] == b[0] == c[0]:
        return min(a[1], c[1]) <= b[1] <= max(a[1], c[1])
    if a[1] == b[1] == c[1]:
        return min(a[0], c[0]) <= b[0] <= max(a[0], c[0])
    return False


def _group(path, x, y, w, h, collapsed, count):
    return {
        "id": "scope:" + path,
        "scope": path,
        "x": x,
        "y": y,
        "w": w,
        "h": h,
        "collapsed": collapsed,
        "count": count,
    }


# ---- the whole layout -----------------------------------------------------------------------------


def layout(graph, collapsed=None, threshold=200):
    """Boxes and edge routes for a Snapshot (or its `to_dict()`), left to right. See CONTRACT.md.

    `collapsed`: scope paths drawn as one box each; None collapses every top-level scope when the
    graph has more than `threshold` nodes (see `default_collapsed`, and `expand` to open one).
    The same graph always gives the same numbers: nothing here depends on ids, time or chance.
    """
    nodes = _parts(graph)[0]
    collapsed = default_collapsed(graph, threshold) if collapsed is None else set(collapsed)
    sk = _sketch(graph, collapsed)
    _assign_layers(sk)
    _choose_lanes(sk)
    _add_waypoints(sk)
    columns = _order_columns(sk)
    _assign_y(sk, columns)
    left, widths = _columns_x(sk, columns)
    boxes = {}
    for b, box_id in enumerate(sk.ids):
        if box_id is not None:
            x = left[sk.layer[b]] + (widths[sk.layer[b]] - sk.w[b]) / 2
            boxes[box_id] = {"x": x, "y": sk.y[b] - sk.h[b] / 2, "w": sk.w[b], "h": sk.h[b]}
    collapsed_ids = [i for i in boxes if i.startswith("scope:")]
    groups = _group_boxes(sk, columns, left, widths, boxes, collapsed_ids)
    _place_lanes(sk, columns, left, widths, groups)
    # Shift everything so the picture starts at the margin, then route the edges there.
    things = list(boxes.values()) + groups
    dx = MARGIN - min((t["x"] for t in things), default=0.0)
    dy = MARGIN - min([t["y"] for t in things] + [lane["y"] for lane in sk.lanes], default=0.0)
    sk.y = [y + dy for y in sk.y]
    for lane in sk.lanes:
        lane["y"] += dy
    routes = _route(sk, [x + dx for x in left], widths)
    return _finish(sk, boxes, routes, groups, nodes, dx, dy)


def _finish(sk, boxes, routes, groups, nodes, dx, dy):
    """The result: boxes and groups shifted by (dx, dy), all rounded to 0.1 px."""

    def shifted(t):
        return {
            "x": round(t["x"] + dx, 1),
            "y": round(t["y"] + dy, 1),
            "w": round(t["w"], 1),
            "h": round(t["h"], 1),
        }

    result_boxes = {box_id: shifted(box) for box_id, box in boxes.items()}
    result_edges = []
    for (a, b, count, flipped), points in zip(sk.edges, routes):
        source, target = (sk.ids[b], sk.ids[a]) if flipped else (sk.ids[a], sk.ids[b])
        result_edges.append({"source": source, "target": target, "points": points, "count": count})
    result_groups = []
    for g in groups:
        outline = [[[round(x + dx, 1), round(y + dy, 1)] for x, y in p] for p in g["outline"]]
        result_groups.append({**g, **shifted(g), "outline": outline})
    hidden = {n["id"]: box for n, box in zip(nodes, sk.box_ids) if box != n["id"]}
    things = list(result_boxes.values()) + result_groups
    return {
        "width": round(max((t["x"] + t["w"] for t in things), default=0.0) + MARGIN, 1),
        "height": round(max((t["y"] + t["h"] for t in things), default=0.0) + MARGIN, 1),
        "direction": "LR",
        "nodes": result_boxes,
        "edges": result_edges,
        "groups": result_groups,
        "hidden": hidden,  # node id -> the collapsed scope's box that shows it
    }
