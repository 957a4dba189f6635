# In the style of Zero to Hero's "Let's build GPT": the mathematical trick of self-attention
# (averaging past tokens with a loop, with a tril matrix, and with masked_fill(-inf) + softmax),
# then a single self-attention head with key, query and value projections.
import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(1337)
B, T, C = 4, 8, 2
x = torch.randn(B, T, C)
print(x.shape)

xbow = torch.zeros((B, T, C))
for b in range(B):
    for t in range(T):
        xprev = x[b, : t + 1]
        xbow[b, t] = torch.mean(xprev, 0)

a = torch.tril(torch.ones(3, 3))
a = a / torch.sum(a, 1, keepdim=True)
b = torch.randint(0, 10, (3, 2)).float()
c = a @ b
print("a=")
print(a)
print("--")
print("b=")
print(b)
print("--")
print("c=")
print(c)

wei = torch.tril(torch.ones(T, T))
wei = wei / wei.sum(1, keepdim=True)
xbow2 = wei @ x
# atol=1e-6: the loop's means and the matrix product add float32 numbers in different orders,
# so they differ in the last bits (3e-8 here); at the default atol=1e-8 the answer depends on
# how each library orders its sums, not on the idea being shown
print(torch.allclose(xbow, xbow2, atol=1e-6))

tril = torch.tril(torch.ones(T, T))
wei = torch.zeros((T, T))
wei = wei.masked_fill(tril == 0, float("-inf"))
print(wei[:3])
wei = F.softmax(wei, dim=-1)
xbow3 = wei @ x
print(torch.allclose(xbow, xbow3, atol=1e-6))

C = 32
x = torch.randn(B, T, C)
head_size = 16
key = nn.Linear(C, head_size, bias=False)
query = nn.Linear(C, head_size, bias=False)
value = nn.Linear(C, head_size, bias=False)
k = key(x)
q = query(x)
wei = q @ k.transpose(-2, -1) * head_size**-0.5
wei = wei.masked_fill(tril == 0, float("-inf"))
wei = F.softmax(wei, dim=-1)
v = value(x)
out = wei @ v
print(out.shape)
print(wei[0])
print(k.var(), q.var(), wei.var())
print(torch.triu(torch.ones(4, 4), diagonal=1))
out.sum().backward()
print(key.weight.grad.shape, query.weight.grad.norm() > 0)
