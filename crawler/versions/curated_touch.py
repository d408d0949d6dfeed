"""What the curated files say now of the reviewed texts a sync's change touches, for its changelog.

The pull request's body lists each reviewed text that upstream's change removed, reworded or
re-coded (``formats.markdown``); a maintainer reads it to know which ones need a look. A text
already settled by review must read as settled, with what was done, and not as one more to look
at (round 44 settled the six of vLLM 0.34.0 before its sync, and the body still asked for each):

* retired with ``errcat curate retire`` (the file's ``review.status``): its page keeps the text
  for the releases that raise it;
* linked to a successor by review (``lineage/links.yaml``), or reworded or re-typed under a new id,
  where the successor has a reviewed text of its own now (written for it, or moved with
  ``errcat curate move``);
* re-read for the new code under the same id (a change of guards, or of a message keyed by
  place): the review is of the new code, and with ``--still-holds-for-earlier`` keeps the old in
  ``review.also``.

What a page shows is read as the sync writes it, so that every line the changelog writes of a
page is true of it: an entry the change retires carries the text it had into the catalogue (its
record as it was, whatever its curated file does since); a live entry has a reviewed text when
its file's review is of its code (``explanations.status_for``); and a page without a text shows
its successor's, never its predecessor's (``history_page.inherited``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from crawler.catalogue.explanations import CuratedSet, status_for
from crawler.model.records import CuratedLinks
from crawler.model.shapes import RecordData


@dataclass(frozen=True)
class Recoded:
    """An entry with a reviewed text whose id stayed while its code changed (guards, or the
    message of an entry keyed by place): the text holds for the new code when a review says so."""

    id: str
    title: str
    changed: tuple[str, ...]
    #: the file's review is of the new code (re-read since), so its page still shows the text
    holds: bool
    #: and it keeps the old code in ``review.also`` (``--still-holds-for-earlier``)
    earlier: bool
    #: the commit the file was last reviewed at
    reviewed_at: str


@dataclass(frozen=True)
class CuratedNow:
    """The curated files as the sync's crawl read them, as far as the changelog needs them."""

    #: ids that had a reviewed text before the change (the records in place)
    had_text: frozenset[str] = frozenset()
    #: ids whose curated file is marked retired now
    retired: frozenset[str] = frozenset()
    #: ids that have a curated file now, whatever its status
    files: frozenset[str] = frozenset()
    #: old id -> (new id, who reviewed the link): the reviewed lineage links
    linked: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: ids the new crawl gives a reviewed text (``explanation_status`` curated)
    has_text: frozenset[str] = frozenset()
    recoded: tuple[Recoded, ...] = ()


def _code(record: RecordData) -> tuple[str, list[str]]:
    return record["message"]["text"], list(record["sites"][0]["facts"]["guards"])


def curated_now(before: Iterable[RecordData], after: Iterable[RecordData], curated: CuratedSet, links: CuratedLinks | None) -> CuratedNow:
    """``before``: the records in place (the catalogue the change starts from); ``after``: the
    new crawl's (its curated files merged); ``curated``: those files; ``links``: the reviewed
    lineage links."""
    old = {r["id"]: r for r in before if r.get("explanation_status") == "curated"}
    new = {r["id"]: r for r in after}
    entries = curated.entries
    recoded = []
    for eid, was in sorted(old.items()):
        now = new.get(eid)
        if now is None or eid not in entries or _code(was) == _code(now):
            continue
        entry = entries[eid]
        template, guards = _code(now)
        was_template, was_guards = _code(was)
        changed = tuple(part for part, differs in (("message", was_template != template), ("guards", was_guards != guards)) if differs)
        holds = status_for(entry, now) == "curated"
        earlier = holds and any(c.template == was_template and list(c.guards) == was_guards for c in entry.review.also or ())
        recoded.append(Recoded(eid, str(now.get("title") or ""), changed, holds, earlier, entry.review.commit))
    return CuratedNow(
        had_text=frozenset(old),
        retired=frozenset(eid for eid, e in entries.items() if e.review.status == "retired"),
        files=frozenset(entries),
        linked={link.old: (link.new, link.review.reviewer) for link in links.links} if links is not None else {},
        has_text=frozenset(eid for eid, r in new.items() if r.get("explanation_status") == "curated"),
        recoded=tuple(recoded),
    )


def curated_root(config: Path | None) -> Path:
    """The curated directory the sync's crawl reads (``crawl``: next to the config in use, else the errcat home's)."""
    from crawler.catalogue.explanations import default_root
    from crawler.source.config import load_config

    return default_root(load_config(config).path)
