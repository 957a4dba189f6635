"""Saved tensors as PyTorch's autograd notes show them: `grad_fn._saved_<name>`, `_raw_saved_<name>`
with its own hooks, and `autograd.graph.saved_tensors_hooks` / `save_on_cpu` /
`disable_saved_tensors_hooks`. The pack and unpack calls are recorded in both libraries: their
number, order and arguments must be PyTorch's."""

import contextlib
import io
import threading

import numpy as np
import pytest
from conftest import values

import autograd_lab as ag

# ---- grad_fn._saved_<name>: the names and the objects -------------------------------------------

# Each graph made from x (float64, [0.5, 1.5], requires_grad) and w (a constant): the saved
# tensors of its grad_fn must have PyTorch's names and values.
SAVED_NAME_CASES = {
    "mul": lambda lib, x, w: x * x,
    "mul by a constant": lambda lib, x, w: x * w,
    "where": lambda lib, x, w: lib.where(x > 1, x, w),
    "div": lambda lib, x, w: x / (x + 1),
    "pow": lambda lib, x, w: x.pow(2),
    "pow tensor": lambda lib, x, w: x.pow(x),
    "exp": lambda lib, x, w: x.exp(),
    "sin": lambda lib, x, w: x.sin(),
    "cos": lambda lib, x, w: x.cos(),
    "tanh": lambda lib, x, w: x.tanh(),
    "sigmoid": lambda lib, x, w: x.sigmoid(),
    "relu": lambda lib, x, w: x.relu(),
    "log": lambda lib, x, w: x.log(),
    "sqrt": lambda lib, x, w: x.sqrt(),
    "abs": lambda lib, x, w: x.abs(),
    "tan": lambda lib, x, w: x.tan(),
    "reciprocal": lambda lib, x, w: x.reciprocal(),
    "softmax": lambda lib, x, w: x.softmax(0),
    "log_softmax": lambda lib, x, w: x.log_softmax(0),
    "max": lambda lib, x, w: x.max(),
    "max(dim)": lambda lib, x, w: x.max(0)[0],
    "matmul": lambda lib, x, w: x.view(1, 2) @ x.view(2, 1),
    "mm with a constant": lambda lib, x, w: x.view(1, 2).mm(w.view(2, 1)),
    "mv": lambda lib, x, w: (x.view(2, 1) * w).mv(x),
    "dot": lambda lib, x, w: x.dot(w * x),
    "clamp": lambda lib, x, w: x.clamp(0, 1),
    "gelu": lambda lib, x, w: lib.nn.functional.gelu(x),
}


def _saved_tensors_of(lib, name):
    """{`_saved_<name>`: value} of the graph's grad_fn, for the saved values that are tensors (or
    None: not saved, as its input needs no gradient). PyTorch also shows sizes, numbers and
    strings (`_saved_self_sym_sizes`, `_saved_exponent`, `_saved_dim`), which we keep on ctx."""
    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([3.0, 4.0], dtype=lib.float64)
    node = SAVED_NAME_CASES[name](lib, x, w).grad_fn
    if lib is ag:
        attrs = ["_saved_" + saved_name for saved_name in type(node)._saved_names]
    else:
        attrs = [attr for attr in dir(node) if attr.startswith("_saved_")]
    found = {attr: getattr(node, attr) for attr in attrs}
    return {attr: v for attr, v in found.items() if v is None or hasattr(v, "grad_fn")}


@pytest.mark.oracle
@pytest.mark.parametrize("name", SAVED_NAME_CASES)
def test_saved_tensors_have_pytorchs_names_and_values(name, torch):
    ours, theirs = _saved_tensors_of(ag, name), _saved_tensors_of(torch, name)
    assert sorted(ours) == sorted(theirs)
    for attr, value in theirs.items():
        if value is None:
            assert ours[attr] is None, attr
        else:
            np.testing.assert_allclose(values(ours[attr]), values(value), rtol=1e-12, err_msg=attr)


def test_a_saved_input_is_the_tensor_itself_and_a_saved_result_a_new_tensor(lib):
    # PyTorch's autograd notes: `x is y.grad_fn._saved_self` is True for pow, while
    # `y is y.grad_fn._saved_result` is False for exp (equal values, another tensor object)
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = x.pow(2)
    assert y.grad_fn._saved_self is x
    e = x.exp()
    saved = e.grad_fn._saved_result
    assert saved is not e and saved.equal(e)
    assert saved.grad_fn is e.grad_fn


def test_saved_tensors_read_after_backward_say_backward_went_through_the_graph_twice(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_result
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.grad_fn._saved_result


def test_an_unknown_saved_name_is_an_attribute_error(lib):
    y = lib.tensor([0.5], requires_grad=True).sin()
    with pytest.raises(AttributeError):
        y.grad_fn._saved_other
    with pytest.raises(AttributeError):
        y.grad_fn._raw_saved_other


# ---- saved_tensors_hooks: pack and unpack calls, as PyTorch makes them ---------------------------


def _recorded_calls(lib, build, read=None, backward=True):
    """Run `build(lib, x)` inside saved_tensors_hooks that record every call: ("pack"/"unpack",
    shape, requires_grad, name of the tensor's grad_fn); "forward done" marks where forward ends."""
    calls = []

    def describe(t):
        grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        return (tuple(t.shape), t.requires_grad, grad_fn)

    def pack(t):
        calls.append(("pack", *describe(t)))
        return t

    def unpack(t):
        calls.append(("unpack", tuple(t.shape)))
        return t

    lib.manual_seed(0)
    x = lib.tensor([[0.5, 1.5], [-1.0, 2.0]], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = build(lib, x)
    calls.append("forward done")
    if read is not None:
        getattr(y.grad_fn, read)
        calls.append("read " + read)
    if backward:
        y.sum().backward()
    return calls


class _Square:
    """A custom Function, the same in both libraries: its saved tensors go through the hooks too."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        (again,) = ctx.saved_tensors  # every read unpacks again, in PyTorch too
        return 2 * again * grad


class _SquareSavingItsOutput:
    @staticmethod
    def forward(ctx, x):
        y = x * x
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return 2 * x * grad


def _custom(lib, cls):
    return type(cls.__name__, (lib.autograd.Function,), dict(vars(cls)))


def _mlp(lib, x):
    layer1, layer2 = lib.nn.Linear(2, 3), lib.nn.Linear(3, 1)
    hidden = lib.relu(layer1(x.detach()))  # the input needs no gradient, as data never does
    return (layer2(hidden) - x[:, :1]).pow(2).mean()


HOOKED_GRAPHS = {
    "x * x": lambda lib, x: x * x,
    "x * constant": lambda lib, x: x * lib.tensor([3.0, 4.0]),
    "x * 2": lambda lib, x: x * 2,
    "x.pow(2)": lambda lib, x: x.pow(2),
    "x ** 2": lambda lib, x: x**2,
    "x.exp()": lambda lib, x: x.exp(),
    "x.sin().cos()": lambda lib, x: x.sin().cos(),
    "tanh, sigmoid, relu": lambda lib, x: x.tanh().sigmoid().relu(),
    "softmax": lambda lib, x: x.softmax(1),
    "x / 2 and sum": lambda lib, x: (x / 2).sum(),
    "matmul": lambda lib, x: x @ x,
    "matmul with a constant": lambda lib, x: x @ lib.ones(2, 3),
    "custom Function": lambda lib, x: _custom(lib, _Square).apply(x),
    "custom Function saving its output": lambda lib, x: _custom(lib, _SquareSavingItsOutput).apply(
        x
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", HOOKED_GRAPHS)
def test_pack_and_unpack_run_as_in_pytorch(name, torch):
    ours = _recorded_calls(ag, HOOKED_GRAPHS[name])
    theirs = _recorded_calls(torch, HOOKED_GRAPHS[name])
    assert ours == theirs


# Ops of several inputs, each input a different constant (1, 2, 3): the order of the pack and
# unpack calls tells which saved tensor is which. PyTorch saves a node's inputs in the
# alphabetical order of their names (MulBackward0: other, then self), then its results. (Linear
# layers, whose saved weight differs, are in the MLP test below.)
ORDER_CASES = {
    "mul": (lambda lib, a, b, c: a * b, 2),
    "div": (lambda lib, a, b, c: a / b, 2),
    "mm": (lambda lib, a, b, c: a.view(1, 3) @ b.view(3, 1), 2),
    "mv": (lambda lib, a, b, c: a.view(1, 3).mv(b), 2),
    "dot": (lambda lib, a, b, c: a.dot(b), 2),
    "pow of tensors": (lambda lib, a, b, c: a**b, 2),
    "maximum": (lambda lib, a, b, c: lib.maximum(a, b), 2),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c), 3),
    "lerp": (lambda lib, a, b, c: lib.lerp(a, b, c), 3),
    "clamp between tensors": (lambda lib, a, b, c: lib.clamp(a, b, c), 3),
    "where": (lambda lib, a, b, c: lib.where(a > 1.5, a, b), 2),
    "mse_loss": (lambda lib, a, b, c: lib.nn.functional.mse_loss(a, b), 2),
    "max": (lambda lib, a, b, c: a.max(), 1),
    "std": (lambda lib, a, b, c: a.std(), 1),
    "logsumexp": (lambda lib, a, b, c: a.logsumexp(0), 1),
}


def _order_of_calls(lib, name):
    build, count = ORDER_CASES[name]
    calls = []

    def pack(t):
        calls.append(("pack", tuple(t.shape), round(float(t.reshape(-1)[0]), 6)))
        return t

    def unpack(t):
        calls.append(("unpack", tuple(t.shape), round(float(t.reshape(-1)[0]), 6)))
        return t

    inputs = [lib.full((3,), float(i + 1), requires_grad=i < count) for i in range(3)]
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = build(lib, *inputs)
    y.sum().backward()
    return calls


@pytest.mark.oracle
@pytest.mark.parametrize("name", ORDER_CASES)
def test_several_saved_tensors_are_packed_and_unpacked_in_pytorchs_order(name, torch):
    assert _order_of_calls(ag, name) == _order_of_calls(torch, name)


@pytest.mark.oracle
def test_reading_a_saved_tensor_unpacks_it_as_in_pytorch(torch):
    build = HOOKED_GRAPHS["x.exp()"]
    ours = _recorded_calls(ag, build, read="_saved_result")
    assert ours == _recorded_calls(torch, build, read="_saved_result")
    assert ours.count(("unpack", (2, 2))) == 2  # once for the read, once for backward


@pytest.mark.oracle
def test_pack_and_unpack_in_a_small_mlp_come_in_pytorchs_order(torch):
    """A linear layer saves its input and its weight: PyTorch saves the transposed weight w.t()
    (shape (out, in) read backward, made by a TBackward0 node), we save the weight itself. The
    number of calls, their order and every other tensor are the same."""
    ours, theirs = _recorded_calls(ag, _mlp), _recorded_calls(torch, _mlp)
    assert len(ours) == len(theirs)
    for mine, pytorchs in zip(ours, theirs, strict=True):
        if pytorchs[-1] == "TBackward0":  # the second layer's weight, as packed
            assert mine == ("pack", (1, 3), True, None)
        elif pytorchs == ("unpack", (3, 1)):  # ... and as unpacked
            assert mine == ("unpack", (1, 3))
        else:
            assert mine == pytorchs


def test_the_mlp_trains_to_the_same_gradients_with_hooks_that_store_copies():
    def run(pack, unpack):
        ag.manual_seed(0)
        model = ag.nn.Sequential(ag.nn.Linear(2, 3), ag.nn.Tanh(), ag.nn.Linear(3, 1))
        x = ag.tensor([[0.5, 1.5], [-1.0, 2.0]])
        with ag.autograd.graph.saved_tensors_hooks(pack, unpack):
            loss = model(x).pow(2).mean()
        loss.backward()
        return [values(p.grad) for p in model.parameters()]

    plain = run(lambda t: t, lambda t: t)
    copied = run(lambda t: t.detach().numpy().copy(), lambda a: ag.tensor(a))
    for a, b in zip(plain, copied, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_nested_hooks_the_innermost_applies_and_the_outer_one_returns(lib):
    calls = []

    def hooks(name):
        return (
            lambda t: (calls.append(f"{name} pack"), t)[1],
            lambda t: (calls.append(f"{name} unpack"), t)[1],
        )

    x = lib.tensor([0.5, 1.5], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*hooks("outer")):
        with lib.autograd.graph.saved_tensors_hooks(*hooks("inner")):
            y = x.sin()
        z = y.cos()
    z.sum().backward()
    assert calls == ["inner pack", "outer pack", "outer unpack", "inner unpack"]


def test_hooks_are_per_thread(lib):
    calls = []
    x = lib.tensor([0.5, 1.5], requires_grad=True)

    def other_thread():
        x.sin()  # no hooks in force in this thread: nothing is packed

    with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("pack") or t, lambda t: t):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        x.cos()
    assert calls == ["pack"]


def test_nothing_is_packed_when_nothing_is_recorded(lib):
    calls = []
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append("pack") or t, lambda t: t):
        with lib.no_grad():
            x.sin()
        lib.tensor([0.5, 1.5]).sin()
    assert calls == []


def test_unpack_hook_values_are_what_backward_uses(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: ("kept", t.detach().clone()), lambda packed: packed[1] * 10
    ):
        y = x.sin()
    saved = y.grad_fn._saved_self
    np.testing.assert_allclose(values(saved), [5.0, 15.0])
    assert saved.requires_grad and saved.is_leaf  # connected as the saved tensor was
    y.sum().backward()
    np.testing.assert_allclose(values(x.grad), np.cos([5.0, 15.0]), rtol=1e-6)


@pytest.mark.oracle
def test_double_backward_through_unpacked_tensors_reaches_the_leaf(torch):
    results = []
    for lib in (ag, torch):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = x.sin() * x.exp()
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((values(g), values(gg)))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_an_unpack_hook_must_return_a_tensor(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
        y = x.sin()
    with pytest.raises(TypeError):
        y.grad_fn._saved_self
    with pytest.raises(TypeError):
        y.sum().backward()
    with pytest.raises(
        TypeError, match="unpack hook must return a Tensor" if lib is ag else "unpack_hook"
    ):
        y.grad_fn._saved_self


def test_a_pack_hook_must_not_modify_its_input_in_place(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
        with pytest.raises(RuntimeError, match="in place" if lib is ag else "in-place"):
            x * lib.tensor([1.0, 2.0])


def test_hooks_must_be_functions():
    with pytest.raises(TypeError, match="pack_hook must be a function"):
        ag.autograd.graph.saved_tensors_hooks(None, lambda t: t)


def test_save_on_cpu_gives_the_same_gradients(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    with lib.autograd.graph.save_on_cpu():
        y = (x.exp() * x).sum()
    y.backward()
    np.testing.assert_allclose(values(x.grad), np.exp([0.5, 1.5]) * (1 + np.array([0.5, 1.5])))
    with lib.autograd.graph.save_on_cpu(pin_memory=True, device_type="cuda"):
        (x * x).sum().backward()


def test_disable_saved_tensors_hooks_refuses_hooks_with_its_message(lib):
    graph = lib.autograd.graph
    with graph.disable_saved_tensors_hooks("hooks would break this layer"):
        x = lib.tensor([0.5], requires_grad=True)
        x.sin().sum().backward()  # operations run as usual
        with pytest.raises(RuntimeError, match="hooks would break this layer"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with graph.disable_saved_tensors_hooks("inner"):
            pass
        with pytest.raises(RuntimeError, match="hooks would break this layer"):  # outer restored
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.disable_saved_tensors_hooks("no hooks here"):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # and allowed again afterwards
        pass


# ---- one saved tensor's own hooks: grad_fn._raw_saved_<name> ---------------------------------------


def test_register_hooks_packs_at_once_and_unpacks_on_each_use(lib):
    calls = []
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = x.sin()
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(
        lambda t: (calls.append("pack"), t)[1], lambda t: (calls.append("unpack"), t)[1]
    )
    assert calls == ["pack"]
    y.grad_fn._saved_self
    y.sum().backward()
    assert calls == ["pack", "unpack", "unpack"]
    np.testing.assert_allclose(values(x.grad), np.cos([0.5, 1.5]), rtol=1e-6)


def test_register_hooks_is_refused_twice_after_backward_and_for_none(lib):
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    y = x.sin()
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="one pair of hooks"):
        raw.register_hooks(lambda t: t, lambda t: t)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        raw.register_hooks(lambda t: t, lambda t: t)
    m = x * lib.tensor([3.0, 4.0])  # self is not saved: only x needs a gradient
    assert m.grad_fn._saved_self is None
    with pytest.raises(RuntimeError, match="None"):
        m.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = x.cos()
    with pytest.raises(RuntimeError, match="one pair of hooks"):
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError):
        z.grad_fn._raw_saved_self.register_hooks(1, 2)


def test_checkpointed_tensors_do_not_reach_the_users_hooks():
    from autograd_lab.utils.checkpoint import checkpoint

    calls = []
    x = ag.tensor([0.5, 1.5], requires_grad=True)
    with ag.autograd.graph.saved_tensors_hooks(lambda t: calls.append("pack") or t, lambda t: t):
        y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
    y.sum().backward()
    assert calls == []
    np.testing.assert_allclose(
        values(x.grad), np.exp(np.sin([0.5, 1.5])) * np.cos([0.5, 1.5]), rtol=1e-6
    )


def test_the_graph_viewer_shows_what_was_saved_even_when_hooks_packed_it():
    from autograd_lab.viz import record

    with record() as recording:
        x = ag.tensor([[0.5, 1.5]], requires_grad=True)
        with ag.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy(), ag.tensor):
            y = x.exp()
    exp = next(n for n in recording.graph(y).nodes if n.get("op") == "ExpBackward0")
    assert exp["saved"] == [{"name": "result", "shape": [1, 2]}]


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
def test_save_on_cpu_keeps_cuda_tensors_on_the_host_until_backward():
    """The packed values are CPU tensors; backward gets them back on the GPU, with the gradients
    of an unhooked run (in numba's CUDA simulator unless AUTOGRAD_LAB_REAL_CUDA=1)."""

    def run(hooks):
        x = ag.tensor([0.5, 1.5, -1.0], device="cuda", requires_grad=True)
        with hooks:
            y = (x.exp() * x.sin()).sum()
        mul = y.grad_fn.next_functions[0][0]  # MulBackward0 saved exp(x) and sin(x)
        places = [
            saved.packed[1].device if hasattr(saved, "packed") else "kept" for saved in mul._saved
        ]
        y.backward()
        assert x.grad.device == ag.device("cuda", 0)
        return places, x.grad.cpu().numpy()

    places, plain = run(contextlib.nullcontext())
    assert places == ["kept", "kept"]
    places, hooked = run(ag.autograd.graph.save_on_cpu())
    assert places == [ag.device("cpu"), ag.device("cpu")]
    np.testing.assert_allclose(hooked, plain, rtol=1e-6)


# ---- the autograd notes' script, unchanged --------------------------------------------------------

NOTES_SCRIPT = """
import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))  # True
print(x is y.grad_fn._saved_self)  # True
y = x.exp()
print(y.equal(y.grad_fn._saved_result))  # True
print(y is y.grad_fn._saved_result)  # False


def pack_hook(t):
    print("Packing", t)
    return t


def unpack_hook(t):
    print("Unpacking", t)
    return t


a = torch.ones(3, requires_grad=True)
b = torch.ones(3, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
print(a.grad)

y = a.sin()
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
y.sum().backward()
print(a.grad)
"""


@pytest.mark.oracle
def test_the_autograd_notes_script_prints_the_same(torch):
    def printed(source):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<script>", "exec"), {})
        return out.getvalue()

    theirs = printed(NOTES_SCRIPT)
    ours = printed(NOTES_SCRIPT.replace("import torch", "import autograd_lab as torch"))
    assert ours == theirs
    assert theirs.count("Packing") == 3 and theirs.count("Unpacking") == 3


def test_a_number_the_op_kept_reads_as_pytorch_names_it(torch):
    for lib in (ag, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert (x**2).grad_fn._saved_exponent == 2
        assert x.pow(2.5).grad_fn._saved_exponent == 2.5
    with pytest.raises(AttributeError, match="_saved_nothing"):
        (ag.tensor([1.0], requires_grad=True) ** 2).grad_fn._saved_nothing
