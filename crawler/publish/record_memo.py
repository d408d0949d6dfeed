"""The SHA-256 of each record file a crawl wrote, by the file's identity, for the next crawl.

A crawl with the previous dataset in place compares every record it made with the record file
in place (``publish.pins``); reading 11,000 files for that was a tenth of a crawl of a commit
that changed one file. This memo, kept in the cache per output directory, holds for each
record file of the dataset last written there its (device, inode, size, modification time,
change time) and the digest of its bytes, so a file that is still exactly that file is compared
by digest, from one ``lstat``, unread.

A write to a file changes its change time (nothing can set it back), and so does a new link
or a rename into place (``git checkout``, ``cp``, an unpacked artifact): such a file is read and
compared byte for byte, as without the memo. The memo is errcat's own, like the extraction
cache; a damaged or missing one only costs reading the files.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import orjson

#: A file's identity: (device, inode, size, mtime_ns, ctime_ns).
Identity = tuple[int, int, int, int, int]


def identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _path(cache_dir: Path, target: Path) -> Path:
    return cache_dir / "records" / f"{hashlib.sha256(os.fsencode(target.resolve())).hexdigest()[:16]}.json"


def load(cache_dir: Path, target: Path) -> dict[str, tuple[Identity, bytes]]:
    """(identity, digest) of each record file (by id) last written at ``target``; empty when
    there is no memo or it cannot be read as one."""
    try:
        document = orjson.loads(_path(cache_dir, target).read_bytes())
        return {rid: ((dev, ino, size, mtime, ctime), bytes.fromhex(digest))
                for rid, (dev, ino, size, mtime, ctime, digest) in document.items()
                if isinstance(rid, str) and all(type(n) is int for n in (dev, ino, size, mtime, ctime))
                and isinstance(digest, str) and len(digest) == 64}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


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


def remember(cache_dir: Path, target: Path, digests: Mapping[str, bytes]) -> None:
    """After a dataset is swapped in at ``target``: the identity of each of its record files
    (``digests``: by id, the SHA-256 of the bytes the writer wrote) as it is now; failures are
    ignored (the next crawl reads the files)."""
    from crawler.base.cachedir import keep

    found: dict[str, list[int | str]] = {}
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
        try:
            st = os.lstat(f"{where}/{rid}.json")
        except OSError:
            continue
        if st.st_ctime_ns >= settled and not _holds(f"{where}/{rid}.json", st, digest):
            continue
        found[rid] = [*identity(st), digest.hex()]
    keep(_path(cache_dir, target), orjson.dumps(found, option=orjson.OPT_SORT_KEYS))
