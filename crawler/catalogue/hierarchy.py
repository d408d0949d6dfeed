"""Repo-wide pass over extraction results: exception hierarchy and ``__init__`` templates.

- :func:`resolve_exceptions` maps every raised ``exception_qualname`` to a ``records.ExceptionInfo``
  dict, following repo-defined classes through their (resolved) bases across modules down to a
  builtin exception. A qualname that names a re-export (``vllm.Foo`` for a class defined in
  ``vllm.errors``) is matched to the unique repo class of that name under the same package.
- :func:`apply_init_templates` makes anew the template of sites that construct a repo-defined
  exception whose ``__init__`` (own or inherited) builds the message from its parameters:
  the call's arguments are substituted for the parameter fields (form ``init``).
"""

from __future__ import annotations

import builtins
from typing import Any

from crawler.extract.assembled import MAX_ALTERNATIVES as MAX_PIECES
from crawler.extract.derive import KEY, derived
from crawler.extract.templates import Field, make_template, parts_from_template, text_parts
from crawler.model.shapes import ExceptionData, ExtractedSite, FileResult, TemplateData


def _builtin_chain(name: str) -> list[str] | None:
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return None
    return [f"builtins.{c.__name__}" for c in cls.__mro__[1:] if c is not object]


class _Index:
    def __init__(self, results: list[FileResult]):
        self.classes: dict[str, dict[str, Any]] = {}
        self.by_name: dict[str, list[str]] = {}
        for r in results:
            for c in r.get("classes", ()):
                self.classes.setdefault(c["qualname"], c)
                self.by_name.setdefault(c["name"], []).append(c["qualname"])

    def find(self, qualname: str) -> dict[str, Any] | None:
        """The repo class a qualname names, following a re-export to a unique same-package class."""
        got = self.classes.get(qualname)
        if got is not None:
            return got
        pkg, _, name = qualname.rpartition(".")
        if not pkg:
            return None
        candidates = [q for q in self.by_name.get(name, ()) if q.startswith(pkg + ".")]
        if len(candidates) == 1:
            return self.classes[candidates[0]]
        return None

    def chain(self, qualname: str) -> list[str]:
        """Base chain nearest first (first base at each step), ending in builtins when known."""
        out: list[str] = []
        seen = {qualname}
        current = qualname
        while True:
            cls = self.find(current)
            if cls is None:
                if current.startswith("builtins.") and not out:
                    return _builtin_chain(current[9:]) or []
                if current.startswith("builtins."):
                    out.extend(_builtin_chain(current[9:]) or [])
                return out
            bases = [b for b in cls["bases"] if b not in ("object", "builtins.object")]
            if not bases:
                return out
            nxt = bases[0]
            # Prefer the base that leads to an exception (mixins often come first).
            for b in bases:
                if b.startswith("builtins.") or self.find(b) is not None:
                    nxt = b
                    break
            if nxt in seen:
                return out
            seen.add(nxt)
            found = self.find(nxt)
            out.append(found["qualname"] if found else nxt)
            current = out[-1]

    def builtin_ancestor(self, qualname: str) -> str | None:
        """The most specific builtin exception among all ancestors (every base, not just the first)."""
        best, best_depth = None, -1
        seen: set[str] = set()
        todo = [qualname]
        while todo:
            q = todo.pop(0)
            if q in seen:
                continue
            seen.add(q)
            if q.startswith("builtins."):
                cls = getattr(builtins, q[9:], None)
                if isinstance(cls, type) and issubclass(cls, BaseException) and len(cls.__mro__) > best_depth:
                    best, best_depth = cls.__name__, len(cls.__mro__)
                continue
            found = self.find(q)
            if found is not None:
                todo.extend(found["bases"])
        return best

    def init_of(self, qualname: str) -> dict[str, Any] | None:
        """The nearest ``init`` record (own or inherited through repo classes)."""
        seen = set()
        current = qualname
        while current not in seen:
            seen.add(current)
            cls = self.find(current)
            if cls is None:
                return None
            init: dict[str, Any] | None = cls.get("init")
            if init is not None:
                return init
            bases = [b for b in cls["bases"] if self.find(b) is not None]
            if not bases:
                return None
            current = bases[0]
        return None


def resolve_exceptions(results: list[FileResult]) -> dict[str, ExceptionData]:
    index = _Index(results)
    out: dict[str, ExceptionData] = {}
    for r in results:
        for site in r.get("sites", ()):
            q = site["exception_qualname"]
            if q in out:
                continue
            cls = index.find(q)
            qualname = cls["qualname"] if cls else q
            chain = index.chain(q)
            ancestor = index.builtin_ancestor(q)
            out[q] = {"name": qualname.rpartition(".")[2], "qualname": qualname, "builtin_ancestor": ancestor, "bases": chain}
    return out


def apply_init_templates(results: list[FileResult]) -> list[FileResult]:
    """The results with call arguments substituted into repo ``__init__`` templates (form ``init``).

    Copy on write: a changed site is a new dict, with derived facts that fit it, in a copy of
    its file's result; every other result and site is the one given. The results given are left as
    they were, and the pass costs a few hundred small copies on vLLM, not one per site."""
    index = _Index(results)
    out: list[FileResult] = []
    for r in results:
        sites = r.get("sites", ())
        templates: dict[int, TemplateData] = {}
        for call in r.get("calls", ()):
            maker = _made_template if "made" in call else _init_template
            template = maker(index, sites[call["site"]], call)
            if template is not None:
                templates[call["site"]] = template
        if not templates:
            out.append(r)
            continue
        changed = r.copy()
        changed["sites"] = [site if at not in templates else _with_template(site, templates[at]) for at, site in enumerate(sites)]
        out.append(changed)
    return out


def _with_template(site: ExtractedSite, template: TemplateData) -> ExtractedSite:
    changed = site.copy()
    changed["template"] = template
    changed[KEY] = derived(changed)  # (most substitutions give the text extraction saw: its derivation holds)
    return changed


def _init_template(index: _Index, site: ExtractedSite, call: dict[str, Any]) -> TemplateData | None:
    """The site's template with the call's arguments bound into its exception's ``__init__``
    template, or None when that ``__init__`` builds no message of its parameters."""
    init = index.init_of(site["exception_qualname"])
    if not init or init.get("template") is None:
        return None
    bound: dict[str, TemplateData] = {}
    params = init["params"]
    for name, tpl in zip(params, call["args"], strict=False):  # a call may leave defaults out
        bound[name] = tpl
    for name, tpl in call["kwargs"].items():
        if name in params:
            bound[name] = tpl
    own = parts_from_template(init["template"])
    whole = bound.get(own[0].name) if len(own) == 1 and isinstance(own[0], Field) and own[0].expr == own[0].name else None
    if whole is not None and whole.get("alternatives"):
        # the message is an assembled argument: its template as it is (its text alone
        # does not hold its alternatives and pattern)
        return whole
    parts: list[Any] = []
    for p in own:
        if isinstance(p, Field) and p.name is not None and p.name in bound:
            arg = bound[p.name]
            if p.expr == p.name:
                parts.extend(parts_from_template(arg))
            else:  # keep conversion / format spec: {param!r} -> {argexpr!r}
                parts.append(_with_suffix(p, p.name, arg))
        else:
            parts.append(p)
    return make_template(parts, "init")


def _made_template(index: _Index, site: ExtractedSite, call: dict[str, Any]) -> TemplateData | None:
    """The template of a raise of what a helper constructs (``raise _wrap(e)``; ``call["made"]``:
    per exception its ``return``\\s construct, its message's pieces and the arguments of the
    construction, see ``visitor._finish``): each construction's arguments bound into the class's
    ``__init__`` template, the results the alternatives; None when that ``__init__`` builds no
    message of its parameters, or no piece has text (the extractor's template holds: the
    argument a call passes, when the helper's constructions add nothing to it)."""
    init = index.init_of(site["exception_qualname"])
    if not init or init.get("template") is None:
        return None
    pieces: list[list[Any]] = []
    for made in call["made"]:
        got = _init_template(index, site, made) if made["args"] is not None else None
        if got is None:
            own = [text_parts(text) for text in made["pieces"]]
        elif got.get("alternatives"):
            own = [text_parts(text) for text in got["alternatives"]]
        else:
            own = [parts_from_template(got)]
        for piece in own:
            if piece not in pieces and len(pieces) < MAX_PIECES:
                pieces.append(piece)
    if not any(isinstance(p, str) and any(ch.isalnum() for ch in p) for piece in pieces for p in piece):
        return None
    name = call["field"] if call["field"].isidentifier() else None
    return make_template([Field(call["field"], name, (None, pieces))], "assembled")


def _with_suffix(f: Field, name: str, arg: TemplateData) -> Field:
    """``{param!r}`` with ``param`` (``name``) bound to ``arg``: move the conversion/spec onto the argument."""
    suffix = f.expr[len(name) :]
    arg_parts = parts_from_template(arg)
    if len(arg_parts) == 1 and isinstance(arg_parts[0], Field):
        return Field(arg_parts[0].expr + suffix, arg_parts[0].name)
    if not arg["fields"]:
        return Field(repr(arg_parts[0] if arg_parts else "") + suffix, None)
    return f
