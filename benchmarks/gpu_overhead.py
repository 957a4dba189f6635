"""Where one small CUDA operation's time goes: autograd_lab next to numba, CuPy and PyTorch.

    python benchmarks/gpu_overhead.py                  # on a machine with an NVIDIA GPU
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_overhead.py --quick   # does it run? (no figures)

benchmarks/gpu.py shows that for small tensors a CUDA op costs the same whatever its size: the
time is overhead, not work. This script splits that overhead up. It times, per call (the mean
of `--calls` back-to-back calls between two synchronizations, after 20 untimed ones):

- numba alone: a synchronize with nothing to wait for, the launch of a kernel with two
  arguments, a `cuda.device_array` allocation, and a device-to-device copy;
- CuPy's and PyTorch's `a * 2` and copy, where they are installed with CUDA (their launch
  paths are written in C++ and Cython: the figure to compare ours with);
- autograd_lab's `x * 2`, `x.mul_(1)` and `x.sum()` on a 1,024-element float32 tensor;

then profiles `--calls` calls of `x * 2` and of `x.sum()` with cProfile and prints the
functions that take the most time, own time first, then cumulative time inside autograd_lab and
numba. (cProfile roughly doubles the cost of each Python call, so read its shares, not its times.)
"""

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from numba import cuda  # noqa: E402  (module level: the simulator swaps a kernel's globals)

import autograd_lab as ag  # noqa: E402


def microseconds_per_call(run, calls, sync):
    for _ in range(min(20, calls)):
        run()
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        run()
    sync()
    return (time.perf_counter() - start) / calls * 1e6


def numba_rows(n, calls):
    @cuda.jit
    def fill_ones(n, out):
        i = cuda.grid(1)
        if i < n:
            out[i] = 1.0

    target, source = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    blocks = (n + 255) // 256
    sync = cuda.synchronize
    return {
        "numba: cuda.synchronize() (nothing to wait for)": microseconds_per_call(
            lambda: None, calls, sync
        ),
        "numba: launch a kernel with 2 arguments": microseconds_per_call(
            lambda: fill_ones[blocks, 256](n, target), calls, sync
        ),
        f"numba: cuda.device_array({n})": microseconds_per_call(
            lambda: cuda.device_array(n, np.float32), calls, sync
        ),
        "numba: device-to-device copy (copy_to_device)": microseconds_per_call(
            lambda: target.copy_to_device(source), calls, sync
        ),
    }


def reference_rows(n, calls):
    """CuPy's and PyTorch's figures, for each that is installed with CUDA (else a note)."""
    rows = {}
    try:
        import cupy

        a = cupy.ones(n, cupy.float32)
        sync = cupy.cuda.Device().synchronize
        rows[f"CuPy {cupy.__version__}: a * 2"] = microseconds_per_call(
            lambda: a * 2.0, calls, sync
        )
        rows[f"CuPy {cupy.__version__}: a.copy()"] = microseconds_per_call(a.copy, calls, sync)
    except Exception as error:  # not installed, or no GPU
        rows["CuPy"] = f"not measured ({type(error).__name__})"
    try:
        import torch

        t = torch.ones(n, device="cuda")
        sync = torch.cuda.synchronize
        rows[f"PyTorch {torch.__version__}: t * 2"] = microseconds_per_call(
            lambda: t * 2.0, calls, sync
        )
        rows[f"PyTorch {torch.__version__}: t.clone()"] = microseconds_per_call(
            t.clone, calls, sync
        )
    except Exception as error:
        rows["PyTorch"] = f"not measured ({type(error).__name__})"
    return rows


def profile(run, calls, sync):
    """cProfile's report of `calls` runs: own time first, then cumulative (ours and numba's)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        run()
    sync()
    profiler.disable()
    report = io.StringIO()
    pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(20)
    pstats.Stats(profiler, stream=report).sort_stats("cumulative").print_stats(
        "autograd_lab|numba", 30
    )
    return report.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per figure")
    parser.add_argument("--elements", type=int, default=1024, help="tensor size")
    parser.add_argument("--quick", action="store_true", help="2 calls of 16 elements (simulator)")
    args = parser.parse_args(argv)
    calls, n = (2, 16) if args.quick else (args.calls, args.elements)
    sync = ag.cuda.synchronize
    x = ag.randn(n, device="cuda")
    rows = {
        **numba_rows(n, calls),
        **reference_rows(n, calls),
        f"autograd_lab: x * 2 ({n} elements)": microseconds_per_call(lambda: x * 2.0, calls, sync),
        f"autograd_lab: x.mul_(1) ({n} elements)": microseconds_per_call(
            lambda: x.mul_(1.0), calls, sync
        ),
        f"autograd_lab: x.sum() ({n} elements)": microseconds_per_call(x.sum, calls, sync),
    }
    simulator = bool(numba.config.ENABLE_CUDASIM)
    print("# One small CUDA operation, µs per call" + (" (simulator: no figures)" * simulator))
    for name, value in rows.items():
        print(f"{name:58s} {value:10.1f}" if isinstance(value, float) else f"{name:58s} {value}")
    for name, run in (("x * 2", lambda: x * 2.0), ("x.sum()", x.sum)):
        print(f"\n# cProfile of {calls} calls of {name}\n")
        print(profile(run, calls, sync))
    return rows


if __name__ == "__main__":
    main()
