"""The long fuzzing run: random programs in autograd_lab and PyTorch until the time is up.

    .venv/bin/python benchmarks/fuzz.py --minutes 10            # seeds 0, 1, 2, ...
    .venv/bin/python benchmarks/fuzz.py --minutes 5 --seed 100000 --save

Each distinct divergence (its kind: the op, what differed, the exception classes) is shrunk to
a small program the first time it is seen; the table at the end lists every kind with how often
it was seen and that shrunk reproducer, which runs with `import torch` and with
`import autograd_lab as torch`. `--save` also writes the table to benchmarks/results/fuzz-<date>.md.
The programs run in a worker process, so that a crash (PyTorch 2.13 has segmentation faults a
random program can reach) costs one seed, listed in the report, not the run.
The fuzzer itself lives in tests/fuzzing/ (its docstring says how it is built); tests/test_fuzz.py
runs a fixed slice of seeds in every test run.
"""

import argparse
import collections
import datetime
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402  (imported before any alarm is set: importing takes seconds)
from fuzzing import check, generator  # noqa: E402
from fuzzing.reproduce import reproducer  # noqa: E402
from fuzzing.shrink import shrink  # noqa: E402

import autograd_lab  # noqa: E402, F401

PROGRAM_SECONDS = 10  # a program that runs longer is stopped and counted as a fuzzer problem
EVENT = "fuzz-event: "  # how a worker's line to the supervising process begins


class ProgramTimeout(BaseException):
    """Raised by the alarm: a BaseException, so the runner does not record it as the library's."""


def _alarm(signum, frame):
    raise ProgramTimeout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0, help="the first seed (then +1 each)")
    parser.add_argument(
        "--save", action="store_true", help="write benchmarks/results/fuzz-<date>.md"
    )
    parser.add_argument("--shrink-budget", type=int, default=300, help="runs per shrink")
    parser.add_argument("--worker-until", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_until is not None:
        return work(args.seed, args.worker_until, args.shrink_budget)

    deadline = time.time() + args.minutes * 60
    seen = collections.Counter()  # kind -> programs that showed it
    first = {}  # kind -> (seed, one divergence, the shrunk reproducer)
    accepted = collections.Counter()  # simplification's README line -> divergences it explained
    problems = []  # (seed, traceback): the fuzzer's own failures
    programs, running, seed = 0, 0.0, args.seed
    while time.time() < deadline:
        # the programs run in a worker process: PyTorch itself may crash on one (a segmentation
        # fault); the run then goes on from the next seed in a new worker, and reports the crash
        command = [sys.executable, __file__, "--seed", str(seed), "--worker-until", str(deadline)]
        command += ["--shrink-budget", str(args.shrink_budget)]
        worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        worker.stdin.write(json.dumps([list(kind) for kind in first]) + "\n")
        worker.stdin.close()
        started = None  # the seed the worker is running now
        for line in worker.stdout:
            if not line.startswith(EVENT):  # something a program printed: shown as it is
                print(line, end="", file=sys.stderr)
                continue
            event = json.loads(line.removeprefix(EVENT))
            if "started" in event:
                started = event["started"]
            elif "ran" in event:
                started, seed = None, event["ran"] + 1
                programs += 1
                running += event["seconds"]
                seen.update(tuple(kind) for kind in event["kinds"])
                accepted.update(event["accepted"])
            elif "problem" in event:
                started, seed = None, event["problem"] + 1
                problems.append((event["problem"], event["traceback"]))
            else:  # a new kind, shrunk
                kind = tuple(event["kind"])
                first[kind] = (event["seed"], event["divergence"], event["source"])
                print(f"seed {event['seed']}: new kind {_kind_text(kind)}", flush=True)
        if worker.wait() == 0:
            break
        crashed = seed if started is None else started
        problems.append(
            (crashed, f"the process running it crashed (exit code {worker.returncode})")
        )
        print(f"seed {crashed}: the process crashed (exit code {worker.returncode})", flush=True)
        seed = crashed + 1

    report = _report(args, programs, running, seed, seen, first, accepted, problems)
    print(report)
    if args.save:
        path = ROOT / "benchmarks" / "results" / f"fuzz-{datetime.date.today()}.md"
        path.write_text(report)
        print(f"written to {path.relative_to(ROOT)}")


def work(seed, until, shrink_budget):
    """The worker: run programs from `seed` until the time `until`, telling the supervising
    process about each on stdout (one JSON object a line); a kind not in the list read from
    stdin is shrunk the first time it is seen."""
    known = {tuple(kind) for kind in json.loads(sys.stdin.readline())}
    signal.signal(signal.SIGALRM, _alarm)
    events, sys.stdout = sys.stdout, sys.stderr  # what else is printed goes to stderr

    def tell(**event):
        print(EVENT + json.dumps(event), file=events, flush=True)

    crash_at = int(os.environ.get("FUZZ_CRASH_AT_SEED", -1))  # tests/test_fuzz.py's crash
    while time.time() < until:
        tell(started=seed)
        if seed == crash_at:
            os.kill(os.getpid(), signal.SIGSEGV)
        started = time.monotonic()
        try:
            signal.setitimer(signal.ITIMER_REAL, PROGRAM_SECONDS)
            program = generator.generate(seed)
            result = check(program)
        except (Exception, ProgramTimeout):
            tell(problem=seed, traceback=traceback.format_exc(limit=4))
            seed += 1
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.monotonic() - started  # (shrinking not counted)
        kinds = {d.kind for d in result.divergences}
        for kind in kinds - known:
            known.add(kind)
            divergence, source = _shrunk(program, kind, shrink_budget)
            divergence = None if divergence is None else str(divergence)
            tell(kind=kind, seed=seed, divergence=divergence, source=source)
        lines = [simplification.readme for _, simplification in result.accepted]
        tell(ran=seed, seconds=seconds, kinds=[list(kind) for kind in kinds], accepted=lines)
        seed += 1


def _shrunk(program, kind, budget):
    """The smallest program showing `kind`, as source, and its divergence."""
    signal.setitimer(signal.ITIMER_REAL, PROGRAM_SECONDS * 6)
    try:
        small = shrink(program, kind, budget=budget)
    except ProgramTimeout:
        small = program
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    result = check(small)
    divergences = [d for d in result.divergences if d.kind == kind]
    return (divergences[:1] or [None])[0], reproducer(small, divergences[:1], result.raising)


def _kind_text(kind):
    op, what, classes = kind
    return f"{op}: {what}" + (f" ({classes})" if classes else "")


def _report(args, programs, running, next_seed, seen, first, accepted, problems):
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    rate = programs / running if running else 0.0
    out = [
        f"# Differential fuzzing: autograd_lab ({commit}) against PyTorch {torch.__version__}",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
        f"`benchmarks/fuzz.py --minutes {args.minutes:g} --seed {args.seed}`: seeds "
        f"{args.seed}-{next_seed - 1}, {programs} programs run, {rate:.1f} programs/second "
        f"(running them; shrinking not counted), {len(seen)} kinds of divergence.",
        "",
        "| # | programs | kind (op: what differed) | first seed |",
        "|---|---|---|---|",
    ]
    ranked = sorted(seen, key=lambda kind: (-seen[kind], kind))
    for number, kind in enumerate(ranked, 1):
        out.append(f"| {number} | {seen[kind]} | {_kind_text(kind)} | {first[kind][0]} |")
    if accepted:
        out += ["", "Accepted simplifications (README), not counted above:", ""]
        out += [f"- {count}x {line}" for line, count in accepted.most_common()]
    if problems:
        seeds = ", ".join(str(seed) for seed, _ in problems[:20])
        out += ["", f"The fuzzer's own failures: {len(problems)}, seeds {seeds} (first below)"]
        out += ["", "```"]
        out += [f"seed {problems[0][0]}", problems[0][1].rstrip(), "```"]
    out += ["", "## Shrunk reproducers", ""]
    for number, kind in enumerate(ranked, 1):
        seed, divergence, source = first[kind]
        out += [f"### {number}. {_kind_text(kind)} ({seen[kind]} programs)", ""]
        if divergence is not None:
            out += ["```", str(divergence), "```", ""]
        out += ["```python", source.rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    main()
