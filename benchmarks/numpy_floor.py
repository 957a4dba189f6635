"""The floor: a fully connected ReLU network's training step written by hand in numpy.

    net = NumpyMLP(init_weights([784, 512, 512, 10]))
    loss, grads = net.forward_backward(x, labels)   # cross-entropy, mean over the batch
    net.sgd_step(grads, lr=0.01)

No graph, no tensors, no checks: the same matmuls an autograd engine must run, and the elementwise
steps done in place where the values are not needed again. An engine built on numpy cannot do less
work than this, so "ours / floor" is what our bookkeeping costs on a big network.
"""

import numpy as np


class NumpyMLP:
    def __init__(self, weights):
        self.params = [(w.copy(), b.copy()) for w, b in weights]

    def forward_backward(self, x, labels):
        """The loss and [(dW, db), ...] for each layer (x itself needs no gradient)."""
        activations = [x]  # each layer's input, kept for its weight gradient
        h = x
        for i, (w, b) in enumerate(self.params):
            h = h @ w.T
            h += b
            if i < len(self.params) - 1:
                np.maximum(h, 0, out=h)  # ReLU in place: the pre-activation is not needed again
                activations.append(h)

        # Cross-entropy from the logits, in place: softmax's gradient is (probabilities - one_hot).
        batch, rows = len(labels), np.arange(len(labels))
        z = h
        z -= z.max(axis=1, keepdims=True)  # shift by the row maximum so exp cannot overflow
        picked = z[rows, labels]
        np.exp(z, out=z)
        total = z.sum(axis=1)
        loss = float(np.mean(np.log(total) - picked))
        z /= total[:, None]
        z[rows, labels] -= 1
        z /= batch
        grad = z

        grads = []
        for i in reversed(range(len(self.params))):
            w, _ = self.params[i]
            a = activations.pop()  # its last use: dropping it here lowers the peak memory
            grads.append((grad.T @ a, grad.sum(axis=0)))
            if i > 0:
                grad = grad @ w
                grad *= a > 0  # ReLU's derivative: 1 where the layer's output was positive
        return loss, grads[::-1]

    def sgd_step(self, grads, lr):
        """W -= lr * dW for every parameter, without temporaries (the gradients are ours to scale)."""
        for (w, b), (dw, db) in zip(self.params, grads):
            dw *= lr
            w -= dw
            db *= lr
            b -= db
