"""An entry's lineage, read from its record's history: the releases that raised it, and what
succeeds it today.

A history catalogue keeps every entry it ever saw. A retired entry's ``history.replaced_by``
names the entry that succeeded it (the same error reworded, or raised as another exception),
which may itself be retired and succeeded in turn; ``history.replaced_by_review`` says when a
person linked them (a curated lineage link, ``catalogue.lineage_links``), not a word rule. ``chain`` follows those links to the end, so
that a paste in any release's wording is answered with the entry that raised it and the entry
that raises that error today. ``errcat match`` and ``errcat show`` use it, and so do the site's
pages and ``curate check``'s lineage.

The releases that raised an entry are the covered releases from ``first_seen`` to ``last_seen``
(a retired entry) or to the catalogue's newest release (a live one). Versions are compared by
their numbers (``v0.6.3`` and ``0.6.3`` are one release), as ``versions.tags`` orders tags.
Records are read as JSON data, as the pages read them: this module validates nothing and trusts
nothing but the types it checks.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from crawler.base.releases import has_numbers, release_key
from crawler.model.kinds import read_exception_word

#: How many successors ``chain`` follows: a longer chain than any history makes is a loop or a
#: forged dataset, and the chain stops there.
MAX_CHAIN = 64

#: A release as a user writes it: 0.6.3, v0.6.3, 0.6.3.post1, 0.7.0rc1, 0.6.3+cu118.
VERSION = re.compile(r"v?[0-9]+(?:\.[0-9]+){1,3}(?:(?:\.?post|\.?dev|rc|a|b)[0-9]+)?(?:\+[A-Za-z0-9.]{1,40})?")  # ASCII digits: PEP 440 reads no others

Read = Callable[[str], "Mapping[str, Any] | None"]


def version_key(version: str | None) -> Version | None:
    """A release's place among the releases (``crawler.base.releases``: ``v0.6.3`` and ``0.6.3``
    alike; a local tag such as ``+cu118`` is no part of the release); None when it has no numbers."""
    if not isinstance(version, str):
        return None
    release = version.partition("+")[0]
    return release_key(release) if has_numbers(release) else None


def _version(lifetime: Any) -> str | None:
    if isinstance(lifetime, Mapping) and isinstance(lifetime.get("version"), str) and lifetime["version"]:
        return str(lifetime["version"])
    return None


@dataclass(frozen=True)
class Releases:
    """The covered releases that raised an entry: from ``first`` to ``last`` (None: to the
    catalogue's newest release, the entry is live); ``removed_in`` the first without it."""

    first: str | None
    last: str | None
    retired: bool
    removed_in: str | None

    def text(self) -> str:
        """``v0.32.0``, ``v0.32.0 to v0.33.0`` (retired), ``since v0.32.0`` (live); empty when unknown."""
        if self.first is None and self.last is None:
            return ""
        if not self.retired:
            return f"since {self.first}" if self.first else ""
        if self.first and self.last and version_key(self.first) != version_key(self.last):
            return f"{self.first} to {self.last}"
        return self.first or self.last or ""

    def as_dict(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "retired": self.retired, "removed_in": self.removed_in}


def releases(history: Any) -> Releases | None:
    """The releases a record's history says raised it; None when it names none (a crawl of one
    commit, or a history over commits that are not releases)."""
    if not isinstance(history, Mapping):
        return None
    retired = history.get("retired") is True
    got = Releases(
        _version(history.get("first_seen")),
        _version(history.get("last_seen")) if retired else None,
        retired,
        _version(history.get("removed_in")) if retired else None,
    )
    return got if got.first or got.last or got.removed_in else None


def live_in(history: Any, version: str) -> bool | None:
    """Whether the entry was raised by release ``version``: True or False when its history says,
    None when it cannot (no releases recorded, or a version without numbers). A release older
    than the entry's first covered one is False: the history began there and the entry with it,
    or the entry is newer."""
    want = version_key(version)
    span = releases(history)
    if want is None or span is None:
        return None
    first, last, gone = version_key(span.first), version_key(span.last), version_key(span.removed_in)
    if first is not None and want < first:
        return False
    if span.retired and ((gone is not None and want >= gone) or (gone is None and last is not None and want > last)):
        return False
    return True


def covered_releases(histories: list[Any]) -> list[str]:
    """The releases a catalogue's histories name (first seen, last seen, removed in, moved in),
    oldest first, one spelling per release (``v0.6.3`` and ``0.6.3`` are one): the releases the
    site's filter and search box offer."""
    found: dict[Version, str] = {}
    for h in histories:
        if not isinstance(h, Mapping):
            continue
        moved: list[Any] = h["moved"] if isinstance(h.get("moved"), list) else []
        for lifetime in [h.get("first_seen"), h.get("last_seen"), h.get("removed_in"), *moved]:
            version = _version(lifetime)
            key = version_key(version)
            if version is not None and key is not None:
                found.setdefault(key, version)
    return [found[k] for k in sorted(found)]


def raised_range(history: Any, covered: list[str]) -> tuple[int, int] | None:
    """The first and last of ``covered`` (by position) that raised the entry (``live_in``); None
    when its history does not say, or none of them did."""
    raised = [n for n, version in enumerate(covered) if live_in(history, version)]
    return (raised[0], raised[-1]) if raised else None


def chain(record: Mapping[str, Any], read: Read) -> list[Mapping[str, Any]]:
    """The entries that succeeded ``record``, in order, following ``history.replaced_by`` (the
    last one is what raises that error today when it is live). ``read`` gives a record by id,
    or None when it cannot be read: the chain stops there, as it does at a loop."""
    out: list[Mapping[str, Any]] = []
    seen = {str(record.get("id"))}
    current: Mapping[str, Any] = record
    while len(out) < MAX_CHAIN:
        history = current.get("history")
        following = history.get("replaced_by") if isinstance(history, Mapping) else None
        if not isinstance(following, str) or following in seen:
            break
        nxt = read(following)
        if nxt is None or nxt.get("id") != following:
            break
        seen.add(following)
        out.append(nxt)
        current = nxt
    return out


def reviewed(old: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The review that linked ``old`` to its successor (``history.replaced_by_review``), None when
    the link was derived from the words."""
    history = old.get("history")
    review = history.get("replaced_by_review") if isinstance(history, Mapping) else None
    return review if isinstance(review, Mapping) else None


def elsewhere(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True when ``new`` succeeded ``old`` from another function: both name their sites' functions
    and share none (a twin, ``diff.twins``; ``diff.link`` pairs a rewording only in one function)."""
    before, after = ({(s.get("module"), s.get("qualname")) for s in r.get("sites") or [] if isinstance(s, Mapping)} for r in (old, new))
    return bool(before and after and not before & after)


def predecessors(records: Mapping[str, Mapping[str, Any]], entry_id: str) -> list[str]:
    """Every id whose chain of successors reaches ``entry_id`` (its earlier wordings), nearest
    first, among ``records`` (by id)."""
    before: dict[str, list[str]] = {}
    for eid, r in records.items():
        h = r.get("history")
        nxt = h.get("replaced_by") if isinstance(h, Mapping) else None
        if isinstance(nxt, str):
            before.setdefault(nxt, []).append(eid)
    out: list[str] = []
    queue = [entry_id]
    seen = {entry_id}
    while queue and len(out) < MAX_CHAIN * 4:
        for eid in sorted(before.get(queue.pop(0), [])):
            if eid not in seen:
                seen.add(eid)
                out.append(eid)
                queue.append(eid)
    return out


# --------------------------------------------------------------------------- reading a record's lineage

#: The largest record file read for its lineage (vLLM's largest record is under 1 MB).
MAX_RECORD_BYTES = 16 * 1024 * 1024
_ID = re.compile(r"[0-9a-f]{16}")
#: The sites of a record whose functions a lineage reads (vLLM's most raised entry has a few hundred).
MAX_SITES_READ = 10_000
_COMMIT = re.compile(r"[0-9a-f]{7,64}")


def _text(value: Any, limit: int = 100_000) -> bool:
    return isinstance(value, str) and len(value) <= limit


def _lifetime(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not (
        isinstance(value, dict)
        and _text(value.get("commit"), 64)
        and _COMMIT.fullmatch(value["commit"])
        and (value.get("version") is None or _text(value.get("version"), 200))
    ):
        raise ValueError("a lifetime")
    return {"version": value.get("version"), "commit": value["commit"]}


def _history(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("a history")
    nxt = value.get("replaced_by")
    if not (nxt is None or (_text(nxt, 16) and _ID.fullmatch(nxt))) or not isinstance(value.get("retired", False), bool):
        raise ValueError("a history")
    moved = value.get("moved") or []
    if not (isinstance(moved, list) and all(isinstance(m, dict) and _text(m.get("from_path"), 4096) and _text(m.get("to_path"), 4096) for m in moved)):
        raise ValueError("a move")
    review = value.get("replaced_by_review")
    if review is not None and not (
        nxt is not None and isinstance(review, dict) and all(_text(review.get(k), 2000) for k in ("why", "reviewer", "old_release", "commit"))
    ):
        raise ValueError("a review")
    return {
        "first_seen": _lifetime(value.get("first_seen")),
        "last_seen": _lifetime(value.get("last_seen")),
        "removed_in": _lifetime(value.get("removed_in")),
        "retired": value.get("retired", False),
        "replaced_by": nxt,
        "replaced_by_review": {k: review[k] for k in ("why", "reviewer", "old_release", "commit")} if review is not None else None,
        "moved": [{"from_path": m["from_path"], "to_path": m["to_path"], "version": _version(_lifetime(m) if m.get("commit") else None)} for m in moved],
    }


def read_record(errors: Path, entry_id: str) -> dict[str, Any] | None:
    """The part of ``errors/<id>.json`` a lineage reads (id, exception name, message text,
    history), each part's type checked; None when the file is missing, too large, not JSON, of
    another id, or any part is not what a record holds. ``errcat match`` reads records this way,
    not through ``publish.dataset`` and its models: the match path imports no pydantic
    (``test_match_imports_no_models``), and reads only these fields."""
    import orjson

    if not _ID.fullmatch(entry_id):
        return None
    try:
        with open(errors / f"{entry_id}.json", "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = fh.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            return None
        record = orjson.loads(data)
        word = read_exception_word(record)  # (a log's level, a response's error type: schema 6 names no exception)
        if not (
            isinstance(record, dict)
            and record.get("id") == entry_id
            and _text(word, 1000)
            and isinstance(record.get("message"), dict)
            and _text(record["message"].get("text"))
        ):
            return None
        sites = record.get("sites")
        # each site's function, for the lineage to tell a rewording from a twin elsewhere
        functions = (
            [
                {"module": s["module"], "qualname": s["qualname"]}
                for s in sites[:MAX_SITES_READ]
                if isinstance(s, dict) and _text(s.get("module"), 1000) and _text(s.get("qualname"), 1000)
            ]
            if isinstance(sites, list)
            else []
        )
        return {
            "id": entry_id,
            "exception": {"name": word},
            "message": {"text": record["message"]["text"]},
            "history": _history(record.get("history")),
            "sites": functions,
        }
    except (OSError, ValueError, TypeError):
        return None
