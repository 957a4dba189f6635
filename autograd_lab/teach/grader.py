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
   check cells with their hidden tests and their points - comes from the instructor, so editing
   a check cell, pasting "✓" into stored outputs or raising the points in the metadata gains
   nothing.
2. Its lesson and solution cells run, in order, in the learner's *worker* process (worker.py),
   started in a sandbox where the machine has one (sandbox.py). Its check cells run HERE, in the
   grader's process (judge.py): they call the learner's functions and read the learner's values
   through a channel that carries plain data only (wire.py), and compare here. The worker never
   sees a check cell, so nothing it does - rebinding `check`, patching numpy, an object equal to
   everything - can decide a verdict. An exercise earns its points iff its check cell ran here
   to its end.
3. A cell that runs past the time limit is interrupted; one that ignores the interrupt, or ends
   the worker, has the worker killed (with everything it started), and the notebook is run
   again in a new worker without that exercise: it costs its own points only. Feedback is the
   verdict plus the check's one-line hint and, where the check says so (teach.expect), the input
   that failed: never a traceback, which would show hidden tests.
"""

import copy
import re
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import judge

# ---- submission files (submission.py): re-exported, so grader.read_notebook and
# grader.SubmissionError keep working; read_notebook refuses links, FIFOs and devices
from .submission import DEFAULT_MAX_SIZE, SubmissionError, read_notebook  # noqa: F401

# ---- end of submission files

DEFAULT_TIMEOUT = 30  # seconds one cell (or one check cell's calls) may run before it is stopped
WORKER_STARTUP = 60  # seconds: starting the learner's worker, part of the overall bound
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
    code_cells: list  # per code cell, in order: (exercise, role) or (None, None)
    missing: set  # exercises with a solution cell that the submission does not have

    @property
    def sources(self):
        """The source of each code cell, in order (the learner's in solution cells)."""
        return [_source(c) for c in self.notebook["cells"] if c.get("cell_type") == "code"]


def build_graded_notebook(lesson, submission):
    """The instructor's notebook with the learner's solution cells put in (FORMAT.md, "Grading").

    >>> graded = build_graded_notebook(lesson, read_notebook("alice.ipynb"))
    >>> graded.code_cells[:3]
    [(None, None), ('ex1', 'solution'), ('ex1', 'check')]
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
        if role == "solution":
            k = count[exercise] = count.get(exercise, -1) + 1
            if (exercise, k) in answers:
                cell["source"] = answers[(exercise, k)]
            else:
                cell["source"] = STUB.format(exercise=exercise)
                missing.add(exercise)
            cell["outputs"] = []
    return GradedNotebook(notebook, code_cells, missing)


# ---- running it: the judge and the learner's worker ----------------------------------------------


@dataclass
class _Run:
    cells: dict  # code cell number -> what happened to it (see _record)
    finished: bool  # False: the overall time limit stopped grading before the end
    stopped: (
        dict  # exercise -> "timeout" or "ended": its cell stopped the worker, so it was left out
    )
    isolation: str = "none"


def _record(passed, ename="", evalue="", stopped=None):
    """What happened to one cell: passed, the exception's class name and first line (never a
    traceback), and whether it stopped the worker ("timeout" or "ended")."""
    return {"passed": passed, "ename": ename, "evalue": _one_line(evalue), "stopped": stopped}


def _judge(graded, timeout, total_timeout, isolate=None):
    """Run the graded notebook: lesson and solution cells in the learner's worker, check cells
    here, in the judge (judge.py). A cell that stops the worker (it ran past the time limit, or
    ended the process) costs its exercise: the worker is started again and the notebook run
    again from the top without that exercise's cells; verdicts already given stand."""
    deadline = time.monotonic() + total_timeout
    cells, stopped = {}, {}
    for _attempt in range(len(graded.code_cells) + 1):
        with tempfile.TemporaryDirectory(prefix="autograd-lab-worker-") as workdir:
            worker = judge.WorkerProcess.start(workdir, isolate)
            try:
                checks = judge.CheckCells(worker)
                culprit = _run_cells(worker, checks, graded, cells, stopped, timeout, deadline)
            finally:
                worker.stop()
        if culprit is None:
            return _Run(cells, time.monotonic() < deadline, stopped)
    return _Run(cells, False, stopped)


def _run_cells(worker, checks, graded, cells, stopped, timeout, deadline):
    """Run every code cell once in order; return the exercise whose cell stopped the worker (the
    caller runs the notebook again without it), or None when the notebook ran to its end. A
    check cell judged in an earlier run runs again (later check cells may use what it defines),
    but its first verdict stands."""
    for number, ((exercise, role), cell) in enumerate(zip(graded.code_cells, graded.sources)):
        left = deadline - time.monotonic()
        if left < 1:
            return None  # the overall time limit: the cells not run yet have no record
        limit = min(timeout, left)
        if role == "check":
            if exercise in stopped:
                continue  # its exercise stopped the worker: nothing to judge, nothing to define
            outcome = _run_check(checks, cell, limit)
        else:
            source = cell
            if exercise in stopped and role == "solution":
                source = f'raise TimeoutError("{exercise}: left out, it stopped the worker")'
            outcome = _run_in_worker(worker, source, limit)
        if number not in cells:
            cells[number] = outcome
        if outcome["stopped"]:
            blamed = exercise if exercise is not None else _last_solution(graded, number)
            if blamed is None or blamed in stopped:
                return None  # nothing (more) to leave out: the rest has no record
            stopped[blamed] = outcome["stopped"]
            return blamed
    return None


def _last_solution(graded, number):
    """The exercise of the last solution cell before cell `number` (whose code a lesson cell that
    stopped the worker was running, most likely)."""
    for exercise, role in reversed(graded.code_cells[:number]):
        if role == "solution":
            return exercise
    return None


def _run_in_worker(worker, source, timeout):
    try:
        worker.run(source, timeout=timeout)
    except judge.WorkerDied as died:
        return _record(False, stopped=died.why)
    except Exception as error:  # the cell's own exception, by class name and message
        return _record(False, _error_name(error), str(error))
    return _record(True)


def _run_check(checks, source, timeout):
    """Run a check cell here, its free names taken from the worker (judge.CheckCells)."""
    try:
        with judge.time_limit(timeout), _quiet():
            checks.run(source)
    except judge.WorkerDied as died:
        return _record(False, stopped=died.why)
    except Exception as error:
        return _record(False, _error_name(error), str(error))
    return _record(True)


def _error_name(error):
    return error.kind if isinstance(error, judge.LearnerError) else type(error).__name__


class _quiet:
    """What a check prints (its ✓ lines, gradient tables) is the learner's notebook's business;
    the judge goes by exceptions. Silence this thread's prints only: other threads grade too."""

    def __enter__(self):
        _ThreadStdout.install()
        _ThreadStdout.local.silent = True

    def __exit__(self, *exc_info):
        _ThreadStdout.local.silent = False


class _ThreadStdout:
    """sys.stdout, except in threads that run a check (which write to nowhere)."""

    local = threading.local()
    _installed = False
    _lock = threading.Lock()

    def __init__(self, stream):
        self.stream = stream

    @classmethod
    def install(cls):
        with cls._lock:
            if not isinstance(sys.stdout, cls):
                sys.stdout = cls(sys.stdout)

    def write(self, text):
        if getattr(self.local, "silent", False):
            return len(text)
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


# ---- scoring -------------------------------------------------------------------------------------


def grade(
    submission_path,
    against,
    timeout=DEFAULT_TIMEOUT,
    total_timeout=None,
    isolate=None,
    max_size=DEFAULT_MAX_SIZE,
):
    """Grade one submission against the instructor's notebook (a path, or a Lesson).

    >>> r = grade("alice.ipynb", against="solutions/01_graphs.ipynb", timeout=10)
    >>> r.score, r.max_score, r.exercises["ex1"].passed, r.error
    (3, 5, True, None)

    `timeout` bounds each cell; `total_timeout` (default: a generous bound from the number of code
    cells) bounds the whole run. `isolate`: None runs the learner's worker in the sandbox where
    this machine has one, True insists (sandbox.SandboxUnavailable otherwise), False never does.
    Never raises for a bad submission, never writes to it: a problem with it goes to
    `Result.error`. GraderError when the instructor's notebook is unusable.
    """
    lesson = against if isinstance(against, Lesson) else load_lesson(against)
    result = Result(str(submission_path), max_score=lesson.max_score)
    try:
        submission = read_notebook(submission_path, max_size)  # max_size: bytes
    except SubmissionError as error:
        result.error = str(error)
        return result
    n_code = sum(cell.get("cell_type") == "code" for cell in lesson.notebook["cells"])
    total_timeout = total_timeout or WORKER_STARTUP + n_code * (timeout + 10)
    graded = build_graded_notebook(lesson, submission)
    run = _judge(graded, timeout, total_timeout, isolate)
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
    _name_failed_dependencies(result, graded)
    result.score = sum(e.points for e in result.exercises.values())
    return result


def _name_failed_dependencies(result, graded):
    """Add to a failed exercise's feedback the earlier failed exercises whose functions the
    learner's cells of it use: "ex3 calls your `unbroadcast` from ex2, which failed: fix ex2
    first" - its check may have failed only through them."""
    defined = {}  # name -> the exercise whose solution cells define it (the first one)
    uses = {}  # exercise -> the names its solution cells read from other cells
    for (exercise, role), source in zip(graded.code_cells, graded.sources):
        if role != "solution":
            continue
        try:
            own, read = _names_of(source)
        except SyntaxError:
            continue
        for name in own:
            defined.setdefault(name, exercise)
        uses.setdefault(exercise, set()).update(read)
    for exercise, verdict in result.exercises.items():
        if verdict.passed:
            continue
        failed = {}
        for name in sorted(uses.get(exercise, ())):
            other = defined.get(name)
            if other not in (None, exercise) and not result.exercises[other].passed:
                failed.setdefault(other, []).append(f"`{name}`")
        for other, names in failed.items():
            verdict.feedback += (
                f" — {exercise} calls your {', '.join(names)} from {other}, which failed: "
                f"fix {other} first"
            )


def _names_of(source):
    """(names a cell defines at its top level, names it reads from the notebook)."""
    own = judge.defined_names(source)
    return own, set(judge.free_names(source)) - own


def _explain(exercise, graded, run, solutions, check, timeout):
    """One line saying why an exercise earned nothing: the learner's cell first, then the check."""
    if run.stopped.get(exercise) == "timeout":
        return (
            f"✗ your code ran past the time limit ({timeout:g} s) and did not stop when "
            "interrupted, so it was left out"
        )
    if run.stopped.get(exercise) == "ended":
        return (
            "✗ your code ended the worker process that runs your notebook (os._exit, a crash, "
            "or more memory than allowed), so it was left out"
        )
    if exercise in graded.missing:
        return f"✗ no solution cell for {exercise} in the submission (was it deleted or retyped?)"
    for number in solutions:  # the learner's own cell failing is the root cause: say that
        record = run.cells.get(number)
        if record is None and not run.finished:
            return "✗ your solution cell did not run: grading hit its overall time limit"
        if record and record["ename"] == "KeyboardInterrupt":
            return f"✗ your solution cell ran past the time limit ({timeout:g} s) and was stopped"
        if record and record["ename"] == "NotImplementedError":
            return "✗ not done yet: your cell still raises NotImplementedError"
        if record and record["ename"]:
            return f"✗ your solution cell raised {_exception(record)}"
    if check is None:
        why = "the worker had stopped" if run.finished else "grading hit its overall time limit"
        return f"✗ the check did not run ({why})"
    if check["ename"] == "KeyboardInterrupt":
        return f"✗ the check ran past the time limit ({timeout:g} s): does your code loop?"
    if check["ename"] == "CheckFailed":  # check()'s one-line verdict, with the author's hint
        return "✗ " + _one_line(check["evalue"]).removeprefix("✗").strip()
    if check["ename"]:  # e.g. a bare assert in the hidden tests: its name, never its line
        return f"✗ the check raised {_exception(check)}"
    return "✗ the check did not pass"


def _exception(record):
    """The exception as `ValueError: bad shape`, or just `AssertionError` when it has no message."""
    message = _one_line(record["evalue"])
    return f"{record['ename']}: {message}" if message else record["ename"]


def _one_line(text, limit=500):
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
    isolate=None,
    max_size=DEFAULT_MAX_SIZE,
):
    """Grade many submissions, `jobs` at a time; the results come in the order of `paths`.

    >>> results = grade_many(["alice.ipynb", "bob.ipynb"], "solutions/01_graphs.ipynb", jobs=2)
    >>> [(r.submission, r.score) for r in results]
    [('alice.ipynb', 5), ('bob.ipynb', 3)]

    A bad submission - or a bug of ours while grading one - becomes that submission's `error`;
    the others are graded all the same. `progress(result)` is called as each one is done.
    """
    lesson = against if isinstance(against, Lesson) else load_lesson(against)

    def one(path):
        try:
            result = grade(path, lesson, timeout, total_timeout, isolate, max_size)
        except Exception as error:  # reported for this submission; never stops the class
            result = Result(str(path), max_score=lesson.max_score, error=f"grader bug: {error!r}")
        if progress:
            progress(result)
        return result

    # Threads are enough: each one waits on its own pytest subprocess, which does the work.
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, paths))
