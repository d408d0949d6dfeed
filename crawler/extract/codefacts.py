"""Per-file facts for the repo-wide joins of callers and reproductions.

Computed in the extraction workers from the tree the extractor parsed, and cached with the
file's result (keyed by this package's code, see ``runner.cache_version``), so a warm or incremental crawl reads no unchanged file
again. Everything here is read statically: the analysed code is never imported or run.

- :func:`graph_facts` (source files): the module's import aliases, its function definitions
  (with the entry-point kind a decorator gives: ``route`` for ``@router.post(...)`` and the like,
  ``cli`` for click/typer commands), and the calls each function makes, each callee *resolved*
  to a dotted name by import and definition resolution. A call errcat cannot resolve (a method
  of an object of unknown type, a name bound at run time) is left out, never guessed.
- :func:`read_test_file` (test files): every ``pytest.raises``/``raises``/``assertRaises``/
  ``assertRaisesRegex`` block: its place, the exception as resolved, the message pattern and
  its literal fragments, the calls the block makes (resolved), and its code with a little
  context, bounded.

Message patterns come from the crawled repository: they are never run. Their literal fragments
(text every message the pattern matches must contain) are read with the standard library's
regex *parser* (no matching), on patterns of at most ``MAX_PATTERN`` characters.
"""

from __future__ import annotations

import ast
import builtins
import re
import re._constants as _sre_c  # type: ignore[import-not-found]  # (the regex parser has no stubs)
import re._parser as _sre_parse  # type: ignore[import-not-found]
import unicodedata
import warnings
from bisect import bisect_left
from typing import Any, TypeVar

from crawler.extract import parse, raises_regions
from crawler.extract.ast_names import dotted, record_import
from crawler.extract.templates import escape_surrogates
from crawler.extract.text import decode_source, module_name
from crawler.model.shapes import FileResult

MAX_PATTERN = 1000
MAX_CALLS_PER_FILE = 20_000
MAX_BLOCK_CALLS = 20
CODE_BEFORE = 2
CODE_LINES = 16
CODE_CHARS = 1500
SHOWN_MATCH = 300

_ROUTE_VERBS = frozenset({"get", "post", "put", "delete", "patch", "head", "options", "websocket", "api_route", "route"})
_CLI_DECORATORS = frozenset({"command", "group"})
_BUILTIN_EXCEPTIONS = frozenset(n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException))
_RAISES = frozenset({"raises"})
_N = TypeVar("_N", bound=ast.AST)
_ASSERT_RAISES = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
#: What the parser reads as a call of one of those names, in an ASCII text: the whole identifier,
#: then only what may stand between a called expression's last name and its "(": blanks, line
#: breaks and continuations (inside brackets), comments and the ")" of a parenthesized callee.
#: A text with none holds no raises block (``_TestWalker`` reads calls of these names only).
_BLOCK_CALL = re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(sorted(_RAISES | _ASSERT_RAISES)) + r")(?:[ \t\f\r\n\\)]|#[^\r\n]*)*\(")


class _Scope:
    __slots__ = ("kind", "qualname", "names", "cls", "statements", "typed")

    def __init__(self, kind: str, qualname: str, cls: str | None, statements: list[ast.stmt] | None = None):
        self.kind = kind  # module, class, function
        self.qualname = qualname
        self.names: dict[str, str | None] = {}  # local imports and definitions -> dotted target; None: shadowed
        self.cls = cls  # the qualname of the class whose method this is
        # the statements of a module-level function or method, for the knob readers (``GraphWalker.statements``)
        self.statements = statements
        #: a function's parameters and locals whose value the code says the kind of (see ``_typed``)
        self.typed: dict[str, tuple[str, str]] = {}


#: What a parameter or local holds, as far as the code says: ("type", X) a class, X or one of its
#: subclasses (``connector_cls: type[Base]``); ("inst", X) an instance of X; ("ret", F) what
#: the call of F returned (``connector_cls = cls.get_connector_class(config)``), which F's
#: return annotation says (``-> type[Base]``), or an instance of F when F is a class. X and F are
#: names as written, resolved where the call is (``finish``).
Typed = tuple[str, str]
#: A call through such a name: the callee ``finish`` writes, a marker the call graph expands
#: (``callers.Graph``): ``~new~X`` the constructor of X or of a subclass; ``~of~X.m`` the method m
#: of X or a subclass's override; ``~ret~F~.m`` what F returns, called (``~ret~F~``) or its m.
TYPED_CALL = "~"


def _typed(annotation: ast.expr | None) -> Typed | None:
    """("type", X) for ``type[X]``, ("inst", X) for ``X`` (also ``X | None``, ``Optional[X]``, and
    the same written as a string), else None."""
    if annotation is None:
        return None
    if type(annotation) is ast.Constant and isinstance(annotation.value, str) and len(annotation.value) < 200:
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except (SyntaxError, ValueError):
            return None
    if type(annotation) is ast.BinOp and isinstance(annotation.op, ast.BitOr):
        sides = [a for a in (annotation.left, annotation.right) if not (type(a) is ast.Constant and a.value is None)]
        return _typed(sides[0]) if len(sides) == 1 else None
    if type(annotation) is ast.Subscript:
        head = dotted(annotation.value)
        if head in ("Optional", "typing.Optional"):
            return _typed(annotation.slice)
        if head in ("type", "Type", "typing.Type"):
            inner = _typed(annotation.slice)
            return ("type", inner[1]) if inner and inner[0] == "inst" else None
        return None
    name = dotted(annotation)
    return ("inst", name) if name and name not in _PLAIN_TYPES else None


#: Annotations that name no class of the repository's (the walk resolves only what it imports or
#: defines, so these would resolve to nothing anyway; leaving them out saves the work).
_PLAIN_TYPES = frozenset({"int", "float", "str", "bytes", "bool", "dict", "list", "tuple", "set", "object", "Any", "None"})


class GraphWalker:
    """The call graph, read statement by statement: scopes kept on a stack, calls resolved at the
    end, when every module-level name (a function defined below its use) is known.

    It is a handler of another walk: the extractor's walk (``visitor``) calls :meth:`enter` on
    each statement it walks, before that statement's own handler, and :meth:`leave` after it
    when ``enter`` opened a scope. :meth:`walk` walks a block no other walk does (a function
    body the extractor skips, or a whole tree read alone by :func:`graph_facts`), through the
    same two methods, so each statement is visited once whichever walk reaches it.

    On the way it keeps, for each module-level function and each method of a module-level
    class, that function's statements (not those of the functions and classes it defines),
    in source order: ``statements``, keyed by the function's node, which the knob readers use
    instead of walking the function again (``knobs.declarations``)."""

    def __init__(self, module: str, is_package: bool):
        self.module = module
        self.is_package = is_package
        self.stack = [_Scope("module", "", None)]
        self.chain = tuple(self.stack)  # the stack as each pending call keeps it
        self.defs: list[list[Any]] = []  # [qualname, line, entry kind or None]
        self.classes: list[list[Any]] = []  # [qualname, line, [resolved bases]]
        # (caller qualname, written callee or (what a typed name holds, the rest), line, scopes, self class)
        self.pending: list[tuple[str, str | tuple[Typed, str], int, tuple[_Scope, ...], str | None]] = []
        self.returns: list[tuple[str, Typed, tuple[_Scope, ...]]] = []  # (qualname, what its return annotation says, scopes)
        self.statements: dict[int, list[ast.stmt]] = {}  # id(function node) -> its own statements
        #: the ids of those lists whose function holds a ``match`` (its cases' statements are not in them)
        self.cased: set[int] = set()
        # per statement ``enter`` opened: _SCOPE for a scope, else the statements list a ``match``
        # set aside (a ``match``'s cases are not among a function's statements, as ``knobs`` reads them)
        self._opened: list[object] = []
        #: what :func:`names_called` reads of the tree, read on the way (``Walked``): how many calls of each name the
        #: file makes, the names it takes without calling them, and per statement of a function
        #: (by id) the calls its own expressions make, as ``knob_passes.calls_of`` finds them
        self.called: dict[str, int] = {}
        self.taken: set[str] = set()
        self.made: dict[int, list[ast.Call]] = {}
        self._funcs: set[int] = set()  # (the ids of the called attributes: no name taken)

    def _qual(self, name: str) -> str:
        top = self.stack[-1]
        if top.kind == "module":
            return name
        if top.kind == "class":
            return f"{top.qualname}.{name}"
        return f"{top.qualname}.<locals>.{name}"

    def _push(self, scope: _Scope) -> None:
        self.stack.append(scope)
        self.chain = tuple(self.stack)

    def leave(self) -> None:
        """Close what the last :meth:`enter` that returned True opened, once the statement's
        blocks are walked."""
        held = self._opened.pop()
        if held is _SCOPE:
            self.stack.pop()
            self.chain = tuple(self.stack)
        else:
            self.stack[-1].statements = held  # type: ignore[assignment]  # (a list or None)

    def enter(self, stmt: ast.stmt) -> bool:
        """Read one statement's own facts (not its nested blocks'); True when :meth:`leave` is to
        be called once its blocks are walked: a function or class (whose scope it opened) or a
        ``match``."""
        t = type(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = stmt.args
            for expr in (*stmt.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None)):
                self._read(expr, None)  # (no function's own calls: only what the file calls and takes)
            self._function(stmt)
            self._opened.append(_SCOPE)
            return True
        if type(stmt) is ast.ClassDef:  # (written so, mypy narrows the statement)
            for expr in (*stmt.bases, *stmt.keywords, *stmt.decorator_list, *getattr(stmt, "type_params", ())):
                self._read(expr, None)
            self._class(stmt)
            self._opened.append(_SCOPE)
            return True
        top = self.stack[-1]
        held = top.statements
        if held is not None:
            held.append(stmt)
        spec = _STMT_SPECS.get(t) or _stmt_spec(t)
        if t is ast.Import or t is ast.ImportFrom:
            record_import(stmt, self.module, self.is_package, self._names())
        elif top.kind == "function":
            if spec[0]:
                self._calls_in(stmt, spec[0])
            if spec[3]:
                self._bind_locals(stmt)
        else:
            if t is ast.Assign and len(self.stack) == 1:
                self._module_alias(stmt)  # type: ignore[arg-type]  # (an Assign: its type is tested)
            for name in spec[0]:
                if name != "annotation" or t is not ast.AnnAssign:  # (a name in an annotation is a type, no value taken)
                    self._read_field(getattr(stmt, name, None), None)
        if spec[2]:  # (an ``except``'s class, a ``case``'s pattern and guard: the file's names, no statement's own)
            for clause in getattr(stmt, spec[2][0], None) or ():
                for field in ("type", "pattern", "guard"):
                    self._read_field(getattr(clause, field, None), None)
        if t is _MATCH:
            if held is not None:
                self.cased.add(id(held))
            self._opened.append(held)
            top.statements = None
            return True
        return False

    def walk(self, body: list[ast.stmt]) -> None:
        """Walk a block, and the blocks it holds, in source order (a ``try``'s handlers before its
        ``else`` and ``finally``, as the extractor walks them)."""
        for stmt in body:
            opened = self.enter(stmt)
            t = type(stmt)
            if t in _DEFINITIONS:
                self.walk(stmt.body)  # type: ignore[attr-defined]
            elif t is ast.If or t is ast.For or t is ast.AsyncFor or t is ast.While or t is ast.With or t is ast.AsyncWith:
                self.walk(stmt.body)  # type: ignore[attr-defined]
                orelse = getattr(stmt, "orelse", None)
                if orelse:
                    self.walk(orelse)
            elif t in _TRIES:
                self.walk(stmt.body)  # type: ignore[attr-defined]
                for handler in stmt.handlers:  # type: ignore[attr-defined]
                    self.walk(handler.body)
                self.walk(stmt.orelse)  # type: ignore[attr-defined]
                self.walk(stmt.finalbody)  # type: ignore[attr-defined]
            else:
                for block in sub_bodies(stmt):
                    self.walk(block)
            if opened:
                self.leave()

    def _module_alias(self, stmt: ast.Assign) -> None:
        """``Base = BaseV1`` at module level: ``Base`` stands for what ``BaseV1`` names (an
        import or a definition above it)."""
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        written = dotted(stmt.value) if type(target) is ast.Name else None
        if written is None or type(target) is not ast.Name:
            return
        head, dot, rest = written.partition(".")
        found = self.stack[0].names.get(head)
        if found is not None:
            self.stack[0].names[target.id] = found + dot + rest

    def _bind_locals(self, stmt: ast.stmt) -> None:
        # A local name shadows an import of that name: calls through it resolve to nothing.
        names = self.stack[-1].names
        typed = self.stack[-1].typed
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        for target in targets:
            if type(target) is ast.Name:
                names[target.id] = None
                typed.pop(target.id, None)
            else:
                for node in nodes_under(target, ast.Name):
                    names[node.id] = None
                    typed.pop(node.id, None)
        # what the code says the one name it binds holds (``Typed``)
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            value = stmt.value
            callee = dotted(value.func) if type(value) is ast.Call else None
            if callee:
                typed[stmt.targets[0].id] = ("ret", callee)
            elif type(value) is ast.Name and value.id in typed:
                typed[stmt.targets[0].id] = typed[value.id]
        elif type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name:
            said = _typed(stmt.annotation)
            if said:
                typed[stmt.target.id] = said

    def _names(self) -> dict[str, str | None]:
        for scope in reversed(self.stack):
            if scope.kind != "class":
                return scope.names
        return self.stack[0].names  # pragma: no cover - the module scope is never a class

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qual = self._qual(node.name)
        top = self.stack[-1]
        if top.kind != "class":
            self._names()[node.name] = f"{self.module}.{qual}"
        entry = None
        for dec in node.decorator_list:
            target = dec.func if type(dec) is ast.Call else dec
            if type(target) is ast.Attribute:
                if target.attr in _ROUTE_VERBS and type(dec) is ast.Call:
                    entry = "route"
                elif target.attr in _CLI_DECORATORS:
                    entry = "cli"
        self.defs.append([qual, node.lineno, entry])
        cls = top.qualname if top.kind == "class" else None
        # (a module-level function's statements, or a module-level class's method's, are kept)
        kept = top.kind == "module" or (top.kind == "class" and len(self.stack) == 2)
        scope = _Scope("function", qual, cls, [] if kept else None)
        if kept:
            self.statements[id(node)] = scope.statements  # type: ignore[assignment]  # (set just above)
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                scope.names[arg.arg] = None
                said = _typed(arg.annotation) if arg.annotation is not None else None
                if said and arg is not args.vararg and arg is not args.kwarg:
                    scope.typed[arg.arg] = said
        said = _typed(node.returns)
        if said:
            self.returns.append((qual, said, self.chain))
        self._push(scope)

    def _class(self, node: ast.ClassDef) -> None:
        qual = self._qual(node.name)
        if self.stack[-1].kind != "class":
            self._names()[node.name] = f"{self.module}.{qual}"
        bases = [d for d in (dotted(b) for b in node.bases) if d]
        self.classes.append([qual, node.lineno, bases, list(self.stack)])
        self._push(_Scope("class", qual, None))

    def _calls_in(self, stmt: ast.stmt, fields: tuple[str, ...]) -> None:
        # The statement's own expressions, in field order; nested statement bodies are walked
        # on their own. (A statement's own fields hold expressions and a ``with``'s items, never
        # a statement; ``Global`` names are strings, which hold nothing: they are no roots.)
        scope = self.stack[-1]
        qualname, cls, chain = scope.qualname, scope.cls, self.chain
        pending = self.pending
        typed = scope.typed
        annotated = type(stmt) is ast.AnnAssign
        made: list[ast.Call] = []
        called, taken, funcs = self.called, self.taken, self._funcs  # (``_read``'s, read here without its call)
        for name in fields:
            value = getattr(stmt, name, None)
            if value is None:
                continue
            for expr in value if type(value) is list else (value,):
                if type(expr) is str:
                    continue
                first = len(made)
                if annotated and name == "annotation":
                    made += nodes_under(expr, ast.Call)  # (a name in an annotation is a type, no value taken)
                else:
                    _read_names(expr, called, taken, funcs, made)
                if len(pending) >= MAX_CALLS_PER_FILE or first == len(made):
                    continue  # (the file's names and the knobs' calls are still read)
                for node in made[first:]:
                    written = dotted(node.func)
                    if written:
                        pending.append((qualname, self.callee(scope, written) if typed else written, node.lineno, chain, cls))
        if made:
            self.made[id(stmt)] = made

    def _read_field(self, value: Any, made: list[ast.Call] | None) -> None:
        if value is None:
            return
        if type(value) is list:
            for expr in value:
                if type(expr) is not str:  # (a ``global``'s names)
                    self._read(expr, made)
        else:
            self._read(value, made)

    def _read(self, root: ast.AST, made: list[ast.Call] | None) -> None:
        """What :func:`names_called` reads of one expression (the names called and taken), and
        into ``made`` its calls in :func:`nodes_under`'s order."""
        _read_names(root, self.called, self.taken, self._funcs, made)

    @staticmethod
    def callee(scope: _Scope, written: str) -> str | tuple[Typed, str]:
        """What a pending call keeps of its callee: the name as written, or for a call through a
        name the code says the kind of (``_Scope.typed``), that and the method called on it."""
        if scope.typed:
            head, dot, rest = written.partition(".")
            said = scope.typed.get(head) if "." not in rest else None
            if said is not None:
                return said, dot + rest
        return written

    def resolve(self, written: str, chain: tuple[_Scope, ...], cls: str | None) -> str | None:
        """The dotted name a written callee refers to, or None when errcat cannot tell."""
        head, dot, rest = written.partition(".")
        if head in ("self", "cls") and dot and cls is not None and "." not in rest:
            return f"{self.module}.{cls}.{rest}"
        for scope in reversed(chain):
            if scope.kind == "class":
                continue  # class bodies are not enclosing scopes of their methods
            if head in scope.names:
                target = scope.names[head]
                return None if target is None else target + dot + rest
        return None

    def typed_target(self, said: Typed, rest: str, chain: tuple[_Scope, ...], cls: str | None) -> str | None:
        """The marker of a call through a typed name (``TYPED_CALL``), ``rest`` the method called
        on it ("" for the name itself called), or None when what it names does not resolve."""
        kind, written = said
        name = self.resolve(written, chain, cls)
        if name is None:
            return None
        if kind == "type":
            return f"~new~{name}" if not rest else name + rest  # (a classmethod: the class's own or a base's)
        if kind == "inst":
            return f"~of~{name}{rest or '.__call__'}"
        return f"~ret~{name}~{rest}"

    def facts(self) -> dict[str, Any]:
        """The graph facts of the walk that ended (:func:`graph_facts`)."""
        return _facts(self)

    def finish(self) -> tuple[list[list[Any]], list[list[Any]]]:
        calls = []
        for caller, written, line, chain, cls in self.pending:
            if type(written) is tuple:
                target = self.typed_target(written[0], written[1], chain, cls)
            else:
                target = self.resolve(written, chain, cls)  # type: ignore[arg-type]  # (a str: the tuple is tested)
            if target is not None:
                calls.append([caller, target, line])
        classes = []
        for qual, line, bases, scopes in self.classes:  # (not ``chain``: a list here, a tuple above)
            resolved = [self.resolve(b, tuple(scopes), None) or b for b in bases]
            classes.append([qual, line, resolved])
        return calls, classes


#: Fields that never hold a node looked for (names, flags, an expression's ``ctx`` and an
#: operator's singletons, which hold nothing either), and per node type the fields that may (a
#: constant's value is never one).
_LEAF_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "kind", "conversion", "is_async", "type_comment", "level", "module", "simple", "tag", "op", "ops"}
)  # (not "name": a 3.12 type alias's is a node)
_NODE_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


_BODIES = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_SCOPE = object()  # (``GraphWalker._opened``)
_MATCH = getattr(ast, "Match", None)
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_TRIES = frozenset({ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else [])})
_BINDS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith})
#: Per statement type: its fields that may hold its own expressions (not its nested bodies),
#: its fields of nested statements, of clauses holding statements, and whether it binds names.
_STMT_SPECS: dict[type[ast.AST], tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {}


def _stmt_spec(t: type[ast.AST]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]:
    spec = _STMT_SPECS[t] = (
        tuple(f for f in t._fields if f not in _BODIES and f not in _LEAF_FIELDS),
        tuple(f for f in ("body", "orelse", "finalbody") if f in t._fields),
        tuple(f for f in ("handlers", "cases") if f in t._fields),
        t in _BINDS,
    )
    return spec


def _node_fields(t: type) -> tuple[str, ...]:
    # Anything not a node (a name's string, a dict's None key for ``**``) has no fields.
    fields = _NODE_FIELDS[t] = tuple(f for f in t._fields if f not in _LEAF_FIELDS) if issubclass(t, ast.AST) else ()
    return fields


def nodes_under(root: ast.AST, kind: type[_N]) -> list[_N]:
    """The nodes of type ``kind`` in ``root`` and below, in ``ast.walk``'s order (breadth first),
    found with a fraction of its cost: every expression of a file is walked for the call graph,
    and ``ast.walk``'s generators (and the ``Load()`` under every name) made that walk cost more
    than the parse. The node types most of a tree is made of (names, constants, attributes,
    calls, keywords) are taken apart by hand, in their fields' order; lists go into the queue
    unfiltered: what is not a node has no fields."""
    found = []
    todo: list[Any] = [root]
    get = _NODE_FIELDS.get
    name, constant, attribute, call, keyword = ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.keyword
    for node in todo:  # (the list grows while it is read: breadth first)
        t = type(node)
        if t is kind:
            found.append(node)
        if t is name or t is constant:
            continue
        if t is attribute:
            todo.append(node.value)
        elif t is call:
            todo.append(node.func)
            todo += node.args
            todo += node.keywords
        elif t is keyword:
            todo.append(node.value)
        else:
            fields = get(t)
            if fields is None:
                fields = _node_fields(t)
            for field in fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    todo += value
                elif value is not None:
                    todo.append(value)
    return found


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` in its order, less the leaves no search here looks for (an
    expression's context, an operator: half the nodes of a tree)."""
    t = type(node)
    fields = _NODE_FIELDS.get(t)
    if fields is None:
        fields = _node_fields(t)
    return _values(node, fields)


def _values(node: ast.AST, fields: tuple[str, ...]) -> list[ast.AST]:
    """The nodes ``node``'s ``fields`` hold, in their order (a list's items in it)."""
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def sub_bodies(stmt: ast.AST) -> list[list[ast.stmt]]:
    """The blocks of statements a compound statement holds (its own and its clauses')."""
    t = type(stmt)
    _, bodies, clauses, _ = _STMT_SPECS.get(t) or _stmt_spec(t)
    out = []
    for name in bodies:
        value = getattr(stmt, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            out.append(value)
    for name in clauses:
        for clause in getattr(stmt, name, None) or ():
            out.append(clause.body)
    return out


def names_called(tree: ast.AST) -> tuple[dict[str, int], set[str]]:
    """How many calls of each name (a called name's last part: ``a.b.check(x)`` is ``check``) the
    tree makes anywhere (module level, class bodies, nested functions, lambdas), and the names it
    takes without calling them (``submit(self._check, x)``, ``{"a": f}``: a callback, which a
    call graph does not see called). The extractor's walk reads them on its way
    (``GraphWalker.called``, ``taken``); this is for a tree read alone."""
    called: dict[str, int] = {}
    taken: set[str] = set()
    _read_names(tree, called, taken, set(), None)
    return called, taken


def _read_names(root: ast.AST, called: dict[str, int], taken: set[str], funcs: set[int], made: list[ast.Call] | None) -> None:
    """Add to ``called`` and ``taken`` what :func:`names_called` finds under ``root``, and to
    ``made`` (when given) its calls in :func:`nodes_under`'s order; ``funcs``: the ids of the
    called attributes met so far (no name taken)."""
    todo: list[Any] = [root]
    get = _NAMES_FIELDS.get
    name, constant, attribute, call, keyword = ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.keyword
    for node in todo:  # (as ``nodes_under``: breadth first, the node types most of a tree is made of by hand)
        t = type(node)
        if t is name:  # (never a called one: those are not queued)
            taken.add(node.id)
            continue
        if t is constant:
            continue
        if t is attribute:
            if id(node) not in funcs:
                taken.add(node.attr)
            todo.append(node.value)
        elif t is call:
            if made is not None:
                made.append(node)
            func = node.func
            if type(func) is name:
                # (a called name is not taken and holds nothing: left out of the queue, which
                # leaves every other node in its place; it is no id to look up for each name)
                called[func.id] = called.get(func.id, 0) + 1
            else:
                if type(func) is attribute:
                    called[func.attr] = called.get(func.attr, 0) + 1
                    funcs.add(id(func))
                todo.append(func)
            todo += node.args
            todo += node.keywords
        elif t is keyword:
            todo.append(node.value)
        else:  # (what is not a node, a ``None`` key of a dict, has no fields)
            fields = get(t)
            if fields is None:  # (a name in an annotation is a type, no value taken)
                fields = _NAMES_FIELDS[t] = _ANNOTATED[t] if t in _ANNOTATED else tuple(_node_fields(t))
            for field in fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    todo += value
                elif value is not None:
                    todo.append(value)


#: Per node type, the fields :func:`_read_names` walks (``_NODE_FIELDS``', less annotations).
_NAMES_FIELDS: dict[type, tuple[str, ...]] = {}
#: The fields other than annotations of the nodes that have them.
_ANNOTATED: dict[type, tuple[str, ...]] = {
    ast.arg: (),
    ast.AnnAssign: ("target", "value"),
    ast.FunctionDef: ("args", "body", "decorator_list"),
    ast.AsyncFunctionDef: ("args", "body", "decorator_list"),
}


def own_expressions(stmt: ast.stmt) -> list[ast.AST]:
    """A statement's own expressions (an ``if``'s test, an assignment's targets and value, a
    ``with``'s items), not those of the statements in its blocks, in field order."""
    return _values(stmt, (_STMT_SPECS.get(type(stmt)) or _stmt_spec(type(stmt)))[0])


def function_statements(fn: ast.AST, cases: bool = False) -> list[ast.stmt]:
    """A function's statements, in compound statements too, not in nested functions and classes
    (statements only: walking every expression of every method cost four times the rest), in
    the order the knob readers rely on (blocks popped from the end); ``cases``: a ``match``'s
    cases' statements too."""
    out: list[ast.stmt] = []
    todo = list(getattr(fn, "body", ()))
    while todo:
        stmt = todo.pop()
        if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        out.append(stmt)
        for attr in ("body", "orelse", "finalbody"):
            todo += getattr(stmt, attr, ())
        for handler in getattr(stmt, "handlers", ()):
            todo += handler.body
        if cases:
            for case in getattr(stmt, "cases", ()):
                todo += case.body
    return out


def statements_under(node: ast.AST) -> list[ast.stmt]:
    """Every statement in a node's blocks and theirs, nested definitions' included (what
    ``ast.walk`` finds of them, in no particular order, without walking any expression)."""
    out: list[ast.stmt] = []
    todo = [node]
    for here in todo:  # (the list grows while it is read)
        for block in sub_bodies(here):
            out += block
            todo += block
    return out


def lines_naming(words: list[str], text: str, first: int) -> list[int]:
    """Ascending numbers of the lines of ``text`` (whose first line is numbered ``first``) that
    hold one of ``words`` (substring tests: a regular expression cost more than the walk it
    saves; found once per function, not per statement and again per enclosing statement)."""
    starts = []
    for word in words:
        pos = text.find(word)
        while pos >= 0:
            starts.append(pos)
            pos = text.find(word, pos + 1)
    starts.sort()
    return line_numbers(starts, text, first)


def line_numbers(starts: list[int], text: str, first: int = 1) -> list[int]:
    """The ascending numbers, each once, of the lines (``\n`` ends) of ``text`` (whose first line
    is numbered ``first``) holding the ascending offsets ``starts``."""
    out: list[int] = []
    line, pos = first, 0
    count = text.count
    for start in starts:
        line += count("\n", pos, start)
        pos = start
        if not out or out[-1] != line:
            out.append(line)
    return out


def on_lines(found: list[int], first: int, last: int) -> bool:
    """Whether one of the ascending line numbers ``found`` is in ``first..last``."""
    i = bisect_left(found, first)
    return i < len(found) and found[i] <= last


def empty_graph() -> dict[str, Any]:
    return {"defs": [], "classes": [], "aliases": {}, "calls": []}


def graph_facts(tree: ast.Module, module: str, is_package: bool) -> dict[str, Any]:
    """A source file's definitions, classes, module-level aliases and resolved calls, from a
    walk of its own (the extractor's walk reads them with a :class:`GraphWalker` as it goes)."""
    walker = GraphWalker(module, is_package)
    walker.walk(tree.body)
    return walker.facts()


def _facts(walker: GraphWalker) -> dict[str, Any]:
    calls, classes = walker.finish()
    top = walker.stack[0].names
    returns = {}
    for qual, (kind, written), chain in walker.returns:
        name = walker.resolve(written, chain, None)
        if name is not None:
            returns[qual] = [kind, name]
    return {
        "defs": walker.defs,
        "classes": classes,
        # module-level names that stand for something defined elsewhere (re-exports)
        "aliases": {name: target for name, target in sorted(top.items()) if target != f"{walker.module}.{name}"},
        "calls": calls,
        # a function's return annotation, when it names a class: [kind, the class] (``Typed``)
        "returns": returns,
    }


# --------------------------------------------------------------------------- test files


def pattern_fragments(pattern: str) -> tuple[list[str], bool] | None:
    """The literal runs every string the regex ``pattern`` matches must contain, in order, and
    case-folded when the pattern ignores case; None when the pattern cannot be read (too long,
    invalid, too deep). Only the parser runs: the pattern is never matched against anything."""
    if len(pattern) > MAX_PATTERN:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError, MemoryError):
        return None
    fold = bool(parsed.state.flags & re.IGNORECASE)
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append("".join(run))
            run.clear()

    def walk(items: list[Any], depth: int) -> None:
        nonlocal fold
        if depth > 50:
            flush()
            return
        for op, av in items:
            if op is _sre_c.LITERAL:
                run.append(chr(av))
            elif op is _sre_c.IN and len(av) == 1 and av[0][0] is _sre_c.LITERAL:
                run.append(chr(av[0][1]))
            elif op is _sre_c.SUBPATTERN:
                add_flags = av[1] or 0
                if add_flags & re.IGNORECASE:
                    fold = True
                walk(av[3], depth + 1)
            elif op is _sre_c.AT:
                continue  # zero-width: the runs either side are still contiguous text
            else:
                flush()

    try:
        walk(parsed, 0)
    except RecursionError:
        return None
    flush()
    return ([f.casefold() for f in out], True) if fold else (out, False)


def _pattern_of(node: ast.expr | None) -> tuple[str | None, list[str] | None, bool]:
    """(the pattern as the test writes it, its literal fragments, whether they are case-folded)
    of a ``match=`` argument; (None, None, False) when errcat cannot read it."""
    if node is None:
        return None, None, False
    if type(node) is ast.Constant and isinstance(node.value, str):
        got = pattern_fragments(node.value)
        return (node.value, *got) if got is not None else (None, None, False)
    if type(node) is ast.Call and dotted(node.func) == "re.escape" and len(node.args) == 1:
        arg = node.args[0]
        if type(arg) is ast.Constant and isinstance(arg.value, str) and len(arg.value) <= MAX_PATTERN:
            return re.escape(arg.value), [arg.value], False
    if type(node) is ast.JoinedStr:  # an f-string: its literal parts are pattern text
        # A part that does not parse alone (a group the next value closes) makes the whole
        # unreadable: its fragments would not be what every matching message contains.
        frags: list[str] = []
        shown = []
        for part in node.values:
            if type(part) is ast.Constant and isinstance(part.value, str):
                got = pattern_fragments(part.value)
                if got is None or got[1]:
                    return None, None, False
                frags.extend(got[0])
                shown.append(part.value)
            else:
                shown.append("{...}")
        return "".join(shown), frags, False
    return None, None, False


class _TestWalker:
    def __init__(self, module: str, is_package: bool, lines: list[str], named: list[int] | None = None):
        self.module = module
        self.is_package = is_package
        self.lines = lines
        #: the lines that say "aises": a function none of whose lines do holds no raises block,
        #: and what it imports is its own, so its body is not walked (None: every body is)
        self.named = named
        self.imports: dict[str, str] = {}
        self.found: list[dict[str, Any]] = []
        self.scope: list[str] = []
        self.local_names: list[dict[str, str]] = [self.imports]

    def resolve(self, written: str | None) -> str | None:
        if not written:
            return None
        head, dot, rest = written.partition(".")
        for names in reversed(self.local_names):
            if head in names:
                return names[head] + dot + rest
        if not dot and head in _BUILTIN_EXCEPTIONS:
            return f"builtins.{head}"
        return None

    def walk(self, body: list[ast.stmt], in_class: bool = False) -> None:
        for stmt in body:
            t = type(stmt)
            if t is ast.Import or t is ast.ImportFrom:
                record_import(stmt, self.module, self.is_package, self.local_names[-1])
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if self.named is not None and not on_lines(self.named, stmt.lineno, stmt.end_lineno or stmt.lineno):
                    continue
                self.scope.append(stmt.name)
                self.local_names.append({})
                self.walk(stmt.body)
                self.local_names.pop()
                self.scope.pop()
            elif isinstance(stmt, ast.ClassDef):
                self.scope.append(stmt.name)
                self.walk(stmt.body, in_class=True)
                self.scope.pop()
            else:
                if isinstance(stmt, (ast.With, ast.AsyncWith)):
                    for item in stmt.items:
                        self._raises_call(item.context_expr, stmt)
                elif isinstance(stmt, ast.Expr) and type(stmt.value) is ast.Call:
                    self._raises_call(stmt.value, None)
                for sub in sub_bodies(stmt):
                    self.walk(sub)

    def _raises_call(self, call: ast.expr, with_stmt: ast.With | ast.AsyncWith | None) -> None:
        if type(call) is not ast.Call:
            return
        func = call.func
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if name in _RAISES:
            if dotted(func) not in ("pytest.raises", "raises") or not call.args:
                return
            pattern_node = next((k.value for k in call.keywords if k.arg == "match"), None)
            rest = call.args[1:]
        elif name in _ASSERT_RAISES:
            if not call.args:
                return
            regex = name != "assertRaises"
            pattern_node = (
                call.args[1]
                if regex and len(call.args) > 1
                else next((k.value for k in call.keywords if k.arg in ("expected_regex", "expected_regexp")), None)
                if regex
                else None
            )
            rest = call.args[2:] if regex else call.args[1:]
        else:
            return
        if with_stmt is None and not rest:
            return  # a bare call that is not the callable form: nothing to read
        exc_node = call.args[0]
        written = [dotted(e) for e in exc_node.elts] if type(exc_node) is ast.Tuple else [dotted(exc_node)]
        exceptions = sorted({r for r in (self.resolve(w) for w in written) if r})
        if not exceptions:
            return
        shown, frags, fold = _pattern_of(pattern_node)
        if pattern_node is not None and shown is None:
            return  # a pattern errcat cannot read says nothing it could check
        block = with_stmt if with_stmt is not None else call
        calls = []
        targets = [rest[0]] if with_stmt is None else nodes_under(ast.Module(body=with_stmt.body, type_ignores=[]), ast.Call)
        for node in targets:
            callee = node.func if type(node) is ast.Call else node if with_stmt is None else None
            target = self.resolve(dotted(callee)) if callee is not None else None
            if target and target not in calls:
                calls.append(target)
                if len(calls) >= MAX_BLOCK_CALLS:
                    break
        line, end = block.lineno, block.end_lineno or block.lineno
        self.found.append(
            {
                "line": line,
                "end_line": end,
                "qualname": ".".join(self.scope) or "<module>",
                "exceptions": exceptions,
                "match": escape_surrogates(shown[:SHOWN_MATCH]) if shown is not None else None,
                "fragments": [escape_surrogates(f) for f in frags] if frags is not None else None,
                "fold": fold,
                "calls": calls,
                "code": self._code(line, end),
            }
        )

    def _code(self, line: int, end: int) -> str:
        lo = max(1, line - CODE_BEFORE)
        hi = min(len(self.lines), end + 1, lo + CODE_LINES - 1)
        text = "\n".join(self.lines[lo - 1 : hi])
        if len(text) > CODE_CHARS:
            text = text[: CODE_CHARS - 1] + "…"
        return escape_surrogates(text)


def _head_end(data: bytes) -> int:
    """Where a file's first two lines end (a coding cookie is in one of them, PEP 263)."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    return len(data) if second < 0 else second


def _reduced_tree(text: str, said: str, named: list[int] | None) -> ast.Module | None:
    """The tree of ``text`` with the top-level functions and classes that hold no raises block
    left out (``raises_regions``), parsed: the same statements the walker reads, at a fifth of
    the parse. None when nothing can be left out, or the reduced text does not parse the way
    its cuts say (then the whole text is parsed, as before)."""
    if named is None:
        return None
    got = raises_regions.reduced(text, named, lines_naming(["import"], said, 1))
    if got is None:
        return None
    try:
        tree = ast.parse(got[0])
    except (SyntaxError, ValueError):
        return None
    return tree if raises_regions.starts_agree(tree, got[1]) else None


def read_test_file(path: str, data: bytes) -> FileResult:
    """A test file's result: shaped like an extraction result with no sites (a test file gives
    no catalogue entry), its raises blocks under ``tests``. Never raises."""
    module, is_package = module_name(path)
    result: FileResult = {
        "path": path,
        "module": module,
        "status": "ok",
        "reason": None,
        "sites": [],
        "classes": [],
        "bare_asserts": 0,
        "reraises": 0,
        "calls": [],
        "tests": [],
    }

    def skipped(reason: str) -> FileResult:
        result["status"] = "skipped"
        result["reason"] = escape_surrogates(f"test file: {reason}")
        return result

    # The tests below are on the decoded text, not the bytes: a coding cookie (utf-7) can spell
    # "raises" in bytes that do not say it. A file that cannot be decoded and does not say it
    # is no test file's concern. (ASCII with no cookie, which only its first two lines may hold,
    # is its own text.)
    if b"aises" not in data and data.isascii() and b"coding" not in data[: _head_end(data)]:
        return result
    if b"\0" in data:
        return skipped("invalid source: null bytes") if b"aises" in data else result
    try:
        text = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        return skipped(f"decode error: {getattr(e, 'msg', None) or e}") if b"aises" in data else result
    # (pytest.)raises, assertRaises(Regex) as the parser reads them: an identifier as its NFKC
    # form (fullwidth letters spell `raises`), so a non-ASCII text is looked at normalized. What
    # stands around a call's name is ASCII, which NFKC keeps, bar a comment's text (and NFKC
    # makes no line break): a call the parser reads is one in the normalized text.
    said = text if text.isascii() else unicodedata.normalize("NFKC", text)
    if _BLOCK_CALL.search(said) is None:
        return result  # no call of a raises function: nothing to parse for
    try:
        lone_cr = "\r" in text and re.search("\r(?!\n)", text)  # (lines the parser counts that "\\n" does not)
        # (NFKC maps no character to or from a "\n": the normalized text's lines are the text's)
        named = None if lone_cr else lines_naming(["aises"], said, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = _reduced_tree(text, said, named) or parse.parse_source(text)
        walker = _TestWalker(module, is_package, text.splitlines(), named)
        walker.walk(tree.body)
    except SyntaxError as e:
        return skipped(f"syntax error: line {e.lineno}: {e.msg}")
    except parse.FallbackUnavailable as e:
        out = skipped(str(e))
        out["transient"] = True
        return out
    except (ValueError, UnicodeDecodeError) as e:
        return skipped(f"invalid source: {e}")
    except (RecursionError, MemoryError):
        return skipped("too deeply nested")
    except Exception as e:  # noqa: BLE001 - a bug here must not stop a whole crawl
        return skipped(f"internal error: {type(e).__name__}: {e}")
    result["tests"] = walker.found
    return result
