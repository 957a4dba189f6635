"""First-order gradients and forward values at the edges (issue 14, fourth wave): where the
fuzzer found a gradient or a value that differs from PyTorch's, each compared with PyTorch bit for
bit (nan where nan, the sign of every infinity and zero)."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import values
from fuzzing import check
from fuzzing.compare import Divergence
from fuzzing.program import Leaf, Program, Step
from fuzzing.simplifications import accepted_by
from test_edges_gradients import INF, NAN, identical, same_gradients

import autograd_lab as ag


def _first(result):
    """var/std give one tensor, var_mean/std_mean a pair: the spread."""
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")
@pytest.mark.parametrize("spread", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim, correction", [(1, 2), (1, 3), (None, 4), (None, 5)])
def test_a_spread_of_too_few_elements_has_pytorchs_infinite_gradient(
    torch, spread, dim, correction
):
    # n <= correction: the forward is inf (or nan for equal values); the gradient's factor
    # 2 / (n - correction) is inf or negative along a dim, and inf or nan over all elements
    def make(lib, x):
        return _first(getattr(lib, spread)(x, dim=dim, correction=correction))

    same_gradients(torch, make, [[-2.0, 0.0], [1.5, 1.5]], upstream=3.0)
    same_gradients(torch, make, [[-2.0, 0.0], [1.5, 1.5]], upstream=0.0)


@pytest.mark.parametrize("eps", [None, 0.0, 0.25])
@pytest.mark.parametrize("upstream", [2.0, -2.0])
def test_logit_gradient_at_the_edges_is_pytorchs_element_rule(torch, eps, upstream):
    # grad * inf at p = +-0 and p = 1 (+inf at -0.0, not grad / -0.0 = -inf), nan at a nan p
    # even where eps clamps; a short tensor, where PyTorch's element-by-element loop runs
    probabilities = [0.0, -0.0, 1.0, float("nan"), 0.5, -0.5]
    same_gradients(torch, lambda lib, p: p.logit(eps), probabilities, upstream=upstream)


@pytest.mark.parametrize(
    "single, dim",
    [([-INF], 0), ([[INF, 0.0, NAN]], 0), ([[NAN], [0.0]], 1), (INF, 0), (NAN, 0)],
)
def test_cumprod_over_one_element_passes_the_gradient_through(torch, single, dim):
    # cumprod along a dim of size 1 is the input itself: slope 1, not (grad * y) / x = nan
    same_gradients(torch, lambda lib, x: x.cumprod(dim), single, upstream=2.0)


@pytest.mark.parametrize("number", [INF, -INF, NAN, 0.0])
def test_prod_of_a_0d_tensor_passes_the_gradient_through(torch, number):
    same_gradients(torch, lambda lib, x: x.prod(), number, upstream=2.0)
    same_gradients(torch, lambda lib, x: x.prod(0), number, upstream=2.0)


@pytest.mark.parametrize("weight", [None, [-1.32, 1.37, 1.48]])
def test_layer_norm_of_a_constant_row_has_pytorchs_rounding(torch, weight):
    # the row's variance is 0: the input gradient's terms cancel, what is left is rounding
    # (times 1/sqrt(eps) = 316), which comes out as PyTorch's when summed in PyTorch's order
    def make(lib, row):
        rows = row.expand(2, 3) * lib.tensor([[1.0], [0.0]])
        scale = None if weight is None else lib.tensor(weight)
        out = lib.nn.functional.layer_norm(rows, (3,), scale, lib.tensor([1.28, -0.47, -1.34]))
        return out * lib.arange(1, 7).reshape(2, 3)

    same_gradients(torch, make, [0.0, 0.0, 0.0])
    same_gradients(torch, make, [2.5, 2.5, 2.5], close=True)  # the last bit of 786.353 differs


def _fuzzed(torch, steps, leaf_values, backward=None, requires_grad=False):
    """The fuzzer's check() of a program over one float32 leaf x0 with these steps."""
    leaf = Leaf("x0", (len(leaf_values),), "float32", tuple(leaf_values), requires_grad)
    steps = tuple(Step(name, op, call, inputs) for name, op, call, inputs in steps)
    loss_of = steps[-1].name if backward else None
    return check(Program((leaf,), steps, backward, loss_of), ag, torch)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_fuzzer_accepts_pytorchs_var_over_dim_empty_tuple_gradient_only_there(torch):
    # PyTorch 2.13's backward takes n = 1 for dim=(): inf with correction=1; ours is the true one
    x = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
    x.var(dim=()).backward()
    assert torch.isinf(x.grad).all()
    result = _fuzzed(
        torch, [("v0", "var", "{0}.var(dim=())", ("x0",))], (1.0, 2.0, 4.0), "backward", True
    )
    assert not result.divergences and result.accepted
    assert "dim=()" in result.accepted[0][1].readme


def test_logit_gradient_of_a_long_tensor_is_the_element_rule_not_pytorchs_vector_loop(torch):
    # PyTorch's AVX2 loop (16 float32 elements) divides: -inf at -0.0; its element loop (and
    # ours) multiplies by inf: +inf. Which loop runs depends on the CPU (an AVX-512 one: +inf)
    def gradient(lib):
        p = lib.tensor([-0.0] * 16, requires_grad=True)
        p.logit().sum().backward()
        return values(p.grad)

    theirs = gradient(torch)
    assert (gradient(ag) == INF).all()
    assert (theirs == -INF).all() or (theirs == INF).all()
    result = _fuzzed(
        torch, [("v0", "logit", "{0}.logit()", ("x0",))], [-0.0] * 16, "backward", True
    )
    assert not result.divergences
    assert bool(result.accepted) == (theirs == -INF).all()  # accepted where they differ


def test_argsort_keeps_tied_elements_in_order_where_pytorchs_unstable_sort_may_not(torch):
    zeros = [0.0] * 24
    np.testing.assert_array_equal(values(ag.tensor(zeros).argsort()), np.arange(24))
    assert not (values(torch.tensor(zeros).argsort()) == np.arange(24)).all()
    np.testing.assert_array_equal(values(torch.tensor(zeros).argsort(stable=True)), np.arange(24))
    result = _fuzzed(torch, [("v0", "argsort", "{0}.argsort()", ("x0",))], zeros)
    assert not result.divergences and [d.op for d, _ in result.accepted] == ["argsort"]


def test_values_computed_from_an_accepted_tie_are_its_consequences_not_findings(torch):
    # kthvalue picks another of three equal elements than PyTorch (accepted); clip of that
    # index differs as a consequence
    steps = [
        ("v0", "kthvalue", "torch.kthvalue({0}, 2, 0)", ("x0",)),
        ("v1", "clip", "torch.clip({0}[1], min=-2)", ("v0",)),
    ]
    result = _fuzzed(torch, steps, (0.0, 0.0, 0.0))
    assert not result.divergences
    assert [d.op for d, _ in result.accepted] == ["kthvalue"]
    assert [d.op for d in result.consequences] == ["clip"]


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_the_zero_loss_of_one_sample_is_positive_zero(torch, label_smoothing):
    # one class: log_softmax is 0, the loss -0; PyTorch's kernel for an unbatched sample
    # subtracts from a zero total and gives +0.0, which 1 / loss shows (inf, not -inf)
    def inverse_loss(lib, scores, target):
        loss = lib.nn.functional.cross_entropy(
            scores, target, reduction="none", label_smoothing=label_smoothing
        )
        return 1 / loss

    ours, theirs = (inverse_loss(lib, lib.tensor([1.0]), lib.tensor(0)) for lib in (ag, torch))
    assert values(ours) == values(theirs) == INF
    batched = (inverse_loss(lib, lib.tensor([[1.0]]), lib.tensor([0])) for lib in (ag, torch))
    assert [values(t)[0] for t in batched] == [-INF, -INF]  # a batch keeps -0.0


def test_a_rounded_float32_mean_in_a_pair_loosens_later_float64_comparisons(torch):
    # std_mean's float32 mean is a last bit apart from PyTorch's; cumprod in float64 carries
    # that rounding, so the fuzzer compares it at float32's tolerance, as for a lone tensor
    data = (0.0, -2.81, 1.98, 2.91, 2.16, 0.5, 2.0, -2.0, 0.14, -2.14, 2.77, -0.8)
    steps = [
        ("v0", "std_mean", "torch.std_mean({0}.reshape(3, 4, 1), dim=-2)", ("x0",)),
        ("v1", "cumprod", "{0}[1].cumprod(-1, dtype=torch.float64)", ("v0",)),
    ]
    assert not _fuzzed(torch, steps, data).divergences


@pytest.mark.parametrize("order", [INF, -INF])
@pytest.mark.parametrize(
    "entries", [[NAN], [-2.0, NAN, -1.0], [-INF, INF, 0.0], [-2.0, 2.0, -1.0]], ids=str
)
def test_the_infinity_norm_gradient_follows_pytorch_at_nan_and_inf(torch, order, entries):
    # the entries that reach the norm share the gradient; where the norm is nan, the nan entries
    # reach it (and get sign(nan) = 0): zeros, not 0 / 0; the others get sign(x) * 0 (-0.0 too)
    same_gradients(torch, lambda lib, x: x.norm(p=order), entries, upstream=3.0)
    same_gradients(torch, lambda lib, x: lib.linalg.vector_norm(x, order), entries, upstream=INF)


def test_the_divisor_gradient_is_taken_in_pytorchs_order(torch):
    # -grad * ((a / b) / b): x / x then has a gradient of exactly 0 (a / b² in another order
    # leaves rounding), and 3 / y's reciprocal gradient is -grad * (r * r) to the last bit
    entries = [2.89, -1.49, 2.95, 1e-30, 1e30, 0.0, INF, -0.06, 7.0]
    same_gradients(torch, lambda lib, x: x / x, entries, upstream=3.0)
    same_gradients(torch, lambda lib, x: lib.div(x, x, rounding_mode=None), entries, upstream=3.0)
    same_gradients(torch, lambda lib, x, y: x / y, entries, entries[::-1], upstream=3.0)
    same_gradients(torch, lambda lib, y: 3.0 / y, entries, upstream=2.0)


def test_tanh_near_saturation_has_pytorchs_last_bit_and_so_its_slope(torch):
    # tanh(-9.30225) rounds to -1.0 in float32 (PyTorch), numpy's float32 tanh gives
    # -0.99999994: the slope 1 - tanh² was then 1.2e-7 instead of 0
    entries = [-9.30225, 8.5, -0.31, 2.2, 0.7]
    same_gradients(torch, lambda lib, x: lib.tanh(x), entries, upstream=40.0)
    same_gradients(torch, lambda lib, x: lib.nn.functional.tanh(x), entries, upstream=1.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("exponent_shape", [(), (1,), (4,)])
def test_a_tensor_exponent_of_a_half_is_pow_not_sqrt(torch, exponent_shape):
    # tensor ** tensor is C's pow for every element: pow(-inf, 0.5) = inf and pow(-0.0, 0.5) =
    # 0.0, where sqrt gives nan and -0.0 (numpy's shortcut for a single exponent of 0.5)
    # (log(1) = 0 is exact: no float32 rounding of log in the exponent's gradient)
    entries = [-INF, -0.0, 0.0, 1.0]
    half = np.full(exponent_shape, 0.5).tolist()
    same_gradients(torch, lambda lib, x, y: x**y, entries, half, upstream=3.0)


def test_the_fuzzer_accepts_only_layer_norms_overflowed_variance(torch):
    # a float32 row with -3.4e38 in it: its variance overflows; PyTorch's Welford loop gives 0
    # for this row and nan for others (see the README line); ours is nan here (the mean overflows)
    big = -3.4028234663852886e38
    row = [1.0, 2.0, big, 0.0] * 3 + [big] * 3
    ours = ag.nn.functional.layer_norm(ag.tensor(row), (15,))
    theirs = torch.nn.functional.layer_norm(torch.tensor(row), (15,))
    assert np.isnan(values(ours)).all() and (values(theirs) == 0).all()
    overflowed = Divergence(
        "v1 = F.layer_norm(x0, (15,))  [v1]", "F.layer_norm", "NaN/inf", repr(ours), repr(theirs)
    )
    assert accepted_by(overflowed) is not None
    # a nan that one side has and the other does not in another op, or layer_norm's values
    assert accepted_by(replace(overflowed, op="F.batch_norm")) is None
    assert accepted_by(replace(overflowed, what="values")) is None
    assert accepted_by(replace(overflowed, ours=repr(theirs))) is None


@pytest.mark.parametrize("pos_weight", [INF, -INF, 0.0, 2.5])
def test_an_infinite_pos_weight_gives_pytorchs_nan_gradient(torch, pos_weight):
    # PyTorch's input gradient is (p·t + 1 - t)·sigmoid(x) - p·t: at p = inf that is inf - inf
    # (or inf · 0 where t = 0), nan everywhere
    logits = [0.0, -0.37, 2.0, -30.0, 5.0, 0.0]
    targets = [0.0, 0.0, 1.0, 1.0, 0.5, 1.0]

    def loss(lib, x):
        weight = lib.tensor(pos_weight)
        return lib.nn.functional.binary_cross_entropy_with_logits(
            x, lib.tensor(targets), reduction="none", pos_weight=weight
        )

    # (a finite pos_weight's loss is a last float32 bit apart: log1p(e^-|x|) is not PyTorch's
    # log_sigmoid)
    same_gradients(torch, loss, logits, upstream=3.0, close=bool(np.isfinite(pos_weight)))


def test_an_in_place_power_with_an_exponent_in_the_written_places_is_refused(torch):
    # the exponent is x's diagonal, broadcast: PyTorch cannot check that overlap (a diagonal is not
    # dense), writes element after element and so reads exponents it has already overwritten;
    # ours refuses, naming that order (README "Simplifications")
    def raise_in_place(lib):
        x = lib.zeros((3, 2), dtype=lib.int64)
        return x.pow_(lib.diagonal(x))

    with pytest.raises(RuntimeError, match="does not check"):
        raise_in_place(ag)
    assert values(raise_in_place(torch)).tolist() == [[1, 1], [0, 1], [0, 0]]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
@pytest.mark.parametrize("value", [1.5e19, 1e20, 3.4028234663852886e38])
def test_batch_norm_whose_float32_sum_of_squares_overflows_is_zero(torch, layout, value):
    # PyTorch's fast kernel (a densely laid out input) keeps a channel's sum of squared
    # deviations in float32: beyond its range (4 · 1.5e19² already) that is inf, 1/sqrt(inf) = 0,
    # and the channel's output 0.0 (no bias: 0 - mean·0, not -0.0); an expanded input takes the
    # float64 path and gives ±1
    def normalized(lib):
        column = lib.tensor([[value], [-value], [value], [-value]])
        x = {
            "contiguous": column,
            "transposed": column.t().contiguous().t(),
            "expanded": column.expand(4, 2),
        }[layout]
        return lib.nn.functional.batch_norm(x, None, None, training=True)

    identical(normalized(ag), normalized(torch))
