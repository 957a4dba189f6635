"""autograd_lab.nn: Parameter, the Module machinery, layers and losses.

Tests that take `lib` run with autograd_lab and with PyTorch: passing with torch shows the rule
tested is PyTorch's. Layer tests copy PyTorch's weights into ours (through numpy and
load_state_dict) and compare outputs and gradients: float64 tight, float32 to 1e-5.
"""

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab import nn
from autograd_lab.autograd.gradcheck import gradcheck, gradgradcheck
from autograd_lab.nn import init


def values(t):
    return t.detach().numpy()


class TwoLayer:
    """The same small model for either library: fc1 -> relu -> fc2, plus a buffer and a shared
    layer (`again` is fc2 registered a second time)."""

    @staticmethod
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(3, 4)
                self.fc2 = lib.nn.Linear(4, 2, bias=False)
                self.register_buffer("steps", lib.tensor(0))
                self.register_buffer("scratch", lib.zeros(2), persistent=False)
                self.again = self.fc2

            def forward(self, x):
                return self.fc2(self.fc1(x).relu())

        return Net()


# ---- Parameter -----------------------------------------------------------------------------------


def test_parameter_repr_is_pytorchs(torch):
    for data in ([1.0, 2.5], [[1.0, 2.0]], []):
        theirs = torch.nn.Parameter(torch.tensor(data))
        assert repr(nn.Parameter(ag.tensor(data))) == repr(theirs)
    assert repr(nn.Parameter(ag.tensor([1, 2]), requires_grad=False)) == repr(
        torch.nn.Parameter(torch.tensor([1, 2]), requires_grad=False)
    )
    assert repr(nn.Parameter()) == repr(torch.nn.Parameter())


def test_parameter_is_a_leaf_sharing_storage(lib):
    x = lib.ones(3, requires_grad=True) * 2  # not a leaf
    p = lib.nn.Parameter(x)
    assert isinstance(p, lib.Tensor) and p.is_leaf and p.requires_grad
    with lib.no_grad():
        p[0] = 5.0
    assert x[0].item() == 5.0


def test_parameter_needs_a_tensor():
    with pytest.raises(TypeError, match=r"expects a Tensor, got list.*nn.Parameter\(torch.tensor"):
        nn.Parameter([1.0, 2.0])


def test_parameter_of_integers_cannot_require_grad(lib):
    with pytest.raises(RuntimeError):
        lib.nn.Parameter(lib.tensor([1, 2]))


def test_results_of_ops_on_parameters_are_plain_tensors(lib):
    p = lib.nn.Parameter(lib.ones(2, 2))
    for result in (p * 2, p + p, p @ p, p[0], p.detach(), p.data, p.sum(), p.reshape(4)):
        assert type(result) is lib.Tensor


def test_parameter_works_in_every_kind_of_op_forward_and_backward(torch):
    """Parameters through elementwise, reduction, shape, linalg and indexing ops, twice: the grad
    accumulates over the two backward passes exactly as PyTorch's does."""
    rng = np.random.default_rng(0)
    w_np, v_np = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def run(lib):
        w, v = lib.nn.Parameter(lib.tensor(w_np)), lib.nn.Parameter(lib.tensor(v_np))
        for _ in range(2):
            h = (w @ v).tanh() * w[:, 0] + w.exp().sum(dim=1)
            out = lib.cat([h, w.T.reshape(-1)]).softmax(dim=0).log().sum() + (v**2).mean()
            out.backward()
        return out, w.grad, v.grad

    for ours, theirs in zip(run(ag), run(torch)):
        np.testing.assert_allclose(values(ours), values(theirs), rtol=1e-12, atol=1e-12)


def test_gradcheck_through_parameters():
    w = nn.Parameter(ag.randn(3, 2, dtype=ag.float64))
    x = nn.Parameter(ag.randn(4, 3, dtype=ag.float64))
    assert gradcheck(lambda w, x: (x @ w).sigmoid().sum(dim=0), (w, x))
    assert gradgradcheck(lambda w, x: (x @ w).tanh(), (w, x))


def test_deepcopy_and_pickle_keep_a_parameter(lib):
    p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    p.grad = lib.ones(2)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is lib.nn.Parameter and q.requires_grad
        assert q.tolist() == [1.0, 2.0] and q.grad is None
        with lib.no_grad():
            q.zero_()
        assert p.tolist() == [1.0, 2.0]  # a copy, not a view


def test_viewer_shows_parameters_as_parameters():
    w, x = nn.Parameter(ag.ones(2)), ag.ones(2, requires_grad=True)
    g = ag.viz.graph.snapshot((w * x).sum(), names={"w": w, "x": x})
    roles = {n["label"]: n["role"] for n in g.nodes if n["kind"] == "tensor"}
    assert roles["w"] == "parameter" and roles["x"] == "input"


# ---- registering and finding parts -----------------------------------------------------------------


def test_assignment_registers_parameters_buffers_and_children(lib):
    net = TwoLayer.build(lib)
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "fc2"]  # `again` is fc2: listed once
    assert list(net._modules) == ["fc1", "fc2", "again"]
    assert net.fc2 is net.again and net.fc1.bias is list(net.parameters())[1]
    assert len(list(net.parameters())) == 3 and len(list(net.buffers())) == 2


def test_named_parameters_prefix_recurse_and_duplicates(lib):
    net = TwoLayer.build(lib)
    assert [n for n, _ in net.named_parameters(prefix="net")][:1] == ["net.fc1.weight"]
    assert list(net.named_parameters(recurse=False)) == []
    assert list(net.fc1.named_parameters(recurse=False))[1][0] == "bias"
    names = [n for n, _ in net.named_parameters(remove_duplicate=False)]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "again.weight"]


def test_named_modules_and_modules(lib):
    net = TwoLayer.build(lib)
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "fc2"]
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == ["", "fc1", "fc2", "again"]
    assert [n for n, _ in net.named_modules(prefix="m")] == ["m", "m.fc1", "m.fc2"]
    assert list(net.modules())[0] is net and len(list(net.children())) == 2


def test_a_parameter_shared_by_two_modules_is_listed_once(lib):
    a, b = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)
    b.weight = a.weight
    seq = lib.nn.Sequential(a, b)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "1.bias"]


def test_register_parameter_none_declares_an_absent_parameter(lib):
    layer = lib.nn.Linear(2, 2, bias=False)
    assert layer.bias is None and "bias" in layer._parameters
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    layer.bias = lib.nn.Parameter(lib.zeros(2))  # a Parameter can fill the declared slot
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]


def test_reassigning_a_plain_attribute_as_a_parameter_moves_it(lib):
    m = lib.nn.Module()
    m.w = 3
    m.w = lib.nn.Parameter(lib.ones(1))
    assert "w" not in m.__dict__ and "w" in m._parameters
    m.w = None
    assert m.w is None and list(m.parameters()) == []


def test_wrong_types_for_registered_names(lib):
    layer = lib.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign '.*' as parameter 'weight'"):
        layer.weight = lib.ones(2, 2)
    seq = lib.nn.Sequential(lib.nn.ReLU())
    with pytest.raises(TypeError, match="cannot assign 'int' as child module '0'"):
        setattr(seq, "0", 3)
    layer.register_buffer("b", lib.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'b'"):
        layer.b = 3
    layer.b = lib.ones(1)  # a tensor replaces the buffer
    assert layer.b.tolist() == [1.0]


def test_parameter_assignment_error_says_how_to_fix():
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"self.weight = nn.Parameter\(tensor\).*copy_"):
        layer.weight = ag.ones(2, 2)


def test_register_checks_names_and_values(lib):
    m = lib.nn.Module()
    m.existing = 1
    with pytest.raises(KeyError, match=r'parameter name can.*t contain "\."'):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="buffer name can.*t be empty string"):
        m.register_buffer("", None)
    with pytest.raises(KeyError, match="attribute 'existing' already exists"):
        m.add_module("existing", lib.nn.ReLU())
    with pytest.raises(TypeError, match="parameter name should be a string"):
        m.register_parameter(1, None)
    with pytest.raises(TypeError, match="object to parameter 'c'"):
        m.register_parameter("c", lib.ones(1))
    with pytest.raises(TypeError, match="object to buffer 'c'"):
        m.register_buffer("c", 3)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("c", 3)
    made_by_an_op = lib.nn.Parameter(lib.zeros(1), requires_grad=False)
    made_by_an_op.add_(lib.ones(1, requires_grad=True))  # recorded: now it has a grad_fn
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'c'"):
        m.register_parameter("c", made_by_an_op)


def test_missing_attribute_error(lib):
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'wieght'"):
        lib.nn.Linear(2, 2).wieght  # noqa: B018


def test_delattr_unregisters(lib):
    net = TwoLayer.build(lib)
    del net.fc1.bias, net.steps, net.again
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == ["scratch"] and list(net._modules) == [
        "fc1",
        "fc2",
    ]
    with pytest.raises(AttributeError):
        net.steps  # noqa: B018


def test_dir_lists_registered_parts_for_tab_completion(lib):
    names = dir(TwoLayer.build(lib))
    assert {"fc1", "fc2", "again", "steps", "forward", "training"} <= set(names)
    assert "0" not in dir(lib.nn.Sequential(lib.nn.ReLU()))


def test_forgetting_super_init_is_explained(lib):
    class NoInit(lib.nn.Module):
        def __init__(self, what):
            self.part = what

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        NoInit(lib.nn.ReLU())
    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        NoInit(lib.nn.Parameter(lib.ones(1)))


def test_forgetting_super_init_names_the_fix():
    class NoInit(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) .*NoInit.__init__"):
        NoInit()

    class OnlyPlainAttributes(nn.Module):
        def __init__(self):
            self.size = 3

    with pytest.raises(AttributeError, match=r"never called.*super\(\).__init__\(\)"):
        list(OnlyPlainAttributes().parameters())


def test_missing_forward_names_the_class(lib):
    class NoForward(lib.nn.Module):
        pass

    with pytest.raises(NotImplementedError, match=r"Module \[NoForward\] is missing .*forward"):
        NoForward()(lib.ones(1))


def test_call_runs_forward_with_arguments():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    assert Scale()(ag.ones(2), factor=3.0).tolist() == [3.0, 3.0]


# ---- training state ----------------------------------------------------------------------------


def test_train_and_eval_reach_every_module(lib):
    net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.Dropout()))
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("no")


def test_requires_grad_freezes_and_unfreezes(lib):
    net = TwoLayer.build(lib)
    assert net.fc1.requires_grad_(False) is net.fc1
    assert [p.requires_grad for p in net.parameters()] == [False, False, True]
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())


def test_zero_grad(lib):
    layer = lib.nn.Linear(2, 1)
    layer(lib.ones(3, 2)).sum().backward()
    layer.zero_grad(set_to_none=False)
    assert layer.weight.grad.tolist() == [[0.0, 0.0]] and layer.bias.grad.tolist() == [0.0]
    layer.zero_grad()
    assert layer.weight.grad is None and layer.bias.grad is None


def test_zero_grad_detaches_a_grad_made_with_create_graph(lib):
    p = lib.nn.Parameter(lib.tensor([2.0]))
    m = lib.nn.Module()
    m.p = p
    (p**3).sum().backward(create_graph=True)
    assert p.grad.requires_grad
    m.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0] and not p.grad.requires_grad


def test_apply_visits_children_before_the_parent(lib):
    net = TwoLayer.build(lib)
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Linear", "Net"]


# ---- converting -----------------------------------------------------------------------------------


def test_double_converts_floats_in_place_and_keeps_the_parameter_objects(lib):
    net = TwoLayer.build(lib)
    net(lib.ones(1, 3)).sum().backward()
    params = list(net.parameters())
    assert net.double() is net
    assert list(net.parameters()) == params  # same objects: an optimizer still holds them
    assert all(p.dtype == lib.float64 and p.grad.dtype == lib.float64 for p in params)
    assert net.steps.dtype == lib.int64  # integer buffers keep their dtype
    assert net.scratch.dtype == lib.float64
    net.float()
    assert all(p.dtype == lib.float32 for p in params)
    net.to(lib.float64)
    assert net.fc1.weight.dtype == lib.float64 and net.fc1.weight.is_leaf
    net.to(lib.zeros(1))  # dtype (and device) of a tensor
    assert net.fc1.weight.dtype == lib.float32


def test_to_cpu_keeps_everything(lib):
    net = TwoLayer.build(lib)
    before = net.fc1.weight.detach().clone()
    assert net.to("cpu") is net and net.cpu() is net
    assert net.to(device="cpu", dtype=lib.float32).fc1.weight.tolist() == before.tolist()


def test_to_an_integer_dtype_is_refused(lib):
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        lib.nn.Linear(2, 2).to(lib.int64)


def test_gradients_after_double_are_float64():
    layer = nn.Linear(2, 1)
    layer(ag.ones(1, 2)).sum().backward()  # makes the weight's AccumulateGrad node (float32)
    layer.double().zero_grad()
    layer(ag.ones(1, 2, dtype=ag.float64)).sum().backward()
    assert layer.weight.grad.dtype == ag.float64


# ---- state_dict and load_state_dict ----------------------------------------------------------------


def test_state_dict_keys_and_detached_values(lib):
    net = TwoLayer.build(lib)
    state = net.state_dict()
    assert isinstance(state, OrderedDict)
    # persistent buffers after the parameters, module by module; a shared module under each name
    assert list(state) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "again.weight"]
    assert type(state["fc1.weight"]) is lib.Tensor and not state["fc1.weight"].requires_grad
    with lib.no_grad():
        state["fc1.bias"].zero_()  # detached, but the same storage
    assert net.fc1.bias.tolist() == [0.0] * 4
    assert state["fc2.weight"] is not net.fc2.weight
    assert net.state_dict(keep_vars=True)["fc2.weight"] is net.fc2.weight
    assert list(net.fc1.state_dict(prefix="net.fc1.")) == ["net.fc1.weight", "net.fc1.bias"]


def test_load_state_dict_round_trip_copies_into_the_same_parameters():
    source, target = TwoLayer.build(ag), TwoLayer.build(ag)
    with ag.no_grad():
        source.steps.fill_(7)
    weight, version = target.fc1.weight, target.fc1.weight._version
    result = target.load_state_dict(source.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert target.fc1.weight is weight and weight.is_leaf and weight.requires_grad
    assert weight._version > version  # written in place, as PyTorch's copy_ does
    for key, value in source.state_dict().items():
        np.testing.assert_array_equal(values(target.state_dict()[key]), values(value))
    assert target.steps.item() == 7


def test_load_state_dict_errors_are_pytorchs(lib):
    layer = lib.nn.Linear(2, 2)
    with pytest.raises(RuntimeError) as error:
        layer.load_state_dict({"weight": lib.ones(3, 2), "extra": lib.ones(1)})
    message = str(error.value)
    assert message.startswith("Error(s) in loading state_dict for Linear:\n\t")
    assert 'Missing key(s) in state_dict: "bias".' in message
    assert 'Unexpected key(s) in state_dict: "extra".' in message
    assert "size mismatch for weight: copying a param with shape" in message
    with pytest.raises(RuntimeError, match='While copying the parameter named "weight"'):
        layer.load_state_dict({"weight": [[1.0, 2.0]] * 2, "bias": lib.ones(2)})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        layer.load_state_dict([1])


def test_load_state_dict_not_strict_reports_keys_but_still_checks_shapes(lib):
    layer = lib.nn.Linear(2, 2)
    result = layer.load_state_dict({"weight": lib.ones(2, 2), "extra": lib.ones(1)}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])"
    assert layer.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        layer.load_state_dict({"weight": lib.ones(1, 2)}, strict=False)


def test_load_state_dict_error_says_how_to_fix():
    layer = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match=r"same architecture.*or pass strict=False"):
        layer.load_state_dict({"weight": ag.ones(2, 2)})
    with pytest.raises(
        RuntimeError, match=r"same architecture[^\n]*\)\.$"
    ):  # strict=False won't help
        layer.load_state_dict({"weight": ag.ones(3, 2), "bias": ag.ones(2)})


def test_load_state_dict_casts_to_the_models_dtype():
    layer = nn.Linear(2, 1)
    layer.load_state_dict({"weight": ag.tensor([[1.5, 2.5]], dtype=ag.float64), "bias": ag.ones(1)})
    assert layer.weight.dtype == ag.float32 and layer.weight.tolist() == [[1.5, 2.5]]


def test_a_model_from_a_pytorch_state_dict_computes_the_same(torch):
    theirs = TwoLayer.build(torch)
    ours = TwoLayer.build(ag)
    ours.load_state_dict({k: ag.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    expected = theirs(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(values(ours(ag.tensor(x))), expected, rtol=1e-5, atol=1e-6)


def test_deepcopy_of_a_model_is_independent():
    net = TwoLayer.build(ag)
    twin = copy.deepcopy(net)
    assert type(twin.fc1.weight) is nn.Parameter and twin.again is twin.fc2
    with ag.no_grad():
        twin.fc1.weight.zero_()
    assert net.fc1.weight.abs().sum().item() > 0


# ---- layers against the PyTorch oracle ------------------------------------------------------------

TOLERANCE = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-5)}


def copy_weights(ours, theirs):
    """PyTorch's values into our module, through numpy (our generator draws other numbers)."""
    ours.load_state_dict({k: ag.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def check_against_torch(torch, make, inputs, dtype="float64", grads_for=None):
    """Build `make(lib)` in both libraries with the same weights; compare outputs, the gradients
    of the inputs in `grads_for` (default: every float input) and of every parameter."""
    ours, theirs = make(ag).to(getattr(ag, dtype)), make(torch).to(getattr(torch, dtype))
    copy_weights(ours, theirs)
    grads_for = (
        [i for i, x in enumerate(inputs) if x.dtype.kind == "f"] if grads_for is None else grads_for
    )
    results = []
    for lib, module in ((ag, ours), (torch, theirs)):
        args = [
            lib.tensor(x.astype(dtype) if x.dtype.kind == "f" else x, requires_grad=i in grads_for)
            for i, x in enumerate(inputs)
        ]
        out = module(*args)
        upstream = np.random.default_rng(5).standard_normal(tuple(out.shape)).astype(dtype)
        (out * lib.tensor(upstream)).sum().backward()
        grads = [args[i].grad for i in grads_for] + [p.grad for p in module.parameters()]
        results.append((out, grads))
    (out, grads), (expected, expected_grads) = results
    assert out.dtype == getattr(ag, dtype) and tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(values(out), values(expected), **TOLERANCE[dtype])
    assert len(grads) == len(expected_grads)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(values(g), values(e), **TOLERANCE[dtype])
    return ours, out


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


LAYERS = {
    "linear": (lambda nn: nn.Linear(3, 4), [rand(5, 3)]),
    "linear 3-d input": (lambda nn: nn.Linear(3, 2), [rand(2, 5, 3)]),
    "linear 1-d input": (lambda nn: nn.Linear(3, 2), [rand(3)]),
    "linear without bias": (lambda nn: nn.Linear(3, 2, bias=False), [rand(4, 3)]),
    "relu": (lambda nn: nn.ReLU(), [rand(3, 4)]),
    "tanh": (lambda nn: nn.Tanh(), [rand(3, 4)]),
    "sigmoid": (lambda nn: nn.Sigmoid(), [rand(3, 4)]),
    "gelu": (lambda nn: nn.GELU(), [rand(3, 4)]),
    "gelu tanh": (lambda nn: nn.GELU(approximate="tanh"), [rand(3, 4)]),
    "softmax dim 1": (lambda nn: nn.Softmax(dim=1), [rand(3, 4)]),
    "softmax dim 0": (lambda nn: nn.Softmax(dim=0), [rand(3, 4)]),
    "log_softmax": (lambda nn: nn.LogSoftmax(dim=-1), [rand(2, 3, 4)]),
    "flatten": (lambda nn: nn.Flatten(), [rand(2, 3, 4)]),
    "flatten 0-1": (lambda nn: nn.Flatten(0, 1), [rand(2, 3, 4)]),
    "identity": (lambda nn: nn.Identity(54, unused="x"), [rand(2, 3)]),
    "dropout in eval mode": (lambda nn: nn.Dropout(0.5).eval(), [rand(3, 4)]),
    "mlp": (
        lambda nn: nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2), nn.LogSoftmax(dim=1)),
        [rand(5, 3)],
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_pytorch(torch, name, dtype):
    make, inputs = LAYERS[name]
    check_against_torch(torch, lambda lib: make(lib.nn), inputs, dtype)


def _classes(*shape, n=3, seed=1):
    return np.random.default_rng(seed).integers(0, n, shape)


def _probabilities(*shape, seed=2):
    return np.random.default_rng(seed).uniform(0.05, 0.95, shape)


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


CLASS_WEIGHT = np.array([0.5, 2.0, 1.0])
LOSSES = {
    "mse": (lambda lib: lib.nn.MSELoss(), [rand(4, 3), rand(4, 3, seed=1)]),
    "mse sum": (lambda lib: lib.nn.MSELoss(reduction="sum"), [rand(4, 3), rand(4, 3, seed=1)]),
    "mse none": (lambda lib: lib.nn.MSELoss(reduction="none"), [rand(4, 3), rand(4, 3, seed=1)]),
    "cross_entropy": (lambda lib: lib.nn.CrossEntropyLoss(), [rand(5, 3), _classes(5)]),
    "cross_entropy weighted, ignore_index, smoothing": (
        lambda lib: lib.nn.CrossEntropyLoss(
            weight=lib.tensor(CLASS_WEIGHT), ignore_index=1, label_smoothing=0.1
        ),
        [rand(6, 3), _classes(6)],
    ),
    "cross_entropy probabilities": (
        lambda lib: lib.nn.CrossEntropyLoss(reduction="sum"),
        [rand(4, 3), _softmax_rows(rand(4, 3, seed=3))],
    ),
    "nll": (lambda lib: lib.nn.NLLLoss(), [rand(5, 3), _classes(5)]),
    "nll weighted sum": (
        lambda lib: lib.nn.NLLLoss(weight=lib.tensor(CLASS_WEIGHT), reduction="sum"),
        [rand(5, 3), _classes(5)],
    ),
    "bce": (lambda lib: lib.nn.BCELoss(), [_probabilities(4, 3), _probabilities(4, 3, seed=3)]),
    "bce weighted": (
        lambda lib: lib.nn.BCELoss(weight=lib.tensor(rand(3) ** 2)),
        [_probabilities(4, 3), _probabilities(4, 3, seed=3)],
    ),
    "bce with logits, pos_weight": (
        lambda lib: lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor([1.0, 3.0, 0.5])),
        [rand(4, 3), _probabilities(4, 3, seed=3)],
    ),
    "bce with logits weighted none": (
        lambda lib: lib.nn.BCEWithLogitsLoss(weight=lib.tensor(rand(3) ** 2), reduction="none"),
        [rand(4, 3), _probabilities(4, 3, seed=3)],
    ),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_matches_pytorch(torch, name, dtype):
    make, inputs = LOSSES[name]
    check_against_torch(torch, make, inputs, dtype, grads_for=[0])


def test_loss_weights_are_buffers_that_follow_the_model(lib):
    loss = lib.nn.CrossEntropyLoss(weight=lib.tensor(CLASS_WEIGHT, dtype=lib.float32))
    assert list(loss.state_dict()) == ["weight"]
    assert loss.double().weight.dtype == lib.float64
    assert list(lib.nn.BCEWithLogitsLoss()._buffers.items()) == [
        ("weight", None),
        ("pos_weight", None),
    ]
    assert lib.nn.BCEWithLogitsLoss().state_dict() == OrderedDict()


def test_legacy_size_average_and_reduce_still_work(lib):
    for size_average, reduce, expected in [
        (False, None, "sum"),
        (None, False, "none"),
        (True, True, "mean"),
    ]:
        with pytest.warns(UserWarning, match=f"please use reduction='{expected}' instead"):
            assert lib.nn.MSELoss(size_average=size_average, reduce=reduce).reduction == expected
    assert lib.nn.NLLLoss(ignore_index=2).ignore_index == 2


def test_linear_default_init_is_pytorchs_distribution():
    layer = nn.Linear(50, 400)
    bound = 1 / np.sqrt(50)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    for p in (layer.weight, layer.bias):
        v = values(p)
        assert v.min() >= -bound and v.max() <= bound and v.max() > 0.95 * bound
    assert abs(values(layer.weight).mean()) < 0.01
    assert values(layer.weight).std() == pytest.approx(bound / np.sqrt(3), rel=0.02)


def test_linear_takes_dtype_and_seed(lib):
    assert lib.nn.Linear(2, 3, dtype=lib.float64).weight.dtype == lib.float64
    lib.manual_seed(3)
    first = lib.nn.Linear(2, 3).weight.tolist()
    lib.manual_seed(3)
    assert lib.nn.Linear(2, 3).weight.tolist() == first


def test_reset_parameters_draws_new_weights():
    layer = nn.Linear(3, 3)
    before = values(layer.weight).copy()
    layer.reset_parameters()
    assert not np.array_equal(before, values(layer.weight))


def test_dropout_follows_train_and_eval():
    model = nn.Sequential(nn.Identity(), nn.Dropout(p=0.25))
    x = ag.ones(200, 100, requires_grad=True)
    y = model(x)
    kept = values(y) != 0
    assert kept.mean() == pytest.approx(0.75, abs=0.01)
    assert np.allclose(values(y)[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_array_equal(values(x.grad), values(y))  # the same mask scales the gradient
    model.eval()
    assert model(x) is x  # evaluation mode: nothing dropped, nothing recorded
    model.train()
    assert (values(model(x)) == 0).any()


def test_dropout_probability_is_checked(lib):
    with pytest.raises(
        ValueError, match="dropout probability has to be between 0 and 1, but got 2"
    ):
        lib.nn.Dropout(2)


# ---- reprs --------------------------------------------------------------------------------------


def test_reprs_are_pytorchs(torch):
    def build(nn):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = nn.Sequential(nn.Linear(4, 4), nn.GELU(approximate="tanh"))
                self.skip = nn.Identity()
                self.heads = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)] + [nn.Tanh()])

            def extra_repr(self):
                return "width=4,\ndepth=2"  # a multi-line extra_repr, as some layers have

        return nn.Sequential(
            OrderedDict(
                stem=nn.Linear(3, 4, bias=False),
                act=nn.ReLU(inplace=True),
                block=Block(),
                drop=nn.Dropout(0.1),
                flat=nn.Flatten(0),
                probs=nn.Softmax(dim=-1),
                logp=nn.LogSoftmax(),
                sig=nn.Sigmoid(),
                losses=nn.ModuleList(
                    [
                        nn.MSELoss(),
                        nn.CrossEntropyLoss(),
                        nn.NLLLoss(),
                        nn.BCELoss(),
                        nn.BCEWithLogitsLoss(),
                    ]
                ),  # fmt: skip
                empty=nn.ModuleList(),
                nothing=nn.Sequential(),
            )
        )

    assert repr(build(nn)) == repr(build(torch.nn))


# ---- containers -----------------------------------------------------------------------------------


def test_sequential_indexing(lib):
    layers = [lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1)]
    seq = lib.nn.Sequential(*layers)
    assert len(seq) == 3 and list(seq) == layers
    assert seq[0] is layers[0] and seq[-1] is layers[2]
    part = seq[1:]
    assert type(part) is lib.nn.Sequential and list(part._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]  # noqa: B018
    with pytest.raises(IndexError, match="index -4 is out of range"):
        seq[-4]  # noqa: B018


def test_sequential_append_insert_delete_and_set(lib):
    seq = lib.nn.Sequential(lib.nn.ReLU())
    tanh, sigmoid, identity = lib.nn.Tanh(), lib.nn.Sigmoid(), lib.nn.Identity()
    assert seq.append(tanh) is seq and list(seq._modules) == ["0", "1"]
    seq.insert(-1, sigmoid)
    assert [type(m).__name__ for m in seq] == ["ReLU", "Sigmoid", "Tanh"]
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[0] is sigmoid
    seq[-1] = identity
    assert seq[1] is identity
    seq.extend(lib.nn.Sequential(lib.nn.ReLU()))
    assert len(seq) == 3


def test_sequential_from_an_ordered_dict_keeps_the_names(lib):
    seq = lib.nn.Sequential(OrderedDict(hidden=lib.nn.Linear(2, 3), out=lib.nn.Linear(3, 1)))
    assert [n for n, _ in seq.named_parameters()][::2] == ["hidden.weight", "out.weight"]
    assert seq[1] is seq.out and seq(lib.ones(4, 2)).shape == (4, 1)


def test_module_list(lib):
    layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
    layers.append(lib.nn.ReLU())
    layers += [lib.nn.Tanh()]
    layers.insert(0, lib.nn.Sigmoid())
    assert [type(m).__name__ for m in layers] == [
        "Sigmoid",
        "Linear",
        "Linear",
        "Linear",
        "ReLU",
        "Tanh",
    ]
    assert list(layers[2:4]._modules) == ["0", "1"]  # a slice is renumbered
    del layers[0]
    assert type(layers[0]).__name__ == "Linear" and len(layers) == 5
    assert len(list(layers.parameters())) == 6
    with pytest.raises(NotImplementedError, match="ModuleList"):
        layers(lib.ones(2))
    with pytest.raises(TypeError, match="should be called with an iterable"):
        layers.extend(3)


# ---- scopes for the graph viewer ----------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_each_module_scopes_the_nodes_it_creates():
    model, seq, loss_fn = (
        MLP(),
        nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh())),
        nn.MSELoss(),
    )
    with ag.viz.record() as t:
        loss = loss_fn(model(ag.ones(5, 3)), ag.zeros(5, 2)) * 2
        seq(ag.ones(1, 2))
    assert [(node.name(), t.scopes.get(node)) for node in t.nodes] == [
        ("AddmmBackward0", "MLP/fc1 (Linear)"),
        ("ReluBackward0", "MLP/act (ReLU)"),
        ("AddmmBackward0", "MLP/fc2 (Linear)"),
        ("MseLossBackward0", "MSELoss"),  # a root module: its class name
        ("MulBackward0", None),  # made outside every module
        ("AddmmBackward0", "Sequential/0 (Linear)"),
        ("TanhBackward0", "Sequential/1 (Sequential)/0 (Tanh)"),
    ]
    graph_scopes = [n["scope"] for n in t.graph(loss).nodes if n["kind"] == "op"]
    assert graph_scopes == [
        "MLP/fc1 (Linear)",
        "MLP/act (ReLU)",
        "MLP/fc2 (Linear)",
        "MSELoss",
        None,
    ]


def test_scopes_are_entered_only_while_a_viewer_observes():
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(ag.autograd.graph.current_scope())
            return x

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.probe = Probe()

        def forward(self, x):
            return self.probe(x)

    model = Outer()
    model(ag.ones(1))
    with ag.autograd.observe(on_node=lambda node, outputs: None):
        model(ag.ones(1))
    model(ag.ones(1))
    assert seen == [(), ("Outer", "probe (Probe)"), ()]


def test_a_deeper_module_called_directly_is_named_by_its_path():
    class Skipper(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(2, 2))

        def forward(self, x):
            return self.block[0](x)  # skips the Sequential's own forward

    with ag.viz.record() as t:
        Skipper()(ag.ones(1, 2))
    assert [t.scopes.get(node) for node in t.nodes] == ["Skipper/block.0 (Linear)"]


@pytest.mark.skipif(not ag.cuda.is_available(), reason="no CUDA device (nor numba's simulator)")
def test_to_cuda_moves_parameters_grads_and_buffers_in_place():
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    model.register_buffer("steps", ag.tensor(0))
    model(ag.ones(1, 3)).sum().backward()
    params, expected = list(model.parameters()), values(model[0].weight).copy()
    assert model.to("cuda") is model and list(model.parameters()) == params
    assert all(t.is_cuda for t in params + [p.grad for p in params] + [model.steps])
    init.zeros_(model[0].bias)  # init writes into a GPU tensor too
    model(ag.ones(1, 3).cuda()).sum().backward()
    assert model[0].weight.grad.is_cuda
    model.cpu()
    assert not model[0].weight.is_cuda and values(model[0].bias).tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(values(model[0].weight), expected)


def test_viewer_labels_parameters_by_their_qualified_names():
    """Drawn under a viewer, a module's parameters carry the names named_parameters() gives them."""
    from autograd_lab.viz import record

    class Block(ag.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = ag.nn.Linear(2, 3)

        def forward(self, x):
            return self.fc(x).tanh()

    model = ag.nn.Sequential(ag.nn.Linear(4, 2), Block())
    with record() as t:
        y = model(ag.randn(5, 4)).sum()
    labels = {
        n["label"] for n in t.graph(y).nodes if n["kind"] == "tensor" and n["role"] == "parameter"
    }
    assert labels == {name for name, _ in model.named_parameters()}
