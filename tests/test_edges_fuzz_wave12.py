"""Fuzz wave 12 (issue 14): the kinds the wave-12 run found, each against PyTorch 2.13."""

import itertools

import pytest
from fuzzing import check, generator

import autograd_lab as ag


def _outcome(call):
    """What a call gives: ("ok", dtype) or (exception class name, None)."""
    try:
        return "ok", str(call().dtype)
    except Exception as error:  # the class is what we compare with PyTorch's
        return type(error).__name__, None


def _of(lib, dtype_name):
    values = lib.tensor([0.0, 1.5, -2.0])
    return values > 0 if dtype_name == "bool" else values.to(getattr(lib, dtype_name))


@pytest.mark.parametrize("loss", ["huber_loss", "mse_loss", "l1_loss", "smooth_l1_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize(
    "dtypes", list(itertools.product(["bool", "int64", "float32", "float64"], repeat=2))
)
def test_regression_losses_with_bool_or_int_operands_fail_as_pytorch(
    torch, loss, reduction, dtypes
):
    # fuzz seed 1940797 (#1): huber_loss(bool, int64) raised NotImplementedError (int64 has no
    # kernel) where PyTorch first finds that its int64 result cannot be stored as a bool input
    # ("result type Long can't be cast to the desired output type Bool", RuntimeError)
    def outcome(lib):
        input, target = (_of(lib, name) for name in dtypes)
        return _outcome(
            lambda: getattr(lib.nn.functional, loss)(input, target, reduction=reduction)
        )

    assert outcome(ag) == outcome(torch)


def test_huber_loss_says_which_cast_it_cannot_make(torch):
    with pytest.raises(
        RuntimeError, match="result type Long can't be cast to the desired output type Bool"
    ):
        ag.nn.functional.huber_loss(ag.tensor(0) <= 0, ag.tensor(0), reduction="none")


def _stale_pieces(lib, make, base_requires_grad, change):
    """Pieces of a tensor from a multi-output view op, then the tensor changed in place."""
    leaf = lib.zeros(4).requires_grad_(base_requires_grad)
    base = leaf * 1 if base_requires_grad and change != "leaf" else leaf
    pieces = {
        "unbind": lambda: base.unbind(),
        "split": lambda: base.split(2),
        "chunk": lambda: base.chunk(2),
        "split sizes": lambda: base.split([1, 3]),
    }[make]()
    if change == "leaf":  # the seed-1945286 way: the leaf stops requiring grad, then changes
        leaf.requires_grad_(False)
        leaf.add_(1)
    elif change == "detach_":
        base.detach_()
        base.add_(1)
    elif change == "through a grad":  # the base comes to require grad by the change
        base[0:1].mul_(lib.ones(()).requires_grad_())
    else:  # through another view, as seed 1957987's setitem
        base[1:3] = 0.5
    return pieces


@pytest.mark.parametrize("make", ["unbind", "split", "chunk", "split sizes"])
@pytest.mark.parametrize("base_requires_grad", [True, False])
@pytest.mark.parametrize("change", ["leaf", "detach_", "through a grad", "another view"])
@pytest.mark.parametrize(
    "use", ["grad_fn", "piece * 2", "piece.add_(1)", "piece[...] * 2", "unbind(piece)", "detach"]
)
def test_pieces_of_a_multi_output_view_op_after_their_base_changed(
    torch, make, base_requires_grad, change, use
):
    # fuzz seeds 1945286 (#3) and 1957987 (#4): PyTorch refuses to use a piece of unbind/split/
    # chunk once its storage changed in place when the piece has a history or its base wants a
    # gradient (even a base that stopped wanting one since), and refuses it before the op's own
    # checks (unbind of a 0-d piece); pieces of a tensor that wanted no gradient count as made in
    # no_grad(). Ours let the leaf that stopped requiring grad through, and unbind checked first.
    def outcome(lib):
        try:
            piece = _stale_pieces(lib, make, base_requires_grad, change)[0]
            result = {
                "grad_fn": lambda: piece.grad_fn,
                "piece * 2": lambda: piece * 2,
                "piece.add_(1)": lambda: piece.add_(1),
                "piece[...] * 2": lambda: piece[...] * 2,
                "unbind(piece)": lambda: lib.unbind(piece[0] if make != "unbind" else piece, -1),
                "detach": lambda: piece.detach() * 2,
            }[use]()
        except Exception as error:
            return type(error).__name__, str(error).split(":")[0].split(" is ")[0][:40]
        if isinstance(result, tuple):
            return "ok", len(result)
        return "ok", None if result is None else type(getattr(result, "grad_fn", result)).__name__

    assert outcome(ag) == outcome(torch)


def test_a_stale_piece_of_unbind_says_what_to_do(torch):
    x = ag.zeros(3).requires_grad_()
    pieces = x.add(-1.0).unbind(-1)
    base = pieces[0]._base
    base[1:2] = -0.5
    with pytest.raises(
        RuntimeError,
        match="Output 2 of Unbind is a view and its base .* Fix: take the pieces after",
    ):
        ag.unbind(pieces[2], -1)


@pytest.mark.parametrize("seed", [1940797, 1945286, 1957987])
def test_the_fuzzer_sees_no_divergence_on_the_wave12_seeds(torch, seed):
    assert not check(generator.generate(seed), ag, torch).divergences


@pytest.mark.parametrize("reduce", ["amin", "amax", "min", "max"])
def test_a_reduction_of_a_0d_tensor_over_its_dim_saves_and_refuses_as_pytorch(torch, reduce):
    # fuzz seed 1956456 (#2) looked like an AminBackward0 we refuse where PyTorch runs; PyTorch's
    # amin/amax over dim -1 of a 0-d tensor also return a new tensor (no view) and save it, and
    # its backward refuses it changed in place as ours does (min/max(dim) save indices instead)
    def outcome(lib):
        x = lib.tensor(0.95, dtype=lib.float64).requires_grad_()
        result = getattr(x * 1, reduce)(dim=-1)
        result = result[0] if isinstance(result, tuple) else result
        names = (type(result.grad_fn).__name__, result._base is not None)
        result.mul_(2)
        try:
            result.sum().backward()
        except RuntimeError as error:
            return names, "modified by an inplace operation" in str(error)
        return names, x.grad.item()

    assert outcome(ag) == outcome(torch)


def test_floor_divide_through_a_view_drops_the_divisors_edge_only_in_pytorch(torch):
    # what seed 1956456 really is: PyTorch's CopySlices of `x1[()].floor_divide_(x2)`, x1 needing
    # no gradient, drops x2's edge, so its grad for x2 runs no node (and gives None); ours keeps
    # the edge and meets AminBackward0's changed result on the way: README's simplification
    def edges(lib):
        x1 = lib.tensor(0.95, dtype=lib.float64)
        x2 = lib.tensor(0.5).requires_grad_()
        x1[()].floor_divide_(x2)
        return [type(node).__name__ for node, _ in x1.grad_fn.next_functions if node is not None]

    assert edges(torch) == []
    assert edges(ag) == ["NotImplemented"]
    result = check(generator.generate(1956456), ag, torch)
    assert not result.divergences
    assert any("floor_divide_" in s.readme for _, s in result.accepted)
