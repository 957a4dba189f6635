"""The autograd_lab CUDA backend on a real GPU: bandwidth, reductions, matmul, an MLP's training step.

    .venv/bin/python benchmarks/gpu.py                   # on a machine with an NVIDIA GPU
    .venv/bin/python benchmarks/gpu.py --save            # + benchmarks/results/gpu-<device>-<date>.md/.json
    NUMBA_ENABLE_CUDASIM=1 .venv/bin/python benchmarks/gpu.py --quick   # tiny sizes, numba's simulator

Four measurements, all on float32 tensors with device="cuda":
1. elementwise: `x * 2` (a map kernel, and a new tensor each time) and `x.mul_(1.0)` (in place),
   next to a device-to-device copy of the same bytes (cudaMemcpy, the ceiling for any kernel that
   reads and writes every element once). GB/s = bytes read + written per second (8 per element).
2. reduction: `x.sum()` (shared-memory trees); GB/s = 4 bytes read per element per second.
3. matmul: `a @ b` for square n × n matrices; GFLOP/s = 2n³ per second; next to cuBLAS, through
   CuPy or PyTorch (whichever imports with CUDA; the table says which). Both in float32, no TF32.
4. an MLP's training step (forward, MSE loss, backward, SGD) on the GPU and on the CPU, for
   several batch sizes; the crossover is the smallest batch size from which the GPU is faster.

Timing: each sample runs the operation `inner` times back to back (as a program does; `inner` is
chosen so that a sample lasts about 2 ms) between two `autograd_lab.cuda.synchronize()` calls, so
it covers the launches and the kernels' whole run; the tables show the median of `--repeats`
samples after `--warmup` runs, per operation. Under the simulator (`--quick`) every number is
meaningless except as proof that the code path runs: `--save` refuses to put such numbers into
benchmarks/results/ (pass `--out DIR` to write them elsewhere).
"""

import argparse
import datetime
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # run from a checkout; the sibling benchmark modules
from harness import machine_info  # noqa: E402
from models import build_mlp, init_weights, train_step  # noqa: E402

import autograd_lab as ag  # noqa: E402

RESULTS = HERE / "results"
FULL = {
    "elements": [2**p for p in range(10, 27, 2)],  # 1 Ki ... 64 Mi elements (256 MiB)
    "matmul": [1024, 2048, 4096],
    "mlp_sizes": [256, 1024, 1024, 10],
    "batches": [16, 64, 256, 1024, 4096, 16384],
}
QUICK = {"elements": [2**4, 2**8], "matmul": [8, 16], "mlp_sizes": [8, 16, 4], "batches": [2, 8]}


# ---- timing ----------------------------------------------------------------------------------


def median_seconds(run, sync, repeats, warmup, target=2e-3):
    """Median seconds of one run(): samples of `inner` back-to-back runs bracketed by sync()."""
    for _ in range(warmup):
        run()
    sync()
    start = time.perf_counter()
    run()
    sync()
    inner = int(min(1000, max(1, target / max(time.perf_counter() - start, 1e-9))))
    samples = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        for _ in range(inner):
            run()
        sync()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def no_sync():  # the CPU has nothing to wait for
    pass


# ---- cuBLAS, for reference --------------------------------------------------------------------


def cublas_reference():
    """(name, prepare), or (None, None) without CuPy or a CUDA build of PyTorch.

    prepare(a, b) takes two numpy float32 matrices and returns (run, sync, result): run() starts
    their product on the GPU, sync() waits for it, result() returns the product as numpy.
    """
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()  # raises without a GPU

        def prepare(a, b):
            da, db = cupy.asarray(a), cupy.asarray(b)
            return (lambda: da @ db), cupy.cuda.Device().synchronize, lambda: cupy.asnumpy(da @ db)

        return f"cuBLAS via CuPy {cupy.__version__}", prepare
    except Exception:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False  # plain float32, as ours

            def prepare(a, b):
                da, db = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                return (lambda: da @ db), torch.cuda.synchronize, lambda: (da @ db).cpu().numpy()

            return f"cuBLAS via PyTorch {torch.__version__}", prepare
    except Exception:
        pass
    return None, None


# ---- the four measurements ----------------------------------------------------------------------


def elementwise(sizes, repeats, warmup):
    from numba import cuda  # imported only now: autograd_lab.cuda chose simulator or GPU first

    rows = []
    for n in sizes:
        x = ag.randn(n, device="cuda")
        source = cuda.device_array(n, np.float32)
        target = cuda.device_array_like(source)
        seconds = median_seconds(lambda x=x: x * 2.0, ag.cuda.synchronize, repeats, warmup)
        in_place = median_seconds(lambda x=x: x.mul_(1.0), ag.cuda.synchronize, repeats, warmup)
        copy = median_seconds(
            lambda t=target, s=source: t.copy_to_device(s), ag.cuda.synchronize, repeats, warmup
        )
        rows.append({
            "elements": n, "seconds": seconds, "gb_per_s": 8 * n / seconds / 1e9,
            "in_place_seconds": in_place, "in_place_gb_per_s": 8 * n / in_place / 1e9,
            "copy_seconds": copy, "copy_gb_per_s": 8 * n / copy / 1e9,
        })  # fmt: skip
    return rows


def reduction(sizes, repeats, warmup):
    rows = []
    for n in sizes:
        x = ag.randn(n, device="cuda")
        seconds = median_seconds(lambda x=x: x.sum(), ag.cuda.synchronize, repeats, warmup)
        rows.append({"elements": n, "seconds": seconds, "gb_per_s": 4 * n / seconds / 1e9})
    return rows


def matmul(sizes, repeats, warmup):
    reference, prepare = cublas_reference()
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        a_np, b_np = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        a, b = ag.tensor(a_np).to("cuda"), ag.tensor(b_np).to("cuda")
        seconds = median_seconds(lambda a=a, b=b: a @ b, ag.cuda.synchronize, repeats, warmup)
        row = {"n": n, "seconds": seconds, "gflop_per_s": 2 * n**3 / seconds / 1e9}
        ours = (a @ b).cpu().numpy()
        if prepare is not None:
            run, sync, result = prepare(a_np, b_np)
            row["reference_seconds"] = median_seconds(run, sync, repeats, warmup)
            row["reference_gflop_per_s"] = 2 * n**3 / row["reference_seconds"] / 1e9
            exact = result()
        else:
            exact = a_np.astype(np.float64) @ b_np
        row["max_relative_error"] = float(np.max(np.abs(ours - exact)) / np.max(np.abs(exact)))
        rows.append(row)
    return {"reference": reference, "rows": rows}


def mlp(sizes, batches, repeats, warmup):
    weights = init_weights(sizes, seed=0)
    rng = np.random.default_rng(0)
    rows = []
    for batch in batches:
        x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
        y = rng.standard_normal((batch, sizes[-1])).astype(np.float32)
        row, losses = {"batch": batch}, {}
        for device, sync in [("cpu", no_sync), ("cuda", ag.cuda.synchronize)]:
            model = build_mlp(ag, weights, "ReLU").to(device)
            optimizer = ag.optim.SGD(model.parameters(), lr=1e-3)
            inputs, targets = ag.tensor(x).to(device), ag.tensor(y).to(device)
            loss_fn = ag.nn.MSELoss()
            losses[device] = train_step(model, loss_fn, optimizer, inputs, targets).item()
            step = lambda: train_step(model, loss_fn, optimizer, inputs, targets)  # noqa: E731, B023
            row[f"{device}_seconds"] = median_seconds(step, sync, repeats, warmup)
        row["speedup"] = row["cpu_seconds"] / row["cuda_seconds"]
        row["first_losses_match"] = bool(np.isclose(losses["cpu"], losses["cuda"], rtol=1e-4))
        rows.append(row)
    faster = [r["speedup"] > 1 for r in rows]
    crossover = next((r["batch"] for i, r in enumerate(rows) if all(faster[i:])), None)
    return {"sizes": sizes, "rows": rows, "crossover_batch": crossover}


# ---- report --------------------------------------------------------------------------------------


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def us(seconds):
    return f"{seconds * 1e6:,.1f}"


def markdown(result):
    m = result["machine"]
    parts = [
        f"# autograd_lab CUDA backend on {result['device']}, {result['date']}",
        f"{'**numba CUDA simulator: these numbers only prove the code path.** ' if result['simulator'] else ''}"
        f"CPU: {m['cpu']} ({m['cpus']} CPUs); Python {m['python']}, numpy {m['numpy']}, "
        f"numba {result['versions']['numba']}; {result['timing']}",
        "## 1. Elementwise (float32): bytes read + written per second",
        table(
            ["elements", "x * 2 µs", "GB/s", "x.mul_(1) µs", "GB/s", "copy (DtoD) µs", "GB/s"],
            [
                [
                    f"{r['elements']:,}",
                    us(r["seconds"]),
                    f"{r['gb_per_s']:,.1f}",
                    us(r["in_place_seconds"]),
                    f"{r['in_place_gb_per_s']:,.1f}",
                    us(r["copy_seconds"]),
                    f"{r['copy_gb_per_s']:,.1f}",
                ]
                for r in result["elementwise"]
            ],
        ),  # fmt: skip
        "## 2. Reduction: x.sum() (float32), bytes read per second",
        table(
            ["elements", "µs", "GB/s"],
            [
                [f"{r['elements']:,}", us(r["seconds"]), f"{r['gb_per_s']:,.1f}"]
                for r in result["reduction"]
            ],
        ),  # fmt: skip
        f"## 3. Matmul (float32, n × n): reference {result['matmul']['reference'] or 'none (no CUDA build of CuPy or PyTorch here)'}",
        table(
            ["n", "ours ms", "GFLOP/s", "cuBLAS ms", "GFLOP/s", "ours / cuBLAS", "max rel. error"],
            [
                [
                    str(r["n"]),
                    f"{r['seconds'] * 1e3:,.2f}",
                    f"{r['gflop_per_s']:,.0f}",
                    *(
                        [
                            f"{r['reference_seconds'] * 1e3:,.2f}",
                            f"{r['reference_gflop_per_s']:,.0f}",
                            f"{r['gflop_per_s'] / r['reference_gflop_per_s']:.1%}",
                        ]
                        if "reference_seconds" in r
                        else ["n/a"] * 3
                    ),
                    f"{r['max_relative_error']:.1e}",
                ]
                for r in result["matmul"]["rows"]
            ],
        ),  # fmt: skip
        f"## 4. MLP training step {' → '.join(map(str, result['mlp']['sizes']))} "
        "(ReLU, MSE loss, SGD): GPU vs CPU",
        table(
            ["batch", "CPU ms", "GPU ms", "GPU speed-up", "same first loss"],
            [
                [
                    f"{r['batch']:,}",
                    f"{r['cpu_seconds'] * 1e3:,.2f}",
                    f"{r['cuda_seconds'] * 1e3:,.2f}",
                    f"{r['speedup']:.2f}x",
                    "✓" if r["first_losses_match"] else "✗",
                ]
                for r in result["mlp"]["rows"]
            ],
        ),  # fmt: skip
        f"Crossover: the GPU is faster from batch size {result['mlp']['crossover_batch']} on."
        if result["mlp"]["crossover_batch"]
        else "Crossover: the GPU was not faster at the largest batch size measured.",
    ]
    errors = result.get("errors", {})
    parts += [f"**{name} failed:** {message}" for name, message in errors.items()]
    return "\n\n".join(parts) + "\n"


def run(config, repeats, warmup):
    ag.cuda.use_simulator_if_no_gpu()  # before numba.cuda is imported (it reads the switch once)
    from importlib.metadata import version

    result = {
        "device": ag.cuda.get_device_name(),
        "simulator": ag.cuda.simulator_enabled(),
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": machine_info(),
        "versions": {name: version(name) for name in ("numba", "numba-cuda", "numpy")},
        "timing": f"median of {repeats} samples after {warmup} warm-up runs, "
        "synchronize-bracketed, ~2 ms per sample",
        "errors": {},
    }
    ag.manual_seed(0)
    sections = {
        "elementwise": lambda: elementwise(config["elements"], repeats, warmup),
        "reduction": lambda: reduction(config["elements"], repeats, warmup),
        "matmul": lambda: matmul(config["matmul"], repeats, warmup),
        "mlp": lambda: mlp(config["mlp_sizes"], config["batches"], repeats, warmup),
    }
    empty = {"elementwise": [], "reduction": [], "matmul": {"reference": None, "rows": []},
             "mlp": {"sizes": config["mlp_sizes"], "rows": [], "crossover_batch": None}}  # fmt: skip
    for name, measure in sections.items():
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        try:
            result[name] = measure()
        except Exception as error:  # one broken op must not cost the other sections
            result[name] = empty[name]
            result["errors"][name] = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return result


def save(result, folder):
    folder.mkdir(parents=True, exist_ok=True)
    device = re.sub(r"[^A-Za-z0-9]+", "-", result["device"]).strip("-")
    stem = folder / f"gpu-{device}-{result['date'][:10]}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(result))
    return stem


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (for the simulator)")
    parser.add_argument("--repeats", type=int, default=None, help="timed samples (median)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs first")
    parser.add_argument("--save", action="store_true", help="write the .json and .md results")
    parser.add_argument("--out", type=Path, default=None, help=f"folder for --save ({RESULTS})")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 15)
    result = run(QUICK if args.quick else FULL, repeats, args.warmup)
    print(markdown(result))
    if args.save:
        if result["simulator"] and args.out is None:
            sys.exit(f"not saving simulator numbers into {RESULTS}: pass --out DIR for those")
        print(f"saved {save(result, args.out or RESULTS)}.json and .md")
    return result


if __name__ == "__main__":
    main()
