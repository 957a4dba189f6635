# In the style of PyTorch's "Autograd mechanics" notes: what a node saves for backward
# (grad_fn._saved_self and friends), walking next_functions, tensor hooks, retain_grad,
# saved-tensor hooks, and in-place modification being caught by the version counter.
import torch

x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(y.grad_fn._saved_self.equal(x))
print(y.grad_fn._saved_self is x)
print(y.grad_fn._saved_exponent)

y = x.exp()
print(y.grad_fn._saved_result.equal(y))
print(y.grad_fn._saved_result is y)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
c = a * b
d = c.sum()
print(d.grad_fn.name())
print([type(fn).__name__ for fn, _ in d.grad_fn.next_functions])
mul_node = d.grad_fn.next_functions[0][0]
print([type(fn).__name__ for fn, _ in mul_node.next_functions])
print(mul_node._saved_self, mul_node._saved_other)

grads_seen = []
a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
handle = a.register_hook(lambda grad: grads_seen.append(grad.clone()))
h = a * 2
h.retain_grad()
h.register_hook(lambda grad: grad * 10)
(h**2).sum().backward()
print(h.grad)
print(a.grad)
print(grads_seen)
handle.remove()

packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t


def unpack(t):
    return t


w = torch.randn(3, 3, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    out = (w.sin() * w).sum()
out.backward()
print(packed)
print(w.grad.shape)

p = torch.tensor([1.0, 2.0], requires_grad=True)
q = p.sigmoid()
r = q * 3
print(q._version)
q.mul_(2)
print(q._version)
try:
    r.sum().backward()
    print("no error")
except RuntimeError as error:
    print("RuntimeError:", "modified by an inplace operation" in str(error))

leaf = torch.zeros(2, requires_grad=True)
try:
    leaf.add_(1)
except RuntimeError as error:
    print("RuntimeError:", "leaf Variable" in str(error))
with torch.no_grad():
    leaf.add_(1)
print(leaf)
