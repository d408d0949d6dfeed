"""A template's literal and field segments, and the fragments and words matching and search read of them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from crawler.extract.templates import parts_from_template

WORD = re.compile(r"\w+")


Segment = tuple[str, str | None]  # ("lit", text) or ("var", None)


def template_segments(template: Mapping[str, Any]) -> list[Segment]:
    """The template as alternating literal runs and variable parts.

    These are exactly the literal runs of the template's ``pattern``, which is built from the
    same parts (literals escaped, each field ``.*?``); tests/test_match.py checks the two agree
    by parsing patterns, which the crawl never needs to do.
    """
    return template_segments_of(parts_from_template(template))


def template_segments_of(parts: list[Any]) -> list[Segment]:
    """Alternating literal runs and variable parts of a template's parts."""
    out: list[Segment] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                out.append(("lit", part))
        elif not out or out[-1][0] != "var":
            out.append(("var", None))
    return out


def fragments(segs: list[Segment]) -> list[str]:
    return [text for kind, text in segs if kind == "lit" and text]


def anchor_tokens(segs: list[Segment]) -> list[str]:
    """Words of the literal text that are whole words in every matching message.

    A word touching a field (``{prefix}foo``) may run into the field's value, so it is left out.
    """
    tokens: list[str] = []
    for i, (kind, text) in enumerate(segs):
        if kind != "lit" or not text:
            continue
        words = WORD.findall(text)
        if words and i > 0 and segs[i - 1][0] == "var" and WORD.match(text):  # the first word starts the text
            del words[0]
        if words and i + 1 < len(segs) and segs[i + 1][0] == "var" and WORD.fullmatch(text, len(text) - 1):
            del words[-1]  # the last word ends it
        tokens += words
    return tokens


def search_tokens(*texts: str) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for word in WORD.findall(text.lower()):
            if len(word) > 1 or word.isdigit():
                seen.setdefault(word, None)
    return list(seen)
