"""No import cycle between the package's modules (one direction of dependency per pair).

The graph holds every import a module runs when it is loaded: the statements at its top level, including those under
an ``if`` (so ``if TYPE_CHECKING:`` imports count too). Imports inside functions are left out on purpose: they run
at call time, and the package uses them to load optional or heavy parts lazily (``report/__init__.py`` loads its
renderers on demand, ``report/comparison.py`` loads the HTML renderer only for ``--format html``). An imported name
that is itself a module (``from idxadvisor.report import html``) is an edge to that module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import idxadvisor

PACKAGE = Path(idxadvisor.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def load_time_statements(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements and those nested in top-level ``if``/``try`` blocks (not function or class bodies)."""
    found: list[ast.stmt] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        statement = pending.pop()
        found.append(statement)
        if isinstance(statement, ast.If):
            pending += statement.body + statement.orelse
        elif isinstance(statement, ast.Try):
            pending += statement.body + statement.orelse + statement.finalbody
            for handler in statement.handlers:
                pending += handler.body
    return found


def load_time_imports(path: Path, modules: set[str]) -> set[str]:
    names: set[str] = set()
    for statement in load_time_statements(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(statement, ast.Import):
            names |= {alias.name for alias in statement.names}
        elif isinstance(statement, ast.ImportFrom) and statement.module and statement.level == 0:
            names.add(statement.module)
            names |= {f"{statement.module}.{alias.name}" for alias in statement.names}
    return {name for name in names if name in modules}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: load_time_imports(path, modules) - {name} for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_detector_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(component) for component in found)


def test_the_whatif_and_compare_pairs_point_one_way() -> None:
    graph = import_graph()
    assert "idxadvisor.whatif.explainer" in graph["idxadvisor.whatif.pipeline"]
    assert "idxadvisor.whatif.pipeline" not in graph["idxadvisor.whatif.explainer"]
    assert "idxadvisor.whatif.estimator" not in graph["idxadvisor.whatif.explainer"]
    assert "idxadvisor.report.comparison" not in graph["idxadvisor.report.html_compare"]
