# In the style of PyTorch's torch.autograd.functional docs and higher-order gradient recipes:
# jacobian, hessian, vjp and jvp of small functions, and the same Hessian by calling
# torch.autograd.grad twice with create_graph=True.
import torch
from torch.autograd.functional import hessian, jacobian, jvp, vjp


def exp_reducer(x):
    return x.exp().sum(dim=1)


torch.manual_seed(0)
inputs = torch.rand(2, 2)
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True).requires_grad)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


print(jacobian(exp_adder, (torch.rand(2), torch.rand(2))))


def pow_reducer(x):
    return x.pow(3).sum()


print(hessian(pow_reducer, torch.rand(2, 2)))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


print(hessian(pow_adder_reducer, (torch.rand(2), torch.rand(2))))

v = torch.ones(4)
out, grad = vjp(exp_reducer, torch.rand(4, 4), v)
print(out, grad)
out, grad = jvp(exp_reducer, torch.rand(4, 4), torch.ones(4, 4))
print(out, grad)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
f = (x**3).sum() + x.prod()
(g,) = torch.autograd.grad(f, x, create_graph=True)
rows = [torch.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(3)]
print(g, torch.stack(rows))
print(torch.allclose(torch.stack(rows), hessian(lambda t: (t**3).sum() + t.prod(), x.detach())))
