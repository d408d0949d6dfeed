"""Versions as a library: crawl refs into scratch datasets, diff them, fold history, sync.

The commands in ``versions_cli`` are thin wrappers over these functions. Every crawl goes through
``crawl.crawl`` with the result cache, into a scratch directory of the run (``scratch.run_dir``:
in the cache directory, removed by the next run should this one be killed), so a diff or a
history run never touches the catalogue it does not mean to write.
"""

from __future__ import annotations

import re
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .crawl import CrawlOptions, crawl
from .dataset import Dataset, dataset_dir, find_datasets, open_dataset
from .diff import DiffReport, Side, diff_records, live, side_of
from .errors import DataError, SourceError, UsageError
from .extract import EXTRACTOR_VERSION
from .history import State, advance, is_retired, render_state, seed, version_of
from .models import COMMIT_RE, Manifest
from .output import write_dataset
from .progress import Progress

#: Release tags ``--latest-tag`` considers: v1.2.3 / 1.2 (no pre-releases).
DEFAULT_TAG_PATTERN = r"v?\d+(?:\.\d+)*"


def _quiet(_: str) -> None:
    pass


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

    def crawl_options(self, ref: str | None, out: Path, pypi: str | None = None) -> CrawlOptions:
        return CrawlOptions(
            repo=self.repo, ref=ref, pypi=pypi, upstream=self.upstream, name=self.name, include=list(self.include),
            exclude=list(self.exclude), out=out, jobs=self.jobs, cache_dir=self.cache_dir,
            use_cache=self.use_cache, config=self.config,
        )

    def scratch(self) -> AbstractContextManager[Path]:
        """This run's scratch directory (see ``scratch``), in the cache directory."""
        from .scratch import run_dir
        from .source import cache_root

        return run_dir(cache_root(self.cache_dir))


def _side(data: Dataset) -> Side:
    return side_of(data.manifest, data.records)


def crawl_ref(source: SourceOptions, ref: str | None, scratch: Path, progress: Progress = _quiet,
              pypi: str | None = None) -> Dataset:
    """Crawl one ref (or with ``pypi``, the release NAME==VERSION) into a fresh directory under
    ``scratch`` and load it back."""
    out = Path(tempfile.mkdtemp(prefix="crawl-", dir=scratch))
    result = crawl(source.crawl_options(ref, out, pypi), progress=progress)
    return open_dataset(result.target, progress, f"the records of {pypi or ref or 'HEAD'}")


def load_dataset(path: Path, name: str | None = None, progress: Progress = _quiet) -> Dataset:
    """A written dataset: ``path`` itself, or the one dataset under an output root (``--name`` picks)."""
    found = list(find_datasets(path))
    if name is not None:
        found = [d for d in found if d.relative_to(path).as_posix() in (name, ".") or d.as_posix().endswith("/" + name)]
    if not found:
        raise UsageError(f"no dataset (manifest.json) under {path}")
    if len(found) > 1:
        raise UsageError(f"{path} holds {len(found)} datasets; pass the dataset directory (or --name OWNER/NAME)")
    return open_dataset(found[0], progress)


def release_specs(args: list[str], source: SourceOptions) -> list[str | None]:
    """``diff --pypi``: each argument as the release NAME==VERSION it names (a bare VERSION is of
    the upstream's package), None for a directory (a written dataset). Checked before anything
    is downloaded: one package, no git repository."""
    from .config import identify, load_config
    from .source import canonical_package, parse_pypi_spec

    if source.repo is not None:
        raise UsageError("--pypi reads releases from the package index: leave out --repo (and $ERRCAT_REPO)")
    upstream = identify(None, source.upstream, source.name, load_config(source.config))
    specs: list[str | None] = []
    for arg in args:
        if Path(arg).is_dir():
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


def open_side(arg: str, source: SourceOptions, scratch: Path, progress: Progress = _quiet,
              pypi: str | None = None) -> Dataset:
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
            f"cannot diff two repositories: {old.manifest.repo.owner}/{old.manifest.repo.name} "
            f"and {new.manifest.repo.owner}/{new.manifest.repo.name}"
        )
    return diff_records(old.records, new.records, old_side=_side(old), new_side=_side(new))


# --------------------------------------------------------------------------- refs and tags


def _version_key(tag: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", tag))


def _git_for(source: SourceOptions):
    """(hardened Git, remote URL or None) for the configured repository."""
    from .config import identify, load_config
    from .source import Git, RemoteURL, _local_git_dir, classify_repo_arg

    upstream = identify(source.repo, source.upstream, source.name, load_config(source.config))
    arg = source.repo or upstream.url
    kind, target = classify_repo_arg(arg)
    if kind == "url":
        assert isinstance(target, RemoteURL)
        return Git(None), target.url, upstream
    assert isinstance(target, Path)
    return Git(_local_git_dir(target, arg), allow_file=True), None, upstream


def list_tags(source: SourceOptions, pattern: str = DEFAULT_TAG_PATTERN) -> list[tuple[str, str]]:
    """(tag, commit) of the release tags, oldest version first."""
    git, url, _ = _git_for(source)
    wanted = re.compile(pattern)
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
    return sorted(chosen, key=lambda tc: (_version_key(tc[0]), tc[0]))


def tags_in_range(source: SourceOptions, spec: str, pattern: str = DEFAULT_TAG_PATTERN) -> list[str]:
    """``A..B``: release tags from A to B inclusive, in version order (a local repository only)."""
    start, sep, end = spec.partition("..")
    if not sep or not start or not end:
        raise UsageError(f"--range {spec!r}: expected OLD..NEW, e.g. v0.31.0..v0.33.0")
    git, url, _ = _git_for(source)
    if url is not None:
        raise UsageError("--range needs a local repository (--repo PATH); list the tags instead")
    from .source import check_ref

    a, b = git.commit_of(check_ref(start)), git.commit_of(check_ref(end))
    if a is None or b is None:
        raise SourceError(f"unknown ref {start if a is None else end!r}")
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


def resolve(source: SourceOptions, ref: str | None, latest_tag: bool, pattern: str = DEFAULT_TAG_PATTERN) -> tuple[str | None, str | None]:
    """(ref to crawl, its commit if it can be known without fetching) for ``sync``."""
    git, url, upstream = _git_for(source)
    if latest_tag:
        tags = list_tags(source, pattern)
        if not tags:
            raise SourceError(f"no release tags matching {pattern!r}")
        return tags[-1]
    from .source import check_ref

    if url is None:
        want = check_ref(ref) if ref else "HEAD"
        commit = git.commit_of(want)
        if commit is None:
            raise SourceError(f"unknown ref or commit {want!r}")
        return ref, commit
    want = check_ref(ref or upstream.branch or "HEAD")
    if COMMIT_RE.fullmatch(want):
        return want, want
    text = git.out("ls-remote", url, want if want == "HEAD" else f"refs/heads/{want}", f"refs/tags/{want}",
                   what=f"git ls-remote {url}")
    shas = [line.split("\t", 1)[0] for line in text.splitlines() if line]
    return want, (shas[0] if shas and COMMIT_RE.fullmatch(shas[0]) else None)


# --------------------------------------------------------------------------- history


def history(source: SourceOptions, refs: list[str], out: Path, progress: Progress = _quiet) -> tuple[Path, State]:
    """Crawl each ref (oldest first), fold the history, write the newest catalogue with it."""
    if not refs:
        raise UsageError("history needs at least one ref (or --range OLD..NEW)")
    state: State = {}
    newest: Manifest | None = None
    with source.scratch() as tmp:
        for n, ref in enumerate(refs, start=1):
            progress(f"history: crawling {ref} ({n}/{len(refs)})")
            data = crawl_ref(source, ref, tmp, progress)
            progress(f"history: carrying {len(state):,} entries forward to {ref}")
            state = advance(state, data.records, version_of(ref) or ref, data.manifest.commit)
            newest = data.manifest
    assert newest is not None
    progress(f"history: validating {len(state):,} records, {sum(1 for r in state.values() if is_retired(r)):,} of them retired")
    files = render_state(state, newest)
    target = dataset_dir(out, newest.repo.owner, newest.repo.name)
    progress(f"history: writing {target}")
    write_dataset(target, files)
    return target, state


# --------------------------------------------------------------------------- sync


@dataclass
class SyncResult:
    changed: bool
    target: Path
    commit: str
    report: DiffReport | None
    changelog: str
    notes: list[str] = field(default_factory=list)


def _tree(directory: Path) -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _initial_changelog(manifest: Manifest, entries: int) -> str:
    from .sink import md_code

    label = manifest.ref or manifest.commit[:12]
    return (
        f"## Error catalogue: {md_code(manifest.repo.owner + '/' + manifest.repo.name)} {md_code(label)}\n\n"
        f"First catalogue of {md_code(manifest.commit[:12])}: {entries} entries.\n"
    )


def sync(source: SourceOptions, out: Path, *, ref: str | None = None, latest_tag: bool = False,
         tag_pattern: str = DEFAULT_TAG_PATTERN, progress: Progress = _quiet) -> SyncResult:
    """Bring the catalogue under ``out`` to the upstream's head (or newest release tag)."""
    from .config import identify, load_config
    from .diff_render import markdown

    want, commit = resolve(source, ref, latest_tag, tag_pattern)
    upstream = identify(source.repo, source.upstream, source.name, load_config(source.config))
    target = dataset_dir(out, upstream.owner, upstream.repo)
    old: Dataset | None = None
    if (target / "manifest.json").is_file():
        old = open_dataset(target, progress)
    include = source.include or list(upstream.include)
    exclude = source.exclude or list(upstream.exclude)

    def same_tools(m: Manifest) -> bool:
        return (m.errcat_version, m.extractor_version, m.include, m.exclude) == (__version__, EXTRACTOR_VERSION, include, exclude)

    if old is not None and commit is not None and old.manifest.commit == commit and same_tools(old.manifest):
        progress(f"up to date at {commit[:12]}")
        report = diff_records(old.records, old.records, old_side=_side(old), new_side=_side(old))
        return SyncResult(False, target, commit, report, markdown(report))

    notes: list[str] = []
    with source.scratch() as tmp:
        progress(f"crawling {want or 'HEAD'}" + (f" ({commit[:12]})" if commit else ""))
        new = crawl_ref(source, want, tmp, progress)
        if source.use_cache:  # the scheduled sync keeps its cache across errcat upgrades
            from .cache import ResultCache
            from .engine import cache_version

            with ResultCache(source.cache_dir) as cache:
                dropped = cache.prune(cache_version())
            if dropped:
                progress(f"dropped {dropped} cached result(s) of other errcat versions")
        if old is None:
            state = advance({}, new.records, version_of(want), new.manifest.commit)
            report = None
        else:
            base = Dataset(old.path, old.manifest, live(old.records))
            if not same_tools(old.manifest):
                # The stored records came from another errcat: diff against the old commit crawled
                # by this one, so the changelog shows upstream's changes, not the tool's.
                try:
                    progress(f"re-crawling the previous commit {old.manifest.commit[:12]} with this errcat")
                    base = crawl_ref(source, old.manifest.commit, tmp, progress)
                except SourceError as exc:
                    notes.append(f"previous commit not re-crawled ({exc}); diffing against the stored records")
            state = advance(seed(old.records, old.manifest), new.records, version_of(want), new.manifest.commit)
            report = diff_datasets(base, new)
    progress(f"validating {len(state):,} records")
    files = render_state(state, new.manifest)
    changed = _tree(target) != files
    if changed:
        progress(f"writing {target}")
        write_dataset(target, files)
    if report is None:
        changelog = _initial_changelog(new.manifest, len(new.records))
    else:
        changelog = markdown(report)
        if changed and not report.changes:
            changelog += f"\nThe catalogue was regenerated (errcat {__version__}, extractor {EXTRACTOR_VERSION}).\n"
    return SyncResult(changed, target, new.manifest.commit, report, changelog, notes)


def check_output_commit(value: str) -> str:
    if not COMMIT_RE.fullmatch(value):
        raise DataError(f"not a commit id: {value!r}")
    return value
