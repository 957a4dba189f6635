"""Type promotion: the dtype of a result when the inputs' dtypes differ, as PyTorch decides it.

    >>> torch.promote_types(torch.int8, torch.uint8)     # no 8-bit type holds both: int16
    torch.int16
    >>> torch.result_type(torch.tensor([1, 2]), 2.5)      # an int tensor and a float: a float
    torch.float32

The rules, which the operators follow too (`a + b`):
1. Categories are ordered bool < integer < float. Two dtypes of different categories give the
   higher category's dtype (int64 with float16 is float16); two of one category give the smallest
   dtype holding both (int8 with uint8 is int16, float16 with float32 is float32).
2. Operands come in three tiers: tensors with dimensions, 0-d tensors, Python numbers. A lower
   tier changes the result only when it brings a higher category: float32 tensor + float64 0-d
   tensor stays float32, int32 tensor + 2.5 becomes a float. A Python float counts as the default
   dtype (float32), a Python int as int64, a Python bool as bool.
"""

import numpy as np

from . import types


def _category(dtype):
    """0 for bool, 1 for integers, 2 for floats."""
    if dtype is types.bool_:
        return 0
    return 2 if dtype.is_floating_point else 1


def promote_types(type1, type2):
    """The smallest dtype both `type1` and `type2` convert to without losing their category."""
    a, b = types.to_dtype(type1), types.to_dtype(type2)
    if a is b:
        return a
    if _category(a) != _category(b):
        return a if _category(a) > _category(b) else b
    return types.to_dtype(np.promote_types(a.numpy, b.numpy))


def _tier_and_dtype(value):
    """(tier, dtype) of one operand: tier 2 a tensor with dimensions, 1 a 0-d tensor, 0 a number."""
    # a tensor, known by its dtype: tensor.py is not imported here, as the ops import this module
    if isinstance(getattr(value, "dtype", None), types.dtype):
        return (2 if value.dim() > 0 else 1), value.dtype
    if isinstance(value, np.generic):  # a numpy number counts as the Python number it holds
        value = value.item()
    if isinstance(value, bool):  # before int: True is an int in Python
        return 0, types.bool_
    if isinstance(value, int):
        return 0, types.int64
    if isinstance(value, float):
        return 0, types.get_default_dtype()
    raise TypeError(
        f"result_type() takes tensors and Python numbers, not {type(value).__name__}. "
        "Fix: make it a tensor first, e.g. torch.tensor(value)."
    )


def _combine(higher, lower):
    """A higher tier's dtype, unless the lower tier brings a higher category."""
    if higher is None:
        return lower
    if lower is None or _category(lower) <= _category(higher):
        return higher
    return promote_types(higher, lower)


def result_type(tensor, other):
    """The dtype of `tensor + other` (either may be a Python number), under the rules above."""
    return common_dtype(tensor, other)


def common_dtype(*operands):
    """The dtype an op of several operands computes in (clamp(x, min, max), addcmul, ...): the
    rules above over all of them at once. None (an absent bound, say) takes no part."""
    by_tier = [None, None, None]  # numbers, 0-d tensors, tensors with dimensions
    for value in operands:
        if value is None:
            continue
        tier, dtype = _tier_and_dtype(value)
        seen = by_tier[tier]
        by_tier[tier] = dtype if seen is None else promote_types(seen, dtype)
    numbers, zero_dim, dimensioned = by_tier
    return _combine(dimensioned, _combine(zero_dim, numbers))


def can_cast(from_, to):
    """May an operation write a `from_` result into a `to` tensor (x += y)? Not float into an
    integer, nor anything but bool into bool: those would silently drop information."""
    source, target = types.to_dtype(from_), types.to_dtype(to)
    if source.is_floating_point and not target.is_floating_point:
        return False
    return not (target is types.bool_ and source is not types.bool_)


def check_alpha(alpha, dtype):
    """PyTorch's rule for the `alpha=` of add and sub (`input + alpha * other`): alpha is converted
    to the result's dtype, so it must be a number of that kind. A bool alpha only for a bool result,
    a float alpha not for an integer result, and an integer alpha that fits the integer dtype."""
    if isinstance(alpha, (bool, np.bool_)) and dtype is not types.bool_:
        raise RuntimeError(
            f"Boolean alpha only supported for Boolean results: this result is {dtype}. Fix: pass "
            "a number of the result's kind, e.g. alpha=1."
        )
    if dtype.is_floating_point:
        return
    if isinstance(alpha, (float, np.floating)):  # bool results count as integral here too
        raise RuntimeError(
            f"For integral input tensors, argument alpha must not be a floating point number "
            f"(got alpha={alpha} for a {dtype} result). Fix: pass a whole number, or convert the "
            "tensors to float first, e.g. x.float()."
        )
    if dtype is not types.bool_:  # any number is a bool: 0 is False, the rest True
        check_fits("alpha", alpha, dtype)


def check_value_fits(value, dtype):
    """A number written into a tensor (x[i] = value, masked_fill, fill_) must fit its dtype:
    PyTorch refuses nan, inf and too large numbers rather than wrap them. A whole number may wrap
    into an unsigned dtype (-1 becomes 255), a float may not (-1.0 is refused); float16 and float32
    refuse a finite float beyond their range (float64 holds any; bool takes any number)."""
    if dtype is types.bool_ or dtype.is_complex or isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, (int, np.integer)) and not dtype.is_floating_point:
        check_fits("value", value, dtype)
    elif isinstance(value, (float, np.floating)) and not dtype.is_floating_point:
        limits = np.iinfo(dtype.numpy)
        if not limits.min <= value <= limits.max:  # (nan compares False)
            _refuse_overflow("value", value, dtype, limits.min, limits.max)
    elif isinstance(value, (float, np.floating)) and dtype in (types.float16, types.float32):
        largest = float(np.finfo(dtype.numpy).max)
        if np.isfinite(value) and abs(value) > largest:
            _refuse_overflow("value", value, dtype, -largest, largest)


def check_fits(name, value, dtype):
    """A number argument converted to an integer dtype must fit it, as PyTorch checks (an int8
    result cannot take value=1000)."""
    limits = np.iinfo(dtype.numpy)
    # an unsigned dtype takes negative numbers down to -max, and wraps them (-1 becomes 255)
    lowest = -limits.max if limits.min == 0 else limits.min
    if not lowest <= value <= limits.max:
        _refuse_overflow(name, value, dtype, limits.min, limits.max)


def _refuse_overflow(name, value, dtype, lowest, highest):
    raise RuntimeError(
        f"value cannot be converted to type {dtype.name} without overflow: {name}={value} is "
        f"outside {dtype}'s range [{lowest}, {highest}]. Fix: use a smaller {name} or a wider "
        "dtype (x.long(), x.double())."
    )
