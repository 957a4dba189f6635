"""autograd_lab.data: the synthetic datasets keep their promises, and batches match PyTorch's."""

import math

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag
from autograd_lab.data import (
    DataLoader,
    Dataset,
    TensorDataset,
    default_collate,
    make_blobs,
    make_circles,
    make_moons,
    make_spirals,
    make_xor,
    train_test_split,
)

MAKERS = {
    "moons": (make_moons, 2),
    "circles": (make_circles, 2),
    "spirals": (make_spirals, 3),
    "xor": (make_xor, 2),
    "blobs": (make_blobs, 3),
}


def same_name(ours, theirs):
    """Same dtype name across the libraries (autograd_lab.int64 and torch.int64)."""
    return str(ours).split(".")[-1] == str(theirs).split(".")[-1]


# ---- the datasets --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("n_samples", [7, 30])
def test_shapes_dtypes_and_balanced_classes(name, n_samples):
    make, classes = MAKERS[name]
    X, y = make(n_samples=n_samples, seed=3)
    assert isinstance(X, ag.Tensor) and isinstance(y, ag.Tensor)
    assert X.shape == (n_samples, 2) and y.shape == (n_samples,)
    assert X.dtype == ag.float32 and y.dtype == ag.int64
    counts = np.bincount(y.numpy(), minlength=classes)
    assert len(counts) == classes and counts.max() - counts.min() <= 1
    assert not X.requires_grad


@pytest.mark.parametrize("name", MAKERS)
def test_a_seed_fixes_the_data_whatever_the_global_generator(name):
    make, _ = MAKERS[name]
    ag.manual_seed(1)
    X1, y1 = make(n_samples=40, seed=5)
    ag.manual_seed(2)
    ag.rand(10)  # move the global generator: the data must not notice
    X2, y2 = make(n_samples=40, seed=5)
    np.testing.assert_array_equal(X1.numpy(), X2.numpy())
    np.testing.assert_array_equal(y1.numpy(), y2.numpy())
    X3, _ = make(n_samples=40, seed=6)
    assert not np.array_equal(X1.numpy(), X3.numpy())


def test_the_same_seed_gives_the_same_numbers_on_every_machine():
    # PCG64 and numpy's normal sampler are platform-independent: these digits are the same
    # everywhere (if a numpy upgrade changes them, notebooks printing data change too).
    X, y = make_moons(200, noise=0.1, seed=0)
    np.testing.assert_allclose(
        X.numpy()[:2], [[0.944420, 0.099583], [0.711460, -0.516795]], atol=1e-6
    )
    assert y.numpy()[:6].tolist() == [0, 1, 1, 0, 0, 0]


def test_rows_are_shuffled_so_any_slice_holds_every_class():
    for make, classes in MAKERS.values():
        _, y = make(n_samples=60, seed=0)
        assert len(np.unique(y.numpy()[:20])) == classes


def test_moons_without_noise_lie_on_their_two_arcs():
    X, y = make_moons(50, noise=0, seed=0)
    X, y = X.numpy().astype(np.float64), y.numpy()
    upper, lower = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.hypot(*upper.T), 1.0, atol=1e-6)  # unit circle, upper half
    assert (upper[:, 1] >= -1e-6).all()
    np.testing.assert_allclose(np.hypot(*(lower - [1.0, 0.5]).T), 1.0, atol=1e-6)
    assert (lower[:, 1] <= 0.5 + 1e-6).all()  # lower half of the circle around (1, 0.5)


@pytest.mark.parametrize("factor", [0.3, 0.8])
def test_circles_without_noise_have_radii_one_and_factor(factor):
    X, y = make_circles(40, noise=0.0, factor=factor, seed=0)
    radius = np.hypot(*X.numpy().astype(np.float64).T)
    np.testing.assert_allclose(radius[y.numpy() == 0], 1.0, atol=1e-6)
    np.testing.assert_allclose(radius[y.numpy() == 1], factor, atol=1e-6)


def test_noise_is_the_standard_deviation_of_the_added_gaussian():
    X, y = make_circles(4000, noise=0.05, seed=0)
    radius = np.hypot(*X.numpy().astype(np.float64).T)
    residual = radius - np.where(y.numpy() == 0, 1.0, 0.5)
    assert abs(residual.mean()) < 0.01 and 0.045 < residual.std() < 0.055


def test_spiral_arms_follow_their_angle_formula():
    X, y = make_spirals(60, n_classes=4, noise=0, seed=0)
    X, y = X.numpy().astype(np.float64), y.numpy()
    radius = np.hypot(*X.T)
    assert radius.min() >= 0.1 - 1e-6 and radius.max() <= 1 + 1e-6
    expected = 2 * math.pi * (radius + y / 4)
    difference = np.angle(np.exp(1j * (np.arctan2(X[:, 1], X[:, 0]) - expected)))
    np.testing.assert_allclose(difference, 0.0, atol=1e-5)


def test_xor_labels_are_opposite_signs_without_noise():
    X, y = make_xor(80, noise=0, seed=0)
    X = X.numpy()
    assert ((X[:, 0] * X[:, 1] < 0) == (y.numpy() == 1)).all()
    assert (np.abs(X) >= 0.1 - 1e-6).all() and (np.abs(X) <= 1 + 1e-6).all()
    quadrants = np.bincount((X[:, 0] > 0) * 2 + (X[:, 1] > 0))
    assert quadrants.tolist() == [20, 20, 20, 20]


def test_blobs_spread_around_given_centres():
    centers = [[0.0, 0.0, 0.0], [5.0, 5.0, 5.0]]
    X, y = make_blobs(10, centers=centers, cluster_std=0.0, seed=0)
    assert X.shape == (10, 3)
    np.testing.assert_array_equal(X.numpy(), np.array(centers, dtype=np.float32)[y.numpy()])
    X, y = make_blobs(3000, centers=centers, cluster_std=[0.5, 2.0], seed=0)
    X = X.numpy().astype(np.float64)
    np.testing.assert_allclose(X[y.numpy() == 0].std(axis=0), 0.5, rtol=0.1)
    np.testing.assert_allclose(X[y.numpy() == 1].mean(axis=0), 5.0, atol=0.2)
    X, _ = make_blobs(6, centers=2, n_features=4, seed=0)
    assert X.shape == (6, 4)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: make_moons(n_samples=1), "n_samples must be at least 2"),
        (lambda: make_moons(n_samples=2.5), "n_samples must be an integer"),
        (lambda: make_moons(noise=-0.1), "noise=-0.1"),
        (lambda: make_moons(seed=-1), "seed must be a non-negative integer"),
        (lambda: make_moons(seed=1.5), "seed must be a non-negative integer"),
        (lambda: make_circles(factor=1.0), "factor=1.0"),
        (lambda: make_spirals(n_classes=1), "n_classes=1"),
        (lambda: make_spirals(n_samples=2, n_classes=3), "n_samples must be at least 3"),
        (lambda: make_blobs(centers=1), "centers must be at least 2"),
        (lambda: make_blobs(centers=[1.0, 2.0]), "one row each"),
        (lambda: make_blobs(cluster_std=[1.0, 2.0]), "one per blob (3 of them)"),
        (lambda: make_blobs(cluster_std=-1.0), "cluster_std=-1.0"),
        (lambda: make_blobs(n_features=0), "n_features must be a positive integer"),
    ],
)
def test_bad_arguments_say_what_to_pass(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value)


# ---- train_test_split ----------------------------------------------------------------------------


def test_train_test_split_keeps_rows_together_and_covers_them_once():
    X = ag.arange(20.0).reshape(10, 2)
    y = ag.arange(10)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, seed=1)
    assert X_test.shape == (3, 2) and X_train.shape == (7, 2)  # ceil(0.25 * 10) test rows
    np.testing.assert_array_equal(X_train.numpy()[:, 0], 2 * y_train.numpy())
    np.testing.assert_array_equal(X_test.numpy()[:, 0], 2 * y_test.numpy())
    assert sorted(y_train.numpy().tolist() + y_test.numpy().tolist()) == list(range(10))
    again = train_test_split(X, y, test_size=0.25, seed=1)
    np.testing.assert_array_equal(again[3].numpy(), y_test.numpy())
    assert len(train_test_split(X, test_size=4)[1]) == 4


@pytest.mark.parametrize("test_size", [0, 1.0, 10, -2, "half"])
def test_train_test_split_refuses_sizes_that_leave_a_side_empty(test_size):
    with pytest.raises(ValueError, match="test_size must leave rows on both sides"):
        train_test_split(ag.zeros(10, 2), test_size=test_size)


def test_train_test_split_refuses_tensors_of_different_lengths():
    with pytest.raises(ValueError, match="tensor 0 has 4, tensor 1 has 3"):
        train_test_split(ag.zeros(4), ag.zeros(3))


# ---- TensorDataset -------------------------------------------------------------------------------


def test_tensor_dataset_len_and_indexing():
    X, y = ag.arange(6.0).reshape(3, 2), ag.tensor([0, 1, 0])
    data = TensorDataset(X, y)
    assert len(data) == 3 and isinstance(data, Dataset)
    sample = data[1]
    assert isinstance(sample, tuple) and len(sample) == 2
    assert sample[0].tolist() == [2.0, 3.0] and sample[1].item() == 1
    with pytest.raises(IndexError):
        data[3]


def test_tensor_dataset_size_mismatch_is_refused_as_in_pytorch(torch):
    from torch.utils.data import TensorDataset as TorchTensorDataset

    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TorchTensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(AssertionError, match=r"Size mismatch between tensors.*\[3, 4\]"):
        TensorDataset(ag.zeros(3), ag.zeros(4))


# ---- DataLoader ----------------------------------------------------------------------------------


def assert_same_batches(ours, theirs):
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs):
        assert type(mine) is type(reference)  # a list per batch, as PyTorch gives
        for a, b in zip(mine, reference):
            assert same_name(a.dtype, b.dtype)
            np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


@pytest.mark.parametrize("drop_last", [False, True])
def test_batches_in_order_match_pytorch(torch, drop_last):
    from torch.utils.data import DataLoader as TorchLoader
    from torch.utils.data import TensorDataset as TorchTensorDataset

    X, y = make_moons(11, seed=0)
    ours = DataLoader(TensorDataset(X, y), batch_size=4, drop_last=drop_last)
    theirs = TorchLoader(
        TorchTensorDataset(torch.tensor(X.numpy()), torch.tensor(y.numpy())),
        batch_size=4,
        drop_last=drop_last,
    )
    assert len(ours) == len(theirs) == (2 if drop_last else 3)
    assert_same_batches(ours, theirs)


def test_a_sampler_gives_the_same_batches_as_pytorch(torch):
    from torch.utils.data import DataLoader as TorchLoader

    samples = [(i, float(i) / 2, np.array([i, -i])) for i in range(7)]  # collated, not gathered
    order = [5, 0, 3, 6, 1, 2, 4]
    ours = DataLoader(samples, batch_size=3, sampler=order)
    theirs = TorchLoader(samples, batch_size=3, sampler=order)
    assert len(ours) == len(theirs) == 3
    assert_same_batches(ours, theirs)


def test_collate_matches_pytorch_for_dicts_and_strings(torch):
    from torch.utils.data import default_collate as torch_collate

    samples = [{"x": ag.tensor([1.0, 2.0]), "name": "a"}, {"x": ag.tensor([3.0, 4.0]), "name": "b"}]
    ours = default_collate(samples)
    theirs = torch_collate([{"x": torch.tensor([1.0, 2.0]), "name": "a"},
                            {"x": torch.tensor([3.0, 4.0]), "name": "b"}])  # fmt: skip
    assert ours["name"] == theirs["name"] == ["a", "b"]
    np.testing.assert_array_equal(ours["x"].numpy(), theirs["x"].numpy())
    with pytest.raises(TypeError, match="collate_fn="):
        default_collate([object(), object()])


def test_shuffle_is_reproducible_and_new_each_epoch():
    data = TensorDataset(ag.arange(10))

    def epochs(loader):
        return [np.concatenate([b[0].numpy() for b in loader]).tolist() for _ in range(2)]

    first = epochs(DataLoader(data, batch_size=3, shuffle=True, generator=7))
    assert first == epochs(
        DataLoader(data, batch_size=3, shuffle=True, generator=ag.Generator().manual_seed(7))
    )
    assert first[0] != first[1]  # every epoch gets a new order
    assert sorted(first[0]) == list(range(10))  # ... of all the samples, each once
    assert first != epochs(DataLoader(data, batch_size=3, shuffle=True, generator=8))

    ag.manual_seed(3)  # generator=None: the default generator, seeded by manual_seed
    one = epochs(DataLoader(data, batch_size=3, shuffle=True))
    ag.manual_seed(3)
    assert one == epochs(DataLoader(data, batch_size=3, shuffle=True))


def test_drop_last_and_len():
    data = TensorDataset(ag.arange(10))
    assert [len(b[0]) for b in DataLoader(data, batch_size=4)] == [4, 4, 2]
    assert [len(b[0]) for b in DataLoader(data, batch_size=4, drop_last=True)] == [4, 4]
    assert len(DataLoader(data, batch_size=4)) == 3
    assert len(DataLoader(data, batch_size=4, drop_last=True)) == 2
    assert len(DataLoader(data, batch_size=5, drop_last=True)) == 2
    assert len(DataLoader(data)) == 10


def test_batches_carry_gradients_back_to_the_dataset_tensor():
    X = ag.ones(4, 2, requires_grad=True)
    for (xb,) in DataLoader(TensorDataset(X), batch_size=3):
        (xb * 2).sum().backward()
    assert X.grad.tolist() == [[2.0, 2.0]] * 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(batch_size=0), "batch_size should be a positive integer value, but got batch_size=0"),
        (dict(batch_size=1.5), "batch_size should be a positive integer value"),
        (dict(batch_size=None), "batch_size should be a positive integer value"),
        (dict(shuffle=True, sampler=[0, 1]), "sampler option is mutually exclusive with shuffle"),
        (dict(generator="7"), "generator must be an autograd_lab.Generator, an integer seed"),
        (dict(generator=-1), "non-negative"),
        (dict(num_workers=-1), "num_workers option should be non-negative"),
    ],
)
def test_data_loader_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as error:
        DataLoader(TensorDataset(ag.zeros(3)), **kwargs)
    assert message in str(error.value)


def test_bad_batch_size_is_a_value_error_in_pytorch_too(torch):
    from torch.utils.data import DataLoader as TorchLoader

    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        TorchLoader([1, 2], batch_size=0)
