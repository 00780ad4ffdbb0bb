"""Imports only point down the pipeline (DESIGN.md, "Layering"):

cli → watch → api → report → replay → server, selection, gate, compare → rules, whatif, cluster → indexes, workload →
shapes → parse → ingest → models. Packages of one rank never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import idxadvisor

PACKAGE = Path(idxadvisor.__file__).parent
FOUNDATION = {"models", "errors", "exitcodes", "units", "config", "runtime", "__init__"}  # may import one another
RANK = {**{name: 0 for name in FOUNDATION}, "ingest": 1, "parse": 2, "shapes": 3, "indexes": 4, "workload": 4,
        "rules": 5, "whatif": 5, "cluster": 5, "server": 6, "selection": 6, "gate": 6, "compare": 6, "replay": 7,
        "report": 8, "api": 9, "watch": 10, "testing": 10, "cli": 11, "__main__": 12}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.startswith("idxadvisor")}


def test_every_layer_is_known() -> None:
    layers = {path.stem if path.parent == PACKAGE else path.relative_to(PACKAGE).parts[0]
              for path in PACKAGE.rglob("*.py")}
    assert layers <= set(RANK), layers - set(RANK)


def test_imports_only_point_down() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        own = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        for imported in imports_of(path):
            other = layer(imported)
            if other == own or (own in FOUNDATION and other in FOUNDATION):
                continue
            if RANK[other] > RANK[own] or (RANK[other] == RANK[own] and other != own):
                violations.append(f"{relative} ({own}) imports {imported} ({other})")
    assert not violations, "\n".join(violations)


def test_the_library_never_prints() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] in ("cli", "__main__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not offenders, offenders
