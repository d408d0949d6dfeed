"""The review block of a curated file: what the text was written for, read from a record."""

from __future__ import annotations

from typing import Any

from crawler.model.kinds import exception_word
from crawler.model.records import CuratedReview


def review_for(record: dict[str, Any], commit: str, status: str, note: str | None = None) -> CuratedReview:
    return CuratedReview(
        status=status,
        commit=commit,
        exception=exception_word(record),
        template=record["message"]["text"],
        guards=list(record["sites"][0]["facts"]["guards"]),
        path=record["location"]["path"],
        qualname=record["location"]["qualname"],
        note=note,
    )
