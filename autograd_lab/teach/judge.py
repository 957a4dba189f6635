"""The grader's side of grading: the instructor's checks run here, the learner's code elsewhere.

A notebook that a learner hands in is code the grader must run - and code can lie: rebind
`check`, patch `np.allclose`, return an object that equals everything. So grading is split in
two processes (the "judge model"):

- the **worker** (worker.py) runs the lesson's cells and the learner's solution cells, in a
  sandbox where the system has one (sandbox.py). It never receives a check cell.
- the **judge** (this module, in the grader's own process) runs each check cell. Names the check
  cell defines or imports itself are the grader's own; every other name it reads - the learner's
  `unbroadcast`, the lesson's `torch` - is looked up in the worker and arrives as plain data
  (numbers, strings, lists, numpy arrays: wire.py) or as a `Remote`, a stand-in through which the
  check calls the learner's function or reads the learner's tensor. The check's comparisons run
  here, on plain data; the verdict, the points and the report are written here.

Three kinds of names never come from the worker, whatever the learner's notebook says: Python's
builtins, the check helpers (`check`, `check_gradients`, `gradient_table`: this process's own),
and modules other than autograd_lab (`np` in a check cell is the grader's numpy: a learner who
patches `np.allclose` patches only their own copy). autograd_lab itself - usually imported as
`torch` - stays in the worker, because the graphs a check builds must live beside the learner's
code that walks them.

    >>> worker = WorkerProcess.start()
    >>> worker.run("def double(x):\\n    return 2 * x")
    >>> namespace = judge_namespace(worker, "check('ex1', lambda: double(3) == 6)")
    >>> exec("check('ex1', lambda: double(3) == 6)", namespace)
    ✓ ex1 passed
"""

import ast
import builtins
import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from . import wire

GRACE = 3.0  # seconds a cell may overrun its time limit (ignoring the interrupt) before the kill
HELPERS = ("check", "check_gradients", "gradient_table", "CheckFailed")


class WorkerDied(Exception):
    """The worker process ended (killed, or it ended itself) while the judge waited for it."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why  # "timeout": it ran past the time limit; "ended": it ended by itself


class LearnerError(Exception):
    """An exception of a class the judge does not have (a learner's own), by name and message."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind


# ---- the worker process ------------------------------------------------------------------------


class WorkerProcess:
    """One learner's worker: a process started in the sandbox, and the pipes to talk to it."""

    def __init__(self, process, to_worker, from_worker, stop):
        self.process = process
        self.to_worker = to_worker
        self.from_worker = from_worker
        self._stop = stop
        self.buffer = b""
        self.requests = 0
        self.remotes = {}  # ref id -> its one Remote, so that `is` works on this side
        self.callbacks = {}  # callback id -> a function of the grader's

    @classmethod
    def start(cls, workdir=None, sandbox=None, memory_bytes=None):
        """Start a worker; `sandbox` (sandbox.py's start, or None) decides how it is isolated."""
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        argv = [sys.executable, "-m", "autograd_lab.teach.worker"]
        argv += [str(request_read), str(answer_write)]
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        env["MPLBACKEND"] = "Agg"
        fds = (request_read, answer_write)
        output = subprocess.DEVNULL  # what the learner's code prints decides nothing
        if sandbox is not None:
            process = sandbox.start(
                argv, workdir=workdir, env=env, pass_fds=fds, memory_bytes=memory_bytes
            )
            stop = sandbox.stop
        else:
            process = subprocess.Popen(
                argv,
                cwd=workdir,
                env=env,
                pass_fds=fds,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,  # its own process group, killed as a whole
            )
            stop = _kill_group
        os.close(request_read)
        os.close(answer_write)
        return cls(process, request_write, answer_read, stop)

    def stop(self):
        for fd in (self.to_worker, self.from_worker):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stop(self.process)

    # ---- requests --------------------------------------------------------------------------

    def run(self, source, timeout=None):
        """Run a cell in the worker; its exception is raised here (by class name and message)."""
        self.request({"op": "run", "source": source, "timeout": timeout}, timeout)

    def request(self, message, timeout=None):
        """Send a request and wait for its answer, running the grader's callbacks meanwhile.

        The worker interrupts itself at `timeout`; if it has not answered GRACE seconds later it
        is killed (WorkerDied("timeout")). An answer that is not well-formed kills it too."""
        self.requests += 1
        message = dict(message, id=self.requests)
        deadline = None if timeout is None else time.monotonic() + timeout + GRACE
        self._send(message)
        while True:
            answer = self._receive(deadline)
            if "callback" in answer:
                self._run_callback(answer, deadline)
                continue
            if answer.get("id") != message["id"]:
                self.stop()
                raise WorkerDied("ended")
            if answer.get("ok"):
                return self.decode(answer.get("value"))
            raise _as_exception(answer.get("error") or {})

    def _run_callback(self, message, deadline):
        function = self.callbacks.get(message.get("callback"))
        try:
            if function is None:
                raise LookupError("no such callback")
            value = function(*self.decode(message["args"]), **self.decode(message["kwargs"]))
            reply = {"reply": message["call"], "ok": True, "value": self.encode(value)}
        except WorkerDied:
            raise
        except Exception as error:
            reply = {"reply": message["call"], "ok": False, "error": {"message": str(error)}}
        self._send(reply)

    def _send(self, message):
        data = (json.dumps(message) + "\n").encode("utf-8")
        try:
            while data:
                data = data[os.write(self.to_worker, data) :]
        except OSError:
            self.stop()
            raise WorkerDied("ended") from None

    def _receive(self, deadline):
        while b"\n" not in self.buffer:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.stop()
                raise WorkerDied("timeout")
            ready, _, _ = select.select([self.from_worker], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_worker, 1 << 20)
            if not chunk:
                self.stop()
                raise WorkerDied("ended")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            self.stop()
            raise WorkerDied("ended") from None

    # ---- values ----------------------------------------------------------------------------

    def encode(self, value):
        return wire.encode(value, refer=self._refer)

    def decode(self, data):
        return wire.decode(data, resolve=self._resolve)

    def _refer(self, value):
        if isinstance(value, Remote):
            if value._worker is not self:
                raise wire.WireError("a value of another learner's worker")
            return {"~": "ref", "id": value._ref}
        if callable(value):
            cid = len(self.callbacks) + 1
            self.callbacks[cid] = value
            return {"~": "callback", "id": cid}
        raise wire.WireError(
            f"a {type(value).__qualname__} object of the grader's cannot be handed to the "
            "learner's code: pass numbers, strings, lists, numpy arrays, or the learner's objects"
        )

    def _resolve(self, data):
        if data["~"] != "ref":
            raise wire.WireError("the worker sent a callback")
        remote = self.remotes.get(data["id"])
        if remote is None:
            remote = Remote(self, data["id"], str(data.get("type")), data.get("module"))
            self.remotes[data["id"]] = remote
        return remote


def _kill_group(process):
    """Kill a worker started without a sandbox: its whole process group, then reap it."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


_BUILTIN_ERRORS = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def _as_exception(error):
    """The learner's exception, raised on this side: a builtin class by name (so `hasattr` and
    `except ValueError` work as in the notebook), any other as LearnerError."""
    kind, message = str(error.get("type", "Exception")), str(error.get("message", ""))
    cls = _BUILTIN_ERRORS.get(kind) if error.get("builtin") else None
    if cls is None or not issubclass(cls, Exception):
        return LearnerError(kind, message)
    try:
        return cls(message)
    except TypeError:  # a builtin exception that needs other arguments (UnicodeError, ...)
        return LearnerError(kind, message)


# ---- the stand-in for a learner's object -------------------------------------------------------


class Remote:
    """A learner's object that stays in the worker: what a check does with it is a request.

    Calls, attributes, items, operators and `with` go to the worker; the answer comes back as
    plain data or as another Remote. Comparing with `==`, `bool(...)`, `float(...)` and numpy
    (`np.allclose(remote, ...)`) use the object's *value* as plain data (a tensor's numbers),
    compared here; an object with no value as numbers equals only itself. `is` works: one
    object of the worker has one Remote.
    """

    __slots__ = ("_worker", "_ref", "_type", "_module", "__weakref__")

    def __init__(self, worker, ref, type_name, module=None):
        object.__setattr__(self, "_worker", worker)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_module", module)

    def _ask(self, op, timeout=None, **fields):
        fields["of"] = {"~": "ref", "id": self._ref}
        return self._worker.request(dict(fields, op=op), timeout)

    # attributes, calls, items
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # Python's own protocols are answered by this class
        return self._ask("getattr", name=name)

    def __setattr__(self, name, value):
        self._ask("setattr", name=name, value=self._worker.encode(value))

    def __call__(self, *args, **kwargs):
        encode = self._worker.encode
        return self._ask(
            "call", timeout=_call_timeout(), args=encode(list(args)), kwargs=encode(kwargs)
        )

    def __getitem__(self, key):
        return self._ask("getitem", key=self._worker.encode(key))

    def __len__(self):
        return self._ask("len")

    def __iter__(self):
        return iter(self._ask("iter", timeout=_call_timeout()))

    def __contains__(self, item):
        return self._ask("contains", key=self._worker.encode(item))

    def __enter__(self):
        return self._ask("enter")

    def __exit__(self, *exc_info):
        self._ask("exit")
        return False

    # values, compared on this side
    def _value(self):
        return self._ask("value")

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._value())
        return value if dtype is None else value.astype(dtype)

    def __bool__(self):
        # A tensor or array is true as its value is; any other object is true, as in Python
        # (`node if node else None`). check() itself asks for a value: a learner's object that
        # claims to be true is not a passed check there.
        try:
            value = self._value()
        except TypeError:
            return True
        return bool(value)

    def __float__(self):
        return float(self._value())

    def __int__(self):
        return int(self._value())

    def __index__(self):
        return int(np.asarray(self._value()).item())

    def __eq__(self, other):
        if isinstance(other, Remote) and other is self:
            return True
        try:
            mine = self._value()
        except Exception:
            return False if not isinstance(other, Remote) else NotImplemented
        theirs = other._value() if isinstance(other, Remote) else other
        return np.asarray(mine == np.asarray(theirs)) if np.ndim(mine) else mine == theirs

    def __ne__(self, other):
        equal = self.__eq__(other)
        return NotImplemented if equal is NotImplemented else ~np.asarray(equal)

    __hash__ = object.__hash__

    def __str__(self):
        return self._ask("str")

    def __repr__(self):
        return f"<learner's {self._type.rsplit('.', 1)[-1]} #{self._ref}>"


def _operator(name):
    def apply(self, *args):
        encoded = self._worker.encode(list(args))
        return self._ask("operator", timeout=_call_timeout(), name=name, args=encoded)

    apply.__name__ = name
    return apply


for _name in (
    "add sub mul truediv floordiv mod pow matmul lt le gt ge neg pos abs invert and or xor "
    "lshift rshift"
).split():
    setattr(Remote, f"__{_name}__", _operator(f"__{_name}__"))
for _name in "add sub mul truediv floordiv mod pow matmul and or xor".split():
    # 2 - remote: the worker computes sub(2, remote)
    def _reflected(self, other, _name=_name):
        encoded = self._worker.encode([self])
        return self._worker.request(
            {
                "op": "operator",
                "name": f"__{_name}__",
                "of": self._worker.encode(other),
                "args": encoded,
            },
            _call_timeout(),
        )

    setattr(Remote, f"__r{_name}__", _reflected)


# ---- a check cell's names ----------------------------------------------------------------------

_limits = threading.local()  # the deadline of the check cell this thread runs


def _call_timeout():
    """Seconds left for the check cell that is running (its calls into the worker share them)."""
    deadline = getattr(_limits, "deadline", None)
    return None if deadline is None else max(0.1, deadline - time.monotonic())


def free_names(source):
    """The names a check cell reads but does not define itself (at its top level or inside its
    functions): those come from the learner's notebook. Imports and assignments of the cell
    define names; so do its functions' parameters and locals, which stay theirs."""
    tree = ast.parse(source)
    defined, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                defined.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            defined.add(node.name)
    return sorted(read - defined - set(dir(builtins)))


def judge_namespace(worker, source, helpers=None):
    """The globals a check cell runs with in the judge: its free names from the learner's
    notebook (plain data or Remotes), modules other than autograd_lab imported here, and the
    grader's own check helpers. A name the notebook lacks stays undefined (a NameError when the
    check reads it: the learner's cell did not define it)."""
    if helpers is None:
        from . import checks

        helpers = {name: getattr(checks, name) for name in HELPERS}
    namespace = {"__builtins__": builtins, "__name__": "__check__"}
    for name in free_names(source):
        if name in helpers:
            continue
        try:
            value = worker.request({"op": "get", "name": name})
        except NameError:
            continue
        if isinstance(value, Remote) and value._module:
            value = _grader_module(value)
        namespace[name] = value
    namespace.update(helpers)
    return namespace


def _grader_module(remote):
    """The grader's own copy of a module the notebook imported (numpy, math...); autograd_lab's
    modules stay in the worker, where the learner's tensors and graphs are."""
    name = remote._module
    if name == "autograd_lab" or name.startswith("autograd_lab."):
        return remote
    try:
        return importlib.import_module(name)
    except ImportError:
        return remote


class time_limit:
    """Bound a check cell's calls into the worker: together they may take `seconds`."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        _limits.deadline = time.monotonic() + self.seconds

    def __exit__(self, *exc_info):
        _limits.deadline = None
