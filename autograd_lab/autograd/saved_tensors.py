"""Saved-tensor hooks: decide how the tensors saved for backward are stored, as PyTorch's
`torch.autograd.graph.saved_tensors_hooks` does.

Backward needs values from forward (`x * w` keeps x and w). Normally a node keeps those tensors
themselves. Inside `saved_tensors_hooks(pack_hook, unpack_hook)`, every tensor an operation saves
is handed to `pack_hook` when it is saved, and the node keeps whatever pack_hook returns instead;
when backward (or `grad_fn._saved_self`) needs the tensor again, `unpack_hook` turns the packed
value back into a tensor. That is how tensors are moved to the CPU or to disk between forward and
backward, or compressed:

    >>> import autograd_lab as ag
    >>> calls = []
    >>> def pack(t): calls.append("pack"); return t
    >>> def unpack(t): calls.append("unpack"); return t
    >>> x = ag.tensor([1.0, 2.0], requires_grad=True)
    >>> with ag.autograd.graph.saved_tensors_hooks(pack, unpack):
    ...     y = x * x              # MulBackward0 saves self and other: two packs
    >>> y.sum().backward()         # its backward needs both: two unpacks
    >>> calls
    ['pack', 'pack', 'unpack', 'unpack']

One saved tensor can also get its own pair of hooks: `y.grad_fn._raw_saved_self.register_hooks(
pack, unpack)` (a `SavedTensor`, in function.py). The hooks are per thread, and an inner `saved_tensors_hooks`
replaces an outer one until it exits, as in PyTorch.

NB: a tensor that went through hooks comes back as a new tensor object (with the saved tensor's
grad_fn and requires_grad), never as the saved object itself; and, as in PyTorch, it is not
checked for in-place changes: the hooks decide what is stored.
"""

import numpy as np

from .grad_mode import _state

# ---- the context managers --------------------------------------------------------------------------


class saved_tensors_hooks:
    """Inside this block, every tensor saved for backward goes through `pack_hook` when saved and
    `unpack_hook` when needed again.

        with saved_tensors_hooks(lambda t: t.cpu(), lambda t: t.to("cuda")):
            loss = model(x)        # activations kept on the CPU until backward needs them
    """

    def __init__(self, pack_hook, unpack_hook):
        for name, hook in (("pack_hook", pack_hook), ("unpack_hook", unpack_hook)):
            if not callable(hook):
                raise TypeError(
                    f"saved_tensors_hooks: {name} must be a function, got "
                    f"{type(hook).__name__}. Fix: pass two functions, e.g. "
                    "saved_tensors_hooks(lambda t: t, lambda t: t)."
                )
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _state.saved_hooks_disabled is not None:  # someone said hooks would be wrong here
            raise RuntimeError(_state.saved_hooks_disabled)
        _state.saved_hooks = _state.saved_hooks + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _state.saved_hooks = _state.saved_hooks[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep the saved tensors on the CPU between forward and backward (GPU memory is scarce);
    backward moves each back to the device it came from. On the CPU nothing moves.

    `pin_memory` and `device_type` are PyTorch's options for page-locked copies; our tensors
    have no pinned memory, so they change nothing here.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.detach().cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """A block where saved-tensor hooks must not be used: entering `saved_tensors_hooks` inside it,
    or entering it while hooks are active, raises RuntimeError with `error_message`.

    Library code uses it where hooks would give wrong results, and says why in the message.
    """

    def __init__(self, error_message):
        self.error_message = str(error_message)

    def __enter__(self):
        if _state.saved_hooks:
            raise RuntimeError(self.error_message)
        self._previous = _state.saved_hooks_disabled
        _state.saved_hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.saved_hooks_disabled = self._previous
        return False


# ---- a saved tensor that went through hooks ---------------------------------------------------------


class Packed:
    """What a node keeps instead of a saved tensor once hooks packed it: the packed value, the
    unpack hook, and what the tensor rebuilt from it must be connected to in the graph (the
    rebuilding is function.py's `_unpack`)."""

    __slots__ = (
        "packed",  # what pack_hook returned
        "unpack_hook",
        "requires_grad",  # the saved tensor's
        "is_output",  # the node's own output (connected to the node at unpack time: no cycle)
        "grad_fn",  # an input's grad_fn (None for a leaf)
        "output_nr",
        "accumulator",  # a leaf that wants a gradient: its AccumulateGrad node
        "placeholder",  # an array of the saved shape and dtype using no memory, for viewers
    )

    def __init__(self, tensor, pack_hook, unpack_hook, is_output, accumulator, shown=None):
        shown = tensor if shown is None else shown  # what pack_hook is given
        version = shown._version
        self.packed = pack_hook(shown)
        if shown._version != version:
            raise RuntimeError(
                "a saved-tensor pack hook modified the tensor it was given in place; that tensor "
                "is still used by the rest of the computation, so changing it would change "
                "results. Fix: make the pack hook work on a copy (t.clone()) instead."
            )
        self.unpack_hook = unpack_hook
        self.placeholder = np.broadcast_to(np.zeros((), tensor._data.dtype), tensor._data.shape)
        self.requires_grad = tensor._requires_grad
        self.output_nr = tensor._output_nr
        self.is_output = is_output
        self.grad_fn = None if is_output else tensor._grad_fn
        self.accumulator = accumulator
