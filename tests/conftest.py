"""Shared fixtures. `torch` is the test oracle: tests that take the fixture skip cleanly without it."""

import os

# CUDA tests run in numba's CUDA simulator (no GPU needed), which must be switched on before numba
# is first imported; AUTOGRAD_LAB_REAL_CUDA=1 runs them on a real GPU instead.
if os.environ.get("AUTOGRAD_LAB_REAL_CUDA") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np
import pytest
from hypothesis import settings

import autograd_lab as ag

# In CI the generated examples are the same on every run, so a red build is reproducible.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

try:
    import torch as _torch
except ImportError:  # the oracle is optional: `python dev.py test` installs it, CI requires it
    _torch = None


@pytest.fixture
def torch():
    """The PyTorch module, or skip the test when it is not installed."""
    if _torch is None:
        pytest.skip("PyTorch (the test oracle) is not installed")
    return _torch


@pytest.fixture(autouse=True)
def _fresh_state():
    """Every test starts with recording on, anomaly mode off, and a seeded generator."""
    ag.manual_seed(0)
    yield
    ag.set_grad_enabled(True)
    ag.set_detect_anomaly(False)


@pytest.fixture(params=["autograd_lab", "torch"])
def lib(request):
    """The library under test: autograd_lab, or PyTorch as the oracle (skipped when absent).

    A test that takes `lib` runs twice; passing with torch shows the rule tested is PyTorch's.
    """
    return ag if request.param == "autograd_lab" else request.getfixturevalue("torch")


def values(t):
    """A tensor's values as numpy, for either library."""
    return t.detach().numpy()


def same(ours, theirs):
    """Equal values of ours and PyTorch's (nested tuples of tensors, names, numbers), dtypes and shapes."""
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    elif hasattr(ours, "dtype"):
        np.testing.assert_array_equal(values(ours), values(theirs))
        assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    else:
        assert ours == theirs


def both(torch, run):
    """run(lib) in both libraries, compared."""
    same(run(ag), run(torch))


def raises_alike(torch, make, error, words):
    """make(lib) raises `error` in both libraries (the same class), and ours says `words`."""
    with pytest.raises(error):
        make(torch)
    with pytest.raises(error, match=words):
        make(ag)


def to_numpy(t):
    """Values of an autograd_lab or torch tensor as a float64/int numpy array."""
    if getattr(t, "_is_zerotensor", lambda: False)():
        # PyTorch's efficient zero tensor (sgn's gradient) refuses .numpy() unless forced
        return np.asarray(t.detach().numpy(force=True))
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "cpu") else t.detach().numpy())


def traced_seed_example(backward=True):
    """The classic graph, recorded by viz.record(): a = 2, b = 6, c = a + b, d = b + 1, e = c * d,
    then e.backward() (a.grad = 7, b.grad = 15). Returns the Recording and the tensors by name."""
    from autograd_lab.viz import record

    with record() as t:
        a = ag.tensor(2.0, requires_grad=True)
        b = ag.tensor(6.0, requires_grad=True)
        c = a + b
        d = b + 1
        e = c * d
        if backward:
            e.backward()
    return t, dict(a=a, b=b, c=c, d=d, e=e)


# ---- workloads the fusion tests share (written with ordinary ops, as a model's code would) --------


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(-1, keepdim=True)
    return centred / (var + 1e-5).sqrt() * w + b


def softmax_cross_entropy(x, onehot):
    z = x - x.max(-1, keepdim=True).values
    log_p = z - z.exp().sum(-1, keepdim=True).log()
    return -(log_p * onehot).sum() / x.shape[0]


def fuzz_seed_is_a_readme_simplification(torch, seed, readme):
    """Whether the fuzzer's program `seed` differs from PyTorch only where README's
    Simplifications say so, one of them the line that says `readme`."""
    from fuzzing import check, generator

    result = check(generator.generate(seed), ag, torch)
    return not result.divergences and any(readme in s.readme for _, s in result.accepted)
