"""The crawl: a pinned commit in, a validated dataset out.

    source (snapshot) -> extraction (per file, parallel, cached) -> exception hierarchy
    -> entries/records -> validated files -> atomic swap into the output directory
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__
from .catalogue import Identity, build_records
from .config import identify, load_config
from .engine import extract_all
from .extract import EXTRACTOR_VERSION
from .hierarchy import apply_init_templates, resolve_exceptions
from .models import Counts, Manifest, Skipped
from .output import dataset_dir, index_for, render_dataset, write_dataset
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


@dataclass
class CrawlResult:
    target: Path
    manifest: Manifest
    seconds: float
    notes: list[str] = field(default_factory=list)


def _quiet(_: str) -> None:
    pass


def crawl(options: CrawlOptions, progress: Progress = _quiet) -> CrawlResult:
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
    )
    try:
        progress(f"{snapshot.repo.owner}/{snapshot.repo.name} @ {snapshot.commit[:12]}: {len(snapshot.files)} files")
        results = extract_all(snapshot, jobs=options.jobs, cache_dir=options.cache_dir if options.use_cache else None,
                              use_cache=options.use_cache, progress=progress)
    finally:
        snapshot.close()

    skipped = list(snapshot.skipped)
    sites = []
    bare_asserts = reraises = 0
    for result in results:
        if result["status"] != "ok":
            skipped.append(Skipped(path=result["path"], reason=result["reason"] or "skipped"))
            continue
        bare_asserts += result.get("bare_asserts", 0)
        reraises += result.get("reraises", 0)
    results = apply_init_templates(results)
    exceptions = resolve_exceptions(results)
    for result in results:
        if result["status"] == "ok":
            sites.extend(result["sites"])

    identity = Identity(
        repo=snapshot.repo,
        commit=snapshot.commit,
        commit_date=snapshot.commit_date,
        upstream_commit=snapshot.upstream_commit,
        source=snapshot.source,
    )
    records = build_records(identity, sites, exceptions)
    skipped.sort(key=lambda s: (s.path, s.reason))
    parsed = sum(1 for r in results if r["status"] == "ok")
    manifest = Manifest(
        errcat_version=__version__,
        extractor_version=EXTRACTOR_VERSION,
        repo=snapshot.repo,
        commit=snapshot.commit,
        commit_date=snapshot.commit_date,
        upstream_commit=snapshot.upstream_commit,
        ref=snapshot.ref,
        source=snapshot.source,
        include=include,
        exclude=exclude,
        counts=Counts(
            files=len(snapshot.files) + len(snapshot.skipped),
            parsed=parsed,
            skipped=len(skipped),
            sites=len(sites),
            entries=len(records),
            bare_asserts=bare_asserts,
            reraises=reraises,
        ),
        skipped=skipped,
    )
    progress(f"validating {len(records)} records")
    files = render_dataset(records, manifest, index_for(records, identity.slug, identity.commit))
    target = write_dataset(dataset_dir(options.out, snapshot.repo.owner, snapshot.repo.name), files)
    return CrawlResult(target=target, manifest=manifest, seconds=time.perf_counter() - started)
