"""What `register_hook` returns: a handle that takes the hook off again."""

import itertools


class RemovableHandle:
    """Returned by `register_hook`: call `.remove()` to take the hook off again."""

    __slots__ = ("_hooks", "_key")
    _keys = itertools.count()

    def __init__(self, hooks, fn):
        self._hooks, self._key = hooks, next(self._keys)
        hooks[self._key] = fn

    def remove(self):
        self._hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
