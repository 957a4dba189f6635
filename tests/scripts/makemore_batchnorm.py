# In the style of Zero to Hero's makemore part 3: batch normalisation written by hand (batch mean
# and variance, gain and bias, running statistics updated under no_grad, kaiming-style init with
# a 5/3 gain), then the same with nn.Linear + nn.BatchNorm1d in train and eval modes.
# tolerance: rtol=1e-3 atol=1e-4
import torch
import torch.nn as nn
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
n_embd, n_hidden, vocab_size, block_size = 4, 50, 12, 3
X = torch.randint(0, vocab_size, (200, block_size), generator=g)
Y = (X.sum(1) * 7) % vocab_size
print(X[:3], Y[:3])

C = torch.randn((vocab_size, n_embd), generator=g)
W1 = (
    torch.randn((n_embd * block_size, n_hidden), generator=g)
    * (5 / 3)
    / (n_embd * block_size) ** 0.5
)
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.01
b2 = torch.randn(vocab_size, generator=g) * 0
bngain = torch.ones((1, n_hidden))
bnbias = torch.zeros((1, n_hidden))
bnmean_running = torch.zeros((1, n_hidden))
bnstd_running = torch.ones((1, n_hidden))
parameters = [C, W1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

for i in range(150):
    ix = torch.randint(0, X.shape[0], (32,), generator=g)
    Xb, Yb = X[ix], Y[ix]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -0.1 * p.grad
    if i % 30 == 0:
        print(f"{i:3d} {loss.item():.4f}")

print(bnmean_running[0, :4], bnstd_running[0, :4])
print(f"saturated: {(h.abs() > 0.99).float().mean().item():.4f}")

with torch.no_grad():
    emb = C[X]
    hpreact = emb.view(emb.shape[0], -1) @ W1
    bnmean = hpreact.mean(0, keepdim=True)
    bnvar = hpreact.var(0, keepdim=True, unbiased=True)
    print(bnmean[0, :3], bnvar[0, :3])

torch.manual_seed(42)
model = nn.Sequential(
    nn.Embedding(vocab_size, n_embd),
    nn.Flatten(),
    nn.Linear(n_embd * block_size, n_hidden, bias=False),
    nn.BatchNorm1d(n_hidden),
    nn.Tanh(),
    nn.Linear(n_hidden, vocab_size),
)
print(model)
bn = model[3]
print(bn.running_mean.shape, bn.num_batches_tracked, bn.momentum, bn.eps)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(60):
    ix = torch.randint(0, X.shape[0], (32,), generator=g)
    loss = F.cross_entropy(model(X[ix]), Y[ix])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i % 20 == 0:
        print(f"{i:3d} {loss.item():.4f}")
print(bn.num_batches_tracked, bn.running_mean[:4], bn.running_var[:4])
model.eval()
with torch.no_grad():
    print(f"eval loss {F.cross_entropy(model(X), Y).item():.4f}")
print(model.training, bn.training)
