"""Memory layout and real views (strides, storage offsets, clone, reshape, random fills), as the
differential fuzzer found them differing from PyTorch (issue 14): each compares with PyTorch."""

import pytest
from conftest import both

import autograd_lab as ag


def node_name(tensor):
    return type(tensor.grad_fn).__name__


def test_writing_into_an_overlapping_as_strided_view_changes_every_element_sharing_the_place(
    torch,
):
    # the fuzzer's: row 1 of the view starts one place after row 0, so they share two places;
    # writing row 0 changes row 1 too, and the storage places nothing was written to keep theirs
    def written(lib):
        nan = float("nan")
        storage = lib.tensor([1.0, nan, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
        view = lib.as_strided(storage, (2, 3), (1, 1), 5)
        view[0] = -0.5
        other = lib.as_strided(storage, (2, 3), (1, 1), 0)
        other[1, 1:] = -0.0  # -0.0 over 0.0 or nan is a change too
        return view, storage, 1 / storage

    both(torch, written)


def test_clone_keeps_a_gap_free_layout_and_orders_others_as_pytorch(torch):
    # a clone takes a gap-free input's strides exactly (a size-1 dim's 0 too); other inputs give
    # it their memory order, where a broadcast dim (stride 0) lets the others be compared past it
    def cloned(lib):
        gap_free = lib.arange(3.0).reshape(3, 1, 1).expand(3, 1, 3).transpose(1, 2).transpose(0, 2)
        expanded = lib.arange(3.0).reshape(3, 1).expand(3, 2).unsqueeze(2)
        permuted = lib.arange(8.0).reshape(2, 2, 2).permute(2, 0, 1).expand(3, 2, 2, 2)
        return [x.clone() for x in (gap_free, expanded, permuted)]

    for ours, theirs in zip(cloned(ag), cloned(torch)):
        assert ours.stride() == theirs.stride()


def test_tril_triu_and_conv1d_give_row_major_results_whatever_the_inputs_layout(torch):
    # the fuzzer's: as_strided reads the clone's storage, so the result's layout shows in values
    def made(lib):
        x = lib.arange(18.0, dtype=lib.float64).reshape(2, 3, 3).transpose(0, -1)
        signals = lib.arange(36.0, dtype=lib.float64).reshape(3, 3, 4).amin(dim=-1, keepdim=True)
        kernels = lib.ones(2, 3, 1, dtype=lib.float64)
        return [
            x.tril(-2).sqrt().clone().as_strided((2,), (1,), 11),
            x.triu(1).clone().as_strided((3,), (1,), 1),
            lib.nn.functional.conv1d(signals.transpose(0, 1), kernels)
            .clone()
            .as_strided((), (), 3),
        ]

    both(torch, made)


def test_conv2d_is_channels_last_when_its_images_or_kernels_are(torch):
    # as PyTorch's suggest_memory_format: a channels-last batch must have no gap between its
    # images (the image batch cut with [::2] over its height is row-major again)
    def convolved(lib):
        kernels = lib.ones(4, 3, 3, 3)
        channels_last = lib.ones(2, 5, 5, 3).permute(0, 3, 1, 2)
        kernels_last = lib.ones(4, 3, 3, 3).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        F = lib.nn.functional
        return [
            F.conv2d(channels_last, kernels, padding=1),
            F.conv2d(lib.ones(2, 3, 5, 5), kernels_last),
            F.conv2d(channels_last[:, :, ::2], kernels, padding=1),
            F.conv2d(lib.ones(3, 5, 4, 3).transpose(1, 3), kernels),
        ]

    for ours, theirs in zip(convolved(ag), convolved(torch)):
        assert ours.stride() == theirs.stride()


def _rows(lib):  # a (2, 2) view with a gap between its rows
    return lib.tensor([0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]).reshape(4, 2)[::2]


def _cube(lib):  # a (2, 2, 2) tensor permuted in memory
    return lib.arange(8.0).reshape(2, 2, 2).permute(2, 0, 1)


@pytest.mark.parametrize(
    "make, index",
    [
        (_rows, lambda lib: (Ellipsis, lib.tensor([1, -1, -2]))),  # the fuzzer's: row-major
        (_cube, lambda lib: (slice(None), lib.tensor([0, 1]), None)),
        (_cube, lambda lib: (lib.tensor([[0], [1]]), slice(None), lib.tensor([1, 0]))),  # apart
        (_cube, lambda lib: (None, lib.tensor([True, False]), slice(None))),
    ],
)
def test_indexing_with_tensors_lays_out_the_result_as_pytorch(torch, make, index):
    # PyTorch reads the view through the index tensors with TensorIterator: the result follows
    # the view's memory order (the picked dims count as broadcast), then the index tensors'
    ours, theirs = make(ag)[index(ag)], make(torch)[index(torch)]
    assert ours.stride() == theirs.stride()
    both(torch, lambda lib: make(lib)[index(lib)].clone().as_strided((ours.numel(),), (1,)))


def test_an_elementwise_result_is_laid_out_like_its_inputs(torch):
    # PyTorch's TensorIterator: a gap-free input's strides exactly (the size-1 dim's 1 too), a
    # broadcast result in the memory order of the inputs, the first one deciding (the fuzzer's
    # gelu of a transposed matrix is transposed in memory, not contiguous)
    def results(lib):
        F = lib.nn.functional
        transposed = lib.zeros(6, dtype=lib.float64).reshape(2, 3).transpose(0, -1)
        permuted = lib.arange(6.0).reshape(2, 3, 1).permute(1, 0, 2)
        expanded = lib.arange(3.0).reshape(3, 1).expand(3, 2).unsqueeze(2)
        return [
            F.gelu(transposed),
            F.gelu(permuted),
            permuted.exp(),
            permuted + 1,
            lib.where(permuted > 0, permuted, 0.0),
            expanded.exp(),
            lib.arange(6.0).reshape(3, 2, 1) * lib.arange(2.0).reshape(2, 1).t(),
            lib.ones(2, 1, 1) + lib.ones(1, 3, 2).transpose(0, 2),
        ]

    for ours, theirs in zip(results(ag), results(torch)):
        assert ours.stride() == theirs.stride()
        assert ours.is_contiguous() == theirs.is_contiguous()


def test_an_empty_slice_starts_at_its_clamped_start_with_its_step_in_the_stride(torch):
    # the fuzzer's: numpy starts an empty slice where its array starts and keeps the stride
    def views(lib):
        empty = lib.tensor([], dtype=lib.float32).reshape(1, 0, 1)
        column = lib.tensor([0, 0, 0]).reshape(3, 1)
        one = lib.tensor([0]).reshape(1, 1)
        return [
            empty.narrow(2, 1, 0),
            lib.narrow(column, -2, -1, 0),
            one[3:-1:2, None, ::2],
            lib.zeros(1, 1)[:2:2, ..., 2::3],
            lib.zeros(2, 3)[:, 3:],
        ]

    for ours, theirs in zip(views(ag), views(torch)):
        assert ours.storage_offset() == theirs.storage_offset()
        assert ours.stride() == theirs.stride() and ours.shape == theirs.shape


@pytest.mark.parametrize(
    "loss", ["smooth_l1_loss", "huber_loss", "mse_loss", "binary_cross_entropy"]
)
def test_an_unreduced_loss_is_laid_out_like_its_inputs_so_reshape_copies_as_in_pytorch(torch, loss):
    # the fuzzer's: the losses of a transposed input are transposed in memory, so reshape must
    # copy (UnsafeViewBackward0); those of a row-major input give a view (ViewBackward0)
    def reshaped(lib, transposed):
        x = lib.full((3, 4), 0.25).transpose(0, -1) if transposed else lib.full((4, 3), 0.25)
        target = lib.full((4, 3), 0.5)
        losses = getattr(lib.nn.functional, loss)(x.requires_grad_(), target, reduction="none")
        return losses, losses.reshape((2, 6))

    for transposed in (True, False):
        (ours, ours_reshaped), (theirs, theirs_reshaped) = (
            reshaped(ag, transposed),
            reshaped(torch, transposed),
        )
        assert ours.stride() == theirs.stride()
        assert node_name(ours_reshaped) == node_name(theirs_reshaped)


def test_topk_gives_row_major_values_and_indices_so_they_can_be_viewed(torch):
    # the fuzzer's: PyTorch's topk makes new row-major tensors, so view(-1, 3, 1) works
    def viewed(lib):
        values, indices = lib.zeros(3, 3).topk(2, largest=False)
        transposed = lib.arange(9.0).reshape(3, 3).t().topk(2, 0)
        return values.view(-1, 3, 1), indices.view(-1, 3, 1), *transposed

    for ours, theirs in zip(viewed(ag), viewed(torch)):
        assert ours.stride() == theirs.stride()
    both(torch, viewed)


def test_linear_of_a_non_contiguous_batch_adds_its_bias_last(torch):
    # the fuzzer's: the losses of a transposed input broadcast against a batch follow its
    # layout, and so does where(...) of them: not contiguous, so PyTorch's linear multiplies and
    # then adds the bias in place (AddBackward0), not by its flattened fused path (a view)
    def linear(lib):
        x = lib.zeros(3, 3).transpose(0, -1).requires_grad_()
        losses = lib.nn.functional.huber_loss(x, lib.ones(2, 3, 3), reduction="none")
        batch = lib.where(losses.isnan(), losses, x)
        return lib.nn.functional.linear(batch, lib.ones(1, 3), lib.ones(1))

    assert node_name(linear(ag)) == node_name(linear(torch)) == "AddBackward0"
    both(torch, linear)


def test_random_fills_follow_the_memory_order_pytorch_gives_each_result(torch):
    # the fuzzer's: a norm, var_mean or any() of a permuted input is row-major (a reduction
    # makes a new tensor), a broadcast elementwise result follows its first input's layout; a
    # random fill writes its numbers in memory order, so the layout shows in the values
    def filled(lib):
        lib.manual_seed(0)
        x = lib.zeros(6).reshape(3, 1, 2).transpose(0, -1)
        y = lib.zeros(6).reshape(1, 3, 2).transpose(0, -1)
        wide = lib.zeros(3, 4).t().exp() + lib.zeros(2, 4, 3)
        return [
            lib.randint_like(lib.norm(x, dim=1, keepdim=True), 5),
            lib.var_mean(y, dim=-1)[1].random_(0, 5),
            lib.rand_like(wide),
            lib.zeros(3, 4).t().any(0, keepdim=True).float().uniform_(),
        ]

    both(torch, filled)


@pytest.mark.parametrize("flag", [False, True])
def test_indexing_with_a_0d_mask_picks_as_pytorch_does(torch, flag):
    # x[x] of a 0-d bool tensor adds a dim of size 0 or 1 (fuzz seed 1400068 crashed here)
    def picked(lib):
        x = lib.tensor(flag)
        y = lib.arange(6.0).reshape(2, 3).t()
        return x[x], y[lib.tensor(flag)], y[:, lib.tensor(flag)]

    both(torch, picked)


def test_a_range_in_an_index_is_a_sequence_of_indices(torch):
    # makemore's loss, -logprobs[range(n), Yb].mean(): a range is read as an index tensor
    def picked(lib):
        x = lib.arange(20.0).reshape(4, 5).requires_grad_()
        rows = lib.tensor([1, 2, 0, 3])
        results = [x[range(4), rows], x[range(1, 3)], x[:, range(2)], x[range(0)]]
        results[0].sum().backward()
        return [(r, r.stride(), type(r.grad_fn).__name__) for r in results], x.grad

    both(torch, picked)
