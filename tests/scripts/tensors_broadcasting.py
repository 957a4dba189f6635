# In the style of d2l.ai's "Data Manipulation" and "Linear Algebra" preliminaries: arange and
# reshape, elementwise operators, concatenation, broadcasting, reductions with axis= and
# keepdims=True, saving memory with in-place updates, conversion to Python numbers.
import torch

x = torch.arange(12, dtype=torch.float32)
print(x)
print(x.numel(), x.shape)
X = x.reshape(3, 4)
print(X)
print(x.reshape(-1, 4).shape)
print(torch.zeros((2, 3, 4)).shape)
print(torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]]))

x = torch.tensor([1.0, 2, 4, 8])
y = torch.tensor([2, 2, 2, 2])
print(x + y, x - y, x * y, x / y, x**y)
print(torch.exp(x))

X = torch.arange(12, dtype=torch.float32).reshape((3, 4))
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
print(torch.cat((X, Y), dim=0))
print(torch.cat((X, Y), dim=1))
print(X == Y)
print(X.sum())

a = torch.arange(3).reshape((3, 1))
b = torch.arange(2).reshape((1, 2))
print(a, b)
print(a + b)

print(X[-1], X[1:3])
X[1, 2] = 17
X[:2, :] = 12
print(X)

Z = torch.zeros_like(Y)
Z[:] = X + Y
before = id(X)
X += Y
print(id(X) == before)

A = X.numpy()
B = torch.from_numpy(A)
print(type(A).__name__, B.dtype)
a = torch.tensor([3.5])
print(a, a.item(), float(a), int(a))

A = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print(A.T)
print(A.sum(axis=0), A.sum(axis=1))
print(A.sum(axis=[0, 1]) == A.sum())
print(A.mean(), A.sum() / A.numel())
print(A.mean(axis=0), A.sum(axis=0) / A.shape[0])
sum_A = A.sum(axis=1, keepdims=True)
print(sum_A, sum_A.shape)
print(A / sum_A)
print(A.cumsum(axis=0))

x = torch.arange(3, dtype=torch.float32)
y = torch.ones(3, dtype=torch.float32)
print(x, y, torch.dot(x, y), torch.sum(x * y))
print(A.shape, x.shape, torch.mv(A, x), A @ x)
B = torch.ones(3, 4)
print(torch.mm(A, B), A @ B)
u = torch.tensor([3.0, -4.0])
print(torch.norm(u))
print(torch.abs(u).sum())
print(torch.norm(torch.ones((4, 9))))
