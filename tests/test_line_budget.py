"""The engine core must stay short enough to read in one sitting (tinygrad-style line budget).

Counted: lines holding code, i.e. not blank, not comments, not docstrings — error messages count.
"""

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "autograd_lab"
CORE = ["tensor.py", "autograd/function.py", "autograd/engine.py", "autograd/grad_mode.py"]
BUDGET = 1000


def code_lines(path):
    source = path.read_text()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(
            node
        ):
            first = node.body[0]
            docstrings.update(range(first.lineno, first.end_lineno + 1))
    lines = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip and token.type != tokenize.ENDMARKER:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in docstrings)
    return len(lines)


def test_engine_core_fits_the_line_budget():
    counts = {name: code_lines(PACKAGE / name) for name in CORE}
    total = sum(counts.values())
    assert total <= BUDGET, f"engine core has {total} code lines (budget {BUDGET}): {counts}"


def test_line_counter_ignores_comments_and_docstrings(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Doc\nstring."""\n\n# a comment\nx = 1  # trailing\n\n\ndef f():\n    """Doc."""\n    return x\n'
    )
    assert code_lines(sample) == 3  # x = 1, def f():, return x
