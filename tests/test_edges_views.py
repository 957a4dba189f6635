"""Views and in-place changes at the edges (issue 14): each test runs the same code in autograd_lab
and in PyTorch and compares values, gradients, node names and error classes."""

import numpy as np
import pytest
from conftest import both, values

import autograd_lab as ag


def node(t):
    return type(t.grad_fn).__name__


@pytest.mark.parametrize(
    "overwrite",
    [
        lambda lib, y: y.fill_(3.0),  # FillBackward2
        lambda lib, y: y.fill_(lib.tensor(3.0, requires_grad=True)),  # FillBackward3
        lambda lib, y: y.zero_(),  # ZeroBackward0
        lambda lib, y: y.copy_(lib.tensor([float("inf"), 1.0])),  # CopyBackwards
    ],
)
def test_fill_zero_and_copy_overwrite_a_result_and_pass_it_zeros(torch, overwrite):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        overwrite(lib, y)
        y.backward(lib.full((2,), float("inf")))  # zeros even for an infinite gradient
        return y.detach(), node(y), x.grad

    both(torch, run)

    def fill_value_grad(lib):
        value = lib.tensor(3.0, requires_grad=True)
        y = lib.ones(3) * 1
        y.fill_(value)
        y.sum().backward()
        return value.grad

    both(torch, fill_value_grad)
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
            lib.ones(2).fill_(lib.tensor([1.0]))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.ones(2, 3).t(),
        lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
        lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1)[:, :, ::2],
        lambda lib: lib.ones(4, 6)[::2].t(),
        lambda lib: lib.ones(3).expand(2, 3),
        lambda lib: lib.ones(2, 1).expand(2, 3),
    ],
)
def test_clone_keeps_the_memory_order_and_contiguous_makes_it_row_major(torch, make):
    def run(lib):
        x = make(lib).requires_grad_()
        copy = x.clone()
        return copy.stride(), copy.contiguous() is copy, x.contiguous().stride(), node(copy)

    both(torch, run)


def test_t_of_a_vector_or_number_is_a_new_view(torch):
    def run(lib):
        results = []
        for x in (lib.tensor(1.0, requires_grad=True), lib.ones(2, requires_grad=True)):
            y = x.t()
            results += [y is x, node(y), y._base is x]
        return results

    both(torch, run)


def test_expand_that_repeats_nothing_is_writable(torch):
    def run(lib):
        x = lib.ones(2)
        x.expand(2).add_(1)
        x.expand(1, 1, 2).mul_(3)
        return x

    both(torch, run)
    for lib in (ag, torch):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            lib.ones(1, 3).expand(2, 3).add_(1)


def test_clone_keeps_the_memory_order_on_cuda_too():
    x = ag.ones(2, 3, 4, device="cuda").permute(2, 0, 1)[:, :, ::2]
    copy = x.clone()
    assert copy.stride() == (1, 8, 4) and copy.device.type == "cuda"  # PyTorch's, as on the CPU
    assert copy.contiguous().stride() == (4, 2, 1)
    np.testing.assert_array_equal(values(copy.cpu()), values(x.cpu()))


@pytest.mark.parametrize("method", ["exp_", "tanh_", "sigmoid_", "sqrt_", "relu_", "reciprocal_"])
def test_an_in_place_op_that_saves_its_result_notices_a_later_change(torch, method):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = getattr(x * 1, method)()
        y.add_(1)  # the saved result is y itself: changing y makes its gradient wrong
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()

    def unchanged(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        getattr(x * 1, method)().sum().backward()
        return x.grad

    np.testing.assert_allclose(values(unchanged(ag)), values(unchanged(torch)), rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: x * 2,  # PyTorch saves the 2
        lambda lib, x: x.exp(),
        lambda lib, x: x[lib.tensor([0, 1])],  # and the index
        lambda lib, x: x.masked_fill(x > 1, 0.0),  # and the mask
        lambda lib, x: x.gather(0, lib.tensor([1])),
    ],
)
def test_a_second_backward_through_freed_saved_tensors_fails(torch, make):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = make(lib, x).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: x + 1,  # nothing saved anywhere: PyTorch accumulates again
        lambda lib, x: x[0] - x[1:].t(),
        lambda lib, x: x.view(2, 1).expand(2, 3).clone(),
    ],
)
def test_a_second_backward_through_nothing_saved_accumulates_again(torch, make):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = make(lib, x).sum()
        y.backward()
        y.backward()
        return x.grad

    both(torch, run)


def test_indexing_one_element_gives_a_0d_view(torch):
    def run(lib):
        a, b, c = lib.zeros(3), lib.zeros(2, 2), lib.tensor(2.0)
        a[0].add_(1)  # numpy's a[0] would be a copied number; PyTorch's is a view
        b[1, 1].fill_(5)
        b[0][1].sub_(1)
        c[()].mul_(3)
        return a, b, c, a[-1]._base is a, a[0]._version

    both(torch, run)


@pytest.mark.parametrize("index", [0, (), slice(0, 1), Ellipsis])
def test_changing_a_view_of_a_leaf_that_requires_grad_is_refused(torch, index):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        if index == ():
            x = lib.tensor(1.0, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[index].add_(1)


def test_a_change_through_a_0d_view_is_noticed_by_backward(torch):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        with lib.no_grad():
            y[0].add_(1)  # y's storage changed: ExpBackward0 saved y
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_a_0d_view_on_cuda_shares_memory():
    a = ag.zeros(3, device="cuda")
    a[1].add_(1)
    np.testing.assert_array_equal(values(a.cpu()), [0.0, 1.0, 0.0])


@pytest.mark.parametrize(
    "index",
    [
        lambda lib: 0,
        lambda lib: slice(0, 1),
        lambda lib: lib.tensor([0]),
        lambda lib: [0, 2],
        lambda lib: lib.tensor([True, False, True]),
    ],
)
def test_assigning_to_an_index_records_pytorchs_node(torch, index):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y[index(lib)] = 5.0
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return y.detach(), node(y), x.grad

    both(torch, run)


def test_as_strided_is_a_view_of_the_storage(torch):
    def run(lib):
        x = lib.arange(6.0, dtype=lib.float64).requires_grad_()
        v = x.view(2, 3)[:, 1:]
        overlapping = x.as_strided((3, 3), (1, 1), 1)  # elements repeat: gradients add up
        (overlapping * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        later = x.detach()[1:].as_strided((2,), (2,))  # no offset given: the input's own
        return v.stride(), v.storage_offset(), node(overlapping), overlapping, x.grad, later

    both(torch, run)
    x = ag.arange(6.0, dtype=ag.float64).requires_grad_()
    assert ag.autograd.gradcheck(lambda t: t.as_strided((2, 2), (1, 2), 1), (x,))
    assert ag.autograd.gradgradcheck(lambda t: t.as_strided((3, 2), (1, 1)) ** 2, (x,))


@pytest.mark.parametrize(
    "make_view",
    [
        lambda a: a[None],
        lambda a: a.view(-1),
        lambda a: a.t(),
        lambda a: a.broadcast_to((2, 2)),
        lambda a: a[1:],
        lambda a: a.unsqueeze(1).expand(2, 3),
    ],
)
def test_a_view_of_a_base_changed_in_place_rebuilds_its_history(torch, make_view):
    def run(lib, use):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x.clone()
        b = make_view(a)
        a.mul_(2)  # b's recorded history is stale now
        use(lib, b).backward()
        return x.grad

    for use in (
        lambda lib, b: (b.grad_fn, b.sum())[1],  # reading grad_fn
        lambda lib, b: (b * b).sum(),  # as an op's input
        lambda lib, b: b.sum(),
    ):
        both(torch, lambda lib: run(lib, use))

    def names(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        b = make_view(a)
        with lib.no_grad():
            a.mul_(2)  # even without recording, as PyTorch does
        return node(b), b.requires_grad

    both(torch, names)


def test_as_strided_and_a_rebuilt_view_history_on_cuda():
    x = ag.arange(6.0, device="cuda").requires_grad_()
    x.as_strided((3, 3), (1, 1), 1).sum().backward()
    np.testing.assert_array_equal(values(x.grad.cpu()), [0.0, 1.0, 2.0, 3.0, 2.0, 1.0])
    x = ag.tensor([1.0, 2.0], requires_grad=True, device="cuda")
    a = x.clone()
    b = a.t()
    a.mul_(2)
    b.sum().backward()
    assert node(b) == "AsStridedBackward0"
    np.testing.assert_array_equal(values(x.grad.cpu()), [2.0, 2.0])


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, x, a: a[1:].mul_(3),
        lambda lib, x, a: a[1:].mul_(x[1:]),  # the in-place op's other input gets its gradient
        lambda lib, x, a: a[0].exp_(),  # saves its result, which is now part of a
        lambda lib, x, a: a.view(3, 1).t()[:, 1:].sin_(),  # a view of a view
        lambda lib, x, a: a.view(3, 1).t().__setitem__((0, 1), 7.0),
    ],
)
def test_an_in_place_change_through_a_view_rewrites_the_base_history(torch, change):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        a = x * 1
        view = a[1:]
        change(lib, x, a)
        (a * a).sum().backward()
        return a.detach(), node(a), node(view), x.grad

    both(torch, run)


def test_a_view_of_a_tensor_without_history_gets_one_from_the_value_written(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = lib.zeros(3)
        b = a[1:]
        b.add_(x[0])
        a.sum().backward()
        return node(a), node(b), b.requires_grad, x.grad

    both(torch, run)


def test_a_change_after_an_in_place_op_through_a_view_is_noticed(torch):
    for lib in (ag, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        a[1:].exp_()  # ExpBackward0 saved its result: a's storage
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            a.sum().backward()


def test_an_in_place_change_through_a_view_on_cuda():
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True, device="cuda")
    a = x * 1
    a[1:].mul_(3)
    (a * a).sum().backward()
    assert node(a) == "CopySlices"
    np.testing.assert_array_equal(values(x.grad.cpu()), [2.0, 36.0, 54.0])


def test_another_view_of_a_base_changed_through_a_view_requires_grad(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = lib.zeros(3)
        b, c = a[1:], a[:2]
        b.add_(x[0])
        weights = lib.ones(2, requires_grad=True)
        (weights * c).sum().backward()  # c is an op's second input: its history counts too
        return c.requires_grad, node(c), x.grad

    both(torch, run)
