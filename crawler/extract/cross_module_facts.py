"""The per-file facts of messages that cross modules, for the catalogue's join (``catalogue.cross_module_join``).

A message the raise (log, response) of one module builds from what a function of another module
returns, ``reasons = check_config(cfg)`` then ``raise ValueError(f"... {', '.join(reasons)}")``
or ``msg = why_invalid(cfg)`` then ``raise ValueError(msg)``, cannot be read from one file. The
extractor keeps two facts per file, cached with its result like the others:

- ``exports``: what the file's functions return as messages: ``lists`` (a function or method whose
  every ``return`` returns one local list of messages: the pieces it may hold) and ``messages``
  (the strings a module-level function's ``return``\\s build), each piece as an alternative's
  text (``{expr}`` fields);
- ``imported``: the sites whose message takes what an imported function returns: the field
  joining a list of its (``fields``: per field with pieces, its index, separator and pieces'
  texts, the imported list's piece marked, see ``templates.IMPORTED``), or the whole message
  (``target``, ``field``). ``drop``: the site says nothing without them (a log of the joined list
  alone), so the join drops it when it cannot find them.

Each site's template is as errcat read it in its file alone (an imported list an unknown piece,
an imported message a field); the join puts in what it finds.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping
from typing import Any, cast

from crawler.extract import assembled
from crawler.extract.templates import IMPORTED, Field, MarkedTemplate, field, piece_text
from crawler.model.kinds import RAISE
from crawler.model.shapes import ExtractedSite, TemplateData


def _unmarked(template: Any) -> Any:
    return dict(template) if isinstance(template, MarkedTemplate) else template


def _plain_template(template: MarkedTemplate) -> TemplateData:
    # A boundary: a MarkedTemplate is what ``templates.make_template`` made (a TemplateData), as a
    # dict subclass with one attribute more, which mypy cannot see through.
    return cast(TemplateData, dict(template))


def collect(
    sites: list[ExtractedSite],
    calls: list[dict[str, Any]],
    classes: list[dict[str, Any]],
    refs: list[tuple[ExtractedSite, dict[str, Any]]],
    has_text_to_match: Callable[[Mapping[str, Any]], bool],
) -> list[dict[str, Any]]:
    """The file's ``imported`` facts (see the module docstring), in site order; every template
    left as a plain dict (``templates.MarkedTemplate`` is the extractor's own)."""
    at = {id(site): i for i, site in enumerate(sites)}
    out: list[tuple[int, int, dict[str, Any]]] = []
    for site, ref in refs:
        if id(site) in at:
            out.append((at[id(site)], 0, {"site": at[id(site)], **ref, "drop": site["kind"] != RAISE}))
    for i, site in enumerate(sites):
        template: Mapping[str, Any] = site["template"]
        if isinstance(template, MarkedTemplate):
            site["template"] = _plain_template(template)
            out.append((i, 1, {"site": i, "fields": template.imported, "drop": site["kind"] != RAISE and not has_text_to_match(site["template"])}))
    for call in calls:
        for made in call.get("made") or (call,):  # (each exception a helper constructs: ``visitor._finish``)
            if made["args"] is not None:
                made["args"] = [_unmarked(t) for t in made["args"]]
                made["kwargs"] = {k: _unmarked(t) for k, t in made["kwargs"].items()}
    for cls in classes:
        init = cls.get("init")
        if init is not None and init.get("template") is not None:
            init["template"] = _unmarked(init["template"])
    out.sort(key=lambda item: item[:2])
    return [ref for _, _, ref in out]


def _plain(piece: list[Any]) -> list[Any]:
    """A piece with an imported list's own piece as the unknown it is here (no chain is followed)."""
    return [field(q.expr.rpartition(IMPORTED)[2]) if isinstance(q, Field) and q.expr.startswith(IMPORTED) else q for q in piece]


#: A method builds a list of messages only where one of these is written (found as text).
_APPENDS = re.compile(r"\.(?:append|extend)\(")


def exports(ex: Any, max_pieces: int) -> dict[str, dict[str, list[str]]]:
    """The file's ``exports`` (see the module docstring) from an extractor that walked it.

    What a file gives must not depend on which functions the extractor skipped (a method is
    walked only when it holds a site's words): messages are read from its module-level
    functions, which are always walked; lists also from the methods of its module-level classes
    (``Backend.validate_configuration``) that append to a list they return, walked for it when
    they were skipped (``_helper_list``)."""
    lists: dict[str, list[str]] = {}
    appends: list[int] | None = None
    for qual, node in list(ex.functions.items()):  # (a walk for a list may add nested functions)
        if "<" in qual or qual.count(".") > 1:
            continue
        values = ex.named_returns.get(qual)
        if values is not None and any(v is None or v[0] != "list" for v in values):
            continue
        if "." in qual:  # a method: the same test whether it was walked or not
            if appends is None:
                appends = _lines(ex.src.text)
            i = bisect_left(appends, node.lineno)
            if i == len(appends) or appends[i] > node.end_lineno or assembled.returned_list(node) is None:
                continue
        elif values is None:
            continue
        pieces = ex._helper_list(qual)
        if pieces and any(isinstance(q, str) and any(ch.isalnum() for ch in q) for p in pieces for q in p):
            lists[qual] = list(dict.fromkeys(piece_text(_plain(p)) for p in pieces))[:max_pieces]
    messages: dict[str, list[str]] = {}
    for qual in ex.string_returns:
        if "." in qual or "<" in qual or qual in lists:
            continue
        pieces = ex._returned_pieces(qual)
        if pieces:
            messages[qual] = list(dict.fromkeys(piece_text(_plain(p)) for p in pieces))[:max_pieces]
    out = {}
    if lists:
        out["lists"] = dict(sorted(lists.items()))
    if messages:
        out["messages"] = dict(sorted(messages.items()))
    return out


def _lines(text: str) -> list[int]:
    """Ascending numbers of the lines that append to or extend a list (every line of a file
    with old Mac line ends, which ``ast`` counts as lines and this count would not)."""
    if "\r" in text and re.search("\r(?!\n)", text):
        return list(range(1, text.count("\r") + text.count("\n") + 2))
    out: list[int] = []
    line, pos = 1, 0
    for match in _APPENDS.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        out.append(line)
    return out
