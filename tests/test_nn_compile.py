"""The nn layers under autograd_lab.compile: a compiled call gives what the eager call gives, for
new inputs too. Max pooling (where the maxima are), embedding and one_hot (which rows) read
values in Python, and batch norm updates its buffers in place: compile records each as one
whole call, replayed every time (compile/trace.py), so nothing is baked in from the trace."""

import numpy as np

import autograd_lab as ag
import autograd_lab.nn.functional as F


def values(t):
    return t.detach().numpy()


def test_max_pool_embedding_and_one_hot_follow_new_inputs():
    for requires_grad in (False, True):
        pool = ag.compile(lambda x: F.max_pool2d(x, 2) * 2.0)
        for _ in range(3):
            x = ag.randn(2, 3, 4, 4, requires_grad=requires_grad)
            np.testing.assert_array_equal(values(pool(x)), values(F.max_pool2d(x, 2) * 2.0))
    w = ag.randn(6, 3, requires_grad=True)
    look_up = ag.compile(lambda i, w: F.embedding(i, w) * 2.0)
    hot = ag.compile(lambda i: F.one_hot(i, 6) * 2)
    for idx in ([1, 2], [5, 0], [3, 3]):
        i = ag.tensor(idx)
        np.testing.assert_array_equal(values(look_up(i, w)), values(w)[idx] * 2)
        np.testing.assert_array_equal(hot(i).numpy(), np.eye(6, dtype=np.int64)[idx] * 2)


def test_a_compiled_training_step_with_batch_norm_and_conv_matches_eager():
    def build():
        ag.manual_seed(0)
        return ag.nn.Sequential(
            ag.nn.Conv2d(1, 3, 3, padding=1),
            ag.nn.BatchNorm2d(3, momentum=None),
            ag.nn.ReLU(),
            ag.nn.MaxPool2d(2),
            ag.nn.Flatten(),
            ag.nn.Linear(12, 2),
        )

    eager, compiled = build(), build()
    step = ag.compile(lambda x: compiled(x).pow(2).mean())
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = ag.tensor(rng.standard_normal((4, 1, 4, 4)).astype(np.float32))
        losses = []
        for model, run in ((eager, lambda x: eager(x).pow(2).mean()), (compiled, step)):
            model.zero_grad()
            loss = run(x)
            loss.backward()
            losses.append(loss.item())
        np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)
        for (name, p), (_, q) in zip(eager.named_parameters(), compiled.named_parameters()):
            np.testing.assert_allclose(values(p.grad), values(q.grad), rtol=1e-5, err_msg=name)
        for (name, b), (_, c) in zip(eager.named_buffers(), compiled.named_buffers()):
            np.testing.assert_allclose(values(b), values(c), rtol=1e-6, err_msg=name)
    assert compiled[1].num_batches_tracked.item() == 3  # counted once per call, not per trace
    assert step.traces == 1
