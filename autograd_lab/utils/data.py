"""The names of `torch.utils.data`, from `autograd_lab.data` (where the code and the datasets live)."""

from ..data import (  # noqa: F401
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
