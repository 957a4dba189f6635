"""Random sampling at the edges, as issue 14's differential fuzzing found it: the nodes PyTorch
records for random fills (with a zero gradient), its error classes for dtypes a distribution has no
kernel for, and the memory order the draws fill a tensor in. Each test compares with PyTorch 2.13;
the numbers are PyTorch's to the bit for the same seed (see autograd_lab/random.py)."""

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag

FILLS = {
    "uniform_": lambda x, lib: x.uniform_(),
    "normal_": lambda x, lib: x.normal_(1.0, 2.0),
    "exponential_": lambda x, lib: x.exponential_(),
    "random_()": lambda x, lib: x.random_(),
    "random_(to)": lambda x, lib: x.random_(5),
    "random_(from, to)": lambda x, lib: x.random_(0, 5),
    "bernoulli_(number)": lambda x, lib: x.bernoulli_(0.5),
    "bernoulli_(tensor)": lambda x, lib: x.bernoulli_(lib.full((2, 3), 0.5)),
}


@pytest.mark.parametrize("fill", FILLS)
def test_an_in_place_random_fill_records_pytorchs_node_with_a_zero_gradient(torch, fill):
    def run(lib):
        lib.manual_seed(0)
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        y = FILLS[fill](x * 2, lib)
        y.sum().backward()
        return y, x.grad

    (ours, our_grad), (theirs, their_grad) = run(ag), run(torch)
    assert ours.grad_fn.name() == theirs.grad_fn.name()  # UniformBackward0, RandomBackward1, ...
    np.testing.assert_array_equal(values(our_grad), values(their_grad))  # zeros, not None
    if not fill.startswith("bernoulli"):  # (PyTorch's Intel builds draw bernoulli_ through MKL)
        np.testing.assert_array_equal(values(ours), values(theirs))


def test_bernoulli_of_probabilities_that_require_grad_records_a_zero_gradient(torch):
    def run(lib):
        x = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True)
        sample = lib.bernoulli(x.sigmoid())
        sample.sum().backward()
        return sample, x.grad

    (ours, our_grad), (theirs, their_grad) = run(ag), run(torch)
    assert ours.requires_grad and theirs.requires_grad
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "BernoulliBackward0"
    assert ours.dtype == ag.float64
    np.testing.assert_array_equal(values(our_grad), values(their_grad))
    for lib in (ag, torch):  # a kernel for floating-point probabilities only
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            lib.bernoulli(lib.tensor([0, 1]))


def test_a_refused_random_fill_draws_nothing(torch):
    def run(lib):
        lib.manual_seed(0)
        leaf = lib.ones(1, 1, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            leaf[0:1, None].bernoulli_(0.5)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            leaf.uniform_()
        return lib.rand(3)  # the stream goes on where it was

    np.testing.assert_array_equal(values(run(ag)), values(run(torch)))


CONTINUOUS = {
    "uniform_": lambda lib, dtype, n: lib.zeros(n, dtype=dtype).uniform_(),
    "normal_": lambda lib, dtype, n: lib.zeros(n, dtype=dtype).normal_(1.0, 2.0),
    "rand": lambda lib, dtype, n: lib.rand(n, dtype=dtype),
    "randn": lambda lib, dtype, n: lib.randn(n, 2, dtype=dtype),
    "rand_like": lambda lib, dtype, n: lib.rand_like(lib.zeros(n), dtype=dtype),
    "randn_like": lambda lib, dtype, n: lib.randn_like(lib.zeros(n), dtype=dtype),
    "exponential_": lambda lib, dtype, n: lib.zeros(n, dtype=dtype).exponential_(),
}


@pytest.mark.parametrize("make", CONTINUOUS)
@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("n", [3, 0])
def test_continuous_samples_of_an_integer_dtype_fail_as_in_pytorch(torch, make, dtype, n):
    # uniform's kernel checks its bounds even for no elements; normal's and exponential's kernels
    # are not run for no elements, so an empty integer tensor passes
    def run(lib):
        try:
            return CONTINUOUS[make](lib, getattr(lib, dtype), n)
        except (NotImplementedError, RuntimeError) as error:
            return type(error)

    ours, theirs = run(ag), run(torch)
    if isinstance(theirs, type):
        assert ours is theirs
        if theirs is NotImplementedError:
            with pytest.raises(NotImplementedError, match="not implemented for '(Long|Bool)'"):
                CONTINUOUS[make](ag, getattr(ag, dtype), n)
    else:
        assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)


def test_random_integers_must_fit_a_bool_tensor(torch):
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="out of bounds for bool"):
            lib.randint_like(lib.zeros(2), 5, dtype=lib.bool)
        with pytest.raises(RuntimeError, match="out of bounds for bool"):
            lib.zeros(2, dtype=lib.bool).random_(0, 3)

    def run(lib):
        lib.manual_seed(0)
        return lib.randint_like(lib.zeros(4), 2, dtype=lib.bool)

    np.testing.assert_array_equal(values(run(ag)), values(run(torch)))


@pytest.mark.parametrize("like", ["rand_like", "randn_like", "randint_like"])
def test_a_random_like_tensor_is_filled_in_its_inputs_memory_order(torch, like):
    def run(lib):
        lib.manual_seed(0)
        x = lib.zeros(3, 4, dtype=lib.int64).t()  # column after column in memory
        extra = (5,) if like == "randint_like" else ()
        out = getattr(lib, like)(x, *extra, dtype=lib.float64)
        return out

    ours, theirs = run(ag), run(torch)
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(values(ours), values(theirs))


def test_multinomial_draws_in_the_memory_order_of_its_weights(torch):
    def run(lib):
        lib.manual_seed(0)
        weights = lib.tensor([[1.0, 2.0], [1.0, 3.0], [2.0, 3.0]]).mT  # transposed in memory
        return lib.multinomial(weights, 2)

    np.testing.assert_array_equal(values(run(ag)), values(run(torch)))


@pytest.mark.parametrize("shape", [(0,), (2, 0)])
def test_multinomial_of_no_categories_fails_as_in_pytorch(torch, shape):
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
            lib.multinomial(lib.ones(shape), 2)
        with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
            lib.multinomial(lib.ones(shape), 2, replacement=True)
    assert tuple(ag.multinomial(ag.ones(0, 3), 2).shape) == (0, 2)


@pytest.mark.parametrize("which", ["mean", "std", "both"])
def test_normal_with_tensor_parameters_has_a_zero_gradient(torch, which):
    def run(lib):
        lib.manual_seed(0)
        mean = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        std = lib.tensor([0.5, 2.0], requires_grad=True)
        args = {"mean": (mean, 2.0), "std": (0.0, std), "both": (mean, std)}[which]
        sample = lib.normal(*args)
        sample.sum().backward()
        return sample, [t.grad for t in args if isinstance(t, lib.Tensor)]

    (ours, our_grads), (theirs, their_grads) = run(ag), run(torch)
    assert ours.grad_fn.name() == theirs.grad_fn.name()  # NormalBackward1, 2 or 3
    np.testing.assert_array_equal(values(ours.detach()), values(theirs.detach()))
    for our_grad, their_grad in zip(our_grads, their_grads, strict=True):
        np.testing.assert_array_equal(values(our_grad), values(their_grad))  # zeros


def test_a_fill_through_a_view_of_a_leaf_made_by_a_view_is_refused(torch):
    # x0 is a leaf, and itself a view of a tensor that does not require grad: a view of x0 that
    # requires grad has that tensor (a leaf too) as its base, which PyTorch's check looks at
    for lib in (ag, torch):
        x0 = lib.tensor([1.0]).reshape(1, 1).requires_grad_()
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x0[0:1, None].bernoulli_(0.5)


@pytest.mark.parametrize("convert", [float, int])
@pytest.mark.parametrize("size", [0, 3])
def test_float_and_int_of_a_tensor_of_several_elements_raise_value_error(torch, convert, size):
    # (the long tail of the fuzzer's run from seed 40000: Python's conversions, not item())
    for lib in (ag, torch):
        with pytest.raises(ValueError, match="only one element tensors can be converted"):
            convert(lib.ones(size))
    assert convert(ag.tensor([2.5])) == convert(torch.tensor([2.5]))
