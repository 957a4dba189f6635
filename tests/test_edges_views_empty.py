"""Views of every size, and the node names of in-place ops and views (issue 14): each test runs the
same code in autograd_lab and in PyTorch and compares values, gradients, node names and errors."""

import pytest
from conftest import both

import autograd_lab as ag


def node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


EMPTY_VIEWS = [
    lambda x: x[2:2],
    lambda x: x.expand(0, 4)[0:0, 0],
    lambda x: x[:0].view(0, 2),
    lambda x: x.as_strided((0, 2), (0, 0), 3),
]


@pytest.mark.parametrize("empty_view", EMPTY_VIEWS)
def test_an_in_place_change_through_an_empty_view_is_a_change_of_its_base(torch, empty_view):
    # an empty view has no elements, yet it is a view: the change is recorded on the base
    # (CopySlices) and the view's history is rebuilt from it (AsStridedBackward0)
    def run(lib):
        x = lib.arange(4.0).requires_grad_()
        y = x * 2
        v = empty_view(y)
        v.exp_()
        y.sum().backward()
        return node(v), node(y), v.requires_grad, x.grad

    both(torch, run)


def test_an_empty_view_sees_its_base_change_in_place(torch):
    # retain_grad() and grad_fn read the view's history after its base changed: rebuilt
    def run(lib):
        x = lib.tensor([], dtype=lib.float64).requires_grad_()
        y = x * 1
        v = y.expand(0)
        y.log2_()
        v.retain_grad()
        return node(v), v.retains_grad, v._version

    both(torch, run)


@pytest.mark.parametrize(
    "change",
    [
        lambda lib, v: v.clip_(2.0, 3.0),
        lambda lib, v: v.masked_fill_(v > 2, -1.0),
        lambda lib, v: v.mul_(lib.tensor([10.0, 100.0])),
    ],
)
def test_an_as_strided_view_with_an_offset_changes_its_own_elements(torch, change):
    # the storage offset is where the view starts: the change reads and writes those elements
    def run(lib):
        x = lib.arange(6.0).requires_grad_()
        y = x * 1
        v = lib.as_strided(y, (2,), (2,), 1)
        change(lib, v)
        (y * lib.arange(6.0)).sum().backward()
        return v.storage_offset(), v.detach(), y.detach(), node(v), x.grad

    both(torch, run)


def test_as_strided_reads_a_column_major_result_in_memory_order(torch):
    # the double of a transposed matrix is laid out like its input: storage places follow memory
    def run(lib):
        x = lib.arange(6.0).reshape(2, 3).t() * 2
        return x.stride(), lib.as_strided(x, (6,), (1,), 0), lib.as_strided(x, (2,), (1,), 4)

    both(torch, run)


@pytest.mark.parametrize("through_a_view", [False, True])
def test_retain_grad_follows_a_tensor_changed_in_place(torch, through_a_view):
    # .grad is the gradient of the tensor's new value, not of the value it had before
    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64).requires_grad_()
        y = x * 1
        kept = y[:1] if through_a_view else y
        kept.retain_grad()
        y.exp_()
        (kept * 3).sum().backward()
        return node(kept), kept.retains_grad, kept.grad, x.grad

    both(torch, run)


def test_a_view_taken_before_its_base_requires_grad_requires_grad_too(torch):
    # the view requires grad (its base does), but it has no history: no gradient reaches it
    def run(lib):
        base = lib.tensor([[0.1, 0.2], [0.3, 0.4]])
        view = base.t()
        base.requires_grad_()
        result = lib.acos(view)
        result.sum().backward()
        edges = [fn for fn, _ in result.grad_fn.next_functions]
        return view.requires_grad, view.is_leaf, node(view), result.requires_grad, edges, base.grad

    both(torch, run)


def test_a_view_made_in_no_grad_is_not_changed_in_place_while_recording(torch):
    # PyTorch cannot tell whether such a change belongs to the view's history, so it refuses it
    # (and a history for the view once its base changed); inside no_grad() a change is fine, and
    # so is one where nothing requires grad
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            view = (x * 2)[0:1]
            view.mul_(2)
            plain = lib.ones(3)[1:]
        plain.mul_(2)
        return view.requires_grad, plain.requires_grad, plain

    both(torch, run)
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        with lib.no_grad():
            of_a_leaf, of_a_result = x[0:1], y[0:1]
        for view in (of_a_leaf, of_a_result, of_a_result[0:1]):
            with pytest.raises(RuntimeError, match="created in no_grad mode"):
                view.mul_(2)
        y = x * 2
        with lib.no_grad():
            view = y[0:1]
        y.mul_(3)  # the base changes: the view's history is out of date
        with pytest.raises(RuntimeError, match="created in no_grad mode and its base"):
            view.exp()


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, x: lib.nn.functional.linear(
            x, lib.ones(3, 2)
        ),  # a 1-d input: squeezed in place
        lambda lib, x: x.kthvalue(1).values,
        lambda lib, x: x.reshape(1, 2).kthvalue(2, 1, keepdim=True).values,
    ],
)
def test_results_that_are_not_views_in_pytorch_record_their_own_in_place_changes(torch, make):
    # not views of a hidden temporary: x.add_() records AddBackward0, not a view's history
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        result = make(lib, x)
        before = result.stride(), result._version
        result.add_(1.5)
        result.sum().backward()
        return before, node(result), result.is_contiguous(), x.grad

    both(torch, run)


@pytest.mark.parametrize("scan", ["cumsum", "cumprod", "logcumsumexp"])
def test_a_scan_is_row_major_so_reshape_records_a_view(torch, scan):
    # numpy keeps a transposed input's layout; PyTorch's scans are row-major, so their result
    # can be viewed, and reshape records ViewBackward0 (not a copy's UnsafeViewBackward0)
    def run(lib):
        x = lib.arange(6.0).reshape(2, 3).t().requires_grad_()
        result = getattr(lib, scan)(x, 0)
        return result.stride(), node(result.reshape(6)), result.view(6).shape

    both(torch, run)


@pytest.mark.parametrize("times", [0, 1])
def test_repeat_interleave_never_gives_a_view_of_its_input(torch, times):
    # even where nothing repeats: writing into the result leaves the input (and what saved it)
    def run(lib):
        x = lib.tensor([2.0], requires_grad=True)
        total = x.sum(0, keepdim=True)
        result = total.repeat_interleave(times, dim=0)
        result[:] = 0.25
        (result.sum() + (total * total).sum()).backward()
        return total._version, total.detach(), x.grad

    both(torch, run)
