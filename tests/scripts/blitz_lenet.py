# In the style of the 60-minute blitz's "Neural Networks" part: a small LeNet-like conv net
# (Conv2d, max_pool2d, flatten, Linear) on a random 1x1x16x16 input, the loss against a random
# target, zero_grad/backward, the bias gradient of the first conv, and a few SGD steps.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(3)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc1 = nn.Linear(8 * 2 * 2, 24)
        self.fc2 = nn.Linear(24, 12)
        self.fc3 = nn.Linear(12, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)
params = list(net.parameters())
print(len(params))
print(params[0].size())

input = torch.randn(1, 1, 16, 16)
out = net(input)
print(out)

net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.randn(10)
target = target.view(1, -1)
criterion = nn.MSELoss()
loss = criterion(output, target)
print(f"{loss.item():.6f}")
print(loss.grad_fn.name())
print(loss.grad_fn.next_functions[0][0].name())

net.zero_grad()
print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward")
print(net.conv1.bias.grad)

optimizer = optim.SGD(net.parameters(), lr=0.05)
for step in range(6):
    optimizer.zero_grad()
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    print(step, f"{loss.item():.6f}")

pool = nn.MaxPool2d(2)
image = torch.arange(16.0).reshape(1, 1, 4, 4)
print(pool(image))
print(F.conv2d(image, torch.ones(1, 1, 2, 2), padding=1, stride=2))
