"""The package's layering, read from its own imports (`ARCHITECTURE.md` draws it).

Every module of `rlx_xdsl` belongs to one layer; a module may import its own layer and
the layers below it, never one above (function-level imports count too: a lazy import
is still a dependency). The import graph has no circles but the listed ones, and the
package root holds at most 10 modules. A new module that breaks a rule fails here with
the offending import.
"""

from __future__ import annotations

import ast
import pathlib
import warnings

import pytest

import rlx_xdsl

PACKAGE = pathlib.Path(rlx_xdsl.__file__).parent

LAYERS = [
    ("base", ["rlx_xdsl", "rlx_xdsl.layers", "rlx_xdsl.registry", "rlx_xdsl.dtypes", "rlx_xdsl.numerics",
              "rlx_xdsl.shapes", "rlx_xdsl.support"]),
    ("ir", ["rlx_xdsl.ir"]),
    ("dialects", ["rlx_xdsl.dialects"]),
    ("formats", ["rlx_xdsl.formats"]),
    ("building", ["rlx_xdsl.building", "rlx_xdsl.context"]),
    ("interpreters", ["rlx_xdsl.interpreters"]),
    ("passes", ["rlx_xdsl.transforms", "rlx_xdsl.conversions", "rlx_xdsl.autodiff", "rlx_xdsl.batching"]),
    ("backends", ["rlx_xdsl.backends"]),
    ("run", ["rlx_xdsl.run"]),
    ("importers", ["rlx_xdsl.importers"]),
    ("tools", ["rlx_xdsl.tools", "rlx_xdsl.universe", "rlx_xdsl.testing"]),
]
"""The layers, bottom first, and the modules or packages in each."""

UPWARD_IMPORTS = {
    ("rlx_xdsl.interpreters.hir.lowered", "rlx_xdsl.conversions.hir_to_mir.lower"):
        "an HIR block means what its lowering computes: its kernel runs the lowering",
}
"""Imports allowed against the layering, and why."""

CIRCLES = {
    frozenset({"rlx_xdsl.dialects.mir.regions", "rlx_xdsl.dialects.mir.fused_regions",
               "rlx_xdsl.dialects.mir.structured"}):
        "mir.yield's HasParent trait names the region ops of later groups through xDSL's lazy_traits_def",
}
"""Import circles that xDSL's own registration pattern needs, and why."""


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The module of `rlx_xdsl` that importing `name` runs (a module, or its package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """The `rlx_xdsl` modules `module` imports, at any depth of its code (not under TYPE_CHECKING)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(r for a in child.names if (r := _resolve(a.name)))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package
                    for _ in range(child.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in child.names:
                    target = _resolve(f"{base}.{alias.name}") if f"{base}.{alias.name}" in MODULES else _resolve(base)
                    if target:
                        found.add(target)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def layer_of(module: str) -> int:
    """The index in `LAYERS` of the longest prefix that holds `module`."""
    best, best_length = None, -1
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > best_length:
                best, best_length = index, len(member)
    assert best is not None, f"{module} is in no layer: add it to LAYERS (and to ARCHITECTURE.md)"
    return best


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_a_layer_above_its_own():
    upward = sorted(
        f"{importer} ({LAYERS[layer_of(importer)][0]}) imports {imported} ({LAYERS[layer_of(imported)][0]})"
        for importer, imported_modules in GRAPH.items()
        for imported in imported_modules
        if layer_of(imported) > layer_of(importer) and (importer, imported) not in UPWARD_IMPORTS
    )
    assert upward == []


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in graph:
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
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_import_graph_has_no_circles_but_the_listed_ones():
    assert {c for c in _circles(GRAPH) if c not in CIRCLES} == set()


def test_the_checks_find_a_circle_and_an_upward_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _circles(graph) == [frozenset({"a", "b", "c"})]
    assert layer_of("rlx_xdsl.ir.parser") < layer_of("rlx_xdsl.transforms.dce")


def test_the_package_root_holds_at_most_ten_modules():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 10, root


@pytest.mark.parametrize("old, new", [("rlx_xdsl.builder", "rlx_xdsl.building.builder"),
                                      ("rlx_xdsl.weights", "rlx_xdsl.formats.weights")])
def test_old_import_paths_of_moved_modules_still_work_with_a_warning(old, new):
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        moved = importlib.import_module(old)
    assert moved is importlib.import_module(new)


def test_run_function_is_still_reachable_from_the_interpreters_package():
    from rlx_xdsl import interpreters, run

    with pytest.warns(DeprecationWarning, match="rlx_xdsl.interpreters.run_function moved to rlx_xdsl.run.run_function"):
        assert interpreters.run_function is run.run_function
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert interpreters.interpret_function is not None
