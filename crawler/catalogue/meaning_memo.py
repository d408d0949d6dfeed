"""Each record's meaning kept by what it read: a crawl whose source join must run again (a file
changed) makes anew only the meanings whose inputs changed.

A record's meaning (``meaning.record_meaning``) is a function of its primary site and kind, and
of what it looks up in the repository-wide tables (``meaning.build_tables``) and the call graph's
callers. The tables here record every lookup a record makes (a table and a key, or the whole
table when it is walked), and a kept meaning is taken only when its site is the same and every
lookup it made gives the same value now (compared by a digest of the value): the key is
everything the meaning read, found by running it, not guessed. Any lookup the code makes goes
through these tables (``tests/catalogue/test_meaning_memo.py`` holds that a change to any input
a kept meaning read makes it anew, and that a crawl with kept meanings gives the bytes a crawl
without them gives).

The memo is our own JSON in the joins' cache, checked on the way in: what does not fit is made
anew, never a failure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from typing import Any

import orjson

from crawler.catalogue.meaning import MeaningSettings, SiteMeaning, build_tables, derive_all, record_meaning
from crawler.catalogue.meaning import meanings as plain_meanings
from crawler.model.shapes import FileResult, RecordData

#: The lookups of the record being made, or None while none is (the tables are built untraced).
_LOG: list[list[tuple[str, Any]] | None] = [None]

#: A table read whole (walked, or a set built of it): the name of the read, beside the table's own.
WHOLE = "*"


class TracedDict(dict[Any, Any]):
    """A table that logs the keys looked up in it (``get``, ``[]``, ``in``) and a walk of it."""

    __slots__ = ("name",)

    def __init__(self, name: str, data: Any = ()) -> None:
        super().__init__(data)
        self.name = name

    def get(self, key: Any, default: Any = None) -> Any:
        log = _LOG[0]
        if log is not None:
            log.append((self.name, key))
        return dict.get(self, key, default)

    def __getitem__(self, key: Any) -> Any:
        log = _LOG[0]
        if log is not None:
            log.append((self.name, key))
        return dict.__getitem__(self, key)

    def __contains__(self, key: Any) -> bool:
        log = _LOG[0]
        if log is not None:
            log.append((self.name, key))
        return dict.__contains__(self, key)

    def _whole(self) -> None:
        log = _LOG[0]
        if log is not None:
            log.append((self.name + WHOLE, None))

    def __iter__(self) -> Iterator[Any]:
        self._whole()
        return dict.__iter__(self)

    def items(self) -> Any:
        self._whole()
        return dict.items(self)

    def keys(self) -> Any:
        self._whole()
        return dict.keys(self)

    def values(self) -> Any:
        self._whole()
        return dict.values(self)

    def __len__(self) -> int:  # (and ``bool``: whether it is empty is a read of it all)
        self._whole()
        return dict.__len__(self)

    def __eq__(self, other: object) -> bool:
        self._whole()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._whole()
        return dict.__ne__(self, other)

    def __or__(self, other: Any) -> Any:  # (``dict.__or__`` copies without a walk of its own)
        self._whole()
        return dict.__or__(self, other)

    def __ror__(self, other: Any) -> Any:
        self._whole()
        return dict.__ror__(self, other)

    def copy(self) -> dict[Any, Any]:
        self._whole()
        return dict.copy(self)


class TracedSet(set[Any]):
    """A set that logs the members asked for, and a walk of it or any other read of it whole (its
    size, a comparison, an operation with another set). A set read as the argument of another
    set's method (``set(s)``, ``other.issubset(s)``) is read without a trace: the per-record code
    does not (``test_each_meaning_is_the_same_over_only_the_lookups_it_logged`` holds it)."""

    __slots__ = ("name",)

    def __init__(self, name: str, data: Any = ()) -> None:
        super().__init__(data)
        self.name = name

    def __contains__(self, key: Any) -> bool:
        log = _LOG[0]
        if log is not None:
            log.append((self.name, key))
        return set.__contains__(self, key)

    def __iter__(self) -> Iterator[Any]:
        log = _LOG[0]
        if log is not None:
            log.append((self.name + WHOLE, None))
        return set.__iter__(self)


def _read_whole(method: str) -> Any:
    """``set``'s ``method``, logging a read of the whole set first."""
    plain = getattr(set, method)

    def read(self: TracedSet, *args: Any) -> Any:
        log = _LOG[0]
        if log is not None:
            log.append((self.name + WHOLE, None))
        return plain(self, *args)

    read.__name__ = method
    return read


# (the C operations and methods read the members without ``__iter__``; a reflected operator is
# tried first when the right operand is a TracedSet, so ``plain & traced`` is traced too)
for _method in (
    "__len__",
    "__eq__",
    "__ne__",
    "__le__",
    "__lt__",
    "__ge__",
    "__gt__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__sub__",
    "__rsub__",
    "__xor__",
    "__rxor__",
    "isdisjoint",
    "issubset",
    "issuperset",
    "intersection",
    "union",
    "difference",
    "symmetric_difference",
    "copy",
):
    setattr(TracedSet, _method, _read_whole(_method))


def traced(tables: Any, callers: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The tables with every dict and set field (the derived ones made first) a traced copy, and
    the callers traced too; with each by the name its lookups are logged under."""
    derive_all(tables)
    named: dict[str, Any] = {}
    for f in fields(tables):
        value = getattr(tables, f.name)
        if type(value) is dict:
            value = TracedDict(f.name, value)
        elif type(value) is set:
            value = TracedSet(f.name, value)
        else:
            continue
        setattr(tables, f.name, value)
        named[f.name] = value
    named["callers"] = TracedDict("callers", callers)
    return tables, named


_ABSENT = object()


def _digest(value: Any) -> str | None:
    try:
        return hashlib.blake2b(orjson.dumps(value), digest_size=12).hexdigest()
    except TypeError:  # (not JSON: a read never taken as the same)
        return None


def fingerprint(named: dict[str, Any], name: str, key: Any) -> str | None:
    """What a lookup gives in these tables, as a digest; None when it cannot be told."""
    if name.endswith(WHOLE):
        table = named.get(name[: -len(WHOLE)])
        if isinstance(table, set):
            try:
                return _digest(sorted(set.__iter__(table)))
            except TypeError:
                return None
        return _digest(list(dict.items(table))) if isinstance(table, dict) else None
    table = named.get(name)
    if isinstance(table, set):
        try:
            return "1" if set.__contains__(table, key) else "0"
        except TypeError:
            return None
    return _entry_print(table, key) if isinstance(table, dict) else None


def _entry_print(table: dict[Any, Any], key: Any) -> str | None:
    try:
        value = dict.get(table, key, _ABSENT)
    except TypeError:  # (an unhashable key: a kept read that does not fit)
        return None
    return "-" if value is _ABSENT else _digest(value)


def _fingerprints(named: dict[str, Any], reads: list[tuple[str, Any]]) -> list[str | None]:
    """:func:`fingerprint` of each lookup, those of a key of one dict table at once (most of them)."""
    by_table: dict[str, list[int]] = {}
    for i, (name, _) in enumerate(reads):
        by_table.setdefault(name, []).append(i)
    out: list[str | None] = [None] * len(reads)
    for name, at in by_table.items():
        table = named.get(name)
        if type(table) is not TracedDict:
            for i in at:
                out[i] = fingerprint(named, *reads[i])
            continue
        for i in at:
            out[i] = _entry_print(table, reads[i][1])
    return out


def site_digest(record: RecordData) -> str | None:
    """What a record's meaning reads of the record itself: its kind and primary site, but for the
    site's permalink (which names the crawled commit; no meaning reads it)."""
    site = record["sites"][0]
    return _digest([record["kind"], {k: v for k, v in site.items() if k != "permalink"}])


class _Kept:
    """A kept memo: the lookups it names (checked on the way in) and its rows by site digest
    (each checked when it is taken, see :func:`_row`)."""

    def __init__(self, raw: Any) -> None:
        self.reads: list[tuple[str, Any]] = []
        self.prints: list[str | None] = []
        self.index: dict[tuple[str, Any], int] = {}
        self.sites: dict[str, Any] = {}
        if type(raw) is not dict:
            return
        reads, sites = raw.get("reads"), raw.get("sites")
        if type(reads) is not list or type(sites) is not dict:
            return
        try:
            for read in reads:
                if not (type(read) is list and len(read) == 3 and type(read[0]) is str and type(read[2]) in (str, type(None))):
                    raise TypeError
                key = read[1]  # (the tables' keys are names and flat tuples: a nested list is no key)
                self.reads.append((read[0], tuple(key) if type(key) is list else key))
                self.prints.append(read[2])
            self.index = {read: i for i, read in enumerate(self.reads)}  # (hashes every key: TypeError if one is not)
        except TypeError:
            self.reads, self.prints, self.index = [], [], {}
            return
        if len(self.index) != len(self.reads) or not sites:  # (a read named twice: not a memo this module wrote)
            self.reads, self.prints, self.index = [], [], {}  # (this run numbers its lookups from none)
            return
        self.sites = sites


def _row(row: Any, n: int) -> bool:
    """Whether a kept row is [knobs, trigger, fix, indexes of the ``n`` kept lookups]."""
    if not (
        type(row) is list
        and len(row) == 4
        and type(row[0]) is list
        and all(type(k) is dict for k in row[0])
        and type(row[1]) is str
        and type(row[2]) in (str, type(None))
        and type(row[3]) is list
    ):
        return False
    used = row[3]  # (checked by type at C speed: a record reads ~16 lookups, a crawl ~180k)
    return not used or set(map(type, used)) == {int} and min(used) >= 0 and max(used) < n


class Memo:
    """Reads and writes the kept meanings (``get``: the kept JSON or None; ``put``: keep this;
    ``near``: whether this crawl is near enough the last one that ran the join for a memo to pay)."""

    def __init__(self, get: Callable[[], Any], put: Callable[[Any], None], near: Callable[[], bool] = lambda: True) -> None:
        self.get, self.put, self.near = get, put, near
        #: how many meanings were taken and made by the last run (what the tests and bench read)
        self.taken = self.made = 0


def meanings(
    records: Sequence[RecordData],
    results: list[FileResult],
    settings: MeaningSettings,
    callers: dict[str, list[tuple[str, str, int]]] | None,
    memo: Memo,
    tables: Any = None,
) -> dict[str, SiteMeaning]:
    """``meaning.meanings``, taking each kept meaning whose site and lookups are the same, and
    keeping what this run read for the next.

    Every kept lookup is made again once, up front (a row is then checked with one set
    operation: the lookups of a meaning are many, and checking them one by one cost about what
    making the meaning does). The lookups keep their numbers, with the digests of now."""
    if not memo.near():  # (the crawl's caller says when keeping them cannot pay: see meaning_join.MEMO_FILES)
        memo.taken, memo.made = 0, len(records)
        return plain_meanings(records, results, settings, callers, tables)
    # (``traced`` puts traced copies in the tables' fields: the caller's tables, when given, are
    # read by nothing after this; a crawl makes the meanings in a helper process anyway)
    tables, named = traced(build_tables(results, settings) if tables is None else tables, callers or {})
    kept = _Kept(memo.get())
    reads = kept.reads
    prints = _fingerprints(named, reads)
    stale = {i for i, (now, was) in enumerate(zip(prints, kept.prints, strict=True)) if now is None or now != was}
    index = kept.index
    unknown = {i for i, was in enumerate(prints) if was is None}  # lookups whose value could not be told

    def numbered(log: list[tuple[str, Any]]) -> list[int]:
        """The numbers of the lookups of ``log``, each once; new ones numbered and told now.
        (Most a crawl makes were made by an earlier record: one dict lookup each.)"""
        distinct = list(dict.fromkeys(log))
        used = [index.get(read, -1) for read in distinct]
        if -1 in used:
            for k, at in enumerate(used):
                if at < 0:
                    read = distinct[k]
                    used[k] = index[read] = len(reads)
                    reads.append(read)
                    prints.append(fingerprint(named, *read))
                    if prints[-1] is None:
                        unknown.add(used[k])
        return used

    out: dict[str, SiteMeaning] = {}
    rows: dict[str, list[Any]] = {}
    n = len(reads)
    taken = 0
    for record in records:
        digest = site_digest(record)
        row = kept.sites.get(digest) if digest is not None else None
        if row is not None and _row(row, n) and stale.isdisjoint(row[3]):
            out[record["id"]] = SiteMeaning(knobs=row[0], trigger=row[1], fix=row[2])
            rows[digest] = row  # type: ignore[index]  # (a digest: a row was found by it)
            taken += 1
            continue
        log: list[tuple[str, Any]] = []
        _LOG[0] = log
        try:
            meaning = record_meaning(tables, record, named["callers"])
        finally:
            _LOG[0] = None
        out[record["id"]] = meaning
        if digest is not None:
            try:
                used = numbered(log)
            except TypeError:  # (an unhashable key: this meaning is not kept)
                continue
            if unknown.isdisjoint(used):
                rows[digest] = [meaning["knobs"], meaning["trigger"], meaning["fix"], used]
    memo.taken, memo.made = taken, len(records) - taken
    memo.put(_kept(reads, prints, rows))
    return out


def _kept(reads: list[tuple[str, Any]], prints: list[str | None], rows: dict[str, list[Any]]) -> dict[str, Any]:
    """The memo to keep: the lookups the rows name, numbered anew when the ones no row names
    (lookups of meanings no longer made) have grown to a third of them."""
    used = sorted({i for row in rows.values() for i in row[3]})
    if len(used) * 3 >= len(reads) * 2:
        return {"reads": [[name, key, was] for (name, key), was in zip(reads, prints, strict=True)], "sites": rows}
    renumber = {i: k for k, i in enumerate(used)}
    return {"reads": [[*reads[i], prints[i]] for i in used], "sites": {d: [*row[:3], [renumber[i] for i in row[3]]] for d, row in rows.items()}}
