"""Finding datasets under a directory, without the models: ``errcat match`` starts here, and
must not pay for importing pydantic before it knows it needs to."""

from __future__ import annotations

from pathlib import Path

from crawler.base.errors import UsageError

MANIFEST = "manifest.json"


def find_datasets(root: Path) -> list[Path]:
    """Dataset directories under root (root itself when it holds a manifest); hidden ones skipped."""
    if (root / MANIFEST).is_file():
        return [root]
    return [m.parent for m in sorted(root.rglob(MANIFEST))
            if not any(part.startswith(".") for part in m.relative_to(root).parts)]


def datasets_under(root: Path) -> list[Path]:
    """``find_datasets``, refusing a missing directory or one with no dataset (``UsageError``)."""
    if not root.is_dir():
        raise UsageError(f"no such directory: {root}")
    found = find_datasets(root)
    if not found:
        raise UsageError(f"no dataset ({MANIFEST}) under {root}; run `errcat crawl` first")
    return found
