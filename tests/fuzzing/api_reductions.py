"""Reductions (over every dim, one dim, a tuple of dims, or ()) and scans along one dim."""

from .draw import call, spec

# ---- reductions: over every dim, one dim, a tuple of dims, or () -------------------------------


def _dims_text(dims):
    return "" if dims is None else f"dim={dims!r}"


@spec(
    "sum",
    "Tensor.sum",
    "mean",
    "Tensor.mean",
    "prod",
    "Tensor.prod",
    "amax",
    "Tensor.amax",
    "amin",
    "Tensor.amin",
    "logsumexp",
    "Tensor.logsumexp",
    "count_nonzero",
    "Tensor.count_nonzero",
    "all",
    "Tensor.all",
    "any",
    "Tensor.any",
    "norm",
    "Tensor.norm",
    weight=4,
)
def reduce(d):
    name = d.choice(
        ["sum", "mean", "prod", "amax", "amin", "logsumexp", "count_nonzero", "all", "any", "norm"]
    )
    v = d.value(floats=name not in ("count_nonzero", "all", "any") and not d.chance(0.2))
    if v is None:
        return None
    dims = d.dims(v)
    if name in ("prod", "all", "any", "count_nonzero") and isinstance(dims, tuple):
        dims = d.dim(v) if not d.wrong() else dims  # these take one dim
    if name == "logsumexp" and dims is None:
        dims = d.dim(v)  # logsumexp's dim is required
    parts = [_dims_text(dims)] if dims is not None else []
    if dims is not None and name != "count_nonzero":
        parts.append(d.keepdim().lstrip(", "))
    if name in ("sum", "mean", "prod") and d.chance(0.2):
        parts.append(f"dtype=torch.{d.choice(['float64', 'float32', 'int64'])}")
    if name == "norm" and d.chance(0.6):
        parts.insert(
            0, f"p={d.choice([1, 2, 3, 0.5, float('inf'), 0, -1])!r}".replace("inf", "float('inf')")
        )
    arguments = ", ".join(p for p in parts if p)
    return call(d, name, v, f", {arguments}" if arguments else "")


@spec(
    "max",
    "Tensor.max",
    "min",
    "Tensor.min",
    "argmax",
    "Tensor.argmax",
    "argmin",
    "Tensor.argmin",
    "median",
    "Tensor.median",
    "kthvalue",
    "Tensor.kthvalue",
    weight=2,
)
def reduce_with_indices(d):
    name = d.choice(["max", "min", "argmax", "argmin", "median", "kthvalue"])
    # PyTorch 2.13's median of a tensor whose elements share storage places (expanded, or an
    # overlapping as_strided window) reads memory it never wrote: README's Simplifications
    v = d.value(floats=not d.chance(0.2), own_places=name == "median")
    if v is None:
        return None
    if name == "kthvalue":
        k = d.rng.randint(1, max(1, v.shape[0] if v.shape else 1) + d.wrong())
        return call(d, name, v, f", {k}, {d.dim(v)}{d.keepdim()}")
    if d.chance(0.35):
        return call(d, name, v)  # over every element: one value (no indices)
    return call(d, name, v, f", {d.dim(v)}{d.keepdim()}")


@spec("var", "Tensor.var", "std", "Tensor.std", "var_mean", "std_mean", weight=2)
def spread(d):
    name = d.choice(["var", "std", "var_mean", "std_mean"])
    v = d.value(floats=not d.chance(0.1))
    if v is None:
        return None
    parts = []
    dims = d.dims(v)
    if dims is not None:
        parts.append(_dims_text(dims))
    roll = d.rng.random()
    if roll < 0.3:
        parts.append(f"correction={d.choice([0, 1, 2])}")
    elif roll < 0.45:
        parts.append(f"unbiased={d.choice([True, False])}")
    if dims is not None:
        parts.append(d.keepdim().lstrip(", "))
    arguments = ", ".join(p for p in parts if p)
    return call(d, name, v, f", {arguments}" if arguments else "", method=name in ("var", "std"))


# ---- scans and normalisations along one dim ---------------------------------------------------


@spec(
    "cumsum",
    "Tensor.cumsum",
    "Tensor.cumsum_",
    "cumprod",
    "Tensor.cumprod",
    "Tensor.cumprod_",
    "logcumsumexp",
    "Tensor.logcumsumexp",
    "softmax",
    "Tensor.softmax",
    "log_softmax",
    "Tensor.log_softmax",
    "diff",
    "Tensor.diff",
    weight=2,
)
def scan(d):
    name = d.choice(["cumsum", "cumprod", "logcumsumexp", "softmax", "log_softmax", "diff"])
    v = d.value(floats=not d.chance(0.2))
    if v is None:
        return None
    if name == "diff":
        arguments = f", n={d.choice([1, 2, 0])}, dim={d.dim(v)}" if d.chance(0.6) else ""
        if d.chance(0.3):
            return call(d, name, v, arguments + ", prepend={1}")[0], (v.name, d.partner(v).name)
        return call(d, name, v, arguments)
    dtype = ""
    if name != "logcumsumexp" and d.chance(0.2):
        dtype = f", dtype=torch.{d.choice(['float64', 'float32'])}"
    if name in ("cumsum", "cumprod") and d.chance(0.25):
        return "{0}." + f"{name}_({d.dim(v)}{dtype})", (v.name,)
    return call(d, name, v, f", {d.dim(v)}{dtype}")
