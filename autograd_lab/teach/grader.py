"""Grade learners' notebooks against the instructor's: fair, hard to fool, one verdict per exercise.

    >>> from autograd_lab.teach.grader import grade
    >>> result = grade("alice/01_graphs.ipynb", against="solutions/01_graphs.ipynb")
    >>> result.score, result.max_score
    (3, 5)
    >>> result.exercises["ex2"].feedback
    '✗ ex2: b is used twice, so its gradient has two paths to add up'

How (the "Grading" section of FORMAT.md):

1. The *graded notebook* is the INSTRUCTOR's notebook in which each solution cell's source is
   replaced by the learner's cell with the same exercise id and the same position among that
   exercise's solution cells (a missing one becomes the stub). Everything else - lesson cells,
   check cells with their hidden tests, their expected outputs and their points - comes from the
   instructor, so editing a check cell, pasting "✓" into stored outputs or raising the points in
   the metadata gains nothing.
2. It runs in a subprocess, `python -m pytest --nbval graded.ipynb`, on a fresh kernel. nbval runs
   each code cell as a test; only check cells have their outputs compared. nbval interrupts a cell
   after the per-cell timeout and goes on with the next one, so an endless loop costs one exercise.
3. The small pytest plugin at the end of this file records, for each cell, whether it passed and
   which exception it raised. An exercise earns its points iff its check cell passed. Feedback is
   the verdict plus the check's one-line hint: never a traceback, which would show hidden tests.

Trust boundary: the grader defends against edits to the notebook FILE. The learner's code still
runs, with the grader's permissions, in the kernel: grade in a throwaway container (a CI job).
"""

import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

# ---- submission files (submission.py): re-exported, so grader.read_notebook and
# grader.SubmissionError keep working; read_notebook refuses links, FIFOs and devices
from .submission import DEFAULT_MAX_SIZE, SubmissionError, read_notebook  # noqa: F401

# ---- end of submission files

DEFAULT_TIMEOUT = 30  # seconds one cell may run before nbval interrupts it
KERNEL_STARTUP = 60  # seconds: nbval's kernel-startup timeout, part of the overall bound
STUB = 'raise NotImplementedError("{exercise}: write your solution here")'  # the generator's stub


class GraderError(Exception):
    """Grading cannot run at all: the instructor's notebook is unusable, or nbval is missing."""


# ---- what a grade is -----------------------------------------------------------------------------


@dataclass
class ExerciseResult:
    points: int
    max_points: int
    passed: bool
    feedback: str  # "✓ passed", or "✗ " and one line saying why; never hidden test code


@dataclass
class Result:
    """The grade of one submission; `error` says why it could not be graded (score 0 then)."""

    submission: str
    score: int = 0
    max_score: int = 0
    exercises: dict = field(default_factory=dict)  # exercise id -> ExerciseResult, lesson order
    error: str | None = None

    def to_dict(self):
        """Plain JSON-ready data: {"submission", "score", "max_score", "exercises", "error"}."""
        return asdict(self)


# ---- reading notebooks ---------------------------------------------------------------------------


@dataclass
class Lesson:
    """The instructor's notebook, read once and shared by every submission graded against it."""

    path: Path
    notebook: dict
    points: dict  # exercise id -> points, in the order of the check cells

    @property
    def max_score(self):
        return sum(self.points.values())


def load_lesson(path):
    """Read the instructor's notebook and its exercises' points; GraderError when it is unusable.

    >>> load_lesson("solutions/01_graphs.ipynb").points
    {'ex1': 1, 'ex2': 2, 'ex3': 2}
    """
    try:
        notebook = read_notebook(path)
    except SubmissionError as error:
        raise GraderError(f"the instructor's notebook: {error}") from None
    points, solved = {}, set()
    for number, cell in enumerate(notebook["cells"], start=1):
        exercise, role, info = _graded_role(cell)
        if role == "solution":
            solved.add(exercise)
        elif role == "check":
            value = info.get("points")
            if exercise in points:
                raise GraderError(f"{path}, cell {number}: a second check cell for {exercise}")
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise GraderError(f"{path}, cell {number}: {exercise} needs positive int points")
            points[exercise] = value
    if not points:
        raise GraderError(
            f"{path} has no check cells (autograd_lab role 'check'): nothing to grade"
        )
    if solved - points.keys():
        raise GraderError(f"{path}: no check cell for {', '.join(sorted(solved - points.keys()))}")
    return Lesson(Path(path), notebook, points)


def _graded_role(cell):
    """(exercise, role, metadata) of a graded code cell; (None, None, {}) for any other cell."""
    if not isinstance(cell, dict) or not isinstance(cell.get("metadata"), dict):
        return None, None, {}
    info = cell["metadata"].get("autograd_lab")
    if cell.get("cell_type") != "code" or not isinstance(info, dict):
        return None, None, {}
    if info.get("role") not in ("solution", "check") or not isinstance(info.get("exercise"), str):
        return None, None, {}
    return info["exercise"], info["role"], info


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)  # JSON may split lines


# ---- building the graded notebook ----------------------------------------------------------------


@dataclass
class GradedNotebook:
    notebook: dict
    code_cells: list  # per code cell, in nbval's numbering: (exercise, role) or (None, None)
    missing: set  # exercises with a solution cell that the submission does not have


def build_graded_notebook(lesson, submission, stopped=()):
    """The instructor's notebook with the learner's solution cells put in (FORMAT.md, "Grading").

    >>> graded = build_graded_notebook(lesson, read_notebook("alice.ipynb"))
    >>> graded.code_cells[:3]
    [(None, None), ('ex1', 'solution'), ('ex1', 'check')]

    Exercises in `stopped` get a stub instead of the learner's cells (they stopped the kernel).
    """
    answers = {}  # (exercise, k) -> the source of the learner's k-th solution cell of that exercise
    for cell in submission["cells"]:
        exercise, role, _ = _graded_role(cell)
        if role == "solution":
            k = sum(key[0] == exercise for key in answers)
            answers[(exercise, k)] = _source(cell)

    notebook = copy.deepcopy(lesson.notebook)
    code_cells, missing, count = [], set(), {}
    for cell in notebook["cells"]:
        if cell.get("cell_type") != "code":
            continue
        exercise, role, _ = _graded_role(cell)
        code_cells.append((exercise, role))
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if role == "check":
            # a check cell always runs and is compared, whatever nbval tags it may carry
            tags[:] = [t for t in tags if not t.startswith("nbval-") and t != "raises-exception"]
            if cell.get("outputs") and cell.get("execution_count") is None:
                cell["execution_count"] = 1  # nbval compares the outputs of executed cells only
            continue
        # Any other cell's outputs depend on the learner's code, and no points hang on them.
        tags.append("nbval-ignore-output")
        if role == "solution":
            k = count[exercise] = count.get(exercise, -1) + 1
            if exercise in stopped:
                cell["source"] = (
                    f'raise TimeoutError("{exercise}: left out, it stopped the kernel")'
                )
            elif (exercise, k) in answers:
                cell["source"] = answers[(exercise, k)]
            else:
                cell["source"] = STUB.format(exercise=exercise)
                missing.add(exercise)
            cell["outputs"] = []
    return GradedNotebook(notebook, code_cells, missing)


# ---- running it under pytest + nbval -------------------------------------------------------------


@dataclass
class _Run:
    cells: dict  # code cell number -> the record the plugin wrote for it
    finished: bool  # False: the overall bound stopped pytest before the end
    stopped: set  # exercises left out because their cell stopped the kernel


def _run_nbval(notebook, timeout, total_timeout):
    """Run the graded notebook in a pytest subprocess; return ({cell number: record}, finished)."""
    with tempfile.TemporaryDirectory(prefix="autograd-lab-grade-") as folder:
        folder = Path(folder)
        (folder / "graded.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        (folder / "pytest.ini").write_text("[pytest]\n")  # keeps the project's pytest settings out
        record_file = folder / "cells.jsonl"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "graded.ipynb",
            "-c",
            "pytest.ini",
            "-p",
            "nbval.plugin",
            "-p",
            __name__,
            "--autograd-lab-record",
            str(record_file),
            "--nbval",
            "--nbval-current-env",
            f"--nbval-cell-timeout={timeout}",
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=no",
            "-rN",
        ]
        # Only nbval and our plugin: faster, and no plugin of the machine's changes the run.
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        env.pop("PYTEST_ADDOPTS", None)
        # The plugin and the kernel import this very autograd_lab, installed or not.
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        try:
            subprocess.run(command, cwd=folder, env=env, capture_output=True, timeout=total_timeout)
            finished = True
        except subprocess.TimeoutExpired:
            # pytest is killed; its kernel exits by itself within a second (it watches its parent)
            finished = False
        lines = record_file.read_text(encoding="utf-8").splitlines() if record_file.exists() else []
    records = [json.loads(line) for line in lines]
    return {record["cell"]: record for record in records}, finished


def _run_until_the_kernel_survives(lesson, submission, timeout, total_timeout):
    """Run the graded notebook; when a cell killed the kernel, run again without its exercise.

    An interrupted endless loop costs only its cell. But a cell that ignores the interrupt (or
    kills the kernel) leaves every later cell without a kernel; stubbing out that exercise and
    grading again makes it cost only its own points. Each rerun leaves one more exercise out,
    and all runs together stay within `total_timeout` seconds.
    """
    deadline = time.monotonic() + total_timeout
    stopped = set()
    while True:
        graded = build_graded_notebook(lesson, submission, stopped)
        cells, finished = _run_nbval(graded.notebook, timeout, deadline - time.monotonic())
        dead = [n for n, record in cells.items() if record["kernel_dead"]]
        # the kernel died during the last cell that ran before one found it dead
        culprit = max((n for n in cells if n < min(dead)), default=None) if dead else None
        exercise = graded.code_cells[culprit][0] if culprit is not None else None
        out_of_time = deadline - time.monotonic() < 1
        if exercise is None or exercise in stopped or out_of_time:  # nothing (more) to leave out
            return graded, _Run(cells, finished, stopped)
        stopped.add(exercise)


def _require_nbval():
    if importlib.util.find_spec("nbval") is None or importlib.util.find_spec("pytest") is None:
        raise GraderError("the grader runs pytest + nbval: pip install 'autograd_lab[test]'")


# ---- scoring -------------------------------------------------------------------------------------


def grade(
    submission_path, against, timeout=DEFAULT_TIMEOUT, total_timeout=None, max_size=DEFAULT_MAX_SIZE
):
    """Grade one submission against the instructor's notebook (a path, or a Lesson).

    >>> r = grade("alice.ipynb", against="solutions/01_graphs.ipynb", timeout=10)
    >>> r.score, r.max_score, r.exercises["ex1"].passed, r.error
    (3, 5, True, None)

    `timeout` bounds each cell; `total_timeout` (default: a generous bound from the number of code
    cells) bounds the whole run. Never raises for a bad submission, never writes to it: a problem
    with it goes to `Result.error`. GraderError when the instructor's notebook is unusable.
    """
    _require_nbval()
    lesson = against if isinstance(against, Lesson) else load_lesson(against)
    result = Result(str(submission_path), max_score=lesson.max_score)
    try:
        submission = read_notebook(submission_path, max_size)  # max_size: bytes
    except SubmissionError as error:
        result.error = str(error)
        return result
    n_code = sum(cell.get("cell_type") == "code" for cell in lesson.notebook["cells"])
    total_timeout = total_timeout or KERNEL_STARTUP + n_code * (timeout + 10)
    graded, run = _run_until_the_kernel_survives(lesson, submission, timeout, total_timeout)

    if run.cells and all(record["when"] == "setup" for record in run.cells.values()):
        result.error = f"the notebook could not be run: {run.cells[min(run.cells)]['message']}"
        return result
    if not run.cells and run.finished:
        result.error = "pytest + nbval ran no cell of the notebook"
        return result
    for exercise, max_points in lesson.points.items():
        solutions = [
            n for n, cell in enumerate(graded.code_cells) if cell == (exercise, "solution")
        ]
        check = run.cells.get(graded.code_cells.index((exercise, "check")))
        passed = bool(check and check["passed"]) and exercise not in run.stopped
        feedback = (
            "✓ passed" if passed else _explain(exercise, graded, run, solutions, check, timeout)
        )
        points = max_points if passed else 0
        result.exercises[exercise] = ExerciseResult(points, max_points, passed, feedback)
    result.score = sum(e.points for e in result.exercises.values())
    return result


def _explain(exercise, graded, run, solutions, check, timeout):
    """One line saying why an exercise earned nothing: the learner's cell first, then the check."""
    if exercise in run.stopped:
        return f"✗ your cell ran past {timeout:g} s and ignored the interrupt, so it was left out"
    if exercise in graded.missing:
        return f"✗ no solution cell for {exercise} in the submission (was it deleted or retyped?)"
    running = min(set(range(len(graded.code_cells))) - run.cells.keys(), default=None)
    for number in solutions:  # the learner's own cell failing is the root cause: say that
        record = run.cells.get(number)
        if not run.finished and number == running:
            return "✗ your solution cell was still running at the overall time limit of grading"
        if record and record["timed_out"]:
            return f"✗ your solution cell ran over {timeout:g} s and was stopped (endless loop?)"
        if record and record["ename"] == "NotImplementedError":
            return "✗ not done yet: your cell still raises NotImplementedError"
        if record and record["ename"]:
            return f"✗ your solution cell raised {_exception(record)}"
    if check is None:
        why = "the kernel had stopped" if run.finished else "grading hit its overall time limit"
        return f"✗ the check did not run ({why})"
    if check["timed_out"]:
        return f"✗ the check ran longer than {timeout:g} s and was stopped (does your code loop?)"
    if check["ename"] == "CheckFailed":  # check()'s one-line verdict, with the author's hint
        return "✗ " + _one_line(check["evalue"]).removeprefix("✗").strip()
    if check["ename"]:  # e.g. a bare assert in the hidden tests: its name, never its line
        return f"✗ the check raised {_exception(check)}"
    if check["kernel_dead"]:
        return "✗ the check did not run (the kernel had stopped)"
    if check["message"].startswith("Cell outputs differ"):
        return "✗ the check's output differs from the expected one (does your code print more?)"
    return f"✗ the check failed ({check['message']})"


def _exception(record):
    """The exception as `ValueError: bad shape`, or just `AssertionError` when it has no message."""
    message = _one_line(record["evalue"])
    return f"{record['ename']}: {message}" if message else record["ename"]


def _one_line(text, limit=200):
    """The first non-empty line of a message, without terminal colours, at most `limit` long."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(text or ""))
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def grade_many(
    paths,
    against,
    jobs=1,
    timeout=DEFAULT_TIMEOUT,
    total_timeout=None,
    progress=None,
    max_size=DEFAULT_MAX_SIZE,
):
    """Grade many submissions, `jobs` at a time; the results come in the order of `paths`.

    >>> results = grade_many(["alice.ipynb", "bob.ipynb"], "solutions/01_graphs.ipynb", jobs=2)
    >>> [(r.submission, r.score) for r in results]
    [('alice.ipynb', 5), ('bob.ipynb', 3)]

    A bad submission - or a bug of ours while grading one - becomes that submission's `error`;
    the others are graded all the same. `progress(result)` is called as each one is done.
    """
    _require_nbval()
    lesson = against if isinstance(against, Lesson) else load_lesson(against)

    def one(path):
        try:
            result = grade(path, lesson, timeout, total_timeout, max_size=max_size)
        except Exception as error:  # reported for this submission; never stops the class
            result = Result(str(path), max_score=lesson.max_score, error=f"grader bug: {error!r}")
        if progress:
            progress(result)
        return result

    # Threads are enough: each one waits on its own pytest subprocess, which does the work.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, paths))


# ---- the pytest plugin, loaded inside the subprocess by `-p autograd_lab.teach.grader` -----------


def pytest_addoption(parser):
    parser.addoption("--autograd-lab-record", help="file for the grader's one line per cell")


def pytest_runtest_makereport(item, call):
    """Record each notebook cell's outcome; returning None leaves making the report to pytest.

    `call.excinfo` is read rather than the report's outcome: after a timeout nbval marks all later
    cells xfail, which would turn their pass/fail into xpass/xfail.
    """
    path = item.config.getoption("--autograd-lab-record", None)
    if not path or not hasattr(item, "cell_num") or call.when == "teardown":
        return None
    error = call.excinfo.value if call.excinfo else None
    if call.when == "setup" and error is None:
        return None  # the cell itself runs in the "call" phase, next
    # From the kernel's error output: the exception's name and message. Its traceback, which
    # would show the hidden tests' lines, is deliberately left behind.
    errors = [o for o in getattr(item, "test_outputs", None) or [] if o["output_type"] == "error"]
    message = str(error) if error is not None else ""
    record = {
        "cell": item.cell_num,
        "when": call.when,
        "passed": error is None,
        "timed_out": message.startswith("Timeout"),
        "kernel_dead": message.startswith("Kernel dead"),
        "ename": str(errors[-1].get("ename", "")) if errors else "",
        "evalue": str(errors[-1].get("evalue", "")) if errors else "",
        "message": _one_line(message),
    }
    with open(path, "a", encoding="utf-8") as file:  # a line per cell: a killed run keeps its lines
        file.write(json.dumps(record) + "\n")
    return None
