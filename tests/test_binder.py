""".binder/: the lessons on mybinder.org, built here from scratch as Binder builds them.

Binder (repo2docker) reads .binder/runtime.txt (the Python), installs .binder/requirements.txt
before the repository is copied in, then runs .binder/postBuild in the repository, which installs
autograd_lab and trusts the lessons. The fast test checks that the pinned requirements satisfy
pyproject.toml's `lab` extra (a Binder that pip had to complete would not be the one tested).
The slow one (the CI step) makes a fresh venv with runtime.txt's Python, installs
requirements.txt, runs postBuild itself, then imports the package and runs lesson 01 headless
with nbclient, as a learner's first click on Binder would.
"""

import json
import re
import shutil
import subprocess
import sys
import time

import pytest
from fresh_venv import ROOT, copy_checkout, make_venv, pip_install, run_in, under_ci

BINDER = ROOT / ".binder"
LESSON = "notebooks/01_computational_graphs.ipynb"


def _binder_python_version():
    """runtime.txt's "python-3.11" as (3, 11): repo2docker takes a major.minor version."""
    text = (BINDER / "runtime.txt").read_text().strip()
    found = re.fullmatch(r"python-(\d+)\.(\d+)", text)
    assert found, f".binder/runtime.txt should read like python-3.11, not {text!r}"
    return int(found[1]), int(found[2])


def _pins():
    """requirements.txt as {name: version}: every line pins one exact version."""
    pins = {}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            found = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9][0-9A-Za-z.+]*)", line)
            assert found, f".binder/requirements.txt pins exact versions; {line!r} does not"
            pins[found[1].lower().replace("_", "-")] = found[2]
    return pins


def _lab_requirements():
    """pyproject.toml's dependencies and `lab` extra, its self-references followed."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras, found, todo = project["optional-dependencies"], [], ["lab"]
    found += [Requirement(text) for text in project["dependencies"]]
    while todo:
        for text in extras[todo.pop()]:
            requirement = Requirement(text)
            if requirement.name == project["name"]:
                todo += sorted(requirement.extras)
            else:
                found.append(requirement)
    return found


def test_binder_pins_satisfy_the_lab_extra_and_the_python_it_supports():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    from packaging.specifiers import SpecifierSet

    pins = _pins()
    binder = {"sys_platform": "linux", "platform_system": "Linux"}  # Binder's images are Linux
    for requirement in _lab_requirements():
        if requirement.marker and not requirement.marker.evaluate(binder):
            continue
        name = requirement.name.lower().replace("_", "-")
        assert name in pins, f".binder/requirements.txt lacks {requirement} (pyproject's lab)"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f".binder/requirements.txt pins {name}=={pins[name]}, outside {requirement}"
        )
    major, minor = _binder_python_version()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert SpecifierSet(project["requires-python"]).contains(f"{major}.{minor}")
    # postBuild installs the package (environment.yml/requirements.txt run before the source is
    # there, so no `-e .` or `.` may stand in them) and trusts the lessons
    post_build = (BINDER / "postBuild").read_text()
    assert (BINDER / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"
    assert 'pip install --no-cache-dir ".[lab]"' in post_build
    assert "jupyter trust notebooks/" in post_build


def _binder_python():
    """A Python of runtime.txt's version: this one, or python3.X on PATH."""
    major, minor = _binder_python_version()
    if sys.version_info[:2] == (major, minor):
        return sys.executable
    found = shutil.which(f"python{major}.{minor}")
    if found:
        return found
    message = f"Binder's Python {major}.{minor} (.binder/runtime.txt) is not on this machine"
    if under_ci():
        pytest.fail(f"{message}; CI must build Binder's environment with it")
    pytest.skip(message)


# Run in the fresh venv: lesson 01 top to bottom, as a learner's first click on Binder does
RUN_LESSON = """
import json, sys
import nbformat
from nbclient import NotebookClient

notebook = nbformat.read(sys.argv[1], as_version=4)
# the kernel starts in the lesson's folder, as Jupyter starts it
folder = {"metadata": {"path": "notebooks"}}
NotebookClient(notebook, timeout=600, kernel_name="python3", resources=folder).execute()
outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
print(json.dumps({
    "code cells": sum(cell.cell_type == "code" for cell in notebook.cells),
    "errors": [o.get("ename") for o in outputs if o.output_type == "error"],
    "pictures": sum(
        "image/svg+xml" in o.get("data", {}) or "application/vnd.jupyter.widget-view+json"
        in o.get("data", {}) for o in outputs
    ),
}))
"""

# Run in the fresh venv: what postBuild left (the package installed from its copy, not the
# checkout; numba and the CUDA simulator for lessons 08-09; the lessons trusted)
CHECK_INSTALL = """
import json, glob, sys
import autograd_lab as ag, numba, numba_cuda
from nbformat import read
from nbformat.sign import NotebookNotary

notary = NotebookNotary()
print(json.dumps({
    "python": list(sys.version_info[:2]),
    "package": ag.__file__,
    "trusted": [notary.check_signature(read(path, as_version=4))
                for path in sorted(glob.glob("*.ipynb"))],
    "compiled": ag.compile(lambda x: (x * 2).tanh().sum())(ag.zeros(3)).item(),
}))
"""


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_binder_environment_builds_from_scratch_and_runs_lesson_01(tmp_path):
    python = _binder_python()
    source = copy_checkout(tmp_path / "repo")
    started = time.monotonic()
    venv = make_venv(tmp_path / "venv", python)
    pip_install(venv, "-r", ".binder/requirements.txt", cwd=source)
    requirements = time.monotonic() - started
    started = time.monotonic()
    run_in(venv, "bash", ".binder/postBuild", cwd=source)  # exactly what Binder runs
    post_build = time.monotonic() - started

    # from the lessons' folder, as a notebook's kernel runs: the checkout is not on sys.path
    checked = run_in(venv, "python", "-c", CHECK_INSTALL, cwd=source / "notebooks").stdout
    checked = json.loads(checked)
    assert tuple(checked["python"]) == _binder_python_version()
    assert checked["package"].startswith(str(venv)), checked["package"]  # installed, not -e
    assert len(checked["trusted"]) >= 10 and all(checked["trusted"]), checked["trusted"]
    assert checked["compiled"] == 0.0
    # JupyterLab in that venv finds the widget's front end (anywidget's prebuilt extension)
    extensions = run_in(venv, "jupyter", "labextension", "list", cwd=source)
    listed = extensions.stdout + extensions.stderr
    for extension in ("anywidget", "@jupyter-widgets/jupyterlab-manager"):
        assert re.search(rf"{re.escape(extension)}.*enabled.*OK", listed), listed

    started = time.monotonic()
    lesson = run_in(venv, "python", "-c", RUN_LESSON, LESSON, cwd=source, timeout=900)
    ran = time.monotonic() - started
    report = json.loads(lesson.stdout.strip().splitlines()[-1])
    print(
        f"Binder environment from scratch: requirements {requirements:.0f} s, "
        f"postBuild {post_build:.0f} s, lesson 01 {ran:.0f} s"
    )
    assert report["errors"] == [], report
    assert report["code cells"] > 10 and report["pictures"] >= 3, report


def test_readme_says_how_to_launch_binder():
    readme = (ROOT / "README.md").read_text()
    assert "mybinder.org/v2/gh/" in readme
    assert "urlpath=lab/tree/notebooks/01_computational_graphs.ipynb" in readme
    assert ".binder/" in readme


def test_binder_files_are_what_repo2docker_reads():
    """repo2docker uses .binder/ when it exists and then ignores the root's set-up files."""
    assert {p.name for p in BINDER.iterdir()} == {"runtime.txt", "requirements.txt", "postBuild"}
    done = subprocess.run(["bash", "-n", str(BINDER / "postBuild")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
