"""The SHA-256 of each record file a crawl wrote, by the file's identity, for the next crawl.

A crawl with the previous dataset in place compares every record it made with the record file
in place (``publish.pins``); reading 11,000 files for that was a tenth of a crawl of a commit
that changed one file. This memo, kept in the cache per output directory, holds for each
record file of the dataset last written there its (device, inode, size, modification time,
change time), the digest of its bytes and the digest of the record's errors.jsonl line written
with it, so a file that is still exactly that file is compared unread: by the digest of the
compact line, which is a function of the same record as the file's bytes (``jsonio``: the memo
is stamped with that code, another one vouches for nothing), so a record need not even be
serialized as a file to be found unchanged. Likewise the gzip members of ``errors.jsonl.gz``:
each one's place in the file and the digest of its lines, so an unchanged member is taken over
undecompressed.

A write to a file changes its change time (nothing can set it back), and so does a new link
or a rename into place (``git checkout``, ``cp``, an unpacked artifact): such a file is read,
and when its bytes have the digest the memo holds for it they are the very bytes errcat wrote
with that line, so the line's digest still stands for them (a dataset checked out of git or
restored by CI, the scheduled sync's case, is then compared by lines, not serialized again);
other bytes are compared byte for byte, as without the memo. errors.jsonl.gz likewise, by the
digest of the file written. The memo is errcat's own, like the extraction cache; a damaged or
missing one only costs reading the files.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import orjson

#: A file's identity: (device, inode, size, mtime_ns, ctime_ns).
Identity = tuple[int, int, int, int, int]
#: A gzip member of errors.jsonl.gz: (SHA-256 of its decompressed lines, offset, length in the file).
Member = tuple[bytes, int, int]


class Memo(NamedTuple):
    #: By record id: (the file's identity, SHA-256 of its bytes, SHA-256 of the record's errors.jsonl line).
    records: dict[str, tuple[Identity, bytes, bytes]]
    #: errors.jsonl.gz: its identity, its members in order and the SHA-256 of the file; None when unknown.
    members: tuple[Identity, list[Member], bytes] | None


EMPTY = Memo({}, None)


def identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@functools.cache
def stamp() -> str:
    """The code a memo's line digests stand for file bytes under: the serializer and its library."""
    from crawler.base import jsonio

    with open(jsonio.__file__, "rb") as fh:
        return hashlib.sha256(fh.read() + b"\0" + orjson.__version__.encode()).hexdigest()


def _path(cache_dir: Path, target: Path) -> Path:
    return cache_dir / "records" / f"{hashlib.sha256(os.fsencode(target.resolve())).hexdigest()[:16]}.bin"


def forget(cache_dir: Path, target: Path) -> None:
    """Drop the memo of ``target``: a dataset written where nothing is written again (a run's
    scratch) would leave one in the cache per run, never read."""
    with contextlib.suppress(OSError):
        _path(cache_dir, target).unlink()


#: The memo file: MAGIC, the stamp (32 bytes), the counts of records and members, the
#: identity of errors.jsonl.gz and its SHA-256, then fixed-size rows (a record's id as 8 bytes, its file's identity,
#: the two digests; a member's digest, offset and length): read without parsing.
MAGIC = b"errcat-record-memo-2\n"
_HEAD = struct.Struct("<32sQQ5q32s")
_RECORD = struct.Struct("<8s5q32s32s")
_MEMBER = struct.Struct("<32sQQ")


def load(cache_dir: Path, target: Path) -> Memo:
    """What the memo holds of the dataset last written at ``target``; empty when there is no memo,
    it is of other code or it cannot be read as one."""
    try:
        data = _path(cache_dir, target).read_bytes()
    except OSError:
        return EMPTY
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _HEAD.size:
        return EMPTY
    at = len(MAGIC)
    mark, records, members, *jsonl, packed = _HEAD.unpack_from(data, at)
    at += _HEAD.size
    if mark != bytes.fromhex(stamp()) or len(data) != at + records * _RECORD.size + members * _MEMBER.size:
        return EMPTY
    found = {
        rid.hex(): ((dev, ino, size, mtime, ctime), digest, line)
        for rid, dev, ino, size, mtime, ctime, digest, line in _RECORD.iter_unpack(data[at : at + records * _RECORD.size])
    }
    if len(found) != records:
        return EMPTY
    at += records * _RECORD.size
    listing = [(digest, offset, size) for digest, offset, size in _MEMBER.iter_unpack(data[at:])]
    dev, ino, size, mtime, ctime = jsonl
    return Memo(found, ((dev, ino, size, mtime, ctime), listing, packed) if listing else None)


def vouched(target: Path, memo: Memo) -> dict[str, bytes]:
    """The SHA-256 of each record file of the dataset at ``target`` that is still exactly the file
    the memo describes (its identity: a write, a new link or a rename changes its change time),
    by relative path, found by its directory's entries alone: what an up-to-date crawl's check of
    the dataset in place (``crawl.current_manifest``) takes instead of reading those files."""
    found: dict[str, bytes] = {}
    if not memo.records:
        return found
    try:
        with os.scandir(target / "errors") as entries:
            for entry in entries:
                name = entry.name
                known = memo.records.get(name[:-5]) if len(name) == 21 and name.endswith(".json") else None
                if known is not None and entry.is_file(follow_symlinks=False) and identity(entry.stat(follow_symlinks=False)) == known[0]:
                    found[f"errors/{name}"] = known[1]
    except OSError:
        return {}
    return found


def _holds(path: str, st: os.stat_result, digest: bytes) -> bool:
    """Whether the file at ``path`` is still the one ``st`` describes and holds bytes of ``digest``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        data = os.read(fd, st.st_size + 1)
        return identity(os.fstat(fd)) == identity(st) and hashlib.sha256(data).digest() == digest
    except OSError:
        return False
    finally:
        os.close(fd)


def remember(
    cache_dir: Path,
    target: Path,
    digests: Mapping[str, bytes],
    lines: Mapping[str, bytes] | None = None,
    members: tuple[bytes, Sequence[Member]] | None = None,
    kept: Mapping[str, Identity] | None = None,
) -> None:
    """After a dataset is swapped in at ``target``: the identity of each of its record files
    (``digests``: by id, the SHA-256 of the bytes the writer wrote; ``lines``: of the errors.jsonl
    line written with it) as it is now, and of its errors.jsonl.gz (``members``: the SHA-256 of the
    file written, and its members); failures are ignored (the next crawl reads the files).
    ``kept``: by id, the identity a kept record's file had when the crawl compared it (its bytes
    those of its digest: read, or vouched for by this memo), before the write: a file that still
    has it is that very file, untouched since (any write, link or rename changes its change time),
    and is not read again."""
    from crawler.base.cachedir import keep

    lines = lines or {}
    kept = kept or {}
    rows: list[bytes] = []
    where = f"{target}/errors"
    # The digests are of the bytes written before the swap, the identities are read after it: a
    # file whose change time is not older than the last entry made in its directory may have been
    # changed since (in the same clock tick, or after the swap), so it is
    # vouched for only after its bytes are read and found to be the ones written.
    try:
        settled = os.lstat(where).st_ctime_ns
    except OSError:
        return
    for rid, digest in digests.items():
        line = lines.get(rid)
        if line is None or len(rid) != 16:
            continue
        try:
            st = os.lstat(f"{where}/{rid}.json")
        except OSError:
            continue
        # A recycled directory (``writer._swap_in``'s spare) holds the kept files already: no
        # entry of it is made, so its change time says nothing of theirs (every file was read).
        if st.st_ctime_ns >= settled and identity(st) != kept.get(rid) and not _holds(f"{where}/{rid}.json", st, digest):
            continue
        rows.append(_RECORD.pack(bytes.fromhex(rid), *identity(st), digest, line))
    jsonl: Identity = (0, 0, 0, 0, 0)
    listing: Sequence[Member] = []
    packed = b"\0" * 32
    if members is not None:
        # One file, read once to vouch for it: cheaper than deciding whether it settled.
        path = f"{target}/errors.jsonl.gz"
        try:
            st = os.lstat(path)
            if _holds(path, st, members[0]):
                jsonl, listing, packed = identity(st), members[1], members[0]
        except OSError:
            pass
    keep(
        _path(cache_dir, target),
        b"".join([MAGIC, _HEAD.pack(bytes.fromhex(stamp()), len(rows), len(listing), *jsonl, packed), *rows, *(_MEMBER.pack(*member) for member in listing)]),
    )
