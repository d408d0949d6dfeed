"""Finding datasets under a directory, without the models: ``errcat match`` starts here, and
must not pay for importing pydantic before it knows it needs to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from crawler.base.dataset_files import MANIFEST
from crawler.base.errors import DataError, ErrcatError, UsageError

T = TypeVar("T")


def find_datasets(root: Path) -> list[Path]:
    """Dataset directories under root (root itself when it holds a manifest); hidden ones skipped."""
    if (root / MANIFEST).is_file():
        return [root]
    return [m.parent for m in sorted(root.rglob(MANIFEST)) if not any(part.startswith(".") for part in m.relative_to(root).parts)]


def datasets_under(root: Path) -> list[Path]:
    """``find_datasets``, refusing a missing directory or one with no dataset (``UsageError``)."""
    if not root.is_dir():
        raise UsageError(
            f"no such directory: {root}: no catalogue there; make one with `errcat crawl` "
            "(it writes under the same place), or name one with --data DIR or $ERRCAT_HOME"
        )
    found = find_datasets(root)
    if not found:
        raise UsageError(f"no dataset ({MANIFEST}) under {root}: make one with `errcat crawl`, or name one with --data DIR or $ERRCAT_HOME")
    return found


def each_readable(root: Path, open_one: Callable[[Path], T], report: Callable[[str], None]) -> list[T]:
    """``open_one`` of every dataset under ``root``, skipping those it cannot read: a folder of
    many datasets answers from the good ones, and says in one line for each skipped one why.
    A single dataset that cannot be read is refused with its own error, as when named alone;
    when every one of several is skipped, a ``DataError`` says so in one line."""
    found = datasets_under(root)
    if len(found) == 1:
        return [open_one(found[0])]
    opened: list[T] = []
    for dataset in found:
        try:
            opened.append(open_one(dataset))
        except ErrcatError as e:
            report(f"skipped a dataset that cannot be read: {e}")
    if not opened:
        raise DataError(f"none of the {len(found)} datasets under {root} can be read (each is named above)")
    return opened
