"""A content-addressed cache of per-file extraction results, in one SQLite file.

Key: the git blob id, the path (module names and relative imports depend on it) and the
extractor version, so no unchanged file is parsed twice, across runs or commits, and a new
extractor invalidates everything it could have changed. Values are zlib-compressed JSON: our own
data, never pickles, so a tampered cache can at worst give wrong facts, never run code.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Any, Iterable

import orjson
from platformdirs import user_cache_dir

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value BLOB NOT NULL);
"""
_BATCH = 500


def default_cache_dir() -> Path:
    env = os.environ.get("ERRCAT_CACHE_DIR")
    return Path(env) if env else Path(user_cache_dir("errcat"))


def move_aside(path: Path) -> Path:
    """Rename a damaged cache entry (file or directory) to ``<name>.damaged`` next to it, in place
    of an older one, and return where it went: the next run starts afresh, the damaged copy stays
    for a look, and no more than one per entry ever accumulates."""
    aside = path.with_name(path.name + ".damaged")
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    os.replace(path, aside)
    return aside


def result_key(blob: str, path: str, extractor_version: str) -> str:
    return f"{extractor_version}:{blob}:{path}"


class ResultCache:
    def __init__(self, directory: Path | None = None) -> None:
        directory = directory or default_cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "results.sqlite3"
        self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResultCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _select(self, table: str, column: str, keys: list[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(keys), _BATCH):
            chunk = keys[start : start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows += self._db.execute(f"SELECT * FROM {table} WHERE {column} IN ({marks})", chunk).fetchall()
        return rows

    def get_raw(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The stored bytes of every key found (see :func:`decode_result`)."""
        return dict(self._select("results", "key", list(keys)))

    def prune(self, version: str) -> int:
        """Drop every result not made by the extractor ``version`` and give the space back;
        returns how many rows went. Results of other versions can never be served again by this
        errcat (the version is part of the key), so a cache kept across upgrades, as the sync
        workflow keeps it, would otherwise grow by a whole code base's results with each one."""
        prefix = f"{version}:"
        dropped = self._db.execute("DELETE FROM results WHERE substr(key, 1, ?) != ?", (len(prefix), prefix)).rowcount
        if dropped:
            self._db.execute("VACUUM")
        return dropped

    def put_encoded(self, items: Iterable[tuple[str, bytes]]) -> None:
        rows = list(items)
        if rows:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?)", rows)


def decode_result(value: bytes) -> dict[str, Any] | None:
    """A stored result, or None when the row is damaged (a damaged row is a miss, not a failure)."""
    try:
        return _decode(zlib.decompress(value))
    except (zlib.error, ValueError):
        return None


def _decode(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # a surrogate-carrying result written by the fallback above
        return json.loads(raw.decode("utf-8", "surrogatepass"))


def encode_result(result: dict[str, Any]) -> bytes:
    """A per-file result as the cache stores it: compact JSON, zlib level 1.

    orjson when it can (5x faster); the standard library for text orjson refuses (a lone
    surrogate the extractor has not escaped), so such a result is cached all the same.
    """
    try:
        raw = orjson.dumps(result)
    except TypeError:
        raw = json.dumps(result, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return zlib.compress(raw, 1)
