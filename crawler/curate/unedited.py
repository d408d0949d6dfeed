"""Whether a draft's text is still the drafter's: a machine-written text nobody rewrote is never
labelled reviewed ("curated") unless a person says they read it and accept it as is."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from crawler.curate.from_facts import draft_from_facts
from crawler.model.records import CuratedFile


def sections_digest(entry: CuratedFile) -> str:
    """SHA-256 of the text a reader sees (every section and the see-also ids): comments, layout
    and the review block are not the text, so editing only those leaves it the drafter's."""
    sections = entry.model_dump(mode="json", exclude={"id", "review"}, exclude_none=True)
    return hashlib.sha256(json.dumps(sections, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def stamped(entry: CuratedFile) -> CuratedFile:
    """``entry`` as a drafter writes it: its review remembers the digest of the text written."""
    return entry.model_copy(update={"review": entry.review.model_copy(update={"drafted": sections_digest(entry)})})


def unedited(entry: CuratedFile, record: dict[str, Any], commit: str) -> str | None:
    """Who wrote ``entry``'s draft text when nobody has edited it since (the model, or "errcat
    curate draft" for a draft from the facts), else None. A draft written without a digest is
    compared with the draft the facts give today."""
    if entry.review.status != "draft":
        return None
    who = f"the model {entry.review.model}" if entry.review.model else "errcat curate draft"
    if entry.review.drafted is not None:
        return who if sections_digest(entry) == entry.review.drafted else None
    if entry.review.model is not None:
        return None  # a model's text without a digest cannot be told from a person's edit of it
    return who if sections_digest(entry) == sections_digest(draft_from_facts(record, commit)) else None
