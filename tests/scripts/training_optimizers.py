# In the style of PyTorch's "Optimizing Model Parameters" tutorial and the many training loops
# learners write: one small classifier trained with SGD (momentum, weight decay), Adam, RMSprop and
# Adagrad from the same start, printing the optimizer, its param_groups and the losses.
# tolerance: rtol=1e-3 atol=1e-4
import copy

import torch
from torch import nn

torch.manual_seed(0)
X = torch.randn(64, 6)
y = (X[:, 0] + 0.5 * X[:, 1] - X[:, 2] > 0).long()
print(y[:10], y.sum())

start = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
loss_fn = nn.CrossEntropyLoss()


def train(make_optimizer, steps=40):
    model = copy.deepcopy(start)
    optimizer = make_optimizer(model.parameters())
    for step in range(steps):
        pred = model(X)
        loss = loss_fn(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"  step {step:2d} loss: {loss.item():>7f}")
    with torch.no_grad():
        correct = (model(X).argmax(1) == y).type(torch.float).sum().item()
    print(f"  accuracy: {100 * correct / len(X):>0.1f}%, final loss {loss.item():.5f}")
    return optimizer


print("SGD")
opt = train(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4))
print(opt)
print(
    opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"], len(opt.param_groups[0]["params"])
)
print("SGD nesterov")
train(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True))
print("Adam")
opt = train(lambda p: torch.optim.Adam(p, lr=1e-2))
print(opt.defaults["betas"], opt.defaults["eps"])
print("AdamW")
train(lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1))
print("RMSprop")
train(lambda p: torch.optim.RMSprop(p, lr=1e-2, alpha=0.9))
print("Adagrad")
train(lambda p: torch.optim.Adagrad(p, lr=0.1))
