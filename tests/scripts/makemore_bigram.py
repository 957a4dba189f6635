# In the style of Zero to Hero's makemore part 1: bigram counts of characters in a word list in a
# torch.zeros((27, 27), dtype=torch.int32) table, normalised into probabilities, names sampled
# with torch.multinomial from a seeded torch.Generator, and the average negative log likelihood.
import torch

words = (
    "ada alma anna ari bea bo cara cleo dani dora eli ella emil eva fay finn gia hana ida ines "
    "ivo jade jon kai kira lea leo lina luca mara mila nico nora oli otto pia rosa ruby sam "
    "sara tao teo una vera wren yara zoe zara"
).split()
print(len(words), min(len(w) for w in words), max(len(w) for w in words))

chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
n = len(stoi)
print(n)

N = torch.zeros((n, n), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        N[stoi[ch1], stoi[ch2]] += 1
print(N.dtype, N.sum(), N[0].sum(), N.max())
print(N[0, :10])
print(N[stoi["a"]])

p = N[0].float()
p = p / p.sum()
print(p[:8])

g = torch.Generator().manual_seed(2147483647)
p_test = torch.rand(3, generator=g)
p_test = p_test / p_test.sum()
print(p_test)
print(torch.multinomial(p_test, num_samples=20, replacement=True, generator=g))

P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(P.shape, P[0].sum(), P.sum(1)[:4])

g = torch.Generator().manual_seed(2147483647)
for i in range(6):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print("".join(out))

log_likelihood = 0.0
count = 0
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        prob = P[stoi[ch1], stoi[ch2]]
        logprob = torch.log(prob)
        log_likelihood += logprob
        count += 1
print(f"{log_likelihood=}")
nll = -log_likelihood
print(f"{nll=}")
print(f"{nll / count}")
