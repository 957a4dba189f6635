"""docs/grading.md's CI recipe, run as CI would run it (issue 15, item 6).

The two workflows in docs/ci/ are read for what makes them safe - a learner-editable workflow
with no secrets and read-only permissions, the grade of record with the sandbox required - and
the scripts they call are run on a small class of lesson 01: shards, merge, Canvas CSV, and the
per-push feedback against the student version.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograd_lab.teach import sandbox

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / "docs" / "ci"
LESSON = "01_computational_graphs.ipynb"


def _workflow(name):
    return yaml.safe_load((CI / name).read_text(encoding="utf-8"))


def _steps(workflow):
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def test_the_feedback_workflow_holds_nothing_worth_stealing():
    text = (CI / "feedback.yml").read_text(encoding="utf-8")
    workflow = _workflow("feedback.yml")
    assert workflow["permissions"] == {"contents": "read"}
    assert "secrets." not in text and "GH_TOKEN" not in text
    checkouts = [s for s in _steps(workflow) if s.get("uses", "").startswith("actions/checkout")]
    assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)
    assert any("ci/feedback.sh" in s.get("run", "") for s in _steps(workflow))


def test_the_grade_of_record_requires_the_sandbox_and_keeps_its_token_to_one_step():
    workflow = _workflow("grade-class.yml")
    assert workflow["permissions"] == {"contents": "read"}
    steps = _steps(workflow)
    with_secrets = [s for s in steps if "secrets." in json.dumps(s)]
    assert [s["name"] for s in with_secrets] == ["Fetch the submissions"]
    checkouts = [s for s in steps if s.get("uses", "").startswith("actions/checkout")]
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    assert "--sandbox required" in (CI / "grade_class.sh").read_text(encoding="utf-8")
    assert any("bubblewrap" in s.get("run", "") for s in steps)
    assert workflow["jobs"]["grade"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]


def _run(script, *args, cwd):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(
        ["bash", str(CI / script), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def a_class(tmp_path_factory):
    """A class of three learners for lesson 01: one solved it, one left it, one half-did it."""
    folder = tmp_path_factory.mktemp("class")
    (folder / "solutions").mkdir()
    shutil.copy(ROOT / "solutions" / LESSON, folder / "solutions" / LESSON)
    student = json.loads((ROOT / "exercises" / LESSON).read_text(encoding="utf-8"))
    solved = json.loads((ROOT / "solutions" / LESSON).read_text(encoding="utf-8"))
    half = json.loads(json.dumps(student))
    for cell, answer in zip(half["cells"], solved["cells"]):
        if cell["metadata"].get("autograd_lab", {}).get("exercise") == "ex1":
            cell["source"] = answer["source"]
    for learner, notebook in [("ada", solved), ("bob", student), ("cy", half)]:
        (folder / "submissions" / learner).mkdir(parents=True)
        path = folder / "submissions" / learner / LESSON
        path.write_text(json.dumps(notebook), encoding="utf-8")
    return folder


@pytest.mark.slow
@pytest.mark.skipif(
    not sandbox.isolation().isolated, reason=f"no sandbox here: {sandbox.isolation().reason}"
)
def test_the_grade_of_record_in_shards_then_merged(a_class):
    for shard in ("1/2", "2/2"):
        _run("grade_class.sh", f"solutions/{LESSON}", "submissions/", shard, "out/", cwd=a_class)
    _run("merge.sh", "out/", LESSON, cwd=a_class)
    grades = json.loads((a_class / "out" / "grades.json").read_text(encoding="utf-8"))
    scores = {s["learner"]: s["score"] for s in grades["submissions"]}
    assert scores == {"ada": 10, "bob": 0, "cy": 2}
    assert grades["isolation"].startswith("isolated with bubblewrap")
    with open(a_class / "out" / "canvas.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows[0][-1].startswith("01_computational_graphs")
    assert sorted(row[0] for row in rows[2:]) == ["ada", "bob", "cy"]
    assert "Learners' code: isolated with bubblewrap" in (a_class / "out" / "grades.md").read_text(
        encoding="utf-8"
    )


@pytest.mark.slow
def test_feedback_on_a_push_runs_the_visible_checks_only(a_class, tmp_path):
    checks = tmp_path / "checks" / LESSON  # the student version: no hidden tests to leak
    checks.parent.mkdir()
    shutil.copy(ROOT / "exercises" / LESSON, checks)
    notebook = a_class / "submissions" / "ada" / LESSON
    report = tmp_path / "feedback.md"
    done = _run("feedback.sh", notebook, checks, report, cwd=tmp_path)
    assert "10/10" in done.stdout.replace(" ", "") or "10 / 10" in report.read_text()
    assert "BEGIN HIDDEN TESTS" not in report.read_text(encoding="utf-8")
