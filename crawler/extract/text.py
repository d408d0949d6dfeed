"""Source text helpers: decode bytes like Python does, split lines like the parser, slice nodes.

ast positions are 1-based lines and *UTF-8 byte* columns; :meth:`Source.segment` honours that
while keeping the common all-ASCII line on a plain ``str`` slice.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

_NEWLINE = re.compile(r"\r\n|\r|\n")


def decode_source(data: bytes) -> str:
    """Decode a Python file's bytes: BOM / PEP 263 coding cookie, UTF-8 by default.

    Raises SyntaxError for an unknown/bad cookie, UnicodeDecodeError for undecodable bytes.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise
    except UnicodeError:  # a codec that decodes nothing ("undefined") or fails otherwise, as Python's own parser refuses it
        raise SyntaxError(f"encoding problem: {encoding}") from None


def module_name(path: str) -> tuple[str, bool]:
    """``vllm/config/attention.py`` -> (``vllm.config.attention``, False); packages -> True."""
    p = path[4:] if path.startswith("src/") else path
    for suffix in (".py", ".pyi"):
        if p.endswith(suffix):
            p = p[: -len(suffix)]
            break
    parts = [s for s in p.split("/") if s]
    is_package = bool(parts) and parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


class Source:
    """A file's text with its lines, split on first use: a file none of whose code is looked at
    (no raise, no guard on the way to one) never pays for the split."""

    __slots__ = ("text", "_lines")

    def __init__(self, text: str):
        self.text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            text = self.text
            # str.split is five times the regex's speed; without a "\r" the two agree
            self._lines = text.split("\n") if "\r" not in text else _NEWLINE.split(text)
        return self._lines

    def _cut(self, lineno: int, start: int | None, end: int | None) -> str:
        line = self.lines[lineno - 1]
        if line.isascii():
            return line[start:end]
        return line.encode("utf-8")[start:end].decode("utf-8", "replace")

    def segment(self, node: ast.expr | ast.stmt) -> str:
        """Source text of an expression/statement node (positions as the stdlib ast gives them)."""
        l0, l1 = node.lineno, node.end_lineno
        if l1 is None:  # only a node built by hand lacks it; ast.parse sets every position
            raise ValueError(f"a {type(node).__name__} node without an end position")
        if l0 == l1:
            return self._cut(l0, node.col_offset, node.end_col_offset)
        first = self._cut(l0, node.col_offset, None)
        last = self._cut(l1, None, node.end_col_offset)
        return "\n".join([first, *self.lines[l0 : l1 - 1], last])

    def span(self, start: int, end: int) -> str:
        """Whole lines ``start..end`` (1-based, inclusive)."""
        return "\n".join(self.lines[start - 1 : end])
