"""What ``errcat history`` takes over from the runs before it, so that its one dataset costs
little more to write than the files that changed.

Every history run renders the whole dataset (~11,500 record files for vLLM, most of them the
same bytes as last time), so it reuses, from the cache directory:

- the digests of record files validated before (``publish.validated``, shared with the crawl):
  a record file with those very bytes is not validated again;
- the gzip members of ``errors.jsonl.gz`` made before, by their content: those of the dataset in
  place, else a copy of the last history written for the repository (``history/<repo>.jsonl.gz``,
  for a run into another directory); a member whose lines did not change is not compressed again.
  The copy's members are cut out where a layout file beside it (``<repo>.layout.json``) says,
  when the copy is the file of the SHA-256 it names (errcat's own, like the record memo's
  layout), rather than decompressed to key them (0.2 s on vLLM);
- the validation of record files it writes for the first time: a record file is the same record
  file with no history (what the release cache keeps, ``release_cache.record_file``) with the
  history put in; when those bare bytes were validated before and the history is valid on its
  own, so is the record (:func:`vouched`), and a history over other releases validates each
  distinct history once instead of ~11,500 records.

And a dataset in place that already holds exactly the bytes rendered is left alone (no file
written, nothing swapped). None of this changes a byte of the output: the members are read back
with their CRC checked and taken only for their exact content (or where the layout of those very
bytes puts them), a digest only spares a check those very bytes passed; a missing or damaged file
in the cache only costs doing the work again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson

from crawler.base.cachedir import keep
from crawler.base.dataset_files import MANIFEST, record_id_of
from crawler.model.records import RepoRef
from crawler.model.schemas import schema_for
from crawler.publish import jsonl, validated
from crawler.publish.dataset import MAX_DOCUMENT_BYTES, PreviousRecord
from crawler.publish.writer import Reuse, read_dataset

DIRECTORY = "history"


def _members_file(cache_dir: Path, repo: RepoRef) -> Path:
    name = hashlib.sha256(f"{repo.owner}/{repo.name}".encode()).hexdigest()[:16]
    return cache_dir / DIRECTORY / f"{name}.{jsonl.NAME}"


def _layout_file(members: Path) -> Path:
    return members.with_name(members.name.removesuffix(jsonl.NAME) + "layout.json")


def _regular_bytes(path: Path) -> bytes | None:
    """A regular file's bytes, up to MAX_DOCUMENT_BYTES; None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_DOCUMENT_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(MAX_DOCUMENT_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _layout(path: Path) -> tuple[bytes, list[tuple[bytes, int, int]]] | None:
    """The SHA-256 of the errors.jsonl.gz kept for the repository and where each of its members
    is, by key, as ``finish`` wrote them; None when missing or not of that shape."""
    try:
        document = orjson.loads(_regular_bytes(path) or b"")
        digest = bytes.fromhex(document["sha256"])
        layout = [(bytes.fromhex(key), at, size) for key, at, size in document["members"]]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if len(digest) != 32 or not all(len(key) == 32 and type(at) is int and type(size) is int and at >= 0 and size > 0 for key, at, size in layout):
        return None
    return digest, layout


def _members(data: bytes, layout: tuple[bytes, list[tuple[bytes, int, int]]] | None) -> dict[bytes, bytes]:
    """The members of a copy of errors.jsonl.gz: cut out where ``layout`` says when the copy is
    the very file it was written for (its SHA-256), else decompressed and keyed by their lines."""
    if layout is not None and hashlib.sha256(data).digest() == layout[0]:
        return jsonl.members_at(data, layout[1])
    return jsonl.split_members(data)


def start(cache_dir: Path, target: Path, repo: RepoRef) -> Reuse:
    """What the render of ``target`` may take over (see the module docstring)."""
    path = _members_file(cache_dir, repo)
    cached = _regular_bytes(path)
    here = _regular_bytes(target / jsonl.NAME)
    members = jsonl.split_members(here) if here is not None and here != cached else {}
    if not members and cached is not None:
        members = _members(cached, _layout(_layout_file(path)))
    return Reuse({}, validated.load(cache_dir), set(), {}, members, layout=[], line_digests={})


def in_place(target: Path, files: dict[str, bytes], absent: Mapping[str, PreviousRecord] | None = None) -> bool:
    """Whether ``target`` holds exactly ``files``, no more, no less (the manifest, which names
    the digest of all the others, is compared first: a changed history stops there). ``absent``:
    record files ``files`` leaves out, carried through in place (``versions.carried``), by
    relative path: each must be there, still the file it was read as (``PreviousRecord.read``)."""
    absent = absent or {}
    try:
        if (target / MANIFEST).read_bytes() != files.get(MANIFEST):
            return False
    except OSError:
        return False
    try:
        return read_dataset(target, skip=absent.keys()) == files and all(old.read() is not None for old in absent.values())
    except OSError:
        return False


#: The keywords a record schema's top level may have for :func:`vouched` to hold: each constrains
#: one property at a time (no ``allOf``, ``if``, ``dependentSchemas`` tying history to the rest).
_PER_PROPERTY = frozenset({"$schema", "$id", "$defs", "additionalProperties", "description", "required", "title", "type", "properties"})


@cache
def _history_validator() -> Any:
    """A validator of a record's ``history`` value alone; None when the record schema could tie
    the history to its other fields, so that no record is vouched for by its parts."""
    schema = schema_for("record")
    field = schema.get("properties", {}).get("history")
    if set(schema) - _PER_PROPERTY or not isinstance(field, dict):
        return None
    return jsonschema_rs.validator_for({"$defs": schema.get("$defs", {}), **field})


def vouched(parts: Iterable[tuple[bytes, bytes, bytes]], known: frozenset[bytes]) -> set[bytes]:
    """The SHA-256 of the record files valid by their parts, each given as (the file's SHA-256, the
    SHA-256 of the same record file with no history, the history as JSON): a record whose bare file was validated
    before (its digest is ``known``) is valid when its history is, since the record schema
    constrains each top-level field on its own (checked, see :func:`_history_validator`).
    Each distinct history is validated once: most records of a history share theirs."""
    checker = _history_validator()
    if checker is None or not known:
        return set()
    valid: dict[bytes, bool] = {}
    out = set()
    for file, bare, history in parts:
        if bare not in known:
            continue
        ok = valid.get(history)
        if ok is None:
            ok = valid[history] = checker.is_valid(orjson.loads(history))
        if ok:
            out.add(file)
    return out


def finish(cache_dir: Path, repo: RepoRef, reuse: Reuse, files: dict[str, bytes], bare: Iterable[bytes] = ()) -> None:
    """Remember, after the dataset was written, the record files validated (and ``bare``: the
    digests of the same records with no history, valid too; and the record lines written, which a
    sync reads next, ``dataset.iter_record_data``'s ``known``) and its ``errors.jsonl.gz``; what
    cannot be written is done without."""
    files_validated = [d for rel, d in reuse.digests.items() if record_id_of(rel) is not None]
    validated.remember(cache_dir, reuse.validated, files_validated + list(bare) + list((reuse.line_digests or {}).values()))
    packed = files.get(jsonl.NAME)
    if packed is None:
        return
    path = _members_file(cache_dir, repo)
    if _regular_bytes(path) != packed:
        keep(path, packed)
    if reuse.layout:  # where its members are, so that the next run cuts them out undecompressed
        digest, layout = reuse.layout[0]
        document = orjson.dumps({"sha256": digest.hex(), "members": [[key.hex(), at, size] for key, at, size in layout]})
        if _regular_bytes(_layout_file(path)) != document:
            keep(_layout_file(path), document)
