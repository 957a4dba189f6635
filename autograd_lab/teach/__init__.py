"""teach: what lessons and graders use — self-checks, gradient tables, the exercise generator.

    from autograd_lab.teach import check, check_gradients
    check("ex1", lambda: b.grad.item() == 15, hint="b is used twice: add up both paths")

The authoring format of graded notebooks is described in FORMAT.md next to this file.
"""

from .checks import (
    CheckFailed,
    Mismatch,
    check,
    check_gradients,
    expect,
    gradient_table,
    replacing,
    type_name,
)

# The generator needs nbformat (a notebook tool, not a runtime dependency) and is run as
# `python -m autograd_lab.teach.exercises`: import it only when asked for, so check cells stay
# light and runpy does not find the module already imported.
_LAZY = {"make_exercises", "generate_student_notebook", "FormatError"}

__all__ = [
    "CheckFailed",
    "Mismatch",
    "check",
    "check_gradients",
    "expect",
    "gradient_table",
    "replacing",
    "type_name",
    *sorted(_LAZY),
]


def __getattr__(name):
    if name in _LAZY:
        from . import exercises

        return getattr(exercises, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
