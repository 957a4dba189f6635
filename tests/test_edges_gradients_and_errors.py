"""Gradients and backward errors at the edges (issue 14, fuzz wave 9): each test runs the same
lines with autograd_lab and with PyTorch 2.13 (the `torch` fixture) and compares gradients, or
error classes and key words; where PyTorch's behaviour is an accident of its implementation, the
test shows both behaviours and that the fuzzer counts the difference as a README simplification."""

import numpy as np
import pytest
from conftest import same
from fuzzing import check
from fuzzing.compare import Divergence
from fuzzing.program import Leaf, Program, Step
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


def test_floor_divide_in_place_through_a_view_loses_the_divisors_edge_only_in_pytorch(torch):
    # fuzz seed 1712168: PyTorch's NotImplemented node keeps edges only for the operands that
    # require grad; CopySlices takes its first edge for the view's own, so with a view that needs
    # no gradient it drops the divisor's edge, and autograd.grad, which runs only the nodes on
    # a path to its inputs, never reaches the node (backward(), which runs every node, raises).
    # Ours keeps the node on the divisor's path and raises there (a README simplification).
    def grads(lib, through_a_view):
        divisor = lib.tensor(2.0, requires_grad=True)
        base = lib.tensor([3.0, 4.0])
        changed = base[1:] if through_a_view else base
        changed.floor_divide_(divisor)
        return lib.autograd.grad(base.sum(), [divisor], allow_unused=True)

    for lib in (ag, torch):  # without a view both reach the node, and raise
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide"):
            grads(lib, through_a_view=False)
        divisor = lib.tensor(2.0, requires_grad=True)
        base = lib.tensor([3.0, 4.0])
        base[1:].floor_divide_(divisor)
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide"):
            base.sum().backward()  # every node runs: both reach it
    assert grads(torch, through_a_view=True) == (None,)
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        grads(ag, through_a_view=True)
    program = Program(
        (Leaf("x0", (), "float32", (2.0,), True), Leaf("x1", (2,), "float64", (3.0, 4.0), False)),
        (Step("v0", "Tensor.floor_divide_", "{0}[1:].floor_divide_({1})", ("x1", "x0")),),
        backward="grad, create_graph, then second order",
        loss_of="x1",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("grad", "raises") in [(d.op, d.what) for d, _ in result.accepted]
    other_error = Divergence(
        "loss.backward()", "backward", "raises", "raises RuntimeError: x", "ran"
    )
    assert accepted_by(other_error, "x.floor_divide_(y)") is None


def test_dist_with_p_zero_lets_our_backward_go_on_to_unique_consecutives_missing_derivative(
    torch,
):
    # fuzz seed 1730138: reached directly, unique_consecutive's node raises NotImplementedError in
    # both libraries. Behind dist(x, y, 0), PyTorch 2.13's backward fails first, inside dist's
    # (an internal RuntimeError); ours gives dist no gradient and goes on to that node (a README
    # simplification: dist's line there)
    def backward(lib, through_dist):
        x = lib.tensor([1.0, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        unique, _ = x.unique_consecutive(return_counts=True)
        loss = lib.dist(x[:2], unique, 0) if through_dist else unique.sum()
        loss.backward()

    for lib in (ag, torch):
        with pytest.raises(NotImplementedError, match="unique_consecutive"):
            backward(lib, through_dist=False)
    with pytest.raises(RuntimeError, match="Expected a proper Tensor but got None"):
        backward(torch, through_dist=True)
    with pytest.raises(NotImplementedError, match="unique_consecutive"):
        backward(ag, through_dist=True)
    program = Program(
        (Leaf("x0", (), "float64", (0.0,), True),),
        (
            Step("v0", "Tensor.unique_consecutive", "{0}.unique_consecutive()", ("x0",)),
            Step("v1", "dist", "{0}.dist({1}, 0)", ("x0", "v0")),
        ),
        backward="backward",
        loss_of="v1",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("backward", "exception class") in [(d.op, d.what) for d, _ in result.accepted]
    other_error = Divergence(
        "loss.backward()",
        "backward",
        "exception class",
        "raises NotImplementedError: x",
        "raises RuntimeError: Expected a proper Tensor but got None",
    )
    assert accepted_by(other_error) is None


def test_batch_norm_of_a_constant_channel_keeps_the_rounding_residue_of_its_inputs_last_bit(
    torch,
):
    # fuzz seed 1701117: numpy's float32 sin(1) is a last bit above PyTorch's (correctly rounded)
    # one; batch_norm of a channel of equal values is 0 in exact arithmetic, and both libraries
    # leave the residue of rounding x·scale there, which follows x's last bit (a README
    # simplification). From the same float32 input, the residues are equal.
    def normalized(lib, values):
        x = lib.tensor(values, dtype=lib.float32).reshape(2, 2)
        return lib.nn.functional.batch_norm(x, None, None, training=True)

    one = torch.tensor(1.0).sin().item()
    same(normalized(ag, [one] * 4), normalized(torch, [one] * 4))
    ours = ag.ones(2, 2).sin()
    assert ours[0, 0].item() != one  # numpy's sin: a last bit off
    residue = ag.nn.functional.batch_norm(ours, None, None, training=True)
    assert 0 < abs(residue[0, 0].item()) < 1e-4
    program = Program(
        (Leaf("x0", (2, 2), "float32", (1.0, 1.0, 1.0, 1.0), False),),
        (
            Step("v0", "sin", "{0}.sin()", ("x0",)),
            Step(
                "v1",
                "F.batch_norm",
                "torch.nn.functional.batch_norm({0}, None, None, training=True)",
                ("v0",),
            ),
        ),
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("F.batch_norm", "values") in [(d.op, d.what) for d, _ in result.accepted]
    standardized = Divergence(  # a difference of a real standardized value is still reported
        "v1 = ...",
        "F.batch_norm",
        "values",
        "tensor([0.5 1.0])",
        "tensor([0.7 1.0])",
        after_rounding=True,
    )
    assert accepted_by(standardized) is None


def test_the_second_derivative_of_std_over_two_elements_is_zero_up_to_rounding(torch):
    # fuzz seed 1708982: over two elements std is |a - b| / sqrt(2), linear, so its second
    # derivative is 0. Both libraries leave float32 rounding residues there, each its own (a
    # README simplification); in float64 both are 0 to 1e-13, so the formula is the same.
    def second_derivative(lib, dtype):
        x = lib.tensor([[0.0, 0.0, 1.0], [-1.0, -2.0, -2.0]], dtype=dtype, requires_grad=True)
        weights = lib.tensor([[1.11, 1.63], [-0.92, 0.23], [0.26, -0.75]], dtype=dtype)
        spread = lib.std(x @ weights, dim=0)
        (grad,) = lib.autograd.grad((spread * lib.tensor([1.0, 2.0])).sum(), [x], create_graph=True)
        (second,) = lib.autograd.grad((grad * grad).sum(), [x])
        return grad, second

    for lib in (ag, torch):
        grad, second = second_derivative(lib, lib.float64)
        np.testing.assert_allclose(second.numpy(), 0, atol=1e-13)
        grad, second = second_derivative(lib, lib.float32)
        assert np.abs(second.numpy()).max() < 1e-3 * np.abs(grad.detach().numpy()).max()
    weights = (
        "torch.tensor([1.11, 1.63, -0.92, 0.23, 0.26, -0.75, 0.91, -0.29, -0.84, -0.5, 1.12, 0.5],"
        " dtype=torch.float32).reshape(2, 3, 2)"
    )
    program = Program(  # the seed's program, shrunk
        (Leaf("x0", (2, 3), "float32", (0.0, 0.0, 1.0, -1.0, -2.0, -2.0), True),),
        (
            Step("v1", "x @ y", "({0} @ " + weights + ")", ("x0",)),
            Step("v7", "getitem", "{0}[None]", ("v1",)),
            Step("v8", "std", "torch.std({0}, dim=1, correction=1)", ("v7",)),
        ),
        backward="grad, create_graph, then second order",
        loss_of="v8",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("grad", "values") in [(d.op, d.what) for d, _ in result.accepted]
    real_difference = Divergence("...", "grad", "values", "tensor([0.5 1.0])", "tensor([0.7 1.0])")
    assert accepted_by(real_difference, "x.std(0)\ncreate_graph=True") is None
