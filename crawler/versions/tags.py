"""Release tags: listed, ordered as versions, picked by range or as the latest, and split into groups."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import Version

from crawler.base.errors import SourceError, UsageError
from crawler.base.releases import release_key
from crawler.model.records import COMMIT_RE
from crawler.versions.sides import DEFAULT_TAG_PATTERN, SourceOptions

if TYPE_CHECKING:
    from crawler.source.config import Upstream
    from crawler.source.git import Git

# --------------------------------------------------------------------------- refs and tags


def version_key(tag: str) -> Version:
    """A tag's place among the releases (``crawler.base.releases``: v0.7.0rc1 before v0.7.0)."""
    return release_key(tag)


def _git_for(source: SourceOptions) -> tuple[Git, str | None, Upstream]:
    """(hardened Git, remote URL or None) for the configured repository."""
    from crawler.source.config import identify, load_config
    from crawler.source.git import Git
    from crawler.source.policy import RemoteURL, classify_repo_arg
    from crawler.source.snapshot import local_git_dir

    upstream = identify(source.repo, source.upstream, source.name, load_config(source.config))
    arg = source.repo or upstream.url
    kind, target = classify_repo_arg(arg)
    if kind == "url":
        assert isinstance(target, RemoteURL)
        return Git(None), target.url, upstream
    assert isinstance(target, Path)
    return Git(local_git_dir(target, arg), allow_file=True), None, upstream


def list_tags(source: SourceOptions, pattern: str = DEFAULT_TAG_PATTERN) -> list[tuple[str, str]]:
    """(tag, commit) of the release tags, oldest version first."""
    git, url, _ = _git_for(source)
    wanted = re.compile(pattern, re.ASCII)  # a release tag's \d is 0-9: PEP 440 reads no other digits
    tags: dict[str, str] = {}
    if url is None:
        text = git.out("for-each-ref", "--format=%(refname:strip=2) %(objectname) %(*objectname)", "refs/tags")
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 2:
                tags[parts[0]] = parts[2] if len(parts) > 2 else parts[1]
    else:
        text = git.out("ls-remote", "--tags", url, what=f"git ls-remote {url}")
        for line in text.splitlines():
            sha, _, ref = line.partition("\t")
            name = ref.removeprefix("refs/tags/")
            if name.endswith("^{}"):
                tags[name[:-3]] = sha  # the peeled commit of an annotated tag wins
            else:
                tags.setdefault(name, sha)
    chosen = [(t, c) for t, c in tags.items() if wanted.fullmatch(t)]
    return sorted(chosen, key=lambda tc: (version_key(tc[0]), tc[0]))


def tags_in_range(source: SourceOptions, spec: str, pattern: str = DEFAULT_TAG_PATTERN) -> list[str]:
    """``A..B``: release tags from A to B inclusive, in version order. In a local repository, the
    tags on the history from A to B; of a remote one (no history without a clone), the tags whose
    versions lie between A's and B's."""
    start, sep, end = spec.partition("..")
    if not sep or not start or not end:
        raise UsageError(f"--range {spec!r}: expected OLD..NEW, e.g. v0.31.0..v0.33.0")
    git, url, _ = _git_for(source)
    if url is not None:
        tags = [tag for tag, _ in list_tags(source, pattern)]
        if start not in tags or end not in tags:
            raise SourceError(f"unknown release tag {start if start not in tags else end!r}")
        low, high = version_key(start), version_key(end)
        if low > high:
            raise UsageError(_reversed(spec, start, end))
        return [tag for tag in tags if low <= version_key(tag) <= high]
    from crawler.source.policy import check_ref

    a, b = git.commit_of(check_ref(start)), git.commit_of(check_ref(end))
    if a is None or b is None:
        raise SourceError(f"unknown ref {start if a is None else end!r}")
    if a != b and git.run("merge-base", "--is-ancestor", b, a, check=False).returncode == 0:
        raise UsageError(_reversed(spec, start, end))
    tags = []
    for tag, commit in list_tags(source, pattern):
        inside = git.run("merge-base", "--is-ancestor", commit, b, check=False).returncode == 0
        after = git.run("merge-base", "--is-ancestor", a, commit, check=False).returncode == 0
        if inside and after:
            tags.append(tag)
    if start not in tags:
        tags.insert(0, start)
    if end not in tags:
        tags.append(end)
    return tags


def refuse_newest_first(source: SourceOptions, refs: list[str], pattern: str = DEFAULT_TAG_PATTERN) -> None:
    """UsageError when two REFs in a row go back in time: the later one an ancestor of the earlier
    in a local repository, or, for release tags anywhere, a lower version."""
    if len(refs) < 2:
        return
    tags = re.compile(pattern, re.ASCII)
    git, url, _ = _git_for(source)
    if url is None:
        from crawler.source.policy import check_ref

        commits = [git.commit_of(check_ref(ref)) for ref in refs]
    for i, (a, b) in enumerate(zip(refs, refs[1:], strict=False)):
        if tags.fullmatch(a) and tags.fullmatch(b) and version_key(a) > version_key(b):
            raise UsageError(f"REFs go oldest first: {b} is older than {a}")
        if url is None:
            ca, cb = commits[i], commits[i + 1]
            if ca and cb and ca != cb and git.run("merge-base", "--is-ancestor", cb, ca, check=False).returncode == 0:
                raise UsageError(f"REFs go oldest first: {b} is older than {a}")


def _reversed(spec: str, start: str, end: str) -> str:
    # folded newest first, every error of the newer release would read as retired in the older one
    return f"--range {spec!r}: {end} is older than {start}; give the older release first ({end}..{start})"


def resolve(source: SourceOptions, ref: str | None, latest_tag: bool, pattern: str = DEFAULT_TAG_PATTERN) -> tuple[str | None, str | None]:
    """(ref to crawl, its commit if it can be known without fetching) for ``sync``."""
    git, url, upstream = _git_for(source)
    if latest_tag:
        tags = list_tags(source, pattern)
        if not tags:
            raise SourceError(f"no release tags matching {pattern!r}")
        return tags[-1]
    from crawler.source.policy import check_ref

    if url is None:
        want = check_ref(ref) if ref else "HEAD"
        commit = git.commit_of(want)
        if commit is None:
            raise SourceError(f"unknown ref or commit {want!r}")
        return ref, commit
    want = check_ref(ref or upstream.branch or "HEAD")
    if COMMIT_RE.fullmatch(want):
        return want, want
    text = git.out("ls-remote", url, want if want == "HEAD" else f"refs/heads/{want}", f"refs/tags/{want}", what=f"git ls-remote {url}")
    shas = [line.split("\t", 1)[0] for line in text.splitlines() if line]
    return want, (shas[0] if shas and COMMIT_RE.fullmatch(shas[0]) else None)


#: A release of the package index as a plan hands it on: NAME==VERSION or VERSION, PEP 440's
#: characters only (they reach a workflow's scripts).
_RELEASE_ARG = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,99}==)?[0-9][0-9A-Za-z.!+_-]{0,63}")


def plan_groups(refs: list[str], groups: int, pypi: bool = False) -> list[str]:
    """``refs`` in at most ``groups`` contiguous runs, each a space-separated string (one matrix
    job's releases), as even as can be. Every ref must be a release tag of the default pattern,
    or with ``pypi`` a release (VERSION or NAME==VERSION): they reach a workflow's scripts."""
    from crawler.source.policy import check_ref

    for ref in refs:
        if pypi:
            if not _RELEASE_ARG.fullmatch(ref):
                raise UsageError(f"--plan: {ref!r} is not a release (VERSION or NAME==VERSION)")
            continue
        check_ref(ref)
        if not re.fullmatch(DEFAULT_TAG_PATTERN, ref):
            raise UsageError(f"--plan: {ref!r} is not a release tag (v1.2.3 style)")
    if not refs:
        raise UsageError("--plan: no refs to plan")
    n = min(groups, len(refs))
    size, extra = divmod(len(refs), n)
    out, at = [], 0
    for i in range(n):
        take = size + (1 if i < extra else 0)
        out.append(" ".join(refs[at : at + take]))
        at += take
    return out


def releases_in_range(package: str, spec: str) -> list[str]:
    """``A..B`` of a package on the index: every final release (no pre-, dev- or yanked-only
    release) from A to B inclusive, in PEP 440 order, as the index spells them (0.6.6.post1)."""
    from packaging.version import InvalidVersion, Version

    from crawler.source.index import project_page, versions
    from crawler.source.wheel import canonical_package

    start, sep, end = spec.partition("..")
    if not sep or not start or not end:
        raise UsageError(f"--range {spec!r}: expected OLD..NEW, e.g. 0.4.0..0.33.0")
    try:
        low, high = Version(start), Version(end)
    except InvalidVersion:
        raise UsageError(f"--range {spec!r}: OLD and NEW must be versions (0.4.0..0.33.0)") from None
    if low > high:
        raise UsageError(f"--range {spec!r}: {start} comes after {end}; give the older release first")
    page = project_page(canonical_package(package))
    if page is None:
        raise SourceError(f"the package index lists no releases of {package} (or speaks no JSON simple API)")
    found = sorted((Version(v), v) for v in versions(page))
    chosen = [v for parsed, v in found if low <= parsed <= high and not parsed.is_prerelease]
    if not chosen:
        raise SourceError(f"the package index lists no release of {package} from {start} to {end}")
    return chosen


def refuse_releases_out_of_order(specs: list[str]) -> None:
    """``history --pypi`` folds releases in the order given: refuse one given after a newer one,
    or twice (PEP 440 order, as a fold of their datasets sorts them)."""
    from packaging.version import InvalidVersion, Version

    seen: list[tuple[Version, str]] = []
    for spec in specs:
        version = spec.split("==", 1)[1]
        try:
            parsed = Version(version)
        except InvalidVersion:
            raise UsageError(f"--pypi: {version!r} is not a PEP 440 version") from None
        if seen and parsed <= seen[-1][0]:
            raise UsageError(f"--pypi: {version} comes {'twice' if parsed == seen[-1][0] else 'after ' + seen[-1][1]}; give the releases oldest first")
        seen.append((parsed, version))
