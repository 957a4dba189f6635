# In the style of the indexing exercises learners meet in NLP and RL code: gather (picking the
# log-probability of each target), scatter and scatter_add_ (building one-hots and histograms),
# index_select, masked_fill, torch.where, and boolean-mask indexing, with gradients.
import torch

torch.manual_seed(0)
logp = torch.randn(4, 5).log_softmax(dim=1)
target = torch.tensor([1, 0, 4, 2])
picked = logp.gather(1, target.unsqueeze(1))
print(picked.squeeze(1))
print(torch.equal(picked.squeeze(1), logp[torch.arange(4), target]))

t = torch.tensor([[1, 2], [3, 4]])
print(torch.gather(t, 1, torch.tensor([[0, 0], [1, 0]])))

onehot = torch.zeros(4, 5).scatter(1, target.unsqueeze(1), 1.0)
print(onehot)
src = torch.arange(1, 11).reshape((2, 5))
index = torch.tensor([[0, 1, 2, 0]])
print(torch.zeros(3, 5, dtype=src.dtype).scatter_(0, index, src))

bins = torch.zeros(5)
values = torch.tensor([0, 1, 1, 3, 4, 4, 4])
bins.scatter_add_(0, values, torch.ones(7))
print(bins)
print(torch.zeros(3).index_add_(0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0])))

x = torch.arange(12.0).reshape(3, 4)
print(torch.index_select(x, 0, torch.tensor([0, 2])))
print(x.index_select(1, torch.tensor([3, 1])))

mask = x > 5
print(mask)
print(x.masked_fill(mask, -1.0))
print(x[mask])
print(torch.where(mask, x, torch.zeros_like(x)))
print(torch.where(x > 8, 1.0, 0.0))
y = x.clone()
y.masked_fill_(~mask, 0)
print(y)

w = torch.randn(3, 4, requires_grad=True)
out = w.gather(1, torch.tensor([[0], [3], [1]])).sum() + w.masked_fill(w > 0, 0.0).sum()
out = out + w.scatter(1, torch.tensor([[2], [2], [2]]), 0.0).pow(2).sum()
out.backward()
print(w.grad)
