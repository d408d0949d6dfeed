"""Errors the crawled project does not raise: ``curated/<owner>/<name>/foreign/errors.yaml``.

Users of vLLM paste torch's ``CUDA out of memory. Tried to allocate``, CUDA's ``illegal memory
access`` or transformers' ``does not recognize this architecture`` as often as vLLM's own errors.
The curated list says how to recognise each (literal text in order, never a regular expression:
the list is data, and the text it is tried on is whatever the user pasted) and what it usually
means there. The crawl validates it strictly and copies it into the dataset as ``foreign.json``;
``errcat match`` and the site answer "not raised by vLLM" with it instead of a wrong entry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE = "foreign.json"
CURATED = Path("foreign") / "errors.yaml"


@dataclass
class ForeignHit:
    error: Any  # ForeignError
    message: str  # the reading it was found in ("" when only the whole paste holds it)
    project: str = ""  # OWNER/NAME of the dataset whose list has it: the project that does not raise it
    messages: tuple[str, ...] = ()  # every reading it was found in

    def as_dict(self) -> dict[str, Any]:
        e = self.error
        return {"name": e.name, "origin": e.origin, "explanation": e.explanation, "check": list(e.check),
                "urls": list(e.urls), "message": self.message, "project": self.project}


def load_curated(directory: Path) -> Any:
    """The foreign list under a curated dataset directory (None if it has none); raises
    CuratedError naming the file and line of every problem."""
    import yaml
    from pydantic import ValidationError

    from .curated import CuratedError, parse_yaml
    from .models import ForeignList

    path = directory / CURATED
    if not path.is_file():
        return None
    try:
        data, _node = parse_yaml(path.read_text(encoding="utf-8"))
        return ForeignList.model_validate(data)
    except ValidationError as exc:
        raise CuratedError([f"{path}:1: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CuratedError([f"{path}:1: cannot read: {exc}"]) from None


def load(dataset: Path) -> list[Any]:
    """The dataset's foreign errors, validated ([] when it has none)."""
    from .models import ForeignList

    path = dataset / FILE
    if not path.is_file():
        return []
    return ForeignList.model_validate_json(path.read_bytes()).errors


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
    from .paste import clean

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
