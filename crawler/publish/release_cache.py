"""A release's records kept in the cache directory, for ``errcat history`` to fold again.

``errcat history`` crawls each release in memory; its records, made from exactly the inputs an
input digest names (errcat's code, the commit's files, curated files, limits), are the same on
every later run. So each is kept, gzip-compressed (the manifest and each record's fold key as
JSON lines, then the records), as ``releases/<generation>/<input digest>.jsonl.gz``: a backfill
run again (a new release at the end, a range widened) reads the releases it has seen instead of assembling them again. The
generation names errcat's code; files of another can never be read again, so saving under a new
generation removes the others (a vLLM release is 9-13 MB: a hundred of them fit, a hundred per
upgrade would not).

Like the result cache, this is an optimisation that never fails a crawl: a file that is missing,
truncated, damaged (gzip's CRC catches it), not of this shape or larger than a release can be
(:data:`MAX_BYTES` decompressed: a gzip bomb planted in the cache costs that much memory at most)
is a miss, and a file that cannot be written is done without. What it holds is errcat's own data, read with orjson, never
executed; the history it goes into is validated before a byte is written.

Each record is kept as its record file with no history (:func:`record_file`): a history's final
render puts the history in and has the file without serializing the record again.

The second line holds what the history fold reads of every record (its id, error key and sites'
paths, :func:`fold_row`), so a release that is not the last of a run is folded from its lines as
they are, never parsed: parsing the ~11,000 records of a vLLM release was most of the time a
history run spent on it. Since the rows and lines are taken unparsed, the second line also holds
the SHA-256 of all of them (20 ms for a vLLM release): a file whose gzip is intact but whose rows
or record lines are not the ones saved (edited by hand, recompressed) is a miss like a damaged
one, and the release is assembled again, rather than a line the fold cannot read stopping the
run later or rows it takes as they are giving another history.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import shutil
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson
from pydantic import ValidationError

from crawler.base.cachedir import keep
from crawler.base.jsonio import dumps_record
from crawler.extract.ids import entry_key
from crawler.model.records import Manifest
from crawler.model.shapes import RecordData
from crawler.publish import jsonl
from crawler.publish.writer import manifest_document

DIRECTORY = "releases"
#: The most a kept release decompresses to. Its records are the lines of a dataset's
#: errors.jsonl.gz, which no reader takes past ``jsonl.MAX_TOTAL_BYTES`` decompressed; a release
#: larger than that is not kept (``save``), so a file that is larger is none errcat wrote.
MAX_BYTES = jsonl.MAX_TOTAL_BYTES
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def _path(root: Path, generation: str, digest: str) -> Path | None:
    if not (_DIGEST.fullmatch(digest) and _DIGEST.fullmatch(generation)):
        return None
    return root / DIRECTORY / generation / f"{digest}.jsonl.gz"


#: What the fold reads of one record: (id, error key, its sites' paths).
FoldRow = tuple[str, tuple[str, ...], tuple[str, ...]]


def fold_row(record: RecordData) -> FoldRow:
    """A record's id, the key of the error it is (``entry_key`` of its primary site; equal ids
    with other keys are a hash collision) and its sites' paths (for moves)."""
    return record["id"], entry_key(record["sites"][0]), tuple(site["path"] for site in record["sites"])


#: How every record file ends (``jsonio.dumps_record``); nowhere else does a newline come before
#: a closing brace, since no value spans lines but ``sites``, whose list closes with ``]``.
_END = b"\n}\n"


def record_file(record: RecordData) -> bytes:
    """How a release keeps a record: the bytes of its record file with no history, which a
    history's final render completes with the record's history (``versions.history``) instead of
    serializing the record again."""
    return dumps_record({**record, "history": None})


class Kept(NamedTuple):
    """A release read back: its manifest, each record's :func:`fold_row` and each record as
    :func:`record_file` made it (JSON like any, unparsed), in the same order."""

    manifest: Manifest
    rows: list[FoldRow]
    lines: list[bytes]

    def records(self) -> list[RecordData] | None:
        """The records parsed; None when a line is not a record of its row's id."""
        try:
            records = [orjson.loads(line) for line in self.lines]
        except orjson.JSONDecodeError:
            return None
        if not all(isinstance(r, dict) and r.get("id") == row[0] and r.get("sites") for r, row in zip(records, self.rows, strict=True)):
            return None
        return cast("list[RecordData]", records)  # errcat's own, written by save


def _row(item: Any) -> FoldRow | None:
    if not (
        isinstance(item, list)
        and len(item) == 3
        and isinstance(item[0], str)
        and all(isinstance(part, list) and all(isinstance(x, str) for x in part) for part in item[1:])
    ):
        return None
    return item[0], tuple(item[1]), tuple(item[2])


def load(root: Path, generation: str, digest: str) -> Kept | None:
    """The release kept for this input digest, or None; the manifest's content digest is ""."""
    path = _path(root, generation, digest)
    if path is None:
        return None
    try:
        data = _decompressed(path)
        if data is None:
            return None
        first = data.index(b"\n")
        second = data.index(b"\n", first + 1)
        manifest = orjson.loads(data[:first])
        index = orjson.loads(data[first + 1 : second])
    except (OSError, EOFError, zlib.error, orjson.JSONDecodeError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("input_digest") != digest or not isinstance(index, dict):
        return None
    rows = index.get("rows")
    # the body (~40 MB for vLLM) is hashed and cut into record files where it lies, not copied first
    if not isinstance(rows, list) or index.get("sha256") != _digest(orjson.dumps(rows), memoryview(data)[second + 1 :]):
        return None
    records = _record_files(data, second + 1)
    folded = [_row(item) for item in rows]
    if records is None or len(folded) != len(records) or any(row is None for row in folded):
        return None
    try:
        return Kept(Manifest.model_validate({**manifest, "content_digest": ""}), [row for row in folded if row is not None], records)
    except ValidationError:
        return None


def _decompressed(path: Path) -> bytes | None:
    """The file's one gzip member decompressed, or None when it is more than :data:`MAX_BYTES`
    (zlib stops there: a bomb costs that much at most), cut short, or followed by anything."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size > MAX_BYTES:
            return None
        packed = fh.read()
    unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip framing; the CRC is checked at the end
    data = unpacker.decompress(packed, MAX_BYTES + 1)
    if len(data) > MAX_BYTES or unpacker.unconsumed_tail or not unpacker.eof or unpacker.unused_data:
        return None
    return data


def _record_files(data: bytes, start: int) -> list[bytes] | None:
    """The record files that ``data`` holds from ``start`` on, each ending with :data:`_END`;
    None when anything follows the last."""
    files = []
    while start < len(data):
        end = data.find(_END, start)
        if end < 0:
            return None
        end += len(_END)
        files.append(data[start:end])
        start = end
    return files


def _digest(rows: bytes, body: bytes | memoryview) -> str:
    """The SHA-256 of a release's fold rows (as ``orjson`` writes them, which reading them back
    and writing them again gives) and its records: the fold takes both as they are, and rows
    edited by hand (another error key, other paths) would give another history silently."""
    digest = hashlib.sha256(rows)
    digest.update(b"\n")
    digest.update(body)
    return digest.hexdigest()


def save(root: Path, generation: str, digest: str, manifest: Manifest, records: Sequence[RecordData]) -> None:
    """Keep them (atomically: a reader sees the whole file or none) and drop other generations;
    a refused write is no error."""
    path = _path(root, generation, digest)
    if path is None:
        return
    with contextlib.suppress(OSError):  # (a cache the system will not write is done without)
        for other in (root / DIRECTORY).iterdir() if (root / DIRECTORY).is_dir() else ():
            if other.name != generation:
                shutil.rmtree(other, ignore_errors=True) if other.is_dir() and not other.is_symlink() else other.unlink(missing_ok=True)
    body = b"".join(record_file(r) for r in records)
    rows = [fold_row(r) for r in records]
    index = orjson.dumps({"rows": rows, "sha256": _digest(orjson.dumps(rows), body)})
    data = b"\n".join([orjson.dumps(manifest_document(manifest)), index, body])
    if len(data) > MAX_BYTES:  # it could never be read back
        return
    keep(path, gzip.compress(data, compresslevel=1, mtime=0))
