"""A dataset's ``errors/<id>.json`` held to its ``errors.jsonl.gz``: a rendered page links to its
record's file as the record "as JSON", so that file must be the very record the page shows."""

from __future__ import annotations

from pathlib import Path

import orjson

from crawler.base.errors import DataError
from crawler.publish.dataset import ERRORS, _read_record, _record_lines, named


def check_record_files(dataset: Path) -> int:
    """The number of record files checked; a DataError naming the first ``errors/<id>.json`` of a
    line of ``errors.jsonl.gz`` that is missing, not a regular file (a symlink included), not
    JSON, or another record than the line's (compared as JSON values, not bytes: layout is no
    part of a record). The lines themselves are validated by whoever read them first."""
    count = 0
    for where, line in _record_lines(dataset):
        try:
            record = orjson.loads(line)
            rid = record["id"]
        except (orjson.JSONDecodeError, TypeError, KeyError):
            raise DataError(f"{where}: not a valid record") from None
        path = dataset / ERRORS / f"{rid}.json"
        found = _read_record(str(path))
        if found is None:
            raise DataError(f"{named(path)}: missing, not a regular file or too large, where {where} has its record")
        try:
            same = orjson.loads(found[0]) == record
        except orjson.JSONDecodeError:
            raise DataError(f"{named(path)}: not valid JSON; {where} has its record") from None
        if not same:
            raise DataError(f"{named(path)}: not the record {where} holds (edited or left over from another crawl)")
        count += 1
    return count
