"""The benchmark suite: every comparison of the issue, measured in one run, printed as one table.

    .venv/bin/python benchmarks/run.py [--quick] [--repeats N] [--json PATH] [--only NAME ...]
                                       [--threads N] [--clock wall|cpu]

Rows: 1 tiny-op chain (tiny_ops.py), 2 moons MLP step (moons_mlp.py), 3 big MLP against PyTorch
and the numpy floor (big_mlp.py), 4 the scalar engine (scalar_engine.py), 5 peak memory
(peak_memory.py), 7 the planned executor's peak memory, eager against planned, with the update
in backward or after it (planned_memory.py); `--rows` is another name for `--only`. In each, ours
and its references run interleaved (ours, torch, floor, ours, ...), after warm-up; the table
shows medians, the ratio, the issue's target with ✓/✗, and a check that both computed the same
numbers. Without PyTorch the suite still runs and says "n/a" for its ratios.

Threads: numpy's BLAS (OpenBLAS) and PyTorch (OpenMP + MKL) are pinned to the same count,
`--threads` (default 1), through OMP/OPENBLAS/MKL_NUM_THREADS, set before numpy is imported, and
torch.set_num_threads; the header prints the counts each library reports. `--clock cpu` times
with this process's CPU time instead of the wall clock, for a machine busy with other work.
"""

import argparse
import importlib
import json
import os
import sys
import time
import traceback

BENCHMARKS = {  # name for --only: (row, the module that measures it)
    "tiny_ops": ("1", "tiny_ops"),
    "moons": ("2", "moons_mlp"),
    "big_mlp": ("3", "big_mlp"),
    "scalar": ("4", "scalar_engine"),
    "memory": ("5", "peak_memory"),
    "fusion": ("6", "fusion"),
    "planned": ("7", "planned_memory"),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and 2 repeats: checks that everything runs, times nothing",
    )
    parser.add_argument("--repeats", type=int, help="timed samples per measurement (default 20)")
    parser.add_argument("--warmup", type=int, help="untimed samples first (default 3)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="BLAS and torch threads, the same for both (default 1)",
    )
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time (default), or this process's CPU time: steadier on a busy "
                        "shared machine, as it leaves out the moments other programs run")  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="also write the results to this file")
    parser.add_argument("--only", "--rows", nargs="+", choices=BENCHMARKS, metavar="NAME",
                        help=f"run only these: {', '.join(BENCHMARKS)}")  # fmt: skip
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 2 if args.quick else 20
    if args.warmup is None:
        args.warmup = 1 if args.quick else 3
    if args.clock == "cpu" and args.threads != 1:
        parser.error("--clock cpu adds up the time of every thread; use it with --threads 1")
    return args


def pin_threads(threads):
    """The same thread count for numpy's BLAS and for PyTorch. Must run before numpy is imported:
    OpenBLAS reads its variable once, when it loads. Two libraries each spinning up threads on the
    same two cores slow each other down, which would make the comparison unfair."""
    if "numpy" in sys.modules:
        raise RuntimeError("pin_threads() must run before numpy is imported")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(threads)


def main(argv=None):
    args = parse_args(argv)
    pin_threads(args.threads)

    from harness import Row, machine_info, print_table, torch, use_cpu_clock

    use_cpu_clock(args.clock == "cpu")

    if torch:
        torch.set_num_threads(args.threads)
    machine = machine_info()
    print("autograd_lab benchmarks, " + machine["date"])
    print(f"machine: {machine['cpu']}, {machine['cpus']} CPUs, {machine['platform']}, "
          f"load average {machine['load average']}")  # fmt: skip
    print(f"versions: Python {machine['python']}, numpy {machine['numpy']}, "
          f"torch {machine['torch'] or 'not installed (ratios to torch are n/a)'}")  # fmt: skip
    print(f"threads: numpy BLAS {machine['BLAS threads (numpy)'] or '?'}, torch "
          f"{machine['intra-op threads (torch)'] or '-'} (--threads {args.threads})")  # fmt: skip
    print(f"{'quick run (tiny sizes): the times mean nothing; ' if args.quick else ''}"
          f"{args.repeats} timed samples after {args.warmup} warm-up, interleaved; medians of "
          f"{'CPU time (--clock cpu)' if args.clock == 'cpu' else 'wall time'}")  # fmt: skip
    print(flush=True)

    rows, failed = [], []
    for name in [n for n in BENCHMARKS if not args.only or n in args.only]:
        row_id, module = BENCHMARKS[name]
        start = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            rows += importlib.import_module(module).rows(args)
        except Exception as error:  # one broken benchmark must not hide the others' rows
            traceback.print_exc()
            failed.append(name)
            rows.append(Row(row_id, name, "", None, "", None,
                            note=f"FAILED: {type(error).__name__}: {error}"))  # fmt: skip
        print(f"  {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    print_table(rows)

    if args.json:
        report = {"machine": machine, "settings": vars(args), "rows": [r.as_dict() for r in rows]}
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"\nwrote {args.json}")
    if failed:
        print(f"\nfailed: {', '.join(failed)} (traceback above, on stderr)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
