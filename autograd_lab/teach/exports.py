"""Grades in the formats other tools read: Gradescope's results.json and a Canvas gradebook CSV.

    >>> write_gradescope("results.json", result, lesson.points, "01_graphs.ipynb")  # one learner
    >>> write_canvas("canvas.csv", results, learners, "01_graphs", 5)              # a class

Each writer follows the format its tool documents, and nothing more:

- **Gradescope** (gradescope-autograders.readthedocs.io, "Autograder Specifications"): the
  autograder writes `/autograder/results/results.json` with a top-level `score` and a list of
  `tests`, each with `name`, `score`, `max_score`, `status`, `output` and `visibility`. One test
  per exercise here; its output is the grader's one-line verdict, which never shows hidden tests.
- **Canvas** (Canvas Instructor Guide, "How do I import grades in the Gradebook?"): a CSV whose
  columns are `Student, ID, SIS User ID, SIS Login ID, Section`, then one column per assignment,
  and, as in Canvas's own export, a "Points Possible" row under the header. Canvas finds
  each row's learner by the ID columns it is given; we know the learner only by the name of their
  folder (see `learner_name`), and put it in `Student` and `SIS Login ID`.

The `--json` file and the markdown report are written by cli.py; shards.py merges `--json` files.
"""

import csv
import json
import os
from pathlib import Path, PurePath

# ---- who a submission belongs to -----------------------------------------------------------------


def learner_name(path, class_folder=None):
    """The learner a submission belongs to: the name of their folder in the class folder, else the
    notebook's file name without `.ipynb`.

    >>> learner_name("class/alice/exercises/01_graphs.ipynb", class_folder="class")
    'alice'
    >>> learner_name("submissions/bob.ipynb")
    'bob'

    A class folder (one folder per learner, as `gh classroom clone` makes) names its learners by
    their folders, however deep the notebook lies inside; a notebook directly in it, or given by
    itself, is named by its file. For notebooks named one by one, see `learner_names`.
    """
    path = PurePath(path)
    if class_folder is not None:
        inside = path.relative_to(class_folder).parts
        if len(inside) > 1:
            return inside[0]
    return path.stem


def learner_names(paths):
    """{str(path): learner} for notebooks named one by one: each learner is named by their folder
    in the deepest folder that holds them all, as if that folder had been given.

    >>> learner_names(["class/alice/exercises/01.ipynb", "class/bob/exercises/01.ipynb"])
    {'class/alice/exercises/01.ipynb': 'alice', 'class/bob/exercises/01.ipynb': 'bob'}
    >>> learner_names(["alice.ipynb", "bob.ipynb"])
    {'alice.ipynb': 'alice', 'bob.ipynb': 'bob'}
    """
    absolute = [Path(os.path.abspath(path)) for path in paths]
    try:
        holder = os.path.commonpath([path.parent for path in absolute]) if paths else None
    except ValueError:  # Windows: notebooks on different drives share no folder
        holder = None
    return {str(path): learner_name(a, holder) for path, a in zip(paths, absolute)}


# ---- Gradescope ----------------------------------------------------------------------------------


def gradescope_results(result, points, lesson_name):
    """Gradescope's results.json for one graded submission, as a dict.

    `points` ({exercise: points}, the lesson's) makes one test per exercise, also when the
    submission could not be graded: then it scores 0, the reason is the top-level `output`, and
    each exercise is a failed test, so the learner still sees what there was to earn.
    """
    if result.error:
        summary = f"Your submission could not be graded: {result.error}"
    else:
        summary = f"{lesson_name}: {result.score} of {result.max_score} points"
    tests = []
    for exercise, max_points in points.items():
        graded = result.exercises.get(exercise)
        tests.append(
            {
                "name": exercise,
                "score": graded.points if graded else 0,
                "max_score": max_points,
                "status": "passed" if graded and graded.passed else "failed",
                "output": graded.feedback if graded else "not graded (see the message above)",
                "output_format": "text",  # our verdicts are plain text: nothing to render
                "visibility": "visible",  # verdicts never show hidden tests: learners may see them
            }
        )
    return {"score": result.score, "output": summary, "output_format": "text", "tests": tests}


def write_gradescope(path, result, points, lesson_name):
    """Write `result` (ONE submission) as Gradescope's results.json at `path`."""
    _write(path, json.dumps(gradescope_results(result, points, lesson_name), indent=2) + "\n")


# ---- Canvas --------------------------------------------------------------------------------------

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


class ExportError(ValueError):
    """The grades cannot be written in the format asked for; the message says what to change."""


def canvas_rows(results, learners, assignment, max_score):
    """The rows of a Canvas gradebook CSV: the header, "Points Possible", then a row per learner.

    `learners` maps each result's submission to its learner's name (see `learner_name`). A
    submission that could not be graded scores 0, as in the `--json` file.
    """
    rows = [CANVAS_COLUMNS + [assignment], ["Points Possible", "", "", "", "", max_score]]
    for result in results:
        learner = learners[result.submission]
        # ID and SIS User ID are Canvas's own numbers, which a folder name cannot know: left empty
        rows.append([learner, "", "", learner, "", result.score])
    return rows


def write_canvas(path, results, learners, assignment, max_score):
    """Write a Canvas gradebook CSV for `results` at `path` (Canvas: Grades > Import); `max_score`
    is the lesson's total, for the "Points Possible" row."""
    shared = shared_names(learners[r.submission] for r in results)
    if shared:
        raise ExportError(
            f"several submissions belong to {', '.join(shared)}: Canvas would keep only one "
            "of them; grade one notebook per learner, e.g. name it: class/*/01_graphs.ipynb"
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as file:  # newline="": csv ends the rows
        csv.writer(file).writerows(canvas_rows(results, learners, assignment, max_score))


def shared_names(names):
    """The learner names that occur more than once, in order: a CSV row each would clash."""
    seen, repeated = set(), []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    return repeated


def _write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
