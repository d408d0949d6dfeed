"""Run the extractor over a snapshot: cached results first, the rest in parallel worker processes.

The main process streams blobs out of git (one ``cat-file --batch`` session) and hands them to
the workers in chunks; the workers parse and extract; results come back as plain data and go
into the cache. Results are returned sorted by path, whatever order the workers finish in.
"""

from __future__ import annotations

import gc
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator

from .cache import ResultCache, encode_result, result_key
from .extract import EXTRACTOR_VERSION, extract_file

CHUNK_BYTES = 1_500_000


def _worker_init() -> None:
    gc.disable()  # see crawl.crawl: extraction makes no cycles worth collecting


def _extract_chunk(chunk: list[tuple[str, bytes]]) -> list[tuple[dict[str, Any], bytes]]:
    """Extract a chunk of files; each result also comes back encoded for the cache, so the
    encoding happens in parallel here rather than serially in the main process."""
    return [(result, encode_result(result)) for result in (extract_file(path, data) for path, data in chunk)]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _chunks(pairs: Iterator[tuple[Any, bytes]]) -> Iterator[list[tuple[str, bytes]]]:
    chunk: list[tuple[str, bytes]] = []
    size = 0
    for entry, data in pairs:
        chunk.append((entry.path, data))
        size += len(data) + 2_000
        if size >= CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def extract_all(
    snapshot: Any,
    *,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    progress: Callable[[str], None] = lambda _: None,
) -> list[dict[str, Any]]:
    entries = list(snapshot.files)
    keys = {e.path: result_key(e.blob, e.path, EXTRACTOR_VERSION) for e in entries}
    cache = ResultCache(cache_dir) if use_cache else None
    try:
        results: dict[str, dict[str, Any]] = {}
        if cache is not None:
            hits = cache.get_many(keys.values())
            for entry in entries:
                hit = hits.get(keys[entry.path])
                if hit is not None:
                    results[entry.path] = hit
        todo = [e for e in entries if e.path not in results]
        progress(f"extracting {len(todo)} files ({len(results)} cached)")
        fresh: list[tuple[dict[str, Any], bytes]] = []
        jobs = jobs or default_jobs()
        if jobs <= 1 or len(todo) < 8:
            for chunk in _chunks(snapshot.read(todo)):
                fresh += _extract_chunk(chunk)
        else:
            with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init) as pool:
                # Fork the workers *before* git's cat-file starts: a worker forked later would
                # inherit the write end of cat-file's stdin, so cat-file (which buffers its
                # output until stdin closes) would wait for the workers, and they for it.
                pool.submit(int).result()
                for done in pool.map(_extract_chunk, _chunks(snapshot.read(todo))):
                    fresh += done
        for result, _ in fresh:
            results[result["path"]] = result
        if cache is not None and fresh:
            cache.put_encoded((keys[r["path"]], blob) for r, blob in fresh)
    finally:
        if cache is not None:
            cache.close()
    return [results[path] for path in sorted(results)]
