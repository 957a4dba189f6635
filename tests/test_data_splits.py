"""random_split and Subset give PyTorch's splits: the same seed, the same samples in each part."""

import pytest

import autograd_lab as ag
from autograd_lab.data import Subset, TensorDataset, random_split


def _split_indices(lib, n, lengths, seed):
    from_lib = lib.utils.data
    data = from_lib.TensorDataset(lib.arange(n))
    parts = from_lib.random_split(data, lengths, generator=lib.Generator().manual_seed(seed))
    return [[int(part[i][0]) for i in range(len(part))] for part in parts]


@pytest.mark.parametrize(
    "n, lengths", [(10, [7, 3]), (10, [0.8, 0.2]), (11, [0.5, 0.3, 0.2]), (1000, [0.9, 0.1])]
)
@pytest.mark.parametrize("seed", [0, 42])
def test_random_split_matches_pytorch(n, lengths, seed, torch):
    assert _split_indices(ag, n, lengths, seed) == _split_indices(torch, n, lengths, seed)


def test_subset_picks_samples_in_the_given_order():
    data = TensorDataset(ag.arange(5) * 10)
    part = Subset(data, [4, 0, 2])
    assert len(part) == 3
    assert [int(part[i][0]) for i in range(3)] == [40, 0, 20]


def test_random_split_refuses_lengths_that_do_not_add_up():
    data = TensorDataset(ag.arange(10))
    with pytest.raises(ValueError, match="does not equal the length"):
        random_split(data, [5, 4])
    with pytest.raises(ValueError, match="not between 0 and 1"):
        random_split(data, [1.5, -0.5])


def test_random_split_warns_about_an_empty_part():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = random_split(TensorDataset(ag.arange(2)), [1.0, 0.0])
    assert [len(p) for p in parts] == [2, 0]


def test_is_inference_mode_enabled_as_pytorch(torch):
    def story(lib):
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
            with lib.inference_mode(False):
                seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        return seen

    assert story(ag) == story(torch)
