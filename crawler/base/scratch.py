"""Scratch space that outlives no run: where diff, history and sync crawl their throwaway datasets.

Each run works in its own directory, ``<cache>/scratch/run-*``, and holds an flock on it while
it lives. The kernel drops the lock when the process ends, however it ends (SIGKILL, the OOM
killer), so a directory whose lock is free belongs to no live run: every run (a crawl too)
removes those first, as a crawl removes the hidden siblings a killed crawl left next to its
dataset (``writer.recover``). A killed run's scratch holds whole datasets (or a partly downloaded
wheel); under ``$TMPDIR`` nothing would ever take it away.

A sweep and the creation of a directory both hold the lock of ``scratch/`` itself, so a sweep
never sees a directory between its creation and its lock. Processes forked while a run lives
(extraction workers, the dataset writer's helper) close their copy of the descriptor: a worker
that outlived its killed parent would otherwise keep the lock, and the directory, alive.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crawler.base.errors import OutputError

ROOT = "scratch"
PREFIX = "run-"

_held: set[int] = set()  # descriptors holding this process's run locks


def _close_held() -> None:
    for fd in _held:
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()


os.register_at_fork(after_in_child=_close_held)


@contextmanager
def _locked(directory: Path, *, wait: bool = True) -> Iterator[int | None]:
    """An exclusive flock on ``directory`` (the descriptor), or None when ``wait`` is off and it
    is taken. A symlink is never followed."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield None
            return
        yield fd
    finally:
        os.close(fd)


def _sweep(root: Path) -> None:
    """Remove the run directories under ``root`` whose lock is free; the caller holds ``root``'s lock."""
    for entry in sorted(root.glob(PREFIX + "*")):
        try:
            with _locked(entry, wait=False) as fd:
                if fd is not None:  # else a live run's
                    shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue  # not a directory, or gone meanwhile


def sweep(cache_root: Path) -> None:
    """Remove what killed runs left under ``cache_root``; best effort (a crawl calls it on its way)."""
    root = cache_root / ROOT
    try:
        with _locked(root):
            _sweep(root)
    except OSError:
        pass  # no scratch yet, or none this user may touch


@contextmanager
def run_dir(cache_root: Path) -> Iterator[Path]:
    """A fresh directory under ``cache_root/scratch``, locked while the block runs, then removed.
    Leftovers of killed runs are removed first."""
    root = cache_root / ROOT
    try:
        root.mkdir(parents=True, exist_ok=True)
        with _locked(root):
            _sweep(root)
            path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root))
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            fcntl.flock(fd, fcntl.LOCK_EX)
            _held.add(fd)
    except OSError as e:
        raise OutputError(f"cannot make a scratch directory under {root}: {e.strerror or e}") from None
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _held.discard(fd)
        os.close(fd)
