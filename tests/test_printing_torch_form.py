"""What a script prints is PyTorch's text, whatever the module is imported as.

`import autograd_lab as torch` must print `torch.Size([2, 3])`, `torch.float32`,
`<MulBackward0 object at 0x...>` and, under every `set_printoptions`, the same tensor text as
PyTorch. Each tensor here is made from the same numpy data in both libraries.
"""

import re

import numpy as np
import pytest

import autograd_lab as ag

pytestmark = pytest.mark.oracle

rng = np.random.default_rng(13)
NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def _default_print_options(torch):
    """Every test starts and ends with the default options, in both libraries."""
    yield
    ag.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


# ---- the small value types ------------------------------------------------------------------------
DESCRIPTIONS = {
    "shape": lambda lib: lib.zeros(2, 3).shape,
    "size()": lambda lib: lib.zeros(2, 3).size(),
    "0-d shape": lambda lib: lib.tensor(1.0).shape,
    "float32": lambda lib: lib.zeros(2).dtype,
    "float64": lambda lib: lib.float64,
    "int64": lambda lib: lib.tensor([1]).dtype,
    "bool": lambda lib: lib.bool,
    "int8": lambda lib: lib.int8,
    "int16 (short)": lambda lib: lib.short,
    "uint8": lambda lib: lib.uint8,
    "half": lambda lib: lib.half,
    "bfloat16": lambda lib: lib.bfloat16,
    "cfloat": lambda lib: lib.cfloat,
    "device": lambda lib: lib.zeros(2).device,
    "named device": lambda lib: lib.device("cuda", 0),
    "tuple of them": lambda lib: (lib.zeros(4, 1).shape, lib.float32, lib.device("cpu")),
}


@pytest.mark.parametrize("name", DESCRIPTIONS)
def test_types_print_as_pytorch(name, torch):
    ours, theirs = DESCRIPTIONS[name](ag), DESCRIPTIONS[name](torch)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_grad_fn_prints_with_its_address_as_pytorch(torch):
    pattern = r"<MulBackward0 object at 0x[0-9a-f]+>"
    ours = (ag.tensor(2.0, requires_grad=True) * 3).grad_fn
    theirs = (torch.tensor(2.0, requires_grad=True) * 3).grad_fn
    assert re.fullmatch(pattern, repr(ours)) and re.fullmatch(pattern, repr(theirs))
    assert repr(ours) == f"<MulBackward0 object at {hex(id(ours))}>"
    leaf_node = ours.next_functions[0][0]
    assert re.fullmatch(r"<AccumulateGrad object at 0x[0-9a-f]+>", repr(leaf_node))


# ---- tensors under every print option -------------------------------------------------------------
def data_cases():
    """numpy data: random, large and small magnitudes, nan/inf, -0.0, ints, bools, 0-d to 3-d."""
    return {
        "random": rng.standard_normal(7).astype(np.float32),
        "random_2d": rng.standard_normal((4, 5)).astype(np.float32),
        "random_3d_float64": rng.standard_normal((2, 3, 4)),
        "big": (rng.standard_normal(6) * 1e9).astype(np.float32),
        "small": (rng.standard_normal(6) * 1e-7).astype(np.float32),
        "mixed": np.array([1e-3, 1.0, 12345.678], dtype=np.float32),
        "whole": np.array([1.0, -2.0, 30.0], dtype=np.float32),
        "whole_huge": np.array([1.0, 3e9], dtype=np.float32),
        "nan_inf": np.array([NAN, INF, -INF, 0.5], dtype=np.float32),
        "only_nan_zero": np.array([NAN, 0.0, -0.0], dtype=np.float32),
        "negative_zero": np.array([-0.0, 2.5], dtype=np.float32),
        "0d": np.array(3.14159, dtype=np.float32),
        "0d_float64": np.array(-1e-9),
        "int64": np.arange(-5, 20),
        "int8": np.array([-128, 0, 127], dtype=np.int8),
        "int16": np.array([-300, 7], dtype=np.int16),
        "uint8": np.array([0, 255], dtype=np.uint8),
        "bool": rng.standard_normal((3, 3)) > 0,
        "half": np.array([0.1, 1.5, 65504], dtype=np.float16),
        "long_row": rng.standard_normal(40).astype(np.float32),
        "summarized": rng.standard_normal(1500).astype(np.float32),
        "summarized_2d": rng.standard_normal((50, 50)).astype(np.float32),
        "summarized_3d_int": np.arange(3000).reshape(10, 15, 20),
        "empty": np.zeros(0, dtype=np.float32),
        "empty_2d_int": np.zeros((0, 3), dtype=np.int64),
    }


DATA = data_cases()
OPTIONS = {
    "defaults": {},
    "precision 2": {"precision": 2},
    "precision 8": {"precision": 8},
    "precision 0": {"precision": 0},
    "sci_mode on": {"sci_mode": True},
    "sci_mode off": {"sci_mode": False},
    "threshold 5": {"threshold": 5},
    "threshold 5, edgeitems 1": {"threshold": 5, "edgeitems": 1},
    "edgeitems 0": {"threshold": 5, "edgeitems": 0},
    "linewidth 40": {"linewidth": 40},
    "linewidth 200": {"linewidth": 200},
    "profile short": {"profile": "short"},
    "profile full": {"profile": "full"},
    "profile full, precision 2": {"profile": "full", "precision": 2},
}


@pytest.mark.parametrize("data_name", DATA)
@pytest.mark.parametrize("options", OPTIONS)
def test_repr_matches_pytorch_under_print_options(options, data_name, torch):
    ag.set_printoptions(**OPTIONS[options])
    torch.set_printoptions(**OPTIONS[options])
    array = DATA[data_name]
    assert repr(ag.tensor(array)) == repr(torch.tensor(array))


@pytest.mark.parametrize("data_name", ["random", "random_2d", "whole", "summarized"])
def test_autograd_suffixes_match_pytorch_under_print_options(data_name, torch):
    array = DATA[data_name].astype(np.float64)
    for options in ({}, {"linewidth": 30}, {"precision": 1, "threshold": 10}):
        ag.set_printoptions(**options)
        torch.set_printoptions(**options)
        for lib in (ag, torch):
            x = lib.tensor(array, requires_grad=True)
            lib.printed = (repr(x), repr(x * 2), repr((x * 2).sum()))
        assert ag.printed == torch.printed


def test_get_printoptions_and_the_context_manager_as_pytorch(torch):
    # Both live beside the printing code, not at the top level, in PyTorch (torch._tensor_str)
    from torch import _tensor_str as theirs

    from autograd_lab import _format as ours

    assert ours.get_printoptions() == theirs.get_printoptions()
    ag.set_printoptions(precision=2, linewidth=60, sci_mode=True)
    torch.set_printoptions(precision=2, linewidth=60, sci_mode=True)
    assert ours.get_printoptions() == theirs.get_printoptions()
    # sci_mode, unlike the others, goes back to automatic when a call leaves it out
    ag.set_printoptions(precision=3)
    torch.set_printoptions(precision=3)
    assert ours.get_printoptions() == theirs.get_printoptions()
    ag.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    with ours.printoptions(precision=1), theirs.printoptions(precision=1):
        assert (
            repr(ag.tensor([1.25, 2.5])) == repr(torch.tensor([1.25, 2.5])) == "tensor([1.2, 2.5])"
        )
    assert repr(ag.tensor([1.25, 2.5])) == "tensor([1.2500, 2.5000])"
    assert ours.get_printoptions() == theirs.get_printoptions()


def test_print_of_a_swapped_in_script_is_pytorchs(torch, capsys):
    def script(torch):
        x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = (x * x).sum()
        print(x.shape, x.dtype, x.device, x.size(1), y)
        print(x.sum(dim=0), torch.tensor([1, 2]).dtype, torch.zeros(2, dtype=torch.float64))
        print(torch.arange(12).reshape(3, 4), torch.ones(2, 2, dtype=torch.int8))

    script(ag)
    ours = capsys.readouterr().out
    script(torch)
    assert ours == capsys.readouterr().out


LEARNER_SCRIPT = """
import torch
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
print(lin.weight)
print(lin.weight.shape, lin.weight.dtype, lin.weight.device, lin.weight.grad_fn)
print(torch.linspace(-torch.pi, torch.pi, 2000))
print(torch.arange(0, 1, 0.1), torch.logspace(0, 3, 4))
print(torch.finfo(torch.float32).eps, torch.finfo(torch.float16), torch.iinfo(torch.int8))
print(torch.zeros(2, 3).size(), torch.zeros(2, 3).size(-1), torch.numel(torch.zeros(4, 5)))
print(torch.tensor([1, 2], dtype=torch.int8) + torch.tensor([3, 4], dtype=torch.uint8))
try:
    torch.set_default_dtype(torch.float64)
    print(torch.tensor([1.5]), torch.zeros(2), torch.tensor([1.5], dtype=torch.float32))
    print(torch.nn.Linear(2, 1).weight.dtype, torch.get_default_dtype())
finally:
    torch.set_default_dtype(torch.float32)
try:
    torch.set_printoptions(precision=2, sci_mode=False)
    print(torch.randn(3, 3) * 1e5)
finally:
    torch.set_printoptions(profile="default")
"""


def test_a_learner_script_prints_the_same_after_swapping_the_import(torch, capsys):
    exec(compile(LEARNER_SCRIPT, "<script>", "exec"), {})
    theirs = capsys.readouterr().out
    swapped = LEARNER_SCRIPT.replace("import torch", "import autograd_lab as torch")
    exec(compile(swapped, "<script>", "exec"), {})
    assert capsys.readouterr().out == theirs


def random_array(seed):
    """A random tensor's data: 0 to 3 dims, any dtype, magnitudes from 1e-9 to 1e12, some nan/inf."""
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 8, size=rng.integers(0, 4)))
    kind = rng.choice(["float32", "float64", "float16", "int64", "int8", "bool", "whole"])
    if kind == "bool":
        return rng.standard_normal(shape) > 0
    if kind in ("int64", "int8"):
        return rng.integers(-100, 100, size=shape).astype(kind)
    values = rng.standard_normal(shape) * 10.0 ** rng.integers(-9, 13)
    if kind == "whole":
        return np.round(values).astype(np.float32)
    if values.ndim and rng.random() < 0.3:  # some special values
        values.flat[rng.integers(values.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
    with np.errstate(over="ignore"):  # float16 turns the huge ones into inf, as PyTorch would
        return values.astype(kind)


@pytest.mark.parametrize("seed", range(300))
def test_random_tensors_print_as_pytorch(seed, torch):
    array = random_array(seed)
    assert repr(ag.tensor(array)) == repr(torch.tensor(array))
    if array.dtype.kind == "f":
        assert repr(ag.tensor(array, requires_grad=True)) == repr(
            torch.tensor(array, requires_grad=True)
        )
