"""Lineage links made by review: ``curated/<owner>/<name>/lineage/links.yaml``.

A history links a retired entry to its successor when a word rule says they are one error
(``versions.diff``: a rewording in one function, a twin elsewhere). A check worded anew (a
V0-engine check whose V1 check says the same thing in other words) has no such link, and no word
rule can make one safely. A person who read both checks' code says so here: "retired entry X is
succeeded by Y", with why, who, and the release and commit each side was read at. The file is
curated data like the foreign list: read as strictly, validated by ``model.records.CuratedLinks``.

``apply`` writes the links into a history's records (the fold's, a sync's) as they are written:
the retired record's ``history.replaced_by`` and ``replaced_by_review``, the successor's
``history.replaces``; a link made by review replaces a derived one (a reviewer read the code).
A link the records cannot take (an id not among them, an old entry that is live, one that would
make a cycle, a record with no history) is left out and said (``Applied.notes``): ``errcat curate
check`` refuses such a file (``problems``), a history run never fails on one. A reviewed link no
longer in the file is taken back out, so that the records always say what the file says; with no
file at all (a run away from the curated directory) the records keep the links they hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.base.layout import dataset_dir
from crawler.model.records import CuratedLinks
from crawler.model.shapes import RecordData

CURATED = Path("lineage") / "links.yaml"

#: How many successors a cycle check follows (``consume.lineage.MAX_CHAIN``'s bound).
_MAX_CHAIN = 64


def links_path(root: Path, owner: str, name: str) -> Path:
    return dataset_dir(root, owner, name) / CURATED


def load_links(root: Path | None, owner: str, name: str, memo: Path | None = None) -> CuratedLinks | None:
    """The reviewed links of a repository under the curated ``root`` (None without a file);
    CuratedError naming the file and line of the first problem. ``memo``: the curated files'
    memo in the cache (``explanations.read_model``).

    Every run that writes the links reads them before it crawls or folds anything (``sync``'s
    history, fold and sync, ``crawl._inputs`` for each crawl), so that an invalid file fails it
    at once, in one line, with nothing written: not at the render, after the crawls."""
    from crawler.catalogue.explanations import read_model

    if root is None:
        return None
    path = links_path(root, owner, name)
    if not path.is_file():
        return None
    found: CuratedLinks = read_model(path, CuratedLinks, memo)[0]
    return found


def default_links(owner: str, name: str) -> CuratedLinks | None:
    """:func:`load_links` from the curated directory a crawl reads (``explanations.default_root``)."""
    from crawler.catalogue.explanations import default_root
    from crawler.source.config import load_config

    return load_links(default_root(load_config(None).path), owner, name)


def _history(record: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    h = (record or {}).get("history")
    return h if isinstance(h, Mapping) else None


def _reaches(by_id: Mapping[str, Mapping[str, Any]], start: str, target: str, extra: Mapping[str, str] | None = None) -> bool:
    """Whether the chain of successors from ``start`` (``replaced_by``, or ``extra``'s link first) reaches ``target``."""
    current, seen = start, {start}
    for _ in range(_MAX_CHAIN):
        if current == target:
            return True
        nxt = (extra or {}).get(current) or (_history(by_id.get(current)) or {}).get("replaced_by")
        if not isinstance(nxt, str) or nxt in seen:
            return False
        seen.add(nxt)
        current = nxt
    return False


def problems(links: CuratedLinks, by_id: Mapping[str, Mapping[str, Any]], where: Path) -> dict[str, str]:
    """What ``errcat curate check`` refuses in ``links`` against a history's records (``by_id``),
    by the link's old id: an id not among them, an old entry that is live (or has no history: no
    retired record), a link that makes a cycle with the others and the derived ones."""
    out: dict[str, str] = {}
    reviewed = {link.old: link.new for link in links.links}
    for n, link in enumerate(links.links):
        at = f"{where}: links[{n}] {link.old} -> {link.new}"
        missing = [eid for eid in (link.old, link.new) if eid not in by_id]
        if missing:
            out[link.old] = f"{at}: {missing[0]} is not in this dataset"
            continue
        h = _history(by_id[link.old])
        if h is None or not h.get("retired"):
            out[link.old] = f"{at}: {link.old} is live here (a link names a retired entry's successor)"
            continue
        others = {old: new for old, new in reviewed.items() if old != link.old}
        if _reaches(by_id, link.new, link.old, others):
            out[link.old] = f"{at}: makes a cycle ({link.new}'s successors lead back to {link.old})"
    return out


@dataclass
class Applied:
    """What :func:`apply` did: links written, and one line for each left out or taken back."""

    applied: int = 0
    notes: list[str] = field(default_factory=list)


def apply(records: list[RecordData], links: CuratedLinks | None) -> Applied:
    """Write ``links`` into ``records`` (a history's, live and retired, as plain data), in place:
    each history a link changes becomes a new dict. See the module's docstring."""
    done = Applied()
    if links is None:
        return done
    by_id = {r["id"]: r for r in records}
    wanted = {link.old: link for link in links.links}

    def set_history(eid: str, **update: Any) -> None:
        record = by_id[eid]
        record["history"] = {**(record["history"] or {}), **update}

    def drop_replaces(eid: str | None, old: str) -> None:
        h = _history(by_id.get(eid or ""))
        if eid is not None and h is not None and old in (h.get("replaces") or []):
            set_history(eid, replaces=[x for x in h["replaces"] if x != old])

    # a link made by review the file no longer holds: taken back out
    for r in records:
        h = _history(r)
        if h is not None and h.get("replaced_by_review") is not None and r["id"] not in wanted:
            drop_replaces(h.get("replaced_by"), r["id"])
            set_history(r["id"], replaced_by=None, replaced_by_review=None)
            done.notes.append(f"{r['id']}: its reviewed link is no longer in the curated links, taken out")
    for old in sorted(wanted):
        link = wanted[old]
        h, succ = _history(by_id.get(old)), _history(by_id.get(link.new))
        if h is None or succ is None:
            done.notes.append(f"{old} -> {link.new}: {old if h is None else link.new} is not a record of this history, link left out")
            continue
        if not h.get("retired"):
            done.notes.append(f"{old} -> {link.new}: {old} is live, link left out")
            continue
        if _reaches(by_id, link.new, old):
            done.notes.append(f"{old} -> {link.new}: would make a cycle, link left out")
            continue
        before = h.get("replaced_by")
        if before != link.new:
            drop_replaces(before, old)
        set_history(old, replaced_by=link.new, replaced_by_review=link.review.model_dump(mode="json"))
        if old not in (succ.get("replaces") or []):
            set_history(link.new, replaces=sorted({*(succ.get("replaces") or []), old}))
        done.applied += 1
    return done
