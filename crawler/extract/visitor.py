"""Extraction: the bytes of one Python file -> plain-data facts about every raise site.

``extract_file(path, data)`` is pure and deterministic, never raises and never imports or runs
the analysed code. It parses once (stdlib ``ast``; libcst in a child process for syntax newer
than the running Python, see :mod:`crawler.extract.parse`) and walks the *statements* once, keeping the
state a site needs on stacks: enclosing scopes, ``if``/``while`` guards, loop headers, except
handlers, and an environment of string values held in local names.

Choices (the contract leaves them to us):

- **qualname** follows Python's ``__qualname__``: ``Class.method``, nested functions
  ``outer.<locals>.inner``; ``<module>`` at top level.
- **re-raises** (bare ``raise``; ``raise e`` where ``e`` is an enclosing handler's name; a raise
  of a value the function caught, was handed or read, whose class the code does not show) are
  not new messages: they are not sites, only counted in ``reraises``.
- **bare asserts** (no message) are sites of kind ``assert`` with no message and their condition
  (``condition``, white space collapsed), which the entry is keyed by; they are counted in
  ``bare_asserts`` too. Every assert's last guard is the failing condition ``not (test)``.
- **message argument**: keyword ``message=`` / ``msg=`` / ``detail=`` when given, else the first
  positional argument.
- **constructor vs helper**: a call whose callee's last name starts with an upper-case letter
  constructs an exception; anything else (``make_error(...)``, ``self._err(...)``,
  ``Error.from_x(...)``) is a helper whose message is its first string-building argument. A
  helper's exception is the class for ``Class.factory(...)``, else what
  :mod:`crawler.extract.raised` reads from the code (the function's return annotation, the
  class its every ``return`` constructs); where no one class shows, none is claimed. When the
  helper is the module's and its ``return``\\s construct that class with text of their own
  (``return ValueError(f"{reason}: ... Supported ...")``), the message is one of those, the
  call's arguments put in for its parameters; so too for ``err = helper(...)`` ... ``raise err``
  (the class an ``isinstance`` test names): ``_finish``. What the helper hands back as it was
  given, or constructs of another class, is no message of that raise.
- **variables**: the value reaching the raise is the last assignment on the path (assignments
  inside branches the raise is in win; after an ``if`` the last branch that assigned wins),
  with ``+=`` appended. ``err = SomeError(...); raise err`` is followed too; a raise of a value
  (``raise err``, ``raise self._error``) names the class :mod:`crawler.extract.raised` reads
  from the code, else it is a re-raise of an exception made elsewhere (below).
- **logs and responses** (``surface``): log calls at warning and above and the upstream's
  response builders are sites of kind ``log`` / ``response`` wherever a statement holds one;
  their words join the ones that keep a function body from being skipped.
- **assembled messages**: a local list of messages (``x = []``, ``x.append(msg)``, ``x +=
  [...]``) joined into the message, and a message a same-module helper returns, keep their
  pieces (``templates.Field.alts``): form ``assembled``, the pieces as ``alternatives``. A list
  the function did not start (``x = self.reasons()``, a parameter) gets the messages appended
  to it as pieces, with one piece matching anything for what it held before.
- **snippet**: the enclosing function (from its first decorator) when it has at most
  ``SNIPPET_LINES`` lines, else ``SNIPPET_LINES`` lines around the site inside it.

Beyond the ``Site`` fields, the result carries ``calls``: for constructor calls of non-builtin
exceptions, the templates of the call's arguments (``{"site": index, "args": [...], "kwargs":
{...}}``) so :func:`crawler.catalogue.hierarchy.apply_init_templates` can substitute them into the
message a repo-defined ``__init__`` builds. ``classes[].init`` is None when the class defines no
``__init__`` (it inherits its base's).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
import warnings
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, cast

from crawler.extract import assembled, cross_module_facts, knob_passes, knobs, limit, parse, raised, surface
from crawler.extract.ast_names import record_import
from crawler.extract.codefacts import GraphWalker, child_nodes, empty_graph, line_numbers, on_lines
from crawler.extract.guard_reads import CAUGHT, HANDED, IMPORTING, READS, STUB, ClassText, FunctionText, trace
from crawler.extract.helper_messages import MAX_PIECES, HelperMessages, add_pieces
from crawler.extract.state import CallMade, Frame, FunctionNode, Held, Made, MadeReturn, PendingMade, PendingName, PendingPieces, Piece, ScopeFacts
from crawler.extract.surface_sites import SurfaceSites, has_text_to_match
from crawler.extract.templates import (
    IMPORTED,
    Built,
    Field,
    MarkedTemplate,
    MessageBuilder,
    escape_surrogates,
    field,
    imported_piece,
    make_template,
    none_template,
)
from crawler.extract.text import Source, decode_source, module_name
from crawler.model.kinds import ASSERT, RAISE, RESPONSE
from crawler.model.shapes import UNKNOWN_EXCEPTION_QUALNAME, ExtractedSite, FileResult, TemplateData

EXTRACTOR_VERSION = "12"  # 6: bare asserts are sites; 7: what each check reads (guard_reads); 8: no site under `if TYPE_CHECKING:`; 9: a check its own try catches (guard_reads.CAUGHT); 10: a native check under a toolkit's #if, a pattern function handed to register_replacement (guard_reads.PREPROCESSOR, HANDED); and a field its config fills when None (knob_helpers.defaulted_fields); 11: a placeholder defined where an optional import failed, the imports a check's `except ImportError` is for (guard_reads.STUB, IMPORTING); 12: the calls a try catches quietly, by name (knob_passes.quiet)
#: What a library that runs a function handed to it catches of what it raises (torch's
#: ``register_replacement``: a ``RuntimeError`` is a trace mismatch).
_LIBRARY_CATCHES = frozenset({"RuntimeError"})
SNIPPET_LINES = 25
MESSAGE_KEYWORDS = ("message", "msg", "detail")

BUILTIN_EXCEPTIONS = frozenset(n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException))
_EXC_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt")


@cache
def _word_pattern(word: str) -> re.Pattern[str]:
    """A word (an identifier) not inside a longer one. Led by the word itself, so ``re`` scans
    with a fast literal search (an alternation led by ``\\b`` ran at a third of the parse's
    speed); what precedes it is looked back at from its end."""
    w = re.escape(word)
    return re.compile(rf"{w}(?!\w)(?<!\w{w})")


@cache
def _word_patterns(words: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Patterns that find the words, each not inside a longer one: one scan of the text per word
    that no other begins (``warn`` finds ``warning`` and ``warning_once`` too, each scan is a
    pass over the whole text). The lookbehind follows that word, the longer words' endings come
    after it: a match starting inside a word would be preceded by a word character."""
    alone = sorted({w for w in words if not w.isidentifier()})
    names = sorted({w for w in words if w.isidentifier()})
    heads = [w for w in names if not any(w != o and w.startswith(o) for o in names)]
    out = [_word_pattern(w) for w in alone]
    for head in heads:
        endings = sorted((w[len(head) :] for w in names if w != head and w.startswith(head)), key=lambda e: (-len(e), e))
        h = re.escape(head)
        rest = f"(?:{'|'.join(map(re.escape, endings))})?" if endings else ""
        out.append(re.compile(rf"{h}(?<!\w{h}){rest}(?!\w)"))
    return tuple(out)


#: Words without which a function's body can give nothing (see ``_Extractor._inert``); found as
#: text, so one inside a string or a comment only costs a walk that finds nothing.
_HOT_WORDS = tuple(_word_pattern(w) for w in ("raise", "assert", "class", "__init__"))
#: The words without which a function's body can give no class record (``_classes``).
_CLASS_WORDS = tuple(_word_pattern(w) for w in ("class", "__init__"))
_LONE_CR = re.compile(r"\r(?!\n)")


def _word_lines(patterns: tuple[re.Pattern[str], ...], text: str) -> list[int]:
    """Ascending 1-based numbers, each once, of the lines on which any of the words occurs (``\\n`` ends)."""
    return line_numbers(sorted(match.start() for pattern in patterns for match in pattern.finditer(text)), text)


def extract_file(path: str, data: bytes, settings: surface.Settings = surface.DEFAULT) -> FileResult:
    # Warnings about the *analysed* code (invalid escape sequences are SyntaxWarning/
    # DeprecationWarning at parse time) are none of ours: under ``-W error`` they would turn a
    # valid file into a SyntaxError. The result must not depend on the warning filters.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _extract_file(path, data, settings)


def skipped_result(path: str, reason: str) -> FileResult:
    """The result of a file that gave nothing, with the reason."""
    return _skipped(_empty_result(path), reason)


def _empty_result(path: str) -> FileResult:
    module, _ = module_name(path)
    return {
        "path": path,
        "module": module,
        "status": "ok",
        "reason": None,
        "sites": [],
        "classes": [],
        "bare_asserts": 0,
        "reraises": 0,
        "calls": [],
        "declarations": knobs.empty(),
    }


def _extract_file(path: str, data: bytes, settings: surface.Settings) -> FileResult:
    module, is_package = module_name(path)
    result = _empty_result(path)
    if b"\0" in data:
        return _skipped(result, "invalid source: null bytes")
    try:
        text = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        return _skipped(result, f"decode error: {getattr(e, 'msg', None) or e}")
    try:
        tree = parse.parse_source(text)
        src = Source(text)
        graph = GraphWalker(module, is_package)
        ex = _Extractor(path, module, is_package, src, settings, graph=graph)
        try:
            ex.run(tree)
        except limit.OverLimit:  # (``settings.max_sites`` is set: the walk stops there)
            result["classes"] = _classes(tree, path, module, is_package, ex.src)
            return limit.over_limit(result, settings.max_sites or 0)
    except SyntaxError as e:
        return _skipped(result, f"syntax error: line {e.lineno}: {e.msg}")
    except parse.FallbackUnavailable as e:
        skipped = _skipped(result, str(e))
        skipped["transient"] = True  # engine: never cache it; the next crawl tries again
        return skipped
    except UnicodeDecodeError as e:
        return _skipped(result, f"decode error: {e.reason} at byte {e.start}")
    except ValueError as e:  # null bytes (3.11), unknown encodings
        return _skipped(result, f"invalid source: {e}")
    except RecursionError:
        return _skipped(result, "too deeply nested")
    except MemoryError:  # what CPython's parser raises on pathological nesting
        return _skipped(result, "too deeply nested or too complex (parser MemoryError)")
    except Exception as e:  # noqa: BLE001 - a bug here must not stop a whole crawl
        return _skipped(result, f"internal error: {type(e).__name__}: {e}")
    result["sites"] = ex.sites
    result["classes"] = ex.classes
    result["bare_asserts"] = ex.bare_asserts
    result["reraises"] = ex.reraises
    result["calls"] = ex.calls
    # (one split of the text for both: ``Source.lines`` is ``text.split("\\n")`` without a "\\r")
    lines = None if "\r" in text else ex.src.lines
    if ex.graph_failed:  # (the knobs walk the tree themselves)
        result["declarations"] = knobs.declarations(tree, text, module, is_package, lines)
    else:
        walked = knob_passes.Walked(graph.called, graph.taken, graph.made)
        result["declarations"] = knobs.declarations(tree, text, module, is_package, lines, graph.statements, graph.cased, walked)
    if ex.imported:
        result["imported"] = ex.imported
    if ex.exports:
        result["exports"] = ex.exports
    result["graph"] = empty_graph() if ex.graph_failed else _graph(graph)
    return result


def _classes(tree: ast.Module, path: str, module: str, is_package: bool, src: Source) -> list[dict[str, Any]]:
    """The class records of a file over the site limit, as its full extraction gives them, from a
    walk that makes no site and enters only the function bodies that name ``class`` or
    ``__init__``: other files' exceptions may derive from its classes, and their ``__init__``
    may build the messages of other files' raises."""
    ex = _Extractor(path, module, is_package, src, _NO_SITES, classes_only=True)
    ex.run(tree)
    return ex.classes


def _graph(graph: GraphWalker) -> dict[str, Any]:
    """The file's facts for the callers join, read by the walk; a file they cannot be read from
    keeps its sites."""
    try:
        return graph.facts()
    except (RecursionError, MemoryError):
        return empty_graph()
    except Exception:  # noqa: BLE001 - a bug there must not cost the file its sites
        return empty_graph()


def _skipped(result: FileResult, reason: str) -> FileResult:
    result["status"] = "skipped"
    result["reason"] = escape_surrogates(reason)  # exception texts may quote the odd input
    return result


# ---------------------------------------------------------------------------------------------
# small pure helpers over nodes


_last_name = raised.last_name
#: The names an ``except`` lists that catch any exception a raise or an assert makes.
_BROAD_CATCH = frozenset({"Exception", "BaseException"})


#: A logger's methods: a handler that only logs the exception it caught passes it on to nobody.
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "debug_once", "info_once", "warning_once"})


def _passes_on(body: list[ast.stmt], name: str) -> bool:
    """Whether a handler's body reads the exception it bound to ``name`` anywhere but in the
    arguments of a log call (``failure = exc``, ``queue.put(e)``, an error response built from it)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _LOG_METHODS:
            continue
        if type(node) is ast.Name and node.id == name:
            return True
        todo += child_nodes(node)  # (the leaves left out hold none of what is looked for)
    return False


def _prints(body: list[ast.stmt]) -> bool:
    """Whether a handler's body prints the exception it caught with its traceback: a logger's
    ``exception()``, a call with ``exc_info`` (not ``False``), ``traceback.print_exc()``."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if type(node) is ast.Call:
            name = _last_name(node.func)
            if name in ("exception", "print_exc", "print_exception", "format_exc"):
                return True
            if any(k.arg == "exc_info" and not (type(k.value) is ast.Constant and k.value.value in (False, None)) for k in node.keywords):
                return True
        todo += child_nodes(node)  # (the leaves left out hold none of what is looked for)
    return False


def _raises(body: list[ast.stmt]) -> bool:
    """Whether a handler's body raises (again or anew) anywhere outside a nested definition."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if type(node) is ast.Raise:
            return True
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        todo += child_nodes(node)  # (the leaves left out hold none of what is looked for)
    return False


def _list_elements(value: ast.expr) -> list[ast.expr] | None:
    """The elements of a list display, or of both lists of ``[...] if c else [...]``; None for
    any other value."""
    if type(value) is ast.List:
        return value.elts
    if type(value) is ast.IfExp and type(value.body) is ast.List and type(value.orelse) is ast.List:
        return [*value.body.elts, *value.orelse.elts]
    return None


_is_class_name = raised.is_class_name  # CapWords (``ValueError``, ``_StreamError``): a class by convention


def _looks_like_exception(call: ast.Call) -> bool:
    name = _last_name(call.func)
    return name is not None and (name in BUILTIN_EXCEPTIONS or name.endswith(_EXC_SUFFIXES))


def _first_paragraph(doc: str | None) -> str | None:
    if not doc:
        return None
    para = inspect.cleandoc(doc).strip().split("\n\n", 1)[0]
    return escape_surrogates(" ".join(line.strip() for line in para.splitlines())) or None


def _docstring(fn: FunctionNode) -> str | None:
    body = fn.body
    if body and type(body[0]) is ast.Expr:
        v = body[0].value
        if type(v) is ast.Constant and isinstance(v.value, str):
            return v.value
    return None


def _params(args: ast.arguments) -> list[str]:
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if names:
        names = names[1:]  # self
    if args.vararg:
        names.append(args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


# ---------------------------------------------------------------------------------------------


class _Extractor(HelperMessages, SurfaceSites):
    """The walk of one file's statements (see the module's doc); helpers' messages are read by
    :class:`HelperMessages`, logs and responses by :class:`SurfaceSites`."""

    def __init__(
        self,
        path: str,
        module: str,
        is_package: bool,
        src: Source,
        settings: surface.Settings = surface.DEFAULT,
        classes_only: bool = False,
        graph: GraphWalker | None = None,
    ):
        self.path = path
        # The call graph's handler: told of each statement the walk visits (``_stmts``), it walks
        # the bodies the walk skips itself (``_function``). None in a dry walk and once it failed.
        self.graph = graph
        self.graph_failed = False
        self.settings = settings
        self.classes_only = classes_only  # (``_classes``: a walk for the class records alone)
        self.limit = settings.max_sites
        self.counted = 0  # the sites made that no later step drops (``_count``)
        self.counting = True  # (not in a dry walk: what it makes is dropped)
        self.kinds = frozenset(settings.kinds)
        self._surface_words = _word_patterns(tuple(settings.words()))
        self._surface: list[int] = []
        self._surface_all = False
        self.module = module
        self.is_package = is_package
        self.src = src
        self.seg = src.segment
        self.sites: list[ExtractedSite] = []
        self.classes: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.bare_asserts = 0
        self.reraises = 0
        self.consts: dict[str, Any] = {}
        self.module_classes: dict[str, str] = {}
        self._pending: list[PendingName] = []  # names to resolve at the end
        self._pending_pieces: list[PendingPieces] = []  # messages a helper returns
        self.functions: dict[str, FunctionNode] = {}  # qualname -> node, for the helpers above
        self.string_returns: dict[str, list[Piece]] = {}  # function qualname -> the messages it returns
        self.named_returns: dict[str, list[Held]] = {}  # function qualname -> the values of the names it returns
        self.helper_lists: dict[str, list[Piece] | None] = {}  # function qualname -> the list of messages it returns
        # function qualname -> (class as written, template, call args record, frame) per exception its
        # ``return``\s construct (``_exceptions_made``)
        self.exception_returns: dict[str, list[MadeReturn]] = {}
        self.walked: set[str] = set()  # the functions walked (the rest have no ``exception_returns`` yet)
        self._pending_made: list[PendingMade] = []  # raised values a helper made
        self.imported: list[dict[str, Any]] = []  # the result's facts for the join across modules (extract.cross_module_facts)
        self.exports: dict[str, Any] = {}
        # set by ``run`` before any walk; ``_release`` unsets them
        self.module_frame: Frame
        self.guards: list[str] = []
        self.if_tests: list[ast.expr] = []  # the tests of the ``if``\s whose body the walk is in (``raised.narrowed``)
        self.loops: list[str] = []
        self.handler_texts: list[str] = []
        #: the handlers of each ``try`` whose body the walk is in, innermost last: (the names it
        #: catches, None for every exception; what it does; whether it raises again)
        self.tries: list[list[tuple[tuple[str, ...] | None, str, bool]]] = []
        #: what failed where the walk is, for a definition made there (``Frame.stub``): the imports of
        #: a ``try`` in its ``except ImportError``, a probe of an optional package where it is false
        self.stubs: list[list[str]] = []
        #: per handler the walk is in (innermost last): the modules its ``try`` imports when it
        #: catches ``ImportError``, else None (``guard_reads.IMPORTING``)
        self.import_handlers: list[list[str] | None] = []
        #: ``_imported``'s memo of the compound statements of this tree, by id
        self.import_chunks: dict[int, list[Sequence[str]]] = {}
        self.frame: Frame
        self.builder = MessageBuilder(self.seg, self._lookup, self._lookup_list)
        self._hot: list[int] | None = None

    # -- driver --

    def run(self, tree: ast.Module) -> None:
        text = self.src.text
        if "\r" in text and _LONE_CR.search(text):  # old Mac line ends: no skipping, no risk
            self._hot = None
            self._surface = []
            self._surface_all = bool(self._surface_words)
        else:
            self._surface = _word_lines(self._surface_words, text) if self._surface_words else []
            self._hot = _word_lines(_CLASS_WORDS if self.classes_only else _HOT_WORDS, text)
            if self._surface:
                self._hot = sorted(set(self._hot).union(self._surface))
        try:
            self._collect_consts(tree.body)
            self.frame = self.module_frame = Frame("module", "<module>", tree, None)
            self._block(tree.body)
            self._finish()
        finally:
            self._release()

    def _release(self) -> None:
        """Break the extractor's reference cycle: ``builder`` holds a bound method that points
        back at it, and through its frames at the whole syntax tree. Broken here, each file's tree is freed by reference counting the moment extraction ends, so the
        cycle collector never has to walk millions of AST nodes (nor can they pile up when it is
        off). ``tests/test_extract.py`` checks that extraction leaves no cyclic garbage."""
        self.builder = self.frame = self.module_frame = self.graph = None  # type: ignore[assignment]
        self._pending = []
        self.exception_returns, self._pending_made = {}, []

    def _collect_consts(self, body: list[ast.stmt]) -> None:
        """Module-level string constants (``ERR = "..."``), visible to every function."""
        builder = MessageBuilder(self.seg, lambda k: self.consts.get(k))
        stmt: Any  # (narrowed by ``type(stmt) is``, which mypy does not follow through ``t``)
        for stmt in body:
            t = type(stmt)
            if t is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
                target, value = stmt.targets[0].id, stmt.value
            elif t is ast.AnnAssign and stmt.value is not None and type(stmt.target) is ast.Name:
                target, value = stmt.target.id, stmt.value
            else:
                continue
            if type(value) in (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call) and builder.is_stringy(value):
                self.consts[target] = ("constant", builder.build(value)[1])

    def _stmts(self, body: list[ast.stmt]) -> None:
        dispatch = _DISPATCH
        guards = self.guards
        depth = len(guards)
        try:
            for stmt in body:
                graph = self.graph
                opened = False
                if graph is not None:
                    try:
                        opened = graph.enter(stmt)
                    except Exception:  # noqa: BLE001 - a bug there must not cost the file its sites
                        self._graph_lost()
                handler = dispatch.get(type(stmt))
                if handler is not None:
                    handler(self, stmt)
                    if handler is _Extractor._if:
                        self._early_exit(cast(ast.If, stmt))
                if opened and self.graph is graph:
                    graph.leave()  # type: ignore[union-attr]  # (``opened``: not None)
        finally:
            del guards[depth:]

    def _graph_lost(self) -> None:
        """A failure of the call graph's handler costs the file its graph and the knobs' reading
        of its functions' statements, never its sites."""
        self.graph, self.graph_failed = None, True

    def _graph_walk(self, body: list[ast.stmt]) -> None:
        """The call graph's own walk of a body the extractor skips."""
        graph = self.graph
        if graph is not None:
            try:
                graph.walk(body)
            except Exception:  # noqa: BLE001 - as in ``_stmts``
                self._graph_lost()

    def _early_exit(self, node: ast.If) -> None:
        """An ``if`` that leaves the block (``return``, ``continue``, ``break``) in one branch
        guards the rest of the block by the other: the code after
        ``if not isinstance(v, dict): return v`` runs only when ``not (not isinstance(v, dict))``.
        The guard stays until the block ends (``_stmts`` drops it). An ``if`` that raises is
        left out: a run of checks would pile every earlier check onto each later one, saying
        only that the earlier errors were not raised."""
        body_exits = type(node.body[-1]) in _EXITS
        else_exits = bool(node.orelse) and type(node.orelse[-1]) in _EXITS
        if body_exits and not else_exits:
            self.guards.append(f"not ({self.seg(node.test)})")
        elif else_exits and not body_exits:
            self.guards.append(self.seg(node.test))

    def _block(self, body: list[ast.stmt]) -> dict[str, Held]:
        """Visit a conditional block in a copy of the environment; return the copy."""
        frame = self.frame
        saved = frame.env
        frame.env = dict(saved)
        try:
            self._stmts(body)
            return frame.env
        finally:
            frame.env = saved

    def _merge(self, *envs: dict[str, Held]) -> None:
        """After a compound statement: names a branch (re)assigned take the last such value."""
        env = self.frame.env
        base = dict(env)
        for branch in envs:
            for k, v in branch.items():
                if base.get(k, _MISSING) is not v:
                    env[k] = v

    # -- scopes --

    def _function(self, node: FunctionNode) -> None:
        parent = self.frame
        if parent.kind == "function":
            qual = f"{parent.qualname}.<locals>.{node.name}"
        elif parent.kind == "class":
            qual = f"{parent.qualname}.{node.name}"
        else:
            qual = node.name
        cls = parent.cls if parent.kind == "class" and node.name == "__init__" else None
        self.functions.setdefault(qual, node)
        if cls is not None:
            cls["init"] = {"params": _params(node.args), "template": None}
        if not self._inert(node, parent):  # (most methods are skipped: no frame for them)
            self._scope(Frame("function", qual, node, parent, cls), node.body)
        else:
            self._graph_walk(node.body)

    def _inert(self, node: FunctionNode, parent: Frame) -> bool:
        """Whether walking a function's body cannot change the result, so it is skipped.

        A body's sites, counts (raise, assert), classes and ``__init__`` templates need those
        words; its names and imports are its own (no site outside it sees them). What a
        module-level function ``return``\\s can be a helper's message, so those are always
        walked (scanning for "return" cost more than it saved). Most of a big code base is
        methods with none of that: their walk was a quarter of the parse.
        """
        hot = self._hot
        if hot is None or (parent.kind == "module" and not self.classes_only):
            return False
        return not on_lines(hot, node.lineno, node.end_lineno or node.lineno)

    def _scope(self, frame: Frame, body: list[ast.stmt]) -> None:
        """Walk a function's or class's body in its own frame, with fresh guards, loops and
        handlers (those of the enclosing code do not lead into a nested definition)."""
        parent = self.frame
        if self.stubs:  # (defined where an optional import failed: a placeholder, ``guard_reads.STUB``)
            frame.stub = self.stubs[-1]
        saved = self.guards, self.if_tests, self.loops, self.handler_texts, self.tries, self.stubs, self.import_handlers
        self.guards, self.if_tests, self.loops, self.handler_texts, self.tries, self.stubs, self.import_handlers = [], [], [], [], [], [], []
        self.frame = frame
        if frame.kind == "function":
            self.walked.add(frame.qualname)
        try:
            self._stmts(body)
        finally:
            self.frame = parent
            self.guards, self.if_tests, self.loops, self.handler_texts, self.tries, self.stubs, self.import_handlers = saved

    def _class(self, node: ast.ClassDef) -> None:
        parent = self.frame
        qual = (
            node.name
            if parent.kind == "module"
            else (f"{parent.qualname}.<locals>.{node.name}" if parent.kind == "function" else f"{parent.qualname}.{node.name}")
        )
        record: dict[str, Any] = {"qualname": f"{self.module}.{qual}", "name": node.name, "bases": [], "init": None}
        self.classes.append(record)
        if parent.kind == "module":
            self.module_classes[node.name] = record["qualname"]
        self._pending.append(PendingName(record, [self.seg(b) for b in node.bases], parent))
        frame = Frame("class", qual, node, parent, record)
        self._scope(frame, node.body)

    # -- control flow --

    def _if(self, node: ast.If) -> None:
        test = self.seg(node.test)
        unreached = _type_checking(node.test)  # (the branch that never runs: ``_unreached``)
        probe, negated = _probe_of(node.test)
        self.guards.append(test)
        self.if_tests.append(node.test)
        if probe is not None and negated:
            self.stubs.append(["probe", probe])
        body_env = self._unreached(node.body) if unreached is True else self._block(node.body)
        if probe is not None and negated:
            self.stubs.pop()
        self.if_tests.pop()
        self.guards.pop()
        envs = [body_env]
        if node.orelse:
            self.guards.append(f"not ({test})")
            if probe is not None and not negated:
                self.stubs.append(["probe", probe])
            envs.append(self._unreached(node.orelse) if unreached is False else self._block(node.orelse))
            if probe is not None and not negated:
                self.stubs.pop()
            self.guards.pop()
        flowing = [e for e, body in zip(envs, (node.body, node.orelse), strict=False) if not assembled.leaves(body)]
        self._merge_paths(envs, flowing, exhaustive=bool(node.orelse))

    def _unreached(self, body: list[ast.stmt]) -> dict[str, Held]:
        """A branch that never runs (``if TYPE_CHECKING:``'s body, ``if not TYPE_CHECKING:``'s
        ``else``: a type checker's view of the module), walked as any block for its names, classes
        and helpers, but what could raise or log there is no site: nothing runs it (seed 49 #40)."""
        sites, calls, counts, counting = len(self.sites), len(self.calls), (self.bare_asserts, self.reraises), self.counting
        self.counting = False
        try:
            return self._block(body)
        finally:
            dead = {id(site) for site in self.sites[sites:]}
            del self.sites[sites:], self.calls[calls:]
            self._pending = [p for p in self._pending if id(p.item) not in dead]
            self._pending_pieces = [p for p in self._pending_pieces if id(p.site) not in dead]
            self._pending_made = [p for p in self._pending_made if id(p.site) not in dead]
            (self.bare_asserts, self.reraises), self.counting = counts, counting

    def _merge_paths(self, envs: list[dict[str, Held]], flowing: list[dict[str, Held]], exhaustive: bool) -> None:
        """After an ``if`` or ``match``: a name its branches set to different messages holds any
        of them (``assembled.merged_value``); anything else as ``_merge`` says. ``flowing``: the
        branches that reach the code after it; without ``exhaustive`` the value from before too."""
        env = self.frame.env
        base = dict(env)
        self._merge(*envs)
        changed = {k for branch in envs for k, v in branch.items() if base.get(k, _MISSING) is not v}
        for k in changed:
            values = [branch.get(k, _MISSING) for branch in flowing]
            if not exhaustive:
                values.append(base.get(k, _MISSING))
            unknown = _MISSING in values and k in self._parameters()
            got = assembled.merged_value(k, values, _MISSING, unknown)
            if got is not _MISSING:
                env[k] = got

    def _parameters(self) -> frozenset[str]:
        """The names the enclosing function takes: a value errcat cannot see."""
        fn = self._function_frame()
        if fn is None:
            return frozenset()
        args = fn.node.args
        return frozenset(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None)

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        kw = "async for" if type(node) is ast.AsyncFor else "for"
        loop = f"{kw} {self.seg(node.target)} in {self.seg(node.iter)}"
        self.loops.append(loop)
        body_env = self._block(node.body)
        self.loops.pop()
        # the ``else`` runs only once the loop ran to its end (no ``break``, ``return`` or raise):
        # a site there is not reached whenever the function runs
        self.loops.append(f"else: {loop}")
        else_env = self._block(node.orelse)
        self.loops.pop()
        self._merge(body_env, else_env)

    def _while(self, node: ast.While) -> None:
        test = self.seg(node.test)
        self.guards.append(test)
        self.loops.append(f"while {test}")
        body_env = self._block(node.body)
        self.loops.pop()
        self.guards.pop()
        self._merge(body_env, self._block(node.orelse))

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        self._stmts(node.body)

    def _try(self, node: Any) -> None:
        self.tries.append([self._handled(h) for h in node.handlers])
        try:
            envs = [self._block(node.body)]
        finally:
            self.tries.pop()
        frame = self.frame
        imported = _imported(node.body, self.import_chunks)
        for h in node.handlers:
            text = "except"
            if h.type is not None:
                text += " " + self.seg(h.type)
            if h.name:
                text += " as " + h.name
            failed = imported if imported and _catches_import(h) else None
            self.handler_texts.append(text)
            self.import_handlers.append(failed)
            if failed:
                self.stubs.append(["import", *failed])
            frame.handlers.append(h.name)
            envs.append(self._block(h.body))
            frame.handlers.pop()
            if failed:
                self.stubs.pop()
            self.import_handlers.pop()
            self.handler_texts.pop()
        envs.append(self._block(node.orelse))
        self._merge(*envs)
        self._stmts(node.finalbody)

    def _handled(self, h: ast.ExceptHandler) -> tuple[tuple[str, ...] | None, str, bool]:
        """What one ``except`` of a ``try`` catches (the last part of each name it lists; None for
        a bare one), how it reads with its first statement, and whether its body raises again,
        prints the exception with its traceback (``logger.exception``, ``exc_info=True``: the user
        sees it in the log) or passes it on (stores it, sends it, answers with it: anything but a
        log call's argument)."""
        caught: tuple[str, ...] | None = None
        if h.type is not None:
            types = h.type.elts if type(h.type) is ast.Tuple else [h.type]
            caught = tuple((_last_name(t) or "?") for t in types)
        text = "except" + (f" {self.seg(h.type)}" if h.type is not None else "") + ": "
        first = self.seg(h.body[0]).split("\n", 1)[0] if h.body else ""
        text += first if len(first) <= 80 else first[:79] + "…"
        return caught, text, _raises(h.body) or _prints(h.body) or (h.name is not None and _passes_on(h.body, h.name))

    def _caught_here(self, exception: str) -> str | None:
        """The ``except`` of an enclosing ``try`` (in this function) that catches ``exception``
        raised in its body and does not raise again, as it reads; None when none does (or the
        first that catches it raises again: the caller meets that)."""
        name = exception.rpartition(".")[2]
        for handlers in reversed(self.tries):
            for caught, text, again in handlers:
                if caught is None or name in caught or _BROAD_CATCH.intersection(caught):
                    return None if again else text
        return None

    def _match(self, node: Any) -> None:
        subject = self.seg(node.subject)
        envs = []
        for case in node.cases:
            text = f"match {subject}: case {self.seg(case.pattern)}"
            if case.guard is not None:
                text += f" if {self.seg(case.guard)}"
            self.guards.append(text)
            envs.append(self._block(case.body))
            self.guards.pop()
        flowing = [e for e, case in zip(envs, node.cases, strict=True) if not assembled.leaves(case.body)]
        self._merge_paths(envs, flowing, exhaustive=assembled.exhaustive_match(node))

    # -- environment --

    def _lookup(self, key: str) -> Built | None:
        frame = self.frame
        form = "constant" if frame.kind == "module" else "variable"
        got: Any = frame.env.get(key, _MISSING)
        if got is _MISSING and frame.kind == "function" and (key.startswith("self.") or key.startswith("cls.")):
            owner = frame.parent
            if owner is not None and owner.kind == "class":
                got = owner.env.get(key.split(".", 1)[1], _MISSING)
        if got is _MISSING:
            return self.consts.get(key)
        if got is None or got[0] != "str":
            return None
        return form, got[1]

    def _lookup_list(self, key: str) -> list[Piece] | None:
        """The pieces a local list of messages may hold here (``reasons.append("...")``), or None."""
        got = self.frame.env.get(key)
        if got is None:
            return self._called_list(key) or None
        if got[0] != "list" or not got[1] or not any(map(_piece_counts, got[1])):
            return None
        return cast(list[Piece], got[1])

    # -- lists of messages a helper returns (see crawler.extract.assembled) --

    def _called_list(self, key: str) -> list[Piece] | None:
        """The pieces of the list a name was given by a call of a same-module helper, or None; of
        an imported function's, the one piece that stands for them (``templates.imported_piece``)."""
        helper = self.frame.calls.get(key)
        if helper is not None and helper.startswith(IMPORTED):
            return [imported_piece(helper[1:], key)]
        return None if helper is None else self._helper_list(helper)

    def _helper_list(self, qualname: str) -> list[Piece] | None:
        if qualname in self.helper_lists:
            return self.helper_lists[qualname]
        self.helper_lists[qualname] = None  # a helper that reaches itself gives nothing
        node = self._function_node(qualname)
        if node is None or assembled.returned_list(node) is None:
            return None
        if qualname not in self.named_returns:
            self._dry_walk(qualname, node)
        values = self.named_returns.get(qualname) or []
        pieces: list[Piece] = []
        for value in values:
            if value is None or value[0] != "list":
                return None
            pieces = add_pieces(pieces, value[1])
        self.helper_lists[qualname] = pieces
        return pieces

    def _function_node(self, qualname: str) -> FunctionNode | None:
        """A module-level function or a method of a module-level class, walked or not yet."""
        node = self.functions.get(qualname)
        if node is not None or "<" in qualname or qualname.count(".") > 1:
            return node
        owner, _, name = qualname.rpartition(".")
        for stmt in self.module_frame.node.body:
            if owner and type(stmt) is ast.ClassDef and stmt.name == owner:
                return next((f for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == name), None)
            if not owner and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                return stmt
        return None

    def _dry_walk(self, qualname: str, node: FunctionNode) -> None:
        """Walk a helper not walked yet (skipped as holding no site, or defined further down) for
        the values of the names it returns; whatever else the walk finds is dropped (the helper's
        own walk, if it comes, records it once)."""
        owner = qualname.rpartition(".")[0]
        parent = self.module_frame
        if owner:
            cls = next((c for c in parent.node.body if type(c) is ast.ClassDef and c.name == owner), None)
            parent = Frame("class", owner, cls, parent)
        kept = (
            len(self.sites),
            len(self.calls),
            len(self.classes),
            len(self._pending),
            len(self._pending_pieces),
            self.bare_asserts,
            self.reraises,
            len(self._pending_made),
        )
        counting, self.counting = self.counting, False
        graph, self.graph = self.graph, None  # (the helper's own walk, if it comes, reads it once)
        try:
            self._scope(Frame("function", qualname, node, parent), node.body)
        finally:
            self.counting, self.graph = counting, graph
            del self.sites[kept[0] :], self.calls[kept[1] :], self.classes[kept[2] :], self._pending[kept[3] :]
            del self._pending_pieces[kept[4] :], self._pending_made[kept[7] :]
            self.bare_asserts, self.reraises = kept[5], kept[6]

    def _list_append(self, call: ast.expr) -> bool:
        """``name.append(<message>)`` / ``name.extend([...])`` on a list of messages: one more
        piece (a new list: branch environments share the old one)."""
        if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.func.attr not in ("append", "extend"):
            return False
        key = self.builder._key(call.func.value)
        if key is None or len(call.args) != 1 or call.keywords:
            return False
        env = self.frame.env
        got = env.get(key)
        if got is None:  # a list a helper of the module returned: its pieces
            called = self._called_list(key)
            got = None if called is None else ("list", called)
        arg = call.args[0]
        if call.func.attr == "append":
            added = self._pieces([arg])
            if added is None and type(arg) is not ast.Starred:  # a message errcat cannot read: one piece matching anything
                added = [[field(self.seg(arg))]]
        elif isinstance(arg, (ast.List, ast.Tuple)):
            added = self._pieces(arg.elts)
        else:
            added = None
        if got is None and added is not None and "." not in key:
            # a list the function did not start (a parameter, what a call returned) that messages
            # are appended to: what it held before is unknown, a piece matching anything stands for it
            got = ("list", [[field(key)]])
        if got is None or got[0] != "list":
            return False
        env[key] = None if added is None else ("list", add_pieces(got[1], added))
        return True

    def _pieces(self, elts: list[ast.expr]) -> list[Piece] | None:
        """Each element's message parts, or None when one of them is not a message."""
        out = []
        for e in elts:
            if type(e) is ast.Starred or not self.builder.is_stringy(e):
                return None
            out.append(self.builder.parts(e))
        return out

    def _bind(self, target: Any, value: ast.expr | None) -> None:  # (``target``: narrowed by ``type(target) is``)
        t = type(target)
        if t is ast.Name:
            key = target.id
        elif t is ast.Attribute and type(target.value) is ast.Name:
            key = target.value.id + "." + target.attr
        elif t in (ast.Tuple, ast.List):
            for e in target.elts:
                self._bind(e, None)
            return
        else:
            return
        env = self.frame.env
        helper = self._helper_of(value) if type(value) is ast.Call else None
        if helper is not None:
            self.frame.calls[key] = helper
        else:
            self.frame.calls.pop(key, None)
        if value is None:
            if key in env or key in self.consts:
                env[key] = None
            return
        elts = _list_elements(value) if t is ast.Name else None
        if elts is not None:
            pieces = self._pieces(elts)
            env[key] = None if pieces is None else ("list", add_pieces([], pieces))
            return
        if self.builder.is_stringy(value):
            env[key] = ("str", self.builder.build(value)[1])
        elif type(value) is ast.Call and _looks_like_exception(value):
            env[key] = ("exc", self._from_call(value))
        elif key in env or key in self.consts:
            env[key] = None

    def _assign(self, node: ast.Assign) -> None:
        self._surface_sites(node)
        for target in node.targets:
            self._bind(target, node.value)

    def _annassign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._surface_sites(node)
            self._bind(node.target, node.value)

    def _augassign(self, node: ast.AugAssign) -> None:
        if type(node.op) is not ast.Add:
            return
        target = node.target
        key = self.builder._key(target)
        if key is None:
            return
        held = self.frame.env.get(key)
        if held is not None and held[0] == "list":
            pieces = self._pieces(node.value.elts) if isinstance(node.value, (ast.List, ast.Tuple)) else None
            self.frame.env[key] = None if pieces is None else ("list", add_pieces(held[1], pieces))
            return
        got = self._lookup(key)
        before = got[1] if got is not None else [field(key)]
        self.frame.env[key] = ("str", before + self.builder.parts(node.value))

    # -- imports --

    def _import(self, node: ast.Import) -> None:
        record_import(node, self.module, self.is_package, self._imports_dict())

    def _importfrom(self, node: ast.ImportFrom) -> None:
        record_import(node, self.module, self.is_package, self._imports_dict())

    def _imports_dict(self) -> dict[str, str]:
        frame = self.frame
        while frame.kind == "class" and frame.parent is not None:  # (a class is never the top frame)
            frame = frame.parent
        return frame.imports

    # -- returns and super().__init__ --

    def _return(self, node: ast.Return) -> None:
        self._surface_sites(node)
        frame = self.frame
        value = node.value
        if type(value) is ast.Name and frame.kind == "function":  # a list of messages a helper builds
            self.named_returns.setdefault(frame.qualname, []).append(frame.env.get(value.id))
        if value is not None and frame.kind == "function" and self.builder.is_stringy(value):
            returned = self.string_returns.setdefault(frame.qualname, [])
            if len(returned) < MAX_PIECES:
                returned.append(self.builder.parts(value))
        elif value is not None and frame.kind == "function":  # an exception a helper makes (``_raise``)
            made = self.exception_returns.setdefault(frame.qualname, [])
            for written, template, args in self._exceptions_made(value):
                if len(made) < MAX_PIECES:
                    made.append(MadeReturn(written, template, args, frame))

    def _exceptions_made(self, value: Any) -> list[Made]:  # (``value``: narrowed by ``type(value) is``)
        """The exceptions a returned value constructs here, as ``_from_call`` reads them:
        ``Error(...)`` (a class named like an exception, as ``_bind`` takes them; either side of
        a conditional expression), a name holding one (``err = Error(...); return err``); none
        for anything else (an exception handed in or caught is returned as it was made)."""
        t = type(value)
        if t is ast.IfExp:
            return [*self._exceptions_made(value.body), *self._exceptions_made(value.orelse)]
        if t is ast.Call and _is_class_name(_last_name(value.func)) and _looks_like_exception(value):
            return [self._from_call(value)]
        if t is ast.Name:
            held = self.frame.env.get(value.id)
            if held is not None and held[0] == "exc":
                return [held[1]]
        return []

    def _expr(self, node: ast.Expr) -> None:
        self._surface_sites(node)
        if self._list_append(node.value):
            return
        cls = self.frame.cls
        if cls is None or self.frame.kind != "function":
            return
        call = node.value
        if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.func.attr != "__init__":
            return
        if cls["init"]["template"] is not None:
            return
        owner = call.func.value
        args = list(call.args)
        if not (type(owner) is ast.Call and _last_name(owner.func) == "super"):
            args = args[1:]  # Base.__init__(self, ...)
        form, parts = self._message(args, call.keywords)
        cls["init"]["template"] = make_template(parts, form) if form != "none" else None

    # -- sites --

    def _message(self, args: list[ast.expr], keywords: list[ast.keyword]) -> Built:
        for kw in keywords:
            if kw.arg in MESSAGE_KEYWORDS:
                form, parts = self.builder.build(kw.value)
                return ("opaque" if form == "opaque" else "keyword"), parts
        for a in args:
            if type(a) is ast.Starred:
                return "opaque", [field(self.seg(a))]
            return self.builder.build(a)
        return "none", []

    def _from_call(self, call: ast.Call) -> Made:
        """(exception as written, template, call args record or None) for ``raise <call>``."""
        func = call.func
        written = self.seg(func)
        name = _last_name(func)
        if _is_class_name(name) or (type(func) is ast.Call and _last_name(func.func) == "type"):
            form, parts = self._message(call.args, call.keywords)
            template = make_template(parts, form) if form != "none" else none_template()
            args = None
            if name not in BUILTIN_EXCEPTIONS or "." in written:
                args = {
                    "args": [_template_of(self.builder.build(a)) for a in call.args if type(a) is not ast.Starred],
                    "kwargs": {kw.arg: _template_of(self.builder.build(kw.value)) for kw in call.keywords if kw.arg},
                }
            return Made(written, template, args)
        # helper
        if type(func) is ast.Attribute and _is_class_name(_last_name(func.value)):
            written = self.seg(func.value)
        values = [*call.args, *(kw.value for kw in call.keywords)]
        chosen = next((v for v in values if self.builder.is_stringy(v)), None)
        if chosen is None:
            chosen = next((a for a in call.args if type(a) is not ast.Starred), None)
        if chosen is None:
            return Made(written, none_template(), None)
        return Made(written, make_template(self.builder.parts(chosen), "helper"), None)

    def _raise(self, node: ast.Raise) -> None:
        exc: Any = node.exc  # (narrowed by ``type(exc) is``, which mypy does not follow through ``t``)
        frame = self.frame
        if exc is None or (type(exc) is ast.Name and exc.id in frame.handlers):
            self.reraises += 1
            return
        if RAISE not in self.kinds:
            return
        args = None
        t = type(exc)
        unknown = False
        helper = made_by = None
        if t is ast.Call:
            written, template, args = self._from_call(exc)
            func = exc.func
            if not (
                _is_class_name(_last_name(func))
                or (type(func) is ast.Call and _last_name(func.func) == "type")
                or (type(func) is ast.Attribute and _is_class_name(_last_name(func.value)))
            ):  # Error.from_x(...)
                got = self._raised().instance(exc, self._function_node_here())
                unknown = got[0] != "class"
                written = written if unknown else got[2]
                if (got is raised.DIFFER or got[:2] == ("class", "returns")) and self._callee_node(func) is not None:
                    helper = self._helper_of(exc)  # (the class its ``return``\s construct: their messages, ``_finish``)
        elif t is ast.Name and (held := frame.env.get(exc.id)) is not None and held[0] == "exc":
            written, template, args = held[1]
            if self._raised().instance(exc, self._function_node_here()) is raised.DIFFER:
                written, unknown = exc.id, True  # branches give different classes: none claimed
        elif t in (ast.Name, ast.Attribute, ast.Subscript) and not _is_class_name(_last_name(exc)):
            # an exception object, not a class: its class when the code shows it, else a
            # re-raise of one made elsewhere (a caught one, a parameter, an attribute)
            resolver, fn = self._raised(), self._function_node_here()
            got = resolver.instance(exc, fn)
            narrowed = raised.UNKNOWN
            if got[0] != "class":
                narrowed = resolver.narrowed(self.if_tests, exc)
                got = narrowed if narrowed[0] == "class" else got
            if got is raised.DIFFER:  # made here, of one class or another: an entry claiming none
                written, template, unknown = self.seg(exc), none_template(), True
            elif got[0] != "class":
                self.reraises += 1
                return
            else:
                written, template = got[2], none_template()
            if t is ast.Name and narrowed is not raised.DIFFER:
                helper, made_by = self._maker(exc, fn)
            elif t is ast.Attribute and got[:2] == ("class", "returns"):  # ``raise self.dead_error``: a property's
                helper = self._own_method(exc)
        elif t in (ast.Name, ast.Attribute):
            written, template = self.seg(exc), none_template()
        else:
            written, template = self.seg(exc), make_template([field(self.seg(exc))], "opaque")
        cause = self.seg(node.cause) if node.cause is not None else None
        site = self._site(node, "raise", written, template, cause, list(self.guards), resolve=not unknown)
        if unknown:  # no class claimed: the entry's exception is unknown (``catalogue.entries``)
            site["exception_qualname"] = UNKNOWN_EXCEPTION_QUALNAME
        if t is ast.Call and template["opaque"] and len(template["fields"]) == 1:
            self._helper_message(site, exc.args[0] if exc.args else None)
        if helper is not None and not helper.startswith(IMPORTED):  # one of the messages the helper constructs (``_finish``)
            made_by = exc if t is ast.Call else made_by
            call = None if made_by is None else CallMade(self._call_arguments(made_by, t is not ast.Call), type(made_by.func) is ast.Attribute)
            self._pending_made.append(PendingMade(site, helper, frame, None if unknown else written, self.seg(exc), call))
        if args is not None and not unknown:
            self.calls.append({"site": len(self.sites) - 1, **args})

    def _assert(self, node: ast.Assert) -> None:
        if node.msg is None:
            self.bare_asserts += 1
            if ASSERT in self.kinds:  # Python prints no message: the condition is what tells it apart
                test = self.seg(node.test)
                site = self._site(node, "assert", "AssertionError", none_template(), None, [*self.guards, f"not ({test})"])
                site["condition"] = " ".join(test.split())
            return
        if ASSERT not in self.kinds:
            return
        msg = node.msg
        # ``assert ok, ValueError("...")`` (older vLLM): Python prints the str of the exception,
        # which for one argument is that argument; a call of anything else may return anything.
        if (
            type(msg) is ast.Call
            and len(msg.args) == 1
            and not msg.keywords
            and type(msg.args[0]) is not ast.Starred
            and (_last_name(msg.func) or "").endswith(("Error", "Exception", "Warning"))
        ):
            msg = msg.args[0]
        form, parts = self.builder.build(msg)
        guards = [*self.guards, f"not ({self.seg(node.test)})"]
        self._site(node, "assert", "AssertionError", make_template(parts, form), None, guards)

    def _site(
        self,
        node: ast.stmt | ast.expr,
        kind: str,
        written: str,
        template: TemplateData,
        cause: str | None,
        guards: list[str],
        resolve: bool = True,
        pending: bool = False,
    ) -> ExtractedSite:
        """A site, appended; ``pending``: its message is a helper's, read at the end (``_finish``)."""
        if self.counting and self.limit is not None:
            self._count(kind, template, pending)
        fn = self._function_frame()
        decorators, docstring, lo, hi = self._scope_facts(fn)
        line, end = node.lineno, node.end_lineno or node.lineno
        if fn is not None and hi - lo + 1 <= SNIPPET_LINES:
            start, stop = lo, hi
        else:
            start = max(lo, line - SNIPPET_LINES // 2)
            stop = min(hi, max(end, start + SNIPPET_LINES - 1))
            start = max(lo, min(start, stop - SNIPPET_LINES + 1))
        frame = self.frame
        site: ExtractedSite = {
            "path": self.path,
            "line": line,
            "end_line": end,
            "module": self.module,
            "qualname": frame.qualname,
            "kind": kind,  # type: ignore[typeddict-item]  # (one of the kinds: the handlers pass literals)
            "exception": written,
            "exception_qualname": written,
            "template": template,
            "snippet": {"start_line": start, "end_line": stop, "code": self.src.span(start, stop)},
            "facts": {
                "derived": "machine",
                "guards": guards,
                "loops": list(self.loops),
                "handler": self.handler_texts[-1] if self.handler_texts else None,
                "cause": cause,
                "reraise": False,
                "decorators": decorators,
                "docstring": docstring,
            },
        }
        caught = self._caught_here(written) if kind in (RAISE, ASSERT) and self.tries else None
        if caught is not None:
            site[READS] = {CAUGHT: [caught]}
        if guards:
            if fn is not None and fn.text is None:
                fn.text = FunctionText(self.src.span(lo, hi), lo)
            text = fn.text if fn is not None else FunctionText(site["snippet"]["code"], start)
            owner = fn.parent if fn is not None else None
            if owner is not None and owner.kind == "class" and owner.text is None:
                owner.text = ClassText(self.src.span(owner.node.lineno, owner.node.end_lineno or owner.node.lineno), owner.node.lineno)
            site[READS] = trace(
                text, line, guards[-1], owner.text if owner is not None and owner.kind == "class" else None
            )  # (kept off the record: catalogue.entries)
            if caught is not None:
                site[READS][CAUGHT] = [caught]
        library = self._handed_to(fn, written) if kind == RAISE else None
        if library is not None:
            site.setdefault(READS, {})[HANDED] = [library]
        placeholder = frame.stub if kind in (RAISE, ASSERT) and not self.guards and not self.loops and not self.handler_texts else None
        if placeholder is not None:
            site.setdefault(READS, {})[STUB] = list(placeholder)
        failed = self.import_handlers[-1] if self.import_handlers else None
        if failed:
            site.setdefault(READS, {})[IMPORTING] = list(failed)
        self.sites.append(site)
        if resolve:
            self._pending.append(PendingName(cast(dict[str, Any], site), written, frame))
        return site

    def _handed_to(self, fn: Frame | None, written: str) -> str | None:
        """The library call (``pm.register_replacement``) a nested function is handed to in the
        function it is defined in, when that library catches what the function raises: torch's
        pattern matcher traces a pattern function given to ``register_replacement`` and takes a
        ``RuntimeError`` from it as a pattern that does not match (s43-verify, #32)."""
        parent = fn.parent if fn is not None else None
        if fn is None or parent is None or parent.kind != "function" or written.rpartition(".")[2] not in _LIBRARY_CATCHES:
            return None
        name = fn.qualname.rpartition(".")[2]
        node = parent.node
        text = self.src.span(node.lineno, node.end_lineno or node.lineno)
        found = re.search(rf"(?<![\w.])((?:[A-Za-z_]\w*\.)*register_replacement)\(\s*(?:search_fn\s*=\s*)?{re.escape(name)}\s*[,)]", text)
        return found.group(1) if found else None

    def _count(self, kind: str, template: TemplateData, pending: bool) -> None:
        """Count a site about to be made when no later step can drop it, and stop the walk past
        the limit (``limit.OverLimit``). A raise is never dropped; a log, response or assert is
        when its message is a helper's the end does not find (``_finish``) or an imported list
        the join does not (``catalogue.cross_module_join``) and it says nothing without it."""
        if kind != RAISE and (pending or isinstance(template, MarkedTemplate) and not has_text_to_match(template)):
            return
        self.counted += 1
        if self.counted > self.limit:  # type: ignore[operator]  # (set: see ``_site``)
            raise limit.OverLimit

    # -- what a raise of a value raises (see crawler.extract.raised) --

    def _raised(self) -> raised.Resolver:
        return raised.Resolver(self.seg, self._callee_node)

    def _function_node_here(self) -> Any:
        fn = self._function_frame()
        return None if fn is None else fn.node

    def _callee_node(self, func: ast.expr) -> FunctionNode | None:
        """The node of the function of this module a callee names (``helper``, a function nested
        in an enclosing one, ``self.method``/``cls.method`` of the enclosing class), or None."""
        if type(func) is ast.Name:
            frame: Frame | None = self.frame
            while frame is not None and frame.kind == "function":
                nested = self.functions.get(f"{frame.qualname}.<locals>.{func.id}")
                if nested is not None:
                    return nested
                frame = frame.parent
            return self._function_node(func.id)
        if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):
            owner: Frame | None = self.frame
            while owner is not None and owner.kind != "class":
                owner = owner.parent
            if owner is not None and owner.parent is not None and owner.parent.kind == "module":
                return self._function_node(f"{owner.qualname}.{func.attr}")
        return None

    def _function_frame(self) -> Frame | None:
        frame: Frame | None = self.frame
        while frame is not None and frame.kind != "function":
            frame = frame.parent
        return frame

    def _scope_facts(self, fn: Frame | None) -> ScopeFacts:
        if fn is None:
            return ScopeFacts([], None, 1, len(self.src.lines))
        if fn.facts is None:
            node = fn.node
            decorators = [self.seg(d) for d in node.decorator_list]
            lo = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            fn.facts = ScopeFacts(decorators, _first_paragraph(_docstring(node)), lo, node.end_lineno or node.lineno)
        decorators, doc, lo, hi = fn.facts
        return ScopeFacts(list(decorators), doc, lo, hi)

    # -- name resolution (at the end: classes and imports may follow their use) --

    def _resolve(self, written: str, frame: Frame | None) -> str:
        head, dot, rest = written.partition(".")
        f = frame
        while f is not None:
            if head in f.imports:
                return f.imports[head] + dot + rest
            if f.kind == "module" and head in self.module_classes:
                return self.module_classes[head] + dot + rest
            f = f.parent
        if not dot and head in BUILTIN_EXCEPTIONS:
            return f"builtins.{head}"
        return written

    def _finish(self) -> None:
        dropped, refs = self._put_helper_messages()
        if dropped:
            renumber = {}
            kept: list[ExtractedSite] = []
            for i, site in enumerate(self.sites):
                if id(site) not in dropped:
                    renumber[i] = len(kept)
                    kept.append(site)
            self.sites = kept
            for call in self.calls:  # (only raises have calls, and none is dropped)
                call["site"] = renumber[call["site"]]
        self.imported = cross_module_facts.collect(self.sites, self.calls, self.classes, refs, has_text_to_match)
        self.exports = cross_module_facts.exports(self, MAX_PIECES)
        for item, written, frame in self._pending:
            if "bases" in item:  # class record
                item["bases"] = [self._resolve(b, frame) for b in written]
            elif item["kind"] == RESPONSE:  # the builder, resolved where it is imported
                resolved = self._resolve(written, frame)
                item["exception_qualname"] = resolved if resolved != written else item["response"]["builder"]
            else:  # (a raise whose class is unknown is not pending: see ``_raise``)
                item["exception_qualname"] = self._resolve(item["exception"], frame)


_MISSING = object()
_NO_SITES = surface.Settings(kinds=())  # (``_classes``)
_EXITS = (ast.Return, ast.Continue, ast.Break)


#: A probe of an optional package or extension, as a name or a call with no arguments (``HAS_TRITON``,
#: ``is_numba_available()``, ``_ROCM_FLASH_ATTN_AVAILABLE``, ``has_deep_gemm()``).
_PROBE = re.compile(r"(?:[A-Za-z_]\w*\.)*(?:_?(?:HAS|has)_[A-Za-z0-9_]+|(?:_?is_)?[A-Za-z0-9_]+_(?:available|AVAILABLE|installed|INSTALLED))(?:\(\))?")
#: At most this many modules kept of what a ``try`` imports.
_MAX_IMPORTED = 4


def _probe_of(test: ast.expr) -> tuple[str | None, bool]:
    """(the probe, negated) when an ``if``'s whole test is a probe of an optional package or its
    negation (``not HAS_X``); else (None, False)."""
    negated = type(test) is ast.UnaryOp and type(test.op) is ast.Not
    inner = test.operand if negated else test  # type: ignore[attr-defined]
    if type(inner) is ast.Call and (inner.args or inner.keywords):
        return None, False
    if type(inner) not in (ast.Name, ast.Attribute, ast.Call):
        return None, False
    text = ast.unparse(inner)
    return (text, negated) if len(text) <= 80 and _PROBE.fullmatch(text) else (None, False)


def _imported(body: list[ast.stmt], memo: dict[int, list[Sequence[str]]] | None = None) -> list[str]:
    r"""The modules a ``try``'s body imports (``import a.b``, ``from a.b import c``; in its ``if``\s
    too, not in a nested definition), in order, each once; relative imports left out. ``memo``:
    what :func:`_import_chunks` found in each compound statement, by its id (a walk's, for one
    tree), so that nested ``try``\s cost their statements once, not once for each ``try`` around them."""
    found = [name for chunk in _import_chunks(body, {} if memo is None else memo) for name in chunk]
    return list(dict.fromkeys(found))[:_MAX_IMPORTED]


def _import_chunks(body: Sequence[ast.stmt], memo: dict[int, list[Sequence[str]]]) -> list[Sequence[str]]:
    """The names each import statement of ``body`` adds, in order (into the bodies of its ``if``,
    ``try`` and ``with`` statements: their ``else`` too, not their handlers), until they count
    ``_MAX_IMPORTED``: a statement at a time, as a walk that stops there reads them."""
    chunks: list[Sequence[str]] = []
    count = 0
    for stmt in body:
        if count >= _MAX_IMPORTED:
            break
        kind = type(stmt)
        if kind is ast.Import:
            names = [a.name for a in stmt.names]  # type: ignore[attr-defined]
            chunks.append(names)
            count += len(names)
        elif kind is ast.ImportFrom and stmt.module and not stmt.level:  # type: ignore[attr-defined]
            chunks.append([stmt.module])  # type: ignore[attr-defined]
            count += 1
        elif kind in (ast.If, ast.Try, ast.With):
            inner = memo.get(id(stmt))
            if inner is None:
                inner = memo[id(stmt)] = _import_chunks([*getattr(stmt, "body", []), *getattr(stmt, "orelse", [])], memo)
            for chunk in inner:  # (the statement's own walk stopped at its count: this one stops no later)
                if count >= _MAX_IMPORTED:
                    break
                chunks.append(chunk)
                count += len(chunk)
    return chunks


def _catches_import(h: ast.ExceptHandler) -> bool:
    """Whether an ``except`` names ``ImportError`` or ``ModuleNotFoundError`` (alone or in a tuple)."""
    if h.type is None:
        return False
    types = h.type.elts if type(h.type) is ast.Tuple else [h.type]
    return any(_last_name(t) in ("ImportError", "ModuleNotFoundError") for t in types)


def _type_checking(test: ast.expr) -> bool | None:
    """True for ``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:`` (its body never runs), False
    for ``if not TYPE_CHECKING:`` (its ``else`` never runs), None for any other test."""
    negated = type(test) is ast.UnaryOp and type(test.op) is ast.Not
    name = test.operand if negated else test  # type: ignore[attr-defined]
    if (type(name) is ast.Name and name.id == "TYPE_CHECKING") or (
        type(name) is ast.Attribute and name.attr == "TYPE_CHECKING" and type(name.value) is ast.Name
    ):
        return not negated
    return None


def _template_of(built: Built) -> TemplateData:
    """The template of a message as the builder read it."""
    form, parts = built
    return make_template(parts, form)


def _piece_counts(piece: Piece) -> bool:
    """A piece that makes a list one of messages: literal text, or what an imported function returns
    (a list of nothing but values errcat cannot read is no list of messages it knows)."""
    return any((isinstance(p, str) and any(ch.isalnum() for ch in p)) or (isinstance(p, Field) and p.expr.startswith(IMPORTED)) for p in piece)


#: Statement kind -> handler (a function taking the extractor): a class-level table, so no
#: extractor holds bound methods of itself.
_DISPATCH: dict[type[ast.AST], Callable[[Any, Any], None]] = {
    ast.FunctionDef: _Extractor._function,
    ast.AsyncFunctionDef: _Extractor._function,
    ast.ClassDef: _Extractor._class,
    ast.If: _Extractor._if,
    ast.For: _Extractor._for,
    ast.AsyncFor: _Extractor._for,
    ast.While: _Extractor._while,
    ast.With: _Extractor._with,
    ast.AsyncWith: _Extractor._with,
    ast.Try: _Extractor._try,
    ast.Raise: _Extractor._raise,
    ast.Assert: _Extractor._assert,
    ast.Assign: _Extractor._assign,
    ast.AnnAssign: _Extractor._annassign,
    ast.AugAssign: _Extractor._augassign,
    ast.Import: _Extractor._import,
    ast.ImportFrom: _Extractor._importfrom,
    ast.Return: _Extractor._return,
    ast.Expr: _Extractor._expr,
}
if hasattr(ast, "TryStar"):
    _DISPATCH[ast.TryStar] = _Extractor._try
if hasattr(ast, "Match"):
    _DISPATCH[ast.Match] = _Extractor._match
