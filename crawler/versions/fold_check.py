"""A per-release dataset held to its own manifest before ``history --fold`` folds it.

The datasets a fold reads come from other machines (the backfill's matrix jobs, as artifacts),
so each is hostile until checked, as a whole and before anything of it is folded:

* the tree is the one layout a crawl writes (the files of ``base.dataset_files``: ``manifest.json``,
  ``index.json``, ``search.json``, ``foreign.json``, ``errors.jsonl.gz``, ``errors/<id>.json``),
  directories and regular files only, read without following a symlink (the dataset directory
  itself neither);
* its files hash to the manifest's ``content_digest`` (a record edited or cut short, a file added
  or removed since the crawl wrote it), the manifest among them the one the fold goes by (read
  before, to order the releases);
* each record file is named by its record's id and holds exactly the record ``errors.jsonl.gz``
  holds for it (the lines themselves are checked against the record schema and the record
  model's rules as the fold reads them, ``dataset.iter_record_data``), and no line lacks a file.

Anything else is one ``DataError`` naming the release; nothing has been written by then.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import orjson

from crawler.base.dataset_files import ERRORS, MANIFEST, RECORDS, TOP_LEVEL, record_file
from crawler.base.errors import DataError
from crawler.base.jsonio import dumps_record
from crawler.model.records import ID_HEX, Manifest
from crawler.model.shapes import RecordData
from crawler.publish import migrate
from crawler.publish.dataset import printable
from crawler.publish.writer import content_digest

RECORD_FILE = re.compile(rf"{ID_HEX}\.json")
MAX_FILE_BYTES = 512 * 2**20  # as ``adopt`` bounds a file of an artifact, and its whole
MAX_TOTAL_BYTES = 2 * 2**30
MAX_RECORD_BYTES = 16 * 2**20  # as the dataset reader bounds a record file


def refuse_links(roots: list[Path]) -> None:
    """No symlink anywhere under the directories a fold reads: one would hide a release from the
    search for datasets (a symlinked directory is not walked) or bring files from elsewhere."""
    for root in roots:
        if root.is_symlink():
            raise DataError(f"{_name(str(root))} is a symlink; a fold reads only directories and regular files")
        for parent, dirs, names in os.walk(root):
            for name in (*dirs, *names):
                if os.path.islink(os.path.join(parent, name)):
                    raise DataError(f"{_name(os.path.join(parent, name))} is a symlink; a fold reads only directories and regular files")


def _what(release: str, dataset: Path) -> str:
    return f"release {release} ({_name(str(dataset))})"


def _name(text: str) -> str:
    """A name the artifact chose, in the one line an error is: escaped (a newline, a control
    character), not cut short."""
    return printable(text, len(text))


class _Budget:
    """What is left of ``MAX_TOTAL_BYTES`` for a release's files (each read whole, to be hashed,
    before any of it is folded): sparse files cost no disk, and an artifact's zip unpacks."""

    def __init__(self) -> None:
        self.left = MAX_TOTAL_BYTES

    def read(self, directory: int, name: str, where: str, most: int) -> bytes:
        data = _read(directory, name, where, min(most, self.left), together=most > self.left)
        self.left -= len(data)
        return data


def _read(directory: int, name: str, where: str, most: int, together: bool = False) -> bytes:
    """A regular file's bytes, opened without following a symlink: at most ``most`` (``together``:
    the bound is what is left of the release's)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=directory)
    except OSError as exc:
        raise DataError(f"{where}: {_name(name)} cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{where}: {_name(name)} is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(most + 1) if st.st_size <= most else b""
        if st.st_size > most or len(data) > most:  # (grown since: read no further)
            what = "its files are larger than a release's may be together" if together else f"{_name(name)} is larger than a dataset's file may be"
            raise DataError(f"{where}: {what}")
        return data
    finally:
        os.close(fd)


def _listing(directory: int, where: str, allowed: re.Pattern[str] | frozenset[str], prefix: str = "") -> list[str]:
    """The names in ``directory``: only regular files it may hold (and ``errors/`` at the top)."""
    names = []
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        mode = entry.stat(follow_symlinks=False).st_mode
        if prefix == "" and entry.name == ERRORS and stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            kind = "a symlink" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise DataError(f"{where}: {_name(prefix + entry.name)} is {kind}, not a file a dataset has")
        ok = allowed.fullmatch(entry.name) if isinstance(allowed, re.Pattern) else entry.name in allowed
        if not ok:
            raise DataError(f"{where}: {_name(prefix + entry.name)} is not a file a dataset has")
        names.append(entry.name)
    return names


def check_release(dataset: Path, manifest: Manifest) -> dict[str, bytes]:
    """Check ``dataset`` (see the module) and return the SHA-256 of each of its record files by
    id, for :func:`matching` to hold the lines to as the fold reads them. Each file is hashed as
    it is read and dropped (a release's files together were ~100 MB held for its step, the most
    a fold of vLLM's history held at once), the manifest's bytes only kept."""
    where = _what(manifest.ref or manifest.commit[:12], dataset)
    try:
        top = os.open(dataset, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise DataError(f"{where}: the dataset directory cannot be read ({exc.strerror or exc}; a symlink is not followed)") from None
    try:
        budget = _Budget()
        files: dict[str, bytes] = {}
        digests: dict[str, bytes] = {}
        for name in _listing(top, where, TOP_LEVEL):
            data = budget.read(top, name, where, MAX_FILE_BYTES)
            if name == MANIFEST:
                files[name] = data
            digests[name] = hashlib.sha256(data).digest()
            del data
        records: dict[str, bytes] = {}
        try:
            errors = os.open(ERRORS, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
        except FileNotFoundError:
            errors = None
        except OSError as exc:
            raise DataError(f"{where}: {ERRORS} cannot be read ({exc.strerror or exc})") from None
        if errors is not None:
            try:
                records = {
                    name[: -len(".json")]: hashlib.sha256(budget.read(errors, name, where, MAX_RECORD_BYTES)).digest()
                    for name in _listing(errors, where, RECORD_FILE, f"{ERRORS}/")
                }
            finally:
                os.close(errors)
    finally:
        os.close(top)
    digests.update((record_file(rid), digest) for rid, digest in records.items())
    if MANIFEST not in files or RECORDS not in digests:
        raise DataError(f"{where}: no {MANIFEST if MANIFEST not in files else RECORDS}")
    if _parsed(files[MANIFEST]) != manifest:  # the fold goes by the manifest read before
        raise DataError(f"{where}: its {MANIFEST} is not the one read before it was checked (changed meanwhile)")
    if content_digest(files, digests) != manifest.content_digest:
        raise DataError(f"{where}: its files do not hash to its manifest's content_digest (a file edited, cut short, added or removed since it was written)")
    return records


def _reread(dataset: Path, rid: str, digest: bytes, where: str) -> bytes:
    """A record file's bytes read again (as :func:`check_release` read them: no symlink followed),
    which must be those it hashed."""
    try:
        top = os.open(dataset, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            errors = os.open(ERRORS, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
        finally:
            os.close(top)
    except OSError as exc:
        raise DataError(f"{where}: {ERRORS} cannot be read ({exc.strerror or exc})") from None
    try:
        data = _read(errors, f"{rid}.json", where, MAX_RECORD_BYTES)
    finally:
        os.close(errors)
    if hashlib.sha256(data).digest() != digest:
        raise DataError(f"{where}: {record_file(rid)} changed while the release was folded")
    return data


def _parsed(data: bytes) -> Manifest | None:
    try:
        return Manifest.model_validate_json(migrate.document_bytes(data), strict=True)  # (as load_manifest read it)
    except ValueError:  # (pydantic's ValidationError is one)
        return None


def matching(records: Iterator[RecordData], files: dict[str, bytes], release: str, dataset: Path) -> Iterator[RecordData]:
    """``records`` (a release's checked lines), each held to the record file of its id (``files``:
    their SHA-256 as :func:`check_release` read them); then no record file may be left over.

    A record whose file is the one a crawl writes of it (``dumps_record``: a dataset of this
    schema) is that file by its digest; any other (a release of an older schema, migrated as
    read) has its file read again, which must still be the bytes hashed, and compared as data."""
    where = _what(release, dataset)
    for record in records:
        rid = record["id"]
        digest = files.pop(rid, None)
        if digest is None:
            raise DataError(f"{where}: {RECORDS} holds {rid}, which has no file {record_file(rid)}")
        try:
            same = hashlib.sha256(dumps_record(record)).digest() == digest
        except TypeError:  # (not JSON: read the file, as any other)
            same = False
        if not same:
            data = _reread(dataset, rid, digest, where)
            try:
                same = migrate.record(orjson.loads(data)) == record  # (both of this schema: the line was migrated as read)
            except orjson.JSONDecodeError:
                same = False
        if not same:
            raise DataError(f"{where}: {record_file(rid)} is not the record {RECORDS} holds for {rid} (a record file's name is its record's id)")
        yield record
    if files:
        rid = min(files)
        raise DataError(f"{where}: {record_file(rid)} is a record {RECORDS} does not hold")
