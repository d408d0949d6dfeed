"""Where a repository's files live on disk: ``<root>/<owner>/<name>``, for its dataset under the
output root and its curated explanations under the curated root alike."""

from __future__ import annotations

from pathlib import Path

from crawler.base.errors import UsageError
from crawler.model.records import identity_problem


def dataset_dir(root: Path, owner: str, name: str) -> Path:
    """``<root>/<owner>/<name>``. A write or a swap there replaces that directory and nothing
    else, so only a GitHub identity passes (``acme/.`` would be ``<root>/acme``, ``./.`` the root
    itself); the refusal quotes the identity ``ascii``-escaped and cut short."""
    problem = identity_problem(owner, name)
    if problem is not None:
        raise UsageError(f"no dataset directory for {ascii(owner[:80])}/{ascii(name[:80])}: {problem}")
    return root / owner / name
