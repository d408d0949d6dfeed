"""When each error appeared and went away: ``Record.history`` over a sequence of versions.

History is a fold over versions, oldest first. The state is every id ever seen, each with its
latest record; ``advance`` moves it to the next version:

* an id present now gets ``last_seen`` = now, and keeps its ``first_seen`` (or starts one); a
  live record is written with ``last_seen`` null (the manifest's commit has it), so a record
  whose error did not change is the same file from one version to the next (#18);
* an id that was live and is gone is *retired*: kept as its last seen record, with
  ``removed_in`` and a note ("removed in v0.31.0"), so its id and page stay and are never
  reused for another error;
* a removed id linked to an added one (reworded, exception changed: see ``diff.link``) is
  recorded on both: ``replaces`` on the new, ``replaced_by`` on the retired one.

Ids are hashes of the error itself, so an id that comes back is the same error back (it is
revived, keeping its ``first_seen``); an id whose error key differs from the one stored is a hash
collision and stops the run. The output is the state, sorted by id: deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from crawler.base.errors import DataError, OutputError
from crawler.catalogue.entries import Identity
from crawler.catalogue.search import search_file
from crawler.extract.ids import entry_key
from crawler.model.records import History, Lifetime, Manifest, Record
from crawler.publish.dataset import PreviousRecord
from crawler.publish.pins import pin
from crawler.publish.writer import OverLimit, render_dataset
from crawler.versions.diff import link

State = dict[str, Record]

_VERSION_LIKE = re.compile(r"^v?\d+(?:\.\d+)+(?:[.-]?[A-Za-z0-9]+)*$")


def version_of(ref: str | None) -> str | None:
    """A ref that names a release (v0.33.0, 1.2, 2.0rc1), else None: branches are not versions."""
    return ref if ref and _VERSION_LIKE.fullmatch(ref) else None


def label(when: Lifetime) -> str:
    return when.version or when.commit[:12]


def is_retired(record: Record) -> bool:
    return bool(record.history and record.history.retired)


def _key(record: Record) -> tuple[str, ...]:
    return entry_key(record.sites[0].model_dump())


def advance(state: State, records: Iterable[Record], version: str | None, commit: str) -> State:
    """The state after one more version whose crawl produced ``records``."""
    now = Lifetime(version=version, commit=commit)
    current = {r.id: r for r in records}
    for eid, record in current.items():
        known = state.get(eid)
        if known is not None and _key(known) != _key(record):
            raise DataError(f"id collision: {eid} was {_key(known)!r} and is now {_key(record)!r}; ids are never reused")
    live_before = {eid: r for eid, r in state.items() if not is_retired(r)}
    gone = [live_before[eid] for eid in sorted(live_before.keys() - current.keys())]
    came = [current[eid] for eid in sorted(current.keys() - state.keys())]
    replaces: dict[str, list[str]] = {}
    replaced_by: dict[str, str] = {}
    for _, old, new, _ratio in link(gone, came):
        replaces.setdefault(new.id, []).append(old.id)
        replaced_by[old.id] = new.id

    out: State = {}
    for eid, record in current.items():
        before = state[eid].history if eid in state and state[eid].history else None
        out[eid] = record.model_copy(update={"history": History(
            first_seen=before.first_seen if before and before.first_seen else now,
            last_seen=now,
            replaces=sorted({*(before.replaces if before else []), *replaces.get(eid, [])}),
        )})
    for eid, record in state.items():
        if eid in out:
            continue
        h = record.history or History(first_seen=None, last_seen=None)
        if not h.retired:
            h = h.model_copy(update={
                "retired": True, "removed_in": now, "retired_note": f"removed in {label(now)}",
                "replaced_by": replaced_by.get(eid),
            })
        out[eid] = record.model_copy(update={"history": h})
    return dict(sorted(out.items()))


def seed(records: Iterable[Record], manifest: Manifest) -> State:
    """State from an existing dataset: its records as they are (a live one last seen at the
    dataset's commit), or (written without history) as first seen at its own commit."""
    records = list(records)
    if all(r.history is not None for r in records):
        now = Lifetime(version=version_of(manifest.ref), commit=manifest.commit)
        return {r.id: r if r.history is None or r.history.retired or r.history.last_seen is not None
                else r.model_copy(update={"history": r.history.model_copy(update={"last_seen": now})})
                for r in records}
    return advance({}, [r for r in records if not is_retired(r)], version_of(manifest.ref), manifest.commit)


def render_state(state: State, manifest: Manifest, previous: dict[str, PreviousRecord] | None = None,
                 vouched: dict[str, str] | None = None) -> dict[str, bytes]:
    """The files of the newest crawl's dataset with the state's records, live and retired, by id.

    The manifest is the newest crawl's (its input digest included, so a plain ``crawl`` of the
    same commit leaves the history alone), with entries counting live records and ``retired``
    the rest, and the search index of them all (what ``errcat match`` and the site read). Validated
    by ``render_dataset`` like every dataset, and held to the crawl's
    ``limits.max_output_bytes``: retired records pile up from release to release, so when a
    file would be larger, retired entries are left out first, the largest first, then live
    ones, and ``counts.omitted`` says how many.

    ``previous``: the record files of the dataset this one replaces; a record whose content is
    unchanged keeps the commit it names when that is one of ``vouched`` (commits the newest crawl
    descends from, with their dates), see ``publish.pins``.
    """
    records = [_written(state[eid]) for eid in sorted(state)]
    if previous:
        identity = Identity(repo=manifest.repo, commit=manifest.commit, commit_date=manifest.commit_date,
                            upstream_commit=manifest.upstream_commit, source=manifest.source)
        pin(records, previous, identity, (vouched or {}).get)
    data = manifest.model_dump(mode="json")
    data.pop("content_digest", None)
    omitted = 0
    while True:
        retired = sum(1 for r in records if (r.get("history") or {}).get("retired"))
        data["counts"] = {**data["counts"], "entries": len(records) - retired, "retired": retired, "omitted": omitted}
        try:
            return render_dataset(records, data, search_file(records, data), max_bytes=manifest.limits.max_output_bytes)
        except OverLimit as over:
            drop = _to_omit(over, records)
            if not drop:
                raise OutputError(f"{over} (max_output_bytes), and leaving out entries cannot make it smaller; "
                                  "nothing was written") from None
            records = [r for r in records if r["id"] not in drop]
            omitted += len(drop)


def _written(record: Record) -> dict[str, Any]:
    """A record as the dataset holds it: a live one's ``last_seen`` is the manifest's commit, left
    out so that the record changes only when its error does."""
    data = record.model_dump(mode="json")
    history = data.get("history")
    if history and not history["retired"]:
        data["history"] = {**history, "last_seen": None}
    return data


def _to_omit(over: OverLimit, records: list[dict[str, Any]]) -> set[str]:
    """The ids that make up each file's excess: retired before live, the largest share first."""
    retired = {r["id"] for r in records if (r.get("history") or {}).get("retired")}
    drop: set[str] = set()
    for _, excess, weights in over.shares():
        covered = 0.0
        for rid in sorted(weights, key=lambda rid: (rid not in retired, -weights[rid], rid)):
            if covered >= excess:
                break
            covered += weights[rid]
            drop.add(rid)
    return drop
