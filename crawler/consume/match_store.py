"""The matcher's index on disk, so ``errcat match`` answers at the speed of a keystroke.

Loading search.json (11 MB for vLLM) and validating it takes most of a second; a match reads a
few dozen entries of it. This store is an sqlite file, one per dataset, in the user cache
(``<cache>/match/``): the entries as compact rows and the lookups the ``Matcher`` makes
(anchor word, entries without an anchor, function name, word postings), each a table with the
word first in its key, so a query reads only the rows it needs. ``StoredMatcher`` is the
``Matcher`` answering those lookups from the file, loading an entry only when one is asked for.

It is built from the validated search index and foreign list (``Matcher.load``), at the end of
a crawl and again whenever the dataset's files change (the file's name is a digest of their
paths, sizes, modification times and inodes; a dataset is replaced by a rename, so a new one
has new inodes). Built into a temporary file and renamed into place: a reader never sees half
a store. A store that cannot be read is set aside and built again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from crawler.base.dataset_files import FOREIGN, MATCHED, SEARCH
from crawler.consume.match import Matcher, Prepared

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crawler.catalogue.search import Shaped

#: Bumped when the tables or rows change, or what a build checks: a store of another format is
#: never read (3: a build refuses a manifest of another schema_version; a store built before
#: did not look, so it is built again).
FORMAT = "4"  # 4: an entry's condition (a bare assert's), the row's last column
_CHUNK = 500  # words per query: under every sqlite build's limit on bound parameters


class StoredSite(NamedTuple):
    path: str
    line: int
    qualname: str


@dataclass(slots=True)
class StoredEntry:
    """What matching and its output read of a search entry (``search.SearchEntry``)."""

    id: str
    title: str
    exception: str
    catch_as: list[str]
    text: str
    fields: list[str]
    fragments: list[str]
    starts_literal: bool
    ends_literal: bool
    anchors: list[str]
    opaque: bool
    sites: list[StoredSite]
    kind: str = "raise"
    condition: str | None = None


@dataclass(slots=True)
class StoredForeign:
    """``records.ForeignError``, as the match path reads it."""

    name: str
    origin: str
    match: list[str]
    explanation: str
    check: list[str]
    urls: list[str]


def store_path(dataset: Path, cache_dir: Path | None = None) -> Path:
    from crawler.base.cachedir import default_cache_dir

    h = hashlib.sha256(f"{FORMAT}\0{dataset.resolve()}".encode())
    for name in MATCHED:
        try:
            st = (dataset / name).stat()
            h.update(f"\0{name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode())
        except OSError:
            h.update(f"\0{name}:-".encode())
    return (cache_dir or default_cache_dir()) / "match" / f"{h.hexdigest()[:32]}.sqlite"


def _latest(dataset: Path, directory: Path) -> Path:
    """The file naming the store last built for the dataset at this path."""
    digest = hashlib.sha256(f"{FORMAT}\0{dataset.resolve()}".encode()).hexdigest()
    return directory / f"{digest[:32]}.latest"


class _Shape(NamedTuple):
    """What :func:`_shape` reads of a dataset: the digest, and the lines of each entry's sites (the
    only part of the entry rows it leaves out) with the number of each entry's alternatives."""

    digest: str
    lines: list[list[int]]
    alternatives: list[int]


#: search.json as a crawl wrote it: the SHA-256 of its bytes and the document they serialize, or
#: what the shape reads of it (``search.Shaped``).
Written = tuple[bytes, "dict[str, Any] | Shaped"]

#: A site's line as the search index's model admits it (``search.SearchSite.line``).
_MAX_LINE = 2**63


def _shape(dataset: Path, written: Written | None = None) -> _Shape | None:
    """A digest of everything the store is made of but the lines of the entries' sites (which only
    its entry rows hold): the search index and the foreign list as written, each site's line
    and the index's commit left out; and those lines. None when they cannot be read as JSON, or
    a line is not one (then the store is built anew, and reading the dataset says what is wrong).
    ``written``: the search index the crawl just wrote, taken rather than parsed again when
    search.json holds exactly those bytes (their SHA-256 is the one the crawl wrote)."""
    import orjson

    from crawler.catalogue.search import Shaped, shape_piece

    h = hashlib.sha256(FORMAT.encode())
    lines: list[list[int]] = []
    alternatives: list[int] = []
    try:
        data = (dataset / SEARCH).read_bytes()
        document = written[1] if written is not None and hashlib.sha256(data).digest() == written[0] else orjson.loads(data)
        foreign = (dataset / FOREIGN).read_bytes() if (dataset / FOREIGN).is_file() else b""
        pieces: Iterable[tuple[bytes, list[Any], int]]
        if isinstance(document, Shaped):  # (the crawl's, made of the rows it wrote)
            rest, pieces = document.rest, document.pieces
        else:
            # (not in the store: the commit, for a commit that moved code names another)
            rest = {key: value for key, value in document.items() if key not in ("entries", "commit")}
            pieces = map(shape_piece, document["entries"])
        h.update(orjson.dumps(rest, option=orjson.OPT_SORT_KEYS) + b"\0" + foreign)
        for piece, found, count in pieces:
            h.update(b"\0" + piece)
            if not all(type(n) is int and 1 <= n < _MAX_LINE for n in found):
                return None
            lines.append(found)
            alternatives.append(count)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return _Shape(h.hexdigest(), lines, alternatives)


def build(dataset: Path, path: Path, written: Written | None = None) -> None:
    """Write the store of a dataset (validated on the way in: ``load_search_index``) at ``path``.

    When the store last built for a dataset at this path was made of the same entries but for
    their sites' lines (a commit that moved code down a file), it is copied and only the entry
    rows whose lines moved written again: the lookups it holds (anchors, functions, words) do not
    read lines. That store's dataset was replaced, so no reader can ask for it again: it goes.
    ``written``: see :func:`_shape`.

    The manifest is read first, whichever way the store is made: a dataset of another
    schema_version (or whose manifest is damaged) is refused even when only its manifest changed
    and the previous store would be copied (the copy reads no manifest)."""
    from crawler.publish.dataset import load_manifest

    load_manifest(dataset)
    path.parent.mkdir(parents=True, exist_ok=True)
    shape = _shape(dataset, written)
    latest = _latest(dataset, path.parent)
    try:
        previous: Path | None = path.parent / latest.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        previous = None
    if previous is not None and (previous.parent != path.parent or not previous.name.endswith(".sqlite")):
        previous = None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        if not (shape is not None and previous is not None and previous != path and _moved(previous, tmp, shape)):
            tmp.unlink(missing_ok=True)
            _write(dataset, tmp, shape.digest if shape is not None else None)
        os.replace(tmp, path)
        latest.write_text(path.name, encoding="ascii")
    finally:
        tmp.unlink(missing_ok=True)
    if previous is not None and previous != path:
        previous.unlink(missing_ok=True)


def _moved(previous: Path, tmp: Path, shape: _Shape) -> bool:
    """Write at ``tmp`` a copy of the store ``previous`` with its entry rows' site lines those of
    ``shape``, when that store is of the same shape (see :func:`_shape`); False when it is not (or
    unreadable). The rows are the validated ones of the previous store: only the lines are new,
    and :func:`_shape` checked them. The store keeps every row's lines (meta ``lines``), so only
    the rows whose lines moved are read and written."""
    import shutil

    try:
        con = sqlite3.connect(f"file:{previous}?mode=ro", uri=True)
        try:
            meta = dict(con.execute("SELECT k, v FROM meta"))
        finally:
            con.close()
        if meta.get("format") != FORMAT or meta.get("shape") != shape.digest:
            return False
        shutil.copyfile(previous, tmp)
    except (OSError, sqlite3.Error):
        return False
    # numbered as ``match.expanded`` numbers them: the entries, then each one's alternatives
    lines = [*shape.lines, *(found for found, n in zip(shape.lines, shape.alternatives, strict=True) for _ in range(n))]
    try:
        before = json.loads(meta["lines"])
        if not (isinstance(before, list) and len(before) == len(lines)):
            return False
    except (KeyError, ValueError):
        return False
    moved = [n for n, found in enumerate(lines) if before[n] != found]
    con = sqlite3.connect(tmp)
    try:
        with con:
            if con.execute("SELECT COUNT(*) FROM entry").fetchone()[0] != len(lines):
                return False
            changed = []
            for i in range(0, len(moved), _CHUNK):
                part = moved[i : i + _CHUNK]
                for n, data in con.execute(f"SELECT n, data FROM entry WHERE n IN ({','.join('?' * len(part))})", part):
                    row = json.loads(data)
                    if len(row[_SITES]) != len(lines[n]):
                        return False
                    for site, line in zip(row[_SITES], lines[n], strict=True):
                        site[_LINE] = line
                    changed.append((json.dumps(row, ensure_ascii=False), n))
            if len(changed) != len(moved):
                return False
            con.executemany("UPDATE entry SET data = ? WHERE n = ?", changed)
            con.execute("UPDATE meta SET v = ? WHERE k = 'lines'", (json.dumps(lines),))
    except (sqlite3.Error, ValueError, TypeError, IndexError):
        return False
    finally:
        con.close()
    return True


def _write(dataset: Path, tmp: Path, shape: str | None) -> None:
    """Write the store of a dataset at ``tmp``, from its search index and foreign list."""
    matcher = Matcher.load(dataset)
    con = sqlite3.connect(tmp)
    with con:
        con.executescript(
            "CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);"
            "CREATE TABLE entry (n INTEGER PRIMARY KEY, data TEXT NOT NULL);"
            "CREATE TABLE anchor (word TEXT, n INTEGER, PRIMARY KEY (word, n)) WITHOUT ROWID;"
            "CREATE TABLE kind (kind TEXT, n INTEGER, PRIMARY KEY (kind, n)) WITHOUT ROWID;"
            "CREATE TABLE func (name TEXT, n INTEGER, PRIMARY KEY (name, n)) WITHOUT ROWID;"
            "CREATE TABLE posting (word TEXT, n INTEGER, PRIMARY KEY (word, n)) WITHOUT ROWID;"
        )
        number = {id(p): n for n, p in enumerate(matcher.entries)}
        con.executemany("INSERT INTO entry VALUES (?, ?)", ((n, json.dumps(_row(p.entry), ensure_ascii=False)) for n, p in enumerate(matcher.entries)))
        con.executemany("INSERT INTO anchor VALUES (?, ?)", ((w, number[id(p)]) for w, ps in matcher.buckets.items() for p in ps))
        con.executemany(
            "INSERT INTO kind VALUES (?, ?)", [*(("loose", number[id(p)]) for p in matcher.loose), *(("blank", number[id(p)]) for p in matcher.blank)]
        )
        con.executemany("INSERT OR IGNORE INTO func VALUES (?, ?)", ((w, number[id(p)]) for w, ps in matcher.by_function.items() for p in ps))
        con.executemany("INSERT INTO posting VALUES (?, ?)", ((w, n) for w, ns in matcher._posting_lists().items() for n in ns))
        foreign = [
            {"name": f.name, "origin": f.origin, "match": list(f.match), "explanation": f.explanation, "check": list(f.check), "urls": list(f.urls)}
            for f in matcher.foreign
        ]
        con.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [
                ("format", FORMAT),
                ("repo", matcher.repo),
                ("total", str(matcher.total)),
                ("foreign", json.dumps(foreign)),
                ("lines", json.dumps([[s.line for s in p.entry.sites] for p in matcher.entries])),
                *([("shape", shape)] if shape is not None else []),
            ],
        )
    con.close()


#: Where an entry row (:func:`_row`) holds its sites, and a site its line.
_SITES, _LINE = 11, 1


def _row(e: Any) -> list[Any]:
    return [
        e.id,
        e.title,
        e.exception,
        e.catch_as,
        e.text,
        e.fields,
        e.fragments,
        e.starts_literal,
        e.ends_literal,
        e.anchors,
        e.opaque,
        [[s.path, s.line, s.qualname] for s in e.sites],
        e.kind,
        e.condition,
    ]


class DamagedStore(Exception):
    """A row of the store that does not decode to what was written: a query found it, so the
    store is set aside and the query asked again of a new one (``open_matcher(fresh=True)``)."""


def open_matcher(dataset: Path, cache_dir: Path | None = None, fresh: bool = False) -> StoredMatcher:
    """The dataset's matcher, from its store (built first when there is none or it is unreadable;
    with ``fresh``, built again whatever is there)."""
    from crawler.base.cachedir import move_aside

    path = store_path(dataset, cache_dir)
    if fresh and path.is_file():
        move_aside(path)
    if not path.is_file():
        build(dataset, path)
    try:
        return StoredMatcher(path, str(dataset))
    except sqlite3.DatabaseError:
        move_aside(path)
        build(dataset, path)
        return StoredMatcher(path, str(dataset))


class StoredMatcher(Matcher):
    """A ``Matcher`` whose lookups read the store; entries are loaded when first needed."""

    def __init__(self, path: Path, dataset: str) -> None:
        self._con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = dict(self._con.execute("SELECT k, v FROM meta"))
        if meta.get("format") != FORMAT:
            raise sqlite3.DatabaseError("another store format")
        self.dataset = dataset
        try:
            self.repo = meta["repo"]
            self.total = int(meta["total"])
            self.foreign = [StoredForeign(**f) for f in json.loads(meta["foreign"])]
        except (KeyError, ValueError, TypeError):
            raise sqlite3.DatabaseError("a damaged store") from None
        self._loaded: dict[int, Prepared] = {}

    @property
    def entries(self) -> list[Prepared]:
        return self._entries([n for (n,) in self._con.execute("SELECT n FROM entry ORDER BY n")])

    def _entries(self, numbers: list[int]) -> list[Prepared]:
        missing = [n for n in dict.fromkeys(numbers) if n not in self._loaded]
        for i in range(0, len(missing), _CHUNK):
            part = missing[i : i + _CHUNK]
            for n, data in self._con.execute(f"SELECT n, data FROM entry WHERE n IN ({','.join('?' * len(part))})", part):
                try:
                    self._loaded[n] = Prepared(_entry(json.loads(data)))
                except (ValueError, TypeError, AttributeError) as e:
                    raise DamagedStore(f"{self.dataset}: entry {n} of its match index: {e}") from None
        try:
            return [self._loaded[n] for n in numbers]
        except KeyError as e:  # a number a lookup table gives that no entry row has
            raise DamagedStore(f"{self.dataset}: no entry {e} in its match index") from None

    def _numbers(self, sql: str, keys: list[str]) -> list[int]:
        out: list[int] = []
        for i in range(0, len(keys), _CHUNK):
            part = keys[i : i + _CHUNK]
            out += [n for (n,) in self._con.execute(sql.replace("?*", ",".join("?" * len(part))), part)]
        return out

    def _bucket(self, words: set[str]) -> list[Prepared]:
        return self._entries(self._numbers("SELECT n FROM anchor WHERE word IN (?*) ORDER BY n", sorted(words)))

    def _kind(self, kind: str) -> list[Prepared]:
        return self._entries(self._numbers("SELECT n FROM kind WHERE kind IN (?*) ORDER BY n", [kind]))

    def _in_function(self, name: str) -> list[Prepared]:
        return self._entries(self._numbers("SELECT n FROM func WHERE name IN (?*) ORDER BY n", [name]))

    def _posting_sizes(self, words: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in range(0, len(words), _CHUNK):
            part = words[i : i + _CHUNK]
            out.update(self._con.execute(f"SELECT word, COUNT(*) FROM posting WHERE word IN ({','.join('?' * len(part))}) GROUP BY word", part))
        return {w: out[w] for w in words if w in out}

    def _posting(self, word: str) -> list[int]:
        return self._numbers("SELECT n FROM posting WHERE word IN (?*) ORDER BY n", [word])

    def _numbered(self, numbers: list[int]) -> list[Prepared]:
        return self._entries(numbers)


def _entry(row: list[Any]) -> StoredEntry:
    (id_, title, exception, catch_as, text, fields, fragments, starts, ends, anchors, opaque, sites, kind, condition) = row
    return StoredEntry(
        id_, title, exception, catch_as, text, fields, fragments, starts, ends, anchors, opaque, [StoredSite(*s) for s in sites], kind, condition
    )
