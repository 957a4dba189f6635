"""Neural-network building blocks, as in `torch.nn`: Module, Parameter, layers, losses.

    import autograd_lab.nn as nn
    import autograd_lab.nn.functional as F

Where things live: `parameter.py` (Parameter), `module.py` (Module: the container every layer is),
`modules.py` (Linear, Sequential, activations, Dropout, losses), `functional.py` (the stateless
functions the modules call), `init.py` (weight initialisation, PyTorch's defaults).
"""

from . import functional, init  # noqa: F401
