# In the style of a first classification exercise: three Gaussian blobs, labels turned into
# one-hot targets with F.one_hot, softmax regression trained by hand (cross-entropy written out
# and with F.cross_entropy), accuracy with argmax, and a confusion matrix counted with one_hot.
import torch
import torch.nn.functional as F

torch.manual_seed(5)
centres = torch.tensor([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
labels = torch.arange(3).repeat_interleave(20)
points = centres[labels] + 0.8 * torch.randn(60, 2)
print(points.shape, labels[:5], labels.bincount())

targets = F.one_hot(labels)
print(targets.shape, targets.dtype, targets[18:22])
print(F.one_hot(torch.tensor([0, 2]), num_classes=4))

W = torch.zeros(2, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
for epoch in range(50):
    logits = points @ W + b
    log_probs = logits.log_softmax(dim=1)
    loss = -(targets * log_probs).sum(dim=1).mean()
    loss.backward()
    with torch.no_grad():
        W -= 0.5 * W.grad
        b -= 0.5 * b.grad
        W.grad.zero_()
        b.grad.zero_()
    if epoch % 10 == 0:
        same = torch.isclose(loss, F.cross_entropy(logits, labels))
        print(f"epoch {epoch:2d} loss {loss.item():.4f} same as F.cross_entropy: {same.item()}")

with torch.no_grad():
    predicted = (points @ W + b).argmax(dim=1)
accuracy = (predicted == labels).float().mean()
print(f"accuracy {accuracy.item():.3f}")
confusion = F.one_hot(labels, 3).T @ F.one_hot(predicted, 3)
print(confusion)
print(W, b)
probs = F.softmax(points[:3] @ W + b, dim=-1)
print(probs, probs.sum(-1))
smooth = F.cross_entropy(points @ W + b, labels, label_smoothing=0.1)
print(f"{smooth.item():.4f}")
