# In the style of the "views and shapes" lessons learners struggle through: view vs reshape,
# contiguous after transpose/permute, squeeze/unsqueeze, expand vs repeat, chunk/split/unbind,
# flatten and unflatten, and views sharing storage with their base.
import torch

x = torch.arange(24).reshape(2, 3, 4)
print(x.shape, x.stride(), x.is_contiguous())
t = x.transpose(0, 2)
print(t.shape, t.stride(), t.is_contiguous())
try:
    t.view(-1)
except RuntimeError as error:
    print("RuntimeError:", "view size is not compatible" in str(error))
print(t.reshape(-1)[:6], t.contiguous().view(-1)[:6])
print(x.permute(2, 0, 1).shape, x.mT.shape, x.permute(2, 1, 0).stride())

v = x.view(6, 4)
v[0, 0] = 100
print(x[0, 0, 0], v.data_ptr() == x.data_ptr(), v._base is not None)

a = torch.zeros(1, 3, 1)
print(a.squeeze().shape, a.squeeze(0).shape, a.squeeze(-1).shape, a.unsqueeze(1).shape)
print(torch.tensor([1, 2, 3])[None, :, None].shape)

row = torch.tensor([[1, 2, 3]])
print(row.expand(3, -1), row.expand(3, 3).stride())
print(row.repeat(2, 2))
print(torch.tensor([1, 2]).repeat_interleave(3))

y = torch.arange(10)
print(y.chunk(3))
print(torch.split(y, 4))
print(torch.split(y, [2, 3, 5]))
print(torch.arange(6).reshape(2, 3).unbind(1))

z = torch.arange(24.0).reshape(2, 3, 4)
print(z.flatten(1).shape, z.flatten(0, 1).shape, torch.flatten(z).shape)
print(z.flatten(1).unflatten(1, (3, 4)).shape)
print(z.narrow(2, 1, 2))
print(z.movedim(0, -1).shape, z.swapaxes(1, 2).shape)

w = torch.randn(2, 3, requires_grad=True)
out = w.t().reshape(6).unsqueeze(0).expand(4, 6)
out.sum().backward()
print(w.grad, out.grad_fn.name())
