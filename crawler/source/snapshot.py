"""The source stage: resolve ``--repo``/``--ref`` or ``--pypi`` to a commit and stream its files.

Files are read straight from git's object database (``ls-tree`` for the listing, one
``cat-file --batch`` per read) or from a wheel archive; nothing is ever checked out, so no
hooks, filters, submodules or LFS smudging run. Every git invocation goes through
:func:`git_cmd`, which applies a hardened environment and configuration (see ``_GIT_ENV``).

User-facing rule: only ``https://`` URLs and explicit local paths are accepted; every other
transport, option-looking argument or odd ref is refused with one line *before* git runs.
"""

from __future__ import annotations

import datetime as _dt
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from crawler.base.errors import SourceError
from crawler.model.records import COMMIT_RE, UPSTREAM_COMMIT_RE, Release, RepoRef, Skipped
from crawler.source.git import GIT_TIMEOUT, Git, first_line, git_cmd
from crawler.source.globs import PathFilter, Selection
from crawler.source.policy import has_control

# --------------------------------------------------------------------------- snapshot


class UpstreamLayout(Protocol):
    """What opening a commit or a wheel reads of the upstream's configuration: ``config.Upstream``,
    whose module uses this one and the wheel's (a local repository's git directory, a PyPI
    spec), so they depend on this shape of it rather than on it."""

    @property
    def native_globs(self) -> list[str]: ...
    @property
    def tests(self) -> list[str]: ...
    @property
    def version_file(self) -> str | None: ...
    @property
    def version_pattern(self) -> str: ...
    @property
    def path_prefix(self) -> str: ...

    def tag_of(self, version: str) -> str | None: ...


@dataclass(frozen=True)
class FileEntry:
    path: str
    blob: str  # 40-hex git blob id (for a wheel: the git blob hash of the bytes)
    size: int


@dataclass
class Snapshot:
    repo: RepoRef
    commit: str
    #: The commit's committer date; None for a wheel, which dates no commit (see ``release``).
    commit_date: str | None
    upstream_commit: str | None
    ref: str | None
    source: str
    files: list[FileEntry]
    skipped: list[Skipped]
    #: The upstream's test files (``tests`` globs): read for reproductions only, never entries.
    tests: list[FileEntry] = field(default_factory=list)
    # What the release records about its upstream commit when that is not a full 40-hex id
    # (e.g. setuptools-scm's 'g4ba787ec9'); informational only.
    upstream_recorded: str | None = None
    #: ``records.Permalinks`` as data: the revision permalinks name, or why there are none.
    permalinks: dict[str, str] | None = None
    #: What the repository puts before a path of this source (``path_prefix`` for a wheel).
    link_prefix: str = ""
    #: What a wheel's snapshot is of: the release, its upload time, what ``commit`` is. None from git.
    release: Release | None = None
    #: A commit's committer date when the repository has it as an ancestor of (or as) ``commit``,
    #: else None; None for a source with no history (a wheel). See ``publish.pins``.
    vouch: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)
    #: The repository holds ``commit`` without its history (a remote is fetched one commit deep):
    #: ``vouch`` says yes for ``commit`` itself only, and its no means "cannot tell".
    shallow: bool = False
    _reader: Callable[[list[FileEntry]], Iterator[tuple[FileEntry, bytes]]] | None = field(default=None, repr=False, compare=False)
    _closers: list[Callable[[], None]] = field(default_factory=list, repr=False, compare=False)

    def read(self, entries: Iterable[FileEntry]) -> Iterator[tuple[FileEntry, bytes]]:
        """Yield (entry, bytes) in the given order, one blob in memory at a time."""
        if self._reader is None:
            raise SourceError("snapshot is closed")
        return self._reader(list(entries))

    def close(self) -> None:
        self._reader = None
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def escape_path(raw: bytes) -> str:
    """Printable, surrogate-free rendering of a raw path: bad bytes and controls as \\xNN."""
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(f"\\x{ord(c):02x}" if (ord(c) < 32 or 0x7F <= ord(c) < 0xA0) else c for c in text)


def _decode_path(raw: bytes) -> tuple[str, str | None]:
    """(display path, skip reason or None)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return escape_path(raw), "path is not valid UTF-8"
    if has_control(text):
        return escape_path(raw), "path contains control characters"
    if any(part in ("", ".", "..") for part in text.split("/")):
        # git's index refuses such a path but a tree object can hold one (git mktree): a "../"
        # would send its permalinks, and the pull request's links, to another file. As a wheel's.
        return text, "unsafe path in the tree"
    return text, None


def _list_tree(
    git: Git,
    commit: str,
    select: PathFilter | Selection,
    max_blob_bytes: int,
    also: str | None = None,
    tests: PathFilter | None = None,
) -> tuple[list[FileEntry], list[Skipped], FileEntry | None, list[FileEntry]]:
    """Selected files, skipped selected paths, the regular file at ``also`` (selected or not),
    and the test files ``tests`` selects (a test file is never a selected file: it gives no
    entry; a bad one is skipped with a reason that says it is a test file)."""
    out = git.run("ls-tree", "-r", "-z", "-l", "--full-tree", "--end-of-options", commit).stdout
    test_files: list[FileEntry] = []
    files: list[FileEntry] = []
    skipped: list[Skipped] = []
    extra: FileEntry | None = None
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, raw = rec.partition(b"\t")
        mode, kind, oid, size = meta.decode("ascii").split()
        path, bad = _decode_path(raw)
        if kind == "blob" and not size.isdigit():  # ls-tree prints "BAD" for an object it cannot read
            raise SourceError(f"cannot read blob {oid} ({path}): the object is damaged")
        regular = kind == "blob" and mode in ("100644", "100755", "100664")
        if path == also and regular and bad is None:
            extra = FileEntry(path, oid, int(size))
        is_test = tests is not None and tests(path)
        if not is_test and not select(path):
            continue
        if is_test and not bad and regular and int(size) <= max_blob_bytes:
            test_files.append(FileEntry(path, oid, int(size)))
        elif is_test:
            skipped.append(Skipped(path=path, reason="test file: " + (bad or "symlink, submodule, other than a regular file or over the size limit")))
        elif bad:
            skipped.append(Skipped(path=path, reason=bad))
        elif mode == "120000":
            skipped.append(Skipped(path=path, reason="symlink"))
        elif mode == "160000" or kind == "commit":
            skipped.append(Skipped(path=path, reason="gitlink (submodule)"))
        elif not regular:
            skipped.append(Skipped(path=path, reason=f"not a regular file (mode {mode})"))
        elif int(size) > max_blob_bytes:
            skipped.append(Skipped(path=path, reason=f"over size limit ({size} > {max_blob_bytes} bytes)"))
        else:
            files.append(FileEntry(path, oid, int(size)))
    files.sort(key=lambda e: e.path)
    skipped.sort(key=lambda s: s.path)
    test_files.sort(key=lambda e: e.path)
    return files, skipped, extra, test_files


class Watchdog:
    """Kills a process when one blocking read takes longer than the timeout."""

    def __init__(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        self.proc, self.timeout = proc, timeout
        self.deadline = time.monotonic() + timeout
        self.fired = False
        self._stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def poke(self) -> None:
        self.deadline = time.monotonic() + self.timeout

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            if time.monotonic() > self.deadline:
                self.fired = True
                self.proc.kill()
                return

    def stop(self) -> None:
        self._stop.set()


def _cat_file_reader(git: Git, timeout: float = GIT_TIMEOUT) -> Callable[[list[FileEntry]], Iterator[tuple[FileEntry, bytes]]]:
    def read(entries: list[FileEntry]) -> Iterator[tuple[FileEntry, bytes]]:
        if not entries:
            return
        proc = subprocess.Popen(
            git.cmd("cat-file", "--batch", "--buffer"),
            env=git.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=1 << 20,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def feed() -> None:  # a writer thread, so a full stdout pipe can never deadlock us
            try:
                for e in entries:
                    stdin.write(e.blob.encode("ascii") + b"\n")
                stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        dog = Watchdog(proc, timeout)
        try:
            for e in entries:
                dog.poke()
                header = stdout.readline()
                parts = header.split()
                if len(parts) != 3 or parts[1] != b"blob":
                    why = "timed out" if dog.fired else (header.decode("ascii", "replace").strip() or "no output")
                    raise SourceError(f"cannot read blob {e.blob} ({e.path}): {why}")
                n = int(parts[2])
                data = stdout.read(n)
                stdout.read(1)  # the newline after each object
                if len(data) != n:
                    raise SourceError(f"cannot read blob {e.blob} ({e.path}): {'timed out' if dog.fired else 'truncated'}")
                yield e, data
        finally:
            dog.stop()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            stdout.close()
            writer.join(timeout=1)

    return read


def _commit_date(git: Git, commit: str) -> str:
    """Committer date as ISO 8601 with the committer's offset; parsed from the raw commit object
    (``git log`` could run gpg through repo config)."""
    raw = git.run("cat-file", "commit", commit).stdout
    for line in raw.split(b"\n"):
        if not line:
            break
        if line.startswith(b"committer "):
            m = re.search(rb" (-?\d+) ([+-])(\d\d)(\d\d)$", line)
            if m:
                sign = 1 if m.group(2) == b"+" else -1
                try:
                    tz = _dt.timezone(sign * _dt.timedelta(hours=int(m.group(3)), minutes=int(m.group(4))))
                except ValueError:  # an offset git stores unchecked (+9959): the same instant in UTC
                    tz = _dt.UTC
                try:
                    return _dt.datetime.fromtimestamp(int(m.group(1)), tz).isoformat()
                except (ValueError, OverflowError, OSError):  # past year 9999: no ISO 8601 date to give
                    raise SourceError(f"commit {commit} has a committer date past what ISO 8601 writes ({int(m.group(1))} s after 1970)") from None
    raise SourceError(f"commit {commit} has no readable committer date")


def recorded_commit(data: bytes, pattern: str) -> str | None:
    """The commit a release's version file records; None unless it is one (7 to 40 hex digits):
    what a configured ``version_pattern`` captures goes into every record's provenance."""
    m = re.search(pattern, data.decode("utf-8", "replace"), re.MULTILINE)
    if not m or m.group(1) is None:
        return None
    value = m.group(1).strip().lower()
    return value if UPSTREAM_COMMIT_RE.fullmatch(value) else None


def _upstream_from(recorded: str | None, commit: str) -> tuple[str | None, str | None]:
    """(upstream_commit, upstream_recorded) from a recorded value."""
    if recorded is None:
        return None, None
    if COMMIT_RE.fullmatch(recorded):
        return (recorded if recorded != commit else None), None
    return None, recorded


def open_git(
    git: Git, commit: str, *, repo: RepoRef, ref: str | None, upstream: UpstreamLayout, include: list[str], exclude: list[str], max_blob_bytes: int
) -> Snapshot:
    select = Selection(include, exclude, upstream.native_globs)
    tests = PathFilter(upstream.tests, exclude) if upstream.tests else None
    files, skipped, vf, test_files = _list_tree(git, commit, select, max_blob_bytes, upstream.version_file, tests)
    reader = _cat_file_reader(git)
    upstream_commit = recorded = None
    if vf is not None and vf.size <= max_blob_bytes:
        for _, data in reader([vf]):
            upstream_commit, recorded = _upstream_from(recorded_commit(data, upstream.version_pattern), commit)
    return Snapshot(
        repo=repo,
        commit=commit,
        commit_date=_commit_date(git, commit),
        upstream_commit=upstream_commit,
        ref=ref,
        source="git",
        files=files,
        skipped=skipped,
        tests=test_files,
        upstream_recorded=recorded,
        permalinks=permalinks_of(repo, upstream_commit or recorded or commit),
        _reader=reader,
        vouch=lambda earlier: _ancestor_date(git, earlier, commit),
        shallow=git.git_dir is not None and (Path(git.git_dir) / "shallow").is_file(),
    )


def _ancestor_date(git: Git, earlier: str, commit: str) -> str | None:
    """``earlier``'s committer date when it is ``commit`` or one of its ancestors, else None.
    ``earlier`` may be abbreviated (7 hex digits or more, as a curated review's commit may be):
    it names the one commit whose id begins with it (a ref of that name that points elsewhere, or
    an ambiguous abbreviation, names none)."""
    if not COMMIT_RE.fullmatch(earlier):
        if not UPSTREAM_COMMIT_RE.fullmatch(earlier):
            return None
        full = git.commit_of(earlier)
        if full is None or not full.startswith(earlier):
            return None
        earlier = full
    if earlier != commit and git.run("merge-base", "--is-ancestor", earlier, commit, check=False).returncode != 0:
        return None
    try:
        return _commit_date(git, earlier)
    except SourceError:
        return None


def permalinks_of(repo: RepoRef, commit: str | None, tag: str | None = None, why_not: str = "") -> dict[str, str]:
    """What permalinks name (``records.Permalinks``): a commit the repository holds, else the
    release's tag, else nothing and why. Permalinks are GitHub's pages: elsewhere there are none."""
    host = urlsplit(repo.url).hostname
    if host != "github.com":
        return {"basis": "none", "reason": f"the repository is not on GitHub ({host}); permalinks are GitHub pages"}
    if commit:
        return {"basis": "commit", "rev": commit}
    if tag:
        return {"basis": "tag", "rev": tag}
    return {"basis": "none", "reason": why_not}


def local_git_dir(path: Path, shown: str) -> Path:
    if not path.exists():
        raise SourceError(f"{shown}: no such directory (--repo takes a local git repository or an https:// git URL)")
    if not path.is_dir():
        raise SourceError(f"{shown}: not a directory")
    path = path.resolve()
    probe = Git(None, allow_file=True)
    # Discover the git dir of exactly this directory: never walk up into a parent repository.
    env = dict(probe.env, GIT_CEILING_DIRECTORIES=str(path.parent))
    try:
        proc = subprocess.run(
            [*git_cmd(None, True), "-C", str(path), "rev-parse", "--absolute-git-dir"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise SourceError(f"{shown}: git timed out") from None
    except FileNotFoundError:
        raise SourceError("git is not installed (or not on PATH)") from None
    if proc.returncode != 0:
        msg = first_line(proc.stderr)
        if "not a git repository" in msg:
            raise SourceError(f"{shown}: not a git repository")
        raise SourceError(f"{shown}: {msg}")
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())


def check_local_refs(path: Path, shown: str, refs: list[str]) -> None:
    """SourceError for the first of ``refs`` the local repository at ``path`` does not have."""
    git = Git(local_git_dir(path, shown), allow_file=True)
    for ref in refs:
        if git.commit_of(ref) is None:
            raise SourceError(f"{shown}: unknown ref or commit {ref!r}")


def open_local(path: Path, shown: str, ref: str | None, **kw: Any) -> Snapshot:
    git = Git(local_git_dir(path, shown), allow_file=True)
    want = ref or "HEAD"
    commit = git.commit_of(want)
    if commit is None:
        raise SourceError(f"{shown}: unknown ref or commit {want!r}")
    return open_git(git, commit, ref=ref, **kw)
