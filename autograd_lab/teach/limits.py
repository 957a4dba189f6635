"""Start a program under a memory limit: the first step of every grading worker.

    $ python -m autograd_lab.teach.limits --memory 2147483648 -- python -c "print('hi')"
    hi

It sets the limits on itself, then replaces itself with the program (`os.execvp`): the program
starts with the limits already in place, and the limits are inherited by everything it starts.

Why a launcher, and not `subprocess.Popen(preexec_fn=...)`: the grader starts several workers from
threads, and `preexec_fn` runs Python code between fork and exec, which the `subprocess` docs say
is not safe in a program with threads (it can deadlock). A separate program has no such problem,
and it works the same inside the sandbox (sandbox.py) and outside it.

Why RLIMIT_DATA, not RLIMIT_AS: RLIMIT_AS counts *reserved* address space, and Python reserves a
lot it never uses. Measured on this project (Linux, glibc, Python 3.11): importing autograd_lab
and numba and compiling one numba function needs an RLIMIT_AS of about 390 MiB but an
RLIMIT_DATA of about 180 MiB; 32 threads that each use numpy reserve 1.1 GiB of address space
(glibc gives every thread its own 64 MiB malloc arena) while using 130 MiB of memory. So an
RLIMIT_AS of 2 GiB would fail honest programs on a machine with many cores. RLIMIT_DATA counts the
memory a program can write to (its heap and private mappings) and is what `MemoryError` should
mean. What it does not count: memory shared with `mmap(MAP_SHARED)` and files written to a
memory-backed folder (the sandbox gives /tmp a size of its own for that reason). Linux counts
mmap in RLIMIT_DATA since 4.7; macOS does not hold programs to it, and Windows has no rlimits.
"""

import argparse
import os
import sys

try:
    import resource
except ImportError:  # Windows
    resource = None


def apply_limits(memory_bytes):
    """Limit this process (and what it starts) to `memory_bytes` of writable memory."""
    if resource is None:
        return  # no limits to set: sandbox.describe() says so in the report
    resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    # No core files: a worker that crashes would otherwise write its memory into the work folder.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(arguments=None):
    parser = argparse.ArgumentParser(
        prog="python -m autograd_lab.teach.limits",
        description="Run a program under a memory limit (RLIMIT_DATA).",
    )
    parser.add_argument("--memory", type=int, required=True, metavar="BYTES")
    parser.add_argument("program", nargs="+", help="the program and its arguments, after --")
    options = parser.parse_args(arguments)
    if options.memory <= 0:
        parser.error(f"--memory must be a positive number of bytes, not {options.memory}")
    apply_limits(options.memory)
    try:
        os.execvp(options.program[0], options.program)
    except OSError as error:
        # 127 is what a shell answers for a program it cannot run
        print(f"limits: could not start {options.program[0]!r}: {error}", file=sys.stderr)
        sys.exit(127)


if __name__ == "__main__":
    main()
