# In the style of PyTorch's "Save and Load the Model" tutorial and the "Saving and loading models"
# recipe: torch.save/torch.load of tensors, dicts of tensors, a model's state_dict and a training
# checkpoint (model, optimizer, epoch, loss), into a temporary folder.
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
folder = tempfile.mkdtemp()


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


x = torch.tensor([1.5, -2.0, 3.25])
path = os.path.join(folder, "tensor.pt")
torch.save(x, path)
x2 = torch.load(path)
print(x2, torch.equal(x, x2), x2.dtype)

stuff = {
    "ints": torch.arange(5),
    "half": torch.ones(2, dtype=torch.float64) / 2,
    "note": "hi",
    "n": 3,
}
torch.save(stuff, os.path.join(folder, "stuff.pt"))
back = torch.load(os.path.join(folder, "stuff.pt"))
print(sorted(back), back["ints"], back["half"], back["note"], back["n"])

model = TinyNet()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
data = torch.randn(5, 4)
for step in range(3):
    loss = model(data).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"{loss.item():.6f}")

print("Model's state_dict:")
for param_tensor in model.state_dict():
    print(param_tensor, "\t", model.state_dict()[param_tensor].size())
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name] if var_name == "param_groups" else "...")

torch.save(model.state_dict(), os.path.join(folder, "weights.pt"))
fresh = TinyNet()
result = fresh.load_state_dict(torch.load(os.path.join(folder, "weights.pt"), weights_only=True))
print(result)
fresh.eval()
print(torch.allclose(fresh(data), model(data)), fresh.training)

checkpoint = {
    "epoch": 3,
    "model_state_dict": model.state_dict(),
    "optimizer_state_dict": optimizer.state_dict(),
    "loss": loss.item(),
}
torch.save(checkpoint, os.path.join(folder, "checkpoint.tar"))
model2 = TinyNet()
optimizer2 = optim.SGD(model2.parameters(), lr=0.5)
loaded = torch.load(os.path.join(folder, "checkpoint.tar"))
model2.load_state_dict(loaded["model_state_dict"])
optimizer2.load_state_dict(loaded["optimizer_state_dict"])
print(loaded["epoch"], f"{loaded['loss']:.6f}", optimizer2.param_groups[0]["lr"])
for opt in (optimizer, optimizer2):
    loss = model2(data).pow(2).mean() if opt is optimizer2 else model(data).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(torch.allclose(model.fc1.weight, model2.fc1.weight), model2.fc2.bias)
