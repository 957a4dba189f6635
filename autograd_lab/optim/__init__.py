"""Optimizers, as in `torch.optim`: they move parameters along their gradients.

    import autograd_lab.optim as optim
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()                  # forget the previous step's gradients
        loss_fn(model(x), y).backward()  # fill every parameter's .grad
        opt.step()                       # update the parameters in place

Where things live: `optimizer.py` (Optimizer: parameter groups, state, zero_grad, state_dict),
`sgd.py` (SGD, with momentum and Nesterov), `adam.py` (Adam, AdamW), `rmsprop.py` (RMSprop),
`adagrad.py` (Adagrad), `adadelta.py` (Adadelta), `adamax.py` (Adamax), `nadam.py` (NAdam),
`radam.py` (RAdam), `rprop.py` (Rprop), `asgd.py` (ASGD); `lr_scheduler/` changes the learning rate as training goes on (StepLR,
CosineAnnealingLR, ReduceLROnPlateau, ...).
"""

from . import lr_scheduler  # noqa: F401 - optim.lr_scheduler.StepLR, as in PyTorch
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "ASGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
]
