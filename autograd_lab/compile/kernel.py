"""FusedKernel: one fused group, ready to run on numpy arrays (numba) or CudaArrays (numba.cuda).

    kernel.source          the generated CPU module (forward and backward kernels), to read
    kernel.cuda_source     the same for CUDA tensors
    kernel.forward(arrays)         -> the group's output arrays
    kernel.backward(arrays, grads) -> one gradient array per input (None where none is wanted)

numba is imported here, lazily: `import autograd_lab` never loads it, and a kernel is compiled the
first time it runs (then cached by numba on disk, so the next process skips the compile).
"""

import numpy as np

from .codegen import collapse, kernel_source, load


class FusedKernel:
    def __init__(self, group):
        self.group = group
        self.op_names = tuple(call.name for call in group.calls)
        self.layout = collapse(group.shape, [value.shape for value in group.inputs])
        # which inputs get a gradient: floats that require grad (results of calls always may)
        self.wanted = tuple(k for k, v in enumerate(group.inputs) if v.dtype.kind == "f"
                            and (v.requires_grad or v.producer is not None))  # fmt: skip
        self.source = kernel_source(group, self.layout, "cpu", self.wanted)
        self._cuda_source = None
        self.failed = None  # the error, if numba could not compile this kernel
        self._modules = {}  # "cpu"/"cuda" -> the imported generated module

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
            if given is not None and not on_gpu:
                outs.append(given)
            else:
                outs.append(_new(shape, dtype, on_gpu))
        self._launch("fused_forward", on_gpu, arrays, outs)
        return outs

    def backward(self, arrays, grads):
        """The gradients of the wanted inputs (full shape: the engine sums broadcast dims)."""
        dtype, shape = np.dtype(self.group.dtype), self.layout.full_shape
        on_gpu = _on_gpu(arrays)
        results = [_new(shape, dtype, on_gpu) for _ in self.wanted]
        self._launch("fused_backward", on_gpu, arrays, list(grads) + results)
        found = [None] * len(self.group.inputs)
        for k, array in zip(self.wanted, results, strict=True):
            found[k] = array
        return found

    def _launch(self, name, on_gpu, inputs, full_shaped):
        """Reshape every operand to the loop layout (views, no copies) and run kernel `name`."""
        if int(np.prod(self.layout.full_shape, dtype=np.int64)) == 0:
            return  # nothing to compute
        loop = self.layout.shape
        if on_gpu:
            from ..backend.cuda.launch import THREADS, blocks_for, launch

            module = self._modules.get("cuda") or self._modules.setdefault(
                "cuda", load(self.cuda_source))  # fmt: skip
            args = [_device_view(a, s) for a, s in zip(inputs, self.layout.inputs, strict=True)]
            args += [_device_view(a, loop) for a in full_shaped]
            total = int(np.prod(loop))
            launch(getattr(module, name), blocks_for(total, THREADS), THREADS, *args)
            return
        module = self._modules.get("cpu") or self._modules.setdefault("cpu", load(self.source))
        args = [np.ascontiguousarray(a).reshape(s)
                for a, s in zip(inputs, self.layout.inputs, strict=True)]  # fmt: skip
        args += [np.ascontiguousarray(a).reshape(loop) for a in full_shaped]
        getattr(module, name)(*args)


def _on_gpu(arrays):
    return any(type(a) is not np.ndarray and not isinstance(a, np.generic) for a in arrays)


def _new(shape, dtype, on_gpu):
    if on_gpu:
        from ..backend.cuda import empty

        return empty(shape, dtype)
    return np.empty(shape, dtype)


def _device_view(array, shape):
    """The numba device array behind a CudaArray, contiguous and reshaped to `shape` (a view)."""
    if not array.is_c_contiguous():
        array = array.copy()
    start = array.offset
    return array.buffer[start : start + array.size].reshape(shape)
