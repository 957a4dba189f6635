"""How long autograd_lab takes to draw PyTorch's random numbers, next to PyTorch itself.

    python benchmarks/random_stream.py

Both draw the same numbers (tests/test_random_stream.py checks the bits); the best of 7 runs of 3
calls each is shown, with PyTorch on one thread (its random kernels are serial anyway). Not part
of run.py's table: a standalone check of random.py's speed.
"""

import timeit

import torch

import autograd_lab as ag

torch.set_num_threads(1)
CASES = [
    ("randn(1000, 1000)", lambda m: m.randn(1000, 1000)),
    ("rand(1000, 1000)", lambda m: m.rand(1000, 1000)),
    ("randn(1000, 1000, dtype=float64)", lambda m: m.randn(1000, 1000, dtype=m.float64)),
]


def best_ms(draw, module):
    return min(timeit.repeat(lambda: draw(module), number=3, repeat=7)) / 3 * 1e3


for name, draw in CASES:
    ours, theirs = best_ms(draw, ag), best_ms(draw, torch)
    print(f"{name:34} autograd_lab {ours:6.1f} ms   torch {theirs:5.1f} ms   {ours / theirs:4.1f}x")
