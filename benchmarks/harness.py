"""What every benchmark shares: interleaved timing, the load of other processes, the engines to
time, the machine's description and the result table.

    samples, load = quietly(lambda: interleaved({"ours": step_ours, "torch": step_torch}, 20, 3))
    row = Row("2", "moons MLP step", "µs/step", ours=..., ref_name="torch", ref=..., load=load)

A *runner* is a function that does one sample of work and returns its seconds (or a dict of named
seconds, e.g. forward and backward). `interleaved` gives the runners turns, a block of samples
each, so that a slow moment of a shared machine hits all of them, and keeps the medians. An
*engine* is a PyTorch-compatible module to time: `autograd_lab` ("ours"), and with run.py's
`--before REF` the same package as it was at REF ("before", see before.py).
"""

import contextlib
import ctypes
import datetime
import functools
import gc
import importlib
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a checkout, uninstalled

# BENCHMARKS_WITHOUT_TORCH=1 runs the suite as if PyTorch were not installed (the memory children
# for ours and the floor use it too: PyTorch loaded in a process would only blur its memory, so
# it is not even imported then).
torch = None
if os.environ.get("BENCHMARKS_WITHOUT_TORCH") != "1":
    try:
        import torch
    except ImportError:
        torch = None

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
BEFORE_PATH_VARIABLE = "BENCHMARKS_BEFORE_PATH"  # where a child finds the "before" package


@dataclass
class Method:
    """How rows are measured; run.py sets these from its options.

    cpu_clock: time with this process's CPU time instead of the wall clock (all its threads).
    block, settle: see `interleaved`. load_threshold, reruns: see `quietly`.
    """

    cpu_clock: bool = False
    block: int = 4
    settle: float = 0.2
    load_threshold: float = 0.25
    reruns: int = 2


method = Method()


def now():
    """Seconds from the benchmark's clock (see Method.cpu_clock); only differences mean anything."""
    return time.process_time() if method.cpu_clock else time.perf_counter()


def interleaved(runners, repeats, warmup, block=None, rewarm=True):
    """Median seconds of each runner: {name: {column: seconds}}, taken in turns, after warm-up.

    Each turn is a block of `block` timed samples of one runner, so a slow moment of the machine
    hits every runner over the rounds. Why blocks, not one sample per turn: at their default
    thread counts numpy's OpenBLAS and PyTorch each keep worker threads that spin for a while
    after a call (OpenBLAS about 0.1 s here), so a library that runs right after the other shares
    the cores with those spinning threads, which no user running one library sees (measured here:
    a 256x784 @ 784x512 product in PyTorch takes 1.8 ms alone, 15 ms taking turns with numpy).
    So each turn starts with a pause of `settle` seconds (the other pool goes to sleep) and one
    untimed sample (`rewarm`: this pool wakes up, caches refill), as in a training loop that only
    ever runs one library. The runner that starts a round rotates.

    The garbage collector stays on (as in a notebook); a collection before each sample keeps one
    runner's garbage from being collected on the next runner's clock. gc.freeze() first sets
    aside the objects that exist already (torch's and numpy's modules: ~180,000 objects, 70 ms
    per full collection), for every runner alike, so that collections only look at new objects.
    """
    block = max(1, block or method.block)
    samples = {name: {} for name in runners}
    names = list(runners)
    gc.collect()
    gc.freeze()
    try:
        for _ in range(warmup):
            for name in names:
                _sample(runners[name])
        for round_ in range(-(-repeats // block)):
            start = round_ % len(names) if names else 0
            count = min(block, repeats - round_ * block)
            for name in names[start:] + names[:start]:
                _turn(runners[name], count, rewarm, samples[name])
    finally:
        gc.unfreeze()
    return {
        name: {column: statistics.median(values) for column, values in columns.items()}
        for name, columns in samples.items()
    }


def _sample(runner):
    gc.collect()
    seconds = runner()
    return seconds if isinstance(seconds, dict) else {"": seconds}


def _turn(runner, count, rewarm, samples):
    """One runner's turn: settle, an untimed sample, then `count` timed ones into `samples`."""
    time.sleep(method.settle)
    if rewarm:
        _sample(runner)
    for _ in range(count):
        for column, value in _sample(runner).items():
            samples.setdefault(column, []).append(value)


# ---- the load of other processes ---------------------------------------------------------------


@dataclass(frozen=True)
class Load:
    """Other processes' average busy cores while a measurement ran (None off Linux), and how many
    times the measurement ran to find a quiet moment (see `quietly`)."""

    others: float | None
    tries: int = 1
    threshold: float = 0.25

    @property
    def loaded(self):
        return self.others is not None and self.others > self.threshold

    def __str__(self):
        if self.others is None:
            return "n/a"
        text = f"{self.others:.2f}" + (" loaded" if self.loaded else "")
        return text + (f" ({self.tries} runs)" if self.tries > 1 else "")

    def as_dict(self):
        return {"other_cores": self.others, "loaded": self.loaded, "runs": self.tries}


def cpu_snapshot():
    """(wall seconds, busy CPU seconds of the whole machine or None off Linux, CPU seconds of this
    process and of its children that have ended): what `other_cores` subtracts."""
    times = os.times()
    own = times.user + times.system + times.children_user + times.children_system
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return time.perf_counter(), None, own
    # user nice system idle iowait irq softirq steal: busy is all but idle and iowait. Steal is
    # time the hypervisor gave this VM's CPUs to other machines: other work that slows us too.
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    busy = (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    return time.perf_counter(), busy, own


def other_cores(before, after):
    """Average busy cores of every other process between two snapshots (None off Linux)."""
    (wall0, busy0, own0), (wall1, busy1, own1) = before, after
    if busy0 is None or busy1 is None or wall1 <= wall0:
        return None
    # both counters tick at 100 Hz: over a short window the difference can dip below zero
    return max(0.0, (busy1 - busy0) - (own1 - own0)) / (wall1 - wall0)


def quietly(measure, rerun=True):
    """(result, Load) of `measure()`, re-run while other processes kept more than
    `method.load_threshold` cores busy (at most `method.reruns` more times, when `rerun`).

    The result of the quietest run is kept: a figure taken while someone else's job held a core
    describes the machine's load, not the code. `rerun=False` records the load only (memory rows:
    how much memory a step needs does not depend on who else runs)."""
    best, runs = None, 0
    while runs <= (method.reruns if rerun else 0):
        before = cpu_snapshot()
        result = measure()
        others = other_cores(before, cpu_snapshot())
        runs += 1
        if best is None or (others is not None and others < best[1]):
            best = (result, others)
        if others is None or others <= method.load_threshold:
            break
    return best[0], Load(best[1], runs, method.load_threshold)


# ---- threads ---------------------------------------------------------------------------------


@functools.cache
def _openblas():
    """numpy's OpenBLAS library (ctypes), found among the loaded libraries, or None."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = {line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower()}
    for path in sorted(p for p in paths if p.startswith("/")):
        return ctypes.CDLL(path)
    return None


def _blas_function(action):
    """OpenBLAS's openblas_{action}_num_threads under the names numpy's builds give it."""
    library = _openblas()
    for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
        function = getattr(library, f"{prefix}_{action}_num_threads{suffix}", None)
        if function is not None:
            return function
    return None


def blas_threads():
    """The thread count numpy's OpenBLAS really uses (asked through its C API), or None."""
    function = _blas_function("get")
    return int(function()) if function else None


@contextlib.contextmanager
def pinned_threads(threads):
    """PyTorch (torch.set_num_threads) and numpy's OpenBLAS (its C API) at `threads` threads
    inside, their counts before it after: the secondary, pinned measurement."""
    torch_before, blas_before = torch.get_num_threads() if torch else None, blas_threads()
    set_blas = _blas_function("set")
    if torch:
        torch.set_num_threads(threads)
    if set_blas and blas_before:
        set_blas(threads)
    try:
        yield
    finally:
        if torch:
            torch.set_num_threads(torch_before)
        if set_blas and blas_before:
            set_blas(blas_before)


# ---- the engines -----------------------------------------------------------------------------

_engines = {}  # name: module; "ours" is added when first asked for


def add_engine(name, module):
    """Time `module` as engine `name` too, in every row that times ours (run.py's --before)."""
    _engines[name] = module


def engines():
    """{"ours": autograd_lab, then any added engine, e.g. "before": autograd_lab_before}."""
    return {"ours": engine("ours")} | {k: v for k, v in _engines.items() if k != "ours"}


def engine(name):
    """The module of engine `name`. In a child process of the memory rows, "before" is imported
    from the folder its parent exported it to (the variable BEFORE_PATH_VARIABLE)."""
    if name in _engines:
        return _engines[name]
    if name == "ours":
        module = importlib.import_module("autograd_lab")
    elif name == "before" and os.environ.get(BEFORE_PATH_VARIABLE):
        from before import PACKAGE

        sys.path.insert(0, os.environ[BEFORE_PATH_VARIABLE])
        module = importlib.import_module(PACKAGE)
    else:
        raise KeyError(f"no engine {name!r}")
    _engines[name] = module
    return module


def child_environment():
    """Variables a child process needs to import every engine this one times."""
    module = _engines.get("before")
    if module is None:
        return {}
    return {BEFORE_PATH_VARIABLE: str(Path(module.__file__).resolve().parent.parent)}


def check_all(results, ref_name, ref_result, tolerance, prefix=""):
    """The check cell for every engine in `results` ({engine: values}) against one reference:
    "ours-torch 0e+00 ✓, before-torch 0e+00 ✓". Returns (text, all ok)."""
    cells, all_ok = [], True
    for name, values in results.items():
        text, ok = compare(name, values, ref_name, ref_result, tolerance)
        cells.append(text)
        all_ok = all_ok and ok
    return (prefix + ", ".join(cells)).strip(), all_ok


def check_engines(results, tolerance, prefix=""):
    """Every library's results ({name: values}) against PyTorch's, or without PyTorch, "before"
    against ours: (text, ok), ("", True) when there is nothing to compare."""
    reference = "torch" if "torch" in results else "ours"
    others = {name: values for name, values in results.items() if name != reference}
    if not others or reference not in results:
        return "", True
    return check_all(others, reference, results[reference], tolerance, prefix)


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


def _ratio(ours, ref, speedup=False):
    if ours is None or ref is None or ours <= 0 or ref <= 0:
        return None
    return ref / ours if speedup else ours / ref


@dataclass
class Row:
    """One line of the table: ours against one reference (torch, the numpy floor, ...).

    `speedup=True` reports ref/ours (how many times faster we are) instead of ours/ref.
    `before` is the same measurement of the "before" engine (--before), `load` the other
    processes' load while it was taken, `pinned` the same row measured with pinned threads
    (run.py fills it in). `check` says whether they computed the same numbers; `note` explains.
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
    before: float | None = None
    load: Load | None = None
    pinned: "Row | None" = None
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self):
        return _ratio(self.ours, self.ref, self.speedup)

    @property
    def before_ratio(self):
        """after / before of our own figure (time or memory: below 1 is better)."""
        return _ratio(self.ours, self.before)

    @property
    def key(self):
        """What identifies a row across two passes of the same benchmark (default / pinned)."""
        return self.id, self.what, self.ref_name

    @property
    def verdict(self):
        """'✓' or '✗' against the target; '' when there is no target or no ratio."""
        if self.target is None or self.ratio is None:
            return ""
        return "✓" if self.target.met(self.ratio) and self.check_ok else "✗"

    def as_dict(self):
        return {
            "id": self.id,
            "what": self.what,
            "unit": self.unit,
            "ours": self.ours,
            "ref_name": self.ref_name,
            "ref": self.ref,
            "ratio": self.ratio,
            "ratio_kind": f"{self.ref_name} / ours" if self.speedup else f"ours / {self.ref_name}",
            "target": str(self.target) if self.target else None,
            "verdict": self.verdict,
            "before": self.before,
            "ratio_after_before": self.before_ratio,
            "load": self.load.as_dict() if self.load else None,
            "pinned": self._pinned_dict(),
            "check": self.check,
            "check_ok": self.check_ok,
            "note": self.note,
            **self.extra,
        }

    def _pinned_dict(self):
        """The figures of the pinned pass (run.py --pinned-threads), or None."""
        pinned = self.pinned
        if pinned is None:
            return None
        return {
            "ours": pinned.ours,
            "ref": pinned.ref,
            "ratio": pinned.ratio,
            "before": pinned.before,
            "check_ok": pinned.check_ok,
            "load": pinned.load.as_dict() if pinned.load else None,
        }


def compare(name_a, a, name_b, b, tolerance):
    """A check cell: the largest difference between two results, and whether it is within
    `tolerance` (relative to the size of the values). Returns (text, ok)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"{name_a}-{name_b} shapes {a.shape} != {b.shape} ✗", False
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


def _columns(before, pinned):
    """(header, right-aligned?, cell of a row) for each column of the table."""
    kind = lambda r: f"{r.ref_name}/ours" if r.speedup else f"ours/{r.ref_name}"  # noqa: E731
    ours = [("after" if before else "ours", True, lambda r: format_value(r.ours))]
    if before:
        ours = [
            ("before", True, lambda r: format_value(r.before)),
            *ours,
            ("after/before", True, lambda r: format_ratio(r.before_ratio)),
        ]
    columns = [
        ("row", False, lambda r: r.id),
        ("benchmark", False, lambda r: r.what),
        ("unit", False, lambda r: r.unit),
        *ours,
        ("vs", False, lambda r: r.ref_name),
        ("theirs", True, lambda r: format_value(r.ref)),
        ("ratio", True, lambda r: format_ratio(r.ratio)),
        ("target", False, lambda r: f"{kind(r)} {r.target}" if r.target else ""),
        ("", False, lambda r: r.verdict),
    ]
    if pinned:
        columns.append((f"ratio {pinned} thr", True, _pinned_cell))
    columns.append(("load", False, lambda r: str(r.load) if r.load else "-"))
    columns.append(("check", False, lambda r: r.check))
    return columns


def _pinned_cell(row):
    """The pinned pass's ratio, marked when that pass was measured under load."""
    if row.pinned is None:
        return "-"
    loaded = row.pinned.load is not None and row.pinned.load.loaded
    return format_ratio(row.pinned.ratio) + (" loaded" if loaded else "")


def print_table(rows, out=sys.stdout, before=False, pinned=None):
    """The one table: a line per comparison, then the notes of lines that have one.

    `before`: show the "before" engine's figures and after/before; `pinned`: the thread count of
    the pinned pass, whose ratio gets a column of its own (never the headline one)."""
    columns = _columns(before, pinned)
    cells = [[cell(r) for _, _, cell in columns] for r in rows]
    header = [name for name, _, _ in columns]
    widths = [max(len(str(c[i])) for c in [header, *cells]) for i in range(len(header))]
    for line in [header, *cells]:
        text = "  ".join(
            str(c).rjust(w) if right else str(c).ljust(w)
            for c, w, (_, right, _) in zip(line, widths, columns)
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


def memory_gib():
    """The machine's memory in GiB (MemTotal), or None where neither /proc nor sysconf says."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def numpy_blas():
    """numpy's BLAS as built ("scipy-openblas 0.3.31"), from numpy's own build configuration."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # an older numpy, or another build: the name is only informative
        return None


def torch_blas():
    """The BLAS PyTorch was built with (BLAS_INFO in torch.__config__.show()), e.g. 'mkl'."""
    found = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show()) if torch else None
    return found.group(1) if found else None


def numba_info():
    """(version, threads) of numba, which the generated kernels of row 6 run on."""
    try:
        import numba
    except ImportError:
        return None, None
    return numba.__version__, numba.get_num_threads()


def git_revision(ref="HEAD", working_tree=False):
    """`ref`'s commit in this checkout; with `working_tree`, plus whether autograd_lab/ on disk
    differs from it (the "after" engine is what is on disk, not what is committed).

    Read-only: --no-optional-locks keeps `git status` from refreshing the index, which another
    git command running at the same moment could find locked."""
    git = ["git", "--no-optional-locks", "-C", str(REPO)]
    try:
        commit = subprocess.run(
            [*git, "rev-parse", "--short=12", f"{ref}^{{commit}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not working_tree:
            return commit
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--", "autograd_lab"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + (" + uncommitted changes in autograd_lab/" if changed else "")


def machine_info():
    """What the table's numbers depend on; printed above the table and saved in the JSON."""
    numba_version, numba_threads = numba_info()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),  # logical cores (the key gpu.py and older reports use)
        "usable cores": usable,
        "memory GiB": memory_gib(),
        "os": platform.platform(),
        "kernel": platform.release(),
        "load average": _load_average(),
        "python": platform.python_version(),
        "python implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "numpy BLAS": numpy_blas(),
        "BLAS threads (numpy)": blas_threads(),
        "numba": numba_version,
        "numba threads": numba_threads,
        "torch": torch.__version__ if torch else None,
        "torch BLAS": torch_blas(),
        "intra-op threads (torch)": torch.get_num_threads() if torch else None,
        "autograd_lab": git_revision(working_tree=True),
        "thread variables": {name: os.environ.get(name) for name in THREAD_VARIABLES},
    }


def _load_average():
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return None
