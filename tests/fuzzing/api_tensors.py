"""Making tensors (from values, like another, from the seeded random stream), asking a tensor
about itself, and autograd calls on the way.
"""

from .draw import spec

# ---- making tensors: from values, like another, from the seeded random stream -----------------


@spec(
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
    "bernoulli",
    "Tensor.bernoulli",
    "multinomial",
    "Tensor.multinomial",
    "Tensor.uniform_",
    "Tensor.normal_",
    "Tensor.bernoulli_",
    "Tensor.exponential_",
    "Tensor.random_",
    "Tensor.fill_",
    "Tensor.zero_",
    "Tensor.copy_",
    weight=2,
)
def create(d):
    v = d.value(floats=not d.chance(0.3))
    if v is None:
        return None
    shape = v.shape
    dtype = d.choice(["", ", dtype=torch.float64", ", dtype=torch.int64", ", dtype=torch.bool"])
    kind = d.choice(["like", "shape", "range", "tensor", "random", "in place"])
    if kind == "like":
        name = d.choice(
            [
                "zeros_like",
                "ones_like",
                "full_like",
                "empty_like",
                "rand_like",
                "randn_like",
                "randint_like",
            ]
        )
        value = {"full_like": f", {d.number()}", "randint_like": ", 5"}.get(name, "")
        made = f"torch.{name}({{0}}{value}{dtype})"
        return (made + ".shape" if name == "empty_like" else made), (v.name,)
    if kind == "shape":
        name = d.choice(["zeros", "ones", "full", "empty"])
        value = f", {d.number()}" if name == "full" else ""
        made = f"torch.{name}({tuple(shape)!r}{value}{dtype})"
        return (made + ".shape" if name == "empty" else made), ()
    if kind == "range":
        name = d.choice(["arange", "linspace", "logspace", "eye"])
        if name == "arange":
            bounds = d.choice(["5", "1, 4", "0, 1, 0.25", "3.0", "-2, 2, 3", "0", "2, 0, -1"])
        elif name == "eye":
            bounds = d.choice(["3", "2, 3", "0"])
        else:
            bounds = d.choice(["0, 1, 5", "-1.0, 1.0, 1", "0, 2, steps=3", "2, -2, 0"])
        return f"torch.{name}({bounds}{dtype})", ()
    if kind == "tensor":
        data = d.choice(
            [
                "[1, 2]",
                "[1.5, -0.0]",
                "[True, False]",
                "3",
                "[[1, 2], [3, 4.5]]",
                "[]",
                "{0}",
                "[1, 2.5, True]",
            ]
        )
        name = d.choice(["tensor", "as_tensor"])
        return f"torch.{name}({data}{dtype})", (v.name,) if "{0}" in data else ()
    if kind == "random":
        return d.choice(
            [
                f"torch.rand({tuple(shape)!r})",
                f"torch.randn({tuple(shape)!r}{dtype})",
                f"torch.randint(0, 5, {tuple(shape)!r})",
                f"torch.randperm({d.rng.randint(0, 6)})",
                f"torch.normal(0.0, 2.0, {tuple(shape)!r})",
                "torch.bernoulli({0}.sigmoid())",
                "{0}.sigmoid().bernoulli()",
                "torch.multinomial({0}.abs() + 0.1, 2)",
                "{0}.abs().add(0.1).multinomial(3, replacement=True)",
            ]
        ), (v.name,)
    return d.choice(
        [
            "{0}.uniform_()",
            "{0}.normal_(1.0, 2.0)",
            "{0}.bernoulli_(0.5)",
            "{0}.exponential_()",
            "{0}.random_(0, 5)",
            f"{{0}}.fill_({d.number()})",
            "{0}.fill_(torch.tensor(2.0))",
            "{0}.zero_()",
            "{0}.copy_({1})",
        ]
    ), (v.name, d.partner(v).name)


# ---- asking a tensor about itself -------------------------------------------------------------


@spec(
    "Tensor.item",
    "Tensor.tolist",
    "Tensor.numel",
    "numel",
    "Tensor.nelement",
    "Tensor.dim",
    "Tensor.ndimension",
    "Tensor.size",
    "Tensor.stride",
    "Tensor.is_contiguous",
    "Tensor.element_size",
    "Tensor.is_floating_point",
    "is_floating_point",
    "Tensor.is_signed",
    "Tensor.is_complex",
    "is_complex",
    "is_tensor",
    "result_type",
    "promote_types",
    "can_cast",
    "Tensor.__len__",
    "Tensor.__bool__",
    "Tensor.__float__",
    "Tensor.__int__",
    "Tensor.__index__",
    "Tensor.__iter__",
    "Tensor.storage_offset",
)
def inspect_tensor(d):
    v = d.choice(d.pool)
    question = d.choice(
        [
            "{0}.item()",
            "{0}.tolist()",
            "{0}.numel()",
            "torch.numel({0})",
            "{0}.nelement()",
            "{0}.dim()",
            "{0}.ndimension()",
            "{0}.size()",
            f"{{0}}.size({d.dim(v)})",
            "{0}.stride()",
            "{0}.is_contiguous()",
            "{0}.storage_offset()",
            "{0}.element_size()",
            "{0}.is_floating_point()",
            "torch.is_floating_point({0})",
            "{0}.is_signed()",
            "{0}.is_complex()",
            "torch.is_complex({0})",
            "torch.is_tensor({0})",
            "torch.result_type({0}, 2.5)",
            "torch.result_type({0}, {1})",
            "torch.promote_types({0}.dtype, torch.int64)",
            "torch.can_cast({0}.dtype, torch.int64)",
            "len({0})",
            "bool({0})",
            "float({0})",
            "int({0})",
            "[0, 1, 2, 3][{0}]",
            "list({0})",
        ]
    )
    return question, (v.name, d.choice(d.pool).name)


# ---- autograd on the way: leaves, hooks, detaching --------------------------------------------


@spec(
    "Tensor.requires_grad_",
    "Tensor.retain_grad",
    "Tensor.register_hook",
    "Tensor.detach_",
    "Tensor.register_post_accumulate_grad_hook",
)
def autograd_calls(d):
    v = d.choice(d.pool)
    returns_tensor = [
        "{0}.requires_grad_()",
        "{0}.requires_grad_(False)",
        "{0}.detach_()",
        "{0}.detach().requires_grad_()",
    ]
    returns_other = [
        "{0}.retain_grad()",
        "{0}.register_post_accumulate_grad_hook(lambda tensor: None)",
    ]
    if not v.is_view:
        # PyTorch 2.13 crashes (a segmentation fault, seen with seed 419569) when a hook is
        # registered on a view whose base was changed in place after the view was taken:
        # x.exp().view(4, 2, 1), then the base's mul_(2), then register_hook on the view
        returns_other += [
            "{0}.register_hook(lambda grad: grad * 2)",
            "{0}.register_hook(lambda grad: None)",
        ]
    if d.chance(0.5):
        return d.choice(returns_tensor), (v.name,)
    return d.choice(returns_other), (v.name,), True  # a statement: the step's value is v
