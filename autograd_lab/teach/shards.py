"""Grading a class in shards: n CI jobs each grade a share of it, and one job merges their grades.

    autograd-lab grade class/ --against lesson.ipynb --shard 1/3 --json shard1.json   # job 1
    autograd-lab grade class/ --against lesson.ipynb --shard 2/3 --json shard2.json   # job 2
    autograd-lab grade class/ --against lesson.ipynb --shard 3/3 --json shard3.json   # job 3
    autograd-lab merge-grades shard*.json --json grades.json --report grades.md      # then once

The split is a rule anyone can check by hand: the submissions (folders already expanded into
their notebooks) are sorted by path, and shard i of n grades the i-th, the (i+n)-th, the
(i+2n)-th, ... (counting from 1). Every job sees the same class and sorts it the same way, so the
n shards are disjoint and together hold every submission exactly once. Taking every n-th one
(rather than n blocks) also spreads the learners of one slow folder over the jobs.

Merging refuses what would give wrong grades silently: files graded against different lessons
(the instructor notebook's SHA-256 differs) or with different points or timeouts, and a
submission graded in two files (shards of different splits, or one file given twice).
"""

import re

from .grader import ExerciseResult, Result

SHARD_FORM = "--shard takes I/N, shard I of N counted from 1, e.g. --shard 1/4 to --shard 4/4"


def parse_shard(text):
    """(i, n) from "i/n"; ValueError saying the form for anything else.

    >>> parse_shard("2/3")
    (2, 3)
    """
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise ValueError(f"{SHARD_FORM}; got {text!r}")
    i, n = int(match[1]), int(match[2])
    if not 1 <= i <= n:
        raise ValueError(f"{SHARD_FORM}; got {text!r}: I must be between 1 and N")
    return i, n


def shard(paths, i, n):
    """Shard `i` of `n` of the submissions at `paths`: sorted by path, every n-th from the i-th.

    >>> shard(["c.ipynb", "a.ipynb", "b.ipynb", "d.ipynb"], 1, 2)
    ['a.ipynb', 'c.ipynb']
    """
    return sorted(paths, key=str)[i - 1 :: n]


# ---- merging -------------------------------------------------------------------------------------


class MergeError(ValueError):
    """The --json files are not shards of one grading; the message says which and why."""


# What must be equal in every shard's --json for the shards to be one grading of one lesson.
SAME_IN_EVERY_SHARD = ("lesson_sha256", "points", "timeout")


def merge_grades(files):
    """One `--json` document from the shards' documents, given as a list of (file name, data).

    The submissions come sorted by path, as `--shard` orders them, so the merged file of a class
    lists the same grades as grading it in one job with `--shard 1/1`.
    """
    if not files:
        raise MergeError("no --json files to merge")
    for name, data in files:
        if not isinstance(data, dict) or not isinstance(data.get("submissions"), list):
            raise MergeError(f"{name} is not a --json file written by `autograd-lab grade`")
        if not isinstance(data.get("points"), dict):  # written before merging existed
            raise MergeError(f"{name} does not list the lesson's points: grade its shard again")
    first_name, first = files[0]
    for name, data in files[1:]:
        for key in SAME_IN_EVERY_SHARD:
            if data.get(key) != first.get(key):
                raise MergeError(
                    f"{name} and {first_name} were not graded alike ({key}: {data.get(key)!r} "
                    f"and {first.get(key)!r}): merge only the shards of one grading run"
                )
    graded_in = {}  # submission path -> the file that graded it
    for name, data in files:
        for submission in data["submissions"]:
            path = submission["submission"]
            if path in graded_in:
                raise MergeError(
                    f"{path} was graded in both {graded_in[path]} and {name}: the shards of a "
                    "class share no submission (use the same N and a different I in each job)"
                )
            graded_in[path] = name
    merged = {key: value for key, value in first.items() if key != "submissions"}
    everything = [submission for _, data in files for submission in data["submissions"]]
    merged["submissions"] = sorted(everything, key=lambda submission: submission["submission"])
    return merged


def results_from_json(data):
    """The Result of each submission of a --json document, to print or export them again."""
    results = []
    for number, submission in enumerate(data["submissions"], start=1):
        try:
            exercises = {e: ExerciseResult(**x) for e, x in submission["exercises"].items()}
            keys = ("submission", "score", "max_score", "error")
            fields = {key: submission[key] for key in keys}
        except (AttributeError, KeyError, TypeError) as error:
            why = f"submission {number} of the --json data is incomplete: {error!r}"
            raise MergeError(why) from None
        results.append(Result(**fields, exercises=exercises))
    return results
