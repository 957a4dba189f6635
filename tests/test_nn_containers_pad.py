"""F.pad (constant mode), nn.ModuleDict and nn.ParameterList against PyTorch."""

import numpy as np
import pytest

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck


def values(t):
    return t.detach().numpy()


# ---- F.pad ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, pad, value",
    [
        ((2, 3), (1, 2), None),
        ((2, 3), (1, 1, 2, 0), 1.5),
        ((2, 3, 4), (0, 1, 1, 0, 2, 2), -1.0),
        ((2, 3), (-1, 2), 3.0),  # a negative amount crops
        ((2, 5), (-2, -1, 1, -1), None),
        ((4,), (3, 0), None),
    ],
)
def test_pad_values_and_gradients(torch, shape, pad, value):
    x_np = np.random.default_rng(0).standard_normal(shape)
    results = []
    for lib in (ag, torch):
        x = lib.tensor(x_np, requires_grad=True)
        out = lib.nn.functional.pad(x, pad, value=value)
        weights = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)
        (out * weights).sum().backward()
        node = out.grad_fn.name() if lib is ag else type(out.grad_fn).__name__
        results.append((node, out, x.grad))
    assert results[0][0] == results[1][0] == "ConstantPadNdBackward0"
    for a, b in zip(results[0][1:], results[1][1:]):
        assert a.shape == b.shape
        np.testing.assert_array_equal(values(a), values(b))


def test_pad_of_integers_and_double_backward(torch):
    ours = F.pad(ag.tensor([1, 2]), (1, 1), value=2.5)
    theirs = torch.nn.functional.pad(torch.tensor([1, 2]), (1, 1), value=2.5)
    assert ours.dtype == ag.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = ag.randn(2, 3, dtype=ag.float64, requires_grad=True)
    assert gradcheck(lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), (x,))
    assert gradgradcheck(lambda x: F.pad(x, (1, -1, 2, 0)) ** 2, (x,))


def test_pad_errors(lib):
    x = lib.randn(2, 3)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        lib.nn.functional.pad(x, (1,))
    with pytest.raises(RuntimeError, match="less than or equal to two times the input dimension"):
        lib.nn.functional.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        lib.nn.functional.pad(x, (-2, -2))
    with pytest.raises(NotImplementedError):
        lib.nn.functional.pad(x, (1, 1), mode="bad")


def test_pad_modes_other_than_constant_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="mode='reflect'.* not supported"):
        F.pad(ag.randn(1, 2, 3), (1, 1), mode="reflect")


# ---- ModuleDict and ParameterList -----------------------------------------------------------------


def build(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = lib.nn.ModuleDict({"cls": lib.nn.Linear(4, 3), "box": lib.nn.Linear(4, 2)})
            self.scales = lib.nn.ParameterList([lib.ones(3), lib.nn.Parameter(lib.zeros(2))])

        def forward(self, x):
            return [self.heads[k](x) * s for k, s in zip(self.heads, self.scales)]

    lib.manual_seed(0)
    return Net()


def test_module_dict_and_parameter_list_register_as_pytorch(torch):
    ours, theirs = build(ag), build(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours.heads) == repr(theirs.heads)
    # ParameterList prints as PyTorch's, dtype names included
    assert repr(ours.scales) == repr(theirs.scales)
    assert repr(ours) == repr(theirs)
    x_np = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    for a, b in zip(ours(ag.tensor(x_np)), theirs(torch.tensor(x_np))):
        np.testing.assert_allclose(values(a), values(b), rtol=1e-6)


def test_module_dict_behaves_as_a_dict(lib):
    d = lib.nn.ModuleDict()
    d["a"] = lib.nn.ReLU()
    d.update([("b", lib.nn.Tanh()), ("c", lib.nn.Sigmoid())])
    assert list(d) == list(d.keys()) == ["a", "b", "c"] and len(d) == 3 and "b" in d
    assert isinstance(d.pop("b"), lib.nn.Tanh) and list(d) == ["a", "c"]
    del d["a"]
    assert [k for k, _ in d.items()] == ["c"] and len(list(d.values())) == 1
    d.clear()
    assert len(d) == 0
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        d.update([("x",)])


def test_parameter_list_behaves_as_a_list(lib):
    p = lib.nn.ParameterList([lib.ones(2)])
    p.append(lib.nn.Parameter(lib.zeros(3)))
    p += [lib.ones(1)]
    assert len(p) == 3 and [q.numel() for q in p] == [2, 3, 1]
    assert all(isinstance(q, lib.nn.Parameter) and q.requires_grad for q in p)
    assert p[-1].numel() == 1 and len(p[1:]) == 2
    p[0] = lib.nn.Parameter(lib.zeros(5))
    assert p[0].numel() == 5 and len(list(p.parameters())) == 3


# ---- F.normalize ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, dim", [(2.0, 1), (2.0, 0), (1.0, 1), (3.0, 1), (float("inf"), 1), (2, (0, 1))]
)
def test_normalize_values_and_gradients_incl_zero_rows_and_ties(torch, p, dim):
    x_np = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, -2.0], [0.5, -3.0, 1.5]])  # zeros, a tie
    results = []
    for lib in (ag, torch):
        x = lib.tensor(x_np, requires_grad=True)
        out = lib.nn.functional.normalize(x, p=p, dim=dim)
        (out * lib.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        results.append((out, x.grad))
    for a, b in zip(*results):
        np.testing.assert_allclose(values(a), values(b), rtol=1e-10, atol=1e-12)


def test_normalize_float32_and_errors(torch):
    x_np = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    ours = F.normalize(ag.tensor(x_np))
    np.testing.assert_allclose(
        values(ours), values(torch.nn.functional.normalize(torch.tensor(x_np))), rtol=1e-6
    )
    assert ours.dtype == ag.float32
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        F.normalize(ag.tensor([3, 4]), dim=0)
