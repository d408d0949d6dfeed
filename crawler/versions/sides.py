"""Versions as a library: crawl refs into scratch datasets, diff them, fold history, sync.

The commands in ``cli.versions`` are thin wrappers over these functions. Every crawl goes through
``crawl.crawl`` with the result cache, into a scratch directory of the run (``scratch.run_dir``:
in the cache directory, removed by the next run should this one be killed), so a diff or a
history run never touches the catalogue it does not mean to write.
"""

from __future__ import annotations

import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from crawler.base.cachedir import default_cache_dir
from crawler.base.errors import UsageError
from crawler.base.progress import Progress, quiet
from crawler.crawl import CrawlOptions, CrawlResult, crawl
from crawler.model.diff import DiffReport, Side
from crawler.publish import record_memo
from crawler.publish.dataset import Dataset, named, open_dataset
from crawler.publish.dataset_dirs import find_datasets
from crawler.versions.diff import diff_records, side_of

#: Release tags ``--latest-tag`` considers: v1.2.3 / 1.2 (no pre-releases).
DEFAULT_TAG_PATTERN = r"v?[0-9]+(?:\.[0-9]+)*"


@dataclass
class SourceOptions:
    """What ``errcat crawl`` takes to name a repository and its files (shared by every command here)."""

    repo: str | None = None
    upstream: str | None = None
    name: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    jobs: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    config: Path | None = None

    def crawl_options(self, ref: str | None, out: Path, pypi: str | None = None, in_memory: bool = False) -> CrawlOptions:
        return CrawlOptions(
            repo=self.repo,
            ref=ref,
            pypi=pypi,
            upstream=self.upstream,
            name=self.name,
            include=list(self.include),
            exclude=list(self.exclude),
            out=out,
            jobs=self.jobs,
            cache_dir=self.cache_dir,
            use_cache=self.use_cache,
            config=self.config,
            in_memory=in_memory,
        )

    def spare_root(self) -> Path | None:
        """Where a replaced dataset waits to lend its files to the next write, as a crawl's does."""
        from crawler.base.cachedir import default_cache_dir

        return (self.cache_dir or default_cache_dir()) / "spare" if self.use_cache else None

    def scratch(self) -> AbstractContextManager[Path]:
        """This run's scratch directory (see ``scratch``), in the cache directory."""
        from crawler.base.scratch import run_dir
        from crawler.source.remote import cache_root

        return run_dir(cache_root(self.cache_dir))


def _side(data: Dataset) -> Side:
    return side_of(data.manifest, data.records)


def crawl_ref(source: SourceOptions, ref: str | None, scratch: Path, progress: Progress = quiet, pypi: str | None = None) -> Dataset:
    """Crawl one ref (or with ``pypi``, the release NAME==VERSION) into a fresh directory under
    ``scratch`` and load it back."""
    out = Path(tempfile.mkdtemp(prefix="crawl-", dir=scratch))
    options = source.crawl_options(ref, out, pypi)
    result = crawl(options, progress=progress)
    if options.use_cache:  # no run writes into this scratch directory again
        record_memo.forget(options.cache_dir or default_cache_dir(), result.target)
    return open_dataset(result.target, progress, f"the records of {pypi or ref or 'HEAD'}")


def crawl_data(
    source: SourceOptions, ref: str | None, scratch: Path, progress: Progress = quiet, vouch: list[str] | None = None, in_memory: bool = True
) -> CrawlResult:
    """One ref's records as plain data (``CrawlResult.records``), its manifest and, of the commits
    in ``vouch``, those it descends from (``CrawlResult.vouched``), with nothing read back:
    crawled in memory (nothing written, and no file held to ``max_output_bytes``: the caller's
    writer does that), or with ``in_memory`` False written into a fresh directory under
    ``scratch`` as a crawl writes a dataset (the entries of source files left out to keep within
    ``max_output_bytes``) and handed back as the writer had them. A release the cache holds is
    taken from there; the crawled one is not added to it."""
    out = Path(tempfile.mkdtemp(prefix="crawl-", dir=scratch))  # the crawl's lock lives there
    options = source.crawl_options(ref, out, in_memory=in_memory)
    options.vouch = list(vouch or [])
    options.hand_back = not in_memory
    options.keep_release = False  # a sync's commit is crawled once (the cache's releases are a history's)
    result = crawl(options, progress=progress)
    if not in_memory and options.use_cache:  # no run writes into this scratch directory again
        record_memo.forget(options.cache_dir or default_cache_dir(), result.target)
    assert result.records is not None  # in memory, or handed back
    return result


def load_dataset(path: Path, name: str | None = None, progress: Progress = quiet) -> Dataset:
    """A written dataset: ``path`` itself, or the one dataset under an output root (``--name`` picks)."""
    found = list(find_datasets(path))
    if name is not None:
        found = [d for d in found if d.relative_to(path).as_posix() in (name, ".") or d.as_posix().endswith("/" + name)]
    if not found:
        raise UsageError(f"no dataset (manifest.json) under {named(path)}")
    if len(found) > 1:
        raise UsageError(f"{named(path)} holds {len(found)} datasets; pass the dataset directory (or --name OWNER/NAME)")
    return open_dataset(found[0], progress)


def release_specs(args: list[str], source: SourceOptions, directories: bool = True) -> list[str | None]:
    """``diff --pypi``: each argument as the release NAME==VERSION it names (a bare VERSION is of
    the upstream's package), None for a directory (a written dataset; ``directories`` False:
    ``history --pypi``, every argument is a release). Checked before anything is downloaded:
    one package, no git repository."""
    from crawler.source.config import identify, load_config
    from crawler.source.wheel import canonical_package, parse_pypi_spec

    if source.repo is not None:
        raise UsageError("--pypi reads releases from the package index: leave out --repo (and $ERRCAT_REPO)")
    upstream = identify(None, source.upstream, source.name, load_config(source.config))
    specs: list[str | None] = []
    for arg in args:
        if directories and Path(arg).is_dir():
            specs.append(None)
            continue
        if "==" not in arg:
            if upstream.pypi is None:
                raise UsageError(f"{arg!r}: give NAME==VERSION (upstream {upstream.name!r} names no package)")
            arg = f"{upstream.pypi}=={arg}"
        parse_pypi_spec(arg)
        specs.append(arg)
    names = {canonical_package(parse_pypi_spec(s)[0]) for s in specs if s is not None}
    if len(names) > 1:
        raise UsageError(f"--pypi: OLD and NEW name two packages ({', '.join(sorted(names))}); a diff is of one")
    return specs


def check_sides(args: list[str], source: SourceOptions) -> None:
    """``diff``'s OLD and NEW that are refs, checked before either is crawled: a ref the local
    repository does not have was found only after the other side's crawl (40 s on vLLM)."""
    from crawler.source.config import identify, load_config
    from crawler.source.opener import check_refs

    refs = [arg for arg in args if not Path(arg).is_dir()]
    for arg in refs:
        if arg.startswith(("/", "./", "../", "~")) or arg in (".", ".."):  # a path, not a ref
            raise UsageError(f"{arg}: no such dataset directory (OLD and NEW are refs, releases or dataset directories)")
    if refs:
        check_refs(source.repo, refs, identify(source.repo, source.upstream, source.name, load_config(source.config)))


def open_side(arg: str, source: SourceOptions, scratch: Path, progress: Progress = quiet, pypi: str | None = None) -> Dataset:
    """``diff``'s OLD/NEW: an existing directory is a written dataset, anything else a ref to
    crawl, or with ``pypi`` the release it names."""
    path = Path(arg)
    if path.is_dir():
        return load_dataset(path, source.name, progress)
    progress(f"crawling {pypi or arg}")
    return crawl_ref(source, None if pypi else arg, scratch, progress, pypi)


def diff_datasets(old: Dataset, new: Dataset) -> DiffReport:
    if (old.manifest.repo.owner, old.manifest.repo.name) != (new.manifest.repo.owner, new.manifest.repo.name):
        raise UsageError(
            f"cannot diff two repositories: {old.manifest.repo.owner}/{old.manifest.repo.name} and {new.manifest.repo.owner}/{new.manifest.repo.name}"
        )
    return diff_records(old.records, new.records, old_side=_side(old), new_side=_side(new))
