# In the style of PyTorch's nn docs examples learners try one by one: nn.Embedding (lookup,
# padding_idx, gradients only on used rows), nn.LayerNorm, and the regression and classification
# losses (MSELoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss, NLLLoss) with
# their reductions.
import torch
import torch.nn as nn

torch.manual_seed(0)
embedding = nn.Embedding(10, 3)
idx = torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
out = embedding(idx)
print(out.shape)
print(out[0])
out.sum().backward()
print(embedding.weight.grad[:, 0])

pad = nn.Embedding(5, 2, padding_idx=0)
print(pad.weight[0], pad(torch.tensor([0, 2, 0])))
print(nn.Embedding.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))(torch.tensor([1])))

ln = nn.LayerNorm(4)
x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0]])
print(ln(x))
print(nn.LayerNorm([2, 4], elementwise_affine=False)(x))

pred = torch.tensor([0.5, 2.0, -1.0, 3.0], requires_grad=True)
target = torch.tensor([1.0, 1.5, 0.0, 0.0])
for loss_fn in (
    nn.MSELoss(),
    nn.L1Loss(),
    nn.SmoothL1Loss(),
    nn.SmoothL1Loss(beta=0.5),
    nn.HuberLoss(delta=2.0),
    nn.L1Loss(reduction="sum"),
    nn.MSELoss(reduction="none"),
):
    loss = loss_fn(pred, target)
    pred.grad = None
    loss.sum().backward()
    print(loss_fn, loss, pred.grad)

probs = torch.tensor([0.9, 0.2, 0.6])
labels = torch.tensor([1.0, 0.0, 0.0])
print(nn.BCELoss()(probs, labels))
print(nn.BCEWithLogitsLoss()(torch.logit(probs), labels))
print(nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))(torch.logit(probs), labels))
log_probs = torch.randn(3, 5).log_softmax(dim=1)
print(nn.NLLLoss()(log_probs, torch.tensor([1, 0, 4])))
print(nn.CrossEntropyLoss(reduction="none")(torch.randn(3, 5), torch.tensor([1, 0, 4])))
print(nn.CrossEntropyLoss(ignore_index=0)(torch.randn(3, 5), torch.tensor([1, 0, 4])))
