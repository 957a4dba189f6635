"""Argument checks of the convolution and pooling functions of `nn.functional`: sizes given as
an int or a tuple become tuples, 'same'/'valid' padding becomes numbers, and a wrong argument
raises PyTorch's exception with a fix."""

import numpy as np


def tuple_of(value, n, name, fn="convolution"):
    """`value` (an int or n ints) as a tuple of n ints: stride=2 is stride=(2, 2) for conv2d."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the "
            f"{fn} dimensions, but got {name}={list(value)}. Fix: {name}=2 or a tuple of {n}."
        )
    return value


def conv_geometry(input, weight, stride, padding, dilation, groups, spatial):
    """(stride, padding pairs, dilation), each with `spatial` entries, checked; 'same' padding
    is split as PyTorch splits it: the odd pixel, if any, goes after (bottom / right)."""
    kernel = tuple(weight.shape[2:])
    stride = tuple_of(stride, spatial, "stride")
    dilation = tuple_of(dilation, spatial, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported. Fix: stride=1 or more.")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(
            f"dilation should be greater than zero, but got {list(dilation)}. Fix: dilation=1 "
            "(no gaps inside the kernel)."
        )
    if isinstance(padding, str):
        if padding == "valid":
            pairs = ((0, 0),) * spatial
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError(
                    "padding='same' is not supported for strided convolutions. Fix: stride=1, "
                    "or give the padding as a number, e.g. padding=kernel_size // 2."
                )
            totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pairs = tuple((t // 2, t - t // 2) for t in totals)
        else:
            raise RuntimeError(
                f"Invalid padding string: {padding!r}. Fix: padding='same', 'valid', or a number."
            )
    else:
        padding = tuple_of(padding, spatial, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported. Fix: padding=0 or more.")
        pairs = tuple((p, p) for p in padding)
    _check_channels(input, weight, groups)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    padded = [n + a + b for n, (a, b) in zip(input.shape[-spatial:], pairs)]
    if any(s > n for s, n in zip(span, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
            f"size: ({' x '.join(map(str, span))}). Kernel size can't be greater than actual "
            "input size. Fix: a smaller kernel, more padding, or a larger input."
        )
    return stride, pairs, dilation


def _check_channels(input, weight, groups):
    c_out, c_per_group = weight.shape[:2]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported. Fix: groups=1 or more.")
    if c_out % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead. Fix: out_channels must be a "
            "multiple of groups."
        )
    batch_shape = list(input.shape) if input.ndim == weight.ndim else [1] + list(input.shape)
    if input.shape[-weight.ndim + 1] != c_per_group * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{batch_shape} to have {c_per_group * groups} channels, but got "
            f"{input.shape[-weight.ndim + 1]} channels instead. Fix: the layer's in_channels "
            "must be the input's channels (dim 1, or dim 0 for one unbatched sample)."
        )


def pool_geometry(input, kernel_size, stride, padding, dilation, ceil_mode, fn):
    """(kernel, stride, padding pairs, dilation) of a 2-D pooling, checked. With ceil_mode the
    last window may hang over the bottom/right edge: that extra padding goes into the pairs."""
    if input.ndim not in (3, 4) or input.numel() == 0:
        raise RuntimeError(
            f"non-empty 3D or 4D (batch mode) tensor expected for input, got shape "
            f"{list(input.shape)}. Fix: images (N, C, H, W) or one image (C, H, W)."
        )
    kernel = tuple_of(kernel_size, 2, "kernel_size", fn)
    stride = kernel if stride is None or stride == [] else tuple_of(stride, 2, "stride", fn)
    padding = tuple_of(padding, 2, "padding", fn)
    dilation = tuple_of(dilation, 2, "dilation", fn)
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero. Fix: stride=1 or more (or leave it out).")
    pairs, sizes = [], []
    for n, k, s, p, d in zip(input.shape[-2:], kernel, stride, padding, dilation):
        span = (k - 1) * d + 1
        if p > span // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}. Fix: padding={span // 2} or less."
            )
        out = (n + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= n + p:  # a last window starting in the padding: drop
            out -= 1
        sizes.append(out)
        pairs.append((p, p + max(0, (out - 1) * s + span - (n + 2 * p))))
    if min(sizes) <= 0:
        c, h, w = input.shape[-3:]
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{sizes[0]}x"
            f"{sizes[1]}). Output size is too small. Fix: a smaller kernel_size or a larger input."
        )
    return kernel, stride, tuple(pairs), dilation
