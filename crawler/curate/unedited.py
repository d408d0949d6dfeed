"""Whether a draft's text is still the drafter's: a machine-written text nobody rewrote is never
labelled reviewed ("curated") unless a person says they read it and accept it as is."""

from __future__ import annotations

from typing import Any

from crawler.catalogue.explanations import accepted_draft, sections_digest, still_drafted
from crawler.curate.from_facts import draft_from_facts
from crawler.model.records import CuratedFile, CuratedReview


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
        return who if still_drafted(entry, entry.review.drafted) else None
    if entry.review.model is not None:
        return None  # a model's text without a digest cannot be told from a person's edit of it
    return who if sections_digest(entry) == sections_digest(draft_from_facts(record, commit)) else None


def keep_acceptance(entry: CuratedFile, review: CuratedReview) -> CuratedReview:
    """``review`` (a fresh one of a reviewed ``entry``) still saying the text is the machine draft
    a reviewer accepted as is, while the text is unedited since: a re-review for changed code, or a
    move, does not make it a person's text."""
    if accepted_draft(entry) is None:
        return review
    return review.model_copy(update={"accepted_as_is": True, "model": entry.review.model, "drafted": entry.review.drafted})
