"""Conv1d, Conv2d, MaxPool2d, AvgPool2d and their F functions against PyTorch: the seeded initial
weights bit for bit, values and gradients (input, weight, bias) over strides, paddings ('same',
'valid', asymmetric), dilations, groups, ceil_mode and unbatched inputs, max pooling's indices,
double backward, reprs, state_dict keys and errors; and the blitz tutorial's LeNet end to end.
"""

import numpy as np
import pytest

import autograd_lab as ag
import autograd_lab.nn.functional as F
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck


def values(t):
    return t.detach().numpy()


def compare(torch, name, arrays, tol=1e-12, **kwargs):
    """F.<name>(*arrays, **kwargs) in both libraries: the same values, node and gradients."""
    rng = np.random.default_rng(1)
    results = []
    for lib in (ag, torch):
        tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = getattr(lib.nn.functional, name)(*tensors, **kwargs)
        upstream = rng.standard_normal(tuple(out.shape))
        (out * lib.tensor(upstream)).sum().backward()
        rng = np.random.default_rng(1)  # the same upstream gradient for the second library
        node = out.grad_fn.name() if lib is ag else type(out.grad_fn).__name__
        results.append((node, out, [t.grad for t in tensors]))
    (node, out, grads), (their_node, their_out, their_grads) = results
    assert node == their_node
    assert out.shape == their_out.shape
    np.testing.assert_allclose(values(out), values(their_out), rtol=tol, atol=tol)
    for g, h in zip(grads, their_grads):
        np.testing.assert_allclose(values(g), values(h), rtol=tol, atol=tol)


def draw(*shapes):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape) for shape in shapes]


# ---- F.conv2d and F.conv1d ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, w, kwargs",
    [
        ((2, 3, 7, 6), (4, 3, 3, 3), {}),
        ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": 2, "padding": 1}),
        ((2, 3, 8, 9), (4, 3, 3, 3), {"stride": (2, 3), "padding": (0, 2), "dilation": (2, 1)}),
        ((1, 4, 6, 6), (6, 2, 3, 3), {"groups": 2, "padding": 1}),
        ((1, 4, 6, 6), (4, 1, 2, 2), {"groups": 4}),  # depthwise
        ((2, 2, 5, 6), (3, 2, 3, 3), {"padding": "same"}),
        ((2, 2, 5, 6), (3, 2, 2, 4), {"padding": "same", "dilation": 1}),  # odd total padding
        ((2, 2, 5, 6), (3, 2, 2, 2), {"padding": "same", "dilation": 2}),
        ((2, 2, 5, 6), (3, 2, 3, 3), {"padding": "valid", "stride": (1, 2)}),
        ((3, 7, 5), (2, 3, 3, 3), {"padding": 1}),  # one image, unbatched
    ],
)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_values_and_gradients(torch, x, w, kwargs, bias):
    arrays = draw(x, w, (w[0],))
    if not bias:
        arrays = arrays[:2]
    if len(x) == 3:
        arrays[1] = draw((w[0], x[0], 3, 3))[0]
    compare(torch, "conv2d", arrays, **kwargs)


@pytest.mark.parametrize(
    "x, w, kwargs",
    [
        ((2, 3, 9), (4, 3, 3), {}),
        ((2, 3, 9), (4, 3, 2), {"stride": 2, "padding": 2, "dilation": 2}),
        ((2, 4, 9), (6, 2, 4), {"groups": 2, "padding": "same"}),
        ((3, 9), (2, 3, 3), {}),  # one signal, unbatched
    ],
)
def test_conv1d_values_and_gradients(torch, x, w, kwargs):
    compare(torch, "conv1d", draw(x, w, (w[0],)), **kwargs)


def test_conv2d_in_float32(torch):
    arrays = [a.astype(np.float32) for a in draw((2, 3, 9, 9), (5, 3, 3, 3), (5,))]
    compare(torch, "conv2d", arrays, tol=1e-5, stride=2, padding=1)


def test_convolution_gradcheck_and_double_backward():
    x, w, b = (ag.tensor(a, requires_grad=True) for a in draw((1, 4, 5, 4), (2, 2, 3, 2), (2,)))
    for kwargs in ({"stride": 2, "padding": 1, "groups": 2}, {"dilation": (2, 1), "groups": 2}):
        assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))
        assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))
    s, k = (ag.tensor(a, requires_grad=True) for a in draw((2, 2, 6), (3, 2, 3)))
    assert gradgradcheck(lambda s, k: F.conv1d(s, k, stride=2, padding=1), (s, k))


def test_conv2d_second_derivatives_match_pytorch(torch):
    """A gradient penalty: the norm of d(out)/d(input), differentiated again."""
    arrays = draw((1, 2, 5, 5), (3, 2, 3, 3))
    results = []
    for lib in (ag, torch):
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.nn.functional.conv2d(x, w, padding=1).tanh().sum()
        (grad_x,) = lib.autograd.grad(out, x, create_graph=True)
        (grad_x**2).sum().backward()
        results.append((x.grad, w.grad))
    for a, b in zip(*results):
        np.testing.assert_allclose(values(a), values(b), rtol=1e-10, atol=1e-12)


def test_conv_errors_are_pytorchs(lib):
    x = lib.randn(1, 2, 5, 5)
    conv2d = lib.nn.functional.conv2d
    cases = [
        (lambda: conv2d(x, lib.randn(3, 1, 3, 3)), "expected input.*to have 1 channels"),
        (lambda: conv2d(x, lib.randn(3, 2, 6, 6)), "Kernel size can't be greater"),
        (lambda: conv2d(x[0, 0], lib.randn(3, 2, 3, 3)), "Expected 3D .unbatched. or 4D"),
        (lambda: conv2d(x, lib.randn(3, 2, 3, 3), stride=2, padding="same"), "strided"),
        (lambda: conv2d(x, lib.randn(3, 2, 3, 3), padding="foo"), "Invalid padding string"),
        (lambda: conv2d(x, lib.randn(3, 2, 3, 3), lib.randn(4)), "expected bias to be 1-dim"),
        (lambda: conv2d(x, lib.randn(3, 1, 3, 3), groups=2), "divisible by 2 at dimension 0"),
        (lambda: conv2d(x, lib.randn(3, 2, 3, 3), stride=0), "non-positive stride"),
        (lambda: conv2d(x, lib.randn(3, 2, 3, 3), padding=-1), "negative padding"),
        (lambda: conv2d(x, lib.randn(3, 2, 3, 3), dilation=0), "dilation should be greater"),
        (lambda: conv2d(x.double(), lib.randn(3, 2, 3, 3)), "expected scalar type"),
        (lambda: lib.nn.functional.conv1d(lib.randn(1, 2, 5), lib.randn(3, 2, 3), stride=(1, 1)),
         "a list of 1 values"),
    ]  # fmt: skip
    for call, words in cases:
        with pytest.raises(RuntimeError, match=words):
            call()


def test_conv_on_cuda_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="conv2d.*CUDA backend"):
        F.conv2d(ag.randn(1, 1, 4, 4).cuda(), ag.randn(1, 1, 2, 2).cuda())


# ---- nn.Conv1d, nn.Conv2d -------------------------------------------------------------------------

CONV_LAYERS = [
    ("Conv2d", (1, 6, 5), {}),
    ("Conv2d", (3, 16, (3, 5)), {"stride": 2, "padding": 1}),
    ("Conv2d", (4, 6, 3), {"padding": "same", "dilation": 2, "groups": 2, "bias": False}),
    ("Conv2d", (4, 6, 3), {"padding": "valid"}),
    ("Conv1d", (2, 3, 3), {"padding": "same"}),
    ("Conv1d", (4, 8, 5), {"stride": 3, "padding": 2, "groups": 4}),
]


@pytest.mark.parametrize("name, args, kwargs", CONV_LAYERS)
def test_conv_layers_init_repr_and_state_dict_are_pytorchs(torch, name, args, kwargs):
    ag.manual_seed(0)
    ours = getattr(ag.nn, name)(*args, **kwargs)
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (key, p), (_, q) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert p.shape == q.shape
        np.testing.assert_array_equal(values(p), values(q), err_msg=key)  # the same draws
    assert ours.padding == theirs.padding and ours.kernel_size == theirs.kernel_size
    assert ours.stride == theirs.stride and ours.dilation == theirs.dilation


def test_conv_layer_argument_errors_are_pytorchs(lib):
    cases = [
        (lambda: lib.nn.Conv2d(3, 4, 3, groups=2), "in_channels must be divisible by groups"),
        (lambda: lib.nn.Conv2d(4, 3, 3, groups=2), "out_channels must be divisible by groups"),
        (lambda: lib.nn.Conv2d(4, 3, 3, padding="foo"), "Invalid padding string 'foo'"),
        (lambda: lib.nn.Conv2d(4, 3, 3, stride=2, padding="same"), "strided convolutions"),
        (lambda: lib.nn.Conv2d(4, 3, 3, padding_mode="bad"), "padding_mode must be one of"),
    ]
    for call, words in cases:
        with pytest.raises(ValueError, match=words):
            call()


def test_padding_modes_other_than_zeros_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="padding_mode='reflect' is not supported"):
        ag.nn.Conv2d(1, 1, 3, padding=1, padding_mode="reflect")


# ---- pooling --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 6, 6), {"kernel_size": 2}),
        ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
        ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
        ((1, 2, 8, 7), {"kernel_size": (2, 3), "stride": 1, "dilation": 2}),
        ((1, 2, 8, 7), {"kernel_size": 3, "stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
        ((3, 6, 6), {"kernel_size": 2}),  # one image, unbatched
    ],
)
def test_max_pool2d_values_gradients_and_indices(torch, shape, kwargs):
    (x,) = draw(shape)
    compare(torch, "max_pool2d", [x], **kwargs)
    ours, i = F.max_pool2d(ag.tensor(x), return_indices=True, **kwargs)
    theirs, j = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kwargs)
    assert i.dtype == ag.int64
    np.testing.assert_array_equal(i.numpy(), j.numpy())


def test_max_pool2d_ties_and_overlaps_as_pytorch(torch):
    """Integer-valued images: many ties (the first maximum wins) and windows sharing a maximum
    (its gradient adds up)."""
    x = np.random.default_rng(0).integers(0, 3, (2, 2, 6, 6)).astype(np.float64)
    compare(torch, "max_pool2d", [x], kernel_size=3, stride=1, padding=1)
    compare(torch, "max_pool2d", [x], kernel_size=2, stride=2)


@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 6, 6), {"kernel_size": 2}),
        ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
        ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
        ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
        ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                        "count_include_pad": False}),
        ((2, 3, 6, 6), {"kernel_size": (2, 3), "divisor_override": 4}),
        ((3, 6, 6), {"kernel_size": 2, "stride": 1}),
    ],
)  # fmt: skip
def test_avg_pool2d_values_and_gradients(torch, shape, kwargs):
    compare(torch, "avg_pool2d", draw(shape), **kwargs)


def test_pooling_gradcheck_and_double_backward():
    x = ag.tensor(draw((1, 2, 5, 5))[0], requires_grad=True)
    for f in (
        lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        lambda x: F.avg_pool2d(x, 2, stride=1, count_include_pad=False) ** 2,
        lambda x: F.max_pool2d(x, 2, stride=1) ** 2,
    ):
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


def test_pooling_layers_repr(torch):
    for name, args, kwargs in (
        ("MaxPool2d", (2,), {}),
        ("MaxPool2d", ((2, 3),), {"stride": 1, "padding": 1, "dilation": 2, "ceil_mode": True}),
        ("AvgPool2d", (2,), {}),
        ("AvgPool2d", (3, 1, 1), {"ceil_mode": True, "count_include_pad": False}),
    ):
        assert repr(getattr(ag.nn, name)(*args, **kwargs)) == repr(
            getattr(torch.nn, name)(*args, **kwargs)
        )
    x = draw((1, 1, 4, 4))[0]
    ours, i = ag.nn.MaxPool2d(2, return_indices=True)(ag.tensor(x))
    theirs, j = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(values(ours), values(theirs))
    np.testing.assert_array_equal(i.numpy(), j.numpy())


def test_pooling_errors_are_pytorchs(lib):
    x = lib.randn(1, 2, 5, 5)
    f = lib.nn.functional
    cases = [
        (lambda: f.max_pool2d(x, 2, padding=2), "pad should be at most half"),
        (lambda: f.avg_pool2d(x, 2, padding=2), "pad should be at most half"),
        (lambda: f.max_pool2d(x, 7), "Output size is too small"),
        (lambda: f.avg_pool2d(x, 7), "Output size is too small"),
        (lambda: f.max_pool2d(x[0, 0], 2), "non-empty 3D or 4D"),
        (lambda: f.max_pool2d(x, 2, stride=0), "stride should not be zero"),
        (lambda: f.avg_pool2d(x, 2, divisor_override=0), "divisor must be not zero"),
    ]
    for call, words in cases:
        with pytest.raises(RuntimeError, match=words):
            call()


# ---- the blitz tutorial's LeNet --------------------------------------------------------------------


def lenet(lib):
    """PyTorch's 60-minute blitz network: 1×32×32 -> conv 6@5×5 -> pool 2 -> conv 16@5×5 ->
    pool 2 -> 120 -> 84 -> 10, written once for either library."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    return Net()


def test_lenet_of_the_blitz_gives_pytorchs_numbers(torch):
    results = []
    for lib in (ag, torch):
        lib.manual_seed(0)
        net = lenet(lib)
        x = lib.randn(1, 1, 32, 32)
        out = net(x)
        loss = lib.nn.MSELoss()(out, lib.randn(1, 10))
        net.zero_grad()
        loss.backward()
        results.append((net, out, loss))
    (ours, out, loss), (theirs, their_out, their_loss) = results
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(values(p), values(q), err_msg=name)  # the same init
    np.testing.assert_allclose(values(out), values(their_out), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss.item(), their_loss.item(), rtol=1e-5)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(
            values(p.grad), values(q.grad), rtol=1e-4, atol=1e-6, err_msg=name
        )
