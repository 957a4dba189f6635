"""autograd_lab.optim.lr_scheduler against torch.optim.lr_scheduler: the same rates, exactly.

Each schedule runs for 30 steps over an optimizer with two parameter groups (different rates) in
both libraries; the rates (and OneCycleLR's momentum) must be equal to the last bit, since both
compute them with the same Python float arithmetic in the same order.
"""

import copy
import math
import pickle

import pytest

import autograd_lab as ag

STEPS = 30


def make_optimizer(lib, name="SGD", **options):
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    options = options or dict(lr=0.1, momentum=0.9)
    return getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.03}], **options)


def momenta(optimizer):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in optimizer.param_groups]


def history(lib, schedule, args=(), kwargs=None, optimizer=("SGD", {}), steps=STEPS):
    """The rates (and momenta) of every epoch: what get_last_lr() says and what the groups hold."""
    opt = make_optimizer(lib, optimizer[0], **optimizer[1])
    scheduler = getattr(lib.optim.lr_scheduler, schedule)(opt, *args, **(kwargs or {}))
    seen = []
    for _ in range(steps):
        seen.append((list(scheduler.get_last_lr()), [g["lr"] for g in opt.param_groups]))
        seen.append(momenta(opt))
        opt.step()  # no gradients: nothing moves, but the order of calls is the right one
        scheduler.step()
    seen.append(list(scheduler.get_last_lr()))
    return seen


def per_group_lambda(e):
    return 1 / (e + 1)


CASES = [
    ("StepLR", (3,), dict()),
    ("StepLR", (), dict(step_size=4, gamma=0.5)),
    ("MultiStepLR", ([2, 5, 5, 9],), dict(gamma=0.3)),
    ("MultiStepLR", (), dict(milestones=[12, 3])),
    ("ExponentialLR", (0.9,), dict()),
    ("LambdaLR", (lambda e: 0.95**e,), dict()),
    ("LambdaLR", ([lambda e: 0.95**e, per_group_lambda],), dict()),
    ("MultiplicativeLR", (lambda e: 0.9 if e % 2 else 1.01,), dict()),
    ("CosineAnnealingLR", (10,), dict()),
    ("CosineAnnealingLR", (), dict(T_max=7, eta_min=0.01)),
    ("LinearLR", (), dict()),
    ("LinearLR", (), dict(start_factor=0.1, end_factor=0.9, total_iters=8)),
    ("LinearLR", (), dict(start_factor=1.0, end_factor=0.0, total_iters=12)),
    ("ConstantLR", (), dict()),
    ("ConstantLR", (), dict(factor=0.5, total_iters=4)),
    ("PolynomialLR", (), dict()),
    ("CosineAnnealingWarmRestarts", (5,), dict()),
    ("CyclicLR", (0.01, 0.1), dict(step_size_up=4)),
    ("CyclicLR", ([0.01, 0.02], 0.1), dict(step_size_up=3, step_size_down=5, mode="triangular2")),
    ("CyclicLR", (0.01, 0.1), dict(step_size_up=2, mode="exp_range", gamma=0.97)),
    ("CyclicLR", (0.01, 0.1), dict(step_size_up=3, scale_fn=lambda x: 1 / x, scale_mode="cycle")),
    ("CyclicLR", (0.01, 0.1), dict(step_size_up=3, cycle_momentum=False, base_momentum=0.5)),
    ("CosineAnnealingWarmRestarts", (), dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("PolynomialLR", (), dict(total_iters=12, power=2.0)),
    ("OneCycleLR", (1.0,), dict(total_steps=STEPS)),
    ("OneCycleLR", ([1.0, 0.5],), dict(epochs=3, steps_per_epoch=10, anneal_strategy="linear")),
    ("OneCycleLR", (0.8,), dict(total_steps=STEPS, three_phase=True, pct_start=0.25)),
    ("OneCycleLR", (0.8,), dict(total_steps=STEPS, base_momentum=[0.8, 0.7], div_factor=10.0)),
    ("OneCycleLR", (0.8,), dict(total_steps=STEPS, cycle_momentum=False, final_div_factor=100.0)),
]
IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(CASES)]


@pytest.mark.parametrize(("schedule", "args", "kwargs"), CASES, ids=IDS)
def test_rates_equal_torchs_exactly(torch, schedule, args, kwargs):
    assert history(ag, schedule, args, kwargs) == history(torch, schedule, args, kwargs)


@pytest.mark.parametrize("optimizer", ["Adam", "RMSprop", "SGD"])
def test_one_cycle_moves_momentum_or_beta1_as_torch(torch, optimizer):
    options = {
        "SGD": dict(lr=0.1, momentum=0.5),
        "RMSprop": dict(momentum=0.5),
        "Adam": dict(lr=0.1),
    }
    spec = (optimizer, options[optimizer])
    ours = history(ag, "OneCycleLR", (0.5,), dict(total_steps=STEPS), spec)
    assert ours == history(torch, "OneCycleLR", (0.5,), dict(total_steps=STEPS), spec)
    assert ours[1] == [0.95, 0.95]  # the cycle starts at max_momentum


def test_a_schedule_of_your_own(torch):
    """Subclassing (also under the old name _LRScheduler): write get_lr(), the rest is given."""

    def run(lib):
        class HalveEveryThird(lib.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                factor = 0.5 if self.last_epoch > 0 and self.last_epoch % 3 == 0 else 1.0
                return [group["lr"] * factor for group in self.optimizer.param_groups]

        opt = make_optimizer(lib)
        scheduler = HalveEveryThird(opt)
        rates = []
        for _ in range(10):
            opt.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr())
        assert isinstance(scheduler, lib.optim.lr_scheduler.LRScheduler)
        return rates, scheduler.state_dict()

    assert run(ag) == run(torch)


def test_the_constructor_takes_step_zero(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.5)
    assert scheduler.last_epoch == 0 and scheduler._step_count == 1
    assert [g["initial_lr"] for g in opt.param_groups] == scheduler.base_lrs == [0.1, 0.03]
    assert [g["lr"] for g in opt.param_groups] == [0.05, 0.015]  # epoch 0's rate, already set


def test_two_schedulers_on_one_optimizer_chain(torch):
    """Chained forms compose: a warm-up and a decay both multiply the current rate."""

    def run(lib):
        opt = make_optimizer(lib)
        warmup = lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=5)
        decay = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        rates = []
        for _ in range(STEPS):
            opt.step()
            warmup.step()
            decay.step()
            rates.append(decay.get_last_lr())
        return rates, [g["initial_lr"] for g in opt.param_groups]

    assert run(ag) == run(torch)


@pytest.mark.parametrize(
    ("schedule", "kwargs"),
    [("StepLR", dict(step_size=3)), ("MultiStepLR", dict(milestones=[2, 6])),
     ("ExponentialLR", dict(gamma=0.8)), ("CosineAnnealingLR", dict(T_max=6, eta_min=0.001)),
     ("LinearLR", dict(start_factor=0.3, total_iters=7)), ("ConstantLR", dict(total_iters=3)),
     ("PolynomialLR", dict(total_iters=8, power=0.5))],
)  # fmt: skip
def test_step_with_an_epoch_uses_the_closed_form(torch, schedule, kwargs):
    def run(lib):
        opt = make_optimizer(lib)
        scheduler = getattr(lib.optim.lr_scheduler, schedule)(opt, **kwargs)
        rates = []
        for epoch in [1, 2, 5, 4, 9, 13]:  # jumps, and a step back
            opt.step()
            with pytest.warns(UserWarning, match="epoch parameter"):
                scheduler.step(epoch)
            rates.append((scheduler.last_epoch, scheduler.get_last_lr()))
        return rates

    assert run(ag) == run(torch)


@pytest.mark.parametrize(
    ("schedule", "kwargs"),
    [("StepLR", dict(step_size=3)), ("ExponentialLR", dict(gamma=0.8)),
     ("CosineAnnealingLR", dict(T_max=6)), ("LinearLR", dict(start_factor=0.3, total_iters=9))],
)  # fmt: skip
def test_resuming_at_an_epoch(torch, schedule, kwargs):
    """last_epoch >= 0 needs each group's initial_lr (from a loaded optimizer state)."""

    def run(lib):
        opt = make_optimizer(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"] * 2
        scheduler = getattr(lib.optim.lr_scheduler, schedule)(opt, last_epoch=4, **kwargs)
        rates = [scheduler.get_last_lr()]
        for _ in range(8):
            opt.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr())
        return rates

    assert run(ag) == run(torch)


# ---- schedulers of schedulers ------------------------------------------------------------------
COMPOSITES = {
    "warmup-then-cosine": lambda s, opt: (
        [s.LinearLR(opt, start_factor=0.1, total_iters=4), s.CosineAnnealingLR(opt, T_max=10)],
        [5],
    ),
    "three-phases": lambda s, opt: (
        [s.ConstantLR(opt, factor=0.5, total_iters=2), s.ExponentialLR(opt, gamma=0.9),
         s.StepLR(opt, step_size=4, gamma=0.5)],
        [3, 10],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(COMPOSITES))
@pytest.mark.parametrize("kind", ["SequentialLR", "ChainedScheduler"])
def test_schedulers_of_schedulers_equal_torchs(torch, kind, name):
    def run(lib):
        opt = make_optimizer(lib)
        schedulers, milestones = COMPOSITES[name](lib.optim.lr_scheduler, opt)
        if kind == "SequentialLR":
            scheduler = lib.optim.lr_scheduler.SequentialLR(opt, schedulers, milestones)
        else:
            scheduler = lib.optim.lr_scheduler.ChainedScheduler(schedulers)
        rates = []
        for _ in range(STEPS):
            rates.append((scheduler.get_last_lr(), [g["lr"] for g in opt.param_groups]))
            opt.step()
            scheduler.step()
        state = scheduler.state_dict()
        return rates, {k: v for k, v in state.items() if k != "_schedulers"}, state["_schedulers"]

    assert run(ag) == run(torch)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_with_fractional_epochs(torch, T_mult):
    """Annealing within an epoch: step(epoch + batch / batches), as PyTorch's docs show."""

    def run(lib):
        opt = make_optimizer(lib)
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=T_mult)
        rates = []
        for epoch in range(12):
            for batch in range(4):
                opt.step()
                scheduler.step(epoch + batch / 4)
                rates.append((scheduler.last_epoch, scheduler.T_i, scheduler.get_last_lr()))
        return rates, scheduler.state_dict()

    assert run(ag) == run(torch)


def test_schedulers_of_schedulers_refuse_what_torch_refuses(lib):
    opt = make_optimizer(lib)
    schedulers = lib.optim.lr_scheduler
    warmup, decay = schedulers.LinearLR(opt), schedulers.ExponentialLR(opt, 0.9)
    with pytest.raises(ValueError, match="number of milestone points"):
        schedulers.SequentialLR(opt, [warmup, decay], milestones=[2, 4])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        schedulers.ChainedScheduler([warmup, schedulers.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="same optimizer"):
        schedulers.SequentialLR(make_optimizer(lib), [warmup, decay], milestones=[2])


# ---- state_dict ----------------------------------------------------------------------------------
STATE_CASES = [
    c for c in CASES if c[0] in ("StepLR", "CosineAnnealingLR", "OneCycleLR", "CyclicLR")
]


@pytest.mark.parametrize(("schedule", "args", "kwargs"), STATE_CASES)
def test_state_dict_matches_torchs_and_resumes(torch, schedule, args, kwargs):
    def state_after(lib, steps):
        opt = make_optimizer(lib)
        scheduler = getattr(lib.optim.lr_scheduler, schedule)(opt, *args, **kwargs)
        for _ in range(steps):
            opt.step()
            scheduler.step()
        return opt, scheduler

    ours, theirs = state_after(ag, 7)[1].state_dict(), state_after(torch, 7)[1].state_dict()
    assert ours == theirs

    # resume: a fresh optimizer and scheduler, loaded, go on as the uninterrupted ones do
    opt, scheduler = state_after(ag, 7)
    saved_groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    resumed_opt = make_optimizer(ag)
    resumed = getattr(ag.optim.lr_scheduler, schedule)(resumed_opt, *args, **kwargs)
    resumed.load_state_dict(scheduler.state_dict())
    for group, saved in zip(resumed_opt.param_groups, saved_groups):
        group.update(saved)
    for _ in range(10):
        for o in (opt, resumed_opt):
            o.step()
        scheduler.step()
        resumed.step()
        assert resumed.get_last_lr() == scheduler.get_last_lr()


def test_lambda_state_dict_saves_callable_objects_not_functions(torch):
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate**epoch

    def saved(lib):
        opt = make_optimizer(lib)
        return lib.optim.lr_scheduler.LambdaLR(opt, [Decay(0.5), lambda e: 1.0]).state_dict()

    ours = saved(ag)
    assert ours["lr_lambdas"] == [{"rate": 0.5}, None] and ours == saved(torch)
    opt = make_optimizer(ag)
    other = ag.optim.lr_scheduler.LambdaLR(opt, [Decay(0.9), lambda e: 1.0])
    other.load_state_dict(ours)
    assert other.lr_lambdas[0].rate == 0.5 and other.last_epoch == 0


# ---- ReduceLROnPlateau ---------------------------------------------------------------------------
METRICS = [5.0, 4.0, 4.0, 3.9999, 4.1, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0] + [2.0] * 10 + [1.0] * 8
PLATEAU_CASES = [
    dict(),
    dict(patience=1),
    dict(patience=2, factor=0.5, cooldown=3),
    dict(patience=0, threshold=0.1, threshold_mode="abs"),
    dict(patience=1, mode="max"),
    dict(patience=1, mode="max", threshold_mode="abs", threshold=0.5),
    dict(patience=0, factor=0.5, min_lr=[0.01, 0.02]),
    dict(patience=0, factor=0.5, min_lr=0.02, eps=0.01),
]


@pytest.mark.parametrize("kwargs", PLATEAU_CASES)
def test_reduce_on_plateau_equals_torch(torch, kwargs):
    def run(lib):
        opt = make_optimizer(lib)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seen = []
        for metric in METRICS:
            opt.step()
            scheduler.step(lib.tensor(metric) if metric == 3.0 else metric)  # a 0-d tensor too
            seen.append((scheduler.get_last_lr(), scheduler.num_bad_epochs, scheduler.best))
        state = scheduler.state_dict()
        return seen, {k: v for k, v in state.items() if k != "best"}

    assert run(ag) == run(torch)


def test_reduce_on_plateau_is_an_lr_scheduler_without_initial_lr(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt)
    assert isinstance(scheduler, lib.optim.lr_scheduler.LRScheduler)
    assert "initial_lr" not in opt.param_groups[0] and scheduler.last_epoch == 0


# ---- warnings and errors -------------------------------------------------------------------------
def test_stepping_the_scheduler_first_warns(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match=r"`lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        scheduler.step()


def test_the_right_order_does_not_warn(lib, recwarn):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    scheduler.step()
    assert not [w for w in recwarn if "lr_scheduler" in str(w.message)]


def test_a_copy_of_a_watched_optimizer_steps_its_own_parameters(lib):
    """The scheduler's watch on optimizer.step() stays with the optimizer it was put on."""
    w = lib.tensor([1.0], requires_grad=True)
    optimizer = lib.optim.SGD([w], lr=0.5)
    lib.optim.lr_scheduler.StepLR(optimizer, 2)
    twin = copy.deepcopy(optimizer)
    (twin_w,) = twin.param_groups[0]["params"]
    twin_w.grad = lib.ones(1)
    twin.step()
    assert w.tolist() == [1.0] and twin_w.tolist() == [0.5]
    assert pickle.loads(pickle.dumps(optimizer)).param_groups[0]["lr"] == 0.5


def test_get_lr_outside_step_warns(lib):
    scheduler = lib.optim.lr_scheduler.ExponentialLR(make_optimizer(lib), 0.5)
    with pytest.warns(UserWarning, match=r"get_last_lr\(\)"):
        scheduler.get_lr()


def test_errors_as_torch_raises_them(lib):
    opt = make_optimizer(lib)
    schedulers = lib.optim.lr_scheduler
    with pytest.raises(TypeError, match="is not an Optimizer"):
        schedulers.StepLR([1, 2], 3)
    with pytest.raises(KeyError, match="initial_lr"):
        schedulers.StepLR(opt, 3, last_epoch=2)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        schedulers.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        schedulers.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        schedulers.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        schedulers.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        schedulers.MultiplicativeLR(opt, 0.9)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        schedulers.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode maximum is unknown"):
        schedulers.ReduceLROnPlateau(opt, mode="maximum")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 3"):
        schedulers.ReduceLROnPlateau(opt, min_lr=[0, 0, 0])
    with pytest.raises(ValueError, match="total_steps OR"):
        schedulers.OneCycleLR(opt, 1.0)
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        schedulers.OneCycleLR(opt, [1.0], total_steps=5)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        schedulers.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        schedulers.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        schedulers.CyclicLR(opt, 0.01, 0.1, mode="sawtooth")
    with pytest.raises(ValueError, match="pct_start"):
        schedulers.OneCycleLR(opt, 1.0, total_steps=5, pct_start=2.0)
    adadelta = make_optimizer(lib, "Adadelta", lr=1.0)
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        schedulers.OneCycleLR(adadelta, 1.0, total_steps=5)


def test_one_cycle_past_its_total_steps_is_an_error(lib):
    opt = make_optimizer(lib)
    scheduler = lib.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        scheduler.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        scheduler.step()


def test_error_messages_say_how_to_fix_them():
    opt = make_optimizer(ag)
    schedulers = ag.optim.lr_scheduler
    with pytest.raises(KeyError, match="load the optimizer's state_dict"):
        schedulers.StepLR(opt, 3, last_epoch=2)
    with pytest.raises(ValueError, match="steps_per_epoch=len"):
        schedulers.OneCycleLR(opt, 1.0)
    with pytest.raises(ValueError, match="cycle_momentum=False"):
        schedulers.OneCycleLR(make_optimizer(ag, "Adagrad", lr=0.1), 1.0, total_steps=5)
    with pytest.raises(ValueError, match="mode='max'"):
        schedulers.ReduceLROnPlateau(opt, mode="maximum")


def test_cosine_closed_form_by_hand():
    opt = make_optimizer(ag)
    scheduler = ag.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=0.0)
    for _ in range(4):
        opt.step()
        scheduler.step()
    assert math.isclose(scheduler.get_last_lr()[0], 0.05, rel_tol=1e-12)  # half way: half the rate
