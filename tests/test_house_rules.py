"""Rules of the house that a reader of the package relies on (see CONTRIBUTING.md):

- arrows point down: no import circle in the package, except the one knot every PyTorch-like
  engine has: Tensor's methods are ops, ops make Tensors, and `backward()` runs the engine on them;
- the eager core decodes no tricks: no reference counting in the package;
- `ruff format` owns the layout: `# fmt: skip` only for aligned tables.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "autograd_lab"

# The one knot: tensor.py <-> ops (and the autograd modules ops and Tensor.backward use).
KNOT = {"tensor", "autograd.function", "autograd.engine", "autograd.anomaly"}
# Tables whose alignment is their point (coefficients, the operator precedence, the op table).
ALIGNED_TABLES = {"ops/scalar.py": 4, "ops/table.py": 1, "compile/extras/kernel_math.py": 3}


def modules():
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name, path, known):
    """The package's modules that module `name` imports, anywhere in it (functions included)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:  # `from . import ops` imports the module ops
                full = f"{target}.{alias.name}".lstrip(".")
                found.add(full if full in known else target)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograd_lab"):
            found.add(node.module.removeprefix("autograd_lab").lstrip("."))
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
            found |= {
                n.removeprefix("autograd_lab").lstrip(".")
                for n in names
                if n.startswith("autograd_lab")
            }
    resolved = set()
    for target in found:
        while target and target not in known:  # a name inside a module: the module
            target = target.rpartition(".")[0]
        if target != name:
            resolved.add(target)
    return resolved


def circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_beyond_the_tensor_ops_knot():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    for component in circles(graph):
        outside = {
            m for m in component if m not in KNOT and m != "ops" and not m.startswith("ops.")
        }
        assert not outside, f"an import circle: {sorted(component)}"


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_no_reference_counting_in_the_package():
    for path in PACKAGE.rglob("*.py"):
        assert "getrefcount" not in path.read_text(), f"{path.relative_to(PACKAGE)}"


def test_ruff_format_owns_the_layout():
    for path in PACKAGE.rglob("*.py"):
        name = path.relative_to(PACKAGE).as_posix()
        count = path.read_text().count("# fmt: skip")
        assert count == ALIGNED_TABLES.get(name, 0), f"{name}: {count} '# fmt: skip'"
