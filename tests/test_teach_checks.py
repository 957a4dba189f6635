"""check() and gradient tables: the verdicts learners see in check cells (see teach/FORMAT.md)."""

import sys

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.teach import CheckFailed, check, check_gradients, gradient_table
from autograd_lab.teach.checks import GRADIENT_HINT, NOT_DONE

FOOTER = "(rel. error < 1e-7: great, < 1e-5: ok, larger: wrong)"


def failure(condition, **kwargs):
    """The one line a failing check shows (and assert it printed nothing else)."""
    with pytest.raises(CheckFailed) as caught:
        check("ex1", condition, **kwargs)
    return str(caught.value)


# ---- check() ------------------------------------------------------------------------------------


def test_a_passing_check_prints_one_line(capsys):
    assert check("ex1", True) is None  # nothing for a notebook to echo after the verdict
    check("ex1", lambda: 2 + 2 == 4, message="arithmetic")
    assert capsys.readouterr().out == "✓ ex1 passed\n✓ ex1 passed (arithmetic)\n"


def test_a_failing_check_raises_its_verdict_and_prints_nothing_else(capsys):
    assert failure(False, hint="b is used twice") == "✗ ex1: b is used twice"
    assert (
        failure(lambda: 0, message="b.grad", hint="add both paths")
        == "✗ ex1 (b.grad): add both paths"
    )
    assert failure(lambda: []) == "✗ ex1: not right yet — reread the exercise and try again"
    assert capsys.readouterr().out == ""


def test_check_failed_is_an_assertion_error_rendered_as_one_line():
    with pytest.raises(AssertionError) as caught:
        check("ex3", False, hint="look at the shapes")
    assert isinstance(caught.value, CheckFailed) and caught.value.exercise == "ex3"
    assert caught.value._render_traceback_() == ["✗ ex3: look at the shapes"]
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_stub_reads_not_done_yet():
    def stub():
        raise NotImplementedError("ex1: write your solution here")

    assert failure(stub, hint="never shown") == f"✗ ex1: {NOT_DONE}"
    assert "replace the `raise NotImplementedError` with your code" in NOT_DONE


def test_an_exception_in_the_condition_is_a_failure_that_names_it():
    assert failure(lambda: 1 / 0, hint="h") == (
        "✗ ex1: h (your code raised ZeroDivisionError: division by zero)"
    )
    line = failure(lambda: undefined_name)  # noqa: F821
    assert "NameError: name 'undefined_name' is not defined — did the cells above run?" in line
    ambiguous = failure(lambda: np.array([True, False]))  # an author's bug still ends in a verdict
    assert "ValueError: The truth value of an array" in ambiguous


def test_a_name_the_stub_left_undefined_reads_not_done_yet(monkeypatch):
    # IPython stores a cell's uncaught exception in sys.last_value: here, the solution cell's stub
    monkeypatch.setattr(
        sys, "last_value", NotImplementedError("ex2: write your solution here"), raising=False
    )
    with pytest.raises(CheckFailed, match=f"^✗ ex2: {NOT_DONE}$"):
        check("ex2", lambda: b_grad == 15)  # noqa: F821
    with pytest.raises(CheckFailed, match="NameError"):  # another exercise's stub: not this one
        check("ex3", lambda: b_grad == 15)  # noqa: F821


def test_a_check_inside_a_condition_keeps_its_own_verdict():
    with pytest.raises(CheckFailed, match="^✗ inner: h$"):
        check("outer", lambda: check("inner", False, hint="h"))


def test_in_ipython_a_failed_check_shows_only_its_line(tmp_path):
    IPython = pytest.importorskip("IPython")
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.ipython_dir = str(tmp_path)
    shell = IPython.core.interactiveshell.InteractiveShell.instance(config=config)
    with capture_output() as captured:
        result = shell.run_cell(
            "from autograd_lab.teach import check\ncheck('ex1', lambda: 1 + 1 == 3, hint='count again')"
        )
    assert isinstance(result.error_in_exec, CheckFailed)
    assert captured.stdout.strip() == "✗ ex1: count again"  # no "Traceback", no frames


# ---- gradient tables ----------------------------------------------------------------------------


def test_the_table_is_aligned_and_exact():
    table = gradient_table(lambda x, y: x * y, (2.0, 3.0), lambda x, y: (y, x))
    assert str(table) == "\n".join(
        [
            "input  analytic  numerical  rel. error  verdict",
            "x             3          3      < 1e-7  ✓ great",
            "y             2          2      < 1e-7  ✓ great",
            FOOTER,
        ]
    )
    assert repr(table) == str(table) and table.ok  # the last line of a cell shows the table


def test_array_inputs_get_a_row_per_element_and_wrong_rows_are_flagged():
    x = np.array([[0.5, -1.0], [2.0, 0.0]])
    table = gradient_table(lambda x: np.tanh(x), [x], lambda x: [1 - np.tanh(x) ** 2 + (x > 1)])
    assert [row[0] for row in table.rows] == ["x[0, 0]", "x[0, 1]", "x[1, 0]", "x[1, 1]"]
    assert [row[4] for row in table.rows] == ["✓ great", "✓ great", "✗ wrong", "✓ great"]
    assert not table.ok
    assert str(table).splitlines()[3].split() == [
        "x[1,",
        "0]",
        "1.07065",
        "0.0706508",
        "9.3e-01",
        "✗",
        "wrong",
    ]


def test_an_almost_right_gradient_is_ok_not_great():
    table = gradient_table(lambda x: x**2, 3.0, lambda x: 2 * x * (1 + 1e-6))
    (row,) = table.rows
    assert row[4] == "✓ ok" and table.ok
    assert str(table).splitlines()[1].split() == ["x", "6.00001", "6", "1.0e-06", "✓", "ok"]


def test_tiny_gradients_and_noise_print_as_zero():
    # tanh saturates: the true gradient at 10 is 8e-9, below what finite differences resolve
    table = gradient_table(np.tanh, np.array([10.0]), lambda x: 1 - np.tanh(x) ** 2)
    assert str(table).splitlines()[1].split() == ["x[0]", "0", "0", "<", "1e-7", "✓", "great"]


def test_the_same_check_prints_the_same_bytes():
    def table():
        rng = np.random.default_rng(0)
        W, x = rng.standard_normal((2, 3)), rng.standard_normal(3)
        return str(gradient_table(lambda W, x: np.tanh(W @ x), [W, x], analytic))

    def analytic(W, x):
        local = 1 - np.tanh(W @ x) ** 2
        return [np.outer(local, x), W.T @ local]

    assert table() == table()


def test_dict_inputs_name_the_rows_and_call_by_keyword():
    table = gradient_table(
        lambda *, w, b: w * 2.0 + b, {"w": np.array([1.0, 2.0]), "b": 0.5}, {"w": [2, 2], "b": 2}
    )
    assert [row[0] for row in table.rows] == ["w[0]", "w[1]", "b"]
    assert table.ok


def test_unnamed_parameters_are_numbered():
    table = gradient_table(lambda *xs: xs[0] * xs[1], (2.0, 5.0), [5.0, 2.0])
    assert [row[0] for row in table.rows] == ["inputs[0]", "inputs[1]"]


def test_tensors_in_tensors_out_and_analytic_from_autograd():
    seen = []

    def fn(x):
        seen.append((type(x), x.dtype))
        return (x * x.sin()).sum()

    def by_backward(x):  # the tensor arrives as a float64 leaf that requires grad
        fn(x).backward()
        return [x.grad]

    x = ag.tensor([1.0, 2.0], requires_grad=True)  # float32: checked in float64 all the same
    table = gradient_table(fn, [x], by_backward)
    assert table.ok and {s for s in seen} == {(ag.Tensor, ag.float64)}
    assert x.grad is None  # the learner's tensor is not touched


def test_numbers_arrive_as_numbers_and_arrays_as_copies():
    kinds = set()
    original = np.array([1.0, 2.0])

    def fn(a, x):
        kinds.add((type(a), type(x)))
        x += 100.0  # an in-place edit of fn's own copy does not leak into the inputs
        return a * x.sum()

    gradient_table(fn, (3.0, original), lambda a, x: (x.sum(), np.full(2, a)))
    assert kinds == {(float, np.ndarray)}
    assert original.tolist() == [1.0, 2.0]


def test_several_outputs_add_up_and_none_means_zero():
    table = gradient_table(lambda a, b: (a * b, a + b), [2.0, 3.0], lambda a, b: (b + 1, None))
    assert [row[4] for row in table.rows] == ["✓ great", "✗ wrong"]  # b's true gradient is 3
    assert str(table).splitlines()[2].split()[:3] == ["b", "0", "3"]


def test_big_inputs_get_one_row_of_norms():
    W = np.arange(12.0).reshape(3, 4) / 7
    table = gradient_table(lambda W: (W**2).sum(), [W], lambda W: [2 * W])
    assert [row[0] for row in table.rows] == ["W (all 12)"]
    assert table.rows[0][1] == pytest.approx(np.linalg.norm(2 * W))
    assert "(rows 'all N' compare gradient norms; their error is the largest entry's)" in str(table)


def test_a_nan_gradient_is_wrong():
    table = gradient_table(lambda x: x * 2, 1.0, lambda x: float("nan"))
    assert table.rows[0][4] == "✗ wrong" and "nan" in str(table)


def test_a_gradient_of_the_wrong_shape_is_a_clear_error():
    with pytest.raises(
        ValueError, match=r"gradient for x has shape \(3,\) but x has shape \(2, 3\)"
    ):
        gradient_table(lambda x: x.sum(), [np.ones((2, 3))], [np.ones(3)])
    with pytest.raises(ValueError, match=r"expected 2 gradients \(one per input: x, y\), got 1"):
        gradient_table(lambda x, y: x * y, (1.0, 2.0), [1.0])


# ---- check_gradients ----------------------------------------------------------------------------


def test_check_gradients_prints_the_table_then_the_verdict(capsys):
    check_gradients("ex4", lambda x: x**3, (2.0,), lambda x: 3 * x**2)
    assert capsys.readouterr().out.splitlines() == [
        "input  analytic  numerical  rel. error  verdict",
        "x            12         12      < 1e-7  ✓ great",
        FOOTER,
        "✓ ex4 passed",
    ]


def test_check_gradients_fails_on_a_wrong_row_with_the_table_shown(capsys):
    with pytest.raises(CheckFailed) as caught:
        check_gradients("ex4", lambda x: x**3, (2.0,), lambda x: 2 * x**2)
    assert str(caught.value) == f"✗ ex4: {GRADIENT_HINT}"
    assert "✗ wrong" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="^✗ ex4: use the chain rule$"):
        check_gradients("ex4", np.sin, 1.0, np.sin, hint="use the chain rule")


def test_check_gradients_on_a_stub_says_not_done_yet():
    def tanh_backward(x):
        raise NotImplementedError("ex2: write your solution here")

    with pytest.raises(CheckFailed, match=f"^✗ ex2: {NOT_DONE}$"):
        check_gradients("ex2", np.tanh, [np.zeros(2)], tanh_backward)


def test_check_gradients_turns_a_shape_mistake_into_a_verdict():
    with pytest.raises(CheckFailed) as caught:
        check_gradients("ex5", lambda x: x.sum(), [np.ones((2, 3))], [np.ones(3)])
    assert "a gradient always has the shape of its input" in str(caught.value)
