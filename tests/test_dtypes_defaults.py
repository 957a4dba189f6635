"""dtypes, Size, type promotion, finfo/iinfo and the default dtype and device, against PyTorch.

Every test that changes a default (dtype, device, threads) puts it back in `finally`, in both
libraries, so no other test sees the change.
"""

import numpy as np
import pytest

import autograd_lab as ag

pytestmark = pytest.mark.oracle

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
ALIASES = ["half", "float", "double", "short", "int", "long"]


# ---- dtypes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", DTYPES + ALIASES + ["bfloat16", "cfloat", "cdouble", "complex64"])
def test_dtype_attributes_match_pytorch(name, torch):
    ours, theirs = getattr(ag, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert ours.is_floating_point == theirs.is_floating_point
    assert ours.is_complex == theirs.is_complex
    assert ours.is_signed == theirs.is_signed
    assert ours.itemsize == theirs.itemsize


def test_aliases_are_the_same_objects():
    assert ag.short is ag.int16 and ag.half is ag.float16 and ag.long is ag.int64
    assert ag.cfloat is ag.complex64 and ag.cdouble is ag.complex128


@pytest.mark.parametrize("name", ["bfloat16", "cfloat", "complex128"])
def test_dtypes_numpy_cannot_store_are_refused_by_name(name):
    for make in (
        lambda d: ag.zeros(2, dtype=d),
        lambda d: ag.tensor([1.0], dtype=d),
        lambda d: ag.tensor([1.0]).to(d),
    ):
        with pytest.raises(
            TypeError, match=f"does not support torch.{name.replace('cfloat', 'complex64')}"
        ):
            make(getattr(ag, name))
    with pytest.raises(TypeError, match="floating-point"):
        ag.set_default_dtype(ag.cfloat)


@pytest.mark.parametrize(
    "method", ["char", "short", "byte", "half", "int", "long", "float", "double", "bool"]
)
def test_conversion_methods_match_pytorch(method, torch):
    values = np.array([-3.7, 0.0, 2.5, 300.0])
    ours = getattr(ag.tensor(values), method)()
    theirs = getattr(torch.tensor(values), method)()
    assert ours.dtype == getattr(ag, str(theirs.dtype).split(".")[-1])
    if method in ("char", "byte"):  # out-of-range conversions wrap: compare the in-range values
        values = values[:3] if method == "char" else values[1:3]
        ours = getattr(ag.tensor(values), method)()
        theirs = getattr(torch.tensor(values), method)()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.type() == theirs.type()


@pytest.mark.parametrize("name", DTYPES)
def test_to_and_tensor_description_per_dtype(name, torch):
    ours = ag.tensor([1, 0, 2]).to(getattr(ag, name))
    theirs = torch.tensor([1, 0, 2]).to(getattr(torch, name))
    assert repr(ours) == repr(theirs)
    assert ours.element_size() == theirs.element_size() and ours.itemsize == theirs.itemsize
    assert ours.nbytes == theirs.nbytes
    assert ours.is_floating_point() == theirs.is_floating_point()
    assert ours.is_signed() == theirs.is_signed()
    assert ours.is_complex() == theirs.is_complex() is False
    assert ag.is_floating_point(ours) == torch.is_floating_point(theirs)


# ---- promotion ------------------------------------------------------------------------------------
@pytest.mark.parametrize("first", DTYPES)
@pytest.mark.parametrize("second", DTYPES)
def test_promote_types_and_operators_match_pytorch(first, second, torch):
    ours = ag.promote_types(getattr(ag, first), getattr(ag, second))
    assert repr(ours) == repr(torch.promote_types(getattr(torch, first), getattr(torch, second)))
    if first != "bool" or second != "bool":  # bool + bool is not an addition in PyTorch
        a = ag.tensor([1, 0]).to(getattr(ag, first)) * ag.tensor([1, 1]).to(getattr(ag, second))
        assert a.dtype is ours
    assert ag.can_cast(getattr(ag, first), getattr(ag, second)) == torch.can_cast(
        getattr(torch, first), getattr(torch, second)
    )


def operand(lib, kind):
    """One operand of result_type: a tensor with dims, a 0-d tensor, or a Python number."""
    return {
        "int8 tensor": lambda: lib.tensor([1, 2], dtype=lib.int8),
        "uint8 tensor": lambda: lib.tensor([1, 2], dtype=lib.uint8),
        "int16 tensor": lambda: lib.tensor([1, 2], dtype=lib.int16),
        "bool tensor": lambda: lib.tensor([True, False]),
        "float16 tensor": lambda: lib.tensor([1.0], dtype=lib.float16),
        "float32 tensor": lambda: lib.tensor([1.0]),
        "int64 0-d": lambda: lib.tensor(5),
        "float64 0-d": lambda: lib.tensor(0.5, dtype=lib.float64),
        "bool 0-d": lambda: lib.tensor(True),
        "int": lambda: 3,
        "float": lambda: 2.5,
        "bool": lambda: True,
    }[kind]()


KINDS = ["int8 tensor", "uint8 tensor", "int16 tensor", "bool tensor", "float16 tensor"]
KINDS += ["float32 tensor", "int64 0-d", "float64 0-d", "bool 0-d", "int", "float", "bool"]


@pytest.mark.parametrize("first", KINDS[:9])
@pytest.mark.parametrize("second", KINDS)
def test_result_type_and_operators_match_pytorch(first, second, torch):
    expected = torch.result_type(operand(torch, first), operand(torch, second))
    assert repr(ag.result_type(operand(ag, first), operand(ag, second))) == repr(expected)
    theirs = operand(torch, first) * operand(torch, second)
    ours = operand(ag, first) * operand(ag, second)
    assert repr(ours.dtype) == repr(theirs.dtype)


def test_int_tensor_with_a_float_number_follows_the_default_dtype(torch):
    try:
        ag.set_default_dtype(ag.float64)
        torch.set_default_dtype(torch.float64)
        for make in (
            lambda lib: lib.tensor([1, 2]) * 2.5,
            lambda lib: lib.tensor([1, 2]) / 2,
            lambda lib: lib.tensor([1, 2], dtype=lib.int8).exp(),
            lambda lib: lib.result_type(lib.tensor([1]), 1.0),
        ):
            ours, theirs = make(ag), make(torch)
            assert repr(ours) == repr(theirs)
    finally:
        ag.set_default_dtype(ag.float32)
        torch.set_default_dtype(torch.float32)


# ---- finfo and iinfo ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_pytorch(name, torch):
    ours, theirs = ag.finfo(getattr(ag, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
        assert type(getattr(ours, field)) is type(getattr(theirs, field)), field
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_pytorch(name, torch):
    ours, theirs = ag.iinfo(getattr(ag, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (
        theirs.bits,
        theirs.max,
        theirs.min,
        theirs.dtype,
    )
    assert repr(ours) == repr(theirs)


def test_finfo_and_iinfo_refuse_the_other_kind(torch):
    for lib in (ag, torch):
        with pytest.raises(TypeError, match="floating point"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError):
            lib.iinfo(lib.float32)
    with pytest.raises(TypeError, match="integer"):
        ag.iinfo(ag.float32)
    assert repr(ag.finfo()) == repr(torch.finfo())  # no argument: the default dtype


# ---- Size and the describing functions ---------------------------------------------------------------
SIZE_CASES = {
    "repr": lambda lib: repr(lib.Size([2, 3])),
    "empty": lambda lib: repr(lib.Size()),
    "numel": lambda lib: lib.Size([2, 3, 4]).numel(),
    "numel of ()": lambda lib: lib.Size([]).numel(),
    "slice": lambda lib: repr(lib.zeros(2, 3, 4).shape[1:]),
    "item": lambda lib: type(lib.zeros(2, 3).shape[0]).__name__,
    "plus tuple": lambda lib: repr(lib.Size([2]) + (3, 4)),
    "tuple plus": lambda lib: repr((1,) + lib.Size([2])),
    "times": lambda lib: repr(lib.Size([2, 3]) * 2),
    "equals tuple": lambda lib: lib.Size([2, 3]) == (2, 3),
    "equals list": lambda lib: lib.Size([2, 3]) == [2, 3],
    "is a tuple": lambda lib: isinstance(lib.Size([2]), tuple),
    "from numpy ints": lambda lib: repr(lib.Size([np.int64(3), 4])),
    "from a tensor": lambda lib: repr(lib.Size(lib.tensor([2, 3]))),
    "hash like a tuple": lambda lib: hash(lib.Size([2, 3])) == hash((2, 3)),
    "size(dim)": lambda lib: (lib.zeros(2, 3).size(1), lib.zeros(2, 3).size(-2)),
    "dim and ndimension": lambda lib: (lib.zeros(2, 3).dim(), lib.zeros(2, 3).ndimension()),
    "numel function": lambda lib: (lib.numel(lib.zeros(2, 3)), lib.zeros(4).numel()),
    "is_tensor": lambda lib: (lib.is_tensor(lib.zeros(1)), lib.is_tensor(1.0), lib.is_tensor([1])),
    "is_tensor of a Parameter": lambda lib: lib.is_tensor(lib.nn.Parameter(lib.zeros(1))),
    "is_floating_point": lambda lib: (
        lib.is_floating_point(lib.zeros(1)),
        lib.is_floating_point(lib.tensor([1])),
    ),
    "is_complex": lambda lib: lib.is_complex(lib.zeros(1)),
}


@pytest.mark.parametrize("name", SIZE_CASES)
def test_size_and_description_match_pytorch(name, torch):
    assert SIZE_CASES[name](ag) == SIZE_CASES[name](torch)


ERROR_CASES = {
    "Size of floats": (TypeError, lambda lib: lib.Size([2.5])),
    "Size plus list": (TypeError, lambda lib: lib.Size([2]) + [3]),
    "size(dim) out of range": (IndexError, lambda lib: lib.zeros(2, 3).size(2)),
    "size(dim) negative out of range": (IndexError, lambda lib: lib.zeros(2, 3).size(-3)),
    "size(dim) of a 0-d tensor": (IndexError, lambda lib: lib.tensor(1.0).size(0)),
    "numel of a list": (TypeError, lambda lib: lib.numel([1, 2])),
    "is_floating_point of a number": (TypeError, lambda lib: lib.is_floating_point(1.0)),
    "set_default_dtype(int64)": (TypeError, lambda lib: lib.set_default_dtype(lib.int64)),
    "set_num_threads(0)": (RuntimeError, lambda lib: lib.set_num_threads(0)),
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_errors_are_pytorchs_classes(name, torch):
    error, make = ERROR_CASES[name]
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error) as ours:
        make(ag)
    assert len(str(ours.value)) > 20  # says what was wrong


def test_size_errors_say_the_range():
    with pytest.raises(IndexError, match=r"\[-2, 1\], but got 2"):
        ag.zeros(2, 3).size(2)


# ---- the default dtype and device ---------------------------------------------------------------
DEFAULT_DTYPE_MAKERS = {
    "tensor of floats": lambda lib: lib.tensor([1.5, 2.0]),
    "tensor of ints": lambda lib: lib.tensor([1, 2]),
    "tensor of a float": lambda lib: lib.tensor(0.1),
    "Tensor()": lambda lib: lib.Tensor([1, 2]),
    "zeros": lambda lib: lib.zeros(2),
    "ones": lambda lib: lib.ones(2, 2),
    "empty": lambda lib: lib.empty(0),
    "full float": lambda lib: lib.full((2,), 0.5),
    "full int": lambda lib: lib.full((2,), 3),
    "eye": lambda lib: lib.eye(2),
    "arange float": lambda lib: lib.arange(0.0, 1.0, 0.25),
    "arange int": lambda lib: lib.arange(3),
    "linspace": lambda lib: lib.linspace(-3.14159, 3.14159, 9),
    "logspace": lambda lib: lib.logspace(0, 2, 5),
    "rand": lambda lib: (lib.manual_seed(3), lib.rand(5))[1],
    "randn": lambda lib: (lib.manual_seed(3), lib.randn(2, 3))[1],
    "zeros_like of an int": lambda lib: lib.zeros_like(lib.tensor([1])),
    "mean": lambda lib: lib.tensor([1.0, 2.0]).mean(),
    "Linear weight dtype": lambda lib: lib.nn.Linear(3, 2).weight.dtype,
    "float32 tensor prints its dtype": lambda lib: lib.tensor([1.5], dtype=lib.float32),
    "empty float32 prints its dtype": lambda lib: lib.zeros(0, dtype=lib.float32),
}


@pytest.mark.parametrize("default", ["float64", "float32", "float16"])
@pytest.mark.parametrize("name", DEFAULT_DTYPE_MAKERS)
def test_default_dtype_reaches_every_creation_function(name, default, torch):
    make = DEFAULT_DTYPE_MAKERS[name]
    try:
        ag.set_default_dtype(getattr(ag, default))
        torch.set_default_dtype(getattr(torch, default))
        assert repr(ag.get_default_dtype()) == repr(torch.get_default_dtype())
        assert repr(make(ag)) == repr(make(torch))  # values, dtype and the printed dtype suffix
    finally:
        ag.set_default_dtype(ag.float32)
        torch.set_default_dtype(torch.float32)
    assert ag.get_default_dtype() is ag.float32


def test_default_device_is_the_cpu_and_can_be_set(torch):
    assert repr(ag.get_default_device()) == repr(torch.get_default_device())
    try:
        ag.set_default_device("cpu")
        torch.set_default_device("cpu")
        assert repr(ag.get_default_device()) == repr(torch.get_default_device())
        assert ag.zeros(2).device == "cpu"
    finally:
        ag.set_default_device(None)
        torch.set_default_device(None)
    assert repr(ag.get_default_device()) == repr(torch.get_default_device())


def test_default_device_cuda_routes_creation_to_the_gpu():
    """In numba's simulator (tests) or on a real GPU: new tensors are made on cuda:0."""
    try:
        ag.set_default_device("cuda")
        assert ag.get_default_device() == ag.device("cuda", 0)
        assert ag.zeros(2).device == ag.device("cuda", 0)
        assert ag.tensor([1.0, 2.0]).device.type == "cuda"
        assert ag.zeros(2, device="cpu").device == "cpu"  # an explicit device still wins
    finally:
        ag.set_default_device(None)
    assert ag.zeros(2).device == "cpu"


def test_num_threads_is_recorded_as_in_pytorch(torch):
    saved = ag.get_num_threads()
    try:
        ag.set_num_threads(1)
        assert ag.get_num_threads() == 1
    finally:
        ag.set_num_threads(saved)
    assert ag.get_num_threads() == saved >= 1


WRAPPING = {
    "int8 + 1000": lambda lib: lib.tensor([1, 2], dtype=lib.int8) + 1000,
    "1000 + int8": lambda lib: 1000 + lib.tensor([1, 2], dtype=lib.int8),
    "int8 * 300": lambda lib: lib.tensor([1, 2], dtype=lib.int8) * 300,
    "uint8 * -1": lambda lib: lib.tensor([1, 2], dtype=lib.uint8) * -1,
    "uint8 - 300": lambda lib: lib.tensor([1, 2], dtype=lib.uint8) - 300,
    "int16 * 70000": lambda lib: lib.tensor([1, 2], dtype=lib.int16) * 70000,
    "int8 + 5 stays int8": lambda lib: lib.tensor([100, -100], dtype=lib.int8) + 5,
}


@pytest.mark.parametrize("name", WRAPPING)
def test_python_ints_wrap_into_small_integer_dtypes_as_pytorch(name, torch):
    """numpy 2 refuses int8_array + 1000; PyTorch converts 1000 to int8 (-24) and adds."""
    assert repr(WRAPPING[name](ag)) == repr(WRAPPING[name](torch))


BACKEND_QUESTIONS = {
    "mps.is_available": lambda lib: lib.backends.mps.is_available(),
    "mps.is_built": lambda lib: lib.backends.mps.is_built(),
    "cudnn.is_available": lambda lib: lib.backends.cudnn.is_available(),
    "cudnn switches": lambda lib: (lib.backends.cudnn.enabled, lib.backends.cudnn.benchmark),
    "cudnn.deterministic": lambda lib: lib.backends.cudnn.deterministic,
    "cuda.matmul.allow_tf32": lambda lib: lib.backends.cuda.matmul.allow_tf32,
}


@pytest.mark.parametrize("name", BACKEND_QUESTIONS)
def test_backends_answer_as_a_cpu_pytorch(name, torch):
    assert BACKEND_QUESTIONS[name](ag) == BACKEND_QUESTIONS[name](torch)


def test_the_device_choosing_line_of_a_script_picks_the_cpu_without_a_gpu(torch):
    def choose(lib):
        if lib.cuda.is_available():
            return "cuda"
        return "mps" if lib.backends.mps.is_available() else "cpu"

    assert choose(torch) == "cpu"  # the oracle is PyTorch's CPU build
    assert choose(ag) in ("cpu", "cuda")  # "cuda" where numba finds a GPU (or its simulator)


@pytest.mark.parametrize("name", DTYPES + ["bfloat16", "complex64"])
def test_a_pickled_dtype_comes_back_as_the_same_object(name):
    import pickle

    assert pickle.loads(pickle.dumps(getattr(ag, name))) is getattr(ag, name)


# Not np.bool_: PyTorch 2.13 counts it as a float (result_type(int8 tensor, np.bool_(True)) is
# float32); we count it as the bool it holds, like Python's True.
@pytest.mark.parametrize("number", [np.float64(2.5), np.int64(2), np.float32(0.5)])
@pytest.mark.parametrize("tensor", ["int8 tensor", "float16 tensor", "bool tensor", "int64 0-d"])
def test_result_type_takes_numpy_numbers_as_python_numbers(tensor, number, torch):
    expected = torch.result_type(operand(torch, tensor), number)
    assert repr(ag.result_type(operand(ag, tensor), number)) == repr(expected)


@pytest.mark.filterwarnings("ignore:torch.set_default_tensor_type")
def test_set_default_tensor_type_sets_the_default_dtype_as_pytorch(torch):
    try:
        with pytest.warns(UserWarning, match="deprecated"):  # PyTorch warns once per process
            ag.set_default_tensor_type("torch.DoubleTensor")
        torch.set_default_tensor_type("torch.DoubleTensor")
        assert repr(ag.get_default_dtype()) == repr(torch.get_default_dtype()) == "torch.float64"
        assert repr(ag.tensor([0.1])) == repr(torch.tensor([0.1]))
        for lib in (ag, torch):
            with pytest.raises(TypeError, match="floating-point"):
                lib.set_default_tensor_type("torch.LongTensor")
    finally:
        ag.set_default_dtype(ag.float32)
        torch.set_default_dtype(torch.float32)
        ag.set_default_device(None)
    with pytest.raises(TypeError, match="set_default_dtype"):
        ag.set_default_tensor_type(float)  # a class: we have only the names
