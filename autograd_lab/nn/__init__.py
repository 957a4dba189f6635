"""Neural-network building blocks, as in `torch.nn`: Module, Parameter, layers, losses.

    import autograd_lab.nn as nn
    import autograd_lab.nn.functional as F

Where things live: `parameter.py` (Parameter), `module.py` (Module: the base every layer is built
on; `state.py` holds its state_dict/load_state_dict), `modules.py` (Linear, Identity, Flatten,
Dropout), `container.py` (Sequential, ModuleList, ModuleDict, ParameterList), `activation.py`
(ReLU, Tanh, Sigmoid, GELU, Softmax, LogSoftmax, LeakyReLU, SiLU, Softplus, ELU), `loss.py`
(MSELoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss, L1Loss, SmoothL1Loss, HuberLoss),
`functional.py` (the stateless functions the modules call), `init.py` (weight initialisation,
PyTorch's defaults), `sparse.py` (Embedding), `normalization.py` (LayerNorm), `batchnorm.py`
(BatchNorm1d, BatchNorm2d), `conv.py` (Conv1d, Conv2d), `pooling.py` (MaxPool2d, AvgPool2d),
`utils/` (clip_grad_norm_, clip_grad_value_, parameters_to_vector).
"""

from . import functional, init, utils  # noqa: F401
from .activation import (  # noqa: F401
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module  # noqa: F401
from .modules import Dropout, Flatten, Identity, Linear  # noqa: F401
from .normalization import LayerNorm  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .pooling import AvgPool2d, MaxPool2d  # noqa: F401
from .sparse import Embedding  # noqa: F401
