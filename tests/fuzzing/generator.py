"""Draw a random program from a seed.

    >>> program = generate(seed=7)        # the same seed always draws the same program

A program starts from 1-3 leaves (shapes of rank 0-4 with size-1 and empty dims; float32,
float64, int64 or bool; values with zeros, ±1, ties and sometimes NaN/inf and -0.0;
requires_grad; some stored transposed, strided or expanded) and takes 1-12 steps, each drawn
from SPECS: one entry per family of calls (draw.py says how an entry draws). The families, which
together are the shape of the API the fuzzer calls:

    api_elementwise.py  the op records' functions (from autograd_lab/ops/registry.py: each as
                        torch.f(x), x.f() and x.f_(), as its record says), arithmetic and
                        comparisons in every form (function, method, in place, operator,
                        reflected, +=), logic, casts, clamp, where, lerp, addcmul, masked_fill
    api_reductions.py   sum, mean, prod, amax, norm, max/min with indices, var/std, scans
    api_shapes.py       reshape/view, squeeze, transpose, permute, expand, narrow, flip, roll,
                        tril, diagonal, cat/stack, split/chunk/unbind
    api_indexing.py     x[...] and x[...] = v with ints, slices, None, ..., lists, masks, index
                        tensors; gather, scatter, index_select, index_add, masked_select
    api_math_nn.py      @/matmul/mm/bmm/dot/outer/linear, sort/topk/unique/histc, and
                        torch.nn.functional: activations, losses, layers
    api_tensors.py      creation (*_like, arange, the seeded random stream), questions
                        (item, size, stride, ...), autograd calls (requires_grad_, hooks)

Every public callable is drawn by a family or listed in EXCLUDED below with its reason;
tests/test_fuzz_coverage.py checks that. While drawing, each step runs in PyTorch, so the next
step knows which shapes and dtypes it may use.
"""

import random
import re
import warnings

import numpy as np

from . import api_elementwise, api_indexing, api_math_nn, api_reductions, api_shapes, api_tensors  # noqa: F401
from .draw import SPECS, Draw, Value
from .program import FLOATS, Leaf, Program, Step

MAX_ELEMENTS = 4096  # a step that makes more is drawn again: programs stay small and quick


# ---- what the fuzzer does not call, and why ----------------------------------------------------

EXCLUDED = {
    # state of the library, not of a tensor: the runner sets these before each program
    "manual_seed": "the runner seeds both libraries before each program",
    "seed": "seeds from the clock: nothing to compare",
    "initial_seed": "the seed the runner set",
    "get_rng_state": "the generator's bytes: compared through the numbers it draws",
    "set_rng_state": "the generator's bytes: compared through the numbers it draws",
    "set_default_dtype": "global state the runner fixes to float32",
    "get_default_dtype": "global state the runner fixes to float32",
    "set_default_tensor_type": "global state the runner fixes to float32",
    "set_default_device": "devices: the fuzzer compares on the CPU",
    "get_default_device": "devices: the fuzzer compares on the CPU",
    "is_grad_enabled": "global state the runner fixes",
    "is_inference_mode_enabled": "global state the runner fixes",
    "set_num_threads": "threads do not change results",
    "get_num_threads": "threads do not change results",
    "set_printoptions": "printing",
    # devices, I/O, printing, tools around the engine
    "Tensor.cuda": "devices: the fuzzer compares on the CPU",
    "Tensor.numpy": "gives a numpy array: every observation already reads values through it",
    "Tensor.data_ptr": "an address: differs by nature",
    "from_numpy": "takes a numpy array: the program's source names only torch",
    "save": "I/O (our own file format, by design)",
    "load": "I/O (our own file format, by design)",
    "show": "draws a graph (viz)",
    "record": "records a graph for the viewer (viz)",
    "compile": "autograd_lab's compiler: tests/test_compile.py compares it with eager",
    "as_torch": "an import helper (tests/test_as_torch.py)",
    "load_ipython_extension": "the notebook magic",
    "expand": "not in PyTorch, which has only the method x.expand (drawn)",
    "expand_as": "not in PyTorch, which has only the method x.expand_as (drawn)",
    "view": "not in PyTorch, which has only the method x.view (drawn)",
    "Tensor.backward": "called by every program's backward phase (program.py), not as a step",
}


# ---- drawing a program -------------------------------------------------------------------------


def generate(seed, max_steps=12):
    """The program that `seed` draws: the same seed, the same program."""
    import torch

    rng = random.Random(seed)
    leaves = tuple(_leaf(rng, f"x{i}", None) for i in range(rng.choice([1, 1, 2, 2, 3])))
    leaves = (leaves[0],) + tuple(_leaf(rng, leaf.name, leaves[0]) for leaf in leaves[1:])
    namespace = {"torch": torch}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        exec("nan, inf = float('nan'), float('inf')", namespace)
        for leaf in leaves:
            exec(leaf.source(), namespace)
        steps = []
        for number in range(rng.randint(1, max_steps)):
            step = _step(rng, f"v{number}", namespace)
            if step is not None:
                steps.append(step)
    pool = _pool(namespace, torch)
    losses = [v for v in pool if v.is_float and v.requires_grad]
    if losses and rng.random() < 0.85:
        backward = rng.choice(
            ["backward"] * 3
            + ["backward twice, retain_graph", "backward twice"]
            + ["grad, create_graph, then second order"] * 2
        )
        return Program(leaves, tuple(steps), backward, losses[-1].name, seed)
    return Program(leaves, tuple(steps), None, None, seed)


def _step(rng, name, namespace, attempts=8):
    """One step that runs in PyTorch (or, one time in four, one that raises there)."""
    import torch

    for _ in range(attempts):
        pool = _pool(namespace, torch)
        chosen = rng.choices(SPECS, weights=[s.weight for s in SPECS])[0]
        made = chosen.draw(Draw(rng, pool))
        if made is None:
            continue
        statement = len(made) > 2 and made[2]
        step = Step(name, api_name(made[0], statement), made[0], tuple(made[1]), statement)
        trial = dict(namespace)
        try:
            exec(step.source(), trial)
        except Exception:
            if rng.random() < 0.25:
                return step  # an error path: do both libraries raise the same class?
            continue
        if _elements(trial[name], torch) > MAX_ELEMENTS or _retained_and_rebased(trial, torch):
            continue
        namespace.clear()
        namespace.update(trial)
        return step
    return None


def _retained_and_rebased(namespace, torch):
    """Whether a tensor that retains its gradient was changed in place through a view (its
    grad_fn is then CopySlices): PyTorch 2.13 crashes (a segmentation fault, seen with seed
    3053219) in the backward pass after `std_mean(x, 1)[1].retain_grad()` and an in-place op on
    a view of that output, so the fuzzer does not write such programs."""
    for value in namespace.values():
        values = value if isinstance(value, (tuple, list)) else (value,)
        for item in values:
            if isinstance(item, torch.Tensor) and item.retains_grad:
                if type(item.grad_fn).__name__ == "CopySlices":
                    return True
    return False


def api_name(call, statement=False):
    """The public name a step's call exercises, for reports: "sum", "Tensor.add_", "F.relu",
    "getitem", "setitem", or the operator ("x + y")."""
    if statement and re.match(r"\{0\}\[.*\] = ", call):
        return "setitem"
    if call.startswith("(") and call.endswith(" {0})"):  # reflected: (2.0 - x)
        return f"number {call.removesuffix(' {0})').rsplit(' ', 1)[1]} x"
    found = re.match(r"torch\.nn\.functional\.(\w+)|torch\.(\w+(?:\.\w+)?)\(", call)
    if found:
        return f"F.{found[1]}" if found[1] else found[2]
    found = re.match(r"\{0\}\.(\w+)", call)
    if found:
        return f"Tensor.{found[1]}"
    if call.startswith("{0}["):
        return "getitem"
    if call.startswith("(") and "{0} " in call:  # an operator: (x + y), (2 - x), x += y
        operator = call.split("{0} ")[1].split(" ")[0]
        return f"x {operator} y"
    if call.startswith("{0} "):
        return f"x {call.split(' ')[1]} y"
    if re.match(r"\([-+~]\{0\}\)", call):
        return f"{call[1]}x"
    if call.endswith("[{0}]"):
        return "Tensor.__index__"
    head = re.match(r"\(?(\S+?)\s*[({]", call)
    return head[1] if head else call[:20]


def _elements(value, torch):
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (tuple, list)):
        return sum(_elements(item, torch) for item in value)
    return 0


def _pool(namespace, torch):
    """The tensors the program has made so far (a tuple's tensors too: v3[0], v3[1])."""
    pool = []
    for name, value in namespace.items():
        if isinstance(value, torch.Tensor):
            pool.append(_value(name, value))
        elif isinstance(value, (tuple, list)) and name != "torch":
            for index, item in enumerate(value[:4]):
                if isinstance(item, torch.Tensor):
                    pool.append(_value(f"{name}[{index}]", item))
    return pool


def _value(name, tensor):
    dtype = str(tensor.dtype).replace("torch.", "")
    shares = _shares_places(tensor.shape, tensor.stride())
    return Value(name, tuple(tensor.shape), dtype, tensor.requires_grad, tensor._is_view(), shares)


def _shares_places(shape, stride):
    """Do two elements of a tensor with this geometry read one storage place (a dim expanded
    with stride 0, an as_strided window that overlaps itself)?"""
    places = np.zeros((), dtype=np.int64)
    for size, step in zip(shape, stride):
        places = np.add.outer(places, np.arange(size) * step)
    return np.unique(places).size < places.size


def _leaf(rng, name, first):
    """A leaf tensor; after the first, most leaves have a shape that broadcasts with the first's."""
    if first is not None and rng.random() < 0.7:
        shape = list(first.shape)
        if shape and rng.random() < 0.4:
            shape = shape[rng.randint(1, len(shape)) :]  # fewer dims
        shape = [1 if rng.random() < 0.25 else size for size in shape]
    else:
        rank = rng.choices([0, 1, 2, 3, 4], weights=[1, 3, 3, 2, 1])[0]
        shape = [rng.choices([0, 1, 2, 3, 4], weights=[0.3, 2, 3, 3, 1])[0] for _ in range(rank)]
    dtype = rng.choices(["float32", "float64", "int64", "bool"], weights=[6, 2, 1.5, 1])[0]
    count = int(np.prod(shape, dtype=int))
    special = rng.random() < 0.15  # NaN, ±inf and -0.0 in this leaf
    values = []
    for _ in range(count):
        if dtype == "bool":
            values.append(rng.random() < 0.5)
        elif dtype == "int64":
            values.append(rng.randint(-3, 4))
        elif special and rng.random() < 0.3:
            values.append(rng.choice([float("nan"), float("inf"), -float("inf"), -0.0]))
        elif rng.random() < 0.4:
            values.append(rng.choice([0.0, 1.0, -1.0, 0.5, 2.0, -2.0]))  # zeros, ±1 and ties
        else:
            values.append(round(rng.uniform(-3, 3), 2))
    layout = rng.choices(["contiguous", "transposed", "strided", "expanded"], weights=[7, 1, 1, 1])[
        0
    ]
    if layout == "expanded" and shape:
        row = count // shape[0] if shape[0] else 0
        values = values[:row] * shape[0]  # an expanded dim repeats one row
    requires_grad = dtype in FLOATS and rng.random() < 0.75
    return Leaf(name, tuple(shape), dtype, tuple(values), requires_grad, layout)
