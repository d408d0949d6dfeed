"""What ``errcat history`` takes over from the runs before it, so that its one dataset costs
little more to write than the files that changed.

Every history run renders the whole dataset (~11,500 record files for vLLM, most of them the
same bytes as last time), so it reuses, from the cache directory:

- the digests of record files validated before (``publish.validated``, shared with the crawl):
  a record file with those very bytes is not validated again;
- the gzip members of ``errors.jsonl.gz`` made before, by their content: those of the dataset in
  place, else a copy of the last history written for the repository (``history/<repo>.jsonl.gz``,
  for a run into another directory); a member whose lines did not change is not compressed again.

And a dataset in place that already holds exactly the bytes rendered is left alone (no file
written, nothing swapped). None of this changes a byte of the output: the members are read back
with their CRC checked and taken only for their exact content, a digest only spares a check those
very bytes passed; a missing or damaged file in the cache only costs doing the work again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from crawler.base.cachedir import keep
from crawler.model.records import RepoRef
from crawler.publish import jsonl, validated
from crawler.publish.dataset import MAX_DOCUMENT_BYTES, previous_members
from crawler.publish.writer import MANIFEST, Reuse, read_dataset

DIRECTORY = "history"


def _members_file(cache_dir: Path, repo: RepoRef) -> Path:
    name = hashlib.sha256(f"{repo.owner}/{repo.name}".encode()).hexdigest()[:16]
    return cache_dir / DIRECTORY / f"{name}.{jsonl.NAME}"


def _cached_members(path: Path) -> dict[bytes, bytes]:
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > MAX_DOCUMENT_BYTES:
                return {}
            return jsonl.split_members(fh.read())
    except OSError:
        return {}


def start(cache_dir: Path, target: Path, repo: RepoRef) -> Reuse:
    """What the render of ``target`` may take over (see the module docstring)."""
    members = previous_members(target) or _cached_members(_members_file(cache_dir, repo))
    return Reuse({}, validated.load(cache_dir), set(), {}, members)


def in_place(target: Path, files: dict[str, bytes]) -> bool:
    """Whether ``target`` holds exactly ``files``, no more, no less (the manifest, which names
    the digest of all the others, is compared first: a changed history stops there)."""
    try:
        if (target / MANIFEST).read_bytes() != files.get(MANIFEST):
            return False
    except OSError:
        return False
    try:
        return read_dataset(target) == files
    except OSError:
        return False


def finish(cache_dir: Path, repo: RepoRef, reuse: Reuse, files: dict[str, bytes]) -> None:
    """Remember, after the dataset was written, the record files validated and its
    ``errors.jsonl.gz``; what cannot be written is done without."""
    validated.remember(cache_dir, reuse.validated, [d for rel, d in reuse.digests.items() if rel.startswith("errors/")])
    packed = files.get(jsonl.NAME)
    if packed is None:
        return
    path = _members_file(cache_dir, repo)
    try:
        if path.stat().st_size == len(packed) and path.read_bytes() == packed:
            return
    except OSError:
        pass
    keep(path, packed)
