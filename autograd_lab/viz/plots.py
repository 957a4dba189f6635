"""Matplotlib figures for training: loss curves, gradient flow, decision boundaries, heatmaps.

    >>> from autograd_lab.viz import plots
    >>> ax = plots.loss_curve([2.3, 1.1, 0.7, 0.5], smoothing=0.6)
    >>> ax.figure.savefig("loss.png")

Every function takes an optional `ax` (draw into your own subplot) and returns the Axes it drew on,
as pandas and seaborn do; `ax.figure` is the Figure. A Figure is not returned on purpose: in a
notebook a returned Figure is drawn twice (once as the cell's value, once by the inline backend).
Figures have fixed sizes and no timestamps, so the same data gives the same picture.

matplotlib is imported only when a function is called: the rest of autograd_lab works without it.
"""

import numpy as np

# The class colours of decision_boundary (matplotlib's "tab10" palette, written out so the picture
# does not depend on the installed matplotlib's default style).
CLASS_COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def _pyplot():
    """matplotlib.pyplot, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(
            "autograd_lab.viz.plots draws with matplotlib, which is not installed. "
            "Install it with `pip install matplotlib` (or `pip install 'autograd_lab[lab]'`)."
        ) from error
    return plt


def _new_axes(ax, figsize):
    """The caller's Axes, or a new figure of a fixed size (constrained layout keeps labels in)."""
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def _as_array(x, what):
    """The values of a tensor (ours or PyTorch's), array or nested list, as a numpy array."""
    if x is None:
        raise ValueError(f"{what} is None, not a tensor")
    if hasattr(x, "detach"):  # a tensor: read its values, never its graph
        x = x.detach()
        if hasattr(x, "cpu"):
            x = x.cpu()
        return np.asarray(x.numpy())
    return np.asarray(x)


def _scalar(value):
    """One loss as a Python float: a number, a 0-d array, or a one-element tensor."""
    return float(value.item()) if hasattr(value, "item") else float(value)


# ---- loss curve ----------------------------------------------------------------------------------


def loss_curve(losses, ax=None, smoothing=None, label=None, steps=None):
    """Plot the loss at each training step.

        losses = []
        for step in range(100):
            ...; losses.append(loss.item())
        plots.loss_curve(losses, smoothing=0.9, label="SGD")

    `losses`: numbers or one-element tensors. `smoothing` (0 <= s < 1) adds an exponential moving
    average, as TensorBoard draws it: the raw curve stays behind it, faint. `label` names the curve
    in a legend, to compare runs on one `ax`. `steps`: the step number of each loss, when you
    recorded them only every few steps (default 0, 1, 2, ...).
    """
    if hasattr(losses, "detach") or isinstance(losses, np.ndarray):
        values = _as_array(losses, "losses").astype(np.float64)
    else:
        values = np.array([_scalar(v) for v in losses], dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(
            f"loss_curve() needs a non-empty sequence of numbers, one per step; got shape "
            f"{list(values.shape)}. Collect them with losses.append(loss.item()) in the loop."
        )
    if smoothing is not None and not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must be in [0, 1) (0 = none, 0.9 = strong); got {smoothing}")

    if steps is None:
        steps = np.arange(len(values))
    elif len(steps) != len(values):
        raise ValueError(f"steps has {len(steps)} numbers but losses has {len(values)}: one each")

    ax = _new_axes(ax, figsize=(6, 4))
    if smoothing:
        (line,) = ax.plot(steps, _moving_average(values, smoothing), label=label)
        ax.plot(steps, values, color=line.get_color(), alpha=0.3, linewidth=1)
    else:
        ax.plot(steps, values, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title("Training loss")
    if label is not None:
        ax.legend()
    return ax


def _moving_average(values, weight):
    """Exponential moving average: each point keeps `weight` of the previous average."""
    out = np.empty_like(values)
    last = values[0]
    for i, value in enumerate(values):
        last = weight * last + (1 - weight) * value
        out[i] = last
    return out


# ---- gradient flow -------------------------------------------------------------------------------


def gradient_flow(named_parameters_or_tensors, ax=None, log=False):
    """Bars of mean and max |grad| for each parameter, after `loss.backward()`.

        loss.backward()
        plots.gradient_flow(model.named_parameters())     # or {"w1": w1, "b1": b1, ...}

    Gradients that shrink layer by layer towards the input are *vanishing*; `log=True` shows
    small ones. Accepts a dict name -> tensor, (name, tensor) pairs, a module (anything with
    `named_parameters()`), or plain tensors (named by position). Tensors that do not require
    grad (frozen) are left out.
    """
    names, means, maxes = [], [], []
    for name, tensor in _named_tensors(named_parameters_or_tensors):
        if not getattr(tensor, "requires_grad", True):
            continue  # frozen: it is not trained, so it has no gradient to show
        if getattr(tensor, "grad", None) is None:
            raise ValueError(
                f"{name!r} has no gradient yet (its .grad is None). Call loss.backward() before "
                "gradient_flow(); if the loss does not use it, leave it out."
            )
        grad = np.abs(_as_array(tensor.grad, f"{name}.grad").astype(np.float64))
        names.append(name)
        means.append(grad.mean() if grad.size else 0.0)
        maxes.append(grad.max() if grad.size else 0.0)
    if not names:
        raise ValueError("gradient_flow() found no tensor that requires grad to draw")

    ax = _new_axes(ax, figsize=(max(6.0, 0.6 * len(names) + 2), 4))
    x = np.arange(len(names))
    width = 0.4
    ax.bar(x - width / 2, maxes, width, label="max |grad|")
    ax.bar(x + width / 2, means, width, label="mean |grad|")
    ax.set_xticks(x)
    ax.set_xticklabels(
        names, rotation=45 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center"
    )
    if log:
        ax.set_yscale("log")
    ax.set_ylabel("|grad|")
    ax.set_title("Gradient flow")
    ax.legend()
    return ax


def _named_tensors(items):
    """(name, tensor) pairs from a dict, pairs, a module, or a list of bare tensors."""
    if hasattr(items, "named_parameters"):  # a module: nn.Module in PyTorch, ours later
        items = items.named_parameters()
    if isinstance(items, dict):
        return list(items.items())
    pairs = []
    for i, item in enumerate(items):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            pairs.append(item)
        elif hasattr(item, "grad"):
            pairs.append((f"tensor {i}", item))
        else:
            raise TypeError(
                "gradient_flow() takes a dict name -> tensor, (name, tensor) pairs such as "
                f"model.named_parameters(), or tensors; item {i} is a {type(item).__name__}"
            )
    return pairs


# ---- decision boundary ---------------------------------------------------------------------------


def decision_boundary(predict_fn, X, y, ax=None, resolution=200, padding=0.5, threshold=None):
    """Colour the plane by the class a model predicts, and draw the data points on top.

        X, y = moons(200)                        # X: (200, 2) points, y: (200,) class labels
        plots.decision_boundary(lambda pts: model(pts), X, y)

    `predict_fn` gets a (resolution², 2) grid of points (a Tensor when X is one, else a numpy
    array; called under no_grad) and returns, per point, either one score per class (shape
    (N, C): the largest wins), a class label, or one score for two classes: class y.max() where
    score > `threshold` (default 0.5 when all scores lie in [0, 1], like probabilities, else 0).
    `padding` widens the plotted area beyond the data.
    """
    points = _as_array(X, "X")
    labels = _as_array(y, "y").reshape(-1)
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(
            f"decision_boundary() draws 2-D datasets: X must have shape (N, 2), one row per "
            f"point; got shape {list(points.shape)}"
        )
    if len(labels) != len(points):
        raise ValueError(f"X has {len(points)} points but y has {len(labels)} labels")
    if int(resolution) < 2:
        raise ValueError(f"resolution must be at least 2 points per axis; got {resolution}")

    # A grid covering the data, `padding` wider on every side.
    low, high = points.min(axis=0) - padding, points.max(axis=0) + padding
    gx, gy = np.meshgrid(
        np.linspace(low[0], high[0], int(resolution)), np.linspace(low[1], high[1], int(resolution))
    )
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    predicted = _predicted_labels(_predict(predict_fn, X, grid), np.unique(labels), threshold)
    predicted = predicted.reshape(gx.shape)

    ax = _new_axes(ax, figsize=(5, 5))
    from matplotlib.colors import ListedColormap  # (matplotlib is there: _new_axes checked)

    # One colour per label, shared by the regions and the points.
    classes = np.unique(np.concatenate([labels, predicted.ravel()]))
    if len(classes) <= len(CLASS_COLORS):
        cmap = ListedColormap(CLASS_COLORS[: len(classes)])
    else:  # more classes than colours: sample a continuous colour map
        cmap = _pyplot().get_cmap("viridis", len(classes))
    levels = np.arange(len(classes) + 1) - 0.5  # a band around each class index
    ax.contourf(gx, gy, np.searchsorted(classes, predicted), levels=levels, cmap=cmap, alpha=0.3)
    point_colors = np.searchsorted(classes, labels)
    ax.scatter(
        points[:, 0],
        points[:, 1],
        c=point_colors,
        cmap=cmap,
        vmin=levels[0],
        vmax=levels[-1],
        edgecolors="black",
        linewidths=0.5,
        s=20,
    )
    handles = [
        ax.plot([], [], "o", color=cmap(i), markeredgecolor="black", label=f"class {c}")[0]
        for i, c in enumerate(classes)
    ]
    ax.legend(handles=handles, loc="best")
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    ax.set_xlabel("x[:, 0]")
    ax.set_ylabel("x[:, 1]")
    ax.set_title("Decision boundary")
    return ax


def _predict(predict_fn, X, grid):
    """Run the model on the grid, as a Tensor of X's dtype when X is one, without recording."""
    from ..autograd import no_grad
    from ..creation import tensor as make_tensor
    from ..tensor import Tensor

    with no_grad():  # 40,000 points: no graph needed, and none kept in memory
        if isinstance(X, Tensor):
            return predict_fn(make_tensor(grid, dtype=X.dtype))
        return predict_fn(grid)


def _predicted_labels(scores, classes, threshold):
    """Turn predict_fn's output into one label per grid point (see decision_boundary)."""
    scores = _as_array(scores, "predict_fn's result")
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim == 2:  # one score per class: the largest wins
        winner = scores.argmax(axis=1)
        return classes[winner] if scores.shape[1] == len(classes) else winner
    if scores.ndim != 1:
        raise ValueError(
            f"predict_fn must return one score or label per point, or one row of class scores "
            f"per point; got shape {list(scores.shape)}"
        )
    if scores.dtype.kind in "biu":  # already class labels
        return scores
    if len(classes) > 2:
        raise ValueError(
            f"one score per point can only separate two classes, but y has {len(classes)}: "
            "return one score per class (shape (N, C)) from predict_fn"
        )
    if threshold is None:
        threshold = 0.5 if scores.min() >= 0 and scores.max() <= 1 else 0.0
    low, high = (classes[0], classes[-1]) if len(classes) == 2 else (0, 1)
    return np.where(scores > threshold, high, low)


# ---- heatmap -------------------------------------------------------------------------------------


def heatmap(tensor, ax=None, title=None, cmap=None):
    """Draw a tensor's values (or gradient) as coloured cells; small ones get their numbers.

        plots.heatmap(w, title="w")
        plots.heatmap(w.grad, title="dloss/dw")   # after loss.backward()

    2-D tensors are drawn as they print; a 1-D tensor as one row. With `cmap=None` values of both
    signs use a red/blue scale centred on 0 (white = 0), others "viridis".
    """
    if tensor is None:
        raise ValueError(
            "heatmap() got None instead of a tensor. If you passed a .grad, call "
            "loss.backward() first: gradients appear only after backward."
        )
    data = _as_array(tensor, "tensor")
    if data.ndim > 2:
        raise ValueError(
            f"heatmap() draws 2-D tensors (1-D as one row); got shape {list(data.shape)}. "
            "Pick a 2-D slice, e.g. t[0], or reshape it."
        )
    data = data.reshape(1, -1) if data.ndim < 2 else data
    if data.dtype.kind == "b":
        data = data.astype(np.int64)

    limits = {}
    if cmap is None:
        if data.size and data.min() < 0:
            extent = float(np.abs(data).max()) or 1.0
            cmap, limits = "RdBu_r", {"vmin": -extent, "vmax": extent}
        else:
            cmap = "viridis"
    rows, cols = data.shape
    ax = _new_axes(ax, figsize=(6, 1.8) if rows == 1 else (5, 4))
    image = ax.imshow(data, cmap=cmap, aspect="auto", interpolation="nearest", **limits)
    ax.figure.colorbar(image, ax=ax)
    if data.size <= 64:  # few enough cells to print each number inside
        for (r, c), value in np.ndenumerate(data):
            red, green, blue, _ = image.cmap(image.norm(value))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            ax.text(
                c,
                r,
                f"{value:.3g}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
    ax.set_xticks(range(cols) if cols <= 20 else [])
    ax.set_yticks(range(rows) if 1 < rows <= 20 else [])
    if title is not None:
        ax.set_title(title)
    return ax
