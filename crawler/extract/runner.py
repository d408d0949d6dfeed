"""Run the extractor over a snapshot: cached results first, the rest in parallel worker processes.

The main process streams blobs out of git (one ``cat-file --batch`` session) and hands them to
the workers in chunks; the workers parse and extract; results come back as plain data and go
into the cache. Results are returned sorted by path, whatever order the workers finish in.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, Protocol, cast

import orjson

from crawler.base.progress import task
from crawler.extract import surface
from crawler.extract.cache import REST_KEYS, Part, ResultCache, completed, decode_part, decode_result, encode_result, result_key
from crawler.extract.codefacts import read_test_file
from crawler.extract.native import extract_native, grammar_versions, language_of
from crawler.extract.visitor import EXTRACTOR_VERSION, extract_file, skipped_result
from crawler.model.kinds import NATIVE
from crawler.model.shapes import FileResult
from crawler.source.snapshot import FileEntry

CHUNK_BYTES = 1_500_000


class Files(Protocol):
    """What extraction takes from the source stage (a ``Snapshot``): the selected files, and
    their bytes streamed in the order asked for."""

    @property
    def files(self) -> Sequence[FileEntry]: ...

    def read(self, entries: Iterable[FileEntry]) -> Iterator[tuple[FileEntry, bytes]]: ...


def _worker_init() -> None:
    # Extraction makes no reference cycles (tests/test_extract.py checks it), so everything a
    # parse allocates is freed by refcounting; the collector would only walk the live trees.
    gc.disable()


def _extract_chunk(
    chunk: list[tuple[str, bytes]], kind: str = "source", settings: surface.Settings = surface.DEFAULT, collect: bool = True
) -> list[tuple[FileResult, bytes | None]]:
    """Extract a chunk of files; each result also comes back encoded for the cache, so the
    encoding happens in parallel here rather than serially in the main process. A result that
    only says this machine could not decide (``transient``) comes back with no encoding: it is
    never cached. A test file (``kind`` "test") is read for its raises blocks only. ``collect``:
    False in the crawl's own process, whose youngest generation (the collector is off there, see
    ``crawl.crawl``) holds every cached result it decoded: collecting it took longer than
    extracting the one file a daily sync changed."""
    from crawler.extract.derive import derive_result  # (imported here: an up-to-date crawl never needs it)

    if kind == "test":
        results = (read_test_file(path, data) for path, data in chunk)
    else:
        results = (
            derive_result(extract_native(path, data, settings.macros, settings.max_sites) if language_of(path) else extract_file(path, data, settings))
            for path, data in chunk
        )
    done = [(result, None if result.get("transient") else encode_result(result)) for result in results]
    if collect:
        gc.collect(0)  # a cheap safety net (young objects only) should a cycle ever slip in
    return done


DIED = "the extractor's process died on this file"


def _extract_pair(pair: tuple[list[tuple[str, bytes]], str, surface.Settings]) -> list[tuple[FileResult, bytes | None]]:
    return _extract_chunk(*pair)


Chunk = tuple[list[tuple[str, bytes]], str, surface.Settings]


def _recovered(
    snapshot: Files, entries: list[FileEntry], jobs: int, test_paths: frozenset[str] = frozenset(), settings: surface.Settings = surface.DEFAULT
) -> list[tuple[FileResult, bytes | None]]:
    """The files a broken pool did not finish, after a worker died, in bounded work: in a fresh pool
    with no more chunks handed out than it has workers, so that a death loses only those; each
    of those is then run alone, and one that kills its process alone is halved until the very
    file that does is found (skipped with ``DIED``). One process per file took minutes on vLLM."""
    pairs = list(snapshot.read(entries))  # cat-file ends before any fork
    queue = list(_chunks(iter(pairs), test_paths, settings))
    queue.reverse()  # (popped from the end: in order)
    out: list[tuple[FileResult, bytes | None]] = []
    while queue:
        done, lost = _until_broken(queue, jobs)
        out += done
        for chunk in lost:
            out += _alone(chunk)
    return out


def _until_broken(queue: list[Chunk], jobs: int) -> tuple[list[tuple[FileResult, bytes | None]], list[Chunk]]:
    """Runs the chunks of ``queue`` (taken from its end) in one pool, at most ``jobs`` at a time,
    until all are done or a worker dies: then what was done and the chunks that were running."""
    done: list[tuple[FileResult, bytes | None]] = []
    with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init) as pool:
        running: dict[Future[list[tuple[FileResult, bytes | None]]], Chunk] = {}
        while queue or running:
            while queue and len(running) < jobs:
                chunk = queue.pop()
                running[pool.submit(_extract_pair, chunk)] = chunk
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                chunk = running.pop(future)
                try:
                    done += future.result()
                except BrokenProcessPool:
                    lost = [chunk]
                    for other, its in running.items():  # (a broken pool fails every future left)
                        try:
                            done += other.result()
                        except BrokenProcessPool:
                            lost.append(its)
                    return done, lost
    return done, []


def _alone(chunk: Chunk) -> list[tuple[FileResult, bytes | None]]:
    """A chunk in a process of its own; when that dies, each half alone, down to the file that
    kills its process, skipped with ``DIED``."""
    files, kind, settings = chunk
    try:
        with ProcessPoolExecutor(max_workers=1, initializer=_worker_init) as pool:
            return pool.submit(_extract_pair, chunk).result()
    except BrokenProcessPool:
        if len(files) > 1:
            half = len(files) // 2
            return _alone((files[:half], kind, settings)) + _alone((files[half:], kind, settings))
        died = skipped_result(files[0][0], DIED)
        died["transient"] = True  # not cached, and the dataset is not taken as final
        return [(died, None)]


def code_files() -> list[Path]:
    """Every module of this package: their code shapes a cached per-file result, so a digest of
    all of them keys the cache and an edit to any of them can never serve a stale result."""
    return sorted(Path(__file__).parent.glob("*.py"))


def _libcst_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libcst")
    except PackageNotFoundError:  # pragma: no cover - a declared dependency
        return "none"


@cache
def cache_version() -> str:
    # The parser is part of the extractor: another Python (3.12 parses PEP 701 f-strings
    # itself), another libcst or another tree-sitter grammar can give other results for the same bytes.
    h = hashlib.sha256(f"{EXTRACTOR_VERSION}\0{sys.version_info[:2]}\0{_libcst_version()}\0{grammar_versions()}".encode())
    for path in code_files():
        h.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
    return f"{EXTRACTOR_VERSION}.{h.hexdigest()[:16]}"


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _chunks(
    pairs: Iterator[tuple[FileEntry, bytes]], test_paths: frozenset[str] = frozenset(), settings: surface.Settings = surface.DEFAULT
) -> Iterator[tuple[list[tuple[str, bytes]], str, surface.Settings]]:
    """(chunk, kind, settings): a chunk holds files of one kind (source, test)."""
    chunk: list[tuple[str, bytes]] = []
    size = 0
    kind = "source"
    for entry, data in pairs:
        this = "test" if entry.path in test_paths else "source"
        if chunk and this != kind:
            yield chunk, kind, settings
            chunk, size = [], 0
        kind = this
        chunk.append((entry.path, data))
        size += len(data) + 2_000
        if size >= CHUNK_BYTES:
            yield chunk, kind, settings
            chunk, size = [], 0
    if chunk:
        yield chunk, kind, settings


def _largest_first(entries: list[FileEntry], test_paths: frozenset[str]) -> list[FileEntry]:
    """The source files by size, the largest first, then the test files so (most of which hold no
    raises block and cost nothing to read): the order of a schedule whose last chunks are short.
    The results are ordered by path whatever the order of extraction."""
    return sorted(entries, key=lambda e: (e.path in test_paths, -e.size, e.path))


def _native_headers(snapshot: Files, settings: surface.Settings) -> list[FileEntry]:
    """The C++/CUDA headers whose check macros every native file sees (``native_macros``)."""
    if NATIVE not in settings.kinds:
        return []
    return [e for e in snapshot.files if _is_header(e.path)]


def _is_header(path: str) -> bool:
    from crawler.extract.native_macros import HEADERS

    return path.lower().endswith(HEADERS) and language_of(path) in ("cpp", "cuda")


def _headers_tag(headers: list[tuple[str, str]]) -> str:
    """The cache row part for a set of headers: their paths and blobs, so the macros they define
    are read again only when one of them changed."""
    if not headers:
        return ""
    h = hashlib.sha256("\0".join(f"{path}\0{blob}" for path, blob in sorted(headers)).encode())
    return f"+h{h.hexdigest()}"


def _macros_row(headers: list[tuple[str, str]]) -> str:
    """The cache row holding the macros a set of headers defines (never a file's row: no blob id
    starts with a word)."""
    return result_key("macros" + _headers_tag(headers), "", cache_version())


def _macros_tag(macros: tuple[Any, ...]) -> str:
    """A native file's cache key part for what it reads of the headers: the check macros they
    define (``native_macros.header_macros``), nothing else. An edit to a header that changes no
    macro (a comment, a function, a check's message in a function of the header) re-extracts no
    other file; one that changes a macro re-extracts every native file."""
    if not macros:
        return ""
    return f"+m{hashlib.sha256(orjson.dumps(macros)).hexdigest()}"


def _decode_macros(value: bytes | None) -> tuple[Any, ...] | None:
    """The macros a cache row holds (the wrappers of a set of headers, as ``header_macros`` gives
    them, or one header's definitions), or None when it holds anything else (a miss: they are
    read from the headers again)."""
    if value is None:
        return None
    try:
        rows = orjson.loads(zlib.decompress(value))
    except (zlib.error, orjson.JSONDecodeError):
        return None
    if type(rows) is not list or not all(
        type(r) is list
        and len(r) == 3
        and type(r[0]) is str
        and type(r[1]) is list
        and all(type(p) is str for p in r[1])
        and type(r[2]) is list
        and all(type(t) is list and len(t) == 2 and type(t[0]) is str and type(t[1]) is bool for t in r[2])
        for r in rows
    ):
        return None
    return tuple((name, tuple(params), tuple((text, space) for text, space in body)) for name, params, body in rows)


def _header_macros(snapshot: Files, settings: surface.Settings, cache: ResultCache | None, reuse: bool) -> tuple[Any, ...]:
    """The check macros the native trees' headers define, when a native file is selected: from the
    cache row of this set of headers, else read from the headers (and kept there). Read before
    any worker forks: the headers' blobs are a small part of a crawl's."""
    from crawler.extract.native import CHECKS, parse_tree
    from crawler.extract.native_macros import definitions, header_macros

    if settings.macros:
        return tuple(settings.macros)
    headers = _native_headers(snapshot, settings)
    if not headers or not any(language_of(e.path) for e in snapshot.files):
        return ()
    row = _macros_row([(e.path, e.blob) for e in headers])
    if cache is not None and reuse:
        found = _decode_macros(cache.get_raw([row]).get(row))
        if found is not None:
            return found
    # Each header's definitions are kept by its blob too: when one header changed, only it is parsed.
    rows = {e.path: result_key(f"definitions+{e.blob}", e.path, cache_version()) for e in headers}
    stored = cache.get_raw(rows.values()) if cache is not None and reuse else {}
    fresh: list[tuple[str, tuple[Any, ...]]] = []

    def read(path: str, data: bytes) -> tuple[Any, ...]:
        got = _decode_macros(stored.get(rows[path]))
        if got is None:
            got = tuple(definitions(*parse_tree(path, data)))
            fresh.append((rows[path], got))
        return got

    macros = header_macros(((e.path, data) for e, data in snapshot.read(headers)), parse_tree, CHECKS, read)
    if cache is not None:
        try:
            cache.put_encoded([(key, zlib.compress(orjson.dumps(value), 1)) for key, value in [*fresh, (row, macros)]])
        except TypeError:  # (text orjson refuses: read from the headers again next time)
            pass
    return macros


def _key(path: str, blob: str, test: bool, settings: surface.Settings, macros: str = "") -> str:
    """The cache row of a file's result. Another choice of kinds or builders gives other sites from
    the same blob, another site limit another status (a file over it is kept as such: its row
    spares the next crawl even the walk up to the limit), and a native file's sites depend on the headers' macros (``macros``: see
    ``_macros_tag``); the version stays the key's prefix, which is what pruning results of other
    errcat versions goes by."""
    tag = "" if test or settings == surface.DEFAULT else f"+{settings.digest()}"
    if not test and language_of(path):
        tag += macros
    return result_key(blob + tag, path, ("test." if test else "") + cache_version())


def cached_results(cache_dir: Path | None, files: Sequence[tuple[str, str]], settings: surface.Settings = surface.DEFAULT) -> dict[str, FileResult]:
    """The cached results of these source files (path, blob), by path: those the cache holds
    and that decode (a missing or damaged row is left out). A native file is left out too unless
    ``settings`` hold the headers' macros: its result depends on the macros of every header of
    its commit, which a list of some of its files does not say."""
    native = NATIVE in settings.kinds and not settings.macros
    tag = _macros_tag(tuple(settings.macros))
    keys = {path: _key(path, blob, False, settings, tag) for path, blob in files if not (native and language_of(path))}
    with ResultCache(cache_dir) as cache:
        stored = cache.get_raw(keys.values())
    found = {path: decode_result(stored[key], path) for path, key in keys.items() if key in stored}
    return {path: result for path, result in found.items() if result is not None}


class Extraction(NamedTuple):
    """What ``extract_all`` returns."""

    #: every selected source file's result, sorted by path
    results: list[FileResult]
    #: the test files' results, sorted by path (none unless asked for with ``tests``)
    tests: list[FileResult]
    #: the paths whose results came from the cache: a crawl that cannot use them extracts again
    served: list[str]


def extract_all(
    snapshot: Files,
    *,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    reuse: bool = True,
    progress: Callable[[str], None] = lambda _: None,
    tests: bool = False,
    settings: surface.Settings = surface.DEFAULT,
    rest: dict[str, bytes] | None = None,
) -> Extraction:
    """Every selected file's result. With ``use_cache``, results are taken from the cache (unless
    ``reuse`` is False: then every file is extracted and its row rewritten) and stored in it.
    With ``tests``, the snapshot's test files are read too (``codefacts.read_test_file``), through
    the same reader, workers and cache (under keys of their own). With ``rest``, a result taken
    from the cache is decoded but its ``cache.REST_KEYS`` (what only the joins read when they are
    made), whose bytes go in ``rest`` by path: :func:`complete` puts them in."""
    test_entries = list(getattr(snapshot, "tests", ())) if tests else []
    test_paths = frozenset(e.path for e in test_entries)
    entries = list(snapshot.files) + test_entries
    cache = ResultCache(cache_dir, progress) if use_cache else None
    try:
        # A native file's key and result depend on the headers' macros; no other file's do. So in
        # parallel the Python files go to the workers first and the macros are read meanwhile.
        native = [e for e in snapshot.files if language_of(e.path)]
        python = [e for e in entries if not language_of(e.path) or e.path in test_paths]
        keys = {e.path: _key(e.path, e.blob, e.path in test_paths, settings) for e in python}
        stored = cache.get_raw(keys.values()) if cache is not None and reuse else {}
        todo = _largest_first([e for e in python if keys[e.path] not in stored], test_paths)
        plain = settings

        later: list[list[FileEntry]] = []

        def native_todo() -> list[FileEntry]:
            """The native files to extract, read once the macros are (``settings`` then holds them)."""
            nonlocal settings
            if later:
                return later[0]
            macros = _header_macros(snapshot, plain, cache, reuse) if native else ()
            tag = _macros_tag(macros)
            more = {e.path: _key(e.path, e.blob, False, plain, tag) for e in native}
            keys.update(more)
            if cache is not None and reuse and more:
                stored.update(cache.get_raw(more.values()))
            if macros and not plain.macros:
                settings = dataclasses.replace(plain, macros=macros)
            later.append(_largest_first([e for e in native if keys[e.path] not in stored], test_paths))
            return later[0]

        results: dict[str, FileResult] = {}
        damaged: list[FileEntry] = []
        decoded: list[bool] = []
        served: list[str] = []

        def decode_hits() -> None:
            if decoded:
                return
            decoded.append(True)
            for entry in entries:
                value = stored.get(keys[entry.path])
                if value is not None:
                    if rest is None:
                        hit = decode_result(value, entry.path)
                    else:  # (the joins' part left undecoded, kept by path for ``complete``)
                        parted = decode_part(value, entry.path)
                        hit = None if parted is None else parted[0]
                        if parted is not None and parted[1] is not None:
                            rest[entry.path] = parted[1]
                    if hit is None:
                        damaged.append(entry)
                    else:
                        results[entry.path] = hit
            served.extend(results)  # (only hits so far: fresh results come later)

        def counter(todo: list[FileEntry]) -> Any:
            return task(progress, f"extracting ({len(stored):,} cached)" if stored else "extracting", len(todo), "files")

        fresh: list[tuple[FileResult, bytes | None]] = []
        jobs = jobs or default_jobs()
        # A crawl with few Python files to extract (a sync's) most likely has its macros cached:
        # it reads them first to know whether it has enough files to fork workers for.
        early = jobs <= 1 or len(todo) < 8
        if early and (jobs <= 1 or len(todo) + len(native_todo()) < 8):
            todo = native_todo() + todo
            counted = counter(todo)
            decode_hits()
            counted.update(0, len(todo) + len(damaged))
            for chunk, kind, _ in _chunks(snapshot.read(todo + damaged), test_paths, settings):
                fresh += _extract_chunk(chunk, kind, settings, collect=False)
                counted.advance(len(chunk))
        else:
            broken = False
            counted = None
            # What the workers run, imported before they are forked (derive pulls in pydantic and
            # the models): each would otherwise import it again, on the clock of its first chunk.
            from crawler.extract import derive  # noqa: F401

            with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init) as pool:
                # Fork the workers *before* git's cat-file starts: a worker forked later would
                # inherit the write end of cat-file's stdin, so cat-file (which buffers its
                # output until stdin closes) would wait for the workers, and they for it.
                pool.submit(int).result()
                try:
                    # The source files first, the largest first, then the native files (their
                    # macros read here while the workers parse the source files), then the test
                    # files: the chunks that end the run are the cheapest, so that no worker is
                    # left alone long at the end.
                    sources = [e for e in todo if e.path not in test_paths]
                    running = [pool.map(_extract_pair, _chunks(snapshot.read(sources), test_paths, settings))]
                    natives = native_todo()
                    running.append(pool.map(_extract_pair, _chunks(snapshot.read(natives), test_paths, settings)))
                    running.append(pool.map(_extract_pair, _chunks(snapshot.read(todo[len(sources) :]), test_paths, settings)))
                    todo = sources + natives + todo[len(sources) :]
                    counted = counter(todo)
                    decode_hits()  # while the workers parse: this process would only wait
                    counted.update(counted.done, len(todo) + len(damaged))
                    for done in (done for each in running for done in each):
                        fresh += done
                        counted.advance(len(done))
                    for done in pool.map(_extract_pair, _chunks(snapshot.read(damaged), test_paths, settings)):
                        fresh += done
                        counted.advance(len(done))
                except BrokenProcessPool:
                    broken = True
            if counted is None:  # the pool broke before every file was handed out: the native ones too
                todo = todo + native_todo()
                counted = counter(todo)
            decode_hits()  # (done already, unless the pool broke first)
            if broken:  # a worker died (a crash in C code, the OOM killer): find the file, keep the rest
                finished = {r["path"] for r, _ in fresh}
                left = [e for e in todo + damaged if e.path not in finished]
                progress(f"a worker process died; extracting the {len(left)} files left in fresh processes")
                fresh += _recovered(snapshot, left, jobs, test_paths, settings)
        counted.close()
        if damaged:
            progress(f"{len(damaged)} cached result(s) were damaged; extracted again")
        for result, _ in fresh:
            results[result["path"]] = result
        if cache is not None and fresh:
            cache.put_encoded((keys[r["path"]], blob) for r, blob in fresh if blob is not None)
    finally:
        if cache is not None:
            cache.close()
    ordered = sorted(results)
    return Extraction([results[path] for path in ordered if path not in test_paths], [results[path] for path in ordered if path in test_paths], served)


def complete(results: Iterable[FileResult], rest: Mapping[str, bytes]) -> None:
    """Put in each of ``results`` (in place) the ``cache.REST_KEYS`` that ``extract_all`` left in
    ``rest``: a result that holds one of them already is whole. A ValueError when the bytes kept
    do not decode (a damaged row: the crawl extracts every file again)."""
    for result in results:
        raw = rest.get(result["path"])
        if raw is None or any(key in result for key in REST_KEYS):
            continue
        whole = completed(result, raw, result["path"])
        if whole is None:
            raise ValueError(f"the cached result of {result['path']} is damaged")
        plain = cast("dict[str, Any]", result)  # (in place: every holder of the result sees it whole)
        plain.clear()
        plain.update(whole)
        if type(plain) is Part:
            plain.whole = True
