"""The benchmark suite: every comparison of the issue, measured in one run, printed as one table.

    .venv/bin/python benchmarks/run.py [--quick] [--repeats N] [--json PATH] [--only NAME ...]
                                       [--before REF] [--pinned-threads N] [--reruns N]
                                       [--load-threshold CORES] [--block N] [--settle S]
                                       [--clock wall|cpu]

Rows: 1 tiny-op chain (tiny_ops.py), 2 moons MLP step (moons_mlp.py), 3 big MLP against PyTorch
and the numpy floor (big_mlp.py), 4 the scalar engine (scalar_engine.py), 5 peak memory
(peak_memory.py), 6 fused kernels (fusion.py), 7 the planned executor's peak memory
(planned_memory.py); `--rows` is another name for `--only`. In each, ours and its references take
turns (a block of samples each, after warm-up); the table shows medians, the ratio, the issue's
target with ✓/✗, the load of other processes, and a check that all computed the same numbers.
Without PyTorch the suite still runs and says "n/a" for its ratios.

Threads: every library runs at its default thread count, as a user's program does (nothing is
set). `--pinned-threads N` measures the thread-sensitive rows a second time with PyTorch
(torch.set_num_threads) and numpy's OpenBLAS (its C API) at N threads: a column of its own.

`--before REF` also times autograd_lab as it was at git ref REF (before.py) in every row that
times ours, in the same rounds: the table then shows before, after (ours) and after/before.

Load: each measurement records other processes' average busy cores (harness.quietly); above
`--load-threshold` (0.25) it is marked "loaded" and re-run, up to `--reruns` (2) more times, and
the quietest run is kept.
"""

import argparse
import importlib
import json
import sys
import time
import traceback

BENCHMARKS = {  # name for --only: (row, the module that measures it, measured again pinned?)
    "tiny_ops": ("1", "tiny_ops", True),
    "moons": ("2", "moons_mlp", True),
    "big_mlp": ("3", "big_mlp", True),
    "scalar": ("4", "scalar_engine", False),  # pure Python against ours: no thread pool involved
    "memory": ("5", "peak_memory", False),  # memory, not time
    "fusion": ("6", "fusion", False),  # ours against ours; numba's threads are not pinned
    "planned": ("7", "planned_memory", False),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add(
        "--quick",
        action="store_true",
        help="tiny sizes, 2 repeats, no re-runs: checks that everything runs, times nothing",
    )
    add("--repeats", type=int, help="timed samples per measurement (default 20)")
    add("--warmup", type=int, help="untimed samples first (default 3)")
    add("--block", type=int, default=4, help="timed samples per turn (default 4)")
    add(
        "--settle",
        type=float,
        help="seconds of pause before each turn, for the other library's idle threads to stop "
        "spinning (default 0.2; 0.05 with --quick)",
    )
    add(
        "--pinned-threads",
        "--threads",
        type=int,
        metavar="N",
        dest="pinned_threads",
        help="also measure rows 1-3 with torch and OpenBLAS at N threads, as a second ratio "
        "column (the main figures stay at the default thread counts)",
    )
    add(
        "--before",
        metavar="REF",
        help="also time autograd_lab as it was at this git ref of the checkout (e.g. HEAD)",
    )
    add(
        "--reruns",
        type=int,
        help="re-run a loaded measurement up to N more times (default 2; 0 with --quick)",
    )
    add(
        "--load-threshold",
        type=float,
        default=0.25,
        metavar="CORES",
        help="other processes' busy cores above which a measurement is 'loaded' (default 0.25)",
    )
    add(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time (default), or this process's CPU time (every thread's: spinning worker "
        "threads count too), which leaves out the moments other programs run",
    )
    add("--json", metavar="PATH", help="also write the results to this file")
    add(
        "--only",
        "--rows",
        nargs="+",
        choices=BENCHMARKS,
        metavar="NAME",
        help=f"run only these: {', '.join(BENCHMARKS)}",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    args.repeats = args.repeats or (2 if quick else 20)
    args.warmup = args.warmup if args.warmup is not None else (1 if quick else 3)
    args.settle = args.settle if args.settle is not None else (0.05 if quick else 0.2)
    args.reruns = args.reruns if args.reruns is not None else (0 if quick else 2)
    if args.pinned_threads is not None and args.pinned_threads < 1:
        parser.error("--pinned-threads needs at least 1 thread")
    return args


def print_header(machine, args, before):
    """The machine and the method, above the table (the JSON report has the same fields)."""
    m = machine
    variables = ", ".join(f"{k}={v}" for k, v in m["thread variables"].items() if v is not None)
    torch = m["torch"] or "not installed (ratios to torch are n/a)"
    torch += f" ({m['torch BLAS']})" if m["torch BLAS"] else ""
    after = f"after = this checkout ({m['autograd_lab'] or 'git unavailable'})"
    before = f"; before = {args.before} ({before['commit']})" if before else ""
    clock = "CPU time (--clock cpu, every thread)" if args.clock == "cpu" else "wall time"
    print("autograd_lab benchmarks, " + m["date"])
    print(
        f"machine: {m['cpu']}, {m['cpus']} logical cores ({m['usable cores']} usable), "
        f"{m['memory GiB']} GiB, {m['os']}, load average at start {m['load average']}"
    )
    numpy = f"numpy {m['numpy']} ({m['numpy BLAS'] or 'BLAS ?'})"
    print(
        f"versions: {m['python implementation']} {m['python']}, {numpy}, "
        f"numba {m['numba'] or 'not installed'}, torch {torch}"
    )
    print(
        f"threads (defaults, as a user's program runs): numpy BLAS "
        f"{m['BLAS threads (numpy)'] or '?'}, torch {m['intra-op threads (torch)'] or '-'}, "
        f"numba {m['numba threads'] or '-'}; OMP/OPENBLAS/MKL_NUM_THREADS "
        f"{'set: ' + variables if variables else 'unset'}"
    )
    if args.pinned_threads:
        print(
            f"pinned column: rows 1-3 measured again with torch and numpy's OpenBLAS at "
            f"{args.pinned_threads} thread(s); the headline ratio is the default-thread one"
        )
    print(f"autograd_lab: {after}{before}")
    print(
        f"{'quick run (tiny sizes): the times mean nothing; ' if args.quick else ''}"
        f"{args.repeats} timed samples after {args.warmup} warm-up, {args.block} per turn, "
        f"each turn after a {args.settle} s pause and 1 untimed sample; medians of {clock}"
    )
    print(
        f"load: other processes' average busy cores during each measurement; 'loaded' above "
        f"{args.load_threshold}, then re-run up to {args.reruns} more times (quietest kept; "
        "memory rows record it only)"
    )
    print(flush=True)


def measure(name, args):
    """The rows of benchmark `name`, at the default thread counts, and whether it ran."""
    from harness import Row

    row_id, module, _ = BENCHMARKS[name]
    try:
        return importlib.import_module(module).rows(args), True
    except Exception as error:  # one broken benchmark must not hide the others' rows
        traceback.print_exc()
        note = f"FAILED: {type(error).__name__}: {error}"
        return [Row(row_id, name, "", None, "", None, note=note)], False


def add_pinned(rows, name, threads, args):
    """Measure benchmark `name` again with `threads` threads for torch and OpenBLAS, and attach
    each line of that pass to its twin as `row.pinned` (a column of its own, never the headline)."""
    from harness import pinned_threads

    try:
        with pinned_threads(threads):
            again = {
                row.key: row for row in importlib.import_module(BENCHMARKS[name][1]).rows(args)
            }
    except Exception as error:  # the default-thread figures still stand
        traceback.print_exc()
        rows[0].note = f"pinned pass FAILED: {type(error).__name__}: {error}"
        return
    for row in rows:
        row.pinned = again.get(row.key)
        if row.pinned is not None and not row.pinned.check_ok:
            row.check_ok, row.check = False, f"{row.check}; pinned pass: {row.pinned.check}"


def load_before(ref):
    """Import autograd_lab as it was at `ref` and time it as engine "before"; its description."""
    import before
    from harness import add_engine, git_revision

    add_engine("before", before.load(ref))
    return {"ref": ref, "commit": git_revision(ref)}


def main(argv=None):
    args = parse_args(argv)
    from harness import machine_info, method, print_table

    method.cpu_clock = args.clock == "cpu"
    method.block, method.settle = args.block, args.settle
    method.load_threshold, method.reruns = args.load_threshold, args.reruns
    try:
        before = load_before(args.before) if args.before else None
    except RuntimeError as error:  # a ref git does not know, or one without autograd_lab/
        print(f"--before {args.before}: {error}", file=sys.stderr)
        return 2
    machine = machine_info()
    print_header(machine, args, before)

    rows, failed = [], []
    for name in [n for n in BENCHMARKS if not args.only or n in args.only]:
        start = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        got, ok = measure(name, args)
        if ok and args.pinned_threads and BENCHMARKS[name][2]:
            add_pinned(got, name, args.pinned_threads, args)
        rows += got
        failed += [] if ok else [name]
        print(f"  {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    print_table(rows, before=bool(before), pinned=args.pinned_threads)
    loaded = [r for r in rows if r.load and r.load.loaded]
    if loaded:
        print(
            f"\n{len(loaded)} of {len(rows)} lines measured under load (load column): "
            "their figures say as much about the machine as about the code"
        )

    if args.json:
        report = {
            "machine": machine,
            "before": before,
            "settings": vars(args),
            "rows": [r.as_dict() for r in rows],
        }
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        print(f"\nwrote {args.json}")
    if failed:
        print(f"\nfailed: {', '.join(failed)} (traceback above, on stderr)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
