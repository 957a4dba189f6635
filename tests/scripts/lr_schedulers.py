# In the style of PyTorch's torch.optim docs on adjusting the learning rate: StepLR, MultiStepLR,
# ExponentialLR, CosineAnnealingLR and LambdaLR stepped once per epoch after optimizer.step(),
# printing get_last_lr() and the param group's lr as training goes.
import torch
from torch import nn
from torch.optim import lr_scheduler

torch.manual_seed(0)
model = nn.Linear(3, 1)
X = torch.randn(16, 3)
y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3


def run(make_scheduler, epochs=8):
    net = nn.Linear(3, 1)
    net.load_state_dict(model.state_dict())
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scheduler = make_scheduler(optimizer)
    for epoch in range(epochs):
        loss = nn.functional.mse_loss(net(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        print(f"  epoch {epoch} loss {loss.item():.5f} lr {scheduler.get_last_lr()[0]:.6f}")
    print("  ", optimizer.param_groups[0]["lr"], scheduler.last_epoch)


print("StepLR")
run(lambda opt: lr_scheduler.StepLR(opt, step_size=3, gamma=0.5))
print("MultiStepLR")
run(lambda opt: lr_scheduler.MultiStepLR(opt, milestones=[2, 5], gamma=0.1))
print("ExponentialLR")
run(lambda opt: lr_scheduler.ExponentialLR(opt, gamma=0.8))
print("CosineAnnealingLR")
run(lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=0.001))
print("LambdaLR")
run(lambda opt: lr_scheduler.LambdaLR(opt, lr_lambda=lambda epoch: 1 / (epoch + 1)))
