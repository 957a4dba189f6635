"""numba is optional: the eager engine runs on numpy alone, and what needs numba says which extra.

Two checks. A fast one runs Python in a subprocess whose import system refuses numba (a
sys.meta_path finder, as if it were not installed): import, eager ops, backward, random draws,
set_num_threads, the viewer's snapshot, and the errors of `ag.compile` and device="cuda".
A slow one builds a fresh virtual environment with `pip install ".[notebooks]"` (no numba in it)
and runs lessons 1-7 there under nbval: what `pip install autograd_lab` gives a learner.
"""

import json
import subprocess
import sys
import textwrap
import time

import pytest
from fresh_venv import ROOT, copy_checkout, make_venv, pip_install, run_in

# Python's import system, told that numba, numba-cuda and llvmlite are not installed
BLOCK_NUMBA = textwrap.dedent(
    """
    import sys

    class NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numba", "numba_cuda", "llvmlite"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    """
)

WITHOUT_NUMBA = textwrap.dedent(
    """
    import json
    import sys

    import autograd_lab as ag
    from autograd_lab.viz import record, snapshot, to_svg

    report = {}
    # eager ops and backward: f(x) = sum(tanh(x * w) + x ** 2) at x = [0.5, -1.0], w = 2
    x = ag.tensor([0.5, -1.0], dtype=ag.float64, requires_grad=True)
    w = ag.tensor(2.0, dtype=ag.float64, requires_grad=True)
    with record() as graph:
        y = ((x * w).tanh() + x**2).sum()
        y.backward()
    report["y"] = y.item()
    report["x.grad"] = x.grad.tolist()
    report["w.grad"] = w.grad.item()
    report["grad_fn"] = type(y.grad_fn).__name__
    # what the viewer draws of it (the widget and the stored picture read this snapshot)
    picture = snapshot(y, recording=graph, names={"x": x, "w": w, "y": y})
    report["labels"] = [node["label"] for node in picture.nodes]
    report["svg"] = to_svg(picture)[:4]
    # a draw large enough to take the compiled path when numba is there: numpy makes it here
    ag.manual_seed(7)
    report["randn"] = ag.randn(20_000)[-3:].tolist()
    ag.set_num_threads(2)
    report["threads"] = ag.get_num_threads()
    report["cuda.is_available"] = ag.cuda.is_available()
    # a compiled function without fused kernels is trace + replay: numpy only
    plain = ag.compile(lambda a: (a * 3).exp().sum(), fuse=False)
    report["compile(fuse=False)"] = plain(ag.zeros(4)).item()

    def error_of(action):
        try:
            action()
        except Exception as error:
            return [type(error).__name__, str(error), isinstance(error, RuntimeError)]
        return None

    report["compile"] = error_of(lambda: ag.compile(lambda a: a.tanh()))
    report["device"] = error_of(lambda: ag.ones(2, device="cuda"))
    report[".cuda()"] = error_of(lambda: ag.ones(2).cuda())
    report["simulator"] = error_of(ag.cuda.use_simulator_if_no_gpu)
    report["numba loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite"))
    print(json.dumps(report))
    """
)


def _run_without_numba(program):
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_NUMBA + program],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_eager_engine_runs_and_names_the_extra_without_numba():
    report = _run_without_numba(WITHOUT_NUMBA)

    import numpy as np

    x, w = np.array([0.5, -1.0]), 2.0
    tanh = np.tanh(x * w)
    assert report["y"] == pytest.approx(float((tanh + x**2).sum()), rel=1e-12)
    assert report["x.grad"] == pytest.approx(((1 - tanh**2) * w + 2 * x).tolist(), rel=1e-12)
    assert report["w.grad"] == pytest.approx(float(((1 - tanh**2) * x).sum()), rel=1e-12)
    assert report["grad_fn"] == "SumBackward0"
    assert {"x", "w", "y"} <= set(report["labels"]) and report["svg"] == "<svg"
    assert report["threads"] == 2 and report["cuda.is_available"] is False
    assert report["compile(fuse=False)"] == pytest.approx(4.0)

    # the same bits as the compiled path draws (when numba is here, this process has it)
    import autograd_lab as ag

    ag.manual_seed(7)
    assert report["randn"] == ag.randn(20_000)[-3:].tolist()

    for what, extra, feature in [
        ("compile", "compile", "ag.compile's fused kernels"),
        ("device", "cuda", "device='cuda'"),
        (".cuda()", "cuda", "device='cuda'"),
        ("simulator", "cuda", "device='cuda'"),
    ]:
        kind, message, is_runtime_error = report[what]
        assert kind == "MissingExtraError", (what, kind, message)
        assert is_runtime_error, what  # code written for torch catches RuntimeError for CUDA
        assert feature in message and "is not installed" in message, message
        assert f'pip install "autograd_lab[{extra}]"' in message, message
    assert report["numba loaded"] == []  # nothing above so much as imported numba


def test_a_running_fused_kernel_names_the_extra_when_numba_is_gone():
    """A compiled function made while numba was there, run after it went (the backstop in
    codegen.load): an error naming the extra, never a silent fall back to unfused ops."""
    program = textwrap.dedent(
        """
        import json, sys
        import autograd_lab as ag
        from autograd_lab import optional
        require = optional.require
        optional.require = lambda module, feature: None  # numba was there when f was made ...
        f = ag.compile(lambda a: (a * 2).tanh().sum())
        optional.require = require  # ... and is gone when it first runs
        try:
            f(ag.ones(3, requires_grad=True))
        except ModuleNotFoundError as error:
            print(json.dumps([type(error).__name__, str(error)]))
        """
    )
    kind, message = _run_without_numba(program)
    assert kind == "MissingExtraError"
    assert 'pip install "autograd_lab[compile]"' in message and "fused kernel" in message


# the lessons' stored outputs, compared as the main suite compares them (pyproject's addopts
# hold options for plugins the fresh venv does not have)
NBVAL = ["-p", "no:cacheprovider", "-o", "addopts=", "-q", "--nbval"]
NBVAL += ["--nbval-sanitize-with=tests/nbval_sanitize.cfg"]
LESSONS = sorted(p.name for p in (ROOT / "notebooks").glob("0[1-7]_*.ipynb"))


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_lessons_1_to_7_run_in_a_fresh_venv_without_numba(tmp_path):
    """`pip install ".[notebooks]"` in a new venv: numba is not there, and lessons 1-7 reproduce
    their stored outputs under nbval (the CI step of issue 16: numba is optional)."""
    assert len(LESSONS) == 8, LESSONS  # 01 (two lessons) to 07
    source = copy_checkout(tmp_path / "autograd_lab")
    started = time.monotonic()
    venv = make_venv(tmp_path / "venv")
    pip_install(venv, ".[notebooks]", "nbval", "pytest", cwd=source)
    installed = time.monotonic() - started
    probe = run_in(venv, "python", "-c", "import numba", cwd=tmp_path, check=False)
    assert probe.returncode != 0 and "No module named 'numba'" in probe.stderr, probe.stderr
    started = time.monotonic()
    done = run_in(
        venv,
        "python",
        "-m",
        "pytest",
        *NBVAL,
        *[f"notebooks/{name}" for name in LESSONS],
        cwd=source,
        check=False,
        timeout=1200,
    )
    ran = time.monotonic() - started
    print(f"fresh venv without numba: install {installed:.0f} s, lessons 1-7 {ran:.0f} s")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]
