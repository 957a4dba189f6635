"""An op is one record: everything that lists ops is derived from the records (ops/registry.py).

The exports, the Tensor methods and in-place methods, the viewer's derivative texts, the fusion
rules and the op table must be exactly what the records say: no op missing, none listed twice.
"""

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab import Tensor
from autograd_lab.compile import trace
from autograd_lab.compile.rules import rule_for
from autograd_lab.compile.trace import Compare
from autograd_lab.ops import registry
from autograd_lab.ops.table import OPS, from_records
from autograd_lab.viz import LOCAL_DERIVATIVES

FUNCTIONS = registry.functions()


def test_the_exports_are_the_public_records():
    assert ag.ops.__all__ == sorted(FUNCTIONS)
    for name, function in FUNCTIONS.items():
        assert getattr(ag.ops, name) is function
        assert getattr(ag, name) is function, f"autograd_lab.{name} is not the record's function"


def test_every_method_and_in_place_method_is_bound_from_the_records():
    for name, function in registry.methods().items():
        assert getattr(Tensor, name) is function, f"Tensor.{name}"
    for name, function in registry.inplace_methods().items():
        x = ag.tensor([[0.25, 0.5], [1.0, 2.0]] if name in ("tril", "triu") else [0.25, 0.5])
        expected = function(x.clone(), *_arguments(name))
        assert getattr(x, name + "_")(*_arguments(name)) is x, f"Tensor.{name}_ returns self"
        np.testing.assert_allclose(x.numpy(), expected.numpy(), err_msg=f"Tensor.{name}_")
    for name, value in vars(Tensor).items():  # and no op bound by hand beside them
        if value in FUNCTIONS.values() and not name.startswith("__"):
            assert name in registry.methods(), f"Tensor.{name} is an op the records do not bind"


def _arguments(name):
    """Arguments for an in-place method after self (two-input ops get a second tensor)."""
    two = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow"}
    two |= {"remainder", "fmod", "floor_divide"}
    if name in two:
        return (ag.tensor([2.0, 3.0]),)
    if name in ("clamp", "clip"):
        return (0.3,)
    if name in ("addcmul", "addcdiv"):
        return (ag.tensor([2.0, 3.0]), ag.tensor([4.0, 5.0]))
    if name == "lerp":
        return (ag.tensor([2.0, 3.0]), 0.5)
    if name in ("cumsum", "cumprod"):  # a scan needs its dim
        return (0,)
    if name in ("scatter", "scatter_add"):
        return (0, ag.tensor([1, 0]), ag.tensor([2.0, 3.0]))
    if name == "index_add":
        return (0, ag.tensor([1, 0]), ag.tensor([2.0, 3.0]))
    if name == "masked_fill":
        return (ag.tensor([True, False]), 1.5)
    return ()


def test_a_name_is_public_once():
    with pytest.raises(RuntimeError, match="two ops are both public as 'exp'"):
        registry.public("exp")(lambda x: x)  # a record's own name (Exp's)
    with pytest.raises(RuntimeError, match="two ops are both public as 'add'"):
        registry.public("add")(lambda x: x)  # a hand-written function's
    assert registry.functions() == FUNCTIONS  # nothing was registered


def test_the_viewer_shows_the_records_derivatives():
    assert LOCAL_DERIVATIVES == registry.derivatives()
    for spec in OPS:  # every op of the table that is not a loss says its derivative
        if spec.kind in ("elementwise", "reduction", "shape", "linalg") and spec.node:
            assert spec.node in LOCAL_DERIVATIVES, f"{spec.name}: {spec.node} has no derivative"


def test_the_op_table_has_every_record_with_a_public_function_once():
    names = [spec.name for spec in OPS]
    assert len(names) == len(set(names)), "an op-table entry is listed twice"
    own = [cls for cls in registry.op_classes() if "function" in vars(cls)]
    assert [spec.node for spec in from_records()] == [cls.node_name for cls in own]


@pytest.mark.parametrize("spec", from_records(), ids=lambda spec: spec.name)
def test_a_kernel_computes_what_forward_computes(spec):
    """The record's kernel, called on numpy arrays, equals the op's own forward: one formula."""
    (cls,) = [c for c in registry.op_classes() if spec.name in registry._names(c)]
    if cls.kernel is None:
        pytest.skip("no kernel")
    rng = np.random.default_rng(0)
    from test_op_table import DOMAINS

    arrays = [DOMAINS[spec.domain](rng, (7,)) for _ in range(spec.arity)]
    with np.errstate(all="ignore"):
        expected = spec.call(ag, *[ag.tensor(a) for a in arrays]).numpy()
        np.testing.assert_allclose(cls.kernel(*arrays), expected, rtol=1e-14, atol=1e-15)


def test_every_elementwise_call_has_a_rule_derived_from_its_record():
    """Every op of the table whose record has a kernel gets a fusion rule: its local
    derivatives found by tracing its own backward."""
    for spec in OPS:
        inputs = [ag.ones(3, dtype=ag.float64) for _ in range(spec.arity)]
        try:
            calls = trace(lambda *xs, spec=spec: spec.call(ag, *xs), *inputs).calls
        except Exception:
            continue
        for call in calls:
            if call.fn is not Compare and getattr(call.fn, "kernel", None) is not None:
                assert rule_for(call) is not None, f"{spec.name}: no rule for {call.name}"
