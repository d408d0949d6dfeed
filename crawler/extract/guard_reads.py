"""What a check tests, traced to where its values come from (who acts, #32 item 1).

A check's own condition (the innermost guard of a raise or a log, an assert's condition) reads
names; each is followed back through the code the record shows around the site (its snippet: the
whole function when it is short, else the lines around the site) to where the value comes from:

    state      an attribute of the object itself (``self.model``, ``hasattr(self, "x")``): what the
               code built or computed, unless a config holds it
    tensor     a tensor's shape, dtype, device, layout (``q.shape[-1]``, ``x.is_contiguous()``):
               what the project's own code passes (a kernel's or an op's inputs)
    constant   a literal or a module constant (``MAX_QUERY_LEN``, an enum member)
    param      a parameter of the function, not traced further (its callers decide)
    config     a config object's field (``self.extra_config.get("cpu_bytes_to_use")``,
               ``self.vllm_config.cache_config``): a setting
    model      the model's own configuration (``self.hf_config``, ``quant_config``)
    request    a request's field (``request.tools``)
    parallel   the number of ranks it runs on (``get_tensor_model_parallel_world_size()``)
    platform   the machine or an optional package (``sys.byteorder``, ``is_flydsl_available()``)
    other      a module-level name or a call the trace does not follow

Only what the code shows is traced (a local assigned above the site, a parameter of the ``def``
shown, a walrus in the condition); a name whose origin is not in the snippet is ``other``, never a
guess. The visitor traces each site over its whole function (:func:`trace`) and keeps it with the
extracted site; ``actions.classify`` reads it.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final, cast

from crawler.extract.codefacts import child_nodes

#: The key an extracted site keeps it under (never in a record: ``catalogue.entries`` builds the record's site).
READS: Final = "_reads"
#: The key, inside what a site reads, of the ``except`` of its own function that catches its
#: exception and does not raise again (``except (ImportError, AssertionError): return None``): the
#: check's error never leaves that function (:func:`caught`; never one of the sources of :func:`reads`).
CAUGHT: Final = "caught"
#: The key, inside what a site reads, of the preprocessor branch a native check is the whole body of
#: a function under, when that branch tests the toolkit or the architecture it is built for
#: (``#if !defined(CUDA_VERSION) || CUDA_VERSION < 12040``: :func:`preprocessor`; no source either).
PREPROCESSOR: Final = "preprocessor"
#: The key, inside what a site reads, of the library call its (nested) function is handed to, when
#: that library runs it and catches what it raises (``pm.register_replacement(pattern, ...)``:
#: :func:`handed`; no source either).
HANDED: Final = "handed"
#: The key, inside what a site reads, of the optional import that failed where the site's function
#: or class is defined: a placeholder that raises when used, defined in ``except ImportError:``
#: after ``import flash_attn`` (``["import", "flash_attn"]``) or in the branch where a probe of an
#: optional package is false (``if HAS_TRITON: ... else: def f(): raise``: ``["probe", "HAS_TRITON"]``),
#: for a check with no ``if`` or loop of its own function around it (:func:`stub`; no source).
STUB: Final = "stub"
#: The key, inside what a site reads, of the modules the ``try`` imports whose ``except ImportError``
#: (or ``ModuleNotFoundError``) the site is in, in its own function (:func:`importing`; no source).
IMPORTING: Final = "importing"
#: Keys of what a site reads that are facts beside its sources, not sources.
_BESIDE: Final = frozenset({CAUGHT, PREPROCESSOR, HANDED, STUB, IMPORTING})
#: At most this many pieces of code kept per source.
MAX_SHOWN = 4
#: How far a local is followed through other locals (``a = b + 1; b = self.x``).
MAX_DEPTH = 4

_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "layout", "T", "mT"})
_TENSOR_METHODS = frozenset({"size", "dim", "numel", "stride", "is_contiguous", "element_size", "nelement", "get_device", "data_ptr", "storage_offset"})
_PLATFORM_CALL = re.compile(
    r"is_\w+_(?:available|supported|installed)|has_\w+_(?:support|installed)|find_spec|is_\w+_platform|"
    r"(?:on|is)_(?:gfx|sm_?)\d\w*|(?:on|is)_(?:hopper|blackwell|ampere|cdna|rdna)\w*|(?>\w*device_capability\w*)"
)
_PLATFORM_NAME = re.compile(r"_?(?:HAS|has)_\w+|_?\w+_(?:AVAILABLE|available|INSTALLED|installed)|_?(?:IS|is)_\w+_(?:AVAILABLE|available)")
_PARALLEL_CALL = re.compile(r"get_\w*world_size|get_\w*_(?:tp|pp|dp|ep)_\w*size")
#: The rank count of a group (``get_tp_group().world_size``, ``self.tp_size``).
_PARALLEL_ATTR = re.compile(r"world_size|(?:tp|pp|dp|ep|dcp|pcp)_(?:world_)?size")
#: A config object a user sets (the engine's configs, which options and config files fill; a
#: connector's extra config; ``envs``): its field is a setting. Other ``*_config`` objects are
#: built by the code (a layer's, a fused kernel's) and are traced as any name.
CONFIG_PART = re.compile(
    r"(?:vllm|model|cache|parallel|scheduler|lora|speculative|compilation|load|device|kv_transfer|observability|"
    r"structured_outputs|attention|kernel|ec_transfer|profiler|kv_connector_extra|extra|offload|offloading|multimodal|mm)_config"
)
HOLDS_CONFIG = re.compile(r"config|cfg|settings|options", re.I)
#: The model's configuration as the checkpoint gives it (HF config objects, a quantization config).
MODEL_CONFIG_PART = re.compile(r"hf_\w*config|\w*text_config|vision_config|audio_config|quant_config|quantization_config|\w*_model_config")
_REQUEST_ROOT = frozenset({"request", "req", "sampling_params", "params", "body"})
_BUILTIN_CALLS = frozenset(
    {
        "len",
        "isinstance",
        "int",
        "float",
        "bool",
        "str",
        "abs",
        "min",
        "max",
        "sum",
        "any",
        "all",
        "tuple",
        "list",
        "set",
        "sorted",
        "type",
        "getattr",
        "hasattr",
        "callable",
    }
)
# Linear in the line (tried on every line above a site, a docstring's too): an annotation is one
# run up to the "=" (``\s*[^=]+?\s*`` split its spaces three ways: hours on a line of spaces),
# a ``for``'s targets are names and commas (``[\w, ]*?`` ran over every " in "), what follows a
# keyword starts at its first non-space (``\s+(.+)`` began at every space).
_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::[^=]+)?=(?!=)\s*(.+)$")
_FOR = re.compile(r"^(\s*)for\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*,?)\s+in\s+(\S.*):\s*$")
_SELF_ASSIGN = re.compile(r"^\s*self\.([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)\s*(.+)$")
#: What a state assigned from makes it no state of the object's own: a state is what it came from.
_FROM_OUTSIDE = ("param", "config", "platform", "request", "model", "parallel", "other")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+\w+\s*\(")


def _parse(text: str, mode: str) -> ast.AST | None:
    with warnings.catch_warnings():  # (an invalid escape in the crawled code is not ours to report)
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, mode=mode)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _depth(text: str) -> int:
    """How many brackets ``text`` leaves open (strings not told apart: a continuation is joined
    until the count closes, at most 40 lines)."""
    return text.count("(") + text.count("[") + text.count("{") - text.count(")") - text.count("]") - text.count("}")


def _joined(first: str, lines: list[str], i: int) -> tuple[str, int]:
    """An assignment's right-hand side ``first`` (on line ``i``) with the lines its open brackets
    carry on to (at most 40), and the index of its last line."""
    rhs, j, depth = first, i, _depth(first)
    while depth > 0 and j + 1 < len(lines) and j - i < 40:
        j += 1
        rhs += "\n" + lines[j]
        depth += _depth(lines[j])
    return rhs, j


class FunctionText:
    """A function's text (or the snippet shown of it): each line's indent, its assignments, and
    the parameters of the ``def`` that encloses a line."""

    def __init__(self, code: str, start: int):
        self.start = start
        self.lines = code.splitlines()
        #: each line's indent, None for a comment, a blank line or a closing bracket (a multi-line
        #: signature's ``) -> X:`` is no block's edge); read as far as a site asks (``_scan``)
        self.indents: list[int | None] = []
        #: (index, indent, names, the code assigned)
        self.assignments: list[tuple[int, int, list[str], str]] = []
        self._at: dict[int, tuple[set[str], dict[str, str]]] = {}
        self._params: dict[int, set[str]] = {}
        self._next = 0  # the first line not yet scanned for assignments

    def _scan(self, upto: int) -> None:
        """Read the lines before ``upto`` (and an assignment's continuation past it)."""
        lines = self.lines
        for t in lines[len(self.indents) : upto + 1]:
            body = t.lstrip()
            self.indents.append(len(t) - len(body) if body and body[0] not in "#)]}" else None)
        i = self._next
        while i < min(upto, len(lines)):
            text = lines[i]
            m = (_ASSIGN.match(text) if "=" in text else None) or (_FOR.match(text) if "for " in text else None)
            if m:
                rhs, j = _joined(m.group(3), lines, i)
                names = [n.strip() for n in m.group(2).split(",")]
                self.assignments.append((i, len(m.group(1)), names, rhs.strip().rstrip(":")))
                i = j
            i += 1
        self._next = max(self._next, i)

    def at(self, line: int) -> tuple[set[str], dict[str, str]]:
        """The parameters and the locals (name -> the code last assigned to it) at ``line``."""
        found = self._at.get(line)
        if found is None:
            found = self._at[line] = self._find(line)
        return set(found[0]), dict(found[1])

    def _find(self, line: int) -> tuple[set[str], dict[str, str]]:
        if not self.lines:
            return set(), {}
        here = max(0, min(len(self.lines) - 1, line - self.start))
        self._scan(here)
        floor: int = self.indents[here] or 0
        first, params = 0, set()
        for i in range(here - 1, -1, -1):  # the enclosing def: the nearest one above, indented less than all between
            indent = self.indents[i]
            if indent is None or indent >= floor:
                continue
            if _DEF.match(self.lines[i]):
                if i not in self._params:
                    self._params[i] = _params(self.lines, i)
                first, params = i, set(self._params[i])
                break
            floor = indent
        site_indent = self.indents[here] or 0
        assigned: dict[str, str] = {}
        for i, indent, names, rhs in self.assignments:
            if first < i < here and indent <= site_indent:
                for name in names:
                    assigned[name] = rhs
                    params.discard(name)
        return params, assigned


class ClassText:
    """A class's text: where each ``self.<attr>`` is assigned, in which method (a state's origin)."""

    def __init__(self, code: str, start: int):
        self.text = FunctionText(code, start)
        self.assigned: dict[str, list[tuple[int, str]]] = {}
        lines = self.text.lines
        for i, line in enumerate(lines):
            m = _SELF_ASSIGN.match(line) if "self." in line and "=" in line else None
            if m:
                rhs, _ = _joined(m.group(2), lines, i)
                self.assigned.setdefault(m.group(1), []).append((start + i, rhs.strip()))


_PARAM = re.compile(r"\s*(?:\*+\s*)?([A-Za-z_]\w*)")


def _params(lines: list[str], i: int) -> set[str]:
    """The parameter names of the ``def`` at line ``i`` (its signature over lines), read between
    its brackets without parsing: each top-level comma starts one (``*args``, ``b: int = 1``)."""
    start = lines[i].index("(") + 1
    names: set[str] = set()
    depth, piece, j, col = 0, "", i, start
    while j < len(lines) and j - i < 40:
        text = lines[j]
        while col < len(text):
            ch = text[col]
            col += 1
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    m = _PARAM.match(piece)
                    if m:
                        names.add(m.group(1))
                    return names - {"self", "cls"}
                depth -= 1
            elif ch == "," and depth == 0:
                m = _PARAM.match(piece)
                if m:
                    names.add(m.group(1))
                piece = ""
                continue
            elif ch == "#":
                break
            piece += ch
        piece += " "
        j, col = j + 1, 0
    return set()  # (a signature that does not close: no parameters known)


@lru_cache(maxsize=4096)
def _expr(text: str) -> ast.expr | None:
    text = text.strip()
    tree = _parse(text, "eval") or _parse(f"({text}\n)", "eval")
    return tree.body if isinstance(tree, ast.Expression) else None


def _code(node: ast.AST) -> str:
    """``ast.unparse(node)``; a name or a chain of attributes on one (most of what a check reads)
    joined by hand, as ``unparse`` writes it, at a third to a fifth of its cost."""
    parts: list[str] = []
    here = node
    while type(here) is ast.Attribute:
        parts.append(here.attr)
        here = here.value
    if type(here) is ast.Name:
        parts.append(here.id)
        return ".".join(reversed(parts))
    return ast.unparse(node)


def _chain(node: ast.expr) -> list[str] | None:
    """``self.a.b`` -> ["self", "a", "b"]; None when the chain does not start at a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


#: What a trace does not look into: a function or comprehension made there (built once: a ``|`` of types is a new object each time it is written).
_NOT_FOLLOWED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _Trace:
    def __init__(self, params: set[str], assigned: dict[str, str], cls: ClassText | None = None):
        self.params, self.assigned, self.cls = params, assigned, cls
        self.found: dict[str, set[str]] = {}  # source -> the code that shows it

    def add(self, source: str, node: ast.AST) -> None:
        self.found.setdefault(source, set()).add(_code(node))

    def name(self, node: ast.Name, depth: int, seen: frozenset[str]) -> None:
        name = node.id
        if name in seen:
            return
        if name in self.assigned and depth < MAX_DEPTH:
            rhs = _expr(self.assigned[name])
            if rhs is not None:
                self.walk(rhs, depth + 1, seen | {name})
                return
        if name in self.params:
            self.add("param", node)
        elif name == "self":
            self.add("state", node)  # (what a method of its own computes: ``self._read_pid(path)``)
        elif _PLATFORM_NAME.fullmatch(name):
            self.add("platform", node)  # (``HAS_TRITON``, ``_flashinfer_available``: what an import found)
        elif name.isupper() or name[:1].isupper() or name in ("True", "False", "None"):
            self.add("constant", node)
        elif name in _REQUEST_ROOT:
            self.add("request", node)
        else:
            self.add("other", node)

    def walk(self, node: ast.AST, depth: int = 0, seen: frozenset[str] = frozenset()) -> None:
        if isinstance(node, ast.Constant):
            return
        if isinstance(node, ast.NamedExpr):  # (``(n := data.get("n")) is not None``)
            self.walk(node.value, depth, seen)
            return
        if isinstance(node, ast.Attribute):
            if node.attr in _TENSOR_ATTRS:
                self.add("tensor", node)
                return
            if _PARALLEL_ATTR.fullmatch(node.attr):
                self.add("parallel", node)
                return
            chain = _chain(node)
            if chain is not None:
                self.attribute(node, chain, depth, seen)
                return
            self.walk(node.value, depth, seen)
            return
        if isinstance(node, ast.Name):
            self.name(node, depth, seen)
            return
        if isinstance(node, ast.Call):
            self.call(node, depth, seen)
            return
        if isinstance(node, ast.Subscript):
            self.walk(node.value, depth, seen)
            return
        if isinstance(node, _NOT_FOLLOWED):
            self.add("other", node)
            return
        for child in child_nodes(node):  # (``iter_child_nodes``' order, without its generators)
            if isinstance(child, ast.expr):
                self.walk(child, depth, seen)

    def attribute(self, node: ast.Attribute, chain: list[str], depth: int, seen: frozenset[str]) -> None:
        root, rest = chain[0], chain[1:]
        if root in ("sys", "platform") or (root == "os" and rest[:1] == ["environ"]):
            self.add("platform", node)
        elif root == "envs":
            self.add("config", node)
        elif any(MODEL_CONFIG_PART.fullmatch(part) for part in chain):
            self.add("model", node)
        elif any(CONFIG_PART.fullmatch(part) for part in chain):
            self.add("config", node)
        elif root in _REQUEST_ROOT:
            self.add("request", node)
        elif root == "self" and not any(HOLDS_CONFIG.search(part) for part in rest):
            self.state(node, rest[0] if rest else "", depth, seen)
        elif root == "self":
            self.add("other", node)  # (a config of its own no trace says who fills: ``self.gen_config``)
        elif root[:1].isupper() or root.isupper():
            self.add("constant", node)  # (an enum member, a class attribute)
        else:
            self.name(ast.Name(id=root), depth, seen)

    def state(self, node: ast.expr, attr: str, depth: int, seen: frozenset[str]) -> None:
        """``self.<attr>``: the object's own state when the class assigns it from nothing that
        comes from outside (a literal, a tensor it allocates, another state); else what it was
        assigned from (a parameter of ``__init__``, a config, a probe); a state the class shown
        never assigns (a base class's, set from outside) is ``other``."""
        key = f"self.{attr}"
        assigned = self.cls.assigned.get(attr) if self.cls is not None else None
        if not assigned or key in seen or depth >= MAX_DEPTH:
            self.add("state" if key in seen or (assigned and depth >= MAX_DEPTH) else "other", node)
            return
        cls = cast(ClassText, self.cls)
        inner = _Trace(set(), {}, cls)
        for line, rhs in assigned:
            expr = _expr(rhs)
            if expr is None:
                inner.add("other", node)
                continue
            inner.params, inner.assigned = cls.text.at(line)
            inner.walk(expr, depth + 1, seen | {key})
        outside = [source for source in _FROM_OUTSIDE if source in inner.found]
        for source in outside:
            self.found.setdefault(source, set()).update(inner.found[source] if source != "other" else {_code(node)})
        if not outside:
            self.add("state", node)

    def call(self, node: ast.Call, depth: int, seen: frozenset[str]) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if _PLATFORM_CALL.fullmatch(name):
            self.add("platform", node)
            return
        if _PARALLEL_CALL.fullmatch(name):
            self.add("parallel", node)
            return
        if isinstance(func, ast.Attribute) and name in _TENSOR_METHODS:
            self.add("tensor", node)
            return
        if name in ("hasattr", "getattr") and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            self.add("state", node)
            return
        if name == "isinstance" and node.args:
            self.walk(node.args[0], depth, seen)
            return
        if isinstance(func, ast.Name) and name in _BUILTIN_CALLS:
            for arg in node.args:
                self.walk(arg, depth, seen)
            return
        if isinstance(func, ast.Attribute):  # a method: what it is called on, and its arguments
            self.walk(func.value, depth, seen)
            for arg in node.args:
                self.walk(arg, depth, seen)
            return
        self.add("other", node)


def trace(text: FunctionText, line: int, condition: str, cls: ClassText | None = None) -> dict[str, list[str]]:
    """Source -> the code that shows it (sorted), for what ``condition`` reads at ``line`` of a
    function's ``text`` (a method of ``cls``); empty when the condition does not parse."""
    node = _expr(condition) if condition else None
    if node is None:
        return {}
    found = _Trace(*text.at(line), cls=cls)
    found.walk(node)
    return {source: sorted(shown)[:MAX_SHOWN] for source, shown in sorted(found.found.items())}


def own_condition(site: Mapping[str, Any]) -> str | None:
    """The check's own condition: an assert's (its last guard is the assert negated), else the
    innermost guard, the ``if`` it is in."""
    guards = (site.get("facts") or {}).get("guards") or []
    return guards[-1] if guards else None


def caught(site: Mapping[str, Any]) -> str | None:
    """The ``except`` that catches the site's error in its own function, as it reads (its first
    statement after the colon), when the extraction found one; else None."""
    found = (site.get(READS) or {}).get(CAUGHT)
    return found[0] if type(found) is list and found and type(found[0]) is str else None


def _beside(site: Mapping[str, Any], key: str) -> str | None:
    found = (site.get(READS) or {}).get(key)
    return found[0] if type(found) is list and found and type(found[0]) is str else None


def preprocessor(site: Mapping[str, Any]) -> str | None:
    """The toolkit or architecture test of the preprocessor branch a native check is the whole
    function body under (``!defined(CUDA_VERSION) || CUDA_VERSION < 12040``), as written; else None."""
    return _beside(site, PREPROCESSOR)


def handed(site: Mapping[str, Any]) -> str | None:
    """The library call a site's function is handed to, which runs it and catches its error
    (``pm.register_replacement``); else None."""
    return _beside(site, HANDED)


def _listed(site: Mapping[str, Any], key: str) -> list[str] | None:
    found = (site.get(READS) or {}).get(key)
    return list(found) if type(found) is list and found and all(type(x) is str for x in found) else None


def stub(site: Mapping[str, Any]) -> list[str] | None:
    """What failed where the site's function or class is defined as a placeholder (``["import",
    module, ...]`` or ``["probe", test]``), when the extraction found it; else None."""
    found = _listed(site, STUB)
    return found if found is not None and len(found) >= 2 and found[0] in ("import", "probe") else None


def importing(site: Mapping[str, Any]) -> list[str] | None:
    """The modules the ``try`` imports whose ``except ImportError`` the site is in; else None."""
    return _listed(site, IMPORTING)


def reads(site: Mapping[str, Any]) -> dict[str, list[str]]:
    """What an extracted site's check reads (``visitor`` stamps it as ``READS``); for a record's
    site, which does not keep it, traced over the snippet the record shows (a long function's
    parameters and early locals may be out of it, then ``other``)."""
    found = site.get(READS)
    if found is not None:
        return cast(dict[str, list[str]], {k: v for k, v in found.items() if k not in _BESIDE} if _BESIDE & found.keys() else found)
    condition = own_condition(site)
    snippet = site.get("snippet") or {}
    if not condition:
        return {}
    return trace(FunctionText(snippet.get("code") or "", int(snippet.get("start_line") or site["line"])), int(site["line"]), condition)
