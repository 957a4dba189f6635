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

import harness  # noqa: E402
import tiny_ops  # noqa: E402
from before import rename_references  # noqa: E402
from models import init_weights  # noqa: E402
from numpy_floor import NumpyMLP  # noqa: E402
from scalar_engine import Value  # noqa: E402

ALL_ROWS = ["1"] * 6 + ["2", "3a", "3a", "3b", "3b", "4", "5", "5", "5"]
ALL_ROWS += ["6a", "6a", "6b", "6b", "6c", "6c"] + ["7"] * 5
MACHINE_FIELDS = (
    "date",
    "cpu",
    "cpus",
    "usable cores",
    "memory GiB",
    "os",
    "kernel",
    "python",
    "python implementation",
    "numpy",
    "numpy BLAS",
    "BLAS threads (numpy)",
    "numba",
    "numba threads",
    "torch",
    "intra-op threads (torch)",
    "load average",
    "autograd_lab",
    "thread variables",
)


def in_git_checkout():
    done = subprocess.run(
        ["git", "-C", str(BENCHMARKS.parent), "rev-parse", "HEAD"], capture_output=True, check=False
    )
    return done.returncode == 0


def run_suite(tmp_path, *args, without_torch=False):
    """Run benchmarks/run.py --quick in a fresh interpreter; return (stdout, the JSON report)."""
    report = tmp_path / "report.json"
    env = dict(os.environ, BENCHMARKS_WITHOUT_TORCH="1" if without_torch else "0")
    command = [sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--json", str(report), *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=280, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(report.read_text())


@pytest.mark.slow
def test_quick_run_with_before_produces_every_row_with_checked_numbers(tmp_path, torch):
    """One run covers the whole table, the "before" engine (HEAD, exported next to today's
    package) in every row, the load column and the machine's description."""
    if not in_git_checkout():
        pytest.skip("--before needs a git checkout")
    stdout, report = run_suite(tmp_path, "--before", "HEAD")
    rows = report["rows"]
    assert [r["id"] for r in rows] == ALL_ROWS
    for r in rows:
        assert r["ours"] is not None and r["ours"] > 0, r
        assert r["ref"] is not None and r["ref"] > 0, r
        assert r["ratio"] is not None, r
        assert r["before"] is not None and r["before"] > 0, r  # every row times "before" too
        assert r["ratio_after_before"] is not None, r
        assert r["check_ok"], r  # ours, before and the reference computed the same numbers
        if r["check"]:
            assert "before" in r["check"], r
        if r["target"] is not None:
            assert r["verdict"] in ("✓", "✗"), r
        load = r["load"]  # other processes' busy cores: a number on Linux, None elsewhere
        assert load is not None and load["runs"] == 1, r  # --quick: no re-runs
        assert load["other_cores"] is None or load["other_cores"] >= 0, r
    refs = {(r["id"], r["ref_name"]) for r in rows}
    assert {("3a", "floor"), ("3a", "torch"), ("3b", "floor"), ("3b", "torch")} <= refs
    assert ("4", "scalar") in refs and ("5", "torch") in refs
    assert ("7", "eager") in refs and ("7", "eager+hooks") in refs
    recipe = [r for r in rows if "'unary+tensor'" in r["what"]]
    assert len(recipe) == 2 and all("before-torch" in r["check"] for r in recipe)

    machine = report["machine"]
    assert set(MACHINE_FIELDS) <= set(machine)
    # the default thread counts, as a user's program gets them: nothing pinned, nothing set
    assert machine["intra-op threads (torch)"] == torch.get_num_threads()
    assert machine["thread variables"] == {
        name: os.environ.get(name) for name in harness.THREAD_VARIABLES
    }
    assert report["before"]["ref"] == "HEAD" and report["before"]["commit"]
    header = stdout.split("\nrow ")[0]
    for word in (
        "machine:",
        "logical cores",
        "GiB",
        "versions:",
        "numba",
        "threads (defaults",
        "before = HEAD",
        "load:",
    ):
        assert word in header, word
    table = stdout[len(header) :]
    for word in ("before", "after/before", "load", "tiny-op chain", "scalar engine", "peak memory"):
        assert word in table, word


@pytest.mark.slow
def test_without_torch_the_suite_runs_and_says_na(tmp_path):
    args = ("--only", "tiny_ops", "big_mlp", "--clock", "cpu")
    stdout, report = run_suite(tmp_path, *args, without_torch=True)
    rows = report["rows"]
    assert [r["id"] for r in rows] == ["1"] * 6 + ["3a", "3a", "3b", "3b"]
    for r in rows:
        assert r["ours"] is not None and r["load"] is not None
        assert r["before"] is None and r["pinned"] is None  # neither was asked for
        if r["ref_name"] == "torch":
            assert r["ref"] is None and r["ratio"] is None and r["verdict"] == ""
        else:  # the numpy floor needs no torch
            assert r["ratio"] is not None and r["check_ok"]
    assert "n/a" in stdout and "not installed" in stdout and "CPU time" in stdout
    assert "after/before" not in stdout


@pytest.mark.slow
def test_pinned_threads_add_a_second_ratio_column(tmp_path, torch):
    stdout, report = run_suite(tmp_path, "--only", "moons", "--pinned-threads", "1")
    (row,) = report["rows"]
    assert row["pinned"]["ratio"] is not None and row["pinned"]["check_ok"]
    assert row["ratio"] is not None  # the headline ratio is still the default-thread one
    assert "ratio 1 thr" in stdout


def test_pinned_threads_pin_torch_and_openblas_then_restore_the_defaults(torch):
    defaults = torch.get_num_threads(), harness.blas_threads()
    with harness.pinned_threads(1):
        assert torch.get_num_threads() == 1
        assert harness.blas_threads() in (1, None)  # None: no OpenBLAS found to ask
    assert (torch.get_num_threads(), harness.blas_threads()) == defaults


def test_unary_and_tensor_operand_chain_matches_torch(torch, monkeypatch):
    """The 'unary+tensor' recipe stays finite over 2,000 ops and gives PyTorch's numbers."""
    monkeypatch.setattr(harness.method, "settle", 0.0)
    results = []  # the output, then x's and w's gradients
    tiny_ops.chain_runner(torch, tiny_ops.RECIPES["unary+tensor"], 2000, False, results)()
    assert len(results) == 3 and all(np.isfinite(values).all() for values in results)
    assert 0 < np.abs(results[1]).max() < 1e3  # the gradient reaches the leaf, and stays tame
    per_op, (check, ok) = tiny_ops.measure("unary+tensor", 2000, repeats=1, warmup=0)
    assert ok and check.startswith("ours-torch"), check
    assert set(per_op) == {"ours", "torch"}


def test_a_loaded_measurement_is_run_again_and_marked(monkeypatch):
    monkeypatch.setattr(harness.method, "reruns", 2)
    monkeypatch.setattr(harness.method, "load_threshold", -1.0)  # every run counts as loaded
    calls = []
    result, load = harness.quietly(lambda: calls.append(1) or len(calls))
    if load.others is None:
        pytest.skip("no /proc/stat: the load is 'n/a' here")
    assert len(calls) == 3 and load.tries == 3 and load.loaded
    assert result in (1, 2, 3) and str(load).endswith("loaded (3 runs)")
    _, load = harness.quietly(lambda: None, rerun=False)  # memory rows: recorded only
    assert load.tries == 1


def test_other_cores_subtracts_this_process(monkeypatch):
    # 3 busy seconds on the machine over 2 s of wall time, 1 of them this process's: 1 core
    assert harness.other_cores((0.0, 10.0, 5.0), (2.0, 13.0, 6.0)) == pytest.approx(1.0)
    assert harness.other_cores((0.0, None, 5.0), (2.0, None, 6.0)) is None  # off Linux


def test_before_renames_only_references_to_its_own_modules(tmp_path):
    package = tmp_path / "autograd_lab_before"
    (package / "compile").mkdir(parents=True)
    (package / "compile" / "kernel_math.py").write_text("")
    (package / "backend.py").write_text("")
    source = (
        'lines.append("from autograd_lab.compile.kernel_math import exp32 as exp")\n'
        'module = sys.modules.get("autograd_lab.backend.cuda.array")\n'
        'name = f"autograd_lab_fused_{key}"\n'
        "hint = \"pip install 'autograd_lab[lab]'\"\n"
        'text = f"autograd_lab.Size({shape})"\n'
        "import autograd_lab.compile as compile_\n"
    )
    (package / "codegen.py").write_text(source)
    rename_references(package)
    renamed = (package / "codegen.py").read_text().splitlines()
    assert (
        renamed[0]
        == 'lines.append("from autograd_lab_before.compile.kernel_math import exp32 as exp")'
    )
    assert renamed[1] == 'module = sys.modules.get("autograd_lab_before.backend.cuda.array")'
    assert renamed[2:5] == source.splitlines()[2:5]  # other names that start the same: unchanged
    assert renamed[5] == "import autograd_lab_before.compile as compile_"


@pytest.mark.slow
def test_before_package_and_its_kernels_never_import_todays():
    """The exported package runs its own code, generated kernels included."""
    if not in_git_checkout():
        pytest.skip("--before needs a git checkout")
    script = f"""
import sys
sys.path.insert(0, {str(BENCHMARKS)!r})
import numpy as np
import before
lib = before.load("HEAD")
x = lib.tensor(np.linspace(-3, 3, 64, dtype=np.float32), requires_grad=True)
fused = lib.compile(lambda x: (x * 0.5).tanh() * x + 1.0)
fused(x).sum().backward()
kernels = [m for name, m in sys.modules.items() if name.startswith("autograd_lab_fused_")]
sources = [open(m.__file__).read() for m in kernels]
assert any("from autograd_lab_before.compile." in s and "kernel_math import" in s for s in sources), sources
assert not any("from autograd_lab.compile" in s for s in sources), sources
today = sorted(name for name in sys.modules if name.split(".")[0] == "autograd_lab")
assert not today, today
print("ok")
"""
    env = dict(os.environ, BENCHMARKS_WITHOUT_TORCH="1")
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


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


def test_instruction_count_child_runs_the_chain_forward_and_backward():
    """instructions.py's child (what valgrind runs) builds its chains and goes backward."""
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "instructions.py"),
            "--child",
            "autograd_lab",
            "2",
            "1",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_instruction_count_without_valgrind_says_how_to_get_it(tmp_path):
    """No valgrind on PATH: a clear message and status 2, not a traceback."""
    environment = dict(os.environ, PATH=str(tmp_path))  # an empty folder: no valgrind there
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "instructions.py")],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "apt-get install valgrind" in done.stdout


def run_gpu_script(name, *args):
    """benchmarks/<name> in a fresh interpreter under numba's CUDA simulator; its stdout."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
    )
    return done


def test_gpu_benchmark_runs_every_section_and_saves_only_where_told(tmp_path):
    done = run_gpu_script("gpu.py", "--quick", "--repeats", "1", "--warmup", "0", "--save")
    assert done.returncode != 0 and "not saving simulator numbers" in done.stderr
    done = run_gpu_script(
        "gpu.py", "--quick", "--repeats", "1", "--warmup", "0", "--save", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    (saved,) = tmp_path.glob("gpu-*.json")
    result = json.loads(saved.read_text())
    assert result["simulator"] and result["errors"] == {}
    assert [row["elements"] for row in result["elementwise"]] == [16, 256]
    assert [row["elements"] for row in result["reduction"]] == [16, 256]
    assert all(row["max_relative_error"] < 1e-5 for row in result["matmul"]["rows"])
    assert all(row["first_losses_match"] for row in result["mlp"]["rows"])


def test_gpu_overhead_script_times_each_step_and_profiles_ours():
    done = run_gpu_script("gpu_overhead.py", "--quick")
    assert done.returncode == 0, done.stderr
    assert "(simulator: no figures)" in done.stdout
    for row in (
        "numba: launch a kernel",
        "numba: cuda.device_array",
        "autograd_lab: x * 2",
        "autograd_lab: x.mul_(1)",
        "autograd_lab: x.sum()",
    ):
        assert row in done.stdout
    assert done.stdout.count("# cProfile of 2 calls") == 2
    assert "backend/cuda/elementwise.py" in done.stdout


@pytest.mark.slow
def test_the_grading_benchmark_grades_a_small_class_both_ways(tmp_path):
    out = tmp_path / "grading.json"
    command = [sys.executable, str(BENCHMARKS / "grading.py"), "--submissions", "2"]
    done = subprocess.run(
        [*command, "--jobs", "1", "--json", str(out)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert rows[-1]["mode"] == "not sandboxed"
    for row in rows:  # the solved notebook gets full marks, the untouched exercise nothing
        assert row["scores"] == [11, 0] and row["per_minute"] > 0


def test_the_layout_benchmark_prints_a_row_per_shape():
    # benchmarks/viz_layout.py once imported a function that had been renamed: run its rows
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "viz_layout.py"),
            *("--repeats", "1", "--only", "shared", "rnn", "transformer"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if "every node" in line]
    titles = [row.split(",")[0] for row in rows]
    assert titles == ["shared leaf x 666", "RNN 400 steps", "transformer x 66"]
    for row in rows:  # 2,000 nodes each, every one drawn as a box; no timing is asserted
        nodes, boxes = row[35:].split()[:2]  # after the 34-character title
        assert 1900 <= int(nodes) == int(boxes) <= 2100, row
