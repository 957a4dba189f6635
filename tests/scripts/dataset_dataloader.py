# In the style of PyTorch's "Datasets & DataLoaders" tutorial: a custom Dataset with __len__ and
# __getitem__ and a transform, DataLoader batching with and without shuffling (seeded),
# drop_last, a custom collate_fn, random_split, and a TensorDataset of features and labels.
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split

torch.manual_seed(0)


class SquaresDataset(Dataset):
    def __init__(self, n, transform=None):
        self.x = torch.arange(n, dtype=torch.float32)
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        x = self.x[idx]
        sample = (x, x**2)
        if self.transform:
            sample = self.transform(sample)
        return sample


dataset = SquaresDataset(10)
print(len(dataset), dataset[3])
loader = DataLoader(dataset, batch_size=4)
for xb, yb in loader:
    print(xb, yb)

shuffled = DataLoader(dataset, batch_size=3, shuffle=True, drop_last=True)
print(len(shuffled))
for epoch in range(2):
    print(epoch, [xb.tolist() for xb, _ in shuffled])

scaled = SquaresDataset(6, transform=lambda s: (s[0] / 10, s[1] / 100))
print([scaled[i] for i in range(2)])


def as_dict(batch):
    xs, ys = zip(*batch)
    return {"x": torch.stack(xs), "y": torch.stack(ys), "size": len(batch)}


for batch in DataLoader(dataset, batch_size=5, collate_fn=as_dict):
    print(batch["x"], batch["size"])

features = torch.randn(12, 3)
labels = torch.randint(0, 2, (12,))
ds = TensorDataset(features, labels)
print(len(ds), ds[0][0].shape, ds[0][1])
train, test = random_split(ds, [9, 3], generator=torch.Generator().manual_seed(42))
print(len(train), len(test), test.indices)
for xb, yb in DataLoader(train, batch_size=4, shuffle=True):
    print(xb.shape, yb)
