"""Write a fused group as Python source for numba: a forward and a backward kernel.

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
            v1 = v0 * 2.0  # %1 = mul(%0, 2)
            v2 = tanh(v1)  # %2 = tanh(%1)
            out0[i0] = v2
    ...

The forward kernel is the group's expressions (compile/rules.py: each op's `kernel`) in one loop:
each element is read once, every intermediate lives in a register, each output is written once.
The backward kernel recomputes the forward expressions (cheaper than storing and re-reading them)
and then applies the chain rule in reverse over the group: `d<k>` is the gradient of value `%k`,
summed over every use, so one kernel produces every input's gradient.

Every generator writes its kernels the same way (the row-wise ones of compile/extras too): into a
`Block` of statements and nested loops, with expressions printed from their trees (`Printer`),
and a header that imports exactly the math functions the expressions call.

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

from .. import optional
from ..ops.scalar import Expr, source
from .ir import Value
from .rules import rule_for

_modules = {}  # source hash -> imported module: each kernel is compiled once per process
PARALLEL_MIN_ELEMENTS = 1 << 16  # below this, starting threads costs more than it saves


# ---- the loop IR every generator writes into ---------------------------------------------------


class Block:
    """Statements of a kernel, in order: lines of text, and loops (Blocks) nested in it."""

    def __init__(self, header=None):
        self.header = header  # "for i0 in prange(n0):", or None for a function's body
        self.items = []

    def add(self, *lines):
        self.items.extend(lines)
        return self

    def loop(self, header):
        """Open a loop here; statements added to the returned Block go inside it."""
        inner = Block(header)
        self.items.append(inner)
        return inner

    def lines(self, indent=""):
        found = [indent + self.header] if self.header else []
        inside = indent + "    " if self.header else indent
        for item in self.items:
            found += item.lines(inside) if isinstance(item, Block) else [inside + item]
        if self.header and len(found) == 1:  # a loop with nothing to do
            found.append(inside + "pass")
        return found


def function(name, params, body, parallel=False, fastmath=False, target="cpu"):
    """A kernel's source: its decorator, signature and body (a Block)."""
    if target == "cpu":
        decorator = (
            f'@njit(parallel={parallel}, cache=True, fastmath={fastmath}, error_model="numpy")'
        )
    else:
        decorator = "@cuda.jit"
    head = [decorator, f"def {name}({', '.join(params)}):"]
    return "\n".join(head + (body.lines("    ") or ["    pass"]))


class Printer:
    """How a kernel of one dtype writes expressions: typed numbers, so float32 stays float32."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.literal = literal_writer(self.dtype)
        self.functions = set()  # every function the printed expressions call (for the imports)

    def cast(self, text):
        """A truth value used as a number, as the kernel's float type (numba has no float(bool))."""
        return f"{self.dtype.name}({text})"

    def __call__(self, expr):
        self.functions |= expr.functions()
        return source(expr, self.literal, self.cast)


def literal_writer(dtype):
    """How numbers are written in a kernel of `dtype`: typed, so float32 math stays float32."""
    if np.dtype(dtype) == np.float32:
        return lambda c: f"float32({float(c)!r})"
    return lambda c: repr(float(c))


def header(title, listing, functions, dtype, target, extra=()):
    """A generated module's docstring (the calls it computes) and its imports: the math
    functions its expressions call (`functions`), and numba."""
    lines = ['"""' + title, "", *[f"    {line}" for line in listing], '"""', ""]
    lines += math_imports(functions, dtype, target)
    lines += list(extra)
    lines.append("from numpy import float32, float64  # noqa: F401 (typed numbers, casts)")
    lines.append("from math import inf, nan  # noqa: F401 (how repr writes non-finite numbers)")
    lines.append("from numba import njit, prange" if target == "cpu" else "from numba import cuda")
    return lines


# kernel_math's vectorizable float32 versions, for float32 CPU kernels (the rest: Python's math)
FAST_FLOAT32 = {
    "exp": "exp32",
    "tanh": "tanh32",
    "exp_nonpositive": "exp_nonpositive32",
    "order_key": "order_key32",
    "from_order_key": "from_order_key32",
}
FLOAT64 = {
    "exp_nonpositive": "exp",
    "order_key": "order_key64",
    "from_order_key": "from_order_key64",
}
BUILTINS = {"abs", "min", "max", "int", "float", "float32", "float64"}
# Python's math.floor/ceil/trunc return an int (numba's too): no nan, no inf, and a float kernel
# would change type halfway. These come from modules whose versions stay float: kernel_math's
# (numpy's, which vectorize) on the CPU, the CUDA backend's device functions on a GPU.
ROUNDING = {"ceil", "floor", "rint", "trunc"}


def math_imports(functions, dtype, target):
    """Import lines for the functions a kernel calls (ops/scalar.py names them as Python's math
    module does; kernel_math has vectorizable float32 ones, and the row-wise helpers)."""
    float32 = target == "cpu" and np.dtype(dtype) == np.float32
    renames = FAST_FLOAT32 if float32 else FLOAT64
    lines, plain = [], []
    kernel_math = []
    rounding = sorted(set(functions) & ROUNDING)
    if rounding and target == "cuda":
        lines.append(
            f"from autograd_lab.backend.cuda.scalar_functions import {', '.join(rounding)}"
        )
    elif rounding:
        kernel_math += rounding
    for name in sorted(set(functions) - BUILTINS - ROUNDING):
        found = renames.get(name)
        if found is None:
            plain.append(name)
        elif found in ("exp",):  # float64: e^x for x <= 0 is math's exp
            plain.append(f"exp as {name}")
        else:
            kernel_math.append(f"{found} as {name}")
    if kernel_math:
        # numba's disk cache does not notice changes in imported functions: the version of
        # kernel_math is part of the source text, so a new kernel_math gives new kernel files
        lines.append(
            f"from autograd_lab.compile.extras.kernel_math import {', '.join(kernel_math)}"
            f"  # version {_kernel_math_version()}"
        )
    if plain:
        lines.append(f"from math import {', '.join(plain)}")
    return lines


# ---- the elementwise group's loops ---------------------------------------------------------------


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


def parallel_pays(layout):
    return int(np.prod(layout.full_shape, dtype=np.int64)) >= PARALLEL_MIN_ELEMENTS


def _index(shape, loop_shape):
    """`[i0, 0]`: the loop indices, with 0 along the dims where this operand is broadcast."""
    return (
        "["
        + ", ".join(
            f"i{d}" if size != 1 or loop_shape[d] == 1 else "0" for d, size in enumerate(shape)
        )
        + "]"
    )


def _loops(body, layout, target, sizes_of=None, per_row=(), in_all=()):
    """Open the layout's loop nest in `body`; returns the innermost Block.

    On the CPU the outer loop is `prange` (numba splits it over threads) when the group is big
    enough to pay for waking the threads, else `range`. `sizes_of`: the array whose shape gives
    the loop sizes (None: they are arguments). `in_all` / `per_row`: statements before the loops
    and inside the outer one (they open the sums of "scalar" and "row" gradients).
    """
    k = len(layout.shape)
    if sizes_of is not None:
        sizes = ", ".join(f"n{d}" for d in range(k))
        body.add(f"{sizes} = {sizes_of}.shape" if k > 1 else f"n0 = {sizes_of}.shape[0]")
    if target == "cpu":
        body.add(*in_all)
        outer = "prange" if parallel_pays(layout) else "range"
        inner = body.loop(f"for i0 in {outer}(n0):").add(*per_row)
        for d in range(1, k):
            inner = inner.loop(f"for i{d} in range(n{d}):")
        return inner
    body.add("start = cuda.grid(1)", "stride = cuda.gridsize(1)")
    inner = body.loop(f"for i in range(start, {' * '.join(f'n{d}' for d in range(k))}, stride):")
    inner.add("rest = i")
    for d in range(k - 1, 0, -1):
        inner.add(f"i{d} = rest % n{d}", f"rest = rest // n{d}")
    return inner.add("i0 = rest")


class Program:
    """A group as expressions: `v<k>` is value %k; inputs are loaded, each call is one line."""

    def __init__(self, group, printer):
        self.group, self.printer = group, printer
        self.steps = []  # (call, out Value, rule, argument expressions, keyword arguments)
        for call in group.calls:
            args = [self.variable(a) if isinstance(a, Value) else a for a in call.args]
            kwargs = {
                k: self.variable(v) if isinstance(v, Value) else v for k, v in call.kwargs.items()
            }
            self.steps.append((call, call.outputs[0], rule_for(call), args, kwargs))

    @staticmethod
    def variable(value):
        return Expr.variable(f"v{value.id}")

    def loads(self, layout):
        return [
            f"v{v.id} = x{k}{_index(shape, layout.shape)}"
            for k, (v, shape) in enumerate(zip(self.group.inputs, layout.inputs))
        ]

    def forward(self):
        return [
            f"v{out.id} = {self.printer(rule.forward(args, kwargs))}  # {call!r}"
            for call, out, rule, args, kwargs in self.steps
        ]

    def backward(self, wanted, grad_indexes):
        """Reverse mode over the group: d<k> accumulates the gradient of %k from all its uses;
        output k's incoming gradient is read at `grad_indexes[k]`. Returns (statements, ids of
        the values that got a gradient)."""
        internal = {out.id for _, out, _, _, _ in self.steps}
        lines, have = [], set()
        for k, out in enumerate(self.group.outputs):
            lines.append(f"d{out.id} = g{k}{grad_indexes[k]}")
            have.add(out.id)
        for call, out, rule, args, kwargs in reversed(self.steps):
            if out.id not in have:
                continue  # nothing downstream needs this value's gradient
            grads = rule.grads(Expr.variable(f"d{out.id}"), self.variable(out), args, kwargs)
            for arg, grad in zip(call.args, grads, strict=False):
                if not isinstance(arg, Value) or grad is None:
                    continue
                if arg.id not in internal and arg.id not in wanted:
                    continue
                op = "+=" if arg.id in have else "="
                lines.append(f"d{arg.id} {op} {self.printer(grad)}  # {call.name}")
                have.add(arg.id)
        return lines, have


def kernel_source(group, layout, target="cpu", wanted=None):
    """The generated module (header, forward and backward kernels) for one group and layout."""
    printer = Printer(group.dtype)
    program = Program(group, printer)
    inputs = [f"x{k}" for k in range(len(group.inputs))]
    outs = [f"out{k}" for k in range(len(group.outputs))]
    wanted = [k for k in range(len(group.inputs)) if wanted is None or k in wanted]
    out_index = _index(layout.shape, layout.shape)
    parallel = parallel_pays(layout)
    # forward
    forward = Block()
    inner = _loops(forward, layout, target, sizes_of="out0")
    inner.add(*program.loads(layout), *program.forward())
    inner.add(*[f"out{k}{out_index} = v{v.id}" for k, v in enumerate(group.outputs)])
    # backward: the loop sizes are arguments, as every gradient may be a broadcast one
    kinds = {k: reduction_kind(layout.inputs[k], layout.shape, target) for k in wanted}
    rows = [k for k in wanted if kinds[k] == "row"]
    totals = [k for k in wanted if kinds[k] == "scalar"]
    backward = Block()
    inner = _loops(
        backward,
        layout,
        target,
        None,
        [f"s{k} = 0.0" for k in rows],
        [f"s{k} = 0.0" for k in totals],
    )
    grad_indexes = [
        _index(layout.grads[k], layout.shape) if layout.grads else out_index
        for k in range(len(group.outputs))
    ]
    adjoint, have = program.backward({group.inputs[k].id for k in wanted}, grad_indexes)
    inner.add(*program.loads(layout), *program.forward(), *adjoint)
    for k in wanted:
        value = group.inputs[k]
        grad = f"d{value.id}" if value.id in have else printer.literal(0.0)
        if kinds[k] == "full":
            inner.add(f"gx{k}{out_index} = {grad}")
        elif value.id in have:  # summed in the kernel: one number per row, or one in all
            inner.add(f"s{k} += {grad}")
    if rows:  # the rows' sums, written once each row is done: after the inner loop
        backward.items[-1].add(*[f"gx{k}[i0, 0] = s{k}" for k in rows])
    backward.add(*[f"gx{k}[{', '.join('0' for _ in layout.inputs[k])}] = s{k}" for k in totals])
    sizes = [f"n{d}" for d in range(len(layout.shape))]
    params = sizes + inputs + [f"g{k}" for k in range(len(group.outputs))]
    params += [f"gx{k}" for k in wanted]
    # summing in the loop: let LLVM reorder the sum, or it cannot vectorize (reduction_kind)
    fastmath = '{"reassoc"}' if rows or totals else False
    lines = header(
        "Generated by autograd_lab.compile: one fused group of elementwise ops.",
        [repr(call) for call in group.calls],
        printer.functions,
        group.dtype,
        target,
    )
    lines += ["", "", function("fused_forward", inputs + outs, forward, parallel, target=target)]
    lines += ["", "", function("fused_backward", params, backward, parallel, fastmath, target)]
    return "\n".join(lines) + "\n"


# ---- loading generated modules -------------------------------------------------------------------


@functools.cache
def _kernel_math_version():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extras", "kernel_math.py")
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
    # every generated kernel imports numba: name the extra that installs it rather than fail
    # inside the generated file (and never fall back to unfused ops in silence)
    optional.require("numba", "running a fused kernel (ag.compile)")
    spec = importlib.util.spec_from_file_location(f"autograd_lab_fused_{key}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's disk cache finds the kernel's globals by module name
    spec.loader.exec_module(module)
    _modules[key] = module
    return module
