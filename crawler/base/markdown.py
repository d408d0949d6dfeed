"""How curated Markdown is parsed, wherever it is read: the site renders it (``consume.site_markdown``)
and the drafter checks a machine draft's links (``curate.links``) with the very same parse.

markdown-it-py (a CommonMark parser) with raw HTML off (``<script>`` stays text), no linkify (a
bare address is not a link), images off (the pages' CSP loads nothing from elsewhere anyway) and
links kept only when they are https or relative (``javascript:``, ``data:``, ``//host`` and every
other scheme stay text).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def safe_link(url: str) -> bool:
    """A link curated text may carry: https, or relative to the page (no scheme, no ``//host``)."""
    url = url.strip()
    if url.lower().startswith("https://"):
        return True
    return not _SCHEME.match(url) and not url.startswith(("//", "\\\\", "/\\", "\\/"))


def markdown_parser(highlight: Any = None) -> MarkdownIt:
    """A new parser with curated Markdown's settings; ``highlight`` renders fenced code."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": highlight})
    md.disable("image")
    md.validateLink = safe_link  # type: ignore[method-assign]
    return md


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return markdown_parser()


def links(text: str) -> list[str]:
    """Every link the parse makes of ``text`` (inline, reference, autolink; entities decoded and
    the address normalised as a page shows it): what a page renders live."""
    found: list[str] = []
    stack = list(_parser().parse(text))
    while stack:
        token = stack.pop()
        if token.type == "link_open":
            found.append(str(token.attrGet("href") or ""))
        stack.extend(token.children or ())
    return found
