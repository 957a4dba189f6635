"""Data for training: small synthetic datasets, and mini-batches as in `torch.utils.data`.

    from autograd_lab.data import DataLoader, TensorDataset, make_moons, train_test_split

    X, y = make_moons(200, noise=0.1, seed=0)                  # (200, 2) float32, (200,) int64
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, seed=0)
    for xb, yb in DataLoader(TensorDataset(X_train, y_train), batch_size=32, shuffle=True):
        ...

datasets.py (make_moons, make_circles, make_spirals, make_xor, make_blobs, train_test_split:
seeded, no downloads), names.py (load_names: invented first names for lesson 10's makemore),
loader.py (Dataset, TensorDataset, DataLoader, default_collate) and splits.py (Subset,
random_split).
"""

from .datasets import make_blobs, make_circles, make_moons, make_spirals, make_xor, train_test_split
from .loader import DataLoader, Dataset, TensorDataset, default_collate
from .names import load_names
from .splits import Subset, random_split

__all__ = [
    "DataLoader",
    "Dataset",
    "Subset",
    "TensorDataset",
    "default_collate",
    "load_names",
    "make_blobs",
    "make_circles",
    "make_moons",
    "make_spirals",
    "make_xor",
    "random_split",
    "train_test_split",
]
