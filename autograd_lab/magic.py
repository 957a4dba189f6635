"""The `%autograd` magics: draw the graph a notebook cell builds, and watch backward run through it.

    %load_ext autograd_lab

    %%autograd -b
    a = ag.tensor(2.0, requires_grad=True)
    b = ag.tensor(6.0, requires_grad=True)
    c = a + b
    d = b + 1
    e = c * d                 # -b then calls e.backward() and records the backward pass

    %autograd e               # the graph behind a tensor you already have

    %autograd_torch           # from now on `import torch` gives autograd_lab (`off` undoes it)

Options: `-b/--backward`, `--root EXPR` (what to draw; default: the cell's last expression, else
the results nothing else used), `--max-nodes N`, `--static` (an SVG picture instead of the live
widget), `-o NAME` (keep the widget, or the Snapshot with --static, in a variable). `%autograd?` lists
them. A cell that raises draws the graph it recorded up to the error first, the op that failed
framed in red (viz/failed.py), then fails as any cell does. Scripts and tests have the same
features as functions: `show(e)` and
`with autograd_lab.record() as recording: ...`.
"""

import ast
from contextlib import contextmanager
from functools import partial

from .as_torch import as_torch
from .compile.api import CompiledFunction
from .tensor import Tensor
from .viz.compiled import compiled_view
from .viz.from_torch import is_torch_tensor
from .viz.graph import caller_tensor_names, record, snapshot, tensor_names
from .viz.torch_recording import TorchRecording, record_torch_if_imported

try:  # IPython is needed only for the magics: show() works in plain Python too
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
    from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
except ImportError:

    def _without_ipython(*args, **kwargs):  # stands in for IPython's decorators below
        return lambda function: function

    Magics, UsageError, magics_class = object, RuntimeError, lambda cls: cls
    line_magic = cell_magic = magic_arguments = argument = _without_ipython


def load_ipython_extension(ipython):
    """Called by `%load_ext autograd_lab`: adds `%autograd`, `%%autograd` and `%autograd_torch`."""
    ipython.register_magics(AutogradMagics)


# ---- the plain functions -------------------------------------------------------------------------


def show(*roots, names=None, static=False, max_nodes=None):
    """The graph behind `roots` as a live widget (or, with `static=True`, an SVG picture).

        e = (a + b) * (b + 1)
        autograd_lab.show(e)          # a notebook displays it when it ends the cell

    Nodes are labelled with your variable names: `names` maps names to tensors (e.g.
    `names={"loss": loss}`); by default the names of the tensors visible where show() is called.
    `max_nodes` collapses scopes (layers) of bigger graphs into boxes you can expand.

    A compiled function (`autograd_lab.compile(fn)`, called once) shows what it traced: one box
    per call, the fused groups framed, each value's buffer and lifetime (viz/compiled.py).
    """
    if len(roots) == 1 and isinstance(roots[0], CompiledFunction):
        return _view(compiled_view(roots[0].current()), static, max_nodes, names={})
    if names is None:
        names = caller_tensor_names()
    graph = snapshot(*roots, names=tensor_names(names))
    return _view(graph, static, max_nodes)


def _view(graph, static, max_nodes, names=None):
    """The widget for a Snapshot, or its picture (a `Picture` that every notebook client shows,
    untrusted ones too; in plain Python the SVG text itself)."""
    if static:
        from .viz.column import Picture, fitted_svg

        options = {} if max_nodes is None else {"threshold": max_nodes}
        svg = fitted_svg(graph, **options)  # wrapped to a notebook's column, never scaled down
        try:
            import IPython  # noqa: F401 - only to know whether a notebook may display it
        except ImportError:  # plain Python: the SVG text itself
            return svg
        nodes = len(graph.nodes) if hasattr(graph, "nodes") else len(graph["nodes"])
        return Picture(svg, f"graph picture ({nodes} nodes)")
    try:
        from .viz.widget import GraphWidget
    except ImportError as error:
        raise ImportError(
            "The live graph widget needs anywidget (`pip install 'autograd_lab[lab]'`). "
            "Without it, draw a static picture: show(..., static=True) or %%autograd --static."
        ) from error
    options = {} if names is None else {"names": names}
    if max_nodes is not None:
        options["max_nodes"] = max_nodes
    return GraphWidget(graph, **options)


# ---- the magics ----------------------------------------------------------------------------------

HELP = {  # the options' help, shown by `%autograd?` and `%%autograd?`
    "backward": "after the cell, call backward() on its result and record the backward pass",
    "root": "draw the graph behind EXPR (default: the cell's last expression, else the results "
    "the cell made that nothing else used)",
    "max_nodes": "collapse scopes (layers) when the graph has more than N nodes",
    "static": "draw an SVG picture, not the live widget",
    "output": "keep the widget (with --static: the Snapshot) in the variable NAME",
}


@magics_class
class AutogradMagics(Magics):
    """`%%autograd` (run a cell and draw the graph it built) and `%autograd EXPR`."""

    @magic_arguments("%autograd")  # IPython adds one more "%" when it shows help
    @argument("-b", "--backward", action="store_true", help=HELP["backward"])
    @argument("--root", metavar="EXPR", help=HELP["root"])
    @argument("--max-nodes", type=int, metavar="N", help=HELP["max_nodes"])
    @argument("--static", action="store_true", help=HELP["static"])
    @argument("-o", "--output", metavar="NAME", help=HELP["output"])
    @cell_magic("autograd")
    def autograd_cell(self, line, cell):
        """Run the cell, recording every node it builds, and draw the graph."""
        __tracebackhide__ = True  # IPython leaves this frame out of the user's traceback
        args = parse_argstring(self.autograd_cell, line)
        _check(args)
        # PyTorch's ops too, when it is imported (a torch tensor is then drawn as ours is)
        with record() as recorded, record_torch_if_imported() as torch_recorded:
            try:
                roots = self._run_and_choose_roots(cell, line, args, recorded, torch_recorded)
            except (UsageError, CellSyntaxError):
                raise  # a mistake in the magic's line or the cell's syntax: nothing ran to draw
            except Exception as error:
                # draw what the cell built up to the error, the failing op marked (viz/failed.py),
                # then fail as a plain cell does, with the learner's traceback
                self._display_failed(error, recorded, args)
                raise
            if roots and is_torch_tensor(roots[0]) and torch_recorded is None:
                torch_recorded = TorchRecording()  # the cell imported torch: watch its backward
            if args.backward and (roots or recorded.nodes):
                try:
                    _backward(roots, torch_recorded)
                except UsageError:
                    raise
                except Exception as error:
                    self._display_failed(error, recorded, args)
                    raise
        mine = torch_recorded if roots and is_torch_tensor(roots[0]) else recorded
        graph = mine.graph(*roots, names=tensor_names(self.shell.user_ns))
        if not graph.nodes:  # say so, rather than show an empty widget that invites "play"
            print(NO_GRAPH)
            return
        self._display(graph, args)

    def _run_and_choose_roots(self, cell, line, args, recorded, torch_recorded):
        """Run the cell; the tensors to draw: --root, else the cell's result, else what it left
        unused."""
        __tracebackhide__ = True
        result = _run_cell(self.shell, cell, header=f"%%autograd {line}".rstrip())
        if args.root is not None:
            value = _evaluate(self.shell, _unquote(args.root), f"--root {args.root}")
            return _tensors_in(value, f"--root {args.root}")
        if _is_tensors(result):
            return _tensors_in(result, "the cell's result")
        # the cell ends with a statement: draw what it left unused (its results)
        return recorded.roots() or (torch_recorded.roots() if torch_recorded else [])

    def _display_failed(self, error, recorded, args):
        """The graph recorded before `error`, the op that failed marked, if an op failed."""
        from .viz.failed import failed_graph

        try:
            graph = failed_graph(error, recorded, tensor_names(self.shell.user_ns))
        except Exception:  # the learner's error is what matters: never hide it behind ours
            return
        if graph is not None and graph.nodes:
            self._display(graph, args, at_the_end=True)

    @magic_arguments("autograd")
    @argument("--max-nodes", type=int, metavar="N", help=HELP["max_nodes"])
    @argument("--static", action="store_true", help=HELP["static"])
    @argument("-o", "--output", metavar="NAME", help=HELP["output"])
    @argument("expression", nargs="+", help="the tensor to draw, e.g. loss")
    @line_magic("autograd")
    def autograd_line(self, line):
        """Draw the graph behind a tensor you already have: `%autograd loss`."""
        __tracebackhide__ = True
        args = parse_argstring(self.autograd_line, line)
        _check(args)
        expression = " ".join(args.expression)
        # An expression such as `c * d` makes new nodes: record them to keep their values.
        with record() as recorded, record_torch_if_imported() as torch_recorded:
            value = _evaluate(self.shell, _unquote(expression), f"%autograd {expression}")
            roots = _tensors_in(value, expression)
        names = tensor_names(self.shell.user_ns)
        if is_torch_tensor(roots[0]):  # a PyTorch tensor (viz/from_torch.py)
            graph = snapshot(*roots, names=names, recording=torch_recorded)
        else:
            graph = recorded.graph(*roots, names=names)
        self._display(graph, args)

    @line_magic("autograd_torch")
    def autograd_torch(self, line):
        """`%autograd_torch`: from now on `import torch` imports autograd_lab; `off` undoes it."""
        word = line.strip().lower()
        if word not in ("", "on", "off"):
            raise UsageError(f"%autograd_torch takes nothing, 'on' or 'off'; got {line.strip()!r}")
        as_torch(word != "off")
        if word == "off":
            print("`import torch` imports PyTorch again")
        else:
            print("`import torch` now imports autograd_lab (undo: %autograd_torch off)")

    def _display(self, graph, args, at_the_end=False):
        from IPython.display import display

        view = _view(graph, args.static, args.max_nodes)
        if at_the_end and not args.static:  # a failed cell: show what ran, up to the error
            view.step = view.n_steps
        display(view)
        if args.output:
            self.shell.user_ns[args.output] = graph if args.static else view
        # Nothing is returned: the picture is shown once, and the cell's value is not shown again.


def _check(args):
    """Refuse bad option values before the cell runs."""
    if args.max_nodes is not None and args.max_nodes < 1:
        raise UsageError(f"--max-nodes must be a positive number of nodes; got {args.max_nodes}")
    if args.output is not None and not args.output.isidentifier():
        raise UsageError(f"-o needs a variable name to store the result in; got {args.output!r}")


NO_GRAPH = (
    "%%autograd: this cell built no graph, so there is nothing to draw. A graph is recorded when "
    "an operation uses a tensor with requires_grad=True, e.g.\n"
    "    a = autograd_lab.tensor(2.0, requires_grad=True)\n"
    "    e = a * 3"
)


def _run_cell(shell, cell, header):
    """Run the cell's code in the notebook's namespace; return its last expression's value.

    Like `%%time`: IPython's own transformations (magics, `!shell` lines) and compiler, so errors
    show the cell's lines as usual; unlike `%%time`, errors are not caught, so the cell fails like
    any other and "Run All" stops there.
    """
    __tracebackhide__ = True
    # The header line keeps line numbers in tracebacks equal to those of the notebook cell.
    source = "#" + header + "\n" + shell.transform_cell(cell)
    filename = shell.compile.cache(source, shell.execution_count)
    try:
        tree = shell.transform_ast(shell.compile.ast_parse(source, filename=filename))
    except SyntaxError as error:  # a typo in the cell: show it as a plain cell's would be shown
        raise CellSyntaxError(shell, error) from None
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):  # evaluated separately to keep its value
        last = ast.Expression(tree.body.pop().value)
    with _learners_frames_only(shell, filename):
        exec(shell.compile(tree, filename, "exec"), shell.user_global_ns, shell.user_ns)
        if last is None:
            return None
        return eval(shell.compile(last, filename, "eval"), shell.user_global_ns, shell.user_ns)


def _evaluate(shell, expression, what):
    """The value of an expression the learner typed after the magic (`%autograd c * d`).

    Compiled as a cell of its own (as `_run_cell` does), so an error in it shows the expression's
    line, not "Could not get source"; a name not yet defined is said in one line.
    """
    __tracebackhide__ = True
    filename = shell.compile.cache(expression + "\n", shell.execution_count)
    try:
        code = shell.compile(expression, filename, "eval")
    except SyntaxError as error:
        raise UsageError(
            f"{what}: {expression!r} is not a Python expression ({error.msg})"
        ) from None
    try:
        with _learners_frames_only(shell, filename):
            return eval(code, shell.user_global_ns, shell.user_ns)
    except NameError as error:
        if _innermost_file(error) != filename:  # raised deeper, in code the learner called
            raise
        raise UsageError(
            f"{what}: {error}. Run the cell that defines {error.name!r} first, or check the "
            "spelling."
        ) from None


@contextmanager
def _learners_frames_only(shell, filename):
    """An error raised in the learner's code shows only the learner's frames, as a plain cell does.

    Without this, the traceback would start with IPython's `get_ipython().run_cell_magic(...)`
    line (the whole cell as one string) and the magic's own frames. IPython draws an exception's
    traceback with its `_render_traceback_` when it has one: the exception is still the learner's
    (its type, message and `error_in_exec`), only the frames before the cell's first line are cut.
    """
    __tracebackhide__ = True
    try:
        yield
    except (Exception, KeyboardInterrupt) as error:
        try:
            error._render_traceback_ = partial(_render_from, shell, error, filename)
        except AttributeError:  # an exception class that takes no attributes: shown in full
            pass
        raise


class CellSyntaxError(Exception):
    """A syntax error in a `%%autograd` cell, shown exactly as IPython shows one in a plain cell.

    IPython draws a SyntaxError that comes out of a magic with every frame it passed through (the
    magic's and IPython's own) and, unlike other errors, lets no exception change that; so the
    magic raises this instead, which draws itself as the plain cell's message. `.error` is
    Python's SyntaxError, with the line numbered as in the notebook cell.
    """

    def __init__(self, shell, error):
        super().__init__(f"{error.msg} (line {error.lineno} of the cell)")
        self.error = error
        self._shell = shell

    def _render_traceback_(self):
        return self._shell.SyntaxTB.structured_traceback(SyntaxError, self.error, [])


def _innermost_file(error):
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename


def _render_from(shell, error, filename):
    """IPython's traceback text for `error`, starting at the first frame in `filename`."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:  # raised again elsewhere since (`raise error` in a later cell): all of it
        tb = error.__traceback__
    return shell.InteractiveTB.structured_traceback(type(error), error, tb, tb_offset=0)


def _is_tensors(value):
    if isinstance(value, (tuple, list)):
        return len(value) > 0 and all(_is_tensor(v) for v in value)
    return _is_tensor(value)


def _is_tensor(value):
    return isinstance(value, Tensor) or is_torch_tensor(value)


def _tensors_in(value, what):
    """A tensor, or a tuple/list of them, as a list of roots to draw."""
    if not _is_tensors(value):
        raise UsageError(
            f"{what} is not a tensor (its type is {type(value).__name__}): nothing to draw"
        )
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _backward(roots, torch_recorded=None):
    """`-b`: call backward() on the one result, as `loss.backward()` in a training loop."""
    if len(roots) != 1:
        raise UsageError(
            f"-b calls backward() on one result (a loss), but there are {len(roots)} to choose "
            "from. "
            "End the cell with the loss, or name it with --root loss."
        )
    (root,) = roots
    if root.numel() != 1:
        raise UsageError(
            f"-b calls backward() without arguments, which needs a result holding one number "
            f"(a loss); this one has shape {list(root.shape)}. Reduce it first, e.g. end the "
            "cell with y.sum(), or call y.backward(gradient=...) in the cell yourself."
        )
    if is_torch_tensor(root):  # PyTorch's engine runs it; the recording watches each step
        torch_recorded.watch_backward([root], root.backward)
    else:
        root.backward()


def _unquote(text):
    """`--root "e * 2"`: IPython keeps the quotes around an argument; an expression does not."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text
