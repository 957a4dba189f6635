"""Grad modes (is autograd recording?) and anomaly mode (where was each node made?).

Both are thread-local, like PyTorch's: a `no_grad()` in one thread never changes another thread.

    >>> import autograd_lab as ag
    >>> x = ag.ones(2, requires_grad=True)
    >>> with ag.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
"""

import functools
import threading


class _State(threading.local):
    enabled = True  # is the graph being recorded?
    anomaly = False  # do nodes remember the user's line that created them?
    anomaly_check_nan = True
    scope = ()  # the names of the enclosing `scope(...)` blocks, outermost first
    on_node = None  # observe(): called with (node, outputs, args, kwargs) for every node recorded
    on_backward = None  # observe(): called with (event, node, detail) as backward runs
    saved_hooks = ()  # saved_tensors_hooks(): the (pack, unpack) pairs in force, innermost last
    saved_hooks_disabled = None  # disable_saved_tensors_hooks(): its error message
    profiler = None  # profiler.profile(): times every op and backward node while active
    inference = False  # inside inference_mode(): is_inference_mode_enabled() says so
    needed = None  # in a grad(inputs=...) pass: the nodes that lead to an input asked for


_state = _State()


def is_grad_enabled():
    """True while operations are being recorded into the graph."""
    return _state.enabled


class _GradModeContext:
    """Base for the grad-mode switches: a context manager and a decorator in one."""

    _mode = True

    def __new__(cls, fn=None):
        if callable(fn):  # used bare, `@no_grad` instead of `@no_grad()`: PyTorch allows both
            return cls()(fn)
        return super().__new__(cls)

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = self._mode

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Stop recording: results of operations inside have `requires_grad=False`.

    Use it for evaluation and for updating parameters by hand (`w -= lr * w.grad`).
    """

    _mode = False


class enable_grad(_GradModeContext):
    """Record again, even inside a `no_grad()` block."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Switch recording on or off: as a function call, a context manager or a decorator."""

    def __init__(self, mode):
        self._mode = bool(mode)
        self._prev = _state.enabled
        _state.enabled = self._mode  # a plain call takes effect at once, as in PyTorch

    def __enter__(self):
        pass  # already switched in __init__

    def __call__(self, fn):
        _state.enabled = self._prev  # used as a decorator: undo the switch made by __init__
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class inference_mode(no_grad):
    """Same as `no_grad()` here (PyTorch adds extra speed-ups we do not need), and
    `is_inference_mode_enabled()` is True inside it."""

    def __init__(self, mode=True):
        self._mode = not mode

    def __enter__(self):
        super().__enter__()
        self._prev_inference = _state.inference
        _state.inference = not self._mode

    def __exit__(self, *exc):
        _state.inference = self._prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = not self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled():
    """True inside `inference_mode()` (and not inside an `inference_mode(False)` in it)."""
    return _state.inference


# ---- anomaly mode -------------------------------------------------------------------------------


def is_anomaly_enabled():
    return _state.anomaly


class detect_anomaly:
    """Remember where each node was created; on a failing or NaN-producing backward, show that line.

    Slow (it records a traceback per operation): switch it on only while hunting a bug.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly, _state.anomaly_check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _state.anomaly, _state.anomaly_check_nan = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly(detect_anomaly):
    """Switch anomaly mode on or off: as a function call or a context manager."""

    def __init__(self, mode, check_nan=True):
        self._prev = (_state.anomaly, _state.anomaly_check_nan)
        _state.anomaly, _state.anomaly_check_nan = bool(mode), check_nan

    def __enter__(self):
        pass
