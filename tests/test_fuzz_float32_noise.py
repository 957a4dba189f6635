"""The fuzzer tells float32 rounding that a program magnifies from a real difference
(tests/fuzzing.rounding.py): a last-bit difference made larger by later ops is accepted as
README's rounding simplification; a difference of our own making is still reported."""

import numpy as np
import pytest
from fuzzing import check, generator
from fuzzing.program import Leaf, Program, Step
from fuzzing.rounding import in_float64, only_float32_noise, within_input_noise
from fuzzing.runner import Seen
from fuzzing.simplifications import FLOAT32_NOISE

import autograd_lab as ag

# exp(4.58) is about 97, and sin of about 97 turns exp's relative error into an absolute one
# 97 times as large: a few last bits of exp become a difference beyond float32's tolerance
_EXP_THEN_SIN = Program(
    (Leaf("x0", (), "float32", (4.5767918,)),),
    (
        Step("v0", "exp", "torch.exp({0})", ("x0",)),
        Step("v1", "sin", "torch.sin({0})", ("v0",)),
    ),
)


def _times(function, factor):
    return lambda *args, **kwargs: function(*args, **kwargs) * factor


def test_a_last_bit_difference_that_a_later_op_magnifies_is_accepted(torch, monkeypatch):
    # our exp 8 float32 steps off (within tolerance): sin then differs by about 1e-4, which
    # PyTorch's own sin gives too once it is handed our exp
    monkeypatch.setattr(ag, "exp", _times(ag.exp, 1 + 2.0**-20))
    result = check(_EXP_THEN_SIN, ag, torch)
    assert not result.divergences
    assert [(d.op, s) for d, s in result.accepted] == [("sin", FLOAT32_NOISE)]


_SIN = Program(
    (Leaf("x0", (3,), "float32", (0.5, -1.25, 2.0)),),
    (Step("v0", "sin", "torch.sin({0})", ("x0",)),),
)


@pytest.mark.parametrize(
    ("program", "factor"),
    [
        (_SIN, 1.001),  # well conditioned: a 0.1% difference is far beyond float32's rounding
        # exp then sin magnifies the inputs' last bits 97 times: one float32 step of x0 moves
        # sin by 4.5e-5, so there a difference must be larger than a few such steps to be
        # told apart from rounding (0.1% is not: four steps' worth)
        (_EXP_THEN_SIN, 1.01),
    ],
)
def test_a_difference_of_our_own_making_is_still_reported(torch, monkeypatch, program, factor):
    monkeypatch.setattr(ag, "sin", _times(ag.sin, factor))
    result = check(program, ag, torch)
    assert [(d.op, d.what) for d in result.divergences] == [("sin", "values")]
    assert not result.accepted


def test_a_magnified_difference_after_a_real_one_is_still_reported(torch, monkeypatch):
    # exp 1e-3 off is beyond tolerance: PyTorch does not take it over, so sin is not explained
    monkeypatch.setattr(ag, "exp", _times(ag.exp, 1.001))
    result = check(_EXP_THEN_SIN, ag, torch)
    assert [(d.op, d.what) for d in result.divergences] == [("exp", "values")]


def _seen(values, dtype="float32"):
    values = np.asarray(values, dtype=np.float64)
    return Seen("tensor", dtype=dtype, shape=values.shape, values=values)


@pytest.mark.parametrize(
    ("ours", "theirs", "exact", "noise"),
    [
        # cancellation: PyTorch is 4e-5 off the float64 answer, ours 5e-5: both float32 noise
        ([1.30445, 0.5], [1.30442, 0.5], [1.304402, 0.5], True),
        # a residue where the exact answer is 0: PyTorch's is 3e-5 somewhere, ours elsewhere
        ([0.0, 3.05e-5, 0.0], [-1.5e-5, 0.0, 3.05e-5], [0.0, 0.0, 0.0], True),
        # PyTorch is right to float32's last bits, ours is not
        ([1.3046, 0.5], [1.3044, 0.5], [1.3044, 0.5], False),
        # ours is right where PyTorch rounds badly: noise, on PyTorch's side
        ([1.3044, 0.5], [1.3046, 0.5], [1.3044, 0.5], True),
    ],
)
def test_float32_noise_is_judged_against_pytorchs_own_error(ours, theirs, exact, noise):
    assert only_float32_noise(_seen(ours), _seen(theirs), _seen(exact, "float64")) == noise


def test_nothing_but_float_tensors_is_noise():
    flag = Seen("tensor", dtype="bool", shape=(), values=np.array(True))
    assert not only_float32_noise(flag, flag, flag)
    assert not only_float32_noise(Seen("raise", error="RuntimeError: x"), _seen([1.0]), _seen([1]))


def test_the_float64_program_keeps_the_float32_values_of_its_literals():
    line = "v2 = torch.tensor([1.06, 0.74], dtype=torch.float32).reshape(2, 1).to(torch.float32)"
    assert in_float64(line) == (
        "v2 = torch.tensor([1.06, 0.74], dtype=torch.float32).double().reshape(2, 1)"
        ".to(torch.float64)"
    )
    assert in_float64("v0 = x0.float() + torch.tensor(2.5, dtype=torch.float32)") == (
        "v0 = x0.double() + torch.tensor(2.5, dtype=torch.float32).double()"
    )


@pytest.mark.parametrize(
    ("ours", "moves", "noise"),
    [
        # PyTorch's answer moves by 1.5e-5 when its inputs move a float32 step: ours 3e-5 off
        ([0.0, 3.05e-5, 0.0], [[-1.5e-5, 0.0, 0.0], [1.5e-5, 0.0, 0.0]], True),
        # PyTorch's answer does not move at all: ours 3e-4 off is a finding
        ([0.0, 3.05e-4, 0.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], False),
    ],
)
def test_a_difference_is_weighed_against_how_far_the_inputs_last_bits_move_pytorch(
    ours, moves, noise
):
    theirs = _seen([0.0, 0.0, 0.0])
    moved = [_seen(move) for move in moves]
    assert within_input_noise(_seen(ours), theirs, moved) == noise


def test_a_second_derivative_that_is_zero_in_exact_arithmetic_is_rounding(torch):
    # fuzz seed 2109528: lerp, cumsum and lerp again, then a second derivative that is 0 in
    # exact arithmetic: the float32 residues (about 3e-5) land on
    # other elements in each library, and move as much when the inputs move a float32 step
    result = check(generator.generate(2109528), ag, torch)
    assert not result.divergences


def test_an_infinity_from_rounding_is_rounding_too(torch):
    # fuzz seed 2316792: var_mean of three values that are equal in ours and a last bit apart
    # in PyTorch (logsumexp's loop): our variance is 0 and `mask // var` inf or nan, PyTorch's
    # is 2e14 and 0; handed our values PyTorch gives ours
    result = check(generator.generate(2316792), ag, torch)
    assert not result.divergences
