"""What every benchmark shares: interleaved timing, the machine's description, the result table.

    samples = interleaved({"ours": step_ours, "torch": step_torch}, repeats=20, warmup=3)
    row = Row("2", "moons MLP step", "µs/step", ours=..., ref_name="torch", ref=..., target=LE_1)

A *runner* is a function that does one sample of work and returns its seconds (or a dict of named
seconds, e.g. forward and backward). `interleaved` calls the runners in turn, ours, torch, floor,
ours, ... so that a slow moment of a shared machine hits all of them, and keeps the medians.
"""

import ctypes
import gc
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a checkout, uninstalled

# BENCHMARKS_WITHOUT_TORCH=1 runs the suite as if PyTorch were not installed (the memory children
# for ours and the floor use it too: PyTorch loaded in a process would only blur its memory).
try:
    import torch

    if os.environ.get("BENCHMARKS_WITHOUT_TORCH") == "1":
        torch = None
except ImportError:
    torch = None

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

# The clock every runner reads. Wall time by default; `run.py --clock cpu` switches to the CPU
# time of this process, which does not count the moments other programs hold the CPU (on a busy
# shared machine the wall clock mostly measures them). Only meaningful with one thread.
_clock = time.perf_counter


def use_cpu_clock(cpu):
    global _clock
    _clock = time.process_time if cpu else time.perf_counter


def now():
    """Seconds from the benchmark's clock (see use_cpu_clock); only differences mean anything."""
    return _clock()


def interleaved(runners, repeats, warmup):
    """Median seconds of each runner: {name: {column: seconds}}, taken in turn, after warm-up.

    The runners take turns, and the one that starts a round rotates, so that no runner always
    follows the same other one (whose leftovers, say freed memory, it would inherit). The garbage
    collector stays on (as in a notebook); a collection before each sample keeps one runner's
    garbage from being collected on the next runner's clock. gc.freeze() first sets aside the
    objects that exist already (torch's and numpy's modules: ~180,000 objects, 70 ms per full
    collection), for every runner alike, so that the collections only look at new objects.
    """
    samples = {name: {} for name in runners}
    names = list(runners)
    gc.collect()
    gc.freeze()
    try:
        for repeat in range(warmup + repeats):
            start = repeat % len(names) if names else 0
            for name in names[start:] + names[:start]:
                gc.collect()
                seconds = runners[name]()
                if repeat < warmup:
                    continue
                for column, value in (
                    seconds if isinstance(seconds, dict) else {"": seconds}
                ).items():
                    samples[name].setdefault(column, []).append(value)
    finally:
        gc.unfreeze()
    return {
        name: {column: statistics.median(values) for column, values in columns.items()}
        for name, columns in samples.items()
    }


# ---- targets and rows ------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A bound on a ratio: `ratio <= bound` ("at most") or `ratio >= bound` ("at least")."""

    bound: float
    at_least: bool = False

    def met(self, ratio):
        return ratio >= self.bound if self.at_least else ratio <= self.bound

    def __str__(self):
        bound = f"{self.bound:,.0f}" if self.bound >= 100 else str(self.bound)
        return f"{'≥' if self.at_least else '≤'} {bound}"


@dataclass
class Row:
    """One line of the table: ours against one reference (torch, the numpy floor, ...).

    `speedup=True` reports ref/ours (how many times faster we are) instead of ours/ref.
    `check` says whether both computed the same numbers; `note` explains a missing value.
    """

    id: str
    what: str
    unit: str
    ours: float | None
    ref_name: str
    ref: float | None
    target: Target | None = None
    speedup: bool = False
    check: str = ""
    check_ok: bool = True
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self):
        if self.ours is None or self.ref is None or self.ours <= 0 or self.ref <= 0:
            return None
        return self.ref / self.ours if self.speedup else self.ours / self.ref

    @property
    def verdict(self):
        """'✓' or '✗' against the target; '' when there is no target or no ratio."""
        if self.target is None or self.ratio is None:
            return ""
        return "✓" if self.target.met(self.ratio) and self.check_ok else "✗"

    def as_dict(self):
        return {
            "id": self.id, "what": self.what, "unit": self.unit, "ours": self.ours,
            "ref_name": self.ref_name, "ref": self.ref, "ratio": self.ratio,
            "ratio_kind": f"{self.ref_name} / ours" if self.speedup else f"ours / {self.ref_name}",
            "target": str(self.target) if self.target else None, "verdict": self.verdict,
            "check": self.check, "check_ok": self.check_ok, "note": self.note, **self.extra,
        }  # fmt: skip


def compare(name_a, a, name_b, b, tolerance):
    """A check cell: the largest difference between two results, and whether it is within
    `tolerance` (relative to the size of the values). Returns (text, ok)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    difference = float(np.max(np.abs(a - b))) if a.size else 0.0
    ok = difference <= tolerance * max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    return f"{name_a}-{name_b} {difference:.0e} {'✓' if ok else '✗'}", ok


def format_value(value):
    """A measurement for the table: 0.406, 3.47, 27.5, 1,719."""
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.3g}"


def format_ratio(ratio):
    """0.98x, 1.15x, 2,433.2x: a big ratio keeps a decimal, so 999.6 never prints as 1,000."""
    if ratio is None:
        return "n/a"
    return f"{ratio:,.1f}x" if ratio >= 100 else f"{ratio:.2f}x"


def print_table(rows, out=sys.stdout):
    """The one table: a line per comparison, then the notes of lines that have one."""
    header = ("row", "benchmark", "unit", "ours", "vs", "theirs", "ratio", "target", "", "check")
    cells = []
    for r in rows:
        kind = f"{r.ref_name}/ours" if r.speedup else f"ours/{r.ref_name}"
        cells.append((
            r.id, r.what, r.unit, format_value(r.ours), r.ref_name, format_value(r.ref),
            format_ratio(r.ratio), f"{kind} {r.target}" if r.target else "", r.verdict, r.check,
        ))  # fmt: skip
    widths = [max(len(str(c[i])) for c in [header, *cells]) for i in range(len(header))]
    right = {3, 5, 6}  # numbers are right-aligned
    for line in [header, *cells]:
        text = "  ".join(
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(line, widths))
        )
        print(text.rstrip(), file=out)
    notes = {(r.id, r.note): None for r in rows if r.note}  # once each, in table order
    for row_id, note in notes:
        print(f"  {row_id}: {note}", file=out)


# ---- the machine -----------------------------------------------------------------------------


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_threads():
    """The thread count numpy's OpenBLAS really uses (asked through its C API), or None.

    The environment variables only say what we asked for; this reads what the library took.
    """
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = {line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower()}
    for path in sorted(p for p in paths if p.startswith("/")):
        library = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                       "openblas_get_num_threads"):  # fmt: skip
            function = getattr(library, symbol, None)
            if function is not None:
                return int(function())
    return None


def machine_info():
    """What the table's numbers depend on; printed above the table and saved in the JSON."""
    import datetime

    return {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "load average": _load_average(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__ if torch else None,
        "BLAS threads (numpy)": blas_threads(),
        "intra-op threads (torch)": torch.get_num_threads() if torch else None,
        **{name: os.environ.get(name) for name in THREAD_VARIABLES},
    }


def _load_average():
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return None
