"""Which of a dataset's foreign errors (errors the project does not raise: torch's, CUDA's, ...;
``catalogue/foreign_list.py`` reads the curated list, the crawl writes it as ``foreign.json``) a paste holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ForeignHit:
    error: Any  # ForeignError
    message: str  # the reading it was found in ("" when only the whole paste holds it)
    project: str = ""  # OWNER/NAME of the dataset whose list has it: the project that does not raise it
    messages: tuple[str, ...] = ()  # every reading it was found in

    def as_dict(self) -> dict[str, Any]:
        e = self.error
        return {
            "name": e.name,
            "origin": e.origin,
            "explanation": e.explanation,
            "check": list(e.check),
            "urls": list(e.urls),
            "message": self.message,
            "project": self.project,
        }


def found_in(pieces: list[str], text: str) -> bool:
    """Every piece occurs in text, in order: one ``str.find`` per piece."""
    pos = 0
    for piece in pieces:
        i = text.find(piece, pos)
        if i < 0:
            return False
        pos = i + len(piece)
    return True


def foreign_hits(text: str, messages: list[str], matchers: list[Any]) -> list[ForeignHit]:
    """The foreign errors of the matchers' datasets that the paste holds, each with the readings
    (messages) it is found in; one per error, in the list's order."""
    from crawler.consume.paste import clean

    cleaned = None
    hits: list[ForeignHit] = []
    seen: set[str] = set()
    for matcher in matchers:
        for error in matcher.foreign:
            if error.name in seen:
                continue
            inside = [m for m in messages if found_in(error.match, m)]
            if not inside:
                cleaned = clean(text) if cleaned is None else cleaned
                if not found_in(error.match, cleaned):
                    continue
            seen.add(error.name)
            hits.append(ForeignHit(error, inside[0] if inside else "", matcher.repo, tuple(inside)))
    return hits
