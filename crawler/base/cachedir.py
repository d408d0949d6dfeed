"""The user's cache directory, and setting a damaged cache entry aside."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from platformdirs import user_cache_dir


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


def keep(path: Path, data: bytes) -> bool:
    """Write a cache file atomically (a reader sees the whole file or the previous one); a refused
    write (a read-only or full file system) is no error, and leaves nothing behind: False. The
    clean-up too may be refused: on a read-only mount even removing a file that is not there
    fails (``EROFS``), so it is not allowed to raise either."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
