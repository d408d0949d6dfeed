"""The user's cache directory, and setting a damaged cache entry aside."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from crawler.base.errors import OutputError
from crawler.base.files import write_file


def default_cache_dir() -> Path:
    env = os.environ.get("ERRCAT_CACHE_DIR")
    return Path(env) if env else Path(user_cache_dir("errcat"))


def move_aside(path: Path) -> Path:
    """Rename a damaged cache entry (file or directory) to ``<name>.damaged`` next to it, in place
    of an older one, and return where it went: the next run starts afresh, the damaged copy stays
    for a look, and no more than one per entry ever accumulates."""
    aside = path.with_name(path.name + ".damaged")
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    os.replace(path, aside)
    return aside


def checked(path: Path, magic: bytes, head: struct.Struct) -> tuple[bytes, tuple[Any, ...]] | None:
    """A cache file kept with :func:`sealed` (its magic, a head of ``head``'s layout, its body and
    the SHA-256 of all that): its bytes, the checksum left on, and its head; None when there is
    no file, or it is not one of these or not whole (its checksum)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(magic) or len(data) < len(magic) + head.size + 32:
        return None
    if hashlib.sha256(memoryview(data)[:-32]).digest() != data[-32:]:
        return None
    return data, head.unpack_from(data, len(magic))


def sealed(pieces: list[bytes]) -> bytes:
    """The pieces of a body, joined, with its SHA-256 after it, as :func:`checked` reads it
    (joined once: a memo of 35 MB is not copied a second time to put its checksum on)."""
    h = hashlib.sha256()
    for piece in pieces:
        h.update(piece)
    return b"".join([*pieces, h.digest()])


def keep(path: Path, data: bytes) -> bool:
    """Write a cache file atomically (:func:`files.write_file`); a refused write (a read-only or
    full file system) is no error: False, and the file is as it was."""
    try:
        write_file(path, data)
    except OutputError:
        return False
    return True
