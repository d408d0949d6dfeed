"""A released wheel as a snapshot: fetched from PyPI into the cache, its files as blobs."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from crawler.base.cachedir import move_aside
from crawler.base.errors import SourceError
from crawler.base.progress import Progress, quiet, task
from crawler.base.scratch import run_dir
from crawler.model.records import COMMIT_RE, Release, RepoRef, Skipped
from crawler.source.globs import PathFilter
from crawler.source.policy import has_control
from crawler.source.remote import cache_root, safe_name
from crawler.source.snapshot import (
    FileEntry,
    Snapshot,
    UpstreamLayout,
    Watchdog,
    escape_path,
    permalinks_of,
    recorded_commit,
)

PIP_TIMEOUT = 1800.0  # a vLLM wheel is several hundred MB


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
    return found is not None and (int(found.group(1)), int(found.group(2))) >= (24, 1)


def _run_pip(cmd: list[str], env: dict[str, str], what: str, progress: Progress, into: Path) -> tuple[int, bytes]:
    """Run pip download into ``into``, its byte counts shown as progress; (exit code, stderr)."""
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
        watchdog = Watchdog(proc, PIP_TIMEOUT)  # never poked: the limit is the whole download's
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
            if proc.stdout is not None:
                proc.stdout.close()  # its descriptor, not the collector's to close some time later
        if watchdog.fired:
            raise SourceError(f"pip download {what.split()[-1]}: timed out after {PIP_TIMEOUT:g}s")
        stderr.seek(0)
        return proc.returncode, stderr.read()


def _download_wheel(name: str, version: str, root: Path, progress: Progress = quiet) -> tuple[Path, bool]:
    """The wheel of NAME==VERSION, from the cache or fetched once with pip (no deps, binary
    only), and whether it came from the cache."""
    dest = root / "pypi" / safe_name(f"{canonical_package(name)}-{version}")
    cached = sorted([*dest.glob("*.whl"), *dest.glob("*.tar.gz")]) if dest.is_dir() else []
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
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--no-input",
            "--disable-pip-version-check",
            *shows,
            "-d",
            str(tmp),
            f"{name}=={version}",
        ]
        env = dict(os.environ, PIP_NO_INPUT="1")
        returncode, stderr = _run_pip(cmd, env, f"downloading {name}=={version}", progress, tmp)
        if returncode != 0:
            failure = _pip_failure(name, version, stderr.decode("utf-8", "replace"))
            if not _sdist_instead(name, version, tmp, progress):
                raise SourceError(failure)
        wheels = sorted([*tmp.glob("*.whl"), *tmp.glob("*.tar.gz")])
        if not wheels:
            raise SourceError(f"pip download {name}=={version}: no wheel was downloaded")
        try:
            os.rename(tmp, dest)
        except OSError:
            if not dest.is_dir():
                raise
        return dest / wheels[0].name, False


def _sdist_instead(name: str, version: str, into: Path, progress: Progress) -> bool:
    """When pip finds no wheel for this Python: a wheel of the release for another one (its Python
    files are the same), else, when the release has none (vLLM's before 0.1.4), its source
    distribution (pip would build it, running its setup.py); fetched from the index directly and
    checked against the SHA-256 it lists, into ``into``. False when the index lists neither."""
    from crawler.source.index import MAX_WHEEL_BYTES, download_sdist, other_wheel_of, project_page, sdist_of

    package = canonical_package(name)
    try:
        page = project_page(package)
    except SourceError:
        return False
    wheel = other_wheel_of(page, package, version)
    if wheel is not None and _WHEEL_NAME.fullmatch(wheel[0]):
        progress(f"{name}=={version}: no wheel for this Python; reading {wheel[0]} (its Python files are the same)")
        download_sdist(package, wheel[1], wheel[2], into / wheel[0], MAX_WHEEL_BYTES)
        return True
    found = sdist_of(page, package, version)
    if found is None:
        return False
    file, url, digest = found
    if not _SDIST_NAME.fullmatch(file):
        return False
    progress(f"{name}=={version} has no wheel on the index: reading its source distribution {file}")
    download_sdist(package, url, digest, into / file)
    return True


_NO_VERSION = re.compile(r"Could not find a version that satisfies the requirement .*?\(from versions: (.*)\)\s*$")


def _pip_failure(name: str, version: str, stderr: str) -> str:
    """The one line a failed ``pip download`` comes to: "no such release" when the index has no
    such version (with the newest it has), else pip's first error that is not a note about
    yanked versions. pip's text is the index's: only its version list is taken, as words."""
    from crawler.base.sink import visible

    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for line in lines:
        m = _NO_VERSION.search(line)
        if m is None:
            continue
        versions = [v.strip() for v in m.group(1).split(",") if re.fullmatch(r"[\w.!+-]{1,40}", v.strip())]
        if not versions or m.group(1).strip() == "none":
            return (
                f"no such package on the package index: {name} (or no wheel of it: errcat reads released wheels); "
                "check the name, e.g. with `pip index versions NAME`"
            )
        return (
            f"no such release: {name}=={version} is not on the package index (the newest is {visible(versions[-1])}); "
            f"see them all with `pip index versions {name}`"
        )
    errs = [ln for ln in lines if ln.startswith("ERROR") and "Ignored the following yanked versions" not in ln] or lines or ["failed"]
    return f"pip download {name}=={version}: {visible(errs[0])}"


class WheelError(SourceError):
    """A wheel that cannot be read: not a zip archive, a bad CRC, a truncated or corrupt entry."""

    def __init__(self, wheel: Path, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{wheel}: not a readable wheel: {reason}")


#: What reading a damaged or odd archive raises: BadZipFile (bad CRC, bad headers), zlib.error
#: and EOFError (a corrupt or truncated entry), NotImplementedError (an unknown compression),
#: RuntimeError (an encrypted entry), ValueError and OSError (a damaged file).
_ZIP_ERRORS = (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError)


def _zread(zf: Any, info: Any, wheel: Path) -> bytes:
    try:
        return zf.read(info)
    except _ZIP_ERRORS as e:
        reason = str(e) if info.filename in str(e) else f"{info.filename!r}: {e}"
        raise WheelError(wheel, reason) from None


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except _ZIP_ERRORS as e:
        raise WheelError(path, str(e)) from None


_SDIST_NAME = re.compile(r"[A-Za-z0-9._+!-]{1,248}\.tar\.gz")
#: Members listed of an sdist, and bytes of it read while listing them (a gzip bomb is refused).
MAX_SDIST_MEMBERS, MAX_SDIST_LISTED = 100_000, 4 << 30


@dataclass
class _Member:
    """A regular file or directory of an sdist, shaped as ``zipfile.ZipInfo`` is where it is read."""

    filename: str
    external_attr: int
    file_size: int
    member: tarfile.TarInfo

    def is_dir(self) -> bool:
        return self.member.isdir()


class _Sdist:
    """A source distribution (``NAME-VERSION.tar.gz``) read as a wheel is: its files by path under
    its one top directory (``vllm-0.1.0/vllm/config.py`` is ``vllm/config.py``), never extracted.
    What is no regular file (a link, a device) or lies outside that directory is skipped, with why."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped: list[Skipped] = []
        self._infos: list[_Member] = []
        try:
            self._tar = tarfile.open(path, "r:gz")
        except _ZIP_ERRORS as e:
            raise WheelError(path, str(e)) from None
        try:
            self._list()
        except BaseException:
            self._tar.close()
            raise

    def _list(self) -> None:
        members: list[tarfile.TarInfo] = []
        try:
            for member in self._tar:
                members.append(member)
                if len(members) > MAX_SDIST_MEMBERS or member.offset_data > MAX_SDIST_LISTED:
                    raise WheelError(self.path, f"over {MAX_SDIST_MEMBERS} entries or {MAX_SDIST_LISTED} bytes")
        except _ZIP_ERRORS as e:
            raise WheelError(self.path, str(e)) from None
        top = self.path.name.removesuffix(".tar.gz") + "/"  # an sdist is named for its directory
        for m in members:
            name = m.name.removeprefix(top)
            if m.name.rstrip("/") == top.rstrip("/"):
                continue
            if not m.name.startswith(top):
                self.skipped.append(
                    Skipped(path=escape_path(m.name.encode("utf-8", "surrogateescape")), reason="outside the source distribution's top directory")
                )
            elif m.isdir():
                self._infos.append(_Member(name.rstrip("/") + "/", 0o040000 << 16, 0, m))
            elif m.issym() or m.islnk():
                self.skipped.append(Skipped(path=escape_path(name.encode("utf-8", "surrogateescape")), reason="symlink" if m.issym() else "hard link"))
            elif not m.isreg():
                self.skipped.append(Skipped(path=escape_path(name.encode("utf-8", "surrogateescape")), reason="not a regular file"))
            else:
                self._infos.append(_Member(name, (0o100000 | (m.mode & 0o777)) << 16, m.size, m))

    def infolist(self) -> list[_Member]:
        return list(self._infos)

    def getinfo(self, name: str) -> _Member:
        for info in self._infos:
            if info.filename == name:
                return info
        raise KeyError(name)

    def read(self, info: _Member) -> bytes:
        f = self._tar.extractfile(info.member)
        if f is None:
            raise tarfile.TarError(f"{info.filename!r} cannot be read")
        with f:
            data = f.read(info.file_size + 1)
        if len(data) != info.file_size:
            raise EOFError(f"{info.filename!r} is cut short")
        return data

    def close(self) -> None:
        self._tar.close()


def _open_archive(path: Path) -> Any:
    """A wheel as a zip archive, an sdist as ``_Sdist``."""
    return _Sdist(path) if path.name.endswith(".tar.gz") else _open_zip(path)


_WHEEL_NAME = re.compile(r"[A-Za-z0-9._+!-]{1,251}\.whl")


def open_wheel(
    path: Path,
    *,
    source: str,
    repo: RepoRef,
    upstream: UpstreamLayout,
    include: list[str],
    exclude: list[str],
    max_blob_bytes: int = 2_000_000,
    version: str | None = None,
    package: str | None = None,
    uploaded: str | None = None,
    progress: Progress = quiet,
) -> Snapshot:
    """A snapshot of a wheel's files: paths as in the archive, blob ids as git would give them.

    Globs and the version file are the repository's paths: a file is selected as
    ``upstream.path_prefix`` + its path in the wheel (``src/`` + ``pkg/a.py``).

    With ``package`` and ``version``, the snapshot names its release (``Snapshot.release``, with
    ``uploaded``, the index's upload time): its commit is the upstream commit the release records
    when it records a full one, else a digest of its files that the release says is no commit;
    it has no commit date (a wheel dates none)."""
    zf = _open_archive(path)
    sdist = isinstance(zf, _Sdist)
    prefix = upstream.path_prefix
    try:
        filter_ = PathFilter(include, exclude)

        def select(name: str) -> bool:
            return filter_(prefix + name)

        infos: dict[str, Any] = {}
        files: list[FileEntry] = []
        skipped: list[Skipped] = [k for k in zf.skipped if select(k.path)] if sdist else []
        seen: set[str] = set()
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename
            shown = escape_path(name.encode("utf-8", "surrogateescape"))
            if not select(shown):
                continue
            mode = info.external_attr >> 16
            segs = name.split("/")
            if has_control(name) or shown != name:
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
                recorded = recorded_commit(_zread(zf, vinfo, path), upstream.version_pattern)
        tag = upstream.tag_of(version) if version is not None else None
        if recorded is not None and COMMIT_RE.fullmatch(recorded):
            commit, upstream_commit, short = recorded, recorded, None
        else:
            # No commit of the repository is known: the dataset is keyed by what it holds, and
            # its release says so (``Release.commit``), so nothing shows this as a commit.
            listing = "".join(f"{e.path}\0{e.blob}\n" for e in files).encode("utf-8")
            commit, upstream_commit, short = hashlib.sha1(listing).hexdigest(), None, recorded
        release = None
        # A release names the one file it was read from: its wheel, or the sdist of a release that has none.
        if package is not None and version is not None:
            if not (_SDIST_NAME if sdist else _WHEEL_NAME).fullmatch(path.name):
                raise SourceError(
                    f"the {'sdist' if sdist else 'wheel'}'s file name {escape_path(path.name.encode('utf-8', 'surrogateescape'))!r} "
                    "is not one a package index gives"
                )
            release = Release(
                package=canonical_package(package),
                version=version,
                uploaded=uploaded,
                **({"sdist": path.name} if sdist else {"wheel": path.name}),
                commit="recorded" if upstream_commit else "files",
            )
        permalinks = permalinks_of(
            repo,
            upstream_commit or short,
            tag,
            f"this release of the package ({version}) names no commit or tag of {repo.owner}/{repo.name}, so these "
            "lines are not linked to the repository: the code shown is the released package's own",
        )
        if permalinks["basis"] == "none" and tag is None and version is not None:
            progress(
                f"note: the pages will have no links to {repo.url}: the release names no commit or tag of it. If its "
                f'release tags are like v{version}, say so in errcat.toml (tag = "v{{version}}" under the upstream, '
                f'with url = "{repo.url}" and pypi = "..."), or crawl the repository\'s tag instead '
                "(errcat crawl --repo URL --ref TAG)"
            )
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

    return Snapshot(
        repo=repo,
        commit=commit,
        commit_date=None,
        upstream_commit=upstream_commit,
        ref=None,
        source=source,
        files=files,
        skipped=skipped,
        upstream_recorded=short,
        permalinks=permalinks,
        link_prefix=prefix,
        release=release,
        _reader=read,
        _closers=[zf.close],
    )


T = TypeVar("T")

#: Beside a cached wheel: the index's upload time of it, or "none" when the index reported none.
UPLOAD_TIME = "upload-time"


def _upload_time(package: str, wheel: Path, progress: Progress) -> str | None:
    """When the package index says ``wheel`` was uploaded, asked once and kept beside it in the
    cache; None when there is no index to ask (find-links only) or it reports none. An index
    that cannot be asked now is said in one line and the time left unknown (and asked again)."""
    from crawler.source.index import project_page, upload_time, utc_time

    kept = wheel.parent / UPLOAD_TIME
    try:
        text = kept.read_bytes()[:64].decode("ascii", "replace").strip()
    except OSError:
        text = ""
    if text == "none":
        return None
    if text and utc_time(text) == text:
        return text
    try:
        page = project_page(canonical_package(package))
    except SourceError as e:
        progress(f"the upload time of {wheel.name} is not known: {e}")
        return None
    if page is None:
        return None
    when = upload_time(page, wheel.name)
    from crawler.base.errors import OutputError
    from crawler.base.files import write_file

    try:
        write_file(kept, (when or "none").encode("ascii") + b"\n")
    except (OSError, OutputError):
        pass  # asked again next time
    return when


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
                raise SourceError(f"the wheel of {name}=={version} from the package index is damaged: {exc.reason} (set aside as {aside})") from None
            progress(f"the cached wheel {wheel.name} is damaged ({exc.reason}): moved aside to {aside.name}, downloading it again")
    raise AssertionError("unreachable")  # pragma: no cover


def open_pypi(spec: str, *, cache_dir: Path | None = None, progress: Progress = quiet, **kw: Any) -> Snapshot:
    """A snapshot of NAME==VERSION's wheel (see ``_with_wheel`` for a damaged one)."""
    name, _ = parse_pypi_spec(spec)

    def use(wheel: Path, version: str) -> Snapshot:
        # no wheel: the source distribution, said in the source; its upload time is the index's as a wheel's is
        source = f"pypi:{name}=={version} (sdist {wheel.name})" if wheel.name.endswith(".tar.gz") else f"pypi:{name}=={version}"
        return open_wheel(wheel, source=source, version=version, package=name, uploaded=_upload_time(name, wheel, progress), progress=progress, **kw)

    return _with_wheel(spec, cache_dir, progress, use)


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

    archive = _open_archive(path)
    try:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        # a wheel's METADATA, an sdist's PKG-INFO (the same headers) at its top
        pattern = r"PKG-INFO" if isinstance(archive, _Sdist) else r"[^/]+\.dist-info/METADATA"
        metas = [i for i in infos if re.fullmatch(pattern, i.filename)]
        if len(metas) != 1:
            raise SourceError(f"{path.name}: expected one {'PKG-INFO' if isinstance(archive, _Sdist) else '*.dist-info/METADATA'}, found {len(metas)}")
        if metas[0].file_size > METADATA_MAX_BYTES:
            raise SourceError(f"{path.name}: METADATA is over {METADATA_MAX_BYTES} bytes")
        raw = _zread(archive, metas[0], path)
    finally:
        archive.close()
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
        if info.filename.endswith(".py") and (top if sep else top[:-3]).isidentifier() and info.filename != "setup.py":
            packages.add(f"{top}/**/*.py" if sep else f"/{top}")
    return PackageInfo(urls=urls, packages=sorted(packages))


def package_info(spec: str, cache_dir: Path | None = None, progress: Progress = quiet) -> PackageInfo:
    """The metadata of NAME==VERSION's wheel (downloaded once, as ``--pypi`` does)."""
    return _with_wheel(spec, cache_dir, progress, lambda wheel, _: wheel_info(wheel))
