"""Settings a function passes to another: what a check on a parameter is a check on, across files.

Per file (read in the extraction workers, cached with the file's result; the join is
:func:`crawler.catalogue.meaning.site_meaning`, through the call graph's edges):

- ``passes``: calls whose argument is a field of one of the project's configs as the code names it
  (``self.cache_config.cache_dtype``, ``vllm_config.parallel_config.world_size``: the holder's
  name, ``cache_config``, and the field), an environment variable read through the project's
  ``envs`` module (``envs.VLLM_USE_V2_MODEL_RUNNER``), or a local assigned one of those before
  the call; each with its line, the called name's last part and the argument's position or keyword.
- ``signatures``: the parameters (receivers left out) of each function that raises, asserts or
  logs, in order, so a call's positional argument names the parameter it binds.

The join takes a pass only where the call graph has the same call (same file and line) to the
function the check is in, and the field only where a settings class of that name declares it: a
name alone (``x_config.y`` of no such class) stands for nothing.

Only the code is read; nothing here imports or runs it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from crawler.extract.ast_names import dotted
from crawler.extract.codefacts import function_statements, lines_naming, nodes_under, on_lines

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


def empty() -> dict[str, Any]:
    return {"passes": [], "signatures": []}


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


def _checks(statements: list[ast.stmt]) -> bool:
    for stmt in statements:
        if type(stmt) in (ast.Raise, ast.Assert):
            return True
        if type(stmt) is ast.Expr and type(stmt.value) is ast.Call and type(stmt.value.func) is ast.Attribute and stmt.value.func.attr in _LOG_CALLS:
            return True
    return False


def passes(tree: ast.Module, text: str, collected: Callable[[ast.AST], list[ast.stmt] | None] | None = None) -> dict[str, Any]:
    """The file's passes and signatures; ``text`` its source (a file that names no config's field
    and no ``envs`` passes none, and its calls are not walked); ``collected``: a function's
    statements, its ``match`` cases' too, in source order, as a walk already collected them (or
    None: they are walked here)."""
    out = empty()
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
    functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append((stmt.name, stmt))
        elif isinstance(stmt, ast.ClassDef):
            functions += [(f"{stmt.name}.{f.name}", f) for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for qual, fn in functions:
        a = fn.args
        params = [p.arg for p in [*a.posonlyargs, *a.args]]
        if params and params[0] in _RECEIVERS and "." in qual:
            params = params[1:]
        named = params + [p.arg for p in a.kwonlyargs]
        first, last = fn.lineno, fn.end_lineno or fn.lineno
        may_check = bool(named) and (not plain or on_lines(checked, first, last))
        may_pass = scan and (not plain or on_lines(holders, first, last))
        if not may_check and not may_pass:
            continue
        statements = collected(fn) if collected is not None else None
        if statements is None:
            statements = sorted(function_statements(fn, cases=True), key=lambda s: (s.lineno, s.col_offset))
        if may_check and _checks(statements):
            out["signatures"].append({"function": qual, "params": params, "keywords": [p.arg for p in a.kwonlyargs]})
        held: dict[str, list[str]] = {}
        for stmt in statements if may_pass else ():
            if type(stmt) not in _SIMPLE or len(out["passes"]) >= MAX_PASSES:
                continue
            value = getattr(stmt, "value", None)
            if value is None:
                continue
            for call in nodes_under(value, ast.Call):
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
    return out
