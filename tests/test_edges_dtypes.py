"""Dtype edges issue 14's differential fuzzing found: result dtypes, and calls PyTorch refuses that
we accepted. Each compares with PyTorch 2.13 (values, dtypes, error classes and key words)."""

import operator

import numpy as np
import pytest
from conftest import both, raises_alike, values

import autograd_lab as ag


def close(torch, make):
    """As both(), but the values only to the last bits (exp and log round differently)."""
    ours, theirs = make(ag), make(torch)
    np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6)
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)


BOOLS = lambda lib: lib.tensor([True, False])  # noqa: E731
INTS = lambda lib: lib.tensor([1, 2])  # noqa: E731
INT8S = lambda lib: lib.tensor([1, 2], dtype=lib.int8)  # noqa: E731
FLOATS = lambda lib: lib.tensor([1.5, -2.0])  # noqa: E731


@pytest.mark.parametrize("alpha", [2, 0, -1])
@pytest.mark.parametrize(
    "a, b",
    [(BOOLS, BOOLS), (BOOLS, lambda lib: True), (INT8S, BOOLS), (INTS, INT8S), (FLOATS, INTS)],
)
def test_add_computes_alpha_times_other_in_the_result_dtype(torch, a, b, alpha):
    both(torch, lambda lib: lib.add(a(lib), b(lib), alpha=alpha))
    both(torch, lambda lib: a(lib).clone().add_(b(lib), alpha=alpha))
    both(torch, lambda lib: lib.add(2, a(lib), alpha=alpha))  # alpha scales the second argument


@pytest.mark.parametrize(
    "a, b, alpha, words",
    [
        (BOOLS, BOOLS, 2.5, "alpha must not be a floating point number"),
        (INTS, INT8S, 0.5, "alpha must not be a floating point number"),
        (INTS, 3, True, "Boolean alpha only supported for Boolean results"),
        (FLOATS, INTS, False, "Boolean alpha only supported for Boolean results"),
        (INT8S, INT8S, 1000, "without overflow"),
    ],
)
def test_add_and_sub_refuse_an_alpha_the_result_dtype_cannot_hold(torch, a, b, alpha, words):
    other = b if isinstance(b, int) else None
    for op in ("add", "sub"):
        if op == "sub" and a is BOOLS:
            continue  # refused for its bools first (the next test)
        raises_alike(
            torch,
            lambda lib: getattr(lib, op)(a(lib), other if other else b(lib), alpha=alpha),
            RuntimeError,
            words,
        )


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda lib: BOOLS(lib) - BOOLS(lib), "with two bool tensors"),
        (lambda lib: BOOLS(lib) - True, "with two bool tensors"),
        (lambda lib: lib.sub(BOOLS(lib), BOOLS(lib), alpha=2), "with two bool tensors"),
        (lambda lib: BOOLS(lib) - INTS(lib), "with a bool tensor"),
        (lambda lib: INTS(lib) - BOOLS(lib), "with a bool tensor"),
        (lambda lib: FLOATS(lib) - True, "with a bool tensor"),
        (lambda lib: 1 - BOOLS(lib), "with a bool tensor"),
        (lambda lib: FLOATS(lib) - lib.tensor(True), "with a bool tensor"),
        (lambda lib: FLOATS(lib).sub_(BOOLS(lib)), "with a bool tensor"),
    ],
)
def test_subtraction_refuses_any_bool_operand(torch, make, words):
    raises_alike(torch, make, RuntimeError, f"Subtraction, the `-` operator, {words}")


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.square(BOOLS(lib)),  # int64, as bool ** 2: numpy alone would say int8
        lambda lib: BOOLS(lib) ** 2,
        lambda lib: lib.tensor(True) ** 3,
        lambda lib: BOOLS(lib) ** True,  # a bool exponent keeps bool
        lambda lib: BOOLS(lib) ** False,
        lambda lib: BOOLS(lib) ** 0.5,
        lambda lib: 2 ** BOOLS(lib),
    ],
)
def test_powers_of_bool_tensors_have_pytorchs_dtype(torch, make):
    both(torch, make)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: BOOLS(lib) ** BOOLS(lib),
        lambda lib: BOOLS(lib) ** lib.tensor(True),
        lambda lib: True ** BOOLS(lib),
    ],
)
def test_bool_to_a_bool_tensor_power_is_not_implemented(torch, make):
    raises_alike(torch, make, NotImplementedError, "\"pow\" not implemented for 'Bool'")


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "int32"])
@pytest.mark.parametrize(
    "compute",
    [
        lambda x: x.square() + 1,
        lambda x: (x * x).sum(),
        lambda x: x.cumsum(0),
        lambda x: x.max(),
        lambda x: x.sqrt(),  # float32 (sqrt is exact to the last bit in both)
        lambda x: x.float().sum(),
        lambda x: x[x > 1],
        lambda x: x // 2,
    ],
)
def test_small_integer_dtypes_work_through_the_ops(torch, dtype, compute):
    both(torch, lambda lib: compute(lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))))


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request, torch):
    """Runs a test under each default dtype in both libraries, then restores float32."""
    for lib in (ag, torch):
        lib.set_default_dtype(getattr(lib, request.param))
    yield request.param
    for lib in (ag, torch):
        lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "bool"])
@pytest.mark.parametrize(
    "name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "reciprocal", "rsqrt", "logit"]
)
def test_math_of_integer_and_bool_tensors_is_in_the_default_dtype(
    torch, default_dtype, name, dtype
):
    def compute(lib):
        data = [True, False] if dtype == "bool" else [1, 2]
        return getattr(lib, name)(lib.tensor(data, dtype=getattr(lib, dtype)))

    ours, theirs = compute(ag), compute(torch)
    assert str(ours.dtype) == str(theirs.dtype) == f"torch.{default_dtype}"
    np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: BOOLS(lib).sign(),  # a bool is its own sign
        lambda lib: BOOLS(lib).clamp(min=0),  # int64: the bound's category
        lambda lib: BOOLS(lib).clamp(max=0.5),
        lambda lib: INT8S(lib).clamp(min=-1),  # a number bound keeps int8
    ],
)
def test_sign_and_clamp_of_bool_and_small_int_tensors(torch, make):
    both(torch, make)


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda lib: BOOLS(lib).abs(), NotImplementedError, "\"abs\" not implemented for 'Bool'"),
        (lambda lib: BOOLS(lib).relu(), RuntimeError, "Boolean inputs not supported for relu"),
        (lambda lib: lib.relu(BOOLS(lib)), RuntimeError, "Boolean inputs not supported for relu"),
        (lambda lib: BOOLS(lib).clamp(min=True), NotImplementedError, "not implemented for 'Bool'"),
    ],
)
def test_abs_relu_and_clamp_refuse_bool_tensors(torch, make, error, words):
    raises_alike(torch, make, error, words)


F64_0D = lambda lib: lib.tensor(2.0, dtype=lib.float64)  # noqa: E731
F32_0D = lambda lib: lib.tensor(3.0)  # noqa: E731


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize(
    "a, b, c",
    [
        (FLOATS, F64_0D, F32_0D),  # a 0-d float64 does not widen a float32 tensor
        (INTS, F32_0D, F64_0D),  # int tensor, 0-d floats: the 0-d tier's float64
        (F32_0D, F64_0D, F32_0D),  # all 0-d: float64
        (F32_0D, F32_0D, lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16)),  # float16 wins
        (BOOLS, F32_0D, F64_0D),
    ],
)
def test_addcmul_and_addcdiv_promote_all_three_operands(torch, op, a, b, c):
    both(torch, lambda lib: getattr(lib, op)(a(lib), b(lib), c(lib), value=0.5))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.addcmul(INTS(lib), INTS(lib), INT8S(lib)),  # integers are computed
        lambda lib: lib.addcmul(INTS(lib), INTS(lib), BOOLS(lib), value=2.5),  # value 2.5 is 2
        lambda lib: lib.addcmul(INT8S(lib), INT8S(lib), INT8S(lib), value=-3),
    ],
)
def test_addcmul_of_integer_tensors_is_computed_in_their_dtype(torch, make):
    both(torch, make)


@pytest.mark.parametrize(
    "make, error, words",
    [
        (
            lambda lib: lib.addcdiv(FLOATS(lib), INTS(lib), INT8S(lib)),
            RuntimeError,
            "Integer division with addcdiv is no longer supported",
        ),
        (
            lambda lib: lib.addcdiv(FLOATS(lib), BOOLS(lib), BOOLS(lib)),
            RuntimeError,
            "Integer division with addcdiv",
        ),
        (
            lambda lib: lib.addcmul(BOOLS(lib), BOOLS(lib), BOOLS(lib)),
            NotImplementedError,
            "not implemented for 'Bool'",
        ),
        (
            lambda lib: lib.addcmul(INT8S(lib), INT8S(lib), INT8S(lib), value=1000),
            RuntimeError,
            "without overflow",
        ),
        (lambda lib: lib.addcmul(FLOATS(lib), FLOATS(lib), 2.0), TypeError, "must be Tensor"),
        (lambda lib: lib.lerp(FLOATS(lib), 2.0, 0.5), TypeError, "must be a Tensor"),
        (
            lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5),
            RuntimeError,
            "expected dtype torch.float32 for `end` but got dtype torch.float64",
        ),
        (
            lambda lib: lib.lerp(lib.ones(2), lib.ones(2), lib.ones(2, dtype=lib.float64)),
            RuntimeError,
            "for `weight`",
        ),
        (lambda lib: lib.lerp(INTS(lib), INTS(lib), 0.5), NotImplementedError, "'Long'"),
    ],
)
def test_addcdiv_addcmul_and_lerp_refuse_as_pytorch(torch, make, error, words):
    raises_alike(torch, make, error, words)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.lerp(INTS(lib), INTS(lib), F32_0D(lib)),  # a 0-d weight promotes: float32
        lambda lib: lib.lerp(F32_0D(lib), F32_0D(lib), F64_0D(lib)),
        lambda lib: lib.lerp(FLOATS(lib), FLOATS(lib), F64_0D(lib)),
    ],
)
def test_lerp_with_a_0d_weight_promotes_like_a_number(torch, make):
    both(torch, make)


@pytest.mark.parametrize("op", ["mul_", "add_", "div_", "copy_"])
def test_grad_keeps_the_leafs_dtype_after_an_in_place_float64_operand(torch, op):
    def grads(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        other = lib.tensor([2.0, 4.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        getattr(y, op)(other)
        y.sum().backward()
        return x.grad, other.grad

    for ours, theirs in zip(grads(ag), grads(torch), strict=True):
        np.testing.assert_array_equal(values(ours), values(theirs))
        assert str(ours.dtype) == str(theirs.dtype)


PRODUCTS = {  # name: (the call, the first operand's shape, the second's)
    "matmul": (lambda lib, a, b: a @ b, (2, 3), (3, 2)),
    "matmul_batched": (lambda lib, a, b: lib.matmul(a, b), (4, 2, 3), (3, 2)),
    "mm": (lambda lib, a, b: lib.mm(a, b), (2, 3), (3, 2)),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), (4, 2, 3), (4, 3, 2)),
    "mv": (lambda lib, a, b: lib.mv(a, b), (2, 3), (3,)),
    "dot": (lambda lib, a, b: lib.dot(a, b), (3,), (3,)),
    "linear": (lambda lib, a, b: lib.nn.functional.linear(a, b), (2, 3), (4, 3)),
    "linear_1d": (lambda lib, a, b: lib.nn.functional.linear(a, b), (3,), (4, 3)),
}


@pytest.mark.parametrize("second", ["float64", "float16", "int64"])
@pytest.mark.parametrize("name", PRODUCTS)
def test_matrix_products_refuse_mixed_dtypes(torch, name, second):
    product, shape_a, shape_b = PRODUCTS[name]
    raises_alike(
        torch,
        lambda lib: product(lib, lib.ones(shape_a), lib.ones(shape_b, dtype=getattr(lib, second))),
        RuntimeError,
        "to have the same dtype",
    )


@pytest.mark.parametrize("name", PRODUCTS)
def test_matrix_products_of_integers_compute_and_of_bools_are_not_implemented(torch, name):
    product, shape_a, shape_b = PRODUCTS[name]
    both(
        torch,
        lambda lib: product(
            lib, lib.ones(shape_a, dtype=lib.int8), lib.ones(shape_b, dtype=lib.int8)
        ),
    )
    raises_alike(
        torch,
        lambda lib: product(
            lib, lib.ones(shape_a, dtype=lib.bool), lib.ones(shape_b, dtype=lib.bool)
        ),
        NotImplementedError,
        "not implemented for 'Bool'",
    )


@pytest.mark.parametrize(
    "reduce",
    [
        lambda lib, x: x.sum(dtype=lib.int64),
        lambda lib, x: x.sum(0, dtype=lib.bool),
        lambda lib, x: lib.sum(x, dtype=lib.int32),
        lambda lib, x: x.cumsum(0, dtype=lib.int64),
        lambda lib, x: x.cumprod(0, dtype=lib.int8),
    ],
)
def test_an_integer_result_dtype_is_refused_while_recording(torch, reduce):
    def recorded(lib):
        return reduce(lib, lib.tensor([1.5, 2.5], requires_grad=True))

    raises_alike(torch, recorded, RuntimeError, "Autograd not support dtype")

    def unrecorded(lib):  # without the graph the same call computes
        with lib.no_grad():
            return reduce(lib, lib.tensor([1.5, 2.5], requires_grad=True))

    both(torch, unrecorded)
    both(torch, lambda lib: reduce(lib, lib.tensor([1.5, 2.5])))


def test_converting_a_tensor_that_requires_grad_to_an_integer_dtype_is_allowed(torch):
    for convert in (lambda lib, x: x.long(), lambda lib, x: x.to(lib.int64)):
        ours, theirs = (convert(lib, lib.tensor([1.5], requires_grad=True)) for lib in (ag, torch))
        assert ours.requires_grad is theirs.requires_grad is False
        assert str(ours.dtype) == str(theirs.dtype)


F = lambda lib: lib.nn.functional  # noqa: E731
FLOAT_ONLY = {  # name: the call; PyTorch has no kernel for integer or bool tensors
    "gelu": lambda lib, x: F(lib).gelu(x),
    "gelu_tanh": lambda lib, x: F(lib).gelu(x, approximate="tanh"),
    "softplus": lambda lib, x: F(lib).softplus(x),
    "elu": lambda lib, x: F(lib).elu(x),
    "leaky_relu": lambda lib, x: F(lib).leaky_relu(x),
    "silu": lambda lib, x: F(lib).silu(x),
    "softmax": lambda lib, x: x.softmax(0),
    "F.softmax": lambda lib, x: F(lib).softmax(x, 0),
    "log_softmax": lambda lib, x: lib.log_softmax(x, 0),
    "F.log_softmax": lambda lib, x: F(lib).log_softmax(x, 0),
    "logcumsumexp": lambda lib, x: x.logcumsumexp(0),
}


@pytest.mark.parametrize("data", [INTS, INT8S, BOOLS])
@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_float_only_functions_are_not_implemented_for_integers_and_bools(torch, name, data):
    raises_alike(
        torch,
        lambda lib: FLOAT_ONLY[name](lib, data(lib)),
        NotImplementedError,
        "not implemented for",
    )


def test_softmax_with_a_float_dtype_takes_integers_and_with_an_integer_one_refuses(torch):
    close(torch, lambda lib: lib.softmax(INTS(lib), 0, dtype=lib.float64))
    close(torch, lambda lib: F(lib).log_softmax(BOOLS(lib), 0, dtype=lib.float32))
    raises_alike(
        torch,
        lambda lib: FLOATS(lib).softmax(0, dtype=lib.int64),
        NotImplementedError,
        "not implemented for 'Long'",
    )


@pytest.mark.parametrize("data", [INTS, INT8S, BOOLS])
@pytest.mark.parametrize(
    "spread, words",
    [
        (lambda lib, x: x.std(), "std and var only support floating point"),
        (lambda lib, x: x.var(0), "std and var only support floating point"),
        (lambda lib, x: lib.var_mean(x), "var_mean only support floating point"),
        (lambda lib, x: lib.std_mean(x), "std_mean only support floating point"),
    ],
)
def test_var_and_std_refuse_integers_and_bools(torch, data, spread, words):
    raises_alike(torch, lambda lib: spread(lib, data(lib)), RuntimeError, words)


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda lib: BOOLS(lib).argmax(), RuntimeError, "argmax\\(\\): does not support bool"),
        (lambda lib: BOOLS(lib).argmin(0), RuntimeError, "argmin\\(\\): does not support bool"),
        (lambda lib: BOOLS(lib).topk(1), RuntimeError, "topk does not support bool"),
        (lambda lib: BOOLS(lib).median(), NotImplementedError, "not implemented for 'Bool'"),
        (lambda lib: BOOLS(lib).median(0), NotImplementedError, "not implemented for 'Bool'"),
        (lambda lib: BOOLS(lib).kthvalue(1), NotImplementedError, "not implemented for 'Bool'"),
        (
            lambda lib: FLOATS(lib).mean(dtype=lib.int64),
            RuntimeError,
            "could not infer output dtype",
        ),
    ],
)
def test_reductions_that_refuse_bool_tensors(torch, make, error, words):
    raises_alike(torch, make, error, words)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.tensor([[1, 2]], dtype=lib.uint8).prod(),  # int64 (numpy: uint64)
        lambda lib: lib.tensor([[1, 2]], dtype=lib.uint8).prod(1),
        lambda lib: lib.tensor([[3, 100]], dtype=lib.int8).prod(1, keepdim=True),  # no wrap
        lambda lib: lib.tensor([[True, False]]).prod(1),
        lambda lib: lib.tensor([[1, 2]], dtype=lib.uint8).all(),  # uint8 stays uint8
        lambda lib: lib.tensor([[1, 0]], dtype=lib.uint8).any(0),
        lambda lib: INT8S(lib).all(),  # other dtypes give bool
        lambda lib: INTS(lib).mean(dtype=lib.float64),
        lambda lib: BOOLS(lib).mean(0, dtype=lib.float32),
    ],
)
def test_integer_reductions_have_pytorchs_dtypes(torch, make):
    both(torch, make)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.ones(1).reshape(),
        lambda lib: lib.ones(1).view(),
        lambda lib: lib.ones(()).permute(),
        lambda lib: lib.ones(1).expand(),
        lambda lib: lib.ones(1).repeat(),
        lambda lib: lib.ones(1).flip(),
    ],
)
def test_shape_methods_called_without_their_sizes_raise_type_error(torch, make):
    raises_alike(torch, make, TypeError, "missing 1 required positional arguments")


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.ones(1).reshape(()),  # an explicit empty shape is a 0-d tensor
        lambda lib: lib.ones(1).view([]),
        lambda lib: lib.ones(()).permute(()),
        lambda lib: lib.arange(6).reshape(2, 3).permute([1, 0]),
    ],
)
def test_shape_methods_take_an_explicit_empty_shape(torch, make):
    both(torch, make)


@pytest.mark.parametrize("step", [-1, 0])
def test_slicing_with_a_step_below_one_is_refused(torch, step):
    raises_alike(
        torch, lambda lib: lib.arange(3)[::step], ValueError, "step must be greater than zero"
    )
    raises_alike(
        torch, lambda lib: lib.arange(6).reshape(2, 3)[:, ::step], ValueError, "greater than zero"
    )


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_indices_must_be_long_int_byte_or_bool_tensors(torch, dtype):
    raises_alike(
        torch,
        lambda lib: lib.arange(3.0)[lib.tensor([0, 2], dtype=getattr(lib, dtype))],
        IndexError,
        "tensors used as indices must be long, int, byte or bool",
    )


def test_a_uint8_index_is_read_as_a_mask_with_pytorchs_warning(torch):
    for lib in (ag, torch):
        with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
            picked = lib.arange(3.0)[lib.tensor([1, 0, 1], dtype=lib.uint8)]
        assert picked.tolist() == [0.0, 2.0]
    both(torch, lambda lib: lib.arange(3.0)[lib.tensor([0, 2], dtype=lib.int32)])


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor])  # &, |, ^
@pytest.mark.parametrize(
    "a, b",
    [
        (INT8S, INT8S),  # bit by bit, int8 stays int8
        (INTS, INT8S),
        (BOOLS, INTS),  # a bool with an integer: the integer dtype
        (BOOLS, BOOLS),  # logical on bools
        (INT8S, lambda lib: 3),
        (lambda lib: True, BOOLS),  # the reversed operators
        (lambda lib: 6, INTS),
    ],
)
def test_and_or_xor_are_bitwise_with_promoted_dtypes(torch, op, a, b):
    both(torch, lambda lib: op(a(lib), b(lib)))


def test_invert_flips_the_bits_of_integers_and_negates_bools(torch):
    both(torch, lambda lib: ~INT8S(lib))
    both(torch, lambda lib: ~INTS(lib))
    both(torch, lambda lib: ~BOOLS(lib))
    both(torch, lambda lib: lib.bitwise_not(INTS(lib)))


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda lib: FLOATS(lib) & INTS(lib), NotImplementedError, "not implemented for 'Float'"),
        (lambda lib: BOOLS(lib) | FLOATS(lib), NotImplementedError, "not implemented for 'Float'"),
        (lambda lib: FLOATS(lib) ^ True, NotImplementedError, "not implemented for 'Float'"),
        (lambda lib: ~FLOATS(lib), TypeError, "only implemented on integer and Boolean"),
    ],
)
def test_bitwise_operators_refuse_floats(torch, make, error, words):
    raises_alike(torch, make, error, words)
