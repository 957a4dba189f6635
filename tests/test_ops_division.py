"""Division that rounds (issue 13): `//`, `%`, floor_divide, remainder, fmod, div(rounding_mode=).

The op table (tests/test_op_table.py) checks remainder, fmod and div(rounding_mode=) on random
float inputs; this file checks what random inputs never reach, each call written once for both
libraries (`lib` is autograd_lab or torch) and compared with PyTorch: integer, bool and mixed
dtypes, Python numbers on either side, negative operands (the two sign rules), zero divisors,
inf and nan, in-place forms, both inputs' gradients, and the nodes PyTorch has no derivative for.
"""

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import gradcheck


def dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def assert_same(ours, theirs):
    """Same shape, dtype and values: exactly for integers, to float32's precision for floats
    (nan where PyTorch has nan, inf with its sign)."""
    assert tuple(ours.shape) == tuple(theirs.shape), "shape"
    assert dtype_name(ours) == dtype_name(theirs), "dtype"
    if theirs.dtype.is_floating_point:
        np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))


# ---- values and dtypes ---------------------------------------------------------------------------

NUMBERS = [7, -7, 6, -6, 0, 13]  # both signs, an exact multiple, zero


def ints(lib, dtype="int64"):
    return lib.tensor(NUMBERS, dtype=getattr(lib, dtype))


def floats(lib, dtype="float32"):
    return lib.tensor([7.5, -7.5, 6.0, -6.0, 0.0, 0.25], dtype=getattr(lib, dtype))


def divisors(lib, dtype="int64"):
    return lib.tensor([2, 2, -4, -4, 3, -5], dtype=getattr(lib, dtype))


def in_place(operation):
    """x op= y as a call: a lambda cannot hold an augmented assignment."""

    def run(lib):
        x = floats(lib, "float64")
        if operation == "//=":
            x //= 2
        elif operation == "%=":
            x %= -2.5
        else:
            x = ints(lib)
            x %= divisors(lib)
        return x

    return run


def with_out(lib):
    out = lib.empty(6)
    returned = lib.remainder(floats(lib), 2.5, out=out)
    assert returned is out
    return out


VALUE_CALLS = {
    # floor division: rounded down, so -7 // 2 = -4; integers stay integers of their own width
    "int64 // int": lambda lib: ints(lib) // 2,
    "int64 // negative int": lambda lib: ints(lib) // -3,
    "int64 // int64 tensor": lambda lib: ints(lib) // divisors(lib),
    "int32 // int stays int32": lambda lib: ints(lib, "int32") // 2,
    "int8 // int8": lambda lib: ints(lib, "int8") // divisors(lib, "int8"),
    "int32 // int64 is int64": lambda lib: ints(lib, "int32") // divisors(lib),
    "int64 // float is float32": lambda lib: ints(lib) // 2.0,
    "int64 // float32 tensor": lambda lib: ints(lib) // divisors(lib, "float32"),
    "float32 // int": lambda lib: floats(lib) // 2,
    "float64 // negative float": lambda lib: floats(lib, "float64") // -0.75,
    "float64 // float32 is float64": lambda lib: floats(lib, "float64") // divisors(lib, "float32"),
    "int // int64 tensor": lambda lib: 20 // divisors(lib),
    "float // int64 tensor": lambda lib: 7.5 // divisors(lib),
    "bool // int": lambda lib: lib.tensor([True, False]) // 2,
    "int64 // bool tensor": lambda lib: ints(lib)[:2] // lib.tensor([True, True]),
    "floor_divide function": lambda lib: lib.floor_divide(floats(lib), divisors(lib)),
    "floor_divide number first": lambda lib: lib.floor_divide(5, divisors(lib)),
    "floor_divide method": lambda lib: floats(lib).floor_divide(-2),
    "floor_divide broadcast": lambda lib: lib.tensor([[7], [-7]]) // lib.tensor([2, -3, 4]),
    "float // 0 is inf": lambda lib: floats(lib) // 0,
    "float // 0.0 tensor": lambda lib: floats(lib) // lib.zeros(6),
    "inf and nan // 2": lambda lib: lib.tensor([float("inf"), -float("inf"), float("nan")]) // 2,
    "float // inf": lambda lib: lib.tensor([3.0, -3.0]) // float("inf"),
    # the remainder: the divisor's sign, as Python's %
    "int64 % int": lambda lib: ints(lib) % 3,
    "int64 % negative int": lambda lib: ints(lib) % -3,
    "int64 % int64 tensor": lambda lib: ints(lib) % divisors(lib),
    "int32 % int stays int32": lambda lib: ints(lib, "int32") % 4,
    "int64 % float is float32": lambda lib: ints(lib) % 2.5,
    "float32 % int": lambda lib: floats(lib) % 2,
    "float64 % negative float": lambda lib: floats(lib, "float64") % -0.75,
    "int % int64 tensor": lambda lib: 7 % divisors(lib),
    "float % int64 tensor": lambda lib: 7.5 % divisors(lib),
    "bool % int": lambda lib: lib.tensor([True, False]) % 2,
    "remainder function": lambda lib: lib.remainder(floats(lib), divisors(lib)),
    "remainder keyword other": lambda lib: lib.remainder(floats(lib), other=-1.5),
    "remainder number first": lambda lib: lib.remainder(5, divisors(lib)),
    "remainder method": lambda lib: ints(lib).remainder(divisors(lib)),
    "remainder broadcast": lambda lib: lib.tensor([[7.0], [-7.0]]) % lib.tensor([2.0, -3.0, 4.0]),
    "remainder out=": with_out,
    "float % 0 is nan": lambda lib: floats(lib) % 0,
    "float % inf": lambda lib: lib.tensor([3.0, -3.0, 0.0]) % float("inf"),
    "inf % 2 is nan": lambda lib: lib.tensor([float("inf"), float("nan")]) % 2,
    # fmod: the dividend's sign, as C's fmod
    "fmod int64 int": lambda lib: lib.fmod(ints(lib), 3),
    "fmod int64 negative int": lambda lib: lib.fmod(ints(lib), -3),
    "fmod int64 tensors": lambda lib: lib.fmod(ints(lib), divisors(lib)),
    "fmod int32 stays int32": lambda lib: lib.fmod(ints(lib, "int32"), 4),
    "fmod int64 float is float32": lambda lib: lib.fmod(ints(lib), -2.5),
    "fmod float32": lambda lib: lib.fmod(floats(lib), divisors(lib)),
    "fmod float64 number": lambda lib: lib.fmod(floats(lib, "float64"), 0.75),
    "fmod method": lambda lib: floats(lib).fmod(-2),
    "fmod bool int": lambda lib: lib.fmod(lib.tensor([True, False]), 2),
    "fmod broadcast": lambda lib: lib.fmod(lib.tensor([[7.0], [-7.0]]), lib.tensor([2.0, -3.0])),
    "fmod by 0.0 is nan": lambda lib: lib.fmod(floats(lib), 0.0),
    "fmod by inf": lambda lib: lib.fmod(lib.tensor([3.0, -3.0]), float("inf")),
    # div with a rounding mode: floor (as //) or trunc (toward zero)
    "div floor int64": lambda lib: lib.div(ints(lib), divisors(lib), rounding_mode="floor"),
    "div trunc int64": lambda lib: lib.div(ints(lib), divisors(lib), rounding_mode="trunc"),
    "div trunc int64 number": lambda lib: ints(lib).div(-4, rounding_mode="trunc"),
    "div trunc int32 stays int32": lambda lib: ints(lib, "int32").div(4, rounding_mode="trunc"),
    "div floor int64 float is float32": lambda lib: ints(lib).div(2.0, rounding_mode="floor"),
    "div floor float32": lambda lib: floats(lib).div(divisors(lib), rounding_mode="floor"),
    "div trunc float64": lambda lib: lib.divide(floats(lib, "float64"), -4, rounding_mode="trunc"),
    "div trunc bool int": lambda lib: lib.tensor([True, False]).div(2, rounding_mode="trunc"),
    "div None keeps the true quotient": lambda lib: ints(lib).div(4, rounding_mode=None),
    "div floor number first": lambda lib: lib.div(20, divisors(lib), rounding_mode="floor"),
    "div trunc number first": lambda lib: lib.divide(-7.5, divisors(lib), rounding_mode="trunc"),
    "div floor by 0.0": lambda lib: floats(lib).div(0.0, rounding_mode="floor"),
    "div trunc by 0.0": lambda lib: floats(lib).div(0.0, rounding_mode="trunc"),
    # in place
    "floor_divide_": lambda lib: ints(lib).floor_divide_(-4),
    "remainder_": lambda lib: floats(lib).remainder_(divisors(lib)),
    "fmod_": lambda lib: ints(lib).fmod_(divisors(lib)),
    "div_ trunc": lambda lib: floats(lib).div_(-4, rounding_mode="trunc"),
    "div_ floor int64": lambda lib: ints(lib).div_(3, rounding_mode="floor"),
    "//=": in_place("//="),
    "%=": in_place("%="),
    "%= tensor": in_place("%= tensor"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", VALUE_CALLS)
def test_values_and_dtypes_as_in_pytorch(name, torch):
    assert_same(VALUE_CALLS[name](ag), VALUE_CALLS[name](torch))


@pytest.mark.oracle
def test_the_two_sign_rules():
    # a hand-written check of the headline numbers, independent of the oracle
    x = ag.tensor([7, -7, 7, -7])
    y = ag.tensor([2, 2, -2, -2])
    assert (x // y).tolist() == [3, -4, -4, 3]
    assert (x % y).tolist() == [1, 1, -1, -1]
    assert ag.fmod(x, y).tolist() == [1, -1, 1, -1]
    assert ag.div(x, y, rounding_mode="trunc").tolist() == [3, -3, -3, 3]


# ---- errors --------------------------------------------------------------------------------------

INTEGER_BY_ZERO = {
    "//": lambda lib: ints(lib) // 0,
    "// tensor with a zero": lambda lib: ints(lib) // lib.tensor([1, 0, 1, 1, 1, 1]),
    "%": lambda lib: ints(lib) % 0,
    "% tensor with a zero": lambda lib: ints(lib) % lib.tensor([1, 0, 1, 1, 1, 1]),
    "number % tensor": lambda lib: 5 % lib.tensor([1, 0]),
    "fmod": lambda lib: lib.fmod(ints(lib), 0),
    "div floor": lambda lib: lib.div(ints(lib), 0, rounding_mode="floor"),
    "div trunc tensor": lambda lib: ints(lib).div(
        lib.zeros(6, dtype=lib.int64), rounding_mode="trunc"
    ),
    "bool // False": lambda lib: lib.tensor([True]) // lib.tensor([0]),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", INTEGER_BY_ZERO)
def test_integer_division_by_zero_raises(name, lib):
    with pytest.raises(RuntimeError, match="ZeroDivisionError") as error:
        INTEGER_BY_ZERO[name](lib)
    if lib is ag:
        assert "Fix:" in str(error.value) and "nonzero" in str(error.value)


BOOL_BY_BOOL = {
    "//": lambda lib: lib.tensor([True, False]) // lib.tensor([True, True]),
    "%": lambda lib: lib.tensor([True, False]) % lib.tensor([True, True]),
    "% True": lambda lib: lib.tensor([True, False]) % True,
    "fmod": lambda lib: lib.fmod(lib.tensor([True, False]), True),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", BOOL_BY_BOOL)
def test_bool_by_bool_is_refused(name, lib):
    with pytest.raises(NotImplementedError, match="not implemented for .?Bool"):
        BOOL_BY_BOOL[name](lib)


@pytest.mark.oracle
def test_fmod_takes_a_tensor_first(lib):
    with pytest.raises(TypeError, match="fmod"):
        lib.fmod(5, lib.tensor([2, 3]))


@pytest.mark.oracle
def test_an_unknown_rounding_mode_is_refused(lib):
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        lib.tensor([7.0]).div(2, rounding_mode="round")


@pytest.mark.oracle
def test_true_divide_takes_no_rounding_mode(lib):
    with pytest.raises(TypeError, match="rounding_mode"):
        lib.true_divide(lib.tensor([7.0]), 2, rounding_mode="floor")
    assert lib.true_divide(lib.tensor([7]), 2).tolist() == [3.5]


@pytest.mark.oracle
def test_in_place_cannot_turn_integers_into_floats(lib):
    x = lib.tensor([7, -7])
    with pytest.raises(RuntimeError):
        x %= 2.5
    with pytest.raises(RuntimeError):
        x.floor_divide_(2.0)


# ---- gradients -----------------------------------------------------------------------------------

DIVIDENDS = [[7.5, -7.4, 0.3], [2.2, -0.9, 5.1]]
DIVISORS = [2.0, -1.5, 0.7]  # broadcast along the rows

GRADIENT_CALLS = {
    "x % y": lambda lib, x, y: x % y,
    "remainder(x, y)": lambda lib, x, y: lib.remainder(x, y),
    "fmod(x, y)": lambda lib, x, y: lib.fmod(x, y),
    "x.fmod(y)": lambda lib, x, y: x.fmod(y),
    "div floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "div trunc": lambda lib, x, y: x.div(y, rounding_mode="trunc"),
    "(x % y) * y": lambda lib, x, y: (x % y) * y,
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", GRADIENT_CALLS)
def test_gradients_for_both_inputs_as_in_pytorch(name, torch):
    x, t = (lib.tensor(DIVIDENDS, dtype=lib.float64, requires_grad=True) for lib in (ag, torch))
    y, u = (lib.tensor(DIVISORS, dtype=lib.float64, requires_grad=True) for lib in (ag, torch))
    out, expected = GRADIENT_CALLS[name](ag, x, y), GRADIENT_CALLS[name](torch, t, u)
    assert_same(out, expected)
    assert out.grad_fn.name() == type(expected.grad_fn).__name__
    upstream = np.random.default_rng(0).standard_normal(tuple(expected.shape))
    out.backward(ag.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(y.grad.numpy(), u.grad.numpy(), rtol=1e-12, atol=1e-14)


NUMBER_GRADIENT_CALLS = {
    "x % 2.5": lambda lib, x: x % 2.5,
    "x % -3": lambda lib, x: x % -3,
    "x.remainder_(2.5) on a copy": lambda lib, x: (x * 1).remainder_(2.5),
    "fmod(x, -2.5)": lambda lib, x: lib.fmod(x, -2.5),
    "x.fmod_(2) on a copy": lambda lib, x: (x * 1).fmod_(2),
    "div floor number": lambda lib, x: x.div(2, rounding_mode="floor"),
    "div_ trunc number on a copy": lambda lib, x: (x + 0).div_(-0.5, rounding_mode="trunc"),
    "div floor number first": lambda lib, x: lib.div(2, x, rounding_mode="floor"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", NUMBER_GRADIENT_CALLS)
def test_gradients_with_a_number_divisor_as_in_pytorch(name, torch):
    x, t = (lib.tensor(DIVIDENDS, dtype=lib.float64, requires_grad=True) for lib in (ag, torch))
    out, expected = NUMBER_GRADIENT_CALLS[name](ag, x), NUMBER_GRADIENT_CALLS[name](torch, t)
    assert_same(out, expected)
    assert out.grad_fn.name() == type(expected.grad_fn).__name__
    upstream = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(ag.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("function", [ag.remainder, ag.fmod])
def test_remainder_and_fmod_gradcheck_for_both_inputs(function):
    # values chosen away from the jumps (a / b whole), where finite differences would straddle one
    x = ag.tensor(DIVIDENDS, dtype=ag.float64, requires_grad=True)
    y = ag.tensor(DIVISORS, dtype=ag.float64, requires_grad=True)
    assert gradcheck(function, (x, y))
    assert gradcheck(lambda a: function(a, -1.3), (x,))


@pytest.mark.oracle
def test_saved_tensors_and_rounding_mode_under_pytorchs_names(torch):
    for lib in (ag, torch):
        x = lib.tensor([7.5, -7.5], requires_grad=True)
        y = lib.tensor([2.0, 2.0], requires_grad=True)
        node = (x % y).grad_fn
        assert node._saved_self.tolist() == [7.5, -7.5] and node._saved_other.tolist() == [2, 2]
        node = lib.fmod(x, y).grad_fn
        assert node._saved_other.tolist() == [2.0, 2.0]
        assert lib.div(x, y, rounding_mode="trunc").grad_fn._saved_rounding_mode == "trunc"
        assert x.div(2, rounding_mode="floor").grad_fn._saved_rounding_mode == "floor"


# ---- the ops PyTorch records without a derivative ----------------------------------------------

NOT_DIFFERENTIABLE = {
    "x // 2": (lambda lib, x: x // 2, "floor_divide"),
    "x // y": (lambda lib, x: x // lib.tensor([2.0, -3.0]), "floor_divide"),
    "2 // x": (lambda lib, x: 2 // x, "floor_divide"),
    "floor_divide(x, 2)": (lambda lib, x: lib.floor_divide(x, 2), "floor_divide"),
    "3 % x": (lambda lib, x: 3 % x, "remainder"),
    "remainder(3, x)": (lambda lib, x: lib.remainder(3, x), "remainder"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", NOT_DIFFERENTIABLE)
def test_a_node_without_derivative_raises_in_backward(name, lib):
    call, aten_name = NOT_DIFFERENTIABLE[name]
    x = lib.tensor([7.5, -7.5], requires_grad=True)
    out = call(lib, x)
    assert out.requires_grad
    assert type(out.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match=f"derivative for aten::{aten_name} is not implemented"):
        out.sum().backward()


def test_the_missing_derivative_error_says_what_to_use_instead():
    x = ag.tensor([7.5, -7.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="rounding_mode='floor'"):
        (x // 2).sum().backward()
    with pytest.raises(RuntimeError, match="floor"):
        (3 % x).sum().backward()


# ---- the CUDA backend (numba's simulator without a GPU) ------------------------------------------


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_rounding_division_on_cuda_equals_the_cpu(dtype):
    inf, nan = float("inf"), float("nan")
    if dtype.startswith("float"):
        a = [7.5, -7.5, 6.0, -6.0, 0.0, 3.0, -3.0, inf, nan, 5.0, 2.5, 0.0]
        b = [2.0, 2.0, -4.0, -4.0, 3.0, inf, inf, 2.0, 2.0, 0.0, -0.0, 0.0]
    else:
        a = [7, -7, 6, -6, 0, 13, -13]
        b = [2, 2, -4, -4, 3, -5, 5]
    x = ag.tensor(a, dtype=getattr(ag, dtype))
    y = ag.tensor(b, dtype=getattr(ag, dtype))
    calls = {
        "//": lambda p, q: p // q,
        "%": lambda p, q: p % q,
        "fmod": lambda p, q: ag.fmod(p, q),
        "div trunc": lambda p, q: p.div(q, rounding_mode="trunc"),
        "% number": lambda p, q: p % 3,
    }
    for name, call in calls.items():
        on_cuda, on_cpu = call(x.to("cuda"), y.to("cuda")), call(x, y)
        assert on_cuda.device.type == "cuda" and on_cuda.dtype == on_cpu.dtype, name
        np.testing.assert_array_equal(on_cuda.cpu().numpy(), on_cpu.numpy(), err_msg=name)


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
def test_integer_division_by_zero_is_refused_on_cuda():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        ag.tensor([7, -7]).to("cuda") // ag.tensor([1, 0]).to("cuda")
