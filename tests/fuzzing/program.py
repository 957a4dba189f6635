"""A program is plain data: the tensors it starts from (leaves) and the steps it takes.

    x0 = torch.tensor([1.0, nan, -0.0, 2.0], dtype=torch.float32).reshape(2, 2).requires_grad_()
    v1 = torch.add(x0, x0.t(), alpha=2)          # Step("v1", "add", "torch.add({0}, {1}, alpha=2)", ...)
    v2 = v1.sum(dim=(-1,), keepdim=True)
    loss = (v2 * torch.arange(1, v2.numel() + 1).reshape(v2.shape)).sum()
    loss.backward()

Every part is written as PyTorch source with `torch` as the library's name, so the same lines run
with `import torch` and with `import autograd_lab as torch`: the runner executes exactly the
source the reproducer prints. A step's `call` is that source with `{0}`, `{1}`, ... where its
inputs go, so the shrinker can drop steps and leaves without parsing anything.
"""

from dataclasses import dataclass, field, replace

import numpy as np

DTYPES = ("float32", "float64", "int64", "bool")
FLOATS = ("float32", "float64")

# How a leaf is stored: made non-contiguous on purpose, since strides are where engines slip.
LAYOUTS = ("contiguous", "transposed", "strided", "expanded")

# What happens after the steps (the loss is a weighted sum of the last float value).
BACKWARDS = (
    None,  # forward only
    "backward",  # loss.backward()
    "backward twice, retain_graph",  # loss.backward(retain_graph=True); loss.backward()
    "backward twice",  # the second call may refuse: the graph's saved tensors were freed
    "grad, create_graph, then second order",  # autograd.grad(create_graph=True), then again
)


@dataclass(frozen=True)
class Leaf:
    """A tensor the program starts from; `values` are its elements in row-major order."""

    name: str
    shape: tuple
    dtype: str
    values: tuple
    requires_grad: bool = False
    layout: str = "contiguous"

    def source(self):
        """`torch.tensor([...], dtype=...)...` that makes this leaf, in either library."""
        array = np.array(self.values, dtype=float if self.dtype in FLOATS else object)
        array = array.reshape(self.shape)
        layout = self.layout
        if layout == "transposed" and len(self.shape) >= 2:
            base = array.swapaxes(0, -1)
            text = _tensor(base, self.dtype) + ".transpose(0, -1)"
        elif layout == "strided" and len(self.shape) >= 1:
            base = np.repeat(array, 2, axis=0)  # every other row is the leaf's
            text = _tensor(base, self.dtype) + "[::2]"
        elif layout == "expanded" and len(self.shape) >= 1:
            base = array[:1] if self.shape[0] else np.zeros((1,) + self.shape[1:], array.dtype)
            text = _tensor(base, self.dtype) + f".expand{tuple(self.shape)}"
        else:
            text = _tensor(array, self.dtype)
        if self.requires_grad:
            text += ".requires_grad_()"
        return f"{self.name} = {text}"

    @property
    def numel(self):
        return int(np.prod(self.shape, dtype=int))


def _tensor(array, dtype):
    flat = ", ".join(_number(v, dtype) for v in array.reshape(-1))
    if array.ndim == 0:
        return f"torch.tensor({flat}, dtype=torch.{dtype})"
    made = f"torch.tensor([{flat}], dtype=torch.{dtype})"
    if array.ndim == 1:
        return made
    return made + ".reshape" + str(tuple(array.shape))


def _number(value, dtype):
    """A Python literal: `nan`, `-inf` and `-0.0` are names the program's first line defines."""
    if dtype == "bool":
        return str(bool(value))
    if dtype == "int64":
        return str(int(value))
    value = float(value)
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return repr(value)


@dataclass(frozen=True)
class Step:
    """One call: `name = call.format(*inputs)`, e.g. Step("v2", "sum", "{0}.sum(dim=(0,))", ("v1",)).

    `statement`: the call is a statement, not an expression (`{0}[1:] = {1}`); the step's value
    is then its first input, changed in place.
    """

    name: str
    op: str
    call: str
    inputs: tuple
    statement: bool = False

    def source(self):
        code = self.call.format(*self.inputs)
        if self.statement:
            return f"{code}; {self.name} = {self.inputs[0]}"
        return f"{self.name} = {code}"


@dataclass(frozen=True)
class Program:
    leaves: tuple
    steps: tuple
    backward: object = None  # one of BACKWARDS
    loss_of: object = None  # the name of the value whose weighted sum is the loss
    seed: object = None  # the generator's seed, for the report

    def replace(self, **changes):
        return replace(self, **changes)


@dataclass
class Statement:
    """A line to run, and the expressions whose values are recorded after it ran."""

    label: str  # where a divergence is reported: "v3 = torch.add(...)", "x0.grad after backward"
    op: str  # the op it exercises, for the divergence's kind
    source: str
    observe: tuple = field(default_factory=tuple)


PRELUDE = "nan, inf = float('nan'), float('inf')"


def statements(program):
    """The program as lines of source, each with what to record after it."""
    lines = [Statement("setup", "setup", PRELUDE)]
    for leaf in program.leaves:
        lines.append(Statement(leaf.name, "leaf", leaf.source(), (leaf.name,)))
    for step in program.steps:
        lines.append(Statement(step.name, step.op, step.source(), (step.name,)))
    lines += _backward_lines(program)
    return lines


def _backward_lines(program):
    mode, value = program.backward, program.loss_of
    if mode is None or value is None:
        return []
    leaves = [leaf.name for leaf in program.leaves if leaf.requires_grad]
    grads = tuple(f"{name}.grad" for name in leaves)
    weights = f"torch.arange(1, {value}.numel() + 1).reshape({value}.shape)"
    lines = [Statement("loss", "loss", f"loss = ({value} * {weights}).sum()", ("loss",))]
    if mode == "backward":
        lines.append(Statement("backward", "backward", "loss.backward()", grads))
    elif mode == "backward twice, retain_graph":
        lines.append(Statement("backward 1", "backward", "loss.backward(retain_graph=True)", grads))
        lines.append(Statement("backward 2", "backward", "loss.backward()", grads))
    elif mode == "backward twice":
        lines.append(Statement("backward 1", "backward", "loss.backward()", grads))
        lines.append(Statement("backward 2", "backward", "loss.backward()", grads))
    elif mode == "grad, create_graph, then second order":
        listed = "[" + ", ".join(leaves) + "]"
        first = f"grads = torch.autograd.grad(loss, {listed}, create_graph=True, allow_unused=True)"
        lines.append(Statement("grad", "grad", first, ("grads",)))
        lines.append(
            Statement(
                "second order",
                "grad",
                "again = [(g * g).sum() for g in grads if g is not None and g.requires_grad]\n"
                f"grads2 = torch.autograd.grad(sum(again), {listed}, allow_unused=True) "
                "if again else None",
                ("grads2",),
            )
        )
    return lines
