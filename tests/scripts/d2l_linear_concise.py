# In the style of d2l.ai's "Concise Implementation of Linear Regression": TensorDataset and a
# shuffling DataLoader, nn.Sequential(nn.Linear(2, 1)) initialised in place with normal_/fill_,
# nn.MSELoss, optim.SGD, and reading the learned weight and bias back.
import torch
from torch import nn
from torch.utils import data

torch.manual_seed(0)
true_w = torch.tensor([2, -3.4])
true_b = 4.2
X = torch.normal(0, 1, (200, len(true_w)))
y = torch.matmul(X, true_w) + true_b
y += torch.normal(0, 0.01, y.shape)
labels = y.reshape((-1, 1))


def load_array(data_arrays, batch_size, is_train=True):
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)


batch_size = 10
data_iter = load_array((X, labels), batch_size)
first = next(iter(data_iter))
print(len(first), first[0].shape, first[1].shape)
print(first[0][:2], first[1][:2])
print(len(data_iter), len(data_iter.dataset))

net = nn.Sequential(nn.Linear(2, 1))
net[0].weight.data.normal_(0, 0.01)
net[0].bias.data.fill_(0)
print(net[0].weight.data, net[0].bias.data)
loss = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.03)

num_epochs = 3
for epoch in range(num_epochs):
    for Xb, yb in data_iter:
        batch_loss = loss(net(Xb), yb)
        trainer.zero_grad()
        batch_loss.backward()
        trainer.step()
    batch_loss = loss(net(X), labels)
    print(f"epoch {epoch + 1}, loss {batch_loss:f}")

w = net[0].weight.data
print("error in estimating w:", true_w - w.reshape(true_w.shape))
b = net[0].bias.data
print("error in estimating b:", true_b - b)
print(net[0].weight.grad.shape, net[0].bias.grad)
