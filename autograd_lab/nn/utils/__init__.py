"""Helpers for training loops, as in `torch.nn.utils`.

clip_grad.py            clip_grad_norm_, clip_grad_value_: tame exploding gradients
convert_parameters.py   parameters_to_vector, vector_to_parameters: all weights as one vector
"""

from .clip_grad import clip_grad_norm_, clip_grad_value_  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
