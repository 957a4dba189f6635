"""Edge cases issue 14's differential fuzzing found in exception classes (which check PyTorch makes
first), nn functions and their values, each compared with PyTorch 2.13."""

from conftest import both, raises_alike


def test_sigmoid_far_below_zero_is_zero_in_float32_as_in_pytorch(torch):
    # PyTorch computes 1/(1+e^-x): e^92.6 overflows float32, so sigmoid(-92.6) is 0, not 6e-41;
    # binary_cross_entropy then clamps log(0) to -100
    x = [-92.6, -88.0, -1.0, 0.0, 3.0, 90.0]
    both(torch, lambda lib: (lib.tensor(x).sigmoid() == 0).float())
    both(torch, lambda lib: lib.tensor(-800.0, dtype=lib.float64).sigmoid())
    both(
        torch,
        lambda lib: lib.nn.functional.binary_cross_entropy(
            lib.tensor(-92.6).sigmoid(), lib.tensor(0.37), reduction="none"
        ),
    )


def test_an_inplace_result_of_another_shape_is_refused_before_the_dtype(torch):
    # PyTorch checks that the result fits self before it looks for a kernel for self's dtype:
    # a bool self that grows is refused for its shape (RuntimeError), not its dtype
    def flag(lib):
        return lib.tensor(False)

    def flags(lib):
        return lib.tensor([False])

    for call in (
        lambda lib: flags(lib).lerp_(flags(lib).expand(2, 1), flags(lib)),
        lambda lib: flag(lib).addcmul_(flags(lib), flag(lib)),
        lambda lib: flag(lib).fmod_(flags(lib)),
        lambda lib: flag(lib).remainder_(flags(lib)),
    ):
        raises_alike(torch, call, RuntimeError, "doesn't match the broadcast shape")
    for name in ("cumsum_", "cumprod_"):
        raises_alike(
            torch,
            lambda lib: getattr(flags(lib), name)(0, dtype=lib.float64),
            RuntimeError,
            "Bad in-place call",
        )
    # a bool self of the right shape is still refused for its dtype
    raises_alike(torch, lambda lib: flags(lib).lerp_(flags(lib), 0.5), NotImplementedError, "lerp")


def test_nll_loss_of_integer_scores_is_not_implemented_after_the_shape_checks(torch):
    # PyTorch checks the target's and the weight's shapes, then picks the kernel for the input's
    # dtype: integer scores have none (NotImplementedError, even with no samples)
    def nll(lib, input, target, **kwargs):
        return lib.nn.functional.nll_loss(input, target, **kwargs)

    for make in (
        lambda lib: nll(lib, lib.zeros(2, 3, dtype=lib.int64), lib.tensor([0, 5])),
        lambda lib: nll(
            lib, lib.zeros(2, 3, dtype=lib.int64), lib.tensor([0, 1]), weight=lib.ones(3)
        ),
        lambda lib: nll(lib, lib.zeros(0, 1, dtype=lib.int64), lib.zeros(0, dtype=lib.int64)),
        lambda lib: nll(lib, lib.zeros(2, 3, 4, dtype=lib.int64), lib.zeros(2, 4, dtype=lib.int64)),
        lambda lib: lib.nn.functional.cross_entropy(
            lib.zeros(0, 1, 2, dtype=lib.int64), lib.zeros(0, 2, dtype=lib.int64)
        ),
    ):
        raises_alike(torch, make, NotImplementedError, "nll_loss.*not implemented for 'Long'")
    raises_alike(
        torch,
        lambda lib: nll(lib, lib.zeros(2, 3, dtype=lib.int64), lib.tensor([0, 1, 1])),
        ValueError,
        "batch_size",
    )
    # an input of no classes in 3-D is refused for its view's size before any target is checked
    raises_alike(
        torch,
        lambda lib: lib.nn.functional.cross_entropy(
            lib.zeros(4, 0, 2), lib.zeros(4, 2, dtype=lib.int64)
        ),
        RuntimeError,
        "size mismatch",
    )


def test_losses_check_shapes_and_their_parameter_before_the_dtype(torch):
    # PyTorch broadcasts input and target (then checks beta; huber checks delta first), and only
    # then picks a kernel for the dtype: integer tensors of shapes that do not broadcast are
    # refused for their shapes
    def ints(lib, n):
        return lib.zeros(n, dtype=lib.int64)

    for name in ("mse_loss", "smooth_l1_loss", "huber_loss"):

        def loss(lib, *args, name=name, **kwargs):
            return getattr(lib.nn.functional, name)(*args, **kwargs)

        raises_alike(
            torch, lambda lib: loss(lib, ints(lib, 2), ints(lib, 3)), RuntimeError, "broadcast"
        )
        raises_alike(
            torch,
            lambda lib: loss(lib, ints(lib, 2), ints(lib, 2)),
            NotImplementedError,
            "not implemented for 'Long'",
        )
    raises_alike(
        torch,
        lambda lib: lib.nn.functional.smooth_l1_loss(ints(lib, 2), ints(lib, 3), beta=-1.0),
        RuntimeError,
        "broadcast",
    )
    raises_alike(
        torch,
        lambda lib: lib.nn.functional.smooth_l1_loss(ints(lib, 2), ints(lib, 2), beta=-1.0),
        RuntimeError,
        "negative values for beta",
    )
    raises_alike(
        torch,
        lambda lib: lib.nn.functional.huber_loss(ints(lib, 2), ints(lib, 3), delta=-1.0),
        RuntimeError,
        "non-positive values for delta",
    )


def test_batch_norm_checks_sizes_and_running_statistics_before_the_dtype(torch):
    def batch_norm(lib, shape, stats, training, dtype="int64"):
        input = lib.zeros(*shape, dtype=getattr(lib, dtype))
        mean = None if stats is None else lib.zeros(stats, dtype=getattr(lib, dtype))
        var = None if stats is None else lib.zeros(stats, dtype=getattr(lib, dtype))
        return lib.nn.functional.batch_norm(input, mean, var, training=training)

    for shape, stats, training, error, words in (
        ((3,), 2, True, RuntimeError, "running_mean should contain 0 elements not 2"),
        ((3, 2), 3, True, RuntimeError, "running_mean should contain 2 elements not 3"),
        ((1, 2), 2, True, ValueError, "more than 1 value per channel"),
        ((3, 2), None, False, RuntimeError, "running_mean must be defined"),
        ((3,), None, True, IndexError, "Dimension out of range"),  # training reads dim 1 first
        ((3,), 0, False, NotImplementedError, "batch_norm"),  # evaluation picks the kernel first
        ((3, 2), 2, True, NotImplementedError, "not implemented for 'Long'"),
    ):
        raises_alike(
            torch, lambda lib: batch_norm(lib, shape, stats, training=training), error, words
        )
    # training on a batch laid out otherwise (expanded, transposed), PyTorch's kernel starts with
    # mean(), which refuses integers with a RuntimeError; evaluation picks the kernel first
    for training, error in ((True, RuntimeError), (False, NotImplementedError)):

        def expanded(lib, training=training):
            input = lib.zeros(1, 2, dtype=lib.int64).expand(3, 2)
            stats = lib.zeros(2, dtype=lib.int64)
            return lib.nn.functional.batch_norm(input, stats, stats, training=training)

        raises_alike(torch, expanded, error, "mean|batch_norm")
    # an empty batch has nothing to normalize: no kernel is picked, the dtype does not matter,
    # and the running statistics stay as they were
    both(torch, lambda lib: batch_norm(lib, (0, 2), 2, training=True))

    def empty_batch(lib):
        mean, var, bias = lib.zeros(2), lib.ones(2), lib.ones(2, requires_grad=True)
        out = lib.nn.functional.batch_norm(lib.zeros(0, 2), mean, var, bias=bias, training=True)
        return out, out.grad_fn.name(), mean, var

    both(torch, empty_batch)


def test_a_dim_out_of_range_is_reported_before_the_dtype(torch):
    raises_alike(
        torch,
        lambda lib: lib.logcumsumexp(lib.zeros(1, dtype=lib.bool), -3),
        IndexError,
        "out of range",
    )
    raises_alike(
        torch,
        lambda lib: lib.zeros(1, dtype=lib.bool).logcumsumexp(0),
        NotImplementedError,
        "logcumsumexp",
    )


def test_amax_of_an_empty_tensor_checks_each_dim_for_elements_before_repeats(torch):
    empty = lambda lib: lib.zeros(1, 0)  # noqa: E731
    for dims in ((0, 0, 1), (1, 0, 0)):
        raises_alike(torch, lambda lib: empty(lib).amax(dim=dims), IndexError, "non-zero size")
        raises_alike(torch, lambda lib: empty(lib).amin(dim=dims), IndexError, "non-zero size")
    raises_alike(torch, lambda lib: empty(lib).amax(dim=(0, 5)), IndexError, "out of range")
    raises_alike(torch, lambda lib: empty(lib).sum(dim=(0, 1, 0)), RuntimeError, "multiple times")
    raises_alike(
        torch, lambda lib: lib.zeros(1, 2).amax(dim=(0, 0)), RuntimeError, "multiple times"
    )


def test_pooling_kernels_refuse_the_dtypes_pytorch_has_none_for(torch):
    def pool(lib, name, dtype, size=1):
        return getattr(lib.nn.functional, name)(lib.zeros(1, 2, 2, dtype=getattr(lib, dtype)), size)

    for name, refused, taken in (
        ("max_pool2d", ["bool"], ["uint8", "int32", "int64", "float32"]),
        ("avg_pool2d", ["bool", "uint8", "int32"], ["int64", "float32"]),
    ):
        for dtype in refused:
            raises_alike(torch, lambda lib: pool(lib, name, dtype), NotImplementedError, name)
            # a window bigger than the input is refused for its size first
            raises_alike(torch, lambda lib: pool(lib, name, dtype, 3), RuntimeError, "too small")
        for dtype in taken:
            both(torch, lambda lib: pool(lib, name, dtype))


def test_matrix_products_check_batch_dims_then_dtypes_as_pytorchs_kernels_do(torch):
    def zeros(lib, *shape, dtype="bool"):
        return lib.zeros(*shape, dtype=getattr(lib, dtype))

    # the batch dims must broadcast before any dtype is looked at
    raises_alike(
        torch,
        lambda lib: zeros(lib, 3, 1, 3) @ zeros(lib, 2, 3, 2, dtype="float64"),
        RuntimeError,
        "broadcast",
    )
    # bmm picks its kernel by the first operand's dtype (bool has none), then compares dtypes
    raises_alike(
        torch,
        lambda lib: zeros(lib, 3, 1, 1).bmm(zeros(lib, 3, 1, 2, dtype="float64")),
        NotImplementedError,
        "bmm",
    )
    raises_alike(
        torch,
        lambda lib: zeros(lib, 1, 1, 1, dtype="float64").bmm(zeros(lib, 1, 1, 1)),
        RuntimeError,
        "same dtype",
    )
    raises_alike(
        torch,
        lambda lib: zeros(lib, 1, 1, 1).bmm(zeros(lib, 1, 2, 1, dtype="float64")),
        RuntimeError,
        "batch2",
    )
    # nothing to multiply: a batched product returns zeros without its kernel, dtypes unchecked
    both(torch, lambda lib: zeros(lib, 0, 3) @ zeros(lib, 0, 3, 3))
    both(
        torch,
        lambda lib: zeros(lib, 1, 0, 1, dtype="float32") @ zeros(lib, 1, 1, 1, dtype="float64"),
    )
    # mm and mv (a batch folded into one matrix) always compare dtypes, and skip bool's missing
    # kernel only when there is nothing to multiply; dot never skips it
    both(torch, lambda lib: zeros(lib, 2, 0) @ zeros(lib, 0, 2))
    both(torch, lambda lib: zeros(lib, 2, 0) @ zeros(lib, 0))
    raises_alike(torch, lambda lib: zeros(lib, 0) @ zeros(lib, 0), NotImplementedError, "dot")
    raises_alike(
        torch, lambda lib: zeros(lib, 2, 3, 2) @ zeros(lib, 2, 2), NotImplementedError, "Bool"
    )
    raises_alike(
        torch,
        lambda lib: zeros(lib, 2, 0, 1, dtype="float32") @ zeros(lib, 1, 1, dtype="float64"),
        RuntimeError,
        "same dtype",
    )
    # a batch that cannot be folded without a copy (leading dims out of order) is a bmm
    raises_alike(
        torch,
        lambda lib: zeros(lib, 3, 2, 4).transpose(0, 1) @ zeros(lib, 4, 2),
        NotImplementedError,
        "bmm",
    )


def test_a_batch_that_cannot_fold_times_a_vector_multiplies(torch):
    # a (1, 1, 4) slice with a gap between batches is multiplied as a batch (bmm); the vector is
    # its column: its length is checked as a matrix's rows
    def product(lib):
        batch = lib.arange(12.0).reshape(3, 1, 4)[0::3]
        return batch.matmul(lib.tensor([1.0, -1.0, 2.0, 0.5]))

    both(torch, product)
    raises_alike(
        torch,
        lambda lib: lib.arange(12.0).reshape(3, 1, 4)[0::3].matmul(lib.ones(3)),
        RuntimeError,
        "sizes do not fit",
    )


def test_an_infinite_value_or_alpha_for_an_integer_tensor_overflows_as_a_runtime_error(torch):
    zero = lambda lib: lib.tensor(0)  # noqa: E731
    raises_alike(
        torch,
        lambda lib: lib.addcmul(zero(lib), zero(lib), zero(lib), value=-float("inf")),
        RuntimeError,
        "cannot be converted to type int64 without overflow",
    )
    raises_alike(
        torch,
        lambda lib: lib.index_add(
            lib.zeros(3, dtype=lib.int64),
            0,
            lib.tensor([2, 0]),
            lib.tensor([1, 2]),
            alpha=float("inf"),
        ),
        RuntimeError,
        "without overflow",
    )
    # PyTorch compares the dtypes first
    raises_alike(
        torch,
        lambda lib: lib.index_add(
            lib.tensor([False, False]), 0, lib.tensor([1]), lib.tensor([0.5]), alpha=-float("inf")
        ),
        RuntimeError,
        "dtype",
    )
