"""Hooks for graph viewers: observe the graph being built and run, and name parts of it.

Nothing here changes what autograd computes; `autograd_lab.viz` is built on these two.

    >>> import autograd_lab as ag
    >>> seen = []
    >>> with ag.autograd.observe(on_node=lambda node, outputs: seen.append(node.name())):
    ...     y = ag.tensor(2.0, requires_grad=True) * 3
    >>> seen
    ['MulBackward0']
"""

from .grad_mode import _state

# PyTorch keeps the saved-tensor hooks in torch.autograd.graph too (they live in saved_tensors.py).
from .saved_tensors import (  # noqa: F401
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


class observe:
    """Watch the graph being built and run, without changing it: the hook the viewers use.

        with observe(on_node=print_new_node, on_backward=print_event):
            loss = model(x); loss.backward()

    `on_node(node, outputs)` is called for every node recorded. `on_call(node, outputs, args,
    kwargs)` is the same moment with the arguments the operation was called with (what a tracer
    needs to replay it: `node._fn.apply(*args, **kwargs)`). `on_backward(event, node, detail)`
    is called as backward runs, in the engine's order: ("run", node, grads it received),
    ("send", node, (next_node, input_nr, grad)) and ("accumulate", node, grad) at a leaf.
    The gradients are lent for the call: copy one to keep it, as the engine may add later
    gradients into it (engine.py, `_add`). Observers are per thread; an inner `observe` replaces
    an outer one until it exits.
    """

    def __init__(self, on_node=None, on_backward=None, on_call=None):
        def watch(node, outputs, args, kwargs):
            if on_node is not None:
                on_node(node, outputs)
            if on_call is not None:
                on_call(node, outputs, args, kwargs)

        self._mine = (watch if on_node or on_call else None, on_backward)

    def __enter__(self):
        self._prev = (_state.on_node, _state.on_backward)
        _state.on_node, _state.on_backward = self._mine
        return self

    def __exit__(self, *exc):
        _state.on_node, _state.on_backward = self._prev
        return False


class scope:
    """Name a part of the computation, e.g. a layer: viewers group the nodes created inside.

        with scope("layer1"):
            h = (x @ w1 + b1).relu()

    Scopes nest ("mlp" then "layer1" gives the path ("mlp", "layer1")); `current_scope()` reads it.
    Nothing in the graph itself changes: a viewer that observes node creation reads the scope.
    """

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        self._prev = _state.scope
        _state.scope = self._prev + (self.name,)
        return self

    def __exit__(self, *exc):
        _state.scope = self._prev
        return False


def current_scope():
    """The names of the enclosing `scope(...)` blocks, outermost first (an empty tuple outside)."""
    return _state.scope
