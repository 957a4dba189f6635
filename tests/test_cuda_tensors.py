"""Tensors on device='cuda': making them, moving them, printing them, gradients across devices,
mixing devices, and a training step that stays on the GPU (no hidden host copies).

Runs in numba's CUDA simulator (tests/conftest.py switches it on); on a GPU with
AUTOGRAD_LAB_REAL_CUDA=1. Every op of the op table is compared with the CPU in test_cuda_ops.py.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck

pytestmark = pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")

CUDA = ag.device("cuda", 0)


def count_transfers():
    from autograd_lab.backend.cuda import count_transfers

    return count_transfers()


def host(t):
    """A tensor's values as numpy, from either device."""
    return t.detach().cpu().numpy()


# ---- where CUDA is, and where it is not --------------------------------------------------------


def test_cuda_queries():
    assert ag.cuda.is_available() is True
    assert ag.cuda.device_count() >= 1 and ag.cuda.current_device() == 0
    name = ag.cuda.get_device_name()
    assert isinstance(name, str) and name
    assert ag.cuda.get_device_name("cuda:0") == ag.cuda.get_device_name(0) == name
    if ag.cuda.simulator_enabled():
        assert "simulator" in name
    ag.cuda.synchronize()
    with pytest.raises(RuntimeError, match="CUDA device 1 does not exist"):
        ag.cuda.synchronize("cuda:1")


def _run_python(script, env_changes):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(env_changes)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


NO_GPU = pytest.mark.skipif(ag.cuda._nvidia_gpu_count() > 0, reason="this machine has a GPU")


@NO_GPU
def test_without_a_gpu_or_the_simulator_cuda_is_refused_with_the_fix():
    out = _run_python(
        """
        import sys
        import autograd_lab as ag
        print("numba imported:", "numba" in sys.modules)
        print("available:", ag.cuda.is_available(), ag.cuda.device_count())
        for action in (lambda: ag.ones(2).cuda(), lambda: ag.ones(2).to("cuda"),
                       lambda: ag.ones(2, device="cuda"), ag.cuda.synchronize):
            try:
                action()
            except RuntimeError as error:
                print("refused:", error)
        print("simulator on:", ag.cuda.use_simulator_if_no_gpu())
        print("works:", ag.ones(2, device="cuda").sum().item())
        """,
        {},
    )
    assert "numba imported: False" in out  # import autograd_lab stays light
    assert "available: False 0" in out
    refusals = [line for line in out.splitlines() if line.startswith("refused:")]
    assert len(refusals) == 4
    for message in refusals:
        assert "CUDA is not available" in message and "no NVIDIA GPU" in message
        assert "NUMBA_ENABLE_CUDASIM=1" in message and "use_simulator_if_no_gpu()" in message
    assert "simulator on: True" in out and "works: 2.0" in out


@NO_GPU
def test_use_simulator_if_no_gpu_is_too_late_once_numba_cuda_runs_without_it():
    out = _run_python(
        """
        import numba.cuda
        import autograd_lab as ag
        try:
            ag.cuda.use_simulator_if_no_gpu()
        except RuntimeError as error:
            print("refused:", error)
        print("available:", ag.cuda.is_available())
        """,
        {},
    )
    assert "refused: numba.cuda was already imported without the simulator" in out
    assert "restart" in out and "available: False" in out


# ---- making tensors on the GPU --------------------------------------------------------------------

MAKERS = {
    "tensor": lambda device: ag.tensor([[1, 2], [3, 4]], device=device),
    "tensor float64": lambda device: ag.tensor([1.5, -2.0], dtype=ag.float64, device=device),
    "zeros": lambda device: ag.zeros(2, 3, device=device),
    "ones": lambda device: ag.ones((2,), dtype=ag.int64, device=device),
    "empty": lambda device: ag.empty(0, device=device),
    "full": lambda device: ag.full((2, 2), 7.0, device=device),
    "arange": lambda device: ag.arange(5, device=device),
    "arange float": lambda device: ag.arange(0.0, 1.0, 0.25, device=device),
    "linspace": lambda device: ag.linspace(0, 1, 5, device=device),
    "eye": lambda device: ag.eye(3, device=device),
    "rand": lambda device: ag.rand(2, 3, device=device),
    "randn": lambda device: ag.randn(4, dtype=ag.float64, device=device),
    "randint": lambda device: ag.randint(0, 10, (3,), device=device),
    "randperm": lambda device: ag.randperm(4, device=device),
    "normal": lambda device: ag.normal(0.0, 2.0, (3,), device=device),
    "as_tensor": lambda device: ag.as_tensor(np.arange(3.0), device=device),
    "zeros_like": lambda device: ag.zeros_like(ag.ones(2, device=device)),
    "full_like": lambda device: ag.full_like(ag.ones(2, device=device), 3),
    "randn_like": lambda device: ag.randn_like(ag.ones(2, device=device)),
}


@pytest.mark.parametrize("name", MAKERS)
def test_creation_functions_make_the_same_tensor_on_the_gpu(name):
    ag.manual_seed(0)
    on_gpu = MAKERS[name]("cuda")
    ag.manual_seed(0)
    on_cpu = MAKERS[name]("cpu")
    assert on_gpu.device == CUDA and on_gpu.is_cuda and not on_cpu.is_cuda
    assert on_gpu.dtype == on_cpu.dtype and on_gpu.shape == on_cpu.shape
    np.testing.assert_array_equal(host(on_gpu), on_cpu.numpy())  # same seed, same numbers


def test_a_cuda_leaf_requires_grad_and_the_like_functions_can_change_device():
    x = ag.zeros(2, device="cuda", requires_grad=True)
    assert x.is_leaf and x.requires_grad and x.is_cuda
    assert ag.zeros_like(x, device="cpu").device == ag.device("cpu")
    assert ag.ones_like(ag.ones(2), device="cuda:0").device == CUDA
    assert ag.tensor(x).device == CUDA  # a copy of a CUDA tensor stays on the GPU


def test_with_device_makes_it_the_default_of_the_creation_functions():
    with ag.device("cuda"):
        made = [ag.tensor([1, 2]), ag.zeros(2), ag.arange(3), ag.randn(2), ag.full((1,), 2.0)]
        assert ag.tensor([1.0], device="cpu").device == ag.device("cpu")  # device= still wins
        with ag.device("cpu"):
            assert not ag.ones(1).is_cuda
        assert ag.ones(1).is_cuda
    assert all(t.device == CUDA for t in made)
    assert not ag.ones(1).is_cuda and not ag.from_numpy(np.ones(1)).is_cuda


def test_filling_on_the_gpu_copies_nothing_from_the_host():
    with count_transfers() as moved:
        ag.zeros(3, 2, device="cuda"), ag.full((2,), 7, device="cuda"), ag.eye(2, device="cuda")
        ag.arange(4, device="cuda"), ag.ones_like(ag.ones(3, device="cuda"))
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    with count_transfers() as moved:
        ag.tensor([1.0, 2.0], device="cuda")  # data from Python: one copy to the GPU
    assert (moved.host_to_device, moved.device_to_host) == (1, 0)


def test_dtypes_the_gpu_lacks_are_refused_with_a_fix():
    with pytest.raises(TypeError, match="float16 is not supported on the CUDA backend.*Fix"):
        ag.ones(2, dtype=ag.float16).cuda()


# ---- moving tensors ---------------------------------------------------------------------------------


def test_to_cuda_cpu_and_their_spellings():
    x = ag.tensor([1.0, 2.0])
    moves = (x.to("cuda"), x.cuda(), x.cuda(0), x.to("cuda:0"), x.to(ag.device("cuda")),
             x.to(device="cuda"), x.to(ag.zeros(1, device="cuda")))  # fmt: skip
    for moved in moves:
        assert moved.device == CUDA and repr(moved.device) == "device(type='cuda', index=0)"
        assert moved.dtype == ag.float32 and moved.cpu().tolist() == [1.0, 2.0]
    g = x.cuda()
    assert g.cuda() is g and g.to("cuda") is g and x.cpu() is x and g.cpu() is not g
    assert g.to("cuda", copy=True) is not g
    both = x.to("cuda", ag.float64)  # device and dtype in one recorded copy
    assert both.device == CUDA and both.dtype == ag.float64
    assert g.stride() == (1,) and g.is_contiguous() and g.numel() == 2


def test_asking_for_a_second_gpu_fails_clearly():
    with pytest.raises(RuntimeError, match="invalid device ordinal") as error:
        ag.ones(2).to("cuda:1")
    assert "cuda:0" in str(error.value)


def test_repr_shows_the_device_like_pytorch():
    assert repr(ag.tensor([1.0, 2.5], device="cuda")) == "tensor([1.0000, 2.5000], device='cuda:0')"
    x = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(ag.tensor([1, 2], dtype=ag.float64, device="cuda")) == (
        "tensor([1., 2.], device='cuda:0', dtype=torch.float64)"
    )
    assert repr(ag.zeros(0, device="cuda")) == "tensor([], device='cuda:0')"


def test_numpy_of_a_cuda_tensor_says_to_copy_it_to_the_host_first():
    x = ag.ones(2, device="cuda")
    message = r"can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu\(\) to copy"
    with pytest.raises(TypeError, match=message):
        x.numpy()
    with pytest.raises(TypeError, match=message):
        np.asarray(x)
    assert x.cpu().numpy().tolist() == [1.0, 1.0]


def test_item_tolist_and_printing_are_the_counted_copies():
    x = ag.tensor([3.5, 1.0], device="cuda")
    with count_transfers() as moved:
        total = x.sum()
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    with count_transfers() as moved:
        assert total.item() == 4.5
    assert (moved.host_to_device, moved.device_to_host) == (0, 1)
    assert moved.bytes_device_to_host == 4  # one float32
    with count_transfers() as moved:
        assert x.tolist() == [3.5, 1.0] and float(total) == 4.5 and bool(total)
        repr(x)
    assert moved.device_to_host == 4 and moved.host_to_device == 0


# ---- gradients across devices -------------------------------------------------------------------------


def test_gradients_flow_back_across_a_device_move():
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)  # a CPU leaf
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0" and y.is_cuda
    (y * y).sum().backward()
    assert not x.grad.is_cuda and x.grad.tolist() == [2.0, 4.0, 6.0]

    w = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)  # a CUDA leaf
    (w.cpu() * 3).sum().backward()
    assert w.grad.is_cuda and w.grad.cpu().tolist() == [3.0, 3.0]
    (w * w).sum().backward()  # accumulates, on the GPU
    assert w.grad.is_cuda and w.grad.cpu().tolist() == [5.0, 7.0]


def test_a_gradient_lives_on_its_tensors_device():
    w = ag.ones(2, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="expected device cuda:0 but got cpu") as error:
        (w * 2).backward(ag.ones(2))
    assert "gradient.to(tensor.device)" in str(error.value)
    with pytest.raises(RuntimeError, match="assigned grad is on cpu but the tensor is on cuda:0"):
        w.grad = ag.ones(2)
    w.grad = ag.ones(2, device="cuda")
    assert w.grad.is_cuda


def test_pickling_and_deep_copies_keep_a_tensor_on_the_gpu():
    import copy
    import pickle

    x = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    for twin in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert twin.is_cuda and twin.requires_grad and twin.cpu().tolist() == [1.0, 2.0]


def test_first_and_second_derivatives_through_device_moves():
    x = ag.tensor([0.3, -1.2], dtype=ag.float64, requires_grad=True)

    def fn(t):
        g = t.cuda()
        return (g.tanh() * g).cpu()

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# ---- mixing devices ---------------------------------------------------------------------------------

MIXED = {
    "add": lambda c, g: c + g,
    "mul": lambda c, g: g * c,
    "maximum": lambda c, g: ag.maximum(g, c),
    "matmul": lambda c, g: c.reshape(1, 3) @ g.reshape(3, 1),
    "cat": lambda c, g: ag.cat([g, c]),
    "stack": lambda c, g: ag.stack([c, g]),
    "where": lambda c, g: ag.where(g > 0, c, g),
    "where condition": lambda c, g: ag.where(c > 0, g, g),
    "in place into CPU": lambda c, g: c.add_(g),
    "in place into CUDA": lambda c, g: g.mul_(c),
    # through index tensors (index_put_); a slice over all of c is a copy_, which (as PyTorch's
    # copy_) may copy across devices: see the test below
    "setitem": lambda c, g: c.__setitem__(ag.tensor([0, 1, 2]), g),
}


def test_assigning_all_of_a_cpu_tensor_from_a_cuda_one_copies_as_copy_does():
    c, g = ag.tensor([1.0, -2.0, 3.0]), ag.tensor([1.0, 2.0, -3.0], device="cuda")
    c[:] = g  # PyTorch's setitem hands a slice over everything to copy_
    assert c.device.type == "cpu" and c.tolist() == [1.0, 2.0, -3.0]


@pytest.mark.parametrize("name", MIXED)
def test_mixing_devices_in_one_op_names_both(name):
    c, g = ag.tensor([1.0, -2.0, 3.0]), ag.tensor([1.0, 2.0, -3.0], device="cuda")
    with pytest.raises(
        RuntimeError, match="Expected all tensors to be on the same device"
    ) as error:
        MIXED[name](c, g)
    assert "cuda:0" in str(error.value) and "cpu" in str(error.value)


def test_cuda_indices_cannot_index_a_cpu_tensor():
    c, i = ag.tensor([1.0, -2.0, 3.0]), ag.tensor([0, 2], device="cuda")
    for action in (lambda: c[i], lambda: c.__setitem__(i, 0.0)):
        with pytest.raises(
            RuntimeError,
            match=r"indices should be either on cpu or on the same "
            r"device as the indexed tensor \(cpu\), but they are on cuda:0",
        ):
            action()


def test_what_may_mix_devices_as_in_pytorch():
    g = ag.tensor([1.0, 2.0], device="cuda")
    assert (g * ag.tensor(3.0)).cpu().tolist() == [3.0, 6.0]  # a 0-d CPU tensor is a number
    assert g[ag.tensor([1, 0])].cpu().tolist() == [2.0, 1.0]  # CPU indices index a CUDA tensor
    c = ag.zeros(2)
    c.copy_(g)  # copy_ copies across devices
    assert c.tolist() == [1.0, 2.0] and not c.is_cuda
    g.copy_(ag.tensor([5.0, 6.0]))
    assert g.is_cuda and g.cpu().tolist() == [5.0, 6.0]


# ---- training on the GPU: no hidden host copies -------------------------------------------------


def _mlp_step(device):
    """A two-layer network's forward and backward: matmul, add, relu, tanh, softmax, log_softmax,
    indexing, mean, sum. Returns the loss, the parameters, and the host copies made meanwhile."""
    rng = np.random.default_rng(0)
    x = ag.tensor(rng.standard_normal((4, 3)), device=device)
    labels, rows = ag.tensor([0, 2, 1, 0], device=device), ag.arange(4, device=device)
    params = [ag.tensor(rng.standard_normal(shape), device=device, requires_grad=True)
              for shape in ((3, 5), (5,), (5, 3), (3,))]  # fmt: skip
    w1, b1, w2, b2 = params
    with count_transfers() as moved:
        hidden = (x @ w1 + b1).relu()
        scores = (hidden @ w2 + b2).tanh()
        log_p = scores.log_softmax(-1)
        loss = -log_p[rows, labels].mean() + 0.1 * scores.softmax(-1)[:, 0].sum()
        loss = loss + 0.01 * (w1 * w1).sum()
        loss.backward()
    return loss, params, moved


def test_a_training_step_stays_on_the_gpu_until_item():
    loss, params, moved = _mlp_step("cuda")
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    with count_transfers() as moved:
        value = loss.item()
    assert (moved.host_to_device, moved.device_to_host) == (0, 1)
    expected, expected_params, _ = _mlp_step("cpu")
    assert value == pytest.approx(expected.item(), rel=1e-12)
    for p, q in zip(params, expected_params):
        assert p.grad.is_cuda
        np.testing.assert_allclose(host(p.grad), q.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_linear_layer_moves_to_the_gpu_and_learns_there():
    ag.manual_seed(0)
    layer = ag.nn.Linear(3, 2)
    reference = ag.nn.Linear(3, 2)
    reference.load_state_dict(layer.state_dict())
    assert layer.to("cuda") is layer
    assert layer.weight.is_cuda and layer.bias.is_cuda
    assert isinstance(layer.weight, ag.nn.Parameter) and layer.weight.requires_grad
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 4
    out = layer(ag.tensor(x, device="cuda"))
    expected = reference(ag.tensor(x))
    assert out.is_cuda and out.grad_fn.name() == expected.grad_fn.name()
    np.testing.assert_allclose(host(out), expected.detach().numpy(), rtol=1e-6)
    out.square().sum().backward()
    expected.square().sum().backward()
    assert layer.weight.grad.is_cuda
    np.testing.assert_allclose(host(layer.weight.grad), reference.weight.grad.numpy(), rtol=1e-5)
    assert layer.cpu().weight.device == ag.device("cpu")


@pytest.mark.parametrize(
    "make_optimizer",
    [lambda ps: ag.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
     lambda ps: ag.optim.Adam(ps, lr=0.1, weight_decay=0.01)],
    ids=["SGD", "Adam"],
)  # fmt: skip
def test_optimizer_steps_on_cuda_parameters_stay_on_the_gpu(make_optimizer):
    start = np.array([[0.5, -1.0], [2.0, 0.25]])
    results = {}
    for device in ("cpu", "cuda"):
        w = ag.tensor(start, device=device, requires_grad=True)
        optimizer = make_optimizer([w])
        for _ in range(2):
            optimizer.zero_grad()
            (w * w * w).sum().backward()
            with count_transfers() as moved:
                optimizer.step()
        results[device] = w
    assert results["cuda"].is_cuda
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    np.testing.assert_allclose(host(results["cuda"]), host(results["cpu"]), rtol=1e-6)
