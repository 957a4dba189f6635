# In the style of the "train() vs eval()" lesson: nn.Dropout and F.dropout drawing from the
# seeded random stream in training mode and doing nothing in eval mode, torch.no_grad and
# torch.inference_mode for evaluation, and requires_grad_(False) to freeze a layer.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
drop = nn.Dropout(p=0.5)
x = torch.ones(2, 8)
print(drop(x))
drop.eval()
print(drop(x))
print(F.dropout(x, p=0.25, training=True))
print(F.dropout(x, p=0.25, training=False))

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 2))
print(model.training, [m.training for m in model])
inputs = torch.randn(3, 4)
out_train = model(inputs)
model.eval()
print(model.training, [m.training for m in model])
with torch.no_grad():
    out_eval = model(inputs)
print(out_train.requires_grad, out_eval.requires_grad)
print(out_eval)
with torch.inference_mode():
    again = model(inputs)
print(torch.equal(again, out_eval), again.requires_grad, torch.is_inference_mode_enabled())
model.train()

model[0].requires_grad_(False)
print([name for name, p in model.named_parameters() if p.requires_grad])
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
before = model[0].weight.clone()
loss = model(inputs).pow(2).mean()
loss.backward()
opt.step()
print(torch.equal(before, model[0].weight), model[0].weight.grad, model[3].weight.grad.shape)
print(torch.is_grad_enabled())
with torch.set_grad_enabled(False):
    print(torch.is_grad_enabled(), (inputs * 2).requires_grad)
print(torch.bernoulli(torch.full((2, 4), 0.5)))
