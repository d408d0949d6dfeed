"""The joins of the derived meaning that need the whole repository, run where records are built,
and cached by a digest of their inputs.

Two joins, by what they read:

- the source join: callers (the call graph), knobs, trigger and fix (the declarations), related
  errors (the records and their callers): a function of the source files' results alone;
- the test join: reproductions, a function of the source files' results and the test files'.

The caller names each join's inputs by a key (:func:`join_key`: errcat's code, the blob and path
of every file the join reads, the settings it takes); a crawl whose inputs to a join are those of
an earlier crawl takes the join's output from the result cache, so re-crawling a commit (a new
curated file, a dataset deleted) or changing only tests does not run the source join again. What
depends on the crawled commit itself (a reproduction's permalink) is not cached but made again.
The cache is our own JSON, checked on the way in: a row that does not fit these records is a
miss, never a failure.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from crawler.base.cachedir import default_cache_dir
from crawler.catalogue.callers import Graph
from crawler.catalogue.callers import apply as apply_callers
from crawler.catalogue.meaning import MeaningSettings
from crawler.catalogue.meaning import apply as apply_meaning
from crawler.catalogue.related import apply as apply_related
from crawler.catalogue.reproductions import apply as apply_reproductions
from crawler.extract.cache import ResultCache
from crawler.extract.runner import cache_version
from crawler.model.shapes import ExtractedSite, FileResult, RecordData

#: The parts of ``meaning`` the source join fills, then the record's ``related``.
_SOURCE_PARTS = ("callers", "knobs", "trigger", "fix")
_SOURCE_TYPES: tuple[tuple[type, ...], ...] = ((list,), (list,), (str,), (str, type(None)), (list,))


def join_key(*parts: Any) -> str:
    """A digest of a join's inputs (JSON data: names, blob ids, settings)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()


#: Outputs kept per join: a few commits crawled in turn (diff, history, a bisection) all hit.
KEEP = 4


@dataclass
class JoinStore:
    """Where joins' outputs are kept: a result cache file of their own (``joins/`` in
    ``cache_dir``; None: the user's), the last ``KEEP`` of each join. ``served`` lists the joins
    taken from it."""

    cache_dir: Path | None = None
    reuse: bool = True
    served: list[str] = field(default_factory=list)
    #: What else the records the joins read depend on, beyond the files the keys name (the kinds
    #: of sites read and the response builders): a crawl with other settings never hits.
    salt: str = ""

    def _cache(self) -> ResultCache:
        return ResultCache((self.cache_dir or default_cache_dir()) / "joins")

    def _row(self, name: str, key: str) -> str:
        return f"{cache_version()}:{name}:{join_key(key, self.salt) if key else ''}"

    def get(self, name: str, key: str) -> Any:
        if not self.reuse:
            return None
        with self._cache() as cache:
            raw = cache.get_raw([self._row(name, key)]).get(self._row(name, key))
        if raw is None:
            return None
        try:
            return orjson.loads(zlib.decompress(raw))
        except (zlib.error, orjson.JSONDecodeError, TypeError):
            return None

    def put(self, name: str, key: str, value: Any) -> None:
        try:
            raw = orjson.dumps(value)
        except TypeError:  # text orjson refuses (a lone surrogate): not cached, made again next time
            return
        with self._cache() as cache:
            cache.put_encoded([(self._row(name, key), zlib.compress(raw, 1))])
            cache.keep_latest(self._row(name, ""), KEEP)
            cache.prune(cache_version())  # (what an earlier errcat made can never be served)


def add_meaning(records: list[RecordData], primaries: dict[str, ExtractedSite], results: list[FileResult],
                tests: Sequence[FileResult], permalink: Callable[[str, int], str | None],
                settings: MeaningSettings | None = None, store: JoinStore | None = None,
                source_key: str | None = None, tests_key: str | None = None) -> None:
    """Fill ``meaning`` (callers, knobs, trigger, fix, reproductions) and ``related`` of ``records``
    (in place). With a ``store`` and keys, each join whose key it holds is taken from it, and
    each join run is stored under its key."""
    settings = settings or MeaningSettings()
    ids = [r["id"] for r in records]
    graph: Graph | None = None
    rows = _source_rows(store.get("source", source_key), ids) if store is not None and source_key else None
    if store is not None and rows is not None:
        for record, parts in zip(records, rows, strict=True):
            record["meaning"].update(zip(_SOURCE_PARTS, parts[:-1], strict=True))
            record["related"] = parts[-1]
        store.served.append("source")
    else:
        graph = Graph(results)
        apply_callers(records, primaries, graph)
        apply_meaning(records, results, settings)
        apply_related(records)
        if store is not None and source_key:
            store.put("source", source_key, {"ids": ids, "records": [
                [r["meaning"][part] for part in _SOURCE_PARTS] + [r["related"]] for r in records]})
    reps = _test_rows(store.get("tests", tests_key), ids) if store is not None and tests_key else None
    if store is not None and reps is not None:
        for record, found in zip(records, reps, strict=True):
            if found:
                record["meaning"]["reproductions"] = [{**rep, "permalink": permalink(rep["path"], rep["line"])}
                                                      for rep in found]
        store.served.append("tests")
        return
    apply_reproductions(records, list(tests), graph or Graph(results), permalink)
    if store is not None and tests_key:
        store.put("tests", tests_key, {"ids": ids, "records": [
            [{k: v for k, v in rep.items() if k != "permalink"} for rep in r["meaning"].get("reproductions") or ()]
            for r in records]})


def _rows(cached: Any, ids: list[str]) -> list[Any] | None:
    """The per-record rows of a cached join made for records of these ids, else None."""
    if type(cached) is not dict or cached.get("ids") != ids:
        return None
    rows = cached.get("records")
    return rows if type(rows) is list and len(rows) == len(ids) else None


def _source_rows(cached: Any, ids: list[str]) -> list[list[Any]] | None:
    rows = _rows(cached, ids)
    if rows is None or not all(type(parts) is list and len(parts) == len(_SOURCE_TYPES)
                               and all(isinstance(part, kinds) for part, kinds in zip(parts, _SOURCE_TYPES, strict=True))
                               for parts in rows):
        return None
    return rows


def _test_rows(cached: Any, ids: list[str]) -> list[list[dict[str, Any]]] | None:
    rows = _rows(cached, ids)
    if rows is None or not all(type(found) is list and all(type(rep) is dict and type(rep.get("path")) is str
                                                           and type(rep.get("line")) is int for rep in found)
                               for found in rows):
        return None
    return rows
