"""``open_snapshot``: a local repository, a remote one or a PyPI release, opened the one right way."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.base.errors import UsageError
from crawler.base.progress import Progress, quiet
from crawler.model.records import RepoRef

if TYPE_CHECKING:  # config imports this module for URL checks; avoid the cycle at run time
    from crawler.source.config import Upstream
from crawler.source.globs import PathFilter
from crawler.source.policy import RemoteURL, check_ref, classify_repo_arg
from crawler.source.remote import open_remote
from crawler.source.snapshot import Snapshot, check_local_refs, open_local
from crawler.source.wheel import open_pypi, parse_pypi_spec

# --------------------------------------------------------------------------- entry point


def _repo_ref(upstream: Upstream) -> RepoRef:
    return RepoRef(url=upstream.url, owner=upstream.owner, name=upstream.repo)


def open_snapshot(
    *,
    repo: str | None,
    ref: str | None,
    pypi: str | None,
    upstream: Upstream,
    include: list[str],
    exclude: list[str],
    cache_dir: Path | None = None,
    max_blob_bytes: int = 2_000_000,
    progress: Progress = quiet,
) -> Snapshot:
    """Resolve the source and list its selected files. Refusals happen before any git runs.
    ``progress`` hears of a damaged cache entry (a repository, a wheel) that was set aside."""
    include = list(include) or list(upstream.include)
    exclude = list(exclude)
    PathFilter(include, exclude)  # bad globs fail now, before any work
    kw: dict[str, Any] = dict(repo=_repo_ref(upstream), upstream=upstream, include=include, exclude=exclude, max_blob_bytes=max_blob_bytes)
    if pypi is not None:
        if repo is not None or ref is not None:
            raise UsageError("--pypi cannot be combined with --repo or --ref")
        parse_pypi_spec(pypi)
        return open_pypi(pypi, cache_dir=cache_dir, progress=progress, **kw)
    if ref is not None:
        check_ref(ref)
    if repo is None:
        repo = upstream.url
    kind, target = classify_repo_arg(repo)
    if kind == "url":
        assert isinstance(target, RemoteURL)
        return open_remote(target, ref, cache_dir, progress=progress, **kw)
    assert isinstance(target, Path)
    return open_local(target, repo, ref, **kw)


def check_refs(repo: str | None, refs: list[str], upstream: Upstream) -> None:
    """Refuse, before anything is crawled, a ref that cannot be crawled: one that is no ref at all,
    or, in a local repository, one it does not have (a run crawling several refs would otherwise
    find the last unknown only after crawling the others)."""
    for ref in refs:
        check_ref(ref)
    repo = repo if repo is not None else upstream.url
    kind, target = classify_repo_arg(repo)
    if kind == "path" and refs:  # a remote repository's refs are known once it is fetched
        assert isinstance(target, Path)
        check_local_refs(target, repo, refs)
