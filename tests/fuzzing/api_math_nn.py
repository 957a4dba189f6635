"""Matrix products, sorting and counting, and torch.nn.functional."""

from .draw import call, spec
from .program import FLOATS

# ---- matrix products --------------------------------------------------------------------------


@spec(
    "matmul",
    "Tensor.matmul",
    "Tensor.__matmul__",
    "Tensor.__rmatmul__",
    "mm",
    "Tensor.mm",
    "bmm",
    "Tensor.bmm",
    "mv",
    "Tensor.mv",
    "dot",
    "Tensor.dot",
    "outer",
    "Tensor.outer",
    "ger",
    "Tensor.ger",
    "F.linear",
    weight=3,
)
def matrix_product(d):
    a = d.value(floats=not d.chance(0.1), min_rank=1)
    if a is None:
        return None
    k = a.shape[-1]
    kind = d.choice(["matmul", "mm", "bmm", "mv", "dot", "outer", "linear"])
    dtype = a.dtype if a.dtype in FLOATS and not d.wrong() else "float64"
    n = d.rng.randint(0, 3) if d.chance(0.2) else d.rng.randint(1, 3)
    if kind == "matmul":
        shape = d.choice([(k,), (k, n), (2, k, n), (1, k, n)])
        others = [
            w for w in d.pool if w.rank and w.shape[:1] == (k,) or w.rank >= 2 and w.shape[-2] == k
        ]
        if others and d.chance(0.5):
            form = d.choice(["({0} @ {1})", "torch.matmul({0}, {1})", "{0}.matmul({1})"])
            return form, (a.name, d.choice(others).name)
        form = d.choice(["({0} @ B)", "torch.matmul({0}, B)", "{0}.matmul(B)", "(B.mT @ {0}.mT)"])
        return form.replace("B", d.literal(shape, dtype)), (a.name,)
    if kind in ("mm", "bmm", "mv", "dot"):
        shape = {"mm": (k, n), "bmm": (a.shape[0], k, n), "mv": (k,), "dot": (k,)}[kind]
        return call(d, kind, a, ", " + d.literal(shape, dtype))[0], (a.name,)
    if kind == "outer":
        name = d.choice(["outer", "ger"])
        return call(d, name, a, ", " + d.literal((n,), dtype))[0], (a.name,)
    weight = d.literal((n, k), dtype)
    bias = d.choice(["", ", " + d.literal((n,), dtype), ", None"])
    return f"torch.nn.functional.linear({{0}}, {weight}{bias})", (a.name,)


# ---- sorting, picking the largest, counting ----------------------------------------------------


@spec(
    "sort",
    "Tensor.sort",
    "argsort",
    "Tensor.argsort",
    "msort",
    "Tensor.msort",
    "topk",
    "Tensor.topk",
    "unique",
    "Tensor.unique",
    "unique_consecutive",
    "Tensor.unique_consecutive",
    "histc",
    "Tensor.histc",
    "histogram",
    "Tensor.histogram",
    "bincount",
    "Tensor.bincount",
    weight=2,
)
def sort_and_count(d):
    v = d.value(floats=not d.chance(0.3))
    if v is None:
        return None
    kind = d.choice(
        [
            "sort",
            "argsort",
            "msort",
            "topk",
            "unique",
            "unique_consecutive",
            "histc",
            "histogram",
            "bincount",
        ]
    )
    if kind in ("sort", "argsort"):
        arguments = f", dim={d.dim(v)}" if d.chance(0.6) else ""
        arguments += d.choice(["", ", descending=True", ", descending=False"])
        if kind == "sort" and d.chance(0.3):
            arguments += ", stable=True"
        return call(d, kind, v, arguments)
    if kind == "msort":
        return call(d, kind, v)
    if kind == "topk":
        size = v.shape[-1] if v.shape else 1
        k = d.rng.randint(0, size) + d.wrong()
        options = d.choice(["", ", largest=False", f", dim={d.dim(v)}", ", sorted=True"])
        return call(d, "topk", v, f", {k}{options}")
    if kind in ("unique", "unique_consecutive"):
        options = "".join(
            f", {o}=True" for o in ("return_inverse", "return_counts") if d.chance(0.3)
        )
        if d.chance(0.3):
            options += f", dim={d.dim(v)}"
        return call(d, kind, v, options)
    if kind in ("histc", "histogram"):
        bins = d.rng.randint(1, 5)
        if kind == "histogram":
            return call(d, kind, v, f", {bins}")
        bounds = d.choice(["", ", min=-1, max=1", ", 0, 0"])
        return call(d, kind, v, f", bins={bins}{bounds}")
    counts = d.literal((d.rng.randint(0, 5),), "int64", 0 - d.wrong(), 4)
    weights = ", weights={0}" if v.rank == 1 and d.chance(0.3) else ""
    extra = f", minlength={d.rng.randint(0, 6)}" if d.chance(0.4) else ""
    return f"torch.bincount({counts}{weights}{extra})", (v.name,)


# ---- torch.nn.functional: activations, losses, layers ---------------------------------------

F = "torch.nn.functional."


@spec(
    "F.relu",
    "F.sigmoid",
    "F.tanh",
    "F.silu",
    "F.gelu",
    "F.leaky_relu",
    "F.elu",
    "F.softplus",
    "F.softmax",
    "F.log_softmax",
    "F.dropout",
    "F.normalize",
    "F.one_hot",
    weight=3,
)
def activation(d):
    v = d.value(floats=not d.chance(0.1))
    if v is None:
        return None
    kind = d.choice(
        [
            "relu",
            "sigmoid",
            "tanh",
            "silu",
            "gelu",
            "leaky_relu",
            "elu",
            "softplus",
            "softmax",
            "log_softmax",
            "dropout",
            "normalize",
            "one_hot",
        ]
    )
    options = {
        "gelu": d.choice(["", ", approximate='tanh'", ", approximate='none'"]),
        "leaky_relu": d.choice(["", ", 0.2", ", negative_slope=-1.0"]),
        "elu": d.choice(["", ", alpha=0.5", ", 2.0"]),
        "softplus": d.choice(["", ", beta=2.0", ", beta=0.5, threshold=1.0"]),
        "softmax": f", dim={d.dim(v)}" + d.choice(["", ", dtype=torch.float64"]),
        "log_softmax": f", dim={d.dim(v)}",
        "dropout": d.choice([", p=0.0", ", 0.5, training=False", ", p=1.0"]),
        "normalize": d.choice(["", f", p=1.0, dim={d.dim(v)}", f", dim={d.dim(v)}, eps=0.5"]),
    }.get(kind, "")
    if kind == "one_hot":
        count = d.rng.randint(0, 4)
        labels = d.literal((count,), "int64", 0, 3 + d.wrong())
        classes = d.choice(["", ", 4", ", num_classes=5", ", -1"])
        return f"{F}one_hot({labels}{classes})", ()
    if kind == "relu" and d.chance(0.2):
        options = ", inplace=True"
    return f"{F}{kind}({{0}}{options})", (v.name,)


LOSSES = [
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "nll_loss",
    "cross_entropy",
]


@spec(*[f"F.{name}" for name in LOSSES], weight=3)
def loss(d):
    name = d.choice(LOSSES)
    classified = name in ("nll_loss", "cross_entropy")
    v = d.value(floats=not d.chance(0.1), min_rank=1 if classified else 0)
    if v is None:
        return None
    reduction = d.choice(["", ", reduction='sum'", ", reduction='none'", ", reduction='mean'"])
    if classified and v.rank:  # (N, C, ...) or (C,) scores, class targets
        classes = v.shape[1] if v.rank >= 2 else v.shape[0]
        target_shape = (v.shape[0],) + v.shape[2:] if v.rank >= 2 else ()
        if name == "cross_entropy" and d.chance(0.25):  # class probabilities as targets
            target = d.literal(v.shape, v.dtype, 0, 1)
        else:
            target = d.literal(target_shape, "int64", 0, max(classes - 1, 0) + d.wrong())
            if not target_shape:
                target = target.replace("[", "").replace("]", "")  # a 0-d target
        options = d.choice(["", ", ignore_index=0", ", label_smoothing=0.1"])
        if name == "nll_loss":
            options = options.replace(", label_smoothing=0.1", "")
            if d.chance(0.3):
                options += ", weight=" + d.literal((classes,), v.dtype, 0, 2)
        scores = "{0}.log_softmax(1 if {0}.dim() > 1 else 0)" if name == "nll_loss" else "{0}"
        return f"{F}{name}({scores}, {target}{options}{reduction})", (v.name,)
    target = d.literal(v.shape, v.dtype if d.chance(0.9) else "float64", -1, 2)
    if name.startswith("binary") or d.chance(0.4):
        target = "{1}" if d.chance(0.5) else target
    inputs = (v.name, d.partner(v, same_shape=True).name) if "{1}" in target else (v.name,)
    if name == "binary_cross_entropy":
        probability = d.literal(v.shape, v.dtype, 0, 1)
        target = "{1}.sigmoid()" if "{1}" in target else probability
        return f"{F}{name}({{0}}.sigmoid(), {target}{reduction})", inputs
    options = {"smooth_l1_loss": ", beta=0.5", "huber_loss": ", delta=0.7"}.get(name, "")
    if name == "binary_cross_entropy_with_logits" and d.chance(0.3):
        options = ", pos_weight=" + d.literal(v.shape[-1:], v.dtype, 0, 2)
    return f"{F}{name}({{0}}, {target}{options if d.chance(0.5) else ''}{reduction})", inputs


@spec(
    "F.layer_norm",
    "F.batch_norm",
    "F.embedding",
    "F.pad",
    "F.conv1d",
    "F.conv2d",
    "F.max_pool2d",
    "F.avg_pool2d",
    weight=2,
)
def layer(d):
    kind = d.choice(
        [
            "layer_norm",
            "batch_norm",
            "embedding",
            "pad",
            "conv1d",
            "conv2d",
            "max_pool2d",
            "avg_pool2d",
        ]
    )
    low = {"conv1d": 2, "conv2d": 3, "max_pool2d": 3, "avg_pool2d": 3, "batch_norm": 2}
    v = d.value(min_rank=low.get(kind, 1), max_rank=low.get(kind, 3) + 1, nonempty=True)
    if v is None:
        return None
    if kind == "layer_norm":
        shape = v.shape[-d.rng.randint(1, v.rank) :]
        affine = d.choice(["", f", {d.literal(shape, v.dtype)}, {d.literal(shape, v.dtype)}"])
        return f"{F}layer_norm({{0}}, {tuple(shape)!r}{affine})", (v.name,)
    if kind == "batch_norm":
        channels = v.shape[1]
        mean, var = d.literal((channels,), v.dtype), d.literal((channels,), v.dtype, 0, 2)
        training = d.choice(["", ", training=True"])
        return f"{F}batch_norm({{0}}, {mean}, {var}{training})", (v.name,)
    if kind == "embedding":
        indices = d.literal((d.rng.randint(0, 4),), "int64", 0, v.shape[0] - 1 + d.wrong())
        if v.rank != 2:
            return None
        return f"{F}embedding({indices}, {{0}})", (v.name,)
    if kind == "pad":
        pads = tuple(d.rng.randint(-1, 2) for _ in range(2 * d.rng.randint(1, min(v.rank, 3))))
        value = d.choice(["", ", value=1.5", ", mode='constant', value=-1.0"])
        return f"{F}pad({{0}}, {pads!r}{value})", (v.name,)
    spatial = 1 if kind == "conv1d" else 2
    size = d.rng.randint(1, 2)
    stride = d.choice(["", ", stride=2", ", padding=1", ", stride=1, padding=1"])
    if kind.startswith("conv"):
        channels = v.shape[-spatial - 1]
        weight = d.literal((d.rng.randint(1, 2), channels) + (size,) * spatial, v.dtype)
        bias = d.choice(["", ", None"])
        return f"{F}{kind}({{0}}, {weight}{bias}{stride})", (v.name,)
    stride = stride.replace("padding=1", "padding=0")
    return f"{F}{kind}({{0}}, {size}{stride})", (v.name,)
