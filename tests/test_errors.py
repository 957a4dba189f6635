"""Learner-facing errors: PyTorch's exception class, and a message in our words with the fix.

Each case is an action `(lib) -> None` that must fail, written once and run on both libraries:
- `test_error_class_matches_pytorch` (oracle): PyTorch raises the same exception class;
- `test_error_message_names_the_fix`: our message contains the keyword of the fix
  (`retain_graph=True`, `retain_grad()`, `allow_unused=True`, `detach()`, `with no_grad():`, ...).
We never assert PyTorch's wording: the messages are ours.
"""

import copy
import warnings

import pytest

import autograd_lab as ag


def backward_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def saved_tensor_read_after_backward(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    y.grad_fn._saved_self


def backward_without_grad(lib):
    lib.tensor([1.0, 2.0]).sum().backward()


def backward_after_no_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        y = (x * 2).sum()
    y.backward()


def implicit_gradient_for_non_scalar(lib):
    (lib.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def gradient_shape_mismatch(lib):
    (lib.tensor([1.0, 2.0], requires_grad=True) * 2).backward(gradient=lib.ones(3))


def grad_of_unused_input(lib):
    x = lib.tensor(1.0, requires_grad=True)
    unused = lib.tensor(1.0, requires_grad=True)
    lib.autograd.grad(x * 2, [x, unused])


def grad_of_input_without_grad(lib):
    x = lib.tensor(1.0, requires_grad=True)
    lib.autograd.grad(x * 2, [lib.tensor(1.0)])


def requires_grad_on_int_tensor(lib):
    lib.tensor([1, 2], requires_grad=True)


def requires_grad_on_bool_tensor(lib):
    lib.tensor([True, False]).requires_grad_()


def requires_grad_changed_on_non_leaf(lib):
    x = lib.tensor([1.0], requires_grad=True)
    y = x * 2
    y.requires_grad = False


def in_place_on_leaf_requiring_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.add_(1)


def setitem_on_leaf_requiring_grad(lib):
    w = lib.zeros(3, requires_grad=True)
    w[0] = 1.0


def saved_tensor_modified_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    loss = y.sum()
    y.mul_(2)
    loss.backward()


def saved_input_modified_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    loss = (h * h).sum()
    h += 1
    loss.backward()


def custom_function_returns_too_few_gradients(lib):
    class Product(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = lib.tensor([1.0], requires_grad=True)
    Product.apply(a, lib.tensor([2.0], requires_grad=True)).sum().backward()


def custom_function_returns_wrong_shape(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return lib.ones(3)

    Double.apply(lib.tensor([1.0, 2.0], requires_grad=True)).sum().backward()


def numpy_of_tensor_requiring_grad(lib):
    lib.tensor([1.0], requires_grad=True).numpy()


def item_of_many_elements(lib):
    lib.tensor([1.0, 2.0]).item()


def view_of_non_contiguous(lib):
    lib.ones(2, 3).t().view(6)


def bad_matmul_shapes(lib):
    lib.ones(2, 3) @ lib.ones(2, 3)


def bad_mm_shapes(lib):
    lib.mm(lib.ones(2, 3), lib.ones(4, 2))


def shapes_that_do_not_broadcast(lib):
    lib.ones(2, 3) + lib.ones(4)


def in_place_float_into_int(lib):
    t = lib.tensor([1, 2])
    t.add_(1.5)


def in_place_that_changes_shape(lib):
    t = lib.ones(2)
    t.add_(lib.ones(3, 2))


def cat_of_mismatched_shapes(lib):
    lib.cat([lib.ones(2, 3), lib.ones(2, 4)])


def retain_grad_without_grad(lib):
    lib.ones(2).retain_grad()


def hook_on_tensor_without_grad(lib):
    lib.ones(2).register_hook(lambda g: g)


def truth_value_of_many_elements(lib):
    if lib.ones(2) > 0:
        pass


def float_tensor_as_index(lib):
    lib.ones(3)[lib.tensor([0.0])]


def index_out_of_range(lib):
    lib.ones(3)[5]


def dim_out_of_range(lib):
    lib.ones(3).sum(dim=2)


def reshape_to_wrong_size(lib):
    lib.ones(2, 3).reshape(4)


def expand_non_singleton(lib):
    lib.ones(3).expand(2, 4)


def grad_of_wrong_shape_assigned(lib):
    lib.ones(2, requires_grad=True).grad = lib.ones(3)


def mean_of_int_tensor(lib):
    lib.tensor([1, 2]).mean()


def deepcopy_of_non_leaf(lib):
    copy.deepcopy(lib.ones(2, requires_grad=True) * 2)


def more_outputs_than_gradients(lib):
    x = lib.tensor([1.0], requires_grad=True)
    lib.autograd.backward([x * 2, x * 3], [lib.ones(1)])


def unknown_dtype(lib):
    lib.ones(2, dtype="float99")


def ragged_data(lib):
    lib.tensor([[1, 2], [3]])


# action, the words of the fix that our message must contain
CASES = [
    (backward_twice, ["retain_graph=True"]),
    (saved_tensor_read_after_backward, ["retain_graph=True"]),
    (backward_without_grad, ["requires_grad=True"]),
    (backward_after_no_grad, ["no_grad", "requires_grad=True"]),
    (implicit_gradient_for_non_scalar, ["sum()", "gradient=", "scalar outputs"]),
    (gradient_shape_mismatch, ["[3]", "[2]", "must match"]),
    (grad_of_unused_input, ["allow_unused=True"]),
    (grad_of_input_without_grad, ["requires_grad=True"]),
    (requires_grad_on_int_tensor, ["floating", ".float()"]),
    (requires_grad_on_bool_tensor, ["floating", ".float()"]),
    (requires_grad_changed_on_non_leaf, ["leaf", "detach()"]),
    (in_place_on_leaf_requiring_grad, ["leaf", "in-place operation", "with no_grad():"]),
    (setitem_on_leaf_requiring_grad, ["leaf", "with no_grad():"]),
    (saved_tensor_modified_in_place, ["ExpBackward0", "version 0", "version 1", "clone()"]),
    (saved_input_modified_in_place, ["MulBackward0", "version 0", "version 1", "clone()"]),
    (custom_function_returns_too_few_gradients, ["ProductBackward", "number of gradients", "None"]),
    (custom_function_returns_wrong_shape, ["DoubleBackward", "[3]", "[2]"]),
    (numpy_of_tensor_requiring_grad, ["detach().numpy()"]),
    (item_of_many_elements, ["one element", "sum()"]),
    (view_of_non_contiguous, ["contiguous", "reshape"]),
    (bad_matmul_shapes, ["[2, 3]"]),
    (bad_mm_shapes, ["[2, 3]", "[4, 2]"]),
    (shapes_that_do_not_broadcast, ["[2, 3]", "[4]", "broadcast"]),
    (in_place_float_into_int, ["float32", "int64", ".float()"]),
    (in_place_that_changes_shape, ["shape", "out-of-place"]),
    (cat_of_mismatched_shapes, ["[2, 3]", "[2, 4]"]),
    (retain_grad_without_grad, ["does not require grad"]),
    (hook_on_tensor_without_grad, ["requires_grad=True"]),
    (truth_value_of_many_elements, ["any()", "all()"]),
    (float_tensor_as_index, [".long()"]),
    (index_out_of_range, ["5", "[3]"]),
    (dim_out_of_range, ["2", "-1 to 0"]),
    (reshape_to_wrong_size, ["[4]", "6"]),
    (expand_non_singleton, ["[3]", "[2, 4]", "size 1"]),
    (grad_of_wrong_shape_assigned, ["[3]", "[2]"]),
    (mean_of_int_tensor, ["floating", ".float()"]),
    (deepcopy_of_non_leaf, ["leaf", "detach()"]),
    (more_outputs_than_gradients, ["2 outputs", "1 gradient"]),
    (unknown_dtype, ["float99", "float32"]),
    (ragged_data, ["same length"]),
]
IDS = [action.__name__ for action, _ in CASES]


def _raised(action, lib):
    with pytest.raises(Exception) as error:
        action(lib)
    return error.value


@pytest.mark.parametrize("action, keywords", CASES, ids=IDS)
def test_error_message_names_the_fix(action, keywords):
    message = str(_raised(action, ag))
    for keyword in keywords:
        assert keyword in message, f"{keyword!r} missing from: {message}"


@pytest.mark.parametrize("action, keywords", CASES, ids=IDS)
def test_error_class_matches_pytorch(action, keywords, torch):
    theirs, ours = _raised(action, torch), _raised(action, ag)
    assert type(ours) is type(theirs), f"PyTorch raises {type(theirs).__name__}: {theirs}"
    assert str(ours) != str(theirs)  # our own words


def test_reading_grad_of_a_non_leaf_warns_and_mentions_retain_grad():
    x = ag.tensor(2.0, requires_grad=True)
    y = x * 3
    y.backward()
    with pytest.warns(UserWarning, match=r"retain_grad\(\)"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad.item() == 3.0  # a leaf: no warning


def test_pytorch_also_warns_for_grad_of_a_non_leaf(torch):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * 3
    y.backward()
    with pytest.warns(UserWarning):
        assert y.grad is None


def test_gradcheck_failure_explains_where():
    class Wrong(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2x

    x = ag.tensor([1.0, 2.0], dtype=ag.float64, requires_grad=True)
    with pytest.raises(RuntimeError) as error:
        ag.autograd.gradcheck(Wrong.apply, (x,))
    message = str(error.value)
    assert "input 0" in message and "numerical" in message and "analytical" in message


def test_gradcheck_warns_about_float32_inputs():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="float64"):
        ag.autograd.gradcheck(lambda x: x * 2, (x,), raise_exception=False)
