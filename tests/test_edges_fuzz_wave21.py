"""Fuzz waves 19–21 (issue 14): the kinds those runs found, each against PyTorch 2.13."""

import pytest

import autograd_lab as ag


def _outcome(run):
    """("ran", value) or ("raises", the error's class, whether it names an in-place change)."""
    try:
        return "ran", run()
    except Exception as error:
        return "raises", type(error).__name__, "inplace operation" in str(error)


PATHS = {
    "norm(p=0): no gradient arrives": lambda lib, v, x: lib.norm(lib.where(v != 0, x, v), p=0),
    "sum: a gradient arrives": lambda lib, v, x: lib.where(v != 0, x, v).sum(),
    "the view itself": lambda lib, v, x: v.sum(),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("op", ["div_", "mul_"])
def test_regression_an_inplace_op_through_a_view_is_checked_only_when_a_gradient_arrives(
    torch, path, op
):
    # fuzz seed 2705968: v1 = v0.movedim(-1, 0); v1.div_(v0) changes the v0 that div_ saved,
    # and a backward whose gradient stops at norm(p=0) then raised our "modified by an inplace
    # operation"; PyTorch keeps div_'s node inside CopySlices, which calls it (and so checks
    # what it saved) only when a gradient arrives
    def run(lib):
        x = lib.tensor([-2.0, 0.5], dtype=lib.float64).requires_grad_()
        base = x * 1.5
        view = base.movedim(-1, 0)
        getattr(view, op)(base)
        PATHS[path](lib, view, x).backward()
        return None if x.grad is None else x.grad.tolist()

    assert _outcome(lambda: run(ag)) == _outcome(lambda: run(torch))
