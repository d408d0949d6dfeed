"""Messages assembled before the raise, beyond one expression: the extractor's rules for a message
whose pieces come from the branches that set it, and for a list of messages another function
of the module builds.

- **branches**: ``if a: msg = "X" elif b: msg = f"Y {v}" else: msg = "Z"`` then ``raise
  ValueError(msg)``: after the ``if``, ``msg`` holds any one of the three, so the message is
  one field whose alternatives are the branches' texts (``templates.Field.alts`` with no
  separator; form ``assembled``). A path that keeps the value from before the ``if`` (no
  ``else``, or a ``match`` without a catch-all) adds that value. When one path's value cannot
  be read (a parameter, a call), the message is no alternative of those seen: the name is
  unknown and its field matches anything (the other choice, keeping the branch that assigned
  last, claims every message has the words only that branch adds). A branch that leaves the
  block (``return``, ``raise``, ``continue``, ``break``) gives no value to the code after it.
- **lists from a helper**: ``errors = self._check()`` then ``errors.append(...)`` and a raise
  of ``" ".join(errors)``: the pieces the helper's returned list may hold join those appended
  here. The helper is a function of the same module (or a method of the same class) whose
  ``return <name>`` returns a local list of messages; read once when first asked for (a
  method whose body was skipped as holding no site is walked then, which cannot make a site).
  A helper errcat cannot see (imported, dynamic, returning something else) leaves the list
  unknown, as before: its pieces are not claimed.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from crawler.extract.codefacts import sub_bodies
from crawler.extract.templates import Field, text_parts

#: At most this many alternatives per message: more branches than this are no message a user
#: could be shown the choices of; the name is then unknown (its field matches anything).
MAX_ALTERNATIVES = 32

_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def leaves(body: list[ast.stmt]) -> bool:
    """Whether a block always leaves before its end (its last statement returns, raises, ...)."""
    return bool(body) and type(body[-1]) in _LEAVES


def alternatives_of(key: str, value: Any) -> list[list[Any]] | None:
    """The alternatives a name's value stands for: its own branch alternatives, spliced, or
    itself as the one alternative; None when the value is not a known string."""
    if type(value) is not tuple or value[0] != "str":
        return None
    parts = value[1]
    if len(parts) == 1 and isinstance(parts[0], Field) and parts[0].alts is not None and parts[0].alts[0] is None and parts[0].expr == key:
        return list(parts[0].alts[1])
    return [parts]


def merged_value(key: str, values: list[Any], missing: object, unknown_when_missing: bool) -> Any:
    """The value a name holds after a branching statement, from the value on each path that
    reaches the code after it (``missing``: the name was never given a value on that path).

    Returns ``missing`` when this rule has nothing to say (a path holds a list of messages or an
    exception: the caller keeps its own merge)."""
    pieces: list[list[Any]] = []
    lists = [v for v in values if type(v) is tuple and v[0] == "list"]
    if lists:  # a list of messages: any piece a path appended (a path that cleared it is unknown)
        if len(lists) != len([v for v in values if v is not missing]):
            return missing
        for _, held in lists:
            pieces += [p for p in held if p not in pieces]
        return ("list", pieces[:MAX_ALTERNATIVES])
    for value in values:
        if value is missing:
            if unknown_when_missing:
                return None
            continue  # a name first set inside a branch: the paths that never set it do not raise it
        if value is None:
            return None
        alts = alternatives_of(key, value)
        if alts is None:
            return missing
        for parts in alts:
            if parts not in pieces:
                pieces.append(parts)
    if not pieces:
        return missing
    if len(pieces) == 1:
        return ("str", pieces[0])
    if len(pieces) > MAX_ALTERNATIVES:
        return None
    return ("str", [Field(key, key if key.isidentifier() else None, (None, pieces))])


def exhaustive_match(node: ast.Match) -> bool:
    """A ``match`` whose last case catches everything (``case _:`` or ``case name:``, no guard)."""
    last = node.cases[-1] if node.cases else None
    return last is not None and last.guard is None and type(last.pattern) is ast.MatchAs and last.pattern.pattern is None


def has_text_to_match_in_alternatives(template: Mapping[str, Any]) -> bool:
    """An assembled message with no text of its own says something when one of its pieces has
    letters or digits outside its fields (a log of ``msg`` set to one text per branch)."""
    return any(any(isinstance(p, str) and any(ch.isalnum() for ch in p) for p in text_parts(alt)) for alt in template.get("alternatives") or ())


def returned_list(node: ast.AST) -> str | None:
    """The one name a function returns, when every ``return`` of its own body (not of nested
    definitions) returns that name: the candidate list of messages it builds."""
    names: set[str] = set()
    # Statements only: a ``return`` is never inside an expression (walking every expression of
    # every method that appends to a list cost more than the rest of this).
    stack = list(getattr(node, "body", []))
    while stack:
        stmt = stack.pop()
        t = type(stmt)
        if t is ast.Return:
            if type(stmt.value) is not ast.Name:
                return None
            names.add(stmt.value.id)
        elif t not in _DEFINITIONS:
            for block in sub_bodies(stmt):
                stack += block
    return next(iter(names)) if len(names) == 1 else None


_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
