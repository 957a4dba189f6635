"""The `autograd-lab` command: open the lessons, make the exercises, grade a class.

    autograd-lab lab                                      # JupyterLab on notebooks/
    autograd-lab make-exercises solutions/ exercises/     # student versions of the lessons
    autograd-lab grade class/ --against solutions/01_graphs.ipynb -j 2 --json grades.json

Also `python -m autograd_lab.cli ...`. Exit status: 0 when the command did its work (grading
that ran is a success, whatever the scores), 2 for a usage error, such as a missing --against.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path


def main(argv=None):
    """Run the command line; return the exit status (`autograd-lab` exits with it)."""
    for stream in (sys.stdout, sys.stderr):  # ✓ and ✗ on a console that cannot encode them
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "lab":  # only `lab` passes options on (to JupyterLab)
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.run(args, extra, parser)
    except KeyboardInterrupt:
        return 130


def _parser():
    parser = argparse.ArgumentParser(
        prog="autograd-lab",
        description="Learn how PyTorch's dynamic graph works: lessons, exercises, and a grader.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    lab = commands.add_parser(
        "lab",
        help="open the lessons in JupyterLab",
        usage="autograd-lab lab [FOLDER] [JupyterLab options, e.g. --port 9999]",
        description="JupyterLab on FOLDER (default: notebooks/ if there is one, else here).",
    )
    lab.set_defaults(run=_lab)

    make = commands.add_parser("make-exercises", help="write the student versions of lessons")
    make.add_argument("src", help="folder of instructor notebooks (solutions/), or one notebook")
    make.add_argument("dst", help="folder for the student notebooks (exercises/)")
    make.set_defaults(run=_make_exercises)

    grade = commands.add_parser(
        "grade",
        help="grade submissions against the instructor's notebook",
        description="Grade notebooks against the instructor's: each exercise earns its points "
        "iff its check cell passes when the learner's solution cells run in the instructor's "
        "notebook (pytest + nbval, a fresh kernel per submission).",
    )
    grade.add_argument(
        "submissions",
        nargs="+",
        metavar="SUBMISSION",
        help="a notebook, or a folder: every .ipynb in it and its subfolders (hidden ones skipped)",
    )
    grade.add_argument(
        "--against",
        required=True,
        metavar="NOTEBOOK",
        help="the instructor's notebook, e.g. solutions/01_graphs.ipynb",
    )
    grade.add_argument("--json", metavar="PATH", help="write every score and verdict as JSON")
    grade.add_argument("--report", metavar="PATH", help="write a markdown report")
    grade.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="grade N submissions at a time (default 1)",
    )
    grade.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long one cell may run before it is stopped (default 30)",
    )
    grade.set_defaults(run=_grade)
    return parser


# ---- lab and make-exercises ----------------------------------------------------------------------


def _lab(args, extra, parser):
    """`jupyter lab notebooks/`: the installed command's `python3 dev.py lab`, without the setup."""
    if importlib.util.find_spec("jupyterlab") is None:
        return _fail("JupyterLab is not installed: pip install 'autograd_lab[lab]'")
    if extra and not extra[0].startswith("-"):  # argparse cannot tell FOLDER from option values
        folder, extra = extra[0], extra[1:]
    else:
        folder = "notebooks" if Path("notebooks").is_dir() else "."
    if not Path(folder).exists():
        parser.error(f"{folder} does not exist")
    command = [sys.executable, "-m", "jupyterlab", folder, *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        command.append("--allow-root")  # containers and Binder often run as root; Jupyter refuses
    print(" ".join(command), file=sys.stderr)
    if os.name == "nt":
        return subprocess.call(command)
    os.execv(sys.executable, command)  # becomes JupyterLab, so Ctrl-C reaches it alone


def _make_exercises(args, extra, parser):
    try:
        from .teach import FormatError, make_exercises
    except ImportError as error:  # nbformat is a notebook tool, not a runtime dependency
        return _fail(f"make-exercises needs nbformat ({error}): pip install 'autograd_lab[lab]'")
    try:
        paths = make_exercises(args.src, args.dst)
    except FormatError as error:
        return _fail(f"{error}\n(the authoring format: autograd_lab/teach/FORMAT.md)")
    except (FileNotFoundError, ValueError) as error:
        return _fail(str(error))
    for path in paths:
        print(path)
    print(f"{len(paths)} student notebook(s) in {args.dst}")
    return 0


def _fail(message):
    print(f"autograd-lab: error: {message}", file=sys.stderr)
    return 2


# ---- grade ---------------------------------------------------------------------------------------


def _grade(args, extra, parser):
    from .teach import grader

    if args.jobs < 1:
        parser.error("-j/--jobs must be at least 1")
    timeout = grader.DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    if timeout <= 0:
        parser.error("--timeout must be a positive number of seconds")
    against = Path(args.against)
    submissions = _find_submissions(args.submissions, against, parser)
    _check_outputs(args, submissions + [against], parser)
    try:
        lesson = grader.load_lesson(against)
        print(
            f"grading {len(submissions)} submission(s) against {against}, {args.jobs} at a time, "
            f"{timeout:g} s per cell",
            file=sys.stderr,
        )
        results = grader.grade_many(
            submissions, lesson, jobs=args.jobs, timeout=timeout, progress=_progress
        )
    except grader.GraderError as error:
        return _fail(str(error))

    print(score_table(results, lesson.points))
    if args.json:
        data = {"against": str(against), "timeout": timeout, "submissions": []}
        data["submissions"] = [result.to_dict() for result in results]
        _write(args.json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if args.report:
        _write(args.report, markdown_report(results, lesson.points, against, timeout))
    return 0


def _find_submissions(arguments, against, parser):
    """The notebooks to grade: files as given (a missing one becomes an error entry), folders
    searched for .ipynb files, skipping hidden folders such as .ipynb_checkpoints and .git."""
    paths = []
    for argument in arguments:
        path = Path(argument)
        if not path.is_dir():
            paths.append(path)
            continue
        found = [
            p
            for p in sorted(path.rglob("*.ipynb"))
            if not any(part.startswith(".") for part in p.relative_to(path).parts)
            and p.resolve() != against.resolve()  # a folder that also holds the instructor's
        ]
        if not found:
            parser.error(f"no .ipynb files in the folder {path}")
        paths += found
    return list(dict.fromkeys(paths))  # each submission once, in the order given


def _check_outputs(args, inputs, parser):
    """Refuse, before grading, to write a report over a notebook or into a folder."""
    outputs = [Path(p) for p in (args.json, args.report) if p]
    if len({p.resolve() for p in outputs}) < len(outputs):
        parser.error("--json and --report name the same file")
    for path in outputs:
        if path.is_dir():
            parser.error(f"{path} is a folder: give a file name, e.g. {path / 'grades.json'}")
        if any(path.resolve() == p.resolve() for p in inputs):
            parser.error(f"{path} is a notebook being graded: it would be overwritten")


def _write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def _progress(result):
    score = "error" if result.error else f"{result.score}/{result.max_score}"
    print(f"  {result.submission}: {score}", file=sys.stderr, flush=True)


def score_table(results, points):
    """A plain-text table: a row per submission, a column per exercise; then what went wrong.

    >>> print(score_table(results, {"ex1": 1, "ex2": 2}))
    submission   ex1  ex2  score
    alice.ipynb  1/1  0/2  1/3
    <BLANKLINE>
    alice.ipynb  ex2  ✗ ex2: d(x²)/dx = 2x
    """
    rows = [["submission", *points, "score"]]
    for r in results:
        scores = [f"{e.points}/{e.max_points}" for e in r.exercises.values()]
        rows.append(
            [r.submission] if r.error else [r.submission, *scores, f"{r.score}/{r.max_score}"]
        )
    widths = [max(len(row[k]) for row in rows if len(row) > k) for k in range(len(rows[0]))]
    lines = []
    for r, row in zip([None, *results], rows):
        if r is not None and r.error:  # an error row has no scores: the reason instead
            row = [r.submission, f"error: {r.error}"]
        lines.append("  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip())

    why, id_width = [], max(map(len, points))  # below the table: why an exercise earned nothing
    for r in results:
        for exercise, e in r.exercises.items():
            if not e.passed:
                why.append(
                    f"{r.submission.ljust(widths[0])}  {exercise.ljust(id_width)}  {e.feedback}"
                )
    return "\n".join(lines + ([""] + why if why else []))


def markdown_report(results, points, against, timeout):
    """A markdown report: a summary table, then each submission's verdicts and hints."""
    graded = [r for r in results if not r.error]
    mean = sum(r.score for r in graded) / len(graded) if graded else 0
    lines = [
        f"# Grades: {Path(against).name}",
        "",
        f"Graded against `{against}` ({timeout:g} s per cell): {len(results)} submission(s), "
        f"{len(results) - len(graded)} not gradable; mean {mean:.1f} of {sum(points.values())}.",
        "",
        "| submission | " + " | ".join(f"{e} ({p})" for e, p in points.items()) + " | score |",
        "|---" * (len(points) + 2) + "|",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {_md(r.submission)} | " + "– | " * len(points) + "not graded |")
        else:
            scores = "".join(f"{e.points} | " for e in r.exercises.values())
            lines.append(f"| {_md(r.submission)} | {scores}**{r.score}** / {r.max_score} |")
    for r in results:
        score = "not graded" if r.error else f"{r.score} / {r.max_score}"
        lines += ["", f"## {_md(r.submission)}: {score}", ""]
        if r.error:
            lines.append(f"Error: {_md(r.error)}")
        for exercise, e in r.exercises.items():
            lines.append(f"- **{exercise}** ({e.points}/{e.max_points}): {_md(e.feedback)}")
    return "\n".join(lines) + "\n"


def _md(text):
    """Text safe inside a markdown table cell or list item."""
    return str(text).replace("|", "\\|").replace("\n", " ")


if __name__ == "__main__":
    sys.exit(main())
