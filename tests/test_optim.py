"""autograd_lab.optim against torch.optim: the same steps give the same parameters and state.

Leaf tensors of a few shapes (0-d included) get either a fixed sequence of gradients or the
gradients of a small non-quadratic loss; both libraries take N steps from the same start.
"""

import copy

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag

SHAPES = [(3,), (2, 3), ()]
STEPS = 6
TOLERANCE = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=1e-6, atol=1e-6)}

# (optimizer, options): every option of every optimizer, alone and in combination.
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.3, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, betas=(0.5, 0.6), eps=1e-3)),
    ("Adam", dict(lr=0.1, weight_decay=0.3)),
    ("Adam", dict(lr=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.5, amsgrad=True)),
    ("AdamW", dict(lr=0.1, weight_decay=0.0, maximize=True)),
]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items()) or 'defaults'}"
            for name, options in CASES]  # fmt: skip


def starting_values():
    rng = np.random.default_rng(1)
    return [rng.standard_normal(shape) for shape in SHAPES]


def fixed_gradients():
    """Gradients that change sign and shrink: momentum, and amsgrad's running max, both matter."""
    rng = np.random.default_rng(2)
    return [[rng.standard_normal(s) * 3.0 / (k + 1) for s in SHAPES] for k in range(STEPS)]


def make_params(lib, dtype):
    return [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in starting_values()]


def loss_of(params):
    """A loss whose gradient depends on the parameters in a non-linear way."""
    total = 0
    for i, p in enumerate(params):
        total = total + ((p - 0.5 * i) ** 2).sum() + 0.3 * (p**3).sum().tanh()
    return total


def train(lib, name, options, dtype, gradients=None, steps=STEPS):
    """`steps` steps of `lib.optim.<name>`; returns the parameters and the optimizer."""
    params = make_params(lib, dtype)
    optimizer = getattr(lib.optim, name)(params, **options)
    for k in range(steps):
        optimizer.zero_grad()
        if gradients is None:
            loss_of(params).backward()
        else:
            for p, g in zip(params, gradients[k]):
                p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
        optimizer.step()
    return params, optimizer


def assert_same(ours, theirs, dtype):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), **TOLERANCE[dtype])


def dtype_name(t):
    return str(t.dtype).split(".")[-1]  # 'float32' for torch.float32 and ag.float32


def assert_same_state(ours, theirs, dtype):
    """Same keys per parameter, same values (the step count included)."""
    ours, theirs = ours.state_dict()["state"], theirs.state_dict()["state"]
    assert sorted(ours) == sorted(theirs)
    for index in theirs:
        assert sorted(ours[index]) == sorted(theirs[index])
        for key, value in theirs[index].items():
            tolerance = TOLERANCE[dtype] if key != "step" else dict(rtol=0)
            np.testing.assert_allclose(to_numpy(ours[index][key]), to_numpy(value), **tolerance)
            assert dtype_name(ours[index][key]) == dtype_name(value)


# ---- the updates ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_fixed_gradients_give_torchs_parameters_and_state(torch, name, options, dtype):
    gradients = fixed_gradients()
    ours, ours_opt = train(ag, name, options, dtype, gradients)
    theirs, their_opt = train(torch, name, options, dtype, gradients)
    assert_same(ours, theirs, dtype)
    assert_same_state(ours_opt, their_opt, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("name", "options"), CASES, ids=CASE_IDS)
def test_minimizing_a_loss_gives_torchs_parameters(torch, name, options, dtype):
    ours, _ = train(ag, name, options, dtype)
    theirs, _ = train(torch, name, options, dtype)
    assert_same(ours, theirs, dtype)


def test_sgd_by_hand():
    """The first momentum step uses the gradient itself; the second blends it in."""
    w = ag.tensor([1.0, -1.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.5)
    for grad, expected in [([2.0, 4.0], [0.8, -1.4]), ([1.0, 1.0], [0.57, -1.81])]:
        w.grad = ag.tensor(grad, dtype=ag.float64)
        optimizer.step()
        np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-12)
    # buffer: [2, 4], then 0.9 * [2, 4] + 0.5 * [1, 1] = [2.3, 4.1]
    np.testing.assert_allclose(optimizer.state[w]["momentum_buffer"].numpy(), [2.3, 4.1])


def test_adam_first_step_moves_each_entry_by_lr():
    """After bias correction m / sqrt(v) = g / |g| at step 1: every entry moves by lr."""
    w = ag.tensor([1.0, -2.0, 3.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.Adam([w], lr=0.1, eps=0.0)
    w.grad = ag.tensor([1e-3, 5.0, -7.0], dtype=ag.float64)
    optimizer.step()
    np.testing.assert_allclose(w.detach().numpy(), [0.9, -2.1, 3.1], rtol=1e-12)


def test_adamw_decays_the_parameter_not_the_gradient():
    """With a zero gradient Adam's update is 0, so AdamW's step is the decay alone."""
    w = ag.tensor([2.0, -4.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    w.grad = ag.zeros(2, dtype=ag.float64)
    optimizer.step()
    np.testing.assert_allclose(w.detach().numpy(), [2.0 * 0.95, -4.0 * 0.95], rtol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_parameters_without_grad_are_skipped(lib, name):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    optimizer = getattr(lib.optim, name)([a, b], lr=0.1, weight_decay=0.1)
    a.grad = lib.ones(2)
    optimizer.step()
    assert b.tolist() == [3.0, 4.0] and b.grad is None
    assert a.tolist() != [1.0, 2.0]
    assert b not in optimizer.state


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_step_writes_in_place_and_bumps_the_version(lib, name):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    view = w.detach()  # shares w's storage and version counter
    optimizer = getattr(lib.optim, name)([w], lr=0.1)
    w.grad = lib.ones(2)
    before = w._version
    optimizer.step()
    assert w._version > before and view._version == w._version
    assert view.tolist() == w.tolist() != [1.0, 2.0]  # the same storage was written
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_storage_is_updated_not_replaced():
    w = ag.tensor([1.0, 2.0], requires_grad=True)
    storage = w._data
    optimizer = ag.optim.Adam([w], lr=0.1)
    w.grad = ag.ones(2)
    optimizer.step()
    assert w._data is storage


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_saved_tensor_changed_by_step_is_detected(lib, name):
    """The graph of y saved w; stepping changes w, so backward through y must refuse."""
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    optimizer = getattr(lib.optim, name)([w], lr=0.1)
    y = (w * w).sum()  # MulBackward0 saves w
    w.grad = lib.ones(2)
    optimizer.step()
    with pytest.raises(RuntimeError, match="modified"):
        y.backward()


def test_step_records_nothing_and_leaves_grad_mode_alone():
    w = ag.tensor([1.0, 2.0], requires_grad=True)
    optimizer = ag.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True)
    w.grad = ag.ones(2)
    optimizer.step()
    assert ag.is_grad_enabled()
    assert w.grad_fn is None and not optimizer.state[w]["momentum_buffer"].requires_grad


def test_per_group_options(torch):
    def run(lib):
        a, b, c = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in starting_values())
        optimizer = lib.optim.SGD(
            [{"params": [a, b], "lr": 0.5}, {"params": c, "momentum": 0.5}], lr=0.1, momentum=0.9
        )
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss_of([a, b, c]).backward()
            optimizer.step()
        groups = [(g["lr"], g["momentum"]) for g in optimizer.param_groups]
        return [a, b, c], groups

    (ours, our_groups), (theirs, their_groups) = run(ag), run(torch)
    assert our_groups == their_groups == [(0.5, 0.9), (0.1, 0.5)]
    assert_same(ours, theirs, "float64")


def test_add_param_group_then_step(torch):
    def run(lib):
        a, b, c = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in starting_values())
        optimizer = lib.optim.Adam([a], lr=0.1)
        optimizer.add_param_group({"params": [b, c], "betas": (0.5, 0.5)})
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss_of([a, b, c]).backward()
            optimizer.step()
        assert optimizer.param_groups[1]["lr"] == 0.1  # missing options come from the defaults
        return [a, b, c]

    assert_same(run(ag), run(torch), "float64")


# ---- zero_grad and closures ---------------------------------------------------------------------
def test_zero_grad_sets_to_none_by_default(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    optimizer = lib.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    optimizer.zero_grad()
    assert w.grad is None


def test_zero_grad_can_fill_with_zeros_in_place(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    optimizer = lib.optim.SGD([w], lr=0.1)
    (w * w).sum().backward(create_graph=True)  # a gradient with its own graph
    grad = w.grad
    assert grad.requires_grad
    optimizer.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0]
    assert not w.grad.requires_grad and w.grad.grad_fn is None
    (w * 3).sum().backward()  # the next backward adds into the zeros
    assert w.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_step_with_a_closure(torch, name):
    def run(lib):
        params = make_params(lib, "float64")
        optimizer = getattr(lib.optim, name)(params, lr=0.1)
        calls = []

        def closure():
            calls.append(lib.is_grad_enabled())
            optimizer.zero_grad()
            loss = loss_of(params)
            loss.backward()
            return loss

        with lib.no_grad():  # step() records again for the closure, whatever the caller's mode
            losses = [optimizer.step(closure).item() for _ in range(STEPS)]
        assert calls == [True] * STEPS
        return params, losses

    (ours, our_losses), (theirs, their_losses) = run(ag), run(torch)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-12)
    assert_same(ours, theirs, "float64")


def test_step_without_closure_returns_none(lib):
    w = lib.tensor([1.0], requires_grad=True)
    w.grad = lib.ones(1)
    assert lib.optim.Adam([w]).step() is None


# ---- state_dict ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "options"),
    [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1, amsgrad=True)),
     ("AdamW", dict(lr=0.1))],
)  # fmt: skip
def test_state_dict_round_trip_continues_training_exactly(name, options):
    gradients = fixed_gradients()
    uninterrupted, _ = train(ag, name, options, "float64", gradients)

    params, optimizer = train(ag, name, options, "float64", gradients, steps=3)
    saved = optimizer.state_dict()
    copies = [ag.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    resumed = getattr(ag.optim, name)(copies, lr=123.0)  # the loaded options replace these
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == 0.1 and resumed.param_groups[0]["params"] == copies
    for k in range(3, STEPS):
        for p, q, g in zip(copies, params, gradients[k]):
            p.grad, q.grad = ag.tensor(g), ag.tensor(g)
        resumed.step()
        optimizer.step()  # the original goes on too: the loaded state must be a copy, not shared
    assert_same(copies, uninterrupted, "float64")
    assert_same(params, uninterrupted, "float64")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_state_dict_has_torchs_layout(torch, name):
    options = dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1, amsgrad=True)
    _, ours = train(ag, name, options, "float32", fixed_gradients(), steps=2)
    _, theirs = train(torch, name, options, "float32", fixed_gradients(), steps=2)
    ours, theirs = ours.state_dict(), theirs.state_dict()
    assert sorted(ours) == ["param_groups", "state"]
    (our_group,), (their_group,) = ours["param_groups"], theirs["param_groups"]
    assert our_group["params"] == their_group["params"] == [0, 1, 2]
    # torch also has its implementation switches (foreach, fused, differentiable, capturable)
    assert {k: their_group[k] for k in our_group} == our_group
    assert set(their_group) - set(our_group) <= {"foreach", "fused", "differentiable", "capturable"}
    for index in their_group["params"]:
        assert sorted(ours["state"][index]) == sorted(theirs["state"][index])


def test_state_dict_survives_deepcopy_and_casts_to_the_parameter_dtype():
    w = ag.tensor([1.0, 2.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.Adam([w], lr=0.1)
    w.grad = ag.ones(2, dtype=ag.float64)
    optimizer.step()
    saved = copy.deepcopy(optimizer.state_dict())
    w32 = ag.tensor([1.0, 2.0], requires_grad=True)
    other = ag.optim.Adam([w32])
    other.load_state_dict(saved)
    state = other.state[w32]
    assert state["exp_avg"].dtype == ag.float32 and state["step"].dtype == ag.float32
    assert state["step"].item() == 1.0
    assert state["exp_avg"] is not saved["state"][0]["exp_avg"]


def test_load_state_dict_checks_the_groups(lib):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    saved = lib.optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        lib.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        lib.optim.SGD([a], lr=0.1).load_state_dict(saved)


# ---- how it prints --------------------------------------------------------------------------------
def test_repr_lists_each_group_like_torch(torch):
    w = ag.tensor([1.0], requires_grad=True)
    ours = repr(ag.optim.SGD([w], lr=0.1, momentum=0.9))
    assert ours == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
        "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0.9\n    nesterov: False\n"
        "    weight_decay: 0\n)"
    )
    for name in ("SGD", "Adam", "AdamW"):
        ours = repr(getattr(ag.optim, name)([w], lr=0.1))
        theirs = repr(getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], lr=0.1))
        assert ours == theirs  # the implementation switches included (tests/test_optim_switches.py)


# ---- errors ---------------------------------------------------------------------------------------
BAD_OPTIONS = [
    ("SGD", dict(lr=-1), "Invalid learning rate: -1"),
    ("SGD", dict(lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    ("SGD", dict(lr=0.1, weight_decay=-1e-3), "Invalid weight_decay value: -0.001"),
    ("SGD", dict(lr=0.1, nesterov=True), "Nesterov momentum requires a momentum"),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
    ("Adam", dict(lr=-0.5), "Invalid learning rate: -0.5"),
    ("Adam", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    ("Adam", dict(betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    ("Adam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("Adam", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
    ("AdamW", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0"),
]


@pytest.mark.parametrize(("name", "options", "message"), BAD_OPTIONS)
def test_invalid_options_raise_torchs_error(lib, name, options, message):
    w = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        getattr(lib.optim, name)([w], **options)


@pytest.mark.parametrize(("name", "options", "message"), BAD_OPTIONS)
def test_invalid_options_say_how_to_fix_them(name, options, message):
    w = ag.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError) as error:
        getattr(ag.optim, name)([w], **options)
    keyword = {"Invalid learning": "lr=", "Invalid momentum": "momentum=", "Invalid epsilon": "eps=",
               "Invalid beta": "betas=", "Invalid weight": "weight_decay=", "Nesterov": "nesterov=",
               "zero dampening": "dampening="}  # fmt: skip
    fix = next(v for k, v in keyword.items() if message.startswith(k) or k in message)
    assert fix in str(error.value)


def test_bad_parameter_lists(lib):
    w = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        lib.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        lib.optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        lib.optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        lib.optim.SGD([{"params": [w]}, {"params": [w], "lr": 0.5}], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        lib.optim.SGD([{"params": {w}}], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        lib.optim.SGD([w, 1.0], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        lib.optim.SGD([w, w], lr=0.1)


def test_bad_parameter_list_messages_say_how_to_fix_them():
    w = ag.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"model.parameters\(\)"):
        ag.optim.Adam(iter([]))
    with pytest.raises(TypeError, match=r"SGD\(\[w\]"):
        ag.optim.SGD(w)
    with pytest.raises(ValueError, match="MulBackward0.*detach"):
        ag.optim.SGD([w * 2])
    with pytest.raises(TypeError, match="named_parameters"):
        ag.optim.SGD([("w", w)])


def test_a_non_leaf_that_retains_grad_can_be_optimized(lib):
    """PyTorch's rule: leaves, or non-leaf tensors that keep their .grad (retain_grad())."""
    w = lib.tensor([1.0], requires_grad=True)
    h = w * 2
    h.retain_grad()
    lib.optim.SGD([h], lr=0.1)  # no error
