"""Parts of a dataset: `Subset` (some of its samples) and `random_split` (train/validation sets).

    train, val = random_split(dataset, [0.8, 0.2], generator=Generator().manual_seed(42))

The split draws one random permutation of all indices (`randperm`, from the same random stream as
PyTorch's) and cuts it into consecutive pieces, so the same seed gives PyTorch's split.
"""

import math
import warnings
from itertools import accumulate

from .. import random
from .loader import Dataset


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order: `Subset(data, [4, 0])[1]` is data[0]."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split `dataset` at random into non-overlapping Subsets of the given lengths.

    `lengths` are sample counts that add up to len(dataset), or fractions that add up to 1: each
    part then gets floor(fraction * len(dataset)) samples, and the samples left over go one each
    to the first parts, as PyTorch shares them out.
    """
    generator = random.default_generator if generator is None else generator
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _counts_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError(
            f"Sum of input lengths does not equal the length of the input dataset! The lengths "
            f"add up to {sum(lengths)} but the dataset has {len(dataset)} samples: give counts "
            "that add up to its length, or fractions that add up to 1"
        )
    order = random.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, order[end - length : end])
        for end, length in zip(accumulate(lengths), lengths)
    ]


def _counts_from_fractions(fractions, total):
    counts = []
    for i, fraction in enumerate(fractions):
        if not 0 <= fraction <= 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1 (it is {fraction})")
        counts.append(math.floor(total * fraction))
    for i in range(total - sum(counts)):  # what rounding down left over: one each, round robin
        counts[i % len(counts)] += 1
    for i, count in enumerate(counts):
        if count == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return counts
