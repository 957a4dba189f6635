"""Which backward passes raise, and which run: issue 14's differential fuzzing found backward passes
that raised in one library and not in the other. Each test runs the same lines with autograd_lab
and with PyTorch (the `torch` fixture, or the `lib` fixture where a rule holds in both) and
compares gradients, or error classes and key words."""

import numpy as np
import pytest
from conftest import both, raises_alike
from fuzzing import check
from fuzzing.compare import Divergence
from fuzzing.program import Leaf, Program, Step
from fuzzing.simplifications import accepted_by

import autograd_lab as ag


def test_var_mean_saves_only_its_input_so_its_results_may_change_in_place(torch):
    def grad(lib):
        x = lib.tensor([1.0, 2.0, 4.0], dtype=lib.float64, requires_grad=True)
        var, mean = lib.var_mean(x)
        var.mul_(2)  # PyTorch's VarMeanBackward0 saved x only: nothing it needs has changed
        (var + 3 * mean).backward()
        return x.grad

    both(torch, grad)
    var, _ = ag.var_mean(ag.ones(2, requires_grad=True))
    assert not hasattr(var.grad_fn, "_saved_result0") and hasattr(var.grad_fn, "_saved_self")


def test_std_mean_saves_its_result_so_changing_it_in_place_is_caught(lib):
    x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
    std, mean = lib.std_mean(x)
    std.mul_(2)  # StdMeanBackward0 saved the std: its slope divides by it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (std + mean).backward()


def test_a_hook_on_an_output_that_got_no_gradient_is_shown_none(lib):
    shown = []
    x = lib.arange(4.0, requires_grad=True)
    first, second = x.split(2)
    first.register_hook(shown.append)  # runs when SplitBackward0 runs, with no gradient
    var, mean = lib.var_mean(x)
    var.register_hook(shown.append)
    (second.sum() + mean).backward()
    assert shown == [None, None]
    var, mean = lib.var_mean(x)
    var.register_hook(lambda grad: grad * 2)  # the fuzzer's program: the hook fails on None
    with pytest.raises(TypeError, match="NoneType"):
        mean.backward()


def test_a_leaf_hook_is_shown_none_when_a_backward_sends_it_nothing(lib):
    class Drop(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return None

    shown = []
    x = lib.ones(2, requires_grad=True)
    x.register_hook(shown.append)
    y = x * 2
    y.register_hook(shown.append)
    y.retain_grad()
    Drop.apply(y).sum().backward()
    assert shown == [None, None] and y.grad is None and x.grad is None


@pytest.mark.parametrize(
    "input_dtype, target_dtype", [("float32", "float64"), ("float64", "int64")]
)
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_huber_loss_backward_needs_the_target_in_the_inputs_dtype(
    lib, input_dtype, target_dtype, reduction
):
    x = lib.tensor([0.5, 3.0], dtype=getattr(lib, input_dtype), requires_grad=True)
    target = lib.tensor([0, 1], dtype=getattr(lib, target_dtype))
    loss = lib.nn.functional.huber_loss(x, target, reduction=reduction)
    assert loss.dtype == x.dtype  # the forward pass computes a loss of the input's dtype
    with pytest.raises(RuntimeError, match="Found dtype"):
        loss.sum().backward()


def test_huber_loss_forward_computes_in_the_promoted_dtype(torch):
    def loss(lib):  # 0.1 in float64 is not 0.1 in float32: the difference shows after squaring
        x = lib.tensor([1.0, 0.1, 5.0])
        target = lib.tensor([0.3, 0.2, 0.1], dtype=lib.float64)
        return lib.nn.functional.huber_loss(x, target, reduction="none")

    both(torch, loss)


def test_remainder_saves_its_operands_only_for_the_divisors_gradient(torch):
    def grad(lib):
        x = lib.tensor([1.5, -2.5, 4.0], requires_grad=True)
        y = x * 1
        r = y % lib.tensor([2.0, 2.0, 3.0])  # the divisor needs no gradient: nothing saved
        y.mul_(2)
        r.sum().backward()
        return x.grad

    both(torch, grad)
    for lib in (ag, torch):
        x = lib.tensor([1.5, -2.5])
        r = x % lib.tensor([2.0, 3.0], requires_grad=True)
        x.mul_(2)  # the divisor's slope, -floor(x / y), reads x
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            r.sum().backward()
    np.testing.assert_array_equal(grad(ag).numpy(), [1.0, 1.0, 1.0])


def test_dist_with_p_zero_has_no_gradient_where_pytorch_fails_inside(torch):
    # dist(x, y, 0) counts the elements that differ: a step function, without slope. PyTorch
    # 2.13 gives x no gradient, but when y requires grad too its backward negates that missing
    # gradient for y and fails inside; ours gives neither a gradient (a README simplification).
    def grads(lib, other_requires_grad):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([0.5, 2.0], requires_grad=other_requires_grad)
        lib.dist(x, y, 0).backward()
        return x.grad, y.grad

    assert grads(ag, False) == grads(torch, False) == (None, None)
    with pytest.raises(RuntimeError, match="Expected a proper Tensor but got None"):
        grads(torch, True)
    assert grads(ag, True) == (None, None)
    program = Program(
        (Leaf("x0", (2,), "float32", (1.0, 2.0), True),),
        (Step("v0", "dist", "torch.dist({0}, {0}, 0)", ("x0",)),),
        backward="backward",
        loss_of="v0",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("backward", "raises") in [(d.op, d.what) for d, _ in result.accepted]
    other_error = Divergence(
        "loss.backward()", "backward", "raises", "ran", "raises RuntimeError: x"
    )
    assert accepted_by(other_error) is None


@pytest.mark.parametrize("index", [0, [1]], ids=["a view", "an index list"])
@pytest.mark.parametrize("value_shape", [(1, 1, 3), (1, 1, 1)])
def test_a_written_value_with_extra_leading_ones_gets_a_gradient_of_its_shape(
    torch, index, value_shape
):
    # PyTorch lets x[0] = value carry extra leading size-1 dims (x[0] = row[None])
    def grad(lib):
        value = lib.arange(1.0, 1.0 + value_shape[-1]).reshape(value_shape).requires_grad_()
        x = lib.zeros(2, 3)
        x[index] = value
        (x * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return value.grad

    both(torch, grad)


def test_a_saved_tensor_detached_in_place_afterwards_makes_backward_raise(lib):
    x = lib.tensor([0.5, 1.0], requires_grad=True)
    v = x * 2
    y = v.sin()  # SinBackward0 saves v, with its history
    v.detach_()
    with pytest.raises(RuntimeError, match=r"detached in-place, i\.e\. with \.detach_\(\)"):
        y.sum().backward()


def test_detach_in_place_before_saving_or_of_a_saved_result_is_allowed(torch):
    def grads(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        v = x * 2
        v.detach_()
        product = v * x  # saves v as it is now: without history
        result = x.exp()
        later = result * 1
        result.detach_()  # ExpBackward0 saved its result, which PyTorch checks differently
        (product + later).sum().backward()
        return x.grad

    both(torch, grads)


@pytest.mark.parametrize("dims", [{}, {"dim": 0}, {"dim": 1, "keepdim": True}])
def test_prod_saves_its_result_so_changing_it_in_place_is_caught(torch, lib, dims):
    x = lib.tensor([[1.5, 2.0], [3.0, -1.0]], requires_grad=True)
    product = x.prod(**dims)
    later = product * 1
    product.mul_(2)  # ProdBackward0/1 saved the product: its slope is product / x
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        later.sum().backward()

    def second_order(lib):  # the slope computed from the saved product, differentiated again
        x = lib.tensor([[1.5, 2.0], [3.0, -1.0]], requires_grad=True)
        (grad,) = lib.autograd.grad(x.prod(**dims).sum(), x, create_graph=True)
        return grad, lib.autograd.grad((grad * grad).sum(), x)[0]

    ours, theirs = second_order(ag), second_order(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_smooth_l1_loss_against_a_bool_tensor_has_a_gradient(torch, reduction):
    def grads(lib):
        x = lib.tensor([0.2, 1.5, -2.0], requires_grad=True)
        mask = lib.tensor([True, False, True])
        as_input = lib.nn.functional.smooth_l1_loss(mask, x, reduction=reduction, beta=0.5)
        as_target = lib.nn.functional.smooth_l1_loss(x, mask, reduction=reduction)
        (as_input.sum() + as_target.sum()).backward()
        return x.grad

    both(torch, grads)


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda lib, x: lib.unique(x), NotImplementedError),
        (lambda lib, x: 5 % x, RuntimeError),
        (lambda lib, x: 5 // x, RuntimeError),
        (lambda lib, x: lib.histogram(x, 3)[1], RuntimeError),
    ],
    ids=["unique", "number % x", "number // x", "histogram"],
)
def test_a_node_without_derivative_fails_even_when_no_gradient_reaches_it(lib, make, error):
    # norm(y, 0) counts nonzeros: it sends no gradient back, yet the backward pass still runs
    # the nodes behind it, and one without a derivative fails there, as in PyTorch
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(error, match="not implemented"):
        lib.norm(make(lib, x).tanh(), p=0).backward()
    lib.norm(x.sin().tanh(), p=0).backward()  # an ordinary node just passes nothing on
    assert x.grad is None


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_addcdiv_by_an_integer_tensor_has_the_gradient_of_its_formula(torch, dtype):
    # PyTorch 2.13 computes value / tensor2 for tensor1's gradient in tensor2's own dtype, and
    # fails to store the float quotient there: an accident we do not copy (a README simplification)
    def grad(lib, as_float=False):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        divisor = lib.tensor([2, 1]).to(getattr(lib, dtype))
        divisor = divisor.float() if as_float else divisor
        lib.addcdiv(lib.zeros(2), x, divisor, value=-1.5).sum().backward()
        return x.grad

    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        grad(torch)
    np.testing.assert_array_equal(grad(ag).numpy(), grad(torch, as_float=True).numpy())
    program = Program(
        (
            Leaf("x0", (2,), "float32", (1.0, 2.0), True),
            Leaf("x1", (2,), dtype, (1, 1) if dtype == "bool" else (2, 1)),
        ),
        (Step("v0", "addcdiv", "torch.addcdiv({0}, {0}, {1})", ("x0", "x1")),),
        backward="backward",
        loss_of="v0",
    )
    result = check(program, ag, torch)
    assert not result.divergences
    assert ("backward", "raises") in [(d.op, d.what) for d, _ in result.accepted]
    message = "raises RuntimeError: result type Float can't be cast to the desired output type Long"
    forward_error = Divergence("v0 = x1.add_(x0)", "Tensor.add_", "raises", "ran", message)
    assert accepted_by(forward_error) is None


@pytest.mark.parametrize("change", ["the input", "the mask"])
def test_masked_select_saves_its_input_and_mask(lib, change):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 1
    mask = y > 0
    picked = lib.masked_select(y, mask)
    if change == "the input":
        y[0:0] = 0  # an empty write still counts as a change, as in PyTorch
    else:
        mask[0] = False
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        picked.sum().backward()


@pytest.mark.parametrize("change", ["the input", "the index"])
def test_gather_saves_its_input_and_index(lib, change):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 1
    index = lib.tensor([[0, 2], [1, 1]])
    picked = lib.gather(y, 1, index)
    if change == "the input":
        y.mul_(2)  # GatherBackward0 saved y (PyTorch's _saved_self), though its slope is 0 or 1
    else:
        index[0, 0] = 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        picked.sum().backward()


@pytest.mark.parametrize("change", ["squeeze_(1)", "unsqueeze_(0)", "t_()", "transpose_(0, 1)"])
def test_a_shape_changed_in_place_on_a_piece_of_chunk_is_refused(torch, change):
    # like any in-place op on one of several views that one node returned, while recording
    def pieces(lib, recording=True):
        x = lib.zeros(2, 1, requires_grad=True)
        with lib.set_grad_enabled(recording):
            return lib.chunk(lib.maximum(x, x), 2, 0)

    for lib in (torch, ag):
        with pytest.raises(RuntimeError, match="Output 1 of Split is a view"):
            eval(f"pieces(lib)[1].{change}")
        eval(f"pieces(lib, recording=False)[1].{change}")  # without recording it is allowed


@pytest.mark.parametrize("rounding_mode", ["trunc", "floor"])
def test_div_with_rounding_mode_saves_its_operands_as_true_division_does(lib, rounding_mode):
    # DivBackward2's gradient is zero, yet PyTorch keeps other (and self when other needs a
    # gradient): changing them in place before backward is refused
    for a_needs, b_needs, changed, refused in [
        (True, False, "a", False),
        (True, False, "b", True),
        (False, True, "a", True),
    ]:
        a = lib.tensor([5.0, -7.0], requires_grad=a_needs) * 1
        b = lib.tensor([2.0, 3.0], requires_grad=b_needs) * 1
        quotient = lib.div(a, b, rounding_mode=rounding_mode)
        with lib.no_grad():
            (a if changed == "a" else b).add_(1)
        if refused:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                quotient.sum().backward()
        else:
            quotient.sum().backward()


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv_save_a_factor_only_for_the_gradient_that_reads_it(torch, op):
    # addcmul keeps tensor1 only for tensor2's gradient and the other way round; addcdiv always
    # keeps tensor2 (both gradients read it). Which in-place change is refused follows from that.
    def outcomes(lib):
        seen = []
        for needs in [(True, False, False), (False, True, False), (False, False, True)]:
            for changed in (1, 2):
                made = [lib.tensor([1.0, 2.0], requires_grad=need) * 1 for need in needs]
                result = getattr(lib, op)(*made)
                with lib.no_grad():
                    made[changed].add_(1)
                try:
                    result.sum().backward()
                    seen.append("ran")
                except RuntimeError as error:
                    assert "modified by an inplace operation" in str(error)
                    seen.append("refused")
        return seen

    assert outcomes(ag) == outcomes(torch)


def test_a_view_whose_base_was_detached_in_place_and_then_changed_leads_nowhere(torch):
    # after base.detach_() and an in-place change of the base, PyTorch gives the view a new
    # AsStridedBackward0 whose edge goes nowhere: the leaf behind the old history gets no .grad
    def run(lib):
        x = lib.tensor([1.0, -1.0], requires_grad=True)
        base = x * 2
        view = base.view(2, 1)
        base.detach_()
        base.mul_(3)
        assert type(view.grad_fn).__name__ == "AsStridedBackward0" and view.requires_grad
        assert view.grad_fn.next_functions == ((None, 0),)
        (view * 2).sum().backward()
        return x.grad

    assert run(ag) is None and run(torch) is None


@pytest.mark.parametrize("change", ["fill_", "zero_", "masked_fill_", "setitem"])
def test_backward_through_an_in_place_change_of_an_expanded_view_is_refused(torch, change):
    # the forward pass allows these on an expanded tensor; PyTorch's backward then writes the
    # view's gradient into memory its elements share, and refuses that before going further
    # (so before a node without derivative, such as unique's, further back)
    def run(lib):
        x = lib.zeros(3, requires_grad=True)
        unique = x.unique_consecutive()
        expanded = unique.expand(2, 4)
        if change == "fill_":
            expanded.fill_(2.0)
        elif change == "zero_":
            expanded.zero_()
        elif change == "masked_fill_":
            expanded.masked_fill_(expanded == 0, 0.25)
        else:
            expanded[expanded == 0] = 0.25
        expanded.prod(dim=0).sum().backward()

    raises_alike(torch, run, RuntimeError, "more than one element of the written-to tensor")


def test_scatter_with_reduce_records_a_src_that_requires_grad(torch):
    # only the src needs a gradient: PyTorch still records its NotImplemented node, whose
    # backward raises (not "does not require grad")
    def run(lib):
        src = lib.tensor([1.0, 2.0], requires_grad=True)
        result = lib.zeros(3).scatter(0, lib.tensor([0, 2]), src, reduce="add")
        assert result.requires_grad and type(result.grad_fn).__name__ == "NotImplemented"
        result.sum().backward()

    raises_alike(torch, run, RuntimeError, "derivative for scatter with reduce= is not implemented")


def test_retain_grad_on_an_integer_tensor_written_with_a_grad_value_is_refused_here(torch):
    # a README simplification: PyTorch gives the bool tensor a history when a value that
    # requires grad is written into it, so its retain_grad() runs; ours records nothing
    def write(lib):
        flags = lib.tensor(False)
        flags[None] = lib.tensor(0.0, dtype=lib.float64, requires_grad=True)
        return flags

    write(torch).retain_grad()
    with pytest.raises(RuntimeError, match="does not require grad .torch.bool is an integer") as e:
        write(ag).retain_grad()
    where = "x0.retain_grad(); v3 = x0"
    accepted = Divergence(
        where, "Tensor.retain_grad", "raises", f"raises RuntimeError: {e.value}", "ran"
    )
    assert accepted_by(accepted) is not None
    with pytest.raises(RuntimeError, match="does not require grad: no gradient") as e:
        ag.tensor(1.0).retain_grad()  # a float tensor: no simplification covers this
    float_case = Divergence(
        where, "Tensor.retain_grad", "raises", f"raises RuntimeError: {e.value}", "ran"
    )
    assert accepted_by(float_case) is None


def test_lerp_with_a_zero_dim_bool_weight_refuses_the_inputs_gradient(torch):
    # PyTorch takes a 0-d bool weight in the forward pass, keeps it bool, and its backward's
    # `1 - weight` fails for input's gradient; end's gradient (grad * weight) is computed
    def input_grad(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.lerp(x * 2, lib.tensor(True)).sum().backward()

    raises_alike(torch, input_grad, RuntimeError, "Subtraction, the `-` operator, with two bool")

    def end_grad(lib):
        end = lib.tensor(3.0, requires_grad=True)
        lib.tensor(1.0).lerp(end, lib.tensor(True)).backward()
        return end.grad

    both(torch, end_grad)
