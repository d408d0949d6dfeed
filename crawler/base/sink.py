"""Text on its way to where people read it: a terminal, a CI log, a JSON stream, Markdown.

Everything errcat prints can quote a crawled repository or a dataset, and both are hostile. A
message can hold escape sequences that act on a terminal (clear the screen, set the window title,
write the clipboard with OSC 52, forge an OSC 8 hyperlink), a bare CR that overprints what came
before, Unicode bidi controls that reorder what a reader sees (Trojan Source), or a line a CI
runner takes as a command: GitHub Actions runs ``::add-mask::``, ``::stop-commands::``,
``::error ...::`` at the start of a line (after leading white space) and ``##[command]``
anywhere in one; Azure Pipelines runs ``##vso[...]`` anywhere in one.

So everything errcat prints goes out through ``echo``, as whole lines, in one of three kinds
(``KINDS``); files meant for people or tools (a changelog, a diff report) go through the same
functions:

* ``terminal`` (every line, the default): controls, bidi controls, line separators and lone
  surrogates are shown escaped (``\\x1b``, ``\\r``, ``\\u202e``), never sent; a line that would
  start with ``::`` shows its first colon as ``\\x3a``, and ``##[``/``##vso[`` show their first
  ``#`` as ``\\x23``. Backslashes are left alone: the escapes are for reading, not reversing.
* ``commands`` (the workflow commands errcat itself writes, ``diff --format github``): the same,
  except that each line's leading ``::`` is errcat's own; their data and properties are escaped
  by ``command_data``/``command_property`` as the runner unescapes them.
* ``json_text`` (JSON printed or written for tools): the same characters as JSON ``\\u``
  escapes, so the parsed value is unchanged.

And for the places crawled text is put into a format: ``md_code``/``md_link`` (the Markdown
changelog, a pull request body: crawled text only ever in a code span, so no markup, HTML,
links, @mentions or #references) and ``output_lines`` (``$GITHUB_OUTPUT``: nothing that could
start another line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import IO
from urllib.parse import quote

import click

from crawler.base.errors import DataError

# What could act or hide: C0 controls but tab and (where lines are kept) newline, DEL, C1
# controls (U+009B is CSI on 8-bit terminals, U+0085 a line break), the bidi controls that
# reorder text (U+061C, U+200E-200F, U+202A-202E, U+2066-2069), the line and paragraph
# separators (lines for some readers and not others), and lone surrogates (unprintable as UTF-8).
#: The bidi controls (a character class body): what a reader of YAML or Markdown sees reordered.
BIDI_CHARS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_HIDDEN = f"\x7f-\x9f{BIDI_CHARS}\u2028\u2029\ud800-\udfff"
_ACTIVE_LINE = re.compile(f"[\x00-\x08\x0a-\x1f{_HIDDEN}]")
_ACTIVE_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_HIDDEN}]")
# Inside JSON strings (tab, newline and CR outside them are the document's own layout).
_ACTIVE_JSON = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_HIDDEN}]")
BIDI = re.compile(f"[{BIDI_CHARS}]")
# The first '#' of '##[' (GitHub's older command form) and '##vso[' (Azure), found anywhere.
_CI_MARKER = re.compile(r"#(?=#(?:\[|vso\[))", re.IGNORECASE)
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def visible(text: str, newlines: bool = False) -> str:
    """``text`` with every character that could act or hide shown as an escape; newlines kept
    when ``newlines``."""
    return (_ACTIVE_LINES if newlines else _ACTIVE_LINE).sub(_escape, text)


def _not_a_command(line: str, own_prefix: bool = False) -> str:
    body = line.lstrip()  # the runner trims Unicode white space before looking for '::'
    if body.startswith("::") and not own_prefix:
        at = len(line) - len(body)
        line = f"{line[:at]}\\x3a{line[at + 1 :]}"
    return _CI_MARKER.sub(r"\\x23", line)


def _lines(text: str, own_prefix: bool) -> str:
    return "\n".join(_not_a_command(line, own_prefix) for line in visible(text, newlines=True).split("\n"))


def terminal(text: str) -> str:
    """Lines for a terminal or a CI log: nothing acts, no line is a runner command."""
    return _lines(text, own_prefix=False)


def commands(text: str) -> str:
    """Workflow commands errcat wrote (``diff --format github``): as ``terminal``, except that
    each line's leading ``::`` is errcat's own."""
    return _lines(text, own_prefix=True)


def json_text(text: str) -> str:
    """JSON text with the same value, whose bytes neither act on a terminal nor command a runner.

    Valid for any JSON document: the characters replaced can only occur inside strings there."""
    text = _ACTIVE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _CI_MARKER.sub(r"\\u0023", text)


#: What each kind of output goes through.
KINDS = {"lines": terminal, "commands": commands, "json": json_text}


def echo(text: str = "", *, err: bool = False, nl: bool = True, kind: str = "lines") -> None:
    """Print text that may quote crawled or dataset text: the one way errcat prints."""
    click.echo(KINDS[kind](text), err=err, nl=nl)


# --------------------------------------------------------------------------- styled pages

#: A line of a styled page: spans of (style name, text); the empty style is the terminal's own.
StyledLine = Sequence[tuple[str, str]]
RESET = "\x1b[0m"


def _merged(line: StyledLine) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for style, text in line:
        if text and out and out[-1][0] == style:
            out[-1] = (style, out[-1][1] + text)
        elif text:
            out.append((style, text))
    return out


def styled(lines: Iterable[StyledLine], styles: Mapping[str, str] | None) -> str:
    """A page of styled lines as text: plain (``styles`` None) as ``terminal`` makes it, or each
    span made inert by ``terminal`` and then put in its SGR code (``styles``: style -> SGR
    parameters), so the page's own colours are the only escapes in it. Spans of one style are
    merged first: a CI marker split over two spans (``#`` + ``#[``) has a code between its halves."""
    out = []
    for line in lines:
        if styles is None:
            out.append(terminal("".join(text for _, text in line)))
        else:
            out.append("".join(f"\x1b[{styles[style]}m{terminal(text)}{RESET}" if style else terminal(text) for style, text in _merged(line)))
    return "\n".join(out) + "\n"


def echo_styled(lines: Iterable[StyledLine], styles: Mapping[str, str] | None, to: IO[bytes] | None = None) -> None:
    """Print a styled page (``styled``) to stdout, or to ``to`` (a pager's stdin)."""
    text = styled(lines, styles)
    if to is None:
        click.echo(text, nl=False, color=styles is not None)
    else:
        to.write(text.encode("utf-8", errors="replace"))


# --------------------------------------------------------------------------- workflow commands


def command_data(text: str) -> str:
    """A workflow command's message: visible, then escaped as the runner unescapes it."""
    return visible(text, newlines=True).replace("%", "%25").replace("\n", "%0A")


def command_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``)."""
    return command_data(text).replace(":", "%3A").replace(",", "%2C")


_OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def output_lines(pairs: Iterable[tuple[str, str]]) -> str:
    """``name=value`` lines for ``$GITHUB_OUTPUT``; a value that could start a line of its own
    (or a heredoc) is refused, not written."""
    out = []
    for name, value in pairs:
        if not _OUTPUT_NAME.fullmatch(name) or _ACTIVE_LINE.search(value):
            raise DataError(f"refusing to write {visible(name)}={visible(value)} to $GITHUB_OUTPUT")
        out.append(f"{name}={value}\n")
    return "".join(out)


# --------------------------------------------------------------------------- markdown


def single_line(text: str) -> str:
    return " ".join(text.split())


def md_code(text: str) -> str:
    """Crawled text in Markdown: one inline code span (no markup, HTML, links, @mentions or
    #references), visible, with a backtick fence longer than any run inside."""
    text = visible(single_line(text))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_url(url: str) -> str | None:
    """A link destination for ``[text](<...>)``: https only, one line, nothing that ends it early
    (``<``, ``>``, backslash, spaces and controls percent-encoded), no ``[`` a runner could read
    as ``##[``. None when not https."""
    if not url.startswith("https://"):
        return None
    return quote(url, safe="/:?#@!$&'()*+,;=%-._~")


def md_link(text: str, url: str | None) -> str:
    """``text`` as a code span, linked when ``url`` is https (a record may have no permalink)."""
    target = md_url(url) if url else None
    return f"[{md_code(text)}](<{target}>)" if target else md_code(text)
