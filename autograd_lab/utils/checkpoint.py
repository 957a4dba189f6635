"""Activation checkpointing: trade compute for memory, as `torch.utils.checkpoint` does.

Backward needs the tensors each node saved in forward (a layer's input, an activation, ...). Those
saved tensors are what fills memory in training. `checkpoint(fn, x)` runs `fn` as usual but drops
what its nodes saved; when backward first needs one of them, it runs `fn` again (recording on) and
hands every node of the segment the tensors the re-run saved. Same gradients, less memory held
between forward and backward, one extra forward of the segment.

    >>> import autograd_lab as ag
    >>> from autograd_lab.utils.checkpoint import checkpoint
    >>> x = ag.tensor([0.5, -1.0], requires_grad=True)
    >>> y = checkpoint(lambda t: t.tanh().exp(), x, use_reentrant=False)
    >>> y.sum().backward()      # TanhBackward0 and ExpBackward0 get their tensors back by recomputing
    >>> x.grad
    tensor([1.2484, 0.1961])

Two variants, as in PyTorch:
- `use_reentrant=False` (our default, PyTorch's recommendation): forward records the graph as usual,
  only the saved tensors are replaced by a placeholder (`_Recompute`). Parameters used inside `fn`
  get gradients through the normal graph, and `autograd.grad` works.
- `use_reentrant=True`: forward runs under no_grad as one node, `CheckpointFunctionBackward`; its
  backward re-runs `fn` and calls `backward()` inside backward (hence "reentrant"), so parameters
  get their `.grad` from that inner pass. As in PyTorch, `autograd.grad` cannot reach them.

NB: PyTorch swaps saved tensors through `saved_tensors_hooks`; here the non-reentrant variant
watches the segment's nodes with the observer hook that viewers use, which reads more simply.
"""

import warnings

from ..autograd.function import Function
from ..autograd.grad_mode import _state, enable_grad
from ..random import default_generator
from ..tensor import Tensor

# ---- the non-reentrant variant -----------------------------------------------------------------


class _Segment:
    """One checkpointed call: enough to run it again (function, inputs, RNG state)."""

    def __init__(self, function, args, kwargs, rng_state):
        self.function, self.args, self.kwargs, self.rng_state = function, args, kwargs, rng_state
        self.node_types = []  # the types of the nodes recorded in forward, in order
        self.recomputed = None  # {position: packed saved entries}, filled by the re-run

    def recompute(self):
        """Run the function again with recording on and keep what each node saves, by position."""
        recorded = []
        previous_observer = _state.on_node  # a viewer watching does not see the re-run
        _state.on_node = lambda node, outputs, args, kwargs: recorded.append(node)
        previous_hooks, _state.saved_hooks = _state.saved_hooks, ()  # as in forward (see below)
        try:
            with _rng_state(self.rng_state), enable_grad():
                self.function(*self.args, **self.kwargs)
        finally:
            _state.on_node = previous_observer
            _state.saved_hooks = previous_hooks
        if [type(node) for node in recorded] != self.node_types:
            raise RuntimeError(
                "checkpoint: recomputing the segment recorded different operations than the forward "
                f"pass ({len(recorded)} vs {len(self.node_types)} nodes), so the tensors saved for "
                "backward cannot be restored. Fix: make the checkpointed function deterministic "
                "(the same operations for the same inputs); keep preserve_rng_state=True if it "
                "draws random numbers, e.g. dropout."
            )
        self.recomputed = {i: node._saved for i, node in enumerate(recorded) if node._saved}
        self.args = self.kwargs = None  # every node now has its tensors: the inputs can go


class _Recompute:
    """Stands in for a node's saved tensors until backward asks for them (`Node.saved_tensors`
    iterates over it): the first request re-runs the segment."""

    __slots__ = ("segment", "position", "entries")

    def __init__(self, segment, position):
        self.segment, self.position, self.entries = segment, position, None

    def __iter__(self):
        if self.entries is None:
            if self.segment.recomputed is None:
                self.segment.recompute()
            self.entries = self.segment.recomputed.pop(self.position)
        return iter(self.entries)

    def __len__(self):
        return len(self.entries) if self.entries is not None else 1


def _checkpoint_non_reentrant(function, args, kwargs, preserve_rng_state):
    rng_state = _save_rng() if preserve_rng_state else None
    segment = _Segment(function, args, kwargs, rng_state)
    outer_observer = _state.on_node

    def drop_saved(node, outputs, op_args, op_kwargs):
        if node._saved:  # packed already: swap the tensors for a placeholder, so they can be freed
            node._saved = _Recompute(segment, len(segment.node_types))
        segment.node_types.append(type(node))
        if outer_observer is not None:  # a viewer (or an outer checkpoint) still sees every node
            outer_observer(node, outputs, op_args, op_kwargs)

    _state.on_node = drop_saved
    # The segment's saved tensors are recomputed, not kept: the user's saved-tensor hooks never see
    # them (in PyTorch the checkpoint's own hooks are the innermost ones, with the same effect).
    outer_hooks, _state.saved_hooks = _state.saved_hooks, ()
    try:
        return function(*args, **kwargs)
    finally:
        _state.on_node = outer_observer
        _state.saved_hooks = outer_hooks


# ---- the reentrant variant ----------------------------------------------------------------------


class CheckpointFunction(Function):
    """The whole segment as one node: forward without recording, backward re-runs and backprops."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _save_rng() if preserve_rng_state else None
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        return run_function(*args)  # recording is off inside a custom forward

    @staticmethod
    def backward(ctx, *grads):
        tensors = iter(ctx.saved_tensors)
        args = [next(tensors) if a is None else a for a in ctx.others]
        inputs = [_detached_like(a) if isinstance(a, Tensor) else a for a in args]
        with _rng_state(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if pairs:
            from ..autograd.engine import backward

            backward([o for o, _ in pairs], [g for _, g in pairs])
        input_grads = [a.grad if isinstance(a, Tensor) else None for a in inputs]
        return (None, None, *input_grads)


def _detached_like(tensor):
    copy = tensor.detach()
    copy.requires_grad_(tensor.requires_grad)
    return copy


# ---- the public functions -----------------------------------------------------------------------


def checkpoint(function, *args, use_reentrant=False, preserve_rng_state=True, **kwargs):
    """Run `function(*args, **kwargs)` without keeping its saved tensors; recompute them in backward.

        h = checkpoint(block, h, use_reentrant=False)   # block's activations are not kept

    NB: PyTorch's default for `use_reentrant` is changing (it warns when it is not passed); ours is
    False, the variant PyTorch recommends. Keyword arguments reach `function` only when
    `use_reentrant=False`, as in PyTorch.
    """
    if not callable(function):
        raise TypeError(
            f"checkpoint() needs a function to run first, got {type(function).__name__}. Fix: "
            "checkpoint(fn, *inputs), e.g. checkpoint(block, x, use_reentrant=False)."
        )
    if use_reentrant:
        if kwargs:
            raise ValueError(
                f"checkpoint(use_reentrant=True) cannot pass keyword arguments {sorted(kwargs)} to "
                "the function. Fix: use_reentrant=False, or make them positional."
            )
        if _state.enabled and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn(
                "None of the inputs have requires_grad=True. Gradients will be None (the reentrant "
                "checkpoint is one node on its inputs, so weights inside get no gradient). Fix: "
                "use_reentrant=False, or an input with requires_grad=True.",
                UserWarning,
                stacklevel=2,
            )
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if not _state.enabled:
        return function(*args, **kwargs)  # nothing is recorded, so nothing to drop or recompute
    return _checkpoint_non_reentrant(function, args, kwargs, preserve_rng_state)


def checkpoint_sequential(functions, segments, input, use_reentrant=False, **kwargs):
    """Run `functions` (a list or an `nn.Sequential`) one after another, checkpointed in `segments`
    chunks; the last chunk runs normally, since backward starts there anyway.

        out = checkpoint_sequential(model, 2, x)   # keeps activations of about half the layers
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError(f"checkpoint_sequential: unexpected keyword arguments {sorted(kwargs)}")
    if hasattr(functions, "_modules") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    if not 1 <= int(segments) <= max(len(functions), 1):
        raise ValueError(
            f"checkpoint_sequential: segments={segments} must be between 1 and the number of "
            f"functions ({len(functions)}). Fix: choose fewer segments."
        )
    size = len(functions) // int(segments)
    end = 0
    for start in range(0, size * (int(segments) - 1), size):
        end = start + size
        input = checkpoint(
            _chain(functions[start:end]),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return _chain(functions[end:])(input)


def _chain(functions):
    def run(input):
        for function in functions:
            input = function(input)
        return input

    return run


# ---- random-number state: dropout in the re-run must draw the same mask ----------------------------


def _save_rng():
    return default_generator.get_state()


class _rng_state:
    """Run a block with the generator at `state`, then put the caller's state back (None: as is)."""

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        if self.state is not None:
            self.outer = _save_rng()
            default_generator.set_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            default_generator.set_state(self.outer)
        return False
