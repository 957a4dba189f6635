"""Write one fused group as Python source: a forward and a backward kernel, for numba.

    >>> import autograd_lab as ag
    >>> f = ag.compile(lambda x: (x * 2).tanh())
    >>> y = f(ag.ones(100_000, dtype=ag.float64, requires_grad=True))
    >>> print(f.kernels[0])                          # doctest: +SKIP
    ...
    @njit(parallel=True, cache=True, fastmath=False, error_model="numpy")
    def fused_forward(x0, out0):
        n0 = out0.shape[0]
        for i0 in prange(n0):
            v0 = x0[i0]
            v1 = v0 * 2.0  # %1 = MulBackward0(%0, 2)
            v2 = tanh(v1)  # %2 = TanhBackward0(%1)
            out0[i0] = v2
    ...

The forward kernel is the group's expressions (compile/rules.py) in one loop: each element is
read once, every intermediate lives in a register, each output is written once. The backward
kernel recomputes the forward expressions (cheaper than storing and re-reading them) and then
applies the chain rule in reverse over the group: `d<k>` is the gradient of value `%k`, summed
over every use, so one kernel produces every input's gradient.

Loops: the group's shape is simplified first (`collapse`): dims of size 1 are dropped and
neighbouring dims merged wherever every operand is either full or broadcast in both, so
same-shape operands give ONE flat loop, and a row or column broadcast gives two nested loops.
A broadcast operand is indexed with 0 along its broadcast dims: nothing is ever expanded in memory.
"""

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

from .ir import Value
from .rules import rule_for

_modules = {}  # source hash -> imported module: each kernel is compiled once per process


@dataclass(frozen=True)
class Layout:
    """The loop nest of a group: `shape` (collapsed), and each input's shape inside it; `grads`:
    the incoming gradients' shapes inside it (empty: full, the default backward kernel)."""

    full_shape: tuple
    shape: tuple
    inputs: tuple
    grads: tuple = ()


def collapse(full_shape, input_shapes, grad_shapes=()):
    """The smallest loop nest over `full_shape` that still tells each operand's broadcast dims.

    >>> collapse((4, 5, 6), [(4, 5, 6), (6,)]).shape    # (4*5, 6): the 2nd input varies in dim 1
    (20, 6)
    """
    ndim = len(full_shape)
    operands = list(input_shapes) + list(grad_shapes)
    aligned = [(1,) * (ndim - len(s)) + tuple(s) for s in operands]
    dims = [d for d in range(ndim) if full_shape[d] != 1]  # size-1 dims do not loop
    groups = []  # runs of dims in which every input's (broadcast or not) pattern is the same
    for d in dims:
        pattern = tuple(s[d] == 1 for s in aligned)
        if groups and groups[-1][0] == pattern:
            groups[-1][1].append(d)
        else:
            groups.append((pattern, [d]))
    shape = tuple(int(np.prod([full_shape[d] for d in run])) for _, run in groups) or (1,)
    shapes = tuple(
        tuple(1 if pattern[k] else size for (pattern, _), size in zip(groups, shape)) or (1,)
        for k in range(len(aligned))
    )
    n = len(input_shapes)
    return Layout(tuple(full_shape), shape, shapes[:n], shapes[n:])


def reduction_kind(shape, loop_shape, target="cpu"):
    """How a backward kernel writes the gradient of an input of `shape` (inside the loop nest):
    "full" (every element; the engine sums broadcast dims), "row" (summed along the inner loop:
    an (n, 1) input of an (n, m) loop) or "scalar" (summed over everything, by numba's prange
    reduction). Summing in the kernel saves writing, then re-reading, a full-size array.

    Such a kernel is compiled with fastmath={"reassoc"}: a sum whose order may change is what
    vector instructions need (numpy's own sums reorder too, pairwise); NaN and inf keep IEEE
    rules (the other fast-math flags stay off), and kernels without sums keep fastmath=False."""
    broadcast = [s == 1 and n != 1 for s, n in zip(shape, loop_shape, strict=True)]
    if target != "cpu" or not any(broadcast):
        return "full"
    if all(s == 1 for s in shape):
        return "scalar"
    return "row" if broadcast == [False, True] else "full"


PARALLEL_MIN_ELEMENTS = 1 << 16  # below this, starting threads costs more than it saves


def parallel_pays(layout):
    return int(np.prod(layout.full_shape, dtype=np.int64)) >= PARALLEL_MIN_ELEMENTS


def literal_writer(dtype):
    """How numbers are written in a kernel of `dtype`: typed, so float32 math stays float32."""
    if np.dtype(dtype) == np.float32:
        return lambda c: f"float32({float(c)!r})"
    return lambda c: repr(float(c))


def _index(shape, loop_shape):
    """`[i0, 0]`: the loop indices, with 0 along the dims where this operand is broadcast."""
    return "[" + ", ".join(f"i{d}" if size != 1 or loop_shape[d] == 1 else "0"
                           for d, size in enumerate(shape)) + "]"  # fmt: skip


def _loop(layout, shape_of, target, row_start=(), scalar_start=()):
    """The loop header lines (and the indent of the body) for the layout's loop nest.

    On the CPU the outer loop is `prange` (numba splits it over threads) when the group is big
    enough to pay for waking the threads, else `range`. `row_start`/`scalar_start`: lines that
    open the sums of "row" and "scalar" gradients (see reduction_kind).
    """
    k = len(layout.shape)
    sizes = ", ".join(f"n{d}" for d in range(k))
    lines = [f"    {sizes} = {shape_of}.shape" if k > 1 else f"    n0 = {shape_of}.shape[0]"]
    if shape_of is None:  # the sizes are arguments
        lines = []
    if target == "cpu":
        outer = "prange" if parallel_pays(layout) else "range"
        lines += [f"    {line}" for line in scalar_start]
        lines.append(f"    for i0 in {outer}(n0):")
        lines += [f"        {line}" for line in row_start]
        lines += [f"    {'    ' * d}for i{d} in range(n{d}):" for d in range(1, k)]
        return lines, "    " * (k + 1)
    lines += ["    start = cuda.grid(1)", "    stride = cuda.gridsize(1)"]
    total = " * ".join(f"n{d}" for d in range(k))
    lines.append(f"    for i in range(start, {total}, stride):")
    lines.append("        rest = i")
    for d in range(k - 1, 0, -1):
        lines.append(f"        i{d} = rest % n{d}")
        lines.append(f"        rest = rest // n{d}")
    lines.append("        i0 = rest")
    return lines, "        "


class Program:
    """A group as expressions: `v<k>` is value %k; inputs are loaded, each call is one line."""

    def __init__(self, group):
        self.group, self.dtype = group, np.dtype(group.dtype)
        self.n = literal_writer(self.dtype)
        self.steps = []  # (call, out Value, rule, argument expressions, keyword arguments)
        for call in group.calls:
            rule = rule_for(call.fn)
            args = [self.name(a) if isinstance(a, Value) else self.n(a) for a in call.args]
            kwargs = {k: self.name(v) if isinstance(v, Value) else v
                      for k, v in call.kwargs.items()}  # fmt: skip
            self.steps.append((call, call.outputs[0], rule, args, kwargs))

    @staticmethod
    def name(value):
        return f"v{value.id}"

    def loads(self, layout, indent):
        return [f"{indent}v{v.id} = x{k}{_index(shape, layout.shape)}"
                for k, (v, shape) in enumerate(zip(self.group.inputs, layout.inputs))]  # fmt: skip

    def forward_lines(self, indent):
        return [f"{indent}{self.name(out)} = {rule.forward(self.n, *args, **kwargs)}  # {call!r}"
                for call, out, rule, args, kwargs in self.steps]  # fmt: skip

    def backward_lines(self, indent, wanted):
        """Reverse mode over the group: d<k> accumulates the gradient of %k from all its uses."""
        internal = {out.id for _, out, _, _, _ in self.steps}
        lines, have = [], set()
        for k, out in enumerate(self.group.outputs):
            lines.append(f"{indent}d{out.id} = g{k}[G{k}]")  # [G<k>]: the index, filled in later
            have.add(out.id)
        for call, out, rule, args, kwargs in reversed(self.steps):
            if out.id not in have:
                continue  # nothing downstream needs this value's gradient
            grads = rule.grads(self.n, f"d{out.id}", self.name(out), *args, **kwargs)
            for arg, grad in zip(call.args, grads, strict=False):
                if not isinstance(arg, Value) or grad is None:
                    continue
                if arg.id not in internal and arg.id not in wanted:
                    continue
                op = "+=" if arg.id in have else "="
                lines.append(f"{indent}d{arg.id} {op} {grad}  # {call.name}")
                have.add(arg.id)
        return lines, have


def kernel_source(group, layout, target="cpu", wanted=None):
    """The generated module (header, forward and backward kernels) for one group and layout."""
    program = Program(group)
    n = program.n
    inputs = [f"x{k}" for k in range(len(group.inputs))]
    outs = [f"out{k}" for k in range(len(group.outputs))]
    grads_in = [f"g{k}" for k in range(len(group.outputs))]
    wanted = [k for k in range(len(group.inputs)) if wanted is None or k in wanted]
    grads_out = [f"gx{k}" for k in wanted]
    out_index = _index(layout.shape, layout.shape)
    parallel = parallel_pays(layout)
    decorator = (f'@njit(parallel={parallel}, cache=True, fastmath=False, error_model="numpy")'
                 if target == "cpu" else "@cuda.jit")  # fmt: skip
    lines = _header(group, program.dtype, target)
    # forward
    loop, indent = _loop(layout, "out0", target)
    lines += ["", "", decorator, f"def fused_forward({', '.join(inputs + outs)}):", *loop]
    lines += program.loads(layout, indent) + program.forward_lines(indent)
    lines += [f"{indent}out{k}{out_index} = v{v.id}" for k, v in enumerate(group.outputs)]
    # backward: the loop sizes are arguments, as every gradient may be a broadcast one
    kinds = {k: reduction_kind(layout.inputs[k], layout.shape, target) for k in wanted}
    rows = [f"s{k} = 0.0" for k in wanted if kinds[k] == "row"]
    scalars = [f"s{k} = 0.0" for k in wanted if kinds[k] == "scalar"]
    loop, indent = _loop(layout, None, target, rows, scalars)
    sizes = [f"n{d}" for d in range(len(layout.shape))]
    params = ", ".join(sizes + inputs + grads_in + grads_out)
    if rows or scalars:  # summing in the loop: let LLVM reorder the sum, or it cannot vectorize
        decorator = decorator.replace("fastmath=False", 'fastmath={"reassoc"}')
    lines += ["", "", decorator, f"def fused_backward({params}):", *loop]
    lines += program.loads(layout, indent) + program.forward_lines(indent)
    wanted_ids = {group.inputs[k].id for k in wanted}
    adjoint, have = program.backward_lines(indent, wanted_ids)
    for k in range(len(group.outputs)):
        index = _index(layout.grads[k], layout.shape) if layout.grads else out_index
        adjoint = [line.replace(f"[G{k}]", index) for line in adjoint]
    lines += adjoint
    for k in wanted:
        value = group.inputs[k]
        grad = f"d{value.id}" if value.id in have else n(0.0)
        if kinds[k] == "full":
            lines.append(f"{indent}gx{k}{out_index} = {grad}")
        elif value.id in have:  # summed in the kernel: one number per row, or one in all
            lines.append(f"{indent}s{k} += {grad}")
    lines += [f"        gx{k}[i0, 0] = s{k}" for k in wanted if kinds[k] == "row"]
    zeros = lambda k: "[" + ", ".join("0" for _ in layout.inputs[k]) + "]"  # noqa: E731
    lines += [f"    gx{k}{zeros(k)} = s{k}" for k in wanted if kinds[k] == "scalar"]
    return "\n".join(lines) + "\n"


def _header(group, dtype, target):
    listing = "\n".join(f"    {call!r}" for call in group.calls)
    lines = [
        '"""Generated by autograd_lab.compile: one fused group of elementwise ops.',
        "",
        listing,
        '"""',
        "",
        "from math import cos, erf, expm1, log, log1p, sin, sqrt",
    ]
    if target == "cpu" and dtype == np.float32:  # vectorizable float32 exp/tanh: see kernel_math
        # numba's disk cache does not notice changes in imported functions: the version of
        # kernel_math is part of the source text, so a new kernel_math gives new kernel files
        lines.append(
            "from autograd_lab.compile.kernel_math import exp32 as exp, tanh32 as tanh"
            f"  # version {_kernel_math_version()}"
        )
    else:
        lines.append("from math import exp, tanh")
    lines.append("from numpy import float32  # noqa: F401 (typed constants of float32 kernels)")
    lines.append("from numba import njit, prange" if target == "cpu" else "from numba import cuda")
    return lines


@functools.cache
def _kernel_math_version():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_math.py")
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()[:12]


def kernel_dir():
    """Where generated kernels are written (numba caches their machine code next to them)."""
    path = os.environ.get("AUTOGRAD_LAB_KERNEL_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "autograd_lab", "kernels"
    )
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:  # a read-only home: fall back to the temp dir
        path = os.path.join(tempfile.gettempdir(), "autograd_lab_kernels")
        os.makedirs(path, exist_ok=True)
    return path


def load(source):
    """Import the module of a generated source (written to a file named by its hash, once)."""
    key = hashlib.sha1(source.encode()).hexdigest()[:20]
    module = _modules.get(key)
    if module is not None:
        return module
    path = os.path.join(kernel_dir(), f"fused_{key}.py")
    if not os.path.exists(path):
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as f:
            f.write(source)
        os.replace(temporary, path)  # atomic: other processes see the whole file or none
    spec = importlib.util.spec_from_file_location(f"autograd_lab_fused_{key}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's disk cache finds the kernel's globals by module name
    spec.loader.exec_module(module)
    _modules[key] = module
    return module
