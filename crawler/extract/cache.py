"""A content-addressed cache of per-file extraction results, in one SQLite file.

Key: the git blob id, the path (module names and relative imports depend on it) and the
extractor version, so no unchanged file is parsed twice, across runs or commits, and a new
extractor invalidates everything it could have changed. Values are zlib-compressed JSON: our own
data, never pickles, so a tampered cache can at worst give wrong facts, never run code.

The cache is an optimisation and never fails a crawl (see :class:`ResultCache`): a damaged file
is set aside, a row that does not decode to a result is a miss, and a file the system will not
let us read or write is done without.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeGuard, cast

import orjson

from crawler.base.cachedir import default_cache_dir, move_aside
from crawler.base.progress import Progress, quiet
from crawler.model.shapes import FileResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value BLOB NOT NULL);
"""
_BATCH = 500


def result_key(blob: str, path: str, extractor_version: str) -> str:
    return f"{extractor_version}:{blob}:{path}"


#: SQLite's primary result codes that mean the file is not a sound database of ours (corrupt
#: pages, a garbled header, a table of another shape), as opposed to a system refusing a write
#: (full, read-only, locked) that leaves the file as it was.
_DAMAGE_CODES = {1: "SQLITE_ERROR", 11: "SQLITE_CORRUPT", 26: "SQLITE_NOTADB"}
#: SQLite's companions of the database file, which belong to it (a write-ahead log replayed into
#: a new database would damage it in turn).
_COMPANIONS = ("-wal", "-shm", "-journal")


def _is_damage(error: Exception) -> bool:
    if isinstance(error, sqlite3.Error):
        return (getattr(error, "sqlite_errorcode", 0) & 0xFF) in _DAMAGE_CODES
    return not isinstance(error, OSError)  # a row of the wrong width (ValueError)


class ResultCache:
    """The cache file. It is an optimisation, so it never fails a crawl: a damaged file is moved
    aside (``results.sqlite3.damaged``) and replaced by a new one; a file the system will not
    let us read or write (a read-only directory, a full disk) is left as it is and the crawl goes
    on without it. Either way ``progress`` hears one line, and the crawl's output is what
    ``--no-cache`` gives."""

    def __init__(self, directory: Path | None = None, progress: Progress = quiet) -> None:
        directory = directory or default_cache_dir()
        self.path = directory / "results.sqlite3"
        self._progress = progress
        self._db: sqlite3.Connection | None = None
        self._replaced = False
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._connect()
        except (sqlite3.Error, OSError, ValueError) as e:
            self._failed(e, "opening it")

    def _connect(self) -> None:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        self._db = db

    def _failed(self, error: Exception, doing: str) -> None:
        """Stop using the file after ``error``; when it is damaged, set it aside and start a new one."""
        self.close()
        what = f"{type(error).__name__}: {error}"
        if not _is_damage(error):
            self._progress(f"the result cache {self.path} failed {doing} ({what}); going on without it")
            return
        try:
            aside = move_aside(self.path)
            for suffix in _COMPANIONS:
                companion = self.path.with_name(self.path.name + suffix)
                if companion.exists():
                    os.replace(companion, aside.with_name(aside.name + suffix))
        except OSError as e:
            self._progress(f"the result cache {self.path} is damaged ({what}) and cannot be moved aside ({e.strerror or e}); going on without it")
            return
        self._progress(f"the result cache {self.path} is damaged ({what}): moved aside to {aside.name}, going on with a new one")
        if not self._replaced:  # once: a new file that fails too is not replaced again
            self._replaced = True
            try:
                self._connect()
            except (sqlite3.Error, OSError) as e:
                self._failed(e, "making a new one")

    def close(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _select(self, db: sqlite3.Connection, keys: list[str]) -> dict[str, bytes]:
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), _BATCH):
            chunk = keys[start : start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows += db.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk).fetchall()
        return dict(rows)

    def get_raw(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The stored bytes of every key found (see :func:`decode_result`); none when the file fails."""
        if self._db is None:
            return {}
        try:
            return self._select(self._db, list(keys))
        except (sqlite3.Error, ValueError) as e:
            self._failed(e, "reading")
            return {}

    def prune(self, version: str) -> int:
        """Drop every result not made by the extractor ``version`` and give the space back;
        returns how many rows went. Results of other versions can never be served again by this
        errcat (the version is part of the key), so a cache kept across upgrades, as the sync
        workflow keeps it, would otherwise grow by a whole code base's results with each one."""
        if self._db is None:
            return 0
        prefix, tests = f"{version}:", f"test.{version}:"  # (a test file's row: see ``runner._key``)
        try:
            dropped = self._db.execute(
                "DELETE FROM results WHERE substr(key, 1, ?) != ? AND substr(key, 1, ?) != ?", (len(prefix), prefix, len(tests), tests)
            ).rowcount
            if dropped:
                self._db.execute("VACUUM")
        except sqlite3.Error as e:
            self._failed(e, "pruning")
            return 0
        return dropped

    def keep_latest(self, prefix: str, count: int) -> None:
        """Drop the rows whose key starts with ``prefix`` but the ``count`` written last."""
        if self._db is None:
            return
        try:
            self._db.execute(
                "DELETE FROM results WHERE substr(key, 1, ?) = ? AND rowid NOT IN (SELECT rowid FROM results "
                "WHERE substr(key, 1, ?) = ? ORDER BY rowid DESC LIMIT ?)",
                (len(prefix), prefix, len(prefix), prefix, count),
            )
        except sqlite3.Error as e:
            self._failed(e, "pruning")

    def latest(self, prefix: str, count: int) -> list[bytes]:
        """The values of the ``count`` rows whose key starts with ``prefix`` written last, newest first."""
        if self._db is None:
            return []
        try:
            rows = self._db.execute(
                "SELECT value FROM results WHERE substr(key, 1, ?) = ? ORDER BY rowid DESC LIMIT ?", (len(prefix), prefix, count)
            ).fetchall()
        except sqlite3.Error as e:
            self._failed(e, "reading")
            return []
        return [value for (value,) in rows]

    def put_encoded(self, items: Iterable[tuple[str, bytes]]) -> None:
        rows = list(items)
        for _ in range(2):  # a damaged file is replaced by a new one: the rows go there
            if not rows or self._db is None:
                return
            try:
                with self._db:
                    self._db.execute("BEGIN")
                    self._db.executemany("INSERT OR REPLACE INTO results (key, value) VALUES (?, ?)", rows)
                return
            except sqlite3.Error as e:
                self._failed(e, "saving results")


#: A per-file result's own keys and their types: a row that decodes to anything else (a key
#: missing, a list where a count belongs) is damage, a miss like a row that does not decode.
#: Deeper damage (inside a site) is found when the crawl cannot use the results (see crawl).
_RESULT_KEYS = {"path": str, "module": str, "status": str, "sites": list, "classes": list, "calls": list, "bare_asserts": int, "reraises": int}


#: What only the joins read when they are made: the knobs' declarations, the call graph's facts,
#: a test file's raises blocks. A row keeps them apart from the rest (the sites, classes and
#: counts every crawl reads), so a crawl whose joins are served decodes only the rest: for vLLM
#: v0.33.0, 51 of the 98 MB of JSON its 5,891 rows hold (``runner.extract_all``'s ``rest``).
REST_KEYS = ("declarations", "graph", "tests")


class HalfDecoded(AssertionError):
    """One of ``REST_KEYS`` read on a cached result whose rest was not put in (``runner.complete``):
    a bug of errcat's (the reader would take an empty default for what the row holds), never a
    damaged cache, so not one of the symptoms that make a crawl extract again."""


class Part(dict):  # type: ignore[type-arg]
    """A cached result decoded but its ``REST_KEYS`` (:func:`decode_part`): reading one of them
    (``[]`` or ``get``) before ``runner.complete`` put them in raises :class:`HalfDecoded`, rather
    than giving the empty default a reader of a result that lacks them takes. A copy
    (:meth:`copy`, :func:`copied`) is guarded alike."""

    __slots__ = ("whole",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.whole = False

    def _guard(self, key: Any) -> None:
        if not self.whole and key in REST_KEYS:
            raise HalfDecoded(f"{key!r} of the cached result of {dict.get(self, 'path')} read before runner.complete put it in")

    def __getitem__(self, key: Any) -> Any:
        self._guard(key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._guard(key)
        return dict.get(self, key, default)

    def copy(self) -> Part:
        return _part(dict(self), self.whole)

    def __reduce__(self) -> Any:  # (a forked helper's answer may hold one: it pickles as what it is)
        return (_part, (dict(self), self.whole))


def _part(data: dict[str, Any], whole: bool) -> Part:
    made = Part(data)
    made.whole = whole
    return made


def copied(result: Any, data: Any) -> Any:
    """``data`` (a copy of ``result``'s items, some changed) as a :class:`Part` guarded as
    ``result`` is when it is one; else ``data`` as it is."""
    return _part(data, result.whole) if type(result) is Part else data


#: The start of a row in two parts (a zlib stream starts with 0x78, never with this): the length
#: of the first part (4 bytes), the first part (the result but ``REST_KEYS``), then the second
#: (its keys in order, and the values of ``REST_KEYS``), each JSON compressed apart.
_PARTS = b"\x00ec2"


def decode_result(value: Any, path: str) -> FileResult | None:
    """The stored result of the file ``path``, or None when the row is damaged (a miss, not a
    failure)."""
    parted = decode_part(value, path)
    if parted is None or parted[1] is None:
        return None if parted is None else parted[0]
    return completed(parted[0], parted[1], path)


def decode_part(value: Any, path: str) -> tuple[FileResult, bytes | None] | None:
    """The stored result of ``path`` but its ``REST_KEYS``, and the bytes of those (None when the
    row holds none apart: the result is then whole); None when the row is damaged."""
    try:
        if type(value) is bytes and value[: len(_PARTS)] == _PARTS:
            start = len(_PARTS) + 4
            end = start + int.from_bytes(value[len(_PARTS) : start], "big")
            if end > len(value):
                return None
            result, rest = _decode(zlib.decompress(value[start:end])), value[end:]
        else:
            result, rest = _decode(zlib.decompress(value)), None
    except (zlib.error, ValueError, TypeError, RecursionError):  # the fallback decoder recurses
        return None
    if not _is_result(result, path) or rest is not None and any(key in result for key in REST_KEYS):
        return None
    # (a result with its rest apart is guarded until the rest is in: ``Part``)
    return (cast(FileResult, Part(result)), rest) if rest is not None else (result, None)


def completed(result: FileResult, rest: bytes, path: str) -> FileResult | None:
    """``result`` (of :func:`decode_part`) with its ``REST_KEYS`` from ``rest``, its keys in the
    order the extractor made them; None when ``rest`` is damaged."""
    try:
        order, values = _decode(zlib.decompress(rest))
    except (zlib.error, ValueError, TypeError, RecursionError):
        return None
    if type(order) is not list or type(values) is not dict or any(type(key) is not str for key in order) or any(key not in REST_KEYS for key in values):
        return None
    plain = cast("dict[str, Any]", result)
    whole = {key: plain[key] if key in plain else values[key] for key in order if key in plain or key in values}
    whole.update((key, value) for key, value in plain.items() if key not in whole)
    return whole if _is_result(whole, path) else None


def _is_result(result: Any, path: str) -> TypeGuard[FileResult]:
    """Whether a decoded row is this file's result, as far as its own keys go: a site's own keys
    are the crawl's to check (see the note above)."""
    if type(result) is not dict or result.get("path") != path:
        return False
    if any(type(result.get(key)) is not kind for key, kind in _RESULT_KEYS.items()):
        return False
    return result["status"] == "ok" and result.get("reason", 0) is None or result["status"] in ("skipped", "over_limit") and type(result.get("reason")) is str


def _decode(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # a surrogate-carrying result written by the fallback above
        return json.loads(raw.decode("utf-8", "surrogatepass"))


def encode_result(result: FileResult) -> bytes:
    """A per-file result as the cache stores it: compact JSON, zlib level 1, its ``REST_KEYS``
    apart (see ``_PARTS``).

    orjson when it can (5x faster); the standard library for text orjson refuses (a lone
    surrogate the extractor has not escaped), so such a result is cached all the same.
    """
    rest = {key: value for key, value in result.items() if key in REST_KEYS}
    if not rest:
        return zlib.compress(_dumps(result), 1)
    first = zlib.compress(_dumps({key: value for key, value in result.items() if key not in rest}), 1)
    return _PARTS + len(first).to_bytes(4, "big") + first + zlib.compress(_dumps([list(result), rest]), 1)


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode("utf-8", "surrogatepass")
