"""The seams between errcat's modules, read from the source with ``ast``: no module takes another's
private names, and every reference a docstring or comment makes to a module, function or class
resolves.

The private-name check is an ast test rather than ruff's PLC2701 (import-private-name): ruff
counts every module of the one first-party package ``crawler`` as the same package, so it flags
only imports of private names from other distributions (``re._parser``), never a stage reaching
into another stage's module, which is the reach that makes a change hard. This test also sees a
private attribute of an imported module (``jsonl._member``), which no import rule does.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "crawler"

#: (importing module, defining module, name) of the private names still taken across modules.
#: This list may only shrink: an entry no longer needed fails the test too.
EXEMPT: set[tuple[str, str, str]] = set()


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


@cache
def _modules() -> dict[str, tuple[Path, ast.Module]]:
    return {_module_name(p): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, node: ast.ImportFrom, is_package: bool = False) -> str:
    """The module an ``ImportFrom`` names, relative imports made absolute."""
    if not node.level:
        return node.module or ""
    package = module.split(".")
    base = package[: len(package) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def reaches(module: str, tree: ast.Module, known: set[str] | dict[str, object], is_package: bool = False) -> set[tuple[str, str, str]]:
    """(module, defining module, name) of each private name ``module`` takes from another module
    of crawler (``known``: their names): ``from crawler.x import _y``, or ``x._y`` of a crawler
    module it imported."""
    found: set[tuple[str, str, str]] = set()
    imported: dict[str, str] = {}  # local name -> crawler module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, node, is_package)
            if source.split(".")[0] != "crawler":
                continue
            for alias in node.names:
                if _private(alias.name) and source != module:
                    found.add((module, source, alias.name))
                elif f"{source}.{alias.name}" in known:
                    imported[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "crawler" and alias.asname:
                    imported[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and imported[node.value.id] != module
        ):
            found.add((module, imported[node.value.id], node.attr))
    return found


def private_reaches() -> set[tuple[str, str, str]]:
    """:func:`reaches` of every module of crawler."""
    modules = _modules()
    return {r for m, (path, tree) in modules.items() for r in reaches(m, tree, modules, path.name == "__init__.py")}


def test_no_module_takes_another_modules_private_names():
    """What a module offers another is public: a leading underscore says no other module relies
    on it, so it can change with only its own module looked at."""
    found = private_reaches()
    new = sorted(found - EXEMPT)
    assert not new, "private names taken from another module (make them public there): " + ", ".join(f"{m} takes {src}.{name}" for m, src, name in new)
    stale = sorted(EXEMPT - found)
    assert not stale, f"no longer taken, take them off EXEMPT in tests/test_seams.py: {stale}"


# --------------------------------------------------------------------------- references


_ROLE = re.compile(r":(mod|func|class|meth|data|attr|exc|obj):`~?([^`<>]+)`")
#: A dotted name in double backquotes (``publish.pins``, ``dataset.iter_record_data``).
_DOTTED = re.compile(r"``([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?``")
#: A module's file in double backquotes (``site.py``): a module of that name, not a package, must exist.
_FILE = re.compile(r"``([a-z_]\w*)\.py``")
#: One name in double backquotes (``models``).
_BARE = re.compile(r"``([a-z_]\w*)``")
#: What ends a file's name (``search.json``, ``page.py``), which is no module's attribute.
_EXTENSIONS = frozenset({"json", "gz", "jsonl", "md", "py", "yaml", "yml", "toml", "txt", "html", "js", "css", "sqlite", "whl"})


@cache
def _defined(module: str) -> frozenset[str]:
    """Every name a module defines or imports, at any depth, and ``Class.member`` of its classes."""
    names: set[str] = set()
    for node in ast.walk(_modules()[module][1]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(f"{node.name}.{member.name}")
                for target in member.targets if isinstance(member, ast.Assign) else [member.target] if isinstance(member, ast.AnnAssign) else []:
                    if isinstance(target, ast.Name):
                        names.add(f"{node.name}.{target.id}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


@cache
def _by_leaf() -> dict[str, list[str]]:
    leaves: dict[str, list[str]] = {}
    for module in _modules():
        leaves.setdefault(module.rsplit(".", 1)[-1], []).append(module)
    return leaves


def _candidates(name: str, here: str) -> list[str]:
    """The modules ``name`` can mean in module ``here``: absolute, under crawler, beside ``here``,
    or any module of that last name (``pins``: crawler.publish.pins)."""
    package = here if _modules()[here][0].name == "__init__.py" else here.rsplit(".", 1)[0]
    found = [name, f"crawler.{name}", f"{package}.{name}", *_by_leaf().get(name, [])]
    return [m for m in dict.fromkeys(found) if m in _modules()]


def _resolves(target: str, here: str, module_only: bool = False) -> bool:
    target = target.strip().removesuffix("()")
    if _candidates(target, here):
        return True
    if module_only:
        try:
            return importlib.util.find_spec(target) is not None  # the standard library's, a dependency's
        except (ImportError, ValueError):
            return False
    if target in _defined(here):
        return True
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        if any(rest in _defined(m) or rest.split(".")[0] in _defined(m) for m in _candidates(head, here)):
            return True
        if cut == 1 and head in _defined(here) and head[:1].isupper():  # ``Manifest.counts``: a class it imports
            return True
    return False


@cache
def _field_names() -> frozenset[str]:
    """The field names of every model of a file errcat writes: ``meaning.action`` or
    ``history.replaced_by`` in a docstring is a record's field path, not a module's name."""
    from pydantic import BaseModel

    from crawler.model import diff, records, search

    names: set[str] = set()
    for module in (records, search, diff):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                names.update(value.model_fields)
    return frozenset(names)


#: The modules errcat once had, before the stages became packages: a dotted name starting with
#: one (``models.Record``, ``output.write_tree``) names something that has moved.
FORMER = frozenset({"models", "output", "pysource", "record_files", "surface_rows", "diff_render", "migrate", "versions_cli", "consume_cli", "curate_cli"})


@cache
def _used(module: str) -> frozenset[str]:
    """Every name a module uses: its variables, parameters, attributes and the words its strings are."""
    names: set[str] = set(_defined(module))
    for node in ast.walk(_modules()[module][1]):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)
    return frozenset(names)


def _texts(path: Path, tree: ast.Module) -> list[tuple[int, str]]:
    """Every docstring and comment of a module, with its first line."""
    texts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                texts.append((node.body[0].lineno, doc))
    source = path.read_text(encoding="utf-8")
    texts += [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    return texts


def broken_references() -> list[str]:
    """``path:line: reference`` of every reference that names nothing: a Sphinx role (``:mod:``,
    ``:func:``, ``:class:`` ...), a dotted name in double backquotes that starts with crawler, a
    stage, a module's name (and is not a field path of the data model) or a module errcat once
    had (``FORMER``), or a module's file (``site.py``)."""
    stages = {m.split(".")[1] for m in _modules() if m.count(".") >= 1}
    broken = []
    for module, (path, tree) in _modules().items():
        where = path.relative_to(ROOT).as_posix()
        for line, text in _texts(path, tree):
            for role, target in _ROLE.findall(text):
                if not _resolves(target, module, module_only=role == "mod"):
                    broken.append(f"{where}:{line}: :{role}:`{target}`")
            for target in _DOTTED.findall(text):
                first, last = target.split(".")[0], target.rsplit(".", 1)[-1]
                checked = first in FORMER or (first not in _field_names() and (first == "crawler" or first in stages or first in _by_leaf()))
                if checked and last not in _EXTENSIONS and not _resolves(target, module):
                    broken.append(f"{where}:{line}: ``{target}``")
            for name in _BARE.findall(text):
                if name in FORMER and name not in _used(module):
                    broken.append(f"{where}:{line}: ``{name}``")
            for name in _FILE.findall(text):
                if not any(_modules()[m][0].name == f"{name}.py" for m in _by_leaf().get(name, ())):
                    broken.append(f"{where}:{line}: ``{name}.py``")
    return broken


def test_every_reference_in_a_docstring_or_comment_resolves():
    """A docstring that names a module or function that is gone sends its reader nowhere (31 did,
    after the stages moved into packages)."""
    broken = broken_references()
    assert not broken, f"{len(broken)} reference(s) to nothing:\n" + "\n".join(broken)


def test_the_checks_see_what_they_are_for():
    """Each check finds its case: a private name imported or read off a module, and references
    that name nothing; and lets pass what is fine."""
    code = ast.parse(
        "from crawler.publish import jsonl\nfrom crawler.publish.writer import _render, Reuse\n"
        "from .dataset import _read\nfrom ._x import y\nprint(jsonl._GZIP, jsonl.NAME)\n"
    )
    assert reaches("crawler.publish.validate", code, _modules()) == {
        ("crawler.publish.validate", "crawler.publish.writer", "_render"),
        ("crawler.publish.validate", "crawler.publish.dataset", "_read"),
        ("crawler.publish.validate", "crawler.publish.jsonl", "_GZIP"),
    }
    here = "crawler.publish.writer"
    assert _resolves("publish.pins", here) and _resolves("jsonl.pack_members", here) and _resolves("Reuse.linked", here)
    assert not _resolves("publish.nothing", here) and not _resolves("jsonl.no_such_function", here)
    assert not _resolves("crawler.knobs", here, module_only=True) and _resolves("crawler.extract.knobs", here, module_only=True)


#: Module names two stages share because they are one concept at two layers: the model of a file
#: and the stage that makes it, or a stage and its command. Any other shared name is two things
#: under one name (``imported.py`` was the per-file facts and the join across modules).
SAME_CONCEPT = {
    "crawl": {"crawler.crawl", "crawler.cli.crawl"},  # the crawl, and its command
    "diff": {"crawler.model.diff", "crawler.versions.diff"},  # the diff report's model, and the diff
    "search": {"crawler.model.search", "crawler.catalogue.search"},  # search.json's model, and its rows
}


def test_no_two_modules_share_a_name_for_two_things():
    files = {leaf: {m for m in modules if _modules()[m][0].name != "__init__.py"} for leaf, modules in _by_leaf().items()}
    shared = {leaf: modules for leaf, modules in files.items() if len(modules) > 1}  # (cli/consume.py: the consume stage's commands)
    assert shared == SAME_CONCEPT, f"modules sharing a name: {shared}; rename one, or say in SAME_CONCEPT why they are one thing"
