"""The bound on one file's sites (``max_file_sites``, ``Settings.max_sites``).

Extraction stops at the first site past the limit: a file over it costs its parse and the walk up
to that site, never the making (nor the deriving, encoding and caching) of every site it holds.
Its result has the status :data:`OVER_LIMIT` and the reason the manifest's ``skipped`` lists; a
Python file's classes are read by a walk of its classes alone (``visitor``), so they still count
in the exception hierarchy. Only sites no later step drops are counted, so a file whose sites are
within the limit is never stopped: its result is the one an unbounded extraction gives.
"""

from __future__ import annotations

from crawler.model.shapes import FileResult

#: The status of a file with more sites than the limit (``FileResult.status``).
OVER_LIMIT = "over_limit"


class OverLimit(Exception):
    """A walk made one site more than the limit; caught where the file's extraction is."""


def reason(limit: int, count: int | None = None) -> str:
    """Why a file over the limit is skipped: its count of sites when known, else "more than"."""
    counted = f"more than {limit}" if count is None else str(count)
    return f"{counted} raise and assert sites, over the limit of {limit} per file (max_file_sites)"


def over_limit(result: FileResult, limit: int) -> FileResult:
    """``result`` (an empty one, or one with the file's classes) as that of a file over the limit."""
    result["status"] = "over_limit"
    result["reason"] = reason(limit)
    return result
