"""When each error appeared and went away: ``Record.history`` over a sequence of versions.

History is a fold over versions, oldest first. The state (``Fold``) is every id ever seen, each
with its latest record; ``Fold.add`` moves it to the next version:

* an id present now gets ``last_seen`` = now, and keeps its ``first_seen`` (or starts one); a
  live record is written with ``last_seen`` null (the manifest's commit has it), so a record
  whose error did not change is the same file from one version to the next (#18);
* an id that was live and is gone is *retired*: kept as its last seen record, with
  ``removed_in`` and a note ("removed in v0.31.0"), so its id and page stay and are never
  reused for another error;
* a removed id linked to an added one (reworded, exception changed: see ``diff.link``) is
  recorded on both: ``replaces`` on the new, ``replaced_by`` on the retired one;
* an id whose primary site's file no longer raises it, now raised in a file that did not
  before (a file renamed, the raise moved to another module), gets a ``moved`` entry (see
  ``_move``); lines shifting, or a site added or dropped beside the others, are no move;
* an id missing from a version whose crawl did not read one of its files (the manifest's
  ``skipped``: left out so that no file of the dataset is over ``max_output_bytes``, too large,
  too many sites, not parsed) is *unread* there, not gone: it stays live with the history it
  had, its ``last_seen`` the last version that had it (so a record written then keeps it), and
  is neither retired nor linked to a successor until a version that read its files lacks it.

Ids are hashes of the error itself, so an id that comes back is the same error back (it is
revived, keeping its ``first_seen``); an id whose error key differs from the one stored is a hash
collision and stops the run. The output is the state, sorted by id: deterministic.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple, cast, overload

import orjson

from crawler.base.dataset_files import record_file as record_path
from crawler.base.errors import DataError, OutputError
from crawler.base.jsonio import dumps_line, dumps_row
from crawler.catalogue import lineage_links
from crawler.catalogue.entries import Identity
from crawler.catalogue.lineage_links import Applied
from crawler.catalogue.search import RowMemo, search_rows
from crawler.extract.ids import entry_key
from crawler.extract.runner import default_jobs
from crawler.model.records import Counts, CuratedLinks, History, Lifetime, Manifest, Move, Record
from crawler.model.shapes import RecordData
from crawler.publish import jsonl
from crawler.publish.dataset import PreviousRecord
from crawler.publish.pins import repinned
from crawler.publish.release_cache import Kept, record_file
from crawler.publish.writer import Data, OverLimit, Reuse, index_row, render_dataset, render_files
from crawler.versions import history_reuse
from crawler.versions.carried import Carried, Carry, MemoChanged, RowsOf, RowsRefused, facts
from crawler.versions.diff import link, twins
from crawler.versions.packed_store import PackedStore, Slot

_VERSION_LIKE = re.compile(r"^v?[0-9]+(?:\.[0-9]+)+(?:[.-]?[A-Za-z0-9]+)*$")  # ASCII digits, as PEP 440 reads


def version_of(ref: str | None) -> str | None:
    """A ref that names a release (v0.33.0, 1.2, 2.0rc1), else None: branches are not versions."""
    return ref if ref and _VERSION_LIKE.fullmatch(ref) else None


def release_version(manifest: Manifest) -> str | None:
    """The release a dataset is of: its package's version (made from a wheel), else its ref when
    that names one (v0.33.0); None for a branch or a bare commit."""
    if manifest.release is not None:
        return manifest.release.version
    return version_of(manifest.ref)


def files_digest(manifest: Manifest) -> bool:
    """Whether a dataset's commit is no commit but a digest of its release's files (a package that
    records none): a lifetime or move of it says so (``"files": true``), so no page shows it as one."""
    return manifest.release is not None and manifest.release.commit == "files"


def lifetime(manifest: Manifest, version: str | None) -> Lifetime:
    """A dataset's state as a history names it: ``version`` (what the caller reads the dataset's
    release as) at its commit, marked when that commit is a files digest."""
    return Lifetime(version=version, commit=manifest.commit, files=files_digest(manifest))


def revision(manifest: Manifest) -> str:
    """What a summary names a dataset's source by: its commit, abbreviated, or the release of a
    package that records no commit (whose ``commit`` is a digest of its files, no commit)."""
    release = manifest.release
    if release is not None and release.commit == "files":
        return f"{release.package}=={release.version}"
    return manifest.commit[:12]


def release_order(version: str) -> tuple[Any, str]:
    """A sort key putting releases in PEP 440 order (0.6.6 < 0.6.6.post1 < 0.7.0rc1 < 0.7.0; a
    tag's leading v read as PEP 440 does); a version PEP 440 cannot read goes by its numbers."""
    from crawler.base.releases import release_key

    return release_key(version), version


def label(when: Lifetime) -> str:
    return when.version or when.commit[:12]


def _record_key(record: RecordData) -> tuple[str, ...]:
    return entry_key(record["sites"][0])


def _key_inputs(record: RecordData) -> bytes:
    """The SHA-256 of what ``entry_key`` reads of a record's primary site: equal inputs, equal key,
    so a release's unchanged entries skip normalising their templates again (most of a fold's
    work). A digest, not the inputs (a few hundred bytes for each id ever seen, only ever compared)."""
    site = record["sites"][0]
    # keys sorted: a record a crawl made and the same record read from a dataset hold the
    # template's keys in another order (unsorted, no sync's new record matched its old self)
    return hashlib.sha256(
        orjson.dumps(
            [
                site["exception_qualname"],
                site["exception"],
                site["template"],
                site.get("kind"),
                site["module"],
                site["qualname"],
                site.get("condition"),
                site.get("log"),
                site.get("response"),
            ],
            option=orjson.OPT_SORT_KEYS,
        )
    ).digest()


def _paths(record: RecordData) -> tuple[str, ...]:
    # interned: the ids of one file share its path, rather than one copy each from each release read
    return tuple(sys.intern(site["path"]) for site in record["sites"])


def _move(before: tuple[str, ...], after: tuple[str, ...], now: Lifetime, unread: frozenset[str] = frozenset()) -> Move | None:
    """The move between two versions' site paths (the primary's first, the rest by path): the
    primary's file no longer has the error and a file that had none of its sites now does.
    ``unread``: the files the later version's crawl skipped; one of them losing the error is no move."""
    new = [path for path in after if path not in before]
    if not before or before[0] in after or not new or before[0] in unread:
        return None
    return Move(version=now.version, commit=now.commit, from_path=before[0], to_path=new[0], files=now.files)


def _unread(paths: tuple[str, ...], skipped: frozenset[str]) -> bool:
    """Whether a version whose crawl skipped the files ``skipped`` could not see an entry raised in
    ``paths``: one of its files was not read (the rest may have lost it while that one kept it)."""
    return bool(skipped) and not skipped.isdisjoint(paths)


def skipped_paths(manifest: Manifest) -> frozenset[str]:
    """The source files a dataset's crawl did not read (its manifest's ``skipped``, whatever the
    reason: over ``max_output_bytes``, too large, too many sites, not parsed)."""
    return frozenset(s.path for s in manifest.skipped)


def _exact(made: bytes) -> bytes:
    """``made`` (bytes ``orjson.dumps`` returned) as bytes of its own size: orjson's keep the
    buffer they were written into, 4 KiB at the least (a record of 5 KB held 15 KB), and the
    fold keeps one of each per id ever seen."""
    return memoryview(made).tobytes()


def _pack(record: RecordData) -> bytes:
    return orjson.dumps({k: v for k, v in record.items() if k != "history"})  # kept in the store: its own size does not matter


def _unpack(packed: bytes) -> RecordData:
    """A packed record as a dict, whatever its ``history`` (the caller sets it): a line of the
    release cache that is not a record (the cache edited by hand) stops the run in one line."""
    try:
        record = orjson.loads(packed)
    except orjson.JSONDecodeError:
        record = None
    if not isinstance(record, dict) or not record.get("sites"):
        raise DataError("a record kept in the cache directory is damaged; run again with --no-cache")
    record.pop("history", None)
    return cast("RecordData", record)  # checked as far as the fold reads it; the writer validates it whole


#: The history field of a record file as ``release_cache.record_file`` keeps it.
_NO_HISTORY = b'\n  "history": null'


def _with_history(packed: bytes, history: Any) -> bytes | None:
    """The record file of a record packed as ``release_cache.record_file`` made it, with
    ``history``: a record file is its fields in key order, each a line with its value as
    ``orjson`` writes it, so this is exactly ``dumps_record`` of the record, for a small part of
    its cost. None for a record packed otherwise (by the fold itself, from a dict)."""
    return _with_history_json(packed, orjson.dumps(history, option=orjson.OPT_SORT_KEYS))


def _with_history_json(packed: bytes, history: bytes) -> bytes | None:
    """:func:`_with_history`, the history given as the JSON its record file holds."""
    if not packed.startswith(b"{\n") or packed.count(_NO_HISTORY) != 1:
        return None
    return packed.replace(_NO_HISTORY, b'\n  "history": ' + history, 1)


class _Item(NamedTuple):
    """One id of the version being added: its error key, the inputs of that key (b"": not known),
    its sites' paths and the record packed (None: pack it from the record)."""

    key: tuple[str, ...]
    key_inputs: bytes
    paths: tuple[str, ...]
    packed: bytes | None


@dataclass(slots=True)
class _Entry:
    """What the fold keeps of one id: its error key (for the collision check), the digest of that
    key's inputs, its history, its sites' paths (for moves) and where its latest record is, as
    JSON bytes, in the fold's store (``packed_store``: a file, not the heap).

    An id the fold retired keeps less (``Fold._retire``): no key (made again from its record, in
    the store, if the id is ever seen again) and its history as JSON bytes (``kept``), a model
    made each time it is read: retired ids pile up release after release, live ones do not."""

    key: tuple[str, ...]
    key_inputs: bytes
    kept: History | bytes | None
    paths: tuple[str, ...]
    slot: Slot

    @property
    def history(self) -> History | None:
        """The history (made anew from its JSON, for a retired id's: not to be told apart by ``id``)."""
        kept = self.kept
        return History.model_validate_json(kept) if isinstance(kept, bytes) else kept

    @history.setter
    def history(self, history: History | None) -> None:
        self.kept = history

    @property
    def model(self) -> History | None:
        """The history as a model the entry holds (None for one kept as JSON): the same object each time."""
        kept = self.kept
        return None if isinstance(kept, bytes) else kept

    @property
    def retired(self) -> bool:
        kept = self.kept
        return isinstance(kept, bytes) or bool(kept and kept.retired)


#: The slot of a retired record carried as read (``Fold.keep``): in no store, its bytes b"".
HELD = Slot(0, 0, 0)


class Unread(NamedTuple):
    """A retired record a sync did not read (``Fold.carry``): its errors.jsonl line's digest and
    size, and the facts errcat kept of it when it rendered that line (``versions.carried.facts``)."""

    line: bytes
    size: int
    facts: Mapping[str, Any]


class Fold:
    """The history state, one version at a time: every id ever seen with its latest record.

    Memory follows the number of distinct ids, not of versions, and little of it: records are
    kept as JSON bytes in a file (``packed_store``; ``scratch``: the directory it is made in, None
    for the system's temporary one), and a version's records are needed only while it is added
    (``errcat history`` crawls, or reads, one release at a time and drops it before the next).
    """

    def __init__(self, scratch: Path | None = None) -> None:
        self._entries: dict[str, _Entry] = {}
        self._store = PackedStore(scratch)
        #: The last version's records as added, when the caller said it was the last (``add``'s
        #: ``last``): the final render reads them without unpacking ~10,000 records again.
        self._last: dict[str, RecordData] = {}
        #: The retired records of the dataset the fold was seeded with (``keep``), by id, as read:
        #: carried through to the render as they are (not packed, their error key not made) until
        #: a version names their id again (a revival), when they become an entry like any other.
        self._held: dict[str, RecordData] = {}
        #: The retired records of that dataset not even read (``carry``): by id, their line's digest
        #: and size and the facts kept of them (``versions.carried.facts``); ``_reader`` reads
        #: those it is asked for from the dataset (``materialize``).
        self._unread: dict[str, Unread] = {}
        self._reader: Callable[[Mapping[str, bytes]], dict[str, bytes]] | None = None
        self._parse: Callable[[dict[str, bytes]], list[RecordData]] | None = None
        #: The versions added, oldest first.
        self.steps: list[Lifetime] = []
        #: The state the fold is at: the last version added, or the dataset it was seeded with.
        self.at: Lifetime | None = None
        #: What ``under`` found across the gap between the last version and the catalogue over
        #: it (``Gap``), for the summary; None when the fold is not under a catalogue.
        self.gap: Gap | None = None
        #: Retired entries given no twin for having too many candidates (``diff.MAX_TWIN_CANDIDATES``).
        self.capped: list[str] = []
        self._lines_at: tuple[str, dict[str, bytes]] = ("", {})

    def __len__(self) -> int:
        return len(self._entries) + len(self._unread)

    @property
    def retired(self) -> int:
        return sum(1 for e in self._entries.values() if e.retired) + len(self._unread)

    def carry(
        self, unread: Mapping[str, Unread], reader: Callable[[Mapping[str, bytes]], dict[str, bytes]], parse: Callable[[dict[str, bytes]], list[RecordData]]
    ) -> None:
        """Take the retired records of the dataset the fold was seeded with that were not read
        (``Unread``, by id): they are rendered as the lines they are (``render_state``'s
        ``carry``) unless a version names their id again or a curated link changes them, when
        they are read and held as read (``materialize``). ``reader``: given line digests by id,
        those lines of the dataset (their digests checked); ``parse``: lines by id as the records
        ``keep`` takes."""
        self._unread.update(unread)
        self._reader, self._parse = reader, parse

    def unread_ids(self) -> KeysView[str]:
        return self._unread.keys()

    def unread(self, eid: str) -> Unread | None:
        return self._unread.get(eid)

    def materialize(self, ids: Iterable[str]) -> None:
        """Read the records of these ids that were not read (``carry``), and hold them as read."""
        wanted = {eid: self._unread[eid].line for eid in ids if eid in self._unread}
        if not wanted:
            return
        assert self._reader is not None and self._parse is not None
        records = self._parse(self._reader(wanted))
        if {r["id"] for r in records} != wanted.keys():
            raise DataError("the catalogue in place changed during the sync; run it again")
        for eid in wanted:
            del self._unread[eid]
        self.keep(records)

    def line_of(self, eid: str) -> bytes | None:
        """The line of a record that was not read, read now (``_reader``); None for any other id."""
        unread = self._unread.get(eid)
        if unread is None:
            return None
        assert self._reader is not None
        prefix = eid[:2]  # the lines of one gzip member are asked for one after the other: read them together
        if self._lines_at[0] != prefix:
            wanted = {rid: u.line for rid, u in self._unread.items() if rid[:2] == prefix}
            self._lines_at = (prefix, self._reader(wanted))
        line = self._lines_at[1].get(eid)
        if line is None:
            raise DataError("the catalogue in place changed during the sync; run it again")
        return line

    @property
    def first_seen(self) -> int:
        return sum(1 for e in self._entries.values() if e.history and e.history.first_seen)

    def histories(self) -> Iterator[History]:
        """Every id's history, in no particular order (what a summary counts)."""
        return (e.history for e in self._entries.values() if e.history is not None)

    def rendered(self) -> None:
        """Drop the last version's records kept for the render (see ``add``'s ``last``): a
        million objects for vLLM, which the cycle collector, once back on, would walk again."""
        self._last = {}

    def record(self, eid: str, history: Any = ...) -> RecordData:
        """One id's latest record with its history (``history``: that history as data, when the
        caller has it made)."""
        entry = self._entries[eid]
        added = self._last.get(eid) or self._held.get(eid)
        if history is ...:
            history = entry.history.model_dump(mode="json") if entry.history is not None else None
        if added is not None:
            return {**added, "history": history}
        record: RecordData = _unpack(self._store.get(entry.slot))
        record["history"] = history
        return record

    def packed(self, eid: str) -> bytes:
        """One id's latest record as the fold keeps it (JSON bytes, without its history)."""
        if eid in self._unread:
            return b""
        return self._store.get(self._entries[eid].slot)

    @property
    def directory(self) -> Path | None:
        """Where the fold's files are made (its store's: None, the system's temporary directory)."""
        return self._store.directory

    def close(self) -> None:
        """Let go of the store's file: the fold's records are gone (its histories stay)."""
        self._store.close()

    def records(self) -> Iterator[RecordData]:
        """Every id's record, live and retired, by id."""
        for eid in sorted(self._entries):
            yield self.record(eid)

    def keep(self, records: Iterable[RecordData], histories: Mapping[int, History] | None = None) -> None:
        """Take records as they are, history included (a dataset written with history). A retired
        one is held as it is (``_held``): no version of a sync changes it unless its id comes back,
        so it is neither packed nor keyed (its key is made when that id is seen again, ``_key``).
        ``histories``: the model of a history data, by its ``id``, made already (``seed``)."""
        made = histories or {}
        for record in records:
            history = record.get("history")
            model = (made.get(id(history)) or History.model_validate(history)) if history else None
            if model is not None and model.retired:
                self._held[record["id"]] = record
                self._entries[record["id"]] = _Entry((), b"", model, _paths(record), HELD)
                continue
            known = self._entries.get(record["id"])
            self._entries[record["id"]] = _Entry(
                _record_key(record), _key_inputs(record), model, _paths(record), self._store.put(_pack(record), known.slot if known is not None else None)
            )

    def _key(self, eid: str) -> tuple[str, ...]:
        """An id's error key (a held or retired record's made now: only an id seen again asks for it)."""
        entry = self._entries[eid]
        if not entry.key:
            held = self._held.get(eid)
            entry.key = _record_key(held if held is not None else _unpack(self._store.get(entry.slot)))
        return entry.key

    @staticmethod
    def _retire(entry: _Entry, history: History) -> None:
        """An entry retired by a version (``history``: its history saying so): its key and the digest
        of its inputs let go (made again from its record if its id comes back, ``_key``), its
        history kept as JSON (``_Entry``)."""
        entry.key, entry.key_inputs = (), b""
        entry.kept = _exact(orjson.dumps(history.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS))

    def is_retired(self, eid: str) -> bool:
        """Whether an id's entry is retired (an unread one, ``carry``, has no entry: retired)."""
        return eid in self._unread or self._entries[eid].retired

    def held_ids(self) -> KeysView[str]:
        """The ids of the retired records carried as read (``keep``)."""
        return self._held.keys()

    def held(self, eid: str) -> RecordData | None:
        """A retired record carried as read (``keep``), None for any other id."""
        return self._held.get(eid)

    def add(
        self,
        records: Iterable[RecordData],
        version: str | None,
        commit: str,
        last: bool = False,
        kept: Kept | None = None,
        skipped: frozenset[str] = frozenset(),
        files: bool = False,
    ) -> None:
        """Move to the next version, whose crawl produced ``records`` (plain JSON dicts); ``last``:
        no version follows, so the fold may keep these records as they are (the caller holds
        them anyway) instead of only packed. ``kept``: the same release as the cache holds it
        (``release_cache.Kept``), whose fold rows and lines spare computing keys and packing.
        ``skipped``: the source files that crawl did not read (``skipped_paths``): an entry
        raised in one of them and missing is unread there, not gone (see the module). ``files``:
        ``commit`` is a digest of the release's files, no commit (``files_digest``).

        Not ``last`` and no ``kept``: each record is packed as it comes and dropped, so that a
        release is never held as dicts (a large release's were ~150 MB) but as its packed bytes."""
        if not last and kept is None:
            self._add_packed(records, Lifetime(version=version, commit=commit, files=files), skipped)
            return
        current = {r["id"]: r for r in records}
        self._last = current if last else {}
        given = {row[0]: (row, line) for row, line in zip(kept.rows, kept.lines, strict=True)} if kept is not None else {}
        items: dict[str, _Item] = {}
        for eid, r in current.items():
            known_row = given.get(eid)
            if known_row is not None:
                row, line = known_row
                items[eid] = _Item(row[1], b"", row[2], line)
                continue
            inputs = _key_inputs(r)
            known = self._entries.get(eid)
            key = known.key if known is not None and known.key_inputs == inputs else _record_key(r)
            items[eid] = _Item(key, inputs, _paths(r), None)
        self._advance(items, Lifetime(version=version, commit=commit, files=files), lambda eid: current[eid], skipped)

    def _add_packed(self, records: Iterable[RecordData], now: Lifetime, skipped: frozenset[str]) -> None:
        """``add`` of records taken one at a time: each one's key, paths and packed bytes (of their
        own size: they are held until the step is done), the record dropped."""
        self._last = {}
        items: dict[str, _Item] = {}
        for r in records:
            eid = r["id"]
            inputs = _key_inputs(r)
            known = self._entries.get(eid)
            key = known.key if known is not None and known.key_inputs == inputs else _record_key(r)
            items[eid] = _Item(key, inputs, _paths(r), _exact(_pack(r)))
        self._advance(items, now, lambda eid: _unpack(items[eid].packed or b""), skipped)

    def add_lines(self, kept: Kept, version: str | None, commit: str, skipped: frozenset[str] = frozenset(), files: bool = False) -> None:
        """``add`` for a release kept in the cache, from its fold rows and lines: no record is
        parsed but those ``diff.link`` compares."""
        self._last = {}
        items = {row[0]: _Item(row[1], b"", row[2], line) for row, line in zip(kept.rows, kept.lines, strict=True)}
        self._advance(items, Lifetime(version=version, commit=commit, files=files), lambda eid: _unpack(items[eid].packed or b""), skipped)

    def _advance(self, items: dict[str, _Item], now: Lifetime, record_of: Callable[[str], RecordData], skipped: frozenset[str] = frozenset()) -> None:
        """The fold's step (see ``add``): ``items`` by id, ``record_of`` an id's record as a dict,
        ``skipped`` the files this version's crawl did not read."""
        self.materialize(items.keys() & self._unread.keys())  # an id come back: its record read
        before_now, self.at = self.at, now
        self.steps.append(now)
        for eid, item in items.items():
            known = self._entries.get(eid)
            if known is not None and self._key(eid) != item.key:
                raise DataError(f"id collision: {eid} was {known.key!r} and is now {item.key!r}; ids are never reused")
        # Missing, but raised in a file this crawl did not read: unread, left as it was (not gone).
        gone_ids = sorted(eid for eid, e in self._entries.items() if not e.retired and eid not in items and not _unread(e.paths, skipped))
        came_ids = sorted(items.keys() - self._entries.keys())
        replaces: dict[str, list[str]] = {}
        replaced_by: dict[str, str] = {}
        for old_id, new_id in self._linked(gone_ids, {eid: items[eid].key for eid in came_ids}, record_of):
            replaces.setdefault(new_id, []).append(old_id)
            replaced_by[old_id] = new_id
        # None linked: its twin among every entry live now, not only those come now (``diff.twins``).
        for old_id, new_id, _ratio in self._twins([e for e in gone_ids if e not in replaced_by], {eid: item.key for eid, item in items.items()}):
            replaces.setdefault(new_id, []).append(old_id)
            replaced_by[old_id] = new_id
        for eid in gone_ids:
            entry = self._entries[eid]
            h = entry.history or History(first_seen=None, last_seen=None)
            # Last seen before the version just before this one (that crawl did not read its file):
            # gone somewhere between, found gone here.
            between = h.last_seen is not None and before_now is not None and h.last_seen != before_now
            self._retire(
                entry,
                h.model_copy(
                    update={
                        "retired": True,
                        "removed_in": now,
                        "replaced_by": replaced_by.get(eid),
                        "retired_note": f"removed after {label(h.last_seen)}, by {label(now)}" if between and h.last_seen else f"removed in {label(now)}",
                    }
                ),
            )
        # An entry with no move and no new link has the history it had, seen now: made once for
        # every entry that had that very history (histories are never changed in place, only
        # replaced), so a release costs a few hundred histories, not one per entry.
        carried: dict[int, History] = {}
        for eid, item in items.items():
            known = self._entries.get(eid)
            before = known.history if known is not None else None
            move = _move(known.paths, item.paths, now, skipped) if known is not None else None
            # (a retired id's history is made anew as read: no two of them are told apart by ``id``)
            plain = move is None and eid not in replaces and (known is None or known.model is not None)
            history = carried.get(id(before)) if plain else None
            if history is None:
                history = History(
                    first_seen=before.first_seen if before and before.first_seen else now,
                    last_seen=now,
                    moved=[*(before.moved if before else []), *([move] if move else [])],
                    replaces=sorted({*(before.replaces if before else []), *replaces.get(eid, [])}),
                )
                if plain:
                    carried[id(before)] = history
            packed = item.packed if item.packed is not None else _pack(record_of(eid))
            self._held.pop(eid, None)  # seen again: an entry of this version's record
            paths = item.paths
            if skipped and known is not None and not skipped.isdisjoint(known.paths):
                # Seen in the files read; the files it was raised in that were not read are not
                # known to have lost it: still its files, so that the next version finds no move
                # to a file it was raised in all along.
                paths += tuple(p for p in known.paths if p in skipped and p not in paths)
            self._entries[eid] = _Entry(item.key, item.key_inputs, history, paths, self._store.put(packed, known.slot if known is not None else None))

    def _linked(self, gone_ids: list[str], came: dict[str, tuple[str, ...]], record_of: Callable[[str], RecordData]) -> list[tuple[str, str]]:
        """(gone id, come id) of each gone entry ``diff.link`` pairs with a come one (``came``:
        their keys by id, ``record_of`` a come id's record): the same error reworded or re-typed."""
        # diff.link pairs a gone and a come entry only when their keys share the kind and either
        # the rest (another exception) or the exception (a reworded message): the others are
        # never compared, so only these become models.
        gone_keys = {self._entries[eid].key for eid in gone_ids}
        rests = {(k[0], *k[2:]) for k in gone_keys}
        heads = {k[:2] for k in gone_keys}
        came_ids = [eid for eid, key in came.items() if (key[0], *key[2:]) in rests or key[:2] in heads]
        # and the same the other way: a gone entry that no come entry can pair with stays a dict
        came_keys = {came[eid] for eid in came_ids}
        came_rests = {(k[0], *k[2:]) for k in came_keys}
        came_heads = {k[:2] for k in came_keys}
        pairable = [
            eid for eid in gone_ids if (self._entries[eid].key[0], *self._entries[eid].key[2:]) in came_rests or self._entries[eid].key[:2] in came_heads
        ]
        if not (pairable and came_ids):
            return []
        gone = [Record.model_validate(self.record(eid)) for eid in pairable]
        new = [Record.model_validate({**record_of(eid), "history": None}) for eid in came_ids]
        return [(old.id, succ.id) for _, old, succ, _ratio in link(gone, new)]

    def _twins(self, gone_ids: list[str], live: dict[str, tuple[str, ...]]) -> list[tuple[str, str, float]]:
        """``diff.twins`` of the gone entries among ``live`` (keys by id)."""
        return twins([(eid, self._entries[eid].key) for eid in gone_ids], live.items(), self.capped) if gone_ids else []

    def add_catalogue_as_newest(self, records: Iterable[RecordData], now: Lifetime, skipped: frozenset[str] = frozenset()) -> None:
        """Put a catalogue's records (live and retired, with their histories) over the fold, as
        the newest state: the catalogue at ``now``, a commit at or after the fold's last version
        (a backfill merged after daily syncs). Each of its records stays as it is, with the
        fold's history behind it (``_behind``).

        Between the fold's last version and the catalogue's first state lies a gap with no
        dataset of its own, taken as one step of the history from what the two hold:

        * an entry both know gets the move a history run records between two versions
          (``_gap_move``): the fold's last record's files against the catalogue's record's as
          it began, stamped at the catalogue's first version that had the entry;
        * an entry of the fold the catalogue does not know at all was gone before the catalogue
          began: linked to its successor among the catalogue's entries no release had (live or
          retired since, not themselves a successor within the catalogue), as a history run links
          two versions, and removed where that one was first seen; with none, retired after the
          fold's last version, by ``now``;
        * unless the catalogue's crawl did not read one of its files (``skipped``, its manifest's):
          then it is unread, kept live as the fold last saw it (``last_seen`` that version).
        """
        self.materialize(list(self._unread))
        last = self.steps[-1] if self.steps else None
        known: set[str] = set()
        came: dict[str, RecordData] = {}  # in the catalogue, never in the fold: the successors it may hold
        entries: dict[str, _Entry] = {}
        moved = fresh = 0
        for record in records:
            eid = record["id"]
            key = _record_key(record)
            ours = self._entries.get(eid)
            if ours is not None and self._key(eid) != key:
                raise DataError(f"id collision: {eid} was {ours.key!r} and is now {key!r}; ids are never reused")
            history = record.get("history")
            theirs = History.model_validate(history) if history else History(first_seen=now, last_seen=None)
            paths = _paths(record)
            fresh += ours is None
            # A successor: an entry no release had, first seen after the last (not one a catalogue
            # with older history retired before it), not itself a catalogue entry's successor.
            if ours is None and not theirs.replaces and (last is None or theirs.first_seen is None or _older(last, theirs.first_seen)):
                came[eid] = record
            move = _gap_move(ours.paths, paths, theirs, last, now, skipped) if ours is not None else None
            moved += move is not None
            # a new slot, not ``ours``'s: the fold's records are read below (the gone ones') before these replace them
            entries[eid] = _Entry(
                key, _key_inputs(record), _behind(ours.history if ours is not None else None, theirs, move), paths, self._store.put(_pack(record))
            )
            known.add(eid)
        missing = [eid for eid, e in self._entries.items() if eid not in known and not e.retired]
        gone_ids = sorted(eid for eid in missing if not _unread(self._entries[eid].paths, skipped))
        # What the fold's last version had and the catalogue does not know: a successor among the
        # catalogue's entries no release had is linked as a history run links two versions.
        pairs = dict(self._linked(gone_ids, {eid: entries[eid].key for eid in sorted(came)}, lambda eid: came[eid]))
        # None linked: its twin among the catalogue's live entries (``diff.twins``); removed by
        # the catalogue, not where the twin was first seen (it may be older than the fold's end).
        live = {eid: e.key for eid, e in entries.items() if not e.retired}
        found = {old: new for old, new, _ in self._twins([e for e in gone_ids if e not in pairs], live)}
        for eid in gone_ids:
            entry = self._entries[eid]
            h = entry.history or History(first_seen=None, last_seen=None)
            # Removed where its successor was first seen (as a history run records it); with none,
            # somewhere after the fold's last version, by the catalogue's commit at the latest.
            successor = entries[pairs[eid]].history if eid in pairs else None
            then = successor.first_seen if successor is not None else None
            note = (
                f"removed in {label(then)}"
                if then is not None
                else f"removed after {label(last)}, by {label(now)}"
                if last is not None
                else f"removed by {label(now)}"
            )
            entry.history = h.model_copy(
                update={"retired": True, "removed_in": then or now, "retired_note": note, "replaced_by": pairs.get(eid, found.get(eid))}
            )
        for old_id, new_id in sorted({**found, **pairs}.items()):
            later = entries[new_id].history
            assert later is not None  # every catalogue entry's history is set above
            entries[new_id].history = later.model_copy(update={"replaces": sorted({*later.replaces, old_id})})
        self._entries.update(entries)
        for eid in entries.keys() & self._held.keys():
            del self._held[eid]
        self._last = {}
        self.at = now
        self.gap = Gap(since=last, at=now, first_seen=fresh, replacing=len(pairs), retired=len(gone_ids), moved=moved, unread=len(missing) - len(gone_ids))


class Gap(NamedTuple):
    """What ``Fold.add_catalogue_as_newest`` recorded across the gap from the fold's last version (``since``) to the
    catalogue at ``at``: entries the catalogue has that no release had, of them those replacing a
    release's entry, the release's entries retired there, moved there, and unread (the catalogue's
    crawl skipped one of their files)."""

    since: Lifetime | None
    at: Lifetime
    first_seen: int
    replacing: int
    retired: int
    moved: int
    unread: int


def _gap_move(before: tuple[str, ...], paths: tuple[str, ...], theirs: History, last: Lifetime | None, now: Lifetime, skipped: frozenset[str]) -> Move | None:
    """The move of an entry across the gap between the fold's last version (``last``, where its
    sites were in ``before``) and the catalogue's first state with it (``theirs.first_seen``),
    as ``_move`` finds one between two versions; None when there is no gap (the catalogue's
    history reaches back to ``last``). The catalogue's record is its newest: as the entry began
    there, its primary site was where the first move the catalogue recorded took it from, else
    (no move since) its files are the record's. ``skipped``: the files the catalogue's crawl
    did not read (one of them losing the error is no move)."""
    then = theirs.first_seen or now
    if last is None or then.commit == last.commit or not _older(last, then):
        return None
    began = (theirs.moved[0].from_path,) if theirs.moved else paths
    return _move(before, began, then, skipped)


def _older(a: Lifetime | None, b: Lifetime | None) -> bool:
    """Whether ``a`` (a release the fold covered) comes before ``b`` (what a catalogue says): by
    version when both name one; a catalogue's commit of no version is a sync's, after the releases."""
    if a is None:
        return False
    if b is None or b.version is None:
        return True
    return a.version is not None and release_order(a.version) < release_order(b.version)


def _behind(ours: History | None, theirs: History, gap: Move | None = None) -> History:
    """A catalogue's history (``theirs``) with a fold's (``ours``, older versions) behind it: the
    older first_seen, the fold's moves before the move across the gap between them (``gap``)
    and the catalogue's, both sets of replaced ids; whether and when it was last seen, retired
    or replaced is the catalogue's (the newest state)."""
    if ours is None:
        return theirs
    mine = [*ours.moved, *([gap] if gap is not None else [])]
    seen = {(m.commit, m.from_path, m.to_path) for m in mine}
    return theirs.model_copy(
        update={
            "first_seen": ours.first_seen if _older(ours.first_seen, theirs.first_seen) else theirs.first_seen,
            "moved": [*mine, *(m for m in theirs.moved if (m.commit, m.from_path, m.to_path) not in seen)],
            "replaces": sorted({*ours.replaces, *theirs.replaces}),
        }
    )


def seed(records: Iterable[RecordData], manifest: Manifest, histories: Mapping[int, History] | None = None) -> Fold:
    """The fold of an existing dataset: its records as they are (a live one last seen at the
    dataset's commit), or (written without history) as first seen at its own commit. The records
    are as ``sync._read_in_place`` reads them: each history as the model dumps it, ``histories``
    the model of each history data by its ``id`` (not validated again; the data's own when absent)."""
    records = list(records)
    fold = Fold()
    fold.at = lifetime(manifest, version_of(manifest.ref))
    if all(r.get("history") is not None for r in records):
        now = fold.at.model_dump(mode="json")
        fold.keep((_seen_at(r, now) for r in records), histories or {})
    else:
        fold.add([r for r in records if not (r.get("history") or {}).get("retired")], version_of(manifest.ref), manifest.commit, files=files_digest(manifest))
    return fold


def _seen_at(record: RecordData, now: dict[str, Any]) -> RecordData:
    """A live record of a dataset written with history, last seen at the dataset's commit (``now``)."""
    history = record["history"]
    if history is None or history["retired"] or history.get("last_seen") is not None:
        return record
    return {**record, "history": {**history, "last_seen": now}}


def summary(fold: Fold, manifest: Manifest, versions: list[str]) -> str:
    """A history run in markdown (a backfill's pull request body); crawled text in code spans."""
    from crawler.base.sink import md_code

    span = versions[0] if len(versions) == 1 else f"{versions[0]} … {versions[-1]}"
    head = (
        f"## Error catalogue: {md_code(manifest.repo.owner + '/' + manifest.repo.name)} history\n\n"
        f"{len(versions)} version(s), {md_code(span)}, up to {md_code(revision(manifest))}: "
        f"{len(fold) - fold.retired} entries, {fold.retired} retired.\n"
    )
    if fold.steps and manifest.commit not in {step.commit for step in fold.steps}:  # folded under a catalogue (``Fold.add_catalogue_as_newest``)
        head += (
            f"\nFolded behind the catalogue in place at {md_code(release_version(manifest) or revision(manifest))} "
            f"({md_code(revision(manifest))}): its records stay as they are, with these releases' history behind them.\n"
        )
    if not fold.steps:
        return head
    # What each version brought, so a reviewer of the whole history sees where it changed.
    counts = {(step.version, step.commit): [0, 0, 0, 0] for step in fold.steps}

    def count(when: Lifetime | None, column: int) -> None:
        if when is not None and (when.version, when.commit) in counts:
            counts[(when.version, when.commit)][column] += 1

    for h in fold.histories():
        count(h.first_seen, 0)
        if h.replaces:
            count(h.first_seen, 1)
        count(h.removed_in if h.retired else None, 2)
        for move in h.moved:
            count(Lifetime(version=move.version, commit=move.commit), 3)
    rows = [
        "| Version | First seen | Of them replacing an entry (reworded, re-typed) | Retired | Moved to another file |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for n, step in enumerate(fold.steps):
        first, replacing, retired, moved = counts[(step.version, step.commit)]
        shown = md_code(label(step)) + (" (the first covered: every entry)" if n == 0 else "")
        rows.append(f"| {shown} | {first} | {replacing} | {retired} | {moved} |")
    gap = fold.gap
    if gap is not None:  # the step from the last release to the catalogue's first state (``Fold.add_catalogue_as_newest``)
        since = f", after {md_code(label(gap.since))}" if gap.since is not None else ""
        rows.append(f"| {md_code(label(gap.at))} (the catalogue in place{since}) | {gap.first_seen} | {gap.replacing} | {gap.retired} | {gap.moved} |")
        if gap.unread:
            rows.append(
                f"\n{gap.unread} entr{'y' if gap.unread == 1 else 'ies'} of {md_code(label(gap.since or gap.at))} "
                f"the catalogue's crawl did not read (one of their files skipped, see its manifest) stay live as last seen there."
            )
    return head + "\n" + "\n".join(rows) + "\n"


def render_state(
    fold: Fold,
    manifest: Manifest,
    previous: dict[str, PreviousRecord] | None = None,
    vouched: dict[str, str] | None = None,
    memo: RowMemo | None = None,
    reuse: Reuse | None = None,
    bare: list[bytes] | None = None,
    write: Write | None = None,
    omit: bool = True,
    documents: dict[str, Any] | None = None,
    links: CuratedLinks | None = None,
    applied: Applied | None = None,
    carry: Carry | None = None,
) -> dict[str, bytes]:
    """The files of the newest crawl's dataset with the fold's records, live and retired, by id.

    The manifest is the newest crawl's (its input digest included, so a plain ``crawl`` of the
    same commit leaves the history alone), with entries counting live records and ``retired``
    the rest, and the search index of them all (what ``errcat match`` and the site read). Validated
    by ``render_dataset`` like every dataset, and held to the crawl's
    ``limits.max_output_bytes``: retired records pile up from release to release, so when a
    file would be larger, entries the newest crawl did not read are left out first (it skipped
    their file for size: they cannot fit), then retired ones, the largest first, then live ones,
    and ``counts.omitted`` says how many.

    ``previous``: the record files of the dataset this one replaces; a record whose content is
    unchanged keeps the commit it names when that is one of ``vouched`` (commits the newest crawl
    descends from, with their dates), see ``publish.pins``. ``memo``: the search rows made before
    (``search.RowMemo``), the same for a record whose row inputs did not change. ``reuse``: the
    record files validated before and the gzip members made before (``writer.Reuse``); a record
    file made of a bare one validated before and a valid history is not validated whole
    (``history_reuse.vouched``). ``bare``: filled with the SHA-256 of every record written as
    its file with no history (valid too, for ``history_reuse.finish`` to remember). ``write``:
    takes the files as they are rendered (``writer.write_dataset``'s way of writing them) and
    returns them all; without it they are rendered into memory first (see :func:`_streamed`).
    ``omit`` False: a file over ``max_output_bytes`` raises ``OverLimit`` (nothing written)
    instead of entries being left out. ``documents``: the newest state's further documents
    (``CrawlResult.documents``: foreign.json), written beside search.json. ``links``: the
    curated lineage links, written into the records (``lineage_links.apply``; what it did in ``applied``).
    ``carry``: the rows the last render wrote of retired records (``versions.carried``): a retired
    record held as read whose line has rows there and whose file in place (``previous``) has the
    digest they name is carried through as it is: not compared, serialized, validated or made
    rows of again. The rows of every retired record written go back in it.
    """
    records = Written(fold, manifest.commit)
    while links is not None:
        # the links change a few histories: applied to each id's history alone (shared dicts, never
        # changed in place: ``apply`` gives a changed one a dict of its own), kept as overrides
        views: list[Any] = [{"id": eid, "history": records.history(eid)} for eid in records.ids]
        made = [v["history"] for v in views]  # (a history not shared is made anew each time it is asked for)
        done = lineage_links.apply(views, links)
        records.overrides = {v["id"]: v["history"] for v, was in zip(views, made, strict=True) if v["history"] is not was}
        del views, made
        touched = records.overrides.keys() & fold.unread_ids()
        if touched:  # a record not read that a link changes: read, and the links applied again
            fold.materialize(touched)
            records = Written(fold, manifest.commit)
            continue
        if applied is not None:
            applied.applied, applied.notes = done.applied, done.notes
        break
    # Written as rendered, with nothing in place to pin to: the records are final, and their lines
    # are made and compressed from now on, alongside the rest.
    packing = _Packing(records, reuse.members if reuse is not None else {}, fold.directory) if write is not None and not previous else None
    try:
        return _render_state(fold, manifest, records, packing, previous, vouched, memo, reuse, bare, write, omit, documents, carry)
    finally:
        if packing is not None:
            packing.close()


class Replaced(Sequence[RecordData]):
    """``base`` with the records ``changed`` (by index) in place of its own: the fold's records
    with those ``pins.repinned`` re-pinned, still made one at a time as they are read."""

    def __init__(self, base: Written, changed: dict[int, RecordData]) -> None:
        self.base, self.changed = base, changed

    def __len__(self) -> int:
        return len(self.base)

    @overload
    def __getitem__(self, i: int) -> RecordData: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[RecordData]: ...
    def __getitem__(self, i: int | slice) -> RecordData | Sequence[RecordData]:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        n = i % len(self) if i < 0 else i
        return self.changed.get(n) or self.base[n]

    def __iter__(self) -> Iterator[RecordData]:
        for n, record in enumerate(self.base):
            yield self.changed.get(n, record)


class Written(Sequence[RecordData]):
    """The fold's records (``ids``: every id, sorted), live and retired, as the dataset holds
    them (:func:`_written`), each decoded from the fold's packed store when it is read and
    dropped by the reader: a pass over them (the index, the search rows, the files, the lines)
    holds one record at a time, so the render's memory does not grow with the records ever
    seen. Histories are shared: one dict (and its JSON) for every id of the same ``History``; a
    history of one id alone (a retired one's, most of them) is made each time it is read and not
    kept, so that the render holds none of them (~2 KB for each retired id ever seen)."""

    def __init__(self, fold: Fold, commit: str, ids: list[str] | None = None) -> None:
        self.fold, self.commit = fold, commit
        self.ids = sorted(fold._entries.keys() | fold._unread.keys()) if ids is None else ids
        self._histories: dict[int, tuple[History, Any, bytes]] = {}
        #: the ``id`` of each ``History`` more than one id has (those made once and kept)
        self._shared = _shared(e.model for e in fold._entries.values())
        #: histories the curated lineage links changed (``lineage_links.apply``), by id
        self.overrides: dict[str, Any] = {}
        self._overridden: dict[str, tuple[Any, bytes]] = {}
        self._lineages: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> RecordData: ...
    @overload
    def __getitem__(self, i: slice) -> Written: ...
    def __getitem__(self, i: int | slice) -> RecordData | Written:
        if isinstance(i, slice):
            return self.without(set(), self.ids[i])
        return self.record(self.ids[i])

    def __iter__(self) -> Iterator[RecordData]:
        return map(self.record, self.ids)

    def record(self, eid: str) -> RecordData:
        if eid in self.fold._unread:
            # a record not read (``Fold.carry``): its id and its lineage, what the passes that do not
            # carry it through ask of it (the render carries it: ``_carried``)
            return cast("RecordData", {"id": eid, "history": self.history(eid)})
        return self.fold.record(eid, self.history(eid))

    def _history(self, eid: str, json: bool = True) -> tuple[Any, bytes]:
        """An id's history data and (``json``; else b"" when not made yet) its JSON, each made once
        per distinct ``History``: a pass that reads only the data (the lineage views) makes no JSON."""
        if eid in self.overrides:
            done_here = self._overridden.get(eid)
            if done_here is None:
                data = self.overrides[eid]
                done_here = self._overridden[eid] = (data, _exact(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)))
            return done_here
        unread = self.fold._unread.get(eid)
        if unread is not None:  # one dict an id, as for any other (``render_state`` tells a changed one by its identity)
            view = self._lineages.get(eid)
            if view is None:
                view = self._lineages[eid] = _lineage(unread.facts)
            return view, b""
        entry = self.fold._entries[eid]
        history = entry.model
        if isinstance(entry.kept, bytes):  # a retired id's, kept as its JSON (keys sorted): its own, made for this read
            return orjson.loads(entry.kept), entry.kept
        if history is None:
            return None, b"null"
        done = self._histories.get(id(history))
        if done is None:
            held = self.fold.held(eid)
            # a retired record carried as read: its history is the model's as read (``sync._history_data``)
            data = held["history"] if held is not None else _written({"history": history.model_dump(mode="json")}, self.commit)["history"]  # type: ignore[typeddict-item]
            if id(history) not in self._shared:  # this id's alone: made for this read, not kept
                return data, _exact(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)) if json else b""
            done = self._histories[id(history)] = (history, data, b"")
        if json and not done[2]:
            done = self._histories[id(history)] = (history, done[1], _exact(orjson.dumps(done[1], option=orjson.OPT_SORT_KEYS)))
        return done[1], done[2]

    def history(self, eid: str) -> Any:
        """An id's history as its record holds it (shared: not to be changed)."""
        return self._history(eid, json=False)[0]

    def history_json(self, eid: str) -> bytes:
        """:meth:`history` as JSON, keys sorted (a record file's history line)."""
        return self._history(eid)[1]

    def retired(self) -> int:
        return sum(1 for eid in self.ids if self.fold.is_retired(eid))

    def without(self, drop: set[str], ids: list[str] | None = None) -> Written:
        """These records less ``drop`` (the histories made so far kept)."""
        out = Written(self.fold, self.commit, [eid for eid in (self.ids if ids is None else ids) if eid not in drop])
        out._histories, out.overrides, out._overridden, out._shared, out._lineages = (
            self._histories,
            self.overrides,
            self._overridden,
            self._shared,
            self._lineages,
        )
        return out


def _shared(histories: Iterable[History | None]) -> frozenset[int]:
    """The ``id`` of each history that comes more than once in ``histories``."""
    seen: set[int] = set()
    shared: set[int] = set()
    for history in histories:
        if history is not None:
            (shared if id(history) in seen else seen).add(id(history))
    return frozenset(shared)


#: What a record not read says of its curated link (``_lineage``): that it has one, not which.
_REVIEWED: dict[str, Any] = {"reviewed": True}


def _lineage(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The history of a record not read (``Fold.carry``) as far as ``lineage_links.apply`` reads
    one: retired, its successor, whether a review linked it and whom it replaces. A link that
    changes it has it read (``render_state``)."""
    return {"retired": True, "replaced_by": facts["replaced_by"], "replaced_by_review": _REVIEWED if facts["reviewed"] else None, "replaces": facts["replaces"]}


def _render_state(
    fold: Fold,
    manifest: Manifest,
    records: Written,
    packing: _Packing | None,
    previous: dict[str, PreviousRecord] | None,
    vouched: dict[str, str] | None,
    memo: RowMemo | None,
    reuse: Reuse | None,
    bare: list[bytes] | None,
    write: Write | None,
    omit: bool = True,
    documents: dict[str, Any] | None = None,
    carry: Carry | None = None,
) -> dict[str, bytes]:
    """:func:`render_state` once the records are listed (``packing``: their lines being packed)."""
    carried = _carried(fold, records, previous, carry)
    # Record files made without serializing the record: those kept by the release cache with the
    # history put in, and those ``pin`` found to be the previous files' bytes.
    made: dict[str, bytes] = {}
    for rid in records.ids:
        packed = fold.packed(rid)
        if not packed.startswith(b"{\n"):  # not a record file the cache kept (a retired record held as read: b"")
            continue
        file = _with_history_json(packed, records.history_json(rid))
        if file is not None:
            made[rid] = file
    completed = set(made)  # of those, the files completed from the cache's bare record files
    made.update((rid, old.data) for rid, (old, _, _) in carried.items() if old.data is not None)  # the files in place
    rendered: Sequence[RecordData] = records
    if previous:
        identity = Identity(
            repo=manifest.repo, commit=manifest.commit, commit_date=manifest.commit_date, upstream_commit=manifest.upstream_commit, source=manifest.source
        )
        pinned = repinned(records, previous, identity, (vouched or {}).get, fold.held_ids(), skip=carried)
        for rid in (records.ids[n] for n in pinned.records):
            made.pop(rid, None)
            completed.discard(rid)
        made.update((rid, old.data) for rid, old in pinned.kept.items() if old.data is not None)
        completed -= pinned.kept.keys()
        rendered = Replaced(records, pinned.records) if pinned.records else records
    reuse = (reuse or Reuse({}, frozenset(), set(), {}, {}))._replace(kept=made)
    if previous:  # the lines of the records kept, made by ``pin`` to compare them: not made again
        reuse = reuse._replace(lines={**reuse.lines, **pinned.lines}, line_sizes={**reuse.line_sizes, **pinned.sizes})
    if carried:  # their files' digests (hashed to find them carried), lines and index rows as written
        reuse = reuse._replace(
            lines={**reuse.lines, **{rid: (None, line[0]) for rid, (_, line, _) in carried.items()}},
            line_sizes={**reuse.line_sizes, **{rid: line[1] for rid, (_, line, _) in carried.items()}},
            kept_digests={**reuse.kept_digests, **{rid: file[0] for rid, (_, _, file) in carried.items()}},
            # read from the memo as the writer takes each (``carried.RowsOf``), not held beside the documents
            index_rows=RowsOf(carry.rows.index_row, {rid: line[0] for rid, (_, line, _) in carried.items()}) if carry is not None and carried else {},
            line_of=fold.line_of if fold.unread_ids() else None,
            # a file vouched for by its digest as read, not held: left out of the files, linked by the sync
            in_place={rid: file for rid, (old, _, file) in carried.items() if old.data is None},
        )
    bare_digests = {rid: hashlib.sha256(fold.packed(rid)).digest() for rid in completed} if reuse.validated or bare is not None else {}
    if reuse.validated:
        # Each completed file hashed once: the writer takes these digests rather than hash the same bytes again.
        digests = {rid: hashlib.sha256(made[rid]).digest() for rid in completed}
        parts = ((digests[rid], bare_digests[rid], records.history_json(rid)) for rid in completed)
        reuse = reuse._replace(validated=reuse.validated | history_reuse.vouched(parts, reuse.validated), kept_digests={**reuse.kept_digests, **digests})
    omitted = 0
    while True:
        retired = records.retired()
        # Every count set, retired and omitted too: a history's manifest states them, zero or not.
        counts = Counts(**{**manifest.counts.model_dump(), "entries": len(records) - retired, "retired": retired, "omitted": omitted})
        data = manifest.model_copy(update={"counts": counts, "content_digest": ""})
        try:
            rows: dict[str, Any] = {}  # the search rows of the retired records not carried, as made (``carry``)
            held = RowsOf(carry.rows.search_row, {rid: line[0] for rid, (_, line, _) in carried.items()}) if carry is not None and carried else None
            searched = search_rows(rendered, data, memo=memo, carried=held, capture=rows if carry is not None else None)
            extra = {**searched, **(documents or {})}
            if write is None:
                files = render_dataset(rendered, data, extra, max_bytes=manifest.limits.max_output_bytes, reuse=reuse, jobs=default_jobs())
            else:
                files = _streamed(write, rendered, data, extra, reuse, packing)
            if bare is not None:  # every record rendered is valid, with no history too
                bare += [bare_digests.get(rid) or hashlib.sha256(record_file(rendered[n])).digest() for n, rid in enumerate(records.ids)]
            if carry is not None:
                carry.carried = set(carried)
                final = set(records.ids)  # (less those left out to keep within max_output_bytes)
                carry.in_place = {rid: old for rid, (old, _, _) in carried.items() if old.data is None and rid in final}
                if write is None:
                    carry.written = _carried_rows(fold, records, rendered, files, reuse, carried, rows, pinned.sizes if previous else {})
            return files
        except OverLimit as over:
            if not omit:
                raise
            drop = _to_omit(over, records)
            if not drop:
                raise OutputError(f"{over} (max_output_bytes), and leaving out entries cannot make it smaller; nothing was written") from None
            changed = {records.ids[n]: r for n, r in rendered.changed.items()} if isinstance(rendered, Replaced) else {}
            records = records.without(drop)
            rendered = Replaced(records, {n: changed[rid] for n, rid in enumerate(records.ids) if rid in changed}) if changed else records
            omitted += len(drop)
        except DataError as exc:
            # (rows taken from the memo, hostile like the cache: the sync renders without them)
            if carry is None or not carried or isinstance(exc, (RowsRefused, MemoChanged)):
                raise
            raise RowsRefused(str(exc)) from None


def _carried(
    fold: Fold, records: Written, previous: dict[str, PreviousRecord] | None, carry: Carry | None
) -> dict[str, tuple[PreviousRecord, tuple[bytes, int], tuple[bytes, int]]]:
    """The retired records held as read that the render carries through (``render_state``'s
    ``carry``), by id: each one's file in place, its line's digest and size as read, and the
    SHA-256 and size of the file written with that line (its rows stay in the memo: ``Memo``). Not one whose history a curated link changes (``Written.overrides``), nor
    one whose file in place is not the bytes of the digest the rows name (hashed here: a file
    edited on disk is rendered anew from its line)."""
    found: dict[str, tuple[PreviousRecord, tuple[bytes, int], tuple[bytes, int]]] = {}
    if carry is None or not carry.rows or not previous:
        fold.materialize(list(fold.unread_ids()))
        return found
    unfit = []
    for rid in fold.unread_ids():
        unread = fold.unread(rid)
        assert unread is not None
        file, old = carry.rows.file_of(unread.line), previous.get(rid)
        if file is None or old is None or not _written_with(old, file):
            unfit.append(rid)  # its file in place is not the one written with its line (edited): rendered from its line
        else:
            found[rid] = (old, (unread.line, unread.size), file)
    fold.materialize(unfit)
    for rid in fold.held_ids():
        line = carry.lines.get(rid)
        file = carry.rows.file_of(line[0]) if line is not None else None
        old = previous.get(rid)
        if file is None or old is None or rid in records.overrides or line is None or carry.rows.line_size(line[0]) != line[1] or not _written_with(old, file):
            continue
        found[rid] = (old, line, file)
    return found


def _written_with(old: PreviousRecord, file: tuple[bytes, int]) -> bool:
    """Whether a record file in place is the one the render wrote with a line whose memo names
    ``file`` (the SHA-256 and size of that file): its bytes, or (not held: ``dataset.previous_records``'
    ``carried``, hashed as they were read, or vouched for by the record memo) the SHA-256 and size
    of its bytes, are those."""
    digest, size = file
    if old.data is None:
        return old.digest == digest and old.size == size
    return len(old.data) == size and hashlib.sha256(old.data).digest() == digest


def _carried_rows(
    fold: Fold,
    records: Written,
    rendered: Sequence[RecordData],
    files: dict[str, bytes],
    reuse: Reuse,
    carried: dict[str, tuple[PreviousRecord, tuple[bytes, int], tuple[bytes, int]]],
    searched: dict[str, Any],
    sizes: Mapping[str, int],
) -> dict[bytes, Carried | None]:
    """The rows of every retired record of a dataset rendered in memory (``files``), by the digest
    of its line as written (``reuse.line_digests``, the writer's): the carried ones' as they were (None: the memo's),
    the others' made of the record rendered (its file's digest and size, its index row, its search
    row as ``searched`` caught it)."""
    out: dict[bytes, Carried | None] = {}
    line_digests = reuse.line_digests or {}
    for n, rid in enumerate(records.ids):
        if not fold.is_retired(rid):
            continue
        held = carried.get(rid)
        if held is not None:
            out[held[1][0]] = None  # as the memo kept it (``carried.remember``)
            continue
        rel = record_path(rid)
        line, data, row = line_digests.get(rid), files.get(rel), searched.get(rid)
        if line is None or data is None or row is None:
            continue
        record = rendered[n]
        size = sizes.get(rid)
        out[line] = Carried(
            reuse.digests.get(rel) or hashlib.sha256(data).digest(),
            len(data),
            size if size is not None else len(dumps_line(record)),
            dumps_row(index_row(record)),
            dumps_row(row),
            facts(record),
        )
    return out


#: What writes a dataset's files as they are rendered and returns them (``render_state``'s ``write``):
#: index.json, search.json and errors.jsonl.gz come as ``writer.Pieces``, each read to its end
#: before the next file is asked for.
Write = Callable[[Iterator[tuple[str, Data]]], dict[str, bytes]]


class _Later(Mapping[Any, Any]):
    """A mapping made on another thread, waited for when first read."""

    def __init__(self, made: Callable[[], Mapping[Any, Any]]) -> None:
        self._made = made

    @cached_property
    def _items(self) -> Mapping[Any, Any]:
        return self._made()

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class _Members(Mapping[bytes, bytes]):
    """gzip members by their key (``jsonl.member_digest``), kept in a nameless file
    (``packed_store``), not the heap: each read from it when it is asked for."""

    def __init__(self, store: PackedStore) -> None:
        self._store = store
        self._slots: dict[bytes, Slot] = {}

    def put(self, key: bytes, member: bytes) -> None:
        self._slots[key] = self._store.put(member, room=False)

    def __getitem__(self, key: bytes) -> bytes:
        return self._store.get(self._slots[key])

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._slots)

    def __len__(self) -> int:
        return len(self._slots)


class _Packing:
    """errors.jsonl.gz's gzip members for ``records``, made on another thread (zlib lets go of the
    GIL) from the moment the records are final, while this one does the rest of the render (see
    :func:`_streamed`). Each member's lines are made, hashed and compressed in turn, and only each
    line's digest and its size are kept, and the members in a nameless file in ``directory``
    (``packed_store``: every line at once held as much again as the records' files, the members
    ~1.4 KB for each record ever seen). ``close`` waits for it and lets go of the file."""

    def __init__(self, records: Written, previous: Mapping[bytes, bytes], directory: Path | None = None) -> None:
        self.records = records
        self._store = PackedStore(directory)
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._made = self._pool.submit(self._pack, previous)

    def _pack(self, previous: Mapping[bytes, bytes]) -> tuple[dict[str, tuple[bytes | None, bytes]], dict[str, int], Mapping[bytes, bytes]]:
        lines: dict[str, tuple[bytes | None, bytes]] = {}
        sizes: dict[str, int] = {}
        members = _Members(self._store)
        # in the file's order, as the writer cuts its members: the live records', then the retired ones' (``jsonl.in_file_order``)
        order, cut = jsonl.in_file_order([bool((self.records.history(eid) or {}).get("retired")) for eid in self.records.ids])
        ids = [self.records.ids[n] for n in order]
        try:
            for start, end in jsonl.spans(ids, cut):
                block = [dumps_line(self.records[order[n]]) for n in range(start, end)]
                digests = [jsonl.line_digest(line) for line in block]
                for rid, line, digest in zip(ids[start:end], block, digests, strict=True):
                    lines[rid], sizes[rid] = (None, digest), len(line)
                for key, member in jsonl.packed(ids[start:end], block, 1, previous, digests):
                    members.put(key, member)
        except TypeError:  # not JSON (a lone surrogate): the writer makes them, and says so in one line
            return {}, {}, {}
        return lines, sizes, members

    def reuse(self, reuse: Reuse) -> Reuse:
        return reuse._replace(
            lines=_Later(lambda: self._made.result()[0]), line_sizes=_Later(lambda: self._made.result()[1]), members=_Later(lambda: self._made.result()[2])
        )

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._store.close()


def _streamed(write: Write, records: Sequence[RecordData], manifest: Manifest, extra: Any, reuse: Reuse, packing: _Packing | None) -> dict[str, bytes]:
    """The files written as they are rendered: the first record file goes to disk while the rest
    are rendered, and errors.jsonl.gz's members are compressed meanwhile (``packing``, started
    as soon as the records were final), rather than the files all rendered before one is
    written. On vLLM creating ~11,500 files is a second or more of kernel time, which the
    rendering and compressing now overlap. Records other than those packed (some left out to
    keep within ``max_output_bytes``) are packed by the writer, as ``render_dataset`` does."""
    made = packing.reuse(reuse) if packing is not None and packing.records is records else reuse
    return write(render_files(records, manifest, extra, manifest.limits.max_output_bytes, made, default_jobs(), pieces=True))


def _written(data: RecordData, commit: str) -> RecordData:
    """A record as the dataset holds it: a live one's ``last_seen`` is the manifest's ``commit``,
    left out so that the record changes only when its error does. One last seen before (unread
    by the newest crawl, which skipped one of its files) keeps it: the manifest's commit may
    not have it."""
    history = data.get("history")
    if history and not history["retired"] and (history.get("last_seen") or {}).get("commit", commit) == commit:
        data["history"] = {**history, "last_seen": None}
    return data


def _to_omit(over: OverLimit, records: Sequence[RecordData]) -> set[str]:
    """The ids that make up each file's excess: unread by the newest crawl first (live, last seen
    before it: when that crawl left their file out for size, they cannot fit, whatever else goes),
    then retired, then live, the largest share first."""
    order: dict[str, int] = {}
    for r in records:
        history = r.get("history") or {}
        order[r["id"]] = 1 if history.get("retired") else 0 if history.get("last_seen") else 2
    drop: set[str] = set()
    for _, excess, weights in over.shares():
        covered = 0.0
        for rid in sorted(weights, key=lambda rid: (order[rid], -weights[rid], rid)):
            if covered >= excess:
                break
            covered += weights[rid]
            drop.add(rid)
    return drop
