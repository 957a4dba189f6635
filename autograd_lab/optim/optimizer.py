"""Optimizer: the base class of every optimizer (SGD, Adam, RMSprop...), as `torch.optim.Optimizer`.

An optimizer holds the tensors to train in *parameter groups* (a list of dicts: the tensors under
"params" plus that group's options, e.g. "lr") and a per-tensor *state* (momentum buffers, running
averages). Each `step()` reads every parameter's `.grad` and moves the parameter in place.

    >>> import autograd_lab as ag
    >>> w = ag.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = ag.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()        # w.grad = 2 * w = [2, 4]
    >>> opt.step()                      # w <- w - lr * w.grad
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    >>> opt.zero_grad()                 # w.grad is None again, ready for the next backward()

How the updates are written: the subclasses compute on the numpy storage (`p._data`) with ufuncs
and `out=`, so a step makes no Tensor objects (after the first, which creates the state) and few
temporary arrays: a training step is benchmarked against PyTorch, whose optimizers are C++ loops.
Writing the storage directly skips `Tensor._inplace`, so `bump_version(p)` counts the write as
every in-place op does: a tensor saved for backward and then changed by `step()` is still caught.
Only ufuncs (`np.multiply(a, b, out=a)`) and `np.empty_like`/`np.zeros_like` touch the arrays, so
any array type that speaks numpy's ufunc and array-function protocols (the GPU's CudaArray) runs
the same code.
"""

import copy
import warnings
from collections import defaultdict

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor


class Optimizer:
    """Base class: parameter groups, per-parameter state, zero_grad, state_dict.

    Subclasses pass their options as `defaults` (every group gets the ones it does not set) and
    implement `step(closure=None)`.
    """

    group_keys = ()  # a subclass lists its param-group keys in PyTorch's order

    def __init__(self, params, defaults, switches=None):
        defaults = {**defaults, **_implementation_switches(self, switches or {})}
        if self.group_keys:  # the order print(optimizer) and state_dict() show, as PyTorch's
            defaults = {key: defaults[key] for key in self.group_keys}
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {type(params).__name__}. Fix: wrap it in a list, e.g. SGD([w], lr=0.1), "
                "or pass model.parameters()."
            )
        self.state = defaultdict(dict)  # tensor -> its state dict (filled by the first step)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError(
                "optimizer got an empty parameter list: there is nothing to train. Fix: pass the "
                "tensors to update, e.g. SGD(model.parameters(), lr=0.1) or SGD([w, b], lr=0.1) "
                "(a generator such as model.parameters() is used up after one pass)."
            )
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def add_param_group(self, param_group):
        """Add a group of tensors with its own options, e.g. `{"params": [w], "lr": 0.01}`."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise KeyError(
                "'params': a parameter group needs the tensors it holds under 'params', e.g. "
                "{'params': [w], 'lr': 0.01}"
            )
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        param_group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    f"{type(param).__name__}. Fix: pass tensors, e.g. model.parameters() (not "
                    "model.named_parameters(), which yields (name, tensor) pairs)."
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError(
                    f"can't optimize a non-leaf Tensor: this one was made by "
                    f"{param.grad_fn.name()}, and an optimizer can only update tensors you created "
                    "yourself (leaves). Fix: create the parameter directly, e.g. "
                    "w = ag.randn(3, requires_grad=True) instead of w = ag.randn(3, "
                    "requires_grad=True) * 0.1 (or use t.detach().requires_grad_())."
                )
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; each would be "
                "updated twice per step. Fix: list every tensor once.",
                UserWarning,
                stacklevel=3,
            )
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
        if not seen.isdisjoint(params):
            raise ValueError(
                "some parameters appear in more than one parameter group; a tensor can have only "
                "one set of options. Fix: put each tensor in exactly one group."
            )
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients before the next backward() (which would add to them).

        `set_to_none=True` (the default) sets `.grad = None`; False fills it with zeros instead.
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:  # a gradient made with create_graph=True
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Update every parameter once from its `.grad` (each optimizer writes its own)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # ---- saving and restoring --------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state as plain data: `{"state": {index: {...}}, "param_groups": [...]}`.

        Parameters are replaced by their index (in group order), so the dict can be loaded into an
        optimizer built over other tensors of the same shapes. As in PyTorch, the state's tensors
        are not copied: deep-copy the dict to keep a snapshot while training goes on.
        """
        index_of, groups = {}, []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index_of.setdefault(id(p), len(index_of)) for p in group["params"]]
            groups.append(packed)
        state = {
            (index_of[id(p)] if isinstance(p, Tensor) else p): s for p, s in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a `state_dict()`: the options of each group and the state of each parameter.

        The state's tensors are copied (and cast to their parameter's dtype, except `step`), so
        two optimizers never share a buffer.
        """
        groups, saved_groups = self.param_groups, copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError(
                f"loaded state dict has a different number of parameter groups "
                f"({len(saved_groups)}) than this optimizer ({len(groups)}). Fix: build the "
                "optimizer with the same groups as the one that was saved."
            )
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group. Fix: pass the same parameters, in the same order, as when saving."
            )
        param_of = {
            index: p
            for g, s in zip(groups, saved_groups)
            for index, p in zip(s["params"], g["params"])
        }
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = {k: _copy_state(param, k, v) for k, v in value.items()}
            else:
                state[key] = copy.deepcopy(value)
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
        self.state, self.param_groups = state, saved_groups

    def __getstate__(self):
        # A scheduler replaces `step` on this object by a wrapper that watches it (see
        # lr_scheduler/scheduler.py): a copy or a pickle must not take the wrapper along, or the
        # copy's step() would update the original's parameters.
        return {key: value for key, value in self.__dict__.items() if key != "step"}

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


# PyTorch's optimizers take switches that choose *how* an update is computed (a loop per
# parameter or one fused kernel, CUDA-graph capture), never *what* it computes. autograd_lab has one
# implementation, so it accepts them, keeps them in the param groups (and so in print(optimizer))
# as PyTorch does, and otherwise ignores them, except `differentiable=True`, which asks for a
# gradient through the update itself: that it cannot do.
SWITCH_DEFAULTS = {"capturable": False, "differentiable": False, "foreach": None, "fused": None}


def _implementation_switches(optimizer, given):
    name = type(optimizer).__name__
    switches = [key for key in optimizer.group_keys if key in SWITCH_DEFAULTS]
    for key in given:
        if key not in switches:
            raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{key}'")
    if given.get("differentiable"):
        raise NotImplementedError(
            f"{name}(differentiable=True) is not supported by autograd_lab: its updates are not "
            "recorded in the graph. Fix: leave differentiable at False (the default)."
        )
    return {key: given.get(key, SWITCH_DEFAULTS[key]) for key in switches}


def _copy_state(param, key, value):
    """A loaded state entry: tensors copied, in the parameter's dtype ('step' keeps its own)."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if key != "step" and param.is_floating_point() and value.is_floating_point():
        return value.detach().to(param.dtype, copy=True)
    return value.detach().clone()


# ---- helpers for the subclasses' step() ---------------------------------------------------------
def run_closure(closure):
    """Run step()'s closure, if any, with recording on (it calls backward), and return its loss."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def gradient(p, weight_decay, maximize, out):
    """The gradient an update uses, g = ±p.grad + weight_decay * p, as a numpy array.

    `maximize` flips the sign (gradient ascent); weight decay is L2 regularisation's gradient.
    `out` is a scratch array of p's shape; p.grad itself is never modified.
    """
    grad, param = p._grad._data, p._data
    if weight_decay == 0:
        return np.negative(grad, out=out) if maximize else grad
    np.multiply(param, weight_decay, out=out)
    return np.subtract(out, grad, out=out) if maximize else np.add(out, grad, out=out)


_CHUNK = 1 << 14  # elements per pass of add_scaled: its scratch stays at 64 KiB of float32


def add_scaled(target, values, alpha):
    """target += alpha * values, in place, with no temporary the size of target.

    numpy has no fused multiply-add, and `target += alpha * values` would allocate alpha * values
    whole: for the biggest weight that temporary sets the training step's peak memory. So big
    arrays go through a small scratch buffer, a chunk at a time (the same numbers either way).
    """
    if (
        type(target) is not np.ndarray
        or target.size <= _CHUNK
        or not (
            target.flags.c_contiguous and values.flags.c_contiguous and values.shape == target.shape
        )
    ):
        np.add(target, np.multiply(values, alpha), out=target)
        return
    flat_target, flat_values = target.reshape(-1), values.reshape(-1)
    scratch = np.empty(_CHUNK, target.dtype)
    for start in range(0, target.size, _CHUNK):
        part = flat_target[start : start + _CHUNK]
        product = np.multiply(flat_values[start : start + _CHUNK], alpha, out=scratch[: part.size])
        np.add(part, product, out=part)


def bump_version(p):
    """Bump p's version counter after writing its storage, as every in-place op does."""
    p._shared_version_counter()[0] += 1


def check_at_least_zero(what, value, hint):
    """The options check every optimizer makes: `value` must be >= 0 (PyTorch's ValueError)."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}. It must be >= 0 ({hint}).")


def check_betas(betas):
    """Both averaging factors in betas=(beta1, beta2) must be in [0, 1) (PyTorch's ValueError)."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(
                f"Invalid beta parameter at index {i}: {betas[i]}. Both averaging factors in "
                "betas=(beta1, beta2) must be in [0, 1); the default is betas=(0.9, 0.999)."
            )
