# In the style of PyTorch's "Tensor Attributes" notes: dtypes and their sizes, type promotion
# between integer, float and bool tensors and Python numbers, small integer types (int8 and
# int16, with their wrap-around), casting with .to()/.long()/.half(), and set_default_dtype.
import torch

for dtype in (
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.float32,
    torch.float64,
):
    t = torch.zeros(2, dtype=dtype)
    print(dtype, t.element_size(), t.dtype.is_floating_point, t.is_floating_point())

print(torch.tensor([1, 2]).dtype, torch.tensor([1.0, 2]).dtype, torch.tensor([True]).dtype)
print((torch.tensor([1, 2]) + 1.5).dtype, (torch.tensor([1, 2]) * 2).dtype)
print((torch.tensor([1, 2], dtype=torch.int8) + torch.tensor([1], dtype=torch.int16)).dtype)
print((torch.tensor([1.0]) + torch.tensor([1.0], dtype=torch.float64)).dtype)
print((torch.tensor([True, False]) + torch.tensor([1, 1], dtype=torch.uint8)).dtype)
print(torch.tensor([7, -7]) // 2, torch.tensor([7, -7]) % 3, torch.tensor([7, 8]) / 2)
print(torch.result_type(torch.tensor([1], dtype=torch.int16), 2.5))
print(torch.promote_types(torch.int8, torch.uint8), torch.can_cast(torch.float32, torch.int32))

small = torch.tensor([100, 120], dtype=torch.int8)
print(small + small, (small + small).dtype)
print(torch.tensor([30000], dtype=torch.int16) * 2)
print(torch.tensor([250], dtype=torch.uint8) + 10)
print(torch.iinfo(torch.int8).max, torch.iinfo(torch.int16).min, torch.finfo(torch.float32).eps)

x = torch.tensor([1.7, -2.5, 3.49])
print(x.to(torch.int32), x.long(), x.int(), x.half(), x.double(), x.bool())
print(x.to(dtype=torch.float64).dtype, x.type(torch.int16), x.to(torch.int8).dtype)
print(
    torch.arange(5, dtype=torch.int16).sum().dtype, torch.arange(5, dtype=torch.int8).float().mean()
)

print(torch.get_default_dtype())
torch.set_default_dtype(torch.float64)
print(
    torch.get_default_dtype(), torch.tensor([1.5]).dtype, torch.zeros(2).dtype, torch.randn(1).dtype
)
print(torch.tensor([1, 2]).dtype, torch.arange(3.0).dtype, torch.linspace(0, 1, 3))
torch.set_default_dtype(torch.float32)
print(torch.tensor([1.5]).dtype)
