"""The trunk's shape, checked from the source text: no import cycle, between modules or between
packages, imports that point down the layers, rankhouse's own imports at the top of each
module, modules of a readable size, and docs/ARCHITECTURE.md drawing every package in its
layer and naming every module.

The layers, top to bottom (docs/ARCHITECTURE.md draws them):

    cli      the command line (rankhouse.cli)
    api      the package's functions and the Warehouse facade
    verbs    evaluation, compare, regress, history, trec_eval, and what they return and
             show (results, present: tables, panels and frames; report; pairing)
    core     engine, ingest, measures, backends, catalog, stats
    base     errors, defaults, lazy, duck, ...

A module may import from its own layer or a lower one, never a higher one. Packages are
held to the same: a module of package A importing one of package B is an arrow A -> B (a
top-level module such as ``rankhouse.history`` is a node of its own), and the arrows make no
loop, so that each package reads, and is tested, with only what is below it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "rankhouse"
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"

#: Module (or package) name -> layer; the longest matching prefix wins.
LAYERS = {
    "rankhouse.cli": "cli",
    "rankhouse.__main__": "cli",
    "rankhouse": "api",  # the package's own __init__ only (see _layer)
    "rankhouse.warehouse": "api",
    "rankhouse.evaluation": "verbs",
    "rankhouse.compare": "verbs",
    "rankhouse.regress": "verbs",
    "rankhouse.history": "verbs",
    "rankhouse.trec_eval": "verbs",
    "rankhouse.results": "verbs",
    "rankhouse.present": "verbs",
    "rankhouse.report": "verbs",
    "rankhouse.pairing": "verbs",
    "rankhouse.judgments": "verbs",
    "rankhouse.engine": "core",
    "rankhouse.ingest": "core",
    "rankhouse.measures": "core",
    "rankhouse.backends": "core",
    "rankhouse.catalog": "core",
    "rankhouse.stats": "core",
    "rankhouse.labels": "core",
    "rankhouse.errors": "base",
    "rankhouse.defaults": "base",
    "rankhouse.lazy": "base",
    "rankhouse.duck": "base",
    "rankhouse.cells": "base",
    "rankhouse.columns": "base",
    "rankhouse.outputs": "base",
}
ORDER = ["base", "core", "verbs", "api", "cli"]

#: Modules that may import rankhouse's own modules inside a function, and why. Nowhere else:
#: an import inside a function that exists to dodge a cycle is a cycle.
LATE_IMPORTS = {
    "rankhouse": "the public API loads the library when first used: `import rankhouse` and "
    "the console script (which imports this package first) stay light",
    "rankhouse.cli": "a command imports the library it runs when it runs: `--help` and "
    "trec-eval load none of the rest (the start-up budget)",
    "rankhouse.warehouse": "each verb of the Warehouse imports what it runs when called: "
    "`runs list` loads no evaluator, gate or report (31 modules, not 163: within 1.2x of "
    "`import duckdb`)",
    "rankhouse.evaluation.flow": "the verb loads the engine (evaluation.computing) only when "
    "something is to be computed: `eval` of stored values loads no engine",
    "rankhouse.evaluation.inputs": "a file or data given is read by the ingest's readers, "
    "loaded when one is given, and a measure name by the parser, loaded for a name that is "
    "no stored label: `eval` of stored names and labels loads neither",
    "rankhouse.history": "the measure parser loads for a name that is no stored label, the "
    "notebook's frame for a DataFrame: `history -m AP` of stored values loads neither",
    "rankhouse.results": "a result is drawn as HTML (rankhouse.present) when a notebook or "
    "the report asks: `eval` of stored values prints rows and loads no drawing",
    "rankhouse.present": "the measures' directions load when a table marks the best value: "
    "a history table marks none",
}

#: Modules over :data:`MAX_LINES`, and why. The list may only shrink.
LONG_MODULES: dict[str, str] = {
    "rankhouse/warehouse.py": "one concept, the facade: the one Warehouse class, a public "
    "method per verb whose docstring is the API's reference for its keywords; each body only "
    "packs the keywords into the verb's options and calls the verb",
    "rankhouse/measures/catalog.py": "one concept, the table of every declared measure, read "
    "top to bottom in the order `rankhouse measures` lists them (trec_eval's catalogue, then "
    "the C/W/L family, Accuracy, Compat and ndeval's diversity measures); split by home tool it "
    "would be one table in two files",
}
#: A module holds one concept a reader keeps in mind, whatever its length (about 150-600
#: lines: the developers' guide). 400 was a cap that split concepts into fragments (issue
#: 36); past 600 a module is more than one concept: split it by concept, never by length.
MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _package_of(name: str) -> str:
    path = MODULES[name]
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _targets(name: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """rankhouse's modules that the import statement ``node`` of module ``name`` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    if node.level:
        base = _package_of(name).split(".")
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    submodules = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in MODULES]
    # `from . import sibling` needs the package itself (its __init__) as well: counted, so
    # that a package whose __init__ imports the module that imports it is a cycle
    found = [source] if source in MODULES else []
    return found + submodules


def _imports() -> dict[str, dict[str, set[str]]]:
    """module -> {"top" | "late" | "typing": the rankhouse modules it imports there}."""
    found: dict[str, dict[str, set[str]]] = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        kinds: dict[str, set[str]] = defaultdict(set)
        typing_blocks = [
            node
            for node in tree.body
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        ]
        typing_nodes = {id(n) for block in typing_blocks for n in ast.walk(block)}
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            kind = "typing" if id(node) in typing_nodes else "top" if id(node) in top else "late"
            kinds[kind].update(t for t in _targets(name, node) if t != name)
        found[name] = kinds
    return found


IMPORTS = _imports()


def _layer(name: str) -> str:
    best = max(
        (prefix for prefix in LAYERS if name == prefix or name.startswith(prefix + ".")), key=len
    )
    return LAYERS[best]


def _package(name: str) -> str:
    """The node of module ``name`` in the package graph: ``rankhouse.ingest`` for every
    module under ingest/; a top-level module, and the package root, for itself."""
    return ".".join(name.split(".")[:2])


def _package_imports() -> dict[str, set[str]]:
    """package -> the packages its modules import (anywhere: at the top, inside a function,
    for type checking)."""
    edges: dict[str, set[str]] = {_package(name): set() for name in MODULES}
    for name, found in IMPORTS.items():
        edges[_package(name)].update(_package(target) for target in set().union(*found.values()))
    return {package: targets - {package} for package, targets in edges.items()}


PACKAGES = _package_imports()


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
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

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer():
    assert all(_layer(name) in ORDER for name in MODULES)


@pytest.mark.parametrize("kinds", [("top", "late"), ("top", "late", "typing")])
def test_no_import_cycle(kinds):
    edges = {name: set().union(*(found[k] for k in kinds)) for name, found in IMPORTS.items()}
    assert _cycles(edges) == []


def test_imports_point_down_the_layers():
    upward = [
        f"{name} ({_layer(name)}) imports {target} ({_layer(target)})"
        for name, found in IMPORTS.items()
        for target in set().union(*found.values())
        if ORDER.index(_layer(target)) > ORDER.index(_layer(name))
    ]
    assert upward == []


def test_no_loop_between_packages():
    assert _cycles(PACKAGES) == [], "a package loop: move the code that closes it (issue 36)"


def test_package_arrows_point_down_the_layers():
    upward = [
        f"{package} ({_layer(package)}) -> {target} ({_layer(target)})"
        for package, targets in sorted(PACKAGES.items())
        for target in sorted(targets)
        if ORDER.index(_layer(target)) > ORDER.index(_layer(package))
    ]
    assert upward == []


def _drawn_layers() -> dict[str, str]:
    """layer -> its text in docs/ARCHITECTURE.md's drawing (the first code block under "The
    layers": a line opening with the layer's name, and the indented lines after it)."""
    text = ARCHITECTURE.read_text(encoding="utf-8").split("## The layers", 1)[1]
    drawing = text.split("```", 2)[1]
    drawn: dict[str, str] = defaultdict(str)
    layer = None
    for line in drawing.splitlines():
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if first in ORDER and not line[0].isspace():
            layer = first
        if layer is not None:
            drawn[layer] += line + "\n"
    return drawn


def _names(text: str, package: str) -> bool:
    """Whether ``text`` names ``package`` (``rankhouse.ingest`` as that or as ``ingest``)."""
    name = re.escape(package.removeprefix("rankhouse."))
    return re.search(rf"(?<![\w.])(rankhouse\.)?{name}(?!\w|\.\w)", text) is not None


def test_the_layers_drawing_places_every_package():
    drawn = _drawn_layers()
    missing = [
        f"{package} in {_layer(package)}"
        for package in sorted(PACKAGES)
        if not _names(drawn[_layer(package)], package)
    ]
    assert missing == [], "draw these in their layer in docs/ARCHITECTURE.md's diagram"


def test_own_imports_are_at_the_top_of_each_module():
    late = [
        f"{name} imports {sorted(found['late'])} inside a function"
        for name, found in IMPORTS.items()
        if found["late"]
        and not any(
            name == allowed or name.startswith(allowed + ".")
            for allowed in LATE_IMPORTS
            if allowed != "rankhouse"
        )
        and name != "rankhouse"
    ]
    assert late == []


def test_modules_stay_small():
    sizes = {
        str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in MODULES.values()
    }
    too_long = sorted(p for p, n in sizes.items() if n > MAX_LINES and p not in LONG_MODULES)
    assert too_long == [], f"over {MAX_LINES} lines: more than one concept? split by concept"
    stale = sorted(p for p in LONG_MODULES if sizes.get(p, 0) <= MAX_LINES)
    assert stale == [], "no longer long: take them off LONG_MODULES"


def test_every_module_is_in_the_architecture_map():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [
        str(path.relative_to(PACKAGE.parent))
        for path in MODULES.values()
        if f"`{path.relative_to(PACKAGE)}`" not in text
    ]
    assert missing == [], "say in docs/ARCHITECTURE.md what each of these does"
