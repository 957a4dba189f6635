#!/usr/bin/env python3
"""Set up autograd_lab and run it: the README's two commands.

    python3 dev.py lab     # create .venv, install, open the lessons (notebooks/) in JupyterLab
    python3 dev.py test    # create .venv, install, run every check (ruff + pytest)
    python3 dev.py lessons [NOTEBOOK ...]  # re-run lessons (default: notebooks/*) and store
                                           # their outputs as pictures (teach/lesson_outputs.py)

Needs only Python >= 3.10 with pip and venv. Everything goes into ./.venv; delete it to start over.
Installs are skipped when pyproject.toml has not changed since the last successful one.

Options for `test`: anything after `--` goes to pytest (`python3 dev.py test -- -k engine -x`).
Environment: AUTOGRAD_LAB_NO_TORCH=1 skips installing PyTorch (the test oracle); the oracle tests
are then skipped. Under CI (CI=true) a failed PyTorch install is an error, not a skip.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
TORCH = "torch==2.13.0"  # the oracle version the tests are written against


def say(message):
    print(f"[dev.py] {message}", flush=True)


def run(*command, check=True):
    say(" ".join(str(c) for c in command))
    result = subprocess.run([str(c) for c in command], cwd=ROOT)
    if check and result.returncode != 0:
        sys.exit(result.returncode)
    return result.returncode


def ensure_venv():
    if sys.version_info < (3, 10):  # noqa: UP036 - says so clearly to users of older Pythons
        sys.exit(f"autograd_lab needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        say(f"creating the virtual environment in {VENV}")
        run(sys.executable, "-m", "venv", VENV)


def ensure_installed(extra):
    """pip install -e .[extra] unless this exact pyproject.toml was installed already."""
    stamp = VENV / f".installed-{extra}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PYTHON, "-m", "pip", "install", "--quiet", "-e", f".[{extra}]")
    if extra == "test":
        ensure_torch()
    stamp.write_text(digest)


def ensure_torch():
    if os.environ.get("AUTOGRAD_LAB_NO_TORCH"):
        say("AUTOGRAD_LAB_NO_TORCH is set: PyTorch oracle tests will be skipped")
        return
    code = run(PYTHON, "-m", "pip", "install", "--quiet", TORCH, check=False)
    if code != 0:
        if os.environ.get("CI"):
            sys.exit(f"could not install {TORCH}; CI must run the oracle tests")
        say(f"could not install {TORCH}: the PyTorch oracle tests will be skipped")


def trust_lessons():
    """Trust the course's own notebooks (lessons and exercises): JupyterLab then shows every
    output of theirs as it was stored, scripts and SVG included. A notebook you add is not."""
    lessons = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(ROOT.glob("exercises/*.ipynb"))
    if lessons:
        say(f"trusting the {len(lessons)} notebooks of notebooks/ and exercises/")
        subprocess.run([str(BIN / "jupyter"), "trust", *map(str, lessons)], cwd=ROOT, check=False)


def configure_nbconvert(folder=VENV / "etc" / "jupyter"):
    """`jupyter nbconvert --execute` in this venv stores no widget state: with it, the HTML would
    prefer the live widget (which needs the widget's JavaScript from a CDN) to its picture."""
    path = folder / "jupyter_nbconvert_config.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config.setdefault("ExecutePreprocessor", {})["store_widget_state"] = False
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2) + "\n")


def lab(args):
    ensure_venv()
    ensure_installed("lab")
    configure_nbconvert()
    (ROOT / "notebooks").mkdir(exist_ok=True)
    trust_lessons()
    os.chdir(ROOT)
    # Serve the whole course (notebooks/, exercises/) and open the browser on the lessons.
    command = [str(BIN / "jupyter"), "lab", "--LabApp.default_url=/lab/tree/notebooks", *args]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in args:
        command.append("--allow-root")  # containers and Binder often run as root; Jupyter refuses
    say(" ".join(command))
    if os.name == "nt":
        sys.exit(subprocess.call(command))
    os.execv(command[0], command)


def lessons(args):
    """Re-run lessons on a fresh kernel and store their outputs (see teach/lesson_outputs.py)."""
    ensure_venv()
    ensure_installed("lab")
    paths = args or sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb"))
    run(PYTHON, "-m", "autograd_lab.teach.lesson_outputs", *paths)


def test(args):
    ensure_venv()
    ensure_installed("test")
    configure_nbconvert()
    run(PYTHON, "-m", "ruff", "check", ".")
    run(PYTHON, "-m", "ruff", "format", "--check", ".")
    pytest_args = args[1:] if args[:1] == ["--"] else args
    code = run(PYTHON, "-m", "pytest", *pytest_args, check=False)
    if code == 5:  # pytest's "collected no tests": a test run that tests nothing is a failure
        say("pytest collected no tests: failing, because a run that checks nothing proves nothing")
        sys.exit(1)
    # The generated student notebooks fail their checks by design, so they run apart under
    # --nbval-lax (outputs not compared; errors allowed in cells tagged raises-exception).
    # addopts is cleared because it holds --nbval. A run narrowed by pytest arguments skips this.
    if not pytest_args and any((ROOT / "exercises").glob("*.ipynb")):
        lax = ["--nbval-lax", "-p", "no:cacheprovider", "-o", "addopts=", "-ra", "exercises/"]
        exercises = run(PYTHON, "-m", "pytest", *lax, check=False)
        if exercises not in (0, 5):  # 5 (nothing collected) only fails the main run
            code = code or exercises
    sys.exit(code)


def main():
    commands = {"lab": lab, "lessons": lessons, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        sys.exit(2)
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
