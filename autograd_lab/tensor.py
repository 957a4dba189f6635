"""Tensor: an array (numpy storage) plus the autograd fields PyTorch has.

    >>> import autograd_lab as ag
    >>> a = ag.tensor(2.0, requires_grad=True)
    >>> b = a * 3
    >>> b
    tensor(6., grad_fn=<MulBackward0>)
    >>> b.backward()
    >>> a.grad
    tensor(3.)

The autograd fields:
- `requires_grad`: should operations on this tensor be recorded?
- `grad_fn`: the node that made this tensor (None for a *leaf*: a tensor you created yourself);
- `grad`: where `backward()` puts d(output)/d(this tensor), for leaves;
- `_version`: bumped by every in-place change, so backward can notice a saved tensor was modified.

Operators and methods (`a * b`, `a.exp()`) are thin sugar over the Functions in `autograd_lab.ops`.
"""

import warnings

import numpy as np

from . import promotion, storage, types
from .autograd.grad_mode import _state
from .autograd.handles import RemovableHandle
from .layout import element_strides
from .types import CPU, CUDA, Size


class Tensor:
    # Every field a Tensor has. The slots are the fields every tensor sets (see `_make`); the
    # defaults below them are fields most tensors never need, until one sets its own value.
    __slots__ = (
        "_data",  # the numbers: a numpy array (or a CudaArray, on the GPU)
        "_requires_grad",  # record the operations that use this tensor?
        "_grad_fn",  # the node that made this tensor; None for a leaf
        "_output_nr",  # which output of _grad_fn this tensor is
        "_grad",  # .grad: filled in by backward() for leaves (and retain_grad() tensors)
        "_version_counter",  # [version], shared by tensors that share storage; None until needed
        "__dict__",  # the fields below once set, and attributes a user sets (t.note = "...")
        "__weakref__",
    )
    _base = None  # for a view: the tensor whose storage it shares
    _view_version = 0  # for a view: the storage's version its history (grad_fn) was made for
    # for a view of one of several views one op returned (unbind, split, chunk): which output of
    # which node, e.g. (0, "Unbind"); PyTorch refuses to change such views in place while recording
    _one_of_several_views = None
    # for a view made inside no_grad() (or a view of one): PyTorch refuses to change it in place
    # while recording, as it cannot tell whether that change should be recorded
    _made_in_no_grad = False
    _hooks = None  # a leaf's register_hook() hooks, {key: hook}
    _post_accumulate_grad_hooks = None  # a leaf's hooks run after .grad is updated, {key: hook}
    _grad_accumulator = None  # a leaf's AccumulateGrad node (a weak reference) while in a graph
    _name = None  # a name for viewers, e.g. 'fc1.weight' (nn.Module sets it)
    _detached_at = -1  # when detach_() cut this tensor's history (a node creation number)
    __array_priority__ = 1000  # numpy array <op> Tensor defers to our reflected operators

    def __init__(self, data=()):
        """`Tensor(data)` builds a tensor of the default dtype (float32), as `torch.Tensor(data)`
        does; prefer `tensor()`."""
        init(self, np.array(data, dtype=types.default_float()))

    # ---- the array and its description ---------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_checked_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return types.of_array(self._data)

    @property
    def device(self):
        return CPU if type(self._data) is np.ndarray else CUDA  # a CudaArray (see storage.py)

    @property
    def is_cuda(self):
        return type(self._data) is not np.ndarray

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim  # PyTorch's older name

    def numel(self):
        return self._data.size

    nelement = numel  # PyTorch's older name, still common in tutorials

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.size * self._data.itemsize

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def is_complex(self):
        return False  # numpy could hold complex numbers, but autograd_lab has no complex dtype

    def is_signed(self):
        return self.dtype.is_signed

    def stride(self, dim=None):
        strides = element_strides(self._data)  # (numpy's own strides of an empty array differ)
        return strides if dim is None else strides[dim]

    def storage_offset(self):
        """How many elements into its storage this tensor starts (a view: where in its base's)."""
        return _views.storage_offset(self._data)

    def data_ptr(self):
        """The memory address of the first element: a view shares its base's memory, so
        `v.data_ptr() == x.data_ptr()` when v starts where x does."""
        data = self._data
        if hasattr(data, "__array_interface__"):
            return data.__array_interface__["data"][0]
        # a CudaArray: a window, `offset` elements in, onto a numba device buffer
        buffer = data.buffer  # the simulator's stand-in for GPU memory is a numpy array
        interface = getattr(buffer, "__cuda_array_interface__", None) or buffer.__array_interface__
        start = interface["data"][0]
        return start + data.offset * data.dtype.itemsize

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def contiguous(self):
        return self if self._data.flags.c_contiguous else _elementwise.contiguous(self)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"item() needs a tensor with exactly one element, but this one has "
                f"{self._data.size} (shape {list(self._data.shape)}). Pick an element first, "
                "e.g. t[0].item(), or reduce it, e.g. t.sum().item()."
            )
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        storage.check_on_host(self._data)
        if self._requires_grad and not force:
            raise RuntimeError(
                "numpy() would hand out this tensor's storage without its graph, so it refuses while "
                "requires_grad=True. Fix: call t.detach().numpy() to say you mean it."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        data = self.numpy()
        return data if dtype is None else data.astype(dtype, copy=False)

    # ---- autograd fields -----------------------------------------------------------------------
    @property
    def requires_grad(self):
        # a view requires grad when its base does, even one taken before the base's
        # requires_grad_() (as in PyTorch, no gradient reaches it then: autograd/function.py)
        return self._requires_grad or (self._base is not None and self._base._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None and requires_grad:
            return self  # already requires grad: nothing to change
        if self._grad_fn is not None:
            raise RuntimeError(
                f"requires_grad can only be changed on leaf tensors; this one was made by "
                f"{self._grad_fn.name()}. Fix: use t.detach() to get a leaf that shares its values, "
                "then set requires_grad on that."
            )
        if requires_grad and self._data.dtype.kind != "f":
            raise RuntimeError(
                f"only floating-point tensors can require gradients, but this one is "
                f"{self.dtype}. Fix: convert it first, e.g. t.float().requires_grad_()"
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        if self._base is not None:
            self._refresh_view_history()
        return self._grad_fn

    def _history_is_stale(self):
        """Whether this is a view whose storage was changed in place since its history was
        recorded (the next grad_fn rebuilds it, or refuses: _refresh_view_history)."""
        return self._base is not None and self._view_version != self._version_counter[0]

    def _refresh_view_history(self):
        """A view whose storage was changed in place since its history was recorded (through its
        base or another view) gets a new one, as in PyTorch: `as_strided(base, its size, stride,
        offset)`, the node AsStridedBackward0, which leads to the base's current history
        (ops/views.py). The one place that notices: the grad_fn property calls it.

        A view made inside no_grad() gets none: PyTorch cannot tell whether the change should be
        part of its history, and refuses to guess."""
        if self._view_version == self._version_counter[0]:
            return
        base = self._base
        if self._grad_fn is None and not base._requires_grad:
            # PyTorch's first question: a view with no history, of a base that wants no
            # gradient, has nothing to rebuild, and nothing that could be wrong to refuse
            self._view_version = self._version_counter[0]
            return
        # From here the view has a history, or its base wants a gradient: PyTorch refuses to
        # rebuild the history of the views it cannot trust (below), even when the base has
        # stopped requiring grad since (x.requires_grad_(False), detach_()), since the view's
        # old history may still lead to leaves.
        if self._made_in_no_grad:
            raise RuntimeError(
                "A view was created in no_grad mode and its base or another view of its base has "
                "been modified inplace: autograd cannot tell whether that change belongs to the "
                "view's history (PyTorch says so too of the pieces that unbind/split/chunk "
                "gave of a tensor that did not require grad). Fix: make the view and the "
                "in-place change both inside `with no_grad():` and use the view only there, or "
                "make both outside it (take the pieces after the change)."
            )
        if self._one_of_several_views is not None:
            # as_strided could rebuild a history, but the node that returned several views could
            # not tell its outputs apart from such copies, so PyTorch refuses to use the view.
            # Every use that records asks for grad_fn first (Function.apply's edges), so the
            # refusal comes before the op's own checks, as in PyTorch.
            output_nr, node = self._one_of_several_views
            raise RuntimeError(
                f"Output {output_nr} of {node} is a view and its base or another view of its base "
                "has been modified inplace. This view is the output of a function that returns "
                "multiple views (unbind, split, chunk), and such views cannot be used once their "
                "storage was changed in place. Fix: take the pieces after the in-place change, or "
                "use an out-of-place op (y = y * 2) instead of the in-place one."
            )
        self._view_version = self._version_counter[0]
        cut_off = not base._requires_grad  # the base's history was cut since (base.detach_())
        recording = _state.enabled
        _state.enabled = True  # also inside no_grad() and backward(), as PyTorch does
        try:
            size, stride, offset = _views.geometry(self._data)
            # a cut-off base: PyTorch still gives the view the new node, leading nowhere, so no
            # gradient reaches the leaves of the history the base had
            source = base.detach().requires_grad_() if cut_off else base
            rebuilt = _views.as_strided(source, size, stride, offset)
        finally:
            _state.enabled = recording
        if cut_off:
            rebuilt._grad_fn.next_functions = ((None, 0),)
        self._take_history(rebuilt._grad_fn)

    def _take_history(self, node):
        """Make `node` (its output 0) this tensor's grad_fn, after an in-place change. A tensor
        that retains its gradient keeps doing so for its new value, as in PyTorch: retain_grad()
        moves to the new node (the old one would give the gradient of the old value)."""
        retained = self.retains_grad
        if retained:
            del self._grad_fn._retained[self._output_nr]
        self._grad_fn, self._output_nr = node, 0
        self._requires_grad = True
        if retained:
            self.retain_grad()

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def grad(self):
        if self._grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(
                "you read .grad of a non-leaf tensor (one made by an operation); backward() only "
                "fills .grad of leaf tensors, so it is None. Fix: call t.retain_grad() before "
                "backward() to keep it, or read the leaf's .grad instead.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
        if value is not None and value._data.shape != self._data.shape:
            raise RuntimeError(
                f"grad of shape {list(value._data.shape)} does not fit a tensor of shape "
                f"{list(self._data.shape)}; a gradient always has the shape of its tensor"
            )
        if value is not None:
            storage.check_grad_device(value._data, self._data, "assigned grad")
        self._grad = value

    @property
    def retains_grad(self):
        node = self._grad_fn
        return bool(node is not None and node._retained and self._output_nr in node._retained)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in `.grad` after backward (leaves always do)."""
        if not self.requires_grad:
            why = (
                ""
                if self._data.dtype.kind == "f"
                else f" ({self.dtype} is an integer or bool type)"
            )
            raise RuntimeError(
                f"retain_grad() on a tensor that does not require grad{why}: no gradient will ever "
                "reach it"
            )
        node = self.grad_fn  # (a view changed in place gets its new history first)
        if node is not None:
            import weakref

            if node._retained is None:
                node._retained = {}
            node._retained[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a non-None return replaces it.

        Returns a handle; `handle.remove()` takes the hook off.
        """
        node = self._grad_fn
        if node is None:  # leaf: the hook lives on the tensor, AccumulateGrad runs it
            return self._leaf_hook("_hooks", hook)
        if node._tensor_hooks is None:  # non-leaf: the hook lives on the node that makes it
            node._tensor_hooks = {}
        return RemovableHandle(node._tensor_hooks.setdefault(self._output_nr, {}), hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call `hook(self)` each time backward() has accumulated this leaf's gradient into `.grad`.

        The hook gets the tensor, not its gradient, and must return None. It is the place to
        update a parameter as soon as its gradient is complete and to drop that gradient, so that
        a training step never holds all its gradients at once (PyTorch's "optimizer step in the
        backward pass"). `autograd.grad()` fills no `.grad`, so it runs none of these hooks.
        Returns a handle; `handle.remove()` takes the hook off.

            >>> w = ag.tensor([1.0, 2.0], requires_grad=True)
            >>> optimizer = ag.optim.SGD([w], lr=0.1)
            >>> def update(p):  # a def, not a lambda: a lambda would return the two calls' results
            ...     optimizer.step()
            ...     optimizer.zero_grad()  # .grad = None: the gradient's memory goes right now
            >>> handle = w.register_post_accumulate_grad_hook(update)
            >>> (w * w).sum().backward()  # d/dw = 2w; updated inside backward
            >>> w, w.grad
            (tensor([0.8000, 1.6000], requires_grad=True), None)
        """
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors: this one was "
                f"made by {self._grad_fn.name()}, and only a leaf's gradient is accumulated into "
                ".grad. Fix: register it on the leaf (the parameter), or use register_hook() to "
                "see this tensor's gradient."
            )
        return self._leaf_hook("_post_accumulate_grad_hooks", hook)

    def _leaf_hook(self, field, hook):
        """Keep `hook` in this leaf's dict of hooks `field`; the engine runs them (engine.py)."""
        if not self._requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that does not require grad: no gradient will "
                "ever reach it. Fix: create it with requires_grad=True (or call requires_grad_())."
            )
        if getattr(self, field) is None:
            setattr(self, field, {})
        return RemovableHandle(getattr(self, field), hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute d(self)/d(leaf) for every leaf this tensor depends on, into `leaf.grad`."""
        from .autograd.engine import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def _shared_version_counter(self):
        """The version counter: a one-item list shared by tensors sharing storage (views, detach).

        Made on first need, so the many tensors that are never modified in place, viewed or
        detached cost no extra object.
        """
        if self._version_counter is None:
            self._version_counter = [0]
        return self._version_counter

    @property
    def _version(self):
        """How many times this tensor's storage was modified in place (backward checks it)."""
        return self._version_counter[0] if self._version_counter is not None else 0

    @property
    def data(self):
        """The same storage without the graph (and, as in PyTorch, without version tracking)."""
        return _make(self._data)

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    def detach(self):
        """A new leaf sharing this tensor's storage, cut off from the graph."""
        out = _make(self._data)
        out._version_counter = self._shared_version_counter()  # same storage, same counter
        return out

    def detach_(self):
        if self._base is not None:  # its history is tied to its base's: it cannot drop it alone
            raise RuntimeError(
                "Can't detach views in-place: this tensor is a view of another one (from "
                "indexing, view, transpose, ...). Use detach() instead, which gives a new tensor."
            )
        if self._grad_fn is not None:  # nodes that saved it before now cannot use it (function.py)
            self._detached_at = creation_number_now()
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    # ---- conversions ------------------------------------------------------------------------------
    def to(self, *args, **kwargs):
        """`t.to(dtype)`, `t.to(device)`, `t.to(other)`: a converted tensor (self when nothing changes)."""
        copy = kwargs.pop("copy", False)
        target_device, target_dtype = to_arguments(args, kwargs)
        device = storage.resolve_device(target_device)
        device = None if device == self.device else device
        dtype = None if target_dtype is None else types.to_dtype(target_dtype).numpy
        dtype = None if dtype == self._data.dtype else dtype
        if dtype is not None or device is not None:  # one recorded ToCopyBackward0
            return _elementwise.to_dtype(self, dtype=dtype, device=device)
        return self.clone() if copy else self

    def cpu(self):
        """This tensor on the CPU (itself if it is there): a copy the gradient flows back through."""
        return self.to(CPU)

    def cuda(self, device=None):
        """This tensor on the GPU, `cuda:0` (itself if it is there); see autograd_lab.cuda."""
        return self.to("cuda" if device is None else types.device(device))

    def type_as(self, other):
        return self.to(other.dtype)

    # ---- in-place operations --------------------------------------------------------------------
    def _inplace(self, op, *args, check_first=False, copies=False, **kwargs):
        """Compute `op(self, *args)` and write it into self's storage: PyTorch's `x.op_(...)`.

        While recording, the result's node becomes self's `grad_fn`; the node sees a copy of the old
        values, so the gradient stays right even though the storage changed. Through a view, the
        change is recorded as a change of its base (CopySlices, ops/views.py).

        PyTorch refuses in this order: an argument of the wrong type (its argument parser's
        TypeError), then autograd (a leaf, or a view of one, that requires grad), then the kernel:
        overlapping memory (ops/overlap.py) first, then whatever the op itself finds wrong.
        """
        self_requires_grad = self.requires_grad
        wants_grad = _state.enabled and (
            self_requires_grad
            or any(isinstance(a, Tensor) and a.requires_grad for a in (*args, *kwargs.values()))
        )
        # an integer or bool tensor cannot require grad, so writing into one records nothing;
        # PyTorch still refuses to change it in place where it is a view it could not record a
        # change of (a piece of split or chunk), except in copy_, which asks nothing then
        recording = wants_grad and self._data.dtype.kind == "f"
        checked = recording or (wants_grad and not copies and op is not _elementwise.copy_from)
        autograd_refusal = checked and self._inplace_refusal(self_requires_grad)
        refusal = autograd_refusal or _overlap.refusal(self, op, args, kwargs)
        if refusal:
            # an op with a side effect (a random fill moves the generator on) is refused before
            # it runs; any other runs first, on the side, in case it has an argument of the wrong
            # type to report (clamp_(min=tensor, max=0.5)); the scatter family checks its dim and
            # index even before it looks at overlapping memory, and where only we refuse, any
            # error of the op's own is PyTorch's
            if not check_first:
                own_checks_first = not autograd_refusal and (
                    op.__name__ in _overlap.CHECKS_FIRST
                    or _overlap.refused_where_pytorch_runs(refusal)
                )
                _raise_error_of(op, self.detach(), args, kwargs, not own_checks_first)
            raise refusal
        base = self._base
        try:
            if recording and base is not None:  # through a view: the base's history changes
                result, base_after = _views.change_through_view(self, op, args, kwargs)
            elif recording:  # the node sees a copy of the old values
                previous = _make(self._data.copy(), self._grad_fn, self._output_nr)
                result = op(previous, *args, **kwargs)
            elif op is _elementwise.copy_from:
                # PyTorch's copy_ into a tensor that records nothing (an integer one) never asks
                # for the source's history, so a source whose history is unusable (a piece of
                # unbind whose base changed since) can still be copied from
                result = _without_recording(op, self, *args, **kwargs)
            else:
                result = op(self, *args, **kwargs)
        except NotImplementedError:
            # PyTorch checks that the result fits self (its shape, then its dtype) before it
            # looks for a kernel for that dtype: a bool x.lerp_(y, y) with a bigger y is refused
            # for its shape, a bool x.lerp_(x, long_weight) for the Long result
            operands = (*args, *[value for key, value in kwargs.items() if key != "index"])
            tensors = [a for a in operands if isinstance(a, Tensor)]  # (clamp_'s min=, max=)
            try:
                shape = np.broadcast_shapes(self._data.shape, *[t._data.shape for t in tensors])
            except ValueError:  # not an elementwise op, or shapes the op itself refuses
                shape = self._data.shape
            self._check_result_fits(shape, kwargs.get("dtype"))
            self._check_result_casts(promotion.common_dtype(self, *tensors))
            raise
        self._check_result_fits(result._data.shape, kwargs.get("dtype"))
        self._check_result_casts(types.of_array(result._data))
        if self._data.size:  # an empty tensor has nothing to write
            _overlap.write(self._data, result._data)
        self._shared_version_counter()[0] += 1
        if recording:
            self._requires_grad = True
            rebind_saved_output(result._grad_fn, self)
            if base is None:
                self._take_history(result._grad_fn)
            else:  # the view's own history is rebuilt from the base's (AsStridedBackward0)
                base._take_history(base_after._grad_fn)
                self._refresh_view_history()
        return self

    def _check_result_fits(self, shape, dtype):
        """An in-place result must have self's shape, and a dtype= asked for must be self's."""
        if dtype is not None and types.to_dtype(dtype) != self.dtype:  # cumsum_(0, dtype=...)
            raise RuntimeError(
                f"Bad in-place call: input tensor dtype {self.dtype} and output tensor dtype "
                f"{types.to_dtype(dtype)} should match: an in-place op keeps the tensor's dtype. "
                "Fix: leave out dtype=, or use the out-of-place op (y = x.cumsum(0, dtype=...))."
            )
        if shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(shape)}: an in-place op writes into the tensor it changes, so it cannot "
                "change that tensor's shape. Fix: use the out-of-place op (x = x + y) instead."
            )

    def _check_result_casts(self, computed):
        """An in-place result of dtype `computed` must cast to self's dtype (PyTorch's
        "same kind" rule: no float into an integer, nothing but bool into bool)."""
        if not promotion.can_cast(computed, self.dtype):
            raise RuntimeError(
                f"result type {types.kernel_name(computed)} can't be cast to the desired output "
                f"type {types.kernel_name(self.dtype)}: the in-place result is {computed}, and a "
                f"{self.dtype} tensor cannot hold it. Fix: convert first (x = x.float()) or use "
                "an out-of-place op."
            )

    def _inplace_refusal(self, self_requires_grad):
        """PyTorch's refusals of an in-place op while recording (the view checks come first): the
        error to raise, or None."""
        base = self._base
        if base is not None and self._one_of_several_views is not None:
            # the node that returned several views cannot tell them apart from the copies an
            # in-place change would need, so PyTorch refuses instead of giving a wrong gradient
            output_nr, node = self._one_of_several_views
            return RuntimeError(
                f"Output {output_nr} of {node} is a view and is being modified inplace. This view "
                "is the output of a function that returns multiple views (unbind, split, chunk), "
                "which do not allow the output views to be modified inplace. Fix: use the "
                "out-of-place op (y = piece * 2), or .clone() the piece first."
            )
        if base is not None and self._made_in_no_grad:
            return RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                "enabled: autograd cannot tell whether you want this change recorded (PyTorch "
                "says so too of the pieces that unbind/split/chunk gave of a tensor that did not "
                "require grad). Fix: make the view and the in-place change both inside `with "
                "no_grad():` (not recorded) or both outside it (recorded), or .clone() the piece."
            )
        # a view that requires grad, of a base that is a leaf (whether or not the base requires
        # grad): changing it would change the leaf
        if base is not None and base._grad_fn is None and self_requires_grad:
            return RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation: changing the view would change the leaf, whose gradient would then "
                "refer to values that no longer exist. Fix: change it inside `with no_grad():`, "
                "or work on a copy (y = x.clone(), then view and change y)."
            )
        # a view counts as a leaf until its history is rebuilt (when its grad_fn is first asked
        # for after its base changed): PyTorch looks at the history it has, without rebuilding it
        if self._grad_fn is None and self_requires_grad:
            return RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation: "
                "autograd is recording, and the leaf's gradient would refer to values that no "
                "longer exist. Fix: update it inside `with no_grad():` (as optimizers do), or "
                "work on a copy (y = x.clone()) or an out-of-place op (y = x + 1)."
            )
        return None

    def copy_(self, src):
        return self._inplace(_elementwise.copy_from, src)

    def zero_(self):
        return self._inplace(_elementwise.zero)

    def fill_(self, value):
        return self._inplace(_elementwise.fill, value)

    def __setitem__(self, index, value):
        if not isinstance(value, Tensor):  # PyTorch first makes the value a tensor of x's dtype
            _shape.check_assigned_number(value, self.dtype)
        _shape.check_index_count(index, self.ndim)
        recording = _state.enabled and self.requires_grad
        basic = _shape.basic_part(index)
        value_recorded = _state.enabled and isinstance(value, Tensor) and value.requires_grad
        copies = False  # PyTorch writes with copy_, which asks an integer view nothing
        if recording or value_recorded:
            # PyTorch applies the ints and slices (as views) before refusing a leaf (or a view
            # of one, or a view it cannot record a change of), and the index tensors after: an
            # int out of range is an IndexError, a wrong mask is not
            written = self.detach()[basic]
            parts = index if isinstance(index, tuple) else (index,)
            if not any(_shape.is_index_tensor(part) for part in parts):
                # (a 0-d value into a view with elements is a fill_, which does ask)
                copies = isinstance(value, Tensor) and (
                    value.ndim > 0 or written.shape == value.shape
                )
        if recording:
            if self._base is not None and not _shape.selects_all(basic, self.shape):
                # taking that view reads this view's grad_fn, which rebuilds its history if its
                # base was changed in place since: it then no longer counts as a leaf
                self._refresh_view_history()
        if _shape.assigns_all(index, value, self._data.shape):
            return _shape.assign_all(self, value)  # x[...] = v: a fill_ or copy_ of x itself
        parts = index if isinstance(index, tuple) else (index,)
        if _overlap.repeats_elements(self._data) and not _shape.selects_all(basic, self.shape):
            # PyTorch writes into the view x[ints, slices, None] (x expanded: e[2] = v writes one
            # row, not all of e), so only that view's places are changed, and get new gradients
            written = self[basic]
            written[_shape.rest_of_index(index)] = value
            return
        if any(_shape.is_index_tensor(part) for part in parts):  # PyTorch's index_put_
            refusal = recording and self._inplace_refusal(True)
            if refusal:
                raise refusal
            # then overlapping memory (in _inplace), then the masks (index_put)
            _shape.check_mask_for_masked_fill(self, index, value)
        self._inplace(_shape.index_put, value, index=index, copies=copies)

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

    def __ipow__(self, other):
        return self.pow_(other)

    def __imod__(self, other):
        return self.remainder_(other)

    # ---- operators ---------------------------------------------------------------------------------
    def __radd__(self, other):
        return _ops.add(other, self)

    def __rsub__(self, other):
        return _ops.sub(other, self)

    def __rmul__(self, other):
        return _ops.mul(other, self)

    def __rtruediv__(self, other):
        return _ops.div(other, self)

    def __rfloordiv__(self, other):
        return _ops.floor_divide(other, self)

    def __rmod__(self, other):
        return _ops.remainder(other, self)

    def __rpow__(self, base):
        return _ops.pow(base, self)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __pos__(self):
        if self._data.dtype == np.bool_:  # as PyTorch, which refuses bool arithmetic signs
            raise RuntimeError(
                "The `+` operator, on a bool tensor is not supported: +x is arithmetic, and a "
                "bool tensor is a mask. Fix: leave the + out, or convert first (+x.long())."
            )
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, other):
        return _ops.eq(self, other)

    def __ne__(self, other):
        return _ops.ne(self, other)

    def __lt__(self, other):
        return _ops.lt(self, other)

    def __le__(self, other):
        return _ops.le(self, other)

    def __gt__(self, other):
        return _ops.gt(self, other)

    def __ge__(self, other):
        return _ops.ge(self, other)

    def __invert__(self):
        if self.is_floating_point():
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors. Fix: "
                "for a mask, compare first (~(x > 0)); for 1 - x, write it out."
            )
        return _ops.bitwise_not(self)

    # &, | and ^ are bitwise, as in PyTorch: logical on bool masks, bit by bit on integers
    def __and__(self, other):
        return _ops.bitwise_and(self, other)

    def __or__(self, other):
        return _ops.bitwise_or(self, other)

    def __xor__(self, other):
        return _ops.bitwise_xor(self, other)

    def __rand__(self, other):
        return _ops.bitwise_and(self, other)

    def __ror__(self, other):
        return _ops.bitwise_or(self, other)

    def __rxor__(self, other):
        return _ops.bitwise_xor(self, other)

    __hash__ = object.__hash__  # tensors are hashable by identity, as in PyTorch

    # ---- Python protocols ------------------------------------------------------------------------
    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: one UnbindBackward0 node for all the rows

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self._data.size} elements is ambiguous. Fix: use "
                "t.any() or t.all(), or compare one element."
            )
        return bool(self._data)

    def __float__(self):
        return float(self._only_element("float"))

    def __int__(self):
        return int(self._only_element("int"))

    def _only_element(self, conversion):
        """The number in a one-element tensor, for float(t) and int(t): Python's conversions
        raise ValueError for any other size, as in PyTorch (t.item() raises RuntimeError)."""
        if self._data.size != 1:
            raise ValueError(
                f"only one element tensors can be converted to Python scalars: {conversion}(t) of "
                f"a tensor with {self._data.size} elements (shape {list(self._data.shape)}). "
                f"Fix: pick an element, e.g. {conversion}(t[0]), or reduce it, e.g. "
                f"{conversion}(t.sum())."
            )
        return self.item()

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self._data.reshape(()))  # [0, 1][t] takes a t of shape [1] or [1, 1] too

    def __format__(self, spec):
        # as PyTorch: a 0-d tensor formats as its number, f"{loss}" and f"{loss:.4f}" alike
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __repr__(self):
        from ._format import tensor_repr

        return tensor_repr(self)

    def __reduce__(self):  # pickling keeps values, requires_grad and device, as PyTorch does
        return (_rebuild, (np.asarray(self._data), self._requires_grad, str(self.device)))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError(
                "only leaf tensors can be deep-copied (a copy cannot share the graph). Fix: deep-copy "
                "t.detach() instead."
            )
        out = _make(self._data.copy())
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = _make(self._grad._data.copy())
        memo[id(self)] = out
        return out

    def where(self, condition, other):
        return _ops.where(condition, self, other)

    @property
    def T(self):
        return _ops.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self._data.ndim == 0:  # PyTorch still accepts a number here, as itself
            warnings.warn(
                "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
                "cases: a number has no rows and columns to swap. Fix: leave .mT out.",
                UserWarning,
                stacklevel=2,
            )
            return self
        if self._data.ndim < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor. Fix: for a vector there is nothing to transpose; "
                "use x.unsqueeze(0) (a row) or x.unsqueeze(1) (a column) to make a matrix."
            )
        return _ops.transpose(self, -2, -1)


def init(tensor, data, requires_grad=False):
    """Fill in the fields of a tensor made by a constructor (`Tensor(...)`, `Parameter(...)`):
    those of a tensor over `data` as `_make` sets them."""
    made = _make(data)
    for field in ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_version_counter"):
        setattr(tensor, field, getattr(made, field))
    if requires_grad:
        tensor.requires_grad_(True)


def to_arguments(args, kwargs):
    """The (device, dtype) that `.to(...)` asks for: a dtype, a device, a tensor (its device and
    dtype) or keywords; either may be None. Shared by Tensor.to and nn.Module.to."""
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, types.device)):
            device = arg
        else:
            dtype = arg
    return device, dtype


def read_histories_first(*tensors):
    """Read the history of each tensor that is a view whose storage changed in place since it
    was recorded, as PyTorch's autograd does before an op's own checks (an index out of range,
    a wrong dim): a piece of split or unbind is then refused first. (Cheap when nothing
    changed: one comparison per tensor.)"""
    if not _state.enabled:
        return
    for tensor in tensors:
        if isinstance(tensor, Tensor) and tensor._history_is_stale() and tensor.requires_grad:
            tensor._refresh_view_history()


def _without_recording(op, *args, **kwargs):
    """`op(*args)` with recording off (no_grad's switch, used here without its import)."""
    recording, _state.enabled = _state.enabled, False
    try:
        return op(*args, **kwargs)
    finally:
        _state.enabled = recording


def _raise_error_of(op, tensor, args, kwargs, type_error_only):
    """Run `op(tensor, *args)` only to raise the error it finds first: the TypeError it has for
    an argument of the wrong type, or (`type_error_only` False) any error. Other errors come after
    the refusal the caller is about to raise, as in PyTorch."""
    try:
        op(tensor, *args, **kwargs)
    except TypeError:
        raise
    except Exception:
        if not type_error_only:
            raise


def _checked_dim(dim, ndim):
    """`dim` as an index into the shape, or PyTorch's IndexError for a dimension that is not there."""
    if ndim == 0:
        raise IndexError(
            f"Dimension specified as {dim} but tensor has no dimensions: a 0-d tensor (one number) "
            "has no sizes to ask for. Fix: call size() without a dim, which gives torch.Size([])."
        )
    low, high = -ndim, ndim - 1
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim}): "
            f"this tensor has {ndim} dimension{'s' if ndim != 1 else ''}, numbered from 0 (or from "
            "-1 counting from the end)."
        )
    return dim


def _make(data, grad_fn=None, output_nr=0):
    """Wrap an array in a Tensor without copying: how the engine and the ops make tensors."""
    tensor = _new(Tensor)
    tensor._data = data if type(data) is np.ndarray else storage.as_storage(data)
    tensor._requires_grad = grad_fn is not None
    tensor._grad_fn = grad_fn
    tensor._output_nr = output_nr
    tensor._grad = None
    tensor._version_counter = None  # made on first need (see _shared_version_counter)
    return tensor


_new = object.__new__


def _rebuild(data, requires_grad, device="cpu"):  # values travel via the host, back to device
    t = _make(storage.move(data, storage.resolve_device(device)))
    t._requires_grad = requires_grad
    return t


from . import ops as _ops  # noqa: E402  (ops need the Tensor class defined above)
from .autograd.function import creation_number_now, rebind_saved_output  # noqa: E402
from .ops import elementwise as _elementwise  # noqa: E402
from .ops import overlap as _overlap  # noqa: E402
from .ops import registry as _registry  # noqa: E402
from .ops import shape as _shape  # noqa: E402
from .ops import views as _views  # noqa: E402

# The operators are the op functions themselves: `a * b` calls ops.mul(a, b) with no extra hop.
Tensor.__add__, Tensor.__sub__, Tensor.__mul__ = _ops.add, _ops.sub, _ops.mul
Tensor.__truediv__, Tensor.__pow__, Tensor.__matmul__ = _ops.div, _ops.pow, _ops.matmul
Tensor.__neg__, Tensor.__getitem__ = _ops.neg, _shape.index
Tensor.__floordiv__, Tensor.__mod__ = _ops.floor_divide, _ops.remainder

# Methods and in-place methods, as the op records declare them (ops/registry.py):
# `x.exp()` is `autograd_lab.exp(x)`, and `x.exp_()` stores exp(x) into x (see Tensor._inplace).
for _name, _function in _registry.methods().items():
    setattr(Tensor, _name, _function)


def _inplace_method(op):
    def method(self, *args, **kwargs):
        return self._inplace(op, *args, **kwargs)

    method.__name__ = op.__name__ + "_"
    method.__doc__ = f"In place: x.{op.__name__}_(...) stores {op.__name__}(x, ...) into x."
    return method


for _name, _function in _registry.inplace_methods().items():
    setattr(Tensor, _name + "_", _inplace_method(_function))


def _conversion(dtype):
    def method(self):
        return self.to(dtype)

    method.__doc__ = f"self.to({dtype})"
    return method


# x.float() is x.to(float32), ...
_CONVERSIONS = {
    "float": types.float32,
    "double": types.float64,
    "half": types.float16,
    "long": types.int64,
    "int": types.int32,
    "short": types.int16,
    "char": types.int8,  # PyTorch's name for int8 tensors (C's signed char)
    "byte": types.uint8,
    "bool": types.bool_,
}
for _name, _dtype in _CONVERSIONS.items():
    setattr(Tensor, _name, _conversion(_dtype))

# PyTorch's legacy type names, which older tutorials print and pass: x.type() is
# 'torch.FloatTensor', and x.type(torch.float64) or x.type('torch.DoubleTensor') converts.
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}
_DTYPE_OF_TYPE_NAME = {type_name: dtype_name for dtype_name, type_name in _TYPE_NAMES.items()}


def _type(self, dtype=None):
    """`x.type()`: the name PyTorch gives this tensor's type; `x.type(dtype)`: `x.to(dtype)`."""
    if dtype is None:
        where = "torch.cuda." if self.device.type == "cuda" else "torch."
        return where + _TYPE_NAMES[self.dtype.name]
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        if name not in _DTYPE_OF_TYPE_NAME:
            known = ", ".join(f"'torch.{n}'" for n in _TYPE_NAMES.values())
            raise TypeError(f"unknown tensor type {dtype!r}; use a dtype or one of: {known}")
        dtype = types.to_dtype(_DTYPE_OF_TYPE_NAME[name])
    return self.to(dtype)


Tensor.type = _type
