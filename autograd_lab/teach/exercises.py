"""Make the student version of a graded lesson from the instructor's notebook (see FORMAT.md).

    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> solution = new_code_cell(
    ...     "def double(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION",
    ...     metadata={"autograd_lab": {"exercise": "ex1", "role": "solution"}})
    >>> test = new_code_cell('check("ex1", lambda: double(2) == 4)',
    ...     metadata={"autograd_lab": {"exercise": "ex1", "role": "check", "points": 1}})
    >>> student = generate_student_notebook(new_notebook(cells=[solution, test]))
    >>> print(student.cells[0].source)
    def double(x):
        raise NotImplementedError("ex1: write your solution here")

From a shell: `python -m autograd_lab.teach.exercises solutions/ exercises/` (or, with the
command line installed, `autograd-lab make-exercises solutions/ exercises/`).
"""

import argparse
import ast
import copy
import json
import re
import sys
from pathlib import Path

import nbformat

STUB = 'raise NotImplementedError("{exercise}: write your solution here")'
# marker line -> (region kind, edge); solution cells hold "solution" regions, check cells "hidden"
MARKERS = {
    "### BEGIN SOLUTION": ("solution", "begin"),
    "### END SOLUTION": ("solution", "end"),
    "### BEGIN HIDDEN TESTS": ("hidden", "begin"),
    "### END HIDDEN TESTS": ("hidden", "end"),
}
BEGIN = {"solution": "### BEGIN SOLUTION", "hidden": "### BEGIN HIDDEN TESTS"}
END = {"solution": "### END SOLUTION", "hidden": "### END HIDDEN TESTS"}
REGION_OF_ROLE = {"solution": "solution", "check": "hidden"}
# Anything that looks like a marker but is not exactly one: a typo would otherwise leak a solution.
NEAR_MARKER = re.compile(r"#.*\b(BEGIN|END)\s+(SOLUTION|HIDDEN\s+TESTS)\b", re.IGNORECASE)
EXERCISE_ID = re.compile(r"[a-z0-9_]+\Z")
EXPECTED_FAILURE_TAG = "raises-exception"  # nbval --nbval-lax accepts errors in cells tagged so


class FormatError(ValueError):
    """A solution notebook breaks the authoring format; the message names notebook, cell and line."""

    def __init__(self, notebook, cell, line, problem):
        where = (
            f"{notebook}, cell {cell}" + (f", line {line}" if line else "") if cell else notebook
        )
        super().__init__(f"{where}: {problem}")
        self.notebook, self.cell, self.line = notebook, cell, line


def generate_student_notebook(nb, path=None):
    """The student version of an instructor notebook (a new NotebookNode; nb is not changed).

    Solution regions become a `raise NotImplementedError("ex1: ...")` stub at the marker's
    indentation (a solution cell without markers becomes the stub), hidden tests are removed,
    outputs, execution counts and widget state are cleared, and graded cells get the
    `raises-exception` tag. path only names the notebook in a FormatError.
    """
    name = str(path) if path is not None else "<notebook>"
    if nb.get("nbformat") != 4:
        raise FormatError(name, None, None, f"needs notebook format 4, found {nb.get('nbformat')}")
    student = copy.deepcopy(nb)
    student.metadata.pop("widgets", None)  # saved widget state: the instructor's run, not theirs
    graded = _graded_cells(student, name)
    for number, cell in enumerate(student.cells, start=1):
        if nb.get("nbformat_minor", 0) >= 5 and "id" not in cell:
            # nbformat would invent a random id on writing; a fixed one keeps the bytes stable
            cell["id"] = f"cell-{number}"
        lines = cell.source.split("\n")
        meta = graded.get(number)
        regions = _regions(lines, meta["role"] if meta else None, cell.cell_type, (name, number))
        if meta:
            exercise = meta["exercise"]
            if meta["role"] == "check":
                _check_for_grading(cell.source, exercise, (name, number))
            if meta["role"] == "solution":
                cell.source = _replace(lines, regions, STUB.format(exercise=exercise))
            else:
                cell.source = _replace(lines, regions, None)
            tags = cell.metadata.setdefault("tags", [])
            if EXPECTED_FAILURE_TAG not in tags:
                tags.append(EXPECTED_FAILURE_TAG)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)  # JupyterLab's recorded run times
    return student


def make_exercises(src_dir, dst_dir):
    """Write dst_dir/<name>.ipynb, the student version, for each src_dir/*.ipynb; return the paths.

    src_dir may also be one notebook. Every source is checked before anything is written, files
    are only rewritten when their bytes change, and nothing but dst_dir/<source name> is touched.

        make_exercises("solutions", "exercises")  # [PosixPath('exercises/02_backprop.ipynb'), ...]
    """
    src, dst = Path(src_dir), Path(dst_dir)
    if not src.exists():
        raise FileNotFoundError(f"{src} does not exist: give the folder of solution notebooks")
    sources = [src] if src.is_file() else sorted(src.glob("*.ipynb"))
    if dst.exists() and not dst.is_dir():
        raise ValueError(f"{dst} is a file: the exercises go into a folder")
    if dst.resolve() == (src.parent if src.is_file() else src).resolve():
        raise ValueError(
            f"{dst} is the folder of the solutions: writing the exercises there would replace the "
            "solutions with stubs. Give another folder, e.g. exercises/"
        )
    written = [(dst / source.name, _student_bytes(source)) for source in sources]
    dst.mkdir(parents=True, exist_ok=True)
    for path, data in written:
        if not path.exists() or path.read_bytes() != data:  # unchanged files keep their mtime
            path.write_bytes(data)
    return [path for path, _ in written]


def _student_bytes(path):
    """The student notebook's file contents: nbformat's layout, sorted keys, a final newline."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FormatError(str(path), None, None, f"not a notebook ({error})") from None
    if not isinstance(data, dict):
        raise FormatError(str(path), None, None, "not a notebook (no JSON object)")
    # nbformat.v4.to_notebook: no validation, which would invent random ids for cells without one
    student = generate_student_notebook(nbformat.v4.to_notebook(data), path)
    try:
        nbformat.validate(copy.deepcopy(student))
    except nbformat.ValidationError as error:
        problem = str(error).splitlines()[0]
        raise FormatError(str(path), None, None, f"not a valid notebook: {problem}") from None
    return (nbformat.v4.writes(student) + "\n").encode("utf-8")


def _graded_cells(nb, name):
    """{cell number: metadata} of the graded cells, after checking the metadata and the order.

    Each exercise's solution cells come first, then its one check cell; exercises do not interleave.
    """
    graded, checked = {}, {}
    open_exercise, first_solution = None, None
    for number, cell in enumerate(nb.cells, start=1):
        meta = cell.metadata.get("autograd_lab")
        if meta is None:
            continue
        _check_metadata(meta, cell, (name, number))
        exercise, role = meta["exercise"], meta["role"]

        def fail(problem, number=number):
            raise FormatError(name, number, None, problem)

        if exercise in checked:
            what = "solution" if role == "solution" else "second check"
            fail(
                f"a {what} cell for exercise {exercise!r}, whose check cell is cell "
                f"{checked[exercise]}: exercise ids must be unique in a notebook, and an exercise's "
                "solution cells come before its one check cell"
            )
        if open_exercise not in (None, exercise):
            fail(
                f"exercise {exercise!r} starts, but exercise {open_exercise!r} (solution in cell "
                f"{first_solution}) has no check cell yet: add its check cell right after its "
                "solution"
            )
        if role == "solution":
            if open_exercise is None:
                open_exercise, first_solution = exercise, number
        else:
            if open_exercise is None:
                fail(
                    f"check cell for exercise {exercise!r} has no solution cell before it: mark the "
                    f'cell the learner writes with {{"exercise": "{exercise}", "role": "solution"}}'
                )
            checked[exercise], open_exercise = number, None
        graded[number] = meta
    if open_exercise is not None:
        raise FormatError(
            name,
            first_solution,
            None,
            f"exercise {open_exercise!r} has solution cells but no check cell: add a cell with "
            f'{{"exercise": "{open_exercise}", "role": "check", "points": 1}} right after them',
        )
    return graded


def _check_metadata(meta, cell, where):
    def fail(problem):
        raise FormatError(*where, None, problem)

    if not isinstance(meta, dict):
        fail('metadata "autograd_lab" must be a dict like {"exercise": "ex1", "role": "solution"}')
    if cell.cell_type != "code":
        fail(f"graded cells must be code cells, this is a {cell.cell_type} cell")
    exercise, role = meta.get("exercise"), meta.get("role")
    if not isinstance(exercise, str) or not EXERCISE_ID.match(exercise):
        fail(f"exercise id {exercise!r} must be lowercase letters, digits and _ (like 'ex1')")
    if role not in REGION_OF_ROLE:
        fail(f"unknown role {role!r} for exercise {exercise!r}: use 'solution' or 'check'")
    points = meta.get("points")
    if role == "check" and (type(points) is not int or points <= 0):
        fail(f'check cell for exercise {exercise!r} needs "points": a positive whole number')
    if role == "solution" and "points" in meta:
        fail(f"points of exercise {exercise!r} go on its check cell, not on a solution cell")


CHECK_CALLS = ("check", "check_gradients")


def _check_for_grading(source, exercise, where):
    """What a check cell must be for grading (FORMAT.md): each of several checks says what it
    checks (its ✓ and ✗ lines name it), and no `global` (in grading the check runs apart from
    the notebook's names: `with replacing(name, value):` rebinds one)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return  # the notebook's own run (nbval) reports it, with its line
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in CHECK_CALLS
    ]
    bare = [c for c in calls if not any(k.arg == "message" for k in c.keywords)]
    if len(calls) > 1 and bare:
        raise FormatError(
            *where,
            bare[0].lineno,
            f"exercise {exercise!r} has {len(calls)} checks and this one has no message=: give "
            f'each a message="what it checks", so that its ✓ and ✗ lines say which check they are',
        )
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            raise FormatError(
                *where,
                node.lineno,
                f"`global {', '.join(node.names)}` in a check cell: in grading, check cells run "
                "apart from the notebook's names; rebind one with `with replacing(name, value):` "
                "(autograd_lab.teach)",
            )


def _regions(lines, role, cell_type, where):
    """[(begin line index, end line index, kind)] of the marker regions in a cell's lines."""
    allowed = REGION_OF_ROLE.get(role) if cell_type == "code" else None
    regions, opened = [], None
    for index, line in enumerate(lines):
        number = index + 1

        def fail(problem, number=number):
            raise FormatError(*where, number, problem)

        marker = MARKERS.get(line.strip())
        if marker is None:
            if cell_type == "code" and NEAR_MARKER.search(line):
                fail(
                    f"{line.strip()!r} looks like a marker but is not one: write it exactly as "
                    "`### BEGIN SOLUTION` (or END / HIDDEN TESTS), alone on its line"
                )
            continue
        kind, edge = marker
        if kind != allowed:
            fail(_misplaced(line.strip(), kind, role, cell_type))
        if edge == "begin":
            if opened is not None:
                fail(
                    f"{line.strip()} inside the region opened on line {opened + 1}: regions cannot "
                    f"nest; close that one with {END[kind]} first"
                )
            opened = index
        elif opened is None:
            fail(f"{line.strip()} without a {BEGIN[kind]} before it")
        else:
            regions.append((opened, index, kind))
            opened = None
    if opened is not None:
        raise FormatError(
            *where, opened + 1, f"{BEGIN[allowed]} is never closed: add {END[allowed]} after it"
        )
    return regions


def _misplaced(marker, kind, role, cell_type):
    if cell_type != "code":
        return f"{marker} in a {cell_type} cell: markers only work in graded code cells"
    if role is None:
        meta = '{"exercise": "ex1", "role": "%s"}' % ("solution" if kind == "solution" else "check")
        return f"{marker} in a cell without autograd_lab metadata: give the cell {meta}"
    if kind == "solution":
        return f"{marker} in a check cell: solution regions belong in the exercise's solution cell"
    return f"{marker} in a solution cell: hidden tests belong in the exercise's check cell"


def _replace(lines, regions, stub):
    """The cell's source with each region replaced by the stub (or removed when stub is None)."""
    if stub is not None and not regions:
        return stub  # a solution cell without markers is the answer as a whole
    kept, position = [], 0
    for begin, end, _ in regions:
        kept.extend(lines[position:begin])
        if stub is not None:
            indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
            kept.append(indent + stub)
        position = end + 1
    kept.extend(lines[position:])
    if stub is None and regions:
        while kept and not kept[-1].strip():  # removed tests at the end leave no blank tail
            kept.pop()
    return "\n".join(kept)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m autograd_lab.teach.exercises",
        description="Write the student version of every solution notebook (see FORMAT.md).",
    )
    parser.add_argument("solutions", help="folder of instructor notebooks (or one notebook)")
    parser.add_argument("exercises", help="folder for the generated student notebooks")
    args = parser.parse_args(argv)
    try:
        paths = make_exercises(args.solutions, args.exercises)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    print(f"{len(paths)} student notebook(s) in {args.exercises}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
