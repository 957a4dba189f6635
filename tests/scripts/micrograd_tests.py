# In the style of Karpathy's micrograd test file: small scalar expressions built with every
# operator, their values and gradients, computed in float64 (the oracle's way of checking).
import torch


def sanity_check():
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    print(y.data.item(), x.grad.item())


def more_ops():
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    print(f"{g.data.item():.10f}")
    print(f"{a.grad.item():.10f} {b.grad.item():.10f}")


def neuron():
    x1 = torch.Tensor([2.0]).double()
    x1.requires_grad = True
    x2 = torch.Tensor([0.0]).double()
    x2.requires_grad = True
    w1 = torch.Tensor([-3.0]).double()
    w1.requires_grad = True
    w2 = torch.Tensor([1.0]).double()
    w2.requires_grad = True
    b = torch.Tensor([6.8813735870195432]).double()
    b.requires_grad = True
    n = x1 * w1 + x2 * w2 + b
    o = torch.tanh(n)
    print(f"{o.data.item():.6f}")
    o.backward()
    print("x2", f"{x2.grad.item():.6f}")
    print("w2", f"{w2.grad.item():.6f}")
    print("x1", f"{x1.grad.item():.6f}")
    print("w1", f"{w1.grad.item():.6f}")


sanity_check()
more_ops()
neuron()

torch.manual_seed(1337)
xs = torch.tensor([[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]])
ys = torch.tensor([1.0, -1.0, -1.0, 1.0])
w1 = torch.randn(3, 4, requires_grad=True)
b1 = torch.zeros(4, requires_grad=True)
w2 = torch.randn(4, 1, requires_grad=True)
for k in range(20):
    ypred = torch.tanh(torch.tanh(xs @ w1 + b1) @ w2).squeeze(1)
    loss = ((ypred - ys) ** 2).sum()
    for p in (w1, b1, w2):
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in (w1, b1, w2):
            p += -0.05 * p.grad
    if k % 5 == 0:
        print(k, f"{loss.item():.4f}")
print(ypred)
