"""A diff report as text: oneline (terminals), markdown (the pull-request changelog), github
(workflow annotations) and json (the ``diff`` schema).

Crawled text (titles, templates, paths) is upstream's to choose, so every format escapes it for
where it lands, with ``sink``: code spans in the changelog (no markup, HTML, links or mentions),
``%``/LF (and ``:``/``,`` in properties) in workflow commands, so a message can neither forge
markup nor a second command; controls are shown escaped in all of them.
"""

from __future__ import annotations

from collections.abc import Callable

from crawler.base.jsonio import dumps
from crawler.base.sink import (
    command_data,
    command_property,
    md_code,
    md_link,
    single_line,
)
from crawler.model.diff import KIND_ORDER, Change, ChangeKind, DiffReport, Side
from crawler.model.kinds import KINDS, RAISE
from crawler.versions.curated_touch import CuratedNow
from crawler.versions.diff import WORDING, answer

#: Characters of entries the markdown changelog lists, most telling classes first; past it each
#: class says how many more there are. A pull request body is capped at 65536 characters.
MARKDOWN_BUDGET = 60_000
#: Entries of each class listed before the budget goes to the most telling classes.
SAMPLE = 10
#: Curated texts the changelog lists as touched by the change before it says how many more.
CURATED_SHOWN = 40


def format_report(report: DiffReport, fmt: str) -> str:
    return FORMATS[fmt](report)


# --------------------------------------------------------------------------- oneline


def oneline(report: DiffReport) -> str:
    lines = [f"{c.location.path}:{c.location.line}: {single_line(c.summary)} [{c.id}]" for c in report.changes]
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------- markdown


def _where(c: Change) -> str:
    return md_code(f"{c.location.path}:{c.location.line}")


def _entry(c: Change) -> str:
    kind = c.kind
    head = f"{md_link(c.title, c.location.permalink)} · {md_code(answer(c.exception, c.entry_kind, c.status_code))}"
    if kind is ChangeKind.MOVED:
        moves = []
        for s in c.sites:
            assert s.old is not None and s.new is not None
            to = f"line {s.new.line}" if s.new.path == s.old.path else md_code(f"{s.new.path}:{s.new.line}")
            moves.append(f"{md_code(f'{s.old.path}:{s.old.line}')} → {to}")
        detail = "; ".join(moves)
    elif kind is ChangeKind.REWORDED:
        # the title is the first 60 characters: both wordings whole, where they differ further on
        detail = f"{_where(c)}, was {md_code(c.old_template or '')}, now {md_code(c.template)} ({md_code(c.old_id or '')} → {md_code(c.id)})"
    elif kind is ChangeKind.EXCEPTION_CHANGED:
        # the head shows the new answer; a log's is its level, a response's its status and type
        was = md_code(answer(c.old_exception or "", c.entry_kind, c.old_status_code))
        before = KINDS[c.entry_kind or RAISE].was.format(was=was)
        ids = md_code(c.id) if c.old_id == c.id else f"{md_code(c.old_id or '')} → {md_code(c.id)}"
        detail = f"{_where(c)}, {before} ({ids})"
    elif kind is ChangeKind.SITES_ADDED:
        detail = "now also at " + ", ".join(md_link(f"{s.new.path}:{s.new.line}", s.new.permalink) for s in c.sites if s.new)
    elif kind is ChangeKind.SITES_REMOVED:
        detail = "no longer at " + ", ".join(md_code(f"{s.old.path}:{s.old.line}") for s in c.sites if s.old)
    else:
        detail = f"{_where(c)} in {md_code(c.location.qualname)}"
        if len(c.sites) > 1:
            detail += f" and {len(c.sites) - 1} more site{'s' if len(c.sites) > 2 else ''}"
    ident = "" if kind in (ChangeKind.REWORDED, ChangeKind.EXCEPTION_CHANGED) else f" ({md_code(c.id)})"
    return f"- {head} — {detail}{ident}"


def _revision(side: Side) -> str:
    """A side's commit, abbreviated; a release's name when it records no commit (its dataset's
    commit is then a digest of its files, no commit)."""
    if side.release is not None and side.upstream_commit is None:
        return side.release
    return side.commit[:12]


def _cut(text: str, width: int = WORDING) -> str:
    """A text read from a dataset in at most ``width`` characters: a title is the message's first 60
    as errcat writes it, but the dataset in place is hostile, and the curated section is listed
    before the budget is shared out (a title of 70,000 characters took the body past GitHub's 65,536)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _curated_touched(report: DiffReport, now: CuratedNow) -> list[str]:
    """The reviewed texts a change touches, in two lists: those left for a maintainer to look at,
    with the command that settles each, and those already settled by review, with what was done
    (``curated_touch``): an entry with a curated text that upstream removed, or reworded or
    re-typed under a new id, or whose code changed under its id. What each line says a page shows
    is what the render shows (a page without a text shows its successor's, never its
    predecessor's). Ids are checked hex; nothing crawled is shown but in code spans."""
    look: list[str] = []
    settled: list[str] = []
    release = md_code(_cut(report.new.label))
    for c in report.changes:
        if c.kind is ChangeKind.REMOVED and c.id in now.had_text:
            _removed(c, now, release, look, settled)
        elif c.kind in (ChangeKind.REWORDED, ChangeKind.EXCEPTION_CHANGED) and c.old_id in now.had_text and c.old_id != c.id:
            _succeeded(c.old_id or "", c.id, c.kind.label, now, look, settled)
    for r in now.recoded:
        what = f"its {' and '.join(r.changed)} changed in {release}"
        head = f"- {md_code(r.id)} ({md_code(_cut(r.title))}): {what}"
        if not r.holds:
            look.append(
                f"{head}, since the review at {md_code(r.reviewed_at[:12])}: its page shows the text as a draft that may be out of date. "
                "Re-read it for the new code, "
                f"then `errcat curate review {r.id}` (with `--still-holds-for-earlier` when it is right for both releases)."
            )
        elif r.earlier:
            settled.append(f"{head}: re-read for both releases (`errcat curate review --still-holds-for-earlier`: the review keeps the earlier code too).")
        else:
            settled.append(f"{head}: re-read and reviewed for the new code.")
    if not look and not settled:
        return []
    out: list[str] = []
    if look:
        out += ["", f"### Curated texts to look at ({len(look)})", "", *_capped(look, ": `errcat curate check` lists every one")]
    if settled:
        if not look:
            out += ["", "No curated text to look at: each one this change touches was settled by review (below)."]
        out += ["", f"### Curated texts already settled ({len(settled)})", "", *_capped(settled, "")]
    return out + ["", "`errcat curate check --strict` on the new catalogue checks every curated text, its see-also ids and evidence."]


def _capped(lines: list[str], rest: str) -> list[str]:
    more = len(lines) - CURATED_SHOWN
    return lines[:CURATED_SHOWN] + ([f"- … and {more} more{rest}."] if more > 0 else [])


def _removed(c: Change, now: CuratedNow, release: str, look: list[str], settled: list[str]) -> None:
    """An entry with a reviewed text that upstream removed: linked to a successor by review,
    retired, or still to decide."""
    if c.id in now.linked:
        _succeeded(c.id, now.linked[c.id][0], "removed upstream, linked by review", now, look, settled, title=c.title)
        return
    head = f"- {md_code(c.id)} ({md_code(_cut(c.title))}) was removed upstream"
    kept = "its page keeps the reviewed text for the releases that raise it"
    if c.id in now.retired:
        settled.append(f"{head}: retired by review (`errcat curate retire`); {kept}.")
    else:
        look.append(f"{head}; {kept}. If a check of {release} tests the same thing, link it in `lineage/links.yaml`; else `errcat curate retire {c.id}`.")


def _succeeded(old: str, new: str, how: str, now: CuratedNow, look: list[str], settled: list[str], title: str | None = None) -> None:
    """An entry with a reviewed text and its successor (``new``): settled when the successor has a
    reviewed text of its own; else its page shows none (a page shows its successor's text, never
    its predecessor's), and the maintainer moves or copies the text."""
    named = f" ({md_code(_cut(title))})" if title is not None else ""
    head = f"- {md_code(old)}{named} → {md_code(new)} ({how})"
    # the retired record carries the text it had into this catalogue, whatever its file does since
    old_page = f"{md_code(old)}'s page keeps the text it had{' (retired by review)' if old in now.retired else ''} for the releases that raise it"
    if new in now.has_text:
        settled.append(f"{head}: {md_code(new)} has a reviewed text of its own; {old_page}.")
        return
    draft = f" ({md_code(new)}'s file is not reviewed for its code yet: `errcat curate review {new}`)" if new in now.files else ""
    look.append(
        f"{head}: {md_code(new)}'s page shows no reviewed text{draft}, as a page never shows its predecessor's; {old_page}. "
        f"Re-read the text for {md_code(new)}'s code, then `errcat curate move {old} {new}` ({md_code(new)}'s page gets it, and a crawl "
        f"of an earlier release shows none for {md_code(old)}), or copy it to {md_code(new)}'s file, edit and review that, and "
        f"`errcat curate retire {old}` (each release keeps its own)."
    )


def _diff_command(report: DiffReport) -> str:
    """The command that lists every change of the report, as a maintainer can run it: the two
    releases from the package index when both sides are one, else the two commits (crawled from
    the upstream, ``errcat diff``'s default ``--repo``). A bare ``errcat diff --format json`` is no
    command: it takes the two sides."""
    old, new = report.old, report.new
    if old.release and new.release:
        return md_code(f"errcat diff {_cut(old.release)} {_cut(new.release)} --pypi --format json")
    if old.release is None and new.release is None:
        return md_code(f"errcat diff {old.commit} {new.commit} --format json")
    return "`errcat diff OLD NEW --format json`"


def markdown(report: DiffReport, budget: int = MARKDOWN_BUDGET, curated: CuratedNow | None = None) -> str:
    """The changelog: a heading, the counts, the curated texts the change touches (``curated``:
    what the curated files say now of the texts before it, ``curated_touch``), to look at and
    already settled, then each class's entries, most telling first."""
    old, new = report.old, report.new
    out = [f"## Error catalogue: {md_code(report.repo)} {md_code(old.label)} → {md_code(new.label)}", ""]
    out.append(
        f"{md_code(_revision(old))} → {md_code(_revision(new))}: "
        f"{old.entries} → {new.entries} entries, {len(report.changes)} change{'s' if len(report.changes) != 1 else ''}, "
        f"{report.counts.unchanged} unchanged."
    )
    out.append("")
    if not report.changes:
        out.append("No changes.")
        return "\n".join(out) + "\n"
    out += ["| Change | Count |", "| --- | ---: |"]
    for kind in ChangeKind:
        n = report.counts.of(kind)
        if n:
            out.append(f"| {kind.label.capitalize()} | {n} |")
    touched = _curated_touched(report, curated or CuratedNow())
    out += touched
    budget -= sum(len(line) + 1 for line in touched)
    by_kind: dict[ChangeKind, list[Change]] = {}
    for c in report.changes:
        by_kind.setdefault(c.kind, []).append(c)
    sections = [(kind, by_kind[kind], [_entry(c) for c in by_kind[kind]]) for kind in sorted(by_kind, key=KIND_ORDER.__getitem__)]
    # Every class shows a sample first; what is left of the budget goes to the most telling.
    shown = {kind: 0 for kind, _, _ in sections}
    left = budget
    for quota in (SAMPLE, None):
        for kind, _, lines in sections:
            stop = len(lines) if quota is None else min(len(lines), quota)
            while shown[kind] < stop and len(lines[shown[kind]]) + 1 <= left:
                left -= len(lines[shown[kind]]) + 1
                shown[kind] += 1
    for kind, entries, lines in sections:
        out += ["", f"### {kind.label.capitalize()} ({len(entries)})", ""]
        out += lines[: shown[kind]]
        if shown[kind] < len(entries):
            out.append(f"- … and {len(entries) - shown[kind]} more: {_diff_command(report)} lists every change.")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- github annotations


def github(report: DiffReport) -> str:
    lines = []
    for c in report.changes:
        title = command_property(f"errcat: {c.kind.label}")
        props = f"file={command_property(c.location.path)},line={c.location.line},title={title}"
        lines.append(f"::notice {props}::{command_data(c.summary + f' [{c.id}]')}")
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------- json


def json_report(report: DiffReport) -> str:
    return dumps(report).decode("utf-8")


#: Every format by the name ``errcat diff --format`` takes, in the order its help lists them.
FORMATS: dict[str, Callable[[DiffReport], str]] = {
    "oneline": oneline,
    "markdown": markdown,
    "github": github,
    "json": json_report,
}
