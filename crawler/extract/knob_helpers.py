"""Per-file declarations that tie a check outside a class's own methods to one of its settings.

Read in the extraction workers beside :mod:`crawler.extract.knobs` (and cached with the file's
result); what they mean for the whole repository is :mod:`crawler.catalogue.meaning`'s join.
Generic Python and pydantic mechanisms only:

- ``field_checks``: functions that run while one field of a class is validated: a module-level
  function a field's annotation names through ``Annotated[T, BeforeValidator(f)]`` (directly or
  through a module-level alias, ``GetPydanticSchema(lambda ...: ...f...)`` included), a
  module-level function a ``field_validator`` calls with its value, and a metaclass's
  ``__getitem__`` that a ``field_validator`` reaches by subscripting the class (``Enum[name]``).
- ``guarded_calls``: calls of a private function or method of the same file inside ``if``
  statements: the tests, as written (``not (...)`` in an ``else``), are what leads to the callee.
- ``helper_args``: like :mod:`knobs`' for module-level helpers, for a method of the same class
  called with fields (``Class._m(self.a)``, ``self._m(self.a)``): one ``self.<field>`` per
  parameter, never a longer chain, since a nested config's field may be state its holder derived.
- ``appends`` and ``list_calls``: a list a private function builds by appends, each under an
  ``if`` (``if self.x > 1: unsupported.append("x")``), and returns; and ``var = self._m()``
  calls that take it: a check on ``var`` is about the settings of those tests.
- ``route_models``: classes annotating a parameter of a web route (``@router.post(...)``): the
  request body a client sends, so their fields are request parameters.
- ``converters``: functions an option's ``type`` converts its value with (``type=f``,
  ``kwargs["type"] = f``, or the function a factory returns: ``type=parse_type(json.loads)``), by
  qualified name (``parse_type.<locals>._parse_type``), with the ``flags`` of the
  ``add_argument`` call that gives it (none when it is given through a table of keywords: what it
  raises is raised while parsing whichever option was given that type, which only the run time knows).
- ``state_fields``: fields declared ``field(init=False)`` / ``Field(init=False)``: the class sets
  them itself, so no user does.
- ``built_fields``: fields that default to None and that the class's own methods assign
  (``self.draft_model_config = ...``): the join takes one holding a nested config, with no option
  of its own, for state the class builds (a user sets the nested config's fields, not it).
- ``defaulted_fields`` (only in a file that has one): fields the class's set-up gives a value
  whenever none is given (``if self.engine_id is None: self.engine_id = ...`` as a statement of
  ``__post_init__`` itself): never None once built, so an assert that one is there is the code's own.

Nothing here imports or runs the analysed code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from crawler.extract.codefacts import line_numbers, lines_naming, nodes_under, on_lines, statements_under

_RECEIVERS = ("self", "cls")
#: The calls that add to a list.
_APPENDS = (".append(", ".extend(")


def _names_any(found: list[int], node: ast.stmt) -> bool:
    """Whether a statement's lines are among ``found`` (``codefacts.lines_naming``)."""
    return on_lines(found, node.lineno, node.end_lineno or node.lineno)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: pydantic's wrappers that run a function on a field's value.
_VALIDATOR_WRAPPERS = ("BeforeValidator", "AfterValidator", "PlainValidator", "WrapValidator", "GetPydanticSchema")


def empty() -> dict[str, Any]:
    return {
        "field_checks": [],
        "guarded_calls": [],
        "method_helper_args": [],
        "state_fields": [],
        "built_fields": [],
        "route_models": [],
        "converters": [],
        "appends": [],
        "list_calls": [],
    }


def _keep_returned_lists(out: dict[str, Any], functions: list[tuple[str, Any]]) -> None:
    """Only appends to a list the function returns (``unsupported.append("x")`` ...
    ``return unsupported``), and only the calls that take such a list."""
    appending = {a["function"] for a in out["appends"]}  # (walking every function cost more than the rest)
    returned = {
        (qual, node.value.id)
        for qual, fn in functions
        if qual in appending
        for node in statements_under(fn)
        if type(node) is ast.Return and type(node.value) is ast.Name
    }
    out["appends"] = [a for a in out["appends"] if (a["function"], a["list"]) in returned]
    built = {a["function"] for a in out["appends"]}
    out["list_calls"] = [c for c in out["list_calls"] if c["callee"] in built]


def declarations(tree: ast.Module, module: str, text: str, lines: list[str] | None = None) -> dict[str, Any]:
    """The file's declarations (empty when reading them fails: they must never cost the file its
    raise sites)."""
    try:
        return _declarations(tree, module, text, text.split("\n") if lines is None else lines)
    except Exception:  # noqa: BLE001
        return empty()


def _declarations(tree: ast.Module, module: str, text: str, lines: list[str]) -> dict[str, Any]:
    out = empty()
    functions = {s.name: s for s in tree.body if isinstance(s, _FUNCTIONS)}
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    methods = {f"{c.name}.{f.name}": f for c in classes for f in c.body if isinstance(f, _FUNCTIONS)}
    typed = _type_lines(text) if "type" in text else []
    if typed:
        out["converters"] = _converters(tree, functions, typed)
    if not classes:
        return out
    out["route_models"] = sorted(
        {
            name.id
            for fn in functions.values()
            if any(_route(d) for d in fn.decorator_list)
            for p in [*fn.args.args, *fn.args.kwonlyargs]
            if p.annotation is not None
            for name in ast.walk(p.annotation)
            if isinstance(name, ast.Name) and name.id in {c.name for c in classes}
        }
    )
    if "Annotated" in text or "field_validator" in text:  # (else nothing to find: not walked)
        _field_checks(tree, module, functions, classes, out["field_checks"])
    for cls in classes:
        for stmt in cls.body:
            if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and _init_false(stmt.value):
                out["state_fields"].append({"owner": f"{module}.{cls.name}", "field": stmt.target.id})
        out["state_fields"] += [{"owner": f"{module}.{cls.name}", "field": name} for name in _filled(cls)]
        out["built_fields"] += [{"owner": f"{module}.{cls.name}", "field": name} for name in _built(cls)]
        defaulted = _defaulted(cls)
        if defaulted:  # (a key only where there is one: most files have none)
            out.setdefault("defaulted_fields", []).extend({"owner": f"{module}.{cls.name}", "field": name} for name in defaulted)
    # Private functions and methods only: a public one may be called from anywhere, so the tests
    # leading to it here are not all that leads to it.
    callees = {**{n: None for n in functions if _private(n)}, **{q: m for q, m in methods.items() if _private(q)}}
    if callees:
        # Only functions, then statements, whose text calls a callee (or, in a callee, appends) are
        # walked: walking every statement of every function cost more than the rest.
        short = sorted({q.rpartition(".")[2] + "(" for q in callees})
        for qual, fn in [*functions.items(), *methods.items()]:
            wanted = [*short, *_APPENDS] if qual in callees else short
            # A body whose text holds none of the words has no statement that does: one test
            # (from its first statement: the ``def`` line names the function itself) skips it.
            first = fn.body[0].lineno
            body = "\n".join(lines[first - 1 : fn.end_lineno or first])
            if any(w in body for w in wanted):
                _walk(fn.body, [], qual, callees, out, partial(_names_any, lines_naming(wanted, body, first)))
        _keep_returned_lists(out, [*functions.items(), *methods.items()])
    out["guarded_calls"].sort(key=lambda c: (c["callee"], c["line"]))
    out["method_helper_args"].sort(key=lambda c: (c["callee"], c["line"]))
    return out


#: The decorators that make a function a web route (``@router.post("/path")``).
_ROUTE_VERBS = frozenset({"get", "post", "put", "delete", "patch", "api_route", "route"})


def _route(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) and decorator.func.attr in _ROUTE_VERBS


#: An option's ``type`` given a function (``type=f``, ``["type"] = f``) on one line, found in the
#: text first: walking every function of every file that says ``dtype=`` cost three times the rest.
#: Led by the word itself, so ``re`` scans with a fast literal search; what comes before it is
#: checked by ``_type_lines`` (a pattern led otherwise scanned a file at a tenth of the speed).
_TYPE_GIVEN = re.compile(r"""type(?=(["']\])?[^\S\n]*=[^\S\n]*[A-Za-z_])""")


def _type_lines(text: str) -> list[int]:
    """Ascending numbers of the lines (``\\n`` ends) that give an option's ``type``: ``type`` not
    after a word character or a dot, or ``["type"]``."""
    starts: list[int] = []
    for match in _TYPE_GIVEN.finditer(text):
        start = match.start()
        before = text[start - 1] if start else ""
        if match.group(1):
            if before not in ("'", '"') or start < 2 or text[start - 2] != "[":
                continue
        elif before and (before.isalnum() or before in "_."):
            continue
        starts.append(start)
    return line_numbers(starts, text)


def _converters(tree: ast.Module, functions: dict[str, Any], typed: list[int]) -> list[dict[str, Any]]:
    """The functions given as an option's ``type`` (see the module's doc)."""
    found: dict[str, set[str]] = {}
    defined: dict[int, set[str]] = {}  # id(function) -> the names of the functions defined in it

    def returned(factory: str) -> str | None:
        fn = functions[factory]
        nested = {s.name for s in fn.body if isinstance(s, _FUNCTIONS)}
        names = {s.value.id for s in fn.body if isinstance(s, ast.Return) and isinstance(s.value, ast.Name)}
        return f"{factory}.<locals>.{names.pop()}" if len(names) == 1 and names <= nested else None

    def given(value: ast.expr, qual: str, local: ast.AST, flags: list[str]) -> None:
        if isinstance(value, ast.Name):
            names = defined.get(id(local))
            if names is None:
                names = defined[id(local)] = {s.name for s in statements_under(local) if isinstance(s, _FUNCTIONS)}
            nested = value.id in names
            name = f"{qual}.<locals>.{value.id}" if nested else value.id if value.id in functions else None
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in functions:
            name = returned(value.func.id)
        else:
            name = None
        if name:
            found.setdefault(name, set()).update(flags)

    todo: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = [(s.name, s) for s in tree.body if isinstance(s, _FUNCTIONS)]
    todo += [(f"{c.name}.{f.name}", f) for c in tree.body if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, _FUNCTIONS)]
    while todo:
        qual, fn = todo.pop()
        if not on_lines(typed, fn.lineno, fn.end_lineno or fn.lineno):
            continue
        local = fn
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == "type" for t in node.targets
            ):
                given(node.value, qual, local, [])
            elif isinstance(node, ast.Call):
                flags = (
                    [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")]
                    if getattr(node.func, "attr", None) == "add_argument"
                    else []
                )
                for k in node.keywords:
                    if k.arg == "type":
                        given(k.value, qual, local, flags[:1])
    return [{"function": name, "flags": sorted(flags)} for name, flags in sorted(found.items())]


def _built(cls: ast.ClassDef) -> list[str]:
    """The fields of ``cls`` that default to None and that its methods assign on ``self``."""
    nones = {
        s.target.id
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and isinstance(s.value, ast.Constant) and s.value.value is None
    }
    if not nones:
        return []
    assigned = {
        target.attr
        for method in cls.body
        if isinstance(method, _FUNCTIONS)
        for node in statements_under(method)
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
    }
    return sorted(nones & assigned)


def _defaulted(cls: ast.ClassDef) -> list[str]:
    """The fields of ``cls`` its set-up gives a value whenever none is given: a statement of
    ``__post_init__`` (``model_post_init``, ``__init__``) itself, not one nested under another test,
    ``if self.F is None: ... self.F = ...`` (``KVTransferConfig.engine_id``, a uuid): once the
    object is built the field is never None."""
    found: set[str] = set()
    for method in cls.body:
        if not isinstance(method, _FUNCTIONS) or method.name not in ("__post_init__", "model_post_init", "__attrs_post_init__", "__init__"):
            continue
        for stmt in method.body:
            if not isinstance(stmt, ast.If):
                continue
            test = stmt.test
            if not (
                isinstance(test, ast.Compare)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Is)
                and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value is None
                and isinstance(test.left, ast.Attribute)
                and isinstance(test.left.value, ast.Name)
                and test.left.value.id == "self"
            ):
                continue
            name = test.left.attr
            for s in stmt.body:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
                if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and t.attr == name for t in targets):
                    found.add(name)
    return sorted(found)


#: A mutable collection a field starts as (``field(default_factory=dict)``), and the calls that
#: fill or empty one in place.
_EMPTY_FACTORIES = ("dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter")
_FILLS = ("append", "extend", "add", "update", "setdefault", "insert", "pop", "popitem", "clear", "remove", "discard")
#: Where a class sets up what it was given (a config's normalising ``__post_init__``): a change there
#: is no sign the field is the class's own record.
_SETUP = ("__init__", "__post_init__", "__attrs_post_init__", "model_post_init")


def _filled(cls: ast.ClassDef) -> list[str]:
    """The fields of ``cls`` that start as an empty collection (``field(default_factory=dict)``)
    and that a method of its own, past its set-up, fills or empties in place (``self.renderers[k]
    = v``, ``self.items.append(x)``): the class's own record (a registry's registrations), not a
    setting anyone gives it."""
    empties = {
        s.target.id
        for s in cls.body
        if type(s) is ast.AnnAssign
        and type(s.target) is ast.Name
        and type(s.value) is ast.Call
        and any(k.arg == "default_factory" and _empty_factory(k.value) for k in s.value.keywords)
    }
    if not empties:
        return []
    filled: set[str] = set()
    for method in cls.body:
        if not isinstance(method, _FUNCTIONS) or method.name in _SETUP:
            continue
        for node in ast.walk(method):
            target: ast.expr | None = None
            written = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target] if isinstance(node, ast.AugAssign) else []
            for t in written:
                if type(t) is ast.Subscript:
                    target = t.value
            if isinstance(node, ast.Call) and type(node.func) is ast.Attribute and node.func.attr in _FILLS:
                target = node.func.value
            if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self" and target.attr in empties:
                filled.add(target.attr)
    return sorted(filled)


def _empty_factory(node: ast.expr) -> bool:
    """``dict``, ``collections.OrderedDict``, ``lambda: {}``: a factory of an empty collection."""
    if type(node) is ast.Lambda:
        body = node.body
        return (type(body) in (ast.Dict, ast.List, ast.Set) and not getattr(body, "keys", getattr(body, "elts", None))) or (
            type(body) is ast.Call and not body.args and _empty_factory(body.func)
        )
    name = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else None
    return name in _EMPTY_FACTORIES


def _private(qual: str) -> bool:
    name = qual.rpartition(".")[2]
    return name.startswith("_") and not name.endswith("__")


def _init_false(value: ast.expr | None) -> bool:
    return type(value) is ast.Call and any(k.arg == "init" and type(k.value) is ast.Constant and k.value.value is False for k in value.keywords)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if type(n) is ast.Name}


def _validator_functions(annotation: ast.AST, functions: dict[str, Any], aliases: dict[str, set[str]]) -> set[str]:
    """The module-level functions an annotation runs on the value: through ``Annotated[T, ...]``'s
    validator wrappers, or an alias that is one."""
    found: set[str] = set()
    for node in ast.walk(annotation):
        if type(node) is ast.Name and node.id in aliases:
            found |= aliases[node.id]
        elif type(node) is ast.Call and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in _VALIDATOR_WRAPPERS:
            found |= {n for arg in [*node.args, *(k.value for k in node.keywords)] for n in _names(arg) if n in functions}
    return found


def _field_checks(tree: ast.Module, module: str, functions: dict[str, Any], classes: list[ast.ClassDef], out: list[dict[str, Any]]) -> None:
    aliases: dict[str, set[str]] = {}
    for stmt in tree.body:
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            found = _validator_functions(stmt.value, functions, aliases)
            if found:
                aliases[stmt.targets[0].id] = found
    # classes whose metaclass (of this file) defines __getitem__: ``Cls[name]`` runs it
    getitem = {c.name for c in classes if any(isinstance(f, _FUNCTIONS) and f.name == "__getitem__" for f in c.body)}
    subscripted = {c.name: k.value.id for c in classes for k in c.keywords if k.arg == "metaclass" and type(k.value) is ast.Name and k.value.id in getitem}
    for cls in classes:
        owner = f"{module}.{cls.name}"
        for stmt in cls.body:
            if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name:
                for fn in sorted(_validator_functions(stmt.annotation, functions, aliases)):
                    out.append({"owner": owner, "field": stmt.target.id, "callee": fn, "line": stmt.lineno})
            elif isinstance(stmt, _FUNCTIONS):
                fields = _validated(stmt)
                params = [p.arg for p in [*stmt.args.posonlyargs, *stmt.args.args]]
                if not fields or len(params) < 2:
                    continue
                value = params[1]
                for callee in sorted(_value_callees(stmt, value, functions, subscripted)):
                    out += [{"owner": owner, "field": f, "callee": callee, "line": stmt.lineno} for f in fields]


def _validated(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The fields a ``field_validator("a", "b")`` decorator names."""
    for deco in fn.decorator_list:
        if type(deco) is ast.Call and (getattr(deco.func, "id", None) or getattr(deco.func, "attr", None)) == "field_validator":
            return [a.value for a in deco.args if type(a) is ast.Constant and isinstance(a.value, str)]
    return []


def _is_value(node: ast.expr, value: str) -> bool:
    """``value`` itself or a method's result on it (``value.upper()``): still the user's value."""
    while type(node) is ast.Call and type(node.func) is ast.Attribute:
        node = node.func.value
    return type(node) is ast.Name and node.id == value


def _value_callees(fn: ast.AST, value: str, functions: dict[str, Any], subscripted: dict[str, str]) -> set[str]:
    found = set()
    for node in ast.walk(fn):
        if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in functions and any(_is_value(a, value) for a in node.args):
            found.add(node.func.id)
        elif type(node) is ast.Subscript and type(node.value) is ast.Name and node.value.id in subscripted and _is_value(node.slice, value):
            found.add(f"{subscripted[node.value.id]}.__getitem__")
    return found


def _callee(call: ast.Call, caller: str, callees: dict[str, Any]) -> str | None:
    """The function or method of this file a call names: ``f()``, ``self.m()``/``cls.m()`` on
    the caller's class, ``Class.m()``."""
    func = call.func
    if type(func) is ast.Name:
        return func.id if func.id in callees and "." not in func.id else None
    if type(func) is ast.Attribute and type(func.value) is ast.Name:
        owner = caller.partition(".")[0] if func.value.id in _RECEIVERS and "." in caller else func.value.id
        qual = f"{owner}.{func.attr}"
        return qual if qual in callees else None
    return None


def _self_field(node: ast.expr) -> str | None:
    return f"self.{node.attr}" if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id in _RECEIVERS else None


def _method_params(call: ast.Call, method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The method's parameters bound to ``self.<field>`` by the call (the receiver skipped)."""
    positional = [p.arg for p in [*method.args.posonlyargs, *method.args.args]]
    if not any((getattr(d, "id", None)) == "staticmethod" for d in method.decorator_list):
        positional = positional[1:]
    named = set(positional) | {p.arg for p in method.args.kwonlyargs}
    bound = {}
    for i, arg in enumerate(call.args):
        chain = _self_field(arg) if i < len(positional) and type(arg) is not ast.Starred else None
        if chain:
            bound[positional[i]] = chain
    for k in call.keywords:
        chain = _self_field(k.value) if k.arg in named else None
        if chain and k.arg:
            bound[k.arg] = chain
    return bound


def _walk(
    body: list[ast.stmt], guards: list[tuple[bool, ast.expr]], caller: str, callees: dict[str, Any], out: dict[str, Any], may_call: Callable[[ast.stmt], bool]
) -> None:
    """Calls of this file's functions in ``body``, with the tests of the ``if``s they are in (not
    early returns: ``if key in cache: return`` before a call skips a case, it leads nowhere; a statement
    whose text names no callee is not walked: walking every expression cost more than the rest)."""
    for stmt in body:
        t = type(stmt)
        if t in (*_FUNCTIONS, ast.ClassDef) or not may_call(stmt):  # (a compound one: all its text)
            continue
        if isinstance(stmt, ast.If):
            _walk(stmt.body, [*guards, (False, stmt.test)], caller, callees, out, may_call)
            if stmt.orelse:
                _walk(stmt.orelse, [*guards, (True, stmt.test)], caller, callees, out, may_call)
            continue
        for attr in ("body", "orelse", "finalbody"):
            _walk(getattr(stmt, attr, []), guards, caller, callees, out, may_call)
        for handler in getattr(stmt, "handlers", ()):
            _walk(handler.body, guards, caller, callees, out, may_call)
        if t not in (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return, ast.AugAssign):
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)
            and not stmt.value.args
        ):
            callee = _callee(stmt.value, caller, callees)
            if callee is not None:
                out["list_calls"].append({"function": caller, "var": stmt.targets[0].id, "callee": callee, "line": stmt.lineno})
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr in ("append", "extend")
            and isinstance(stmt.value.func.value, ast.Name)
            and guards
        ):
            negated, test = guards[-1]
            out["appends"].append(
                {
                    "function": caller,
                    "list": stmt.value.func.value.id,
                    "line": stmt.lineno,
                    "guard": f"not ({ast.unparse(test)})" if negated else ast.unparse(test),
                }
            )
        for node in nodes_under(stmt, ast.Call):  # (``ast.walk``'s order, at a fraction of its cost)
            callee = _callee(node, caller, callees)
            if callee is None or callee == caller:
                continue
            if guards:
                out["guarded_calls"].append(
                    {
                        "function": caller,
                        "callee": callee,
                        "line": stmt.lineno,
                        "guards": [f"not ({ast.unparse(g)})" if negated else ast.unparse(g) for negated, g in guards],
                    }
                )
            method = callees[callee]
            bound = _method_params(node, method) if method is not None and "." in caller else {}
            if bound:
                out["method_helper_args"].append({"function": caller, "callee": callee, "params": bound, "line": stmt.lineno})
