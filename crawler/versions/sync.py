"""``errcat sync`` and ``history``: fold releases into one dataset with each entry's history."""

from __future__ import annotations

import gc
import hashlib
import sys
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from crawler import __version__
from crawler.base.cachedir import default_cache_dir
from crawler.base.dataset_files import MANIFEST, NAMING_COMMIT, RECORDS, record_file, record_id_of
from crawler.base.errors import DataError, SourceError, UsageError
from crawler.base.layout import dataset_dir
from crawler.base.progress import Progress, quiet
from crawler.catalogue.lineage_links import Applied, default_links
from crawler.catalogue.search import RowMemo
from crawler.crawl import crawl, row_memo
from crawler.extract.visitor import EXTRACTOR_VERSION
from crawler.model.diff import DiffReport, Side
from crawler.model.records import COMMIT_RE, CuratedLinks, Explanation, History, Manifest, Record, RepoRef
from crawler.model.shapes import RecordData
from crawler.publish import jsonl
from crawler.publish.dataset import Placed, PreviousRecord, previous_records, record_model
from crawler.publish.writer import Data, OverLimit, Pieces, Reuse, write_dataset
from crawler.versions import carried, history_reuse
from crawler.versions.carried import Carry
from crawler.versions.curated_touch import CuratedNow, curated_now, curated_root
from crawler.versions.diff import MAX_TWIN_CANDIDATES, diff_data, live_data, side_with
from crawler.versions.history import (
    Fold,
    Unread,
    files_digest,
    lifetime,
    release_order,
    release_version,
    render_state,
    revision,
    seed,
    skipped_paths,
    version_of,
)
from crawler.versions.sides import (
    DEFAULT_TAG_PATTERN,
    SourceOptions,
    crawl_data,
)
from crawler.versions.tags import resolve

# --------------------------------------------------------------------------- history


def history(source: SourceOptions, refs: list[str], out: Path, progress: Progress = quiet, pypi: bool = False) -> tuple[Path, Fold]:
    """Crawl each ref (oldest first), fold the history, write the newest catalogue with it.
    With ``pypi``, each is a release NAME==VERSION crawled from its wheel (``crawl --pypi``).

    One release at a time: each is crawled in memory (nothing written, read back or deleted),
    added to the fold and dropped before the next, so memory does not grow with the releases.
    """
    if not refs:
        raise UsageError("history needs at least one ref (or --range OLD..NEW)")
    with _no_cycle_collection():
        return _history(source, refs, out, progress, pypi)


def _release_options(source: SourceOptions, ref: str, out: Path, pypi: bool, in_memory: bool = False) -> Any:
    """The crawl of one ref, or with ``pypi`` of the release NAME==VERSION."""
    return source.crawl_options(None, out, pypi=ref, in_memory=in_memory) if pypi else source.crawl_options(ref, out, in_memory=in_memory)


def _label(ref: str, pypi: bool) -> str:
    """What a history calls a ref or release: the ref, or the release's version (0.10.2)."""
    return ref.split("==", 1)[1] if pypi else (version_of(ref) or ref)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """As in a crawl: the records are millions of small acyclic objects freed by reference
    counting, and the cycle collector only walked them again and again (on vLLM, half of a
    one-release history's time went to collections started by building small tuples)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _history(source: SourceOptions, refs: list[str], out: Path, progress: Progress, pypi: bool) -> tuple[Path, Fold]:
    _links_first(source, refs[0] if pypi else None)
    fold = Fold()
    newest: Manifest | None = None
    previous = _previous(source, out)
    vouched: dict[str, str] = {}
    documents: dict[str, Any] = {}
    with source.scratch() as tmp:
        for n, ref in enumerate(refs, start=1):
            progress(f"history: crawling {ref} ({n}/{len(refs)})")
            out_dir = Path(tempfile.mkdtemp(prefix="crawl-", dir=tmp))  # the crawl's lock lives there
            options = _release_options(source, ref, out_dir, pypi, in_memory=True)
            last = n == len(refs)
            if last:
                options.vouch = _pinned_at(previous)
            options.as_lines = not last  # only the last release's records are rendered
            result = crawl(options, progress=progress)
            if last:
                vouched, documents = result.vouched, result.documents
            progress(f"history: carrying {len(fold):,} entries forward to {ref}")
            if result.records is None:
                assert result.kept is not None
                fold.add_lines(result.kept, _label(ref, pypi), result.manifest.commit, skipped_paths(result.manifest), files=files_digest(result.manifest))
            else:
                fold.add(
                    result.records,
                    _label(ref, pypi),
                    result.manifest.commit,
                    last=last,
                    kept=result.kept,
                    skipped=skipped_paths(result.manifest),
                    files=files_digest(result.manifest),
                )
            newest = result.manifest
            del result
    assert newest is not None
    cache_dir = (source.cache_dir or default_cache_dir()) if source.use_cache else None
    return _write_fold(fold, newest, out, progress, source.spare_root(), previous, vouched, _row_memo(source, newest), cache_dir, documents), fold


def _links_first(source: SourceOptions, pypi: str | None = None) -> None:
    """The curated lineage links the history writes at its end (``default_links``, as the render
    reads them), read before the first release is crawled: an invalid file is refused at once
    (CuratedError: its file and line), not after every crawl. ``pypi``: a release NAME==VERSION,
    whose repository is known without its wheel when errcat's configuration names the package
    (or --name or --upstream does); one known only from its wheel is checked by that crawl, before
    it extracts anything (``crawl._inputs``)."""
    from crawler.source.config import identify, identify_package, load_config

    config = load_config(source.config)
    if pypi is None:
        upstream = identify(source.repo, source.upstream, source.name, config)
    else:

        def from_the_wheel() -> Any:
            raise _NeedsTheWheel

        try:
            upstream = identify_package(pypi, source.upstream, source.name, config, from_the_wheel)
        except _NeedsTheWheel:
            return
    default_links(upstream.owner, upstream.repo)


class _NeedsTheWheel(Exception):
    """A package's repository is said by its wheel alone (``_links_first``)."""


def per_release(source: SourceOptions, refs: list[str], out: Path, progress: Progress = quiet, pypi: bool = False) -> list[Path]:
    """Each ref's own dataset, under ``out/<ref>/`` (a backfill's matrix job: a later
    ``fold`` makes the history of them all); with ``pypi``, each release NAME==VERSION's, under
    ``out/<VERSION>/``."""
    from crawler.source.policy import check_ref

    if not refs:
        raise UsageError("history --per-release needs at least one ref")
    _links_first(source, refs[0] if pypi else None)  # each crawl reads them: refused before the first
    written = []
    for n, ref in enumerate(refs, start=1):
        where = _label(ref, True) if pypi else ref  # a release spec is checked (parse_pypi_spec) by the caller
        if not pypi:
            check_ref(ref)
        if "/" in where or where.startswith("."):
            raise UsageError(f"--per-release: {where!r} cannot name a directory; give release tags")
        progress(f"history: crawling {ref} ({n}/{len(refs)})")
        written.append(crawl(_release_options(source, ref, out / where, pypi), progress=progress).target)
    return written


def fold_datasets(paths: list[Path], out: Path, progress: Progress = quiet, catalogue: Path | None = None) -> tuple[Path, Fold, list[str]]:
    """The history of per-release datasets (as ``per_release`` writes them), oldest release first
    by the version their manifests name, written like ``history``'s. Each dataset is read and
    validated one at a time (another job wrote them: they are untrusted input like any dataset),
    and held to its own manifest before it is folded (``fold_check``).

    ``catalogue``: an output root whose dataset of this repository (the catalogue in place, which
    daily syncs may have moved past the newest release) stays the newest state, the releases'
    history folded behind it (``Fold.add_catalogue_as_newest``), and its manifest the one written; refused in one
    line when it is older than the newest release. None, or no such dataset there: the newest
    release's catalogue, as ``history`` writes it."""
    from crawler.publish.dataset import load_manifest, named
    from crawler.publish.dataset_dirs import find_datasets
    from crawler.versions.fold_check import refuse_links

    refuse_links(paths)
    found = sorted({d for path in paths for d in find_datasets(path)})
    if not found:
        raise UsageError(f"no dataset (manifest.json) under {', '.join(map(named, paths))}")
    manifests = [(d, load_manifest(d)) for d in found]
    repos = {(m.repo.owner, m.repo.name) for _, m in manifests}
    if len(repos) > 1:
        raise UsageError("cannot fold datasets of several repositories: " + ", ".join(sorted(named("/".join(r)) for r in repos)))
    default_links(*next(iter(repos)))  # the links the render writes, refused now if invalid (``_links_first``)
    versions = {}
    for d, m in manifests:
        versions[d] = release_version(m)
        if versions[d] is None:
            raise UsageError(f"{named(d)}: made from {named(repr(m.ref or m.commit[:12]))}, no release: a fold orders datasets by release")
    # PEP 440 order: 0.6.6 < 0.6.6.post1 < 0.7.0rc1 < 0.7.0, tags (v0.7.0) and wheels (0.7.0) alike
    manifests.sort(key=lambda dm: release_order(versions[dm[0]] or ""))
    labels = [versions[d] or "" for d, _ in manifests]
    twice = sorted({v for v in labels if labels.count(v) > 1})
    if twice:
        raise UsageError(f"two datasets of {named(twice[0])}")
    placed = _placed(catalogue, manifests[-1][1].repo) if catalogue is not None else None  # its manifest read once, for both questions
    if placed is not None and len(manifests) > 1 and _of_the_newest_release(placed[1], manifests):
        # a crawl of the newest release's tag (the git catalogue a backfill's fold goes behind) is that
        # release, newer in what it reads (native trees, tests) though committed before the upload
        left, _ = manifests.pop()
        labels.pop()
        progress(f"history: {versions[left]}'s dataset left out: the catalogue in place is of the same release and stands for it")
    in_place = _catalogue_above(placed, manifests) if placed is not None else None
    # the records as folded in a nameless file on the output's disk (``packed_store``): freed with
    # the fold it is returned in, at once when the fold fails, and by the kernel when the process ends
    fold = Fold(_nearest_directory(out))
    try:
        return _fold_all(fold, manifests, versions, in_place, out, progress), fold, labels
    except BaseException:
        fold.close()
        raise


def _nearest_directory(path: Path) -> Path | None:
    """``path``, or its nearest ancestor that is a directory (where the fold's store goes: nothing
    is made in the output before it is written); None when there is none."""
    for where in (path, *path.parents):
        if where.is_dir():
            return where
    return None


def _fold_all(
    fold: Fold,
    manifests: list[tuple[Path, Manifest]],
    versions: dict[Path, str | None],
    in_place: tuple[Path, Manifest] | None,
    out: Path,
    progress: Progress,
) -> Path:
    """:func:`fold_datasets`'s fold of the datasets (each read and checked in turn) and its write."""
    from crawler.publish.dataset import carried_documents, iter_record_data
    from crawler.versions.fold_check import check_release, matching

    newest = manifests[-1][1]
    with _no_cycle_collection():
        for n, (d, manifest) in enumerate(manifests, start=1):
            version = versions[d]
            progress(f"history: folding {version} ({n}/{len(manifests)}) from {d}")
            files = check_release(d, manifest)  # another job's: held to its own manifest first
            lines = matching(iter_record_data(d, manifest), files, version or "", d)
            # A file the release's crawl skipped (max_output_bytes, ...) leaves its entries unread there, not gone.
            fold.add(
                (r for r in lines if not (r.get("history") or {}).get("retired")),
                version,
                manifest.commit,
                skipped=skipped_paths(manifest),
                files=files_digest(manifest),
            )
        newest_dir = manifests[-1][0]
        if in_place is not None:
            newest_dir, newest = in_place
            progress(f"history: folding the releases behind the catalogue in place at {newest.commit[:12]} ({newest_dir})")
            fold.add_catalogue_as_newest(iter_record_data(newest_dir, newest), lifetime(newest, release_version(newest)), skipped_paths(newest))
        # the newest state's curated documents (the list of foreign errors) go with it, validated as read
        return _write_fold(fold, newest, out, progress, documents=carried_documents(newest_dir))


def _placed(root: Path, repo: RepoRef) -> tuple[Path, Manifest] | None:
    """The dataset in place under ``root`` of ``repo`` (by its owner and name) and its manifest, read
    once; None when there is none."""
    from crawler.publish.dataset import load_manifest

    where = dataset_dir(root, repo.owner, repo.name)
    if not (where / MANIFEST).is_file():
        return None
    return where, load_manifest(where)


def _catalogue_above(placed: tuple[Path, Manifest], manifests: list[tuple[Path, Manifest]]) -> tuple[Path, Manifest]:
    """The dataset in place (``_placed``) of the releases' repository with its manifest, checked
    to be at or after the newest release: its commit is that release's, or
    is none of the releases' and was committed no earlier (the fold has no repository to ask
    for ancestry, so it goes by the committer dates the manifests hold)."""
    from datetime import datetime

    from crawler.publish.dataset import named

    newest = manifests[-1][1]
    where, manifest = placed
    if manifest.repo != newest.repo:
        raise UsageError(f"{named(where)} is a catalogue of {named(manifest.repo.url)}, the releases are of {named(newest.repo.url)}")
    if manifest.commit == newest.commit:
        return where, manifest
    newest_version = release_version(newest) or ""
    shown = f"{named(where)} ({named(_what(manifest))})"
    older = next((release_version(m) for _, m in manifests if m.commit == manifest.commit), None)
    if older is None and (in_place := release_version(manifest)) is not None:
        # a release's dataset (its upload time is no commit's), or a crawl of a release's tag (committed
        # before the wheels were uploaded): its version says where it stands
        before = release_order(in_place)[0] < release_order(newest_version)[0]
    else:
        mine, theirs = _dated(manifest), _dated(newest)
        try:
            before = older is not None or datetime.fromisoformat(mine or "") < datetime.fromisoformat(theirs or "")
        except (TypeError, ValueError):
            raise UsageError(f"the catalogue in place {shown}: cannot tell whether it is older than {named(newest_version)}") from None
    if before:
        raise UsageError(
            f"the catalogue in place {shown} is older than {named(newest_version)}, the range's newest release "
            f"({named(_what(newest))}): sync it past that release first, or end the range at or before it"
        )
    return where, manifest


def _of_the_newest_release(manifest: Manifest, manifests: list[tuple[Path, Manifest]]) -> bool:
    """Whether the dataset in place (its ``manifest``) is of the range's newest release by another
    source: the same version (a git crawl of its tag, a release's wheel) at another commit."""
    newest = manifests[-1][1]
    version, newest_version = release_version(manifest), release_version(newest)
    if manifest.repo != newest.repo or manifest.commit == newest.commit or version is None or newest_version is None:
        return False
    return bool(release_order(version)[0] == release_order(newest_version)[0])  # v1.10 (a tag) and 1.10 (a wheel) alike


def _dated(manifest: Manifest) -> str | None:
    """When a dataset's source was made: the commit's committer date, or a release's upload time."""
    return manifest.commit_date or (manifest.release.uploaded if manifest.release is not None else None)


def _what(manifest: Manifest) -> str:
    """A dataset's source in words: the release and when it was uploaded, or the ref, commit and
    committer date; a content digest is never named as a commit."""
    release = manifest.release
    if release is not None:
        when = f"uploaded {release.uploaded}" if release.uploaded else "upload time not known"
        at = f", upstream commit {manifest.commit[:12]}" if release.commit == "recorded" else ""
        return f"{release.package}=={release.version}{at}, {when}"
    return f"{manifest.ref or manifest.commit[:12]}, {manifest.commit[:12]}, committed {manifest.commit_date}"


def _row_memo(source: SourceOptions, manifest: Manifest) -> RowMemo | None:
    """The search rows the last history of this repository made (``crawl.row_memo``)."""
    memo: RowMemo | None = row_memo(source.cache_dir, source.use_cache, manifest.repo, "history")
    return memo


def _write_fold(
    fold: Fold,
    newest: Manifest,
    out: Path,
    progress: Progress,
    spare_root: Path | None = None,
    previous: dict[str, PreviousRecord] | None = None,
    vouched: dict[str, str] | None = None,
    memo: RowMemo | None = None,
    cache_dir: Path | None = None,
    documents: dict[str, Any] | None = None,
) -> Path:
    """Render and write the fold's dataset (see :func:`_render_write`)."""
    target = dataset_dir(out, newest.repo.owner, newest.repo.name)
    progress(f"history: validating {len(fold):,} records, {fold.retired:,} of them retired")
    _render_write(fold, newest, target, progress, "history: ", spare_root, previous, vouched, memo, cache_dir, documents=documents)
    return target


def _render_write(
    fold: Fold,
    newest: Manifest,
    target: Path,
    progress: Progress,
    said: str,
    spare_root: Path | None = None,
    previous: dict[str, PreviousRecord] | None = None,
    vouched: dict[str, str] | None = None,
    memo: RowMemo | None = None,
    cache_dir: Path | None = None,
    omit: bool = True,
    remember_bare: bool = True,
    valid: frozenset[bytes] = frozenset(),
    documents: dict[str, Any] | None = None,
    hold: bool = False,
    carry: Carry | None = None,
) -> bool:
    """Render the fold's dataset into ``target`` and say whether anything was written; with
    ``cache_dir`` (see ``history_reuse``), what was validated and compressed before is taken as
    it is. A dataset in place with exactly these bytes is left alone. ``omit``: see
    ``render_state`` (False: OverLimit, and nothing written). ``said``: what progress lines begin with. ``remember_bare``: have the cache remember the
    digest of every record file with no history too (``render_state``'s ``bare``), which only a
    history of the same releases finds again: a sync of a new commit has none to find. ``valid``:
    lines of records found valid as they were read (``writer.Reuse.valid_lines``). ``documents``:
    see ``render_state``. ``hold``: see ``_write_unless_in_place``. ``carry``: the retired records
    carried through (``render_state``'s); the rows written are remembered for the next sync."""
    reuse = history_reuse.start(cache_dir, target, newest.repo) if cache_dir is not None else None
    if reuse is not None and carry is not None:  # the retired part's members, for the next sync to leave compressed
        reuse = reuse._replace(retired_members=[])
    if valid:
        reuse = (reuse or Reuse({}, frozenset(), set(), {}, {}))._replace(valid_lines=valid)
    bare: list[bytes] | None = [] if remember_bare and cache_dir is not None else None  # only the cache remembers them
    # the curated lineage links (successors a reviewer linked), read where a crawl reads curated files
    links, applied = default_links(newest.repo.owner, newest.repo.name), Applied()
    if not (target / MANIFEST).exists():  # nothing in place to compare with or link: written as rendered
        progress(f"{said}writing {target}")
        files = render_state(
            fold,
            newest,
            previous,
            vouched,
            memo,
            reuse,
            bare,
            omit=omit,
            documents=documents,
            links=links,
            applied=applied,
            write=lambda items: _write_collected(target, items, spare_root, keep=cache_dir is not None),
        )
        written = True
    else:
        files = render_state(fold, newest, previous, vouched, memo, reuse, bare, omit=omit, documents=documents, links=links, applied=applied, carry=carry)
        absent = {record_file(rid): old for rid, old in carry.in_place.items()} if carry is not None else {}
        written = _write_unless_in_place(target, files, progress, said, spare_root, previous, cache_dir is not None, hold, absent)
        if carry is not None and cache_dir is not None:
            if carry.carried:
                progress(f"{said}{len(carry.carried):,} retired entries carried through as they were written")
            carried.remember(cache_dir, newest.repo, carry.written, carry.rows)
            packed = files.get(RECORDS)
            if packed is not None and reuse is not None and reuse.retired_members is not None:
                made = [(at, size, hashlib.sha256(packed[at : at + size]).digest(), digests) for at, size, digests in reuse.retired_members]
                carried.remember_members(cache_dir, newest.repo, made)
    if fold.capped:
        few = ", ".join(sorted(set(fold.capped))[:3])
        progress(
            f"{said}{len(set(fold.capped))} retired entr{'y' if len(set(fold.capped)) == 1 else 'ies'} given no twin: more than "
            f"{MAX_TWIN_CANDIDATES} live entries of their exception hold their words ({few}{', ...' if len(set(fold.capped)) > 3 else ''})"
        )
    for note in applied.notes:
        progress(f"{said}lineage link: {note}")
    if applied.applied:
        progress(f"{said}{applied.applied} successor(s) linked by review (curated lineage links)")
    fold.rendered()
    if cache_dir is not None and reuse is not None:
        history_reuse.finish(cache_dir, newest.repo, reuse, files, bare or ())
    return written


def _write_collected(target: Path, items: Iterator[tuple[str, Data]], spare_root: Path | None, keep: bool = True) -> dict[str, bytes]:
    """Write the files as they come, and return all but the record files (what ``history_reuse.finish``
    reads): a record file is not held once written, so that a history's memory does not grow with them.
    ``keep`` False (no cache to remember them): only the manifest is returned, and no whole-dataset
    file (index.json, search.json, errors.jsonl.gz: tens of MB on a history of every release) is
    ever held whole: each is written a piece at a time as it is made (``writer.Pieces``)."""
    files: dict[str, bytes] = {}

    def collected() -> Iterator[tuple[str, Data]]:
        for rel, data in items:
            if record_id_of(rel) is not None or not (keep or rel == MANIFEST):
                yield rel, data
            elif isinstance(data, Pieces):
                parts: list[bytes] = []
                yield rel, Pieces(_kept_pieces(data, parts))
                files[rel] = b"".join(parts)  # read by now: the writer reads a file's pieces before the next
            else:
                files[rel] = data
                yield rel, data

    write_dataset(target, collected(), spare_root=spare_root)
    return files


def _kept_pieces(pieces: Pieces, parts: list[bytes]) -> Iterator[bytes]:
    """``pieces`` as they are read, each also put in ``parts``."""
    for piece in pieces:
        parts.append(piece)
        yield piece


#: What a manifest says of where upstream stood when it was made: fields that move with every
#: upstream commit (``content_digest`` with them, as the index and search files name the commit;
#: ``counts`` files and parsed with any file added). A dataset that differs from the one in place
#: only in these has no news for its readers.
_POSITION = frozenset({"commit", "commit_date", "upstream_commit", "ref", "input_digest", "content_digest"})
_POSITION_COUNTS = frozenset({"files", "parsed"})


def _without_position(rel: str, data: bytes) -> object:
    """A dataset file as compared by :func:`only_upstream_moved`: the manifest and the files
    that name the commit as JSON without their position fields, every other file as its bytes."""
    if rel != MANIFEST and rel not in NAMING_COMMIT:
        return data
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return data
    if not isinstance(doc, dict):
        return data
    doc.pop("commit", None)
    if rel == MANIFEST:
        for key in _POSITION:
            doc.pop(key, None)
        if isinstance(doc.get("counts"), dict):
            doc["counts"] = {k: v for k, v in doc["counts"].items() if k not in _POSITION_COUNTS}
    return doc


def only_upstream_moved(
    target: Path, files: dict[str, bytes], previous: dict[str, PreviousRecord] | None = None, absent: Mapping[str, PreviousRecord] | None = None
) -> bool:
    """Whether ``files`` differ from the dataset in place only in where upstream stood: every
    record file, the record lines and the foreign list byte for byte the same; the manifest,
    index and search index the same but for their commit (so the same errcat, extractor,
    curated files, settings, entries and skips). ``previous``: the record files in place as the
    sync read them (``previous_records``); one that is still that very file (its identity) is
    compared with what was read rather than read again. ``absent``: the record files ``files``
    leaves out, carried through in place (``Carry.in_place``), by relative path: each the same
    when it is still that very file, or holds the bytes it was read with."""
    absent = absent or {}
    try:
        held = _in_place(target, previous or {})
    except OSError:
        return False
    if held.keys() != files.keys() | absent.keys():
        return False
    for rel, there in held.items():
        carried_file = absent.get(rel)
        if carried_file is not None:
            if there is not carried_file and not (isinstance(there, bytes) and carried_file.holds(there)):
                return False
            continue
        data = files[rel]
        if isinstance(there, PreviousRecord):
            if not there.holds(data):
                return False
        elif _without_position(rel, there) != _without_position(rel, data):
            return False
    return True


def _in_place(target: Path, previous: dict[str, PreviousRecord]) -> dict[str, bytes | PreviousRecord]:
    """Every regular file of the dataset in place by relative path (as ``writer.read_dataset``
    reads them), a record file that is the very file ``previous`` read as that record (the same
    identity, ``record_memo.identity``) as that record, not read again."""
    import stat

    from crawler.publish.record_memo import identity
    from crawler.publish.writer import dataset_entries

    found: dict[str, bytes | PreviousRecord] = {}
    for rel, entry in dataset_entries(target):
        rid = record_id_of(rel)
        old = previous.get(rid) if rid is not None else None
        if old is not None:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and identity(st) == old.inode:
                found[rel] = old
                continue
        with open(entry.path, "rb") as fh:
            found[rel] = fh.read()
    return found


def _write_unless_in_place(
    target: Path,
    files: dict[str, bytes],
    progress: Progress,
    said: str,
    spare_root: Path | None,
    previous: dict[str, PreviousRecord] | None,
    link: bool,
    hold: bool = False,
    absent: Mapping[str, PreviousRecord] | None = None,
) -> bool:
    """Write ``files`` over the dataset in place, unless it holds exactly them already, or
    (``hold``) differs from them only in where upstream stood; whether written. ``absent``: the
    record files ``files`` leaves out, carried through as the files in place (``Carry.in_place``),
    by relative path: linked, or (not linkable) read again, their bytes held to the digest they
    were read with."""
    absent = absent or {}
    if history_reuse.in_place(target, files, absent):
        progress(f"{said}{target} holds these files already")
        return False
    if hold and only_upstream_moved(target, files, previous, absent):
        progress(f"{said}no entry, explanation or errcat version changed: {target} stays as it is (its manifest catches up with the next change)")
        return False
    else:
        progress(f"{said}writing {target}")
        # the record files in place that hold these very bytes are linked, not written again
        # (with the cache: --no-cache writes fresh files, as a crawl's does)
        links = (
            {rid: old.inode for rid, old in (previous or {}).items() if (data := files.get(record_file(rid))) is not None and old.holds(data)} if link else None
        )
        if absent:
            links = {**(links or {}), **{record_id_of(rel) or "": old.inode for rel, old in absent.items()}}
        write_dataset(target, _WithInPlace(files, absent, target) if absent else files, spare_root=spare_root, links=links)
        return True


class _WithInPlace(Mapping[str, bytes]):
    """A dataset's files and the record files it leaves out (``absent``: carried through in
    place, by relative path), those read from the dataset in place only when asked for (a file
    the writer could not link): each must still be the file, of the bytes, it was read as
    (``PreviousRecord.read``), or the sync stops with nothing written."""

    def __init__(self, files: Mapping[str, bytes], absent: Mapping[str, PreviousRecord], target: Path) -> None:
        self._files, self._absent, self._target = files, absent, target

    def __getitem__(self, rel: str) -> bytes:
        if rel in self._files:
            return self._files[rel]
        data = self._absent[rel].read()
        if data is None:
            from crawler.publish.dataset import named

            raise DataError(f"{named(self._target / rel)}: changed during the sync; run it again")
        return data

    def __iter__(self) -> Iterator[str]:
        yield from self._files
        yield from (rel for rel in self._absent if rel not in self._files)

    def __len__(self) -> int:
        return len(self._files.keys() | self._absent.keys())


def _previous(
    source: SourceOptions, out: Path, placed: Placed | None = None, carried: Mapping[str, tuple[bytes, int]] | None = None
) -> dict[str, PreviousRecord]:
    """The record files of the upstream's dataset under ``out``, to keep those that do not change
    (``placed``: its manifest, when the caller read it already; ``carried``: see ``previous_records``)."""
    from crawler.source.config import identify, load_config

    upstream = identify(source.repo, source.upstream, source.name, load_config(source.config))
    target = dataset_dir(out, upstream.owner, upstream.repo)
    return previous_records(target, RepoRef(url=upstream.url, owner=upstream.owner, name=upstream.repo), placed=placed, carried=carried)


#: The only source whose crawl vouches for commits (a git repository dates its ancestors): a
#: record of another source (a wheel's, ``pypi:...``) names a digest of its files or a commit the
#: release records, and is never kept at it by a crawl of git (``pins._own_pin``).
_PINNED_SOURCE = "git"


def _pinned_at(previous: dict[str, PreviousRecord]) -> list[str]:
    """The commits the previous records name that a crawl of git could keep them at, for it to
    vouch for (a wheel's provenance names no commit git has: not asked)."""
    pinned = (old.provenance(rid) for rid, old in previous.items())
    return sorted({prov.commit for prov in pinned if prov is not None and prov.source == _PINNED_SOURCE and prov.upstream_commit is None})


def _pinned_in(records: list[RecordData], unread: Iterable[Unread] = ()) -> list[str]:
    """:func:`_pinned_at` of the catalogue in place from its records as read (each checked against
    the record schema, its line the file's record: ``pins`` keeps a file only when its bytes are
    exactly a fresh record at the pin), rather than parsing every record file's provenance again;
    ``unread``: the records carried through unread, by the facts kept of them (``versions.carried``)."""
    pinned = [*(r["provenance"] for r in records), *(u.facts for u in unread)]
    return sorted({p["commit"] for p in pinned if p["source"] == _PINNED_SOURCE and p.get("upstream_commit") is None})


def _lines_in(target: Path) -> Callable[[Mapping[str, bytes]], dict[str, bytes]]:
    """The lines of the catalogue in place of the records asked for (their line digests by id),
    read again from its errors.jsonl.gz: each one found by its digest (so the very line read
    before), the read stopped once all are found (``Fold.carry``'s ``reader``)."""
    from crawler.publish.dataset import record_lines
    from crawler.publish.jsonl import line_digest

    def read(wanted: Mapping[str, bytes]) -> dict[str, bytes]:
        by_digest = {digest: eid for eid, digest in wanted.items()}
        found: dict[str, bytes] = {}
        for _, line in record_lines(target):
            eid = by_digest.get(line_digest(line))
            if eid is not None:
                found[eid] = line
                if len(found) == len(by_digest):
                    break
        if len(found) != len(by_digest):
            raise DataError(f"{target / RECORDS}: changed during the sync; run it again")
        return found

    return read


def _records_of(side: _Side) -> Callable[[dict[str, bytes]], list[RecordData]]:
    """Lines of the catalogue in place read before (found valid by their digest) as the records
    ``_read_in_place`` makes of them, their histories as the model reads them (``Fold.carry``'s ``parse``)."""
    made: dict[bytes, tuple[History, Any]] = {}

    def parse(lines: dict[str, bytes]) -> list[RecordData]:
        records = []
        for eid, line in sorted(lines.items()):
            record = orjson.loads(line)
            record["history"] = _history_data(record.get("history"), made, f"{side.where}: record {eid}")
            records.append(record)
        return records

    return parse


# --------------------------------------------------------------------------- sync


@dataclass
class SyncResult:
    changed: bool
    target: Path
    commit: str
    report: DiffReport | None
    changelog: str
    notes: list[str] = field(default_factory=list)


@dataclass
class _Side:
    """One side of a sync: a manifest and its records as plain data (the catalogue in place as
    read, or a crawl's records), and ``where`` a record the diff makes a model of comes from."""

    manifest: Manifest
    records: list[RecordData]
    where: str
    #: Of the catalogue in place: the digests of its lines found valid as read (``writer.Reuse.valid_lines``).
    valid: frozenset[bytes] = frozenset()
    #: Of the catalogue in place: each history's model, by the ``id`` of the history data its records share.
    histories: dict[int, History] = field(default_factory=dict)
    #: Of the catalogue in place: each retired record's line digest and size, by id (``versions.carried``).
    lines: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    #: Of the catalogue in place: the retired records carried through unread (``Fold.carry``), by id.
    unread: dict[str, Unread] = field(default_factory=dict)

    def side(self) -> Side:
        return side_with(self.manifest, len(live_data(self.records)))

    def model(self, record: RecordData) -> Record:
        return record_model(record, f"{self.where}: record {record['id']}")


#: The facts of a carried record (``carried.facts``) that most records share: their repository, the
#: commit and date they are pinned at and their source (a release's, or the git crawl's).
_SHARED_FACTS = ("repo", "commit", "commit_date", "source", "upstream_commit")


def _read_in_place(
    target: Path,
    progress: Progress,
    manifest: Manifest | None = None,
    known: frozenset[bytes] = frozenset(),
    rows: carried.Memo | None = None,
    linked: Container[str] = (),
    members: Iterable[tuple[int, int, bytes, list[bytes]]] = (),
) -> _Side:
    """The catalogue in place, read once: its manifest, and its records as plain data, each
    checked against the record schema and held to the manifest's repository as it is read
    (``iter_record_data``): a damaged one is a DataError naming its line. Their histories are as
    the model reads them (its defaults filled in), each distinct one validated once. ``known``: see
    ``iter_record_data`` (a line whose bytes this errcat validated before is not validated again).
    ``rows``: what the last render wrote of retired records (``versions.carried``): a line of one
    of them is not even parsed (``_Side.unread``), unless a curated link names its id (``linked``)
    or a review linked it: those are read, for the links to be applied to them. ``members``: the
    retired part's gzip members as the last render wrote them (``carried.load_members``): one whose
    lines are all such lines is not even decompressed where its very bytes are."""
    from crawler.base.progress import task
    from crawler.publish.dataset import iter_record_data, load_manifest, named

    manifest = manifest or load_manifest(target)
    where = named(target / RECORDS)
    histories: dict[bytes, tuple[History, Any]] = {}
    records: list[RecordData] = []
    valid: set[bytes] = set()
    lines: dict[str, tuple[bytes, int]] = {}
    unread: dict[str, tuple[bytes, int, Mapping[str, Any]]] = {}

    made: dict[bytes, Mapping[str, Any] | None] = {}

    def facts(digest: bytes) -> Mapping[str, Any] | None:
        if digest in made:
            return made.pop(digest)  # (asked for once more: as its line is read)
        kept = rows.facts(digest) if rows else b""
        if not kept:
            return None
        found = carried.read_facts(kept)
        if found is None:  # (not what errcat writes: the line is read)
            return None
        for key in _SHARED_FACTS:  # the same few strings for thousands of records: one object each
            if isinstance(found.get(key), str):
                found[key] = sys.intern(found[key])
        return None if found["id"] in linked or found["reviewed"] else found

    skip = []
    for offset, size, sha, digests in members if rows else ():
        for digest in digests:
            made[digest] = facts(digest)
        if all(made[digest] is not None for digest in digests):
            skip.append(jsonl.Member(offset, size, sha, [(digest, rows.line_size(digest)) for digest in digests]))  # type: ignore[union-attr]

    def read(skip: list[jsonl.Member]) -> int:
        with task(progress, f"reading {target}", manifest.counts.entries + manifest.counts.retired, "records") as reading:
            left = [0]
            for record in iter_record_data(target, manifest, valid, known, lines, facts if rows else None, unread, skip, left):
                history = record.get("history")
                if history is not None:
                    record["history"] = _history_data(history, histories, f"{where}: record {record['id']}")
                if not (history or {}).get("retired"):
                    lines.pop(record["id"], None)  # only a retired record is carried (``versions.carried``)
                records.append(record)
                if len(records) % 512 == 0:  # a call a record was a tenth of the read
                    reading.advance(512)
            reading.advance(len(records) % 512)
        return left[0]

    try:
        left = read(skip)
    except DataError:
        if not skip:
            raise
        # The members' memo is the cache's, hostile like it (its stamp anyone can make again): one
        # that names bytes of the file in place for lines they do not hold (a member of the live
        # part, some lines of one) costs reading every line, as with no memo; a damaged file is
        # refused by that read.
        progress(f"the memo of {where}'s retired members does not hold for the file in place; reading every line")
        histories.clear()
        records.clear()
        valid.clear()
        lines.clear()
        unread.clear()
        made.clear()
        left = read([])
    if left:
        progress(f"{left:,} retired entries' lines left compressed as they were written")
    return _Side(
        manifest,
        records,
        where,
        frozenset(valid),
        {id(data): model for model, data in histories.values()},
        lines,
        {eid: Unread(*u) for eid, u in unread.items()},
    )


def _validated(source: SourceOptions) -> frozenset[bytes]:
    """The digests of record bytes this errcat validated before (``publish.validated``; none without a cache)."""
    from crawler.publish import validated

    return validated.load(source.cache_dir or default_cache_dir()) if source.use_cache else frozenset()


def _remember_valid(source: SourceOptions, known: frozenset[bytes], valid: frozenset[bytes]) -> None:
    """Remember the lines of the catalogue in place found valid as read (``known``: those
    remembered already), so that the next sync (the scheduled sync keeps its cache) does not
    validate those very bytes again."""
    from crawler.publish import validated

    if source.use_cache and not valid <= known:
        validated.remember(source.cache_dir or default_cache_dir(), known, sorted(valid - known))


def _history_data(history: Any, made: dict[bytes, tuple[History, Any]], where: str) -> Any:
    """A record's history as the model dumps it; ``made``: those done already (the model and its
    dump), by their JSON."""
    key = orjson.dumps(history)
    done = made.get(key)
    if done is None:
        try:
            model = History.model_validate_json(key, strict=True)
        except ValidationError as exc:
            raise DataError(f"{where}: not a valid record: history: {exc.errors()[0]['msg']}") from None
        done = made[key] = (model, model.model_dump(mode="json"))
    return done[1]


def _initial_changelog(manifest: Manifest, entries: int) -> str:
    from crawler.base.sink import md_code

    label = release_version(manifest) or manifest.commit[:12]
    return (
        f"## Error catalogue: {md_code(manifest.repo.owner + '/' + manifest.repo.name)} {md_code(label)}\n\n"
        f"First catalogue of {md_code(revision(manifest))}: {entries} entries.\n"
    )


def _explained(record: RecordData) -> tuple[Any, Any]:
    """A record's explanation and its status, as plain data (the model's defaults when absent)."""
    return record.get("explanation_status", "absent"), record.get("explanation")


def _same_explanation(a: RecordData, b: RecordData) -> bool:
    """Whether two records' explanations are equal as the model has them: the same JSON is, and
    JSON that differs only in what the model fills in or reads alike is compared as models."""
    if orjson.dumps(_explained(a), option=orjson.OPT_SORT_KEYS) == orjson.dumps(_explained(b), option=orjson.OPT_SORT_KEYS):
        return True
    (status_a, expl_a), (status_b, expl_b) = _explained(a), _explained(b)
    try:
        return status_a == status_b and Explanation.model_validate(expl_a or {}) == Explanation.model_validate(expl_b or {})
    except ValidationError:
        return False


def _why_changed(before: Manifest, after: Manifest, old_records: list[RecordData], new_records: list[RecordData]) -> str:
    """What a changelog of no changed error says changed instead: each reason the catalogue is
    not the one in place, in words (a pull request of three files and "No changes." asks why)."""
    from crawler.base.sink import md_code

    reasons = []
    if before.commit != after.commit:
        reasons.append(
            f"Upstream moved from {md_code(before.commit[:12])} to {md_code(after.commit[:12])} and no error "
            f"changed: the catalogue now names {md_code(after.commit[:12])}."
        )
    if (before.errcat_version, before.extractor_version) != (after.errcat_version, after.extractor_version):
        reasons.append(
            f"Made again by errcat {md_code(after.errcat_version)} (extractor {md_code(after.extractor_version)}); the "
            f"catalogue in place was made by errcat {md_code(before.errcat_version)} "
            f"(extractor {md_code(before.extractor_version)})."
        )
    if before.curated_digest != after.curated_digest:
        was = {r["id"]: r for r in old_records}
        ids = sorted(r["id"] for r in new_records if (old := was.get(r["id"])) is None or not _same_explanation(old, r))
        shown = ", ".join(md_code(i) for i in ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        reasons.append(
            f"The curated files changed, and with them the explanation of {len(ids)} entr{'y' if len(ids) == 1 else 'ies'}: {shown}."
            if ids
            else "The curated files changed; no entry's explanation did."
        )
    if not reasons:
        reasons.append("The crawl's settings changed (its limits, or the upstream's configuration).")
    return "".join(f"{r}\n" for r in reasons)


def sync(
    source: SourceOptions,
    out: Path,
    *,
    ref: str | None = None,
    latest_tag: bool = False,
    tag_pattern: str = DEFAULT_TAG_PATTERN,
    progress: Progress = quiet,
    catch_up: bool = False,
) -> SyncResult:
    """Bring the catalogue under ``out`` to the upstream's head (or newest release tag).

    Each piece of work is done once: the catalogue in place is read once, as plain data checked
    against the record schema (a record becomes a model only where the diff needs one: an id
    added, removed, or whose sites or answer changed); the new commit is crawled in memory, its
    records handed over rather than written to a scratch directory and read back; the dataset is
    rendered as ``history`` renders its own (what the cache validated and compressed before is
    taken as it is), and compared with the one in place by its manifest, which names the digest
    of every other file. When the rendered dataset would be over ``max_output_bytes``, the crawl
    is done again as ``errcat crawl`` writes one (leaving out source files to keep within the
    limit) and the dataset rendered from that, as before.

    An upstream commit that changes no entry, no explanation and nothing of errcat's leaves the
    catalogue in place as it is (``changed`` False, nothing written), so that a daily sync opens
    no pull request that only moves the manifest's commit; the manifest names the newer commit
    with the next real change. ``catch_up`` writes it anyway (a maintainer's scheduled catch-up)."""
    with _no_cycle_collection():
        return _sync(source, out, ref, latest_tag, tag_pattern, progress, catch_up)


def _sync(source: SourceOptions, out: Path, ref: str | None, latest_tag: bool, tag_pattern: str, progress: Progress, catch_up: bool = False) -> SyncResult:
    from crawler.crawl import planned_digest
    from crawler.source.config import identify, load_config
    from crawler.versions.formats import markdown

    want, commit = resolve(source, ref, latest_tag, tag_pattern)
    upstream = identify(source.repo, source.upstream, source.name, load_config(source.config))
    links = default_links(upstream.owner, upstream.repo)  # the links the render writes, refused now if invalid (``_links_first``)
    target = dataset_dir(out, upstream.owner, upstream.repo)
    old = None
    placed = None
    cache_dir = (source.cache_dir or default_cache_dir()) if source.use_cache else None
    rows = carried.Memo()
    if (target / MANIFEST).is_file():
        from crawler.publish.dataset import load_placed

        placed = load_placed(target)  # read once: checked here, the records held to it, the record files read by it
        _refuse_backwards(placed.manifest, want, target)  # before its records are read
        known = _validated(source)
        rows = carried.load(cache_dir, placed.manifest.repo) if cache_dir is not None else carried.Memo()
        members = carried.load_members(cache_dir, placed.manifest.repo) if rows and cache_dir is not None else []
        linked = {eid for link in links.links for eid in (link.old, link.new)} if links is not None else set()
        old = _read_in_place(target, progress, placed.manifest, known, rows, linked, members)
        _remember_valid(source, known, old.valid)
    include = source.include or list(upstream.include)
    exclude = source.exclude or list(upstream.exclude)

    def same_tools(m: Manifest) -> bool:
        return (m.errcat_version, m.extractor_version, m.include, m.exclude) == (__version__, EXTRACTOR_VERSION, include, exclude)

    if (
        old is not None
        and commit is not None
        and old.manifest.commit == commit
        and same_tools(old.manifest)
        and old.manifest.input_digest == planned_digest(source.crawl_options(want, out))
    ):
        # the same commit is not enough: a curated file merged since, or a changed limit or
        # upstream setting, makes another catalogue of it
        progress(f"up to date at {commit[:12]}")
        side = old.side()
        unchanged = diff_data(old.records, old.records, old_side=side, new_side=side, models=(old.model, old.model))
        return SyncResult(False, target, commit, unchanged, markdown(unchanged))

    notes: list[str] = []
    unread = 0
    # the files of the retired records carried through unread: hashed as read, not held (``versions.carried``)
    previous = _previous(source, out, placed, {eid: kept for eid, u in old.unread.items() if (kept := rows.file_of(u.line))} if old else None)
    vouch = _pinned_in(old.records, old.unread.values()) if old is not None else _pinned_at(previous)
    with source.scratch() as tmp:
        progress(f"crawling {want or 'HEAD'}" + (f" ({commit[:12]})" if commit else ""))
        crawled = crawl_data(source, want, tmp, progress, vouch)
        if source.use_cache:  # the scheduled sync keeps its cache across errcat upgrades
            from crawler.extract.cache import ResultCache
            from crawler.extract.runner import cache_version

            with ResultCache(source.cache_dir) as cache:
                dropped = cache.prune(cache_version())
            if dropped:
                progress(f"dropped {dropped} cached result(s) of other errcat versions")
        base = old
        if old is not None and not same_tools(old.manifest):
            # The stored records came from another errcat: diff against the old commit crawled
            # by this one, so the changelog shows upstream's changes, not the tool's.
            try:
                progress(f"re-crawling the previous commit {old.manifest.commit[:12]} with this errcat")
                again = crawl_data(source, old.manifest.commit, tmp, progress, in_memory=False)
                base = _Side(again.manifest, again.records or [], f"the records of {old.manifest.commit}")
            except SourceError as exc:
                notes.append(f"previous commit not re-crawled ({exc}); diffing against the stored records")
        in_memory = True
        while True:
            new = _Side(crawled.manifest, crawled.records or [], f"the records of {want or 'HEAD'}")
            report, unread = None, 0
            if base is not None:
                seen, unread = _read_alike(base, new)
                report = _diff(seen, new)
            fold = Fold() if old is None else seed(old.records, old.manifest, old.histories)
            if old is not None and old.unread:
                fold.carry(old.unread, _lines_in(target), _records_of(old))
            # An entry of a source file this crawl left out (max_output_bytes, ...) is unread, not retired.
            fold.add(
                new.records,
                version_of(want),
                new.manifest.commit,
                last=True,
                kept=crawled.kept,
                skipped=skipped_paths(new.manifest),
                files=files_digest(new.manifest),
            )
            progress(f"validating {len(fold):,} records")
            try:
                # no spare directory (a sync's dataset is replaced in place, as before), no bare digests
                changed = _render_write(
                    fold,
                    new.manifest,
                    target,
                    progress,
                    "",
                    None,
                    previous,
                    crawled.vouched,
                    _row_memo(source, new.manifest),
                    cache_dir,
                    omit=not in_memory,
                    remember_bare=False,
                    valid=old.valid if old is not None else frozenset(),
                    documents=crawled.documents,
                    hold=old is not None and not catch_up,
                    carry=carried.Carry(rows, old.lines) if old is not None and cache_dir is not None else None,
                )
                break
            except carried.RowsRefused:
                if old is None or not rows:
                    raise
                # The memo of retired records is the cache's, hostile like it (its stamp anyone
                # can make again): its index and search rows are held to their entry and the
                # schema as they are written (``writer._raw_row``), and rows errcat did not write
                # (not JSON, another entry's, not of the schema) cost rendering those records from
                # their lines, as with no memo (which is written anew of that render); a dataset
                # wrong in itself is refused by that render.
                progress("the memo of retired records holds rows this errcat did not write; rendering them from their lines")
                fold.rendered()
                rows.close()
                rows = carried.Memo()
            except OverLimit as over:
                if not in_memory:
                    raise
                # a crawl in memory holds no file to the limit: crawl again as ``errcat crawl``
                # writes a dataset, leaving out source files, and render that (some retired
                # entries may still be left out then, as ``history`` does)
                progress(f"{over}: crawling {want or 'HEAD'} again as a crawl writes it, within max_output_bytes")
                fold.rendered()
                in_memory = False
                crawled = crawl_data(source, want, tmp, progress, vouch, in_memory=False)
    if report is None:
        changelog = _initial_changelog(new.manifest, len(new.records))
    else:
        assert base is not None  # a report is of the records in place
        changelog = markdown(report, curated=_curated_now(source, upstream.owner, upstream.repo, base.records, new.records, links, cache_dir))
        if unread:
            changelog += (
                f"\n{unread} entr{'y' if unread == 1 else 'ies'} of source files this crawl did not read (its "
                "manifest's `skipped`: too large, too many sites, over max_output_bytes, not parsed) "
                f"{'is' if unread == 1 else 'are'} not listed as removed: not known to be gone, kept as before.\n"
            )
        if changed and not report.changes:
            assert old is not None  # a report is of the dataset in place
            changelog += "\n" + _why_changed(old.manifest, new.manifest, old.records, new.records)
    return SyncResult(changed, target, new.manifest.commit, report, changelog, notes)


def _curated_now(
    source: SourceOptions, owner: str, name: str, before: list[RecordData], after: list[RecordData], links: CuratedLinks | None, cache_dir: Path | None
) -> CuratedNow:
    """What the curated files the crawl read say now of the reviewed texts the change touches
    (``curated_touch``), for the changelog to tell a text already settled from one to look at."""
    from crawler.catalogue.explanations import load_set

    memo = cache_dir / "curated.json" if cache_dir is not None else None  # the crawl's memo of the files' models
    return curated_now(before, after, load_set(curated_root(source.config), owner, name, strict=False, memo=memo), links)


def _refuse_backwards(manifest: Manifest, want: str | None, target: Path) -> None:
    """A sync moves a catalogue forward: to a release older than the one the catalogue is at
    (a history folded up to the wheel of 0.34.0, synced to the git tag v0.33.0), it would retire
    every entry the newer release added "in v0.33.0". Refused in one line, nothing written; a
    branch or a bare commit names no release and is not compared (git ancestry is not asked)."""
    from crawler.publish.dataset import named

    at, to = release_version(manifest), version_of(want)
    if at is not None and to is not None and release_order(to) < release_order(at):
        raise UsageError(
            f"{named(target)} is at {named(at)}, newer than {named(to)}: a sync moves a catalogue forward "
            f"(sync to {named(at)} or later, or fold the releases up to {named(to)} only)"
        )


def _diff(old: _Side, new: _Side) -> DiffReport:
    if (old.manifest.repo.owner, old.manifest.repo.name) != (new.manifest.repo.owner, new.manifest.repo.name):
        raise UsageError(
            f"cannot diff two repositories: {old.manifest.repo.owner}/{old.manifest.repo.name} and {new.manifest.repo.owner}/{new.manifest.repo.name}"
        )
    return diff_data(old.records, new.records, old_side=old.side(), new_side=new.side(), models=(old.model, new.model))


def _read_alike(base: _Side, new: _Side) -> tuple[_Side, int]:
    """``base``'s live entries without those ``new``'s crawl could not see (missing, and raised in
    a file it skipped, see ``history.skipped_paths``), so that the report does not list them as
    removed, and how many they are."""
    unread = skipped_paths(new.manifest)
    if not unread:
        return base, 0
    present = {r["id"] for r in new.records}
    alive = live_data(base.records)
    seen = [r for r in alive if r["id"] in present or unread.isdisjoint(site["path"] for site in r["sites"])]
    if len(seen) == len(alive):
        return base, 0
    return _Side(base.manifest, seen, base.where, base.valid, base.histories), len(alive) - len(seen)


def check_output_commit(value: str) -> str:
    """A commit id fit for $GITHUB_OUTPUT and a commit message: 40 hex, and not git's null id
    (all zeros: git's "no object", never a commit a crawl read)."""
    if not COMMIT_RE.fullmatch(value) or value == NULL_COMMIT:
        raise DataError(f"not a commit id: {value!r}" + (" (git's null id)" if value == NULL_COMMIT else ""))
    return value


NULL_COMMIT = "0" * 40
