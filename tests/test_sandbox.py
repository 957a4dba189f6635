"""The sandbox a grading worker runs in (autograd_lab/teach/sandbox.py): what learner code can do.

Each test runs a small Python program as a learner's code would run, and reads what it printed.
The sandbox tests need bubblewrap (CI installs it in .ci/run) and skip with isolation()'s reason
without it; the tests of the unconfined path (macOS, or Linux without bubblewrap) always run.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograd_lab.teach import sandbox
from autograd_lab.teach.sandbox import Isolation

FOUND = sandbox.isolation()
needs_bubblewrap = pytest.mark.skipif(not FOUND.isolated, reason=f"no sandbox: {FOUND.reason}")
REPOSITORY = Path(__file__).resolve().parents[1]
MiB = 1024**2


def run(code, workdir, **options):
    """Run `code` with this Python as a worker; return (exit status, what it printed)."""
    worker = sandbox.start(
        [sys.executable, "-c", code],
        workdir=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        **options,
    )
    try:
        printed, _ = worker.communicate(timeout=120)
    finally:
        sandbox.stop(worker)
    return worker.returncode, printed.decode()


def processes_with(marker):
    """The pids of this machine's processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass  # it ended while we looked
    return found


def processes_left_with(marker, seconds=5):
    """processes_with(marker) once they are gone, or after `seconds`: a killed process takes a
    moment to disappear from /proc (its command line goes when it has ended)."""
    deadline = time.monotonic() + seconds
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.01)
    return processes_with(marker)


# ---- what runs inside ----------------------------------------------------------------------------


@needs_bubblewrap
def test_python_numpy_and_autograd_lab_work_inside(tmp_path):
    status, printed = run(
        "import numpy as np, autograd_lab as torch\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "(x * x).sum().backward()\n"
        "print(x.grad.tolist(), np.arange(4).sum())\n",
        tmp_path,
    )
    assert (status, printed) == (0, "[2.0, 4.0] 6\n")


@needs_bubblewrap
def test_file_descriptors_passed_in_keep_their_numbers(tmp_path):
    # the judge talks to its worker over pipes passed this way
    reading, writing = os.pipe()
    try:
        code = f"import os; os.write({writing}, b'answer from inside')"
        status, printed = run(code, tmp_path, pass_fds=(writing,))
        os.close(writing)
        assert status == 0, printed
        assert os.read(reading, 100) == b"answer from inside"
    finally:
        os.close(reading)


@needs_bubblewrap
def test_the_environment_is_cleared(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET_TOKEN", "must-not-leak")
    status, printed = run(
        "import json, os; print(json.dumps(dict(os.environ)))", tmp_path, env={"LESSON": "02"}
    )
    environment = json.loads(printed)
    assert "GRADER_SECRET_TOKEN" not in environment
    assert environment["HOME"] == str(tmp_path) and environment["LESSON"] == "02"


def test_a_missing_work_folder_is_refused_in_words(tmp_path):
    with pytest.raises(NotADirectoryError, match="is not a folder: create it"):
        sandbox.start([sys.executable, "-c", "pass"], workdir=tmp_path / "missing")


@needs_bubblewrap
def test_a_missing_readable_path_is_refused_in_words(tmp_path):
    with pytest.raises(FileNotFoundError, match="readable in the sandbox but does not exist"):
        sandbox.start([sys.executable, "-c", "pass"], workdir=tmp_path, readable=[tmp_path / "x"])


def test_the_launcher_says_when_the_program_cannot_start(tmp_path):
    launched = subprocess.run(
        [sys.executable, "-m", "autograd_lab.teach.limits", "--memory", str(100 * MiB), "--"]
        + [str(tmp_path / "no-such-program")],
        capture_output=True,
        text=True,
    )
    assert launched.returncode == 127
    assert "could not start" in launched.stderr and "no-such-program" in launched.stderr


# ---- what it cannot see --------------------------------------------------------------------------


READ_ALL = """
import json, os, sys
answers = {}
for path in sys.argv[1:]:
    try:
        with open(path) as file:
            answers[path] = file.read()
    except OSError as error:
        answers[path] = type(error).__name__
print(json.dumps(answers))
"""


def read_inside(paths, workdir, **options):
    worker = sandbox.start(
        [sys.executable, "-c", READ_ALL, *map(str, paths)],
        workdir=workdir,
        stdout=subprocess.PIPE,
        **options,
    )
    try:
        printed, _ = worker.communicate(timeout=120)
    finally:
        sandbox.stop(worker)
    return json.loads(printed)


@needs_bubblewrap
def test_only_the_work_folder_and_readable_paths_can_be_read(tmp_path):
    workdir, secrets, shared = tmp_path / "work", tmp_path / "instructor", tmp_path / "shared"
    for folder in (workdir, secrets, shared):
        folder.mkdir()
        (folder / "note.txt").write_text(f"in {folder.name}")
    solutions = sorted(REPOSITORY.glob("solutions/*.ipynb"))[:1]  # the instructor's notebooks
    answers = read_inside(
        [
            workdir / "note.txt",
            shared / "note.txt",
            secrets / "note.txt",
            REPOSITORY / "pyproject.toml",  # the grader's working folder
            *solutions,
        ],
        workdir,
        readable=[shared],
    )
    assert answers.pop(str(workdir / "note.txt")) == "in work"
    assert answers.pop(str(shared / "note.txt")) == "in shared"
    assert set(answers.values()) == {"FileNotFoundError"}, answers


@needs_bubblewrap
def test_root_home_shows_nothing_but_the_python_installation(tmp_path):
    status, printed = run(
        "import json, os\n"
        "home = os.listdir('/root') if os.path.isdir('/root') else []\n"
        "print(json.dumps([home, os.listdir('/etc')]))",
        tmp_path,
    )
    home, etc = json.loads(printed)
    installation = {sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)}
    needed = {Path(path).parts[2] for path in installation if path.startswith("/root/")}
    assert set(home) <= needed  # e.g. .pyenv when Python was installed there
    assert set(etc) <= set(sandbox.ETC_FILES)


@needs_bubblewrap
def test_proc_shows_only_the_sandbox_processes(tmp_path):
    code = (
        "import json, os\n"
        "pids = sorted(int(name) for name in os.listdir('/proc') if name.isdigit())\n"
        f"try: grader = open('/proc/{os.getpid()}/cmdline', 'rb').read().decode()\n"
        "except OSError as error: grader = type(error).__name__\n"
        "print(json.dumps([pids, grader]))"
    )
    status, printed = run(code, tmp_path)
    pids, grader = json.loads(printed)
    assert pids == [1, 2]  # the sandbox's init and the worker itself
    assert grader != Path(f"/proc/{os.getpid()}/cmdline").read_bytes().decode()


def connect_code(port):
    return (
        "import socket\n"
        f"try: socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\n"
        "except OSError as error: print('refused:', error)"
    )


@needs_bubblewrap
def test_no_network_not_even_the_hosts_localhost(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        status, printed = run(connect_code(port), tmp_path)
        assert printed.startswith("refused:"), printed
        status, printed = run(connect_code(port), tmp_path, sandbox=False)
        assert printed == "connected\n"  # the server was there: the sandbox made the difference


# ---- what it can change --------------------------------------------------------------------------


@needs_bubblewrap
def test_it_writes_only_in_the_work_folder(tmp_path):
    name = f"sandbox-test-{uuid.uuid4().hex}"
    work, shown = tmp_path / "work", tmp_path / "shown"  # shown: passed as readable
    work.mkdir()
    shown.mkdir()
    targets = [
        work / "result.txt",
        Path("/tmp", name),  # its own /tmp, not the host's
        Path(sandbox.PACKAGE, name),
        Path(sys.prefix, name),
        Path("/usr", name),
        shown / name,
    ]
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        open(path, 'w').write('x'); print('wrote')\n"
        "    except OSError as error:\n"
        "        print(type(error).__name__)\n"
    )
    worker = sandbox.start(
        [sys.executable, "-c", code, *map(str, targets)],
        workdir=work,
        readable=[shown],
        stdout=subprocess.PIPE,
    )
    printed, _ = worker.communicate(timeout=120)
    sandbox.stop(worker)
    in_work, in_tmp, *elsewhere = printed.decode().split()
    assert (in_work, in_tmp) == ("wrote", "wrote")
    assert (work / "result.txt").read_text() == "x"
    assert not Path("/tmp", name).exists()
    assert set(elsewhere) == {"OSError"}  # "Read-only file system"
    assert not any(path.exists() for path in targets[2:])


# ---- ending it -----------------------------------------------------------------------------------

LINGER = """
import os, subprocess, sys, time
if os.fork() == 0:  # a child that leaves the session, then a grandchild it abandons
    os.setsid()
    subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
    os._exit(0)
os.wait()
print("ready", flush=True)
if sys.argv[3] == "stay":
    time.sleep(60)
"""
LATE_WRITE = "import time; time.sleep(2); open('late.txt', 'w').write('too late')"


@needs_bubblewrap
@pytest.mark.parametrize("worker_ends", ["stay", "exit"])
def test_stop_kills_a_process_that_left_the_session(tmp_path, worker_ends):
    marker = f"linger-{uuid.uuid4().hex}"
    worker = sandbox.start(
        [sys.executable, "-c", LINGER, LATE_WRITE, marker, worker_ends],
        workdir=tmp_path,
        stdout=subprocess.PIPE,
    )
    assert worker.stdout.readline() == b"ready\n"
    if worker_ends == "exit":
        worker.wait(timeout=30)  # the worker ends by itself, leaving its grandchild behind
    sandbox.stop(worker)
    sandbox.stop(worker)  # a second stop does nothing, and does not raise
    assert processes_with(marker.encode()) == []
    time.sleep(2.5)
    assert not (tmp_path / "late.txt").exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="looks for the processes in /proc")
def test_unconfined_stop_kills_the_process_group(tmp_path):
    marker = f"linger-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]])\n"
        "print('ready', flush=True); time.sleep(60)"
    )
    worker = sandbox.start(
        [sys.executable, "-c", code, LATE_WRITE, marker],
        workdir=tmp_path,
        stdout=subprocess.PIPE,
        sandbox=False,
    )
    assert worker.stdout.readline() == b"ready\n"
    deadline = time.monotonic() + 30
    while not processes_with(marker.encode()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker.encode()), "the child never started"
    sandbox.stop(worker)
    assert processes_left_with(marker.encode()) == []
    assert worker.returncode == -signal.SIGKILL
    time.sleep(2.5)
    assert not (tmp_path / "late.txt").exists()


# ---- memory --------------------------------------------------------------------------------------

ALLOCATE = """
import sys
blocks = []
for size in map(int, sys.argv[1:]):
    try:
        blocks.append(bytearray(size)); print("got", size)
    except MemoryError:
        print("MemoryError", size)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the limit holds on Linux only")
@pytest.mark.parametrize("confined", [pytest.param(True, marks=needs_bubblewrap), False])
def test_memory_beyond_the_limit_raises_memory_error_inside(tmp_path, confined):
    limit = 512 * MiB
    worker = sandbox.start(
        [sys.executable, "-c", ALLOCATE, str(100 * MiB), str(1024 * MiB), str(10 * MiB)],
        workdir=tmp_path,
        memory_bytes=limit,
        stdout=subprocess.PIPE,
        sandbox=None if confined else False,
    )
    printed, _ = worker.communicate(timeout=120)
    sandbox.stop(worker)
    assert printed.decode().splitlines() == [
        f"got {100 * MiB}",
        f"MemoryError {1024 * MiB}",
        f"got {10 * MiB}",  # it survived, and can report what happened
    ]


# ---- saying what this machine gives --------------------------------------------------------------


def test_describe_says_when_learner_code_is_not_isolated(monkeypatch, tmp_path):
    missing = Isolation("none", "bwrap not found (Debian/Ubuntu: apt-get install bubblewrap)")
    monkeypatch.setattr(sandbox, "isolation", lambda: missing)
    line = sandbox.describe()
    assert line.startswith("NOT isolated: bwrap not found (Debian/Ubuntu: apt-get install")
    assert "grader's permissions" in line and "setsid()" in line
    if sys.platform.startswith("linux"):
        assert "a memory limit of 2 GiB" in line
    else:
        assert "no memory limit" in line
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
        sandbox.start([sys.executable, "-c", "pass"], workdir=tmp_path, sandbox=True)


@needs_bubblewrap
def test_describe_names_bubblewrap_and_the_memory_limit():
    assert sandbox.describe(4 * 1024**3).startswith("isolated with bubblewrap: own PID")
    assert "memory limit 4 GiB" in sandbox.describe(4 * 1024**3)


def test_isolation_without_bwrap_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no bwrap on it
    found = sandbox.isolation.__wrapped__()  # asked afresh, not the cached answer
    if sys.platform.startswith("linux"):
        assert found.kind == "none"
        assert found.reason == "bwrap not found (Debian/Ubuntu: apt-get install bubblewrap)"
    else:
        assert found.reason.startswith("bubblewrap needs Linux")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")
def test_a_trial_refused_by_apparmor_says_how_to_allow_it(monkeypatch, tmp_path):
    # A stand-in bwrap that fails as Ubuntu 24.04's does when AppArmor forbids user namespaces.
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "bubblewrap 0.9.0"; exit 0; fi\n'
        'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1\n'
    )
    fake.chmod(0o755)
    switch = tmp_path / "apparmor_restrict_unprivileged_userns"
    switch.write_text("1\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(sandbox, "APPARMOR_SWITCH", switch)
    found = sandbox.isolation.__wrapped__()
    assert found.kind == "none"
    assert "setting up uid map: Permission denied" in found.reason
    assert "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in found.reason


def test_an_old_bwrap_is_named_with_the_version_needed(monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text('#!/bin/sh\necho "bubblewrap 0.6.1"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    if not sys.platform.startswith("linux"):
        pytest.skip("bubblewrap is Linux only")
    found = sandbox.isolation.__wrapped__()
    assert found == Isolation(
        "none", "bwrap 0.6.1 is too old: the sandbox needs bubblewrap 0.8 or newer"
    )
