"""The names of `torch.utils.data`, from `autograd_lab.data` (where the code and the datasets live)."""

from ..data import DataLoader, Dataset, TensorDataset, default_collate  # noqa: F401
