"""Every public callable of autograd_lab is drawn by the fuzzer or excluded with a reason.

When the API grows, a new function, Tensor method or nn.functional entry fails this test until
tests/fuzzing/generator.py draws it (a spec lists it in its `covers`) or lists it in `EXCLUDED`
with a short reason (random sampling the runner cannot seed, I/O, printing, devices, ...).
"""

import inspect

from fuzzing.generator import EXCLUDED, SPECS

import autograd_lab as ag
import autograd_lab.nn.functional as F

# Python's operators on a Tensor: x + y calls Tensor.__add__, 2 + x __radd__, x += y __iadd__
OPERATORS = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "eq", "ne", "getitem", "setitem",
    "len", "bool", "float", "int", "index", "iter",
}  # fmt: skip


def public_api():
    """The names the fuzzer must account for: "sum", "Tensor.sum", "Tensor.__add__", "F.relu"."""
    names = set()
    for name in dir(ag):
        value = getattr(ag, name)
        if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
            continue
        if callable(value):
            names.add(name)
    for name, value in inspect.getmembers(ag.Tensor):
        if isinstance(inspect.getattr_static(ag.Tensor, name), property):
            continue  # x.T, x.grad, ...: attributes, not calls
        if name.startswith("__") and name.endswith("__"):
            bare = name[2:-2]
            if bare in OPERATORS or (bare[:1] in "ri" and bare[1:] in OPERATORS):
                names.add(f"Tensor.{name}")
        elif not name.startswith("_") and callable(value):
            names.add(f"Tensor.{name}")
    names |= {f"F.{name}" for name in F.__all__}
    return names


def drawn():
    return {name for spec in SPECS for name in spec.covers}


def test_every_public_callable_is_drawn_or_excluded_with_a_reason():
    missing = sorted(public_api() - drawn() - set(EXCLUDED))
    assert not missing, (
        f"the fuzzer neither draws nor excludes {missing}: add each to a spec's covers in "
        "tests/fuzzing/generator.py (and draw it), or to EXCLUDED with the reason"
    )


def test_the_fuzzer_lists_only_names_that_exist():
    unknown = sorted((drawn() | set(EXCLUDED)) - public_api())
    assert not unknown, f"tests/fuzzing/generator.py names what autograd_lab lacks: {unknown}"


def test_nothing_is_both_drawn_and_excluded():
    assert not drawn() & set(EXCLUDED)
    assert all(reason.strip() for reason in EXCLUDED.values())
