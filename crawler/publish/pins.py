"""Stable records: a record names the commit at which its content last changed.

A record's content is everything it says except where it was last found unchanged: the
provenance's ``commit``, ``commit_date``, ``upstream_commit``, ``source`` and ``permalinks``, and
the permalinks themselves (``location``, every site, every reproduction), which name that same
commit. A crawl with the previous dataset in place re-pins each new record at the commit the
previous one names and keeps it when the bytes are then exactly the previous file's: the
record's content did not change, so its file does not either, and its permalinks show the same
code at the same lines (the snippets and lines are part of the content).

The previous dataset is hostile input: nothing of it is kept that the crawl did not compare byte
for byte with what it would write itself. The only thing taken from it is the commit a record
names, and that commit must be one the crawled repository has, an ancestor of (or the same as)
the crawled commit, with the committer date the record says (``Verifier``). Anything else, a
damaged or edited file, a commit the repository does not have, another source, gives the fresh
record, pinned at the crawled commit.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Container, Sequence
from typing import Any, NamedTuple

from crawler.base.jsonio import dumps_line, dumps_record, record_field
from crawler.catalogue.entries import Identity
from crawler.model.shapes import LocationData, ProvenanceData, RecordData, SiteData
from crawler.publish.dataset import PreviousRecord
from crawler.publish.jsonl import line_digest

#: A commit's committer date when the crawled repository has it as an ancestor of (or as) the
#: crawled commit, else None (a source that cannot tell, a wheel, keeps no pin).
Verifier = Callable[[str], "str | None"]

#: Where the record of this id was kept last (a commit and its date) and the SHA-256 and size of its
#: errors.jsonl line pinned there, when the caller knows them without serializing it (``line_memo``).
Known = Callable[[str], "tuple[str, str | None, bytes, int] | None"]


def _links_of(identity: Identity, commit: str) -> dict[str, str]:
    """The permalink basis of a record pinned at ``commit``: the crawled commit's basis with the
    commit in place of the crawled one (only a basis that names the crawled commit itself moves)."""
    links = identity.links
    if links["basis"] == "commit" and links["rev"] == identity.commit:
        return {"basis": "commit", "rev": commit}
    return links


def repin(record: RecordData, identity: Identity, commit: str, commit_date: str | None, at: Identity | None = None) -> RecordData:
    """A copy of a fresh record pinned at ``commit``: its provenance and every permalink name it.
    Nothing is shared with ``record`` that this changes. ``at``: :func:`pinned` of the two, when
    the caller has it (one per pin rather than one per record)."""
    links = _links_of(identity, commit)
    at = at or pinned(identity, commit)
    location: LocationData = {**record["location"], "permalink": at.permalink(record["location"]["path"], record["location"]["line"])}
    sites: list[SiteData] = [{**s, "permalink": at.permalink(s["path"], s["line"])} for s in record["sites"]]
    meaning = record["meaning"]
    if meaning["reproductions"]:
        meaning = {**meaning, "reproductions": [{**r, "permalink": at.permalink(r["path"], r["line"])} for r in meaning["reproductions"]]}
    provenance: ProvenanceData = {**record["provenance"], "commit": commit, "commit_date": commit_date, "permalinks": links}
    return {**record, "location": location, "sites": sites, "meaning": meaning, "provenance": provenance}


def pinned(identity: Identity, commit: str) -> Identity:
    """The identity whose permalinks name ``commit``."""
    return dataclasses.replace(identity, permalinks=_links_of(identity, commit))


#: How many pins (commit, date) already found in the previous dataset a record is tried at before
#: its file is parsed for its own: a dataset's records name few commits, one per sync that
#: changed some.
TRIED = 8


class Pinned(NamedTuple):
    """The records, each whose content is unchanged re-pinned at the commit the previous dataset's
    file names, and those previous records kept, by id (their bytes are what the writer writes)."""

    records: list[RecordData]
    kept: dict[str, PreviousRecord]
    #: By id, the SHA-256 of the errors.jsonl line of the record in ``records`` (the line itself
    #: is not kept: None), where the comparison made it, and the line's size in ``sizes``: the
    #: writer takes them rather than serializing the record again, and serializes only the lines
    #: of the gzip members it compresses anew (keeping every line held 57 MB for vLLM, and
    #: allocating them cost more than making them).
    lines: dict[str, tuple[bytes | None, bytes]] = {}
    sizes: dict[str, int] = {}
    #: By id, the pin (commit, date) of each record kept by its known line (``Known``) at another
    #: commit than the one it holds, whose copy pinned there was not made: see :func:`pinned_at`.
    deferred: dict[str, tuple[str, str | None]] = {}


def pin(records: list[RecordData], previous: dict[str, PreviousRecord], identity: Identity, verify: Verifier | None, known: Known | None = None) -> Pinned:
    """``records`` with every record whose content is unchanged re-pinned (see :func:`repinned`),
    but those kept by their known line at another commit: left as they are, their pins in
    ``deferred`` (``repinned``'s ``defer``; :func:`pinned_at` makes each as it is written)."""
    changed = repinned(records, previous, identity, verify, known=known, defer=True)
    out = list(records)
    for n, record in changed.records.items():
        out[n] = record
    return Pinned(out, changed.kept, changed.lines, changed.sizes, changed.deferred)


def pinned_at(identity: Identity, deferred: dict[str, tuple[str, str | None]]) -> Callable[[RecordData], RecordData]:
    """The record as it is written, for a record :func:`pin` left at the crawled commit with its pin
    in ``deferred`` (``defer``): its copy pinned there, made the first time it is asked for (and
    then the same copy); any other record as it is.

    A record kept by its known line is written as the previous file, linked, and its line is the
    one the memo names: its bytes are needed only where the writer serializes it after all (a
    gzip member compressed anew, a file that could not be linked, bytes not validated before),
    ~2,300 of vLLM's 18,000 on a one-file commit. Re-pinning every kept record at once copied every
    site of each to give it its permalink (0.2-0.3 s); what reads a record besides the writer (the
    index and search rows, the curated report) reads nothing a pin changes."""
    made: dict[str, RecordData] = {}
    identities: dict[str, Identity] = {}

    def written(record: RecordData) -> RecordData:
        rid = record["id"]
        at = deferred.get(rid)
        if at is None:
            return record
        found = made.get(rid)
        if found is None:
            found = made[rid] = _at(record, identity, *at, identities)
        return found

    return written


class Repinned(NamedTuple):
    """:class:`Pinned`, with only the records re-pinned at another commit, by index."""

    records: dict[int, RecordData]
    kept: dict[str, PreviousRecord]
    lines: dict[str, tuple[bytes | None, bytes]]
    sizes: dict[str, int]
    deferred: dict[str, tuple[str, str | None]] = {}


def repinned(
    records: Sequence[RecordData],
    previous: dict[str, PreviousRecord],
    identity: Identity,
    verify: Verifier | None,
    as_read: Container[str] = (),
    known: Known | None = None,
    skip: Container[str] = (),
    defer: bool = False,
) -> Repinned:
    """Of ``records`` (a list, or a sequence that makes each as it is read: a history's), each
    whose content is the previous dataset's record of its id re-pinned, by index, and the
    previous records kept so (``records`` itself is left as it is); one pass over them.

    ``records`` with every record whose content is the previous dataset's record of its id
    re-pinned, and the previous records kept so (``records`` itself is left as it is).

    A record is first tried at the pins other records were kept at (most recent first): when its
    bytes are then the previous file's, that file states exactly that vouched-for pin, and it
    need not be parsed. Otherwise the file's own provenance is read (``PreviousRecord.provenance``)
    and is a candidate only when it is of the same source, its permalinks named its own commit the
    way the crawled commit's do, and ``verify`` vouches for its commit and date.

    ``as_read``: ids whose record is no fresh record of this crawl but the dataset's own as it was
    read (a sync's retired records, carried through): pinned where they are, each is compared with
    its previous file as it is, never tried at another pin (nor moving the pins the fresh records
    are tried at: a retired record between two fresh ones made each try a pin that was not theirs).

    ``known``: a record's pin and its line there, when the caller knows them (``line_memo``): a
    record whose previous file the record memo vouches for by its line, when the known line is
    that line, is that file at that pin, unserialized; it is kept as the comparisons would keep
    it: at that pin when it is one of the pins tried (those before it would each give other
    bytes, naming another commit), else when its file's own pin is that one and vouched for. (A
    fresh record's only: ``as_read`` ones are compared as they are.)
    ``skip``: ids the caller keeps as their previous files by other means (a sync's retired records
    carried through, ``versions.carried``): not compared here.
    ``defer``: a record kept by its known line at another commit than the crawled one is left as it
    is, its pin in ``deferred`` (:func:`pinned_at` makes its copy pinned there when it is written).
    """
    kept: dict[str, PreviousRecord] = {}
    lines: dict[str, tuple[bytes | None, bytes]] = {}
    sizes: dict[str, int] = {}
    deferred: dict[str, tuple[str, str | None]] = {}
    links = identity.links
    if not previous or identity.upstream_commit is not None or (links["basis"] == "commit" and links["rev"] != identity.commit):
        return Repinned({}, kept, lines, sizes, deferred)  # permalinks name another commit than the crawled one: nothing to pin
    out: dict[int, RecordData] = {}
    if verify is not None:
        verify = functools.cache(verify)  # one git question per commit
    pins: list[tuple[str, str | None]] = [(identity.commit, identity.commit_date)]
    identities: dict[str, Identity] = {}
    for i, record in enumerate(records):
        if record["id"] in skip:
            continue
        old = previous.get(record["id"])
        if old is None or not _may_hold(old, record):
            continue
        if record["id"] in as_read:
            if _same(record, old, lines, sizes):
                kept[record["id"]] = old
            continue
        found = None
        hint = known(record["id"]) if known is not None and old.line is not None else None
        if hint is not None and hint[2] != old.line:
            hint = None  # (another line: compared as without it)
        if hint is not None:
            at = (hint[0], hint[1])
            n = next((n for n, tried in enumerate(pins[:TRIED]) if tried == at), None)
            if n is not None:
                if defer and at[0] != identity.commit:
                    deferred[record["id"]] = at
                    found = record
                else:
                    found = _at(record, identity, *at, identities)
                lines[record["id"]], sizes[record["id"]] = (None, hint[2]), hint[3]
                pins.insert(0, pins.pop(n))
        else:
            for n, (commit, date) in enumerate(pins[:TRIED]):
                candidate = _at(record, identity, commit, date, identities)
                if _same(candidate, old, lines, sizes):
                    found = candidate
                    pins.insert(0, pins.pop(n))
                    break
        if found is None:
            own = _own_pin(record["id"], old, identity, verify)
            if own is None or own in pins[:TRIED]:
                continue  # no pin to keep it at, or one it was just tried at
            # A vouched-for pin goes first whether or not this record is kept at it: the next
            # records of that sync try it without parsing their files (a record that changed
            # must not hide its pin from the unchanged ones after it).
            if own in pins:
                pins.remove(own)
            pins.insert(0, own)
            if defer and hint is not None and own == hint[:2]:  # (its line is the file's: kept, see _same)
                deferred[record["id"]] = own
                lines[record["id"]], sizes[record["id"]] = (None, hint[2]), hint[3]
                found = record
            else:
                candidate = _at(record, identity, *own, identities)
                if not _same(candidate, old, lines, sizes, hint[2:] if hint is not None and own == hint[:2] else None):
                    continue
                found = candidate
        if found is not record:
            out[i] = found
        kept[record["id"]] = old
    return Repinned(out, kept, lines, sizes, deferred)


def _may_hold(old: PreviousRecord, record: RecordData) -> bool:
    """False when ``old``'s file cannot be ``record`` at any pin: it lacks the record's history
    (which no pin changes) as ``dumps_record`` writes it. A sync over a dataset ``errcat crawl``
    wrote gives every record a history: no record is serialized, nor its file's provenance
    parsed, to find that out. (A file the memo vouched for, whose bytes are not at hand: True.)"""
    if old.data is None or "history" not in record:
        return True
    try:
        return record_field("history", record["history"]) in old.data
    except TypeError:  # not JSON: the writer says what is wrong with it
        return False


def _same(
    candidate: RecordData, old: PreviousRecord, lines: dict[str, tuple[bytes | None, bytes]], sizes: dict[str, int], hint: tuple[Any, ...] | None = None
) -> bool:
    """Whether ``old``'s file is exactly what errcat writes for ``candidate``: by the digest of the
    record's errors.jsonl line when the memo vouches for the line written with that file (the
    line's digest and size are kept in ``lines`` and ``sizes``: the writer needs them too), else
    by the file's bytes. Data JSON cannot carry is never the same: the writer says what is wrong
    with it. ``hint``: the digest and size of the candidate's line, known without serializing it
    (``Known``): the same when it is the line the memo vouches for as the file's; any other hint
    is not taken (the candidate is serialized and compared)."""
    if hint is not None and old.line is not None and hint[0] == old.line:
        lines[candidate["id"]] = (None, hint[0])
        sizes[candidate["id"]] = hint[1]
        return True
    try:
        line = dumps_line(candidate)
        digest = line_digest(line)
        if old.line is not None:
            if digest != old.line:
                return False
        elif not old.holds(dumps_record(candidate)):
            return False
    except TypeError:  # orjson.JSONEncodeError
        return False
    lines[candidate["id"]] = (None, digest)
    sizes[candidate["id"]] = len(line)
    return True


def _at(record: RecordData, identity: Identity, commit: str, date: str | None, identities: dict[str, Identity]) -> RecordData:
    if commit == identity.commit:
        return record
    if commit not in identities:
        identities[commit] = pinned(identity, commit)
    return repin(record, identity, commit, date, identities[commit])


def _own_pin(record_id: str, old: PreviousRecord, identity: Identity, verify: Verifier | None) -> tuple[str, str | None] | None:
    """The (commit, date) a previous record's file states, when it may be kept at it."""
    prov = old.provenance(record_id)
    if prov is None or prov.source != identity.source or prov.repo != identity.slug or prov.upstream_commit is not None:
        return None
    if prov.permalinks.model_dump(mode="json") != _links_of(identity, prov.commit):
        return None
    if prov.commit == identity.commit:
        return None  # at the crawled commit: kept only as the fresh record, tried first
    if verify is None or verify(prov.commit) != prov.commit_date:
        return None
    return prov.commit, prov.commit_date
