"""Issue 13's promise for optim, lr_scheduler and save/load: a learner's PyTorch training script
runs unchanged with `import autograd_lab as torch` and prints the same numbers.

`script` below is written against PyTorch's API only and run twice: once with the real torch, once
with autograd_lab in its place. It seeds, builds a model (PyTorch's initialisation, bit for bit),
trains with an optimizer and a learning-rate schedule, saves a checkpoint half way, loads it into a
fresh model/optimizer/scheduler and trains on: the printed losses and rates must agree.
"""

import numpy as np
import pytest

import autograd_lab

RECIPES = [
    ("Adam", dict(lr=0.02), "OneCycleLR", dict(max_lr=0.05, total_steps=40)),
    ("RMSprop", dict(lr=0.01, momentum=0.5), "CosineAnnealingLR", dict(T_max=15, eta_min=1e-4)),
    ("SGD", dict(lr=0.1, momentum=0.9), "StepLR", dict(step_size=7, gamma=0.5)),
    ("NAdam", dict(lr=0.01), "LinearLR", dict(start_factor=0.2, total_iters=10)),
    ("Adagrad", dict(lr=0.1), "ExponentialLR", dict(gamma=0.95)),
    ("RAdam", dict(lr=0.02, weight_decay=1e-3), "MultiStepLR", dict(milestones=[10, 30])),
]


def script(torch, path, optimizer_name, optimizer_options, schedule, schedule_options):
    """A learner's script, with the library passed in as `torch`; returns what it would print."""
    printed = []
    torch.manual_seed(0)
    x = torch.randn(32, 3)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()

    def fresh():
        model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        optimizer = getattr(torch.optim, optimizer_name)(model.parameters(), **optimizer_options)
        scheduler = getattr(torch.optim.lr_scheduler, schedule)(optimizer, **schedule_options)
        return model, optimizer, scheduler

    def train(model, optimizer, scheduler, steps):
        loss_fn = torch.nn.MSELoss()
        for _ in range(steps):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            printed.append((loss.item(), scheduler.get_last_lr()[0]))

    model, optimizer, scheduler = fresh()
    train(model, optimizer, scheduler, 20)
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
        },
        path,
    )
    torch.manual_seed(1)  # the fresh model's own weights differ: the checkpoint must replace them
    model, optimizer, scheduler = fresh()
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    train(model, optimizer, scheduler, 20)
    return printed


@pytest.mark.parametrize("recipe", RECIPES, ids=[f"{r[0]}-{r[2]}" for r in RECIPES])
def test_the_same_script_prints_the_same_numbers(torch, tmp_path, recipe):
    theirs = script(torch, tmp_path / "torch.pt", *recipe)
    ours = script(autograd_lab, tmp_path / "ours.pt", *recipe)
    assert [rate for _, rate in ours] == [rate for _, rate in theirs]  # the schedule: exact
    np.testing.assert_allclose(
        [loss for loss, _ in ours], [loss for loss, _ in theirs], rtol=2e-5, atol=1e-7
    )
