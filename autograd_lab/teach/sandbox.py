"""The sandbox a learner's code runs in while it is graded: bubblewrap, where the machine has it.

    >>> from autograd_lab.teach import sandbox
    >>> print(sandbox.describe())
    isolated with bubblewrap: own PID, mount, IPC, network and user namespaces, read-only system, ...
    >>> worker = sandbox.start([sys.executable, "-c", "print(6 * 7)"], workdir=folder,
    ...                        stdout=subprocess.PIPE)
    >>> worker.communicate()[0]
    b'42\\n'
    >>> sandbox.stop(worker)  # ends the worker and everything it started, for sure

With bubblewrap (`bwrap`, Debian's and Ubuntu's `bubblewrap` package), the learner's code gets:
- its own PID namespace: /proc lists only the sandbox's processes, never the grader or another
  worker. When the namespace's first process (its "init") dies, the kernel kills every process
  in it, even one that called setsid() and forked twice: that is how stop() ends a worker.
- its own network namespace with nothing in it (not even the host's 127.0.0.1), its own IPC and
  UTS namespaces, and its own user namespace, in which it runs as "nobody" (uid 65534) with no
  capabilities, even when the grader runs as root, and cannot create more namespaces.
- a filesystem built from nothing: read-only views of the system (/usr, /bin, /lib, a few files of
  /etc), of the Python installation, of the autograd_lab package and of the `readable` paths; the
  work folder, read-write, the only place on disk it can write; a private /tmp in memory, with a
  size limit; a fresh /proc and a minimal /dev. Paths are the same inside and out.
- a cleared environment: only the variables of `_environment`, plus the caller's `env`.
- a memory limit, set by the launcher limits.py, which every command goes through.

Without bubblewrap (macOS, Windows, Linux without it): the worker runs with the grader's
permissions, in its own session and process group, under the same memory limit. stop() kills
that group, but a process that calls setsid() leaves it and can outlive its grading. describe()
says which of the two this machine gives, in one line for the report header.
"""

import functools
import json
import os
import platform
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

GiB = 1024**3
MiB = 1024**2
DEFAULT_MEMORY = 2 * GiB  # writable memory a worker may use (limits.py explains which limit)
TMP_SIZE = 256 * MiB  # what the in-memory /tmp and /dev/shm may each hold: they are memory too
NEEDED_VERSION = (0, 8)  # bwrap 0.8 (Debian 12, Ubuntu 24.04) has --disable-userns and --size
NOBODY = 65534  # the uid and gid the learner's code has inside the sandbox
TRIAL_TIMEOUT = 60  # seconds the trial run may take (a first Python start on a cold disk is slow)

LAUNCHER = Path(__file__).resolve().parent / "limits.py"
PACKAGE = LAUNCHER.parent.parent  # .../autograd_lab, which the sandbox shows read-only

# /etc files that Python, numpy and matplotlib read: the library cache, the time zone, user names
# (some code asks who "nobody" is) and fonts. Nothing else of /etc is visible.
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "passwd",
    "group",
    "nsswitch.conf",
    "alternatives",
    "fonts",
)
APPARMOR_SWITCH = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


class SandboxUnavailable(RuntimeError):
    """start(..., sandbox=True) on a machine where bubblewrap does not work."""


# ---- what this machine gives ---------------------------------------------------------------------


@dataclass(frozen=True)
class Isolation:
    """What a worker gets here: kind "bubblewrap", or kind "none" and the reason why not."""

    kind: str  # "bubblewrap" or "none"
    reason: str = ""  # for "none": what is missing and how to get it
    bwrap: str | None = None  # the path of the bwrap program, for "bubblewrap"

    @property
    def isolated(self):
        return self.kind == "bubblewrap"


@functools.cache
def isolation():
    """Isolation("bubblewrap") when bwrap is installed and a trial sandbox runs; else why not.

    Asked once per grader process: the trial starts Python in a sandbox (about 0.1 s).
    """
    if not sys.platform.startswith("linux"):
        return Isolation("none", f"bubblewrap needs Linux; this is {platform.system()}")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Isolation("none", "bwrap not found (Debian/Ubuntu: apt-get install bubblewrap)")
    version = _version_of(bwrap)
    if version and version < NEEDED_VERSION:  # no version: the trial run will tell
        shown = ".".join(map(str, version))
        return Isolation(
            "none", f"bwrap {shown} is too old: the sandbox needs bubblewrap 0.8 or newer"
        )
    failure = _trial_run(bwrap)
    if failure:
        return Isolation("none", failure)
    return Isolation("bubblewrap", bwrap=bwrap)


def describe(memory_bytes=DEFAULT_MEMORY):
    """One line for the top of a grading report: how the learners' code was confined."""
    memory = _in_words(memory_bytes)
    found = isolation()
    if found.isolated:
        return (
            "isolated with bubblewrap: own PID, mount, IPC, network and user namespaces, "
            f"read-only system, only its work folder writable, memory limit {memory}"
        )
    if sys.platform.startswith("linux"):
        limit = f"a memory limit of {memory}"
    else:
        limit = "no memory limit (limits.py's limit holds on Linux only)"
    return (
        f"NOT isolated: {found.reason}; the learner's code runs with the grader's permissions "
        f"(its own process group and {limit} only: a process that calls setsid() can outlive "
        "its grading)"
    )


def _version_of(bwrap):
    """(0, 8, 0) from `bwrap --version` ("bubblewrap 0.8.0"); () when it says something else."""
    try:
        answer = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", answer.stdout)
    return tuple(int(part) for part in found.groups() if part) if found else ()


def _trial_run(bwrap):
    """None when a sandboxed `python -c pass` runs with the options start() uses; else why not."""
    with tempfile.TemporaryDirectory(prefix="sandbox-trial-") as folder:
        try:
            trial = _start_bubblewrap(
                bwrap,
                [sys.executable, "-c", "pass"],
                workdir=Path(folder),
                readable=(),
                memory_bytes=DEFAULT_MEMORY,
                env={},
                pass_fds=(),
                streams={"stdout": subprocess.PIPE, "stderr": subprocess.PIPE},
            )
        except OSError as error:
            return f"{bwrap} could not be started: {error}"
        try:
            _, errors = trial.communicate(timeout=TRIAL_TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"bwrap's trial run did not finish in {TRIAL_TIMEOUT} s"
        finally:
            stop(trial)
    if trial.returncode == 0:
        return None
    said = errors.decode(errors="replace").strip() or f"exit status {trial.returncode}"
    return f"bwrap's trial run failed: {said}{_how_to_allow()}"


def _how_to_allow():
    """A hint for the one common refusal bwrap's own message does not explain: Ubuntu's AppArmor."""
    try:
        restricted = APPARMOR_SWITCH.read_text().strip() == "1"
    except OSError:
        restricted = False
    if not restricted:
        return ""
    return (
        ". AppArmor forbids unprivileged user namespaces here (Ubuntu's default since 24.04): "
        "allow them with `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or give "
        "/usr/bin/bwrap an AppArmor profile that allows `userns` (docs/grading.md, 'Isolation')"
    )


def _in_words(size):
    return f"{size / GiB:g} GiB" if size % GiB == 0 else f"{size / MiB:.0f} MiB"


# ---- starting and stopping a worker --------------------------------------------------------------


class SandboxedProcess(subprocess.Popen):
    """A subprocess.Popen that knows how to end everything it started: pass it to stop()."""

    isolated = False  # True when it runs in bubblewrap
    namespace_pidfd = None  # bubblewrap: a pidfd of the sandbox's init; killing it ends them all


def start(
    argv,
    *,
    workdir,
    readable=(),
    memory_bytes=DEFAULT_MEMORY,
    env=None,
    pass_fds=(),
    stdin=None,
    stdout=None,
    stderr=None,
    sandbox=None,
):
    """Start `argv` in the sandbox (see the module docstring) and return its SandboxedProcess.

    workdir: the folder it works in, and the only one it may write to.
    readable: more files or folders it may read (same paths inside), e.g. the notebook to run.
    memory_bytes: the most writable memory it may use; beyond it, MemoryError inside.
    env: variables added to the short list it gets (nothing of the grader's environment).
    pass_fds, stdin, stdout, stderr: as for subprocess.Popen; the fds keep their numbers inside.
    sandbox: None uses bubblewrap where isolation() says it works; False never does (no
    isolation, as on macOS); True insists and raises SandboxUnavailable where it does not work.
    Always end it with stop(), even after it exited: that also ends what it left running.
    """
    workdir = Path(workdir).absolute()
    if not workdir.is_dir():
        raise NotADirectoryError(f"the worker's work folder {workdir} is not a folder: create it")
    streams = {"stdin": stdin, "stdout": stdout, "stderr": stderr}
    found = isolation()
    if sandbox and not found.isolated:
        raise SandboxUnavailable(f"no sandbox on this machine: {found.reason}")
    if sandbox is False or not found.isolated:
        return _start_unconfined(argv, workdir, memory_bytes, env or {}, pass_fds, streams)
    return _start_bubblewrap(
        found.bwrap, argv, workdir, readable, memory_bytes, env or {}, pass_fds, streams
    )


def stop(process, grace=0.0):
    """End `process` and every process it started, for sure, and reap it. Safe to call again.

    grace: seconds to let it end by itself first (after you closed its input, say).
    """
    if grace > 0:
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    pidfd = getattr(process, "namespace_pidfd", None)
    if pidfd is not None:
        # SIGKILL to a PID namespace's init makes the kernel kill every process in the namespace;
        # a pidfd names that very process, so a pid reused since cannot be hit by mistake.
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the init already ended, and the namespace with it
        # A pidfd turns readable when its process has ended, and a namespace's init ends only
        # after every other process in the namespace has: then nothing of the worker is left.
        select.select([pidfd], [], [], 10)
        os.close(pidfd)
        process.namespace_pidfd = None
    elif getattr(process, "isolated", True) is False:
        # Unconfined: the worker leads its own process group (start_new_session=True).
        _kill_group(process.pid)
    process.kill()  # does nothing when it has already been reaped
    process.wait()


def _kill_group(group):
    # SIGKILL cannot be caught: once it is sent, no process of the group runs another line of its
    # own, though the kernel may take a moment to remove them.
    if not hasattr(os, "killpg"):
        return  # Windows has no process groups to kill: process.kill() ends the worker alone
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is empty already


def _environment(workdir, cache_folder, extra):
    """The only variables the worker gets: a clean, predictable start for every submission."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(PACKAGE.parent),  # this autograd_lab, even when it is not installed
        "PYTHONDONTWRITEBYTECODE": "1",  # the package is read-only: do not try to write .pyc
        "MPLBACKEND": "Agg",  # plots render to images; no window can open
        "NUMBA_CACHE_DIR": str(cache_folder),  # numba writes compiled code here
        **extra,
    }


def _launcher(argv, memory_bytes):
    # The launcher runs by its file, not `-m autograd_lab.teach.limits`: -m would import the whole
    # package (numpy and all, about 1 s) only to exec. -I -S: stdlib only, nothing from outside.
    return [sys.executable, "-I", "-S", str(LAUNCHER), "--memory", str(memory_bytes), "--", *argv]


def _start_unconfined(argv, workdir, memory_bytes, env, pass_fds, streams):
    process = SandboxedProcess(
        _launcher(argv, memory_bytes),
        cwd=workdir,
        # a folder of its own: a shared cache would let one submission plant code for the next
        env=_environment(workdir, workdir / ".numba_cache", env),
        pass_fds=pass_fds,
        start_new_session=True,  # its own session and process group, which stop() kills
        **streams,
    )
    process.isolated = False
    return process


def _start_bubblewrap(bwrap, argv, workdir, readable, memory_bytes, env, pass_fds, streams):
    options = _bubblewrap_options(workdir, readable, env)
    # The options go through a file (--args), not the command line: the sandbox's /proc/1/cmdline
    # then shows no host paths. bwrap writes its init's pid to --info-fd once the sandbox exists.
    with tempfile.TemporaryFile() as options_file:
        options_file.write(b"".join(option.encode() + b"\0" for option in options))
        options_file.seek(0)
        info_read, info_write = os.pipe()
        try:
            command = [bwrap, "--args", str(options_file.fileno()), "--info-fd", str(info_write)]
            process = SandboxedProcess(
                [*command, "--", *_launcher(argv, memory_bytes)],
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                pass_fds=(*pass_fds, options_file.fileno(), info_write),
                **streams,
            )
        except BaseException:
            os.close(info_read)
            raise
        finally:
            os.close(info_write)
    with open(info_read, encoding="utf-8") as info_pipe:
        info = info_pipe.read()  # bwrap closes it after writing; empty when bwrap failed
    process.isolated = True
    if info:
        try:
            process.namespace_pidfd = os.pidfd_open(json.loads(info)["child-pid"])
        except ProcessLookupError:
            pass  # the sandbox has already ended, and everything in it
    return process


def _bubblewrap_options(workdir, readable, env):
    """bwrap's options, in the order it applies them: later mounts go on top of earlier ones."""
    options = [
        "--unshare-all",  # own PID, network, IPC, UTS and cgroup namespaces
        # ...and always a user namespace, as nobody without capabilities, even for root
        *("--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)),
        "--disable-userns",  # the code inside cannot make namespaces of its own
        *("--cap-drop", "ALL"),
        "--die-with-parent",  # a grader that dies takes its workers with it
        "--new-session",  # no controlling terminal, so nothing can be typed into the grader's
        "--clearenv",
    ]
    for name, value in _environment(workdir, "/tmp/numba_cache", env).items():
        options += ["--setenv", name, str(value)]
    options += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/", name)
        if top.is_symlink():  # merged /usr (Debian 12, Ubuntu): /lib -> usr/lib
            options += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            options += ["--ro-bind", str(top), str(top)]
    for name in ETC_FILES:
        options += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    options += ["--proc", "/proc", "--dev", "/dev"]
    options += ["--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
    options += ["--size", str(TMP_SIZE), "--tmpfs", "/dev/shm"]
    # after /tmp: a work folder or a readable file in the host's /tmp goes on top of the new one
    for path, how in _mounts(workdir, readable):
        options += [how, path, path]
    options += ["--chdir", str(workdir)]
    return options


def _mounts(workdir, readable):
    """(path, "--ro-bind" or "--bind") for Python's installation, this package, `readable` and
    the work folder, parents before children: a folder mounted later would hide what is inside.
    A path that goes through a symlink is mounted by its real path too."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, PACKAGE}
    wanted.update(readable)
    mounts = {}
    for path in wanted:
        path = Path(path).absolute()
        if not path.exists():
            raise FileNotFoundError(f"{path} was to be readable in the sandbox but does not exist")
        mounts.update({str(path): "--ro-bind", str(path.resolve()): "--ro-bind"})
    mounts[str(workdir)] = "--bind"  # the one writable place, even inside a read-only folder
    return sorted(mounts.items(), key=lambda mount: (mount[0].count("/"), mount[0]))


if __name__ == "__main__":  # `python -m autograd_lab.teach.sandbox`: what does this machine give?
    print(describe())
