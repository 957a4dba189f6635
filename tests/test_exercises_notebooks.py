"""CI checks of the graded lessons: exercises/ is exactly what solutions/ generates, every check
fails on the unfilled student version (the inverted check nbval cannot make), and every check
passes on the instructor's notebook.

The same checks run end to end on a small sample lesson in a temporary folder, so the pipeline is
tested before (and besides) the real lessons.
"""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograd_lab.teach import make_exercises
from autograd_lab.teach.checks import NOT_DONE

nbclient = pytest.importorskip("nbclient", reason="nbclient (the test extra) is not installed")

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS, EXERCISES = ROOT / "solutions", ROOT / "exercises"
FIX = (
    "Regenerate them with `autograd-lab make-exercises solutions/ exercises/` "
    "(or `python -m autograd_lab.teach.exercises solutions/ exercises/`) and commit the result"
)
CELL_TIMEOUT = 120  # seconds; a lesson cell that needs longer is a bug in the lesson


def notebooks(folder):
    """The notebooks of a folder as test parameters, or one skipped parameter when there are none."""
    found = sorted(folder.glob("*.ipynb"))
    if not found:
        return [
            pytest.param(None, marks=pytest.mark.skip(reason=f"no notebooks in {folder.name}/ yet"))
        ]
    return [pytest.param(path, id=path.name) for path in found]


def run_notebook(path):
    """Execute a notebook top to bottom on a fresh kernel in its folder, errors and all."""
    nb = nbformat.read(path, as_version=4)
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=kernel,
        allow_errors=True,  # keep going: every cell's outcome is inspected afterwards
        resources={"metadata": {"path": str(path.parent)}},
    )
    return client.execute()


def role(cell):
    return cell.metadata.get("autograd_lab", {}).get("role")


def text_of(cell):
    """Everything a cell showed: printed text, results, and error lines."""
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
        parts.extend(output.get("traceback", []))
    return "\n".join(parts)


def errors(cell):
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


def describe(number, cell):
    first = next(iter(errors(cell)), None)
    error = f"{first.ename}: {first.evalue}" if first else "no error"
    return f"cell {number} ({role(cell) or 'lesson'} cell, {error})"


def assert_unfilled_checks_fail(path):
    """On a student notebook: every check cell fails; every lesson (non-graded) cell succeeds."""
    nb = run_notebook(path)
    passing_checks, broken_cells = [], []
    for number, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        if role(cell) == "check" and not (errors(cell) or "✗" in text_of(cell)):
            passing_checks.append(f"cell {number} ({cell.metadata['autograd_lab']['exercise']})")
        if role(cell) is None and errors(cell):
            broken_cells.append(describe(number, cell))
    assert not passing_checks, (
        f"{path.name}: these check cells PASS on the unfilled exercise, so they would give points "
        f"for nothing: {', '.join(passing_checks)}. Make each check call the learner's code."
    )
    assert not broken_cells, (
        f"{path.name}: lesson cells fail in the student version: {'; '.join(broken_cells)}. "
        "Cells outside exercises must not need the answers (nbval --nbval-lax runs them)."
    )


def assert_solution_checks_pass(path):
    """On an instructor notebook: every check cell passes (✓ and no error), when run and as saved."""
    saved = nbformat.read(path, as_version=4)
    ran = run_notebook(path)
    failing = []
    for number, (before, after) in enumerate(zip(saved.cells, ran.cells), start=1):
        if role(after) != "check":
            continue
        for label, cell in (("when run", after), ("in the saved outputs", before)):
            if errors(cell) or "✓" not in text_of(cell) or "✗" in text_of(cell):
                failing.append(f"{describe(number, cell)} {label}")
    assert not failing, f"{path.name}: check cells fail on the solution: {'; '.join(failing)}"


# ---- the real lessons ---------------------------------------------------------------------------


def test_exercises_are_generated_from_the_solutions(tmp_path):
    solutions = sorted(SOLUTIONS.glob("*.ipynb"))
    if not solutions:
        pytest.skip("no notebooks in solutions/ yet")
    fresh = make_exercises(SOLUTIONS, tmp_path)
    assert len(fresh) == len(solutions) >= 1
    committed = {path.name: path for path in EXERCISES.glob("*.ipynb")}
    missing = [p.name for p in fresh if p.name not in committed]
    differ = [
        p.name
        for p in fresh
        if p.name in committed and p.read_bytes() != committed[p.name].read_bytes()
    ]
    stale = sorted(set(committed) - {p.name for p in fresh})
    problems = [
        f"{label}: {', '.join(names)}"
        for label, names in [
            ("missing from exercises/", missing),
            ("out of date in exercises/", differ),
            ("in exercises/ without a solution (delete them)", stale),
        ]
        if names
    ]
    assert not problems, f"exercises/ does not match solutions/ — {'; '.join(problems)}. {FIX}."


@pytest.mark.slow
@pytest.mark.parametrize("path", notebooks(EXERCISES))
def test_every_check_fails_on_the_unfilled_exercise(path):
    assert_unfilled_checks_fail(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", notebooks(SOLUTIONS))
def test_every_check_passes_on_the_solution(path):
    assert_solution_checks_pass(path)


# ---- the same pipeline on a sample lesson -------------------------------------------------------

SAMPLE = [
    new_markdown_cell("# 99 · Sample lesson"),
    new_code_cell("import numpy as np\nfrom autograd_lab.teach import check, check_gradients"),
    new_code_cell(
        "def tanh_backward(x):\n    ### BEGIN SOLUTION\n    return 1 - np.tanh(x) ** 2\n    ### END SOLUTION",
        metadata={"autograd_lab": {"exercise": "ex1", "role": "solution"}},
    ),
    new_code_cell(
        "check_gradients('ex1', np.tanh, [np.array([0.5, -1.0])], tanh_backward)\n"
        "### BEGIN HIDDEN TESTS\nassert tanh_backward(0.0) == 1.0\n### END HIDDEN TESTS",
        metadata={"autograd_lab": {"exercise": "ex1", "role": "check", "points": 2}},
    ),
    new_markdown_cell("Lesson cells in between must not need the answers:"),
    new_code_cell("print(np.tanh(0.0))"),
    new_code_cell(
        "b_grad = 15.0",  # no markers: the whole cell is the answer
        metadata={"autograd_lab": {"exercise": "ex2", "role": "solution"}},
    ),
    new_code_cell(
        "check('ex2', lambda: b_grad == 15, hint='b reaches e along two paths')",
        metadata={"autograd_lab": {"exercise": "ex2", "role": "check", "points": 1}},
    ),
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """solutions/99_sample.ipynb run and saved with its outputs, and its generated exercise."""
    root = tmp_path_factory.mktemp("lessons")
    (root / "solutions").mkdir()
    path = root / "solutions" / "99_sample.ipynb"
    nb = new_notebook(cells=SAMPLE)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)
    nbformat.write(run_notebook(path), path)  # as the instructor saves it
    make_exercises(root / "solutions", root / "exercises")
    return root


@pytest.mark.slow
def test_the_sample_solution_passes_and_its_exercise_fails(sample):
    assert_solution_checks_pass(sample / "solutions" / "99_sample.ipynb")
    assert_unfilled_checks_fail(sample / "exercises" / "99_sample.ipynb")
    ran = run_notebook(sample / "exercises" / "99_sample.ipynb")
    assert errors(ran.cells[3])[0].traceback == [f"✗ ex1: {NOT_DONE}"]  # one line, no frames
    # b_grad was never defined because the stub raised: that too reads "not done yet"
    assert errors(ran.cells[7])[0].evalue == f"✗ ex2: {NOT_DONE}"


@pytest.mark.slow
def test_the_inverted_check_catches_a_check_that_always_passes(sample, tmp_path):
    nb = nbformat.read(sample / "exercises" / "99_sample.ipynb", as_version=4)
    nb.cells[7].source = "check('ex2', True)"  # gives the points whatever the learner wrote
    nbformat.write(nb, tmp_path / "99_sample.ipynb")
    with pytest.raises(AssertionError, match=r"PASS on the unfilled exercise.*cell 8 \(ex2\)"):
        assert_unfilled_checks_fail(tmp_path / "99_sample.ipynb")


@pytest.mark.slow
def test_nbval_accepts_both_versions_of_the_sample(sample):
    """The solution under strict --nbval, the exercise under --nbval-lax: as dev.py runs them."""
    for mode, folder in [("--nbval", "solutions"), ("--nbval-lax", "exercises")]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                mode,
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",
                "-q",
                folder,
            ],
            cwd=sample,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{mode} {folder}:\n{done.stdout}\n{done.stderr}"
        assert "6 passed" in done.stdout  # one test per cell: nothing was skipped
