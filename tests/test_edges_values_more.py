"""Forward values at the edges (issue 14, wave 6): rows whose statistics cancel, norms of one
element, NaN/inf and signed zeros. Each compares with PyTorch 2.13, bit for bit where PyTorch's
result is exact."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import both, values
from fuzzing import check
from fuzzing.check import _partly_written_line
from fuzzing.compare import Divergence, compare
from fuzzing.program import Leaf, Program, Step, statements
from fuzzing.runner import Seen
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [0.1, 0.7615941559557649, -3.3])
def test_layer_norm_of_a_constant_row_gives_exactly_the_bias(torch, dtype, value):
    def run(lib):
        row = lib.full((2, 3), value, dtype=getattr(lib, dtype))
        weight = lib.tensor([1.46, -1.72, 0.85], dtype=getattr(lib, dtype))
        bias = lib.tensor([0.56, 0.07, -1.07], dtype=getattr(lib, dtype))
        return lib.nn.functional.layer_norm(row, (3,), weight, bias)

    both(torch, run)


@pytest.mark.parametrize("p", [2, 0.5, 1.5, 3, -0.5, 0.3])
def test_the_norm_of_one_element_is_its_size(torch, p):
    # no power and root: (-2)^0.5 squared is not exactly 2, 3e38 squared overflows float32
    both(torch, lambda lib: lib.tensor([[-2.0], [0.3]], dtype=lib.float64).norm(p=p, dim=1))
    both(torch, lambda lib: lib.tensor([[3e38], [-1e-30]]).norm(p=p, dim=-1, keepdim=True))
    both(torch, lambda lib: lib.tensor(3e38).norm(p=p))
    # two elements: the power and the root, which overflow as PyTorch's do
    both(torch, lambda lib: lib.tensor([3e38, 0.0]).norm(p=p))


def test_the_norm_counting_nonzeros_of_one_element_is_still_a_count(torch):
    both(torch, lambda lib: lib.tensor([[5.0], [0.0]]).norm(p=0, dim=1))


def test_normalize_of_one_huge_element_is_one(torch):
    both(
        torch,
        lambda lib: lib.nn.functional.normalize(
            lib.tensor([1.797e308], dtype=lib.float64), dim=0, eps=0.5
        ),
    )


def test_pow_by_the_half_norm_of_one_element(torch):
    def run(lib):
        x = lib.tensor([-2.0], dtype=lib.float64)
        return x.pow(x.norm(p=0.5, dim=-1, keepdim=True))

    both(torch, run)


def signs_and_values(t):
    """A float tensor's values as text, so -0.0 and +0.0 differ (and nan equals nan)."""
    return [repr(v) for v in values(t).flatten().tolist()], tuple(t.shape), str(t.dtype)


def same_with_signed_zeros(torch, run):
    assert signs_and_values(run(ag)) == signs_and_values(run(torch))


ZEROS = [-0.0, 0.0, -1.5, 2.0, float("nan"), -0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "op",
    [
        lambda lib, x: lib.relu(x),
        lambda lib, x: lib.nn.functional.relu(x),
        lambda lib, x: x.clone().relu_(),
        lambda lib, x: lib.nn.functional.elu(x),
        lambda lib, x: lib.nn.functional.elu(x, alpha=-0.5),
        lambda lib, x: x.cumsum(0),
        lambda lib, x: x.reshape(2, 3).cumsum(1),
        lambda lib, x: x.reshape(6, 1).logcumsumexp(1),
        lambda lib, x: x[:2].logcumsumexp(0),
    ],
    ids=[
        "relu",
        "F.relu",
        "relu_",
        "elu",
        "elu_negative_alpha",
        "cumsum",
        "cumsum_rows",
        "logcumsumexp_one",
        "logcumsumexp",
    ],
)
def test_a_negative_zero_keeps_its_sign_where_pytorch_keeps_it(torch, dtype, op):
    # relu and elu pass x on unless x < 0; a running sum starts from 0 (or log 0), and
    # 0 + -0.0 is +0.0: a 1/x or x // y later shows the sign as -inf or inf
    same_with_signed_zeros(torch, lambda lib: op(lib, lib.tensor(ZEROS, dtype=getattr(lib, dtype))))


def test_a_zero_dim_running_sum_is_its_element(torch):
    same_with_signed_zeros(torch, lambda lib: lib.tensor(-0.0).cumsum(0))
    same_with_signed_zeros(torch, lambda lib: lib.tensor(-0.0).logcumsumexp(0))


def test_the_fuzzers_signed_zero_programs(torch):
    zeros = [0.0, -0.0, 0.0]
    # rsqrt of elu's -0.0 is -inf
    same_with_signed_zeros(torch, lambda lib: lib.nn.functional.elu(lib.tensor(zeros)).rsqrt())

    def addcdiv(lib):  # divided by relu's -0.0: -inf
        x = lib.tensor(zeros).reshape(3, 1)
        return x.addcdiv(x.logcumsumexp(-2), x.relu())

    same_with_signed_zeros(torch, addcdiv)

    def floor_divide(lib):  # divided by logcumsumexp's +0.0: inf
        x = lib.tensor(zeros).reshape(3, 1)
        return lib.where(x != 0, 0.5, 0.25).floor_divide(x.logcumsumexp(1))

    same_with_signed_zeros(torch, floor_divide)


# ---- the fuzzer's rules for what follows a difference it accepts ---------------------------------


def _program(leaves, *steps):
    return Program(tuple(leaves), tuple(Step(*step) for step in steps))


def test_the_fuzzer_reads_a_conversion_to_int64_after_rounding_as_a_jump(torch):
    # float32 exp(1.53) is a last bit apart in autograd_lab (the nearest float32) and PyTorch;
    # times 2^24 that bit is whole units, which .long() (like floor) keeps
    steps = [
        ("v0", "exp", "torch.exp({0})", ("x0",)),
        ("v1", "x * y", "({0} * 16777216.0)", ("v0",)),
    ]
    leaf = Leaf("x0", (1,), "float32", (1.53,))
    for call in ("{0}.long()", "{0}.to(dtype=torch.int64)", "{0}.int()"):
        result = check(_program([leaf], *steps, ("v2", "Tensor.long", call, ("v1",))), ag, torch)
        assert not result.divergences
        assert [d.what for d, _ in result.accepted] == ["values"]
    # a conversion to a float dtype does not jump: a difference there is still reported
    near = Divergence("v2 = v1.to(torch.float64)  [v2]", "Tensor.to", "values", "", "", 2)
    for theirs in ("tensor([2.], float64, shape=[1])", "tensor([2], int64, shape=[1])"):
        changed = replace(near, theirs=theirs, after_rounding=True)
        assert (accepted_by(changed) is not None) == ("int64" in theirs)
    assert accepted_by(replace(near, theirs="tensor([2], int64, shape=[1])")) is None


def test_the_fuzzer_reads_uniques_length_after_rounding_as_a_jump(torch):
    # PyTorch's AVX2 cosh_ gives the last two of 18 ones another last bit than the rest (an
    # AVX-512 CPU gives all 18 the same: then there is nothing to accept)
    split = len(np.unique(torch.ones(18).cosh_().numpy())) > 1
    ones = Leaf("x0", (2, 3, 3), "float32", (1.0,) * 18)
    steps = [
        ("v0", "relu", "torch.nn.functional.relu({0})", ("x0",)),
        ("v1", "Tensor.cosh_", "{0}.cosh_()", ("v0",)),
        ("v2", "unique", "torch.unique({0})", ("v0",)),
    ]
    result = check(_program([ones], *steps), ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == (["shape"] if split else [])
    near = Divergence("v2 = torch.unique(v0)  [v2]", "unique", "shape", "", "", 2)
    assert accepted_by(near) is None  # no earlier rounding: a finding
    assert accepted_by(replace(near, op="sum", after_rounding=True)) is None


def test_the_fuzzer_counts_uniques_inverse_after_an_accepted_nan_order(torch):
    x = Leaf("x0", (2, 3), "float32", (0.0, 0.0, float("nan"), 1.0, 0.0, 0.0))
    call = "torch.unique({0}, return_inverse=True, dim=-1)"
    result = check(_program([x], ("v0", "unique", call, ("x0",))), ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == ["NaN/inf"]  # the slices' order
    assert [d.what for d in result.consequences] == ["values"]  # the inverse that follows it
    # the inverse alone is not accepted: it is a consequence only after the slices' order
    inverse = Divergence(f"v0 = {call.format('x0')}  [v0][1]", "unique", "values", "", "", 0)
    assert accepted_by(inverse) is None


INTEGER_WRITE = (
    Leaf("x0", (1,), "float64", (0.0,), True),
    Leaf("x1", (), "float64", (2.7,), True),
)
WRITES = [
    ("v0", "Tensor.all", "{0}.all()", ("x1",)),
    ("v1", "setitem", "{0}[None] = {1}[0]", ("v0", "x0"), True),
]


def test_the_fuzzer_counts_the_missing_history_after_an_accepted_integer_write(torch):
    # PyTorch gives the written bool tensor a node; what is computed from it later has one too
    later = ("v2", "tanh", "torch.tanh({0})", ("v0",))
    result = check(_program(INTEGER_WRITE, *WRITES, later), ag, torch)
    assert not result.divergences
    assert {d.what for d, _ in result.accepted} == {"grad_fn", "requires_grad"}
    assert {(d.op, d.what) for d in result.consequences} == {
        ("tanh", "grad_fn"),
        ("tanh", "requires_grad"),
    }


class DetachingTanh:
    """PyTorch whose tanh records nothing: a history difference of tanh's own."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return getattr(self._torch, name)

    def tanh(self, x):
        return self._torch.tanh(x).detach()


def test_the_fuzzer_still_reports_a_history_difference_of_its_own(torch):
    x = Leaf("x0", (2,), "float64", (0.5, 1.0), True)
    result = check(
        _program([x], ("v0", "tanh", "torch.tanh({0})", ("x0",))), ag, DetachingTanh(torch)
    )
    assert {d.what for d in result.divergences} == {"grad_fn", "requires_grad"}


def test_the_fuzzer_counts_values_after_a_refused_integer_division_in_place(torch):
    # PyTorch writes x[0] = 1 % 1 = 0 before it meets the zero and raises; ours writes nothing
    x = Leaf("x0", (3,), "int64", (1, 0, 0))
    steps = [
        ("v0", "Tensor.fmod_", "{0}.fmod_({0})", ("x0",)),
        ("v1", "Tensor.repeat", "{0}.repeat((2, 2))", ("x0",)),
    ]
    result = check(_program([x], *steps), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what) for d in result.consequences] == [("Tensor.repeat", "values")]
    # x %= x is x.remainder_(x): the same partial write (fuzz seed 1523978)
    steps[0] = ("v0", "x %= y", "{0} %= {0}", ("x0",), True)
    result = check(_program([x], *steps), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what) for d in result.consequences] == [("Tensor.repeat", "values")]
    # not in place (fmod refuses and writes nothing in both): a later difference is a finding
    records = {(0, ""): Seen("raise", error="RuntimeError: ZeroDivisionError")}
    lines = statements(_program([x], ("v0", "fmod", "torch.fmod({0}, {0})", ("x0",))))[2:]
    assert _partly_written_line(records, records, lines) is None


def test_the_fuzzer_gives_a_float64_loss_from_a_float32_input_float32s_tolerance(torch):
    # the log-sigmoid of the float32 input is a last bit apart (numpy's exp and log1p, PyTorch's
    # vectorized ones); the float64 loss carries that, and so does what is computed from it
    x = Leaf("x0", (), "float32", (2.0,))
    target = Leaf("x1", (), "float64", (0.0,))
    bce = "torch.nn.functional.binary_cross_entropy_with_logits({0}, {1})"
    steps = [
        ("v0", "F.binary_cross_entropy_with_logits", bce, ("x0", "x1")),
        ("v1", "x - y", "({0} - {1})", ("x0", "v0")),
    ]
    assert not check(_program([x, target], *steps), ag, torch).divergences
    # beyond float32's tolerance it is still a finding
    loss = Seen("tensor", "float64", (), np.array(2.126928))
    lines = statements(_program([x, target], steps[0]))[3:]
    ours = {(0, "v0"): replace(loss, values=np.array(2.13))}
    assert [d.what for d in compare(ours, {(0, "v0"): loss}, lines)] == ["values"]
    assert (
        compare({(0, "v0"): replace(loss, values=np.array(2.1269285))}, {(0, "v0"): loss}, lines)
        == []
    )


def test_var_mean_of_overflowing_squares_is_var_and_mean_and_the_fuzzer_accepts_only_that(torch):
    # PyTorch's var and mean agree with ours; its var_mean's Welford update overflows to nan, inf
    def huge(lib):
        return lib.tensor([-1.7976931348623157e308, 0.0, 1.7976931348623157e308], dtype=lib.float64)

    for lib in (ag, torch):
        assert values(huge(lib).var()).item() == np.inf and values(huge(lib).mean()).item() == 0.0
    assert [values(t).item() for t in ag.var_mean(huge(ag))] == [np.inf, 0.0]
    assert np.isnan(values(torch.var_mean(huge(torch))[0]))
    x = Leaf("x0", (3,), "float64", (-1.7976931348623157e308, 0.0, 1.7976931348623157e308))
    result = check(_program([x], ("v0", "std_mean", "torch.std_mean({0})", ("x0",))), ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == ["NaN/inf"]
    near = Divergence("v0 = torch.var(x0)  [v0]", "var", "NaN/inf", "", "", 0)
    assert accepted_by(near) is None and accepted_by(replace(near, op="var_mean")) is not None


@pytest.mark.parametrize(
    "spread",
    [
        lambda lib, t: t.var(0),
        lambda lib, t: t.var(),
        lambda lib, t: t.std(0),
        lambda lib, t: lib.var_mean(t, 0)[0],
        lambda lib, t: lib.std_mean(t, 0)[0],
    ],
    ids=["var_dim", "var", "std", "var_mean", "std_mean"],
)
def test_a_float32_variance_is_summed_in_float64_and_rounded_once(torch, spread):
    # summed in float32, the variance of these values is a last bit off (0.81000012, not 0.81000006)
    both(torch, lambda lib: spread(lib, lib.tensor([0.0, -1.0, 0.0, 1.2])))
    # the std of values near float32's limit needs a variance beyond it (about 1e76)
    both(torch, lambda lib: spread(lib, lib.tensor([-3e38, 0.0, 3e38])))


def test_batch_norm_rounds_its_sum_of_squares_to_the_inputs_dtype(torch):
    # as PyTorch's fast kernel does before dividing by the count; the output's last bits show it,
    # and log1p of an output near -1 makes them visible
    def run(lib):
        x = lib.tensor([2.44, 1.93, 0.0, 0.0]).reshape(1, 2, 2)
        running_mean, running_var = lib.tensor([1.32, -0.49]), lib.tensor([0.67, 0.54])
        out = lib.nn.functional.batch_norm(x, running_mean, running_var, training=True)
        return out, out.flatten().log1p()

    both(torch, run)


def test_the_fuzzer_accepts_an_infinitys_sign_only_after_a_matrix_products_zero_sign(torch):
    # PyTorch's 2-D mm gives -3 · 0 = -0.0 here, numpy's matmul 0.0: README's Simplifications
    leaves = (
        Leaf("x0", (2, 1), "float32", (1.0, 0.0)),
        Leaf("x1", (2, 1), "float32", (-3.0, 0.0)),
    )
    steps = [
        ("v0", "Tensor.view", "{0}.view((1, 2))", ("x0",)),
        ("v1", "Tensor.matmul", "{0}.matmul({1})", ("x1", "v0")),
        ("v2", "x / y", "({0} / {1})", ("x0", "v1")),
    ]
    result = check(_program(leaves, *steps), ag, torch)
    assert not result.divergences
    assert [(d.op, d.what, d.after_zero_sign) for d, _ in result.accepted] == [
        ("x / y", "NaN/inf", "Tensor.matmul")
    ]
    # compare finds the first line whose zeros have the other sign; after another op's zero
    # (relu's, say) an infinity of the other sign is still a finding
    lines = statements(_program(leaves, ("v0", "relu", "{0}", ("x0",)), steps[2]))[3:]
    zero, negative_zero = (Seen("tensor", "float32", (1,), np.array([z])) for z in (0.0, -0.0))
    infinity, negative_infinity = (replace(zero, values=np.array([v])) for v in (np.inf, -np.inf))
    ours = {(0, "v0"): zero, (1, "v2"): infinity}
    theirs = {(0, "v0"): negative_zero, (1, "v2"): negative_infinity}
    (divergence,) = compare(ours, theirs, lines)
    assert divergence.after_zero_sign == "relu" and accepted_by(divergence) is None
    assert accepted_by(replace(divergence, after_zero_sign="x @ y")) is not None


def test_the_fuzzer_accepts_uniques_count_of_nan_slices_only_with_a_nan(torch):
    # PyTorch's sort of the slices puts the NaN between the two -3.0: they are not merged
    values_with_nan = (0.0, -3.0, 1.0, -3.0, float("nan"), -1.0, 2.0, -3.0)
    x = Leaf("x0", (8,), "float64", values_with_nan)
    call = "{0}.unique(return_counts=True, dim=-1)"
    result = check(_program([x], ("v0", "Tensor.unique", call, ("x0",))), ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == ["shape"]
    assert [d.what for d in result.consequences] == ["shape"]  # the counts that follow
    where = "v0 = x0.unique(return_counts=True, dim=-1)  [v0][0]"
    near = Divergence(where, "Tensor.unique", "shape", "tensor([1.])", "tensor([1. 2.])", 0)
    assert accepted_by(near) is None  # no NaN in it: a finding
    assert accepted_by(replace(near, theirs="tensor([1. nan 1.])")) is not None


def test_the_fuzzer_counts_what_follows_an_accepted_refusal_as_its_consequence(torch):
    # x -= x.narrow(1, 1, 1) reads the narrowed column broadcast over the one it writes: PyTorch
    # does not check that layout and writes element after element, ours refuses (README's
    # Simplifications); what is computed from x afterwards differs as a consequence
    x = Leaf("x0", (2, 2, 1), "int64", (0, 0, 1, 1))
    steps = [
        ("v0", "narrow", "torch.narrow({0}, -2, 1, 1)", ("x0",)),
        ("v1", "x -= y", "{0} -= {1}", ("x0", "v0"), True),
        ("v2", "abs", "abs({0})", ("x0",)),
    ]
    result = check(_program([x], *steps), ag, torch)
    assert not result.divergences
    assert [d.what for d, _ in result.accepted] == ["raises"]
    assert [(d.op, d.what) for d in result.consequences] == [("abs", "values")]
