"""The op table: every differentiable operation, how to call it, and what inputs suit it.

Tests are generated from this one table (tests/test_op_table.py): forward values and gradients
against PyTorch, gradients against finite differences (gradcheck, float64), second derivatives
(gradgradcheck), all over generated shapes. An op whose record declares its public `function`
(autograd_lab.tan, say) gets its entry from the record (`from_records`); the other forms, an
operator, a method with arguments, a loss, get a line in `OPS` below.

Each entry's `call(lib, *tensors)` works with `lib` = autograd_lab *or* torch — the same code
runs on both, which is the point of a PyTorch-compatible engine.

Fields:
- shapes: how to draw input shapes —
    "any"        one tensor of any shape (0 to 3 dims)
    "broadcast"  tensors whose shapes broadcast together
    "nonempty"   one tensor with at least one dim
    "matrix"     one 2-D tensor
    or an explicit tuple of example shape-tuples, e.g. (((2, 3), (3, 4)),)
- domain: where the inputs are drawn — "real", "positive" (log, sqrt, ...), "unit" (|x| < 1),
  "nonzero" (|x| >= 0.1: keeps finite differences off kinks such as relu's and abs's at 0),
  "grid" (multiples of 0.01: two inputs tie exactly or differ by far more than eps — maximum).
- node: PyTorch's grad_fn name for the result.
- second_order: also run gradgradcheck (off where the second derivative is zero almost everywhere
  and finite differences would only test noise, or it would be slow).
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from . import registry


@dataclass(frozen=True)
class OpSpec:
    name: str
    call: Callable
    kind: str
    node: str
    shapes: object = "any"
    arity: int = 1
    domain: str = "real"
    second_order: bool = True


def _op(name, call, kind, node, **options):
    return OpSpec(name, call, kind, node, **options)


MATMUL_SHAPES = (
    ((3,), (3,)),  # dot
    ((2, 3), (3, 4)),  # mm
    ((2, 3), (3,)),  # mv
    ((3,), (3, 2)),  # vector @ matrix
    ((2, 2, 3), (2, 3, 4)),  # bmm
    ((2, 2, 3), (3, 4)),  # batched @ matrix (broadcast)
    ((1, 2, 3), (3, 2, 3, 1)),  # broadcasting batch dims
)


def from_records():
    """An entry for every op whose record names its public function: called by that name."""
    found = []
    for cls in registry.op_classes():
        names = cls.__dict__.get("function")
        if names is None:
            continue
        name = names if isinstance(names, str) else names[0]
        arity = len(inspect.signature(cls.forward).parameters) - 1  # without ctx
        found.append(
            OpSpec(
                name,
                _call_by_name(name),
                "elementwise" if cls.kernel else "other",
                cls.node_name,
                "broadcast" if arity > 1 else "any",
                arity,
                cls.domain,
                not cls.piecewise,
            )
        )
    return found


def _call_by_name(name):
    return lambda lib, *tensors: getattr(lib, name)(*tensors)


OPS = from_records() + [
    # ---- elementwise arithmetic ----------------------------------------------------------------
    _op("add", lambda lib, a, b: a + b, "elementwise", "AddBackward0", shapes="broadcast", arity=2),
    _op("add_scalar", lambda lib, a: a + 2.5, "elementwise", "AddBackward0"),
    _op("sub", lambda lib, a, b: a - b, "elementwise", "SubBackward0", shapes="broadcast", arity=2),
    _op("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=-1.5), "elementwise", "AddBackward0",
        shapes="broadcast", arity=2),
    _op("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=2.5), "elementwise", "SubBackward0",
        shapes="broadcast", arity=2),
    _op("rsub_scalar", lambda lib, a: 2.5 - a, "elementwise", "RsubBackward1"),
    _op("mul", lambda lib, a, b: a * b, "elementwise", "MulBackward0", shapes="broadcast", arity=2),
    _op("mul_scalar", lambda lib, a: a * 1.5, "elementwise", "MulBackward0"),
    _op("div", lambda lib, a, b: a / b, "elementwise", "DivBackward0", shapes="broadcast", arity=2,
        domain="nonzero"),
    _op("rdiv_scalar", lambda lib, a: 2.0 / a, "elementwise", "MulBackward0", domain="nonzero"),
    _op("pow_scalar", lambda lib, a: a**3, "elementwise", "PowBackward0"),
    _op("pow_fractional", lambda lib, a: a**1.5, "elementwise", "PowBackward0", domain="positive"),
    _op("pow", lambda lib, a, b: a**b, "elementwise", "PowBackward1", shapes="broadcast", arity=2,
        domain="positive"),
    _op("rpow_scalar", lambda lib, a: 2.0**a, "elementwise", "PowBackward2"),
    # rounding division (ops/division.py): jumps where a / b is whole, so no second order
    _op("remainder", lambda lib, a, b: a % b, "elementwise", "RemainderBackward1",
        shapes="broadcast", arity=2, domain="nonzero", second_order=False),
    _op("remainder_scalar", lambda lib, a: a % 0.75, "elementwise", "RemainderBackward0",
        domain="nonzero", second_order=False),
    _op("fmod", lambda lib, a, b: lib.fmod(a, b), "elementwise", "FmodBackward1",
        shapes="broadcast", arity=2, domain="nonzero", second_order=False),
    _op("fmod_scalar", lambda lib, a: lib.fmod(a, -0.75), "elementwise", "FmodBackward0",
        domain="nonzero", second_order=False),
    _op("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"), "elementwise",
        "DivBackward2", shapes="broadcast", arity=2, domain="nonzero", second_order=False),
    _op("div_trunc_scalar", lambda lib, a: a.div(0.75, rounding_mode="trunc"), "elementwise",
        "DivBackward2", domain="nonzero", second_order=False),
    # ---- elementwise functions -------------------------------------------------------------------
    _op("clamp", lambda lib, a: lib.clamp(a, -0.55, 0.65), "elementwise", "ClampBackward1",
        second_order=False),
    _op("clamp_min", lambda lib, a: a.clamp(min=0.05), "elementwise", "ClampBackward1",
        second_order=False),
    _op("logit", lambda lib, a: (a * 0.4 + 0.5).logit(), "elementwise", "LogitBackward0",
        domain="unit"),  # probabilities in (0.14, 0.86)
    _op("where", lambda lib, a, b: lib.where(a > 0, a, b), "elementwise", "WhereBackward0",
        shapes="broadcast", arity=2, domain="nonzero"),
    _op("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), "elementwise",
        "AddcmulBackward0", shapes="broadcast", arity=3),
    _op("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c, value=-1.5), "elementwise",
        "AddcdivBackward0", shapes="broadcast", arity=3, domain="nonzero"),
    _op("lerp", lambda lib, a, b: lib.lerp(a, b, 0.3), "elementwise", "LerpBackward0",
        shapes="broadcast", arity=2),
    _op("lerp_tensor", lambda lib, a, b, w: lib.lerp(a, b, w), "elementwise", "LerpBackward1",
        shapes="broadcast", arity=3),
    _op("round", lambda lib, a: a.round(), "elementwise", "RoundBackward0", second_order=False),
    _op("round_decimals", lambda lib, a: lib.round(a, decimals=2), "elementwise",
        "RoundBackward1", second_order=False),
    _op("round_negative_decimals", lambda lib, a: (a * 100).round(decimals=-1), "elementwise",
        "RoundBackward1", second_order=False),
    _op("nan_to_num", lambda lib, a: lib.nan_to_num(a, nan=1.0), "elementwise",
        "NanToNumBackward0", second_order=False),
    # ---- reductions -----------------------------------------------------------------------------
    _op("sum", lambda lib, a: a.sum(), "reduction", "SumBackward0"),
    _op("sum_dim", lambda lib, a: a.sum(0), "reduction", "SumBackward1", shapes="nonempty"),
    _op("sum_dims_keepdim", lambda lib, a: a.sum((0, -1), keepdim=True), "reduction",
        "SumBackward1", shapes=(((2, 3),), ((2, 1, 3),), ((1, 4),))),  # 1-D: dim 0 twice, an error
    _op("mean", lambda lib, a: a.mean(), "reduction", "MeanBackward0"),
    _op("mean_dim", lambda lib, a: a.mean(-1, keepdim=True), "reduction", "MeanBackward1",
        shapes="nonempty"),
    _op("prod", lambda lib, a: a.prod(), "reduction", "ProdBackward0"),
    _op("prod_dim", lambda lib, a: a.prod(0), "reduction", "ProdBackward1", shapes="nonempty"),
    _op("var", lambda lib, a: a.var(), "reduction", "VarBackward0",
        shapes=(((5,),), ((2, 3),), ((2, 2, 2),))),
    _op("var_dim", lambda lib, a: a.var(0, keepdim=True), "reduction", "VarBackward0",
        shapes=(((4,),), ((3, 2),))),
    _op("std", lambda lib, a: a.std(), "reduction", "StdBackward0",
        shapes=(((5,),), ((2, 3),), ((2, 2, 2),))),
    _op("std_dim", lambda lib, a: a.std(-1), "reduction", "StdBackward0",
        shapes=(((2, 4),), ((3, 2, 3),))),
    _op("std_mean_std", lambda lib, a: lib.std_mean(a, -1)[0], "reduction", "StdMeanBackward0",
        shapes=(((2, 4),), ((3, 2, 3),))),
    _op("var_mean_mean", lambda lib, a: lib.var_mean(a, 0, keepdim=True)[1], "reduction",
        "VarMeanBackward0", shapes=(((4,),), ((3, 2),))),
    _op("var_mean_correction_0", lambda lib, a: lib.var_mean(a, correction=0)[0] * 2, "reduction",
        "MulBackward0", shapes=(((5,),), ((2, 3),))),
    _op("max", lambda lib, a: a.max(), "reduction", "MaxBackward1", second_order=False),
    _op("min", lambda lib, a: a.min(), "reduction", "MinBackward1", second_order=False),
    _op("max_dim", lambda lib, a: a.max(-1).values, "reduction", "MaxBackward0",
        shapes="nonempty", second_order=False),
    _op("min_dim", lambda lib, a: a.min(0, keepdim=True).values, "reduction", "MinBackward0",
        shapes="nonempty", second_order=False),
    _op("logsumexp", lambda lib, a: a.logsumexp(-1), "reduction", "LogsumexpBackward0",
        shapes="nonempty"),
    _op("softmax", lambda lib, a: a.softmax(-1), "reduction", "SoftmaxBackward0",
        shapes="nonempty"),
    _op("diff", lambda lib, a: lib.diff(a), "reduction", "SubBackward0", shapes="nonempty"),
    _op("diff_twice_dim0_prepend", lambda lib, a: a.diff(n=2, dim=0, prepend=a[:1] * 2),
        "reduction", "SubBackward0", shapes=(((3, 2),), ((2,),))),
    # ---- scans (ops/scan.py): dim is required, so each needs a line -----------------------------
    _op("cumsum", lambda lib, a: a.cumsum(-1), "reduction", "CumsumBackward0"),
    _op("cumsum_dim0_dtype", lambda lib, a: lib.cumsum(a, dim=0, dtype=lib.float64), "reduction",
        "CumsumBackward0", shapes="nonempty"),
    _op("cumprod", lambda lib, a: a.cumprod(-1), "reduction", "CumprodBackward0"),
    _op("cumprod_dim0", lambda lib, a: lib.cumprod(a, 0), "reduction", "CumprodBackward0",
        shapes="nonempty"),
    _op("log_softmax", lambda lib, a: a.log_softmax(0), "reduction", "LogSoftmaxBackward0",
        shapes="nonempty"),
    _op("amax", lambda lib, a: a.amax(-1), "reduction", "AmaxBackward0", shapes="nonempty",
        second_order=False),
    _op("amax_all", lambda lib, a: lib.amax(a), "reduction", "AmaxBackward0", second_order=False),
    _op("amin_dims_keepdim", lambda lib, a: a.amin((0, -1), keepdim=True), "reduction",
        "AminBackward0", shapes=(((2, 3),), ((2, 1, 3),)), second_order=False),
    # ---- norms (ops/norms.py, autograd_lab/linalg.py) ---------------------------------------------
    _op("norm", lambda lib, a: a.norm(), "reduction", "LinalgVectorNormBackward0"),
    _op("norm_p1_dim", lambda lib, a: a.norm(p=1, dim=-1), "reduction",
        "LinalgVectorNormBackward0", shapes="nonempty", second_order=False),
    _op("norm_p3_keepdim", lambda lib, a: lib.norm(a, 3, dim=0, keepdim=True), "reduction",
        "LinalgVectorNormBackward0", shapes="nonempty"),
    _op("vector_norm", lambda lib, a: lib.linalg.vector_norm(a), "reduction",
        "LinalgVectorNormBackward0"),
    _op("vector_norm_inf", lambda lib, a: lib.linalg.vector_norm(a, ord=float("inf"), dim=-1),
        "reduction", "LinalgVectorNormBackward0", shapes="nonempty", second_order=False),
    _op("vector_norm_half", lambda lib, a: lib.linalg.vector_norm(a, 0.5, dim=(0, -1)),
        "reduction", "LinalgVectorNormBackward0", shapes=(((2, 3),), ((2, 1, 3),))),
    _op("vector_norm_dtype", lambda lib, a: lib.linalg.vector_norm(a, dtype=lib.float64),
        "reduction", "LinalgVectorNormBackward0", shapes="nonempty"),
    _op("linalg_norm", lambda lib, a: lib.linalg.norm(a), "reduction",
        "LinalgVectorNormBackward0"),
    _op("matrix_norm_fro", lambda lib, a: lib.linalg.matrix_norm(a), "reduction",
        "LinalgVectorNormBackward0", shapes="matrix"),
    _op("matrix_norm_1", lambda lib, a: lib.linalg.matrix_norm(a, ord=1), "reduction",
        "AmaxBackward0", shapes="matrix", second_order=False),
    _op("linalg_norm_matrix_neg_inf", lambda lib, a: lib.linalg.norm(a, float("-inf")),
        "reduction", "AminBackward0", shapes="matrix", second_order=False),
    # ---- shape -----------------------------------------------------------------------------------
    _op("reshape", lambda lib, a: a.reshape(3, -1), "shape", "ViewBackward0",
        shapes=(((6,),), ((2, 3),), ((3, 2, 1),))),
    _op("view", lambda lib, a: a.view(-1), "shape", "ViewBackward0", shapes="nonempty"),
    _op("flatten", lambda lib, a: a.flatten(), "shape", "ViewBackward0",
        shapes=(((2, 3),), ((2, 1, 3),), ((),))),  # 1-D: nothing to merge, the input comes back
    _op("transpose", lambda lib, a: a.transpose(0, -1), "shape", "TransposeBackward0",
        shapes="nonempty"),
    _op("permute", lambda lib, a: a.permute(2, 0, 1), "shape", "PermuteBackward0",
        shapes=(((2, 3, 4),), ((1, 2, 3),))),
    _op("T", lambda lib, a: a.T, "shape", "PermuteBackward0", shapes="matrix"),
    _op("squeeze", lambda lib, a: a.squeeze(), "shape", "SqueezeBackward0",
        shapes=(((1, 3, 1),), ((2, 1),))),
    _op("squeeze_dim", lambda lib, a: a.squeeze(1), "shape", "SqueezeBackward1",
        shapes=(((2, 1, 3),), ((4, 1),))),
    _op("unsqueeze", lambda lib, a: a.unsqueeze(-1), "shape", "UnsqueezeBackward0"),
    _op("expand", lambda lib, a: a.expand(2, 3, 4), "shape", "ExpandBackward0",
        shapes=(((3, 1),), ((1, 4),), ((4,),))),
    _op("broadcast_to", lambda lib, a: lib.broadcast_to(a, (3, 2, 2)), "shape", "ExpandBackward0",
        shapes=(((2, 1),), ((2,),))),
    _op("cat", lambda lib, a, b: lib.cat([a, b], dim=0), "shape", "CatBackward0", arity=2,
        shapes=(((2, 3), (1, 3)), ((3,), (2,)))),
    _op("stack", lambda lib, a, b: lib.stack([a, b], dim=1), "shape", "StackBackward0", arity=2,
        shapes=(((2, 3), (2, 3)), ((3,), (3,)))),
    _op("split", lambda lib, a: a.split(2, dim=0)[1], "shape", "SplitBackward0",
        shapes=(((5, 2),), ((4,),))),
    _op("chunk", lambda lib, a: a.chunk(2, dim=-1)[0], "shape", "SplitBackward0",
        shapes=(((3, 4),), ((5,),))),
    _op("split_sizes", lambda lib, a: a.split([1, 2], dim=0)[1], "shape",
        "SplitWithSizesBackward0", shapes=(((3, 2),), ((3,),))),
    _op("unbind", lambda lib, a: a.unbind(-1)[1], "shape", "UnbindBackward0",
        shapes=(((3, 2),), ((2,),))),
    _op("select", lambda lib, a: a[1], "shape", "SelectBackward0", shapes=(((3,),), ((2, 3),))),
    _op("slice", lambda lib, a: a[..., 1:], "shape", "SliceBackward0",
        shapes=(((3,),), ((2, 3),))),
    _op("index_repeated", lambda lib, a: a[[0, 2, 0]], "shape", "IndexBackward0",
        shapes=(((3,),), ((3, 2),))),
    _op("index_mask", lambda lib, a: a[a > 0], "shape", "IndexBackward0", domain="nonzero",
        shapes=(((4,),), ((2, 3),))),
    # ---- picking by an index tensor or a mask (ops/indexing.py) ---------------------------------
    _op("gather", lambda lib, a: a.gather(1, lib.tensor([[0, 2, 0], [1, 1, 2]])), "shape",
        "GatherBackward0", shapes=(((2, 3),), ((3, 4),))),
    _op("gather_1d", lambda lib, a: lib.gather(a, -1, lib.tensor([2, 0, 2, 2])), "shape",
        "GatherBackward0", shapes=(((3,),),)),
    _op("scatter", lambda lib, a, b: lib.scatter(a, 1, lib.tensor([[2, 0], [1, 2]]), b), "shape",
        "ScatterBackward0", arity=2, shapes=(((2, 3), (2, 2)), ((3, 4), (2, 2)))),
    _op("scatter_value", lambda lib, a: a.scatter(0, lib.tensor([[1, 0, 1]]), -1.5), "shape",
        "ScatterBackward1", shapes=(((2, 3),), ((3, 4),))),
    _op("scatter_add", lambda lib, a, b: lib.scatter_add(a, 0, lib.tensor([[1, 0, 1], [1, 1, 0]]),
        b), "shape", "ScatterAddBackward0", arity=2, shapes=(((2, 3), (2, 3)), ((3, 4), (2, 3)))),
    _op("index_select", lambda lib, a: a.index_select(-1, lib.tensor([1, 0, 1])), "shape",
        "IndexSelectBackward0", shapes=(((2,),), ((3, 2),))),
    _op("masked_fill", lambda lib, a: a.masked_fill(a > 0, 0.5), "shape", "MaskedFillBackward0",
        domain="nonzero"),
    _op("masked_fill_tensor", lambda lib, a, v: a.masked_fill(lib.tensor([True, False, True]), v),
        "shape", "MaskedFillBackward1", arity=2, shapes=(((2, 3), ()), ((3,), ()))),
    _op("masked_select", lambda lib, a: a.masked_select(a > 0), "shape", "MaskedSelectBackward0",
        domain="nonzero", shapes=(((4,),), ((2, 3),))),
    _op("masked_select_broadcast", lambda lib, a: lib.masked_select(a, lib.tensor([[True], [False],
        [True]])), "shape", "MaskedSelectBackward0", shapes=(((3, 2),), ((2,),))),
    _op("take_along_dim", lambda lib, a: lib.take_along_dim(a, lib.tensor([[0], [2]]), dim=1),
        "shape", "GatherBackward0", shapes=(((2, 3),), ((1, 4),))),
    _op("take_along_dim_flat", lambda lib, a: lib.take_along_dim(a, lib.tensor([3, 0, 3])),
        "shape", "GatherBackward0", shapes=(((2, 2),), ((4,),))),
    # ---- moving elements (ops/rearrange.py) ----------------------------------------------------
    _op("tril", lambda lib, a: a.tril(), "shape", "TrilBackward0", shapes=(((3, 4),), ((2, 3, 2),))),
    _op("triu_diagonal", lambda lib, a: lib.triu(a, diagonal=-1), "shape", "TriuBackward0",
        shapes=(((3, 4),), ((4, 2),))),
    _op("flip", lambda lib, a: a.flip(0, -1), "shape", "FlipBackward0",
        shapes=(((2, 3),), ((2, 3, 2),))),
    _op("roll", lambda lib, a: lib.roll(a, (1, -4), (0, -1)), "shape", "RollBackward0",
        shapes=(((2, 3),), ((3, 1, 2),))),
    _op("roll_flat", lambda lib, a: a.roll(2), "shape", "RollBackward0", shapes="nonempty"),
    _op("repeat", lambda lib, a: a.repeat(2, 1, 3), "shape", "RepeatBackward0",
        shapes=(((2, 3),), ((3,),), ((2, 1, 2),))),
    _op("t", lambda lib, a: a.t(), "shape", "TBackward0", shapes=(((2, 3),), ((3,),))),
    _op("diag", lambda lib, a: lib.diag(a, 1), "shape", "DiagEmbedBackward0", shapes=(((3,),),)),
    _op("diag_matrix", lambda lib, a: a.diag(-1), "shape", "DiagonalBackward0_copy",
        shapes=(((3, 4),), ((4, 2),))),
    _op("diagonal", lambda lib, a: a.diagonal(), "shape", "DiagonalBackward0",
        shapes=(((3, 4),), ((2, 2),))),
    _op("diagonal_dims", lambda lib, a: lib.diagonal(a, offset=1, dim1=-1, dim2=0), "shape",
        "DiagonalBackward0", shapes=(((3, 2, 4),), ((2, 3),))),
    _op("trace", lambda lib, a: a.trace(), "shape", "TraceBackward0",
        shapes=(((3, 4),), ((2, 2),))),
    _op("meshgrid", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[0] * lib.meshgrid(
        a, b, indexing="xy")[1], "shape", "MulBackward0", arity=2, shapes=(((3,), (2,)),)),
    _op("meshgrid_ij", lambda lib, a, b: lib.stack(lib.meshgrid([a, b], indexing="ij")), "shape",
        "StackBackward0", arity=2, shapes=(((3,), (2,)), ((), (2,)))),
    _op("broadcast_tensors", lambda lib, a, b: lib.stack(lib.broadcast_tensors(a, b)), "shape",
        "StackBackward0", arity=2, shapes=(((2, 3), (3,)), ((2, 1), (1, 3)))),
    # ---- sorting (ops/sorting.py; CPU only: tests/test_cuda_ops.py lists them as NOT_ON_CUDA) --
    _op("sort", lambda lib, a: a.sort().values, "shape", "SortBackward0", shapes="any"),
    _op("sort_descending", lambda lib, a: lib.sort(a, dim=0, descending=True, stable=True)[0],
        "shape", "SortBackward1", shapes="nonempty"),
    _op("msort", lambda lib, a: lib.msort(a), "shape", "SortBackward0", shapes="nonempty"),
    _op("topk", lambda lib, a: a.topk(2).values, "shape", "TopkBackward0",
        shapes=(((3,),), ((2, 4),))),
    _op("topk_smallest", lambda lib, a: lib.topk(a, 2, dim=0, largest=False, sorted=True)[0],
        "shape", "TopkBackward0", shapes=(((3, 2),), ((2, 1, 3),))),
    # ---- moving dims, and shape ops in place (ops/shape.py, ops/inplace_shape.py) --------------
    _op("movedim", lambda lib, a: lib.movedim(a, (0, -1), (2, 0)), "shape", "PermuteBackward0",
        shapes=(((2, 3, 4),), ((1, 3, 2),))),
    _op("moveaxis", lambda lib, a: a.moveaxis(0, -1), "shape", "PermuteBackward0",
        shapes=(((2, 3),), ((2, 1, 3),))),
    _op("swapdims", lambda lib, a: lib.swapdims(a, 0, -1), "shape", "TransposeBackward0",
        shapes=(((2, 3),),)),
    _op("unsqueeze_", lambda lib, a: (a * 1).unsqueeze_(-1), "shape", "UnsqueezeBackward1"),
    _op("squeeze_", lambda lib, a: (a * 1).squeeze_(), "shape", "SqueezeBackward3",
        shapes=(((1, 3, 1),), ((2, 1),))),
    _op("squeeze_dim_", lambda lib, a: (a * 1).squeeze_(1), "shape", "SqueezeBackward4",
        shapes=(((2, 1, 3),),)),
    _op("transpose_", lambda lib, a: (a * 1).transpose_(0, -1), "shape", "TransposeBackward1",
        shapes=(((2, 3),), ((2, 1, 3),))),
    _op("t_", lambda lib, a: (a * 1).t_(), "shape", "TBackward1", shapes=(((2, 3),), ((3,),))),
    # ---- linear algebra -------------------------------------------------------------------------
    _op("matmul", lambda lib, a, b: a @ b, "linalg", "", arity=2, shapes=MATMUL_SHAPES),
    _op("mm", lambda lib, a, b: lib.mm(a, b), "linalg", "MmBackward0", arity=2,
        shapes=(((2, 3), (3, 4)),)),
    _op("bmm", lambda lib, a, b: lib.bmm(a, b), "linalg", "BmmBackward0", arity=2,
        shapes=(((2, 2, 3), (2, 3, 1)),)),
    _op("dot", lambda lib, a, b: lib.dot(a, b), "linalg", "DotBackward0", arity=2,
        shapes=(((4,), (4,)),)),
    _op("outer", lambda lib, a, b: lib.outer(a, b), "linalg", "MulBackward0", arity=2,
        shapes=(((3,), (2,)),)),
    # ---- neural-network functions (autograd_lab.nn.functional) ----------------------------------
    # Integer targets and constant weights are built inside the call; probabilities come from
    # sigmoid/softmax of a drawn input, so they are differentiable and lie in [0, 1].
    _op("F_relu", lambda lib, a: lib.nn.functional.relu(a), "nn", "ReluBackward0",
        domain="nonzero", second_order=False),
    _op("F_sigmoid", lambda lib, a: lib.nn.functional.sigmoid(a), "nn", "SigmoidBackward0"),
    _op("F_tanh", lambda lib, a: lib.nn.functional.tanh(a), "nn", "TanhBackward0"),
    _op("F_softmax", lambda lib, a: lib.nn.functional.softmax(a, dim=-1), "nn", "SoftmaxBackward0",
        shapes="nonempty"),
    _op("F_softmax_dtype", lambda lib, a: lib.nn.functional.softmax(a, 0, dtype=lib.float64), "nn",
        "SoftmaxBackward0", shapes="nonempty"),
    _op("F_log_softmax", lambda lib, a: lib.nn.functional.log_softmax(a, dim=0), "nn",
        "LogSoftmaxBackward0", shapes="nonempty"),
    _op("gelu", lambda lib, a: lib.nn.functional.gelu(a), "nn", "GeluBackward0"),
    _op("gelu_tanh", lambda lib, a: lib.nn.functional.gelu(a, approximate="tanh"), "nn",
        "GeluBackward0"),
    _op("linear", lambda lib, a, w, b: lib.nn.functional.linear(a, w, b), "nn", "AddmmBackward0",
        arity=3, shapes=(((3, 4), (2, 4), (2,)), ((1, 3), (4, 3), (1, 4)))),
    _op("linear_no_bias", lambda lib, a, w: lib.nn.functional.linear(a, w), "nn", "MmBackward0",
        arity=2, shapes=(((3, 4), (2, 4)),)),
    _op("linear_1d", lambda lib, a, w, b: lib.nn.functional.linear(a, w, b), "nn", "ViewBackward0",
        arity=3, shapes=(((4,), (2, 4), (2,)),)),
    _op("linear_1d_no_bias", lambda lib, a, w: lib.nn.functional.linear(a, w), "nn",
        "SqueezeBackward4", arity=2, shapes=(((4,), (2, 4)),)),
    _op("linear_3d", lambda lib, a, w, b: lib.nn.functional.linear(a, w, b), "nn", "ViewBackward0",
        arity=3, shapes=(((2, 3, 4), (2, 4), (2,)),)),
    _op("linear_3d_no_bias", lambda lib, a, w: lib.nn.functional.linear(a, w), "nn",
        "UnsafeViewBackward0", arity=2, shapes=(((2, 3, 4), (2, 4)),)),
    _op("linear_3d_matrix_bias", lambda lib, a, w, b: lib.nn.functional.linear(a, w, b), "nn",
        "AddBackward0", arity=3, shapes=(((2, 3, 4), (2, 4), (3, 2)),)),
    _op("mse_loss", lambda lib, a, b: lib.nn.functional.mse_loss(a, b), "nn", "MseLossBackward0",
        arity=2, shapes=(((3, 4), (3, 4)), ((5,), (5,)), ((), ()))),
    _op("mse_loss_sum", lambda lib, a, b: lib.nn.functional.mse_loss(a, b, reduction="sum"), "nn",
        "MseLossBackward0", arity=2, shapes=(((3, 4), (3, 4)),)),
    _op("mse_loss_none", lambda lib, a, b: lib.nn.functional.mse_loss(a, b, reduction="none"),
        "nn", "MseLossBackward0", arity=2, shapes=(((3, 4), (3, 4)), ((2, 1, 3), (2, 1, 3)))),
    _op("mse_loss_weight", lambda lib, a, b, w: lib.nn.functional.mse_loss(a, b, weight=w), "nn",
        "DivBackward0", arity=3, shapes=(((3, 4), (3, 4), (3, 4)),), domain="positive"),
    _op("leaky_relu", lambda lib, a: lib.nn.functional.leaky_relu(a, 0.2), "nn",
        "LeakyReluBackward0", domain="nonzero", second_order=False),
    _op("silu", lambda lib, a: lib.nn.functional.silu(a), "nn", "SiluBackward0"),
    _op("softplus", lambda lib, a: lib.nn.functional.softplus(a, beta=2.0, threshold=3.0), "nn",
        "SoftplusBackward0"),
    _op("elu", lambda lib, a: lib.nn.functional.elu(a, alpha=0.5), "nn", "EluBackward0",
        domain="nonzero"),
    _op("l1_loss", lambda lib, a, b: lib.nn.functional.l1_loss(a, b), "nn", "MeanBackward0",
        arity=2, shapes=(((3, 4), (3, 4)), ((), ())), second_order=False),
    _op("smooth_l1_loss", lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, beta=0.5),
        "nn", "SmoothL1LossBackward0", arity=2, shapes=(((3, 4), (3, 4)), ((5,), (5,)))),
    _op("smooth_l1_loss_none", lambda lib, a, b: lib.nn.functional.smooth_l1_loss(
        a, b, reduction="none"), "nn", "SmoothL1LossBackward0", arity=2, shapes=(((3, 4), (3, 4)),)),
    _op("huber_loss", lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.7), "nn",
        "HuberLossBackward0", arity=2, shapes=(((3, 4), (3, 4)), ((), ()))),
    _op("huber_loss_sum", lambda lib, a, b: lib.nn.functional.huber_loss(a, b, reduction="sum"),
        "nn", "HuberLossBackward0", arity=2, shapes=(((3, 4), (3, 4)),)),
    _op("binary_cross_entropy", lambda lib, a, b: lib.nn.functional.binary_cross_entropy(
        a.sigmoid(), b.sigmoid()), "nn", "BinaryCrossEntropyBackward0", arity=2,
        shapes=(((3, 4), (3, 4)), ((5,), (5,)))),
    _op("binary_cross_entropy_sum", lambda lib, a, b: lib.nn.functional.binary_cross_entropy(
        a.sigmoid(), b.sigmoid(), reduction="sum"), "nn", "BinaryCrossEntropyBackward0", arity=2,
        shapes=(((3, 4), (3, 4)),)),
    _op("binary_cross_entropy_none_weight", lambda lib, a, b: lib.nn.functional
        .binary_cross_entropy(a.sigmoid(), b.sigmoid(), lib.tensor([0.5, 2.0, 1.0], dtype=a.dtype),
                              reduction="none"),
        "nn", "BinaryCrossEntropyBackward0", arity=2, shapes=(((2, 3), (2, 3)),)),
    _op("bce_with_logits", lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()), "nn", "BinaryCrossEntropyWithLogitsBackward0", arity=2,
        shapes=(((3, 4), (3, 4)), ((5,), (5,)))),
    _op("bce_with_logits_none", lambda lib, a, b: lib.nn.functional
        .binary_cross_entropy_with_logits(a, b.sigmoid(), reduction="none"), "nn",
        "BinaryCrossEntropyWithLogitsBackward0", arity=2, shapes=(((3, 4), (3, 4)),)),
    _op("bce_with_logits_weights", lambda lib, a, b: lib.nn.functional
        .binary_cross_entropy_with_logits(a, b.sigmoid(), lib.tensor([0.5, 2.0, 1.0], dtype=a.dtype),
                                          reduction="sum",
                                          pos_weight=lib.tensor([3.0, 1.0, 0.25], dtype=a.dtype)),
        "nn", "BinaryCrossEntropyWithLogitsBackward0", arity=2, shapes=(((2, 3), (2, 3)),)),
    _op("nll_loss", lambda lib, a: lib.nn.functional.nll_loss(a, lib.tensor([0, 2, 1, 2])), "nn",
        "NllLossBackward0", shapes=(((4, 3),),)),
    _op("nll_loss_sum_weight", lambda lib, a: lib.nn.functional.nll_loss(
        a, lib.tensor([0, 2, 1, 2]), lib.tensor([0.5, 2.0, 1.0], dtype=a.dtype), reduction="sum"),
        "nn", "NllLossBackward0", shapes=(((4, 3),),)),
    _op("nll_loss_ignore_index", lambda lib, a: lib.nn.functional.nll_loss(
        a, lib.tensor([0, -100, 1, 2]), lib.tensor([0.5, 2.0, 1.0], dtype=a.dtype)), "nn",
        "NllLossBackward0", shapes=(((4, 3),),)),
    _op("nll_loss_none", lambda lib, a: lib.nn.functional.nll_loss(
        a, lib.tensor([0, 2, 1, 2]), ignore_index=2, reduction="none"), "nn", "NllLossBackward0",
        shapes=(((4, 3),),)),
    _op("nll_loss_1d", lambda lib, a: lib.nn.functional.nll_loss(a, lib.tensor(1)), "nn",
        "NllLossBackward0", shapes=(((3,),),)),
    _op("nll_loss_3d", lambda lib, a: lib.nn.functional.nll_loss(a, lib.tensor([[0, 2], [1, 1]])),
        "nn", "NllLoss2DBackward0", shapes=(((2, 3, 2),),)),
    _op("nll_loss_3d_none", lambda lib, a: lib.nn.functional.nll_loss(
        a, lib.tensor([[0, 2], [1, 1]]), reduction="none"), "nn", "ViewBackward0",
        shapes=(((2, 3, 2),),)),
    _op("nll_loss_4d", lambda lib, a: lib.nn.functional.nll_loss(
        a, lib.tensor([[[0], [2]], [[1], [1]]])), "nn", "NllLoss2DBackward0",
        shapes=(((2, 3, 2, 1),),)),
    _op("cross_entropy", lambda lib, a: lib.nn.functional.cross_entropy(a, lib.tensor([0, 2, 1])),
        "nn", "NllLossBackward0", shapes=(((3, 4),),)),
    _op("cross_entropy_sum", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, 2, 1]), reduction="sum"), "nn", "NllLossBackward0", shapes=(((3, 4),),)),
    _op("cross_entropy_none_weight", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, 2, 1]), lib.tensor([1.0, 0.5, 2.0, 1.5], dtype=a.dtype),
        reduction="none"), "nn", "NllLossBackward0", shapes=(((3, 4),),)),
    _op("cross_entropy_ignore_index", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, 3, 1]), ignore_index=3), "nn", "NllLossBackward0", shapes=(((3, 4),),)),
    _op("cross_entropy_1d", lambda lib, a: lib.nn.functional.cross_entropy(a, lib.tensor(2)), "nn",
        "NllLossBackward0", shapes=(((4,),),)),
    _op("cross_entropy_3d", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([[0, 2], [1, 3]])), "nn", "NllLoss2DBackward0", shapes=(((2, 4, 2),),)),
    _op("cross_entropy_label_smoothing", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, 2, 1]), label_smoothing=0.2), "nn", "AddBackward0",
        shapes=(((3, 4),),)),
    _op("cross_entropy_label_smoothing_all", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, -100, 1, 3]), lib.tensor([1.0, 0.5, 2.0, 1.5], dtype=a.dtype),
        label_smoothing=0.3), "nn", "AddBackward0", shapes=(((4, 4),),)),
    _op("cross_entropy_label_smoothing_none", lambda lib, a: lib.nn.functional.cross_entropy(
        a, lib.tensor([0, 2, 1]), ignore_index=2, label_smoothing=0.1, reduction="none"), "nn",
        "AddBackward0", shapes=(((3, 4),),)),
    _op("cross_entropy_probabilities", lambda lib, a, b: lib.nn.functional.cross_entropy(
        a, b.softmax(-1)), "nn", "DivBackward1", arity=2, shapes=(((3, 4), (3, 4)), ((4,), (4,)))),
    _op("cross_entropy_probabilities_none", lambda lib, a, b: lib.nn.functional.cross_entropy(
        a, b.softmax(1), lib.tensor([1.0, 0.5, 2.0], dtype=a.dtype), reduction="none",
        label_smoothing=0.25), "nn", "NegBackward0", arity=2, shapes=(((2, 3, 2), (2, 3, 2)),)),
]  # fmt: skip

BY_NAME = {spec.name: spec for spec in OPS}
