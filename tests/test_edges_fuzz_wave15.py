"""Fuzz wave 15 (issue 14): the kinds the wave-15 run found, each against PyTorch 2.13."""

import pytest

import autograd_lab as ag


def _stale_piece(lib):
    """A piece of split whose base was changed in place since: its history cannot be used."""
    base = lib.zeros(2, 3).requires_grad_() * 1
    piece = base.split(1)[0]
    base.mul_(2)
    return piece


INDEXES = {
    "a mask of the wrong shape": lambda lib: (lib.tensor([True, False, True, True]),),
    "None and a mask": lambda lib: (None, lib.tensor([False])),
    "an int out of range": lambda lib: (5,),
    "an index out of range": lambda lib: (lib.tensor([7]),),
    "a float index": lambda lib: (lib.tensor([0.0]),),
    "too many indices": lambda lib: (0, 0, 0),
    "a good int": lambda lib: (0,),
}


@pytest.mark.parametrize("index", INDEXES)
def test_regression_indexing_a_stale_piece_fails_in_pytorchs_order(torch, index):
    # fuzz seed 2215070: v3[0][None, mask] with a mask of the wrong shape gave our IndexError
    # about the mask, where PyTorch first reads the view's history and refuses the stale piece
    # (RuntimeError); an int out of range is refused before that (a view PyTorch takes first)
    def error(lib):
        with pytest.raises(Exception) as raised:
            _stale_piece(lib)[INDEXES[index](lib)]
        return type(raised.value).__name__, "modified inplace" in str(raised.value)

    assert error(ag) == error(torch)


@pytest.mark.parametrize("target_dtype", ["bool", "int64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_second_derivative_of_mse_loss_with_a_bool_target(
    torch, target_dtype, reduction
):
    # fuzz seed 2202826: mse_loss(x, mask) then a second derivative raised our "Subtraction
    # with a bool tensor" (its backward's backward computed x - target), where PyTorch's kernel
    # converts the target first
    def second(lib):
        x = lib.tensor([0.5, -2.0, 1.0], dtype=lib.float64).requires_grad_()
        target = lib.tensor([True, False, True]).to(getattr(lib, target_dtype))
        loss = lib.nn.functional.mse_loss(x, target, reduction=reduction).cosh().sum()
        (g,) = lib.autograd.grad(loss, [x], create_graph=True)
        (g2,) = lib.autograd.grad((g * g).sum(), [x])
        return g2.tolist()

    assert second(ag) == pytest.approx(second(torch), rel=1e-12)
