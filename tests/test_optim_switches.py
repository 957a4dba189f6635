"""PyTorch's implementation switches (foreach, fused, capturable, differentiable): taken, kept in
the param groups and printed as PyTorch prints them; differentiable=True is refused by name."""

import pytest

import autograd_lab as ag

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]
NAMES += ["Rprop", "ASGD"]


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_hold_pytorchs_keys_and_print_the_same(name, torch):
    ours = getattr(ag.optim, name)([ag.nn.Parameter(ag.zeros(2))], lr=0.1)
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    assert list(ours.param_groups[0]) == list(theirs.param_groups[0])  # the same keys, in order
    assert repr(ours) == repr(theirs)


def test_a_speed_switch_is_taken_and_changes_nothing():
    def train(**switches):
        w = ag.nn.Parameter(ag.tensor([1.0, -2.0]))
        optimizer = ag.optim.Adam([w], lr=0.1, **switches)
        for _ in range(3):
            optimizer.zero_grad()
            (w**2).sum().backward()
            optimizer.step()
        return w.tolist(), optimizer.param_groups[0]["foreach"]

    assert train() == ([w for w in train(foreach=True)[0]], None)
    assert train(foreach=True)[1] is True


def test_differentiable_true_and_unknown_switches_are_refused():
    w = [ag.nn.Parameter(ag.zeros(1))]
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        ag.optim.SGD(w, lr=0.1, differentiable=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'capturable'"):
        ag.optim.SGD(w, lr=0.1, capturable=True)  # SGD has no such switch in PyTorch either
