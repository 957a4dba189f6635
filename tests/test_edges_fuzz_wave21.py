"""Fuzz waves 19–26 (issue 14): the kinds those runs found, each against PyTorch 2.13."""

import warnings

import numpy as np
import pytest
from conftest import fuzz_seed_is_a_readme_simplification

import autograd_lab as ag


def _outcome(run):
    """("ran", value) or ("raises", the error's class, whether it names an in-place change)."""
    try:
        return "ran", run()
    except Exception as error:
        return "raises", type(error).__name__, "inplace operation" in str(error)


PATHS = {
    "norm(p=0): no gradient arrives": lambda lib, v, x: lib.norm(lib.where(v != 0, x, v), p=0),
    "sum: a gradient arrives": lambda lib, v, x: lib.where(v != 0, x, v).sum(),
    "the view itself": lambda lib, v, x: v.sum(),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("op", ["div_", "mul_"])
def test_regression_an_inplace_op_through_a_view_is_checked_only_when_a_gradient_arrives(
    torch, path, op
):
    # fuzz seed 2705968: v1 = v0.movedim(-1, 0); v1.div_(v0) changes the v0 that div_ saved,
    # and a backward whose gradient stops at norm(p=0) then raised our "modified by an inplace
    # operation"; PyTorch keeps div_'s node inside CopySlices, which calls it (and so checks
    # what it saved) only when a gradient arrives
    def run(lib):
        x = lib.tensor([-2.0, 0.5], dtype=lib.float64).requires_grad_()
        base = x * 1.5
        view = base.movedim(-1, 0)
        getattr(view, op)(base)
        PATHS[path](lib, view, x).backward()
        return None if x.grad is None else x.grad.tolist()

    assert _outcome(lambda: run(ag)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_sgn_is_sign_on_real_numbers_under_its_own_node_name(torch, dtype):
    # the public torch.sgn (sign's twin for complex numbers): PyTorch's abs and norm backward
    # formulas call it, so it is also what a second-order graph through them shows
    def run(lib):
        x = lib.tensor([-2.0, -0.0, 0.0, 3.0, float("nan")]).to(getattr(lib, dtype))
        if dtype == "float32":
            x.requires_grad_()
        y = lib.sgn(x)
        z = x.detach().clone()
        z.sgn_()
        name = y.grad_fn.name() if y.grad_fn is not None else None
        return y.tolist(), str(y.dtype), z.tolist(), name, x.sgn().tolist()

    assert run(ag) == run(torch)


@pytest.mark.parametrize("through", ["abs", "norm(p=1)", "dist(p=1)"])
def test_second_derivatives_through_sgn_name_its_node_as_pytorch(torch, through):
    def names(lib):
        x = lib.tensor([-1.5, 2.0], dtype=lib.float64).requires_grad_()
        y = {
            "abs": lambda: x.abs().sum(),
            "norm(p=1)": lambda: x.norm(p=1),
            "dist(p=1)": lambda: x.dist(lib.zeros(2, dtype=lib.float64), 1),
        }[through]()
        (g,) = lib.autograd.grad(y, [x], create_graph=True)
        found, todo = set(), [g.grad_fn]
        while todo:
            node = todo.pop()
            if node is not None:
                found.add(node.name())
                todo += [n for n, _ in node.next_functions]
        return "SgnBackward0" in found

    assert names(ag) == names(torch) is True


WEIGHTS = {
    "self": lambda lib, s, w: s,
    "another tensor, changed later": lambda lib, s, w: w,
}


@pytest.mark.parametrize("weight", WEIGHTS)
@pytest.mark.parametrize("through_a_view", [False, True])
def test_regression_lerp_always_saves_its_weight(torch, weight, through_a_view):
    # fuzz seed 2654188 (wave 19): v2.lerp_(v0, v2) with an end v0 that leads nowhere (a view
    # taken before its base's requires_grad_()): PyTorch saves a tensor weight whatever is
    # needed (two gradients read it), so changing it in place before backward is refused there;
    # ours saved it only when a gradient was needed, and ran
    def run(lib):
        x = lib.tensor([0.5, 1.0])
        end = x[0:1]
        x.requires_grad_()
        s = lib.tensor([2.0, 3.0])
        s = s.as_strided((1,), (1,)) if through_a_view else s[:1].clone()
        w = lib.tensor([0.25])
        y = s.lerp_(end, WEIGHTS[weight](lib, s, w))
        w.mul_(2)
        y.sin().sum().backward()
        return x.grad

    assert _outcome(lambda: run(ag)) == _outcome(lambda: run(torch))
    assert _outcome(lambda: run(ag))[0] == "raises"


SIGNALS = {
    "one sample, channels innermost": lambda lib: (
        lib.tensor([0.0, 1.0]).as_strided((2, 1), (1, 2)),
        lib.arange(8.0).reshape(2, 2, 2),
    ),
    "a batch, channels innermost": lambda lib: (
        lib.arange(6.0).reshape(1, 2, 3).transpose(1, 2),
        lib.arange(12.0).reshape(2, 3, 2),
    ),
    "kernels channels innermost": lambda lib: (
        lib.arange(6.0).reshape(1, 2, 3),
        lib.arange(8.0).reshape(2, 2, 2).transpose(1, 2).contiguous().transpose(1, 2),
    ),
    "two samples transposed": lambda lib: (
        lib.arange(12.0).reshape(2, 3, 2).transpose(1, 2),
        lib.arange(12.0).reshape(2, 2, 3),
    ),
    "length 1": lambda lib: (lib.arange(3.0).reshape(1, 3, 1), lib.arange(6.0).reshape(2, 3, 1)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", SIGNALS)
def test_regression_conv1d_lays_out_its_result_as_pytorch(torch, case, dtype):
    # fuzz seed 2748645 (wave 20): conv1d of an (2, 1) signal with strides (1, 2) gave a
    # row-major result; PyTorch makes the signal contiguous, sees it as images (N, C, 1, L),
    # and a channels-last image (or kernel) gives a channels-last result. The layout shows in
    # stride() and in what as_strided reads from a clone
    def run(lib):
        x, w = (t.to(getattr(lib, dtype)) for t in SIGNALS[case](lib))
        y = lib.nn.functional.conv1d(x, w, padding=1)
        return y.stride(), y.clone().stride(), y.flatten().tolist()

    assert run(ag) == run(torch)


@pytest.mark.parametrize(
    "values",
    [[-0.0, 0.0, -1.0, 0.5], [0.0, -0.0, 2.0], [1.0, 0.0, -0.0, -0.0, 2.0], [-0.0, 0.0] * 4],
)
def test_median_along_a_dim_picks_the_same_tied_zero_and_index_as_pytorch(torch, values):
    def run(lib):
        result = lib.tensor(values).reshape(1, -1).median(1)
        return result.indices.tolist(), (1 / result.values).tolist()

    assert run(ag) == run(torch)


@pytest.mark.parametrize("weights", [[1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
def test_second_derivative_through_logcumsumexp_where_no_gradient_is_zero(torch, weights):
    def run(lib):
        x = lib.tensor([[0.1], [0.5], [-0.3]], dtype=lib.float64).requires_grad_()
        y = x.logcumsumexp(1).log_softmax(0)
        loss = (y * lib.tensor(weights, dtype=lib.float64).reshape(3, 1)).sum()
        (g,) = lib.autograd.grad(loss, [x], create_graph=True)
        (g2,) = lib.autograd.grad((g * g).sum(), [x])
        return [round(v, 12) for v in g2.flatten().tolist()]

    assert run(ag) == run(torch)


@pytest.mark.parametrize("changed", ["the input", "the result"])
def test_regression_sgn_saves_its_input_and_result(torch, changed):
    # fuzz seeds 3001268 and 3004682 (wave 23): sgn's result changed in place before backward
    # ran here; PyTorch's SgnBackward0 saved it (and its input), and refuses
    def run(lib):
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        y = x * 1
        z = y.sgn()
        (y if changed == "the input" else z).mul_(2)
        z.sum().backward()
        return x.grad.tolist()

    assert _outcome(lambda: run(ag)) == _outcome(lambda: run(torch))
    assert _outcome(lambda: run(ag))[0] == "raises"


BIG = 3.4028234663852886e38  # float32's largest number


@pytest.mark.parametrize(
    "values",
    [
        [BIG, 0.0, 0.0, BIG],  # the float32 sum overflows: PyTorch's mean is inf, std inf
        [1.8e19, -1.8e19] * 3,  # the variance overflows float32, its square root does not
        [10000.001, 10000.002, 10000.004, 9999.999, 10000.0],  # the mean rounded to float32
        [2.0, 2.0],
    ],
)
@pytest.mark.parametrize("op", ["var", "std"])
def test_regression_float32_var_and_std_into_one_number_take_a_float32_mean(torch, op, values):
    # fuzz seed 3046508 (wave 23): std of [inf -> 3.4e38, 0, 0, 3.4e38] (nan_to_num) was 1.96e38
    # here, inf in PyTorch, whose var()/std() into one number takes the mean in float32 first
    def run(lib):
        x = lib.tensor(values)
        results = [getattr(x, op)(), getattr(x.reshape(1, -1, 1), op)(1), getattr(x, op)(0)]
        return [r.flatten().tolist() for r in results]

    assert run(ag) == run(torch)


def _isclose_operands(lib):
    return {
        "expanded bools": (lib.tensor([[False, True]]).expand(2, 2),) * 2,
        "expanded floats": (
            lib.tensor([[1.0, 2.0]]).expand(3, 2),
            lib.tensor([[1.0, 2.5]]).expand(3, 2),
        ),
        "transposed": (lib.arange(6.0).reshape(2, 3).t(),) * 2,
        "one transposed": (lib.arange(6.0).reshape(2, 3).t(), lib.arange(6.0).reshape(3, 2)),
        "broadcast": (lib.arange(3.0).reshape(3, 1), lib.arange(2.0).reshape(1, 2)),
    }


@pytest.mark.parametrize("case", list(_isclose_operands(ag)))
def test_regression_isclose_lays_out_its_result_as_pytorch(torch, case):
    # fuzz seed 3244819 (wave 25): isclose(x, x) of an expanded bool x was not contiguous here
    # (numpy's layout); PyTorch lays it out as its first step, input == other, does
    def run(lib):
        a, b = _isclose_operands(lib)[case]
        result = lib.isclose(a, b, atol=0.5, equal_nan=True)
        return result.tolist(), result.stride(), result.is_contiguous()

    assert run(ag) == run(torch)


EMPTY_PICKS = {
    "a mask of falses on dim 0": lambda lib, x: x[lib.zeros(x.shape[0], dtype=lib.bool)],
    "a mask of falses on dim 1": lambda lib, x: x[:, lib.zeros(x.shape[1], dtype=lib.bool)],
    "no indices, last dim": lambda lib, x: x[..., lib.tensor([], dtype=lib.int64)],
    "no indices, then None": lambda lib, x: x[lib.tensor([], dtype=lib.int64), None],
    "a mask of falses over all": lambda lib, x: x[lib.zeros(x.shape, dtype=lib.bool)],
}


@pytest.mark.parametrize("pick", EMPTY_PICKS)
@pytest.mark.parametrize(
    "shape, order",
    [((2, 1, 2), (0, 1, 2)), ((2, 1), (1, 0)), ((3, 2, 1), (2, 1, 0)), ((1, 2, 3), (1, 2, 0))],
)
def test_regression_an_empty_pick_has_pytorchs_strides(torch, pick, shape, order):
    # fuzz seed 3320635 (wave 26): x[mask] of a (2, 1, 2) x with a mask of falses had strides
    # (2, 2, 1) here, (2, 0, 1) in PyTorch: its index tensors, (0, 1, 1) there, broadcast
    # against the result, so TensorIterator sorts the dims and multiplies the sizes up from the
    # innermost (a 0 makes every stride outside it 0); where every operand has the result's
    # shape, an empty tensor is contiguous and the result row-major (339 of 1,500 random
    # layouts differed before, none after)
    def run(lib):
        stored = [shape[d] for d in order]
        x = lib.arange(float(np.prod(shape))).reshape(stored).permute(*np.argsort(order))
        result = EMPTY_PICKS[pick](lib, x)
        return tuple(result.shape), result.stride()

    assert run(ag) == run(torch)


@pytest.mark.parametrize("base_requires_grad", [False, True])
@pytest.mark.parametrize("how", ["grad(inputs=[value])", "backward()"])
def test_regression_writing_into_an_expanded_view_is_refused_only_where_its_base_needs_a_grad(
    torch, base_requires_grad, how
):
    # fuzz seed 3323711 (wave 26): x0 = tensor([0.]).expand(2); x0[mask] = x1[0]; then
    # grad(loss, [x1]) was refused here (the view's elements share one memory place); PyTorch
    # writes the view's gradient back into the base's, and refuses, only when the base's
    # gradient is needed: in backward() with a base that requires grad, never in grad(inputs=)
    def run(lib):
        base = lib.tensor([0.0], requires_grad=base_requires_grad)
        view = (base * 1 if base_requires_grad else base).expand(2)
        value = lib.tensor([0.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch: "Use of index_put_ on expanded tensors"
            view[lib.tensor([True, True])] = value[0]
        loss = (view * lib.tensor([1.0, 3.0])).sum()
        if how == "backward()":
            loss.backward()
            return value.grad.tolist()
        return lib.autograd.grad(loss, [value])[0].tolist()

    assert _outcome(lambda: run(ag)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_regression_gelu_tanh_second_derivative_is_as_accurate_as_pytorchs(torch, dtype):
    # fuzz seed 3374496 (wave 26): the second derivative of gelu(approximate="tanh") at x = 4.94
    # was -2.76e-4 in float32 here, -3.26e-4 in PyTorch, -3.21e-4 in float64: our formula took
    # the slope of 1 - tanh² as (1 - tanh²)·..., which float32 rounds to a few last bits where
    # tanh is nearly 1; PyTorch's takes sech² from cosh. 800 points in [-10, 10]: our largest
    # error against float64 was 3.7e-6 in float32 (PyTorch's 3.8e-7), now PyTorch's
    xs = np.random.default_rng(0).uniform(-10, 10, 800).astype(np.float32).tolist()

    def second(lib, dtype):
        x = lib.tensor(xs, dtype=getattr(lib, dtype)).requires_grad_()
        y = lib.nn.functional.gelu(x, approximate="tanh")
        (g,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), [x])
        return np.array(g2.tolist())

    exact = second(torch, "float64")
    ours, theirs = second(ag, dtype), second(torch, dtype)
    assert np.abs(ours - exact).max() <= 1.5 * np.abs(theirs - exact).max() + 1e-13


@pytest.mark.parametrize("alpha", [0, 0.0, 2])
@pytest.mark.parametrize("other", [1.0, -1.0, "tensor"])
def test_regression_sub_with_alpha_gives_pytorchs_zero(torch, alpha, other):
    # fuzz seed 3467727 (wave 27): v.subtract_(1.0, alpha=0) of a -0.0 was -0.0 here, 0.0 in
    # PyTorch, which computes x + (-alpha)·y, and an int 0 has no -0
    def run(lib):
        x = lib.tensor([0.0, -0.0, 1.5])
        y = lib.tensor([1.0, -1.0, 2.0]) if other == "tensor" else other
        z = x.clone()
        z.sub_(y, alpha=alpha)
        return (1 / x.sub(y, alpha=alpha)).tolist(), (1 / z).tolist()

    assert run(ag) == run(torch)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_regression_an_index_tensor_into_an_empty_dim_is_an_index_error_first(torch, dtype):
    # fuzz seed 3444559 (wave 27): x[None, tensor([0]), :1] = an int64 value into an empty
    # float32 x raised our dtype complaint; PyTorch first finds nothing to pick (IndexError)
    def run(lib):
        x = lib.zeros(0, 1, 1)
        value = lib.zeros(1, 1, 1, dtype=getattr(lib, dtype))
        try:
            x[None, lib.tensor([0]), :1] = value
        except Exception as error:
            return type(error).__name__
        return "ran"

    assert run(ag) == run(torch) == "IndexError"


READMES = [
    # wave 20, 2710027: a second derivative through var of one element (its gradient nan) and
    # dist(p=1): sgn's zero derivative times nan is 0 in PyTorch (an efficient zero tensor)
    (2710027, "efficient zero tensors"),
    # wave 21, 2840006: median() of [-0.0, 0.0, -inf, 0.5] is 0.0 in PyTorch (the element
    # std::nth_element leaves in the middle), -0.0 here; divided into -inf later, it shows
    (2840006, "`median()` of all elements"),
    # wave 22: sgn's gradient held in .grad, where a second backward adds to it (2900953), and
    # std's backward, which writes into the gradient (2906791), fail in PyTorch; asin's slope
    # at 2.81 (nan) times sgn's zero is 0 there (2906517)
    (2900953, "ZeroTensors are immutable"),
    (2906791, "ZeroTensors are immutable"),
    (2906517, "efficient zero tensors"),
    # wave 22, 2961593: logcumsumexp's backward at a gradient exactly 0 here, 1e-7 in PyTorch
    (2961593, "log|gradient|"),
    # wave 23, 3035853: the gradient through sgn of bce_with_logits(x, x) requires grad here
    # with create_graph=True, PyTorch's (an efficient zero tensor) does not
    (3035853, "efficient zero tensors"),
    # wave 23, 3046749: clamp with tensor bounds wider than the input, whose backward fails in
    # PyTorch, while ours goes on to unique_consecutive, which has no derivative
    (3046749, "`clamp`/`clip` with tensor bounds"),
    # wave 27, 3468659: elu of x + x·x/4 at x = -inf (nan): our slope there is 1 (PyTorch's
    # element-by-element rule), times addcmul's -inf; PyTorch's vectorized loop gives nan
    (3468659, "`elu`'s gradient at a nan input"),
]


@pytest.mark.parametrize(("seed", "readme"), READMES)
def test_these_kinds_are_readme_simplifications(torch, seed, readme):
    assert fuzz_seed_is_a_readme_simplification(torch, seed, readme)


MIXED = {
    "x + y": lambda lib, i, f: i + f,
    "sub(alpha=3)": lambda lib, i, f: lib.sub(i, f, alpha=3),
    "x * y": lambda lib, i, f: i * f,
    "x / y": lambda lib, i, f: i / f,
    "maximum": lambda lib, i, f: lib.maximum(i, f),
    "x == y": lambda lib, i, f: i == f,
    "y < x": lambda lib, i, f: f < i,
    "logical_and": lambda lib, i, f: lib.logical_and(i, f),
    "int / int": lambda lib, i, f: i / i.t(),
}


@pytest.mark.parametrize("op", MIXED)
def test_regression_an_input_of_another_dtype_is_laid_out_as_converted_first(torch, op):
    # fuzz seed 3568518 (wave 28): subtract(x0, v0, alpha=3) of an expanded int64 x0 and a
    # transposed float32 v0 followed v0's layout here; PyTorch converts x0 to float32 first
    # (x0.to(): an expanded tensor comes out row-major), and that decides: a row-major result,
    # so reshape(-1, 1) of it is a view (ViewBackward0), not a copy
    def run(lib):
        ints = lib.tensor([[1, 2, 3]]).expand(3, 3)
        floats = lib.arange(9.0).reshape(3, 3).t().requires_grad_()
        result = MIXED[op](lib, ints, floats)
        reshaped = result.reshape(-1, 1)
        return result.stride(), getattr(reshaped.grad_fn, "name", lambda: None)()

    assert run(ag) == run(torch)
