"""Release versions in one order everywhere: PEP 440's, as pip and the package index order them
(0.6.6 < 0.6.6.post1 < 0.7.0rc1 < 0.7.0; a tag's leading ``v`` read as PEP 440 reads it). The
fold, the tags a history takes, a match's ``--version`` and the site's chart all sort by it."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

#: ASCII digits: PEP 440 reads no others, and Python's \d takes every script's (v\u0661.\u0662 is no version).
_NUMBERS = re.compile(r"[0-9]+")


def release_key(version: str) -> Version:
    """``version`` as PEP 440 reads it; a version it cannot read (``release-1.2``) goes by its
    numbers (at most eight, each cut to nine digits: a hostile tag is no huge integer)."""
    numbers = _NUMBERS.findall(version)
    if all(len(n) <= 9 for n in numbers):
        try:
            return Version(version)
        except InvalidVersion:
            pass
    return Version(".".join(n[:9] for n in numbers[:8]) or "0")


def has_numbers(version: str) -> bool:
    return _NUMBERS.search(version) is not None


def newest_per_minor(versions: list[str]) -> list[str]:
    """The newest of each minor release series among ``versions`` (0.6.6.post1 of 0.6.0 ...
    0.6.6.post1; 0.10.2 of 0.10.1.1 and 0.10.2), in the order they came: what a backfill of
    "every minor" crawls. Versions of one series are compared in PEP 440 order."""
    newest: dict[tuple[int, ...], str] = {}
    for version in versions:
        series = release_key(version).release[:2]
        kept = newest.get(series)
        if kept is None or release_key(version) > release_key(kept):
            newest[series] = version
    keep = set(newest.values())
    return [v for v in versions if v in keep]
