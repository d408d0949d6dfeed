"""sync: split from the former ``versions`` module."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crawler import __version__
from crawler.base.errors import DataError, SourceError, UsageError
from crawler.base.layout import dataset_dir
from crawler.base.progress import Progress
from crawler.extract.visitor import EXTRACTOR_VERSION
from crawler.model.diff import DiffReport
from crawler.model.records import COMMIT_RE, Manifest, RepoRef
from crawler.publish.dataset import Dataset, PreviousRecord, open_dataset, previous_records
from crawler.publish.writer import write_dataset
from crawler.versions.diff import diff_records, live
from crawler.versions.history import (
    State,
    advance,
    is_retired,
    render_state,
    seed,
    version_of,
)
from crawler.versions.sides import (
    DEFAULT_TAG_PATTERN,
    SourceOptions,
    _quiet,
    _side,
    crawl_ref,
    crawl_vouching,
    diff_datasets,
)
from crawler.versions.tags import resolve

# --------------------------------------------------------------------------- history


def history(source: SourceOptions, refs: list[str], out: Path, progress: Progress = _quiet) -> tuple[Path, State]:
    """Crawl each ref (oldest first), fold the history, write the newest catalogue with it."""
    if not refs:
        raise UsageError("history needs at least one ref (or --range OLD..NEW)")
    state: State = {}
    newest: Manifest | None = None
    previous = _previous(source, out)
    vouched: dict[str, str] = {}
    with source.scratch() as tmp:
        for n, ref in enumerate(refs, start=1):
            progress(f"history: crawling {ref} ({n}/{len(refs)})")
            last = n == len(refs)
            data, vouched = crawl_vouching(source, ref, tmp, progress, vouch=_pinned_at(previous) if last else None)
            progress(f"history: carrying {len(state):,} entries forward to {ref}")
            state = advance(state, data.records, version_of(ref) or ref, data.manifest.commit)
            newest = data.manifest
    assert newest is not None
    progress(f"history: validating {len(state):,} records, {sum(1 for r in state.values() if is_retired(r)):,} of them retired")
    files = render_state(state, newest, previous, vouched)
    target = dataset_dir(out, newest.repo.owner, newest.repo.name)
    progress(f"history: writing {target}")
    write_dataset(target, files)
    return target, state


def _previous(source: SourceOptions, out: Path) -> dict[str, PreviousRecord]:
    """The record files of the upstream's dataset under ``out``, to keep those that do not change."""
    from crawler.source.config import identify, load_config

    upstream = identify(source.repo, source.upstream, source.name, load_config(source.config))
    target = dataset_dir(out, upstream.owner, upstream.repo)
    return previous_records(target, RepoRef(url=upstream.url, owner=upstream.owner, name=upstream.repo))


def _pinned_at(previous: dict[str, PreviousRecord]) -> list[str]:
    """The commits the previous records name, for the crawl to vouch for."""
    pinned = (old.provenance(rid) for rid, old in previous.items())
    return sorted({prov.commit for prov in pinned if prov is not None})


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
    from crawler.base.sink import md_code

    label = manifest.ref or manifest.commit[:12]
    return (
        f"## Error catalogue: {md_code(manifest.repo.owner + '/' + manifest.repo.name)} {md_code(label)}\n\n"
        f"First catalogue of {md_code(manifest.commit[:12])}: {entries} entries.\n"
    )


def sync(source: SourceOptions, out: Path, *, ref: str | None = None, latest_tag: bool = False,
         tag_pattern: str = DEFAULT_TAG_PATTERN, progress: Progress = _quiet) -> SyncResult:
    """Bring the catalogue under ``out`` to the upstream's head (or newest release tag)."""
    from crawler.source.config import identify, load_config
    from crawler.versions.formats import markdown

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
        unchanged = diff_records(old.records, old.records, old_side=_side(old), new_side=_side(old))
        return SyncResult(False, target, commit, unchanged, markdown(unchanged))

    notes: list[str] = []
    previous = _previous(source, out)
    with source.scratch() as tmp:
        progress(f"crawling {want or 'HEAD'}" + (f" ({commit[:12]})" if commit else ""))
        new, vouched = crawl_vouching(source, want, tmp, progress, vouch=_pinned_at(previous))
        if source.use_cache:  # the scheduled sync keeps its cache across errcat upgrades
            from crawler.extract.cache import ResultCache
            from crawler.extract.runner import cache_version

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
    files = render_state(state, new.manifest, previous, vouched)
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
