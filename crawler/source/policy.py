"""What a crawl accepts as a repository URL, a local path and a ref."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from crawler.base.errors import SourceError

# --------------------------------------------------------------------------- argument checks

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SCP = re.compile(r"^[^/]*:")  # git reads "host:path" (no slash before the colon) as ssh
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$")
_SEGMENT = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def has_control(s: str) -> bool:
    return _CONTROL.search(s) is not None


@dataclass(frozen=True)
class RemoteURL:
    url: str  # normalised: https://host[:port]/owner/name (no .git, no trailing slash)
    host: str
    owner: str
    name: str


def is_host(name: str) -> bool:
    """Whether ``name`` is a DNS host name, nothing more (no scheme, user, port or path)."""
    return isinstance(name, str) and len(name) <= 253 and _HOST.fullmatch(name) is not None


def parse_https_url(url: str) -> RemoteURL:
    """Validate an https repository URL and split it into host/owner/name; SourceError otherwise."""
    if not url or url.startswith("-"):
        raise SourceError(f"refusing repository {url!r}: looks like an option")
    if has_control(url) or any(c.isspace() for c in url):
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
    if has_control(arg):
        raise SourceError(f"refusing repository {arg!r}: control characters")
    if "::" in arg:
        raise SourceError(f"refusing repository {arg!r}: git transport helpers (e.g. ext::) are not allowed")
    if _SCHEME.match(arg) and "://" in arg:
        return "url", parse_https_url(arg)
    if _SCP.match(arg) and not re.match(r"^[A-Za-z]:[\\/]", arg):
        raise SourceError(
            f"refusing repository {arg!r}: scp-style (host:path) and ssh remotes are not accepted; use an https:// URL, or ./PATH for a local directory"
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
        or ref.startswith(("-", "/"))
        or ".." in ref
        or "@{" in ref
        or has_control(ref)
        or any(c in _BAD_REF_CHARS for c in ref)
        or ref.endswith(("/", ".", ".lock"))
        or "//" in ref
        or ref == "@"
    )
    if bad:
        raise SourceError(f"refusing ref {ref!r}: expected a tag, branch or commit id")
    return ref
