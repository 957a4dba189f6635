"""All the weights of a model as one flat vector, and back.

    >>> import autograd_lab as ag
    >>> layer = ag.nn.Linear(3, 2)
    >>> vec = ag.nn.utils.parameters_to_vector(layer.parameters())
    >>> vec.shape                                       # 2·3 weights + 2 biases
    autograd_lab.Size([8])
    >>> ag.nn.utils.vector_to_parameters(ag.zeros(8), layer.parameters())
    >>> layer.bias
    Parameter containing:
    tensor([0., 0.], requires_grad=True)

Useful to look at a model as one point in weight space (its distance to another, say).
"""

from ...ops.shape import cat
from ...tensor import Tensor


def parameters_to_vector(parameters):
    """The parameters, each flattened, joined in order into one 1-D tensor (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive pieces of the 1-D `vec` into the parameters, in order (no gradient)."""
    if not isinstance(vec, Tensor):
        raise TypeError(
            f"expected torch.Tensor, but got: {type(vec).__name__}. Fix: pass the tensor made "
            "by parameters_to_vector (or ag.tensor(...))."
        )
    start = 0
    for p in parameters:
        count = p.numel()
        p.data = vec[start : start + count].reshape(p.shape).data
        start += count
