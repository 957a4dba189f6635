"""random.py's two paths, the compiled one (backend/cpu_random.py) and the numpy reference, draw
the same numbers; numba is loaded only by large draws, and without it the numpy code draws.

(tests/test_random_stream.py runs every PyTorch comparison on both paths; here the paths are
compared with each other on draws too large to repeat there.)
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab import backend
from autograd_lab import random as agr

ROOT = Path(__file__).resolve().parent.parent
LARGE_DRAWS = {
    "randn float32, a tail of 7": lambda g: ag.randn(300_007, generator=g),
    "randn float64": lambda g: ag.randn(200_000, generator=g, dtype=ag.float64),
    "normal_(0.5, 2) float32": lambda g: ag.empty(1000, 301).normal_(0.5, 2.0, generator=g),
    "normal_(-1, 3) float64": lambda g: ag.empty(333, 48, dtype=ag.float64).normal_(
        -1.0, 3.0, generator=g
    ),
    "rand float32": lambda g: ag.rand(300_000, generator=g),
    "uniform_(-3, 5) float64": lambda g: ag.empty(200_000, dtype=ag.float64).uniform_(
        -3.0, 5.0, generator=g
    ),
    "randint, 32-bit draws": lambda g: ag.randint(-5, 1000, (200_000,), generator=g),
    "randint, 64-bit draws": lambda g: ag.randint(0, 2**40, (100_000,), generator=g),
    "randperm": lambda g: ag.randperm(50_000, generator=g),
    "exponential_": lambda g: ag.empty(100_000, dtype=ag.float64).exponential_(2.0, generator=g),
    "bernoulli_(0.3), dropout's mask": lambda g: ag.empty(500, 200).bernoulli_(0.3, generator=g),
    "bernoulli of float32 p": lambda g: ag.bernoulli(ag.full((400, 250), 0.7), generator=g),
    "multinomial": lambda g: ag.multinomial(ag.ones(400, 100), 20, generator=g),
}


def draw_all(monkeypatch, compiled_from, seed=2024):
    monkeypatch.setattr(agr, "compiled_from", compiled_from)
    g = ag.Generator().manual_seed(seed)
    draws = {name: make(g).numpy() for name, make in LARGE_DRAWS.items()}
    return draws, g.get_state().numpy()


def test_both_paths_draw_identical_arrays_and_leave_the_same_state(monkeypatch):
    compiled, compiled_state = draw_all(monkeypatch, 0)
    reference, reference_state = draw_all(monkeypatch, None)
    for name in LARGE_DRAWS:
        assert compiled[name].dtype == reference[name].dtype, name
        assert np.array_equal(compiled[name], reference[name]), name
    assert np.array_equal(compiled_state, reference_state)


def test_a_draw_of_compiled_from_numbers_loads_the_compiled_path_for_every_draw(monkeypatch):
    monkeypatch.setattr(agr, "_compiled", None)  # not loaded yet
    monkeypatch.setattr(agr, "compiled_from", 1000)
    assert agr._compiled_path(999) is None
    assert agr._compiled_path(1000) is not None
    assert agr._compiled_path(1) is not None  # loaded: small draws use it too
    monkeypatch.setattr(agr, "compiled_from", None)
    assert agr._compiled_path(10**6) is None


def run_python(code, **environment):
    """Run `code` in a fresh Python (this checkout's autograd_lab); return what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRAD_LAB_RANDOM"} | environment
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_importing_and_small_draws_load_no_numba():
    code = (
        "import sys, autograd_lab as ag\n"
        "ag.randn(100), ag.rand(9_999), ag.randperm(500)\n"
        "print('numba' in sys.modules)\n"
        "ag.randn(10_000)\n"
        "print('numba' in sys.modules)\n"
    )
    assert run_python(code).split() == ["False", "True"]


def test_the_environment_variable_keeps_every_draw_on_numpy():
    code = (
        "import sys, autograd_lab as ag\n"
        "ag.randn(100_000)\n"
        "print(ag.random.compiled_from, 'numba' in sys.modules)\n"
    )
    assert run_python(code, AUTOGRAD_LAB_RANDOM="numpy").split() == ["None", "False"]


def cannot_cache(*args, **kwargs):
    raise RuntimeError("cannot cache function 'draw_words': no locator available")


@pytest.mark.parametrize("failure", ["numba is not installed", "numba cannot cache"])
def test_without_numba_the_numpy_code_draws_the_same_numbers(monkeypatch, failure):
    expected = ag.randn(20_000, generator=ag.Generator().manual_seed(3))
    if failure == "numba is not installed":  # importing numba (so cpu_random) raises ImportError
        monkeypatch.setitem(sys.modules, "numba", None)
    else:  # numba's @njit(cache=True) raises RuntimeError where it has nowhere to write
        import numba

        monkeypatch.setattr(numba, "njit", cannot_cache)
    monkeypatch.delitem(sys.modules, "autograd_lab.backend.cpu_random", raising=False)
    monkeypatch.delattr(backend, "cpu_random", raising=False)
    monkeypatch.setattr(agr, "_compiled", None)
    monkeypatch.setattr(agr, "compiled_from", 0)
    assert agr._compiled_path(20_000) is None
    again = ag.randn(20_000, generator=ag.Generator().manual_seed(3))
    assert np.array_equal(again.numpy(), expected.numpy())


def test_the_compiled_constants_are_random_pys():
    # the two files spell the same polynomial coefficients; a typo in one would change some bits
    from autograd_lab.backend import cpu_random

    assert list(cpu_random._LOG_C) == list(agr._LOG_COEFFICIENTS)
    assert (cpu_random._S0, cpu_random._S1, cpu_random._S2) == agr._SIN_COEFFICIENTS
    assert (cpu_random._C0, cpu_random._C1, cpu_random._C2) == agr._COS_COEFFICIENTS
    assert (cpu_random._DP1, cpu_random._DP2, cpu_random._DP3) == agr._MINUS_DP
    assert (cpu_random._LOG_Q1, cpu_random._LOG_Q2) == (agr._LOG_Q1, agr._LOG_Q2)
    assert cpu_random._FOUR_OVER_PI == agr._FOUR_OVER_PI
    assert cpu_random._SQRT_HALF == agr._SQRT_HALF


def test_the_cuda_simulator_can_still_be_switched_on_after_a_large_draw():
    # a large draw imports numba, which reads NUMBA_ENABLE_CUDASIM once; use_simulator_if_no_gpu()
    # must make it read the variable again
    if not ag.cuda._numba_cuda_installed() or ag.cuda._nvidia_gpu_count() > 0:
        pytest.skip("needs numba-cuda and a machine without an NVIDIA GPU")
    code = (
        "import sys, autograd_lab as ag\n"
        "ag.randn(100_000)\n"
        "print('numba' in sys.modules, ag.cuda.use_simulator_if_no_gpu())\n"
        "print((ag.ones(3, device='cuda') * 2).cpu().numpy().tolist())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["True True", "[2.0, 2.0, 2.0]"]
