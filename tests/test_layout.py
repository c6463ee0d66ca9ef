"""The shape of src/webhand, read from its files: no import cycle, no type-ignore that hides a
missing attribute, and no module name a reader could take for another.

These read the source as text (``ast``), never import it, so they hold for imports made only
under ``TYPE_CHECKING`` and for modules nothing imports at run time.
"""

from __future__ import annotations

import ast
import itertools
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "webhand"


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name, not ``.__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Which modules of the package each one imports: every ``import`` and ``from … import`` in the
    file, those under ``if TYPE_CHECKING:`` and inside functions included. ``from pkg import name``
    counts as an import of the submodule ``pkg.name`` when there is one (else of ``pkg``); an import
    of a name inside a module counts as an import of that module."""
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in known:  # webhand.x.Name -> webhand.x
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
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


def test_the_package_has_no_import_cycle_type_checking_imports_included():
    graph = import_graph(modules())
    found = cycles(graph)
    lines = []
    for component in found:
        lines.append(f"{len(component)} modules import each other:")
        members = set(component)
        lines += [f"    {module} imports {', '.join(sorted(graph[module] & members))}" for module in component]
    assert not found, "import cycles in src/webhand:\n" + "\n".join(lines)



def room_of(module: str) -> str:
    """The room a module lives in: its package right under webhand (``webhand.engine``), or the
    top-level module itself (``webhand.response``)."""
    return ".".join(module.split(".")[:2])


def test_the_rooms_import_downward_only():
    """No two rooms (the packages and modules right under webhand) import each other, even through
    others: the house has floors, each room using only the ones below it. Inside a room modules may
    lean on each other freely as long as they form no cycle (the test above)."""
    graph = import_graph(modules())
    rooms: dict[str, set[str]] = {}
    why: dict[tuple[str, str], str] = {}
    for module, targets in graph.items():
        for target in targets:
            a, b = room_of(module), room_of(target)
            if a != b and b != "webhand":
                rooms.setdefault(a, set()).add(b)
                why.setdefault((a, b), f"{module} imports {target}")
    found = cycles({room: rooms.get(room, set()) for room in {room_of(m) for m in graph}})
    lines = []
    for component in found:
        members = set(component)
        lines += [f"    {why[(a, b)]}" for a in component for b in sorted(rooms.get(a, set()) & members)]
    assert not found, "rooms of src/webhand that import each other:\n" + "\n".join(lines)


def test_the_cycle_finder_sees_type_checking_and_submodule_imports(tmp_path):
    """The finder itself, on a small package: a cycle closed only by a TYPE_CHECKING import, and one
    closed by ``from . import submodule``."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n")
    (package / "b.py").write_text("from .a import A\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "c.py").write_text("from . import d\n")
    (package / "sub" / "d.py").write_text("from pkg.sub.c import C\n")
    (package / "e.py").write_text("import pkg.a\n")
    known = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(tmp_path).with_suffix("").parts
        known[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    assert cycles(import_graph(known)) == [["pkg.a", "pkg.b"], ["pkg.sub.c", "pkg.sub.d"]]


ATTR_DEFINED_IGNORE = re.compile(r"#\s*type:\s*ignore\[[^\]]*\battr-defined\b")


def test_no_attr_defined_type_ignore_in_the_source():
    """A class whose methods use attributes only a subclass (or a mixin's host) defines hides it
    behind this ignore; the class should own what it uses instead."""
    found = [f"{path.relative_to(SRC)}:{number}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if ATTR_DEFINED_IGNORE.search(line)]
    assert not found, f"{len(found)} `# type: ignore[attr-defined]` in src:\n" + "\n".join(found)


def _one_letter_apart(a: str, b: str) -> bool:
    """True when one letter changed, added or removed turns ``a`` into ``b`` (host/hosts, wait/waits)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _module_names(folder: Path) -> list[str]:
    """The modules and subpackages a reader sees side by side in ``folder``."""
    return sorted({path.stem for path in folder.iterdir()
                   if (path.suffix == ".py" and path.stem != "__init__")
                   or (path.is_dir() and (path / "__init__.py").exists())})


def test_no_two_modules_side_by_side_differ_by_one_letter():
    """Names in one folder are read side by side (``host.py`` beside ``hosts.py``), so each must say
    what it holds on its own. Across packages the package names the room (``tools/tabs.py`` and
    ``engine/cdp/tab.py``), so only siblings are compared."""
    folders = [PACKAGE, *sorted(path for path in PACKAGE.rglob("*") if (path / "__init__.py").exists())]
    found = [f"{folder.relative_to(SRC)}/: {a} and {b}"
             for folder in folders
             for a, b in itertools.combinations(_module_names(folder), 2) if _one_letter_apart(a, b)]
    assert not found, "modules whose names differ by one letter:\n" + "\n".join(found)


def test_no_top_level_module_shares_a_name_with_the_standard_library():
    """``webhand/secrets.py`` beside the standard library's ``secrets``: a reader (and a stray
    absolute import) cannot tell which one a line means."""
    found = [name for name in _module_names(PACKAGE) if name in sys.stdlib_module_names]
    assert not found, f"top-level modules named like a standard-library module: {found}"


def test_the_name_checks_see_what_they_should():
    assert _one_letter_apart("host", "hosts") and _one_letter_apart("wait", "waits")
    assert _one_letter_apart("policy", "police") and not _one_letter_apart("tab", "tab")
    assert not _one_letter_apart("host", "host_names") and not _one_letter_apart("live", "page")


#: The folders that hold one driver each: what only the engine layer may import.
DRIVER_FOLDERS = ("webhand.engine.cdp", "webhand.engine.pw", "webhand.engine.bidi")


def driver_imports(package: Path = PACKAGE) -> list[str]:
    """Every import, in a module of tools/ or page/, of a driver's own folder (engine/cdp, engine/pw,
    engine/bidi), those under ``TYPE_CHECKING`` and inside functions included."""
    src = package.parent
    found = []
    for room in ("tools", "page"):
        for path in sorted((package / room).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:  # relative: from the module's own package up
                        package_parts = path.relative_to(src).parent.parts
                        base = ".".join([*package_parts[:len(package_parts) - node.level + 1], *([base] if base else [])])
                    names = [base] + [f"{base}.{alias.name}" for alias in node.names]
                else:
                    continue
                if any(name == folder or name.startswith(folder + ".") for name in names for folder in DRIVER_FOLDERS):
                    found.append(f"{path.relative_to(src)}:{node.lineno}")
    return found


def test_tools_and_page_code_import_no_drivers_folder():
    """Tools and page code see a browser only through the Driver's Protocols (engine/driver.py) and
    the engine's shared modules (engine/keys.py, ...): a driver's insides are its own, so a tool works
    the same on the three drivers and a driver can change without a tool noticing."""
    found = driver_imports()
    assert not found, "imports of a driver's folder from tools/ or page/:\n" + "\n".join(found)


#: The most members the ``Tab`` Protocol may have. It has 24 since issue 39 made the parts only a few
#: callers use components (``tab.liveness``, ``tab.live_view``, ...; it had 39 before, each of those
#: forwarded by every driver's tab), then grouped what belongs together, as Playwright's Page has
#: ``page.keyboard``: the keys on the focus (``tab.keyboard``), the page rendered to PNG or PDF
#: (``tab.capture``), finding elements by ref or selector across frames (``tab.refs``, each driver's
#: frame tree), back, forward and reload (``tab.history``); and giving files to a file input became
#: the element's own (``Element.set_input_files``). Issue 41 took the one member of room left for
#: the page's own tools (``tab.page_tools``, WebMCP), a component. In the same issue the accessibility
#: audit needed webhand's own scripts run where the page cannot see or bend them (``tab.isolated``):
#: no existing component is about that (``tab.console`` runs the page's and the model's JavaScript
#: in the page's world, the opposite), so the bound was argued again and is 26: both are components,
#: built once per driver in one line of its tab, not members every driver's tab forwards. A new
#: capability that only some callers need belongs in an existing component, or the bound is argued again.
TAB_MEMBERS_AT_MOST = 26


def protocol_members(name: str, package: Path = PACKAGE) -> list[str]:
    """The names a Protocol class of engine/driver.py defines in its body: attributes, properties, methods."""
    tree = ast.parse((package / "engine" / "driver.py").read_text(encoding="utf-8"))
    protocol = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
    names = []
    for node in protocol.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Assign):
            names += [target.id for target in node.targets if isinstance(target, ast.Name)]
    return list(dict.fromkeys(names))  # a property with a setter is one member


def test_the_tab_protocol_stays_narrow():
    members = protocol_members("Tab")
    assert len(members) <= TAB_MEMBERS_AT_MOST, f"the Tab Protocol has {len(members)} members: {members}"


#: Most lines a module of src/webhand has before its docstring must say why it is one file
#: ("Long because ..."): past this a reader no longer holds it in mind, so a long module is a choice,
#: stated where the reader starts, never an accident. 500: the largest cohesive classes of the
#: house (a driver's tab, the settle rules) sit just under or just over it.
LINES_AT_MOST = 500


def test_no_module_is_long_without_saying_why():
    found = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + 1
        if lines > LINES_AT_MOST and "Long because" not in (ast.get_docstring(ast.parse(text)) or ""):
            found.append(f"{path.relative_to(SRC)}: {lines} lines")
    assert not found, (f"modules over {LINES_AT_MOST} lines whose docstring does not say why "
                       "(\"Long because ...\"): split them by responsibility, or say why not:\n" + "\n".join(found))


#: webhand's public API, as httpx's: the names ``webhand`` exports and the framework adapters.
PUBLIC_MODULES = re.compile(r"webhand(\.adapters(\.\w+)?)?")


def test_every_module_outside_the_public_api_says_it_is_private():
    """The public API is what ``webhand/__init__.py`` exports (and ``webhand.adapters``); every other
    package and top-level module says in its docstring that it is private, so a reader of any file
    knows whether a user may import it."""
    unmarked = []
    for name, path in modules().items():
        top = name.split(".")
        if len(top) != 2 or PUBLIC_MODULES.fullmatch(name) or top[1] == "__main__":
            continue  # nested modules belong to a package that says it
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if not any(line.startswith("Private") for line in docstring.splitlines()):
            unmarked.append(name)
    assert not unmarked, f"modules of webhand's private part that do not say so: {unmarked}"


def test_the_readme_and_the_examples_import_only_the_public_api():
    root = SRC.parent
    texts = {path: path.read_text(encoding="utf-8") for path in
             [root / "README.md", *sorted((root / "examples").glob("*.py")), *sorted((root / "docs").rglob("*.md"))]}
    found = [f"{path.relative_to(root)}: {module}" for path, text in texts.items()
             for module in re.findall(r"(?:from|import) (webhand[\w.]*)", text) if not PUBLIC_MODULES.fullmatch(module)]
    assert not found, "the README, docs and examples import private modules:\n" + "\n".join(found)
