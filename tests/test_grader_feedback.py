"""Feedback a learner can act on (issue 15, item 4), on the case that started it: a plausible
wrong `unbroadcast` in lesson 04 that passes every visible check.

It handles stretched dims only among the first two (the examples are matrices), so the hidden
random shape pairs of ex2 fail, and ex3 - whose add_backward/mul_backward call it - fails only
through it. The report must show a failing shape pair, and name the exercise to fix first.
"""

import json
from pathlib import Path

import pytest

from autograd_lab.teach.grader import grade

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "solutions" / "04_tensors_and_broadcasting.ipynb"
ALMOST = '''def unbroadcast(grad, shape):
    """Sum grad over the dims that broadcasting stretched, so that it gets shape `shape`."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for i in range(min(2, len(shape))):  # rows and columns, as in the examples
        if shape[i] == 1 and grad.shape[i] != 1:
            grad = grad.sum(axis=i, keepdims=True)
    return grad
'''


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """A learner who solved every exercise of lesson 04 but wrote ex2 as ALMOST."""
    solved = json.loads(LESSON.read_text(encoding="utf-8"))
    for cell in solved["cells"]:
        if cell["metadata"].get("autograd_lab") == {"exercise": "ex2", "role": "solution"}:
            cell["source"] = ALMOST
    path = tmp_path_factory.mktemp("learner") / "04.ipynb"
    path.write_text(json.dumps(solved), encoding="utf-8")
    return grade(path, against=LESSON, timeout=60)


@pytest.mark.slow
def test_the_almost_right_unbroadcast_loses_ex2_and_ex3_only(result):
    points = {exercise: verdict.points for exercise, verdict in result.exercises.items()}
    assert points == {"ex1": 2, "ex2": 0, "ex3": 0, "ex4": 2}


@pytest.mark.slow
def test_the_report_shows_the_shape_pair_that_failed(result):
    feedback = result.exercises["ex2"].feedback
    assert feedback.startswith("✗ ex2 (random shape pairs):")
    assert "unbroadcast(grad, (1, 3, 1, 5)) with grad of shape (2, 3, 4, 5)" in feedback
    assert "gave (1, 3, 4, 5), expected (1, 3, 1, 5)" in feedback


@pytest.mark.slow
def test_the_report_names_the_exercise_to_fix_first(result):
    feedback = result.exercises["ex3"].feedback
    assert "ex3 calls your `unbroadcast` from ex2, which failed: fix ex2 first" in feedback
    assert "fix" not in result.exercises["ex2"].feedback  # ex2 depends on nothing that failed
