"""FusedKernel: one fused group, ready to run on numpy arrays (numba) or CudaArrays (numba.cuda).

    kernel.source          the generated CPU module (forward and backward kernels), to read
    kernel.cuda_source     the same for CUDA tensors
    kernel.forward(arrays)         -> the group's output arrays
    kernel.backward(arrays, grads) -> one gradient array per input (None where none is wanted)

numba is imported here, lazily: `import autograd_lab` never loads it, and a kernel is compiled the
first time it runs (then cached by numba on disk, so the next process skips the compile).
"""

import numpy as np

from .codegen import collapse, kernel_source, load, reduction_kind
from .extras import recycle


class FusedKernel:
    def __init__(self, group):
        self.group = group
        self.op_names = tuple(call.name for call in group.calls)
        self._input_shapes = [value.shape for value in group.inputs]
        self.layout = collapse(group.shape, self._input_shapes)
        # which inputs get a gradient: floats that require grad (results of calls always may)
        self.wanted = tuple(
            k
            for k, v in enumerate(group.inputs)
            if v.dtype.kind == "f" and (v.requires_grad or v.producer is not None)
        )
        self.source = kernel_source(group, self.layout, "cpu", self.wanted)
        self._cuda_source = None
        self.failed = None  # the error, if numba could not compile this kernel
        self._modules = {}  # (target, layout) -> the imported generated module

    @property
    def cuda_source(self):
        if self._cuda_source is None:
            self._cuda_source = kernel_source(self.group, self.layout, "cuda", self.wanted)
        return self._cuda_source

    def __repr__(self):
        return f"<FusedKernel {' -> '.join(self.op_names)} over {list(self.group.shape)}>"

    # ---- running ---------------------------------------------------------------------------------
    def forward(self, arrays, out=None):
        """The group's outputs for input arrays (numpy or CudaArray); `out`: arrays to reuse."""
        dtype, shape = np.dtype(self.group.dtype), self.layout.full_shape
        on_gpu = _on_gpu(arrays)
        outs = []
        for k in range(len(self.group.outputs)):
            given = out[k] if out is not None else None
            outs.append(given if given is not None and not on_gpu else _new(shape, dtype, on_gpu))
        if not _empty(shape):
            layout, target = self.layout, "cuda" if on_gpu else "cpu"
            loop = [layout.shape] * len(outs)
            self._launch("fused_forward", target, layout, arrays, layout.inputs, outs, loop)
        return outs

    def backward(self, arrays, grads):
        """The wanted inputs' gradients: summed over broadcast dims in the kernel where that is a
        row or a total ("row"/"scalar" in codegen.reduction_kind), else full-size arrays that the
        engine sums. A gradient that is itself a broadcast view (the backward of a sum or mean
        sends one) is read as it is, through a kernel made for that pattern: never expanded."""
        dtype, shape = np.dtype(self.group.dtype), self.layout.full_shape
        on_gpu = _on_gpu(arrays)
        target = "cuda" if on_gpu else "cpu"
        if on_gpu:
            layout, grads = self.layout, list(grads)
        else:
            grads = [_unexpanded(g) for g in grads]
            grad_shapes = tuple(g.shape for g in grads)
            full = all(s == tuple(shape) for s in grad_shapes)
            layout = self.layout if full else collapse(shape, self._input_shapes, grad_shapes)
        kinds = [reduction_kind(layout.inputs[k], layout.shape, target) for k in self.wanted]
        result_shapes = [
            shape if kind == "full" else layout.inputs[k]
            for k, kind in zip(self.wanted, kinds, strict=True)
        ]
        results = [_new(s, dtype, on_gpu) for s in result_shapes]
        if not _empty(shape):
            loop_shapes = [
                layout.shape if kind == "full" else layout.inputs[k]
                for k, kind in zip(self.wanted, kinds, strict=True)
            ]
            self._launch(
                "fused_backward",
                target,
                layout,
                arrays + grads,
                layout.inputs + (layout.grads or (layout.shape,) * len(grads)),
                results,
                loop_shapes,
                sizes=True,
            )
        found = [None] * len(self.group.inputs)
        for k, kind, array in zip(self.wanted, kinds, results, strict=True):
            found[k] = array if kind == "full" else array.reshape(self.group.inputs[k].shape)
        return found

    def _launch(
        self, name, target, layout, inputs, input_shapes, outputs, output_shapes, sizes=False
    ):
        """Reshape every operand to the loop layout (views, no copies) and run kernel `name`."""
        module = self._module(target, layout)
        head = list(layout.shape) if sizes else []
        if target == "cuda":
            from ..backend.cuda.launch import THREADS, blocks_for, launch

            args = [_device_view(a, s) for a, s in zip(inputs, input_shapes, strict=True)]
            args += [_device_view(a, s) for a, s in zip(outputs, output_shapes, strict=True)]
            total = int(np.prod(layout.shape))
            launch(getattr(module, name), blocks_for(total, THREADS), THREADS, *head, *args)
            return
        args = [
            np.ascontiguousarray(a).reshape(s) for a, s in zip(inputs, input_shapes, strict=True)
        ]
        args += [a.reshape(s) for a, s in zip(outputs, output_shapes, strict=True)]
        getattr(module, name)(*head, *args)

    def _module(self, target, layout):
        """The imported generated module for this target and layout (generated once)."""
        key = (target, layout)
        module = self._modules.get(key)
        if module is None:
            if layout == self.layout:
                source = self.source if target == "cpu" else self.cuda_source
            else:
                source = kernel_source(self.group, layout, target, self.wanted)
            module = self._modules[key] = load(source)
        return module


def _empty(shape):
    return int(np.prod(shape, dtype=np.int64)) == 0


def _unexpanded(grad):
    """A gradient without its broadcast dims (stride 0: the same number repeated), as a view."""
    if grad.flags.c_contiguous:
        return grad
    index = tuple(
        slice(0, 1) if stride == 0 and n > 1 else slice(None)
        for n, stride in zip(grad.shape, grad.strides, strict=True)
    )
    return np.ascontiguousarray(grad[index])


def _on_gpu(arrays):
    return any(type(a) is not np.ndarray and not isinstance(a, np.generic) for a in arrays)


def _new(shape, dtype, on_gpu):
    if on_gpu:
        from ..backend.cuda import empty

        return empty(shape, dtype)
    return recycle.empty(shape, dtype)


def _device_view(array, shape):
    """The numba device array behind a CudaArray, contiguous and reshaped to `shape` (a view)."""
    if not array.is_c_contiguous():
        array = array.copy()
    start = array.offset
    return array.buffer[start : start + array.size].reshape(shape)
