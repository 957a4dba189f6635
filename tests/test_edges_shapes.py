"""Issue 14's edges of shapes: errors PyTorch raises with another class than numpy would, empty
and 0-d tensors, the node names learners read, and when tensor hooks run for autograd.grad.
Each test compares with PyTorch (values, dtypes, error classes and key words)."""

import warnings

import numpy as np
import pytest
from conftest import both, raises_alike, values

import autograd_lab as ag

# ---- errors of another class ------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, a, b: lib.where(b > 0, a, a),
        lambda lib, a, b: lib.lerp(a, b, 0.5),
        lambda lib, a, b: lib.lerp(a, a, b),
        lambda lib, a, b: lib.addcmul(a, b, a),
        lambda lib, a, b: lib.addcdiv(a, b, a),
        lambda lib, a, b: a.clone().copy_(b),
        lambda lib, a, b: a.masked_fill(b > 0, 1.0),
        lambda lib, a, b: a.clone().masked_fill_(b > 0, 1.0),
        lambda lib, a, b: lib.isclose(a, b),
        lambda lib, a, b: lib.allclose(a, b),
        lambda lib, a, b: a.clone().copy_(b.reshape(3, 1)[:2].expand(2, 2)),
    ],
    ids=["where", "lerp", "lerp_weight", "addcmul", "addcdiv", "copy_", "masked_fill",
         "masked_fill_", "isclose", "allclose", "copy_more_dims"],
)  # fmt: skip
def test_shapes_that_do_not_broadcast_raise_runtime_error(torch, call):
    raises_alike(
        torch, lambda lib: call(lib, lib.ones(2), lib.ones(3)), RuntimeError, "broadcast|shape"
    )


@pytest.mark.parametrize("index", [slice(None), 0, [0], "mask", "tensor"])
@pytest.mark.parametrize("value_shape", [(3,), (2, 2)])
def test_assigning_a_value_that_does_not_fit_the_indexed_places_raises_runtime_error(
    torch, index, value_shape
):
    def assign(lib):
        x = lib.ones(2)
        if index == "mask":
            x[x > 0] = lib.ones(value_shape)
        elif index == "tensor":
            x[lib.tensor([0, 1])] = lib.ones(value_shape)
        else:
            x[index] = lib.ones(value_shape)

    raises_alike(torch, assign, RuntimeError, "cannot be broadcast to indexing result of shape")


def test_integer_powers_with_negative_tensor_exponents_round_toward_zero(torch):
    both(torch, lambda lib: 2 ** lib.tensor([-1, 2]))
    both(torch, lambda lib: 0 ** lib.tensor([-1, 2]))
    both(torch, lambda lib: (-1) ** lib.tensor([-1, -2, -3]))
    both(
        torch, lambda lib: lib.tensor([0, 1, -1, 2, -2, 3]) ** lib.tensor([-1, -1, -1, -1, -2, -3])
    )
    both(torch, lambda lib: lib.tensor([2, 1]) ** lib.tensor(-1))
    both(torch, lambda lib: lib.tensor([0, 1, -1], dtype=lib.int8) ** lib.tensor([-1]))
    both(torch, lambda lib: lib.tensor([True]) ** lib.tensor([-1]))


def test_an_integer_tensor_to_a_negative_python_int_power_raises(torch):
    for base in (lambda lib: lib.tensor([2, 1]), lambda lib: lib.tensor([True])):
        words = "Integers to negative integer powers are not allowed"
        raises_alike(torch, lambda lib: base(lib) ** -1, RuntimeError, words)
        raises_alike(torch, lambda lib: base(lib).pow(-2), RuntimeError, words)
    both(torch, lambda lib: lib.tensor([2]) ** -1.0)  # a float exponent is fine


@pytest.mark.parametrize("reduce", ["max", "min", "argmax", "argmin", "amax", "amin", "median"])
@pytest.mark.parametrize("shape, dim", [((0, 3), 0), ((3, 0), 1), ((3, 0), -1), ((0,), 0)])
def test_picking_reductions_over_an_empty_dim_raise_index_error(torch, reduce, shape, dim):
    words = f"{reduce}\\(\\): Expected reduction dim {dim % len(shape)} to have non-zero size"
    raises_alike(torch, lambda lib: getattr(lib.zeros(shape), reduce)(dim), IndexError, words)
    raises_alike(torch, lambda lib: lib.zeros(shape).kthvalue(1, dim), IndexError, "kthvalue")


@pytest.mark.parametrize("reduce", ["argmax", "argmin"])
def test_argmax_of_an_empty_tensor_without_a_dim_raises_index_error(torch, reduce):
    words = "Expected reduction dim to be specified for input.numel\\(\\) == 0"
    raises_alike(torch, lambda lib: getattr(lib.zeros(0, 3), reduce)(), IndexError, words)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "logsumexp", "std"])
def test_reductions_with_an_identity_or_nan_accept_an_empty_dim(torch, reduce):
    both(torch, lambda lib: getattr(lib.zeros(0, 3), reduce)(0))
    both(torch, lambda lib: getattr(lib.zeros(3, 0), reduce)(0))


def test_the_mean_of_nothing_is_nan_without_a_warning(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch warns nothing here; numpy's mean would
        both(torch, lambda lib: lib.zeros(0, 3).mean(0))
        both(torch, lambda lib: lib.zeros(0, 3, dtype=lib.float64).mean())
        both(torch, lambda lib: lib.zeros(2, 0).mean(-1, keepdim=True))


@pytest.mark.parametrize("reduce", ["max", "argmax", "cumsum"])
def test_a_0d_tensor_accepts_only_dims_0_and_minus_1(torch, reduce):
    both(torch, lambda lib: values_of(getattr(lib.tensor(5.0), reduce)(-1)))
    raises_alike(torch, lambda lib: getattr(lib.tensor(5.0), reduce)(1), IndexError, "out of range")


def values_of(result):
    """The values of a (values, indices) result, or the result itself."""
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda lib, x: x.split(1), "split expects at least a 1-dimensional tensor"),
        (lambda lib, x: x.split([1]), "split expects at least a 1-dimensional tensor"),
        (lambda lib, x: x.chunk(1), "chunk expects at least a 1-dimensional tensor"),
        (lambda lib, x: x.narrow(0, 0, 1), "narrow\\(\\) cannot be applied to a 0-dim tensor"),
        (lambda lib, x: lib.cat([x, x]), "zero-dimensional tensor \\(at position 0\\)"),
        (lambda lib, x: lib.cat([lib.ones(1), x]), "zero-dimensional tensor \\(at position 1\\)"),
        (lambda lib, x: x.unflatten(0, (1,)), "unflatten"),
    ],
)
def test_cutting_or_joining_a_0d_tensor_raises_runtime_error(torch, call, words):
    raises_alike(torch, lambda lib: call(lib, lib.tensor(1.0)), RuntimeError, words)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda x: x.split(-1), "split_size"),
        (lambda x: x.split(0), "split_size"),
        (lambda x: x.chunk(0), "chunks"),
        (lambda x: x.chunk(-1), "chunks"),
        (lambda x: x.reshape(2, 3).flatten(1, 0), "start_dim cannot come after end_dim"),
        (lambda x: x.expand(-1, 3), "leading, non-existing dimension 0"),
        (lambda x: x.unflatten(0, (2, 2)), "don't multiply up to the size of dim 0"),
        (lambda x: x.unflatten(0, (4, -1)), "don't multiply up to the size of dim 0"),
        (lambda x: x.unflatten(0, ()), "unflatten"),
    ],
)
def test_sizes_that_do_not_fit_raise_runtime_error(torch, call, words):
    raises_alike(
        torch,
        lambda lib: call(lib.ones(6)[:3] if "expand" in words else lib.ones(6)),
        RuntimeError,
        words,
    )


@pytest.mark.parametrize("method, argument", [("reshape", "shape"), ("view", "shape"),
    ("permute", "dims"), ("expand", "size"), ("repeat", "repeats"), ("flip", "dims")])  # fmt: skip
def test_shape_methods_called_without_their_argument_raise_type_error(torch, method, argument):
    raises_alike(torch, lambda lib: getattr(lib.ones(1), method)(), TypeError, f'missing 1 required positional arguments: "{argument}"')  # fmt: skip


@pytest.mark.parametrize("index", [slice(None, None, -1), slice(None, None, -2),
                                   (0, slice(2, 0, -1))])  # fmt: skip
def test_a_negative_slice_step_raises_value_error_pointing_to_flip(torch, index):
    raises_alike(torch, lambda lib: lib.ones(3, 3)[index], ValueError, "step must be greater than zero.*flip")  # fmt: skip


def test_linear_of_a_vector_with_a_matrix_bias_broadcasts_as_pytorch(torch):
    both(torch, lambda lib: lib.nn.functional.linear(lib.ones(3), lib.ones(2, 3), lib.ones(1, 2)))


# ---- empty and 0-d tensors --------------------------------------------------------------------


@pytest.mark.parametrize("shape, chunks, dim", [((0, 4), 2, 0), ((0,), 1, 0), ((3, 0), 3, 1)])
def test_chunk_of_an_empty_dim_gives_the_asked_number_of_empty_pieces(torch, shape, chunks, dim):
    ours, theirs = ag.zeros(shape).chunk(chunks, dim), torch.zeros(shape).chunk(chunks, dim)
    assert [tuple(p.shape) for p in ours] == [tuple(p.shape) for p in theirs]
    assert len(ag.zeros(0, 3).split(0)) == len(torch.zeros(0, 3).split(0)) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.transpose(0, 0),
        lambda x: x.transpose(0, -1),
        lambda x: x.swapaxes(-1, 0),
        lambda x: x.swapdims(0, 0),
        lambda x: x.movedim(0, -1),
        lambda x: x.flatten(-1, 0),
        lambda x: x.kthvalue(1)[0],
    ],
)
def test_dims_0_and_minus_1_of_a_0d_tensor_name_the_number_itself(torch, call):
    both(torch, lambda lib: call(lib.tensor(5.0)))

    def grad(lib):
        x = lib.tensor(5.0, requires_grad=True)
        (call(x) * 3).backward()
        return x.grad

    both(torch, grad)


def test_mT_of_a_0d_tensor_warns_and_is_the_tensor_itself(torch):
    x = ag.tensor(5.0, requires_grad=True)
    with pytest.warns(UserWarning, match="mT is deprecated on 0-D tensors"):
        assert x.mT is x
    # PyTorch warns once per process (TORCH_WARN_ONCE): after an earlier test (the fuzzer's
    # slice) reached it, it stays silent, so only its result is compared here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.tensor(5.0, requires_grad=True)
        assert t.mT is t


@pytest.mark.parametrize("call", [lambda x: x.flatten(1), lambda x: x.flatten(0, 1)])
@pytest.mark.parametrize("shape", [(), (1,), (0,)])
def test_flatten_refuses_dims_a_tensor_does_not_have(torch, call, shape):
    raises_alike(torch, lambda lib: call(lib.zeros(shape)), IndexError, "out of range")


@pytest.mark.parametrize("join", ["cat", "stack"])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0)])
def test_gradients_of_an_empty_tensor_used_twice_add_up(torch, join, shape):
    def grad(lib):
        x = lib.zeros(shape, requires_grad=True)
        y = x * 1  # used twice below: the engine sums two (empty) gradients for it
        (lib.zeros(()) + getattr(lib, join)([y, y]).sum()).backward()
        return x.grad

    both(torch, grad)


# ---- node names learners read -------------------------------------------------------------------


def node_names(tensor):
    """The grad_fn's name and the name of the first node under it."""
    below = [node for node, _ in tensor.grad_fn.next_functions if node is not None]
    return type(tensor.grad_fn).__name__, type(below[0]).__name__


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.unbind()[0],
        lambda lib, x: x.unbind(1)[1],
        lambda lib, x: x.split([1, 2], dim=1)[1],
        lambda lib, x: lib.split(x, (2, 1), 1)[0],
        lambda lib, x: x.split(2, dim=1)[0],
        lambda lib, x: x.chunk(2, dim=1)[1],
        lambda lib, x: x.amax(0),
        lambda lib, x: x.amin(1),
        lambda lib, x: x.t(),
    ],
)
def test_shape_nodes_have_pytorchs_names(torch, call):
    def make(lib):
        return call(lib, lib.arange(6.0).reshape(2, 3).requires_grad_())

    assert node_names(make(ag)) == node_names(make(torch))
    both(torch, make)


def test_the_pieces_of_unbind_share_one_node_and_stack_their_gradients(torch):
    def grads(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        first, second = x.unbind()
        assert first.grad_fn is second.grad_fn and second.output_nr == 1
        (first * 2).sum().backward()  # the second piece gets no gradient: zeros for it
        return x.grad

    both(torch, grads)
    raises_alike(torch, lambda lib: lib.tensor(1.0).unbind(), IndexError, "Dimension specified as 0 but tensor has no dimensions")  # fmt: skip
    assert ag.zeros(0, 3).unbind() == torch.zeros(0, 3).unbind() == ()


@pytest.mark.parametrize("shapes", [((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)),
    ((2, 2, 2, 3), (2, 2, 3, 4)), ((2, 2, 3), (3,))])  # fmt: skip
def test_a_batched_product_ends_in_an_unsafe_view_as_in_pytorch(torch, shapes):
    def make(lib):
        a, b = (lib.ones(shape, dtype=lib.float64, requires_grad=True) for shape in shapes)
        return a @ b

    ours, theirs = make(ag), make(torch)
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "UnsafeViewBackward0"
    if shapes == ((2, 2, 3), (2, 3, 4)):  # equal batches: PyTorch's bmm under it, and ours
        assert node_names(ours)[1] == "BmmBackward0"
    ours.add_(1)  # the result is no view: it may be changed in place, as in PyTorch
    np.testing.assert_array_equal(values(ours), values(theirs.detach() + 1))


def test_batched_matmul_gradients_through_the_unsafe_view_match_pytorch(torch):
    def grads(lib):
        a = lib.arange(12.0, dtype=lib.float64).reshape(2, 2, 3).requires_grad_()
        b = lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4).requires_grad_()
        ((a @ b) ** 2).sum().backward()
        return lib.cat([a.grad.reshape(-1), b.grad.reshape(-1)])

    both(torch, grads)


# ---- when hooks run for autograd.grad ---------------------------------------------------------


def hooked(lib):
    """x, and y = 2x with a hook that doubles y's gradient."""
    x = lib.tensor(1.0, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 2)
    return x, y


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x, y: lib.autograd.grad(y, [x, y]),  # (4, 1): y's taken before its hook
        lambda lib, x, y: lib.autograd.grad(y * 3, [y, x]),  # (3, 12)
        lambda lib, x, y: lib.autograd.grad(y, [y]),  # (2,): nothing behind y, hook first
        lambda lib, x, y: lib.autograd.grad(y * 3, [y]),  # (6,)
    ],
)
def test_grad_takes_an_input_gradient_before_its_hooks_when_the_node_still_runs(torch, call):
    ours, theirs = call(ag, *hooked(ag)), call(torch, *hooked(torch))
    assert [float(g) for g in ours] == [float(g) for g in theirs]


def test_retain_grad_and_leaf_hooks_with_grad_and_backward_inputs_match_pytorch(torch):
    def run(lib):
        x, y = hooked(lib)
        y.retain_grad()
        results = list(lib.autograd.grad(y * 3, [x, y])) + [y.grad]  # y.grad: after the hook
        leaf = lib.tensor(1.0, requires_grad=True)
        leaf.register_hook(lambda g: g * 5)
        results += lib.autograd.grad(leaf * 2, [leaf])  # a leaf's hooks run first
        x, y = hooked(lib)
        (y * 3).backward(inputs=[y, x])  # a non-leaf input keeps its gradient by retain_grad
        return [float(g) for g in results + [y.grad, x.grad]] + [y.retains_grad]

    assert run(ag) == run(torch)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda lib, x: x.permute(0, 5), IndexError, "out of range"),
        (lambda lib, x: x.permute(0, -2), RuntimeError, "duplicate dims are not allowed"),
        (lambda lib, x: x.permute(0), RuntimeError, "number of dimensions in the tensor input"),
        (lambda lib, x: x.all(5), IndexError, "out of range"),
        (lambda lib, x: x.any(-3), IndexError, "out of range"),
        (lambda lib, x: lib.cat(x), TypeError, "must be tuple of Tensors, not Tensor"),
        (lambda lib, x: lib.stack(x), TypeError, "must be tuple of Tensors, not Tensor"),
        (lambda lib, x: lib.cat([]), ValueError, "expected a non-empty list of Tensors"),
        (lambda lib, x: lib.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    ],
)
def test_dims_and_tensor_lists_that_do_not_fit_raise_pytorchs_error_class(
    torch, call, error, words
):
    raises_alike(torch, lambda lib: call(lib, lib.ones(2, 3)), error, words)
    both(torch, lambda lib: lib.ones(2, 3).permute(-1, 0))
    both(torch, lambda lib: lib.tensor([[True, False]]).any(-1, keepdim=True))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.gather(0, lib.zeros((), dtype=lib.int64)),
        lambda lib, x: x.scatter(0, lib.zeros((), dtype=lib.int64), x * 2),
        lambda lib, x: x.scatter_add(0, lib.zeros((), dtype=lib.int64), x * 2),
        lambda lib, x: x.index_add(0, lib.tensor([0]), x * 2),
    ],
)
def test_gather_and_scatter_of_a_0d_tensor_work_on_its_one_element(torch, call):
    def grad(lib):
        x = lib.tensor(5.0, requires_grad=True)
        out = call(lib, x)
        (out * 3).backward()
        return lib.stack([out.detach(), x.grad])

    both(torch, grad)


@pytest.mark.parametrize("shape, dim", [((2, 3), 0), ((2, 3), 1), ((3, 0), -1), ((0,), 0)])
def test_cat_leaves_out_a_1d_empty_tensor_as_pytorch_does(torch, shape, dim):
    def joined(lib):
        x = lib.ones(shape, requires_grad=True)
        empty = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        out = lib.cat([empty, x, empty], dim)
        (out * 2).sum().backward()
        assert tuple(empty.grad.shape) == (0,) and str(empty.grad.dtype).endswith("float64")
        return lib.cat([out.detach().reshape(-1), x.grad.reshape(-1).double()])

    both(torch, joined)


@pytest.mark.parametrize(
    "alpha, dim, source_shape, shape, index",
    [
        (1, 0, (2, 3), (4, 3), [1, 1]),  # a repeated index adds up
        (2.5, 1, (3, 2), (3, 4), [0, 3]),
        (1, 0, (), (), [0]),
        (-1, 0, (1,), (1,), [0]),
        (2, 1, (2, 0), (2, 0), []),
    ],
)
def test_index_add_records_one_index_add_backward_with_pytorchs_gradients(
    torch, alpha, dim, source_shape, shape, index
):
    def added(lib):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        size = int(np.prod(source_shape))
        source = lib.arange(float(size), dtype=lib.float64).reshape(source_shape)
        source.requires_grad_()
        y = lib.index_add(x * 1, dim, lib.tensor(index, dtype=lib.int64), source, alpha=alpha)
        weights = lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape)
        (y * weights).sum().backward()
        return type(y.grad_fn).__name__, y, x.grad, source.grad

    both(torch, added)


def test_kthvalue_of_a_number_records_kthvalue_backward(torch):
    def picked(lib):
        x = lib.tensor(2.0, requires_grad=True)
        value, index = x.kthvalue(1, keepdim=True)
        value.backward()
        return type(value.grad_fn).__name__, value, index, x.grad

    both(torch, picked)


@pytest.mark.parametrize("shape, normalized", [((2, 0), (0,)), ((0, 3), (3,)), ((2, 3, 0), (3, 0))])
def test_layer_norm_of_rows_with_no_elements_runs_both_ways_without_warnings(
    torch, shape, normalized
):
    def normalized_and_grads(lib):
        x = lib.zeros(shape, requires_grad=True)
        weight, bias = lib.ones(normalized, requires_grad=True), lib.zeros(normalized)
        bias.requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (numpy's "Mean of empty slice" would be one)
            y = lib.nn.functional.layer_norm(x, normalized, weight, bias)
            y.sum().backward()
        return y, x.grad, weight.grad, bias.grad

    both(torch, normalized_and_grads)
