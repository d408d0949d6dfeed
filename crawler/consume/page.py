"""One record laid out as a catalogue page for the terminal (``errcat show``).

The page is built as lines of styled spans, ``(style, text)``, and only then written out by
``sink.styled``: plain (piped, ``--color=never``, ``NO_COLOR``), or with SGR colours (a
terminal, ``--color=always``), every span's text made inert before a colour code is put around
it.

The layout reads the record as JSON data, not the model: fields other helpers add to the
schema (the kind-specific ``log``/``response``/``native`` of a site, ``explanation.evidence``,
new ``history`` keys) are shown when present, generically, without a change here.
"""

from __future__ import annotations

from typing import Any

from crawler.base.sink import styled
from crawler.catalogue.evidence import issue_number
from crawler.consume.history_page import TITLE as HISTORY
from crawler.consume.history_page import Others, history_note, history_rows, inherited, inherited_note
from crawler.consume.kind_words import SINCE, article, explained_note, kind_text, shows_exception, surface_rows, trigger_label, unknown_exception
from crawler.consume.meaning_page import (
    CALLERS,
    DO_NOTE,
    DO_TITLE,
    FACTS_TITLE,
    NOTE,
    REPRODUCTIONS,
    TITLE,
    action_rows,
    fact_lines,
    shown_message,
    swallowed,
    tracker_links,
)
from crawler.consume.meaning_page import rows as meaning_rows
from crawler.model.records import shown_source

Span = tuple[str, str]
Line = list[Span]

#: SGR parameters per style; the empty style is the terminal's own.
STYLES = {
    "title": "1",
    "heading": "1;33",
    "rule": "2",
    "label": "36",
    "exception": "1;31",
    "id": "33",
    "where": "35",
    "link": "34",
    "gutter": "2",
    "hit": "1",
    "muted": "2",
    "derived": "2;3",
}

class Page:
    def __init__(self) -> None:
        self.lines: list[Line] = []

    def line(self, *spans: Span | str) -> None:
        self.lines.append([("", s) if isinstance(s, str) else s for s in spans])

    def blank(self) -> None:
        self.lines.append([])

    def section(self, title: str) -> None:
        self.blank()
        self.line(("heading", title))
        self.line(("rule", "-" * len(title)))

    def code(self, code: str, start: int | None = None, hit: tuple[int, int] | None = None, indent: str = "    ") -> None:
        # Snippets end lines at newlines only (as Python does): a form feed or U+2028 is not a line.
        lines = code.split("\n")
        if lines[-1] == "":
            lines.pop()
        if start is None:
            for text in lines:
                self.line(indent + text)
            return
        width = len(str(start + len(lines)))
        for i, text in enumerate(lines):
            n = start + i
            style = "hit" if hit and hit[0] <= n <= hit[1] else ""
            self.line(("gutter", f"  {n:>{width}} | "), (style, text))


def _history(page: Page, history: dict[str, Any] | None, record: dict[str, Any], others: Others | None) -> None:
    rows = history_rows(history, record, others)
    if not rows:
        return
    page.section(HISTORY)
    note = history_note(history)
    if note:
        page.line("  ", ("muted", note))
    style = {"code": "", "entry": "id", "arrow": "", "text": ""}
    for label, pieces in rows:
        where = "where" if label == "Moved" else ""
        page.line("  ", ("label", f"{label}:"), " ", *((style[k] or where, " -> " if k == "arrow" else t) for k, t in pieces))


def _evidence(page: Page, evidence: Any) -> None:
    if not isinstance(evidence, list) or not evidence:
        return
    page.section("Reported in")
    for item in evidence:
        # a curated report need not have a title: its issue number names it then
        url = str(item.get("url") or "")
        page.line("  - ", str(item.get("title") or (issue_number(url) if url.count("/") >= 6 else url)))
        page.line("    ", ("link", str(item.get("url") or "")))
        if item.get("quote"):
            page.line("    ", ("muted", "> "), str(item["quote"]))


def _meaning(page: Page, meaning: dict[str, Any], when: str) -> None:
    derived = meaning_rows(meaning, when)
    if derived:
        page.section(TITLE)
        for label, text in derived:
            page.line("  ", ("label", f"{label}:"), f" {text}")
        page.line("  ", ("derived", NOTE))
    reps = meaning.get("reproductions") or []
    if reps:
        page.section(REPRODUCTIONS)
        for rep in reps:
            pattern = f"  (match: {rep['match']})" if rep.get("match") is not None else "  (no message pattern)"
            page.line("  ", ("where", f"{rep['path']}:{rep['line']}"), f" in {rep['qualname']}", ("muted", pattern))
            if rep.get("permalink"):
                page.line("  ", ("link", rep["permalink"]))
            page.code(rep["code"])
    callers = meaning.get("callers") or []
    if callers:
        page.section(CALLERS)
        for c in callers:
            entry = ("muted", f" [entry point: {c['entry_point']}]") if c.get("entry_point") else ("", "")
            page.line("  ", ("where", f"{c['path']}:{c['line']}"), f" in {c['qualname']}", entry)


def _what_to_do(page: Page, data: dict[str, Any]) -> None:
    rows = action_rows(data.get("meaning"))
    if not rows:
        return
    page.section(DO_TITLE)
    for label, text in rows:
        page.line("  ", ("label", f"{label}:"), f" {text}")
    for label, url in tracker_links(data):
        page.line("  ", ("label", f"{label}:"), " ", ("link", url))
    page.line("  ", ("derived", DO_NOTE))


def _explanation(page: Page, ex: dict[str, Any]) -> None:
    def bullets(title: str, items: list[str]) -> None:
        if items:
            page.section(title)
            for item in items:
                page.line(f"  - {item}")

    if ex.get("what_it_means"):
        page.section("What it means")
        page.line(ex["what_it_means"])
    when = ex.get("when_it_happens") or {}
    if when.get("trigger") or when.get("common_situations"):
        page.section("When it happens")
        if when.get("trigger"):
            page.line(f"  {when['trigger']}")
        for item in when.get("common_situations") or []:
            page.line(f"  - {item}")
    bullets("Solutions", ex.get("solutions") or [])
    fix = ex.get("example_fix") or {}
    if fix.get("before") or fix.get("after"):
        page.section("Example fix")
        page.line("  ", ("label", "Before:"))
        page.code(fix.get("before") or "")
        page.line("  ", ("label", "After:"))
        page.code(fix.get("after") or "")
    patterns = ex.get("defensive_patterns") or []
    if patterns:
        page.section("Defensive patterns")
        for p in patterns:
            page.line(f"  {p['strategy']}")
            page.code(p.get("code") or "")
    bullets("Prevention", ex.get("prevention") or [])
    _evidence(page, ex.get("evidence"))


def layout(data: dict[str, Any], others: Others | None = None) -> list[Line]:
    """The page of one record, given as its JSON data (``Record.model_dump(mode="json")``);
    ``others``: the records its history names that the caller could read (see ``history_page``)."""
    page = Page()
    title = data["title"]
    page.line(("title", title))
    page.line(("rule", "=" * min(len(title), 80)))
    page.blank()
    exc = data["exception"] or {}
    ancestor = exc.get("builtin_ancestor")
    ancestry = f" ({article(ancestor)} {ancestor})" if ancestor and ancestor != exc["name"] else ""
    if shows_exception(data):
        page.line(("label", "Exception:"), "  ",
                  unknown_exception(data) or ("exception", exc["qualname"]), ancestry)
    page.line(("label", "Kind:"), f"       {kind_text(data['kind'], data.get('native'))}")
    page.line(("label", "Message:"), f"    {shown_message(data)}")
    for label, text in surface_rows(data):
        page.line(("label", f"{label}:"), " " * max(1, 11 - len(label)), text)
    page.line(("label", "Id:"), "         ", ("id", data["id"]))
    model = (data.get("explanation") or {}).get("model")
    drafted = f" (machine-written by {model}, not reviewed)" if model else explained_note(data.get("explanation") or {})
    page.line(("label", "Explained:"), f"  {data['explanation_status']}", ("derived", drafted))

    _what_to_do(page, data)
    site = data["sites"][0]
    loc = data["location"]
    links = data["provenance"]["permalinks"]
    page.section("Source")
    page.line(("where", f"{loc['path']}:{loc['line']}"), f" in {loc['qualname']}")
    if loc.get("permalink"):
        page.line(("link", loc["permalink"]))
    else:
        page.line(("muted", f"(no permalink: {links.get('reason') or 'none recorded'})"))
    page.blank()
    snippet = site["snippet"]
    page.code(snippet["code"], snippet["start_line"], (site["line"], site["end_line"]))

    facts = fact_lines(site.get("facts"))
    caught = swallowed(data)
    if facts or caught:
        page.section(FACTS_TITLE)
        for text in facts:
            page.line(f"  {text}")
        if caught:
            page.line(f"  {caught}")

    got = inherited(data, others)
    if got:  # a retired entry's page: the explanation written for its successor, said as such
        page.blank()
        page.line(*(("id" if k == "entry" else "derived", t) for k, t in inherited_note(got)))
    _explanation(page, dict(got[0]["explanation"]) if got else data.get("explanation") or {})
    _meaning(page, data.get("meaning") or {}, trigger_label(data))
    _history(page, data.get("history"), data, others)
    related = data.get("related") or []
    if related:
        page.section("Related errors")
        for r in related:
            page.line("  ", ("id", r["id"]), f"  {r['title']}  ", ("muted", f"({r['reason']})"))
    sites = data["sites"]
    if len(sites) > 1:
        page.section(f"All {len(sites)} sites")
        for s in sites:
            page.line("  ", ("where", f"{s['path']}:{s['line']}"), f" in {s['qualname']}")
    prov = data["provenance"]
    commit, dated = shown_source(prov)
    page.blank()
    page.line(("muted", f"Last changed in {prov['repo']} at {commit} ({SINCE}){dated}."))
    return page.lines


def render_text(data: dict[str, Any], color: bool = False, others: Others | None = None) -> str:
    """The page as text for a terminal: every dataset string inert, coloured when ``color``."""
    return styled(layout(data, others), STYLES if color else None)
