"""The %autograd magics in an in-process IPython shell, and show() as a plain function.

Cells run through `shell.run_cell`, as a notebook runs them: a failing cell reports its error in
`result.error_in_exec` (the notebook stops there) and prints its traceback.
"""

import re
import subprocess
import sys

import numpy as np
import pytest

import autograd_lab as ag

pytest.importorskip("IPython", reason="IPython (the lab extra) is not installed")
pytest.importorskip("anywidget", reason="anywidget (the lab extra) is not installed")
from IPython.core.error import UsageError  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402
from traitlets.config import Config  # noqa: E402

from autograd_lab.magic import CellSyntaxError, load_ipython_extension, show  # noqa: E402
from autograd_lab.viz.snapshot import Snapshot  # noqa: E402
from autograd_lab.viz.widget import GraphWidget  # noqa: E402

SEED_EXAMPLE = """\
a = ag.tensor(2.0, requires_grad=True)
b = ag.tensor(6.0, requires_grad=True)
c = a + b
d = b + 1
e = c * d
"""
WIDGET = "application/vnd.jupyter.widget-view+json"
SVG = "image/svg+xml"


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """One IPython shell for the module: no history file, its profile in a temporary folder."""
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.ipython_dir = str(tmp_path_factory.mktemp("ipython"))
    ip = InteractiveShell.instance(config=config)
    load_ipython_extension(ip)
    return ip


@pytest.fixture(autouse=True)
def _fresh_namespace(shell):
    """Each test starts with only `ag` defined (quicker than shell.reset(), which runs the GC)."""
    for name in [n for n in shell.user_ns if n not in shell.user_ns_hidden]:
        del shell.user_ns[name]
    shell.user_ns["ag"] = ag


def run(shell, cell):
    """Run a cell as a notebook does; returns (result, captured displays and printed text)."""
    with capture_output() as captured:
        result = shell.run_cell(cell)
    return result, captured


def displayed(captured):
    """The mime types of each thing the cell displayed."""
    return [set(output.data) for output in captured.outputs]


def plain(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # the traceback's colours, removed


def by_name(graph):
    """{variable name: node} for the named tensor nodes of a Snapshot."""
    return {n["name"]: n for n in graph.nodes if n["kind"] == "tensor" and n["name"]}


# ---- loading -------------------------------------------------------------------------------------


def test_load_ext_autograd_lab_adds_both_magics(shell):
    result, _ = run(shell, "%load_ext autograd_lab")
    assert result.success, result.error_in_exec
    assert shell.find_cell_magic("autograd") is not None
    assert shell.find_line_magic("autograd") is not None


# ---- %%autograd ----------------------------------------------------------------------------------


def test_cell_magic_draws_the_graph_the_cell_built(shell):
    result, captured = run(shell, "%%autograd -o w\n" + SEED_EXAMPLE)
    assert result.success, result.error_in_exec
    assert result.result is None  # nothing returned: only the widget is shown
    assert len(captured.outputs) == 1 and WIDGET in captured.outputs[0].data
    w = shell.user_ns["w"]
    assert isinstance(w, GraphWidget)
    graph = w.snapshot
    ops = sorted(n["op"] for n in graph.nodes if n["kind"] == "op")
    assert ops == ["AddBackward0", "AddBackward0", "MulBackward0"]
    assert {n["name"] for n in graph.nodes if n["name"]} == {"a", "b", "c", "d", "e"}
    assert {n["label"] for n in graph.nodes} == {"a", "b", "c = Add", "d = Add", "e = Mul", "e"}
    assert graph.events == [] and by_name(graph)["a"]["grad"] is None  # no backward asked for
    # every node the cell made was recorded, with its value: the traced intermediate results
    assert [n["value"]["values"] for n in graph.nodes if n["kind"] == "op"] == [8.0, 7.0, 56.0]


def test_backward_option_runs_backward_and_records_it(shell):
    result, _ = run(shell, "%%autograd -b -o w\n" + SEED_EXAMPLE)
    assert result.success, result.error_in_exec
    graph = shell.user_ns["w"].snapshot
    assert by_name(graph)["a"]["grad"]["values"] == 7.0
    assert by_name(graph)["b"]["grad"]["values"] == 15.0  # two paths: 7 + 8
    b_id = by_name(graph)["b"]["id"]
    sent_to_b = [e["grad"]["values"] for e in graph.events if e["target"] == b_id]
    assert sent_to_b == [8.0, 7.0]  # in the engine's order: through d first, then through c
    assert shell.user_ns["b"].grad.item() == 15.0  # the notebook's own tensors got their grads


def test_the_last_expression_is_the_root_and_is_not_shown_again(shell):
    cell = SEED_EXAMPLE + "f = e * 2\ne\n"  # f is made, but the cell's result is e
    result, captured = run(shell, "%%autograd -b -o w\n" + cell)
    assert result.success and result.result is None
    assert len(captured.outputs) == 1
    graph = shell.user_ns["w"].snapshot
    assert "f" not in by_name(graph) and by_name(graph)["e"]["role"] == "output"
    assert shell.user_ns["a"].grad.item() == 7.0  # backward ran from e, not from f


def test_root_option_picks_what_to_draw(shell):
    result, _ = run(shell, "%%autograd --root d -o w\n" + SEED_EXAMPLE)
    assert result.success, result.error_in_exec
    graph = shell.user_ns["w"].snapshot
    assert sorted(by_name(graph)) == ["b", "d"]  # only what d depends on
    result, _ = run(shell, '%%autograd --root "e * 2" -o w\n' + SEED_EXAMPLE)
    assert result.success, result.error_in_exec  # an expression, evaluated after the cell
    assert [n["op"] for n in shell.user_ns["w"].snapshot.nodes][-2] == "MulBackward0"


def test_static_option_displays_an_svg(shell):
    result, captured = run(shell, "%%autograd --static -o g\n" + SEED_EXAMPLE)
    assert result.success, result.error_in_exec
    # text/html: the same picture as an <img>, which untrusted notebooks show
    assert displayed(captured) == [{SVG, "text/html", "text/plain"}]
    svg = captured.outputs[0].data[SVG]
    assert svg.lstrip().startswith("<svg") and "c = Add" in svg
    assert isinstance(shell.user_ns["g"], Snapshot)  # --static keeps the Snapshot, not a widget


def test_max_nodes_option_reaches_the_widget(shell):
    result, _ = run(shell, "%%autograd --max-nodes 3 -o w\n" + SEED_EXAMPLE)
    assert result.success, result.error_in_exec
    assert shell.user_ns["w"].max_nodes == 3


def test_an_error_in_the_cell_fails_the_cell_like_any_other(shell):
    result, captured = run(shell, "%%autograd\nx = 1\ny = x / 0\nz = 2\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)  # the notebook stops here
    assert captured.outputs == []  # no picture of a half-built graph
    assert shell.user_ns["x"] == 1 and "z" not in shell.user_ns  # ran up to the error, as usual
    traceback = plain(captured.stdout)
    assert "y = x / 0" in traceback  # the user's line, numbered as in the cell
    assert "line 3" in traceback
    with pytest.raises(ZeroDivisionError):  # called directly, the user's exception comes out
        shell.run_cell_magic("autograd", "", "1 / 0")


def test_an_error_shows_only_the_learners_frames(shell):
    run(shell, "def double(t):\n    return t.reshape(5) * 2\n")
    cell = "%%autograd\na = ag.tensor([2.0, 3.0], requires_grad=True)\nb = double(a)\n"
    result, captured = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    traceback = plain(captured.stdout)
    # as a plain cell shows it: the cell's line, then the learner's function, then the op
    assert traceback.index("----> 3 b = double(a)") < traceback.index("in double(t)")
    assert "shape [5] is invalid for input of size 2" in traceback
    for internal in ("run_cell_magic", "magic.py", "skipping hidden", "interactiveshell"):
        assert internal not in traceback, internal
    # the first frame shown is the cell itself, right under the header line
    first_frame = traceback.split("Traceback (most recent call last)")[1].strip().splitlines()[0]
    assert first_frame.startswith("Cell In[") and first_frame.endswith("line 3")


def test_a_syntax_error_in_the_cell_shows_as_in_a_plain_cell(shell):
    cell = "%%autograd\na = ag.tensor(2.0, requires_grad=True)\nb = (a *\n"
    result, captured = run(shell, cell)
    assert isinstance(result.error_in_exec, CellSyntaxError)
    assert isinstance(result.error_in_exec.error, SyntaxError)
    shown = plain(captured.stdout)
    assert "line 3" in shown and "b = (a *" in shown  # numbered as in the notebook cell
    assert shown.rstrip().endswith("SyntaxError: incomplete input")
    for internal in ("run_cell_magic", "magic.py", "compilerop", "ast_parse"):
        assert internal not in shown, internal


def test_an_error_raised_again_later_shows_its_whole_traceback(shell):
    run(shell, "%%autograd\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    kept = e\n")
    result, captured = run(shell, "def again():\n    raise kept\nagain()\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "raise kept" in plain(captured.stdout)  # the later cell's frames, not cut away


def test_a_cell_that_builds_no_graph_says_so(shell):
    result, captured = run(shell, "%%autograd -o w\nx = 1 + 2\ny = ag.tensor(3.0) * 2\n")
    assert result.success, result.error_in_exec
    assert captured.outputs == []  # no empty widget inviting the learner to press play
    assert "this cell built no graph" in captured.stdout
    assert "requires_grad=True" in captured.stdout  # and how to make one
    assert "w" not in shell.user_ns
    result, captured = run(shell, "%%autograd -b\nx = 1\n")  # -b has nothing to call backward on
    assert result.success and "this cell built no graph" in captured.stdout


@pytest.mark.parametrize(
    "line, cell, message",
    [
        ("--bogus", SEED_EXAMPLE, "unrecognized arguments: --bogus"),
        ("--max-nodes many", SEED_EXAMPLE, "invalid int value"),
        ("--max-nodes 0", SEED_EXAMPLE, "--max-nodes must be a positive"),
        ("-o 2w", SEED_EXAMPLE, "-o needs a variable name"),
        ("--root 3", SEED_EXAMPLE, r"--root 3 is not a tensor \(its type is int\)"),
        ("-b", SEED_EXAMPLE + "e * ag.ones(3)\n", r"has shape \[3\]. Reduce it first"),
        ("-b", SEED_EXAMPLE + "f = e * 2\ng = e * 3\n", "there are 2 to choose from"),
    ],
)
def test_bad_options_are_usage_errors(shell, line, cell, message):
    with pytest.raises(UsageError, match=message):
        shell.run_cell_magic("autograd", line, cell)
    result, captured = run(shell, f"%%autograd {line}\n{cell}")
    assert isinstance(result.error_in_exec, UsageError)  # IPython shows just the message
    assert "Traceback" not in plain(captured.stdout + captured.stderr)


def test_bad_options_are_refused_before_the_cell_runs(shell):
    run(shell, "%%autograd --max-nodes 0\nran = True\n")
    assert "ran" not in shell.user_ns


# ---- %autograd EXPR ------------------------------------------------------------------------------


def test_line_magic_draws_an_existing_tensor(shell):
    run(shell, SEED_EXAMPLE + "e.backward()\n")
    result, captured = run(shell, "%autograd -o w e")
    assert result.success, result.error_in_exec
    assert result.result is None and len(captured.outputs) == 1
    graph = shell.user_ns["w"].snapshot
    assert sorted(by_name(graph)) == ["a", "b", "e"]
    assert by_name(graph)["b"]["grad"]["values"] == 15.0
    result, captured = run(shell, "%autograd -o w c * d")  # an expression, made now
    assert result.success, result.error_in_exec
    assert shell.user_ns["w"].snapshot.nodes[-2]["value"]["values"] == 56.0  # its value is known
    result, captured = run(shell, "%autograd --static e")
    assert result.success and displayed(captured) == [{SVG, "text/html", "text/plain"}]


def test_line_magic_usage_errors(shell):
    run(shell, "x = 3")
    with pytest.raises(UsageError, match=r"x is not a tensor \(its type is int\)"):
        shell.run_line_magic("autograd", "x")
    with pytest.raises(UsageError, match="arguments are required: expression"):
        shell.run_line_magic("autograd", "")
    with pytest.raises(UsageError, match=r"%autograd c \*: 'c \*' is not a Python expression"):
        shell.run_line_magic("autograd", "c * ")


def test_an_undefined_name_is_said_in_one_line(shell):
    result, captured = run(shell, "%autograd undefined_name")
    assert isinstance(result.error_in_exec, UsageError)
    shown = plain(captured.stdout + captured.stderr)
    assert "name 'undefined_name' is not defined" in shown
    assert "Run the cell that defines 'undefined_name' first" in shown
    assert "Could not get source" not in shown and "Traceback" not in shown
    result, captured = run(shell, "%%autograd --root nothing_here\nx = 1\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert "--root nothing_here: name 'nothing_here' is not defined" in plain(captured.stderr)


def test_an_error_inside_the_expression_shows_the_expression(shell):
    run(shell, SEED_EXAMPLE)
    result, captured = run(shell, "%autograd c * ag.ones(3).reshape(5)")
    assert isinstance(result.error_in_exec, RuntimeError)
    traceback = plain(captured.stdout)
    assert "----> 1 c * ag.ones(3).reshape(5)" in traceback
    assert "Could not get source" not in traceback and "run_line_magic" not in traceback


def test_help_lists_the_options(shell):
    doc = shell.find_cell_magic("autograd").__doc__
    for option in ("--backward", "--root EXPR", "--max-nodes N", "--static", "-o NAME"):
        assert option in doc


# ---- show() --------------------------------------------------------------------------------------


def test_show_names_nodes_after_the_callers_variables():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    w = show(loss)
    assert isinstance(w, GraphWidget)
    assert sorted(by_name(w.snapshot)) == ["loss", "x"]
    assert sorted(by_name(show(loss, names={"total": loss}).snapshot)) == ["total"]


def test_top_level_show_reads_the_same_names():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    assert sorted(by_name(ag.show(y).snapshot)) == ["x", "y"]  # through autograd_lab.show


def test_show_static_returns_a_picture_and_passes_max_nodes():
    from autograd_lab.viz.column import Picture

    x = ag.tensor(3.0, requires_grad=True)
    y = x.exp()
    picture = show(y, static=True)
    assert isinstance(picture, Picture) and "y = Exp" in picture.svg
    assert repr(picture) == "graph picture (3 nodes)"
    assert show(y, max_nodes=5).max_nodes == 5


def test_show_works_in_a_script_without_ipython():
    script = (
        "import sys; sys.modules['IPython'] = None  # as if IPython were not installed\n"
        "import autograd_lab as ag\n"
        "x = ag.tensor(3.0, requires_grad=True); y = x.exp()\n"
        "svg = ag.show(y, static=True)\n"
        "print(type(svg).__name__, 'y = Exp' in svg)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["str", "True"], done.stderr


# ---- in a real kernel, as a notebook shows it ---------------------------------------------------


def test_messages_and_tracebacks_in_a_jupyter_kernel():
    """The same cases in a notebook run by a real ipykernel: what a learner reads."""
    nbclient = pytest.importorskip("nbclient", reason="nbclient (the test extra) is not installed")
    from nbformat.v4 import new_code_cell, new_notebook

    cells = [
        "%load_ext autograd_lab\nimport autograd_lab as ag",
        "%%autograd\nx = 1 + 2",
        "%autograd undefined_name",
        "def double(t):\n    return t.reshape(5) * 2",
        "%%autograd\na = ag.tensor([2.0, 3.0], requires_grad=True)\nb = double(a)",
        "%%autograd\nb = (a *",
    ]
    nb = new_notebook(cells=[new_code_cell(source) for source in cells])
    nbclient.NotebookClient(nb, timeout=120, allow_errors=True).execute()
    outputs = [cell.outputs for cell in nb.cells]

    (no_graph,) = outputs[1]  # printed text only: no widget, no "Press play or step"
    assert no_graph.output_type == "stream" and "this cell built no graph" in no_graph.text

    (undefined,) = outputs[2]  # IPython prints a UsageError as one line on stderr
    assert undefined.output_type == "stream" and undefined.name == "stderr"
    shown = plain(undefined.text)
    assert shown.startswith("UsageError: %autograd undefined_name: name 'undefined_name' is not")
    assert "Could not get source" not in shown

    picture, error = outputs[4]  # the graph up to the error, the failed op marked; then the error
    assert picture.output_type == "display_data" and "reshape()" in picture.data[SVG]
    assert 'stroke="#b91c1c"' in picture.data[SVG]
    assert error.output_type == "error" and error.ename == "RuntimeError"
    frames = plain("\n".join(error.traceback))
    assert "----> 3 b = double(a)" in frames and "in double(t)" in frames
    for internal in ("run_cell_magic", "magic.py", "skipping hidden"):
        assert internal not in frames, internal

    (typo,) = outputs[5]  # the few lines a plain cell shows for a syntax error
    shown = plain("\n".join(typo.traceback))
    assert "line 2" in shown and shown.rstrip().endswith("SyntaxError: incomplete input")
    assert "Traceback" not in shown and "magic.py" not in shown


# ---- the graph of a cell that failed (viz/failed.py) ------------------------------------------------


def failed_mark(graph):
    """(the node marked as failed, its mark)"""
    ((node_id, mark),) = graph.marks.items()
    assert mark["kind"] == "failed" and mark["letters"] == "\u2717"
    return graph.node(node_id), mark


def inputs_of(graph, node_id):
    edges = sorted((e for e in graph.edges if e["target"] == node_id), key=lambda e: e["input"])
    return [graph.node(e["source"]) for e in edges]


def test_a_shape_error_draws_the_graph_so_far_and_the_op_that_failed(shell):
    cell = (
        "%%autograd --static -o g\n"
        "x = ag.ones(4, 3)\n"
        "w1 = ag.ones(3, 4, requires_grad=True)\n"
        "w2 = ag.ones(3, 2, requires_grad=True)\n"
        "h = (x @ w1).tanh()\n"
        "y = h @ w2\n"
    )
    result, captured = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)  # the cell still fails
    graph = shell.user_ns["g"]
    failed, mark = failed_mark(graph)
    # (the shapes are checked in matmul(), before any node is made: the call the line made)
    assert failed["label"] == "matmul()" and failed["op"] == "matmul()"
    # the op's inputs, with the shapes the error is about: h [4, 4] and w2 [3, 2]
    assert [(n["label"], n["shape"]) for n in inputs_of(graph, failed["id"])] == [
        ("h", [4, 4]),
        ("w2", [3, 2]),
    ]
    assert mark["text"].startswith(
        "matmul() failed in forward: RuntimeError: mat1 and mat2 shapes cannot be multiplied "
        "(4x4 and 3x2)"
    )
    assert graph.note.startswith("The cell failed in forward, calling matmul(): RuntimeError")
    # what ran before the error is drawn with its values: tanh(3) in every element of h
    h = inputs_of(graph, failed["id"])[0]  # the result h, drawn once, read by the failed op
    assert h["role"] == "output" and [n["label"] for n in graph.nodes].count("h") == 1
    assert h["value"]["mean"] == pytest.approx(np.tanh(3.0), rel=1e-6)
    # shown first, then the error, as a plain cell shows it: the learner's frames only
    (picture,) = captured.outputs
    assert 'stroke="#b91c1c" stroke-width="3" rx="10"' in picture.data[SVG]
    traceback = plain(captured.stdout)
    assert (
        "----> 6 y = h @ w2" in traceback
        and "shapes cannot be multiplied (4x4 and 3x2)" in traceback
    )
    for internal in ("run_cell_magic", "magic.py", "failed.py"):
        assert internal not in traceback, internal


def test_a_tensor_without_grad_is_drawn_as_an_input_of_the_failed_op(shell):
    cell = "%%autograd --static -o g\nw = ag.ones(3, requires_grad=True)\nc = ag.ones(4)\nw + c\n"
    result, _ = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    graph = shell.user_ns["g"]
    failed, _ = failed_mark(graph)
    assert [(n["label"], n["role"]) for n in inputs_of(graph, failed["id"])] == [
        ("w", "input"),
        ("c", "constant"),
    ]


def test_an_error_checked_before_the_op_names_the_function_called(shell):
    cell = "%%autograd --static -o g\na = ag.tensor([1.0, 2.0], requires_grad=True)\na.sum(dim=5)\n"
    result, _ = run(shell, cell)
    assert isinstance(result.error_in_exec, IndexError)
    failed, mark = failed_mark(shell.user_ns["g"])
    assert failed["label"] == "sum()"
    assert [n["label"] for n in inputs_of(shell.user_ns["g"], failed["id"])] == ["a"]
    assert "IndexError: dimension 5 is out of range" in mark["text"]


def test_a_second_backward_marks_the_node_whose_saved_tensors_are_gone(shell):
    run(shell, "a = ag.tensor([1.0, 2.0], requires_grad=True)\nb = a.exp().sum()\nb.backward()\n")
    # built in an earlier cell: the graph is drawn from where backward started
    result, captured = run(shell, "%%autograd --static -o g\nb.backward()\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    graph = shell.user_ns["g"]
    failed, mark = failed_mark(graph)
    assert failed["op"] == "ExpBackward0"
    assert (
        "failed in backward: RuntimeError: Trying to backward through the graph a second time"
        in (mark["text"])
    )
    assert [n["op"] for n in graph.nodes if n["kind"] == "op"] == ["ExpBackward0", "SumBackward0"]
    # the backward events recorded before the error: Sum ran and sent, then Exp started
    assert [(e["kind"], graph.node(e["node"])["op"]) for e in graph.events][-1] == (
        "run",
        "ExpBackward0",
    )
    assert "Trying to backward through the graph a second time" in plain(captured.stdout)


def test_a_nan_in_anomaly_mode_marks_the_node_that_made_it(shell):
    cell = (
        "%%autograd --static -o g\n"
        "a = ag.tensor([-1.0, 4.0], requires_grad=True)\n"
        "with ag.autograd.detect_anomaly():\n"
        "    b = (a.sqrt() * 0).sum()\n"
        "    b.backward()\n"
    )
    result, _ = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    graph = shell.user_ns["g"]
    failed, mark = failed_mark(graph)
    assert failed["op"] == "SqrtBackward0" and "produced NaN" in mark["text"]
    assert failed["value"]["values"] == ["nan", 2.0]  # sqrt(-1) is where the NaN came from


def test_a_failed_cell_draws_the_live_widget_with_its_mark(shell):
    cell = "%%autograd -o w\nw1 = ag.ones(3, requires_grad=True)\nw1.view(2, 2)\n"
    result, captured = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    widget = shell.user_ns["w"]
    assert isinstance(widget, GraphWidget)
    ((node_id, mark),) = widget.graph["marks"].items()
    assert mark["kind"] == "failed" and widget.snapshot.node(node_id)["label"] == "view()"
    assert widget.step == widget.n_steps  # it opens on what ran, not on step 0
    assert WIDGET in captured.outputs[0].data


def test_an_error_that_is_no_op_draws_nothing(shell):
    result, captured = run(
        shell, "%%autograd\na = ag.tensor(1.0, requires_grad=True) * 2\nundefined_name\n"
    )
    assert isinstance(result.error_in_exec, NameError)
    assert captured.outputs == []


def test_a_failed_pytorch_cell_fails_as_usual_without_a_picture(shell):
    # PyTorch's failing op is not located (its frames are in torch's C++): the error alone
    pytest.importorskip("torch", reason="PyTorch (the test oracle) is not installed")
    cell = (
        "%%autograd\nimport torch\nw = torch.ones(3, 4, requires_grad=True)\n"
        "h = w.tanh()\nh @ torch.ones(3, 2)\n"
    )
    result, captured = run(shell, cell)
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "cannot be multiplied" in str(result.error_in_exec)
    assert captured.outputs == []
