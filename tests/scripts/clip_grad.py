# In the style of RNN and transformer training loops: gradients clipped with
# nn.utils.clip_grad_norm_ (its returned total norm printed, as learners log it) and
# clip_grad_value_, a LayerNorm'd MLP, and parameters_to_vector for a quick look at the weights.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 1))
print(model)
X = torch.randn(32, 8)
y = X.pow(2).sum(dim=1, keepdim=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(30):
    loss = nn.functional.mse_loss(model(X), y)
    optimizer.zero_grad()
    loss.backward()
    total_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step:2d} loss {loss.item():.4f} grad norm {total_norm.item():.4f}")

grads = [p.grad.norm() for p in model.parameters()]
print(torch.stack(grads))
print(f"{torch.norm(torch.stack(grads)).item():.4f}")

loss = nn.functional.mse_loss(model(X), y)
optimizer.zero_grad()
loss.backward()
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(model[0].bias.grad[:6])
print(max(p.grad.abs().max().item() for p in model.parameters()) <= 0.01)

norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.05, norm_type=2.0)
print(f"{norm.item():.5f}")
vector = nn.utils.parameters_to_vector(model.parameters())
print(vector.shape, f"{vector.abs().sum().item():.4f}")
ln = model[1]
print(ln.normalized_shape, ln.eps, ln.weight.shape)
h = ln(torch.randn(2, 32) * 3 + 1)
print(h.mean(dim=-1), h.std(dim=-1, unbiased=False))
