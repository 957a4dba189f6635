"""`a @ b` records the steps PyTorch's matmul lowers it into (dot, mv, mm; or a fold of the batch
dims into rows; or expand, reshape and bmm), so the graph, what backward saved, and how a saved
operand reacts to detach_() or an in-place change are PyTorch 2.13's (fuzz seed 3714445)."""

import itertools

import numpy as np
import pytest

import autograd_lab as ag

SHAPES = [
    ((2,), (2,)),
    ((2, 2), (2,)),
    ((2,), (2, 3)),
    ((2, 3), (3, 2)),
    ((3, 2, 2), (3, 2, 2)),  # equal batches: bmm
    ((3, 2, 2), (2, 4)),  # a batch times a matrix: folded into one mm
    ((2, 3), (4, 3, 2)),  # a matrix times a batch: folded the other way round
    ((3, 2, 2), (2,)),  # a batch times a vector: one mv
    ((2,), (3, 2, 2)),
    ((2, 3, 2, 2), (3, 2, 2)),  # batches that broadcast: expanded (and copied), then bmm
    ((3, 1, 2, 2), (3, 2, 2)),
    ((1, 2, 2), (3, 2, 2)),
    ((3, 1, 1), (3, 1, 1)),
    ((2, 1, 3), (3, 4)),
    ((0, 2, 3), (3, 2)),
]
# which operands require grad: both, or one of them (PyTorch folds only when the smaller does)
NEEDS = [(True, True), (True, False), (False, True)]


def graph(fn, depth=0):
    """The graph under `fn` as nested (name, children), leaves as "AccumulateGrad"."""
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    if depth > 8 or name == "AccumulateGrad":
        return name
    return (name, tuple(graph(child, depth + 1) for child, _ in fn.next_functions))


def operands(lib, shapes, needs):
    gen = np.random.default_rng(0)
    leaves = [
        lib.tensor(gen.standard_normal(shape), dtype=lib.float64).requires_grad_(need)
        for shape, need in zip(shapes, needs)
    ]
    # products of leaves (not leaves themselves), so that detach_() and in-place ops apply
    return leaves, [leaf * 2 for leaf in leaves]


def flat(values):
    """Nested lists of numbers as one float64 array, to compare to rounding."""
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in values])


@pytest.mark.parametrize("needs", NEEDS)
@pytest.mark.parametrize("shapes", SHAPES)
def test_matmul_records_pytorchs_lowering(torch, shapes, needs):
    def run(lib):
        leaves, (a, b) = operands(lib, shapes, needs)
        product = a @ b
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        grads = lib.autograd.grad((product * product).sum(), wanted, allow_unused=True)
        return graph(product.grad_fn), [product.tolist()] + [
            None if g is None else g.tolist() for g in grads
        ]

    (our_graph, ours), (their_graph, theirs) = run(ag), run(torch)
    assert our_graph == their_graph
    assert [v is None for v in ours] == [v is None for v in theirs]
    ours, theirs = [v for v in ours if v is not None], [v for v in theirs if v is not None]
    np.testing.assert_allclose(flat(ours), flat(theirs), rtol=1e-12, atol=1e-15)


def _outcome(run):
    try:
        return "ran", run()
    except RuntimeError as error:
        return "raises", str(error).split(":")[0]


@pytest.mark.parametrize("change", ["detach_", "add_"])
@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("shapes", SHAPES)
def test_a_changed_operand_is_refused_exactly_where_pytorch_refuses_it(
    torch, shapes, which, change
):
    # PyTorch saves an operand itself for dot, mv and mm, but a view of it (or a copy) where it
    # reshaped it first: detach_() of the operand then leaves that view's history alone, and
    # an in-place change of an operand that was copied goes unseen
    def run(lib):
        leaves, pair = operands(lib, shapes, (True, True))
        product = pair[0] @ pair[1]
        if change == "detach_":
            pair[which].detach_()
        else:
            pair[which].add_(1)
        return [g.tolist() for g in lib.autograd.grad(product.sum(), leaves, allow_unused=True)]

    ours, theirs = _outcome(lambda: run(ag)), _outcome(lambda: run(torch))
    assert ours[0] == theirs[0]
    if ours[0] == "ran":
        np.testing.assert_allclose(flat(ours[1]), flat(theirs[1]), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shapes", [((3, 2, 2), (3, 2, 2)), ((2, 3), (4, 3, 2)), ((2,), (3, 2, 2))])
def test_second_derivatives_through_the_lowered_product_match(torch, shapes):
    def run(lib):
        leaves, (a, b) = operands(lib, shapes, (True, True))
        loss = ((a @ b) ** 2).sum()
        grads = lib.autograd.grad(loss, leaves, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), leaves)
        return [g.tolist() for g in itertools.chain(grads, second)]

    np.testing.assert_allclose(flat(run(ag)), flat(run(torch)), rtol=1e-12)


def without_weight_transpose(tree):
    """PyTorch's graph with its TBackward0 in front of a weight dropped: our linear takes the
    weight itself (ops/nn.py says why)."""
    if not isinstance(tree, tuple):
        return tree
    name, children = tree
    if name == "TBackward0":
        return children[0]
    return (name, tuple(without_weight_transpose(child) for child in children))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    "make", ["x", "x.transpose(0, 1)", "x[0]", "x[:, 0]"], ids=["3-D", "transposed", "2-D", "1-D"]
)
def test_linear_of_any_rank_records_pytorchs_steps(torch, make, bias):
    # a 3-D input that is not contiguous is folded into rows by a copy (CloneBackward0 under
    # UnsafeViewBackward0), as PyTorch's matmul folds it
    def run(lib):
        x = lib.ones(5, 2, 4).requires_grad_()
        weight, b = lib.ones(3, 4).requires_grad_(), lib.ones(3).requires_grad_()
        out = lib.nn.functional.linear(eval(make, {"x": x}), weight, b if bias else None)
        return graph(out.grad_fn)

    assert run(ag) == without_weight_transpose(run(torch))


def test_a_detached_weight_after_linear_is_a_readme_simplification(torch):
    # our linear saves the weight itself (no TBackward0 view, ops/nn.py): detach_() of a weight
    # that is not a leaf is then refused at backward, where PyTorch's saved view keeps its history
    from fuzzing.compare import Divergence
    from fuzzing.simplifications import accepted_by

    def run(lib):
        x, weight = lib.ones(2, 4, requires_grad=True), lib.ones(3, 4, requires_grad=True) * 1
        out = lib.nn.functional.linear(x, weight)
        weight.detach_()
        try:
            lib.autograd.grad(out.sum(), [x])
        except RuntimeError as error:
            return f"raises RuntimeError: {error}"
        return "ran"

    ours, theirs = run(ag), run(torch)
    assert (ours.startswith("raises"), theirs) == (True, "ran")
    divergence = Divergence("grads = ...", "grad", "raises", ours, theirs)
    assert accepted_by(divergence, "v0 = torch.nn.functional.linear(x0, x1)") is not None
