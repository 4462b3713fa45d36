"""No import circle in the Python packages: every import of one of our modules by
another (at the top or inside a function: a deferred import is still a dependency)
goes one way. Built from the source with ``ast``; nothing is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("convcore", "server")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Our modules that ``name`` imports (``from . import x`` names the module x when
    there is one, else the package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def package_edges_only(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` re-exports its modules: an edge from a module to its own
    package's ``__init__`` (or up to an ancestor's) is not a circle of design, so the
    graph keeps modules and drops those re-export edges."""
    return {v: {w for w in ws if not (v.startswith(w + "."))} for v, ws in graph.items()}


def test_no_import_circle_in_convcore_or_server():
    found = modules()
    known = set(found)
    graph = package_edges_only({name: imports_of(name, path, known) for name, path in found.items()})
    assert len(graph) > 80 and sum(map(len, graph.values())) > 100  # the graph is real
    assert cycles(graph) == []


def test_the_check_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_service_names_itself_only_relatively():
    """server/ is installed as `convscope` (pyproject maps it) and refuses the name
    `server`: a module of it that imported `server.x` or `convscope.x` by name would
    break under one of them, so its own modules are reached relatively."""
    named = []
    for name, path in modules().items():
        if not name.startswith("server"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            stems = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            named += [f"{name}: {stem}" for stem in stems if stem.split(".")[0] in ("server", "convscope")]
    assert named == []
    assert any(
        isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(ast.parse((ROOT / "server" / "app.py").read_text()))
    )


def test_convcore_knows_nothing_of_the_service():
    found = modules()
    graph = {name: imports_of(name, path, set(found)) for name, path in found.items() if name.startswith("convcore")}
    assert len(graph) > 40
    assert {(name, dep) for name, deps in graph.items() for dep in deps if not dep.startswith("convcore")} == set()


def _mapped(section: str, package: str) -> tuple[set[str], set[str]]:
    """(the modules a module map ``section`` names, each under a folder its line names;
    the names no folder of their line holds). A line is ``- `folder/`, … : `a.py` (…)``:
    the folders of ``package`` before its first colon, then the modules."""
    listed: set[str] = set()
    strays: set[str] = set()
    for item in section.split("\n- ")[1:]:
        head, _, body = item.partition(":")
        folders = re.findall(rf"`({package}/(?:[a-z0-9_]+/)*)`", head)
        assert folders, item[:60]
        for name in re.findall(r"`([a-z_0-9]+\.py)`", body):
            held = {folder + name for folder in folders if (ROOT / folder / name).is_file()}
            listed |= held
            if not held:
                strays.add(f"{name} (under {', '.join(folders)})")
    return listed, strays


def _section(doc: str, heading: str) -> str:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    section = text[text.index(heading + "\n") :]
    return section[: section.index("\n**")] if "\n**" in section else section


@pytest.mark.parametrize(
    ("doc", "heading", "package"),
    [("service.md", "## Inside", "server"), ("convcore.md", "# Inside convcore", "convcore")],
)
def test_each_module_map_lists_every_module(doc, heading, package):
    """docs/service.md's "Inside" and docs/convcore.md name every module of server/ and
    convcore/, each under its own folder's line, and no module that does not exist."""
    listed, strays = _mapped(_section(doc, heading), package)
    actual = {str(p.relative_to(ROOT)) for p in (ROOT / package).rglob("*.py") if p.name != "__init__.py"}
    assert sorted(actual - listed) == [] and sorted(strays) == []
