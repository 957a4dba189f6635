"""Indexing: reading and assigning with ints, slices, None, ..., lists, masks; gather, scatter, ..."""

from .draw import call, spec

# ---- indexing: reading and assigning with ints, slices, None, ..., lists, masks, index tensors --


def _index(d, v):
    """An index for `v`: a tuple of ints (negative, sometimes out of range), slices (with steps),
    None, Ellipsis, lists, int tensors and bool masks."""
    parts, dims = [], list(v.shape)
    for size in dims[: d.rng.randint(0, max(len(dims), 1))]:
        roll = d.rng.random()
        if roll < 0.25:
            parts.append(str(d.rng.randint(-size, size - 1) if size and not d.wrong() else size))
        elif roll < 0.6:
            start = d.choice(["", str(d.rng.randint(-size - 1, size + 1))])
            stop = d.choice(["", str(d.rng.randint(-size - 1, size + 1))])
            step = d.choice(["", "", ":2", ":3"])
            parts.append(f"{start}:{stop}{step}")
        elif roll < 0.7:
            parts.append("None")
        elif roll < 0.85 and size:
            chosen = [d.rng.randint(-size, size - 1) for _ in range(d.rng.randint(0, 3))]
            parts.append(
                repr(chosen) if d.chance(0.5) else f"torch.tensor({chosen!r}, dtype=torch.int64)"
            )
        else:
            parts.append(d.literal((size,), "bool"))
    if d.chance(0.15):
        parts.insert(d.rng.randint(0, len(parts)), "...")
    if not parts:
        return d.choice(["...", "()", "None", "0"])
    return ", ".join(parts) + ("," if len(parts) == 1 and d.chance(0.3) else "")


@spec("Tensor.__getitem__", weight=4)
def getitem(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    if d.chance(0.15):
        mask = d.value(floats=False)  # a bool value of the same shape is a mask
        if mask is not None and mask.dtype == "bool" and mask.shape == v.shape:
            return "{0}[{1}]", (v.name, mask.name)
    return "{0}" + f"[{_index(d, v)}]", (v.name,)


@spec("Tensor.__setitem__", weight=3)
def setitem(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    value, inputs = d.number(), (v.name,)
    if d.chance(0.4):
        other = d.choice(d.pool)
        value, inputs = "{1}", (v.name, other.name)
        if other.rank > 0 and d.chance(0.5):
            value = "{1}[0]"
    return "{0}" + f"[{_index(d, v)}] = {value}", inputs, True


@spec(
    "gather",
    "Tensor.gather",
    "scatter",
    "Tensor.scatter",
    "Tensor.scatter_",
    "scatter_add",
    "Tensor.scatter_add",
    "Tensor.scatter_add_",
    "index_select",
    "Tensor.index_select",
    "index_add",
    "Tensor.index_add",
    "Tensor.index_add_",
    "take_along_dim",
    "masked_select",
    "Tensor.masked_select",
    "nonzero",
    "Tensor.nonzero",
    "argwhere",
    "Tensor.argwhere",
    weight=3,
)
def index_ops(d):
    v = d.value(floats=not d.chance(0.2), min_rank=1)
    if v is None or v.rank == 0:
        return None
    dim = d.dim(v)
    size = v.shape[dim % v.rank] if -v.rank <= dim < v.rank else 1
    high = max(size - 1, 0) + d.wrong()
    kind = d.choice(
        [
            "gather",
            "scatter",
            "scatter_add",
            "index_select",
            "index_add",
            "take_along_dim",
            "masked_select",
            "nonzero",
            "argwhere",
        ]
    )
    if kind in ("gather", "take_along_dim"):
        shape = list(v.shape)
        shape[dim % v.rank] = d.rng.randint(1, 3)
        index = d.literal(shape, "int64", 0, high)
        if kind == "take_along_dim":
            return f"torch.take_along_dim({{0}}, {index}, dim={dim})", (v.name,)
        return call(d, "gather", v, f", {dim}, {index}")
    if kind in ("scatter", "scatter_add"):
        index = d.literal(v.shape, "int64", 0, high)
        source = d.choice(["{0}", "{0} * 2"])
        if kind == "scatter" and d.chance(0.4):
            source = d.number()
        form = d.choice([f"torch.{kind}({{0}}, ", f"{{0}}.{kind}(", f"{{0}}.{kind}_("])
        return form + f"{dim}, {index}, {source})", (v.name,)
    if kind in ("index_select", "index_add"):
        picks = d.literal((d.rng.randint(0, 3),), "int64", 0, high)
        if kind == "index_select":
            return call(d, "index_select", v, f", {dim}, {picks}")
        count = len(picks.split(",")) if "[]" not in picks else 0
        shape = list(v.shape)
        shape[dim % v.rank] = count
        source = d.literal(shape, v.dtype if v.dtype != "bool" else "float32")
        alpha = f", alpha={d.number()}" if d.chance(0.3) else ""
        index = (
            d.literal((count,), "int64", 0, high)
            if count
            else "torch.tensor([], dtype=torch.int64)"
        )
        form = d.choice(["torch.index_add({0}, ", "{0}.index_add(", "{0}.index_add_("])
        return form + f"{dim}, {index}, {source}{alpha})", (v.name,)
    if kind == "masked_select":
        return call(d, "masked_select", v, ", {0} > 0")
    if kind == "nonzero" and d.chance(0.3):
        return call(d, "nonzero", v, ", as_tuple=True")
    return call(d, kind, v)
