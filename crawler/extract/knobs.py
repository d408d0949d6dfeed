"""Per-file declarations of user-facing settings, read from a parsed file in the extraction workers.

What a file declares, never what it means to the whole repository (that join is
:mod:`crawler.catalogue.meaning`'s, after extraction): so the facts are cached with the file's result and a
warm crawl never reads the file again. Generic mechanisms only:

- ``options``: command-line options: argparse ``add_argument("--flag", "-f", dest=...)`` calls
  (with a ``**kwargs_var["field"]`` argument noted as ``kwargs``) and click
  ``@click.option("--flag", ...)`` / ``@click.argument`` decorators.
- ``kwargs_of``: ``var = f(SomeClass)`` assignments in the functions that declare options: an
  upstream may build an option's keywords from a class's field (vLLM's ``get_kwargs``); which
  callees do is the upstream configuration's to say.
- ``classes``: classes with annotated fields (dataclasses, pydantic models): name, qualified name,
  bases and decorators as written, each field's line and annotation.
In a file that declares classes with fields, for its functions and methods (not nested ones):

- ``typed_params``: parameters annotated with a class (``model_config: ModelConfig``): a check on
  ``model_config.dtype`` is a check on a field of that class.
- ``aliases``: ``var = self.field`` (``self.a.b``, ``self.a or default``, or a chain on a typed
  parameter): a check on ``var`` is a check on the field; ``var = f(self.a, self.b)`` records
  the chains it ``reads``: a check on ``var`` is about each of them.
- ``helper_args``: calls to a module-level function of the same file with such chains as
  arguments, by the callee's parameter names: a check on the parameter in the helper
  (``_verify(value, name)`` called as ``_verify(self.n, "n")``) is a check on the field.
- ``env``: environment variables read (found in the text: ``os.getenv("X")``, ``os.environ["X"]``,
  ``os.environ.get("X")``) or declared in a table of readers (``{"X": lambda: ...}``).

More (pydantic hooks, tests around private calls, guarded appends, state fields) is read by
:mod:`crawler.extract.knob_helpers` into the same declarations; locals holding part of a field,
getters and helpers' helpers (``forwards``, ``returns``) by :mod:`crawler.extract.knob_flow`.

Nothing here imports or runs the analysed code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Mapping
from operator import attrgetter
from typing import Any

from crawler.extract import knob_flow, knob_helpers, knob_passes
from crawler.extract.ast_names import dotted
from crawler.extract.codefacts import child_nodes, function_statements, nodes_under

#: A statement's line, the key function statements are sorted by.
_LINE = attrgetter("lineno")
#: A file none of these match declares no option: its body is not walked (walking every file's
#: whole tree cost a fifth of the parse).
_OPTION_WORDS = ("add_argument", "click")
#: Environment variables are found in the text: ``os.getenv("X")``, ``os.environ.get("X")``,
#: ``os.environ["X"]``, and a table of readers' ``"X": lambda`` lines. Each pattern is led by a
#: literal, so ``re`` scans with a fast search (alternations led otherwise were a third of the cost).
_ENV_READS = (
    re.compile(r"""getenv\(\s*(["'])([A-Za-z_]\w*)\1"""),
    re.compile(r"""environ\.(?:get|setdefault)\(\s*(["'])([A-Za-z_]\w*)\1"""),
    re.compile(r"""environ\[\s*(["'])([A-Za-z_]\w*)\1\s*\]"""),
)
_LAMBDA = re.compile(r":\s*lambda\b")
_TABLE_KEY = re.compile(r"""[ \t]*(["'])([A-Za-z_]\w*)\1\s*""")


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def empty() -> dict[str, Any]:
    """Every key the join reads (:func:`crawler.catalogue.meaning.build_tables`), knob_helpers'
    too: a file whose reading failed declares nothing, rather than lacking keys."""
    return {
        "options": [],
        "kwargs_of": [],
        "classes": [],
        "env": [],
        "aliases": [],
        "helper_args": [],
        "typed_params": [],
        "forwards": [],
        "returns": [],
        "getter_env": [],
        "env_aliases": [],
        **knob_helpers.empty(),
        **knob_passes.empty(),
    }


def declarations(
    tree: ast.Module,
    text: str,
    module: str,
    is_package: bool,
    lines: list[str] | None = None,
    statements: Mapping[int, list[ast.stmt]] | None = None,
    cased: Collection[int] | None = None,
    walked: knob_passes.Walked | None = None,
) -> dict[str, Any]:
    """The file's declarations; empty when reading them fails (a tree from the libcst fallback
    this code did not foresee), since they must never cost the file its raise sites. ``lines``:
    ``text.split("\\n")`` when the caller has it already. ``statements``: the statements of each
    module-level function and method as the extractor's walk collected them
    (``codefacts.GraphWalker.statements``), else they are walked here; ``cased``: the ids of
    those lists whose function holds a ``match`` (``GraphWalker.cased``), when known; ``walked``:
    what that walk read of every statement (``knob_passes.Walked``), when it read them all."""
    try:
        split = text.split("\n") if lines is None else lines
        return _declarations(tree, text, module, is_package, split, _Bodies(statements, cased), walked)
    except Exception:  # noqa: BLE001
        return empty()


class _Bodies:
    """A function's own statements (``codefacts.function_statements``'s, in its order), from the walk's collection
    when there is one."""

    __slots__ = ("collected", "cased")

    def __init__(self, collected: Mapping[int, list[ast.stmt]] | None, cased: Collection[int] | None = None):
        self.collected = collected
        self.cased = cased

    def with_cases(self, fn: ast.AST) -> list[ast.stmt] | None:
        """The function's own statements and its ``match`` cases', in source order (what
        ``function_statements(fn, cases=True)`` sorted by position gives: a walk in source order
        meets each statement after those that begin before it), when the walk collected them and
        the function holds no ``match``; else None."""
        if self.collected is None or self.cased is None:
            return None
        found = self.collected.get(id(fn))
        return None if found is None or id(found) in self.cased else found

    def of(self, fn: ast.AST) -> list[ast.stmt]:
        found = None if self.collected is None else self.collected.get(id(fn))
        # (the walk keeps them in source order; ``codefacts.function_statements`` pops its blocks from the end, so
        # statements that share a line come last first: reversed, a sort by line orders them alike)
        return function_statements(fn) if found is None else found[::-1]


def _declarations(
    tree: ast.Module, text: str, module: str, is_package: bool, lines: list[str], bodies: _Bodies, walked: knob_passes.Walked | None = None
) -> dict[str, Any]:
    out = empty()
    imports = _module_imports(tree, module, is_package)
    _classes(tree.body, module, "", imports, out["classes"])
    if any(word in text for word in _OPTION_WORDS):
        local = {s.name for s in tree.body if type(s) is ast.ClassDef}
        _calls(tree, out, lambda name: _resolve(name, imports, module, local))
    if any(c["fields"] for c in out["classes"]):
        _aliases_and_helper_args(tree, lines, out, bodies)
    out["env"] = _env(text)
    if "envs." in text or "environ" in text or "getenv" in text:
        _env_aliases(tree, out, bodies)
    out.update(knob_helpers.declarations(tree, module, text, lines))
    out.update(knob_passes.passes(tree, text, bodies.with_cases, walked))
    return out


#: The receivers whose attributes are a class's fields.
_RECEIVERS = ("self", "cls")
#: Names a value may read before it is no longer one setting but a computation over many.
_MAX_READS = 8


def _chain(node: ast.expr, roots: set[str] | dict[str, str]) -> str | None:
    """``root.a.b`` for an attribute chain on one of ``roots`` (``x.a or d``: its first operand),
    else None."""
    if type(node) is ast.BoolOp and type(node.op) is ast.Or:
        node = node.values[0]
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if not parts or type(node) is not ast.Name or node.id not in roots:
        return None
    return ".".join([node.id, *reversed(parts)])


#: Values computed from what they read (``a or b``, ``a + b``, ``sum([...])``); a method's result
#: (``self.x.get(k)``, ``torch.cat(...)``) is not taken for the fields it is called on.
_COMPUTED = (ast.BoolOp, ast.BinOp, ast.Compare, ast.UnaryOp, ast.List, ast.Tuple, ast.Set, ast.IfExp)


def _reads(node: ast.expr, roots: set[str] | dict[str, str]) -> list[str]:
    """The chains on ``roots`` a computed value reads (``sum([self.a is not None, ...])``)."""
    found: list[str] = []
    for sub in nodes_under(node, ast.Attribute):  # (``ast.walk``'s order, at a fraction of its cost)
        if type(sub.ctx) is ast.Load:
            chain = _chain(sub, roots)
            if chain and not any(f.startswith(chain + ".") for f in found):
                found = [f for f in found if not chain.startswith(f + ".")] + [chain]
    found = list(dict.fromkeys(found))
    return found if len(found) <= _MAX_READS else []


def _computed_reads(stmt: ast.Assign, roots: set[str] | dict[str, str], lines: list[str]) -> list[str]:
    """``_reads`` of an assigned value, when the statement's text names a root (the text first:
    walking every assigned value cost more than the rest)."""
    where = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno])
    return _reads(stmt.value, roots) if any(f"{root}." in where for root in roots) else []


def _class_words(node: ast.expr | None) -> str | None:
    """The names an annotation is made of (``ModelConfig | None`` -> ``ModelConfig None``), for
    a name, an attribute, a string or a union; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _class_words(node.left), _class_words(node.right)
        return f"{left} {right}" if left and right else left or right
    return None


def _typed(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Parameters annotated with a class (``model_config: ModelConfig``): the annotation's names."""
    a = fn.args
    out = {}
    for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
        words = _class_words(p.annotation) if p.annotation is not None and p.arg not in _RECEIVERS else None
        if words:
            out[p.arg] = words
    return out


def _helper_call(node: ast.expr | None, helpers: dict[str, tuple[list[str], set[str]]], roots: set[str]) -> dict[str, str]:
    """The parameters of a module-level helper bound to chains on ``roots`` by this call."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in helpers:
        return {}
    positional, named = helpers[node.func.id]
    bound = {}
    for i, arg in enumerate(node.args):
        chain = _chain(arg, roots) if i < len(positional) and type(arg) is not ast.Starred else None
        if chain:
            bound[positional[i]] = chain
    for k in node.keywords:
        chain = _chain(k.value, roots) if k.arg in named else None
        if chain and k.arg:
            bound[k.arg] = chain
    return bound


#: Where a value is an environment variable's: ``envs.X`` (an upstream's module of readers, as
#: vLLM's ``vllm.envs``), ``os.getenv("X")``, ``os.environ.get("X")``, ``os.environ["X"]``.
_ENV_MODULES = ("envs",)
_ENV_GETTERS = ("getenv", "get")


def _env_read(node: ast.expr) -> str | None:
    """The environment variable ``node`` reads, if it is one of ``_ENV_MODULES``' attributes or a
    getter's literal name (``os.getenv("X", default)``); None otherwise."""
    if type(node) is ast.Attribute and node.attr.isupper():
        base = node.value
        if (type(base) is ast.Name and base.id in _ENV_MODULES) or (type(base) is ast.Attribute and base.attr in _ENV_MODULES):
            return node.attr
        return None
    if type(node) is ast.Call and node.args and type(node.args[0]) is ast.Constant and isinstance(node.args[0].value, str):
        func = node.func
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        held = dotted(func.value) if type(func) is ast.Attribute else None
        if name == "getenv" or (name == "get" and held is not None and held.endswith("environ")):
            return node.args[0].value
    if (
        type(node) is ast.Subscript
        and dotted(node.value) in ("os.environ", "environ")
        and type(node.slice) is ast.Constant
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    return None


def _env_aliases(tree: ast.Module, out: dict[str, Any], bodies: _Bodies) -> None:
    """``var = envs.X`` in a function or method: a check on ``var`` is a check on the variable
    (``pack_strategy = envs.VLLM_RAY_DP_PACK_STRATEGY``, then ``if pack_strategy == "span"``)."""
    functions: list[tuple[str, ast.AST]] = [(stmt.name, stmt) for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))]
    functions += [
        (f"{c.name}.{f.name}", f) for c in tree.body if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for qual, fn in functions:
        for stmt in bodies.of(fn):
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
                env = _env_read(stmt.value)
                if env is not None:
                    out["env_aliases"].append({"function": qual, "var": stmt.targets[0].id, "env": env, "line": stmt.lineno})
    out["env_aliases"].sort(key=lambda a: (a["function"], a["line"], a["var"]))


def _aliases_and_helper_args(tree: ast.Module, lines: list[str], out: dict[str, Any], bodies: _Bodies) -> None:
    functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = [
        (stmt.name, stmt) for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    helpers = {}
    for name, fn in functions:
        a = fn.args
        helpers[name] = ([p.arg for p in [*a.posonlyargs, *a.args]], {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]})
    functions += [
        (f"{c.name}.{f.name}", f) for c in tree.body if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for qual, fn in functions:
        typed = _typed(fn)
        if typed:
            out["typed_params"].append({"function": qual, "params": typed})
        roots = {*_RECEIVERS, *typed} if "." in qual else set(typed)
        params = [] if "." in qual else [p.arg for p in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]]
        if not roots and not params:
            continue
        statements = sorted(bodies.of(fn), key=_LINE)  # (a stable sort: the same order, the key read in C)
        known = len(out["aliases"])
        for stmt in statements if roots else ():
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                chain = _chain(stmt.value, roots)
                computed = type(stmt.value) in _COMPUTED or type(stmt.value) is ast.Call and type(stmt.value.func) is ast.Name
                reads = [] if chain or not computed else _computed_reads(stmt, roots, lines)
                if chain or reads:
                    out["aliases"].append({"function": qual, "var": stmt.targets[0].id, "expr": chain, "reads": reads, "line": stmt.lineno})
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)) and helpers:
                bound = _helper_call(stmt.value, helpers, roots)
                if bound and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name):
                    out["helper_args"].append({"function": qual, "callee": stmt.value.func.id, "params": bound, "line": stmt.lineno})
        # (only the helpers its text calls: walking every statement for calls cost more than the rest)
        text = _text_of(fn, lines) if params else ""
        called = {name: helper for name, helper in helpers.items() if name + "(" in text} if text else {}
        getter = "." in qual and len(fn.args.args) == 1 and not fn.args.kwonlyargs
        knob_flow.function_flow(
            qual,
            statements,
            roots,
            params if called else [],
            called,
            {(a["var"], a["line"]): [a["expr"]] if a["expr"] else a["reads"] for a in out["aliases"][known:]},
            out,
            getter=getter,
        )
        if getter and "envs." in _text_of(fn, lines):
            # a property whose value an environment variable decides (vLLM's ``use_v2_model_runner``
            # reads ``envs.VLLM_USE_V2_MODEL_RUNNER``): a check on it is a check on the variable
            env = sorted({name for node in nodes_under(fn, ast.Attribute) for name in [_env_read(node)] if name})
            if env:
                out["getter_env"].append({"function": qual, "env": env})
    out["aliases"].sort(key=lambda a: (a["function"], a["line"], a["var"]))
    out["helper_args"].sort(key=lambda h: (h["callee"], h["line"]))
    out["typed_params"].sort(key=lambda f: f["function"])
    out["forwards"].sort(key=lambda f: (f["callee"], f["line"]))
    out["returns"].sort(key=lambda f: f["function"])
    out["getter_env"].sort(key=lambda f: f["function"])


def _text_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> str:
    return "\n".join(lines[fn.lineno - 1 : fn.end_lineno or fn.lineno])


def _env(text: str) -> list[dict[str, Any]]:
    found = []
    if "environ" in text or "getenv" in text:
        found += [(m.group(2), m.start()) for pattern in _ENV_READS for m in pattern.finditer(text)]
    if "lambda" in text:
        for m in _LAMBDA.finditer(text):
            start = text.rfind("\n", 0, m.start()) + 1
            key = _TABLE_KEY.fullmatch(text, start, m.start())
            if key:
                found.append((key.group(2), key.start(2)))
    found.sort(key=lambda f: f[1])
    out, line, pos = [], 1, 0
    for name, start in found:
        line += text.count("\n", pos, start)
        pos = start
        out.append({"name": name, "line": line})
    return out


def _module_imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Local name -> dotted name, for imports at module level (``if TYPE_CHECKING:`` included)."""
    found: dict[str, str] = {}
    todo = list(tree.body)
    while todo:
        stmt = todo.pop(0)
        if type(stmt) is ast.If:
            todo[:0] = [*stmt.body, *stmt.orelse]
        elif type(stmt) is ast.Import:
            for alias in stmt.names:
                found[alias.asname or alias.name.split(".", 1)[0]] = alias.name if alias.asname else alias.name.split(".", 1)[0]
        elif type(stmt) is ast.ImportFrom:
            base = stmt.module or ""
            if stmt.level:
                parts = (module if is_package else module.rpartition(".")[0]).split(".")
                parts = parts[: len(parts) - (stmt.level - 1)] if stmt.level - 1 < len(parts) else []
                base = ".".join([*parts, base] if base else parts)
            for alias in stmt.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return found


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names, else None."""
    text = dotted(node)
    return text if text is not None and _DOTTED.fullmatch(text) else None


def _unparse(node: ast.expr) -> str:
    """``ast.unparse``, which a name or a chain of names needs no visitor for (most annotations)."""
    return dotted(node) or ast.unparse(node)


def _resolve(name: str | None, imports: dict[str, str], module: str, local: set[str]) -> str | None:
    if name is None:
        return None
    head, dot, rest = name.partition(".")
    if head in imports:
        return imports[head] + dot + rest
    if head in local:
        return f"{module}.{name}"
    return name


def _field(name: str, line: int, annotation: str, value: ast.expr | None) -> dict[str, Any]:
    """A declared field; with ``default`` when its default is another class's field
    (``moe_backend: MoEBackend = KernelConfig.moe_backend``: the field it stands for)."""
    default = _dotted(value) if type(value) is ast.Attribute else None
    if default is not None and default.count(".") == 1 and default[:1].isupper():
        return {"name": name, "line": line, "annotation": annotation, "default": default}
    return {"name": name, "line": line, "annotation": annotation}


def _classes(body: list[ast.stmt], module: str, prefix: str, imports: dict[str, str], out: list[dict[str, Any]]) -> None:
    local = {s.name for s in body if type(s) is ast.ClassDef}
    for stmt in body:
        if type(stmt) is not ast.ClassDef:
            continue
        qual = prefix + stmt.name
        fields = [
            _field(s.target.id, s.lineno, _unparse(s.annotation), s.value)
            for s in stmt.body
            if type(s) is ast.AnnAssign and type(s.target) is ast.Name and not s.target.id.startswith("_")
        ]
        if fields or stmt.bases:  # (a class without fields may still make its subclasses settings)
            out.append(
                {
                    "qualname": f"{module}.{qual}",
                    "name": stmt.name,
                    "line": stmt.lineno,
                    "bases": [_resolve(_dotted(b), imports, module, local) or _unparse(b) for b in stmt.bases],
                    "decorators": [_unparse(d) for d in stmt.decorator_list],
                    "fields": fields,
                }
            )
        _classes(stmt.body, module, qual + ".", imports, out)


#: What an option's spelling may be: a flag or a name, short enough for a sentence. Anything else
#: the crawled code passes (an empty string, a megabyte of text) names no setting.
_SPELLING = re.compile(r"-{0,2}[A-Za-z0-9_][\w.-]{0,80}")


def _strings(args: list[ast.expr]) -> list[str]:
    return [a.value for a in args if type(a) is ast.Constant and isinstance(a.value, str) and _SPELLING.fullmatch(a.value)]


def _option(call: ast.Call, kind: str, function: str) -> dict[str, Any] | None:
    flags = [s for s in _strings(call.args) if s.startswith("-")]
    names = _strings(call.args)
    dest = next((k.value.value for k in call.keywords if k.arg == "dest" and type(k.value) is ast.Constant and isinstance(k.value.value, str)), None)
    kwargs = None
    for k in call.keywords:
        # ``**kw["field"]``, or ``**{**kw["field"], "default": None}`` (the field's keywords with
        # some replaced: vLLM's ``--enable-prefix-caching``, ``--mamba-cache-mode``)
        spread = [k.value] if k.arg is None else []
        if spread and type(k.value) is ast.Dict:
            spread = [v for key, v in zip(k.value.keys, k.value.values, strict=True) if key is None]
        for value in spread:
            if type(value) is ast.Subscript and type(value.value) is ast.Name:
                key = value.slice
                if type(key) is ast.Constant and isinstance(key.value, str):
                    kwargs = [value.value.id, key.value]
    if not flags and not (kind == "click_argument" and names):
        if not (kind == "argparse" and names and kwargs):  # a positional: add_argument("model")
            return None
    return {"kind": kind, "flags": flags or names[:1], "dest": dest, "kwargs": kwargs, "line": call.lineno, "function": function}


def _calls(tree: ast.Module, out: dict[str, Any], resolve: Callable[[str | None], str | None]) -> None:
    """One walk: options and ``var = f(Class)``, each under the function it is in."""
    todo: list[tuple[str, ast.AST]] = [("<module>", tree)]
    while todo:
        qual, node = todo.pop()
        for child in child_nodes(node):
            here = qual
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                here = child.name if qual == "<module>" else f"{qual}.{child.name}"
                for deco in child.decorator_list if not isinstance(child, ast.ClassDef) else ():
                    _click(deco, here, out)
            elif isinstance(child, ast.Call):
                if isinstance(child.func, ast.Attribute) and child.func.attr == "add_argument":
                    found = _option(child, "argparse", qual)
                    if found:
                        out["options"].append(found)
            elif (
                isinstance(child, ast.Assign)
                and len(child.targets) == 1
                and isinstance(child.targets[0], ast.Name)
                and isinstance(child.value, ast.Call)
                and len(child.value.args) == 1
                and not child.value.keywords
            ):
                arg = _dotted(child.value.args[0])
                callee = _dotted(child.value.func)
                if arg and callee and arg.rpartition(".")[2][:1].isupper():
                    out["kwargs_of"].append(
                        {"function": qual, "var": child.targets[0].id, "callee": callee.rpartition(".")[2], "class": resolve(arg), "line": child.lineno}
                    )
            todo.append((here, child))
    out["options"].sort(key=lambda o: (o["line"], o["flags"]))
    out["kwargs_of"].sort(key=lambda o: (o["line"], o["var"]))


def _click(deco: ast.expr, function: str, out: dict[str, Any]) -> None:
    if type(deco) is not ast.Call:
        return
    callee = _dotted(deco.func) or ""
    kind = {"option": "click", "argument": "click_argument"}.get(callee.rpartition(".")[2])
    if kind and callee in (f"click.{callee.rpartition('.')[2]}", "option", "argument"):
        found = _option(deco, kind, function)
        if found:
            out["options"].append(found)
