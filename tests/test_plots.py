"""viz.plots: each figure holds the artists it promises, and bad input is refused in plain words."""

import sys

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.viz import plots

matplotlib = pytest.importorskip("matplotlib", reason="matplotlib (the lab extra) is not installed")
matplotlib.use("Agg")  # no window, same pixels everywhere
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.contour import ContourSet  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def trained_pair():
    """Two 'layers' whose gradients are known: loss = sum(w1 * 2) + sum(b1 * 3)."""
    w1 = ag.ones(2, 3, requires_grad=True)
    b1 = ag.ones(3, requires_grad=True)
    ((w1 * 2).sum() + (b1 * ag.tensor([-3.0, 3.0, 6.0])).sum()).backward()
    return w1, b1


# ---- loss_curve ----------------------------------------------------------------------------------


def test_loss_curve_plots_one_point_per_step():
    ax = plots.loss_curve([ag.tensor(3.0), 2.0, np.float32(1.5), 1.0])
    assert isinstance(ax.figure, Figure)
    (line,) = ax.lines
    np.testing.assert_array_equal(line.get_ydata(), [3.0, 2.0, 1.5, 1.0])
    np.testing.assert_array_equal(line.get_xdata(), [0, 1, 2, 3])
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "loss"


def test_loss_curve_smoothing_adds_a_moving_average_and_labels_go_to_the_legend():
    ax = plots.loss_curve([4.0, 0.0, 0.0], smoothing=0.5, label="SGD")
    smooth, raw = ax.lines
    np.testing.assert_allclose(smooth.get_ydata(), [4.0, 2.0, 1.0])
    np.testing.assert_array_equal(raw.get_ydata(), [4.0, 0.0, 0.0])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SGD"]


def test_loss_curves_share_an_axes():
    fig, ax = plt.subplots()
    assert plots.loss_curve([1.0, 0.5], ax=ax, label="a") is ax
    plots.loss_curve([1.0, 0.8], ax=ax, label="b")
    assert len(ax.lines) == 2 and len(fig.axes) == 1


@pytest.mark.parametrize(
    "losses, smoothing, message",
    [([], None, "non-empty"), (np.ones((2, 2)), None, r"one per step"), ([1.0], 1.0, r"\[0, 1\)")],
)
def test_loss_curve_bad_input(losses, smoothing, message):
    with pytest.raises(ValueError, match=message):
        plots.loss_curve(losses, smoothing=smoothing)


# ---- gradient_flow -------------------------------------------------------------------------------


def test_gradient_flow_one_bar_per_parameter_for_mean_and_max():
    w1, b1 = trained_pair()
    ax = plots.gradient_flow({"w1": w1, "b1": b1})
    maxes, means = ax.containers
    assert [bar.get_height() for bar in maxes] == [2.0, 6.0]
    assert [bar.get_height() for bar in means] == [2.0, 4.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w1", "b1"]


def test_gradient_flow_takes_named_pairs_and_bare_tensors_and_skips_frozen_ones():
    w1, b1 = trained_pair()
    frozen = ag.ones(3)  # requires_grad=False: not trained, so no bar
    ax = plots.gradient_flow(iter([("layer.weight", w1), ("layer.bias", b1), ("frozen", frozen)]))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["layer.weight", "layer.bias"]
    ax = plots.gradient_flow([w1, b1], log=True)
    assert len(ax.containers[0]) == 2 and ax.get_yscale() == "log"


def test_gradient_flow_reads_a_module_named_parameters():
    w1, b1 = trained_pair()

    class Model:
        def named_parameters(self):
            yield from [("w1", w1), ("b1", b1)]

    assert len(plots.gradient_flow(Model()).containers[1]) == 2


def test_gradient_flow_says_when_backward_was_not_called():
    w = ag.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"'w' has no gradient yet .*loss\.backward\(\)"):
        plots.gradient_flow({"w": w})
    with pytest.raises(TypeError, match="item 0 is a int"):
        plots.gradient_flow([3])


# ---- decision_boundary ---------------------------------------------------------------------------

X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
Y = np.array([0, 1, 0, 1])


def contour_of(ax):
    (contour,) = [c for c in ax.collections if isinstance(c, ContourSet)]
    return contour


def test_decision_boundary_fills_the_plane_and_scatters_the_points():
    seen = {}

    def predict(points):
        seen["shape"] = points.shape
        return (points[:, 0] > 0.5).astype(np.int64)  # class labels

    ax = plots.decision_boundary(predict, X, Y, resolution=50)
    assert seen["shape"] == (2500, 2)
    contour = contour_of(ax)
    assert list(contour.levels) == [-0.5, 0.5, 1.5]  # one band per class
    (points,) = [c for c in ax.collections if not isinstance(c, ContourSet)]
    np.testing.assert_array_equal(points.get_offsets(), X)
    assert ax.get_xlim() == (-0.5, 1.5)  # padding 0.5 around the data
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["class 0", "class 1"]


def test_decision_boundary_with_a_tensor_model_and_scores():
    w = ag.tensor([[1.0], [0.0]], requires_grad=True)

    def model(points):  # a Tensor in (because X is one), one score per point out
        assert isinstance(points, ag.Tensor) and not ag.is_grad_enabled()
        return points @ w - 0.5

    # X is a float64 numpy array, w float32: as in PyTorch, @ wants one dtype, so X is made float32
    points = ag.tensor(X, dtype=ag.float32)
    ax = plots.decision_boundary(model, points, ag.tensor([-1, 1, -1, 1]), resolution=20)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["class -1", "class 1"]
    assert contour_of(ax).levels.tolist() == [-0.5, 0.5, 1.5]


def test_decision_boundary_with_class_scores_for_three_classes():
    labels = np.array([0, 1, 2, 2])

    def scores(points):
        return np.column_stack([-points[:, 0], points[:, 0] - 0.5, points[:, 1]])

    ax = plots.decision_boundary(scores, X, labels, resolution=30)
    assert len(contour_of(ax).levels) == 4


def test_decision_boundary_refuses_data_that_is_not_2d():
    with pytest.raises(ValueError, match=r"2-D datasets: X must have shape \(N, 2\).*\[4, 3\]"):
        plots.decision_boundary(lambda p: p[:, 0], np.zeros((4, 3)), Y)
    with pytest.raises(ValueError, match="X has 4 points but y has 3 labels"):
        plots.decision_boundary(lambda p: p[:, 0], X, Y[:3])
    with pytest.raises(ValueError, match="only separate two classes"):
        plots.decision_boundary(lambda p: p[:, 0], X, np.array([0, 1, 2, 2]))
    with pytest.raises(ValueError, match=r"got shape \[400, 2, 1\]"):
        plots.decision_boundary(lambda p: p[:, :, None], X, Y, resolution=20)


# ---- heatmap -------------------------------------------------------------------------------------


def test_heatmap_image_holds_the_tensor_values():
    t = ag.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], requires_grad=True)
    ax = plots.heatmap(t, title="w")
    (image,) = ax.images
    np.testing.assert_array_equal(image.get_array(), t.detach().numpy())
    assert image.get_clim() == (-3.0, 3.0)  # both signs: centred on zero
    assert ax.get_title() == "w"
    assert len(ax.texts) == 6  # small: every value printed in its cell
    assert len(ax.figure.axes) == 2  # and a colour bar


def test_heatmap_of_a_gradient_and_of_a_vector():
    w1, _ = trained_pair()
    image = plots.heatmap(w1.grad).images[0]
    np.testing.assert_array_equal(image.get_array(), np.full((2, 3), 2.0))
    assert image.get_cmap().name == "viridis"  # no negative values
    row = plots.heatmap(ag.arange(100.0)).images[0]
    assert row.get_array().shape == (1, 100)


def test_heatmap_bad_input():
    with pytest.raises(ValueError, match=r"got None.*backward\(\) first"):
        plots.heatmap(ag.ones(2, requires_grad=True).grad)
    with pytest.raises(ValueError, match=r"2-D tensors.*\[2, 3, 4\].*t\[0\]"):
        plots.heatmap(ag.zeros(2, 3, 4))


# ---- without matplotlib --------------------------------------------------------------------------


def test_a_missing_matplotlib_is_explained(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # makes `import` fail
    with pytest.raises(ImportError, match=r"pip install matplotlib"):
        plots.loss_curve([1.0])


def test_same_data_same_picture():
    def png():
        ax = plots.heatmap(np.arange(6.0).reshape(2, 3))
        ax.figure.canvas.draw()
        return np.asarray(ax.figure.canvas.buffer_rgba()).copy()

    np.testing.assert_array_equal(png(), png())
