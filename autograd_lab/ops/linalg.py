"""Matrix products: matmul (batched, broadcasting) and its named special cases.

For C = A @ B the gradients are dA = dC @ Bᵀ and dB = Aᵀ @ dC. A 1-D operand is treated as a
matrix with one row (on the left) or one column (on the right), and that extra dim is dropped
again at the end — numpy's and PyTorch's rule. matmul expands batch dims that broadcast before
it multiplies, so their gradients are summed back by expand's backward, as in PyTorch.
"""

import math

import numpy as np

from .. import types
from ..autograd.function import Op
from ..autograd.grad_mode import is_grad_enabled
from ..layout import row_major
from .elementwise import check_broadcastable, operands
from .registry import public
from .shape import UnsafeView


class MatrixProduct(Op):
    """What mm, mv, dot and bmm share: A @ B of two vectors, matrices or equal batches of them,
    whose gradients are grad @ Bᵀ and Aᵀ @ grad (`matmul` below reduces every other case to
    these, as PyTorch does)."""

    saved_names = ("self", "mat2")

    @staticmethod
    def forward(ctx, a, b):
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b else None, b if needs_a else None)
        ctx.ndims = (a._data.ndim, b._data.ndim)
        x, y = operands(a, b, elementwise=False)  # matmul's shapes follow other rules
        try:
            with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 = nan, silently
                # row-major, as PyTorch's products always are (numpy keeps a batch's order:
                # a transposed batch gave a transposed result, and randint_like filled it so)
                return row_major(np.matmul(x, y))
        except ValueError:
            raise RuntimeError(
                f"cannot multiply shapes {list(x.shape)} and {list(y.shape)}: the last dim of the "
                f"first ({x.shape[-1]}) must equal the "
                f"{'only' if y.ndim == 1 else 'second-to-last'} dim of the second "
                f"({y.shape[0] if y.ndim == 1 else y.shape[-2]})"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_ndim, b_ndim = ctx.ndims
        if b_ndim == 1:  # restore the dims the 1-D operands lost, so both rules are matrix rules
            grad = grad.unsqueeze(-1)
        if a_ndim == 1:
            grad = grad.unsqueeze(-2)
        needs_a, needs_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if needs_a:
            grad_a = grad @ (b.unsqueeze(-1) if b_ndim == 1 else b).mT
            grad_a = grad_a.squeeze(-2) if a_ndim == 1 else grad_a
        if needs_b:
            grad_b = (a.unsqueeze(0) if a_ndim == 1 else a).mT @ grad
            grad_b = grad_b.squeeze(-1) if b_ndim == 1 else grad_b
        return grad_a, grad_b


class Mm(MatrixProduct):
    node_name = "MmBackward0"
    derivative = "d(A @ B)/dA = grad @ Bᵀ,  d/dB = Aᵀ @ grad"


class Mv(MatrixProduct):
    node_name = "MvBackward0"
    saved_names = ("self", "vec")  # PyTorch's names for mv(self, vec)
    derivative = "d(A @ v)/dA = outer(grad, v),  d/dv = Aᵀ @ grad"


class Dot(MatrixProduct):
    node_name = "DotBackward0"
    saved_names = ("self", "tensor")  # PyTorch's names for dot(self, tensor)
    derivative = "d(a · b)/da = b,  d/db = a"


class Bmm(MatrixProduct):
    node_name = "BmmBackward0"
    derivative = "per batch: grad @ Bᵀ and Aᵀ @ grad"

    @staticmethod
    def backward(ctx, grad):
        # bmm again, directly: `@` would lower these batches into bmm through reshapes first
        a, b = ctx.saved_tensors
        needs_a, needs_b = ctx.needs_input_grad
        return (
            Bmm.apply(grad, b.mT) if needs_a else None,
            Bmm.apply(a.mT, grad) if needs_b else None,
        )


@public("matmul", method=True, out=True)
def matmul(input, other):
    from ..tensor import Tensor

    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(
            "matmul() multiplies two tensors; wrap numbers or lists with tensor() first"
        )
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError("matmul() needs tensors with at least 1 dim each; use * for scalars")
    if input.ndim == 3 and other.ndim == 3 and is_grad_enabled():
        # a batch of one matrix times a batch of several: PyTorch drops the batch of one when
        # that operand requires grad, so its gradient is one matrix product (the rules below);
        # before any check, so the product's checks are those of the rules below too
        if input.shape[0] == 1 != other.shape[0] and input.requires_grad:
            return matmul(input.squeeze(0), other)
        if other.shape[0] == 1 != input.shape[0] and other.requires_grad:
            return matmul(input, other.squeeze(0))
    if _multiplies_as_a_batch(input, other):
        # PyTorch's batched product (bmm) checks the batch dims and the sizes, then (when there
        # is something to multiply) the first operand's dtype, then compares the dtypes
        check_broadcastable(input.shape[:-2], other.shape[:-2] if other.ndim > 1 else ())
        rows = other.shape[-2] if other.ndim > 1 else other.shape[0]  # (a vector is a column)
        if input.shape[-1] != rows:
            raise RuntimeError(
                f"matmul(): the sizes do not fit: input's last dim is {input.shape[-1]}, other's "
                f"second-to-last is {rows} (shapes {list(input.shape)} and "
                f"{list(other.shape)}). Expected size for first two dimensions of batch2 tensor "
                "to match. Fix: transpose or reshape one of them."
            )
        if input.numel() == 0 or other.numel() == 0:  # zeros, of other's dtype, as bmm's
            input = _empty_batch_operand(input, other)
        else:
            check_batch_dtypes(input, other, names=("input", "other"))
    elif input.ndim == other.ndim == 1:  # dot: the dtypes, then the lengths, then the kernel
        check_dtypes_match("dot", input, other)
        check_sizes_fit(input, other)
    else:  # mm or mv (of x folded into one matrix, when x has batch dims): sizes first
        check_sizes_fit(input, other)
    check_same_dtype("dot" if input.ndim == other.ndim == 1 else "matmul", input, other)
    if input.ndim <= 2 and other.ndim <= 2:
        return _matrix_product(input, other)
    if _multiplies_as_a_batch(input, other):
        return _batched_product(input, other)
    return _folded_product(input, other)


# PyTorch's matmul is not one op: it picks dot, mv or mm, or reshapes its operands into plain
# matrices (folding batch dims into rows) or into one batch of matrices (bmm), and reshapes the
# product back. Autograd records every one of those steps, and so do we, with the same ops: the
# graph under `a @ b` is PyTorch's, and so is what backward saved (a view of an operand, or a
# copy where the reshape had to copy).


def _matrix_product(input, other):
    """Two vectors or matrices: dot, mv or mm; a vector on the left is a matrix of one row."""
    if input.ndim == 1 and other.ndim == 1:
        return Dot.apply(input, other)
    if other.ndim == 1:
        return Mv.apply(input, other)
    if input.ndim == 1:
        return Mm.apply(input.unsqueeze(0), other).squeeze_(0)
    return Mm.apply(input, other)


def _folded_product(input, other):
    """A batch of matrices times one matrix or vector, or the other way round: the batch dims
    are folded into the rows of one tall matrix, so the product, and the gradient for the
    smaller operand, is one mm or mv over the whole batch (no sum over batch copies)."""
    transposed = other.ndim > input.ndim  # (x @ Y)ᵀ = Yᵀ @ xᵀ puts the batch on the left
    if transposed:
        tall, small = other.mT, (input.t() if input.ndim == 2 else input)
    else:
        tall, small = input, other
    rows = tall.reshape(math.prod(tall.shape[:-1]), tall.shape[-1])
    if small.ndim == 1:
        return UnsafeView.apply(Mv.apply(rows, small), shape=tall.shape[:-1])
    product = UnsafeView.apply(Mm.apply(rows, small), shape=(*tall.shape[:-1], small.shape[1]))
    return product.mT.contiguous() if transposed else product


def _batched_product(input, other):
    """Batches of matrices (a vector is a matrix of one row on the left, one column on the
    right): both are expanded to the broadcast batch dims, reshaped into one batch of matrices,
    multiplied with bmm, and the product reshaped back."""
    n, m = (input.shape[-2] if input.ndim > 1 else 1), input.shape[-1]
    p = other.shape[-1] if other.ndim > 1 else 1
    batch = np.broadcast_shapes(input.shape[:-2], other.shape[:-2] if other.ndim > 1 else ())
    count = math.prod(batch)
    left = input.expand(*batch, n, m).reshape(count, n, m)
    if other.ndim == 1:
        right = other.expand(*batch, m).reshape(count, m).unsqueeze(2)
        product = Bmm.apply(left, right).squeeze(-1)
    else:
        product = Bmm.apply(left, other.expand(*batch, m, p).reshape(count, m, p))
    rows = (n,) if input.ndim > 1 else ()  # a vector's one row or column is dropped again
    columns = (p,) if other.ndim > 1 else ()
    return UnsafeView.apply(product, shape=(*batch, *rows, *columns))


def _multiplies_as_a_batch(input, other):
    """Does PyTorch's matmul multiply these as a batch of matrices (bmm), rather than fold the
    operand with more dims into one tall matrix (mm, mv)? Its rule (should_fold) folds when it
    needs no copy, or when the smaller operand requires grad; its errors differ between the two."""
    if input.ndim <= 2 and other.ndim <= 2:
        return False
    bigger, smaller = (input, other) if input.ndim >= other.ndim else (other.mT, input)
    if smaller.ndim > 2:
        return True
    if smaller.requires_grad:  # its gradient is then one matrix product, not a sum over a batch
        return False
    if input.ndim == 2:  # folding other would need a transposed copy of the result
        return True
    if bigger.numel() == 0:
        return False
    shape, strides = bigger.shape, bigger.stride()  # folding must not copy: the leading dims
    return any(strides[i] != strides[i + 1] * shape[i + 1] for i in range(bigger.ndim - 2))


def check_batch_dtypes(input, mat2, names=("input", "mat2")):
    """bmm's kernel is chosen by input's dtype (bool has none), then it compares mat2's."""
    if input.dtype is types.bool_:
        raise types.not_implemented_for("bmm", input.dtype)
    check_same_dtype("bmm", input, mat2, names=names)


def _empty_batch_operand(input, other):
    """`input` for a batched product with nothing to multiply: PyTorch's bmm returns zeros of
    other's dtype without running its kernel (which is where it compares the dtypes), so the
    dtypes may differ; but autograd still records that result, so it must be a float one when
    either operand requires grad."""
    recording = (input.requires_grad or other.requires_grad) and is_grad_enabled()
    fix = (
        "give both operands one float dtype, e.g. mat2.float() (an empty batched product takes "
        "the second operand's dtype)."
    )
    types.check_differentiable(other.dtype, recording, fix)
    return input.to(other.dtype)


def check_sizes_fit(input, other):
    """PyTorch's size check of mm, mv and dot (and of matmul, which folds an operand's batch dims
    into the rows of one matrix), made before their dtypes are compared."""
    rows = other.shape[-2] if other.ndim > 1 else other.shape[0]  # (a vector is a column)
    if input.shape[-1] == rows:
        return
    shapes = f"(shapes {list(input.shape)} and {list(other.shape)})"
    if input.ndim == other.ndim == 1:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
            f"and {other.shape[0]} elements respectively {shapes}: dot multiplies vectors of one "
            "length. Fix: give two vectors of the same length."
        )
    if other.ndim == 1:
        raise RuntimeError(
            f"size mismatch, got input ({int(np.prod(input.shape[:-1]))}), mat "
            f"({'x'.join(map(str, input.shape))}), vec ({other.shape[0]}) {shapes}: the "
            "vector's length must equal the matrix's last dim. Fix: transpose the matrix or "
            "give a vector of that length."
        )
    raise RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, input.shape))} and "
        f"{'x'.join(map(str, other.shape))}) {shapes}: the first's last dim ({input.shape[-1]}) "
        f"must equal the second's rows ({rows}). Fix: transpose or reshape one of them."
    )


def check_same_dtype(name, input, other, names=("input", "other")):
    """PyTorch's matrix products do not promote: each kernel takes one dtype, so a float32 matrix
    times a float64 one is refused, not widened (float64 data fed to a float32 model is a slip
    this makes visible). And bool has no product kernel, which only dot runs when there is
    nothing to multiply (an empty operand: mm and mv return zeros without their kernel)."""
    check_dtypes_match(name, input, other, names)
    nothing_to_multiply = input.numel() == 0 or other.numel() == 0
    if input.dtype is types.bool_ and (name == "dot" or not nothing_to_multiply):
        raise types.not_implemented_for(name, input.dtype)


def check_dtypes_match(name, input, other, names=("input", "other")):
    """The first half of check_same_dtype: the two dtypes must be one."""
    if input.dtype is not other.dtype:
        operands = "both vectors" if name == "dot" else "m1 and m2"
        raise RuntimeError(
            f"{name}: expected {operands} to have the same dtype, but got: {input.dtype} != "
            f"{other.dtype}. Matrix products do not promote dtypes. Fix: convert one of them, "
            f"e.g. {names[0]}.to({names[1]}.dtype) (or .float() / .double())."
        )


def _require(name, tensor, ndim, what):
    if tensor.ndim != ndim:
        raise RuntimeError(f"{name}() expects {what} ({ndim}-D), got a {tensor.ndim}-D tensor")


@public("mm", method=True, out=True)
def mm(input, mat2):
    _require("mm", input, 2, "matrices")
    _require("mm", mat2, 2, "matrices")
    check_sizes_fit(input, mat2)  # (PyTorch's order: the sizes, then the dtypes)
    check_same_dtype("mm", input, mat2, names=("input", "mat2"))
    return Mm.apply(input, mat2)


@public("mv", method=True, out=True)
def mv(input, vec):
    _require("mv", input, 2, "a matrix")
    _require("mv", vec, 1, "a vector")
    check_sizes_fit(input, vec)
    check_same_dtype("mv", input, vec, names=("input", "vec"))
    return Mv.apply(input, vec)


@public("bmm", method=True, out=True)
def bmm(input, mat2):
    _require("bmm", input, 3, "batches of matrices")
    _require("bmm", mat2, 3, "batches of matrices")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(
            f"bmm() needs equal batch sizes, got {input.shape[0]} and {mat2.shape[0]}"
        )
    if input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"bmm(): Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: {list(mat2.shape[:2])}."
        )
    if input.numel() == 0 or mat2.numel() == 0:
        # PyTorch returns zeros (of mat2's dtype) without running its kernel, which is where it
        # compares the dtypes: an empty product of a float32 and a float64 batch is allowed
        return Bmm.apply(_empty_batch_operand(input, mat2), mat2)
    check_batch_dtypes(input, mat2)
    return Bmm.apply(input, mat2)


@public("dot", method=True, out=True)
def dot(input, other):
    _require("dot", input, 1, "vectors")
    _require("dot", other, 1, "vectors")
    check_dtypes_match("dot", input, other)  # PyTorch's order: the dtypes, the lengths, bool
    check_sizes_fit(input, other)
    check_same_dtype("dot", input, other)
    return Dot.apply(input, other)


@public("outer", "ger", method=True, out=True)
def outer(input, vec2):
    _require("outer", input, 1, "vectors")
    _require("outer", vec2, 1, "vectors")
    return input.reshape(-1, 1) * vec2  # recorded as PyTorch does: a view, then a multiply
