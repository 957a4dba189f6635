"""The real-script corpus: each learner-style PyTorch script in tests/scripts/ prints the same
thing with PyTorch and with autograd_lab behind `autograd_lab.as_torch()`.

Each script runs twice, in two fresh processes side by side: once as it is (real PyTorch), once
after `autograd_lab.as_torch()`, so its own `import torch` gives autograd_lab. What PyTorch
prints is computed here, live, and is stored nowhere in the repository.

How two outputs are compared:

- Text exactly, with every number masked, line by line (autograd_lab prints dtypes, sizes and
  nodes in PyTorch's form, torch.float32 and torch.Size, whatever name it is imported as).
- Numbers written without a point or exponent (counts, shapes, indices, integer tensors, sampled
  tokens) exactly.
- Other numbers within rtol 1e-4 and atol 1e-5, plus one unit of the last digit printed: float32
  arithmetic done in another order (numpy's sums against PyTorch's) differs in the 6th-7th digit,
  a few steps of training grow that a little, and a value printed with 4 decimals may round either
  way at the 4th. A script that trains for many steps may loosen this with a header comment such
  as `# tolerance: rtol=1e-3 atol=1e-4`.

On failure the message shows the first lines that differ (line numbers, both lines; the outputs
are lined up first, so a missing line is reported once) and what our run wrote to stderr.
"""

import difflib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "tests" / "scripts").glob("*.py"))
DEFAULT_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")
SWITCHED = (
    "import sys, runpy, autograd_lab; autograd_lab.as_torch(); "
    "sys.argv = [sys.argv[1]]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def tolerance(script):
    """The script's `# tolerance: rtol=... atol=...` header line, else the default."""
    found = re.search(r"^# tolerance: rtol=(\S+) atol=(\S+)", script.read_text(), re.MULTILINE)
    if found is None:
        return DEFAULT_TOLERANCE
    return {"rtol": float(found.group(1)), "atol": float(found.group(2))}


def start(command, folder):
    """Start a Python process in `folder` (where a script may save files) that sees this checkout."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, *command],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process, seconds=240):
    """Wait for a process: its exit code, stdout and stderr (stopped after `seconds`)."""
    try:
        stdout, stderr = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        stderr += f"\n(stopped: still running after {seconds} s)"
    return process.returncode, stdout, stderr


def last_digit(token):
    """One unit of the last digit a number was printed with: 0.0001 for '1.2345', 1e-5 for '1.2e-04'."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def numbers_agree(ours, theirs, rtol, atol):
    if "." not in ours + theirs and "e" not in (ours + theirs).lower():
        return ours.lstrip("+") == theirs.lstrip("+")  # integers: exactly
    a, b = float(ours), float(theirs)
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return str(a) == str(b)
    slack = atol + rtol * abs(b) + max(last_digit(ours), last_digit(theirs))
    return abs(a - b) <= slack


def line_difference(ours, theirs, rtol, atol):
    """Why two lines differ (a short phrase), or None when they agree."""
    if masked([ours]) != masked([theirs]):
        return "the text differs"
    for mine, torchs in zip(NUMBER.findall(ours), NUMBER.findall(theirs)):
        if not numbers_agree(mine, torchs, rtol, atol):
            return f"{mine} where PyTorch prints {torchs}"
    return None


def masked(lines):
    """Lines with every number replaced by '#': what must agree exactly."""
    return [NUMBER.sub("#", line) for line in lines]


def differences(ours, theirs, rtol, atol, limit=8):
    """The lines that differ, as readable text; empty when the outputs agree.

    The two outputs are first lined up on their text with numbers masked (difflib), so that one
    missing or extra line is reported once, not as a shift of every line after it.
    """
    ours = ours.splitlines()
    theirs = theirs.splitlines()
    matcher = difflib.SequenceMatcher(None, masked(ours), masked(theirs), autojunk=False)
    report = []
    for kind, i1, i2, j1, j2 in matcher.get_opcodes():
        for i, j in zip(range(i1, i2), range(j1, j2)):  # lines in both outputs, side by side
            why = line_difference(ours[i], theirs[j], rtol, atol)
            if why is not None:
                report.append(
                    f"line {j + 1} (ours {i + 1}): {why}\n  ours:    {ours[i]}\n"
                    f"  PyTorch: {theirs[j]}"
                )
        paired = min(i2 - i1, j2 - j1)
        if j2 - j1 > paired:
            report.append(
                f"PyTorch prints {j2 - j1 - paired} line(s) more from its line {j1 + paired + 1}: "
                f"{theirs[j1 + paired]!r}"
            )
        if i2 - i1 > paired:
            report.append(
                f"we print {i2 - i1 - paired} line(s) more from our line {i1 + paired + 1}: "
                f"{ours[i1 + paired]!r}"
            )
    if len(report) > limit:
        report = report[:limit] + [f"... and {len(report) - limit} more"]
    return "\n".join(report)


@pytest.mark.oracle
@pytest.mark.parametrize("script", SCRIPTS, ids=[script.stem for script in SCRIPTS])
def test_script_prints_what_pytorch_prints(script, torch, tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "ours").mkdir()
    theirs_process = start([str(script)], tmp_path / "torch")
    ours_process = start(["-c", SWITCHED, str(script)], tmp_path / "ours")
    code, theirs, their_errors = finish(theirs_process)
    if code != 0:
        ours_process.kill()
        ours_process.communicate()
        pytest.fail(f"{script.name} fails with PyTorch itself:\n{their_errors}")
    code, ours, our_errors = finish(ours_process)
    found = differences(ours, theirs, **tolerance(script))
    if code != 0 or found:
        stopped = f"our run stopped (exit code {code})\n" if code else ""
        pytest.fail(f"{script.name}: {stopped}{found}\n--- our stderr ---\n{our_errors[-3000:]}")


def test_the_comparison_catches_differences():
    tol = DEFAULT_TOLERANCE
    assert differences("loss 0.1235\n", "loss 0.1234\n", **tol) == ""  # rounding at the 4th decimal
    assert "0.1240 where PyTorch prints 0.1234" in differences("loss 0.1240", "loss 0.1234", **tol)
    assert "3 where PyTorch prints 4" in differences("tensor([3])", "tensor([4])", **tol)
    assert "the text differs" in differences("tensor([1.])", "tensor([1.], grad_fn=<X>)", **tol)
    assert "the text differs" in differences("autograd_lab.float64", "torch.float64", **tol)
    assert "PyTorch prints 1 line(s) more from its line 2: 'b'" in differences("a", "a\nb", **tol)
    shifted = differences("a\nc 1.5\nd", "a\nb\nc 1.5\nd", **tol)
    assert shifted == "PyTorch prints 1 line(s) more from its line 2: 'b'"  # c and d still agree
    assert "we print 1 line(s) more from our line 1: 'x'" in differences("x\na", "a", **tol)
    assert differences("1.0000e-06 nan -inf", "1.0004e-06 nan -inf", **tol) == ""
    assert "nan where PyTorch prints 1." in differences("x nan", "x 1.", **tol)


def test_a_script_that_hangs_is_stopped(tmp_path):
    code, _, errors = finish(start(["-c", "import time; time.sleep(60)"], tmp_path), seconds=1)
    assert code != 0 and "still running after 1 s" in errors
