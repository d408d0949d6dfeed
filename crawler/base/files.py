"""Writing one file atomically: the bytes go to a hidden sibling renamed over the path, so a
reader sees the old file or the whole new one."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from crawler.base.errors import OutputError

#: What every temporary name errcat makes holds (``.<name>.tmp-<random>``), so a stray left by a
#: killed run is known for one.
TMP_MARK = ".tmp-"


def mkdirs(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where the directory should be: say that, not "File exists"
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory)) from None


def write_file(path: Path, data: bytes) -> None:
    """Replace one file atomically (a report, a changelog, a curated file): the bytes go to a
    hidden sibling that is renamed over ``path``, so ``path`` is the old file or the whole new
    one, and a symlink at ``path`` is replaced, never written through. What the system refuses
    is one line, and the old file is as it was."""
    made: Path | None = None
    try:
        mkdirs(path.parent)
        tmp = path.parent / f".{path.name}{TMP_MARK}{os.urandom(6).hex()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        made = tmp
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as e:
        if made is not None:
            made.unlink(missing_ok=True)
        if not isinstance(e, OSError):
            raise
        where = f" ({e.filename})" if e.filename and os.fsdecode(e.filename) != str(path) else ""
        raise OutputError(f"cannot write {path}: {e.strerror or e}{where}; it is as it was") from None
