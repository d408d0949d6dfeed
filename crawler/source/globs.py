"""Which paths a crawl reads: the include/exclude globs, the native trees and the test files."""

from __future__ import annotations

import re
from collections.abc import Iterable

from crawler.base.errors import UsageError

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
    try:
        return re.compile("".join(parts), re.DOTALL)
    except re.error as e:  # a bracket range the regex engine refuses: "[z-a]"
        raise UsageError(f"bad glob {pattern!r}: {e.msg}") from None


class PathFilter:
    """include/exclude globs with gitwildmatch semantics; exclude wins."""

    def __init__(self, include: Iterable[str], exclude: Iterable[str] = ()) -> None:
        self.include = re.compile("|".join(f"(?:{glob_regex(p).pattern})" for p in include) or "(?!)", re.DOTALL)
        self.exclude = re.compile("|".join(f"(?:{glob_regex(p).pattern})" for p in exclude) or "(?!)", re.DOTALL)

    def __call__(self, path: str) -> bool:
        return self.include.fullmatch(path) is not None and self.exclude.fullmatch(path) is None


#: Suffixes of the native languages (``records.NativeInfo.language``) read in an upstream's native trees.
NATIVE_SUFFIXES = {
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".inl": "cpp",
    ".rs": "rust",
}


def native_language(path: str) -> str | None:
    """The native language of a path by its suffix, None for any other file."""
    dot = path.rfind(".")
    return NATIVE_SUFFIXES.get(path[dot:].lower()) if dot > path.rfind("/") else None


class Selection:
    """The files a crawl reads: ``include`` minus ``exclude``, and in the ``native`` trees (minus
    ``exclude``) the files of a native language."""

    def __init__(self, include: Iterable[str], exclude: Iterable[str] = (), native: Iterable[str] = ()) -> None:
        exclude = list(exclude)
        self.python = PathFilter(include, exclude)
        native = list(native)
        self.native = PathFilter(native, exclude) if native else None

    def __call__(self, path: str) -> bool:
        if self.python(path):
            return True
        return self.native is not None and native_language(path) is not None and self.native(path)
