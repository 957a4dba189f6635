"""Datasets and mini-batches, as in `torch.utils.data`: Dataset, TensorDataset, DataLoader.

    >>> import autograd_lab as ag
    >>> from autograd_lab.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(ag.arange(5.0), ag.arange(5)), batch_size=2)
    >>> [len(xb) for xb, yb in loader]
    [2, 2, 1]

A dataset is anything with `len(dataset)` and `dataset[i]`; a DataLoader picks indices (in order,
or shuffled each epoch), asks the dataset for those samples and stacks them into one batch.
The batches are what PyTorch's DataLoader gives for the same order of indices.
"""

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from .. import random
from ..creation import tensor
from ..ops import stack
from ..random import Generator
from ..tensor import Tensor


class Dataset:
    """The base class of map-style datasets: subclasses define `__len__` and `__getitem__`.

    class Squares(Dataset):
        def __len__(self):
            return 10
        def __getitem__(self, i):
            return ag.tensor(float(i)), ag.tensor(float(i * i))
    """

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__ (its sample count)")

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ (one sample)")


class TensorDataset(Dataset):
    """Tensors that share their first dimension; sample i is `(t[i] for t in tensors)`.

    X, y = make_moons(200)
    data = TensorDataset(X, y)        # len(data) == 200; data[0] == (X[0], y[0])
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset() needs at least one tensor, e.g. TensorDataset(X, y)")
        sizes = [len(t) for t in tensors]
        if any(size != sizes[0] for size in sizes):
            # AssertionError, as PyTorch raises here (its check is an assert)
            raise AssertionError(
                f"Size mismatch between tensors: their first dimensions are {sizes}, but sample i "
                "takes row i of each, so they must all have the same number of rows"
            )
        self.tensors = tensors

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)


def default_collate(samples):
    """Stack a list of samples into one batch, the way PyTorch's default_collate does.

        default_collate([(x0, y0), (x1, y1)])   # -> [stack([x0, x1]), stack([y0, y1])]

    Tensors are stacked along a new first dimension; numpy arrays too (as tensors); Python
    floats become a float64 tensor and ints an int64 one; strings stay a list; a tuple or list
    sample becomes a *list* with one batch per position (PyTorch does the same), a dict a dict.
    """
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(list(samples))
    if isinstance(first, (np.ndarray, np.generic)):
        return tensor(np.stack(samples))
    if isinstance(first, bool):
        return tensor(list(samples))
    if isinstance(first, numbers.Integral):
        return tensor(np.array(samples, dtype=np.int64))
    if isinstance(first, numbers.Real):
        return tensor(np.array(samples, dtype=np.float64))
    if isinstance(first, str):
        return list(samples)
    if isinstance(first, Mapping):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, Sequence):
        if any(len(s) != len(first) for s in samples):
            raise RuntimeError("each sample in a batch must have the same number of elements")
        return [default_collate(list(column)) for column in zip(*samples)]
    raise TypeError(
        "default_collate: a batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(first).__name__}. Pass collate_fn= to batch other kinds of samples."
    )


class DataLoader:
    """Mini-batches of a dataset, in order or reshuffled every epoch.

        loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True, generator=0)
        for epoch in range(10):
            for xb, yb in loader:          # xb: (32, 2), yb: (32,); the last batch may be smaller
                ...

    `shuffle=True` draws a new order of the samples at each `for` over the loader, from
    `generator`: an autograd_lab.Generator, an integer seed (a Generator of its own), or None
    for the default one (seeded by autograd_lab.manual_seed). `drop_last=True` skips a last
    batch smaller than batch_size. `sampler`: your own order of indices (then shuffle must stay
    False). `collate_fn` turns a list of samples into a batch (default: default_collate).
    `len(loader)` is the number of batches.

    The order is PyTorch's, draw for draw: each `for` over the loader first takes one 64-bit draw
    from `generator` (PyTorch's seed for worker processes, taken even when nothing is shuffled),
    then, when shuffling, `randperm(n)` from `generator`; with generator=None, from a fresh
    Generator seeded by one draw of the default generator (as torch's RandomSampler does). So
    `manual_seed(0)` gives the batches PyTorch gives, and the same default stream afterwards.
    `num_workers` is accepted, but samples are always loaded in this process (the batches are the
    same; workers only make PyTorch faster).
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        sampler=None,
        num_workers=0,
        collate_fn=None,
        drop_last=False,
        generator=None,
    ):
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, numbers.Integral)
            or (batch_size <= 0)
        ):  # (PyTorch's batch_size=None, "no batching", is not supported here)
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size} "
                "(pass the number of samples per batch, such as batch_size=32)"
            )
        if sampler is not None and shuffle:
            raise ValueError(
                "sampler option is mutually exclusive with shuffle: a sampler already fixes the "
                "order, so pass shuffle=False (or leave sampler=None to let shuffle=True pick it)"
            )
        if not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError(f"num_workers option should be non-negative; got {num_workers!r}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.num_workers = int(num_workers)
        self.collate_fn = collate_fn
        self.drop_last = bool(drop_last)
        self.generator = _as_generator(generator)

    def _indices(self):
        """The indices of one epoch, one at a time, as PyTorch's samplers hand them out."""
        if self.sampler is not None:
            yield from (int(i) for i in self.sampler)
            return
        n = len(self.dataset)
        if not self.shuffle:
            yield from range(n)
            return
        # torch's RandomSampler, draw for draw: with no generator, a Generator of its own for
        # this epoch, seeded by one draw of the default generator
        generator = self.generator
        if generator is None:
            seed = int(random.random_integers_array(None, 1, np.int64)[0])
            generator = Generator().manual_seed(seed)
        yield from random.randperm_array(generator, n).tolist()
        # RandomSampler then draws one more permutation, for the `num_samples % n` samples left
        # over (none here): the draws happen, so the generator moves on as PyTorch's does.
        random.randperm_array(generator, n)

    def __iter__(self):
        # PyTorch takes a seed for its worker processes when the iteration starts (`iter(loader)`),
        # before any batch is made, from the loader's generator (or the default one).
        random.random_integers_array(self.generator, 1, np.int64)
        return self._batches()

    def _batches(self):
        """Batches of indices as torch's BatchSampler makes them from the sampler's indices."""
        batch = []
        for index in self._indices():
            batch.append(index)
            if len(batch) == self.batch_size:
                yield self._batch(np.array(batch, dtype=np.int64))
                batch = []
        if batch and not self.drop_last:
            yield self._batch(np.array(batch, dtype=np.int64))

    def _batch(self, indices):
        if isinstance(self.dataset, TensorDataset) and self.collate_fn is None:
            # Fast path: one gather per tensor gives the same batch as stacking rows one by one.
            return [t[indices] for t in self.dataset.tensors]
        samples = [self.dataset[int(i)] for i in indices]
        return (self.collate_fn or default_collate)(samples)

    def __len__(self):
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def _as_generator(generator):
    if generator is None or isinstance(generator, Generator):
        return generator
    if isinstance(generator, numbers.Integral) and not isinstance(generator, bool):
        if generator < 0:
            raise ValueError(f"a generator seed must be a non-negative integer; got {generator}")
        return Generator().manual_seed(int(generator))
    raise ValueError(
        "generator must be an autograd_lab.Generator, an integer seed (such as generator=0), or "
        f"None for the default generator; got {type(generator).__name__}"
    )
