"""Names that carry a setting's value a step further than :mod:`crawler.extract.knobs` reads.

Per function, over its statements in source order (read in the extraction workers, cached with
the file's result; :mod:`crawler.catalogue.meaning` joins them):

- ``aliases`` (more of them): a local that holds part of a field's value: an entry of it
  (``x = self.extra.get("k")``, ``x[0]``), an item of it (a comprehension over it), or the
  value converted (``float(x)``), from a field or from such a local; recorded with the fields it
  ``reads`` and no ``expr`` (it stands for part of the setting, not the setting).
- ``aliases`` with a ``call``: ``var = self.a.getter()``, a method called without arguments on
  a field (or on the class itself); with ``returns``, the fields a method of a settings class
  returns (``return (self.method, float(self.rate))``): a check on ``var`` is about those.
- ``forwards``: a module-level function that passes its own parameter (or a local holding it,
  a lookup by it included: ``table[dtype]``) to another module-level function of the file: a
  check on the callee's parameter is a check on whatever the caller was given.

Only the code is read; nothing here imports or runs it.
"""

from __future__ import annotations

import ast
from typing import Any

from crawler.extract.codefacts import nodes_under

#: Methods whose result is part of the value they are called on (a dict's entry, a string's case).
ACCESSORS = frozenset({"get", "items", "values", "keys", "copy", "lower", "upper", "strip"})
#: Builtins whose result is the value converted.
CONVERSIONS = frozenset({"float", "int", "str", "bool", "list", "tuple", "set", "sorted", "dict"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
#: Fields a getter may return before it is a computation over the whole config.
_MAX_RETURNED = 4


def _chain(node: ast.expr, roots: set[str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not parts or not isinstance(node, ast.Name) or node.id not in roots:
        return None
    return ".".join([node.id, *reversed(parts)])


def carried(node: ast.expr, roots: set[str], held: dict[str, list[str]], lookups: bool = False) -> list[str]:
    """What ``node`` holds part of: chains on ``roots``, or what a local in ``held`` holds; with
    ``lookups``, what the key of a subscript holds too (``table[dtype]``)."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ACCESSORS:
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CONVERSIONS and len(node.args) == 1 and not node.keywords:
            node = node.args[0]
        elif isinstance(node, ast.Subscript):
            if lookups and isinstance(node.value, ast.Name) and node.value.id not in held:
                node = node.slice
            else:
                node = node.value
        else:
            break
    if isinstance(node, ast.Name):
        return list(held.get(node.id, ()))
    if isinstance(node, _COMPREHENSIONS):
        return list(dict.fromkeys(c for gen in node.generators for c in carried(gen.iter, roots, held, lookups)))
    chain = _chain(node, roots)
    return [chain] if chain else []


def function_flow(
    qual: str,
    statements: list[ast.stmt],
    roots: set[str],
    params: list[str],
    helpers: dict[str, tuple[list[str], set[str]]],
    known: dict[tuple[str, int], list[str]],
    out: dict[str, Any],
    getter: bool = False,
) -> None:
    """The aliases (beyond ``known``: (var, line) -> what it reads, the ones :mod:`knobs` found), getter calls, returns
    (of a ``getter``: a method taking no argument) and forwards of one function, its ``statements`` in source order."""
    held: dict[str, list[str]] = {}  # local -> fields on roots it holds part of
    given: dict[str, list[str]] = {p: [p] for p in params}  # local -> parameters it holds part of
    returned: list[str] = []
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            var, value = stmt.targets[0].id, stmt.value
            if roots:
                reads = carried(value, roots, held)
                called = _chain(value.func, roots) if isinstance(value, ast.Call) and not value.args and not value.keywords else None
                if (var, stmt.lineno) in known:
                    reads = known[(var, stmt.lineno)]
                elif reads:
                    out["aliases"].append({"function": qual, "var": var, "expr": None, "reads": reads, "line": stmt.lineno})
                elif called:
                    out["aliases"].append({"function": qual, "var": var, "expr": None, "reads": [], "call": called, "line": stmt.lineno})
                held.pop(var, None)
                if reads:
                    held[var] = reads
            if params:
                carries = carried(value, set(params), given, lookups=True)
                if carries:
                    given[var] = list(dict.fromkeys([*given.get(var, []), *carries]))
        elif getter and isinstance(stmt, ast.Return) and stmt.value is not None:
            returned += [c for node in nodes_under(stmt.value, ast.Attribute) for c in [_chain(node, {"self"})] if c and c.count(".") == 1]
        if params and isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)):
            for node in nodes_under(stmt, ast.Call):  # (``ast.walk``'s order, at a fraction of its cost)
                if type(node.func) is ast.Name and node.func.id in helpers:
                    bound = _forwarded(node, helpers[node.func.id], given)
                    if bound:
                        out["forwards"].append({"function": qual, "callee": node.func.id, "params": bound, "line": stmt.lineno})
    returned = list(dict.fromkeys(returned))
    if returned and len(returned) <= _MAX_RETURNED:
        out["returns"].append({"function": qual, "reads": returned})


def _forwarded(call: ast.Call, helper: tuple[list[str], set[str]], given: dict[str, list[str]]) -> dict[str, Any]:
    """The callee's parameters bound to what the caller's parameters carry: each to the caller's
    parameters it holds part of, ``exact`` when it is one of them as given."""
    positional, named = helper
    bound: dict[str, Any] = {}
    pairs = [(positional[i], arg) for i, arg in enumerate(call.args) if i < len(positional) and not isinstance(arg, ast.Starred)]
    pairs += [(k.arg, k.value) for k in call.keywords if k.arg in named]
    for param, arg in pairs:
        if isinstance(arg, ast.Name) and arg.id in given:
            bound[param] = {"from": given[arg.id], "exact": given[arg.id] == [arg.id]}
    return bound
