"""Reading a learner's submission safely: a regular notebook file, or a SubmissionError saying why.

    >>> from autograd_lab.teach.submission import read_notebook
    >>> read_notebook("class/alice/01_graphs.ipynb")["nbformat"]
    4
    >>> read_notebook("class/bob/01_graphs.ipynb")   # bob committed a link to the solutions
    SubmissionError: class/bob/01_graphs.ipynb is a symbolic link; submit the notebook file itself

A submission is written by someone who may want a better grade than their work deserves, so the
file is read in careful steps:

1. **The file** (`read_submission_bytes`). `lstat` looks at the path itself, without following a
   link: only a regular file is read, and no folder below the working folder may be a link. A
   symbolic link could point at the instructor's notebook (full marks for nothing) or at
   `/dev/zero` (endless bytes); a FIFO would block the grader forever; a device or a socket is
   no notebook. The file is then opened without following links
   and without blocking (`O_NOFOLLOW | O_NONBLOCK`), and `fstat` on the open file checks that it
   is still the same regular file: a path swapped for a link or a FIFO between the two looks is
   caught. At most `max_size + 1` bytes are read, so a huge file costs nothing.
2. **The notebook** (`parse_notebook`). UTF-8 text, JSON, nested at most `MAX_DEPTH` deep, an
   nbformat 4 notebook whose cells are objects with a text `source` and an object `metadata`:
   exactly what the grader relies on. Anything else is a SubmissionError naming what is wrong and
   where (the cell number, counted from 1), so a broken file never reaches the grader's code.

3. **A class folder** (`find_notebooks`). Every `.ipynb` entry is listed, whatever it is, so a
   link or a FIFO gets its own error entry from step 1 instead of vanishing from the class; links
   to folders are listed too, never followed; hidden folders (`.ipynb_checkpoints`) are skipped.

What Jupyter opens, we open: Windows line endings are JSON whitespace, so they are fine. A UTF-8
byte-order mark is refused, as JupyterLab and `nbformat.read` refuse it ("does not appear to be
JSON"), with a message saying how to fix the file.
"""

import errno
import json
import os
import stat
from pathlib import Path

DEFAULT_MAX_SIZE = 20 * 1024 * 1024  # bytes: lesson notebooks with outputs are well under 5 MiB
MAX_DEPTH = 100  # JSON nesting: real notebooks stay below 20, even with rich outputs


class SubmissionError(ValueError):
    """A submission that is not a readable notebook: it gets an error entry instead of a score."""


# ---- the file ------------------------------------------------------------------------------------

# Flags the platform may lack (Windows has neither link-refusing nor non-blocking opens): 0 then.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a link at the last step of the path: refuse, do not follow
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO or device must not make open() or read() wait
    | getattr(os, "O_BINARY", 0)  # Windows: bytes as they are, no newline translation
)


def read_submission_bytes(path, max_size=DEFAULT_MAX_SIZE):
    """The bytes of the regular file at `path`; SubmissionError for anything else or bigger.

    >>> len(read_submission_bytes("class/alice/01_graphs.ipynb"))
    48213
    """
    path = Path(path)
    _refuse_linked_folders(path)
    try:
        before = os.lstat(path)  # the path itself: a link is seen as a link
    except FileNotFoundError:
        raise SubmissionError(f"{path}: file not found") from None
    except OSError as error:
        raise SubmissionError(f"{path} could not be read: {error.strerror}") from None
    _refuse_unless_regular(path, before.st_mode)
    _refuse_if_too_big(path, before.st_size, max_size)

    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP or os.path.islink(path):  # O_NOFOLLOW met a link
            raise SubmissionError(
                f"{path} is a symbolic link; submit the notebook file itself"
            ) from None
        raise SubmissionError(f"{path} could not be read: {error.strerror}") from None
    try:
        now = os.fstat(descriptor)  # the file we really opened
        _refuse_unless_regular(path, now.st_mode)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise SubmissionError(f"{path} was replaced while it was being read: grade it again")
        _refuse_if_too_big(path, now.st_size, max_size)
        data = _read_at_most(descriptor, max_size + 1)
    finally:
        os.close(descriptor)
    _refuse_if_too_big(path, len(data), max_size)  # it may have grown since fstat
    return data


def _refuse_linked_folders(path):
    """SubmissionError if a folder on `path`, below the working folder, is a symbolic link.

    O_NOFOLLOW guards only the last step of a path: `exercises/01.ipynb` would still be read
    through a committed link `exercises -> ../instructor/solutions`. The working folder is the
    grader's own, so every folder below it is checked; a path elsewhere is the grader's own
    choice up to its last step (system folders such as macOS's /tmp are links themselves).
    """
    working = Path.cwd()
    if path.is_absolute() and not path.is_relative_to(working):
        return
    below = path.relative_to(working) if path.is_absolute() else path
    for folder in reversed(below.parents[:-1]):  # "a/b/c.ipynb": a, then a/b (not ".")
        if (working / folder).is_symlink():
            raise SubmissionError(
                f"{path} lies in {folder}, which is a symbolic link that grading does not "
                "follow: submit the notebook in a real folder"
            )


def _refuse_unless_regular(path, mode):
    """SubmissionError unless `mode` (from lstat or fstat) is a regular file's."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode) and os.path.isdir(path):  # a class folder's link to a folder
        raise SubmissionError(
            f"{path} is a symbolic link to a folder, which grading does not follow: "
            "put the notebooks themselves in the class folder"
        )
    if stat.S_ISLNK(mode):
        raise SubmissionError(f"{path} is a symbolic link; submit the notebook file itself")
    if stat.S_ISDIR(mode) and not os.access(path, os.R_OK | os.X_OK):
        raise SubmissionError(
            f"{path} is a folder that cannot be read: its notebooks were not graded"
        )
    if stat.S_ISDIR(mode):
        raise SubmissionError(f"{path} is a folder, not a notebook")
    kinds = [
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    kind = next((words for test, words in kinds if test(mode)), "an unusual kind of file")
    raise SubmissionError(f"{path} is {kind}, not a notebook file: submit the .ipynb file itself")


def _refuse_if_too_big(path, size, max_size):
    if size > max_size:
        raise SubmissionError(
            f"{path} is larger than the limit of {_mib(max_size)}: clear the outputs "
            "(Edit > Clear Outputs of All Cells in JupyterLab), save, and submit again"
        )


def _mib(size):
    return f"{size / 2**20:g} MiB"


def _read_at_most(descriptor, limit):
    """Up to `limit` bytes from an open file, however the operating system splits the reads."""
    chunks, total = [], 0
    while total < limit:
        chunk = os.read(descriptor, min(limit - total, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


# ---- a class folder ------------------------------------------------------------------------------


def find_notebooks(folder):
    """What to grade in a class folder: every `.ipynb` entry in it and its subfolders, sorted.

    >>> find_notebooks("class")
    [PosixPath('class/alice/01_graphs.ipynb'), PosixPath('class/bob/01_graphs.ipynb')]

    Hidden entries (`.ipynb_checkpoints`, `.git`) are skipped. A `.ipynb` entry that is not a
    regular file - a link, a FIFO, a device - is listed all the same, so that grading reports it
    (read_notebook says what it is) instead of dropping it without a word. Links to folders are
    never followed, only listed, and so is a subfolder that cannot be read.
    """
    found, folders = [], [Path(folder)]
    while folders:
        current = folders.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:  # unreadable: its grade entry says so
            found.append(current)
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                folders.append(path)
            elif entry.name.endswith(".ipynb") or (entry.is_symlink() and entry.is_dir()):
                found.append(path)
    return sorted(found)


# ---- the notebook --------------------------------------------------------------------------------


def read_notebook(path, max_size=DEFAULT_MAX_SIZE):
    """The notebook at `path` as a dict, or a SubmissionError saying in words why it is not one.

    Plain JSON on purpose: the grader needs only the cells, and a notebook that breaks nbformat's
    schema in some unrelated corner can still be graded.
    """
    return parse_notebook(read_submission_bytes(path, max_size), path)


def parse_notebook(data, path):
    """The notebook dict from the bytes of the file at `path` (named in the messages only)."""
    path = Path(path)
    if data.startswith(b"\xef\xbb\xbf"):
        raise SubmissionError(
            f"{path} starts with a byte-order mark (BOM), which Jupyter cannot open either: "
            "save it again from JupyterLab, or save it as UTF-8 without BOM in your editor"
        )
    if b"\x00" in data:
        raise SubmissionError(f"{path} holds binary data (NUL bytes): it is not a notebook")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SubmissionError(
            f"{path} is not UTF-8 text (byte {error.start} cannot be decoded): "
            "a notebook is a UTF-8 JSON file; save it again from JupyterLab"
        ) from None
    try:
        notebook = json.loads(text)
    except RecursionError:  # the JSON parser recurses once per level of nesting
        raise SubmissionError(f"{path} is not a notebook: its JSON is nested too deeply") from None
    except json.JSONDecodeError as error:
        if path.suffix != ".ipynb":
            raise SubmissionError(f"{path} is not a notebook (a .ipynb file)") from None
        where = f"{error.msg} at line {error.lineno}, column {error.colno}"
        raise SubmissionError(f"{path} is not a notebook: invalid JSON ({where})") from None
    if _depth(notebook) > MAX_DEPTH:
        raise SubmissionError(
            f"{path} is not a notebook: its JSON is nested more than {MAX_DEPTH} levels deep"
        )
    _check_structure(notebook, path)
    return notebook


def _depth(value):
    """How deeply lists and dicts nest in `value` (a number or string is 0); no recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value)
    return deepest


def _check_structure(notebook, path):
    """SubmissionError for the first thing in the notebook the grader could not rely on."""
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise SubmissionError(f"{path} is JSON but not a Jupyter notebook (no list of cells)")
    if notebook.get("nbformat") != 4:
        raise SubmissionError(
            f"{path} is in notebook format {notebook.get('nbformat')!r}, not 4: "
            "open it in JupyterLab and save it again"
        )
    if not isinstance(notebook.get("metadata", {}), dict):
        raise SubmissionError(f"{path}: the notebook's metadata is not a JSON object")
    for number, cell in enumerate(notebook["cells"], start=1):
        where = f"{path}, cell {number}"
        if not isinstance(cell, dict):
            raise SubmissionError(f"{where} is {_kind(cell)}, not a cell (a JSON object)")
        if not isinstance(cell.get("cell_type", ""), str):
            raise SubmissionError(f"{where}: its cell_type is {_kind(cell['cell_type'])}")
        if not isinstance(cell.get("metadata", {}), dict):
            raise SubmissionError(f"{where}: its metadata is {_kind(cell['metadata'])}")
        source = cell.get("source", "")
        if isinstance(source, list):
            not_text = [line for line in source if not isinstance(line, str)]
            if not_text:
                raise SubmissionError(
                    f"{where}: its source is a list holding {_kind(not_text[0])}, "
                    "not only strings (lines of text)"
                )
        elif not isinstance(source, str):
            raise SubmissionError(
                f"{where}: its source is {_kind(source)}, not text (a string or a list of strings)"
            )


def _kind(value):
    """A JSON value's kind in words, for messages: 'a list', 'a number', 'null'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), "a value")
