"""RowKernel: a row-wise group's kernels on numpy arrays; RowFused: the group as ONE autograd node.

    kernel.source                     the generated module (forward and backward), to read
    kernel.forward(arrays)            -> (the group's outputs, the row values backward needs)
    kernel.backward(arrays, saved, grads) -> one gradient per input (None where none is wanted)

The node is `FusedBackward0`, as for an elementwise group (its metadata["fused"] names the ops).
What forward saves for backward is a few numbers per row (a softmax's max and sum, a layer
norm's mean and scale): backward never repeats the forward's passes.

A loss (the group's one output is a total, like cross-entropy's mean) whose gradient is wanted
goes further: its forward kernel also runs the backward for an incoming gradient of 1, in the
same visit of each row (rowgrad.ahead_source), and backward just scales those gradients by the
gradient that really comes in (1 for `loss.backward()`: nothing to do). One pass over the logits
instead of two and one exp per element instead of two; the price is that the gradients are made,
and held until backward, even when no backward follows (eager's cross-entropy holds a
log-softmax of the same size). A second backward (retain_graph) runs the backward kernel. With
`create_graph=True` the
backward composes the original ops' differentiable backwards instead, so higher-order gradients
stay right; on CUDA tensors no row-wise group is formed (compile/rowwise.py).
"""

import warnings

import numpy as np

from ...autograd import no_grad
from ...autograd.grad_mode import _state
from ...optional import MissingExtraError
from ...tensor import _make
from ..codegen import Printer, literal_writer, load
from ..fuse import Fused, compose_backward, replay
from ..kernel import _unexpanded
from . import recycle
from .rowcode import forward_source, module_source, parallel_pays
from .rowgrad import ahead_source, backward_source
from .rowprogram import RowProgram
from .rowwise import pattern


class RowFused(Fused):
    """A row-wise group as ONE autograd Function (see the module docstring)."""

    node_name = "FusedBackward0"
    accepts_out = True

    @staticmethod
    def forward(ctx, *inputs, kernel, out=None):
        ctx.kernel = kernel
        ctx.metadata["fused"] = kernel.op_names
        arrays, outs, saved, ctx.ahead = [x._data for x in inputs], None, None, None
        # a loss whose gradient is wanted: compute the gradients now, in the same visit of each row
        ahead = (
            kernel.ahead
            and any(ctx.needs_input_grad)
            and all(k in kernel.wanted for k, need in enumerate(ctx.needs_input_grad) if need)
        )
        if kernel.failed is None and kernel.accepts(arrays):
            try:
                outs, saved, *found = kernel.forward(arrays, out, ahead=ahead)
                ctx.ahead = found[0] if found else None
            except MissingExtraError:  # numba is not installed: say which extra brings it
                raise
            except Exception as error:  # numba could not compile it: run the ops one by one
                kernel.failed = error
                message = f"fused kernel {kernel!r} failed ({type(error).__name__}: {error})"
                warnings.warn(f"{message}; running its ops unfused", RuntimeWarning, stacklevel=2)
        if outs is None:  # also where eager mode must raise its own error (a bad class target)
            with no_grad():
                outs = [t._data for t in replay(kernel.group, inputs)]
        ctx.has_saved = saved is not None
        ctx.save_for_backward(*inputs, *([_make(saved)] if saved is not None else []))
        return outs[0] if len(outs) == 1 else tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        kernel, needs = ctx.kernel, ctx.needs_input_grad
        tensors = ctx.saved_tensors
        inputs = tensors[: len(needs)]
        unplanned = any(need and k not in kernel.wanted for k, need in enumerate(needs))
        found, ctx.ahead = ctx.ahead, None  # computed by forward: used once, then dropped
        if _state.enabled or not ctx.has_saved or unplanned:
            return compose_backward(kernel.group, inputs, grads, needs)
        if found is not None:  # the gradients for an incoming 1: scaled by the real one
            scale = grads[0]._data
            if scale != 1:
                for array in found:
                    if array is not None:
                        np.multiply(array, scale, out=array, casting="unsafe")
        else:
            found = kernel.backward(
                [x._data for x in inputs], tensors[-1]._data, [g._data for g in grads]
            )
        return tuple(
            _make(a) if a is not None and need else None
            for a, need in zip(found, needs, strict=True)
        )


class RowKernel:
    """One row-wise group: its program, generated source and compiled modules."""

    function = RowFused  # the autograd Function that runs it (fuse.py builds calls of it)

    def __init__(self, group):
        self.group, self.dtype = group, np.dtype(group.dtype)
        self.op_names = tuple(call.name for call in group.calls)
        self.program = RowProgram(group, literal_writer(self.dtype))
        # how the kernel reads each input: "full", "row", "col" or "one" (its gradient's shape too)
        self.uses = {number: use for number, use in self.program.loads}
        self.wanted = tuple(
            k
            for k, v in enumerate(group.inputs)
            if v.dtype.kind == "f" and (v.requires_grad or v.producer is not None)
        )
        # how incoming gradients usually arrive: full-size, one per row, one number for a total
        self.grad_patterns = tuple(
            "one" if node.op == "total" else node.level for _, node in self.program.outputs
        )
        # a loss (one output, a total): forward can compute the gradients too (rowgrad.ahead_source)
        self.ahead = self.grad_patterns == ("one",) and bool(self.wanted)
        self.saved = None
        self.source = self._module_source(self.grad_patterns)
        self.failed = None
        self._modules = {}  # incoming-gradient patterns -> the imported module

    def __repr__(self):
        return f"<RowKernel {' -> '.join(self.op_names)} over {list(self.group.shape)}>"

    # ---- running ---------------------------------------------------------------------------------
    def accepts(self, arrays):
        """Are the losses' class targets valid? (If not, eager mode raises its own error.)"""
        columns = self.group.columns
        for target, ignore_index, *_ in self.program.targets:
            t = arrays[target]
            if not (((t >= 0) & (t < columns)) | (t == ignore_index)).all():
                return False
        return True

    def forward(self, arrays, out=None, ahead=False):
        """The group's output arrays, and the (rows, k) array of row values backward reads;
        `ahead=True` (a loss only): also the gradients for an incoming gradient of 1, last."""
        rows, columns = self.group.rows, self.group.columns
        blocks = self._blocks()
        args, undefined = self._arguments(arrays)
        outs = []
        for k, (value, node) in enumerate(self.program.outputs):
            given = out[k] if out is not None and k < len(out) else None
            if node.op == "total":
                outs.append(np.zeros(blocks, np.float64))  # a partial sum per block of rows
            elif node.level == "full":
                fits = given is not None and given.shape == value.shape and given.flags.c_contiguous
                outs.append(
                    given.reshape(rows, columns)
                    if fits
                    else recycle.empty((rows, columns), self.dtype)
                )
            else:
                outs.append(recycle.empty((rows,), self.dtype))
        saved = np.empty((rows, len(self.saved)), self.dtype)
        module = self._module(self.grad_patterns)
        if ahead:
            found, grads = self._gradient_arrays(blocks)
            unit = np.ones(1, self.dtype)
            module.row_forward_backward(rows, columns, blocks, *args, *outs, saved, unit, *grads)
        else:
            module.row_forward(rows, columns, blocks, *args, *outs, saved)
        results = []
        for (value, node), array in zip(self.program.outputs, outs, strict=True):
            if node.op == "total":
                total = np.nan if node in undefined else array.sum() * node.scale
                array = np.asarray(total, dtype=self.dtype)
            results.append(array.reshape(value.shape))
        if ahead:
            return results, saved, self._finish(found, grads)
        return results, saved

    def backward(self, arrays, saved, grads):
        """The wanted inputs' gradients (full-size, per row, or summed over the rows)."""
        rows, columns = self.group.rows, self.group.columns
        blocks = self._blocks()
        args, _ = self._arguments(arrays)
        views, patterns = [], []
        for (value, node), grad in zip(self.program.outputs, grads, strict=True):
            view, use = self._incoming(grad, value, node)
            views.append(view)
            patterns.append(use)
        found, results = self._gradient_arrays(blocks)
        module = self._module(tuple(patterns))
        module.row_backward(rows, columns, blocks, *args, saved, *views, *results)
        return self._finish(found, results)

    def _gradient_arrays(self, blocks):
        """Arrays the kernel writes the wanted inputs' gradients into: (per input, as written)."""
        rows, columns = self.group.rows, self.group.columns
        found, results = [None] * len(self.group.inputs), []
        for number in sorted(self.wanted):
            shape, use = self.group.inputs[number].shape, self.uses[number]
            if use in ("full", "row"):  # the gradient itself, in its input's shape
                found[number] = recycle.empty(shape, self.dtype)
                results.append(found[number].reshape((rows, columns) if use == "full" else rows))
            else:  # a partial sum per block of rows, added up in _finish
                results.append(np.zeros((blocks, columns) if use == "col" else blocks, self.dtype))
        return found, results

    def _finish(self, found, results):
        """The gradients, once the partial sums per block of rows are added up."""
        for number, array in zip(sorted(self.wanted), results, strict=True):
            if self.uses[number] in ("col", "one"):
                found[number] = array.sum(axis=0).reshape(self.group.inputs[number].shape)
        return found

    # ---- helpers ---------------------------------------------------------------------------------
    def _blocks(self):
        """Blocks of rows the threads share: a few per thread, so a slow thread holds up less."""
        if not parallel_pays(self.group):
            return 1
        import numba

        return max(1, min(self.group.rows, 4 * numba.get_num_threads()))

    def _arguments(self, arrays):
        """The inputs as the kernel indexes them, then each loss's class index and weight."""
        rows, columns = self.group.rows, self.group.columns
        shape = {"full": (rows, columns), "row": (rows,), "col": (columns,), "one": (1,)}
        args = []
        for number, array in enumerate(arrays):
            use = self.uses.get(number)
            array = np.ascontiguousarray(array)
            args.append(array.reshape(shape[use]) if use else array)
        undefined = set()
        for target, ignore_index, reduction, _, node in self.program.targets:
            index, weight, nothing_kept = class_weights(
                arrays[target], ignore_index, reduction, self.dtype
            )
            args += [index, weight]
            if nothing_kept:
                undefined.add(node)
        return args, undefined

    def _incoming(self, grad, value, node):
        """An output's incoming gradient as the kernel reads it, and its pattern."""
        rows, columns = self.group.rows, self.group.columns
        if node.op == "total":
            return np.ascontiguousarray(grad).reshape(1), "one"
        compact = _unexpanded(grad)
        if compact.size == 1:
            return compact.reshape(1), "one"
        if node.level == "full":
            use = pattern(compact.shape, self.group.shape)
            if use in ("row", "col"):
                return compact.reshape(rows if use == "row" else columns), use
            return np.ascontiguousarray(np.broadcast_to(grad, value.shape)).reshape(
                rows, columns
            ), "full"
        return np.ascontiguousarray(np.broadcast_to(grad, value.shape)).reshape(rows), "row"

    def _module_source(self, patterns):
        """The generated module whose backward reads incoming gradients laid out as `patterns`
        (and, for a loss read as usual, the kernel computing loss and gradients in one visit)."""
        printer = Printer(self.dtype)
        backward, saved = backward_source(self.program, set(self.wanted), patterns, printer)
        assert self.saved in (None, saved), "a backward kernel must read what forward saved"
        self.saved = saved
        forward = forward_source(self.program, self.saved, printer)
        if self.ahead and patterns == self.grad_patterns:
            ahead = ahead_source(self.program, set(self.wanted), self.saved, printer)
            backward = f"{backward}\n\n\n{ahead}"
        return module_source(self.program, printer, forward, backward)

    def _module(self, patterns):
        """The imported module whose backward reads incoming gradients laid out as `patterns`."""
        module = self._modules.get(patterns)
        if module is None:
            source = (
                self.source if patterns == self.grad_patterns else self._module_source(patterns)
            )
            module = self._modules[patterns] = load(source)
        return module


def class_weights(target, ignore_index, reduction, dtype):
    """For nll_loss / cross_entropy: (class index per row, its weight, nothing kept?).

    An ignored row (target == ignore_index) reads class 0 with weight 0; for reduction="mean"
    the weights are 1 / (number of kept rows), so the loss is their mean (as eager's NllPlan)."""
    target = np.asarray(target).reshape(-1)
    kept = target != ignore_index
    index = np.where(kept, target, 0).astype(dtype)  # compared with the float column number
    count = int(kept.sum())
    weight = kept.astype(dtype)
    if reduction == "mean" and count:
        weight = weight / dtype.type(count)
    return index, weight, reduction == "mean" and count == 0
