"""What the package index says of a release: its versions and when each wheel was uploaded.

pip downloads the wheel; this module asks the same index its JSON simple API (PEP 691, with
PEP 700's ``upload-time`` and ``versions``), so that a dataset made from a wheel can name when
the release was published instead of a date it would have to invent. The index is pip's own
(``PIP_INDEX_URL``, else pip's configuration, else PyPI). Its answer is untrusted: it is read
within a size limit, and only a file name that equals the wheel's and a time that parses are
taken from it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

from crawler.base.errors import SourceError

PYPI_SIMPLE = "https://pypi.org/simple/"
INDEX_TIMEOUT = 60.0
#: vLLM's page lists about 300 files (3 kB each at most); a page past this is no index's.
MAX_PAGE_BYTES = 64 << 20
_JSON = "application/vnd.pypi.simple.v1+json"


def index_url() -> str | None:
    """The index pip downloads from: ``PIP_INDEX_URL``, pip's configured ``index-url``, else PyPI;
    None when pip is told to use no index (``PIP_NO_INDEX``: find-links only)."""
    if os.environ.get("PIP_NO_INDEX", "").strip().lower() in ("1", "true", "yes", "on"):
        return None
    url = os.environ.get("PIP_INDEX_URL", "").strip()
    if url:
        return url.split()[0]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env=dict(os.environ, PIP_NO_INPUT="1"),
        )
    except (OSError, subprocess.TimeoutExpired):
        return PYPI_SIMPLE
    found = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.endswith(".index-url"):
            found[key.split(".", 1)[0]] = value.strip().strip("'\"")
    for scope in ("download", "global"):
        if found.get(scope):
            return found[scope].split()[0]
    return PYPI_SIMPLE


def project_page(package: str, url: str | None = None) -> dict[str, object] | None:
    """The index's JSON page of ``package`` (canonical name), or None when there is no index to
    ask, it is not one spoken over http(s), or it has no JSON page. A page that is not JSON, or
    over the size limit, is a SourceError."""
    base = index_url() if url is None else url
    if base is None or urlsplit(base).scheme not in ("http", "https"):
        return None
    page = urljoin(base.rstrip("/") + "/", f"{package}/")
    request = urllib.request.Request(page, headers={"Accept": _JSON, "User-Agent": "errcat"})
    try:
        with urllib.request.urlopen(request, timeout=INDEX_TIMEOUT) as response:  # http(s) only, checked above
            kind = response.headers.get("Content-Type", "")
            raw = response.read(MAX_PAGE_BYTES + 1)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise SourceError(f"the package index answered {e.code} for {package}'s page") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", None) or e
        raise SourceError(f"the package index could not be asked about {package}: {reason}") from None
    if len(raw) > MAX_PAGE_BYTES:
        raise SourceError(f"the package index's page of {package} is over {MAX_PAGE_BYTES} bytes")
    if _JSON not in kind and "json" not in kind:
        return None  # an index of HTML pages only (PEP 503): it reports no upload times
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # (nested past the decoder: a hostile index)
        raise SourceError(f"the package index's page of {package} is not JSON") from None
    return data if isinstance(data, dict) else None


#: An sdist errcat reads (vLLM's before 0.1.4 are about 100 kB): a bigger download is refused.
MAX_SDIST_BYTES = 256 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _hashed_files(page: dict[str, object] | None) -> Iterator[tuple[str, str, str]]:
    """(file name, URL, sha256) of each file ``page`` lists that is not yanked and has a SHA-256."""
    files = page.get("files") if page else None
    for item in files if isinstance(files, list) else []:
        if not isinstance(item, dict) or item.get("yanked"):
            continue
        name, url, hashes = item.get("filename"), item.get("url"), item.get("hashes")
        if not (isinstance(name, str) and isinstance(url, str) and isinstance(hashes, dict)) or len(name) > 255:
            continue
        digest = hashes.get("sha256")
        if isinstance(digest, str) and _SHA256.fullmatch(digest):
            yield name, url, digest


def sdist_of(page: dict[str, object] | None, package: str, version: str) -> tuple[str, str, str] | None:
    """(file name, URL, sha256) of the source distribution of ``package==version`` that ``page``
    (``project_page``) lists: a ``NAME-VERSION.tar.gz`` (the name spelled as PEP 625 does or as
    older sdists did), not yanked, with its SHA-256; None when it lists none."""
    from packaging.version import InvalidVersion, Version

    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    spellings = {package, package.replace("-", "_"), package.replace("_", "-")}
    for name, url, digest in _hashed_files(page):
        if not name.endswith(".tar.gz"):
            continue
        stem, sep, spelled = name[: -len(".tar.gz")].rpartition("-")
        if not sep or stem.lower() not in spellings:
            continue
        try:
            if Version(spelled) != wanted:
                continue
        except InvalidVersion:
            continue
        return name, url, digest
    return None


#: A wheel errcat fetches itself (vLLM's are up to about 500 MB).
MAX_WHEEL_BYTES = 2 << 30


def other_wheel_of(page: dict[str, object] | None, package: str, version: str) -> tuple[str, str, str] | None:
    """(file name, URL, sha256) of a wheel of ``package==version`` that ``page`` lists, for any
    interpreter (vLLM 0.1.4 to 0.3.3 have cp38 to cp311 wheels only; their Python files are the
    same in each): the one whose name sorts last, not yanked, with its SHA-256; None when none."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    found = []
    for name, url, digest in _hashed_files(page):
        if not name.endswith(".whl"):
            continue
        try:
            parsed = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if parsed[0] == canonicalize_name(package) and parsed[1] == wanted:
            found.append((name, url, digest))
    return max(found) if found else None


def download_sdist(package: str, url: str, digest: str, dest: os.PathLike[str], limit: int = MAX_SDIST_BYTES) -> None:
    """Fetch ``url`` (relative to ``package``'s page on the index) into ``dest``, refused unless
    it is http(s), at most ``limit`` bytes and has the SHA-256 the index gave."""
    import hashlib

    base = index_url()
    if base is None:
        raise SourceError(f"no package index to download {package}'s source distribution from")
    full = urljoin(urljoin(base.rstrip("/") + "/", f"{package}/"), url)
    if urlsplit(full).scheme not in ("http", "https"):
        raise SourceError(f"refusing the source distribution of {package} at a URL that is not http(s)")
    h = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(urllib.request.Request(full, headers={"User-Agent": "errcat"}), timeout=INDEX_TIMEOUT) as response, open(dest, "wb") as out:
            while chunk := response.read(1 << 20):
                size += len(chunk)
                if size > limit:
                    raise SourceError(f"the file of {package} at the index is over {limit} bytes")
                h.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as e:
        raise SourceError(f"the package index answered {e.code} for {package}'s source distribution") from None
    except (urllib.error.URLError, ValueError) as e:
        raise SourceError(f"the source distribution of {package} could not be downloaded: {getattr(e, 'reason', None) or e}") from None
    except OSError as e:
        raise SourceError(f"the source distribution of {package} could not be written: {e.strerror or e}") from None
    if h.hexdigest() != digest:
        raise SourceError(f"the source distribution of {package} does not have the SHA-256 the index gave")


def utc_time(value: object) -> str | None:
    """An ISO 8601 time with an offset, as errcat writes it (UTC, microseconds at most), else None."""
    if not isinstance(value, str) or len(value) > 40 or not re.fullmatch(r"[0-9T:.+\-Z]+", value):
        return None
    try:
        when = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    try:
        return when.astimezone(_dt.UTC).isoformat()
    except OverflowError:  # no time in UTC: year 1 east of Greenwich, 9999 west of it
        return None


def upload_time(page: dict[str, object] | None, wheel: str) -> str | None:
    """When the file named ``wheel`` was uploaded, as ``page`` (``project_page``) says; None when
    the page names no such file or no time for it."""
    files = page.get("files") if page else None
    if not isinstance(files, list):
        return None
    for item in files:
        if isinstance(item, dict) and item.get("filename") == wheel:
            return utc_time(item.get("upload-time"))
    return None


def versions(page: dict[str, object] | None) -> list[str]:
    """The release versions ``page`` lists (PEP 700 ``versions``; else read off its wheels' names),
    each a PEP 440 version, not yanked away: as the index spells them, unsorted."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    if not page:
        return []
    listed = page.get("versions")
    found: set[str] = set()
    if isinstance(listed, list):
        for v in listed:
            if isinstance(v, str) and len(v) <= 64:
                try:
                    Version(v)
                except InvalidVersion:
                    continue
                found.add(v)
        return sorted(found)
    files = page.get("files")
    for item in files if isinstance(files, list) else []:
        name = item.get("filename") if isinstance(item, dict) else None
        if isinstance(name, str) and name.endswith(".whl") and len(name) <= 255:
            try:
                found.add(str(parse_wheel_filename(name)[1]))
            except (InvalidWheelFilename, InvalidVersion):
                continue
    return sorted(found)
