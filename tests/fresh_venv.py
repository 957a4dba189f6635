"""Fresh virtual environments for the set-up tests: a clean copy of the checkout, a new venv, pip.

What a learner (or Binder) does from nothing, done by tests/test_without_numba.py and
tests/test_binder.py. Each venv starts empty; pip's cache is used, so a second run downloads
nothing. Commands run with an environment cleaned of what points back at this checkout or this
machine's Jupyter set-up (PYTHONPATH, VIRTUAL_ENV, ~/.local/share/jupyter): they see only the venv.

Without a network pip cannot install, and the test is skipped, except under CI=true, where that
is a failure (CI must prove the set-up).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = "Scripts" if os.name == "nt" else "bin"
# what pip prints when it cannot reach an index (not when a requirement is wrong)
NO_NETWORK = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Failed to establish a new connection",
)
NOT_COPIED = {".git", ".venv", "test-artifacts", "build", "dist", "__pycache__", ".pytest_cache"}


def under_ci():
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def copy_checkout(destination):
    """The files of this checkout that git tracks or would track (not .venv, not build output)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
    )
    if listed.returncode != 0:  # not a git checkout (an sdist, say): copy all but the known junk
        shutil.copytree(ROOT, destination, ignore=lambda folder, names: NOT_COPIED & set(names))
        return destination
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet committed is listed too
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def clean_environment(venv, home):
    """os.environ with the venv first on PATH and Jupyter's folders in `home` (a temporary one)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
        and not key.startswith(("JUPYTER", "IPYTHON"))
    }
    env["PATH"] = f"{venv / BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["JUPYTER_DATA_DIR"] = str(home / "jupyter-data")
    env["JUPYTER_CONFIG_DIR"] = str(home / "jupyter-config")
    env["JUPYTER_RUNTIME_DIR"] = str(home / "jupyter-runtime")
    env["IPYTHONDIR"] = str(home / "ipython")
    env["MPLCONFIGDIR"] = str(home / "matplotlib")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def make_venv(path, python=sys.executable):
    """A new, empty virtual environment at `path`, made by `python`."""
    subprocess.run([python, "-m", "venv", str(path)], check=True, timeout=300)
    (path / "home").mkdir()
    return path


def run_in(venv, program, *args, cwd, check=True, timeout=900):
    """Run <program> (the venv's, else one on PATH) with the clean environment; output as text."""
    in_venv = venv / BIN / program
    done = subprocess.run(
        [str(in_venv) if in_venv.exists() else program, *map(str, args)],
        cwd=cwd,
        env=clean_environment(venv, venv / "home"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and done.returncode != 0:
        pytest.fail(
            f"{program} {' '.join(map(str, args))} failed ({done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done


def pip_install(venv, *requirements, cwd):
    """pip install into the venv; skipped without a network (a failure under CI).

    --no-compile: pip would byte-compile every module it installs (jupyterlab, matplotlib,
    numba: tens of seconds); Python compiles what it imports anyway, so the venv works the same.
    """
    command = ["-m", "pip", "install", "--no-compile", *requirements]
    done = run_in(venv, "python", *command, cwd=cwd, check=False)
    if done.returncode != 0:
        output = done.stdout[-4000:] + done.stderr[-4000:]
        if any(sign in output for sign in NO_NETWORK) and not under_ci():
            pytest.skip(f"pip cannot reach a package index, so no fresh venv:\n{output[-1500:]}")
        pytest.fail(f"pip install {' '.join(requirements)} failed:\n{output}")
    return done
