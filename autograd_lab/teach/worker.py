"""The learner's side of grading: a process that runs the notebook's cells and answers calls.

    python -m autograd_lab.teach.worker READ_FD WRITE_FD

The grader (judge.py) starts one worker per submission, in a sandbox where the system allows
one (sandbox.py), and sends it requests, one line of JSON each, on the pipe READ_FD; the worker
answers each on WRITE_FD. It never sees the instructor's check cells or hidden tests: it runs
the lesson's cells and the learner's solution cells, and answers what the checks ask of the
names they defined - "call unbroadcast with these arrays", "what is out.grad_fn?".

Everything the worker says is the learner's answer and nothing more: the learner's code runs in
this process and may change anything in it, this module included. So the grader decides no
verdict from what a worker claims; it compares, in its own process, the plain data it gets back
(wire.py) with what it expects.

Requests (`id` numbers the answer):
    {"op": "run", "source": "...", "timeout": 30}      run a cell, as a notebook kernel would
    {"op": "get", "name": "unbroadcast"}                a name of the notebook
    {"op": "getattr", "of": REF, "name": "grad"}        and: setattr (with "value")
    {"op": "call", "of": REF, "args": [...], "kwargs": {...}}
    {"op": "getitem", "of": REF, "key": ...}            and: len, iter, value, str, repr,
    {"op": "operator", "name": "__add__", "of": REF, "args": [...]}   enter, exit
Answers: {"id": n, "ok": true, "value": ...} or {"id": n, "ok": false, "error": {...}}.
A callback of the grader's, called by the learner's code, is a request the other way:
{"callback": cid, "call": m, "args": [...], "kwargs": {...}}, answered by {"reply": m, ...}.
"""

import _thread
import json
import os
import sys
import threading

from . import wire

ITER_LIMIT = 1_000_000  # items of one iteration: an endless generator must not hang the reply


class _Objects:
    """The learner's objects the grader holds references to, kept alive while it may use them
    (so that an id always means the same object, and `is` works on the grader's side)."""

    def __init__(self):
        self.by_ref, self.ref_of = {}, {}

    def refer(self, obj):
        ref = self.ref_of.get(id(obj))
        if ref is None:
            ref = self.ref_of[id(obj)] = len(self.by_ref) + 1
            self.by_ref[ref] = obj
        kind = type(obj)
        return {
            "~": "ref",
            "id": ref,
            "type": f"{kind.__module__}.{kind.__qualname__}",
            "module": obj.__name__ if kind is type(sys) else None,
        }

    def resolve(self, data):
        if data["~"] == "callback":
            return _Callback(data["id"])
        return self.by_ref[data["id"]]


class _Callback:
    """A function or object of the grader's, as the learner's code sees it: calling it, or
    reading one of its public attributes, asks the grader (a check may hand the learner's
    `train` an optimizer that watches each step)."""

    def __init__(self, cid):
        object.__setattr__(self, "_cid", cid)

    def __call__(self, *args, **kwargs):
        return _worker.call_back(self._cid, "call", args=args, kwargs=kwargs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _worker.call_back(self._cid, "getattr", name=name)

    def __getitem__(self, key):
        return _worker.call_back(self._cid, "getitem", args=(key,))

    def __repr__(self):
        return "<an object of the grader's>"


class Worker:
    def __init__(self, read_fd, write_fd):
        self.incoming = os.fdopen(read_fd, "r", encoding="utf-8")
        self.outgoing = os.fdopen(write_fd, "w", encoding="utf-8")
        self.objects = _Objects()
        self.calls = 0
        self.shell = _shell()
        self.namespace = self.shell.user_ns if self.shell else {"__name__": "__main__"}

    # ---- the conversation ------------------------------------------------------------------

    def serve(self):
        """Answer requests until the grader closes the pipe."""
        while True:
            message = self._read()
            if message is None:
                return
            self._answer(message)

    def _read(self):
        line = self.incoming.readline()
        return json.loads(line) if line else None

    def _send(self, message):
        self.outgoing.write(json.dumps(message) + "\n")
        self.outgoing.flush()

    def _answer(self, request):
        try:
            value = getattr(self, "op_" + request["op"])(request)
            self._send({"id": request["id"], "ok": True, "value": self._encode(value)})
        except BaseException as error:  # the learner's exception is an answer too
            # by class name and message only: what the learner's code raised, no traceback
            self._send({"id": request["id"], "ok": False, "error": wire.error_as_data(error)})

    def _encode(self, value):
        return wire.encode(value, refer=self.objects.refer)

    def _decode(self, data):
        return wire.decode(data, resolve=self.objects.resolve)

    def call_back(self, cid, action, name=None, args=(), kwargs=None):
        """Call one of the grader's callbacks, or read an attribute of its object: ask, and
        answer the grader's own requests until it replies."""
        self.calls += 1
        call = self.calls
        self._send(
            {
                "callback": cid,
                "call": call,
                "action": action,
                "name": name,
                "args": self._encode(list(args)),
                "kwargs": self._encode(kwargs or {}),
            }
        )
        while True:
            message = self._read()
            if message is None:
                raise SystemExit("the grader went away")
            if message.get("reply") == call:
                if message["ok"]:
                    return self._decode(message["value"])
                raise _exception(
                    message["error"], AttributeError if action == "getattr" else RuntimeError
                )
            self._answer(message)  # the callback's own requests to this worker

    # ---- the requests ----------------------------------------------------------------------

    def op_run(self, request):
        """Run a cell's source; its exception, if any, is the answer's error."""
        with _time_limit(request.get("timeout")):
            if self.shell is None:
                exec(compile(request["source"], "<cell>", "exec"), self.namespace)
                return None
            result = self.shell.run_cell(request["source"], store_history=False)
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            raise error
        return None

    def op_set(self, request):
        """Rebind a name of the notebook (checks.replacing: a spy in place of a learner's kernel)."""
        self.namespace[request["name"]] = self._decode(request["value"])

    def op_delete(self, request):
        self.namespace.pop(request["name"], None)

    def op_get(self, request):
        name = request["name"]
        if name not in self.namespace:
            raise NameError(f"name {name!r} is not defined")
        return self.namespace[name]

    def op_import(self, request):
        """A module of the worker's own autograd_lab: a check cell's tensors are made by the
        learner's engine, so that they meet the learner's code."""
        import importlib

        name = request["name"]
        if name != "autograd_lab" and not name.startswith("autograd_lab."):
            raise ImportError(f"{name}: a check imports only autograd_lab from the worker")
        return importlib.import_module(name)

    def op_isinstance(self, request):
        return isinstance(self._decode(request["of"]), self._decode(request["classes"]))

    def op_issubclass(self, request):
        return issubclass(self._decode(request["of"]), self._decode(request["classes"]))

    def op_define(self, request):
        """A check's probe class that derives from an engine class (judge.run_check), defined
        beside the notebook's names and the names of the check it uses (`names`)."""
        namespace = dict(self.namespace)
        namespace.update(self._decode(request.get("names", {})))
        exec(compile(request["source"], "<probe class>", "exec"), namespace)
        return namespace[request["name"]]

    def op_getattr(self, request):
        return getattr(self._decode(request["of"]), request["name"])

    def op_setattr(self, request):
        setattr(self._decode(request["of"]), request["name"], self._decode(request["value"]))

    def op_call(self, request):
        """Call the function; answer its result, and the numpy arrays it was given as they are
        now: a kernel or a function that fills an `out` array changes its arguments, and the
        grader's copies must change too (judge.Remote.__call__ writes them back)."""
        function = self._decode(request["of"])
        args, kwargs = self._decode(request["args"]), self._decode(request["kwargs"])
        with _time_limit(request.get("timeout")):
            result = function(*args, **kwargs)
        return result, args, kwargs

    def op_operator(self, request):
        import operator

        with _time_limit(request.get("timeout")):
            function = getattr(operator, request["name"].strip("_"))
            return function(self._decode(request["of"]), *self._decode(request["args"]))

    def op_getitem(self, request):
        return self._decode(request["of"])[self._decode(request["key"])]

    def op_len(self, request):
        return len(self._decode(request["of"]))

    def op_iter(self, request):
        items = []
        for item in self._decode(request["of"]):
            items.append(item)
            if len(items) > ITER_LIMIT:
                raise OverflowError("more than a million items: an endless iterator?")
        return items

    def op_contains(self, request):
        return self._decode(request["key"]) in self._decode(request["of"])

    def op_value(self, request):
        """The object as plain data: a tensor's values as a numpy array, a number as a number."""
        obj = self._decode(request["of"])
        if hasattr(obj, "detach") and hasattr(obj, "numpy"):  # a tensor (ours, or torch's)
            return obj.detach().cpu().numpy().copy()
        import numpy as np

        array = np.asarray(obj)
        if array.dtype.kind not in wire.PLAIN_DTYPE_KINDS:
            raise TypeError(f"a {type(obj).__qualname__} object has no value as numbers")
        return array

    def op_str(self, request):
        return str(self._decode(request["of"]))

    def op_repr(self, request):
        return repr(self._decode(request["of"]))

    def op_enter(self, request):
        return self._decode(request["of"]).__enter__()

    def op_exit(self, request):
        return self._decode(request["of"]).__exit__(None, None, None)


def _exception(error, default=RuntimeError):
    """The grader's exception, raised here: Python's own class by its name, else `default`."""
    return wire.error_from_data(error, lambda name, message: default(message))


class _time_limit:
    """Interrupt the main thread after `seconds` (a KeyboardInterrupt, as Jupyter's stop button).
    Code that ignores it is stopped by the grader's watchdog, which kills the whole worker."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.timer = None

    def __enter__(self):
        if self.seconds:
            self.timer = threading.Timer(self.seconds, _thread.interrupt_main)
            self.timer.daemon = True
            self.timer.start()

    def __exit__(self, *exc_info):
        if self.timer is not None:
            self.timer.cancel()


def _shell():
    """IPython's shell, as in a notebook (magics, `display`), when IPython is installed."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return None
    shell = InteractiveShell.instance()
    shell.showtraceback = lambda *args, **kwargs: None  # tracebacks go nowhere: the grader
    shell.showsyntaxerror = lambda *args, **kwargs: None  # reads the exception itself
    return shell


_worker = None


def main(argv=None):
    global _worker
    argv = sys.argv[1:] if argv is None else argv
    os.environ.setdefault("MPLBACKEND", "Agg")  # plots draw to nowhere, no window opens
    _worker = Worker(int(argv[0]), int(argv[1]))
    _worker.serve()


if __name__ == "__main__":
    main()
