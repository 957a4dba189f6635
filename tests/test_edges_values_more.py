"""Forward values at the edges (issue 14, wave 6): rows whose statistics cancel, norms of one
element, NaN/inf and signed zeros. Each compares with PyTorch 2.13, bit for bit where PyTorch's
result is exact."""

import pytest
from conftest import both


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [0.1, 0.7615941559557649, -3.3])
def test_layer_norm_of_a_constant_row_gives_exactly_the_bias(torch, dtype, value):
    def run(lib):
        row = lib.full((2, 3), value, dtype=getattr(lib, dtype))
        weight = lib.tensor([1.46, -1.72, 0.85], dtype=getattr(lib, dtype))
        bias = lib.tensor([0.56, 0.07, -1.07], dtype=getattr(lib, dtype))
        return lib.nn.functional.layer_norm(row, (3,), weight, bias)

    both(torch, run)


@pytest.mark.parametrize("p", [2, 0.5, 1.5, 3, -0.5, 0.3])
def test_the_norm_of_one_element_is_its_size(torch, p):
    # no power and root: (-2)^0.5 squared is not exactly 2, 3e38 squared overflows float32
    both(torch, lambda lib: lib.tensor([[-2.0], [0.3]], dtype=lib.float64).norm(p=p, dim=1))
    both(torch, lambda lib: lib.tensor([[3e38], [-1e-30]]).norm(p=p, dim=-1, keepdim=True))
    both(torch, lambda lib: lib.tensor(3e38).norm(p=p))
    # two elements: the power and the root, which overflow as PyTorch's do
    both(torch, lambda lib: lib.tensor([3e38, 0.0]).norm(p=p))


def test_the_norm_counting_nonzeros_of_one_element_is_still_a_count(torch):
    both(torch, lambda lib: lib.tensor([[5.0], [0.0]]).norm(p=0, dim=1))


def test_normalize_of_one_huge_element_is_one(torch):
    both(
        torch,
        lambda lib: lib.nn.functional.normalize(
            lib.tensor([1.797e308], dtype=lib.float64), dim=0, eps=0.5
        ),
    )


def test_pow_by_the_half_norm_of_one_element(torch):
    def run(lib):
        x = lib.tensor([-2.0], dtype=lib.float64)
        return x.pow(x.norm(p=0.5, dim=-1, keepdim=True))

    both(torch, run)
