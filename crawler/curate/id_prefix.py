"""The ID a ``curate`` command is given: a full entry id, or a unique prefix of one as
``errcat show`` takes (an ambiguous prefix is refused with its candidates)."""

from __future__ import annotations

import re
from pathlib import Path

from crawler.base.errors import UsageError
from crawler.curate.check import check_entry_id, curated_dir, datasets_under
from crawler.model.records import ID_PREFIX_RE, ID_RE

#: Candidates an ambiguous prefix lists.
_SHOWN = 10


def resolve_id(data: Path, root: Path, given: str) -> str:
    """``given`` itself when it is a full id; else the one id starting with it among the entries
    of the datasets under ``data`` and their curated files under ``root`` (an orphan's file is
    moved or retired by id, and its entry is gone from the dataset)."""
    if len(given) == 16 or not ID_PREFIX_RE.fullmatch(given):  # as errcat show takes them: 4 digits or more
        return check_entry_id(given)  # a full id, or one line saying what an id is
    found: set[str] = set()
    for ds in datasets_under(data):
        found.update(i for i in ds.by_id if i.startswith(given))
        found.update(p.stem for p in curated_dir(root, ds).glob(f"{given}*.yaml") if re.fullmatch(ID_RE, p.stem))
    if not found:
        raise UsageError(f"no entry or curated file starts with {given} under {data}")
    if len(found) > 1:
        ids = sorted(found)
        more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
        raise UsageError(f"{given} is ambiguous: {', '.join(ids[:_SHOWN])}{more}; give more digits")
    return found.pop()
