"""The benchmark suite runs end to end and its references compute the right numbers.

No timing is asserted (the machine is shared): only that every row is produced, with numbers,
a verdict and a passing same-numbers check, and that the hand-written references (the numpy floor
and the scalar engine) agree with PyTorch.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from models import init_weights  # noqa: E402
from numpy_floor import NumpyMLP  # noqa: E402
from scalar_engine import Value  # noqa: E402

ALL_ROWS = ["1", "1", "1", "1", "2", "3a", "3a", "3b", "3b", "4", "5", "5", "5"]
ALL_ROWS += ["6a", "6a", "6b", "6b", "6c", "6c"] + ["7"] * 5


def run_suite(tmp_path, *args, without_torch=False):
    """Run benchmarks/run.py --quick in a fresh interpreter; return (stdout, the JSON report)."""
    report = tmp_path / "report.json"
    env = dict(os.environ, BENCHMARKS_WITHOUT_TORCH="1" if without_torch else "0")
    command = [sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--json", str(report), *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=240, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(report.read_text())


@pytest.mark.slow
def test_quick_run_produces_every_row_with_checked_numbers(tmp_path, torch):
    stdout, report = run_suite(tmp_path)
    rows = report["rows"]
    assert [r["id"] for r in rows] == ALL_ROWS
    for r in rows:
        assert r["ours"] is not None and r["ours"] > 0, r
        assert r["ref"] is not None and r["ref"] > 0, r
        assert r["ratio"] is not None, r
        assert r["check_ok"], r  # ours and the reference computed the same numbers
        if r["target"] is not None:
            assert r["verdict"] in ("✓", "✗"), r
    refs = {(r["id"], r["ref_name"]) for r in rows}
    assert {("3a", "floor"), ("3a", "torch"), ("3b", "floor"), ("3b", "torch")} <= refs
    assert ("4", "scalar") in refs and ("5", "torch") in refs
    assert ("7", "eager") in refs and ("7", "eager+hooks") in refs
    machine = report["machine"]
    assert machine["BLAS threads (numpy)"] in (1, None)  # --threads 1 (the default) is applied
    assert machine["intra-op threads (torch)"] == 1
    for word in (
        "machine:",
        "versions:",
        "threads:",
        "tiny-op chain",
        "scalar engine",
        "peak memory",
    ):
        assert word in stdout


@pytest.mark.slow
def test_without_torch_the_suite_runs_and_says_na(tmp_path):
    args = ("--only", "tiny_ops", "big_mlp", "--clock", "cpu")
    stdout, report = run_suite(tmp_path, *args, without_torch=True)
    rows = report["rows"]
    assert [r["id"] for r in rows] == ["1", "1", "1", "1", "3a", "3a", "3b", "3b"]
    for r in rows:
        assert r["ours"] is not None
        if r["ref_name"] == "torch":
            assert r["ref"] is None and r["ratio"] is None and r["verdict"] == ""
        else:  # the numpy floor needs no torch
            assert r["ratio"] is not None and r["check_ok"]
    assert "n/a" in stdout and "not installed" in stdout and "CPU time" in stdout


def test_scalar_engine_gradients_match_torch(torch):
    a, b, c = Value(0.3), Value(-1.2), Value(2.0)
    out = ((a * b + c).tanh() * (a - 0.5).exp() + (c * c).log() - (b * 3.0).relu()) * a
    out.backward()
    ta, tb, tc = (
        torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.3, -1.2, 2.0)
    )
    tout = ((ta * tb + tc).tanh() * (ta - 0.5).exp() + (tc * tc).log() - (tb * 3.0).relu()) * ta
    tout.backward()
    assert out.data == pytest.approx(tout.item(), rel=1e-12)
    for value, tensor in ((a, ta), (b, tb), (c, tc)):
        assert value.grad == pytest.approx(tensor.grad.item(), rel=1e-12)


def test_numpy_floor_loss_gradients_and_update_match_torch(torch):
    weights = [(w.astype(np.float64), b.astype(np.float64)) for w, b in init_weights([5, 4, 3, 3])]
    rng = np.random.default_rng(0)
    x, labels = rng.standard_normal((6, 5)), np.array([0, 2, 1, 1, 0, 2])
    net = NumpyMLP(weights)
    loss, grads = net.forward_backward(x.copy(), labels)

    params = [torch.tensor(a, requires_grad=True) for pair in weights for a in pair]
    h = torch.tensor(x)
    for i in range(0, len(params), 2):
        h = h @ params[i].T + params[i + 1]
        h = h.relu() if i < len(params) - 2 else h
    expected = torch.nn.functional.cross_entropy(h, torch.tensor(labels))
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-12)
    ours = [g for pair in grads for g in pair]
    for mine, param in zip(ours, params):
        np.testing.assert_allclose(mine, param.grad.numpy(), rtol=1e-10, atol=1e-12)

    net.sgd_step(grads, lr=0.5)
    for (w, b), (w0, b0), (dw, db) in zip(net.params, weights, zip(params[::2], params[1::2])):
        np.testing.assert_allclose(w, w0 - 0.5 * dw.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(b, b0 - 0.5 * db.grad.numpy(), rtol=1e-12)
