"""The fold's records as folded (each id's latest record, JSON bytes), kept in a file, not the heap.

A fold of vLLM's whole release history keeps one record of ~5 KB for each of ~28,000 ids ever
seen: on the heap, the largest part of its state, and one that grows with every release that
retires entries. Here each id has a slot in one file: its record is written at the slot's
offset, and a later release's record of the same id is written over it when it fits the slot
(a slot has a quarter more room than the record it was made for), else into a new slot at the
end. Reads are ``pread``: the pages are the kernel's page cache, not this process's memory (a
``mmap`` would count them in its resident set), and the render's packing thread reads beside
the main thread without a shared file position.

The file has no name: ``tempfile.TemporaryFile`` opens it ``O_TMPFILE`` (or unlinks it at once
where the file system cannot), in the directory the caller names (the output's, so it takes the
output's disk rather than a small ``/tmp``). Nothing is ever left of it, in the output or
anywhere, whether the fold succeeds, fails or is killed: the kernel frees it when the last
descriptor closes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, NamedTuple

from crawler.base.errors import OutputError


class Slot(NamedTuple):
    """Where one record is: its offset in the file, its size, and the room the slot has."""

    at: int
    size: int
    room: int


class PackedStore:
    """Records in slots of one nameless file (see the module). ``directory``: where the file is
    made (None: the system's temporary directory); it is opened at the first ``put``."""

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory
        self._file: IO[bytes] | None = None
        self._fd = -1
        self._end = 0

    def _open(self) -> int:
        try:
            self._file = tempfile.TemporaryFile(dir=self._directory, prefix=".errcat-fold-")
        except OSError as e:
            raise OutputError(f"cannot make the fold's record store in {self._directory or tempfile.gettempdir()}: {e.strerror or e}") from None
        self._fd = self._file.fileno()
        return self._fd

    @property
    def size(self) -> int:
        """The bytes of the file (slots, with their room)."""
        return self._end

    @property
    def directory(self) -> Path | None:
        """Where the file is made (None: the system's temporary directory)."""
        return self._directory

    def put(self, data: bytes, slot: Slot | None = None, room: bool = True) -> Slot:
        """Keep ``data``, in ``slot`` (the same id's record before) when it fits there; the slot it
        is in. ``room`` False: a new slot of the data's size alone (data never written over)."""
        fd = self._fd if self._fd >= 0 else self._open()
        if slot is not None and len(data) <= slot.room:
            at, room_of = slot.at, slot.room
        else:
            at, room_of = self._end, len(data) + (len(data) // 4 if room else 0)
            self._end += room_of
        try:
            view = memoryview(data)
            where = at
            while view:
                wrote = os.pwrite(fd, view, where)
                view, where = view[wrote:], where + wrote
        except OSError as e:
            raise OutputError(f"cannot keep the fold's records in {self._directory or tempfile.gettempdir()}: {e.strerror or e}") from None
        return Slot(at, len(data), room_of)

    def get(self, slot: Slot) -> bytes:
        """The record in ``slot`` (b"" for a slot of no bytes: a record the store does not hold)."""
        if slot.size == 0:
            return b""
        data = os.pread(self._fd, slot.size, slot.at)
        if len(data) != slot.size:  # the file shortened under us (no one else holds it)
            raise OutputError("the fold's record store was cut short; nothing was written")
        return data

    def close(self) -> None:
        """Let go of the file (the kernel frees it)."""
        if self._file is not None:
            self._file.close()
            self._file, self._fd = None, -1
