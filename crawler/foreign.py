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
    """The foreign list under a curated dataset directory (None if it has none); CuratedError
    naming the file and line of the first problem (strict YAML: no duplicate keys, no tags)."""
    import yaml
    from pydantic import ValidationError

    from .curated import CuratedError, _line_of, parse_yaml, read_bytes
    from .models import ForeignList

    path = directory / CURATED
    if not path.is_file():
        return None
    try:
        data, node = parse_yaml(read_bytes(path).decode("utf-8"))
        return ForeignList.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"]))
        raise CuratedError([f"{path}:{_line_of(node, err['loc'])}: {where + ': ' if where else ''}{err['msg']}"]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise CuratedError([f"{path}:{mark.line + 1 if mark else 1}: {exc.problem or exc.context}"]) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CuratedError([f"{path}:1: cannot read: {exc}"]) from None


def load(dataset: Path) -> list[Any]:
    """The dataset's foreign errors, validated like its other documents ([] when it has none);
    DataError naming the file when it is not a valid list."""
    from .dataset import _parse, _read
    from .models import ForeignList

    path = dataset / FILE
    if not path.is_file():
        return []
    return _parse(ForeignList, _read(path), str(path), "foreign error list").errors


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
