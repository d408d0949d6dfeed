"""Settings a function passes to another: what a check on a parameter is a check on, across files.

Per file (read in the extraction workers, cached with the file's result; the join is
:func:`crawler.catalogue.meaning.site_meaning`, through the call graph's edges):

- ``passes``: calls whose argument is a field of one of the project's configs as the code names it
  (``self.cache_config.cache_dtype``, ``vllm_config.parallel_config.world_size``: the holder's
  name, ``cache_config``, and the field), an environment variable read through the project's
  ``envs`` module (``envs.VLLM_USE_V2_MODEL_RUNNER``), or a local assigned one of those before
  the call; each with its line, the called name's last part and the argument's position or keyword.
- ``signatures``: the parameters (receivers left out) of each function that raises, asserts or
  logs, or passes a parameter of its own on, in order, so a call's positional argument names the
  parameter it binds; with ``defaults``, where each parameter's default comes from (below).
- ``given`` (any argument, not only settings: :func:`crawler.catalogue.callers.passed_by_id`
  joins them): each call a function makes with arguments, each argument as where its value
  comes from (:func:`sources`): a constant, the object's own state, a setting, the model's
  configuration, a request, a parameter of the caller's own (its callers decide), or unknown;
  ``called``: how many calls of each name (the called name's last part) the file makes, so
  the join can tell a function whose calls the call graph did not all resolve.
- ``quiet``: how many calls of each name (the same last part) a function makes in the body of a
  ``try`` whose handlers raise nothing and only log or fall back, one of them catching every
  exception (``except Exception:`` then ``logger.debug(...)`` and ``continue``): with ``called``,
  the join tells a function whose every call catches what it raises (s46-rules, O21 of s45-judge3).

The join takes a pass only where the call graph has the same call (same file and line) to the
function the check is in, and the field only where a settings class of that name declares it: a
name alone (``x_config.y`` of no such class) stands for nothing.

Only the code is read; nothing here imports or runs it.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, cast

from crawler.extract.ast_names import dotted
from crawler.extract.codefacts import child_nodes, function_statements, lines_naming, names_called, nodes_under, on_lines, own_expressions
from crawler.extract.guard_reads import CONFIG_PART, HOLDS_CONFIG, MODEL_CONFIG_PART
from crawler.extract.knob_flow import ACCESSORS, CONVERSIONS

#: The name of a holder of settings as code spells it (``cache_config``, ``parallel_config``).
_HOLDER = re.compile(r"[a-z][a-z0-9_]*_config")
_ENV_HOLDERS = ("envs",)
_RECEIVERS = ("self", "cls")
_LOG_CALLS = frozenset({"warning", "warning_once", "error", "error_once", "critical", "exception", "warn", "info_once"})
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return, ast.AugAssign)
#: Words a raise, an assert or a log call of ``_LOG_CALLS`` shows on its lines (``warn`` is in
#: ``warning`` and ``warning_once``, ``error`` in ``error_once``).
_CHECK_WORDS = ["raise", "assert", "warn", "error", "critical", "exception", "info_once"]
#: At most this many passes per file (a generated file of thousands of calls says nothing more).
MAX_PASSES = 5000
#: At most this many calls with their arguments per file, and sources per argument (more: unknown).
MAX_GIVEN = 5000
MAX_SOURCES = 6
#: Where an argument's value comes from (:func:`sources`), as the join reads it: ``c`` a constant
#: (a literal, a module constant, a class or an enum member), ``t`` the object's own state (an
#: attribute its class assigns only constants), ``s:CODE`` a setting (a field of one of the
#: engine's configs, an environment variable through ``envs``), ``m:CODE`` the model's own
#: configuration, ``r:CODE`` a request's field, ``p:NAME`` the caller's own parameter, ``?`` unknown.
UNKNOWN = "?"
CONSTANT = "c"
STATE = "t"
#: A request's roots: ``guard_reads``' less ``params`` (a model's weights too). What else the names
#: in a chain stand for (a config a user sets, the model's own configuration, a holder of a config
#: no trace says who fills) is read with ``guard_reads``' own patterns.
_REQUEST_ROOTS = frozenset({"request", "req", "sampling_params", "body"})
#: An exception built (``raise ValueError(f"... {x}")``): no function of the repository's called.
_EXCEPTION_NAME = ("Error", "Exception", "Warning")
#: Builtins whose result is made of their arguments only.
_OF_ARGS = CONVERSIONS | {"len", "min", "max", "abs", "round", "any", "all", "sum", "frozenset"}


def empty() -> dict[str, Any]:
    return {"passes": [], "signatures": [], "given": [], "called": {}, "taken": [], "quiet": {}}


_TRY_TYPES = (ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else []))
#: What a handler that only logs or falls back may hold: a log call below error, a value kept, a way on.
_QUIET_STATEMENTS = (ast.Expr, ast.Pass, ast.Continue, ast.Break, ast.Return, ast.Assign, ast.AnnAssign)
#: (not ``error``/``exception``: a log at that level, the latter with the traceback, shows the error itself)
_QUIET_LOGS = frozenset({"debug", "info", "warning", "warning_once", "info_once", "debug_once", "warn"})
_BROAD = frozenset({"Exception", "BaseException"})
#: A value a quiet handler may keep or return: made of no call (an error response built is what the caller gets).
_KEPT = (ast.Constant, ast.Name, ast.Attribute, ast.List, ast.Tuple, ast.Dict, ast.Set)


def _broad(handler: ast.ExceptHandler) -> bool:
    """``except:``, ``except Exception``, ``except (OSError, Exception) as e``."""
    t = handler.type
    if t is None:
        return True
    names = t.elts if type(t) is ast.Tuple else [t]
    return any((type(n) is ast.Name and n.id in _BROAD) or (type(n) is ast.Attribute and n.attr in _BROAD) for n in names)


def _quiet_handler(handler: ast.ExceptHandler) -> bool:
    """A handler that raises nothing and only logs below error (``logger.debug(...)``, no
    ``exc_info``), keeps or returns a value made of no call and not of what it caught, or goes on:
    what it caught goes no further (``except Exception as e: self._error = e`` keeps it for later,
    ``return self.create_error_response(...)`` answers with it, ``logger.exception`` prints it)."""
    for stmt in handler.body:
        if type(stmt) not in _QUIET_STATEMENTS:
            return False
        if type(stmt) is ast.Expr:
            call = stmt.value
            if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.func.attr not in _QUIET_LOGS:
                return False
            if any(k.arg == "exc_info" for k in call.keywords):
                return False
            continue
        value = getattr(stmt, "value", None)
        if value is None:
            continue
        if not isinstance(value, _KEPT) or any(type(n) is ast.Call or (type(n) is ast.Name and n.id == handler.name) for n in ast.walk(value)):
            return False
    return True


def _quiet(statements: list[ast.stmt], calls: Calls, quiet: dict[str, int]) -> None:
    """Add to ``quiet`` the calls (by the called name's last part) whose innermost ``try`` (the one
    whose body holds them and starts last) has only quiet handlers (:func:`_quiet_handler`), one of
    them broad: what they raise is caught there and goes no further. A call in a narrower ``try``
    inside it (``except (RuntimeError, AssertionError)``) is not counted, whatever that one does."""
    spans: list[tuple[int, int, bool]] = []
    for stmt in statements:
        if type(stmt) not in _TRY_TYPES:
            continue
        t = cast("ast.Try", stmt)  # (a ``try/except*`` has the same fields)
        if t.body:
            quiet_try = any(_broad(h) for h in t.handlers) and all(_quiet_handler(h) for h in t.handlers)
            spans.append((t.body[0].lineno, t.body[-1].end_lineno or t.body[-1].lineno, quiet_try))
    if not any(q for _, _, q in spans):
        return
    # ``try`` bodies nest or are apart: sorted by (start, -end), each one's nearest enclosing body is
    # its parent, and a line's innermost body is the last one starting at or before it, or the first
    # of that one's enclosing bodies that reaches the line (linear in the ``try``s and calls: a crafted
    # function of 8,000 of them took 6 s as a scan of every body for each call).
    spans.sort(key=lambda span: (span[0], -span[1]))
    starts = [span[0] for span in spans]
    parent: list[int] = []
    open_spans: list[int] = []
    for i, (start, _, _) in enumerate(spans):
        while open_spans and spans[open_spans[-1]][1] < start:
            open_spans.pop()
        parent.append(open_spans[-1] if open_spans else -1)
        open_spans.append(i)
    for stmt, made in calls:
        if not made:
            continue
        i = bisect_right(starts, stmt.lineno) - 1
        while i >= 0 and spans[i][1] < stmt.lineno:
            i = parent[i]
        if i < 0 or not spans[i][2]:
            continue
        for call in made:
            f = call.func
            name = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else None
            if name:
                quiet[name] = quiet.get(name, 0) + 1


def _setting(node: ast.expr, held: dict[str, list[str]]) -> list[str] | None:
    """[holder, field] for ``....cache_config.cache_dtype`` or ``envs.VLLM_X``; what a local holds."""
    if type(node) is ast.Name:
        return held.get(node.id)
    written = dotted(node) if type(node) is ast.Attribute else None
    if not written:
        return None
    parts = written.split(".")
    if len(parts) >= 2 and (_HOLDER.fullmatch(parts[-2]) or parts[-2] in _ENV_HOLDERS and len(parts) == 2):
        return parts[-2:]
    return None


def _defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef, named: list[str]) -> dict[str, list[str]]:
    """Each parameter with a default -> the default's sources (a call that does not pass it)."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
    empty = _Context(set())
    return {p.arg: sorted(sources(d, empty)) for p, d in pairs if p.arg in named}


def _checks(statements: list[ast.stmt]) -> bool:
    for stmt in statements:
        if type(stmt) in (ast.Raise, ast.Assert):
            return True
        if type(stmt) is ast.Expr and type(stmt.value) is ast.Call and type(stmt.value.func) is ast.Attribute and stmt.value.func.attr in _LOG_CALLS:
            return True
    return False


def _chain(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if type(node) is ast.Name else None


class _Context:
    """What a function's argument expressions are read against: its parameters, the locals
    assigned before (each to the sources of every value it was assigned: a local assigned in two
    branches is either), and its class's attributes (to the sources of what they are assigned).

    A local's value is worked out only when an expression read asks for it (:meth:`held`), as of
    the statement that bound it: most assignments are never read by a call's argument. Each
    binding (:class:`_Bound`) is numbered in the order the statements make them and linked to the
    name's binding before it; a read sees the bindings numbered below ``now`` (all of them, but
    while one binding's value is worked out: those made before it). ``eager``: each binding
    worked out as it is made (the reference the lazy reading is tested against)."""

    __slots__ = ("params", "bound", "_state", "_changed", "_calls", "now", "order", "swept", "depth", "eager")

    def __init__(
        self,
        params: set[str],
        state: Callable[[], dict[str, set[str]]] | None = None,
        calls: Calls | None = None,
        eager: bool = False,
    ):
        self.params = params
        #: each local's last binding
        self.bound: dict[str, _Bound] = {}
        self._state = state
        self._changed: set[str] | None = None
        self._calls = calls
        self.now = _ALL
        self.order: list[_Bound] = []
        self.swept = 0
        self.depth = 0
        self.eager = eager

    def state(self) -> dict[str, set[str]]:
        """The class's attributes (``_state``), worked out when a chain on ``self`` asks."""
        return self._state() if self._state is not None else _NO_STATE

    def changed(self) -> set[str]:
        """The locals the function changes in place (``x.append(v)``, ``x[k] = v``): what they
        hold is not what they were assigned (``changed_in_place``, when a value first asks)."""
        if self._changed is None:
            self._changed = changed_in_place(self._calls) if self._calls is not None else set()
        return self._changed

    def bind(self, name: str, of: ast.AST | _Items | None) -> None:
        """``name`` bound: to what ``of`` (an expression, a loop's items) holds, with what it
        held before; None: to what is unknown."""
        found = _Bound(name, len(self.order), self.bound.get(name), of)
        if of is None:
            found.value = {UNKNOWN}
        self.bound[name] = found
        self.order.append(found)
        if self.eager and of is not None:
            self.value(found)

    def held(self, name: str) -> set[str] | None:
        """What ``name`` holds as of ``now`` (not to be changed), or None: not bound by then."""
        found = self.bound.get(name)
        now = self.now
        while found is not None and found.seq >= now:
            found = found.prev
        if found is None:
            return None
        return found.value if found.value is not None else self.value(found)

    def value(self, bound: _Bound) -> set[str]:
        """A binding's value, worked out as of its statement (bindings made later unseen)."""
        if self.depth >= _DEEPEST:
            self._sweep(bound.seq)  # (a long chain of locals each made of the last: no deeper recursion)
        saved = self.now
        self.now = bound.seq
        self.depth += 1
        try:
            of, name = bound.of, bound.name
            if name in self.changed():
                found = {UNKNOWN}
            elif type(of) is _Items:
                found = of.found(self)
            else:
                found = sources(of, self)  # type: ignore[arg-type]
            prev = bound.prev
            if prev is None:
                before = {"p:" + name} if name in self.params else set()
            else:
                before = prev.value if prev.value is not None else self.value(prev)
            bound.value = _union([before, found])
        finally:
            self.now = saved
            self.depth -= 1
        return bound.value

    def _sweep(self, upto: int) -> None:
        """Every binding numbered below ``upto`` worked out, in order (each reads only those
        before it, already worked out: one level deep each)."""
        depth, self.depth = self.depth, 0
        try:
            while self.swept < upto:
                found = self.order[self.swept]
                if found.value is None:
                    self.value(found)
                self.swept += 1
        finally:
            self.depth = depth


#: What a read sees outside any binding's working out: every binding made so far.
_ALL = 1 << 62
#: How many bindings' values may be worked out one inside another before those before are swept.
_DEEPEST = 24
_NO_STATE: dict[str, set[str]] = {}


class _Bound:
    """One binding of a local: ``of`` what it was assigned (an expression, a loop's items, None:
    unknown), ``prev`` the name's binding before, ``value`` its sources once worked out."""

    __slots__ = ("name", "seq", "prev", "of", "value")

    def __init__(self, name: str, seq: int, prev: _Bound | None, of: ast.AST | _Items | None):
        self.name = name
        self.seq = seq
        self.prev = prev
        self.of = of
        self.value: set[str] | None = None


class _Items:
    """What a loop (or a comprehension) goes over: one value for every name its target unpacks,
    worked out once, as of the binding of its first name."""

    __slots__ = ("over", "seq", "_found")

    def __init__(self, over: ast.AST, seq: int):
        self.over = over
        self.seq = seq
        self._found: set[str] | None = None

    def found(self, ctx: _Context) -> set[str]:
        if self._found is None:
            saved = ctx.now
            ctx.now = self.seq
            try:
                self._found = sources(self.over, ctx)
            finally:
                ctx.now = saved
        return self._found


#: A function's statements in source order, each with the calls its own expressions make (``_Calls``).
Calls = list[tuple[ast.stmt, list[ast.Call]]]


def calls_of(statements: list[ast.stmt], made: Mapping[int, list[ast.Call]] | None = None) -> Calls:
    """Each statement with the calls its own expressions make (not those of its blocks' statements);
    ``made``: those calls by the statement's id, as a walk of every statement found them
    (``codefacts.GraphWalker.made``: a statement it holds none for makes none)."""
    if made is not None:
        return [(stmt, made.get(id(stmt), _NONE)) for stmt in statements]
    return [(stmt, [call for expr in own_expressions(stmt) for call in nodes_under(expr, ast.Call)]) for stmt in statements]


_NONE: list[ast.Call] = []  # (never changed: ``Calls`` are read only)


class Walked(NamedTuple):
    """What a walk of every statement of the tree read on the way (``codefacts.GraphWalker``):
    :func:`codefacts.names_called`'s two, and each function statement's calls (``calls_of``)."""

    called: dict[str, int]
    taken: set[str]
    made: Mapping[int, list[ast.Call]]


_ASSIGNS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign})


def changed_in_place(calls: Calls, root: str | None = None) -> set[str]:
    """The names (``root``'s attributes, with a root: ``self.x.append(v)``) the statements change
    in place: a method called on one that is no accessor of it, an entry or attribute of one assigned."""
    out: set[str] = set()

    def named(node: ast.AST) -> str | None:
        if root is None:
            return node.id if type(node) is ast.Name else None
        return node.attr if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == root else None

    name, attribute = ast.Name, ast.Attribute
    for stmt, made in calls:
        for call in made:  # (``named`` written out: this runs for every call of every function read)
            func = call.func
            if type(func) is attribute and func.attr not in ACCESSORS:
                held = func.value
                if root is None:
                    if type(held) is name:
                        out.add(held.id)
                elif type(held) is attribute and type(held.value) is name and held.value.id == root:
                    out.add(held.attr)
        if type(stmt) in _ASSIGNS:
            for target in stmt.targets if type(stmt) is ast.Assign else [stmt.target]:  # type: ignore[attr-defined]
                if isinstance(target, (ast.Subscript, ast.Attribute)):
                    found = named(target.value)
                    if found:
                        out.add(found)
    return out


def sources(node: ast.AST, ctx: _Context) -> set[str]:
    """Where the value of ``node`` comes from (``UNKNOWN`` among them when any part of it is not
    known): a value made of others (arithmetic, a comparison, a tuple, a conversion, an entry or
    a method of a value: ``x.get("k")``, ``x[0]``) comes from all of them."""
    t = type(node)
    if t is ast.Constant:
        return {CONSTANT}
    if t is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        held = ctx.held(name) if name in ctx.bound else None
        if held is not None:
            return set(held)
        if name in ctx.params:
            return {"p:" + name}
        if name.isupper() or name[:1].isupper() or name in ("True", "False", "None"):
            return {CONSTANT}
        return {UNKNOWN}
    if t is ast.Attribute:
        chain = _chain(node)  # type: ignore[arg-type]
        return _of_chain(node, chain, ctx) if chain else {UNKNOWN}
    if t is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        args = [*node.args, *(k.value for k in node.keywords)]  # type: ignore[attr-defined]
        if type(func) is ast.Name and func.id in _OF_ARGS:
            parts = args
        elif type(func) is ast.Attribute and func.attr in ACCESSORS:
            parts = [func.value, *args]
        else:
            return {UNKNOWN}
        return _union([sources(a, ctx) for a in parts]) if parts else {CONSTANT}
    if t in (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom):
        return {UNKNOWN}
    if t is ast.Subscript:
        return _union([sources(node.value, ctx), sources(node.slice, ctx)])  # type: ignore[attr-defined]
    parts = [child for child in child_nodes(node) if isinstance(child, ast.expr)]  # (``iter_child_nodes``' order, without its generators)
    return _union([sources(c, ctx) for c in parts]) if parts else {CONSTANT}


def _union(found: list[set[str]]) -> set[str]:
    out: set[str] = set().union(*found)
    if len(out) > 1:
        out.discard(CONSTANT)  # (``n * 2`` is what ``n`` is; a constant alone is one)
    return out if len(out) <= MAX_SOURCES else {UNKNOWN}


def _of_chain(node: ast.AST, chain: list[str], ctx: _Context) -> set[str]:
    """An attribute chain's sources, in the words ``guard_reads`` traces a check's in."""
    root, rest = chain[0], chain[1:]
    code = ".".join(chain)
    if root == "envs" and len(chain) == 2:
        return {"s:" + code}
    if any(MODEL_CONFIG_PART.fullmatch(part) for part in chain):
        return {"m:" + code}
    if any(CONFIG_PART.fullmatch(part) for part in chain):
        return {"s:" + code}
    if root in _REQUEST_ROOTS:
        return {"r:" + code}
    if root == "self":
        if any(HOLDS_CONFIG.search(part) for part in rest):
            return {UNKNOWN}  # (a config of its own no one says who fills)
        state = ctx.state()
        return set(state[rest[0]]) if rest[0] in state else {UNKNOWN}
    held = ctx.held(root)
    if held is not None:
        return set(held)
    if root in ctx.params:
        return {"p:" + root}
    if root[:1].isupper():
        return {CONSTANT}  # (an enum member, a class attribute)
    return {UNKNOWN}


_BINDERS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith})


def _bind(stmt: ast.stmt, ctx: _Context) -> None:
    """What an assignment (or a loop, a ``with``) puts in the locals it binds (worked out when read)."""
    t = type(stmt)
    if t not in _BINDERS:  # (most statements bind nothing: each of a function's is given here)
        return
    if t is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:  # type: ignore[attr-defined]
        ctx.bind(stmt.targets[0].id, stmt.value)  # type: ignore[attr-defined]
        return
    if t is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:  # type: ignore[attr-defined]
        ctx.bind(stmt.target.id, stmt.value)  # type: ignore[attr-defined]
        return
    if t in (ast.For, ast.AsyncFor):  # (an item of what it loops over is part of it)
        _items(stmt.target, stmt.iter, ctx)  # type: ignore[attr-defined]
        return
    targets: list[ast.AST] = []
    if t is ast.Assign:
        targets = list(stmt.targets)  # type: ignore[attr-defined]
    elif t in (ast.AugAssign, ast.AnnAssign):
        targets = [stmt.target]  # type: ignore[attr-defined]
    elif t in (ast.With, ast.AsyncWith):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]  # type: ignore[attr-defined]
    for target in targets:
        for name in nodes_under(target, ast.Name):
            ctx.bind(name.id, None)


def _items(target: ast.AST, over: ast.AST, ctx: _Context) -> None:
    """A loop's (or a comprehension's) names: each holds part of what it loops over, a name
    unpacked from an item (``for k, v in d.items()``) too. (A local assigned holds any value it
    was assigned before too: an assignment in a branch leaves the other's; a parameter its own
    value; a local changed in place, what is unknown: :meth:`_Context.value`.)"""
    items = _Items(over, len(ctx.order))
    for name in nodes_under(target, ast.Name):
        ctx.bind(name.id, items)


def _state(cls: ast.ClassDef, calls: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], Calls]) -> dict[str, set[str]]:
    """Each attribute a class's methods assign (``self.x = ...``) -> the sources of every value
    assigned to it; a parameter's value (the constructor's argument) or a value the class changes
    in place (``self.x += 1``) is unknown; what only constants are assigned is its own state."""
    out: dict[str, set[str]] = {}
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = fn.args
        ctx = _Context({p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} - set(_RECEIVERS))
        made = calls(fn)
        for attr in changed_in_place(made, "self"):
            out[attr] = {UNKNOWN}
        for stmt, _ in made:
            targets: list[ast.AST] = []
            value: ast.AST | None = None
            if type(stmt) is ast.Assign:
                targets, value = list(stmt.targets), stmt.value
            elif type(stmt) in (ast.AnnAssign, ast.AugAssign):
                targets, value = [stmt.target], stmt.value if type(stmt) is ast.AnnAssign else None  # type: ignore[attr-defined]
            for target in targets:
                for node in nodes_under(target, ast.Attribute):
                    if type(node.value) is ast.Name and node.value.id == "self":
                        found = sources(value, ctx) if value is not None and target is node else {UNKNOWN}
                        found = {UNKNOWN} if any(s.startswith("p:") for s in found) else {STATE} if found == {CONSTANT} else found
                        out[node.attr] = _union([out.get(node.attr, set()), found])
    return out


def _given(calls: Calls, ctx: _Context, out: dict[str, Any], comprehended: Callable[[ast.stmt], bool]) -> bool:
    """The calls a function makes (its ``statements``), each argument's sources joined by commas
    (``given``: a call none of whose arguments' sources is known is left out, as is a ``*``'s
    and what follows it); True when one passes a parameter of its own on (its signature is then
    kept: the join follows it to its callers)."""
    forwards = False
    given = out["given"]
    for stmt, made in calls:
        if made and comprehended(stmt):
            for expr in own_expressions(stmt):
                for comprehension in nodes_under(expr, ast.comprehension):
                    _items(comprehension.target, comprehension.iter, ctx)  # (a call in it is given its items)
        for call in made:
            if not (call.args or call.keywords) or len(given) >= MAX_GIVEN:
                continue
            callee = dotted(call.func)
            if not callee or callee.endswith(_EXCEPTION_NAME):
                continue
            positional: list[str] = []
            for arg in call.args:
                t = type(arg)
                if t is ast.Starred:
                    positional.append("*")  # (what it binds from here on is unknown)
                    break
                positional.append(CONSTANT if t is ast.Constant else _shown(sources(arg, ctx)))
            named = {k.arg or "**": _shown(sources(k.value, ctx)) if k.arg else UNKNOWN for k in call.keywords}
            known = [s for s in [*positional, *named.values()] if s not in (UNKNOWN, "*")]
            if not known:
                continue  # (a call it has no row of passes what it cannot tell)
            forwards = forwards or any(a.startswith("p:") or ",p:" in a for a in known)
            row = {"line": call.lineno, "callee": callee.rpartition(".")[2], "args": positional, "keywords": named}
            if callee.count(".") and callee.rpartition(".")[0].rpartition(".")[2][:1].isupper():
                row["on_class"] = True  # (``Base.method(self, x)``: a method's receiver may be passed)
            given.append(row)
        _bind(stmt, ctx)
    return forwards


def _value_only(stmt: ast.stmt) -> bool:
    """Whether a simple statement's calls (``calls_of``: those of its own expressions, each
    in ``nodes_under``'s order, in field order) are its value's: an expression statement, a
    ``return``, an assignment to names only (an annotation may hold calls: it is read again)."""
    t = type(stmt)
    if t is ast.Expr or t is ast.Return:
        return True
    if t is ast.Assign:
        return all(type(target) is ast.Name for target in stmt.targets)  # type: ignore[attr-defined]
    return t is ast.AugAssign and type(stmt.target) is ast.Name  # type: ignore[attr-defined]


def _shown(found: set[str]) -> str:
    """An argument's sources as a ``given`` row shows them: sorted, joined by commas."""
    if len(found) == 1:
        for one in found:
            return one
    return ",".join(sorted(found))


def passes(
    tree: ast.Module,
    text: str,
    collected: Callable[[ast.AST], list[ast.stmt] | None] | None = None,
    walked: Walked | None = None,
    eager: bool = False,
) -> dict[str, Any]:
    """The file's passes and signatures; ``text`` its source (a file that names no config's field
    and no ``envs`` passes none, and its calls are not walked); ``collected``: a function's
    statements, its ``match`` cases' too, in source order, as a walk already collected them (or
    None: they are walked here); ``walked``: what that walk read of every statement (or None:
    the tree is walked here for it); ``eager``: every local's value and every class's attributes
    worked out as they are met, read or not (the same facts, at more cost: what the lazy reading
    is tested against)."""
    out = empty()
    called, taken = names_called(tree) if walked is None else (walked.called, walked.taken)
    made_by = None if walked is None else walked.made
    out["called"], out["taken"] = dict(sorted(called.items())), sorted(taken)
    scan = "_config." in text or "envs." in text
    # Per function, what its lines can hold: a pass names a config holder (``x_config``) or
    # ``envs``, a local holding one is assigned in the function, and a signature is kept only for
    # a function with a raise, an assert or a log call of its own; each of those shows its word
    # on one of the function's lines. A function whose lines show none is not walked (found once
    # per file; not for a text with non-ASCII letters, which an identifier may hold in another
    # form than the one it is read as).
    plain = text.isascii()
    holders = lines_naming(["_config", "envs"], text, 1) if plain and scan else []
    checked = lines_naming(_CHECK_WORDS, text, 1) if plain else []
    functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append((stmt.name, stmt, None))
        elif isinstance(stmt, ast.ClassDef):
            functions += [(f"{stmt.name}.{f.name}", f, stmt) for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    states: dict[int, dict[str, set[str]]] = {}
    made: dict[int, Calls] = {}

    def statements_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
        found = collected(fn) if collected is not None else None
        return found if found is not None else sorted(function_statements(fn, cases=True), key=lambda s: (s.lineno, s.col_offset))

    def calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Calls:
        if id(fn) not in made:
            made[id(fn)] = calls_of(statements_of(fn), made_by)
        return made[id(fn)]

    # (a comprehension's ``for`` is on a line that says `` for `` or starts with ``for ``: a
    # statement on no such line holds none; in a text with non-ASCII letters, every one is looked in)
    comprehensions = lines_naming([" for ", "\nfor ", "\tfor "], text, 1) if plain else []

    def comprehended(stmt: ast.stmt) -> bool:
        return not plain or on_lines(comprehensions, stmt.lineno, stmt.end_lineno or stmt.lineno)

    def state_of(cls: ast.ClassDef) -> Callable[[], dict[str, set[str]]]:
        """The class's attributes (``_state``), worked out once, when a method's read first asks."""

        def state() -> dict[str, set[str]]:
            if id(cls) not in states:
                states[id(cls)] = _state(cls, calls)
            return states[id(cls)]

        if eager:
            state()
        return state

    for qual, fn, cls in functions:
        a = fn.args
        params = [p.arg for p in [*a.posonlyargs, *a.args]]
        receiver = params[0] if params and params[0] in _RECEIVERS and "." in qual else None
        if receiver:
            params = params[1:]
        named = params + [p.arg for p in a.kwonlyargs]
        first, last = fn.lineno, fn.end_lineno or fn.lineno
        may_check = bool(named) and (not plain or on_lines(checked, first, last))
        may_pass = scan and (not plain or on_lines(holders, first, last))
        statements = statements_of(fn)
        context = _Context(set(named), state_of(cls) if cls is not None else None, calls(fn), eager)
        forwards = _given(calls(fn), context, out, comprehended)
        _quiet(statements, calls(fn), out["quiet"])
        if (may_check and _checks(statements)) or (forwards and named):
            out["signatures"].append(
                {"function": qual, "params": params, "keywords": [p.arg for p in a.kwonlyargs], "defaults": _defaults(fn, named), "receiver": receiver}
            )
        if not may_pass:
            continue
        held: dict[str, list[str]] = {}
        for stmt, made_here in calls(fn):
            if type(stmt) not in _SIMPLE or len(out["passes"]) >= MAX_PASSES:
                continue
            value = getattr(stmt, "value", None)
            if value is None:
                continue
            for call in made_here if _value_only(stmt) else nodes_under(value, ast.Call):
                callee = dotted(call.func)
                if not callee:
                    continue
                args: dict[str, list[str]] = {}
                for i, arg in enumerate(call.args):
                    if type(arg) is ast.Starred:
                        break
                    found = _setting(arg, held)
                    if found:
                        args[str(i)] = found
                for k in call.keywords:
                    found = _setting(k.value, held) if k.arg else None
                    if found and k.arg:
                        args[k.arg] = found
                if args:
                    out["passes"].append({"function": qual, "line": call.lineno, "callee": callee.rpartition(".")[2], "args": args})
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
                found = _setting(stmt.value, held)
                if found:
                    held[stmt.targets[0].id] = found
                else:
                    held.pop(stmt.targets[0].id, None)
    out["quiet"] = dict(sorted(out["quiet"].items()))
    return out
