"""One entry's page as data: its sections, in order, each a list of blocks, built once per record.

The terminal (``page.py``, ``errcat show``), the HTML site and the Markdown site (``site.py``)
render this model and only this model, so the three show the same sections in the same order
(``tests/consume/test_page_model.py`` holds them to it). What a page shows of a record is
decided here: which sections it has, in what order, and what is in each. How a block looks
(escaping included) is each renderer's business.

The order: the summary (the exception, the kind, what the kind adds, the id, who explained it,
where users reported it), the message, what to do, the history, then the explanation and the
code: what it means and when it happens, the source and how the code gets there, what errcat
derived, the curated solutions, fix, patterns and prevention, reproductions and callers, related
entries, every site, and where the entry was last changed.

Blocks hold the dataset's strings as they are (never escaped here): ``Piece`` lines of typed
text, label rows, curated Markdown, code. A record is read as JSON data, as every page reads it:
a kind's fields come from ``kinds.py`` (``surface_rows``, ``kind_text``, ``trigger_label``), so a
new kind or a new field of one changes that module, not the three renderers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crawler.catalogue.actions import settable
from crawler.catalogue.evidence import issue_number
from crawler.consume.history_page import TITLE as HISTORY
from crawler.consume.history_page import Others, Piece, history_note, history_rows, inherited, inherited_note
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

NOT_EXPLAINED = "Not yet explained."
#: "curated" text a reviewer accepted as a machine wrote it: read by a person, not written by one
ACCEPTED_TEXT = "yes, reviewed by a person"
STATUS_TEXT = {"curated": "yes, by a person", "draft": "draft: machine-written, not reviewed", "absent": "not yet by a person"}

# --------------------------------------------------------------------------- blocks
#
# A Piece is (kind, text): "text", "code" (a name or a value), "id" (this entry's id), "entry" (another entry's id),
# "arrow", "prose" (a derived sentence whose `backticks` are code), "exception" (the class
# raised), "link" (a URL, shown as itself or behind the row's label), "derived" (a note that says
# errcat wrote it), "muted".


@dataclass(frozen=True)
class Rows:
    """Label and value rows (a definition list): ``style`` names what they are ("summary",
    "todo", "history", "derived")."""

    rows: list[tuple[str, list[Piece]]]
    style: str = ""


@dataclass(frozen=True)
class Line:
    """A paragraph of pieces; ``style``: "", "muted", "derived", "inherited", "retired", "caught"."""

    pieces: list[Piece]
    style: str = ""


@dataclass(frozen=True)
class Links:
    """(label, URL) links on one line (the tracker's)."""

    links: list[tuple[str, str]]


@dataclass(frozen=True)
class Markdown:
    """Curated Markdown (reviewed text, still hostile to every renderer)."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """Curated Markdown items."""

    items: list[str]


@dataclass(frozen=True)
class Items:
    """A list of piece lines; ``ordered`` for a numbered list; ``style`` "code" when each is one name."""

    items: list[list[Piece]]
    ordered: bool = False
    style: str = ""
    #: what each item's first piece links to: ("entry", id), ("url", a permalink) or None
    links: list[tuple[str, str] | None] = field(default_factory=list)


@dataclass(frozen=True)
class Code:
    """Code: ``language`` "python", "cpp", "cuda", "rust", "message" (the raised message) or ""
    (curated code, whose language is read from it); numbered from ``start`` with ``hit``'s lines
    marked when ``start`` is given. ``label``: a heading above it ("Before")."""

    code: str
    language: str = "python"
    start: int | None = None
    hit: tuple[int, int] | None = None
    label: str = ""


@dataclass(frozen=True)
class Evidence:
    """The curated reports of the error: (url, title or None, quote or None, issue number)."""

    items: list[tuple[str, str | None, str | None, str]]


Block = Rows | Line | Links | Markdown | Bullets | Items | Code | Evidence


@dataclass(frozen=True)
class Section:
    """``key``: its name (the HTML section's id); ``title``: its heading, None for the summary
    and the notes between sections, which have none."""

    key: str
    title: str | None
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True)
class PageModel:
    title: str
    sections: list[Section]
    record: Mapping[str, Any]

    def titled(self) -> list[tuple[str, str]]:
        """(key, title) of each section with a heading, in order."""
        return [(s.key, s.title) for s in self.sections if s.title is not None]


@dataclass(frozen=True)
class Context:
    """What a page knows beyond its record: ``others``, the records its history names that the
    caller could read; ``digests``, commits of the catalogue that are digests of a wheel's
    files, not commits (``history_page.when`` shows such a release alone)."""

    others: Others | None = None
    digests: frozenset[str] = frozenset()


def file_digests(manifest: Mapping[str, Any] | None) -> frozenset[str]:
    """The catalogue's commits that are no commit: the manifest's own when its release records
    none (``release.commit`` "files", a digest of the wheel's files). A lifetime of an older
    release says so itself when its fold marks it (``"files": true``)."""
    release = (manifest or {}).get("release")
    if isinstance(release, Mapping) and release.get("commit") == "files" and isinstance((manifest or {}).get("commit"), str):
        return frozenset({str(manifest["commit"])}) if manifest else frozenset()
    return frozenset()


# --------------------------------------------------------------------------- building


def build(record: Mapping[str, Any], context: Context | None = None) -> PageModel:
    """The page of one record, given as its JSON data (``Record.model_dump(mode="json")``)."""
    ctx = context or Context()
    r = dict(record)
    got = inherited(r, ctx.others)
    # a retired entry's page shows the explanation written for its successor, said as such
    ex = dict(got[0]["explanation"]) if got else dict(r.get("explanation") or {})
    sections = [_summary(r), _message(r), _what_to_do(r), _history(r, ctx)]
    if got:
        sections.append(Section("inherited", None, [Line(inherited_note(got), "inherited")]))
    curated = _curated(ex)
    sections += [s for s in curated if s.key in ("what-it-means", "when-it-happens")]
    sections += [_source(r), _facts(r), _derived(r)]
    sections += [s for s in curated if s.key not in ("what-it-means", "when-it-happens")]
    if not curated:
        sections.append(Section("not-explained", None, [Line([("text", NOT_EXPLAINED)], "muted")]))
    sections += [_reproductions(r), _callers(r), _related(r), _sites(r), _provenance(r)]
    return PageModel(str(r["title"]), [s for s in sections if s.blocks], record)


def _summary(r: dict[str, Any]) -> Section:
    exc = r["exception"] or {}  # (none for a log or a response)
    rows: list[tuple[str, list[Piece]]] = []
    if shows_exception(r):
        unknown = unknown_exception(r)
        ancestor = exc.get("builtin_ancestor")
        ancestry: list[Piece] = [("text", f" ({article(ancestor)} "), ("code", ancestor), ("text", ")")] if ancestor and ancestor != exc["name"] else []
        rows.append(("Exception", [("text", unknown)] if unknown else [("exception", exc["qualname"]), *ancestry]))
    rows.append(("Kind", [("text", kind_text(r["kind"], r.get("native")))]))
    rows += [(label, [("code", text)]) for label, text in surface_rows(r)]
    rows.append(("Id", [("id", r["id"])]))
    ex = r.get("explanation") or {}
    status = r.get("explanation_status", "absent")
    shown = ACCEPTED_TEXT if status == "curated" and ex.get("accepted_as_is") else STATUS_TEXT.get(status, status)
    drafted: list[Piece] = (
        [("derived", " (machine-written by "), ("code", ex["model"]), ("derived", ", not reviewed)")]
        if ex.get("model")
        else [("derived", explained_note(ex))]
        if explained_note(ex)
        else []
    )
    rows.append(("Explained", [("status", status), ("text", shown), *drafted]))
    blocks: list[Block] = [Rows(rows, "summary")]
    evidence = ex.get("evidence") or []
    if isinstance(evidence, list) and evidence:
        blocks.append(
            Evidence([(str(e.get("url") or ""), e.get("title") or None, e.get("quote") or None, issue_number(str(e.get("url") or ""))) for e in evidence])
        )
    return Section("summary", None, blocks)


def _message(r: dict[str, Any]) -> Section:
    return Section("message", "Message", [Code(shown_message(r), "message")])


def _what_to_do(r: dict[str, Any]) -> Section:
    rows = action_rows(r.get("meaning"))
    if not rows:
        return Section("what-to-do", DO_TITLE)
    blocks: list[Block] = [Rows([(label, [("prose", text)]) for label, text in rows], "todo")]
    links = tracker_links(r)
    if links:
        blocks.append(Links(links))
    return Section("what-to-do", DO_TITLE, [*blocks, Line([("derived", DO_NOTE)], "derived")])


def _history(r: dict[str, Any], ctx: Context) -> Section:
    rows = history_rows(r.get("history"), r, ctx.others, ctx.digests)
    if not rows:
        return Section("history", HISTORY)
    note = history_note(r.get("history"))
    return Section("history", HISTORY, [*([Line([("text", note)], "retired")] if note else []), Rows(rows, "history")])


def _curated(ex: dict[str, Any]) -> list[Section]:
    """The curated sections that have something in them."""
    out = []
    if ex.get("what_it_means"):
        out.append(Section("what-it-means", "What it means", [Markdown(ex["what_it_means"])]))
    when = ex.get("when_it_happens") or {}
    when_blocks: list[Block] = []
    if when.get("trigger"):
        when_blocks.append(Markdown(when["trigger"]))
    if when.get("common_situations"):
        when_blocks.append(Bullets(list(when["common_situations"])))
    if when_blocks:
        out.append(Section("when-it-happens", "When it happens", when_blocks))
    if ex.get("solutions"):
        out.append(Section("solutions", "Solutions", [Bullets(list(ex["solutions"]))]))
    fix = ex.get("example_fix") or {}
    if fix.get("before") or fix.get("after"):
        out.append(Section("example-fix", "Example fix", [Code(fix.get("before") or "", "", label="Before"), Code(fix.get("after") or "", "", label="After")]))
    patterns = ex.get("defensive_patterns") or []
    if patterns:
        blocks: list[Block] = []
        for p in patterns:
            blocks.append(Markdown(p["strategy"]))
            if p.get("code"):
                blocks.append(Code(p["code"], ""))
        out.append(Section("defensive-patterns", "Defensive patterns", blocks))
    if ex.get("prevention"):
        out.append(Section("prevention", "Prevention", [Bullets(list(ex["prevention"]))]))
    return out


def _source(r: dict[str, Any]) -> Section:
    loc = r["location"]
    site = r["sites"][0]
    snippet = site["snippet"]
    where: list[Piece] = [("code", f"{loc['path']}:{loc['line']}"), ("text", " in "), ("code", loc["qualname"])]
    if loc.get("permalink"):
        where += [("text", " — "), ("link", loc["permalink"])]
    else:
        where += [("text", " — "), ("muted", f"(no permalink: {no_permalink(r)})")]
    # a record's line numbers are not trusted to be few: the range marked is cut to the snippet's lines
    first = max(loc["line"], snippet["start_line"])
    last = min(loc.get("end_line", loc["line"]), snippet["start_line"] + snippet["code"].count("\n"))
    language = str((site.get("native") or {}).get("language") or "python")
    return Section("source", "Source", [Line(where), Code(snippet["code"], language, snippet["start_line"], (first, last))])


def no_permalink(record: Mapping[str, Any]) -> str:
    """Why a record's permalinks are null, as its provenance says."""
    return (record["provenance"].get("permalinks") or {}).get("reason") or "none recorded"


def _facts(r: dict[str, Any]) -> Section:
    facts = fact_lines(r["sites"][0].get("facts"))
    caught = swallowed(r)
    blocks: list[Block] = [Items([[("code", x)] for x in facts], style="code")] if facts else []
    if caught:
        blocks.append(Line([("prose", caught)], "caught"))
    return Section("facts", FACTS_TITLE, blocks)


def _derived(r: dict[str, Any]) -> Section:
    rows = meaning_rows(r.get("meaning"), trigger_label(r), lambda knob: settable(r, knob))
    if not rows:
        return Section("derived", TITLE)
    return Section("derived", TITLE, [Rows([(label, [("prose", text)]) for label, text in rows], "derived"), Line([("derived", NOTE)], "derived")])


def _reproductions(r: dict[str, Any]) -> Section:
    blocks: list[Block] = []
    for rep in (r.get("meaning") or {}).get("reproductions") or []:
        where: list[Piece] = [("code", f"{rep['path']}:{rep['line']}"), ("text", " in "), ("code", rep["qualname"])]
        where += [("muted", f"  (match: {rep['match']})" if rep.get("match") is not None else "  (no message pattern)")]
        if rep.get("permalink"):
            where += [("text", " — "), ("link", rep["permalink"])]
        blocks += [Line(where), Code(rep["code"], "python")]
    return Section("reproductions", REPRODUCTIONS, blocks)


def _callers(r: dict[str, Any]) -> Section:
    items = [
        [
            ("code", f"{c['path']}:{c['line']}"),
            ("text", " in "),
            ("code", c["qualname"]),
            *([("muted", f" [entry point: {c['entry_point']}]")] if c.get("entry_point") else []),
        ]
        for c in (r.get("meaning") or {}).get("callers") or []
    ]
    return Section("callers", CALLERS, [Items(items, ordered=True)] if items else [])


def _related(r: dict[str, Any]) -> Section:
    related = r.get("related") or []
    items: list[list[Piece]] = [[("text", x["title"]), ("text", " "), ("muted", f"({x['reason']})")] for x in related]
    return Section("related", "Related errors", [Items(items, links=[("entry", x["id"]) for x in related])] if items else [])


def _sites(r: dict[str, Any]) -> Section:
    sites = r["sites"]
    if len(sites) < 2:
        return Section("sites", None)
    items: list[list[Piece]] = [[("code", f"{s['path']}:{s['line']}"), ("text", " in "), ("code", s["qualname"])] for s in sites]
    return Section("sites", f"All {len(sites)} sites", [Items(items, links=[("url", s["permalink"]) if s.get("permalink") else None for s in sites])])


def _provenance(r: dict[str, Any]) -> Section:
    prov = r["provenance"]
    commit, dated = shown_source(prov)
    return Section("provenance", "Last changed", [Line([("text", f"{prov['repo']} at "), ("code", commit), ("text", f" ({SINCE}){dated}.")])])


def status_word(pieces: list[Piece]) -> list[Piece]:
    """A summary row with its explanation's status said as its word (``curated``, ``draft``: what
    ``errcat curate`` and the dataset call it), as the terminal and Markdown pages say it; the
    HTML page says it in words for a reader."""
    for i, (kind, text) in enumerate(pieces):
        if kind == "status" and text != "absent" and i + 1 < len(pieces) and pieces[i + 1][0] == "text":  # (absent: "not yet by a person")
            return [*pieces[:i], ("text", text), *pieces[i + 2 :]]
    return pieces
