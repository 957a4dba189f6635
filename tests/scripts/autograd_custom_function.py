# In the style of PyTorch's "Defining new autograd Functions" example and the "Extending PyTorch"
# notes: custom Functions with ctx.save_for_backward, needs_input_grad, a non-differentiable
# output, a polynomial fitted with a custom Function, and gradcheck in float64.
import math

import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x**2


class ScaledClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return (x * scale).clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output * ctx.scale * (x > 0).to(grad_output.dtype)
        return grad_x, None


class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, order = x.sort()
        ctx.mark_non_differentiable(order)
        ctx.save_for_backward(order)
        return values, order

    @staticmethod
    def backward(ctx, grad_values, grad_order):
        (order,) = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        grad[order] = grad_values
        return grad


x = torch.tensor([-1.5, 0.5, 2.0], requires_grad=True)
y = Cube.apply(x)
print(y)
y.sum().backward()
print(x.grad)
print(type(y.grad_fn).__name__)

x.grad = None
z = ScaledClamp.apply(x, 2.0)
z.sum().backward()
print(z, x.grad)

values, order = SortWithIndices.apply(torch.tensor([3.0, 1.0, 2.0], requires_grad=True))
print(values, order, order.requires_grad)

x64 = torch.randn(4, dtype=torch.float64, requires_grad=True)
print(torch.autograd.gradcheck(Cube.apply, (x64,), eps=1e-6, atol=1e-4))


class LegendreP3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return 0.5 * (5 * t**3 - 3 * t)

    @staticmethod
    def backward(ctx, grad_output):
        (t,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * t**2 - 1)


dtype = torch.float
xs = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
ys = torch.sin(xs)
a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
for t in range(300):
    P3 = LegendreP3.apply
    y_pred = a + b * P3(c + d * xs)
    loss = (y_pred - ys).pow(2).sum()
    if t % 60 == 59:
        print(t, f"{loss.item():.4f}")
    loss.backward()
    with torch.no_grad():
        for param in (a, b, c, d):
            param -= learning_rate * param.grad
            param.grad = None
print(f"Result: y = {a.item():.4f} + {b.item():.4f} * P3({c.item():.4f} + {d.item():.4f} x)")
