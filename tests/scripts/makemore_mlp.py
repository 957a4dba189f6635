# In the style of Zero to Hero's makemore part 2 (the Bengio et al. MLP): a context of 3
# characters, an embedding table C indexed as C[X], a tanh hidden layer, F.cross_entropy,
# minibatches drawn with torch.randint, a learning-rate drop, and sampling from the model.
# tolerance: rtol=1e-3 atol=1e-4
import torch
import torch.nn.functional as F

words = (
    "amelia ben carla dario elena felix greta hugo irene jonas karla lukas marta nils olga "
    "pablo rita stefan tanja ugo vito wanda xena yusuf zelda"
).split()
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape, X.dtype)
    return X, Y


Xtr, Ytr = build_dataset(words[:20])
Xdev, Ydev = build_dataset(words[20:])

g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, 5), generator=g)
W1 = torch.randn((15, 64), generator=g)
b1 = torch.randn(64, generator=g)
W2 = torch.randn((64, vocab_size), generator=g) * 0.1
b2 = torch.randn(vocab_size, generator=g) * 0
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

emb = C[Xtr]
print(emb.shape)
print(emb.view(-1, 15).shape, torch.cat(torch.unbind(emb, 1), 1).shape)

lossi = []
for i in range(300):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 15) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 200 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    lossi.append(loss.log10().item())
    if i % 50 == 0:
        print(f"{i:4d}/300: {loss.item():.4f}")


@torch.no_grad()
def split_loss(X, Y):
    emb = C[X]
    h = torch.tanh(emb.view(emb.shape[0], -1) @ W1 + b1)
    logits = h @ W2 + b2
    return F.cross_entropy(logits, Y)


print(f"train {split_loss(Xtr, Ytr).item():.4f}")
print(f"dev {split_loss(Xdev, Ydev).item():.4f}")
print(f"{sum(lossi[-50:]) / 50:.4f}")

counts = logits.exp()
prob = counts / counts.sum(1, keepdims=True)
print(prob.shape, f"{-prob[torch.arange(32), Ytr[ix]].log().mean().item():.4f}")

g = torch.Generator().manual_seed(2147483647 + 10)
for _ in range(5):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0 or len(out) > 12:
            break
    print("".join(itos[i] for i in out))
