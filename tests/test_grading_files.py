"""Submission files, exports and shards (issue 15, items 3 and 5): what the grader reads, and
what it writes for Gradescope, Canvas and a class graded in parallel jobs.

Reading is refused before any kernel starts, so most tests here grade only broken files and run
in milliseconds; the two marked slow grade one real notebook each (a kernel start, ~2 s).
"""

import csv
import json
import os
import socket
import threading

import nbformat
import pytest
from test_grader import write_lesson  # the small graded lesson (ex1 1 point, ex2 2, ex3 3)

from autograd_lab.cli import main
from autograd_lab.teach import grader, submission
from autograd_lab.teach.exports import (
    CANVAS_COLUMNS,
    gradescope_results,
    learner_name,
    learner_names,
    write_canvas,
)
from autograd_lab.teach.grader import ExerciseResult, Result, grade_many
from autograd_lab.teach.shards import MergeError, merge_grades, parse_shard, shard
from autograd_lab.teach.submission import SubmissionError, find_notebooks, read_notebook

slow = pytest.mark.slow  # grades a notebook: a kernel start (1-2 s)
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes (Windows)")
needs_links = pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges there")


@pytest.fixture(scope="module")
def lesson(tmp_path_factory):
    """(the instructor's notebook, {name: submission path}) from the grader tests."""
    return write_lesson(tmp_path_factory.mktemp("files_lesson"))


def notebook_text(cells=None, **top):
    """A minimal nbformat-4 notebook as JSON text; `cells` as given (they may be malformed)."""
    cell = {"cell_type": "code", "id": "c1", "source": "x = 1", "metadata": {}, "outputs": []}
    cells = [dict(cell, execution_count=None)] if cells is None else cells
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells, **top})


def refusal(path, **options):
    """The SubmissionError message for `path` (the test fails if it is read as a notebook)."""
    with pytest.raises(SubmissionError) as refused:
        read_notebook(path, **options)
    return str(refused.value)


# ---- what is not a regular file is refused, by lstat, before it is opened ------------------------


@needs_links
def test_a_symlink_is_refused_even_to_a_real_notebook(tmp_path, lesson):
    link = tmp_path / "mine.ipynb"
    link.symlink_to(lesson[0])  # the instructor's notebook: full marks, were it followed
    assert "is a symbolic link; submit the notebook file itself" in refusal(link)
    relative = tmp_path / "relative.ipynb"  # as committed in a repository
    relative.symlink_to(os.path.relpath(lesson[0], tmp_path))
    assert "symbolic link" in refusal(relative)


@needs_links
def test_a_notebook_behind_a_linked_folder_is_refused(tmp_path, lesson, monkeypatch):
    """A learner's repository may commit `exercises -> ../instructor/solutions`: the notebook
    named `class/alice/exercises/01_demo.ipynb` is then the instructor's, a regular file."""
    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "class" / "alice" / "exercises").symlink_to(lesson[0].parent)
    monkeypatch.chdir(tmp_path)  # the grader's working folder, as in CI
    words = "lies in class/alice/exercises, which is a symbolic link that grading does not follow"
    assert words in refusal("class/alice/exercises/01_demo.ipynb")
    assert words in refusal(tmp_path / "class/alice/exercises/01_demo.ipynb")  # absolute, too


@needs_links
def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path):
    link = tmp_path / "zero.ipynb"
    link.symlink_to("/dev/zero")  # endless bytes, were it read
    assert "symbolic link" in refusal(link)


@needs_fifo
@pytest.mark.timeout(20)
def test_a_fifo_is_refused_and_does_not_hang(tmp_path):
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)  # no writer: opening it for reading would block forever
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(refusal(fifo)), daemon=True)
    reader.start()
    reader.join(timeout=5)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert "is a named pipe (FIFO), not a notebook file" in outcome[0]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this platform")
def test_a_device_is_refused():
    assert "is a character device, not a notebook file" in refusal("/dev/zero")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets on this platform")
def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.ipynb"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert "is a socket, not a notebook file" in refusal(path)


def test_a_folder_and_a_missing_file_are_refused(tmp_path):
    (tmp_path / "folder.ipynb").mkdir()
    assert "is a folder, not a notebook" in refusal(tmp_path / "folder.ipynb")
    assert "file not found" in refusal(tmp_path / "absent.ipynb")


def test_a_file_over_the_size_cap_is_refused_without_being_read(tmp_path):
    big = tmp_path / "big.ipynb"
    with open(big, "wb") as file:
        file.truncate(25 * 2**20)  # 25 MB (sparse: no time spent writing it)
    assert "larger than the limit of 20 MiB" in refusal(big)
    small = tmp_path / "small.ipynb"
    small.write_text(notebook_text())
    assert read_notebook(small)["nbformat"] == 4
    assert "larger than the limit" in refusal(small, max_size=10)  # a smaller cap, in bytes


@needs_fifo
@pytest.mark.timeout(20)
def test_a_file_swapped_after_the_lstat_check_is_still_refused(tmp_path, monkeypatch):
    """Between lstat and open, a learner's process could replace a notebook by a FIFO or a link:
    the open neither follows nor blocks, and fstat on the opened file sees what it really is."""
    honest = tmp_path / "honest.ipynb"
    honest.write_text(notebook_text())
    fifo, link = tmp_path / "pipe.ipynb", tmp_path / "link.ipynb"
    os.mkfifo(fifo)
    link.symlink_to(honest)
    real_lstat = os.lstat
    # what lstat saw a moment before the swap: the honest regular file
    monkeypatch.setattr(
        submission.os, "lstat", lambda p: real_lstat(honest) if p in (fifo, link) else real_lstat(p)
    )
    assert "named pipe (FIFO)" in refusal(fifo)
    assert "is a symbolic link; submit the notebook file itself" in refusal(link)


# ---- what is not a notebook is refused, saying what and where -----------------------------------


@pytest.mark.parametrize(
    "content, words",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # deeper than the parser can go
        (notebook_text(metadata={"x": json.loads("[" * 150 + "]" * 150)}), "more than 100 levels"),
        (
            notebook_text([{"cell_type": "code", "source": "x"}, ["not", "a", "cell"]]),
            "cell 2 is a list, not a cell",
        ),
        (notebook_text(["just text"]), "cell 1 is a string, not a cell"),
        (
            notebook_text([{"cell_type": "code", "source": 42}]),
            "cell 1: its source is a number, not text",
        ),
        (
            notebook_text([{"cell_type": "code", "source": ["a\n", None]}]),
            "cell 1: its source is a list holding null",
        ),
        (
            notebook_text([{"cell_type": "code", "source": "", "metadata": "x"}]),
            "cell 1: its metadata is a string",
        ),
        (notebook_text([{"cell_type": 3, "source": ""}]), "cell 1: its cell_type is a number"),
        (notebook_text(metadata=[1]), "the notebook's metadata is not a JSON object"),
        (notebook_text(nbformat=3), "notebook format 3, not 4"),
        ('{"cells": [', "not a notebook: invalid JSON"),
    ],
)
def test_a_malformed_notebook_is_a_submission_error_naming_what_and_where(tmp_path, content, words):
    path = tmp_path / "bad.ipynb"
    path.write_text(content, encoding="utf-8")
    assert words in refusal(path)


def test_binary_bytes_are_refused(tmp_path):
    png = tmp_path / "picture.ipynb"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    assert "binary data (NUL bytes)" in refusal(png)
    latin = tmp_path / "latin.ipynb"
    latin.write_bytes(notebook_text().replace("x = 1", "café").encode("latin-1"))  # é: 1 byte
    assert "is not UTF-8 text" in refusal(latin)


def test_windows_line_endings_are_read_as_jupyter_reads_them(tmp_path):
    text = notebook_text().replace("\n", "\r\n")
    assert nbformat.reads(text, as_version=4).cells  # Jupyter opens it...
    path = tmp_path / "crlf.ipynb"
    path.write_bytes(text.encode("utf-8"))
    assert read_notebook(path)["cells"][0]["source"] == "x = 1"  # ...and so do we


def test_a_byte_order_mark_is_refused_as_jupyter_refuses_it(tmp_path):
    text = "\ufeff" + notebook_text()
    with pytest.raises(nbformat.reader.NotJSONError):  # what JupyterLab's file reader calls
        nbformat.reads(text, as_version=4)
    path = tmp_path / "bom.ipynb"
    path.write_bytes(text.encode("utf-8"))
    assert "byte-order mark (BOM)" in refusal(path)


def test_the_grader_keeps_its_old_names_for_reading(tmp_path):
    assert grader.SubmissionError is SubmissionError and grader.read_notebook is read_notebook
    path = tmp_path / "ok.ipynb"
    path.write_text(notebook_text())
    assert grader.read_notebook(path)["nbformat"] == 4


@needs_fifo
@pytest.mark.timeout(60)
def test_every_refusal_is_an_error_entry_and_never_a_grader_bug(tmp_path, lesson):
    bad = {
        "deep.ipynb": "[" * 100_000 + "]" * 100_000,
        "cells.ipynb": notebook_text([1, 2]),
        "source.ipynb": notebook_text([{"cell_type": "code", "source": [1]}]),
        "bom.ipynb": "\ufeff" + notebook_text(),
    }
    for name, text in bad.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "link.ipynb").symlink_to(lesson[0])
    paths = sorted(tmp_path.iterdir())
    results = grade_many(paths, lesson[0], jobs=2)
    assert [r.submission for r in results] == [str(p) for p in paths]
    for result in results:
        assert result.error and not result.error.startswith("grader bug"), result.error
        assert (result.score, result.max_score) == (0, 6)


# ---- folder mode: every notebook entry is graded or reported, nothing followed -------------------


@needs_fifo
def test_folder_mode_reports_links_and_fifos_and_skips_hidden_folders(tmp_path, lesson):
    solution, _ = lesson
    folder = tmp_path / "class"
    for learner in ("alice", "bob", "carol", "dave", ".ipynb_checkpoints"):
        (folder / learner).mkdir(parents=True)
    (folder / "alice" / "01.ipynb").symlink_to(solution)
    os.mkfifo(folder / "bob" / "01.ipynb")
    (folder / "carol" / "01.ipynb").symlink_to("/dev/zero")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "01.ipynb").write_text(notebook_text())
    (folder / "dave" / "work").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (folder / ".ipynb_checkpoints" / "01-checkpoint.ipynb").write_text("{")
    (folder / "notes.txt").write_text("not a notebook, not graded")

    grades = tmp_path / "grades.json"
    assert main(["grade", str(folder), "--against", str(solution), "--json", str(grades)]) == 0
    errors = {
        os.path.relpath(s["submission"], folder): s["error"]
        for s in json.loads(grades.read_text())["submissions"]
    }
    assert sorted(errors) == [
        "alice/01.ipynb",
        "bob/01.ipynb",
        "carol/01.ipynb",  # a link to /dev/zero
        "dave/work",  # a link to a folder: reported; the notebook behind it is never read
    ]
    assert "is a symbolic link; submit the notebook file itself" in errors["alice/01.ipynb"]
    assert "named pipe (FIFO)" in errors["bob/01.ipynb"]
    assert "symbolic link" in errors["carol/01.ipynb"]
    assert "symbolic link to a folder" in errors["dave/work"]


def test_find_notebooks_lists_notebook_entries_of_every_kind_sorted(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.ipynb").write_text("{}")
    (tmp_path / "a.ipynb").mkdir()  # a folder named like a notebook is searched, not listed
    (tmp_path / "a.ipynb" / "y.ipynb").write_text("{}")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "z.ipynb").write_text("{}")
    found = [p.relative_to(tmp_path).as_posix() for p in find_notebooks(tmp_path)]
    assert found == ["a.ipynb/y.ipynb", "b/x.ipynb"]


# ---- learners, Gradescope, Canvas ----------------------------------------------------------------


def test_a_learner_is_named_by_their_folder_in_the_class_else_by_the_file():
    assert learner_name("class/alice/exercises/01_graphs.ipynb", class_folder="class") == "alice"
    assert learner_name("class/bob/01_graphs.ipynb", class_folder="class") == "bob"
    assert learner_name("class/carol.ipynb", class_folder="class") == "carol"
    assert learner_name("submissions/dave.ipynb") == "dave"


def test_notebooks_named_one_by_one_are_named_by_their_folder_in_the_common_one(tmp_path):
    class_paths = [f"{tmp_path}/class/{who}/exercises/01_graphs.ipynb" for who in ("ann", "ben")]
    assert list(learner_names(class_paths).values()) == ["ann", "ben"]  # from class/*/exercises/
    assert learner_names(["x/ann.ipynb", "x/ben.ipynb"]) == {
        "x/ann.ipynb": "ann",
        "x/ben.ipynb": "ben",
    }
    assert learner_names(["only/one/01_graphs.ipynb"]) == {"only/one/01_graphs.ipynb": "01_graphs"}


def test_grade_names_learners_in_the_json_and_the_canvas_csv(tmp_path, lesson):
    notebooks = [tmp_path / "class" / who / "exercises" / "01.ipynb" for who in ("ann", "ben")]
    for notebook in notebooks:
        notebook.parent.mkdir(parents=True)
        notebook.write_text("{")  # not gradable: no kernel needed, a 0 each
    grades, canvas = tmp_path / "grades.json", tmp_path / "canvas.csv"
    arguments = [*map(str, notebooks), "--against", str(lesson[0]), "--json", str(grades)]
    assert main(["grade", *arguments, "--canvas", str(canvas), "--assignment", "Lesson 1"]) == 0
    assert [s["learner"] for s in json.loads(grades.read_text())["submissions"]] == ["ann", "ben"]
    with open(canvas, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(row["Student"], row["SIS Login ID"], row["Lesson 1"]) for row in rows] == [
        ("Points Possible", "", "6"),
        ("ann", "ann", "0"),
        ("ben", "ben", "0"),
    ]


def _result(name, points, error=None):
    """A Result as grading gives it: {exercise: (earned, max)}."""
    exercises = {
        e: ExerciseResult(got, top, got == top, "✓ passed" if got == top else f"✗ {e}: try again")
        for e, (got, top) in points.items()
    }
    if error:
        exercises = {}
    return Result(
        name,
        score=sum(e.points for e in exercises.values()),
        max_score=sum(top for _, top in points.values()),
        exercises=exercises,
        error=error,
    )


POINTS = {"ex1": 1, "ex2": 2, "ex3": 3}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
TOP_LEVEL = {"score", "execution_time", "output", "output_format", "test_output_format"}
TOP_LEVEL |= {"test_name_format", "visibility", "stdout_visibility", "extra_data", "tests"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output"}
TEST_FIELDS |= {"output_format", "tags", "visibility", "extra_data"}


def assert_gradescope_format(data):
    """The fields and values of Gradescope's "Autograder Specifications" (results.json)."""
    assert set(data) <= TOP_LEVEL and data.get("output_format", "text") in FORMATS
    assert isinstance(data["score"], (int, float)) and isinstance(data["output"], str)
    for test in data["tests"]:
        assert set(test) <= TEST_FIELDS
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert 0 <= test["score"] <= test["max_score"]
        assert test["status"] in ("passed", "failed") and test["visibility"] in VISIBILITIES
        assert test["output_format"] in FORMATS


def test_gradescope_results_follow_the_documented_format():
    data = gradescope_results(
        _result("a.ipynb", {"ex1": (1, 1), "ex2": (0, 2), "ex3": (3, 3)}), POINTS, "01.ipynb"
    )
    assert_gradescope_format(data)
    assert json.loads(json.dumps(data)) == data
    assert data["score"] == 4 == sum(test["score"] for test in data["tests"])
    tests = {test["name"]: test for test in data["tests"]}
    assert tests["ex2"]["status"] == "failed" and tests["ex2"]["output"] == "✗ ex2: try again"
    assert (tests["ex3"]["score"], tests["ex3"]["max_score"], tests["ex3"]["status"]) == (
        3,
        3,
        "passed",
    )


def test_a_submission_error_is_a_gradescope_result_with_score_0_and_the_reason():
    data = gradescope_results(
        _result("a.ipynb", {"ex1": (0, 1)}, error="a.ipynb: file not found"), POINTS, "01.ipynb"
    )
    assert_gradescope_format(data)
    assert data["score"] == 0 and "file not found" in data["output"]
    assert [(t["name"], t["score"], t["max_score"]) for t in data["tests"]] == [
        ("ex1", 0, 1),
        ("ex2", 0, 2),
        ("ex3", 0, 3),
    ]


def test_the_canvas_csv_reads_back_with_the_documented_columns(tmp_path):
    results = [
        _result("class/alice/01.ipynb", {"ex1": (1, 1), "ex2": (2, 2), "ex3": (3, 3)}),
        _result("class/bob/01.ipynb", {"ex1": (1, 1), "ex2": (0, 2), "ex3": (0, 3)}),
        _result("class/carol/01.ipynb", {}, error="class/carol/01.ipynb: file not found"),
    ]
    learners = {r.submission: learner_name(r.submission, "class") for r in results}
    path = tmp_path / "canvas.csv"
    write_canvas(path, results, learners, "01 graphs, part 1", 6)  # a comma: quoted by csv
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows[0] == CANVAS_COLUMNS + ["01 graphs, part 1"]
    assert CANVAS_COLUMNS == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "6"
    assert [(row[0], row[3], row[-1]) for row in rows[2:]] == [
        ("alice", "alice", "6"),
        ("bob", "bob", "1"),
        ("carol", "carol", "0"),
    ]


# ---- shards --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_the_shards_of_a_class_partition_it_exactly(n):
    paths = [f"class/{name}/01.ipynb" for name in "qwertyuiopasd"]  # 13, in no order
    shards = [shard(paths, i, n) for i in range(1, n + 1)]
    assert sorted(p for s in shards for p in s) == sorted(paths)  # union = all, each once
    for k, one in enumerate(shards):
        for other in shards[k + 1 :]:
            assert not set(one) & set(other)
    assert shards[0][0] == min(paths)  # documented: sorted by path, every n-th from the i-th


@pytest.mark.parametrize("text", ["0/2", "3/2", "a/b", "1", "1/0", "-1/2", ""])
def test_a_bad_shard_is_refused_saying_the_form(text):
    with pytest.raises(ValueError, match="I/N"):
        parse_shard(text)


def test_a_shard_is_read_as_i_of_n():
    assert parse_shard("2/3") == (2, 3) and parse_shard("1/1") == (1, 1)


@pytest.mark.parametrize("text", ["0/2", "3/2", "a/b"])
def test_a_bad_shard_is_a_usage_error(text, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(["grade", str(tmp_path / "a.ipynb"), "--against", "s.ipynb", "--shard", text])
    assert stop.value.code == 2
    assert "--shard takes I/N" in capsys.readouterr().err


def _shard_file(paths, points=POINTS, sha="abc"):
    return {
        "against": "solutions/01.ipynb",
        "timeout": 30,
        "lesson_sha256": sha,
        "points": points,
        "submissions": [_result(p, {}, error="x").to_dict() for p in paths],
    }


def test_merging_refuses_other_lessons_and_overlapping_shards():
    one, two = _shard_file(["a.ipynb", "c.ipynb"]), _shard_file(["b.ipynb"])
    merged = merge_grades([("1.json", one), ("2.json", two)])
    assert [s["submission"] for s in merged["submissions"]] == ["a.ipynb", "b.ipynb", "c.ipynb"]
    with pytest.raises(MergeError, match="not graded alike"):
        merge_grades([("1.json", one), ("2.json", _shard_file(["b.ipynb"], sha="other"))])
    with pytest.raises(MergeError, match="not graded alike"):
        merge_grades([("1.json", one), ("2.json", _shard_file(["b.ipynb"], points={"ex1": 9}))])
    with pytest.raises(MergeError, match="c.ipynb was graded in both 1.json and 2.json"):
        merge_grades([("1.json", one), ("2.json", _shard_file(["c.ipynb"]))])
    with pytest.raises(MergeError, match="graded in both"):
        merge_grades([("1.json", one), ("1.json", one)])  # the same file twice


@slow
@needs_fifo
def test_grading_in_shards_then_merging_gives_the_whole_class(tmp_path, lesson, capsys):
    solution, paths = lesson
    folder = tmp_path / "class"
    for learner in ("alice", "bob", "carol", "dave", "erin"):
        (folder / learner).mkdir(parents=True)
    (folder / "alice" / "01.ipynb").write_bytes(paths["half"].read_bytes())  # graded: 4/6
    os.mkfifo(folder / "bob" / "01.ipynb")
    (folder / "carol" / "01.ipynb").write_text("{")
    (folder / "dave" / "01.ipynb").symlink_to(solution)
    (folder / "erin" / "01.ipynb").write_text(notebook_text([7]))
    common = [str(folder), "--against", str(solution), "--timeout", "10"]
    shard_files = []
    for i in (1, 2):
        shard_files.append(tmp_path / f"shard{i}.json")
        assert main(["grade", *common, "--shard", f"{i}/2", "--json", str(shard_files[-1])]) == 0
    shards = [json.loads(p.read_text())["submissions"] for p in shard_files]
    assert [len(s) for s in shards] == [3, 2]

    merged, report, canvas = tmp_path / "all.json", tmp_path / "all.md", tmp_path / "all.csv"
    code = main(
        ["merge-grades", *map(str, shard_files), "--json", str(merged), "--report", str(report)]
        + ["--canvas", str(canvas)]
    )
    assert code == 0
    data = json.loads(merged.read_text())
    names = [s["learner"] for s in data["submissions"]]
    assert names == ["alice", "bob", "carol", "dave", "erin"]  # every learner once, sorted by path
    assert sorted(json.dumps(s) for s in shards[0] + shards[1]) == sorted(
        json.dumps(s) for s in data["submissions"]
    )
    assert data["submissions"][0]["score"] == 4 and data["points"] == POINTS
    assert "**4** / 6" in report.read_text()
    with open(canvas, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(row["SIS Login ID"], row["01_demo"]) for row in rows[1:]] == [
        ("alice", "4"),
        ("bob", "0"),
        ("carol", "0"),
        ("dave", "0"),
        ("erin", "0"),
    ]
    out = capsys.readouterr().out
    assert "4/6" in out and "named pipe" in out

    # the same shard twice is refused: exit 2 and why
    assert main(["merge-grades", str(shard_files[0]), str(shard_files[0])]) == 2
    assert "graded in both" in capsys.readouterr().err


@slow
def test_grade_writes_gradescope_results_for_one_submission(tmp_path, lesson):
    solution, paths = lesson
    results = tmp_path / "results" / "results.json"
    code = main(
        ["grade", str(paths["half"]), "--against", str(solution), "--gradescope", str(results)]
    )
    assert code == 0
    data = json.loads(results.read_text())
    assert_gradescope_format(data)
    assert data["score"] == 4
    assert [(t["name"], t["score"], t["status"]) for t in data["tests"]] == [
        ("ex1", 1, "passed"),
        ("ex2", 0, "failed"),
        ("ex3", 3, "passed"),
    ]


def test_gradescope_for_a_missing_notebook_writes_score_0_and_the_reason(tmp_path, lesson):
    results = tmp_path / "results.json"
    missing = tmp_path / "submission" / "01_demo.ipynb"
    assert (
        main(["grade", str(missing), "--against", str(lesson[0]), "--gradescope", str(results)])
        == 0
    )
    data = json.loads(results.read_text())
    assert_gradescope_format(data)
    assert data["score"] == 0 and "file not found" in data["output"]


def test_gradescope_with_several_submissions_and_canvas_with_clashing_names_are_usage_errors(
    tmp_path, lesson, capsys
):
    solution, paths = lesson
    with pytest.raises(SystemExit) as stop:
        main(
            [
                "grade",
                str(paths["half"]),
                str(paths["cheat"]),
                "--against",
                str(solution),
                "--gradescope",
                str(tmp_path / "r.json"),
            ]
        )
    assert stop.value.code == 2 and "ONE submission" in capsys.readouterr().err
    (tmp_path / "class" / "alice").mkdir(parents=True)
    for name in ("01.ipynb", "01 (copy).ipynb"):  # two notebooks in one learner's folder
        (tmp_path / "class" / "alice" / name).write_text("{")
    with pytest.raises(SystemExit) as stop:
        main(
            ["grade", str(tmp_path / "class"), "--against", str(solution)]
            + ["--canvas", str(tmp_path / "c.csv")]
        )
    assert stop.value.code == 2 and "several submissions belong to alice" in capsys.readouterr().err


def test_max_size_is_an_option_of_grade(tmp_path, lesson, capsys):
    grades = tmp_path / "grades.json"
    arguments = [str(lesson[1]["half"]), "--against", str(lesson[0]), "--json", str(grades)]
    assert main(["grade", *arguments, "--max-size", "0.001"]) == 0  # 1 KiB: the notebook is more
    assert "larger than the limit" in json.loads(grades.read_text())["submissions"][0]["error"]
    with pytest.raises(SystemExit) as stop:
        main(["grade", *arguments, "--max-size", "0"])
    assert stop.value.code == 2 and "--max-size must be a positive" in capsys.readouterr().err
