"""One record laid out as a catalogue page for the terminal (``errcat show``).

The page is built as lines of styled spans, ``(style, text)``, and only then written out by
``sink.styled``: plain (piped, ``--color=never``, ``NO_COLOR``), or with SGR colours (a
terminal, ``--color=always``), every span's text made inert before a colour code is put around
it.

What the page shows, and in what order, is ``page_model``'s (the site's pages render the same
model); this module only says how each block looks on a terminal.
"""

from __future__ import annotations

from typing import Any

from crawler.base.sink import styled
from crawler.consume.history_page import Others, Piece
from crawler.consume.page_model import Block, Bullets, Code, Context, Evidence, Items, Links, Markdown, Rows, Section, build, status_word
from crawler.consume.page_model import Line as LineBlock

Span = tuple[str, str]
Line = list[Span]

#: SGR parameters per style; the empty style is the terminal's own.
STYLES = {
    "title": "1",
    "heading": "1;33",
    "rule": "2",
    "label": "36",
    "exception": "1;31",
    "id": "33",
    "where": "35",
    "link": "34",
    "gutter": "2",
    "hit": "1",
    "muted": "2",
    "derived": "2;3",
}


class Page:
    def __init__(self) -> None:
        self.lines: list[Line] = []

    def line(self, *spans: Span | str) -> None:
        self.lines.append([("", s) if isinstance(s, str) else s for s in spans])

    def blank(self) -> None:
        self.lines.append([])

    def section(self, title: str) -> None:
        self.blank()
        self.line(("heading", title))
        self.line(("rule", "-" * len(title)))

    def code(self, code: str, start: int | None = None, hit: tuple[int, int] | None = None, indent: str = "    ") -> None:
        # Snippets end lines at newlines only (as Python does): a form feed or U+2028 is not a line.
        lines = code.split("\n")
        if lines[-1] == "":
            lines.pop()
        if start is None:
            for text in lines:
                self.line(indent + text)
            return
        width = len(str(start + len(lines)))
        for i, text in enumerate(lines):
            n = start + i
            style = "hit" if hit and hit[0] <= n <= hit[1] else ""
            self.line(("gutter", f"  {n:>{width}} | "), (style, text))


#: A piece's style on the terminal (page_model's piece kinds).
_PIECE_STYLE = {
    "code": "",
    "exception": "exception",
    "entry": "id",
    "id": "id",
    "derived": "derived",
    "muted": "muted",
    "link": "link",
    "text": "",
    "prose": "",
}


def _spans(pieces: list[Piece], code_style: str = "") -> list[Span]:
    out: list[Span] = []
    for kind, text in pieces:
        if kind == "status":
            continue
        if kind == "arrow":
            out.append(("", " -> "))
        else:
            out.append((code_style if kind == "code" else _PIECE_STYLE.get(kind, ""), text))
    return out


def _lines(pieces: list[Piece]) -> list[list[Piece]]:
    """A line's pieces, broken where " — " stands (a link after a place goes on a line of its own)."""
    out: list[list[Piece]] = [[]]
    for piece in pieces:
        if piece == ("text", " — "):
            out.append([])
        else:
            out[-1].append(piece)
    return out


def _block(page: Page, section: Section, block: Block) -> None:
    if isinstance(block, Rows):
        summary = block.style == "summary"
        for label, pieces in block.rows:
            where = "where" if label == "Moved" else ""
            if summary:
                page.line(("label", f"{label}:"), " " * max(1, 11 - len(label)), *_spans(status_word(pieces)))
            else:
                page.line("  ", ("label", f"{label}:"), " ", *_spans(pieces, where))
    elif isinstance(block, LineBlock):
        first = True
        for part in _lines(block.pieces):
            if section.key == "source" and first:
                page.line(*_spans(part, "where"))
            elif section.key == "source":
                page.line(*_spans(part))
            elif section.key == "reproductions":
                page.line("  ", *_spans(part, "where"))
            elif block.style == "inherited":
                page.blank()
                page.line(*(("id" if k == "entry" else "derived", t) for k, t in part))
            else:
                page.line("  ", *_spans(part))
            first = False
        if section.key == "source":
            page.blank()
    elif isinstance(block, Links):
        for label, url in block.links:
            page.line("  ", ("label", f"{label}:"), " ", ("link", url))
    elif isinstance(block, Markdown):
        page.line(("", f"  {block.text}" if section.key == "when-it-happens" else block.text))
    elif isinstance(block, Bullets):
        for text in block.items:
            page.line(f"  - {text}")
    elif isinstance(block, Items):
        for n, item in enumerate(block.items):
            link = block.links[n] if block.links else None
            if link and link[0] == "entry":  # another entry: its id first, as the terminal names entries
                page.line("  ", ("id", link[1]), "  ", *_spans(item))
            else:
                page.line("  ", *_spans(item, "" if block.style == "code" else "where"))
    elif isinstance(block, Code):
        if block.label:
            page.line("  ", ("label", f"{block.label}:"))
        if block.language == "message":
            page.code(block.code or "(no message)")
        else:
            page.code(block.code, block.start, block.hit)
    elif isinstance(block, Evidence):
        page.line(("label", "Reported in:"))
        for url, title, quote, number in block.items:
            # a curated report need not have a title: its issue number names it then
            page.line("  - ", title or (number if url.count("/") >= 6 else url))
            page.line("    ", ("link", url))
            if quote:
                page.line("    ", ("muted", "> "), quote)


def layout(data: dict[str, Any], others: Others | None = None, digests: frozenset[str] = frozenset()) -> list[Line]:
    """The page of one record, given as its JSON data (``Record.model_dump(mode="json")``), as
    ``page_model`` lays it out; ``others``: the records its history names that the caller could
    read (see ``history_page``); ``digests``: commits that are a wheel's files digest."""
    model = build(data, Context(others, digests))
    page = Page()
    page.line(("title", model.title))
    page.line(("rule", "=" * min(len(model.title), 80)))
    page.blank()
    for section in model.sections:
        if section.title is not None:
            page.section(section.title)
        elif section.key != "summary" and section.key != "inherited":
            page.blank()
        for block in section.blocks:
            _block(page, section, block)
    return page.lines


def render_text(data: dict[str, Any], color: bool = False, others: Others | None = None, digests: frozenset[str] = frozenset()) -> str:
    """The page as text for a terminal: every dataset string inert, coloured when ``color``."""
    return styled(layout(data, others, digests), STYLES if color else None)
