"""The crawl: a pinned commit in, a validated dataset out.

    source (snapshot) -> extraction (per file, parallel, cached) -> exception hierarchy
    -> entries/records -> validated files -> atomic swap into the output directory

A dataset records a digest of everything it was made from; when a crawl finds the dataset it
would write already in place (same inputs, files intact), it leaves it alone.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from crawler import __version__
from crawler.base.cachedir import default_cache_dir
from crawler.base.dataset_files import FOREIGN, SEARCH, record_id_of
from crawler.base.errors import DataError, OutputError, UsageError
from crawler.base.layout import dataset_dir
from crawler.base.progress import Progress, quiet
from crawler.base.scratch import sweep
from crawler.base.teardown import hold
from crawler.catalogue.explanations import default_root, load_set
from crawler.catalogue.lineage_links import load_links
from crawler.extract.limit import OVER_LIMIT
from crawler.extract.limit import reason as limit_reason
from crawler.extract.runner import cache_version, default_jobs, extract_all
from crawler.extract.surface import Settings
from crawler.extract.visitor import EXTRACTOR_VERSION
from crawler.model.records import SCHEMA_VERSION, Counts, Limits, Manifest, Skipped
from crawler.model.shapes import ExceptionData, ExtractedSite, FileResult, RecordData
from crawler.publish import release_cache
from crawler.publish.dataset import load_manifest
from crawler.publish.writer import (
    Extra,
    OverLimit,
    content_digest,
    dataset_lock,
    publish,
    read_dataset,
    recover,
)
from crawler.source.config import identify, identify_package, load_config
from crawler.source.opener import open_snapshot
from crawler.source.wheel import package_info


@dataclass
class CrawlOptions:
    repo: str | None = None
    ref: str | None = None
    pypi: str | None = None
    upstream: str | None = None
    name: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    out: Path = Path("output")
    jobs: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    config: Path | None = None
    curated: Path | None = None  # curated explanations root (default: curated/ next to the config)
    # limits (models.Limits): None takes the upstream's (errcat.toml), else the default
    max_blob_bytes: int | None = None
    max_file_sites: int | None = None
    max_output_bytes: int | None = None
    #: Hand the records back instead of writing a dataset (``errcat history`` folds each release
    #: in memory: writing, reading back and deleting ~8,000 files a release was most of its time).
    #: Nothing is validated here: what the caller writes goes through the writer's validation.
    #: With the cache, the records are kept there by input digest (``publish.release_cache``).
    in_memory: bool = False
    #: Commits to vouch for (``CrawlResult.vouched``): those a dataset written elsewhere pins its
    #: records at (``errcat sync`` and ``history`` write their records themselves).
    vouch: list[str] = field(default_factory=list)
    #: With ``in_memory``: a release the cache holds comes back as its lines, unparsed
    #: (``CrawlResult.kept``), for a fold that needs no record as an object.
    as_lines: bool = False
    #: With ``in_memory`` and the cache: keep the records in the release cache (``publish.release_cache``),
    #: for a later history of the same release; ``errcat sync``'s commit is crawled once, and not kept.
    keep_release: bool = True
    #: Without ``in_memory``: also hand back the records as written (``CrawlResult.records``), for
    #: a caller that folds them (``errcat sync`` over the output limit) rather than read them back.
    hand_back: bool = False


@dataclass
class CrawlResult:
    target: Path
    manifest: Manifest
    seconds: float
    unchanged: bool = False
    #: With ``in_memory``: the records (the manifest's content_digest is ""); with ``hand_back``, those written.
    records: list[RecordData] | None = None
    #: Of ``CrawlOptions.vouch``, each commit the crawled repository has as an ancestor of (or as)
    #: the crawled commit, with its committer date (see ``publish.pins``).
    vouched: dict[str, str] = field(default_factory=dict)
    #: A release from the cache (``release_cache.Kept``): its lines and fold rows (with ``as_lines``, ``records`` is None).
    kept: release_cache.Kept | None = None
    #: With the cache: search.json as written, the SHA-256 of its bytes and the document (or what
    #: the match store reads of it, ``search.Shaped``), for the match store to take rather than
    #: parse 11 MB again (``match_store.build``).
    search: tuple[bytes, Any] | None = None
    #: The dataset's documents besides the records, the index and search.json (foreign.json, from
    #: the curated list), for a caller that writes the records itself (``history``, ``sync``).
    documents: dict[str, Any] = field(default_factory=dict)


@cache
def code_digest() -> str:
    """errcat's own code: a dataset made by other code is never taken as up to date."""
    h = hashlib.sha256()
    root = Path(__file__).parent
    for path in sorted(root.rglob("*.py")):  # every stage's modules, not only this one's
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _generation() -> str:
    """errcat's code and extraction, as the release cache names them (its files of another are dead)."""
    return hashlib.sha256(f"{__version__}:{code_digest()}:{cache_version()}:{EXTRACTOR_VERSION}".encode()).hexdigest()


def input_digest(
    snapshot: Any,
    include: list[str],
    exclude: list[str],
    curated_digest: str | None = None,
    limits: Limits | None = None,
    meaning: Any = None,
    surface: Any = None,
) -> str:
    """Everything a dataset is made from, hashed: errcat's code, identity, commit, selected blobs,
    curated explanations, limits, the upstream's conventions for the meaning section."""
    payload = {
        "meaning": [list(meaning.kwargs_functions), list(meaning.request_models)] if meaning else None,
        "surface": surface.digest() if surface is not None else None,
        "limits": (limits or Limits()).model_dump(mode="json"),
        "curated": curated_digest,
        "errcat": __version__,
        "code": code_digest(),
        "extraction": cache_version(),  # extractor, Python and libcst versions
        "extractor": EXTRACTOR_VERSION,
        "schema": SCHEMA_VERSION,
        "repo": snapshot.repo.model_dump(mode="json"),
        "commit": snapshot.commit,
        "commit_date": snapshot.commit_date,
        "upstream_commit": upstream_commit(snapshot),
        "permalinks": [snapshot.permalinks, snapshot.link_prefix],
        "ref": snapshot.ref,
        "release": release.model_dump(mode="json") if (release := getattr(snapshot, "release", None)) is not None else None,
        "source": snapshot.source,
        "include": include,
        "exclude": exclude,
        "files": [[f.path, f.blob] for f in snapshot.files],
        "tests": [[f.path, f.blob] for f in getattr(snapshot, "tests", ())],
        "skipped": [[s.path, s.reason] for s in snapshot.skipped],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()


def meaning_settings(upstream: Any) -> Any:
    from crawler.catalogue.meaning import MeaningSettings

    return MeaningSettings(tuple(upstream.knob_kwargs), tuple(upstream.request_models))


def upstream_commit(snapshot: Any) -> str | None:
    """The upstream commit a release records, full or abbreviated, when it is not the crawled one."""
    return snapshot.upstream_commit or getattr(snapshot, "upstream_recorded", None)


def current_manifest(target: Path, digest: str, cache_dir: Path | None = None) -> Manifest | None:
    """The dataset's manifest when it was made from exactly these inputs and is intact. With the
    cache: the record files the record memo vouches for by identity are not read (reading them
    was most of an up-to-date crawl)."""
    from crawler.publish import record_memo

    try:
        manifest = load_manifest(target)
    except DataError:
        return None
    if manifest.input_digest != digest:
        return None
    known = record_memo.vouched(target, record_memo.load(cache_dir, target)) if cache_dir is not None else {}
    if content_digest(read_dataset(target, skip=known), known) != manifest.content_digest:
        return None
    return manifest


def crawl_limits(options: CrawlOptions, upstream: Any) -> Limits:
    """The crawl's option, else the upstream's setting, else the default, for each limit."""
    chosen = {
        "max_file_bytes": options.max_blob_bytes if options.max_blob_bytes is not None else upstream.max_file_bytes,
        "max_file_sites": options.max_file_sites if options.max_file_sites is not None else upstream.max_file_sites,
        "max_output_bytes": options.max_output_bytes if options.max_output_bytes is not None else upstream.max_output_bytes,
    }
    return Limits(**{name: value for name, value in chosen.items() if value is not None})


def crawl(options: CrawlOptions, progress: Progress = quiet) -> CrawlResult:
    # A crawl allocates millions of small, acyclic objects (trees, site dicts) and frees them by
    # reference counting; the cycle collector would only walk them again and again.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _crawl(options, progress)
    finally:
        if enabled:
            gc.enable()


class _Inputs(NamedTuple):
    """What a crawl is made from, read and checked before anything is extracted."""

    upstream: Any
    include: list[str]
    exclude: list[str]
    limits: Limits
    snapshot: Any  # open: the caller closes it
    curated: Any
    foreign: tuple[str, Any] | None
    meaning: Any
    settings: Settings
    target: Path
    digest: str


def _inputs(options: CrawlOptions, progress: Progress) -> _Inputs:
    """The crawl's inputs and their digest; UsageError for a selection of no file, CuratedError
    for an invalid curated file (both before anything is written)."""
    config = load_config(options.config)
    if options.pypi is not None:
        pypi = options.pypi
        upstream = identify_package(pypi, options.upstream, options.name, config, lambda: package_info(pypi, options.cache_dir, progress))
    else:
        upstream = identify(options.repo, options.upstream, options.name, config)
    include = options.include or list(upstream.include)
    exclude = options.exclude or list(upstream.exclude)
    if options.include:  # --include says which files, all of them: the native trees are not added
        upstream = upstream.model_copy(update={"native": []})
    limits = crawl_limits(options, upstream)
    snapshot = open_snapshot(
        repo=options.repo,
        ref=options.ref,
        pypi=options.pypi,
        upstream=upstream,
        include=include,
        exclude=exclude,
        cache_dir=options.cache_dir,
        max_blob_bytes=limits.max_file_bytes,
        progress=progress,
    )
    if (
        not snapshot.files
        and not snapshot.skipped
        and options.pypi is None
        and options.repo is not None
        and options.name is not None
        and options.upstream is None
        and not options.include
        and not options.exclude
        and upstream.name == config.default_upstream.name
    ):
        # A local repository named with --name, none of whose files the default upstream's globs
        # select, is a project of its own (vLLM's globs found nothing of `--name me/toy`).
        from crawler.source.config import own_project

        own = own_project(config, upstream)
        if own is not None:
            snapshot.close()
            progress(
                f"note: no file of {options.repo} is under {' '.join(include)} (the default upstream's): "
                f"crawled as a project of its own, {' '.join(own.include)} (--include says otherwise)"
            )
            upstream, include, exclude = own, list(own.include), list(own.exclude)
            limits = crawl_limits(options, upstream)
            snapshot = open_snapshot(
                repo=options.repo,
                ref=options.ref,
                pypi=None,
                upstream=upstream,
                include=include,
                exclude=exclude,
                cache_dir=options.cache_dir,
                max_blob_bytes=limits.max_file_bytes,
                progress=progress,
            )
    try:
        if not snapshot.files and not snapshot.skipped:
            # An empty dataset would replace the one in place: a crawl of nothing publishes nothing.
            where = f"pypi:{options.pypi}" if options.pypi else f"{options.repo or upstream.url} at {snapshot.ref or snapshot.commit[:12]}"
            globs = f"--include {' '.join(include) or '(none)'}" + (f" --exclude {' '.join(exclude)}" if exclude else "")
            raise UsageError(f"no file of {where} matches {globs}; nothing was written")
        curated_root = options.curated if options.curated is not None else default_root(config.path)
        memo = (options.cache_dir or default_cache_dir()) / "curated.json" if options.use_cache else None
        curated = load_set(curated_root, snapshot.repo.owner, snapshot.repo.name, memo=memo)
        foreign = _foreign(curated_root, snapshot.repo.owner, snapshot.repo.name, memo)
        evidence = _evidence(curated_root, snapshot.repo, memo)
        # the reviewed lineage links are a crawl's curated file too (a history writes them): an
        # invalid one fails the crawl here, before anything is extracted
        load_links(curated_root, snapshot.repo.owner, snapshot.repo.name, memo)
        curated_digest = curated.digest if foreign is None else f"{curated.digest}+foreign:{foreign[0]}"
        if evidence.digest is not None:
            curated_digest = f"{curated_digest}+evidence:{evidence.digest}"
        curated.evidence = evidence
        meaning = meaning_settings(upstream)
        settings = Settings.of(upstream, limits.max_file_sites)  # (extraction stops at the limit)
        digest = input_digest(snapshot, include, exclude, curated_digest, limits, meaning, settings)
    except BaseException:
        snapshot.close()
        raise
    return _Inputs(
        upstream,
        include,
        exclude,
        limits,
        snapshot,
        curated,
        foreign,
        meaning,
        settings,
        dataset_dir(options.out, snapshot.repo.owner, snapshot.repo.name),
        digest,
    )


def planned_digest(options: CrawlOptions, progress: Progress = quiet) -> str:
    """The input digest a crawl with ``options`` would record, without extracting anything: a
    dataset whose manifest holds it was made from exactly these inputs (the commit, errcat, the
    curated files, the limits, the upstream's settings)."""
    inputs = _inputs(options, progress)
    inputs.snapshot.close()
    return inputs.digest


def _crawl(options: CrawlOptions, progress: Progress) -> CrawlResult:
    started = time.perf_counter()
    upstream, include, exclude, limits, snapshot, curated, foreign, meaning, settings, target, digest = _inputs(options, progress)
    documents = foreign_file(foreign)
    vouched = _vouched(snapshot, options.vouch)
    if options.repo and not options.repo.startswith("https://") and not (options.name or options.upstream):
        progress(f"reading {options.repo} as {upstream.owner}/{upstream.repo} (--name or --upstream say otherwise)")
    try:
        with dataset_lock(target):  # another crawl's temporary directory is not a trace
            recover(target)  # traces of a killed run go first, even when the dataset is up to date
        sweep(options.cache_dir or default_cache_dir())  # and what killed diff/history/sync runs left
        existing = current_manifest(target, digest, options.cache_dir or default_cache_dir()) if options.use_cache and not options.in_memory else None
        if existing is not None:
            progress(f"{target} is up to date with {snapshot.commit[:12]}")
            return CrawlResult(target, existing, time.perf_counter() - started, unchanged=True, vouched=vouched, documents=documents)
        if options.in_memory and options.use_cache:
            kept = release_cache.load(options.cache_dir or default_cache_dir(), _generation(), digest)
            records = None if kept is None or options.as_lines else kept.records()
            if kept is not None and (options.as_lines or records is not None):
                progress(f"{snapshot.commit[:12]}: its records from the cache")
                return CrawlResult(
                    target, kept.manifest, time.perf_counter() - started, unchanged=True, records=records, vouched=vouched, kept=kept, documents=documents
                )
        progress(f"{snapshot.repo.owner}/{snapshot.repo.name} @ {snapshot.commit[:12]}: {len(snapshot.files)} files")
        if not curated.directory.is_dir():  # a crawl run elsewhere than beside curated/ reads none, and said nothing
            progress(f"no curated explanations or foreign errors: no directory {curated.directory} (--curated DIR names the one holding <owner>/<name>/)")
        # (what only the joins read when they are made stays undecoded until they are: ``complete``)
        rest: dict[str, bytes] = {}
        results, tests, served = extract_all(
            snapshot, jobs=options.jobs, cache_dir=options.cache_dir, use_cache=options.use_cache, progress=progress, tests=True, settings=settings, rest=rest
        )
        joins = _join_store(options, settings)
        if joins is not None and rest:
            from crawler.extract.runner import complete

            joins.complete = lambda some: complete(some, rest)
        try:
            written = _write(
                options, snapshot, results, curated, target, digest, include, exclude, limits, started, progress, documents, tests, meaning, joins, rest
            )
            written.vouched = vouched
            hold(results, tests, rest, joins)  # (left to the process's exit: base.teardown)
            return written
        except _CACHE_SYMPTOMS as exc:
            # The cache is an optimisation: results from it that the crawl cannot use (a row
            # edited or damaged inside, past what decoding checks) must not fail every crawl.
            # Extracting again tells whether the cache was to blame, and rewrites its rows.
            if not served and not (joins and joins.served):
                raise
            shown = (str(exc).splitlines() or [""])[0].rstrip(":")
            progress(f"results from the cache could not be used ({type(exc).__name__}: {shown}); extracting every file again")
            results, tests, _ = extract_all(
                snapshot, jobs=options.jobs, cache_dir=options.cache_dir, reuse=False, progress=progress, tests=True, settings=settings
            )
            if joins is not None:
                joins.reuse = False  # the joins run again too, and their rows are rewritten
                joins.complete = None
            written = _write(options, snapshot, results, curated, target, digest, include, exclude, limits, started, progress, documents, tests, meaning, joins)
            written.vouched = vouched
            return written
    finally:
        snapshot.close()


def _vouched(snapshot: Any, commits: list[str]) -> dict[str, str]:
    """``CrawlResult.vouched`` for these commits (none from a source without history)."""
    if snapshot.vouch is None:
        return {}
    dates = {commit: snapshot.vouch(commit) for commit in sorted(set(commits))}
    return {commit: date for commit, date in dates.items() if date is not None}


#: What results from a damaged cache can raise once the crawl uses them: a key or an index that
#: is not there, a value of another type, a record the schema refuses.
_CACHE_SYMPTOMS = (DataError, LookupError, TypeError, ValueError, AttributeError)


def _join_store(options: CrawlOptions, settings: Settings) -> Any:
    """Where the whole-repository joins keep their outputs (None with ``--no-cache``)."""
    from crawler.catalogue.meaning_join import JoinStore

    return JoinStore(options.cache_dir, salt=settings.digest(), settings=settings) if options.use_cache else None


def _join_inputs(snapshot: Any, results: Sequence[FileResult], left_out: dict[str, str], meaning: Any, cache_dir: Path | None, settings: Settings) -> Any:
    """What the source join and the test join read (``meaning_join.JoinInputs``): errcat's code,
    the extractor, the repository's identity, each file's path and blob, the files left out and
    the upstream's conventions; None when a result is provisional (it may differ next time)."""
    from crawler.catalogue.meaning_join import JoinInputs, join_key
    from crawler.extract.runner import cached_results

    if any(r.get("transient") for r in results):
        return None
    conventions = [list(meaning.kwargs_functions), list(meaning.request_models)] if meaning else None
    base = join_key(code_digest(), cache_version(), snapshot.repo.model_dump(mode="json"), conventions, sorted(left_out))
    return JoinInputs(
        base,
        [[f.path, f.blob] for f in snapshot.files],
        [[f.path, f.blob] for f in getattr(snapshot, "tests", ())],
        lambda files: cached_results(cache_dir, files, settings),
    )


def _imported_inputs(snapshot: Any, results: Sequence[FileResult], joins: Any) -> Any:
    """The inputs of the join across modules (``catalogue.cross_module_join``), ``meaning_join.JoinInputs``:
    errcat's code, the extractor and its settings (the store's salt), each file's path and blob;
    None when a result is provisional or nothing is kept."""
    from crawler.catalogue.meaning_join import JoinInputs, join_key
    from crawler.extract.runner import cached_results

    if joins is None or any(r.get("transient") for r in results):
        return None
    cache_dir, settings = joins.cache_dir, joins.settings or Settings()
    return JoinInputs(
        join_key("imported", code_digest(), cache_version()),
        [[f.path, f.blob] for f in snapshot.files],
        [],
        lambda files: cached_results(cache_dir, files, settings),
    )


def _foreign(root: Path | None, owner: str, name: str, memo: Path | None = None) -> tuple[str, Any] | None:
    """(digest, list) of the curated foreign errors, None without a list; CuratedError if invalid.
    ``memo``: the curated files' memo in the cache (``explanations.read_model``)."""
    import hashlib

    from crawler.catalogue.foreign_list import CURATED, load_curated

    if root is None:
        return None
    directory = dataset_dir(root, owner, name)
    found = load_curated(directory, memo)
    if found is None:
        return None
    return hashlib.sha256((directory / CURATED).read_bytes()).hexdigest(), found


def _evidence(root: Path | None, repo: Any, memo: Path | None = None) -> Any:
    """The curated evidence of ``repo`` (empty without a file); CuratedError if invalid (``memo``: see ``_foreign``)."""
    from crawler.catalogue.evidence import EvidenceSet, load

    if root is None:
        return EvidenceSet(Path("/nonexistent"))
    return load(dataset_dir(root, repo.owner, repo.name), repo, memo)


def foreign_file(foreign: tuple[str, Any] | None) -> Extra:
    """``render_dataset``'s ``extra`` entry for foreign.json (none without a curated list)."""
    return {} if foreign is None else {FOREIGN: foreign[1].model_dump(mode="json")}


def _write(
    options: CrawlOptions,
    snapshot: Any,
    results: list[FileResult],
    curated: Any,
    target: Path,
    digest: str,
    include: list[str],
    exclude: list[str],
    limits: Limits,
    started: float,
    progress: Progress,
    documents: Extra | None = None,
    tests: list[FileResult] | None = None,
    meaning: Any = None,
    joins: Any = None,
    rest: Mapping[str, bytes] | None = None,
) -> CrawlResult:
    """Entries and records from the per-file results, validated and written within ``limits``.

    A source file with more sites than ``max_file_sites`` is left out (its extraction stopped at the
    limit, ``extract.limit``: its result has no site, only its classes), and so are the files whose
    entries would make a file of the dataset larger than ``max_output_bytes`` (found by writing
    it: the bound costs nothing until it is reached). Each is listed in the manifest's
    ``skipped`` with the reason. Their classes still count in the exception hierarchy: they
    parsed, and other files' exceptions may derive from them. ``documents``: the dataset's
    further documents (``foreign_file``). ``rest``: what ``extract_all`` left undecoded of the
    cached results (``runner.complete``).
    """
    documents = documents or {}
    # What only a crawl that writes needs, imported here: an up-to-date check stays quick.
    from crawler.catalogue.cross_module_join import apply as apply_imported
    from crawler.catalogue.entries import Identity
    from crawler.catalogue.hierarchy import apply_init_templates, resolve_exceptions
    from crawler.catalogue.search import Shaped, search_file, search_rows
    from crawler.publish import line_memo, record_memo, row_bytes, validated
    from crawler.publish.dataset import previous_members, previous_records
    from crawler.publish.pins import pin, pinned_at
    from crawler.publish.writer import Reuse

    # what imported functions return into the messages built of it
    results = apply_imported(results, joins, _imported_inputs(snapshot, results, joins))
    results = apply_init_templates(results)  # call arguments into repo __init__ templates
    exceptions = resolve_exceptions(results)
    identity = Identity(
        repo=snapshot.repo,
        commit=snapshot.commit,
        commit_date=snapshot.commit_date,
        upstream_commit=upstream_commit(snapshot),
        source=snapshot.source,
        permalinks=snapshot.permalinks,
        link_prefix=snapshot.link_prefix,
    )
    # Extraction stopped at the limit ("more than" it); a result it did not stop is over when the
    # sites the walk could not count as kept (a log whose message is a helper's) were kept after all.
    left_out = {
        r["path"]: r["reason"] or limit_reason(limits.max_file_sites) if r["status"] == OVER_LIMIT else limit_reason(limits.max_file_sites, len(r["sites"]))
        for r in results
        if r["status"] == OVER_LIMIT or r["status"] == "ok" and len(r["sites"]) > limits.max_file_sites
    }
    # A record whose content the dataset in place already holds keeps its file, pinned at the
    # commit it names (see publish.pins); the cache remembers which record files were validated.
    cache_dir = options.cache_dir or default_cache_dir()
    memos = record_memo.load(cache_dir, target) if options.use_cache else record_memo.EMPTY
    previous = previous_records(target, snapshot.repo, memos.records)
    members = previous_members(target, memos.members) if previous else {}
    known = validated.load(cache_dir) if options.use_cache else frozenset()
    memo = row_memo(options.cache_dir, options.use_cache, snapshot.repo)
    searched: list[Any] = []
    search_head: list[dict[str, Any]] = []  # (search.json's head but its commit, when it is written as its rows)
    while True:
        assembled = _assemble(snapshot, results, exceptions, identity, curated, left_out, limits, digest, include, exclude, tests or [], meaning, joins, rest)
        records = assembled.records
        if options.in_memory:
            if options.use_cache and options.keep_release and assembled.manifest.input_digest == digest:  # not a provisional one
                release_cache.save(options.cache_dir or default_cache_dir(), _generation(), digest, assembled.manifest, records)
            return CrawlResult(target, assembled.manifest, time.perf_counter() - started, records=records, documents=documents)
        contents = assembled.contents
        lines_at = line_memo.path(cache_dir, identity.slug)
        lines_stamp = line_memo.stamp(assembled.action_stamp, _line_identity(identity))
        known_lines = line_memo.load(lines_at, lines_stamp) if contents and previous else {}
        line_of = {rid: known_lines[content] for rid, content in contents.items() if content in known_lines}
        # (a record kept by its known line at an earlier commit is copied there only if it is written)
        pinned = pin(records, previous, identity, snapshot.vouch, line_of.get if line_of else None)
        records, kept, lines, line_sizes, deferred = pinned
        as_written = pinned_at(identity, deferred)
        # The index.json and search.json rows of the records whose row key the last dataset
        # written holds, as their bytes (``row_bytes``): neither made, validated nor serialized again
        rows_stamp = row_bytes.stamp(code_digest(), lines_stamp)
        row_keys = contents  # (by their content keys: see ``row_bytes``)
        held_rows = row_bytes.load(row_bytes.path(cache_dir, identity.slug), rows_stamp) if row_keys else {}
        known_index: dict[str, bytes] = {}
        known_search: dict[str, bytes] = {}
        for entry, key in row_keys.items():
            if (found := held_rows.get(key)) is not None and found.id == entry:
                known_index[entry], known_search[entry] = found.index_row, found.search_row
        # (rows captured as written only where some are carried: a crawl that makes them all reads
        # them back once written, ``row_bytes.from_files``)
        index_written: dict[str, bytes] | None = {} if known_search else None
        search_written: dict[str, bytes] | None = {} if known_search else None
        made_rows: dict[str, Any] = {}
        reuse = Reuse(
            {rid: old.data for rid, old in kept.items() if old.data is not None},
            known,
            set(),
            {},
            members,
            {rid: (old.digest, old.size) for rid, old in kept.items() if old.data is None and old.digest is not None},
            lines,
            {},
            [],
            line_sizes,
            pinned_at=as_written if deferred else None,
            known_index_rows=known_index,
            index_written=index_written,
        )
        if previous:
            progress(f"{len(kept)} of {len(records)} records unchanged since the dataset in place")
        progress(f"validating {len(records) - len(kept):,} records")
        # The dataset this one replaces waits in the cache, to lend its files to the next crawl.
        spare_root = (options.cache_dir or default_cache_dir()) / "spare" if options.use_cache else None

        def extra(
            assembled: Assembled = assembled,
            records: list[RecordData] = records,
            known: dict[str, bytes] = known_search,
            written: dict[str, bytes] | None = search_written,
            made: dict[str, Any] = made_rows,
        ) -> Extra:
            """search.json and foreign.json: made while the forked helpers render the records."""
            if written is not None and all(a["id"] < b["id"] for a, b in zip(records, records[1:], strict=False)):
                # as its rows, those of the row memo as they are
                # (the rows not known made without the row memo when most are: it is read only to be asked)
                rows = search_rows(
                    records, assembled.manifest, None if known else memo, known=known, primaries=assembled.primaries, written=written, made_rows=made
                )
                search_head[:] = [{key: value for key, value in rows[SEARCH].head.items() if key != "commit"}]
                return {**rows, **documents}
            made = search_file(records, assembled.manifest, assembled.primaries, memo)
            searched[:] = [made[SEARCH]]
            return {**made, **documents}

        try:
            published = publish(
                target,
                records,
                assembled.manifest,
                extra,
                jobs=options.jobs or default_jobs(),
                spare_root=spare_root,
                max_bytes=limits.max_output_bytes,
                reuse=reuse,
                inodes={rid: old.inode for rid, old in kept.items()} if options.use_cache else None,
            )
            break
        except OverLimit as over:
            more = _leave_out(over, records)
            if not more:
                raise OutputError(f"{over} (max_output_bytes), and leaving out source files cannot make it smaller; nothing was written") from None
            progress(f"{over}: leaving out the entries of {len(more)} more source file(s)")
            left_out.update(more)
    if options.use_cache:
        files = {rid: d for rel, d in reuse.digests.items() if (rid := record_id_of(rel)) is not None}
        # errors.jsonl's lines too (each the JSON of a record file validated): a reader of the
        # whole dataset (``curate check``) then checks only the lines this errcat never wrote
        validated.remember(cache_dir, known, [*files.values(), *(reuse.line_digests or {}).values()])
        record_memo.remember(
            cache_dir, target, files, reuse.line_digests, reuse.layout[0] if reuse.layout else None, {rid: old.inode for rid, old in kept.items()}
        )
        if index_written and search_written:  # the rows as written, for the next crawl (``row_bytes``)
            rows_now, shaped = row_bytes.collect(records, row_keys, held_rows, index_written, search_written, made_rows)
            if rows_now is not None:
                row_bytes.save(row_bytes.path(cache_dir, identity.slug), rows_stamp, rows_now)
            # what the match store reads of search.json, for it to take rather than parse the file
            if shaped is not None and search_head:
                searched[:] = [Shaped(search_head[0], shaped)]
        elif row_keys and searched and (read_back := row_bytes.from_files(target, reuse.digests, records, row_keys, searched[0])) is not None:
            row_bytes.save(row_bytes.path(cache_dir, identity.slug), rows_stamp, read_back)
        if contents:  # the lines of the records kept, for the next crawl (``line_memo``)
            now = {
                contents[rid]: (*(deferred.get(rid) or (r["provenance"]["commit"], r["provenance"]["commit_date"])), lines[rid][1], line_sizes[rid])
                for r in records
                if (rid := r["id"]) in line_sizes and rid in contents and rid in lines
            }
            if now != known_lines:
                line_memo.save(lines_at, lines_stamp, now)
    history_less = "a package" if snapshot.release is not None else "a shallow fetch" if snapshot.shallow else None
    _report_curated(records, curated, assembled.merged, progress, snapshot.vouch, history_less)
    written = reuse.digests.get(SEARCH)
    hold(locals())  # what this crawl made, left to the process's exit (base.teardown)
    return CrawlResult(
        target=target,
        manifest=published.manifest,
        seconds=time.perf_counter() - started,
        search=(written, searched[0]) if options.use_cache and written is not None and searched else None,
        records=[as_written(r) for r in records] if options.hand_back else None,
        documents=documents,
    )


def _line_identity(identity: Any) -> dict[str, Any]:
    """What a pinned record's line is made of besides its content and its pin (``line_memo.stamp``)."""
    links = identity.links
    return {
        "repo": identity.repo.model_dump(mode="json"),
        "source": identity.source,
        "link_prefix": identity.link_prefix,
        "upstream_commit": identity.upstream_commit,
        "links": links["basis"] if links["basis"] == "commit" else links,
    }


def row_memo(cache_dir: Path | None, use_cache: bool, repo: Any, purpose: str = "crawl") -> Any:
    """The search rows kept from the last dataset of ``repo`` written for ``purpose`` (a crawl's,
    a history's: each keeps its own rows), ``search.RowMemo``; None without the cache."""
    from crawler.catalogue.search import RowMemo

    if not use_cache:
        return None
    name = hashlib.sha256(f"{repo.owner}/{repo.name}".encode()).hexdigest()[:16]
    suffix = "" if purpose == "crawl" else f"-{purpose}"
    return RowMemo((cache_dir or default_cache_dir()) / "search" / f"{name}{suffix}.json", code_digest())


def _leave_out(over: OverLimit, records: list[RecordData]) -> dict[str, str]:
    """The source files whose entries make up the excess of each file over the limit, the largest
    share first, with the reason; a record's share is split evenly over its sites' files."""
    by_id = {r["id"]: r for r in records}
    culprits: dict[str, list[str]] = {}
    for name, excess, weights in over.shares():
        per_file: dict[str, float] = {}
        for rid, weight in weights.items():
            sites = by_id[rid]["sites"]
            for site in sites:
                per_file[site["path"]] = per_file.get(site["path"], 0.0) + weight / len(sites)
        covered = 0.0
        for path, share in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
            if covered >= excess:
                break
            covered += share
            culprits.setdefault(path, []).append(name)
    return {path: f"its entries would take {' and '.join(names)} over {over.limit} bytes (max_output_bytes)" for path, names in culprits.items()}


def _aside() -> Any:
    """``meaning_join.Aside`` as a forked helper; None where there is none (``forked.available``)."""
    from crawler.publish import forked

    if not forked.available():
        return None

    def run(fn: Any) -> Any:
        try:
            helper = forked.start(fn)
        except OSError:  # no fork to be had: the caller runs it itself
            return lambda: None
        return lambda: _answer(forked.finish(helper))

    return run


def _answer(answer: tuple[str, Any]) -> Any:
    return answer[1] if answer[0] == "ok" else None


class Assembled(NamedTuple):
    """What :func:`_assemble` makes of the results: the records, the manifest before its content
    digest, each entry's primary site as extracted (by id) and how many curated files it merged."""

    records: list[RecordData]
    manifest: Manifest  # its content_digest is "" until the writer completes it
    primaries: dict[str, ExtractedSite]
    merged: int
    #: By id, each record's content key (``publish.line_memo``), and the stamp of who acts they
    #: stand under (none without the joins' cache).
    contents: dict[str, bytes] = {}
    action_stamp: str = ""


def _assemble(
    snapshot: Any,
    results: list[FileResult],
    exceptions: dict[str, ExceptionData],
    identity: Any,
    curated: Any,
    left_out: dict[str, str],
    limits: Limits,
    digest: str,
    include: list[str],
    exclude: list[str],
    tests: Sequence[FileResult] = (),
    meaning: Any = None,
    joins: Any = None,
    rest: Mapping[str, bytes] | None = None,
) -> Assembled:
    """The records and manifest of the results whose files are not ``left_out``; ``tests`` are the
    test files' results, read for reproductions; ``joins`` keeps the joins' outputs (a JoinStore);
    ``rest``: what the results hold undecoded, put in if a join is made (``runner.complete``)."""
    from crawler.catalogue import action_memo
    from crawler.catalogue.entries import build_entries, pin_in_place
    from crawler.catalogue.evidence import evidence_by_id
    from crawler.catalogue.explanations import curated_parts
    from crawler.catalogue.joined import merge
    from crawler.catalogue.meaning_join import join_meaning
    from crawler.extract.runner import complete

    skipped = [*snapshot.skipped, *(Skipped(path=path, reason=reason) for path, reason in left_out.items())]
    kept = [r for r in results if r["path"] not in left_out]
    bare_asserts = reraises = 0
    for result in kept:
        if result["status"] != "ok":
            skipped.append(Skipped(path=result["path"], reason=result["reason"] or "skipped"))
        bare_asserts += result.get("bare_asserts", 0)
        reraises += result.get("reraises", 0)
    sites = [site for result in kept if result["status"] == "ok" for site in result["sites"]]
    # (pinned once the joins are merged: who acts is keyed by each record without its pins)
    records, primaries = build_entries(identity, sites, exceptions, pinned=False)
    inputs = _join_inputs(snapshot, [*results, *tests], left_out, meaning, joins.cache_dir, joins.settings or Settings()) if joins is not None else None
    joined = join_meaning(
        records,
        primaries,
        kept,
        tests,
        identity.permalink,
        meaning,
        joins if inputs else None,
        inputs,
        aside=_aside(),
        complete=(lambda some: complete(some, rest)) if rest else None,
    )
    explained = curated_parts(records, curated, {rid: part["related"] for rid, part in joined.source.items()})
    evidence = evidence_by_id(records, curated.evidence) if curated.evidence is not None else {}
    contents: dict[str, bytes] = {}
    action_stamp = ""
    if joins is not None and inputs is not None:  # who acts, kept by its inputs (``action_memo``)
        from crawler.publish.line_memo import content_key

        memo = action_memo.load(joins, inputs.base, code_digest(), joined.names)
        merge(records, joined, explained, evidence, primaries, memo.action)
        action_memo.keep(joins, inputs.base, memo)
        # (what merge puts in after who acts: the curated part and the evidence)
        made = ((rid, content_key(key, explained.get(rid), evidence.get(rid))) for rid, key in memo.keys.items())
        contents = {rid: key for rid, key in made if key is not None}
        action_stamp = memo.stamp
    else:
        merge(records, joined, explained, evidence, primaries)
    pin_in_place(records, identity)
    skipped += [Skipped(path=r["path"], reason=r["reason"] or "test file: skipped") for r in tests if r["status"] != "ok"]
    skipped.sort(key=lambda s: (s.path, s.reason))
    manifest = Manifest(
        schema_version=SCHEMA_VERSION,
        errcat_version=__version__,
        extractor_version=EXTRACTOR_VERSION,
        repo=snapshot.repo,
        commit=snapshot.commit,
        commit_date=snapshot.commit_date,
        upstream_commit=identity.upstream_commit,
        ref=snapshot.ref,
        release=snapshot.release,
        source=snapshot.source,
        include=include,
        exclude=exclude,
        counts=Counts(
            files=len(snapshot.files) + len(snapshot.skipped),
            parsed=sum(1 for r in kept if r["status"] == "ok"),
            skipped=len(skipped),
            sites=len(sites),
            entries=len(records),
            bare_asserts=bare_asserts,
            reraises=reraises,
        ),
        limits=limits,
        skipped=skipped,
        curated_digest=curated.digest,
        # A file this machine could not decide (the libcst child timed out, a worker died) makes
        # the dataset provisional: no later crawl may take it as up to date.
        input_digest=digest if not any(r.get("transient") for r in results) else "provisional",
        content_digest="",  # the writer's, once every other file is made
    )
    hold(locals())
    return Assembled(records, manifest, primaries, len(explained), contents, action_stamp)


def _report_curated(
    records: list[RecordData],
    curated: Any,
    merged: int,
    progress: Progress,
    vouch: Callable[[str], str | None] | None = None,
    history_less: str | None = None,
) -> None:
    """The curated files merged, and those naming no entry of this commit (kept on disk, never
    touched: ``errcat curate check`` says where each should move). Such a file is a problem only
    when it was reviewed at this commit or one of its ancestors (``vouch`` dates it: the snapshot's
    history says so): its entry went away since. One reviewed at a commit this one's history does
    not hold is of a later commit (this is an older release: its error came, or was reworded,
    after it) or of another branch, and is said as such, apart; so is every one of a source with no
    history to place a review in (``history_less`` says which: a release read from its package, a
    remote fetched one commit deep), as undecided: no there means "cannot tell"."""
    if not curated.entries:
        return
    progress(f"merged {merged} curated explanation(s) from {curated.directory}")
    known = {r["id"] for r in records}
    orphans = sorted(eid for eid, entry in curated.entries.items() if eid not in known and entry.review.status != "retired")
    before: dict[str, bool] = {}

    def reviewed_here_or_before(eid: str) -> bool:
        commit = curated.entries[eid].review.commit
        if commit not in before:
            before[commit] = vouch is not None and vouch(commit) is not None
        return before[commit]

    due = [eid for eid in orphans if reviewed_here_or_before(eid)]
    later = [eid for eid in orphans if eid not in due]
    if due:
        progress(f"{len(due)} curated file(s) reviewed at this commit or before it name no entry of it ({_some_files(due)}): run `errcat curate check`")
    if later and history_less:
        progress(
            f"{len(later)} curated file(s) name no entry of this {'release' if history_less == 'a package' else 'commit'} "
            f"({_some_files(later)}): expected if it is older than their reviews (the errors they explain came, or were "
            f"reworded, later); {history_less} has no history to say which, and `errcat curate check` over the catalogue "
            "they were reviewed for finds any orphaned"
        )
    elif later:
        progress(
            f"{len(later)} curated file(s) name no entry of this commit, as expected: they were reviewed at commits "
            f"its history does not hold, later ones (the errors they explain came, or were reworded, after it) or "
            f"another branch's ({_some_files(later)})"
        )


def _some_files(ids: list[str]) -> str:
    return ", ".join(f"{eid}.yaml" for eid in ids[:5]) + (" ..." if len(ids) > 5 else "")
