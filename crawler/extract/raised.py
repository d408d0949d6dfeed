"""What a ``raise`` of a value (not a class) raises, read statically from the function's code.

``raise dead_error``, ``raise self._error``, ``raise err.to_exception()``, ``raise error(msg)``
name a variable or a function, not a class. What the code itself shows, in the function that
raises (never importing or running it):

- ``local``: every value the name is given in the function (each branch too) is an instance
  of one class (``err = EngineDeadError(...)``) -> that class;
- ``parameter``: the name is a parameter annotated with one exception class (``err:
  EngineDeadError``, ``cls: type[EngineDeadError]`` for ``raise cls(msg)``) -> that class;
- ``returns``: a call of (or a property of) a function or method of the module whose return
  annotation is one class, or whose every ``return`` constructs the same class -> that class;
- ``isinstance``: the raise is under ``if isinstance(value, X):`` -> X;
- ``caught``: every value is an exception a handler caught (``except ValueError as e: last = e``;
  later ``raise last``) -> a re-raise, like ``raise e`` in the handler: no new message.

Anything else is unknown: a value the function was handed without a class named (a parameter
annotated ``Exception | None``, an attribute, what a queue or ``gather`` returned), a call
errcat cannot see into, **or branches that give different classes** (``ValueError if c else
AssertionError``): a user may see either, so no one class is claimed. ``Exception`` and
``BaseException`` in an annotation name no class either: they say only "an exception".
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

#: Annotations that say only "an exception of some class".
GENERIC = frozenset({"Exception", "BaseException"})

#: What a resolution found: ``("class", how, name)``, or one of ``UNKNOWN`` and ``DIFFER``.
Resolved: TypeAlias = tuple[str, ...]
FunctionNode: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef
UNKNOWN: Resolved = ("unknown",)
CAUGHT = ("caught",)
DIFFER: Resolved = ("differ",)  # unknown too: branches give different classes


def is_class_name(name: str | None) -> bool:
    """CapWords (``ValueError``, ``_StreamError``): a class by convention."""
    if not name:
        return False
    name = name.lstrip("_")
    return bool(name) and name[0].isupper()


def last_name(node: ast.expr) -> str | None:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return node.attr
    return None


def annotated_class(node: ast.expr | None, *, of_type: bool = False) -> ast.expr | None:
    """The one specific class an annotation names (``X``, ``X | None``, ``Optional[X]``;
    ``type[X]`` when ``of_type``), else None."""
    names = list(_union(node)) if node is not None else [None]
    names = [n for n in names if not (type(n) is ast.Constant and n.value is None)]
    if len(names) != 1 or names[0] is None:
        return None
    one = names[0]
    if of_type:
        if type(one) is ast.Subscript and last_name(one.value) in ("type", "Type"):
            one = one.slice
        else:
            return None
    name = last_name(one)
    if type(one) not in (ast.Name, ast.Attribute) or not is_class_name(name) or name in GENERIC:
        return None
    return one


def annotated_classes(node: ast.expr) -> list[str]:
    """The class names a union annotation names, but None."""
    return [last_name(n) or "" for n in _union(node) if n is not None and not (type(n) is ast.Constant and n.value is None)]


def _union(node: ast.expr) -> Iterator[ast.expr | None]:
    if type(node) is ast.BinOp and type(node.op) is ast.BitOr:
        yield from _union(node.left)
        yield from _union(node.right)
    elif type(node) is ast.Subscript and last_name(node.value) in ("Optional", "Union"):
        inner = node.slice
        for e in inner.elts if type(inner) is ast.Tuple else [inner]:
            yield from _union(e)
    elif type(node) is ast.Constant and isinstance(node.value, str):
        try:  # a string annotation ("EngineDeadError | None")
            parsed = ast.parse(node.value, mode="eval").body
        except (SyntaxError, ValueError):
            yield None
            return
        yield from _union(parsed)
    else:
        yield node


class Resolver:
    """Resolves raised values in one function. ``seg`` gives an expression's source text;
    ``function_of(call_or_attr, fn)`` the module's function or method node a callee names."""

    def __init__(self, seg: Callable[[Any], str], function_of: Callable[[ast.expr], Any]):
        self.seg = seg
        self.function_of = function_of

    def instance(self, node: Any, fn: Any, depth: int = 0) -> Resolved:
        """What ``raise <node>`` raises: ("class", kind, written), CAUGHT or UNKNOWN."""
        t = type(node)
        if t is ast.Call:
            return self._call(node, fn, depth)
        if t is ast.Name and fn is not None:
            return self._name(node.id, fn, depth, of_type=False)
        if t is ast.Attribute:
            target = self.function_of(node)
            if target is not None and _is_property(target):
                return self._returns(target, depth)
        return UNKNOWN

    def narrowed(self, tests: list[ast.expr], node: ast.expr) -> Resolved:
        """The class an enclosing ``if isinstance(<node>, X):`` (or a conjunct of its test) holds
        the raised value to: ("class", "isinstance", written), DIFFER for a tuple of classes,
        else UNKNOWN; the innermost such ``if`` decides. ``tests``: the tests of the enclosing ``if`` statements whose
        body the raise is in, outermost first (the visitor keeps them as it walks). ``Exception``/
        ``BaseException`` say nothing."""
        text = self.seg(node)
        found: Resolved = UNKNOWN
        for test_ in tests:
            conjuncts = test_.values if type(test_) is ast.BoolOp and type(test_.op) is ast.And else [test_]
            for test in conjuncts:
                if type(test) is ast.Call and last_name(test.func) == "isinstance" and len(test.args) == 2 and self.seg(test.args[0]) == text:
                    kinds = test.args[1].elts if type(test.args[1]) is ast.Tuple else [test.args[1]]
                    named = [k for k in kinds if type(k) in (ast.Name, ast.Attribute) and is_class_name(last_name(k))]
                    if len(named) != len(kinds) or any(last_name(k) in GENERIC for k in named):
                        continue
                    found = ("class", "isinstance", self.seg(named[0])) if len(named) == 1 else DIFFER
        return found

    def callee(self, func: ast.expr, fn: Any, depth: int = 0) -> Resolved:
        """The class ``raise <func>(...)`` constructs when ``func`` is a name holding a class."""
        if type(func) is ast.Name and fn is not None:
            return self._name(func.id, fn, depth, of_type=True)
        return UNKNOWN

    def _call(self, call: ast.Call, fn: Any, depth: int) -> Resolved:
        if is_class_name(last_name(call.func)):
            return ("class", "local", self.seg(call.func))
        got = self.callee(call.func, fn, depth)
        if got[0] != "unknown":
            return got
        target = self.function_of(call.func)
        if target is not None:
            return self._returns(target, depth)
        return UNKNOWN

    def _returns(self, target: Any, depth: int) -> Resolved:
        if depth > 2:
            return UNKNOWN
        one = annotated_class(target.returns)
        if one is not None:
            return ("class", "returns", self.seg(one))
        if target.returns is not None and len(annotated_classes(target.returns)) > 1:
            return DIFFER  # ``-> RetryableRequestError | GenerationError``: either
        values = [r.value for r in _own_nodes(target, ast.Return) if r.value is not None]
        values = [v for v in values if not (type(v) is ast.Constant and v.value is None)]
        got = _combine([self.instance(v, target, depth + 1) for v in values])
        if got[0] == "class":
            return ("class", "returns", got[2])
        return DIFFER if got is DIFFER else UNKNOWN  # (what it returns that it caught is no re-raise here)

    def _name(self, name: str, fn: Any, depth: int, *, of_type: bool) -> Resolved:
        args = fn.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.arg == name:
                one = annotated_class(a.annotation, of_type=of_type)
                return UNKNOWN if one is None else ("class", "parameter", self.seg(one))
        if name in (args.vararg.arg if args.vararg else None, args.kwarg.arg if args.kwarg else None):
            return UNKNOWN
        if any(name in node.names for kind in (ast.Global, ast.Nonlocal) for node in _own_nodes(fn, kind)):
            return UNKNOWN  # given its values outside this function
        handlers = {h.name for h in ast.walk(fn) if isinstance(h, ast.ExceptHandler) and h.name}
        values: list[Resolved] = []
        node: Any
        for node in ast.walk(fn):
            t = type(node)
            if t is ast.ExceptHandler and node.name == name:
                values.append(CAUGHT)
            elif t is ast.Assign:
                for target in node.targets:
                    values.extend(self._bound(target, name, node.value, handlers, fn, depth, of_type))
            elif t in (ast.AnnAssign, ast.NamedExpr):
                if node.value is not None:
                    values.extend(self._bound(node.target, name, node.value, handlers, fn, depth, of_type))
            elif t in (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension):
                if _binds(node.target, name):
                    values.append(UNKNOWN)
            elif t is ast.withitem:
                if node.optional_vars is not None and _binds(node.optional_vars, name):
                    values.append(UNKNOWN)
            elif t in (ast.Import, ast.ImportFrom) and any((a.asname or a.name.partition(".")[0]) == name for a in node.names):
                values.append(UNKNOWN)
        return _combine(values)

    def _bound(self, target: ast.expr, name: str, value: Any, handlers: set[str], fn: Any, depth: int, of_type: bool) -> list[Resolved]:
        if type(target) is ast.Name:
            if target.id != name:
                return []
        elif _binds(target, name):
            return [UNKNOWN]  # unpacked: which element is not followed
        else:
            return []
        return [self._value(value, handlers, fn, depth, of_type)]

    def _value(self, value: Any, handlers: set[str], fn: Any, depth: int, of_type: bool) -> Resolved:
        t = type(value)
        if t is ast.Constant and value.value is None:
            return ("none",)
        if t is ast.IfExp:
            return _combine([self._value(value.body, handlers, fn, depth, of_type), self._value(value.orelse, handlers, fn, depth, of_type)])
        if of_type:
            if t in (ast.Name, ast.Attribute) and is_class_name(last_name(value)):
                return ("class", "local", self.seg(value))
            return UNKNOWN
        if t is ast.Name and value.id in handlers:
            return CAUGHT
        if t is ast.Call:
            return self._call(value, None, depth + 1)
        return UNKNOWN


def bound_values(fn: FunctionNode, name: str) -> list[ast.expr] | None:
    """Every value a function gives a name by plain assignment (``name = <value>``), or None when
    it is also given one some other way (a parameter, a handler, a loop, ``with``, unpacking, an
    import, ``global``): then not every value it may hold is one of those."""
    args = fn.args
    if any(a is not None and a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)):
        return None
    return assigned(fn, name)


def assigned(fn: FunctionNode, name: str) -> list[ast.expr] | None:
    """:func:`bound_values` of a name, a parameter or not (``[]``: the function never assigns it)."""
    values: list[ast.expr] = []
    node: Any
    for node in ast.walk(fn):
        t = type(node)
        if t is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name and target.id == name:
                    values.append(node.value)
                elif type(target) is not ast.Name and _binds(target, name):
                    return None
        elif t in (ast.AnnAssign, ast.NamedExpr):
            if _binds(node.target, name):
                if node.value is None or type(node.target) is not ast.Name:
                    return None
                values.append(node.value)
        elif t in (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension):
            if _binds(node.target, name):
                return None
        elif t is ast.withitem:
            if node.optional_vars is not None and _binds(node.optional_vars, name):
                return None
        elif t is ast.ExceptHandler and node.name == name:
            return None
        elif t in (ast.Import, ast.ImportFrom) and any((a.asname or a.name.partition(".")[0]) == name for a in node.names):
            return None
        elif t in (ast.Global, ast.Nonlocal) and name in node.names:
            return None
    return values


def _is_property(fn: Any) -> bool:
    return any(last_name(d) in ("property", "cached_property") for d in getattr(fn, "decorator_list", ()))


def _own_nodes(fn: FunctionNode, kind: Any) -> Iterator[Any]:
    """The nodes of a kind in a function, not in a function or class it defines."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if type(node) is kind:
            yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _binds(target: ast.expr, name: str) -> bool:
    return any(type(n) is ast.Name and n.id == name for n in ast.walk(target))


def _combine(values: list[Resolved]) -> Resolved:
    """All values one class -> it; all caught -> CAUGHT; anything else (none, two classes, a
    value not followed, caught and constructed mixed) -> UNKNOWN. ``None`` values are left out
    (``err = None`` ... ``if err is not None: raise err``)."""
    values = [v for v in values if v[0] != "none"]
    if not values or any(v[0] == "unknown" for v in values):
        return UNKNOWN
    if any(v[0] == "differ" for v in values):
        return DIFFER
    if all(v[0] == "caught" for v in values):
        return CAUGHT
    classes = {v[2] for v in values if v[0] == "class"}
    if len(classes) == 1 and all(v[0] == "class" for v in values):
        kinds = sorted({v[1] for v in values})
        return ("class", kinds[0] if len(kinds) == 1 else "local", classes.pop())
    return DIFFER if len(classes) > 1 else UNKNOWN
