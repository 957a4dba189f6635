"""Small synthetic datasets for classification, made on the spot (no downloads), and a splitter.

    >>> from autograd_lab.data import make_moons
    >>> X, y = make_moons(200, noise=0.1, seed=0)
    >>> X.shape, X.dtype, y.dtype
    (torch.Size([200, 2]), torch.float32, torch.int64)

Every maker returns `(X, y)`: X a float32 tensor of points, one row each, and y an int64 tensor of
class labels 0, 1, ... with the classes balanced (their sizes differ by at most one). The rows come
shuffled, so any slice holds every class. `seed=` fixes the data: the same seed gives the same
numbers on every machine, whatever the global generator (manual_seed) holds, because each call
draws from its own numpy Generator(PCG64(seed)). `noise=` is the standard deviation of Gaussian
noise added to every coordinate; with noise=0 the points lie exactly on the shapes described.

NB: scikit-learn has make_moons, make_circles and make_blobs with the same meaning; the numbers
differ (another generator), and `seed=` is called `random_state=` there.
"""

import math
import numbers

import numpy as np

from ..creation import from_numpy


def make_moons(n_samples=200, noise=0.1, seed=0):
    """Two interleaving half circles ("moons"), one per class.

        X, y = make_moons(200, noise=0.1, seed=0)     # X: (200, 2) float32, y: (200,) int64

    Class 0 lies on the upper half of the unit circle, class 1 on a lower half circle of radius 1
    centred at (1, 0.5). What is hard: each moon reaches into the other's bay, so no straight
    line separates them; a model needs a hidden layer (a curved boundary).
    """
    n_samples = _check_n_samples(n_samples, classes=2)
    rng = _generator(seed)
    upper, lower = _class_sizes(n_samples, 2)
    angle = np.linspace(0.0, math.pi, upper)
    outer = np.column_stack([np.cos(angle), np.sin(angle)])
    angle = np.linspace(0.0, math.pi, lower)
    inner = np.column_stack([1.0 - np.cos(angle), 0.5 - np.sin(angle)])
    return _finish(rng, [outer, inner], noise)


def make_circles(n_samples=200, noise=0.05, factor=0.5, seed=0):
    """A circle inside a circle: class 0 on the unit circle, class 1 on a circle of radius `factor`.

        X, y = make_circles(200, noise=0.05, factor=0.5, seed=0)   # X: (200, 2), y: (200,)

    Both circles are centred at the origin (points evenly spaced around each). What is hard: the
    classes differ by distance from the centre, which a linear model cannot compute; a hidden
    layer (or the feature x0² + x1²) can. A `factor` near 1 brings the circles together.
    """
    n_samples = _check_n_samples(n_samples, classes=2)
    if not isinstance(factor, numbers.Real) or not 0 < factor < 1:
        raise ValueError(
            f"factor is the inner circle's radius (the outer one's is 1): pass a number between "
            f"0 and 1, exclusive, such as factor=0.5; got factor={factor!r}"
        )
    rng = _generator(seed)
    circles = []
    for radius, size in zip((1.0, float(factor)), _class_sizes(n_samples, 2)):
        angle = np.linspace(0.0, 2 * math.pi, size, endpoint=False)
        circles.append(radius * np.column_stack([np.cos(angle), np.sin(angle)]))
    return _finish(rng, circles, noise)


def make_spirals(n_samples=300, n_classes=3, noise=0.05, seed=0):
    """`n_classes` spiral arms winding once around the origin, one arm per class.

        X, y = make_spirals(300, n_classes=3, noise=0.05, seed=0)   # X: (300, 2), y: (300,)

    The point of arm k at radius r (0.1 <= r <= 1) sits at the angle 2π·(r + k/n_classes), so
    arms start evenly spread around the centre and wind one full turn. What is hard: along any
    ray from the origin the classes alternate, 1/n_classes apart, so the boundary is a spiral too;
    it takes a wider or deeper network and more steps than the moons.
    """
    if not isinstance(n_classes, numbers.Integral) or n_classes < 2:
        raise ValueError(
            f"n_classes is the number of spiral arms: pass an integer of at least 2, such as "
            f"n_classes=3; got n_classes={n_classes!r}"
        )
    n_samples = _check_n_samples(n_samples, classes=n_classes)
    rng = _generator(seed)
    arms = []
    for k, size in enumerate(_class_sizes(n_samples, n_classes)):
        radius = np.linspace(0.1, 1.0, size)
        angle = 2 * math.pi * (radius + k / n_classes)
        arms.append(radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)]))
    return _finish(rng, arms, noise)


def make_xor(n_samples=200, noise=0.1, seed=0):
    """The XOR problem: the class is 1 exactly when x0 and x1 have opposite signs.

        X, y = make_xor(200, noise=0.1, seed=0)       # X: (200, 2), y: (200,)

    Points are uniform in the four unit squares around the origin (kept 0.1 away from the axes):
    class 0 in the quadrants where x0·x1 > 0, class 1 where x0·x1 < 0, each quadrant holding a
    quarter of the points. What is hard: it is the classic function no single neuron computes
    (Minsky and Papert, 1969); two hidden units are enough.
    """
    n_samples = _check_n_samples(n_samples, classes=2)
    rng = _generator(seed)
    groups = []
    for signs, size in zip((((1, 1), (-1, -1)), ((-1, 1), (1, -1))), _class_sizes(n_samples, 2)):
        sign = np.array(signs)[np.arange(size) % 2]  # alternate the class's two quadrants
        groups.append(sign * rng.uniform(0.1, 1.0, size=(size, 2)))
    return _finish(rng, groups, noise)


def make_blobs(n_samples=200, centers=3, cluster_std=1.0, n_features=2, seed=0):
    """Gaussian clouds of points ("blobs"), one per class.

        X, y = make_blobs(200, centers=3, seed=0)      # X: (200, 2), y: (200,)
        X, y = make_blobs(100, centers=[[0, 0], [3, 3]], cluster_std=0.5)

    `centers`: how many blobs (their centres drawn uniformly in the box [-10, 10]^n_features), or
    the centres themselves, one row each. `cluster_std` (one number, or one per blob) is the
    spread of each cloud: the noise. X has shape (n_samples, n_features). What is hard: nothing,
    when the blobs lie apart (a linear model separates them: a good first test); with a large
    cluster_std the clouds overlap and no model reaches 100%.
    """
    if isinstance(centers, numbers.Integral):
        if not isinstance(n_features, numbers.Integral) or n_features < 1:
            raise ValueError(
                f"n_features must be a positive integer; got n_features={n_features!r}"
            )
        if centers < 2:
            raise ValueError(f"centers must be at least 2 (one blob per class); got {centers}")
        n_samples = _check_n_samples(n_samples, classes=centers)
        rng = _generator(seed)
        means = rng.uniform(-10.0, 10.0, size=(int(centers), int(n_features)))
    else:
        means = np.asarray(centers, dtype=np.float64)
        if means.ndim != 2 or len(means) < 2:
            raise ValueError(
                "centers must be a number of blobs, or their centres as one row each (shape "
                f"(n_blobs, n_features), at least 2 rows); got shape {list(means.shape)}"
            )
        n_samples = _check_n_samples(n_samples, classes=len(means))
        rng = _generator(seed)
    spreads = np.asarray(cluster_std, dtype=np.float64).reshape(-1)
    if len(spreads) not in (1, len(means)) or np.any(spreads < 0):
        raise ValueError(
            f"cluster_std is the spread of each blob: pass one number >= 0, or one per blob "
            f"({len(means)} of them); got cluster_std={cluster_std!r}"
        )
    spreads = np.broadcast_to(spreads, (len(means),))
    blobs = [
        mean + spread * rng.standard_normal((size, means.shape[1]))
        for mean, spread, size in zip(means, spreads, _class_sizes(n_samples, len(means)))
    ]
    return _finish(rng, blobs, noise=0)


# ---- splitting -----------------------------------------------------------------------------------


def train_test_split(*tensors, test_size=0.25, seed=0):
    """Shuffle the rows, then split them into a training part and a test part.

        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, seed=0)

    Each tensor is cut along its first dimension, with the same rows going to the same side, and
    the result lists (train, test) for each tensor in turn, as scikit-learn's function does.
    `test_size`: a fraction between 0 and 1 (rounded up to whole rows) or a number of rows.
    Measure a model on the test rows only: they tell how it does on data it was not trained on.
    """
    if not tensors:
        raise ValueError("train_test_split() needs at least one tensor: pass X (and y)")
    n = len(tensors[0])
    for i, t in enumerate(tensors):
        if len(t) != n:
            raise ValueError(
                f"every tensor must have the same number of rows (its first dimension): tensor 0 "
                f"has {n}, tensor {i} has {len(t)}"
            )
    if isinstance(test_size, numbers.Integral) and not isinstance(test_size, bool):
        n_test = int(test_size)
    elif isinstance(test_size, numbers.Real) and 0 < test_size < 1:
        n_test = math.ceil(test_size * n)
    else:
        n_test = -1
    if not 0 < n_test < n:
        raise ValueError(
            f"test_size must leave rows on both sides: a fraction between 0 and 1 (such as "
            f"test_size=0.25) or a number of rows between 1 and {n - 1}; got test_size={test_size!r}"
        )
    order = _generator(seed).permutation(n)
    test, train = order[:n_test], order[n_test:]
    return [part for t in tensors for part in (t[train], t[test])]


# ---- shared steps --------------------------------------------------------------------------------


def _generator(seed):
    """A private numpy generator: the data depends on `seed` alone, not on global state."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(
            f"seed must be a non-negative integer (the same seed gives the same data); got "
            f"seed={seed!r}"
        )
    return np.random.Generator(np.random.PCG64(int(seed)))


def _check_n_samples(n_samples, classes):
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise ValueError(f"n_samples must be an integer number of points; got {n_samples!r}")
    if n_samples < classes:
        raise ValueError(
            f"n_samples must be at least {classes} (one point per class); got n_samples={n_samples}"
        )
    return int(n_samples)


def _class_sizes(n_samples, classes):
    """Balanced class sizes: the first n_samples % classes classes get one point more."""
    return [n_samples // classes + (k < n_samples % classes) for k in range(classes)]


def _finish(rng, groups, noise):
    """Stack the groups (group k is class k), add the noise, shuffle the rows, make tensors."""
    if noise is None:  # scikit-learn's spelling of "no noise"
        noise = 0.0
    if not isinstance(noise, numbers.Real) or noise < 0:
        raise ValueError(
            f"noise is the standard deviation of the Gaussian noise added to each coordinate: "
            f"pass a number >= 0 (0 for the exact shapes); got noise={noise!r}"
        )
    X = np.concatenate(groups)
    y = np.concatenate([np.full(len(g), k, dtype=np.int64) for k, g in enumerate(groups)])
    if noise:
        X = X + rng.normal(0.0, noise, size=X.shape)
    order = rng.permutation(len(X))
    return from_numpy(X[order].astype(np.float32)), from_numpy(y[order])
