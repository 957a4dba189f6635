"""Shapes and views: reshape, squeeze, transpose, expand, narrow, cat, split, ..."""

import numpy as np

from .draw import call, spec

# ---- shapes and views -------------------------------------------------------------------------


def _factor(rng, n, rank):
    """A shape of `rank` dims whose sizes multiply to n, one of them sometimes -1."""
    sizes = []
    for _ in range(rank - 1):
        divisors = [k for k in range(1, n + 1) if n % k == 0] if n else [0, 1, 2]
        size = rng.choice(divisors)
        sizes.append(size)
        n = n // size if size else 0
    sizes.append(n)
    if sizes and rng.random() < 0.3 and all(sizes):
        sizes[rng.randrange(len(sizes))] = -1
    return tuple(sizes)


@spec(
    "reshape",
    "Tensor.reshape",
    "Tensor.view",
    "flatten",
    "Tensor.flatten",
    "unflatten",
    "Tensor.unflatten",
    weight=3,
)
def reshape(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    numel = int(np.prod(v.shape, dtype=int))
    shape = _factor(d.rng, numel, d.rng.randint(0, 4) if numel == 1 else d.rng.randint(1, 4))
    if d.wrong():
        shape = shape + (2,)
    kind = d.choice(["reshape", "view", "flatten", "unflatten"])
    if kind == "flatten":
        arguments = f", {d.dim(v)}" + (f", {d.dim(v)}" if d.chance(0.5) else "")
        return call(d, "flatten", v, arguments if d.chance(0.6) else "")
    if kind == "unflatten":
        if v.rank == 0:
            return None
        dim = d.dim(v)
        sizes = _factor(d.rng, v.shape[dim % v.rank], d.rng.randint(1, 3))
        return call(d, "unflatten", v, f", {dim}, {sizes}")
    if kind == "view" or d.chance(0.3):
        form = d.choice(["{0}.view(S)", "{0}.view(*S)", "{0}.reshape(*S)"])
        return form.replace("S", repr(shape)), (v.name,)
    return call(d, "reshape", v, f", {shape!r}")


@spec(
    "squeeze",
    "Tensor.squeeze",
    "Tensor.squeeze_",
    "unsqueeze",
    "Tensor.unsqueeze",
    "Tensor.unsqueeze_",
    "transpose",
    "Tensor.transpose",
    "Tensor.transpose_",
    "swapaxes",
    "Tensor.swapaxes",
    "Tensor.swapaxes_",
    "swapdims",
    "Tensor.swapdims",
    "Tensor.swapdims_",
    "t",
    "Tensor.t",
    "Tensor.t_",
    "permute",
    "Tensor.permute",
    "movedim",
    "Tensor.movedim",
    "moveaxis",
    "Tensor.moveaxis",
    weight=4,
)
def move_dims(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    kind = d.choice(["squeeze", "unsqueeze", "transpose", "t", "permute", "movedim", "T", "mT"])
    in_place = d.chance(0.25)
    if kind == "squeeze":
        roll = d.rng.random()
        arguments = "" if roll < 0.4 else str(d.dim(v)) if roll < 0.8 else repr(d.dims(v) or ())
        if in_place:
            return "{0}." + f"squeeze_({arguments})", (v.name,)
        return call(d, "squeeze", v, f", {arguments}" if arguments else "")
    if kind == "unsqueeze":
        dim = d.rng.randrange(-v.rank - 1, v.rank + 1) if not d.wrong() else v.rank + 2
        if in_place:
            return "{0}." + f"unsqueeze_({dim})", (v.name,)
        return call(d, "unsqueeze", v, f", {dim}")
    if kind == "transpose":
        name = d.choice(["transpose", "swapaxes", "swapdims"])
        arguments = f"{d.dim(v)}, {d.dim(v)}"
        if in_place:
            return "{0}." + f"{name}_({arguments})", (v.name,)
        return call(d, name, v, f", {arguments}")
    if kind == "t":
        return ("{0}.t_()", (v.name,)) if in_place else call(d, "t", v)
    if kind == "permute":
        order = list(range(v.rank))
        d.rng.shuffle(order)
        order = [o - v.rank if d.chance(0.3) else o for o in order]
        if d.wrong():
            order = order[:-1]
        if d.chance(0.5):
            return "{0}.permute" + f"({', '.join(map(str, order))})", (v.name,)
        return call(d, "permute", v, f", {tuple(order)!r}")
    if kind == "movedim":
        name = d.choice(["movedim", "moveaxis"])
        return call(d, name, v, f", {d.dim(v)}, {d.dim(v)}")
    return "{0}." + kind, (v.name,)


@spec(
    "Tensor.expand",
    "Tensor.expand_as",
    "broadcast_to",
    "Tensor.broadcast_to",
    "broadcast_tensors",
    "Tensor.repeat",
    "repeat_interleave",
    "Tensor.repeat_interleave",
    "meshgrid",
    weight=2,
)
def broadcast(d):
    v = d.value(floats=not d.chance(0.2), max_rank=3)
    if v is None:
        return None
    kind = d.choice(
        [
            "expand",
            "expand_as",
            "broadcast_to",
            "broadcast_tensors",
            "repeat",
            "repeat_interleave",
            "meshgrid",
        ]
    )
    if kind in ("expand", "broadcast_to"):
        shape = [s if s != 1 or d.chance(0.5) else d.rng.randint(0, 3) for s in v.shape]
        shape = [d.rng.randint(1, 3)] * d.rng.randint(0, 1) + shape
        if d.chance(0.3) and shape:
            shape[-1] = -1
        if kind == "expand" and d.chance(0.5):
            return "{0}.expand" + f"({', '.join(map(str, shape))})".replace(",)", ")"), (v.name,)
        if kind == "expand":
            return "{0}" + f".expand({tuple(shape)!r})", (v.name,)  # no torch.expand
        return call(d, kind, v, f", {tuple(shape)!r}")
    if kind in ("expand_as", "broadcast_tensors"):
        other = d.partner(v)
        if kind == "expand_as":
            return "{0}.expand_as({1})", (v.name, other.name)  # no torch.expand_as
        return "torch.broadcast_tensors({0}, {1})", (v.name, other.name)
    if kind == "repeat":
        times = [d.rng.randint(0, 2) if d.chance(0.2) else d.rng.randint(1, 2) for _ in v.shape]
        times = [d.rng.randint(1, 2)] * d.rng.randint(0, 1) + times
        return "{0}.repeat" + f"({tuple(times)!r})", (v.name,)
    if kind == "repeat_interleave":
        dim = f", dim={d.dim(v)}" if d.chance(0.6) else ""
        return call(d, kind, v, f", {d.rng.randint(0, 3)}{dim}")
    flat = d.value(max_rank=1)
    if flat is None or v.rank > 1:
        return None
    indexing = d.choice(["", ", indexing='ij'", ", indexing='xy'"])
    return f"torch.meshgrid({{0}}, {{1}}{indexing})", (v.name, flat.name)


@spec(
    "narrow",
    "Tensor.narrow",
    "flip",
    "Tensor.flip",
    "roll",
    "Tensor.roll",
    "tril",
    "Tensor.tril",
    "Tensor.tril_",
    "triu",
    "Tensor.triu",
    "Tensor.triu_",
    "diag",
    "Tensor.diag",
    "diagonal",
    "Tensor.diagonal",
    "trace",
    "Tensor.trace",
    weight=3,
)
def rearrange(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    kind = d.choice(["narrow", "flip", "roll", "tril", "triu", "diag", "diagonal", "trace"])
    if kind == "narrow":
        dim = d.dim(v)
        size = v.shape[dim % v.rank] if v.rank and -v.rank <= dim < v.rank else 1
        start = d.rng.randint(-size, size)
        length = d.rng.randint(0, max(0, size - (start % size if size else 0)))
        return call(d, "narrow", v, f", {dim}, {start}, {length + d.wrong()}")
    if kind == "flip":
        dims = d.dims(v)
        dims = (dims,) if isinstance(dims, int) else dims or (0,)
        return call(d, "flip", v, f", {dims!r}")
    if kind == "roll":
        if d.chance(0.3):
            return call(d, "roll", v, f", {d.rng.randint(-3, 3)}")
        return call(d, "roll", v, f", {d.rng.randint(-3, 3)}, {d.dim(v)}")
    if kind in ("tril", "triu"):
        diagonal = f", {d.rng.randint(-2, 2)}" if d.chance(0.5) else ""
        if d.chance(0.3):
            return "{0}." + f"{kind}_({diagonal.lstrip(', ')})", (v.name,)
        return call(d, kind, v, diagonal)
    if kind == "diag":
        return call(d, "diag", v, f", {d.rng.randint(-2, 2)}" if d.chance(0.5) else "")
    if kind == "diagonal":
        if d.chance(0.5):
            return call(d, "diagonal", v, f", {d.rng.randint(-2, 2)}, {d.dim(v)}, {d.dim(v)}")
        return call(d, "diagonal", v)
    return call(d, "trace", v)


@spec(
    "cat",
    "concat",
    "concatenate",
    "stack",
    "split",
    "Tensor.split",
    "chunk",
    "Tensor.chunk",
    "unbind",
    "Tensor.unbind",
    weight=3,
)
def join_and_split(d):
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    kind = d.choice(["cat", "stack", "split", "chunk", "unbind"])
    if kind in ("cat", "stack"):
        others = [w for w in d.pool if w.rank == v.rank and (kind == "cat" or w.shape == v.shape)]
        other = d.choice(others) if others and not d.wrong() else d.choice(d.pool)
        name = d.choice(["cat", "concat", "concatenate"]) if kind == "cat" else "stack"
        dim = d.dim(v) if kind == "cat" or v.rank == 0 else d.rng.randrange(-v.rank - 1, v.rank + 1)
        inputs = d.choice(["[{0}, {1}]", "({0}, {1}, {0})", "[{0}]"])
        return f"torch.{name}({inputs}, dim={dim})", (v.name, other.name)
    if kind == "split":
        if d.chance(0.5) and v.rank:
            dim = d.dim(v)
            size = v.shape[dim % v.rank] if -v.rank <= dim < v.rank else 1
            first = d.rng.randint(0, size)
            sizes = [first, size - first + d.wrong()]
            return call(d, "split", v, f", {sizes}, dim={dim}")
        return call(d, "split", v, f", {d.rng.randint(1, 3) - d.wrong()}, {d.dim(v)}")
    if kind == "chunk":
        return call(d, "chunk", v, f", {d.rng.randint(1, 4) - d.wrong()}, {d.dim(v)}")
    return call(d, "unbind", v, f", {d.dim(v)}" if d.chance(0.5) else "")


@spec("as_strided", "Tensor.as_strided")
def as_strided(d):
    """A window of (size, stride, storage offset) into a fresh copy's storage: the copy has
    exactly numel elements, so the window is drawn to fit (or, by mistake, to overrun them)."""
    v = d.value(floats=not d.chance(0.2), nonempty=True, max_rank=3)
    if v is None:
        return None
    numel = int(np.prod(v.shape, dtype=int))
    rank = d.rng.randint(0, 3)
    size = [d.rng.randint(0, 3) for _ in range(rank)]
    stride = [d.rng.randint(0, 2) for _ in range(rank)]  # 0: elements overlap
    reach = sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    if reach >= numel and not d.wrong():
        return None
    offset = d.rng.randint(0, numel - 1 - reach) if reach < numel else 0
    arguments = f", {tuple(size)!r}, {tuple(stride)!r}" + (f", {offset}" if offset else "")
    made, inputs = call(d, "as_strided", v, arguments)
    return made.replace("{0}", "{0}.clone()"), inputs
