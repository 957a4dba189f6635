# In the style of d2l.ai's "Linear Algebra" norms section and PyTorch's torch.linalg docs: vector
# and matrix norms (torch.norm, linalg.norm, vector_norm, matrix_norm), cumulative sums and
# products, and the gradient of a norm, also used to normalise rows.
import torch

torch.manual_seed(0)
u = torch.tensor([3.0, -4.0])
print(torch.norm(u), u.norm(), u.norm(p=1), u.norm(p=float("inf")))
print(torch.linalg.norm(u), torch.linalg.vector_norm(u, ord=1), torch.linalg.vector_norm(u, ord=3))

A = torch.arange(1.0, 7.0).reshape(2, 3)
print(torch.norm(A), torch.linalg.norm(A), torch.linalg.matrix_norm(A))
print(torch.linalg.norm(A, dim=1), A.norm(dim=0, keepdim=True))
print(torch.linalg.matrix_norm(A, ord=1), torch.linalg.matrix_norm(A, ord=float("inf")))
print(torch.linalg.vector_norm(A, ord=2, dim=(0, 1)))

x = torch.randn(4, 3, requires_grad=True)
n = x.norm(dim=1, keepdim=True)
unit = x / n
print(unit.norm(dim=1))
unit.sum().backward()
print(x.grad)

x.grad = None
torch.linalg.vector_norm(x).backward()
print(torch.allclose(x.grad, x / x.norm()))

print(torch.cumsum(torch.arange(1, 6), dim=0))
print(A.cumsum(dim=1), A.cumsum(0))
print(torch.cumprod(torch.tensor([1.0, 2.0, 3.0, 4.0]), dim=0))
counts = torch.tensor([3, 1, 4, 1, 5])
probs = counts.float() / counts.sum()
print(probs.cumsum(0), probs.cumsum(0)[-1])

w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
c = w.cumsum(0)
(c * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(c, w.grad)

v = torch.randn(5, dtype=torch.float64)
print(torch.dist(v, torch.zeros(5, dtype=torch.float64)), v.norm().dtype)
print(torch.nn.functional.normalize(torch.tensor([[3.0, 4.0], [1.0, 0.0]]), dim=1))
