"""The grader is fair and hard to fool: issue 4's acceptance list (a)-(e), one test each, and more.

One small lesson (3 exercises, 1 + 2 + 3 points) is written here with nbformat; its student version
comes from the real generator. All submissions are graded ONCE, two at a time, by a module fixture
(each grade starts a worker process: ~1 s), and the tests read the results.
"""

import hashlib
import json
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lab.teach import generate_student_notebook
from autograd_lab.teach.grader import (
    Result,
    build_graded_notebook,
    grade,
    grade_many,
    load_lesson,
    read_notebook,
)

slow = pytest.mark.slow  # grades notebooks: a worker start (about 1 s) each
TIMEOUT = 5  # seconds per cell: short, so the endless loops below cost little
SECRET = "HIDDEN_SENTINEL_4821"  # appears only inside hidden tests: must never reach feedback


def _solution(exercise, source):
    return new_code_cell(
        source, metadata={"autograd_lab": {"exercise": exercise, "role": "solution"}}
    )


def _check(exercise, points, source, printed):
    cell = new_code_cell(
        source, metadata={"autograd_lab": {"exercise": exercise, "role": "check", "points": points}}
    )
    cell.execution_count = 1  # the instructor ran it: these are the expected outputs
    cell.outputs = [new_output("stream", name="stdout", text=printed)]
    return cell


def lesson_notebook():
    """The instructor's notebook: a setup cell, then ex1 (1 point), ex2 (2 points), ex3 (3 points)."""
    return new_notebook(
        cells=[
            new_markdown_cell("# A tiny graded lesson"),
            new_code_cell("import autograd_lab as ag\nfrom autograd_lab.teach import check"),
            new_markdown_cell("**ex1**: write `double(x)`."),
            _solution(
                "ex1",
                "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
            ),
            _check(
                "ex1",
                1,
                'check("ex1", lambda: double(3) == 6, hint="double(3) should be 6")\n'
                "### BEGIN HIDDEN TESTS\n"
                f"assert double(-7) == -14  # {SECRET}: a plain assert, its traceback shows this line\n"
                "### END HIDDEN TESTS",
                "✓ ex1 passed\n",
            ),
            new_markdown_cell("**ex2**: the gradient of x² at x, with autograd."),
            _solution(
                "ex2",
                "def grad_of_square(x):\n    ### BEGIN SOLUTION\n"
                "    a = ag.tensor(float(x), requires_grad=True)\n    (a * a).backward()\n"
                "    return a.grad.item()\n    ### END SOLUTION",
            ),
            _check(
                "ex2",
                2,
                'check("ex2", lambda: grad_of_square(1.0) == 2.0, hint="d(x²)/dx = 2x", '
                'message="at 1")\n'
                "### BEGIN HIDDEN TESTS\n"
                f"{SECRET} = 5.0\n"
                f'check("ex2", lambda: grad_of_square({SECRET}) == 10.0, hint="try other values of x", '
                'message="other values")\n'
                "### END HIDDEN TESTS",
                "✓ ex2 passed (at 1)\n✓ ex2 passed (other values)\n",
            ),
            new_markdown_cell("**ex3**: the sum of 0..9 in `total`."),
            _solution("ex3", "total = sum(range(10))"),  # no markers: the whole cell is the answer
            _check(
                "ex3",
                3,
                'check("ex3", lambda: total == 45, hint="0 + 1 + ... + 9")',
                "✓ ex3 passed\n",
            ),
        ]
    )


def filled(student, answers):
    """The student notebook with the solution cells of `answers` ({exercise: source}) written in."""
    nb = nbformat.from_dict(json.loads(json.dumps(student)))  # a deep copy
    for cell in nb.cells:
        info = cell.metadata.get("autograd_lab", {})
        if info.get("role") == "solution" and info["exercise"] in answers:
            cell.source = answers[info["exercise"]]
    return nb


EX1 = "def double(x):\n    return 2 * x"
EX2 = "def grad_of_square(x):\n    a = ag.tensor(float(x), requires_grad=True)\n    (a * a).backward()\n    return a.grad.item()"
EX3 = "total = 45"
LOOP = "while True:\n    pass"
STUBBORN = (  # ignores the interrupt at the time limit: the worker has to be killed
    "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass"
)


def tampered(student, instructor):
    """ex1 really solved; ex2 and ex3 still stubs, but "passed" by forging everything around them."""
    checks = [
        c for c in instructor.cells if c.metadata.get("autograd_lab", {}).get("role") == "check"
    ]
    expected = {c.metadata["autograd_lab"]["exercise"]: c.outputs for c in checks}
    nb = filled(student, {"ex1": EX1})
    for cell in nb.cells:
        info = cell.metadata.get("autograd_lab", {})
        if info.get("role") == "check":
            text = expected[info["exercise"]][0]["text"]  # exactly the instructor's "✓ ..." lines
            cell.source = f"print({text!r}, end='')"  # a check cell that always passes
            cell.outputs, cell.execution_count = expected[info["exercise"]], 1  # forged outputs
            info["points"] = 100  # and more points
        elif info.get("role") == "solution" and info["exercise"] != "ex1":
            cell.outputs = [new_output("stream", name="stdout", text="✓ passed\n")]
    return nb


def write_lesson(folder):
    """Write the lesson and its submissions under `folder`; return (solution path, {name: path})."""
    (folder / "solutions").mkdir(parents=True)
    (folder / "class").mkdir()
    solution = folder / "solutions" / "01_demo.ipynb"
    nbformat.write(lesson_notebook(), solution)
    instructor = nbformat.read(solution, as_version=4)
    student = generate_student_notebook(instructor)
    notebooks = {
        "solution": instructor,  # (a)
        "untouched": student,  # (b)
        "half": filled(student, {"ex1": EX1, "ex3": EX3}),  # (c)
        "loop": filled(student, {"ex1": EX1, "ex2": LOOP, "ex3": EX3}),  # (d)
        "stubborn": filled(student, {"ex1": EX1, "ex2": STUBBORN, "ex3": EX3}),
        "tampered": tampered(student, instructor),  # (e)
        "cheat": filled(  # passes the visible checks only; ex3 right
            student,
            {
                "ex1": "def double(x):\n    return 6",
                "ex2": "def grad_of_square(x):\n    return 2.0",
                "ex3": EX3,
            },
        ),
    }
    paths = {}
    for name, nb in notebooks.items():
        paths[name] = folder / "class" / f"{name}.ipynb"
        nbformat.write(nb, paths[name])
    paths["broken"] = folder / "class" / "broken.ipynb"
    paths["broken"].write_text('{"cells": [')
    paths["v3"] = folder / "class" / "v3.ipynb"
    paths["v3"].write_text(
        json.dumps({"nbformat": 3, "nbformat_minor": 0, "cells": [], "worksheets": []})
    )
    paths["text"] = folder / "class" / "notes.txt"
    paths["text"].write_text("my answers: 2x, 45\n")
    paths["absent"] = folder / "class" / "absent.ipynb"
    return solution, paths


@pytest.fixture(scope="module")
def lesson(tmp_path_factory):
    return write_lesson(tmp_path_factory.mktemp("lesson"))


@pytest.fixture(scope="module")
def graded(lesson):
    """{name: Result} for every submission, graded with jobs=2; also the digests before grading."""
    solution, paths = lesson
    names = sorted(paths, key=lambda name: name not in ("stubborn", "loop"))  # slowest first
    before = {name: _digest(paths[name]) for name in names}
    start = time.monotonic()
    results = grade_many([paths[n] for n in names], solution, jobs=2, timeout=TIMEOUT)
    seconds = time.monotonic() - start
    return dict(zip(names, results)), before, seconds


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _points(result):
    return {exercise: e.points for exercise, e in result.exercises.items()}


# ---- issue 4's acceptance list -------------------------------------------------------------------


@slow
def test_a_the_solution_notebook_scores_full_marks(graded):
    result = graded[0]["solution"]
    assert (result.score, result.max_score, result.error) == (6, 6, None)
    assert {e: r.feedback for e, r in result.exercises.items()} == dict.fromkeys(
        ["ex1", "ex2", "ex3"], "✓ passed"
    )


@slow
def test_b_the_untouched_exercise_scores_zero(graded):
    result = graded[0]["untouched"]
    assert (result.score, result.max_score, result.error) == (0, 6, None)
    for exercise in result.exercises.values():
        assert not exercise.passed and exercise.max_points > 0
        assert "not done yet" in exercise.feedback


@slow
def test_c_a_half_done_submission_scores_exactly_what_it_did(graded):
    result = graded[0]["half"]
    assert _points(result) == {"ex1": 1, "ex2": 0, "ex3": 3}
    assert result.score == 4


@slow
def test_d_an_endless_loop_costs_its_exercise_only_and_grading_ends(graded):
    results, _, seconds = graded
    for name in ("loop", "stubborn"):  # stubborn: ignores the interrupt, so the kernel is killed
        assert _points(results[name]) == {"ex1": 1, "ex2": 0, "ex3": 3}, name
    assert (
        "ran past the time limit (5 s) and was stopped" in results["loop"].exercises["ex2"].feedback
    )
    assert "did not stop when interrupted" in results["stubborn"].exercises["ex2"].feedback
    # the whole batch, stubborn included (timeout + the judge's grace period + a rerun), took far
    # less than the default overall bound; generous for slow CI machines
    assert seconds < 90


@slow
def test_the_overall_time_limit_stops_grading_and_keeps_what_was_graded(lesson):
    start = time.monotonic()
    result = grade(lesson[1]["loop"], lesson[0], timeout=60, total_timeout=4)
    assert time.monotonic() - start < 4 + 10
    assert result.error is None and result.exercises["ex2"].points == 0
    assert "overall time limit" in result.exercises["ex3"].feedback


@slow
def test_e_a_tampered_submission_gains_nothing(graded):
    result = graded[0]["tampered"]
    assert _points(result) == {"ex1": 1, "ex2": 0, "ex3": 0}  # only the exercise really solved
    assert result.max_score == 6  # the instructor's points, not the forged 100s
    assert all(e.max_points < 100 for e in result.exercises.values())


# ---- malformed submissions -----------------------------------------------------------------------


@slow
@pytest.mark.parametrize(
    "name, words",
    [
        ("broken", "not a notebook: invalid JSON"),
        ("v3", "notebook format 3, not 4"),
        ("text", "is not a notebook (a .ipynb file)"),
        ("absent", "file not found"),
    ],
)
def test_a_malformed_submission_gets_a_clear_error_and_the_others_are_graded(graded, name, words):
    results = graded[0]
    assert words in results[name].error
    assert (results[name].score, results[name].max_score, results[name].exercises) == (0, 6, {})
    assert results["solution"].score == 6  # graded in the same batch, all the same


@slow
def test_grading_never_modifies_a_submission(graded, lesson):
    _, before, _ = graded
    assert {name: _digest(path) for name, path in lesson[1].items()} == before


def test_a_folder_is_an_error_entry_not_a_crash(lesson):
    result = grade(lesson[1]["solution"].parent, lesson[0])
    assert "is a folder" in result.error


# ---- feedback ------------------------------------------------------------------------------------


@slow
def test_feedback_gives_the_hint_but_never_hidden_test_code(graded):
    results = graded[0]
    cheat = results["cheat"]
    assert _points(cheat) == {
        "ex1": 0,
        "ex2": 0,
        "ex3": 3,
    }  # visible checks pass, hidden ones do not
    assert cheat.exercises["ex1"].feedback == "✗ the check raised AssertionError"
    assert cheat.exercises["ex2"].feedback == "✗ ex2 (other values): try other values of x"
    everything = json.dumps([r.to_dict() for r in results.values()], ensure_ascii=False)
    assert SECRET not in everything and "double(-7)" not in everything


@slow
def test_results_are_plain_json(graded):
    data = graded[0]["half"].to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["exercises"]["ex1"] == {
        "points": 1,
        "max_points": 1,
        "passed": True,
        "feedback": "✓ passed",
    }


@slow
def test_grading_two_at_a_time_gives_the_same_results_as_one_at_a_time(graded, lesson):
    names = ["half", "cheat"]
    one_by_one = grade_many([lesson[1][n] for n in names], lesson[0], jobs=1, timeout=TIMEOUT)
    assert [r.to_dict() for r in one_by_one] == [graded[0][n].to_dict() for n in names]


# ---- the graded notebook, without running it -----------------------------------------------------


def test_the_graded_notebook_takes_only_solution_cells_from_the_submission(lesson):
    solution, paths = lesson
    graded = build_graded_notebook(load_lesson(solution), read_notebook(paths["tampered"]))
    instructor = read_notebook(solution)
    for mine, theirs in zip(graded.notebook["cells"], instructor["cells"]):
        role = mine["metadata"].get("autograd_lab", {}).get("role")
        if role == "check":
            assert (mine["source"], mine["outputs"]) == (theirs["source"], theirs["outputs"])
            assert mine["metadata"]["autograd_lab"] == theirs["metadata"]["autograd_lab"]
        elif role == "solution":
            assert mine["outputs"] == []
    roles = [role for _, role in graded.code_cells]
    assert roles == [None, "solution", "check", "solution", "check", "solution", "check"]


def test_a_deleted_solution_cell_becomes_the_stub(lesson):
    solution, paths = lesson
    submission = read_notebook(paths["half"])
    submission["cells"] = [
        c
        for c in submission["cells"]
        if c["metadata"].get("autograd_lab", {}).get("exercise") != "ex3"
    ]
    graded = build_graded_notebook(load_lesson(solution), submission)
    assert graded.missing == {"ex3"}
    assert 'raise NotImplementedError("ex3: write your solution here")' in [
        c["source"] for c in graded.notebook["cells"]
    ]


def test_result_of_an_error_is_zero_points():
    assert Result("x.ipynb", max_score=6, error="file not found").to_dict()["score"] == 0
