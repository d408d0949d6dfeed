"""Extraction of native checks: the bytes of one C++/CUDA or Rust file -> the same per-file result
as a Python file gives (see ``visitor``), with sites of kind ``native``.

Files are parsed with tree-sitter (``tree-sitter-cpp``, ``tree-sitter-cuda`` for CUDA sources and
the headers they include, ``tree-sitter-rust``), never read with regular expressions. tree-sitter
recovers from what it cannot parse (a macro it cannot see through leaves an ``ERROR`` node around
a few tokens), so the walk looks inside error nodes too, and a file with parse errors still gives
every check the parser could place; the result says whether the file had any
(``native.parse_error``).

C++ / CUDA: a call of one of :data:`CHECKS` (``TORCH_CHECK(cond, "Unsupported head size: ",
head_size)``) is a site; its message is what the macro builds at run time: the arguments after
the condition streamed one after another (string and character literals as text, anything else a
``{field}``), ``STD_TORCH_CHECK``'s ``{__func__}, {__FILE__}:{__LINE__}, `` prefix included, and
for a check with no message torch's own "Expected <cond> to be true, but got false. ...". A
``throw std::runtime_error(...)`` (and the other standard exceptions) is a site too: through
``torch.ops`` every ``std::exception`` reaches Python as a RuntimeError. Checks inside a
``#define`` body (vLLM's dispatch macros hold many) are found by parsing the body as code.

Rust (vLLM's Rust frontend, a process of its own: its errors reach users as the text of an HTTP
error body or of the process's error output, never as a Python exception): the messages of its
error types (``#[error("...")]`` of thiserror) and of ``bail!``/``anyhow!``/``ensure!`` in code
that is not a test. Panics (``panic!``, ``.expect``, ``unreachable!``) are bugs or test
assertions, not errors a user is meant to read, and stay out.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache
from typing import Any

from crawler.extract import knobs, limit, native_macros
from crawler.extract.codefacts import empty_graph
from crawler.extract.guard_reads import PREPROCESSOR, READS
from crawler.extract.templates import escape_surrogates, field, format_specs, make_template
from crawler.model.shapes import ExtractedSite, FileResult, SnippetData, TemplateData
from crawler.source.globs import native_language

#: Grammar per native language (``source.globs.NATIVE_SUFFIXES``); headers are included by CUDA
#: sources as often as by C++ ones, and the CUDA grammar (a superset of C++'s) parses them with
#: fewer errors (vLLM v0.33.0: 7 of 38 ``.h`` files against 13), so it reads them too.
_HEADERS_AS_CUDA = (".h", ".inl")


#: torch's checks and the Python exception each surfaces as. ``STD_TORCH_CHECK`` (torch's stable
#: ABI) throws std::runtime_error with the function, file and line before the message. An
#: upstream's own macros over these (vLLM's ``STD_TORCH_CHECK_NOT_IMPLEMENTED``) are read from its
#: ``#define``s (``native_macros``).
CHECKS: dict[str, tuple[str, str]] = {
    "TORCH_CHECK": ("RuntimeError", "builtins.RuntimeError"),
    "TORCH_CHECK_VALUE": ("ValueError", "builtins.ValueError"),
    "TORCH_CHECK_TYPE": ("TypeError", "builtins.TypeError"),
    "TORCH_CHECK_INDEX": ("IndexError", "builtins.IndexError"),
    "TORCH_CHECK_NOT_IMPLEMENTED": ("NotImplementedError", "builtins.NotImplementedError"),
    "TORCH_CHECK_LINALG": ("LinAlgError", "torch.linalg.LinAlgError"),
    "STD_TORCH_CHECK": ("RuntimeError", "builtins.RuntimeError"),
}
_STD_PREFIX = (("field", "__func__"), ", ", ("field", "__FILE__"), ":", ("field", "__LINE__"), ", ")
_PREFIXES: dict[str, tuple[Any, ...]] = {"STD_TORCH_CHECK": _STD_PREFIX}
_TORCH_DEFAULT = "Expected {} to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"
#: Standard exceptions a ``throw`` makes; through torch's operator bindings each is a RuntimeError.
THROWN = frozenset(
    {"runtime_error", "invalid_argument", "out_of_range", "logic_error", "domain_error", "length_error", "range_error", "overflow_error", "underflow_error"}
)

#: Rust macros that make an error value (anyhow's); ``ensure!`` takes a condition first.
RUST_MACROS = frozenset({"bail", "anyhow", "ensure"})
#: The words whose every site's node holds (see ``_holds``): a check's name or ``throw`` (a
#: ``#define`` whose body names neither is never read, see ``_Cpp.macro_bodies``); a macro's
#: name or ``#[error]``'s. A new kind of site must add the word that marks it here.
_CPP_WORDS = tuple(sorted({name.encode() for name in CHECKS} | {b"throw"}))
_PRINT_WORDS = tuple(sorted(name.encode() for name in native_macros.PRINTS))
#: What an exiting macro (``native_macros.exiting``) surfaces as: no Python exception (the process
#: ends before one could be raised), the C library's call that ends it.
EXIT_SURFACES = {"exit": ("exit", "libc.exit"), "abort": ("abort", "libc.abort")}
_RUST_WORDS = tuple(sorted({name.encode() for name in RUST_MACROS} | {b"error"}))
_RUST_TEST_ATTRS = frozenset({"test", "tokio::test", "cfg(test)", "rstest"})

SNIPPET_LINES = 25


def language_of(path: str) -> str | None:
    """The native language of a path by its suffix (``cpp``, ``cuda``, ``rust``), None for others."""
    return native_language(path)


def _grammar(path: str, language: str) -> str:
    return "cuda" if language == "cuda" or path.lower().endswith(_HEADERS_AS_CUDA) else language


@cache
def _parser(grammar: str) -> Any:
    import importlib

    import tree_sitter

    module = importlib.import_module(f"tree_sitter_{grammar}")
    return tree_sitter.Parser(tree_sitter.Language(module.language()))


def parse_tree(path: str, data: bytes) -> tuple[Any, Any]:
    """A C++/CUDA file's tree-sitter root and language, by the grammar its suffix takes."""
    parser = _parser(_grammar(path, native_language(path) or "cpp"))
    return parser.parse(data).root_node, parser.language


def grammar_versions() -> str:
    """The parser and grammar versions: part of the extractor, so of the cache's key."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in ("tree-sitter", "tree-sitter-cpp", "tree-sitter-cuda", "tree-sitter-rust"):
        try:
            out.append(f"{name}={version(name)}")
        except PackageNotFoundError:  # pragma: no cover - declared dependencies
            out.append(f"{name}=none")
    return ",".join(out)


def module_of(path: str) -> str:
    """``csrc/attention/dispatch.cu`` -> ``csrc.attention.dispatch``."""
    dot = path.rfind(".")
    stem = path[:dot] if dot > path.rfind("/") else path
    return ".".join(s for s in stem.split("/") if s)


def _empty(path: str, language: str) -> FileResult:
    return {
        "path": path,
        "module": module_of(path),
        "status": "ok",
        "reason": None,
        "sites": [],
        "classes": [],
        "bare_asserts": 0,
        "reraises": 0,
        "calls": [],
        "declarations": knobs.empty(),
        "graph": empty_graph(),
        "native": {"language": language, "parse_error": False},
    }


def extract_native(path: str, data: bytes, macros: tuple[native_macros.Macro, ...] = (), max_sites: int | None = None) -> FileResult:
    """The per-file result of a native file; never raises (a bug here skips the file, with the
    reason). ``macros``: the check macros the native trees' headers define (``native_macros``).
    ``max_sites``: past so many sites the walk stops, and the file is over the limit (``limit``)."""
    language = native_language(path) or "cpp"
    grammar = _grammar(path, language)
    result = _empty(path, language)
    if b"\0" in data:
        return _skip(result, "invalid source: null bytes")
    try:
        parser = _parser(grammar)
        tree = parser.parse(data)
        walker: _Walker = (_Rust if language == "rust" else _Cpp)(path, data, language)
        walker.limit = max_sites
        if isinstance(walker, _Cpp):
            walker.parser = parser
            own = native_macros.definitions(tree.root_node, parser.language) if b"#define" in data else []
            walker.wrappers = native_macros.visible(own, {m[0]: m for m in macros}, CHECKS)
        walker.walk(tree.root_node, 0)
        walker.macro_bodies(parser)
    except limit.OverLimit:
        return limit.over_limit(result, max_sites or 0)
    except RecursionError:
        return _skip(result, "too deeply nested")
    except Exception as e:  # noqa: BLE001 - one file must never stop a crawl
        return _skip(result, f"internal error: {type(e).__name__}: {e}")
    result["sites"] = walker.sites
    result["native"]["parse_error"] = bool(tree.root_node.has_error)
    return result


def _skip(result: FileResult, reason: str) -> FileResult:
    result["status"] = "skipped"
    result["reason"] = escape_surrogates(reason)
    return result


def _text(node: Any) -> str:
    return escape_surrogates(node.text.decode("utf-8", "replace"))


def _flat(text: str) -> str:
    """Code as the preprocessor stringizes it and a one-line field shows it: whitespace runs as one space."""
    return " ".join(text.split())


# ------------------------------------------------------------------------------------ strings

_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', "?": "?", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b"}


def _escape(seq: str) -> str:
    """The character a C or Rust escape sequence stands for (``\\n``, ``\\x41``, ``\\u{41}``, ``\\101``)."""
    body = seq[1:]
    try:
        if body[:1] in ("x", "u", "U"):
            digits = body[1:].strip("{}")
            return chr(int(digits, 16))
        if body[:1].isdigit() and len(body) > 1:
            return chr(int(body, 8))
    except (ValueError, OverflowError):
        return seq
    return _C_ESCAPES.get(body, body)


def _string_value(node: Any) -> str | None:
    """The value of a string or character literal node (C++ or Rust), None for any other node."""
    kind = node.type
    if kind == "concatenated_string":
        parts = [_string_value(c) for c in node.named_children]
        return None if any(p is None for p in parts) else "".join(p for p in parts if p is not None)
    if kind in ("raw_string_literal",):
        content = [c for c in node.named_children if c.type in ("raw_string_content", "string_content")]
        return "".join(_text(c) for c in content)
    if kind not in ("string_literal", "char_literal"):
        return None
    out = []
    for child in node.named_children:
        if child.type in ("string_content", "character"):
            out.append(_text(child))
        elif child.type == "escape_sequence":
            out.append(_escape(_text(child)))
    return "".join(out)


def _parts_of(pieces: list[Any]) -> list[Any]:
    """Template parts from ("field", expr) pairs and literal strings."""
    return [field(p[1]) if isinstance(p, tuple) else p for p in pieces]


def _site_template(pieces: list[Any], form: str) -> TemplateData:
    parts = _parts_of(pieces)
    if any(isinstance(p, str) and native_macros.PARAM in p for p in parts):
        # an enclosing #define's parameter a wrapper stringized (``native_macros.expand``): what
        # the macro's user passes shows there, so it is a field
        parts = [q for p in parts for q in (_split_params(p) if isinstance(p, str) else [p])]
        form = "concat" if form == "literal" else form
    return make_template(parts, form)


def _split_params(text: str) -> list[Any]:
    return [field(t) if i % 2 else t for i, t in enumerate(text.split(native_macros.PARAM))]


# ------------------------------------------------------------------------------------ walkers


#: Past this many words, :func:`_spots` looks each identifier of the text up among them rather
#: than searching the text once a word (a header's 20,000 wrappers made every native file's walk
#: read it 20,000 times: 0.16 s a file of 20 KB).
_FEW_WORDS = 64
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _spots(root: Any, words: Any) -> list[int]:
    """Sorted byte offsets, in ``root``'s source, of every occurrence of each of ``words`` (of
    each identifier that is one of them, when the words are many: a site's word is an identifier,
    the name called or ``throw``, so a node holding none of them as one makes no site either)."""
    text, base = root.text, root.start_byte
    words = tuple(words)
    if len(words) > _FEW_WORDS:
        wanted = frozenset(words)
        return [base + m.start() for m in _IDENTIFIER.finditer(text) if m.group() in wanted]
    out = []
    for word in words:
        at = text.find(word)
        while at >= 0:
            out.append(base + at)
            at = text.find(word, at + 1)
    out.sort()
    return out


def _holds(spots: list[int], node: Any) -> bool:
    """Whether one of ``spots`` lies within ``node``'s bytes. A site is made by a node whose
    own text names its macro (or ``throw``), so a subtree holding none of those words is not
    walked: most of a file's nodes are never visited."""
    i = bisect_left(spots, node.start_byte)
    return i < len(spots) and spots[i] < node.end_byte


class _Walker:
    def __init__(self, path: str, data: bytes, language: str):
        self.path = path
        self.module = module_of(path)
        self.language = language
        self.lines = data.decode("utf-8", "replace").split("\n")
        self.sites: list[ExtractedSite] = []
        self.limit: int | None = None  # (``extract_native``'s ``max_sites``: ``add`` stops the walk past it)

    def walk(self, root: Any, row_offset: int) -> None:
        raise NotImplementedError

    def macro_bodies(self, parser: Any) -> None:
        """Sites in macro definitions, read after the walk (C++'s ``#define``; none in Rust)."""

    def snippet(self, line: int, end: int, lo: int, hi: int) -> SnippetData:
        if hi - lo + 1 <= SNIPPET_LINES:
            start, stop = lo, hi
        else:
            start = max(lo, line - SNIPPET_LINES // 2)
            stop = min(hi, max(end, start + SNIPPET_LINES - 1))
            start = max(lo, min(start, stop - SNIPPET_LINES + 1))
        code = "\n".join(s.rstrip("\r") for s in self.lines[start - 1 : stop])
        return {"start_line": start, "end_line": stop, "code": escape_surrogates(code)}

    def add(
        self,
        *,
        line: int,
        end: int,
        qualname: str,
        scope: tuple[int, int],
        macro: str,
        surfaces: tuple[str, str],
        template: TemplateData,
        guards: list[str],
        loops: list[str] | None = None,
    ) -> None:
        if self.limit is not None and len(self.sites) >= self.limit:  # (no native site is dropped later)
            raise limit.OverLimit
        name, qualified = surfaces
        self.sites.append(
            {
                "path": self.path,
                "line": line,
                "end_line": end,
                "module": self.module,
                "qualname": qualname or "<file>",
                "kind": "native",
                "exception": name,
                "exception_qualname": qualified,
                "template": template,
                "native": {"macro": macro, "language": self.language, "surfaces_as": name},
                "snippet": self.snippet(line, end, *scope),
                "facts": {
                    "derived": "machine",
                    "guards": guards,
                    "loops": loops or [],
                    "handler": None,
                    "cause": None,
                    "reraise": False,
                    "decorators": [],
                    "docstring": None,
                },
            }
        )


#: A preprocessor test of the toolkit or the architecture a file is built for (``CUDA_VERSION``,
#: ``__CUDA_ARCH__``, ``HIP_VERSION``, a ``gfx`` target) or of a build option (``ENABLE_SCALED_MM_SM90``).
_TOOLKIT = re.compile(r"\b(?:CUDA_VERSION|CUDART_VERSION|__CUDACC_VER_\w+|__CUDA_ARCH\w*|HIP_VERSION\w*|ROCM_VERSION\w*|__gfx\w+|USE_ROCM|ENABLE_\w+)\b")
MAX_BRANCH = 300


def _toolkit_branch(call: Any) -> str | None:
    """The preprocessor branch a check is the whole body of a function under, when its tests name
    the toolkit or architecture it is built for: ``#if !defined(CUDA_VERSION) || CUDA_VERSION <
    12040`` around a ``TORCH_CHECK(false, ...)`` stub, built when the toolkit lacks what the real
    function needs (s43-judge2 W32); the tests that name neither are left out. Else None."""
    statement = call.parent
    body = statement.parent if statement is not None and statement.type == "expression_statement" else None
    function = body.parent if body is not None and body.type == "compound_statement" else None
    if body is None or function is None or function.type != "function_definition":
        return None
    if [c.id for c in body.named_children if c.type != "comment"] != [statement.id]:
        return None
    tests: list[str] = []
    child, here = function, function.parent
    while here is not None:
        if here.type in ("preproc_if", "preproc_elif", "preproc_ifdef"):
            if here.type == "preproc_ifdef":
                named = here.child_by_field_name("name")
                test = f"{'!' if _text(here.children[0]).strip() == '#ifndef' else ''}defined({_text(named) if named is not None else ''})"
            else:
                cond = here.child_by_field_name("condition")
                test = _flat(_text(cond)) if cond is not None else ""
            alternative = here.child_by_field_name("alternative")
            if alternative is not None and alternative.id == child.id:
                test = f"!({test})"
            if _TOOLKIT.search(test):
                tests.append(test)
        child, here = here, here.parent
    shown = " && ".join(reversed(tests))
    return shown if shown and len(shown) <= MAX_BRANCH else None


def _arguments(call: Any) -> list[Any]:
    arguments = call.child_by_field_name("arguments")
    return [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []


def _stringy(node: Any) -> bool:
    """A string: a literal, ``std::string("...")``, or a ``+`` chain (parenthesized or not) that holds one."""
    stack = [node]
    while stack:
        n = stack.pop()
        if _string_value(n) is not None:
            return True
        if n.type == "parenthesized_expression" and n.named_child_count == 1:
            stack.append(n.named_children[0])
        elif n.type == "binary_expression" and n.child_by_field_name("operator") is not None and _text(n.child_by_field_name("operator")) == "+":
            stack += [n.child_by_field_name("left"), n.child_by_field_name("right")]
        elif (
            n.type == "call_expression"
            and n.child_by_field_name("function") is not None
            and _flat(_text(n.child_by_field_name("function"))) in ("std::string", "string")
            and len(_arguments(n)) == 1
            and _string_value(_arguments(n)[0]) is not None
        ):
            return True
    return False


def _declarator_name(node: Any) -> str | None:
    """The name a C++ function definition's declarator declares (``ns::Class::f``, ``operator()``)."""
    while node is not None:
        if node.type in ("identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name", "template_function"):
            return _flat(_text(node))
        node = node.child_by_field_name("declarator")
    return None


class _Cpp(_Walker):
    def __init__(self, path: str, data: bytes, language: str):
        super().__init__(path, data, language)
        self.defines: list[Any] = []
        self.row_offset = 0
        self.macro_scope: tuple[str, tuple[int, int]] | None = None
        self.macro_params: frozenset[str] = frozenset()  # the parameters of the #define whose body is walked
        self.parser: Any = None
        self.wrappers: dict[str, native_macros.Macro] = {}  # the check macros this file sees, by name
        self.expansion: tuple[Any, ...] | None = None  # the use a walk of an expansion reads for (native_macros.use)
        self.expanded = 0
        self.expanded_text = 0  # characters of those expansions (native_macros.MAX_FILE_TEXT)
        self.ending: dict[int, tuple[Any, dict[int, str | None]]] = {}  # a block's statements -> the exit after each

    def walk(self, root: Any, row_offset: int) -> None:
        self.row_offset = row_offset
        last = len(self.lines)
        spots = _spots(
            root,
            (
                *_CPP_WORDS,
                *(name.encode() for name in self.wrappers),  # a wrapper's use is a site too
                *(_PRINT_WORDS if self.expansion is not None else ()),
            ),
        )  # and what an exiting macro prints
        # (node, names, scope lines, guards): an explicit stack, however deep the file nests
        stack: list[tuple[Any, tuple[str, ...], tuple[int, int], tuple[str, ...]]] = [(root, (), (1, last), ())]
        while stack:
            node, names, scope, guards = stack.pop()
            kind = node.type
            if kind in ("preproc_function_def", "preproc_def"):
                value = node.child_by_field_name("value")
                if value is not None:
                    self.defines.append((node, value))
                continue
            if kind == "function_definition":
                name = _declarator_name(node.child_by_field_name("declarator"))
                names = (*names, name or "<function>")
                scope = self.lines_of(node)
                guards = ()
            elif kind == "namespace_definition":
                named = node.child_by_field_name("name")
                names = (*names, _text(named) if named is not None else "<anonymous>")
            elif kind in ("class_specifier", "struct_specifier") and node.child_by_field_name("body") is not None:
                named = node.child_by_field_name("name")
                names = (*names, _text(named) if named is not None else "<anonymous>")
            elif kind == "call_expression":
                self.call(node, names, scope, guards)
            elif kind == "throw_statement":
                self.throw(node, names, scope, guards)
            elif kind == "expression_statement" and self.expansion is not None:
                self.printed(node, names, scope, guards)
            if kind == "if_statement":
                cond = node.child_by_field_name("condition")
                shown = _flat(_text(cond)) if cond is not None else ""
                shown = shown[1:-1].strip() if shown.startswith("(") and shown.endswith(")") else shown
                for child in reversed(node.children):
                    if not _holds(spots, child):
                        continue
                    if child.type == "else_clause":
                        stack.append((child, names, scope, (*guards, f"!({shown})")))
                    elif child == node.child_by_field_name("consequence"):
                        stack.append((child, names, scope, (*guards, shown)))
                    else:
                        stack.append((child, names, scope, guards))
                continue
            if kind == "switch_statement" and node.child_by_field_name("body") is not None:
                # a ``case V:`` label is the condition ``subject == V``, ``default:`` that of none of
                # the labels (48 of 100 native "whenever" triggers of vLLM v0.33.0 sat under one)
                labels = _case_guards(node)
                for child in reversed(node.child_by_field_name("body").children):
                    if _holds(spots, child):
                        label = labels.get(child.id)
                        stack.append((child, names, scope, (*guards, label) if label else guards))
                cond = node.child_by_field_name("condition")
                if cond is not None and _holds(spots, cond):
                    stack.append((cond, names, scope, guards))
                continue
            stack.extend((c, names, scope, guards) for c in reversed(node.children) if _holds(spots, c))

    def lines_of(self, node: Any) -> tuple[int, int]:
        return node.start_point[0] + 1 + self.row_offset, node.end_point[0] + 1 + self.row_offset

    def qualname(self, names: tuple[str, ...]) -> str:
        if self.macro_scope is not None:
            return self.macro_scope[0]
        return "::".join(names)

    def call(self, node: Any, names: tuple[str, ...], scope: tuple[int, int], guards: tuple[str, ...]) -> None:
        function = node.child_by_field_name("function")
        if function is None or function.type != "identifier":
            return
        macro = _text(function)
        surfaces = CHECKS.get(macro)
        arguments = node.child_by_field_name("arguments")
        if surfaces is None and macro in self.wrappers and arguments is not None:
            native_macros.use(self, node, self.wrappers[macro], names, scope, guards)
            return
        if surfaces is None or arguments is None:
            return
        args = [a for a in arguments.named_children if a.type != "comment"]
        if not args:
            return
        if self.macro_scope is not None and any(_text(a) == "__VA_ARGS__" for a in args):
            return  # a wrapper's definition (``#define MY_CHECK(c, ...) TORCH_CHECK(c, __VA_ARGS__)``), not a check
        cond = _flat(_text(args[0]))
        pieces: list[Any] = list(_PREFIXES.get(macro, ()))
        if len(args) == 1 and macro.startswith("TORCH_CHECK"):
            head, _, tail = _TORCH_DEFAULT.partition("{}")
            pieces += [head + cond + tail]
            form = "literal"
        else:
            pieces += [p for a in args[1:] for p in self.concat(a)]
            form = "concat" if any(isinstance(p, tuple) for p in pieces) else "literal"
        failing = [] if cond in ("false", "0") else [f"!({cond})"]
        self.site(node, names, scope, macro, surfaces, _site_template(pieces, form), [*guards, *failing])
        branch = _toolkit_branch(node) if not failing and not guards and self.expansion is None and self.macro_scope is None else None
        if branch is not None:
            self.sites[-1][READS] = {PREPROCESSOR: [branch]}  # (kept off the record, as the Python sites' reads)
        prefix = len(_STD_PREFIX) if macro in _PREFIXES else 0
        if prefix and len(pieces) > prefix:  # the title: the message after the function, file and line
            self.sites[-1]["title_template"] = _site_template(pieces[prefix:], form)

    def piece(self, node: Any) -> Any:
        value = _string_value(node)
        if value is not None:
            return value
        if node.type == "number_literal":
            text = _text(node)
            if text.isdigit() and (text == "0" or not text.startswith("0")):
                return text  # streamed as written; a suffix, hex or a float may print otherwise
        return ("field", _flat(_text(node)))

    def throw(self, node: Any, names: tuple[str, ...], scope: tuple[int, int], guards: tuple[str, ...]) -> None:
        made = next((c for c in node.named_children if c.type == "call_expression"), None)
        if made is None:
            return
        function = made.child_by_field_name("function")
        arguments = made.child_by_field_name("arguments")
        if function is None or arguments is None or function.type != "qualified_identifier":
            return
        scope_name, _, name = _flat(_text(function)).rpartition("::")
        if scope_name not in ("std", "::std") or name not in THROWN:
            return
        args = [a for a in arguments.named_children if a.type != "comment"]
        pieces: list[Any] = self.concat(args[0]) if args else []
        form = "concat" if any(isinstance(p, tuple) for p in pieces) else "literal"
        self.site(node, names, scope, f"throw std::{name}", ("RuntimeError", "builtins.RuntimeError"), _site_template(pieces, form), list(guards))

    def printed(self, node: Any, names: tuple[str, ...], scope: tuple[int, int], guards: tuple[str, ...]) -> None:
        """In an exiting macro's expansion, a statement that prints (``printf(fmt, ...)``,
        ``fprintf(stderr, fmt, ...)``, ``std::cerr << ... ``) followed in its block by a call that
        ends the process: a site whose message is what it prints (its last newline dropped: a
        paste is a line)."""
        ended = self.ends_after(node)
        expr = node.named_children[0] if node.named_children else None
        if ended is None or expr is None:
            return
        pieces = self.printf(expr) if expr.type == "call_expression" else self.streamed(expr)
        if not pieces:
            return
        if isinstance(pieces[-1], str):
            pieces[-1] = pieces[-1].rstrip("\n")
        fielded = any(isinstance(p, tuple) for p in pieces)
        form = "literal" if not fielded else "percent" if expr.type == "call_expression" else "concat"
        surfaces = EXIT_SURFACES.get(ended, EXIT_SURFACES["exit"])
        self.site(node, names, scope, "", surfaces, _site_template(pieces, form), list(guards))

    def ends_after(self, node: Any) -> str | None:
        """The call among the statements after ``node`` in its block that first ends the process
        (one of ``native_macros.EXITS``), or None. Read once a block, from its end (scanning on
        from each statement took the square of a block's statements: an exiting macro of 800
        printf calls took 0.8 s a use)."""
        parent = node.parent
        if parent is None:
            return None
        hit = self.ending.get(parent.id)
        if hit is None or hit[0] != parent:
            after: dict[int, str | None] = {}
            ended = None
            for sibling in reversed(parent.named_children):
                after[sibling.start_byte] = ended
                call = sibling.named_children[0] if sibling.type == "expression_statement" and sibling.named_children else None
                function = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
                name = _flat(_text(function)).rpartition("::")[2] if function is not None else None
                ended = name if name in native_macros.EXITS else ended
            hit = (parent, after)  # (the node kept: its id is not another tree's while it lives)
            self.ending[parent.id] = hit
        return hit[1].get(node.start_byte)

    def printf(self, call: Any) -> list[Any]:
        """``printf(fmt, a, b)`` / ``fprintf(stderr, fmt, ...)`` -> pieces, each conversion a field
        named by its argument; [] for any other call or a format that is no literal."""
        function = call.child_by_field_name("function")
        name = _flat(_text(function)).rpartition("::")[2] if function is not None else ""
        args = _arguments(call)
        if name == "fprintf" and args and _flat(_text(args[0])).rpartition("::")[2] in ("stderr", "stdout"):
            args = args[1:]
        elif name != "printf":
            return []
        fmt = _string_value(args[0]) if args else None
        return _c_format(fmt, [(self.piece(a), _flat(_text(a))) for a in args[1:]]) if fmt is not None else []

    def streamed(self, expr: Any) -> list[Any]:
        """``std::cerr << "a" << x << std::endl`` -> pieces; [] for anything else."""
        out: list[Any] = []
        while expr.type == "binary_expression" and _text(expr.child_by_field_name("operator")) == "<<":
            right = expr.child_by_field_name("right")
            if _flat(_text(right)).rpartition("::")[2] != "endl":
                out.append(self.piece(right))
            expr = expr.child_by_field_name("left")
        if _flat(_text(expr)).rpartition("::")[2] != "cerr":
            return []
        return out[::-1]

    def concat(self, node: Any) -> list[Any]:
        """``std::string("a") + x + "b"`` -> its pieces (a ``+`` chain that holds a string, left to
        right); any other expression (``n + 1`` adds numbers) is one piece."""
        out: list[Any] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if not _stringy(n):
                out.append(self.piece(n))
            elif n.type == "parenthesized_expression":
                stack.append(n.named_children[0])
            elif n.type == "binary_expression":
                stack += [n.child_by_field_name("right"), n.child_by_field_name("left")]
            elif n.type == "call_expression":
                value = _string_value(_arguments(n)[0])
                out.append(value if value is not None else ("field", _flat(_text(n))))
            else:
                out.append(self.piece(n))
        return out

    def site(
        self, node: Any, names: tuple[str, ...], scope: tuple[int, int], macro: str, surfaces: tuple[str, str], template: TemplateData, guards: list[str]
    ) -> None:
        line, end = self.lines_of(node)
        if self.expansion is not None:  # a check a wrapper's use expands to: the use's place, and its name
            (line, end), names, scope, outer, macro, _depth = self.expansion
            guards = [*outer, *guards]
        if self.macro_scope is not None:
            scope = self.macro_scope[1]
        self.add(line=line, end=end, qualname=self.qualname(names), scope=scope, macro=macro, surfaces=surfaces, template=template, guards=guards)

    def macro_bodies(self, parser: Any) -> None:
        """Checks inside ``#define`` bodies: each body that names a check is parsed as the body of a
        function (line continuations blanked, so lines stay where they are in the file)."""
        defines, self.defines = self.defines, []
        words = (*_CPP_WORDS, *(name.encode() for name in self.wrappers))
        for define, value in defines:
            body = value.text
            named = define.child_by_field_name("name")
            if named is not None and _text(named) in self.wrappers:
                continue  # a wrapper's definition: its uses are the sites
            if not _spots(value, words):
                continue
            blanked = body.replace(b"\\\r\n", b"  \n").replace(b"\\\n", b" \n")
            tree = parser.parse(b"void _(){" + blanked + b"\n}")
            named = define.child_by_field_name("name")
            self.macro_scope = (f"#define {_text(named) if named is not None else '?'}", self.lines_of_define(define))
            params = define.child_by_field_name("parameters")
            self.macro_params = frozenset(_text(p) for p in params.children if p.type == "identifier") if params is not None else frozenset()
            try:
                self.walk(tree.root_node, value.start_point[0])
            finally:
                self.macro_scope = None
                self.macro_params = frozenset()
                self.row_offset = 0
                self.defines = []  # a #define inside a body is not one

    def lines_of_define(self, define: Any) -> tuple[int, int]:
        start, end = define.start_point[0] + 1, define.end_point[0] + 1
        if define.end_point[1] == 0 and end > start:  # the node ends at the start of the next line
            end -= 1
        return start, end


#: What stands between a Rust item and its attributes.
_RUST_ATTACHED = frozenset({"attribute_item", "line_comment", "block_comment"})


class _Rust(_Walker):
    def __init__(self, path: str, data: bytes, language: str):
        super().__init__(path, data, language)
        self.families: dict[int, tuple[Any, tuple[dict[int, int], list[bool], list[Any]]]] = {}

    def walk(self, root: Any, row_offset: int = 0) -> None:
        last = len(self.lines)
        spots = _spots(root, _RUST_WORDS)
        # (node, names, scope lines, guards, loops): the conditions a site is reached under, read as
        # the C++ walker reads an ``if``'s (a function's ``bail!`` is not raised whenever it runs)
        stack: list[tuple[Any, tuple[str, ...], tuple[int, int], tuple[str, ...], tuple[str, ...]]] = [(root, (), (1, last), (), ())]
        while stack:
            node, names, scope, guards, loops = stack.pop()
            kind = node.type
            if kind == "attribute_item":
                self.attribute(node, names, scope)
                continue
            if self.is_test(node):
                continue
            if kind in ("function_item", "mod_item", "enum_item", "struct_item", "trait_item"):
                named = node.child_by_field_name("name")
                names = (*names, _text(named) if named is not None else "?")
                if kind == "function_item":
                    scope = (node.start_point[0] + 1, node.end_point[0] + 1)
                    guards, loops = (), ()
            elif kind == "impl_item":
                typ = node.child_by_field_name("type")
                names = (*names, _flat(_text(typ)) if typ is not None else "?")
            elif kind == "macro_invocation":
                self.macro(node, names, scope, guards, loops)
            branches = _rust_branches(node)
            for c in reversed(node.children):
                if _holds(spots, c):
                    more, inside = branches.get(c.id, ((), ()))
                    stack.append((c, names, scope, (*guards, *more), (*loops, *inside)))

    @staticmethod
    def attribute_text(item: Any) -> str:
        attribute = next((c for c in item.named_children if c.type == "attribute"), None)
        return _flat(_text(attribute)).replace(" ", "") if attribute is not None else ""

    def is_test(self, node: Any) -> bool:
        """An item marked ``#[test]``, ``#[cfg(test)]``, ``#[tokio::test]``: test code, not an error users meet."""
        if not node.type.endswith("_item") or node.type == "attribute_item":
            return False
        family = self.family(node)
        at = family[0].get(node.id) if family is not None else None
        return at is not None and family is not None and family[1][at]

    def family(self, node: Any) -> tuple[dict[int, int], list[bool], list[Any]] | None:
        """Of ``node``'s siblings, read once a parent (stepping from sibling to sibling is itself a
        walk of the parent's children in tree-sitter, and each attribute scanned on to its item:
        4,000 ``#[error]`` lines before one struct took 304 s of CPU): (index by node id, whether
        the attributes just before each mark a test, the item each attribute or comment is on)."""
        parent = node.parent
        if parent is None:
            return None
        hit = self.families.get(parent.id)
        if hit is None or hit[0] != parent:
            children = parent.named_children
            tested, on = [False] * len(children), [None] * len(children)
            marked = False
            for i, child in enumerate(children):
                tested[i] = marked
                if child.type not in _RUST_ATTACHED:
                    marked = False
                elif child.type == "attribute_item":
                    text = self.attribute_text(child)
                    marked = marked or text.split("(", 1)[0] in ("test", "tokio::test", "rstest") or text == "cfg(test)"
            item = None
            for i in range(len(children) - 1, -1, -1):
                on[i] = item
                if children[i].type not in _RUST_ATTACHED:
                    item = children[i]
            hit = (parent, ({c.id: i for i, c in enumerate(children)}, tested, on))  # (the parent kept: its id stays its own)
            self.families[parent.id] = hit
        return hit[1]

    def attribute(self, item: Any, names: tuple[str, ...], scope: tuple[int, int]) -> None:
        attribute = next((c for c in item.named_children if c.type == "attribute"), None)
        if attribute is None or not attribute.named_children or _text(attribute.named_children[0]) != "error":
            return
        args = attribute.child_by_field_name("arguments")
        tokens = [c for c in args.named_children] if args is not None else []
        if not tokens or _string_value(tokens[0]) is None:
            return  # #[error(transparent)]: the inner error's message, catalogued where it is made
        family = self.family(item)
        at = family[0].get(item.id) if family is not None else None
        target = family[2][at] if family is not None and at is not None else None
        if target is None:
            return
        named = target.child_by_field_name("name")
        variant = _text(named) if named is not None else "?"
        if target.type == "enum_variant":
            owner = names[-1] if names else variant
            qualname = "::".join((*names, variant))
        else:
            owner, qualname = variant, "::".join((*names, variant))
        pieces = _rust_format(_string_value(tokens[0]) or "", self.args(self.groups(args)[1:]), thiserror=True)
        line, end = item.start_point[0] + 1, item.end_point[0] + 1
        self.add(
            line=line,
            end=end,
            qualname=qualname,
            scope=(line, max(end, target.end_point[0] + 1)),
            macro="#[error]",
            surfaces=(owner, f"{self.module}.{owner}"),
            template=_rust_template(pieces),
            guards=[],
        )

    @staticmethod
    def groups(tree: Any) -> list[list[Any]]:
        """A token tree's arguments, each the list of its tokens, split at the top-level commas."""
        out: list[list[Any]] = [[]]
        for child in tree.children[1:-1]:
            if child.type == ",":
                out.append([])
            elif child.type not in ("line_comment", "block_comment"):
                out[-1].append(child)
        return [g for g in out if g]

    @staticmethod
    def source(group: list[Any]) -> str:
        return _flat(
            _text(group[0])
            if len(group) == 1
            else escape_surrogates(
                group[0]
                .parent.text[group[0].start_byte - group[0].parent.start_byte : group[-1].end_byte - group[0].parent.start_byte]
                .decode("utf-8", "replace")
            )
        )

    def args(self, groups: list[list[Any]]) -> list[tuple[str | None, str]]:
        """(name, source) of each argument: ``name = expr`` is a named one."""
        out: list[tuple[str | None, str]] = []
        for group in groups:
            if len(group) >= 3 and group[0].type == "identifier" and group[1].type == "=":
                out.append((_text(group[0]), self.source(group[2:])))
            else:
                out.append((None, self.source(group)))
        return out

    def macro(self, node: Any, names: tuple[str, ...], scope: tuple[int, int], outer: tuple[str, ...] = (), loops: tuple[str, ...] = ()) -> None:
        name_node = node.child_by_field_name("macro")
        if name_node is None:
            return
        name = _text(name_node).rpartition("::")[2]
        if name not in RUST_MACROS:
            return
        tree = next((c for c in node.named_children if c.type == "token_tree"), None)
        if tree is None:
            return
        groups = self.groups(tree)
        guards: list[str] = list(outer)
        if name == "ensure":
            if not groups:
                return
            cond = self.source(groups[0])
            guards.append(f"!({cond})")
            groups = groups[1:]
            if not groups:  # anyhow's own message for a bare ensure!
                self.rust_site(node, names, scope, name, [f"Condition failed: `{cond}`"], guards, loops)
                return
        if not groups:
            return
        fmt = _string_value(groups[0][0]) if len(groups[0]) == 1 else None
        if fmt is None:  # anyhow!(err): an error value made elsewhere
            pieces: list[Any] = [("field", self.source(groups[0]))]
        else:
            pieces = _rust_format(fmt, self.args(groups[1:]))
        self.rust_site(node, names, scope, name, pieces, guards, loops)

    def rust_site(
        self, node: Any, names: tuple[str, ...], scope: tuple[int, int], macro: str, pieces: list[Any], guards: list[str], loops: tuple[str, ...] = ()
    ) -> None:
        line, end = node.start_point[0] + 1, node.end_point[0] + 1
        self.add(
            line=line,
            end=end,
            qualname="::".join(names),
            scope=scope,
            macro=f"{macro}!",
            surfaces=("Error", "anyhow.Error"),
            template=_rust_template(pieces),
            guards=guards,
            loops=list(loops),
        )


def _case_guards(switch: Any) -> dict[int, str]:
    """The condition each ``case_statement`` of a C/C++ ``switch`` holds its statements under, by
    node id: ``k == 1 || k == 2`` for ``case 1: case 2: ...`` (a label with no statements falls
    through to the next), ``!(k == 1 || k == 2)`` for ``default:``, or ``SWITCH_DEFAULT`` and the
    subject when the cases are written by macros; none for a default that labels fall into, or
    alone in its switch."""
    cond = switch.child_by_field_name("condition")
    subject = _flat(_text(cond)) if cond is not None else ""
    subject = subject[1:-1].strip() if subject.startswith("(") and subject.endswith(")") else subject
    body = switch.child_by_field_name("body")
    cases = [c for c in body.named_children if c.type == "case_statement"]
    values = [_flat(_text(v)) for c in cases for v in [c.child_by_field_name("value")] if v is not None]
    out: dict[int, str] = {}
    pending: list[str] = []
    for case in cases:
        value = case.child_by_field_name("value")
        held = [c for c in case.named_children if value is None or c.id != value.id]
        if value is None:
            if values and not pending:
                out[case.id] = "!(" + " || ".join(f"{subject} == {v}" for v in values) + ")"
            elif not pending and len(body.named_children) > 1:  # (its cases are macros: ``AG_CASE(6)``)
                out[case.id] = f"{SWITCH_DEFAULT}{subject}"
            pending = []
            continue
        pending.append(_flat(_text(value)))
        if held:
            out[case.id] = " || ".join(f"{subject} == {v}" for v in pending)
            pending = []
    return out


#: How the guard of a ``default:`` starts whose switch's cases macros write (``AG_CASE(6)``): what
#: follows is the switch's subject (see ``phrasing.conditions``).
SWITCH_DEFAULT = "default of switch "


#: How a guard a closure adds starts (see ``phrasing.conditions``): the call it is passed to runs
#: it, when and as often as that call decides (``.map_err(|e| ...)``: on an error).
CLOSURE_OF = "closure of "


def _rust_branches(node: Any) -> dict[int, tuple[tuple[str, ...], tuple[str, ...]]]:
    """The guards and loops each child of ``node`` adds for what it holds: an ``if``'s branches
    (its condition, or its negation for ``else``), a ``let ... else``'s (its pattern did not
    match), a ``match`` arm's (``match V: case P``, as Python's are written), a loop's body
    (``for p in v``, ``while c``, ``loop``) and a closure's (the call it is given to)."""
    kind = node.type
    field = node.child_by_field_name
    if kind == "if_expression":
        cond, consequence, alternative = field("condition"), field("consequence"), field("alternative")
        shown = _flat(_text(cond)) if cond is not None else ""
        out: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        if consequence is not None:
            out[consequence.id] = ((shown,), ())
        if alternative is not None:
            out[alternative.id] = ((f"!({shown})",), ())
        return out
    if kind == "let_declaration":
        pattern, value, alternative = field("pattern"), field("value"), field("alternative")
        if alternative is None or pattern is None or value is None:
            return {}
        return {alternative.id: ((f"!(let {_flat(_text(pattern))} = {_flat(_text(value))})",), ())}
    if kind == "match_block":
        value = node.parent.child_by_field_name("value") if node.parent is not None else None
        if value is None:
            return {}
        subject = _flat(_text(value))
        return {
            arm.id: ((f"match {subject}: case {_flat(_text(pattern))}",), ())
            for arm in node.named_children
            if arm.type == "match_arm"
            for pattern in [arm.child_by_field_name("pattern")]
            if pattern is not None
        }
    if kind == "for_expression":
        pattern, value, body = field("pattern"), field("value"), field("body")
        if body is None or pattern is None or value is None:
            return {}
        return {body.id: ((), (f"for {_flat(_text(pattern))} in {_flat(_text(value))}",))}
    if kind == "while_expression":
        cond, body = field("condition"), field("body")
        if body is None or cond is None:
            return {}
        shown = _flat(_text(cond))
        return {body.id: ((shown,), (f"while {shown}",))}
    if kind == "loop_expression":
        body = field("body")
        return {body.id: ((), ("loop",))} if body is not None else {}
    if kind == "closure_expression":
        body = field("body")
        holder = node.parent.parent if node.parent is not None and node.parent.type == "arguments" else None
        callee = holder.child_by_field_name("function") if holder is not None and holder.type == "call_expression" else None
        shown = _flat(_text(callee)) if callee is not None else "a call"
        return {body.id: ((f"{CLOSURE_OF}{shown}",), ())} if body is not None else {}
    return {}


#: The conversion characters of C's printf; what comes between ``%`` and one (flags, width,
#: precision, length) only says how the value prints.
_C_CONVERSIONS = frozenset("diouxXeEfFgGaAcspn")


def _c_format(fmt: str, args: list[tuple[Any, str]]) -> list[Any]:
    """A printf format and its arguments (piece, source) -> pieces: each conversion a field named by the
    argument it takes (``%s`` with ``__FILE__`` -> ``{__FILE__}``), a literal argument its text
    where nothing pads or cuts it, ``%%`` a percent sign. A ``*`` width takes an argument of its own."""
    out: list[Any] = []
    literal: list[str] = []
    i = nxt = 0
    while i < len(fmt):
        c = fmt[i]
        i += 1
        if c != "%":
            literal.append(c)
            continue
        if fmt[i : i + 1] == "%":
            literal.append("%")
            i += 1
            continue
        start = i
        while i < len(fmt) and fmt[i] not in _C_CONVERSIONS:
            nxt += fmt[i] == "*"
            i += 1
        i += 1
        value, source = args[nxt] if nxt < len(args) else (("field", f"{nxt}"), f"{nxt}")
        nxt += 1
        if isinstance(value, str) and i - start == 1:
            literal.append(value)
            continue
        if literal:
            out.append("".join(literal))
            literal = []
        out.append(("field", source))
    if literal:
        out.append("".join(literal))
    return out


def _rust_template(pieces: list[Any]) -> TemplateData:
    form = "format" if any(isinstance(p, tuple) for p in pieces) else "literal"
    return _site_template(pieces, form)


def _rust_format(fmt: str, args: list[tuple[str | None, str]], thiserror: bool = False) -> list[Any]:
    """A Rust format string and its arguments -> pieces: ``{}`` takes the next positional
    argument, ``{0}`` one by index, ``{name}`` a named argument (``name = expr``) or the variable;
    thiserror's ``{0}``/``{name}`` are the variant's fields. The format spec stays on the field."""
    specs = format_specs(fmt)
    if specs is None:
        return [fmt]
    positional = [a for n, a in args if n is None]
    named = {n: a for n, a in args if n is not None}
    out: list[Any] = []
    nxt = 0
    for literal, name, spec, _conv in specs:
        if literal:
            out.append(literal)
        if name is None:
            continue
        suffix = f":{spec}" if spec else ""
        if name == "":
            expr = positional[nxt] if nxt < len(positional) else f"{nxt}"
            nxt += 1
        elif name.isdigit() and not thiserror:
            index = int(name)
            expr = positional[index] if index < len(positional) else name
        else:
            expr = named.get(name, name)
        out.append(("field", expr + suffix))
    return out
