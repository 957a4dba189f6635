"""How long autograd_lab takes to draw PyTorch's random numbers, next to PyTorch itself.

    python benchmarks/random_stream.py            # the compiled path (backend/cpu_random.py)
    AUTOGRAD_LAB_RANDOM=numpy python benchmarks/random_stream.py   # random.py's numpy code

Both libraries draw the same numbers (tests/test_random_stream.py checks the bits). Each row is
the best of 15 runs of 3 calls, PyTorch at its default number of threads; `load` is the machine's
1-minute load average when the row was timed (on a busy machine, rerun: the best of N only hides
short interruptions). The first call of each case runs before the timing: numba compiles (or
loads its cached code) then, once. Not part of run.py's table: a standalone check of random.py.

Measured (2026-11-25, 2-core AMD EPYC VM shared with other jobs, load 4 to 9, torch on 2 threads;
the ratios moved by +-50% between runs): compiled path randn float32 0.7-1.4x PyTorch's time,
float64 0.9-1.2x, rand 0.3-0.5x, rand float64 0.6-1.2x, normal_(0.5, 2) 1.2-1.8x, uniform_(-1, 1)
0.7-1.4x, randint 0.6-1.0x, randperm(100000) under 0.2x, multinomial: makemore's single call
1.9-3.4x (Python and numpy call overhead, ~40-70 us), the batched rows 0.1-0.6x. The numpy path:
randn float32 18x, float64 6x, rand 6-10x.
"""

import os
import timeit

import numpy as np
import torch

import autograd_lab as ag

WEIGHTS = np.random.default_rng(0).random((1000, 100)).astype(np.float32)
CASES = [
    ("randn(1000, 1000)", lambda m: m.randn(1000, 1000)),
    ("randn(1000, 1000, dtype=float64)", lambda m: m.randn(1000, 1000, dtype=m.float64)),
    ("rand(1000, 1000)", lambda m: m.rand(1000, 1000)),
    ("rand(1000, 1000, dtype=float64)", lambda m: m.rand(1000, 1000, dtype=m.float64)),
    ("empty(1000, 1000).normal_(0.5, 2)", lambda m: m.empty(1000, 1000).normal_(0.5, 2.0)),
    ("empty(1000, 1000).uniform_(-1, 1)", lambda m: m.empty(1000, 1000).uniform_(-1.0, 1.0)),
    ("randint(0, 10, (1000, 1000))", lambda m: m.randint(0, 10, (1000, 1000))),
    ("randperm(100000)", lambda m: m.randperm(100000)),
    ("multinomial(p[27], 1, True)", lambda m: m.multinomial(m.ones(27), 1, True)),
    ("multinomial(p[1000, 100], 1, True)", lambda m: m.multinomial(m.tensor(WEIGHTS), 1, True)),
    ("multinomial(p[1000, 100], 10)", lambda m: m.multinomial(m.tensor(WEIGHTS), 10)),
]


def best_ms(draw, module):
    draw(module)  # compile, warm the caches
    return min(timeit.repeat(lambda: draw(module), number=3, repeat=15)) / 3 * 1e3


path = "numpy (AUTOGRAD_LAB_RANDOM=numpy)" if ag.random.compiled_from is None else "compiled"
print(f"autograd_lab: {path} path; torch {torch.__version__}, {torch.get_num_threads()} threads")
print(f"{'':36} {'autograd_lab':>12} {'torch':>10} {'ratio':>7} {'load':>6}")
for name, draw in CASES:
    ours, theirs = best_ms(draw, ag), best_ms(draw, torch)
    load = os.getloadavg()[0]
    print(f"{name:36} {ours:9.3f} ms {theirs:7.3f} ms {ours / theirs:6.1f}x {load:6.2f}")
