"""Messages built from what a function of another module returns: the join across modules.

The extractor reads one file at a time; a site whose message joins a list an imported function
returns (``reasons = check_config(cfg)`` ... ``raise ValueError(f"... {', '.join(reasons)}")``)
or is a message one returns (``raise ValueError(why_invalid(cfg))``) says so in its file's result
(``imported``), and each file says what its functions return (``exports``; see
``extract.cross_module_facts``). Here the imported name is followed to its definition with the call
graph's own resolution (``callers.Names``: imports, re-exports, a class's methods), and the
site's template takes that function's pieces as alternatives, as it would if the function were
in its own module. A name the join cannot follow to a function that returns messages leaves the
site as its file alone gave it (a log or response that then says nothing is no site).

The join reads the per-file results only (what a warm crawl has from the result cache, never a
file), and runs before entries are grouped (an entry's id and pattern come from the template),
before ``hierarchy.apply_init_templates`` (which may make a site's template anew from its
constructor's ``__init__``). Its changes are kept in the joins' cache by the blobs of every
file. It changes the results in place, and running it again on them changes nothing.
"""

from __future__ import annotations

from typing import Any, cast

from crawler.catalogue.callers import Names
from crawler.extract.cache import copied
from crawler.extract.templates import IMPORTED, Field, field, make_template, parts_from_template, text_parts
from crawler.model.shapes import FileResult, TemplateData

#: Pieces per assembled field, as the extractor keeps (``visitor.MAX_PIECES``).
MAX_PIECES = 32


def apply(results: list[FileResult], store: Any = None, inputs: Any = None) -> list[FileResult]:
    """``results`` with what imported functions return put into the templates of the sites that
    take it. ``results`` is left as it is: a result the join reads or changes is a copy (without
    its ``imported``: a second join over the copies has nothing to do), every other one the same
    object, so a result kept in memory for another release joins again there.

    With a ``store`` (``meaning_join.JoinStore``) and these results' ``inputs``
    (``meaning_join.JoinInputs``: the blob of every file, what each result holds and every name
    the resolution reads), the changes are kept and a crawl of the same inputs takes them from
    it, as does one whose files only moved since (``JoinStore.moved``: the changes hold no line,
    and the resolution compares lines within a file only): the repository's names are read from
    every result, which costs more than the rest of the join."""
    pending = [r for r in results if r.get("status") == "ok" and r.get("imported")]
    if not pending:
        return results
    kept = store.output("imported", inputs, {r["path"]: r for r in results}) if store is not None and inputs else None
    changes = _changes(kept.get("records") if type(kept) is dict else None, pending)
    if changes is None:
        complete = getattr(store, "complete", None)
        if complete is not None:  # the repository's names are read from the call graph's facts
            complete(results)
        changes = _join(results, pending)
        if store is not None and inputs:
            store.put("imported", inputs.key("imported"), {"records": changes}, inputs)
    return _applied(results, changes)


def _changes(kept: Any, pending: list[FileResult]) -> list[list[Any]] | None:
    """Kept changes that fit these results ([path, site, template or None to drop]), else None."""
    if type(kept) is not list:
        return None
    sizes = {r["path"]: len(r["sites"]) for r in pending}
    for change in kept:
        if not (
            type(change) is list
            and len(change) == 3
            and type(change[0]) is str
            and type(change[1]) is int
            and 0 <= change[1] < sizes.get(change[0], 0)
            and (change[2] is None or _is_template(change[2]))
        ):
            return None
    return kept


def _is_template(value: Any) -> bool:
    return type(value) is dict and all(
        type(value.get(k)) is t for k, t in (("text", str), ("fields", list), ("pattern", str), ("form", str), ("opaque", bool), ("alternatives", list))
    )


def _applied(results: list[FileResult], changes: list[list[Any]]) -> list[FileResult]:
    by_path: dict[str, list[tuple[int, TemplateData | None]]] = {}
    for path, at, template in changes:
        by_path.setdefault(path, []).append((at, template))
    out: list[FileResult] = []
    for result in results:
        if result.get("status") != "ok" or not result.get("imported"):
            out.append(result)
            continue
        copy = cast("FileResult", copied(result, {k: v for k, v in result.items() if k != "imported"}))
        sites = list(copy["sites"])
        dropped: set[int] = set()
        for at, template in by_path.get(result["path"], ()):
            if template is None:
                dropped.add(at)
            elif sites[at]["template"] != template:
                sites[at] = {**sites[at], "template": template}
        copy["sites"] = sites
        out.append(_drop(copy, dropped) if dropped else copy)
    return out


def _join(results: list[FileResult], pending: list[FileResult]) -> list[list[Any]]:
    """The changes the join makes: [path, site index, its new template, or None: drop it]."""
    names = Names(results)
    lists: dict[str, list[str]] = {}
    messages: dict[str, list[str]] = {}
    for result in results:
        exported = result.get("exports") or {}
        for qual, texts in (exported.get("lists") or {}).items():
            lists.setdefault(f"{result['module']}.{qual}", texts)
        for qual, texts in (exported.get("messages") or {}).items():
            messages.setdefault(f"{result['module']}.{qual}", texts)
    changes: list[list[Any]] = []
    for result in pending:
        for ref in result.get("imported") or ():
            site = result["sites"][ref["site"]]
            if "fields" in ref:
                template = _with_lists(site["template"], ref["fields"], names, lists)
            else:
                template = _message(ref, names, messages)
            if template is not None or ref.get("drop"):
                changes.append([result["path"], ref["site"], template])
    return changes


def _texts(names: Names, table: dict[str, list[str]], target: str) -> list[str] | None:
    found = names.find(target)
    return table.get(found) if found is not None else table.get(target)


def _with_lists(template: TemplateData, fields: list[list[Any]], names: Names, lists: dict[str, list[str]]) -> TemplateData | None:
    """The template with each imported list's piece replaced by the pieces the function's list
    may hold; None when no imported function was found (the template stays as it is)."""
    parts = parts_from_template(template)
    at = [i for i, p in enumerate(parts) if isinstance(p, Field)]
    found = False
    for k, sep, texts, expr in fields:
        if k >= len(at) or parts[at[k]].expr != expr:  # (a template made otherwise since: left as it is)
            return None
        pieces: list[Any] = []
        for text in texts:
            marker = _marker(text)
            if marker is None:
                added = [text_parts(text)]
            else:
                got = _texts(names, lists, marker[0])
                found = found or bool(got)
                added = [text_parts(t) for t in got] if got else [[field(marker[1])]]
            for piece in added:
                if piece not in pieces and len(pieces) < MAX_PIECES:
                    pieces.append(piece)
        old = parts[at[k]]
        parts[at[k]] = Field(old.expr, old.name, (sep, pieces))
    return make_template(parts, template["form"]) if found else None


def _marker(text: str) -> tuple[str, str] | None:
    """(the imported function, the list's name) of an imported list's piece, else None."""
    if not (text.startswith("{" + IMPORTED) and text.endswith("}")):
        return None
    target, _, name = text[2:-1].partition(IMPORTED)
    return target, name


def _message(ref: dict[str, Any], names: Names, messages: dict[str, list[str]]) -> TemplateData | None:
    texts = _texts(names, messages, ref["target"])
    if not texts:
        return None
    fld = ref["field"]
    return make_template([Field(fld["expr"], fld["name"], (None, [text_parts(t) for t in texts]))], "assembled")


def _drop(result: FileResult, dropped: set[int]) -> FileResult:
    """The result without some of its sites (logs, responses: none has a constructor call), its
    calls renumbered."""
    renumber: dict[int, int] = {}
    sites: list[Any] = []
    for i, site in enumerate(result["sites"]):
        if i not in dropped:
            renumber[i] = len(sites)
            sites.append(site)
    calls = [{**call, "site": renumber[call["site"]]} for call in result["calls"] if call["site"] in renumber]
    return cast("FileResult", copied(result, {**result, "sites": sites, "calls": calls}))
