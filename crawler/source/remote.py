"""Remote repositories: fetched into the cache directory, then read as a local git snapshot."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from crawler.base.cachedir import move_aside
from crawler.base.errors import SourceError
from crawler.base.progress import Progress, quiet
from crawler.model.records import ABBREVIATED_COMMIT_RE, COMMIT_RE
from crawler.source.git import FETCH_TIMEOUT, Git, first_line
from crawler.source.policy import RemoteURL
from crawler.source.snapshot import FileEntry, Snapshot, open_git

# --------------------------------------------------------------------------- remote (cache)


def cache_root(cache_dir: Path | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("ERRCAT_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("errcat"))


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"


def _repo_cache(root: Path, remote: RemoteURL) -> Path:
    digest = hashlib.sha256(remote.url.encode()).hexdigest()[:12]
    return root / "repos" / f"{safe_name(remote.host)}-{safe_name(remote.owner)}-{safe_name(remote.name)}-{digest}.git"


def _ensure_bare(dest: Path, allow_file: bool) -> Git:
    if not (dest / "HEAD").is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".init-", dir=dest.parent))
        try:
            Git(None, allow_file=allow_file).run("init", "--bare", "--quiet", "--template=", str(tmp))
            try:
                os.rename(tmp, dest)
            except OSError:
                if not (dest / "HEAD").is_file():  # not a lost race with another run
                    raise SourceError(f"{dest}: not a git repository") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return Git(dest, allow_file=allow_file)


def _fetch(git: Git, url: str, ref: str) -> str:
    """Shallow-fetch one ref into a temporary ref, then pin it; returns the commit."""
    tmp = f"refs/errcat/tmp/{uuid.uuid4().hex}"
    try:
        proc = git.run(
            "fetch",
            "--depth",
            "1",
            "--no-tags",
            "--no-recurse-submodules",
            "--quiet",
            "--end-of-options",
            url,
            f"+{ref}:{tmp}",
            timeout=FETCH_TIMEOUT,
            check=False,
        )
        if proc.returncode != 0:
            msg = first_line(proc.stderr)
            if ABBREVIATED_COMMIT_RE.fullmatch(ref):
                msg += " (abbreviated commit ids cannot be fetched from a remote: give the full 40-hex id, a tag or a branch)"
            raise SourceError(f"cannot fetch {ref!r} from {url}: {msg}")
        commit = git.commit_of(tmp)
        if commit is None:
            raise SourceError(f"cannot fetch {ref!r} from {url}: it does not name a commit")
        git.run("update-ref", f"refs/errcat/commits/{commit}", commit)
        head = (Path(str(git.git_dir)) / "FETCH_HEAD").read_text("utf-8", "replace") if git.git_dir else ""
        if "\ttag '" in head:  # tags are pinned, so a later run needs no network
            git.run("update-ref", f"refs/errcat/tags/{ref.removeprefix('refs/tags/')}", tmp)
        return commit
    finally:
        git.run("update-ref", "-d", tmp, check=False)


def open_remote(remote: RemoteURL, ref: str | None, cache_dir: Path | None, *, _allow_file: bool = False, progress: Progress = quiet, **kw: Any) -> Snapshot:
    """A snapshot from the cache's bare repository of ``remote``, fetching what it lacks.

    The repository is errcat's own cache, so damage to it (a garbled HEAD or config, a corrupt
    object, an interrupted disk) must not fail every later crawl: when a step fails on a
    repository that was already there and ``git fsck`` finds it damaged, it is moved aside and
    fetched afresh, once, whether the damage shows while opening or while reading blobs."""
    dest = _repo_cache(cache_root(cache_dir), remote)
    if not dest.exists():
        return _open_remote_in(dest, remote, ref, _allow_file, progress, **kw)
    try:
        snapshot = _open_remote_in(dest, remote, ref, _allow_file, progress, **kw)
    except SourceError as exc:
        _set_aside_if_damaged(dest, _allow_file, exc, progress)
        return _open_remote_in(dest, remote, ref, _allow_file, progress, **kw)
    first = snapshot._reader
    assert first is not None
    # Declared without None: the closure below reassigns it, which would undo the narrowing.
    reader: Callable[[list[FileEntry]], Iterator[tuple[FileEntry, bytes]]] = first
    repaired = False

    def read(entries: list[FileEntry]) -> Iterator[tuple[FileEntry, bytes]]:
        nonlocal reader, repaired
        done = 0
        try:
            for item in reader(entries):
                yield item
                done += 1
        except SourceError as exc:
            if repaired:
                raise
            _set_aside_if_damaged(dest, _allow_file, exc, progress)
            repaired = True
            fresh = _open_remote_in(dest, remote, snapshot.commit, _allow_file, progress, **kw)
            snapshot._closers.append(fresh.close)
            again = fresh._reader
            assert again is not None
            reader = again
            yield from reader(entries[done:])

    snapshot._reader = read
    return snapshot


def _set_aside_if_damaged(dest: Path, allow_file: bool, exc: SourceError, progress: Progress) -> None:
    """Move the cache repository aside when ``git fsck`` finds it damaged; otherwise ``exc`` (a
    network failure, an unknown ref) stands and is raised."""
    if (dest / "HEAD").is_file():
        try:
            sound = Git(dest, allow_file=allow_file).run("fsck", "--no-dangling", "--no-progress", timeout=FETCH_TIMEOUT, check=False).returncode == 0
        except SourceError:
            sound = True  # fsck could not tell (timed out): nothing is thrown away on a guess
        if sound:
            raise exc
    try:
        aside = move_aside(dest)
    except OSError as e:
        raise SourceError(f"{exc}; the cached repository {dest} is damaged and cannot be moved aside: {e.strerror or e}") from None
    progress(f"the cached repository {dest.name} is damaged ({exc}): moved aside to {aside.name}, fetching afresh")


def _open_remote_in(dest: Path, remote: RemoteURL, ref: str | None, allow_file: bool, progress: Progress, **kw: Any) -> Snapshot:
    upstream = kw["upstream"]
    created = [p for p in (dest.parent.parent, dest.parent, dest) if not p.exists()]
    git = _ensure_bare(dest, allow_file)
    want = ref or upstream.branch or "HEAD"
    commit: str | None = None
    try:
        if COMMIT_RE.fullmatch(want):
            commit = git.commit_of(want)
        elif ref is not None:
            commit = git.commit_of(f"refs/errcat/tags/{want.removeprefix('refs/tags/')}")
        if commit is None:
            progress(f"fetching {want} from {remote.url}")
            commit = _fetch(git, remote.url, want)
    except BaseException:
        # A failed first fetch (network down, unknown ref) leaves the cache as it found it.
        for path in reversed(created):
            if path == dest:
                shutil.rmtree(path, ignore_errors=True)
            else:
                _rmdir_quietly(path)
        raise
    return open_git(git, commit, ref=ref, **kw)


def _rmdir_quietly(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass
