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
from functools import cache
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import __version__
from .cache import default_cache_dir
from .config import identify, load_config
from .curated import default_root, load_set
from .engine import cache_version, default_jobs, extract_all
from .errors import DataError
from .extract import EXTRACTOR_VERSION
from .models import SCHEMA_VERSION, Manifest
from .output import MANIFEST, content_digest, dataset_dir, dataset_lock, publish, read_dataset, recover, Rendered
from .source import open_snapshot

Progress = Callable[[str], None]


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
    max_blob_bytes: int = 2_000_000
    curated: Path | None = None  # curated explanations root (default: curated/ next to the config)


@dataclass
class CrawlResult:
    target: Path
    manifest: Manifest
    seconds: float
    unchanged: bool = False


def _quiet(_: str) -> None:
    pass


@cache
def code_digest() -> str:
    """errcat's own code: a dataset made by other code is never taken as up to date."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def input_digest(snapshot: Any, include: list[str], exclude: list[str], curated_digest: str | None = None) -> str:
    """Everything a dataset is made from, hashed: errcat's code, identity, commit, selected blobs,
    curated explanations."""
    payload = {
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
        "ref": snapshot.ref,
        "source": snapshot.source,
        "include": include,
        "exclude": exclude,
        "files": [[f.path, f.blob] for f in snapshot.files],
        "skipped": [[s.path, s.reason] for s in snapshot.skipped],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()


def upstream_commit(snapshot: Any) -> str | None:
    """The upstream commit a release records, full or abbreviated, when it is not the crawled one."""
    return snapshot.upstream_commit or getattr(snapshot, "upstream_recorded", None)


def current_manifest(target: Path, digest: str) -> Manifest | None:
    """The dataset's manifest when it was made from exactly these inputs and is intact."""
    try:
        manifest = Manifest.model_validate_json((target / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    if manifest.input_digest != digest or content_digest(read_dataset(target)) != manifest.content_digest:
        return None
    return manifest


def crawl(options: CrawlOptions, progress: Progress = _quiet) -> CrawlResult:
    # A crawl allocates millions of small, acyclic objects (trees, site dicts) and frees them by
    # reference counting; the cycle collector would only walk them again and again.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _crawl(options, progress)
    finally:
        if enabled:
            gc.enable()


def _crawl(options: CrawlOptions, progress: Progress) -> CrawlResult:
    started = time.perf_counter()
    config = load_config(options.config)
    upstream = identify(options.repo, options.upstream, options.name, config)
    include = options.include or list(upstream.include)
    exclude = options.exclude or list(upstream.exclude)
    snapshot = open_snapshot(
        repo=options.repo,
        ref=options.ref,
        pypi=options.pypi,
        upstream=upstream,
        include=include,
        exclude=exclude,
        cache_dir=options.cache_dir,
        max_blob_bytes=options.max_blob_bytes,
        progress=progress,
    )
    if options.repo and not options.repo.startswith("https://") and not (options.name or options.upstream):
        progress(f"reading {options.repo} as {upstream.owner}/{upstream.repo} (--name or --upstream say otherwise)")
    try:
        # invalid curated files stop the crawl before anything is written
        curated_root = options.curated if options.curated is not None else default_root(config.path)
        curated = load_set(curated_root, snapshot.repo.owner, snapshot.repo.name)
        target = dataset_dir(options.out, snapshot.repo.owner, snapshot.repo.name)
        with dataset_lock(target):  # another crawl's temporary directory is not a trace
            recover(target)  # traces of a killed run go first, even when the dataset is up to date
        digest = input_digest(snapshot, include, exclude, curated.digest)
        existing = current_manifest(target, digest) if options.use_cache else None
        if existing is not None:
            progress(f"{target} is up to date with {snapshot.commit[:12]}")
            return CrawlResult(target, existing, time.perf_counter() - started, unchanged=True)
        progress(f"{snapshot.repo.owner}/{snapshot.repo.name} @ {snapshot.commit[:12]}: {len(snapshot.files)} files")
        served: list[str] = []
        results = extract_all(snapshot, jobs=options.jobs, cache_dir=options.cache_dir,
                              use_cache=options.use_cache, served=served, progress=progress)
        try:
            return _write(options, snapshot, results, curated, target, digest, include, exclude, started, progress)
        except _CACHE_SYMPTOMS as exc:
            # The cache is an optimisation: results from it that the crawl cannot use (a row
            # edited or damaged inside, past what decoding checks) must not fail every crawl.
            # Extracting again tells whether the cache was to blame, and rewrites its rows.
            if not served:
                raise
            shown = (str(exc).splitlines() or [""])[0].rstrip(":")
            progress(f"results from the cache could not be used ({type(exc).__name__}: {shown}); extracting every file again")
            results = extract_all(snapshot, jobs=options.jobs, cache_dir=options.cache_dir, reuse=False, progress=progress)
            return _write(options, snapshot, results, curated, target, digest, include, exclude, started, progress)
    finally:
        snapshot.close()


#: What results from a damaged cache can raise once the crawl uses them: a key or an index that
#: is not there, a value of another type, a record the schema refuses.
_CACHE_SYMPTOMS = (DataError, LookupError, TypeError, ValueError, AttributeError)


def _write(options: CrawlOptions, snapshot: Any, results: list[dict[str, Any]], curated: Any, target: Path,
           digest: str, include: list[str], exclude: list[str], started: float, progress: Progress) -> CrawlResult:
    """Entries and records from the per-file results, validated and written."""
    # What only a crawl that writes needs, imported here: an up-to-date check stays quick.
    from .catalogue import Identity, build_records
    from .curated import apply as apply_curated
    from .hierarchy import apply_init_templates, resolve_exceptions
    from .related import apply as apply_related
    from .search import search_file

    skipped = [s.model_dump(mode="json") for s in snapshot.skipped]
    bare_asserts = reraises = 0
    for result in results:
        if result["status"] != "ok":
            skipped.append({"path": result["path"], "reason": result["reason"] or "skipped"})
        bare_asserts += result.get("bare_asserts", 0)
        reraises += result.get("reraises", 0)
    apply_init_templates(results)  # in place: call arguments into repo __init__ templates
    exceptions = resolve_exceptions(results)
    sites = [site for result in results if result["status"] == "ok" for site in result["sites"]]

    identity = Identity(
        repo=snapshot.repo,
        commit=snapshot.commit,
        commit_date=snapshot.commit_date,
        upstream_commit=upstream_commit(snapshot),
        source=snapshot.source,
    )
    primaries: dict[str, dict[str, Any]] = {}
    records = build_records(identity, sites, exceptions, primaries)
    apply_related(records)
    if curated.entries:
        progress(f"merged {apply_curated(records, curated)} curated explanation(s) from {curated.directory}")
        known = {r["id"] for r in records}
        orphans = sorted(eid for eid, entry in curated.entries.items()
                         if eid not in known and entry.review.status != "retired")
        if orphans:  # kept on disk, never touched: `errcat curate check` says where each should move
            shown = ", ".join(f"{eid}.yaml" for eid in orphans[:5]) + (" ..." if len(orphans) > 5 else "")
            progress(f"{len(orphans)} curated file(s) name no entry of this commit ({shown}): run `errcat curate check`")
    skipped.sort(key=lambda s: (s["path"], s["reason"]))
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "errcat_version": __version__,
        "extractor_version": EXTRACTOR_VERSION,
        "repo": snapshot.repo.model_dump(mode="json"),
        "commit": snapshot.commit,
        "commit_date": snapshot.commit_date,
        "upstream_commit": identity.upstream_commit,
        "ref": snapshot.ref,
        "source": snapshot.source,
        "include": include,
        "exclude": exclude,
        "counts": {
            "files": len(snapshot.files) + len(snapshot.skipped),
            "parsed": sum(1 for r in results if r["status"] == "ok"),
            "skipped": len(skipped),
            "sites": len(sites),
            "entries": len(records),
            "bare_asserts": bare_asserts,
            "reraises": reraises,
        },
        "skipped": skipped,
        "curated_digest": curated.digest,
        # A file this machine could not decide (the libcst child timed out, a worker died) makes
        # the dataset provisional: no later crawl may take it as up to date.
        "input_digest": digest if not any(r.get("transient") for r in results) else "provisional",
    }
    progress(f"validating {len(records)} records")
    rendered = Rendered()
    # The dataset this one replaces waits in the cache, to lend its files to the next crawl.
    spare_root = (options.cache_dir or default_cache_dir()) / "spare" if options.use_cache else None
    publish(target, records, manifest, lambda: search_file(records, manifest, primaries), rendered,
            jobs=options.jobs or default_jobs(), spare_root=spare_root)
    written = Manifest.model_validate(rendered.manifest)
    return CrawlResult(target=target, manifest=written, seconds=time.perf_counter() - started)
