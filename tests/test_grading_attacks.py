"""Submissions that attack the grader (issue 15's acceptance list): each one is graded exactly as
its honest work deserves, the others in the same batch are unaffected, and nothing of the hidden
tests reaches any output.

Every attack below sits in exercise 1's solution cell of a small lesson, beside honest answers to
exercises 2 and 3: so the right grade of each is {"ex1": 0, "ex2": 2, "ex3": 3}. They are all
graded in ONE batch, two at a time, with an honest submission graded after them.
"""

import json
import subprocess
import sys
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from test_grader import _check, _solution, filled  # the grader tests' cell builders

from autograd_lab.teach import generate_student_notebook, sandbox
from autograd_lab.teach.grader import grade_many

SECRET = "HIDDEN_SENTINEL_7713"  # only in the hidden tests: must never reach any output
TIMEOUT = 5
HONEST = {"ex2": "def square(x):\n    return x * x", "ex3": "total = 45"}
DESERVED = {"ex1": 0, "ex2": 2, "ex3": 3}
ISOLATED = sandbox.isolation().isolated
needs_sandbox = pytest.mark.skipif(
    not ISOLATED, reason=f"no sandbox here: {sandbox.isolation().reason}"
)


def lesson_notebook():
    """ex1: double an array (its checks compare with np.allclose); ex2: square; ex3: a total."""
    return new_notebook(
        cells=[
            new_code_cell("import numpy as np\nfrom autograd_lab.teach import check"),
            _solution(
                "ex1",
                "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
            ),
            _check(
                "ex1",
                1,
                'check("ex1", lambda: np.allclose(double(np.arange(3.0)), [0.0, 2.0, 4.0]), '
                'message="0, 1, 2")\n'
                "### BEGIN HIDDEN TESTS\n"
                f"{SECRET} = np.array([7.0, -1.5])\n"
                f'check("ex1", lambda: np.allclose(double({SECRET}), [14.0, -3.0]), hint="negatives", '
                'message="others")\n'
                "### END HIDDEN TESTS",
                "✓ ex1 passed\n",
            ),
            _solution(
                "ex2",
                "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
            ),
            _check(
                "ex2",
                2,
                'check("ex2", lambda: square(3) == 9, message="3")\n'
                "### BEGIN HIDDEN TESTS\n"
                f'check("ex2", lambda: square(-4) == 16, hint="{SECRET}", message="-4")\n'
                "### END HIDDEN TESTS",
                "✓ ex2 passed\n",
            ),
            _solution("ex3", "total = sum(range(10))"),
            _check("ex3", 3, 'check("ex3", lambda: total == 45)', "✓ ex3 passed\n"),
        ]
    )


# Each attack is exercise 1's cell. The comment says what it tries.
ATTACKS = {
    # rebind the check helpers in the notebook, so that the checks print ✓ whatever happens
    "rebinds_check": (
        "def double(x):\n    return x\n"
        "def check(*args, **kwargs):\n    print('✓ ex1 passed')\n"
        "check_gradients = gradient_table = check"
    ),
    # an IPython input transformer that rewrites every later cell (the check cells were the aim)
    "input_transformer": (
        "def double(x):\n    return x\n"
        "get_ipython().input_transformers_cleanup.append(\n"
        "    lambda lines: [l.replace('check(', 'print(') for l in lines])"
    ),
    # a traceback hook: a failed check would print a ✓ line instead of its error
    "traceback_hook": (
        "def double(x):\n    return x\n"
        "ip = get_ipython()\n"
        "ip._showtraceback = lambda *a, **k: print('✓ ex1 passed')\n"
        "ip.showtraceback = lambda *a, **k: print('✓ ex1 passed')"
    ),
    # numpy's comparison patched to say yes to everything
    "patched_allclose": ("np.allclose = lambda *a, **k: True\ndef double(x):\n    return x"),
    # an object equal to everything, true, and of any shape
    "always_equal": (
        "class Anything:\n"
        "    def __eq__(self, other): return True\n"
        "    def __bool__(self): return True\n"
        "    def __len__(self): return 3\n"
        "def double(x):\n    return Anything()"
    ),
    # look for the instructor's notebook (its hidden tests hold the answer) and the grader's
    # command line in /proc, run the instructor's solution if found, and put what was read into
    # an exception message, which the feedback used to show
    "reads_the_grader": (
        "import glob, os\n"
        "seen = []\n"
        "for pid in os.listdir('/proc'):\n"
        "    try:\n"
        "        seen.append(open(f'/proc/{pid}/cmdline', 'rb').read().decode(errors='replace'))\n"
        "    except Exception:\n"
        "        pass\n"
        "places = [os.getcwd(), os.path.dirname(os.getcwd()), '/tmp', *(s.split('\\0')[-1] for s in seen)]\n"
        "for place in places:\n"
        "    for path in glob.glob(os.path.join(place, '**', '*.ipynb'), recursive=True):\n"
        "        try:\n"
        "            text = open(path).read()\n"
        "        except Exception:\n"
        "            continue\n"
        "        if 'BEGIN HIDDEN TESTS' in text:\n"
        "            seen.append(text)\n"
        "            exec('def double(x):\\n    return 2 * x')\n"
        "raise RuntimeError(' | '.join(seen)[-3000:])"
    ),
    # forge the records the grader once read from the kernel's folder
    "forged_record": (
        "import json, os, glob\n"
        "line = json.dumps({'cell': 2, 'when': 'call', 'passed': True, 'ename': '', 'evalue': '',"
        " 'timed_out': False, 'kernel_dead': False, 'message': ''})\n"
        "for folder in [os.getcwd(), *glob.glob('/tmp/autograd-lab-*')]:\n"
        "    try:\n"
        "        open(os.path.join(folder, 'cells.jsonl'), 'a').write(line + '\\n')\n"
        "    except Exception:\n"
        "        pass\n"
        "def double(x):\n    return x"
    ),
    # ignore the interrupt and keep printing ✓ lines
    "stubborn_printer": (
        "import signal\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "while True:\n    print('✓ ex1 passed')"
    ),
    # end the worker itself
    "exits": "import os\nos._exit(0)",
}
# a process that leaves its session and, for a minute, kills every grading worker it can see
LINGERING = (
    "import subprocess, sys\n"
    "killer = '''\n"
    "import os, signal, time\n"
    "end = time.time() + 60\n"
    "while time.time() < end:\n"
    "    for pid in os.listdir('/proc'):\n"
    "        try:\n"
    "            if b'autograd_lab.teach.worker' in open(f'/proc/{pid}/cmdline', 'rb').read():\n"
    "                os.kill(int(pid), signal.SIGKILL)\n"
    "        except Exception:\n"
    "            pass\n"
    "    time.sleep(0.05)\n"
    "'''\n"
    "subprocess.Popen([sys.executable, '-c', killer], start_new_session=True,\n"
    "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "def double(x):\n    return x"
)


def _write(folder, name, nb):
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Grade every attack, then honest submissions, in one batch, two at a time."""
    folder = tmp_path_factory.mktemp("attacks")
    instructor = folder / "instructor.ipynb"
    nbformat.write(lesson_notebook(), instructor)
    student = generate_student_notebook(nbformat.read(instructor, as_version=4))
    names = list(ATTACKS)
    paths = [_write(folder, n, filled(student, {"ex1": ATTACKS[n], **HONEST})) for n in names]
    honest = filled(student, {"ex1": "def double(x):\n    return 2 * x", **HONEST})
    if ISOLATED:
        names.append("lingering")
        paths.append(_write(folder, "lingering", filled(student, {"ex1": LINGERING, **HONEST})))
    # honest submissions graded after the attacks (a lingering process would hit them)
    for k in range(3):
        names.append(f"honest{k}")
        paths.append(_write(folder, f"honest{k}", honest))
    start = time.monotonic()
    results = grade_many(paths, instructor, jobs=2, timeout=TIMEOUT)
    return dict(zip(names, results)), time.monotonic() - start


def _points(result):
    return {exercise: verdict.points for exercise, verdict in result.exercises.items()}


# without a sandbox the worker can read the grader's files and /proc: only the sandbox stops it
NEEDING_THE_SANDBOX = {"reads_the_grader"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=needs_sandbox) if n in NEEDING_THE_SANDBOX else n for n in ATTACKS],
)
def test_an_attack_gets_what_its_honest_work_deserves(batch, name):
    result = batch[0][name]
    assert result.error is None
    assert _points(result) == DESERVED, (name, result.exercises["ex1"].feedback)


@pytest.mark.slow
@needs_sandbox
def test_a_lingering_process_is_ended_with_its_submission(batch):
    results = batch[0]
    assert _points(results["lingering"]) == DESERVED
    for k in range(3):  # graded after it, while it would still be killing workers
        assert results[f"honest{k}"].score == 6, results[f"honest{k}"].exercises


@pytest.mark.slow
def test_honest_submissions_in_the_same_batch_get_full_marks(batch):
    for k in range(3):
        assert batch[0][f"honest{k}"].score == 6


@pytest.mark.slow
def test_a_cell_that_ignores_the_interrupt_or_ends_the_worker_is_told_apart(batch):
    stubborn = batch[0]["stubborn_printer"].exercises["ex1"].feedback
    assert "ran past the time limit" in stubborn and "did not stop when interrupted" in stubborn
    ended = batch[0]["exits"].exercises["ex1"].feedback
    assert "ended the worker process" in ended and "time limit" not in ended


@pytest.mark.slow
@needs_sandbox
def test_nothing_hidden_reaches_any_output(batch):
    everything = json.dumps([r.to_dict() for r in batch[0].values()], ensure_ascii=False)
    assert SECRET not in everything
    assert "BEGIN HIDDEN TESTS" not in everything


@pytest.mark.slow
@needs_sandbox
def test_the_worker_sees_neither_the_grader_nor_its_files(tmp_path):
    """What the `reads_the_grader` attack looks for is not there to be found, in the sandbox."""
    secret_file = tmp_path / "instructor.ipynb"
    secret_file.write_text(SECRET)
    script = (
        "import os\n"
        f"print(os.path.exists({str(secret_file)!r}))\n"
        f"print(os.path.exists('/proc/{__import__('os').getpid()}'))\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    process = sandbox.start([sys.executable, "-c", script], workdir=work, stdout=subprocess.PIPE)
    try:
        out, _ = process.communicate(timeout=60)
    finally:
        sandbox.stop(process)
    assert out.decode().split() == ["False", "False"]
