# In the style of the tensor-operation cheat sheets learners keep open: sort (values and indices,
# descending, stable), argsort, topk for the k best predictions, kthvalue, unique with counts and
# inverse indices, and argmax/argmin over dims.
import torch

torch.manual_seed(0)
x = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
values, indices = torch.sort(x)
print(values, indices)
print(torch.sort(x, descending=True))
print(x.sort(stable=True).indices)
print(torch.argsort(x, descending=True))

scores = torch.randn(3, 6)
print(scores)
top = scores.topk(2, dim=1)
print(top.values, top.indices)
print(torch.topk(scores, k=3, dim=0, largest=False))
print(scores.kthvalue(2, dim=1))

labels = torch.tensor([2, 0, 2, 1, 0, 2, 2])
print(torch.unique(labels))
print(labels.unique(return_counts=True))
uniq, inverse = torch.unique(labels, sorted=True, return_inverse=True)
print(uniq, inverse)
print(torch.unique(torch.tensor([[1, 2], [1, 2], [3, 4]]), dim=0))

print(scores.argmax(), scores.argmax(dim=1), scores.argmin(dim=0, keepdim=True))
print(scores.max(dim=1), scores.min(dim=0).values)

logits = torch.randn(4, 5)
target = torch.tensor([1, 0, 4, 2])
top2 = logits.topk(2, dim=1).indices
print(top2, (top2 == target.unsqueeze(1)).any(dim=1).float().mean())

w = torch.tensor([0.2, -1.0, 3.0, 0.7], requires_grad=True)
v, i = w.sort(descending=True)
(v * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
print(v, i, w.grad)
w.grad = None
w.topk(2).values.sum().backward()
print(w.grad)
