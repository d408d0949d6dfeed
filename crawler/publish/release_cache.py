"""A release's records kept in the cache directory, for ``errcat history`` to fold again.

``errcat history`` crawls each release in memory; its records, made from exactly the inputs an
input digest names (errcat's code, the commit's files, curated files, limits), are the same on
every later run. So each is kept, gzip-compressed JSON lines (the manifest, then the records),
as ``releases/<generation>/<input digest>.jsonl.gz``: a backfill run again (a new release at the
end, a range widened) reads the releases it has seen instead of assembling them again. The
generation names errcat's code; files of another can never be read again, so saving under a new
generation removes the others (a vLLM release is 6-8.5 MB: a hundred of them fit, a hundred per
upgrade would not).

Like the result cache, this is an optimisation that never fails a crawl: a file that is missing,
truncated, damaged (gzip's CRC catches it) or not of this shape is a miss, and a file that
cannot be written is done without. What it holds is errcat's own data, read with orjson, never
executed; the history it goes into is validated before a byte is written.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import orjson
from pydantic import ValidationError

from crawler.model.records import Manifest
from crawler.model.shapes import RecordData
from crawler.publish.writer import manifest_document

DIRECTORY = "releases"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def _path(root: Path, generation: str, digest: str) -> Path | None:
    if not (_DIGEST.fullmatch(digest) and _DIGEST.fullmatch(generation)):
        return None
    return root / DIRECTORY / generation / f"{digest}.jsonl.gz"


def load(root: Path, generation: str, digest: str) -> tuple[Manifest, list[RecordData]] | None:
    """(manifest, records) kept for this input digest, or None; the manifest's content digest is ""."""
    path = _path(root, generation, digest)
    if path is None:
        return None
    try:
        with gzip.open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
        manifest = orjson.loads(lines[0])
        records: list[RecordData] = [orjson.loads(line) for line in lines[1:] if line]  # errcat's own, written by save
    except (OSError, EOFError, zlib.error, orjson.JSONDecodeError, IndexError):
        return None
    if not isinstance(manifest, dict) or manifest.get("input_digest") != digest:
        return None
    if not all(isinstance(r, dict) and isinstance(r.get("id"), str) and r.get("sites") for r in records):
        return None
    try:
        return Manifest.model_validate({**manifest, "content_digest": ""}), records
    except ValidationError:
        return None


def save(root: Path, generation: str, digest: str, manifest: Manifest, records: Sequence[RecordData]) -> None:
    """Keep them (atomically: a reader sees the whole file or none) and drop other generations;
    a refused write is no error."""
    path = _path(root, generation, digest)
    if path is None:
        return
    if (root / DIRECTORY).is_dir():
        for other in (root / DIRECTORY).iterdir():
            if other.name != generation:
                shutil.rmtree(other, ignore_errors=True) if other.is_dir() and not other.is_symlink() else other.unlink(missing_ok=True)
    data = b"\n".join([orjson.dumps(manifest_document(manifest)), *(orjson.dumps(r) for r in records)]) + b"\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(gzip.compress(data, compresslevel=1, mtime=0))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
