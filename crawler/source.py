"""The source stage: resolve ``--repo``/``--ref`` or ``--pypi`` to a commit and stream its files.

Files are read straight from git's object database (``ls-tree`` for the listing, one
``cat-file --batch`` per read) or from a wheel archive; nothing is ever checked out, so no
hooks, filters, submodules or LFS smudging run. Every git invocation goes through
:func:`_git_cmd`, which applies a hardened environment and configuration (see ``_GIT_ENV``).

User-facing rule: only ``https://`` URLs and explicit local paths are accepted; every other
transport, option-looking argument or odd ref is refused with one line *before* git runs.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar
from urllib.parse import urlsplit

from .cache import move_aside
from .errors import SourceError, UsageError
from .models import ABBREVIATED_COMMIT_RE, COMMIT_RE, UPSTREAM_COMMIT_RE, RepoRef, Skipped
from .progress import Progress, quiet, task
from .scratch import run_dir

if TYPE_CHECKING:  # config imports this module for URL checks; avoid the cycle at run time
    from .config import Upstream

GIT_TIMEOUT = 60.0  # seconds for a local git command
FETCH_TIMEOUT = 600.0  # seconds for a network fetch
PIP_TIMEOUT = 1800.0  # a vLLM wheel is several hundred MB

# --------------------------------------------------------------------------- globs


def _glob_segment(seg: str) -> str:
    out: list[str] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(seg[i]))
        elif c == "[":
            j = i + 1
            if j < n and seg[j] in "!^":
                j += 1
            if j < n and seg[j] == "]":
                j += 1
            while j < n and seg[j] != "]":
                j += 1
            if j >= n:  # unclosed: a literal '['
                out.append(re.escape(c))
            else:
                body = seg[i + 1 : j]
                neg = body[:1] in ("!", "^")
                if neg:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(("[^/" if neg else "[") + body + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile one gitwildmatch (.gitignore-style) pattern to a regex over a repo-relative path.

    ``**/`` matches zero or more directories, a trailing ``/**`` everything inside, ``*`` and
    ``?`` never cross ``/``; a pattern without an inner ``/`` matches at any depth; a pattern
    that matches a directory matches everything under it; a trailing ``/`` matches only
    directories (so everything under them). Negation (``!``) is not supported: use exclude.
    """
    if not pattern or pattern.strip() != pattern or pattern.startswith("!") or any(ord(c) < 32 for c in pattern):
        raise UsageError(f"bad glob {pattern!r}: empty, padded, negated or with control characters (use --exclude to negate)")
    dir_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    if not body:
        raise UsageError(f"bad glob {pattern!r}")
    segs = body.split("/")
    while dir_only and len(segs) > 1 and segs[-1] == "**":  # "a/**/" is directory a: "a/"
        segs.pop()
    parts: list[str] = [] if anchored else ["(?:.*/)?"]
    for k, seg in enumerate(segs):
        last = k == len(segs) - 1
        if seg == "**":
            parts.append(".*" if last else "(?:.*/)?")
        else:
            parts.append(_glob_segment(seg) + ("" if last else "/"))
    if dir_only:
        parts.append("/.*")
    elif segs[-1] != "**":
        parts.append("(?:/.*)?")
    return re.compile("".join(parts), re.DOTALL)


class PathFilter:
    """include/exclude globs with gitwildmatch semantics; exclude wins."""

    def __init__(self, include: Iterable[str], exclude: Iterable[str] = ()) -> None:
        self.include = re.compile("|".join(f"(?:{glob_regex(p).pattern})" for p in include) or "(?!)", re.DOTALL)
        self.exclude = re.compile("|".join(f"(?:{glob_regex(p).pattern})" for p in exclude) or "(?!)", re.DOTALL)

    def __call__(self, path: str) -> bool:
        return self.include.fullmatch(path) is not None and self.exclude.fullmatch(path) is None


# --------------------------------------------------------------------------- argument checks

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SCP = re.compile(r"^[^/]*:")  # git reads "host:path" (no slash before the colon) as ssh
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$")
_SEGMENT = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _has_control(s: str) -> bool:
    return _CONTROL.search(s) is not None


@dataclass(frozen=True)
class RemoteURL:
    url: str  # normalised: https://host[:port]/owner/name (no .git, no trailing slash)
    host: str
    owner: str
    name: str


def parse_https_url(url: str) -> RemoteURL:
    """Validate an https repository URL and split it into host/owner/name; SourceError otherwise."""
    if not url or url.startswith("-"):
        raise SourceError(f"refusing repository {url!r}: looks like an option")
    if _has_control(url) or any(c.isspace() for c in url):
        raise SourceError(f"refusing repository {url!r}: control characters or spaces")
    if "::" in url:
        raise SourceError(f"refusing repository {url!r}: git transport helpers (e.g. ext::) are not allowed")
    parts = urlsplit(url)
    if parts.scheme.lower() != "https":
        raise SourceError(f"refusing repository {url!r}: only https:// URLs and local paths are accepted")
    if parts.username is not None or parts.password is not None:
        raise SourceError(f"refusing repository {url!r}: credentials in URLs are not accepted")
    host = parts.hostname or ""
    if not _HOST.match(host):
        raise SourceError(f"refusing repository {url!r}: bad host")
    if parts.query or parts.fragment:
        raise SourceError(f"refusing repository {url!r}: query strings and fragments are not accepted")
    try:
        port = parts.port
    except ValueError:
        raise SourceError(f"refusing repository {url!r}: bad port") from None
    path = parts.path.rstrip("/")
    if path.endswith(".git"):
        path = path[:-4]
    segs = [s for s in path.split("/") if s]
    if len(segs) < 2 or any(s in (".", "..") or not _SEGMENT.match(s) for s in segs):
        raise SourceError(f"refusing repository {url!r}: expected https://HOST/OWNER/NAME")
    netloc = host.lower() + (f":{port}" if port else "")
    return RemoteURL(url=f"https://{netloc}/{'/'.join(segs)}", host=host.lower(), owner=segs[-2], name=segs[-1])


def classify_repo_arg(arg: str) -> tuple[str, RemoteURL | Path]:
    """``("url", RemoteURL)`` for an https URL, ``("path", Path)`` for a local path; refuses the rest."""
    if not arg:
        raise SourceError("empty --repo")
    if arg.startswith("-"):
        raise SourceError(f"refusing repository {arg!r}: looks like an option")
    if _has_control(arg):
        raise SourceError(f"refusing repository {arg!r}: control characters")
    if "::" in arg:
        raise SourceError(f"refusing repository {arg!r}: git transport helpers (e.g. ext::) are not allowed")
    if _SCHEME.match(arg) and "://" in arg:
        return "url", parse_https_url(arg)
    if _SCP.match(arg) and not re.match(r"^[A-Za-z]:[\\/]", arg):
        raise SourceError(
            f"refusing repository {arg!r}: scp-style (host:path) and ssh remotes are not accepted; "
            "use an https:// URL, or ./PATH for a local directory"
        )
    return "path", Path(arg).expanduser()


_BAD_REF_CHARS = set(" ~^:?*[\\")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_ref(ref: str) -> str:
    """Refuse option-looking or malformed refs before git sees them."""
    bad = (
        not ref
        or not _utf8(ref)  # undecodable argv bytes arrive as lone surrogates
        or ref.startswith("-")
        or ".." in ref
        or "@{" in ref
        or _has_control(ref)
        or any(c in _BAD_REF_CHARS for c in ref)
        or ref.startswith("/")
        or ref.endswith(("/", ".", ".lock"))
        or "//" in ref
        or ref == "@"
    )
    if bad:
        raise SourceError(f"refusing ref {ref!r}: expected a tag, branch or commit id")
    return ref


# --------------------------------------------------------------------------- hardened git


def _git_env(allow_file: bool) -> dict[str, str]:
    # Drop inherited GIT_* (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_SSH_COMMAND, ...): only ours apply.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_ALLOW_PROTOCOL="https:file" if allow_file else "https",
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,  # an always-empty global config
        GIT_LFS_SKIP_SMUDGE="1",
        GIT_NO_REPLACE_OBJECTS="1",  # read the objects as stored, never refs/replace substitutes
        GIT_OPTIONAL_LOCKS="0",
        GIT_ATTR_NOSYSTEM="1",
        LC_ALL="C",
    )
    return env


_GIT_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "protocol.allow=never",
    "protocol.https.allow=always",
    "credential.helper=",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "log.showSignature=false",
)


def _git_cmd(git_dir: Path | None, allow_file: bool) -> list[str]:
    cmd = ["git"]
    for item in _GIT_CONFIG:
        cmd += ["-c", item]
    if allow_file:
        cmd += ["-c", "protocol.file.allow=always"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    return cmd


class Git:
    """One repository's git, always run with the hardened environment and a timeout."""

    def __init__(self, git_dir: Path | None, *, allow_file: bool = False) -> None:
        self.git_dir = git_dir
        self.allow_file = allow_file
        self.env = _git_env(allow_file)

    def cmd(self, *args: str) -> list[str]:
        return [*_git_cmd(self.git_dir, self.allow_file), *args]

    def run(self, *args: str, timeout: float = GIT_TIMEOUT, check: bool = True, what: str | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(
                self.cmd(*args), env=self.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise SourceError(f"{what or 'git ' + args[0]}: timed out after {timeout:g}s") from None
        except FileNotFoundError:
            raise SourceError("git is not installed (or not on PATH)") from None
        if check and proc.returncode != 0:
            raise SourceError(f"{what or 'git ' + args[0]}: {_first_line(proc.stderr)}")
        return proc

    def out(self, *args: str, **kw: Any) -> str:
        return self.run(*args, **kw).stdout.decode("utf-8", "replace").strip()

    def commit_of(self, ref: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
        sha = proc.stdout.decode("ascii", "replace").strip()
        return sha if proc.returncode == 0 and COMMIT_RE.fullmatch(sha) else None


def _first_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    # git prints "fatal: ..." last; prefer it over hints and warnings.
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    return lines[-1] if lines else "failed"


# --------------------------------------------------------------------------- snapshot


@dataclass(frozen=True)
class FileEntry:
    path: str
    blob: str  # 40-hex git blob id (for a wheel: the git blob hash of the bytes)
    size: int


@dataclass
class Snapshot:
    repo: RepoRef
    commit: str
    commit_date: str
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
    #: ``models.Permalinks`` as data: the revision permalinks name, or why there are none.
    permalinks: dict[str, str] | None = None
    #: What the repository puts before a path of this source (``path_prefix`` for a wheel).
    link_prefix: str = ""
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


def _escape_path(raw: bytes) -> str:
    """Printable, surrogate-free rendering of a raw path: bad bytes and controls as \\xNN."""
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(f"\\x{ord(c):02x}" if (ord(c) < 32 or 0x7F <= ord(c) < 0xA0) else c for c in text)


def _decode_path(raw: bytes) -> tuple[str, str | None]:
    """(display path, skip reason or None)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _escape_path(raw), "path is not valid UTF-8"
    if _has_control(text):
        return _escape_path(raw), "path contains control characters"
    return text, None


def _list_tree(git: Git, commit: str, select: PathFilter, max_blob_bytes: int,
               also: str | None = None, tests: PathFilter | None = None,
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
            skipped.append(Skipped(path=path, reason="test file: " + (bad or "symlink, submodule, other than a regular file "
                                                                       "or over the size limit")))
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


class _Watchdog:
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
            git.cmd("cat-file", "--batch", "--buffer"), env=git.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=1 << 20,
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
        dog = _Watchdog(proc, timeout)
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
                tz = _dt.timezone(sign * _dt.timedelta(hours=int(m.group(3)), minutes=int(m.group(4))))
                return _dt.datetime.fromtimestamp(int(m.group(1)), tz).isoformat()
    raise SourceError(f"commit {commit} has no readable committer date")


def _recorded_commit(data: bytes, pattern: str) -> str | None:
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


def _open_git(git: Git, commit: str, *, repo: RepoRef, ref: str | None, upstream: Upstream,
              include: list[str], exclude: list[str], max_blob_bytes: int) -> Snapshot:
    select = PathFilter(include, exclude)
    tests = PathFilter(upstream.tests, exclude) if upstream.tests else None
    files, skipped, vf, test_files = _list_tree(git, commit, select, max_blob_bytes, upstream.version_file, tests)
    reader = _cat_file_reader(git)
    upstream_commit = recorded = None
    if vf is not None and vf.size <= max_blob_bytes:
        for _, data in reader([vf]):
            upstream_commit, recorded = _upstream_from(_recorded_commit(data, upstream.version_pattern), commit)
    return Snapshot(
        repo=repo, commit=commit, commit_date=_commit_date(git, commit), upstream_commit=upstream_commit,
        ref=ref, source="git", files=files, skipped=skipped, tests=test_files, upstream_recorded=recorded,
        permalinks=permalinks_of(repo, upstream_commit or recorded or commit), _reader=reader,
    )


def permalinks_of(repo: RepoRef, commit: str | None, tag: str | None = None, why_not: str = "") -> dict[str, str]:
    """What permalinks name (``models.Permalinks``): a commit the repository holds, else the
    release's tag, else nothing and why. Permalinks are GitHub's pages: elsewhere there are none."""
    host = urlsplit(repo.url).hostname
    if host != "github.com":
        return {"basis": "none", "reason": f"the repository is not on GitHub ({host}); permalinks are GitHub pages"}
    if commit:
        return {"basis": "commit", "rev": commit}
    if tag:
        return {"basis": "tag", "rev": tag}
    return {"basis": "none", "reason": why_not}


def _local_git_dir(path: Path, shown: str) -> Path:
    if not path.exists():
        raise SourceError(f"{shown}: no such directory")
    if not path.is_dir():
        raise SourceError(f"{shown}: not a directory")
    path = path.resolve()
    probe = Git(None, allow_file=True)
    # Discover the git dir of exactly this directory: never walk up into a parent repository.
    env = dict(probe.env, GIT_CEILING_DIRECTORIES=str(path.parent))
    try:
        proc = subprocess.run(
            [*_git_cmd(None, True), "-C", str(path), "rev-parse", "--absolute-git-dir"],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise SourceError(f"{shown}: git timed out") from None
    except FileNotFoundError:
        raise SourceError("git is not installed (or not on PATH)") from None
    if proc.returncode != 0:
        msg = _first_line(proc.stderr)
        if "not a git repository" in msg:
            raise SourceError(f"{shown}: not a git repository")
        raise SourceError(f"{shown}: {msg}")
    return Path(proc.stdout.decode("utf-8", "surrogateescape").strip())


def _open_local(path: Path, shown: str, ref: str | None, **kw: Any) -> Snapshot:
    git = Git(_local_git_dir(path, shown), allow_file=True)
    want = ref or "HEAD"
    commit = git.commit_of(want)
    if commit is None:
        raise SourceError(f"{shown}: unknown ref or commit {want!r}")
    return _open_git(git, commit, ref=ref, **kw)


# --------------------------------------------------------------------------- remote (cache)


def cache_root(cache_dir: Path | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("ERRCAT_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("errcat"))


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"


def _repo_cache(root: Path, remote: RemoteURL) -> Path:
    digest = hashlib.sha256(remote.url.encode()).hexdigest()[:12]
    return root / "repos" / f"{_safe_name(remote.host)}-{_safe_name(remote.owner)}-{_safe_name(remote.name)}-{digest}.git"


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
            "fetch", "--depth", "1", "--no-tags", "--no-recurse-submodules", "--quiet", "--end-of-options",
            url, f"+{ref}:{tmp}", timeout=FETCH_TIMEOUT, check=False,
        )
        if proc.returncode != 0:
            msg = _first_line(proc.stderr)
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


def _open_remote(remote: RemoteURL, ref: str | None, cache_dir: Path | None, *, _allow_file: bool = False,
                 progress: Progress = quiet, **kw: Any) -> Snapshot:
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
    reader, repaired = snapshot._reader, False
    assert reader is not None

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
            reader = fresh._reader
            assert reader is not None
            yield from reader(entries[done:])

    snapshot._reader = read
    return snapshot


def _set_aside_if_damaged(dest: Path, allow_file: bool, exc: SourceError, progress: Progress) -> None:
    """Move the cache repository aside when ``git fsck`` finds it damaged; otherwise ``exc`` (a
    network failure, an unknown ref) stands and is raised."""
    if (dest / "HEAD").is_file():
        try:
            sound = Git(dest, allow_file=allow_file).run(
                "fsck", "--no-dangling", "--no-progress", timeout=FETCH_TIMEOUT, check=False).returncode == 0
        except SourceError:
            sound = True  # fsck could not tell (timed out): nothing is thrown away on a guess
        if sound:
            raise exc
    try:
        aside = move_aside(dest)
    except OSError as e:
        raise SourceError(f"{exc}; the cached repository {dest} is damaged and cannot be moved aside: {e.strerror or e}") from None
    progress(f"the cached repository {dest.name} is damaged ({exc}): moved aside to {aside.name}, fetching afresh")


def _open_remote_in(dest: Path, remote: RemoteURL, ref: str | None, allow_file: bool, progress: Progress,
                    **kw: Any) -> Snapshot:
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
    return _open_git(git, commit, ref=ref, **kw)


def _rmdir_quietly(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


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
        return _open_remote(target, ref, cache_dir, progress=progress, **kw)
    assert isinstance(target, Path)
    return _open_local(target, repo, ref, **kw)


# --------------------------------------------------------------------------- pypi wheels

_PYPI_SPEC = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([A-Za-z0-9](?:[A-Za-z0-9.+!_-]*[A-Za-z0-9])?)")


def parse_pypi_spec(spec: str) -> tuple[str, str]:
    m = _PYPI_SPEC.fullmatch(spec or "")
    if not m:
        raise SourceError(f"refusing --pypi {spec!r}: expected NAME==VERSION, e.g. vllm==0.33.0")
    return m.group(1), m.group(2)


def release_of(source: str) -> str | None:
    """NAME==VERSION of a crawl of the package index (its ``source``, ``pypi:NAME==VERSION ...``),
    else None."""
    if not source.startswith("pypi:"):
        return None
    spec = source.removeprefix("pypi:").split(" ", 1)[0]
    return spec if _PYPI_SPEC.fullmatch(spec) else None


def canonical_package(name: str) -> str:
    """The package index's one spelling of a name (PEP 503): vLLM, vllm and v_llm are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob, so wheel files key caches like git files do."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


_PIP_PROGRESS = re.compile(rb"Progress (\d+) of (\d+)")


def _pip_has_raw_progress() -> bool:
    """pip 24.1 and newer print ``Progress N of M`` lines with ``--progress-bar raw``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = re.match(r"(\d+)\.(\d+)", version("pip"))
    except PackageNotFoundError:
        return False
    return bool(found) and (int(found.group(1)), int(found.group(2))) >= (24, 1)


def _run_pip(cmd: list[str], env: dict[str, str], what: str, progress: Progress, into: Path) -> tuple[int, bytes]:
    """Run pip download into ``into``, its byte counts shown as progress; (exit code, stderr)."""
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
        watchdog = _Watchdog(proc, PIP_TIMEOUT)  # never poked: the limit is the whole download's
        try:
            with task(progress, what, None, "bytes") as download:
                assert proc.stdout is not None
                for line in proc.stdout:
                    found = _PIP_PROGRESS.match(line)
                    if found:
                        download.update(int(found.group(1)), int(found.group(2)) or None)
                proc.wait()
                if proc.returncode != 0 or watchdog.fired:
                    download.close(finished=False)
                else:  # what arrived, also when pip had it cached and said nothing
                    size = sum(p.stat().st_size for p in into.glob("*.whl"))
                    download.update(size, size)
        finally:
            watchdog.stop()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if watchdog.fired:
            raise SourceError(f"pip download {what.split()[-1]}: timed out after {PIP_TIMEOUT:g}s")
        stderr.seek(0)
        return proc.returncode, stderr.read()


def _download_wheel(name: str, version: str, root: Path, progress: Progress = quiet) -> tuple[Path, bool]:
    """The wheel of NAME==VERSION, from the cache or fetched once with pip (no deps, binary
    only), and whether it came from the cache."""
    dest = root / "pypi" / _safe_name(f"{canonical_package(name)}-{version}")
    cached = sorted(dest.glob("*.whl")) if dest.is_dir() else []
    if cached:
        return cached[0], True
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Downloaded into scratch (same file system, so it can be renamed into place): what a
    # killed download leaves, the next run removes.
    with run_dir(root) as work:
        tmp = work / "wheel"
        tmp.mkdir()
        # Not --quiet: pip prints its progress only at its default verbosity (to stdout, read above).
        shows = ["--progress-bar", "raw"] if _pip_has_raw_progress() else ["--quiet"]
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-input",
               "--disable-pip-version-check", *shows, "-d", str(tmp), f"{name}=={version}"]
        env = dict(os.environ, PIP_NO_INPUT="1")
        returncode, stderr = _run_pip(cmd, env, f"downloading {name}=={version}", progress, tmp)
        if returncode != 0:
            lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
            errs = [ln for ln in lines if ln.startswith("ERROR")] or lines or ["failed"]
            raise SourceError(f"pip download {name}=={version}: {errs[0]}")
        wheels = sorted(tmp.glob("*.whl"))
        if not wheels:
            raise SourceError(f"pip download {name}=={version}: no wheel was downloaded")
        try:
            os.rename(tmp, dest)
        except OSError:
            if not dest.is_dir():
                raise
        return dest / wheels[0].name, False


class WheelError(SourceError):
    """A wheel that cannot be read: not a zip archive, a bad CRC, a truncated or corrupt entry."""

    def __init__(self, wheel: Path, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{wheel}: not a readable wheel: {reason}")


#: What reading a damaged or odd archive raises: BadZipFile (bad CRC, bad headers), zlib.error
#: and EOFError (a corrupt or truncated entry), NotImplementedError (an unknown compression),
#: RuntimeError (an encrypted entry), ValueError and OSError (a damaged file).
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError)


def _zread(zf: zipfile.ZipFile, info: zipfile.ZipInfo, wheel: Path) -> bytes:
    try:
        return zf.read(info)
    except _ZIP_ERRORS as e:
        reason = str(e) if info.filename in str(e) else f"{info.filename!r}: {e}"
        raise WheelError(wheel, reason) from None


def _zip_date(info: zipfile.ZipInfo) -> str:
    return _dt.datetime(*info.date_time, tzinfo=_dt.timezone.utc).isoformat()


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except _ZIP_ERRORS as e:
        raise WheelError(path, str(e)) from None


def open_wheel(path: Path, *, source: str, repo: RepoRef, upstream: Upstream, include: list[str],
               exclude: list[str], max_blob_bytes: int = 2_000_000, version: str | None = None) -> Snapshot:
    """A snapshot of a wheel's files: paths as in the archive, blob ids as git would give them.

    Globs and the version file are the repository's paths: a file is selected as
    ``upstream.path_prefix`` + its path in the wheel (``src/`` + ``pkg/a.py``)."""
    zf = _open_zip(path)
    prefix = upstream.path_prefix
    try:
        filter_ = PathFilter(include, exclude)

        def select(name: str) -> bool:
            return filter_(prefix + name)

        infos: dict[str, zipfile.ZipInfo] = {}
        files: list[FileEntry] = []
        skipped: list[Skipped] = []
        seen: set[str] = set()
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename
            shown = _escape_path(name.encode("utf-8", "surrogateescape"))
            if not select(shown):
                continue
            mode = info.external_attr >> 16
            segs = name.split("/")
            if _has_control(name) or shown != name:
                skipped.append(Skipped(path=shown, reason="path contains control characters or undecodable bytes"))
            elif name.startswith("/") or "\\" in name or any(s in ("", ".", "..") for s in segs):
                skipped.append(Skipped(path=shown, reason="unsafe path in archive"))
            elif name in seen:
                skipped.append(Skipped(path=name, reason="duplicate archive entry"))
            elif (mode & 0o170000) == 0o120000:
                skipped.append(Skipped(path=name, reason="symlink"))
            elif mode and (mode & 0o170000) not in (0, 0o100000):
                skipped.append(Skipped(path=name, reason=f"not a regular file (mode {mode:o})"))
            elif info.file_size > max_blob_bytes:
                skipped.append(Skipped(path=name, reason=f"over size limit ({info.file_size} > {max_blob_bytes} bytes)"))
            else:
                data = _zread(zf, info, path)
                infos[name] = info
                files.append(FileEntry(name, git_blob_id(data), len(data)))
            seen.add(name)
        files.sort(key=lambda e: e.path)
        skipped.sort(key=lambda s: s.path)

        recorded = None
        vinfo = None
        if upstream.version_file:
            try:
                vinfo = zf.getinfo(upstream.version_file.removeprefix(prefix))
            except KeyError:
                vinfo = None
            if vinfo is not None and vinfo.file_size <= max_blob_bytes:
                recorded = _recorded_commit(_zread(zf, vinfo, path), upstream.version_pattern)
        tag = upstream.tag_of(version) if version is not None else None
        if recorded is not None and COMMIT_RE.fullmatch(recorded):
            commit, upstream_commit, short = recorded, recorded, None
        else:
            listing = "".join(f"{e.path}\0{e.blob}\n" for e in files).encode("utf-8")
            commit, upstream_commit, short = hashlib.sha1(listing).hexdigest(), None, recorded
            if recorded:
                source += f" (the release records upstream commit {recorded} abbreviated; commit is a content hash of the files)"
            else:
                source += " (no upstream commit recorded: commit is a content hash of the files)"
        permalinks = permalinks_of(
            repo, upstream_commit or short, tag,
            "the release records no upstream commit and no tag pattern is configured for its repository "
            "(errcat.toml: tag = \"v{version}\"), so no revision of the repository is known to hold these files")
        dated = vinfo or max((infos[e.path] for e in files), key=lambda i: i.date_time, default=None)
        commit_date = _zip_date(dated) if dated is not None else "1980-01-01T00:00:00+00:00"
    except BaseException:
        zf.close()
        raise

    def read(entries: list[FileEntry]) -> Iterator[tuple[FileEntry, bytes]]:
        for e in entries:
            info = infos.get(e.path)
            if info is None:
                raise SourceError(f"{e.path}: not in {path.name}")
            data = _zread(zf, info, path)
            if git_blob_id(data) != e.blob:
                raise SourceError(f"{e.path}: contents changed in {path.name}")
            yield e, data

    return Snapshot(repo=repo, commit=commit, commit_date=commit_date, upstream_commit=upstream_commit, ref=None,
                    source=source, files=files, skipped=skipped, upstream_recorded=short, permalinks=permalinks,
                    link_prefix=prefix, _reader=read, _closers=[zf.close])


T = TypeVar("T")


def _with_wheel(spec: str, cache_dir: Path | None, progress: Progress, use: Callable[[Path, str], T]) -> T:
    """``use(wheel, version)`` on NAME==VERSION's wheel. A cached wheel that cannot be read
    (truncated by a full disk, a bad CRC) is moved aside and downloaded again, once; a freshly
    downloaded one that cannot be read is an error, and is moved aside too, so no later run takes
    it from the cache."""
    name, version = parse_pypi_spec(spec)
    root = cache_root(cache_dir)
    for retry in (False, True):
        wheel, cached = _download_wheel(name, version, root, progress)
        try:
            return use(wheel, version)
        except WheelError as exc:
            try:
                aside = move_aside(wheel.parent)
            except OSError as e:
                raise SourceError(f"{exc}; it cannot be moved aside: {e.strerror or e}") from None
            if retry or not cached:
                raise SourceError(f"the wheel of {name}=={version} from the package index is damaged: {exc.reason} "
                                  f"(set aside as {aside})") from None
            progress(f"the cached wheel {wheel.name} is damaged ({exc.reason}): moved aside to {aside.name}, downloading it again")
    raise AssertionError("unreachable")  # pragma: no cover


def open_pypi(spec: str, *, cache_dir: Path | None = None, progress: Progress = quiet, **kw: Any) -> Snapshot:
    """A snapshot of NAME==VERSION's wheel (see ``_with_wheel`` for a damaged one)."""
    name, _ = parse_pypi_spec(spec)
    return _with_wheel(spec, cache_dir, progress,
                       lambda wheel, version: open_wheel(wheel, source=f"pypi:{name}=={version}", version=version, **kw))


@dataclass(frozen=True)
class PackageInfo:
    """What a wheel says of itself: for a package that is no configured upstream, where its
    identity (the project URLs) and its globs (one per top-level package or module) come from."""

    urls: list[tuple[str, str]]  # (label, url): Home-page and every Project-URL
    packages: list[str]  # include globs: "pkg/**/*.py" per package, "/mod.py" per module


METADATA_MAX_BYTES = 1 << 20


def wheel_info(path: Path) -> PackageInfo:
    """Read a wheel's ``*.dist-info/METADATA`` and list its top-level packages."""
    from email.parser import HeaderParser

    with _open_zip(path) as zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        metas = [i for i in infos if re.fullmatch(r"[^/]+\.dist-info/METADATA", i.filename)]
        if len(metas) != 1:
            raise SourceError(f"{path.name}: expected one *.dist-info/METADATA, found {len(metas)}")
        with zf.open(metas[0]) as fh:
            raw = fh.read(METADATA_MAX_BYTES + 1)
    if len(raw) > METADATA_MAX_BYTES:
        raise SourceError(f"{path.name}: METADATA is over {METADATA_MAX_BYTES} bytes")
    headers = HeaderParser().parsestr(raw.decode("utf-8", "replace"))
    urls = [("Home-page", str(v)) for v in headers.get_all("Home-page") or []]
    for value in headers.get_all("Project-URL") or []:
        label, _, url = str(value).partition(",")
        urls.append((label.strip(), url.strip()))
    packages: set[str] = set()
    for info in infos:
        top, sep, _ = info.filename.partition("/")
        # importable names only: a glob never gets a metacharacter from the archive
        if info.filename.endswith(".py") and (top if sep else top[:-3]).isidentifier():
            packages.add(f"{top}/**/*.py" if sep else f"/{top}")
    return PackageInfo(urls=urls, packages=sorted(packages))


def package_info(spec: str, cache_dir: Path | None = None, progress: Progress = quiet) -> PackageInfo:
    """The metadata of NAME==VERSION's wheel (downloaded once, as ``--pypi`` does)."""
    return _with_wheel(spec, cache_dir, progress, lambda wheel, _: wheel_info(wheel))
