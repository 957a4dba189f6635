"""The `autograd-lab` command: friendly usage errors, the score table, only the named files written."""

import json
import os
import subprocess
import sys

import nbformat
import pytest
from test_grader import lesson_notebook, write_lesson  # the small graded lesson of the grader tests

from autograd_lab.cli import main

slow = pytest.mark.slow  # grades notebooks: a kernel start (1-2 s) each


@pytest.fixture(scope="module")
def lesson(tmp_path_factory):
    return write_lesson(tmp_path_factory.mktemp("cli_lesson"))


def _files(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file())


# ---- usage errors: exit status 2 and a sentence saying what to do --------------------------------


def test_no_command_prints_the_help(capsys):
    assert main([]) == 2
    assert "grade" in capsys.readouterr().err


@pytest.mark.parametrize(
    "arguments, words",
    [
        (["grade", "a.ipynb"], "--against"),
        (["grade", "--against", "s.ipynb"], "SUBMISSION"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "-j", "0"], "at least 1"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--timeout", "0"], "positive"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--colour"], "unrecognized"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--json", "a.ipynb"], "overwritten"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--json", "g", "--report", "g"], "same file"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--json", "g", "--canvas", "g"], "same file"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--gradescope", "a.ipynb"], "overwritten"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--shard", "0/2"], "--shard takes I/N"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--shard", "3/2"], "--shard takes I/N"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--shard", "a/b"], "--shard takes I/N"),
        (["grade", "a.ipynb", "--against", "s.ipynb", "--max-size", "-1"], "positive"),
        (["grade", "a.ipynb", "b.ipynb", "--against", "s.ipynb", "--gradescope", "r"], "ONE"),
        (["merge-grades"], "SHARD_JSON"),
        (["merge-grades", "a.json", "--json", "a.json"], "overwritten"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors_exit_with_2_and_say_why(arguments, words, capsys):
    with pytest.raises(SystemExit) as stop:
        main(arguments)
    assert stop.value.code == 2
    assert words in capsys.readouterr().err


def test_an_unusable_instructor_notebook_is_an_error_before_any_grading(tmp_path, capsys):
    submission = tmp_path / "a.ipynb"
    submission.write_text("{}")
    assert main(["grade", str(submission), "--against", str(tmp_path / "nope.ipynb")]) == 2
    assert "the instructor's notebook" in capsys.readouterr().err
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "plain.ipynb")  # no graded exercises
    assert main(["grade", str(submission), "--against", str(tmp_path / "plain.ipynb")]) == 2
    assert "no check cells" in capsys.readouterr().err


def test_a_folder_without_notebooks_and_a_folder_as_output_are_usage_errors(tmp_path, lesson):
    (tmp_path / "empty").mkdir()
    for arguments in (
        [str(tmp_path / "empty")],
        [str(lesson[1]["half"]), "--report", str(tmp_path)],
    ):
        with pytest.raises(SystemExit) as stop:
            main(["grade", *arguments, "--against", str(lesson[0])])
        assert stop.value.code == 2


# ---- grade ---------------------------------------------------------------------------------------


@slow
def test_grade_prints_the_table_and_writes_only_the_named_files(tmp_path, lesson, capsys):
    solution, paths = lesson
    folder = tmp_path / "class"  # a folder: every notebook in it, but not hidden copies
    (folder / "alice" / ".ipynb_checkpoints").mkdir(parents=True)
    (folder / "alice" / "01.ipynb").write_bytes(paths["solution"].read_bytes())
    (folder / "alice" / ".ipynb_checkpoints" / "01-checkpoint.ipynb").write_text("{")
    (folder / "notes.txt").write_text("not a notebook, not graded")
    before = _files(tmp_path) + _files(paths["half"].parent)
    grades, report = tmp_path / "out" / "grades.json", tmp_path / "report.md"
    code = main(
        ["grade", str(folder), str(paths["half"]), str(paths["broken"]), "--against", str(solution)]
        + ["-j", "2", "--json", str(grades), "--report", str(report)]
    )
    assert code == 0  # grading ran: a low score or a broken file is not a failure of the command
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["submission", "ex1", "ex2", "ex3", "score"]
    assert out[1].split() == [str(folder / "alice" / "01.ipynb"), "1/1", "2/2", "3/3", "6/6"]
    assert out[2].split()[1:] == ["1/1", "0/2", "3/3", "4/6"]
    assert "error:" in out[3] and "invalid JSON" in out[3]
    assert len(out) == 6 and "ex2" in out[5] and "not done yet" in out[5]  # a blank line, then why

    data = json.loads(grades.read_text())
    assert [(s["score"], s["max_score"]) for s in data["submissions"]] == [(6, 6), (4, 6), (0, 6)]
    assert data["submissions"][1]["exercises"]["ex2"]["passed"] is False
    assert data["submissions"][2]["error"]
    text = report.read_text()
    assert "| submission | ex1 (1) | ex2 (2) | ex3 (3) | score |" in text and "**4** / 6" in text
    # only the two files named were written: nothing next to the submissions, nothing else
    assert {*_files(tmp_path), *_files(paths["half"].parent)} == {*before, grades, report}


def test_merge_grades_says_why_a_file_cannot_be_merged(tmp_path, capsys):
    broken, other = tmp_path / "broken.json", tmp_path / "other.json"
    broken.write_text("{")
    other.write_text('{"submissions": []}')
    assert main(["merge-grades", str(broken)]) == 2
    assert "broken.json could not be read as a --json file" in capsys.readouterr().err
    assert main(["merge-grades", str(other)]) == 2
    assert "does not list the lesson's points" in capsys.readouterr().err
    assert main(["merge-grades", str(tmp_path / "absent.json")]) == 2
    assert "absent.json could not be read" in capsys.readouterr().err
    other.write_text('{"points": {"ex1": 1}, "submissions": [{"submission": "a.ipynb"}]}')
    assert main(["merge-grades", str(other)]) == 2
    assert "submission 1 of the --json data is incomplete" in capsys.readouterr().err


def test_python_dash_m_runs_the_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "autograd_lab.cli", "grade", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "--against" in done.stdout


# ---- make-exercises and lab ----------------------------------------------------------------------


def test_make_exercises_writes_and_lists_the_student_notebooks(tmp_path, capsys):
    (tmp_path / "solutions").mkdir()
    nbformat.write(lesson_notebook(), tmp_path / "solutions" / "01_demo.ipynb")
    assert main(["make-exercises", str(tmp_path / "solutions"), str(tmp_path / "exercises")]) == 0
    assert str(tmp_path / "exercises" / "01_demo.ipynb") in capsys.readouterr().out
    student = nbformat.read(tmp_path / "exercises" / "01_demo.ipynb", as_version=4)
    assert "write your solution here" in student.cells[3].source


def test_make_exercises_reports_a_format_error_clearly(tmp_path, capsys):
    nb = lesson_notebook()
    nb.cells[3].source = "### BEGIN SOLUTION\nx = 1"  # never ended
    nbformat.write(nb, tmp_path / "broken.ipynb")
    assert main(["make-exercises", str(tmp_path / "broken.ipynb"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "broken.ipynb" in err and "FORMAT.md" in err
    assert not (tmp_path / "out").exists()


def test_lab_opens_jupyterlab_on_the_notebooks_folder(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path)
    started = []

    def execv(program, command):  # instead of becoming JupyterLab
        started.append(command)

    monkeypatch.setattr(os, "execv", execv)
    main(["lab", "--port", "9999"])
    assert started[0][:4] == [sys.executable, "-m", "jupyterlab", "notebooks"]
    assert "--port" in started[0] and "9999" in started[0]
