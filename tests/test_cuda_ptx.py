"""Every CUDA kernel of the backend compiles to PTX (GPU assembly) for real hardware.

The kernel tests run in numba's simulator, which runs kernels as plain Python: a kernel using
something the GPU compiler rejects (an unsupported call, a type that cannot be unified) would
still pass there. So here each kernel is compiled with `numba.cuda.compile_ptx` for concrete
signatures (float32 and float64, and the integer / bool ones the dispatcher launches) with the
GPU's block and tile sizes, in a subprocess *without* the simulator (it replaces numba.cuda).

Compiling needs NVVM and NVRTC from the CUDA toolkit, but no GPU and no driver: the test extra
installs them from PyPI (`nvidia-nvvm`, `nvidia-cuda-nvrtc`). Without them the test is skipped
with the reason, except in CI (CI=true), where a missing compiler is a failure.

Run by hand: `python tests/test_cuda_ptx.py` prints one line per failing kernel and a summary.
"""

import json
import os
import subprocess
import sys

import pytest

COMPUTE_CAPABILITY = (8, 0)  # Ampere: what the PTX targets (a newer GPU runs it too)
NO_COMPILER = 3  # the subprocess's exit code when NVVM/NVRTC cannot be loaded


@pytest.mark.slow  # ~20 s: about 170 compilations
def test_every_kernel_compiles_to_ptx():
    environment = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    environment["NUMBA_ENABLE_CUDASIM"] = "0"
    run = subprocess.run(
        [sys.executable, __file__], capture_output=True, text=True, env=environment, timeout=300
    )
    if run.returncode == NO_COMPILER:
        reason = run.stdout.strip().splitlines()[-1]
        if os.environ.get("CI"):
            pytest.fail(f"CI must compile the kernels to PTX, but {reason}")
        pytest.skip(reason)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["failed"] == [], "\n".join(report["failed"])
    assert all(count >= 1 for count in report["kernels"].values()), report["kernels"]
    families = {"map exp", "zip add", "where", "reduce add", "argmax", "softmax", "log_softmax",
                "matmul", "gather", "scatter_add", "nonzero", "scan add"}  # fmt: skip
    assert families <= set(report["kernels"]), report["kernels"]
    assert report["compiled"] >= 100


# ---- the subprocess: no simulator, no GPU --------------------------------------------------------


def _signatures():
    """(name, kernel, argument types) for every kernel and the dtypes it is launched with."""
    import numba
    import numpy as np
    from numba import types

    from autograd_lab.backend.cuda import (
        index_kernels,
        kernels,
        launch,
        matmul,
        reduce_kernels,
        scans,
    )

    def array(dtype):
        return types.Array(numba.from_dtype(np.dtype(dtype)), 1, "C")

    def scalar(dtype):
        return numba.from_dtype(np.dtype(dtype))

    def dims(n):
        return types.UniTuple(types.int64, n)

    i64, f32, f64 = types.int64, np.float32, np.float64

    def operand(dtype, ndim=2):
        return (array(dtype), i64, dims(ndim))

    supported = {np.dtype(d) for d in (np.bool_, np.int32, np.int64, f32, f64)}

    def loops(name, nin):
        """The (inputs..., output) dtypes the dispatcher launches a ufunc's kernel with: numpy's
        loop for each input dtype (operands are converted to it first), once each."""
        seen = set()
        for dtype in [f32, f64, np.int64, np.bool_]:
            try:
                loop = getattr(np, name).resolve_dtypes((np.dtype(dtype),) * nin + (None,))
            except TypeError:
                continue  # numpy has no such loop: the dispatcher raises before any launch
            if set(loop) <= supported and loop not in seen:
                seen.add(loop)
                yield loop

    for name, kernel in kernels.MAP_KERNELS.items():
        if name in ("copy", "not_zero"):  # astype's kernels, any dtype to any dtype
            pairs = [(f64, f32), (f32, np.int64), (np.int64, f32), (np.bool_, f64), (f32, np.int32)]
            pairs = [(s, np.bool_) for s in (f32, np.int64)] if name == "not_zero" else pairs
        else:
            pairs = loops(name, 1)
        for source, out in pairs:
            sig = (i64, dims(2), *operand(out), *operand(source))
            yield f"map {name} {np.dtype(source)}->{np.dtype(out)}", kernel, sig
    for name, kernel in kernels.ZIP_KERNELS.items():
        for a, b, out in loops(name, 2):
            sig = (i64, dims(3), *operand(out, 3), *operand(a, 3), *operand(b, 3))
            yield f"zip {name} {np.dtype(a)}", kernel, sig
    for dtype in [f32, f64, np.int64]:
        sig = (i64, dims(2), *operand(dtype), *operand(np.bool_), *operand(dtype), *operand(dtype))
        yield f"where {np.dtype(dtype)}", kernels.where_kernel, sig
        yield (
            f"fill {np.dtype(dtype)}",
            kernels.fill_kernel,
            (i64, dims(2), *operand(dtype), scalar(dtype)),
        )
    for dtype in [f64, np.int64]:
        sig = (i64, array(dtype), scalar(dtype), scalar(dtype))
        yield f"arange {np.dtype(dtype)}", kernels.arange_kernel, sig

    threads = launch.GPU_REDUCE_THREADS
    for combine in reduce_kernels.COMBINE:
        for source, acc in [(f32, f32), (f64, f64), (np.int32, np.int64), (np.bool_, np.bool_)]:
            if source == np.bool_ and combine not in ("maximum", "minimum"):
                source = acc = np.int64  # bools are summed as int64
            sig = (array(source), i64, dims(2), dims(2), dims(1), dims(1), i64, i64, i64,
                   scalar(acc), array(acc))  # fmt: skip
            kernel = reduce_kernels.reduce_kernel(combine, np.dtype(acc), threads)
            yield f"reduce {combine} {np.dtype(source)}", kernel, sig
    for name in reduce_kernels.BETTER:
        for dtype in [f32, f64, np.int64]:
            sig = (array(dtype), i64, dims(1), dims(1), dims(2), dims(2), i64, i64, array(np.int64))
            kernel = reduce_kernels.arg_reduce_kernel(name, np.dtype(dtype), threads)
            yield f"{name} {np.dtype(dtype)}", kernel, sig
    for log in (False, True):
        for dtype in [f32, f64]:
            sig = (array(dtype), i64, dims(2), i64, array(dtype), dims(2), i64, dims(2), i64, i64,
                   scalar(dtype))  # fmt: skip
            kernel = reduce_kernels.softmax_kernel(np.dtype(dtype), threads, log)
            yield f"{'log_' * log}softmax {np.dtype(dtype)}", kernel, sig

    for combine in scans.COMBINE:  # rows of a 2-D array: one kept dim
        for dtype in [f32, f64, np.int64]:
            sig = (i64, dims(1), array(dtype), i64, dims(1), i64, array(dtype), dims(1), i64, i64)
            yield f"scan {combine} {np.dtype(dtype)}", scans.scan_kernel(combine), sig

    for dtype in [f32, f64, np.int64]:
        kernel = matmul.matmul_kernel(np.dtype(dtype), *launch.GPU_MATMUL)
        sig = (array(dtype), i64, dims(1), i64, i64, array(dtype), i64, dims(1), i64, i64,
               array(dtype), dims(1), i64, i64, i64, i64)  # fmt: skip
        yield f"matmul {np.dtype(dtype)}", kernel, sig

    for dtype in [f32, f64, np.int64]:
        picking = (dims(1), dims(1), i64, array(np.int64), i64, dims(2), dims(2), array(np.int32))
        sig = (i64, dims(3), *operand(dtype, 3), array(dtype), i64, *picking)
        yield f"gather {np.dtype(dtype)}", index_kernels.gather_kernel, sig
        yield f"scatter {np.dtype(dtype)}", index_kernels.scatter_kernel, sig
        yield f"scatter_add {np.dtype(dtype)}", index_kernels.scatter_add_kernel, sig
    sig = (array(np.bool_), i64, dims(2), dims(2), i64, array(np.int64), i64)
    yield "nonzero bool", index_kernels.nonzero_kernel(threads), sig


def _compile_all():
    try:
        from numba import cuda
        from numba.cuda.cudadrv import nvrtc, nvvm
    except ImportError as error:
        print(f"numba-cuda is not installed ({error})")
        return NO_COMPILER
    try:
        if not nvvm.is_available():
            raise RuntimeError("NVVM not found")
        nvrtc.get_supported_ccs()  # loads NVRTC
    except Exception as error:  # noqa: BLE001 - any failure to load the libraries means "no compiler"
        print(
            f"the CUDA compiler libraries NVVM/NVRTC cannot be loaded ({type(error).__name__}). "
            "Fix: pip install 'nvidia-nvvm==13.*' 'nvidia-cuda-nvrtc==13.*' (the test extra)"
        )
        return NO_COMPILER
    # Device functions compile for "the current device"; with no GPU there is none, so say which.
    import types

    import numba.cuda.dispatcher

    numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(
        compute_capability=COMPUTE_CAPABILITY
    )
    failed, compiled, kernels = [], 0, {}
    for name, kernel, signature in _signatures():
        family = name.rsplit(" ", 1)[0]  # the kernel, without the dtype
        kernels.setdefault(family, 0)
        try:
            ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=COMPUTE_CAPABILITY)
            assert ".entry" in ptx, "no kernel entry point in the PTX"
        except Exception as error:  # noqa: BLE001 - report every failing kernel, then fail
            failed.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0][:300]}")
            print(failed[-1], file=sys.stderr)
            continue
        compiled += 1
        kernels[family] += 1
    print(json.dumps({"compiled": compiled, "failed": failed, "kernels": kernels}))
    return 0


if __name__ == "__main__":
    sys.exit(_compile_all())
