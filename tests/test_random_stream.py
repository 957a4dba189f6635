"""autograd_lab.random draws PyTorch's CPU random numbers: the same seed gives the same bits.

Every comparison is exact (np.array_equal), for float32 and float64, on both of PyTorch's code
paths for normal samples (fewer than 16 elements, and 16 or more, with the recomputed tail), and
every test runs twice: on the compiled path (backend/cpu_random.py) and on random.py's numpy code.
"""

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab import random as agr

pytestmark = pytest.mark.oracle

SEEDS = [0, 1, 42, 2147483647, 2**40 + 3]
SIZES = [0, 1, 15, 16, 17, 31, 32, 33, 1000]
DTYPES = ["float32", "float64"]


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def draw_path(request, monkeypatch):
    """Every test runs on both paths: the compiled one (backend/cpu_random.py), here for draws of
    any size, and the numpy reference code of random.py."""
    if request.param == "compiled":
        monkeypatch.setattr(agr, "compiled_from", 0)
        if agr._compiled_path(0) is None:
            pytest.skip("numba is not installed: there is no compiled path")
    else:
        monkeypatch.setattr(agr, "compiled_from", None)
    return request.param


def same(ours, theirs):
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    return (
        ours.dtype == theirs.dtype and ours.shape == theirs.shape and np.array_equal(ours, theirs)
    )


def generators(torch, seed):
    return ag.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


# ---- the engine --------------------------------------------------------------------------------


def test_mersenne_twister_gives_the_reference_sequence():
    # C++'s std::mt19937 requires the 10000th number from the default seed 5489 to be 4123659995
    words = agr.MersenneTwister(5489).random(10000)
    assert words[0] == 3499211612 and words[-1] == 4123659995


def test_drawing_in_pieces_gives_the_same_words_as_at_once():
    engine, pieces = agr.MersenneTwister(7), agr.MersenneTwister(7)
    whole = engine.random(3000)
    parts = [pieces.random(n) for n in (1, 622, 1, 624, 625, 1127)]
    assert np.array_equal(whole, np.concatenate(parts))


# ---- uniform and normal, sizes and seeds ---------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rand_and_randn_equal_pytorch_for_every_size(torch, seed, dtype):
    g, tg = generators(torch, seed)
    for n in SIZES:
        assert same(
            ag.rand(n, generator=g, dtype=getattr(ag, dtype)),
            torch.rand(n, generator=tg, dtype=getattr(torch, dtype)),
        ), n
        assert same(
            ag.randn(n, generator=g, dtype=getattr(ag, dtype)),
            torch.randn(n, generator=tg, dtype=getattr(torch, dtype)),
        ), n


def test_randn_float32_equals_pytorch_on_a_million_values(torch):
    # the AVX2 log and sin/cos polynomials, reproduced with their fused multiply-adds
    g, tg = generators(torch, 123)
    assert same(ag.randn(1000, 1000, generator=g), torch.randn(1000, 1000, generator=tg))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (4, 1, 9), (50, 20)])
def test_multi_dimensional_uniform_and_normal_fills(torch, dtype, shape):
    g, tg = generators(torch, 5)
    ours, theirs = (
        ag.empty(shape, dtype=getattr(ag, dtype)),
        torch.empty(shape, dtype=getattr(torch, dtype)),
    )
    assert same(ours.uniform_(-0.3, 0.7, generator=g), theirs.uniform_(-0.3, 0.7, generator=tg))
    assert same(ours.normal_(0.5, 0.02, generator=g), theirs.normal_(0.5, 0.02, generator=tg))
    assert same(ours.normal_(-1.5, 3.0, generator=g), theirs.normal_(-1.5, 3.0, generator=tg))


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_tensors_are_filled_in_memory_order(torch, dtype):
    g, tg = generators(torch, 9)
    ours = ag.empty(20, 6, dtype=getattr(ag, dtype)).t()
    theirs = torch.empty(20, 6, dtype=getattr(torch, dtype)).t()
    assert same(ours.normal_(generator=g), theirs.normal_(generator=tg))  # the scalar path
    assert same(ours.uniform_(generator=g), theirs.uniform_(generator=tg))


def test_the_spare_normal_is_kept_between_small_draws_and_cleared_by_manual_seed(torch):
    g, tg = generators(torch, 3)
    for n in (3, 1, 5, 2, 16, 1):  # odd sizes leave a spare sample in the generator
        assert same(
            ag.randn(n, generator=g, dtype=ag.float64),
            torch.randn(n, generator=tg, dtype=torch.float64),
        )
    g.manual_seed(3), tg.manual_seed(3)
    assert same(ag.randn(3, generator=g), torch.randn(3, generator=tg))


# ---- integers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 2**40 + 3])
def test_randint_equals_pytorch_for_small_and_wide_ranges(torch, seed):
    g, tg = generators(torch, seed)
    # from 2**28 on, PyTorch draws 64 bits per number
    for low, high in [(0, 10), (-5, 5), (0, 2**28 - 1), (0, 2**28), (-(2**30), 2**30), (3, 2**40)]:
        for n in (1, 17, 100):
            assert same(
                ag.randint(low, high, (n,), generator=g),
                torch.randint(low, high, (n,), generator=tg),
            ), (low, high)
    assert same(ag.randint(10, (2, 3), generator=g), torch.randint(10, (2, 3), generator=tg))
    assert same(
        ag.randint(-3, 2**20, (40,), generator=g, dtype=ag.float32),
        torch.randint(-3, 2**20, (40,), generator=tg, dtype=torch.float32),
    )
    x, tx = ag.ones(3, 4), torch.ones(3, 4)
    assert same(ag.randint_like(x, 10, generator=g), torch.randint_like(tx, 10, generator=tg))
    assert same(
        ag.randint_like(x, -5, 10, generator=g), torch.randint_like(tx, -5, 10, generator=tg)
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_random_without_a_range_equals_pytorch(torch, dtype):
    g, tg = generators(torch, 11)
    ours = ag.empty(40, dtype=getattr(ag, dtype))
    theirs = torch.empty(40, dtype=getattr(torch, dtype))
    assert same(ours.random_(generator=g), theirs.random_(generator=tg))
    if dtype != "bool":
        assert same(ours.random_(7, generator=g), theirs.random_(7, generator=tg))
        assert same(ours.random_(2, 9, generator=g), theirs.random_(2, 9, generator=tg))


@pytest.mark.parametrize("n", [0, 1, 2, 10, 33, 1000])
def test_randperm_equals_pytorch(torch, n):
    g, tg = generators(torch, 2147483647)
    assert same(ag.randperm(n, generator=g), torch.randperm(n, generator=tg))
    assert same(ag.randperm(n, generator=g), torch.randperm(n, generator=tg))


# ---- bernoulli, exponential, multinomial -----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_and_exponential_equal_pytorch(torch, dtype):
    g, tg = generators(torch, 42)
    ours, theirs = (
        ag.empty(7, 5, dtype=getattr(ag, dtype)),
        torch.empty(7, 5, dtype=getattr(torch, dtype)),
    )
    assert same(ours.bernoulli_(0.3, generator=g), theirs.bernoulli_(0.3, generator=tg))
    assert same(ours.exponential_(2.5, generator=g), theirs.exponential_(2.5, generator=tg))
    p = np.linspace(0, 1, 35).reshape(7, 5).astype(dtype)  # float32 p: 24-bit uniforms
    assert same(
        ag.bernoulli(ag.tensor(p), generator=g), torch.bernoulli(torch.tensor(p), generator=tg)
    )
    assert same(ag.tensor(p).bernoulli(generator=g), torch.tensor(p).bernoulli(generator=tg))


@pytest.mark.parametrize(
    "num_samples, replacement", [(1, True), (1, False), (5, False), (5, True), (27, False)]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_multinomial_equals_pytorch(torch, num_samples, replacement, dtype):
    weights = np.random.default_rng(0).random((3, 27)).astype(dtype)
    g, tg = generators(torch, 7)
    for rows in (weights, weights[0]):  # 2-d and 1-d
        ours = ag.multinomial(ag.tensor(rows), num_samples, replacement, generator=g)
        theirs = torch.multinomial(torch.tensor(rows), num_samples, replacement, generator=tg)
        assert same(ours, theirs)


def test_a_makemore_sampling_loop_draws_the_same_names(torch):
    counts = np.random.default_rng(1).integers(1, 50, size=(27, 27)).astype(np.float32)
    P, tP = ag.tensor(counts), torch.tensor(counts)
    P, tP = P / P.sum(1, keepdim=True), tP / tP.sum(1, keepdim=True)
    g, tg = generators(torch, 2147483647)
    for _ in range(20):
        ix, tix, ours, theirs = 0, 0, [], []
        while True:
            ix = ag.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
            tix = torch.multinomial(tP[tix], num_samples=1, replacement=True, generator=tg).item()
            ours.append(ix), theirs.append(tix)
            if ix == 0 or len(ours) > 30:
                break
        assert ours == theirs


# ---- the generator's state and the module-level functions -------------------------------------------


def test_state_is_pytorchs_5056_bytes_and_round_trips(torch):
    assert same(ag.Generator().get_state(), torch.Generator().get_state())
    for draws in (0, 623, 624, 625, 1249):
        g, tg = generators(torch, 5)
        ag.rand(draws, generator=g), torch.rand(draws, generator=tg)
        ag.randn(3, generator=g), torch.randn(3, generator=tg)  # leaves a spare normal
        assert same(g.get_state(), tg.get_state()), draws
    saved = g.get_state()
    first = ag.randn(5, generator=g)
    assert same(ag.randn(5, generator=g.set_state(saved)), first)
    # PyTorch's state works here, and ours in PyTorch
    assert same(
        ag.randn(9, generator=ag.Generator().set_state(tg.get_state())),
        torch.randn(9, generator=tg),
    )
    tg.set_state(torch.from_numpy(g.get_state().numpy()))
    assert same(ag.rand(4, generator=g), torch.rand(4, generator=tg))


def test_default_generator_functions_match_torch_random(torch):
    for name in (
        "manual_seed",
        "seed",
        "initial_seed",
        "get_rng_state",
        "set_rng_state",
        "fork_rng",
    ):
        assert callable(getattr(ag.random, name)), name
    for negative in (-1, -(2**63)):  # stored as unsigned 64-bit numbers
        ag.manual_seed(negative), torch.manual_seed(negative)
        assert ag.initial_seed() == torch.initial_seed() and same(ag.rand(3), torch.rand(3))
    ag.random.manual_seed(2**40 + 3), torch.random.manual_seed(2**40 + 3)
    assert ag.initial_seed() == torch.initial_seed() == 2**40 + 3
    assert same(ag.get_rng_state(), torch.get_rng_state())
    with ag.random.fork_rng():
        ag.rand(10)
    assert same(ag.rand(3), torch.rand(3))
    state = ag.get_rng_state()
    a = ag.randn(4)
    ag.set_rng_state(state)
    assert same(ag.randn(4), a)
    assert 0 <= ag.seed() < 2**64 and ag.initial_seed() == ag.default_generator.initial_seed()


def test_a_mixed_sequence_on_the_default_generator_equals_pytorch(torch):
    ag.manual_seed(42), torch.manual_seed(42)
    calls = [
        lambda m: m.rand(5),
        lambda m: m.randn(3),
        lambda m: m.randint(0, 10, (7,)),
        lambda m: m.randn(17, dtype=m.float64),
        lambda m: m.randperm(10),
        lambda m: m.normal(1.0, 3.0, (5, 7)),
        lambda m: m.rand(2, 3, dtype=m.float64),
        lambda m: m.randn(1),
        lambda m: m.rand_like(m.ones(3, 4, dtype=m.float64)),
        lambda m: m.randn_like(m.ones(3, 5)),
        lambda m: m.normal(m.arange(20.0), 2.0),
        lambda m: m.normal(1.0, m.arange(20.0)),
        lambda m: m.normal(m.arange(20.0), m.arange(20.0) * 0.5),
        lambda m: m.empty(4, 4).exponential_(),
        lambda m: m.bernoulli(m.full((3, 5), 0.5)),
    ]
    for call in calls:
        assert same(call(ag), call(torch))
    assert same(ag.get_rng_state(), torch.get_rng_state())


# ---- what draws from the stream: nn.init, dropout, DataLoader ------------------------------------


@pytest.mark.parametrize("seed", [0, 42])
def test_linear_layers_start_with_pytorchs_weights(torch, seed):
    ag.manual_seed(seed), torch.manual_seed(seed)
    for shape in [(784, 512), (30, 7)]:
        ours, theirs = ag.nn.Linear(*shape), torch.nn.Linear(*shape)
        assert same(ours.weight, theirs.weight) and same(ours.bias, theirs.bias)


@pytest.mark.parametrize(
    "name", ["xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]
)
def test_init_functions_equal_pytorch(torch, name):
    ag.manual_seed(1), torch.manual_seed(1)
    ours = getattr(ag.nn.init, name)(ag.empty(20, 33))
    assert same(ours, getattr(torch.nn.init, name)(torch.empty(20, 33)))


@pytest.mark.filterwarnings("ignore:mean is more than 2 std")
@pytest.mark.parametrize(
    "mean, std, a, b", [(0, 1, -2, 2), (0, 0.02, -0.04, 0.04), (0, 1, 1.5, 3), (0, 1, 2.5, 2.7)]
)
def test_trunc_normal_equals_pytorch_on_both_of_its_paths(torch, mean, std, a, b):
    # a wide window: normals redrawn until inside; a narrow one: uniforms accepted by the pdf
    ag.manual_seed(3), torch.manual_seed(3)
    ours = ag.nn.init.trunc_normal_(ag.empty(50, 30), mean, std, a, b)
    assert same(ours, torch.nn.init.trunc_normal_(torch.empty(50, 30), mean, std, a, b))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_dropout_masks_equal_pytorch(torch, dtype, p):
    ag.manual_seed(0), torch.manual_seed(0)
    x, tx = (
        ag.ones(4, 100, dtype=getattr(ag, dtype)),
        torch.ones(4, 100, dtype=getattr(torch, dtype)),
    )
    assert same(ag.nn.functional.dropout(x, p), torch.nn.functional.dropout(tx, p))
    assert same(ag.nn.Dropout(p)(x), torch.nn.Dropout(p)(tx))
    assert same(ag.rand(2), torch.rand(2))  # the same number of draws


@pytest.mark.parametrize("seeded_loader", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_dataloader_shuffles_as_pytorch_epoch_after_epoch(torch, seeded_loader, drop_last):
    ag.manual_seed(0), torch.manual_seed(0)
    ours = ag.data.DataLoader(
        ag.data.TensorDataset(ag.arange(10.0)),
        batch_size=3,
        shuffle=True,
        drop_last=drop_last,
        generator=ag.Generator().manual_seed(3) if seeded_loader else None,
    )
    theirs = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(10.0)),
        batch_size=3,
        shuffle=True,
        drop_last=drop_last,
        generator=torch.Generator().manual_seed(3) if seeded_loader else None,
    )
    for _ in range(3):
        assert [b[0].tolist() for b in ours] == [b[0].tolist() for b in theirs]
    list(ag.data.DataLoader(ag.data.TensorDataset(ag.arange(4.0))))  # unshuffled: still one draw
    list(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(4.0))))
    assert same(ag.rand(3), torch.rand(3))


# ---- clear errors ------------------------------------------------------------------------------------


def test_bad_arguments_say_what_to_do():
    with pytest.raises(ValueError, match=r"Generator\(\).manual_seed"):
        ag.Generator(7)
    with pytest.raises(TypeError, match="integer seed"):
        ag.manual_seed(1.5)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        ag.manual_seed(2**64)
    with pytest.raises(RuntimeError, match="less than 'to'"):
        ag.randint(5, 5, (3,))
    with pytest.raises(RuntimeError, match="do not fit in uint8"):
        ag.randint(0, 300, (3,), dtype=ag.uint8)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ag.rand(3, dtype=ag.int64)  # as PyTorch: uniform_ has no integer kernel
    with pytest.raises(RuntimeError, match="without replacement"):
        ag.multinomial(ag.ones(3), 4)
    with pytest.raises(RuntimeError, match="5056 bytes"):
        ag.default_generator.set_state(ag.zeros(10, dtype=ag.uint8))
