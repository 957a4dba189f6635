"""RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD against torch.optim: the same
steps give the same parameters.

The harness is test_optim.py's: leaf tensors of a few shapes (0-d included) take N steps from the
same start in both libraries, driven by a fixed sequence of gradients or by a small loss, in float64
and float32; every option that changes the algorithm is tried alone and in combination.
"""

import copy

import numpy as np
import pytest
from test_optim import (
    STEPS,
    assert_same,
    assert_same_state,
    fixed_gradients,
    loss_of,
    starting_values,
    train,
)

import autograd_lab as ag

NAMES = ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"]
CASES = [
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.05, alpha=0.5, eps=1e-3)),
    ("RMSprop", dict(lr=0.05, weight_decay=0.3)),
    ("RMSprop", dict(lr=0.05, momentum=0.9)),
    ("RMSprop", dict(lr=0.05, centered=True)),
    ("RMSprop", dict(lr=0.05, alpha=0.7, centered=True, momentum=0.5)),
    ("RMSprop", dict(lr=0.05, momentum=0.9, weight_decay=0.1, centered=True, maximize=True)),
    ("RMSprop", dict(lr=0.05, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.2)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.3)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-3)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-3)),
    ("Adadelta", dict(weight_decay=0.3)),
    ("Adadelta", dict(lr=2.0, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.1, betas=(0.5, 0.6), eps=1e-3)),
    ("Adamax", dict(lr=0.1, weight_decay=0.3, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.1, betas=(0.5, 0.6), eps=1e-3, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.1, weight_decay=0.3)),
    ("NAdam", dict(lr=0.1, weight_decay=0.3, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),  # 6 steps: plain momentum steps, then the first rectified one
    ("RAdam", dict(lr=0.1, betas=(0.5, 0.9), eps=1e-3)),
    ("RAdam", dict(lr=0.1, weight_decay=0.3)),
    ("RAdam", dict(lr=0.1, betas=(0.8, 0.95), weight_decay=0.3, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.1, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.7), step_sizes=(0.02, 0.25))),  # both bounds reached
    ("Rprop", dict(lr=0.1, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.1, lambd=0.1, alpha=0.5, t0=2)),  # averaging from step 3 on
    ("ASGD", dict(lr=0.1, lambd=0.01, t0=0, weight_decay=0.3, maximize=True)),
]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items()) or 'defaults'}"
            for name, options in CASES]  # fmt: skip


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


def test_rmsprop_by_hand():
    """v = (1 - alpha) g^2 after one step, so the step is lr * g / (sqrt(1 - alpha) |g| + eps)."""
    w = ag.tensor([1.0, -1.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.RMSprop([w], lr=0.1, alpha=0.75, eps=0.0)
    w.grad = ag.tensor([2.0, -4.0], dtype=ag.float64)
    optimizer.step()  # each entry moves by lr / sqrt(0.25) = 0.2 against its gradient's sign
    np.testing.assert_allclose(w.detach().numpy(), [0.8, -0.8], rtol=1e-12)
    np.testing.assert_allclose(optimizer.state[w]["square_avg"].numpy(), [1.0, 4.0], rtol=1e-12)


def test_adagrad_by_hand():
    """The sum of squares grows, so the same gradient gives a smaller second step."""
    w = ag.tensor([0.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.Adagrad([w], lr=1.0, eps=0.0)
    for expected in [-1.0, -1.0 - 1 / 2**0.5]:
        w.grad = ag.tensor([3.0], dtype=ag.float64)
        optimizer.step()  # steps of 3 / sqrt(9), then 3 / sqrt(18)
        np.testing.assert_allclose(w.item(), expected, rtol=1e-12)
    assert optimizer.state[w]["sum"].item() == 18.0 and optimizer.state[w]["step"].item() == 2.0


def test_adadelta_by_hand():
    """First step: delta = sqrt(eps) / sqrt((1 - rho) g^2 + eps) * g."""
    w = ag.tensor([1.0], dtype=ag.float64, requires_grad=True)
    optimizer = ag.optim.Adadelta([w], rho=0.5, eps=1.0)
    w.grad = ag.tensor([2.0], dtype=ag.float64)
    optimizer.step()  # v = 2, delta = 1 / sqrt(3) * 2, u = 0.5 * delta^2
    delta = 2 / 3**0.5
    np.testing.assert_allclose(w.item(), 1 - delta, rtol=1e-12)
    np.testing.assert_allclose(optimizer.state[w]["acc_delta"].item(), 0.5 * delta**2, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", [dict(lr=0.05), dict(lr=0.05, betas=(0.8, 0.95), eps=1e-4)])
def test_radam_rectified_steps_over_a_longer_run(torch, options, dtype):
    """RAdam switches its adaptive step on once rho_t > 5 (from step 6 for these betas)."""
    ours, _ = train(ag, "RAdam", options, dtype, steps=20)
    theirs, _ = train(torch, "RAdam", options, dtype, steps=20)
    assert_same(ours, theirs, dtype)


# ---- the state they keep -------------------------------------------------------------------------
STATE_OPTIONS = {
    "RMSprop": dict(lr=0.1, momentum=0.9, centered=True),
    "Adagrad": dict(lr=0.1),
    "Adadelta": dict(lr=0.1),
    "Adamax": dict(lr=0.1),
    "NAdam": dict(lr=0.1),
    "RAdam": dict(lr=0.1),
    "Rprop": dict(lr=0.1),
    "ASGD": dict(lr=0.1, t0=1),
}


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_has_torchs_layout(torch, name):
    _, ours = train(ag, name, STATE_OPTIONS[name], "float32", fixed_gradients(), steps=2)
    _, theirs = train(torch, name, STATE_OPTIONS[name], "float32", fixed_gradients(), steps=2)
    ours, theirs = ours.state_dict(), theirs.state_dict()
    (our_group,), (their_group,) = ours["param_groups"], theirs["param_groups"]
    assert our_group["params"] == their_group["params"] == [0, 1, 2]
    # torch also has its implementation switches (foreach, fused, differentiable, capturable)
    assert {k: their_group[k] for k in our_group} == our_group
    assert set(their_group) - set(our_group) <= {"foreach", "fused", "differentiable", "capturable"}
    for index in their_group["params"]:
        assert sorted(ours["state"][index]) == sorted(theirs["state"][index])


@pytest.mark.parametrize(
    ("options", "keys"),
    [(dict(), ["square_avg", "step"]), (dict(momentum=0.5), ["momentum_buffer", "square_avg", "step"]),
     (dict(centered=True), ["grad_avg", "square_avg", "step"])],
)  # fmt: skip
def test_rmsprop_keeps_only_the_buffers_its_options_need(lib, options, keys):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    optimizer = lib.optim.RMSprop([w], **options)
    w.grad = lib.ones(2)
    optimizer.step()
    assert sorted(optimizer.state[w]) == keys


def test_adagrad_makes_its_state_in_the_constructor(torch):
    """PyTorch's Adagrad fills `sum` before any step: state_dict lists every parameter at once."""

    def fresh_state(lib):
        a, b = (lib.tensor(v, requires_grad=True) for v in starting_values()[:2])
        state = lib.optim.Adagrad([a, b], initial_accumulator_value=0.25).state_dict()["state"]
        return {i: (s["step"].item(), s["sum"].tolist()) for i, s in state.items()}

    ours, theirs = fresh_state(ag), fresh_state(torch)
    assert ours == theirs and sorted(ours) == [0, 1] and ours[0][1] == [0.25, 0.25, 0.25]


def test_adagrad_groups_start_their_sums_as_torch_does(torch):
    """A group's own initial_accumulator_value is stored but, as in PyTorch, every sum starts at
    the constructor's value (also for a group added later)."""

    def run(lib):
        a, b, c = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in starting_values())
        optimizer = lib.optim.Adagrad(
            [{"params": [a], "initial_accumulator_value": 2.0}, {"params": [b]}],
            lr=0.1,
            initial_accumulator_value=0.5,
        )
        optimizer.add_param_group({"params": [c], "lr": 0.3, "initial_accumulator_value": 9.0})
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss_of([a, b, c]).backward()
            optimizer.step()
        sums = [optimizer.state[p]["sum"].tolist() for p in (a, b, c)]
        return [a, b, c], sums, optimizer.param_groups[0]["initial_accumulator_value"]

    (ours, our_sums, our_value), (theirs, their_sums, their_value) = run(ag), run(torch)
    assert our_value == their_value == 2.0
    assert_same(ours, theirs, "float64")
    for mine, other in zip(our_sums, their_sums):
        np.testing.assert_allclose(mine, other, rtol=1e-12)


def another_option(name):
    """An option every optimizer but Rprop has (Rprop has no weight decay)."""
    return dict(maximize=True) if name == "Rprop" else dict(weight_decay=0.5)


@pytest.mark.parametrize("name", NAMES)
def test_per_group_options(torch, name):
    def run(lib):
        a, b, c = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in starting_values())
        optimizer = getattr(lib.optim, name)(
            [{"params": [a, b], "lr": 0.3}, {"params": c, **another_option(name)}], lr=0.1
        )
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss_of([a, b, c]).backward()
            optimizer.step()
        return [a, b, c]

    assert_same(run(ag), run(torch), "float64")


@pytest.mark.parametrize(("name", "options"), [(n, STATE_OPTIONS[n]) for n in NAMES])
def test_state_dict_round_trip_continues_training_as_torch(torch, name, options):
    """Stop after 3 steps, load the state into a new optimizer over copies, go on: as PyTorch."""
    gradients = fixed_gradients()

    def resumed(lib):
        params, optimizer = train(lib, name, options, "float64", gradients, steps=3)
        saved = copy.deepcopy(optimizer.state_dict())
        copies = [lib.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
        resumed = getattr(lib.optim, name)(copies, lr=123.0)  # the loaded options replace these
        resumed.load_state_dict(saved)
        assert resumed.param_groups[0]["lr"] == 0.1
        for k in range(3, STEPS):
            for p, g in zip(copies, gradients[k]):
                p.grad = lib.tensor(g)
            resumed.step()
        return copies

    ours = resumed(ag)
    assert_same(ours, resumed(torch), "float64")
    # Loading casts the float32 numbers NAdam (mu_product) and ASGD (eta, mu) keep to the
    # parameter's dtype, as PyTorch does: only the others go on exactly as before the stop.
    if name not in ("NAdam", "ASGD"):
        assert_same(ours, train(ag, name, options, "float64", gradients)[0], "float64")


# ---- what every optimizer does -------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_parameters_without_grad_are_left_alone(lib, name):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    optimizer = getattr(lib.optim, name)([a, b], lr=0.1, **another_option(name))
    a.grad = lib.ones(2)
    optimizer.step()
    assert b.tolist() == [3.0, 4.0] and b.grad is None
    assert a.tolist() != [1.0, 2.0]


@pytest.mark.parametrize("name", NAMES)
def test_step_writes_in_place_and_bumps_the_version(lib, name):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    view = w.detach()  # shares w's storage and version counter
    optimizer = getattr(lib.optim, name)([w], lr=0.1)
    w.grad = lib.ones(2)
    grad_before = w.grad.tolist()
    before = w._version
    optimizer.step()
    assert w._version > before and view._version == w._version
    assert view.tolist() == w.tolist() != [1.0, 2.0]  # the same storage was written
    assert w.grad.tolist() == grad_before  # the gradient itself is only read
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


@pytest.mark.parametrize("name", NAMES)
def test_zero_grad_and_closure(torch, name):
    def run(lib):
        params = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in starting_values()]
        optimizer = getattr(lib.optim, name)(params, lr=0.1)

        def closure():
            optimizer.zero_grad()
            loss = loss_of(params)
            loss.backward()
            return loss

        with lib.no_grad():  # step() records again for the closure
            losses = [optimizer.step(closure).item() for _ in range(STEPS)]
        optimizer.zero_grad()
        assert all(p.grad is None for p in params)
        return params, losses

    (ours, our_losses), (theirs, their_losses) = run(ag), run(torch)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-12)
    assert_same(ours, theirs, "float64")


def test_repr_lists_each_group_like_torch(torch):
    w = ag.tensor([1.0], requires_grad=True)
    for name in NAMES:
        ours = repr(getattr(ag.optim, name)([w], lr=0.1)).splitlines()
        theirs = repr(getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], lr=0.1))
        assert set(ours) <= set(theirs.splitlines())  # torch adds its implementation switches
        assert ours[0] == f"{name} (" and ours[-1] == ")"


# ---- errors --------------------------------------------------------------------------------------
BAD_OPTIONS = [
    ("RMSprop", dict(lr=-1), "Invalid learning rate: -1", "lr="),
    ("RMSprop", dict(eps=-1.0), "Invalid epsilon value: -1.0", "default is 1e-8"),
    ("RMSprop", dict(momentum=-0.5), "Invalid momentum value: -0.5", "momentum=0.9"),
    ("RMSprop", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0", "weight_decay="),
    ("RMSprop", dict(alpha=-0.1), "Invalid alpha value: -0.1", "0.99"),
    ("Adagrad", dict(lr=-0.5), "Invalid learning rate: -0.5", "lr="),
    ("Adagrad", dict(lr_decay=-1.0), "Invalid lr_decay value: -1.0", "lr_decay="),
    ("Adagrad", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0", "weight_decay="),
    (
        "Adagrad",
        dict(initial_accumulator_value=-1.0),
        "Invalid initial_accumulator_value value",
        "sum of squared gradients",
    ),
    ("Adagrad", dict(eps=-1.0), "Invalid epsilon value: -1.0", "default is 1e-10"),
    ("Adadelta", dict(lr=-0.5), "Invalid learning rate: -0.5", "lr=1.0"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5", "[0, 1]"),
    ("Adadelta", dict(eps=-1.0), "Invalid epsilon value: -1.0", "default is 1e-6"),
    ("Adadelta", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0", "weight_decay="),
    ("Adamax", dict(lr=-1.0), "Invalid learning rate: -1.0", "lr=2e-3"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0", "[0, 1)"),
    ("NAdam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1", "[0, 1)"),
    ("NAdam", dict(momentum_decay=-1.0), "Invalid momentum_decay value: -1.0", "4e-3"),
    ("RAdam", dict(eps=-1.0), "Invalid epsilon value: -1.0", "default is 1e-8"),
    ("RAdam", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0", "weight_decay="),
    ("Rprop", dict(lr=-1.0), "Invalid learning rate: -1.0", "step size starts"),
    ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2", "0 < eta_minus < 1"),
    ("ASGD", dict(lr=-1.0), "Invalid learning rate: -1.0", "lr=1e-2"),
    ("ASGD", dict(weight_decay=-1.0), "Invalid weight_decay value: -1.0", "weight_decay="),
]


@pytest.mark.parametrize(("name", "options", "message", "fix"), BAD_OPTIONS)
def test_invalid_options_raise_torchs_error(lib, name, options, message, fix):
    w = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=message) as error:
        getattr(lib.optim, name)([w], **options)
    if lib is ag:  # and ours says what a good value looks like
        assert fix in str(error.value)


# ---- on the GPU ----------------------------------------------------------------------------------
GPU_CASES = [(n, o) for n, o in CASES if n in ("RMSprop", "Adagrad") or o == {}] + [
    ("NAdam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.1, weight_decay=0.1)),
]


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
@pytest.mark.parametrize(("name", "options"), GPU_CASES)
def test_steps_on_cuda_parameters_stay_on_the_gpu(name, options):
    """The same numbers as on the CPU, and no copy between host and GPU during step()."""
    from autograd_lab.backend.cuda import count_transfers

    results = {}
    for device in ("cpu", "cuda"):
        w = ag.tensor([[0.5, -1.0], [2.0, 0.25]], device=device, requires_grad=True)
        optimizer = getattr(ag.optim, name)([w], **options)
        for _ in range(7):  # RAdam's rectified steps start at step 6
            optimizer.zero_grad()
            (w * w * w).sum().backward()
            with count_transfers() as moved:
                optimizer.step()
        results[device] = w
    assert results["cuda"].is_cuda
    assert (moved.host_to_device, moved.device_to_host) == (0, 0)
    np.testing.assert_allclose(
        results["cuda"].detach().cpu().numpy(), results["cpu"].detach().numpy(), rtol=1e-5
    )
