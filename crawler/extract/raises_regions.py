"""A test file's text with the top-level functions that cannot hold a raises block blanked out.

``codefacts.read_test_file`` walks only the functions one of whose lines says "aises" (the
others hold no block, and what they import is their own), yet parsing the whole file was most of
its cost: on vLLM v0.33.0 the 644 test files that say it are 14.6 MB, a fifth of it in the top-level
functions and classes that do. :func:`reduced` gives the text the parser then needs: every line
kept but those of each such top-level statement, emptied (so every line keeps its number and
every kept statement its positions).

A statement is cut out only where the text's own tokens say it starts: a line beginning in
column 0, not inside a string (every string and comment is found the way Python's tokenizer
reads them, bytes and prefixes alike: a backslash escapes the next character, a newline too),
not inside brackets, not after a line ending in a continuation backslash. What is blanked:

- a ``def`` / ``async def`` (with the decorators above it) none of whose lines says "aises": the
  walker does not enter it;
- a ``class`` none of whose lines says "aises" or "import": the walker reads a class body's
  imports as the module's, so a class that imports is kept.

Everything else (imports, ``if``/``try`` blocks, assignments, the rest) is kept as it is. The
reduced text parses to the same statements the walker reads in the whole text, so the blocks
are the same; when it does not parse, or its statements do not start where the cuts are, the
caller parses the whole text (the check in ``bench/test_prefilter.py`` reads every test file of a
tree both ways and compares). A file whose syntax errors all lie in blanked functions is read
for the blocks of the rest rather than refused whole.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

#: Every comment and string literal, read left to right as the tokenizer reads them (the prefix
#: letters change nothing of where a literal ends; an unterminated one matches nothing).
_LITERAL = re.compile(
    "|".join(
        (
            r"#[^\n]*",
            r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""',
            r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''",
            r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"',
            r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'",
        )
    ),
    re.S,
)
#: A line that begins in column 0 with something (after literals and comments are blanked).
_COLUMN0 = re.compile(r"^\S", re.M)
_DEF = re.compile(r"(?:async[ \t]+)?def\b")
_CLASS = re.compile(r"class\b")
_GOES_ON = re.compile(r"(?:else|elif|except|finally)\b")
_OPEN = "([{"
_CLOSE = ")]}"


def _literal_blank(m: re.Match[str]) -> str:
    """A string literal as its line structure: one character, then its line breaks, and a space
    so the rest of its last line never looks like the start of a statement; a comment as nothing."""
    text = m.group()
    if text[0] == "#":
        return ""
    breaks = text.count("\n")
    return "S" + "\n" * breaks + " " if breaks else "S"


def statement_lines(text: str) -> list[int]:
    """The 1-based numbers of the lines on which a top-level statement or a decorator starts,
    ascending (``else:``, ``elif``, ``except``, ``finally`` go on the statement before)."""
    code = _LITERAL.sub(_literal_blank, text)
    out = []
    depth, pos, line = 0, 0, 1
    count = code.count
    for m in _COLUMN0.finditer(code):
        at = m.start()
        depth += sum(count(c, pos, at) for c in _OPEN) - sum(count(c, pos, at) for c in _CLOSE)
        line += count("\n", pos, at)
        pos = at
        if depth != 0 or _GOES_ON.match(code, at):
            continue
        end = at - 1  # the "\n" that ends the line before
        if end > 0 and code[end - 1] == "\r":
            end -= 1
        if end > 0 and code[end - 1] == "\\":
            continue  # a continuation line
        out.append(line)
    return out


def reduced(text: str, named: list[int], imports: list[int]) -> tuple[str, set[int]] | None:
    """(the text with every top-level function and class that cannot hold a block emptied, the
    numbers of the lines where the kept statements start) or None when nothing is blanked or the
    text is not one this reads (a form feed or vertical tab, which the tokenizer reads as
    indentation of their own; a lone carriage return, which ends a line for the parser only).

    ``named``, ``imports``: the ascending numbers of the lines that say "aises", "import" (in
    the text as the parser reads its identifiers, NFKC, whose lines are the text's)."""
    if "\f" in text or "\v" in text or re.search("\r(?!\n)", text):
        return None
    starts = statement_lines(text)
    lines = text.split("\n")
    total = len(lines)
    kinds = []
    for n in starts:
        head = lines[n - 1]
        kinds.append("@" if head.startswith("@") else "def" if _DEF.match(head) else "class" if _CLASS.match(head) else "")
    blank: list[tuple[int, int]] = []
    kept: set[int] = set()
    i = 0
    while i < len(starts):
        j = i
        while j < len(starts) and kinds[j] == "@":
            j += 1  # decorators go with what they decorate
        if j == len(starts) or kinds[j] not in ("def", "class"):
            kept.update(starts[i : j + 1])
            i = j + 1
            continue
        first, last = starts[i], (starts[j + 1] - 1 if j + 1 < len(starts) else total)
        if _on(named, first, last) or (kinds[j] == "class" and _on(imports, first, last)):
            kept.update(starts[i : j + 1])
        else:
            blank.append((first, last))
        i = j + 1
    if not blank:
        return None
    for first, last in blank:
        lines[first - 1 : last] = [""] * (last - first + 1)
    return "\n".join(lines), kept


def _on(found: list[int], first: int, last: int) -> bool:
    k = bisect_left(found, first)
    return k < len(found) and found[k] <= last


def starts_agree(tree: ast.Module, kept: set[int]) -> bool:
    """Whether the reduced text's top-level statements (and decorators) start on exactly the
    kept lines where statements were taken to start: the cuts are where the parser too sees
    statements begin."""
    found: set[int] = set()
    for stmt in tree.body:
        found.update(d.lineno for d in getattr(stmt, "decorator_list", ()))
        found.add(stmt.lineno)
    return found == kept
