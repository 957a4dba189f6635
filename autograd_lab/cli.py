"""The `autograd-lab` command: open the lessons, make the exercises, grade a class.

    autograd-lab lab                                      # JupyterLab on notebooks/
    autograd-lab make-exercises solutions/ exercises/     # student versions of the lessons
    autograd-lab grade class/ --against solutions/01_graphs.ipynb -j 2 --json grades.json
    autograd-lab merge-grades shard1.json shard2.json --json grades.json  # after --shard 1/2, 2/2
    autograd-lab export-html notebooks/01_watching_backprop.ipynb -o site/  # a page, no kernel

Also `python -m autograd_lab.cli ...`. Exit status: 0 when the command did its work (grading
that ran is a success, whatever the scores), 2 for a usage error, such as a missing --against.
"""

import argparse
import hashlib
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

    export = commands.add_parser(
        "export-html",
        help="write a notebook as one HTML page whose graphs step without a kernel",
        description="Run each NOTEBOOK (its outputs do not hold the graphs' data, only their "
        "pictures) and write NAME.html: the notebook with every graph live, stepping, hover, "
        "inspector and collapse included, in one self-contained file (no CDN, no server) for "
        "slides, LMS pages and GitHub Pages. The notebook file is not changed.",
    )
    export.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help="an .ipynb file")
    export.add_argument(
        "-o",
        "--output-dir",
        metavar="DIR",
        help="folder for the pages (default: beside each notebook)",
    )
    export.add_argument(
        "--timeout", type=int, default=600, metavar="S", help="seconds a cell may run (600)"
    )
    export.add_argument(
        "--max-layouts",
        type=int,
        default=64,
        metavar="N",
        help="layouts saved per graph for collapsing and expanding its scopes (64)",
    )
    export.set_defaults(run=_export_html)

    grade = commands.add_parser(
        "grade",
        help="grade submissions against the instructor's notebook",
        description="Grade notebooks against the instructor's: each exercise earns its points "
        "iff its check cell passes. The learner's solution cells run in the instructor's notebook "
        "in a worker process of their own (sandboxed with bubblewrap where available); the check "
        "cells run in the grader, which alone decides the verdicts.",
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
    grade.add_argument(
        "--sandbox",
        choices=("auto", "required", "off"),
        default="auto",
        help="run each learner's worker under bubblewrap: where available (auto, the default), "
        "or fail where it is not (required: grades of record), or never (off)",
    )
    # ---- submission files, exports and shards (teach/submission.py, exports.py, shards.py)
    grade.add_argument(
        "--max-size",
        type=float,
        default=None,
        metavar="MB",
        help="refuse a submission file larger than MB mebibytes (default 20)",
    )
    grade.add_argument(
        "--gradescope",
        metavar="PATH",
        help="write Gradescope's results.json for the one submission graded",
    )
    _add_canvas_options(grade)
    grade.add_argument(
        "--shard",
        metavar="I/N",
        help="grade shard I of N of the class: sorted by path, every N-th from the I-th",
    )
    grade.set_defaults(run=_grade)

    merge = commands.add_parser(
        "merge-grades",
        help="merge the --json files of the shards of a class into one",
        description="Merge the --json files written by `grade --shard I/N` (one per shard) "
        "into one; print the table and write the files asked for.",
    )
    merge.add_argument("shards", nargs="+", metavar="SHARD_JSON", help="a --json file of a shard")
    merge.add_argument("--json", metavar="PATH", help="write the merged grades as JSON")
    merge.add_argument("--report", metavar="PATH", help="write a markdown report")
    _add_canvas_options(merge)
    merge.set_defaults(run=_merge_grades)
    # ---- end of submission files, exports and shards
    return parser


def _add_canvas_options(command):
    command.add_argument(
        "--canvas", metavar="PATH", help="write a Canvas gradebook CSV (Grades > Import)"
    )
    command.add_argument(
        "--assignment",
        metavar="NAME",
        help="the Canvas assignment column (default: the lesson's file name without .ipynb)",
    )


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


def _export_html(args, extra, parser):
    missing = [
        m for m in ("nbclient", "nbconvert", "ipykernel") if importlib.util.find_spec(m) is None
    ]
    if missing:
        return _fail(
            f"export-html needs {', '.join(missing)}: pip install 'autograd_lab[notebooks]'"
        )
    from .viz.export import export_notebook

    for notebook in args.notebooks:
        try:
            path = export_notebook(
                notebook, args.output_dir, timeout=args.timeout, max_layouts=args.max_layouts
            )
        except (FileNotFoundError, ValueError, RuntimeError) as error:
            return _fail(str(error))
        print(path)
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
    submissions, learners = _find_submissions(args.submissions, against, parser)
    submissions, max_size = _shard_and_check_exports(args, submissions, learners, parser)
    _check_outputs(args, submissions + [against], parser)
    isolate = {"auto": None, "required": True, "off": False}[args.sandbox]
    isolation = _isolation(isolate)
    if isolate and not isolation.startswith("isolated"):
        return _fail(f"--sandbox required, but {isolation}")
    try:
        lesson = grader.load_lesson(against)
        print(
            f"grading {len(submissions)} submission(s) against {against}, {args.jobs} at a time, "
            f"{timeout:g} s per cell; {isolation}",
            file=sys.stderr,
        )
        results = grader.grade_many(
            submissions,
            lesson,
            jobs=args.jobs,
            timeout=timeout,
            progress=_progress,
            isolate=isolate,
            max_size=max_size,
        )
    except grader.GraderError as error:
        return _fail(str(error))

    print(score_table(results, lesson.points))
    if args.json:
        data = {"against": str(against), "timeout": timeout, "isolation": isolation}
        # for merge-grades: which lesson exactly, its points, and each submission's learner
        data["lesson_sha256"] = hashlib.sha256(lesson.path.read_bytes()).hexdigest()
        data["points"] = lesson.points
        data["submissions"] = [
            dict(result.to_dict(), learner=learners[result.submission]) for result in results
        ]
        _write(args.json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if args.report:
        report = markdown_report(results, lesson.points, against, timeout, isolation)
        _write(args.report, report)
    _write_exports(args, results, learners, lesson.points, against)
    return 0


def _isolation(isolate):
    """How the learners' code is confined here, in one line (sandbox.describe)."""
    from .teach import sandbox

    if isolate is False:
        return "NOT isolated: --sandbox off; the learner's code runs with the grader's permissions"
    return sandbox.describe()


# ---- submission files, exports and shards (teach/submission.py, exports.py, shards.py) ---------


def _find_submissions(arguments, against, parser):
    """The notebooks to grade and their learners ({str(path): name}, see exports.learner_name).

    Files as given (a missing one becomes an error entry). A folder: every .ipynb entry in it and
    its subfolders, hidden folders such as .ipynb_checkpoints and .git skipped; links, FIFOs and
    devices named .ipynb are kept, so that each gets an error entry saying what it is.
    """
    from .teach.exports import learner_name, learner_names
    from .teach.submission import find_notebooks

    paths, class_folder = [], {}  # a notebook found in a folder given -> that folder
    for argument in arguments:
        path = Path(argument)
        if not path.is_dir() or path.is_symlink():  # a link to a folder is refused, not followed
            paths.append(path)
            continue
        found = [p for p in find_notebooks(path) if not _is_the_file(p, against)]
        if not found:
            parser.error(f"no .ipynb files in the folder {path}")
        paths += found
        for notebook in found:
            class_folder.setdefault(str(notebook), path)
    # named one by one: by their folder in the folder that holds them all
    learners = learner_names([p for p in paths if str(p) not in class_folder])
    for notebook, folder in class_folder.items():
        learners[notebook] = learner_name(notebook, class_folder=folder)
    return list(dict.fromkeys(paths)), learners  # each submission once, in the order given


def _is_the_file(path, against):
    """Whether `path` is the instructor's notebook itself (a folder that also holds it)."""
    try:
        mine, theirs = os.lstat(path), os.stat(against)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def _shard_and_check_exports(args, submissions, learners, parser):
    """This job's share of the class (--shard), and the checks of --max-size, --gradescope and
    --canvas that need no grading; returns (submissions, the size cap in bytes)."""
    from .teach.exports import shared_names
    from .teach.shards import parse_shard, shard
    from .teach.submission import DEFAULT_MAX_SIZE

    if args.shard:
        try:
            submissions = shard(submissions, *parse_shard(args.shard))
        except ValueError as error:
            parser.error(str(error))
    if args.gradescope and len(submissions) != 1:
        parser.error(
            f"--gradescope writes the results of ONE submission, and {len(submissions)} were "
            "given: name the notebook, e.g. /autograder/submission/01_graphs.ipynb"
        )
    if args.canvas:
        shared = shared_names(learners[str(p)] for p in submissions)
        if shared:
            parser.error(
                f"--canvas: several submissions belong to {', '.join(shared)}; grade one "
                "notebook per learner, e.g. name it: class/*/01_graphs.ipynb"
            )
    if args.max_size is None:
        return submissions, DEFAULT_MAX_SIZE
    if args.max_size <= 0:
        parser.error("--max-size must be a positive number of MB")
    return submissions, round(args.max_size * 2**20)


def _write_exports(args, results, learners, points, against):
    """--gradescope and --canvas, after grading (teach/exports.py)."""
    from .teach import exports

    if getattr(args, "gradescope", None):
        exports.write_gradescope(args.gradescope, results[0], points, Path(against).name)
        print(f"wrote {args.gradescope}", file=sys.stderr)
    if args.canvas:
        assignment = args.assignment or Path(against).stem
        exports.write_canvas(args.canvas, results, learners, assignment, sum(points.values()))
        print(f"wrote {args.canvas}", file=sys.stderr)


def _merge_grades(args, extra, parser):
    """`merge-grades shard1.json shard2.json ... --json all.json`: one class from its shards."""
    from .teach import shards
    from .teach.exports import learner_name, shared_names

    _check_outputs(args, [Path(name) for name in args.shards], parser)
    files = []
    for name in args.shards:
        try:
            files.append((name, json.loads(Path(name).read_text(encoding="utf-8"))))
        except (OSError, ValueError) as error:
            return _fail(f"{name} could not be read as a --json file of `grade`: {error}")
    try:
        merged = shards.merge_grades(files)
        results = shards.results_from_json(merged)
    except shards.MergeError as error:
        return _fail(str(error))
    learners = {
        s["submission"]: s.get("learner") or learner_name(s["submission"])
        for s in merged["submissions"]
    }
    shared = shared_names(learners.values())
    if args.canvas and shared:
        return _fail(f"--canvas: several submissions belong to {', '.join(shared)}")
    points, against, timeout = merged["points"], merged["against"], merged["timeout"]
    print(score_table(results, points))
    print(f"merged {len(files)} file(s): {len(results)} submission(s)", file=sys.stderr)
    if args.json:
        _write(args.json, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    if args.report:
        isolation = {data.get("isolation") for _, data in files}
        said = isolation.pop() if len(isolation) == 1 else "differed between the shards"
        _write(args.report, markdown_report(results, points, against, timeout, said))
    _write_exports(args, results, learners, points, against)
    return 0


# ---- end of submission files, exports and shards -------------------------------------------------


def _check_outputs(args, inputs, parser):
    """Refuse, before grading, to write a report over a notebook or into a folder."""
    names = (args.json, args.report, getattr(args, "gradescope", None), args.canvas)
    outputs = [Path(p) for p in names if p]
    if len({p.resolve() for p in outputs}) < len(outputs):
        parser.error("two of --json, --report, --gradescope and --canvas name the same file")
    for path in outputs:
        if path.is_dir():
            parser.error(f"{path} is a folder: give a file name, e.g. {path / 'grades.json'}")
        if any(path.resolve() == p.resolve() for p in inputs):
            parser.error(f"{path} is also read by this command: it would be overwritten")


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


def markdown_report(results, points, against, timeout, isolation=None):
    """A markdown report: a summary table, then each submission's verdicts and hints."""
    graded = [r for r in results if not r.error]
    mean = sum(r.score for r in graded) / len(graded) if graded else 0
    lines = [
        f"# Grades: {Path(against).name}",
        "",
        f"Graded against `{against}` ({timeout:g} s per cell): {len(results)} submission(s), "
        f"{len(results) - len(graded)} not gradable; mean {mean:.1f} of {sum(points.values())}.",
        "",
        *([f"Learners' code: {isolation}.", ""] if isolation else []),
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
