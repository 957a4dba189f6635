"""A differential fuzzer: random little programs, run in autograd_lab and in PyTorch, compared.

One concept per module, in the order a program travels:

    program.py          a program is plain data: leaves (tensors to start from) and steps
    generator.py        draws programs from a seed; lists the families of calls, and what is
                        left out and why
    draw.py, api_*.py   the families: how each draws its inputs and arguments
    runner.py           runs one program in one library, records what each step gave
    compare.py          two records side by side: the divergences, each with a kind
    simplifications.py  divergences we accept on purpose (README's "Simplifications")
    shrink.py           makes a diverging program as small as it can while it still diverges
    reproduce.py        writes a program as Python source that runs with either library

    >>> from fuzzing import generator, check
    >>> program = generator.generate(seed=3)
    >>> result = check(program)          # runs both libraries and compares them
    >>> result.divergences               # [] when autograd_lab did what PyTorch did

tests/test_fuzz.py runs a fixed slice of seeds in every test run; benchmarks/fuzz.py runs for
minutes and prints a table of what it found.
"""

from .check import check

__all__ = ["check"]
