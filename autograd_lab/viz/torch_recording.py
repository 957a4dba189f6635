"""Watching PyTorch build and run a graph: `record_torch()`, `watch_torch(loss)`.

    import torch
    from autograd_lab.viz import GraphWidget, record_torch
    with record_torch() as recording:
        w = torch.tensor([0.5, -1.0], requires_grad=True)
        loss = (w * w).sum()
        loss.backward()
    GraphWidget(recording)   # every intermediate value, and PyTorch's backward pass step by step

Three of PyTorch's own hooks, nothing patched: a TorchFunctionMode is told of every torch
function and Tensor method called (so every result's value when computed, and what each new
node saved, read before backward frees it); global module forward hooks give the scopes and
parameter names our nn.Module gives its own ("Sequential/0 (Linear)", "0.weight"); and each
`backward()`, `torch.autograd.backward` or `torch.autograd.grad` called inside registers a
pre-hook and a post-hook on every node it can reach, which see the engine run. from_torch.py
turns what was recorded into a Snapshot.
"""

import contextlib
import sys
import weakref

from ..autograd.graph import current_scope, scope

# ('fc1', 'fc1 (Linear)'): our nn.Module's own rule, which reads only what torch's modules have
# too (`_modules`, `named_modules`), so both libraries name their scopes alike
from ..nn.module import _scope_label
from .from_torch import (
    is_leaf_node,
    is_torch_tensor,
    is_torch_tensor_class,
    read_saved,
    summarize_torch,
    torch_snapshot,
)


class TorchRecording:
    """What `record_torch()` saw: every node PyTorch made (with the value of its result, its
    scope and what it saved) and every backward event, in the engine's order."""

    def __init__(self, max_values=16):
        self.max_values = max_values
        self.nodes = []  # in the order we met them (creation order comes from _sequence_nr)
        self.values = {}  # (node, output_nr) -> summary of that result when it was computed
        self.outputs = {}  # node -> {output_nr: weak reference to the result tensor}
        self.scopes = {}  # node -> "Sequential/0 (Linear)"
        self.saved = {}  # node -> read_saved(node) taken before backward could free it
        self.parameter_names = {}  # id(parameter) -> "0.weight", from the modules that ran
        self._parameters = {}  # keeps those parameters alive, so their ids stay theirs
        self.events = []  # (kind, node, target node or None, gradient summary)
        self._known = set()
        self._watching = False  # inside a backward we watch (its own backward call is not new)
        self.watched_forward = False  # entered as a block: it saw the ops as they ran
        self._scopes_open = []  # module scopes entered by forward hooks, innermost last
        self._undo = []

    # -- entering and leaving --

    def __enter__(self):
        import torch  # asked for by name: record_torch() watches PyTorch

        mode = _watching_mode(torch)(self)
        mode.__enter__()
        self.watched_forward = True
        self._undo.append(lambda: mode.__exit__(None, None, None))
        hooks = torch.nn.modules.module
        before = hooks.register_module_forward_pre_hook(self._module_starts)
        after = hooks.register_module_forward_hook(self._module_ends, always_call=True)
        self._undo += [before.remove, after.remove]
        return self

    def __exit__(self, *exc):
        while self._undo:
            self._undo.pop()()
        while self._scopes_open:  # a forward that raised before its module's hook could run
            self._scopes_open.pop()[1].__exit__(None, None, None)
        return False

    # -- modules as scopes: the same names as our nn.Module gives its own --

    def _module_starts(self, module, args):
        parent, parent_path = self._scopes_open[-1][0] if self._scopes_open else (None, "")
        name, label = _scope_label(module, parent)
        path = f"{parent_path}.{name}" if parent_path and name else (name or parent_path)
        for param_name, param in module.named_parameters(recurse=False):
            self.parameter_names[id(param)] = f"{path}.{param_name}" if path else param_name
            self._parameters[id(param)] = param
        named = scope(label)
        named.__enter__()
        self._scopes_open.append(((module, path), named))

    def _module_ends(self, module, args, output):
        if self._scopes_open and self._scopes_open[-1][0][0] is module:
            self._scopes_open.pop()[1].__exit__(None, None, None)

    # -- nodes, as PyTorch makes them --

    def saw(self, results):
        """A torch function returned `results` (or changed its first argument in place)."""
        for tensor in _tensors(results):
            node = tensor.grad_fn
            if node is None:
                continue
            self._meet(node)
            key = (node, tensor.output_nr)
            if key not in self.values:  # its value now: an in-place op may change it later
                self.values[key] = summarize_torch(tensor, self.max_values)
            self.outputs.setdefault(node, {}).setdefault(tensor.output_nr, weakref.ref(tensor))

    def _meet(self, node):
        """Note a new node and the new nodes below it (made inside one call, e.g. linear's t())."""
        stack = [node]
        while stack:
            node = stack.pop()
            if node is None or node in self._known:
                continue
            self._known.add(node)
            if not is_leaf_node(node):
                self.nodes.append(node)
                # a weight saved by every step is summarized once (self.values: key -> summary)
                self.saved[node] = read_saved(node, self.max_values, known=self.values)
                if current_scope():
                    self.scopes[node] = "/".join(current_scope())
            stack.extend(n for n, _ in node.next_functions)

    def output(self, node, output_nr=0):
        ref = self.outputs.get(node, {}).get(output_nr)
        return ref() if ref is not None else None

    def sinks(self):
        """The recorded nodes that no later recorded node consumed: where the graph ends."""
        consumed = {n for node in self.nodes for n, _ in node.next_functions if n is not None}
        return [node for node in self.nodes if node not in consumed]

    def roots(self):
        """The results of the sinks that are still alive."""
        return [t for node in self.sinks() if (t := self.output(node)) is not None]

    def graph(self, *roots, names=None):
        """The Snapshot behind `roots`; by default everything recorded, even results already gone."""
        if roots:
            return torch_snapshot(*roots, names=names, recording=self)
        return torch_snapshot(*self.roots(), names=names, recording=self, start=self.sinks())

    # -- backward, as PyTorch's engine runs it --

    def watch_backward(self, roots, run):
        """Call `run()` (a backward pass from `roots`) with hooks on every node it can reach.

        "run": a node's pre-hook (it is about to run, with the gradient that arrived); "send":
        read from its post-hook, since the engine passes each gradient on right after it, input
        by input; "accumulate": a leaf's AccumulateGrad node ran and added to `.grad`.
        """
        if self._watching:  # a backward we watch reaches our mode too (%%autograd -b does that)
            return run()
        nodes, handles = [], []
        for root in roots:
            if root.grad_fn is not None:
                self._meet(root.grad_fn)  # a graph built before the recording: read it now
                nodes.append(root.grad_fn)
        seen = set()
        while nodes:
            node = nodes.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            handles.append(node.register_prehook(self._before(node)))
            handles.append(node.register_hook(self._after(node)))
            nodes.extend(n for n, _ in node.next_functions)
        self._watching = True
        try:
            return run()
        finally:
            self._watching = False
            for handle in handles:
                handle.remove()

    def _summary(self, grad):
        return summarize_torch(grad, self.max_values) if grad is not None else None

    def _before(self, node):
        def before(grad_outputs):
            grad = next((g for g in grad_outputs if g is not None), None)
            self.events.append(("run", node, None, self._summary(grad)))

        return before

    def _after(self, node):
        def after(grad_inputs, grad_outputs):
            if is_leaf_node(node):
                self.events.append(("accumulate", node, None, self._summary(grad_outputs[0])))
                return
            for (target, _), grad in zip(node.next_functions, grad_inputs):
                if target is not None and grad is not None:
                    self.events.append(("send", node, target, self._summary(grad)))

        return after


def record_torch(max_values=16):
    """Watch PyTorch build and run a graph: `with record_torch() as r: ...; r.graph()`.

    Every op called inside, every module's forward (its scope) and every backward pass
    (`loss.backward()`, `torch.autograd.backward`, `torch.autograd.grad`) is recorded.
    """
    return TorchRecording(max_values)


def record_torch_if_imported(max_values=16):
    """`record_torch()` when PyTorch is already imported (the magics use it), else a block that
    records nothing and gives None: importing torch just to look for it would take seconds."""
    torch = sys.modules.get("torch")
    if torch is None or not is_torch_tensor_class(getattr(torch, "Tensor", None)):
        return contextlib.nullcontext(None)  # not imported, or autograd_lab as_torch()'s alias
    return TorchRecording(max_values)


def watch_torch(loss, gradient=None, retain_graph=None, max_values=16):
    """Run `loss.backward()` watched; return the recording of its graph and backward pass.

        loss = torch.nn.functional.mse_loss(net(x), y)
        GraphWidget(watch_torch(loss))   # step through PyTorch's backward pass, your names
        watch_torch(loss).graph(names={"loss": loss})   # the Snapshot itself

    For a graph built outside `record_torch()`: the intermediate values are those saved for
    backward or named by your variables (read before backward frees them).
    """
    if not is_torch_tensor(loss):
        raise TypeError(
            f"watch_torch() runs backward on a torch tensor; got a {type(loss).__name__}. "
            "For an autograd_lab tensor: with autograd_lab.record() as r: loss.backward()"
        )
    if loss.grad_fn is None:
        raise RuntimeError(
            "watch_torch(): this tensor has no grad_fn, so there is no graph and no backward "
            "pass to watch (PyTorch says: element 0 of tensors does not require grad). Fix: make "
            "an input with requires_grad=True before computing the loss."
        )
    recording = TorchRecording(max_values)
    recording.saw(loss)  # the root to draw; watch_backward reads what backward will free
    recording.watch_backward(
        [loss], lambda: loss.backward(gradient=gradient, retain_graph=retain_graph)
    )
    return recording


def _watching_mode(torch):
    """The TorchFunctionMode class that tells a recording about every torch call (made once)."""
    global _Mode
    if _Mode is None:
        backward_calls = {
            torch.Tensor.backward: lambda args, kwargs: args[0],
            torch.autograd.backward: lambda args, kwargs: args[0] if args else kwargs["tensors"],
            torch.autograd.grad: lambda args, kwargs: args[0] if args else kwargs["outputs"],
        }

        class _WatchingMode(torch.overrides.TorchFunctionMode):
            # PyTorch calls __torch_function__ for every torch function and Tensor method used
            # while the mode is on; inside it the mode is off, so our own reading is not watched
            def __init__(self, recording):
                super().__init__()
                self.recording = recording

            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if func in backward_calls:
                    roots = _tensors(backward_calls[func](args, kwargs))
                    return self.recording.watch_backward(roots, lambda: func(*args, **kwargs))
                result = func(*args, **kwargs)
                self.recording.saw(result)
                if args and is_torch_tensor(args[0]):  # x.add_(1), x[0] = 5: a new grad_fn
                    self.recording.saw(args[0])
                return result

        _Mode = _WatchingMode
    return _Mode


_Mode = None


def _tensors(value):
    if is_torch_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if is_torch_tensor(v)]
    return []
