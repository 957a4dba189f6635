"""Learning-rate schedules, as `torch.optim.lr_scheduler`: change the rate as training goes on.

    >>> import autograd_lab as ag
    >>> w = ag.zeros(1, requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=0.1)
    >>> sched = ag.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step()
    >>> sched.step()             # once per epoch, after optimizer.step()
    >>> opt.param_groups[0]["lr"]
    0.05

Where things live: `scheduler.py` (LRScheduler: the constructor's step, initial_lr, chained vs
closed form, state_dict), `decay.py` (StepLR, MultiStepLR, ExponentialLR, PolynomialLR),
`by_function.py` (LambdaLR, MultiplicativeLR), `warmup.py` (LinearLR, ConstantLR), `cosine.py`
(CosineAnnealingLR, CosineAnnealingWarmRestarts), `plateau.py` (ReduceLROnPlateau),
`one_cycle.py` (OneCycleLR), `cyclic.py` (CyclicLR), `combine.py` (SequentialLR,
ChainedScheduler).
"""

from .by_function import LambdaLR, MultiplicativeLR
from .combine import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .cyclic import CyclicLR
from .decay import ExponentialLR, MultiStepLR, PolynomialLR, StepLR
from .one_cycle import OneCycleLR
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler, _LRScheduler  # noqa: F401 - the old name, as in PyTorch
from .warmup import ConstantLR, LinearLR

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
