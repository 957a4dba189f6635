"""Fuzz wave 14, group B (issue 14): NaN and inf in gradients and hooks, against PyTorch 2.13."""

import dataclasses
import math

import numpy as np
import pytest

import autograd_lab as ag

INF = math.inf


def _values_and_grads(lib, make, shapes, numbers):
    """make(lib, a, b) on leaves a and b of `shapes` filled from `numbers`, then backward of
    (result * (1, 2, 3, ...)).sum(): the result and both gradients as numpy arrays."""
    leaves = []
    for shape in shapes:
        count = math.prod(shape)
        data = np.array(numbers[:count], dtype=np.float32).reshape(shape)
        leaves.append(lib.tensor(data).requires_grad_())
    result = make(lib, *leaves)
    weights = lib.arange(1, result.numel() + 1).reshape(result.shape)
    (result * weights).sum().backward()
    return [result.detach().numpy()] + [leaf.grad.numpy() for leaf in leaves]


def _assert_same(ours, theirs):
    """Equal arrays, nan where nan, and the same sign on every zero and infinity."""
    for mine, their in zip(ours, theirs, strict=True):
        assert mine.shape == their.shape
        np.testing.assert_array_equal(mine, their)
        numbers = ~np.isnan(their)
        assert (np.signbit(mine)[numbers] == np.signbit(their)[numbers]).all()


ALPHA_FORMS = {
    "add": lambda lib, a, b, alpha: lib.add(a, b, alpha=alpha),
    "sub": lambda lib, a, b, alpha: lib.sub(a, b, alpha=alpha),
    "subtract": lambda lib, a, b, alpha: lib.subtract(a, b, alpha=alpha),
    "x.add": lambda lib, a, b, alpha: a.add(b, alpha=alpha),
    "add_": lambda lib, a, b, alpha: (a * 1).add_(b, alpha=alpha),
    "sub_": lambda lib, a, b, alpha: (a * 1).sub_(b, alpha=alpha),
}
BROADCASTS = [
    ((0,), ()),  # the seed: other, 0-d, broadcast to an empty result
    ((0,), (1,)),
    ((2, 0), (1, 1)),
    ((), (0,)),  # input broadcast to an empty result
    ((2, 3), (3,)),
    ((3,), ()),
    ((), ()),
]


@pytest.mark.parametrize("alpha", [2, -1.5, 0.0, INF, -INF, math.nan], ids=str)
@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("form", ALPHA_FORMS)
def test_regression_alpha_scales_the_gradient_before_it_is_summed_to_other(
    torch, form, shapes, alpha
):
    # fuzz seed 2139399: torch.subtract(v0, x2, alpha=-inf) with v0 empty and x2 0-d gave x2.grad
    # nan where PyTorch gives 0: we recorded x2 * alpha then a subtraction, so the empty gradient
    # was summed to x2's shape first (0) and scaled after (0 * -inf = nan); PyTorch scales the
    # result-shaped gradient by alpha, then sums it (the sum of an empty tensor is 0).
    numbers = [0.0, 1.0, -2.0, INF, 0.5, 3.0]
    make = lambda lib, a, b: ALPHA_FORMS[form](lib, a, b, alpha)  # noqa: E731
    if form.endswith("_") and math.prod(shapes[0]) != math.prod(np.broadcast_shapes(*shapes)):
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            _values_and_grads(ag, make, shapes, numbers)  # an in-place op cannot grow x
        return
    ours = _values_and_grads(ag, make, shapes, numbers)
    theirs = _values_and_grads(torch, make, shapes, numbers)
    _assert_same(ours, theirs)


def test_add_with_alpha_records_one_node_as_pytorch(torch):
    for lib in (ag, torch):
        x, y = lib.ones(3, requires_grad=True), lib.ones(1, requires_grad=True)
        added, subtracted = lib.add(x, y, alpha=2), lib.sub(x, y, alpha=0.5)
        assert type(added.grad_fn).__name__ == "AddBackward0"
        assert type(subtracted.grad_fn).__name__ == "SubBackward0"
        assert [type(f).__name__ for f, _ in added.grad_fn.next_functions] == [
            "AccumulateGrad",
            "AccumulateGrad",
        ]
        assert added.grad_fn._saved_alpha == 2 and subtracted.grad_fn._saved_alpha == 0.5
        number_first = lib.add(2, x, alpha=3)  # alpha scales the second argument: 2 + 3x
        assert number_first.tolist() == [5.0, 5.0, 5.0]
        assert number_first.grad_fn.next_functions[0] == (None, 0)
        # nothing saved but a number: a second backward needs no retain_graph, as in PyTorch
        loss = added.sum()
        loss.backward()
        loss.backward()
        assert y.grad.tolist() == [12.0]


def test_add_with_alpha_into_a_small_integer_dtype_wraps_as_pytorch(torch):
    for make in (
        lambda lib: lib.add(lib.tensor([100, 2], dtype=lib.int8), 100, alpha=3),
        lambda lib: lib.sub(lib.tensor([100, 2], dtype=lib.int8), lib.tensor([90, 1]), alpha=3),
        lambda lib: lib.add(2, lib.tensor([True, False]), alpha=2),
        lambda lib: lib.add(lib.tensor([True, False]), lib.tensor([True, True]), alpha=0),
    ):
        ours, theirs = make(ag), make(torch)
        assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype)


def _hook_program(lib):
    """The tensor hooks of a leaf, a non-leaf and an unused output that no gradient reaches, and
    the post accumulate grad hook of a leaf that has a .grad from before: what each is shown."""
    seen = []

    class NoGradientForX(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * 2 + y

        @staticmethod
        def backward(ctx, grad):
            return None, grad

    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            seen.append(("backward", grad_a is None, grad_b is None))
            return grad_a

    def show(name):
        return lambda grad: seen.append((name, None if grad is None else grad.tolist()))

    x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    x.grad = lib.full((2,), 5.0)
    x.register_hook(show("leaf"))
    x.register_post_accumulate_grad_hook(lambda t: seen.append(("post", t.grad.tolist())))
    middle = x * 1
    middle.register_hook(show("non-leaf"))
    middle.retain_grad()
    NoGradientForX.apply(middle, y).sum().backward()
    seen.append(("retained", middle.grad))
    a, b = TwoOutputs.apply(y)
    a.register_hook(show("used output"))
    b.register_hook(show("unused output"))
    a.sum().backward()
    return seen


def test_regression_hooks_are_shown_none_where_no_gradient_arrives_as_in_pytorch(torch):
    # fuzz seed 2176445: a hook `lambda grad: grad * 2` behind dist(x, x, 0) failed with
    # TypeError on the None it was shown, where PyTorch's backward fails first, inside dist.
    # PyTorch too shows a tensor hook None where no gradient arrived (and retain_grad keeps
    # None), and runs a leaf's post accumulate grad hooks all the same, with .grad as it was:
    # those we skipped.
    ours, theirs = _hook_program(ag), _hook_program(torch)
    assert ours == theirs
    assert ("leaf", None) in ours and ("post", [5.0, 5.0]) in ours


def test_post_accumulate_grad_hooks_run_without_a_gradient_after_requires_grad_false(torch):
    for lib in (ag, torch):
        seen = []
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad))
        out = x * y
        x.requires_grad_(False)  # PyTorch then leaves .grad alone, and still runs the hook
        out.sum().backward()
        assert seen == [None] and x.grad is None


def test_post_accumulate_grad_hooks_do_not_run_in_autograd_grad(torch):
    for lib in (ag, torch):
        seen = []
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t))
        lib.autograd.grad((x * y).sum(), [y])
        assert seen == []


def test_the_hook_behind_dist_with_p_0_is_a_readme_simplification(torch):
    from fuzzing import check, generator

    result = check(generator.generate(2176445), ag, torch)
    assert result.divergences == []
    ((divergence, simplification),) = result.accepted
    assert "'NoneType'" in divergence.ours and "a hook" in simplification.readme


BIG = float(np.finfo(np.float32).max)  # 3.4e38: 1.5 * BIG overflows to inf, -1.42 * BIG to -inf


def _numbers(result):
    return result.detach().numpy()


@pytest.mark.parametrize(
    "make",
    [
        # fuzz seed 2102316: [BIG, BIG, BIG] ⊛ [-1.42, 1.5] was [-inf, -inf], PyTorch [nan, nan]:
        # numpy's BLAS fuses each product into its sum (fma(1.5, BIG, -inf) = -inf), PyTorch's
        # one-sample convolution rounds each product first (-inf + inf = nan)
        lambda lib: lib.nn.functional.conv1d(
            lib.full((1, 3), BIG), lib.tensor([-1.42, 1.5]).reshape(1, 1, 2)
        ),
        lambda lib: lib.nn.functional.conv1d(
            lib.full((1, 2, 5), BIG), lib.tensor([1.5, -1.42, 1.0, 0.5]).reshape(1, 2, 2)
        ),
        lambda lib: lib.nn.functional.conv2d(
            lib.full((1, 1, 3, 3), BIG), lib.tensor([[-1.42, 1.5], [1.0, 1.0]]).reshape(1, 1, 2, 2)
        ),
    ],
)
def test_regression_products_that_overflow_are_rounded_before_they_are_added(torch, make):
    with np.errstate(all="raise"):  # and silently, as PyTorch: no numpy warning leaks
        ours = _numbers(make(ag))
    theirs = _numbers(make(torch))
    _assert_same([ours], [theirs])


def test_regression_the_gradients_of_one_sample_convolution_round_each_product(torch):
    # (same cause as seed 2102316, in the backward's products: grad ⊛ weight and input ⊛ grad)
    def grads(lib):
        x = lib.full((1, 1, 4), BIG).requires_grad_()
        w = lib.tensor([-1.42, 1.5]).reshape(1, 1, 2).requires_grad_()
        lib.nn.functional.conv1d(x, w).backward(lib.tensor([[[BIG, 1.0, -BIG]]]))
        return [x.grad.numpy(), w.grad.numpy()]

    _assert_same(grads(ag), grads(torch))


def test_ordinary_products_take_the_fast_path_unchanged():
    from autograd_lab.ops import products

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal((7, 3))
    b = b.astype(np.float32)
    assert products.nothing_can_overflow(a, b)
    assert not products.products_may_overflow(a, b)
    assert np.array_equal(products.einsum("ik,kj->ij", a, b, (a, b)), np.matmul(a, b))
    a[0, 0], b[0, 0] = np.inf, np.nan  # inf and nan overflow nothing: still numpy's product
    assert not products.nothing_can_overflow(a, b)  # (but numpy's warnings are silenced then)
    assert not products.products_may_overflow(a, b)
    a[1, 1] = 1e30
    b[1, 1] = 1e9
    assert products.products_may_overflow(a, b)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.full((2, 2), BIG) @ lib.tensor([[-1.42], [1.5]]),
        lambda lib: lib.nn.functional.linear(lib.full((3, 2), BIG), lib.tensor([[-1.42, 1.5]])),
    ],
)
def test_a_matrix_product_whose_products_overflow_fuses_them_a_readme_simplification(torch, make):
    # seed 2102316's cause in matrix products: PyTorch rounds each product (nan), ours leaves
    # the products to BLAS, which fuses them into the sum for some shapes (-inf), not for
    # others (nan). Rounding each product ourselves was exact, but checked every product's
    # largest numbers first: a small model's training step was a tenth slower for it
    ours, theirs = _numbers(make(ag)), _numbers(make(torch))
    assert np.isnan(theirs).all()
    assert (np.isnan(ours) | np.isneginf(ours)).all()


def test_a_batched_convolution_whose_products_overflow_is_a_readme_simplification():
    from fuzzing.compare import Divergence
    from fuzzing.simplifications import SIMPLIFICATIONS

    def accepted(shape, ours="nan", theirs="-inf", op="F.conv1d"):
        shown = "tensor([{}], float32, shape=[" + ", ".join(map(str, shape)) + "])"
        d = Divergence("v7 = ...  [v7]", op, "NaN/inf", shown.format(ours), shown.format(theirs))
        return [s.readme for s in SIMPLIFICATIONS if not s.in_program and s.matches(d)]

    assert len(accepted((2, 1, 2))) == 1 and "batch of two or more" in accepted((2, 1, 2))[0]
    assert accepted((2, 1, 2, 2), op="F.conv2d")
    assert not accepted((1, 1, 2))  # one sample: ours rounds each product, as PyTorch
    assert not accepted((1, 2))  # an unbatched signal (the seed) likewise
    assert accepted((2, 1), op="F.linear")  # matrix products fuse as BLAS does
    assert accepted((2, 1), op="x @ y")


def _signs_of_zero_extremes(lib, name, data, dtype, dim, keepdim):
    """amax/amin of `data` (0.0 and -0.0 tied, other numbers beside them) as Python floats, whose
    repr shows a zero's sign."""
    x = lib.tensor(data, dtype=getattr(lib, dtype))
    result = getattr(lib, name)(x) if dim is None else getattr(lib, name)(x, dim, keepdim)
    return [repr(float(v)) for v in result.reshape(-1).tolist()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_regression_amax_and_amin_keep_the_first_of_tied_zeros(torch, name, dtype):
    # wave-13 seed 2065395: amax over [0.0, -0.0] rows gave -0.0 where PyTorch gives 0.0 (the
    # first of the tied zeros), so log10(tanh(v)) was -inf, and its gradient -inf, not inf.
    # PyTorch keeps the first tied zero over rows shorter than 16 float64 (32 float32) elements
    # and across outer dims (README: its vectorized loop over longer rows may keep another).
    rng = np.random.default_rng(14)
    other = -1.0 if name == "amax" else 1.0
    for shape in [(3,), (2, 3), (3, 1, 3), (2, 3, 4), (15,), (4, 15), (40, 2)]:
        for _ in range(4):
            data = rng.choice([0.0, -0.0, other], size=shape) * 1.0
            data = np.where(data == 0, rng.choice([0.0, -0.0], size=shape), data)
            dims = [None] + list(range(len(shape))) + ([(0, 1)] if len(shape) > 1 else [])
            for dim in dims:
                reduced = range(len(shape)) if dim is None else np.atleast_1d(dim)
                row = math.prod(shape[d] for d in reduced)
                if len(shape) - 1 in reduced and row >= 16:
                    continue  # a long row in memory: PyTorch's vectorized loop
                for keepdim in (False, True):
                    args = (name, data, dtype, dim, keepdim)
                    ours = _signs_of_zero_extremes(ag, *args)
                    assert ours == _signs_of_zero_extremes(torch, *args), (shape, dim, data)


def test_the_seed_of_amax_among_tied_zeros_now_matches(torch):
    def gradient(lib):
        inf = float("inf")
        x0 = lib.tensor([0.0, 2.0, 1.0, 1.0, 0.5, inf, -inf, 0.0, -0.0]).reshape(3, 1, 3)
        x0.requires_grad_()
        v3 = lib.log10(lib.tanh(lib.amax(x0, dim=2, keepdim=True)))
        (v3 * lib.arange(1, v3.numel() + 1).reshape(v3.shape)).sum().backward()
        return [x0.grad.numpy()]

    _assert_same(gradient(ag), gradient(torch))


def test_a_zero_of_amax_over_a_long_row_is_a_readme_simplification():
    from fuzzing.compare import Divergence
    from fuzzing.simplifications import SIMPLIFICATIONS

    def accepted(after_zero_sign, what="NaN/inf"):
        d = Divergence("loss.backward()", "backward", what, "tensor([-inf])", "tensor([inf])")
        d = dataclasses.replace(d, after_zero_sign=after_zero_sign)
        return [s.readme for s in SIMPLIFICATIONS if not s.in_program and s.matches(d)]

    assert ["tied zeros" in readme for readme in accepted("amax")] == [True]
    assert accepted("Tensor.amin") and accepted("max") and accepted("min")
    assert not accepted("amax", what="values") and not accepted("sum")
    # ours keeps the first tied zero over a long row too (PyTorch's vectorized loop may not)
    row = ag.tensor([-1.0] * 40 + [-0.0, 0.0])
    assert repr(row.amax().item()) == "-0.0" and repr(row.flip(0).amax().item()) == "0.0"


@pytest.mark.parametrize(
    "reduce",
    [
        lambda x: x.sum(),
        lambda x: x.sum(0),  # numpy's fast route: ones @ x
        lambda x: x.sum(1, keepdim=True),
        lambda x: x.mean(),
        lambda x: x.mean(1),
        lambda x: (x * 1e38).sum(1),  # an overflow to inf
    ],
)
def test_sums_of_infinities_are_nan_silently_as_in_pytorch(torch, reduce):
    # (found beside seed 2139399: numpy warned "invalid value encountered in reduce" where
    # PyTorch answers nan without a word; the engine's sums of broadcast gradients warned too)
    data = [[INF, -INF, 1.0], [2.0, INF, -INF], [3e38, 3e38, 1.0]]
    with np.errstate(all="raise"):
        ours = reduce(ag.tensor(data)).numpy()
    _assert_same([ours], [reduce(torch.tensor(data)).numpy()])
