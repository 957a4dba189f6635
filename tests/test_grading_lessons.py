"""Every graded lesson grades right under the judge model: the instructor's own notebook earns
full marks, the untouched student version nothing (its stubs read "not done yet"), in the sandbox
where this machine has one. This is what catches a check cell that only works inside the
learner's notebook (a name it rebinds, a type() it asks, an object it cannot hand over)."""

from pathlib import Path

import pytest

from autograd_lab.teach.grader import grade, load_lesson

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(path.name for path in (ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_the_solution_earns_full_marks_and_the_exercise_nothing(lesson):
    against = load_lesson(ROOT / "solutions" / lesson)
    solved = grade(ROOT / "solutions" / lesson, against, timeout=120)
    assert (solved.error, solved.score) == (None, against.max_score), {
        exercise: verdict.feedback for exercise, verdict in solved.exercises.items()
    }
    untouched = grade(ROOT / "exercises" / lesson, against, timeout=120)
    assert (untouched.error, untouched.score) == (None, 0)
    for verdict in untouched.exercises.values():
        assert "not done yet" in verdict.feedback or "NotImplementedError" in verdict.feedback
