"""The user's cache directory, and setting a damaged cache entry aside."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


def keep(path: Path, data: bytes) -> bool:
    """Write a cache file atomically (:func:`files.write_file`); a refused write (a read-only or
    full file system) is no error: False, and the file is as it was."""
    try:
        write_file(path, data)
    except OutputError:
        return False
    return True
