"""The exercise generator on small in-memory notebooks: every marker case and every format error."""

import json
import os
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lab.teach import FormatError, generate_student_notebook, make_exercises
from autograd_lab.teach.exercises import main

STUB = 'raise NotImplementedError("{}: write your solution here")'


def solution(source, exercise="ex1", **meta):
    return new_code_cell(
        source, metadata={"autograd_lab": {"exercise": exercise, "role": "solution", **meta}}
    )


def check_cell(source=None, exercise="ex1", points=1):
    source = source or f'check("{exercise}", lambda: True)'
    meta = {"exercise": exercise, "role": "check", "points": points}
    return new_code_cell(source, metadata={"autograd_lab": meta})


def notebook(*cells):
    return new_notebook(cells=list(cells))


def student(*cells):
    return generate_student_notebook(notebook(*cells), "lesson.ipynb")


def format_error(*cells):
    with pytest.raises(FormatError) as caught:
        student(*cells)
    return caught.value


# ---- solution regions ---------------------------------------------------------------------------


def test_a_region_becomes_the_stub_and_the_rest_stays():
    nb = student(
        solution("x = 2\n### BEGIN SOLUTION\ny = x * 3\n### END SOLUTION\nprint(y)"), check_cell()
    )
    assert nb.cells[0].source == f"x = 2\n{STUB.format('ex1')}\nprint(y)"


def test_the_stub_keeps_the_markers_indentation_inside_a_function_body():
    source = "\n".join(
        [
            "def tanh_backward(x, grad):",
            "    t = x.tanh()",
            "    ### BEGIN SOLUTION",
            "    return grad * (1 - t * t)",
            "    ### END SOLUTION",
            "",
            "class Mul:",
            "    def backward(self, g):",
            "        ### BEGIN SOLUTION",
            "        return g * self.b, g * self.a",
            "### END SOLUTION",  # the END marker's indentation does not matter
        ]
    )
    nb = student(solution(source, "ex2"), check_cell(exercise="ex2"))
    assert nb.cells[0].source.split("\n") == [
        "def tanh_backward(x, grad):",
        "    t = x.tanh()",
        "    " + STUB.format("ex2"),
        "",
        "class Mul:",
        "    def backward(self, g):",
        "        " + STUB.format("ex2"),
    ]
    compile(nb.cells[0].source, "student", "exec")  # still valid Python


def test_a_solution_cell_without_markers_is_replaced_whole():
    nb = student(solution("answer = 42\nprint(answer)", "ex_3"), check_cell(exercise="ex_3"))
    assert nb.cells[0].source == STUB.format("ex_3")


def test_several_solution_cells_and_exercises():
    nb = student(
        new_markdown_cell("# Lesson"),
        solution("a = 1"),
        solution("def f():\n    ### BEGIN SOLUTION\n    return a\n    ### END SOLUTION"),
        check_cell(),
        new_code_cell("print('between exercises')"),
        solution("b = 2", "ex2"),
        check_cell(exercise="ex2", points=3),
    )
    sources = [cell.source for cell in nb.cells]
    assert sources == [
        "# Lesson",
        STUB.format("ex1"),
        "def f():\n    " + STUB.format("ex1"),
        'check("ex1", lambda: True)',
        "print('between exercises')",
        STUB.format("ex2"),
        'check("ex2", lambda: True)',
    ]


# ---- hidden tests -------------------------------------------------------------------------------


def test_hidden_tests_are_removed_wherever_they_are():
    check = "\n".join(
        [
            "### BEGIN HIDDEN TESTS",
            "assert secret_one()",
            "### END HIDDEN TESTS",
            'check("ex1", lambda: f() == 1)',
            "    ### BEGIN HIDDEN TESTS",
            "    assert secret_two()",
            "    ### END HIDDEN TESTS",
            "",
        ]
    )
    nb = student(solution("f = lambda: 1"), check_cell(check))
    assert nb.cells[1].source == 'check("ex1", lambda: f() == 1)'
    assert "secret" not in nbformat.writes(nb) and "HIDDEN" not in nbformat.writes(nb)


def test_a_check_cell_without_hidden_tests_is_kept_as_written():
    nb = student(solution("x = 1"), check_cell('check("ex1", lambda: x == 1)\n'))
    assert nb.cells[1].source == 'check("ex1", lambda: x == 1)\n'


# ---- outputs, metadata, tags --------------------------------------------------------------------


def test_outputs_counts_widget_state_and_run_times_are_cleared_and_metadata_kept():
    plain = new_code_cell("print(1)", execution_count=1, outputs=[new_output("stream", text="1\n")])
    plain.metadata.update({"execution": {"iopub.execute_input": "2024-01-01T00:00:00"}, "x": 1})
    sol = solution("y = 2")
    sol.execution_count, sol.outputs = 2, [new_output("execute_result", data={"text/plain": "2"})]
    sol.metadata["tags"] = ["keep-me"]
    nb = notebook(plain, sol, check_cell())
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    out = generate_student_notebook(nb)
    assert [(c.execution_count, c.outputs) for c in out.cells] == [(None, [])] * 3
    assert "widgets" not in out.metadata and out.metadata.kernelspec.name == "python3"
    assert out.cells[0].metadata == {"x": 1}
    assert out.cells[1].metadata == {
        "autograd_lab": {"exercise": "ex1", "role": "solution"},
        "tags": ["keep-me", "raises-exception"],
    }
    assert (
        nb.cells[1].outputs and "widgets" in nb.metadata
    )  # the instructor's notebook is untouched
    assert nb.cells[1].source == "y = 2"


def test_graded_cells_are_tagged_once_and_plain_cells_not_at_all():
    check = check_cell()
    check.metadata["tags"] = ["raises-exception"]
    out = student(new_code_cell("import math"), solution("x = 1"), check)
    assert [cell.metadata.get("tags") for cell in out.cells] == [
        None,
        ["raises-exception"],
        ["raises-exception"],
    ]


# ---- format errors ------------------------------------------------------------------------------

S = {"exercise": "ex1", "role": "solution"}


@pytest.mark.parametrize(
    "cells, cell, line, words",
    [
        pytest.param(
            [solution("x = 1\n### END SOLUTION"), check_cell()],
            1,
            2,
            "### END SOLUTION without a ### BEGIN SOLUTION before it",
            id="end-without-begin",
        ),
        pytest.param(
            [new_code_cell("pass"), solution("### BEGIN SOLUTION\nx = 1"), check_cell()],
            2,
            1,
            "### BEGIN SOLUTION is never closed: add ### END SOLUTION",
            id="never-closed",
        ),
        pytest.param(
            [solution("### BEGIN SOLUTION\n  ### BEGIN SOLUTION\n### END SOLUTION"), check_cell()],
            1,
            2,
            "inside the region opened on line 1: regions cannot nest",
            id="nested",
        ),
        pytest.param(
            [solution("### BEGIN SOLUTION\nx = 1\n### END HIDDEN TESTS"), check_cell()],
            1,
            3,
            "hidden tests belong in the exercise's check cell",
            id="mismatched-end",
        ),
        pytest.param(
            [solution("x = 1"), check_cell("### BEGIN SOLUTION\ny = 1\n### END SOLUTION")],
            2,
            1,
            "### BEGIN SOLUTION in a check cell",
            id="solution-marker-in-check",
        ),
        pytest.param(
            [solution("### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS"), check_cell()],
            1,
            1,
            "### BEGIN HIDDEN TESTS in a solution cell",
            id="hidden-marker-in-solution",
        ),
        pytest.param(
            [new_code_cell("a = 1\n### BEGIN SOLUTION\nb = 2\n### END SOLUTION")],
            1,
            2,
            'without autograd_lab metadata: give the cell {"exercise": "ex1", "role": "solution"}',
            id="marker-in-plain-cell",
        ),
        pytest.param(
            [new_markdown_cell("Answer:\n### BEGIN SOLUTION\n42\n### END SOLUTION")],
            1,
            2,
            "in a markdown cell: markers only work in graded code cells",
            id="marker-in-markdown",
        ),
        pytest.param(
            [solution("### Begin Solution\nx = 1\n### End Solution"), check_cell()],
            1,
            1,
            "looks like a marker but is not one",
            id="marker-in-lowercase",
        ),
        pytest.param(
            [solution("### BEGIN SOLUTION\nx = 1  ### END SOLUTION"), check_cell()],
            1,
            2,
            "'x = 1  ### END SOLUTION' looks like a marker but is not one",
            id="marker-not-alone",
        ),
        pytest.param(
            [new_code_cell("x = 1\n## END HIDDEN TESTS")],
            1,
            2,
            "write it exactly as `### BEGIN SOLUTION`",
            id="two-hashes",
        ),
    ],
)
def test_marker_mistakes_name_the_notebook_cell_and_line(cells, cell, line, words):
    error = format_error(*cells)
    assert (error.notebook, error.cell, error.line) == ("lesson.ipynb", cell, line)
    assert str(error).startswith(f"lesson.ipynb, cell {cell}, line {line}: ")
    assert words in str(error)
    assert isinstance(error, ValueError)


def graded(meta, source="x = 1", cell_type="code"):
    cell = new_code_cell(source) if cell_type == "code" else new_markdown_cell(source)
    cell.metadata["autograd_lab"] = meta
    return cell


@pytest.mark.parametrize(
    "cells, cell, words",
    [
        pytest.param(
            [graded({"exercise": "ex1", "role": "answer"})],
            1,
            "unknown role 'answer' for exercise 'ex1': use 'solution' or 'check'",
            id="unknown-role",
        ),
        pytest.param(
            [graded({"exercise": "Ex 1", "role": "solution"})],
            1,
            "exercise id 'Ex 1' must be lowercase letters, digits and _",
            id="bad-id",
        ),
        pytest.param(
            [graded({"role": "solution"})],
            1,
            "exercise id None must be",
            id="no-id",
        ),
        pytest.param(
            [solution("x = 1"), graded({"exercise": "ex1", "role": "check"})],
            2,
            "check cell for exercise 'ex1' needs \"points\": a positive whole number",
            id="no-points",
        ),
        pytest.param(
            [solution("x = 1"), check_cell(points=0)], 2, 'needs "points"', id="zero-points"
        ),
        pytest.param(
            [solution("x = 1"), check_cell(points=True)], 2, 'needs "points"', id="bool-points"
        ),
        pytest.param(
            [solution("x = 1"), check_cell(points="2")], 2, 'needs "points"', id="text-points"
        ),
        pytest.param(
            [solution("x = 1", points=2), check_cell()],
            1,
            "points of exercise 'ex1' go on its check cell",
            id="points-on-solution",
        ),
        pytest.param(
            [solution("x = 1"), check_cell(), solution("y = 1"), check_cell()],
            3,
            "a solution cell for exercise 'ex1', whose check cell is cell 2: exercise ids must be unique",
            id="duplicate-id",
        ),
        pytest.param(
            [solution("x = 1"), check_cell(), check_cell()],
            3,
            "a second check cell for exercise 'ex1', whose check cell is cell 2",
            id="two-checks",
        ),
        pytest.param(
            [new_code_cell("pass"), solution("x = 1"), new_code_cell("pass")],
            2,
            "exercise 'ex1' has solution cells but no check cell",
            id="no-check-cell",
        ),
        pytest.param(
            [solution("x = 1"), solution("y = 1", "ex2"), check_cell(exercise="ex2")],
            2,
            "exercise 'ex2' starts, but exercise 'ex1' (solution in cell 1) has no check cell yet",
            id="interleaved",
        ),
        pytest.param(
            [check_cell()],
            1,
            "check cell for exercise 'ex1' has no solution cell before it",
            id="check-without-solution",
        ),
        pytest.param(
            [graded(S, "the answer", "markdown")],
            1,
            "graded cells must be code cells, this is a markdown cell",
            id="markdown-solution",
        ),
        pytest.param([graded("ex1")], 1, 'metadata "autograd_lab" must be a dict', id="not-a-dict"),
    ],
)
def test_metadata_mistakes_name_the_notebook_and_cell(cells, cell, words):
    error = format_error(*cells)
    assert (error.notebook, error.cell, error.line) == ("lesson.ipynb", cell, None)
    assert str(error).startswith(f"lesson.ipynb, cell {cell}: ")
    assert words in str(error)


def test_only_notebook_format_4_is_read():
    nb = notebook(solution("x = 1"), check_cell())
    nb.nbformat = 3
    with pytest.raises(FormatError, match="^<notebook>: needs notebook format 4, found 3$"):
        generate_student_notebook(nb)


# ---- files: make_exercises ----------------------------------------------------------------------


def lesson(*extra):
    """A small graded lesson with outputs, as an instructor saves it."""
    cells = [
        new_markdown_cell("# 02 · Backprop by hand"),
        new_code_cell("from autograd_lab.teach import check", execution_count=1),
        solution(
            "def add_backward(g):\n    ### BEGIN SOLUTION\n    return g, g\n    ### END SOLUTION"
        ),
        check_cell(
            'check("ex1", lambda: add_backward(1.0) == (1.0, 1.0))\n### BEGIN HIDDEN TESTS\nassert add_backward(2.0) == (2.0, 2.0)\n### END HIDDEN TESTS'
        ),
        *extra,
    ]
    cells[3].outputs = [new_output("stream", text="✓ ex1 passed\n")]
    cells[3].execution_count = 3
    nb = notebook(*cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


@pytest.fixture
def folders(tmp_path):
    src, dst = tmp_path / "solutions", tmp_path / "exercises"
    src.mkdir()
    nbformat.write(lesson(), src / "02_backprop.ipynb")
    nbformat.write(lesson(new_markdown_cell("Done!")), src / "01_graphs.ipynb")
    return src, dst


def test_make_exercises_writes_one_student_notebook_per_solution(folders):
    src, dst = folders
    (src / "notes.txt").write_text("not a notebook")
    assert make_exercises(src, dst) == [dst / "01_graphs.ipynb", dst / "02_backprop.ipynb"]
    assert sorted(p.name for p in dst.iterdir()) == ["01_graphs.ipynb", "02_backprop.ipynb"]
    written = nbformat.read(dst / "02_backprop.ipynb", as_version=4)
    assert written.cells[2].source == "def add_backward(g):\n    " + STUB.format("ex1")
    assert written.cells[3].outputs == [] and "HIDDEN" not in written.cells[3].source


def test_the_bytes_are_deterministic_sorted_and_end_with_a_newline(folders, tmp_path):
    src, dst = folders
    make_exercises(src, dst)
    first = (dst / "02_backprop.ipynb").read_bytes()
    make_exercises(src, tmp_path / "again")
    assert (tmp_path / "again" / "02_backprop.ipynb").read_bytes() == first
    assert first.endswith(b"}\n") and not first.endswith(b"\n\n")
    data = json.loads(first)
    assert list(data) == sorted(data) and list(data["cells"][0]) == sorted(data["cells"][0])
    source_ids = [c["id"] for c in json.loads((src / "02_backprop.ipynb").read_text())["cells"]]
    assert [c["id"] for c in data["cells"]] == source_ids  # the grader can find cells again
    assert "✓".encode() not in first  # outputs are gone; unicode is written as is, not escaped


def test_cells_without_ids_get_fixed_ones_not_random_ones(folders, tmp_path):
    src, dst = folders
    data = json.loads((src / "02_backprop.ipynb").read_text())
    for cell in data["cells"]:
        del cell["id"]
    (src / "02_backprop.ipynb").write_text(json.dumps(data))
    make_exercises(src, dst)
    make_exercises(src, tmp_path / "again")
    first = (dst / "02_backprop.ipynb").read_bytes()
    assert (tmp_path / "again" / "02_backprop.ipynb").read_bytes() == first
    assert [c["id"] for c in json.loads(first)["cells"]] == [f"cell-{n}" for n in range(1, 5)]


def test_unchanged_exercises_are_not_rewritten(folders):
    src, dst = folders
    make_exercises(src, dst)
    path = dst / "01_graphs.ipynb"
    os.utime(path, (1_000_000, 1_000_000))
    make_exercises(src, dst)
    assert path.stat().st_mtime == 1_000_000


def test_one_broken_solution_stops_everything_before_anything_is_written(folders):
    src, dst = folders
    nbformat.write(notebook(solution("### BEGIN SOLUTION"), check_cell()), src / "03_broken.ipynb")
    with pytest.raises(
        FormatError, match=r"03_broken.ipynb, cell 1, line 1: ### BEGIN SOLUTION is never"
    ):
        make_exercises(src, dst)
    assert not dst.exists()


def test_a_file_that_is_not_a_notebook_is_a_clear_error(folders):
    src, dst = folders
    (src / "00_empty.ipynb").write_text("")
    with pytest.raises(FormatError, match=r"00_empty.ipynb: not a notebook"):
        make_exercises(src, dst)


def test_the_solutions_folder_is_never_the_destination(folders):
    src, _ = folders
    before = {p: p.read_bytes() for p in src.iterdir()}
    with pytest.raises(ValueError, match="would replace the solutions with stubs"):
        make_exercises(src, src.parent / ".." / src.parent.name / "solutions")
    with pytest.raises(ValueError, match="would replace the solutions with stubs"):
        make_exercises(src / "01_graphs.ipynb", src)
    assert {p: p.read_bytes() for p in src.iterdir()} == before


def test_one_notebook_can_be_generated_alone(folders):
    src, dst = folders
    assert make_exercises(src / "01_graphs.ipynb", dst) == [dst / "01_graphs.ipynb"]


def test_an_empty_solutions_folder_makes_nothing(tmp_path):
    assert make_exercises(tmp_path, tmp_path / "out") == []


def test_the_command_line_writes_or_explains(folders, capsys):
    src, dst = folders
    assert main([str(src), str(dst)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"2 student notebook(s) in {dst}"
    nbformat.write(notebook(check_cell()), src / "03_broken.ipynb")
    assert main([str(src), str(dst)]) == 1
    assert "03_broken.ipynb, cell 1: check cell for exercise 'ex1'" in capsys.readouterr().err


def test_python_dash_m_runs_without_warnings(folders):
    src, dst = folders
    done = subprocess.run(
        [sys.executable, "-W", "error", "-m", "autograd_lab.teach.exercises", str(src), str(dst)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and (dst / "02_backprop.ipynb").exists()


# ---- check cells fit for grading (the judge model, FORMAT.md) ------------------------------------


def test_several_checks_of_an_exercise_each_say_what_they_check():
    two = 'check("ex1", lambda: True)\ncheck("ex1", lambda: 1 == 1, message="more")'
    error = format_error(solution("x = 1"), check_cell(two))
    assert (error.cell, error.line) == (2, 1)
    assert "has 2 checks and this one has no message=" in str(error)
    labelled = 'check("ex1", lambda: True, message="one")\ncheck_gradients("ex1", f, (1.0,), g, message="two")'
    assert student(solution("x = 1"), check_cell(labelled))  # fine
    assert student(solution("x = 1"), check_cell('check("ex1", lambda: True)'))  # one check: fine


def test_a_check_cell_may_not_rebind_notebook_names_with_global():
    source = 'def spy():\n    global kernel\n    kernel = 1\ncheck("ex1", lambda: True)'
    error = format_error(solution("x = 1"), check_cell(source))
    assert (error.cell, error.line) == (2, 2)
    assert "`global kernel` in a check cell" in str(error) and "replacing(name, value)" in str(
        error
    )
