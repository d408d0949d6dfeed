"""Names in a syntax tree, as the visitor and the call-graph facts both read them."""

from __future__ import annotations

import ast
from typing import Protocol


class Bindings(Protocol):
    """Where a scope's names are bound (local name -> dotted name). Write-only here, so a scope
    whose names may also be shadowed (bound to None, ``codefacts``) is one too."""

    def __setitem__(self, name: str, target: str, /) -> None: ...


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for Name/Attribute chains, else None."""
    if type(node) is ast.Name:  # (most callees, and most of what a call is given: no parts to join)
        return node.id
    if type(node) is ast.Attribute and type(node.value) is ast.Name:
        return f"{node.value.id}.{node.attr}"
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def import_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` in ``module`` names, relative levels resolved."""
    base = node.module or ""
    if node.level:
        pkg = module if is_package else module.rpartition(".")[0]
        parts = pkg.split(".") if pkg else []
        up = node.level - 1
        if up:
            parts = parts[:-up] if up <= len(parts) else []
        pkg = ".".join(parts)
        base = f"{pkg}.{base}" if base and pkg else (base or pkg)
    return base


def record_import(stmt: ast.stmt, module: str, is_package: bool, into: Bindings) -> None:
    """Add the names an ``import`` or ``from ... import`` in ``module`` binds to ``into`` (local
    name -> dotted name); ``*`` binds nothing errcat can name."""
    if type(stmt) is ast.Import:
        for alias in stmt.names:
            if alias.asname:
                into[alias.asname] = alias.name
            else:
                head = alias.name.split(".", 1)[0]
                into[head] = head
    elif type(stmt) is ast.ImportFrom:
        base = import_base(module, is_package, stmt)
        for alias in stmt.names:
            if alias.name != "*":
                into[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
