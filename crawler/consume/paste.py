"""Reading a paste: what people copy out of a terminal or a log, turned into error candidates.

A paste is rarely a clean message. vLLM's logger puts ``(EngineCore_DP0 pid=2331) ERROR 11-30
10:01:02 [core.py:1021]`` before every line of a traceback; docker compose adds ``vllm-1  |``,
torchrun ``[rank0]:``, journald a date and host, rich a box border; Ray wraps the exception as
``RayTaskError(ValueError)``, argparse as ``vllm serve: error: argument --x: ...``, a V0 engine
logs ``ValueError('...')``; an issue or a chat wraps it all in Markdown (``> `` quotes, fences,
``**...**``). ``clean`` strips that Markdown and those line prefixes (each a bounded pattern tried
once per line, so the whole text is read in linear time) and ``candidates`` lists every
exception line in the cleaned text, the last first, as (exception, message) pairs, each alone
and with the lines that continue it. Matching them is ``match.py``'s job; which answer comes
first (root cause before umbrella) is ranking's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: White space as Python reads it (``str.isspace``, ``str.strip``, ``re``'s ``\s``), as the text
#: of a class: search.js's ``SPACE`` is this very text, and every white space the box reads is
#: it (ECMA-262's ``\s`` and ``trim()`` take \ufeff and leave \x1c-\x1f and \x85: a paste read
#: apart). tests/consume/test_search_parity.py holds both to ``str.isspace`` over every character.
SPACE = r"\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

# Each is anchored at a line start and made of bounded or possessive-free simple runs: tried
# once per line (re.match), so a line costs its own length at most a few times over.
_LINE_PREFIXES = [
    re.compile(r"[│|┃]\s?"),  # a box border (rich, docker logs pasted from a table)
    re.compile(r"[A-Za-z0-9_.-]{1,64}\s{1,8}\|\s?"),  # docker compose: "vllm-1  | "
    re.compile(r"\[rank[0-9]{1,6}\]:\s?"),  # torchrun
    re.compile(r"[A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] \S{1,64} [A-Za-z0-9_.-]{1,64}\[[0-9]{1,10}\]: "),  # journald
    # vLLM/Ray process tag, named or not, with a product's own tags before the pid:
    # "(EngineCore_DP0 pid=42) ", "(pid=1234, ip=10.0.0.1) ", "(VllmWorker rank=0 pid=123) ", "(VllmWorker TP0 pid=9) "
    re.compile(r"\((?:[A-Za-z0-9_.=:-]{1,64} ){0,4}pid=[0-9]{1,10}(?:, [^()\n]{0,200})?\)\s?"),
    # a Ray actor's task header: "ray::RayWorkerWrapper.execute_method() (pid=1234, ip=..., actor_id=...) "
    re.compile(r"ray::[A-Za-z0-9_.]{1,200}\(\)(?: \(pid=[0-9]{1,10}(?:, [^()\n]{0,500})?\))?:?\s?"),
    # vLLM's logger, old and new: "ERROR 11-30 10:01:02 [core.py:1021] ", "ERROR 09-27 06:46:46
    # engine.py:157] ", "2024-12-19 21:40:35 ERROR 56542 [x.py:64] ", "[x.py:485[] ", "[a/.../b.py:1] "
    re.compile(
        r"(?:[0-9]{4}-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]{1,6})? )?"
        r"(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?: [0-9]{1,10})?(?: [0-9][0-9]-[0-9][0-9])?(?: [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{1,6})?)? )?"
        r"\[?[A-Za-z0-9_./-]{1,200}\.py:[0-9]{1,7}(?:\]|\[\]) ?"
    ),
    re.compile(r"(?:DEBUG|ERROR|INFO|WARNING|CRITICAL):\s{1,8}"),  # uvicorn
    re.compile(r"\[?[0-9A-Fa-f.:]{2,45}\]?:[0-9]{1,5} - "),  # uvicorn's access log: "127.0.0.1:5000 - "
    # a bare timestamp, ISO 8601's zone too: "2024-05-01T10:00:00.123Z ", "... 10:00:00+02:00 "
    re.compile(r"[0-9]{4}-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]{1,9})?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])? "),
    # a CI log's (Buildkite) "[2025-03-10T15:07:20Z] ", any bracketed timestamp alike
    re.compile(r"\[[0-9]{4}-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]{1,9})?(?:Z|[+-][0-9][0-9]:?[0-9][0-9])?\]\s?"),
    # Python's logging.basicConfig format after its timestamp: "- __main__ - ERROR - "
    re.compile(r"(?:- )?[A-Za-z0-9_.<>-]{1,64} - (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - "),
    re.compile(r"E {3,16}"),  # pytest's failure lines: "E       ValueError: ..."
]
_MAX_PREFIXES = 8  # prefixes stripped from one line (they nest: docker, then process, then logger)

# "SomeError: message", "pkg.mod.SomeError: message", "RayTaskError(ValueError): ...".
_EXC = re.compile(r"([A-Za-z_][A-Za-z0-9_.]{0,200}?)(?:\(([A-Za-z_][A-Za-z0-9_]{0,100})\))?: (.*)", re.S)
_EXC_NAME_END = ("Error", "Exception", "Exit", "Interrupt", "Warning", "Failure", "Fault")
# "SomeError: message" after a prefix no pattern strips: a dotted name after a space, "]", "|"
# or ")", before ": " (or "(Wrapped): "); names start only after those, so a line is read once.
_INNER_EXC = re.compile(r"(?<=[ \t\]|)])([A-Za-z_][A-Za-z0-9_.]*)(?:\(([A-Za-z_][A-Za-z0-9_]{0,100})\))?: ", re.ASCII)
# A logged repr: "ValueError('message')" / OutOfMemoryError("message")
_REPR = re.compile(r"""([A-Za-z_][A-Za-z0-9_.]{0,200}?(?:Error|Exception))\((['"])(.*?)\2?\)?$""", re.S)
# argparse: "vllm serve: error: argument --x: message" / "api_server.py: error: message"
_ARGPARSE = re.compile(r"[A-Za-z0-9_.\- ]{1,100}: error: (?:argument [^\s:]{1,100}: )?(.*)", re.S)
# multiprocessing executors: "Exception in worker VllmWorkerProcess while processing method m: msg"
_WORKER = re.compile(r"Exception in worker \S{1,100} while processing method [A-Za-z0-9_]{1,100}: (.*?)(?:, Traceback \(most recent call last\):)?", re.S)
# VLLMValidationError.__str__ appends the parameter it is about
_PARAMETER = re.compile(r" \(parameter=[^()\n]{0,200}, value=[^\n]{0,1000}\)$")
_FRAME = re.compile(r'\s*File "[^"\n]+", line [0-9]+')
_CHAIN = ("The above exception was the direct cause", "During handling of the above exception", "Traceback (most recent call last)")

_BARE_EXC = re.compile(r"([A-Za-z_][A-Za-z0-9_.]{0,200})")
#: Exception lines taken from one paste (the last ones: the error is at the end of a log).
MAX_CANDIDATES = 12
#: Lines after an exception line read as its continuation.
MAX_CONTINUATION = 12


@dataclass(frozen=True)
class Candidate:
    """One exception line of a paste: its exception class (leaf name, if named) and message."""

    exception: str | None
    message: str
    line: int  # index in the cleaned lines; later lines are nearer the end of the paste
    continued: str = ""  # the message with the lines that follow it
    frame: tuple[str, int, str, str] | None = None  # (path, line, function, code line) of the frame printed just before it
    source: str = "line"  # "line", or "raise": the string literals of a raise statement a cut traceback ends in


def _prefix_end(line: str) -> int:
    """Where the first known prefix of the line ends (0: none). Indentation before a prefix goes
    with it ("  vllm-1  | ...", a CI log's "  | [2025-...Z] ..."); indentation before anything
    else stays (a traceback's code lines are indented)."""
    start = len(line) - len(line.lstrip(" \t"))
    for prefix in _LINE_PREFIXES:
        m = prefix.match(line, start)
        if m and m.end() > start:
            return m.end()
    return 0


# Markdown around a paste (an issue, a chat), before anything else on the line: quote marks
# ("> ", nested), a heading's "### ", a code fence's line (```, ```python, ~~~) read as blank, and
# a pair of emphasis marks or backticks around the rest (**...**, `...`, ```...```).
_QUOTE_OR_HEADING = re.compile(r"[ \t]{0,8}(?:>[ \t]?){1,16}|[ \t]{0,3}#{1,6}[ \t]{1,8}")
_FENCE = re.compile(r"(?:```|~~~)[A-Za-z0-9_+.-]{0,32}")
_WRAPPERS = ("```", "**", "__", "`", "*")
# "SomeError: ..." inside a wrapper whose mark the message uses too (`ValueError: `x` is bad`)
_EXC_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,200}(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault): ")


# An exception's name marked alone before its message, as an issue title writes it:
# "`ValueError`: ...", "[Bug]: **ValueError**: ..." (the first such name of the line).
_MARKED_NAME = re.compile(r"(?<![^\s\]:])(`{1,3}|\*{1,2}|_{2})([A-Za-z_][A-Za-z0-9_.]{0,200})\1(?=: )")


def _unmarked(line: str) -> str:
    """The line without the Markdown a paste was wrapped in (one pass: each pattern tried once)."""
    m = _QUOTE_OR_HEADING.match(line)
    if m and m.end():
        line = line[m.end() :]
    if _FENCE.fullmatch(line.strip()):
        return ""
    m = _MARKED_NAME.search(line) if ("`" in line or "*" in line or "__" in line) else None
    if m and m.group(2).endswith(_EXC_NAME_END):
        line = line[: m.start()] + m.group(2) + line[m.end() :]
    for mark in _WRAPPERS:
        if line.startswith(mark):
            inner = line[len(mark) : -len(mark)] if len(line) > 2 * len(mark) and line.endswith(mark) else None
            if inner and inner.strip() == inner and (mark not in inner or _EXC_HEAD.match(inner)):
                return inner
            break
    # an exception line a reporter put in double quotes: "ValueError: ... engine."
    if len(line) > 2 and line[0] == line[-1] == '"' and line[1:-1].strip() == line[1:-1] and _EXC_HEAD.match(line[1:-1]):
        return line[1:-1]
    return line


def strip_line(line: str) -> str:
    line = _unmarked(line.rstrip("\r").removesuffix("^M").rstrip())
    for _ in range(_MAX_PREFIXES):
        end = _prefix_end(line)
        if not end:
            break
        line = line[end:]
    if line.endswith(("│", "┃")):
        line = line[:-1].rstrip()
    return line


_LEVEL = re.compile(r"\b(WARNING|WARN|ERROR|CRITICAL)\b")
#: What a log line's level reads as: the exception name of a log entry (``surface.LEVEL_NAMES``).
LEVELS = {"WARNING": "WARNING", "WARN": "WARNING", "ERROR": "ERROR", "CRITICAL": "CRITICAL"}


def logged(line: str) -> tuple[str, str] | None:
    """(level, message) of a log line at WARNING or above (``WARNING 11-30 14:21:45 [x.py:1] msg``,
    with any other prefixes before it), else None: the level is read from the prefixes alone."""
    line = _unmarked(line.rstrip("\r").removesuffix("^M").rstrip())
    level = None
    for _ in range(_MAX_PREFIXES):
        end = _prefix_end(line)
        if not end:
            break
        found = _LEVEL.search(line, 0, end)
        if found:
            level = LEVELS[found.group(1)]
        line = line[end:]
    return (level, line) if level and line.strip() else None


# Xinference puts its actor's address and process before the message of an error it passes on:
# "ValueError: [address=127.0.0.1:37657, pid=3125985] User-specified max_model_len ...".
_ACTOR_TAG = re.compile(r"(?<=: )\[address=[^\]\s]{1,100}, pid=[0-9]{1,10}\] ")


def clean(text: str) -> str:
    """The paste with known line prefixes removed from every line, and a product's actor tag
    after an exception's name (``_ACTOR_TAG``)."""
    return "\n".join(_ACTOR_TAG.sub("", strip_line(line)) for line in text.replace("\r\n", "\n").split("\n"))


# What a web page, a chat tool or a word processor puts for ASCII: typographic quotes, primes and
# dashes, an ellipsis, non-breaking and other fixed-width spaces; zero-width characters dropped.
TYPOGRAPHY = {
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u02bc"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033"), '"'),
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    ord("\u2026"): "...",
    **dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2002\u2003\u2009\u200a\u3000"), " "),
    **dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None),
}


def plain_typography(text: str) -> str:
    """The text with ``TYPOGRAPHY``'s characters as ASCII (one pass); search.js's ``plainTypography``."""
    return text.translate(TYPOGRAPHY)


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


def exception_line(line: str) -> tuple[str | None, str] | None:
    """(exception, message) if the line starts an error, else None."""
    stripped = line.strip()
    m = _WORKER.fullmatch(stripped)
    if m:
        inner = exception_line(m.group(1))
        return inner or (None, m.group(1))
    m = _REPR.match(stripped)
    if m:
        return _leaf(m.group(1)), m.group(3)
    m = _EXC.match(stripped)
    if m:
        name, wrapped, message = m.group(1), m.group(2), m.group(3)
        if wrapped and _leaf(name).startswith("RayTaskError"):
            return wrapped, message
        if _leaf(name).endswith(_EXC_NAME_END) and not wrapped:
            return _leaf(name), unrepr(message) if _leaf(name) == "KeyError" else first_argument(message)
    m = _ARGPARSE.match(stripped)
    if m:
        return "ArgumentError", m.group(1)
    for m in _INNER_EXC.finditer(stripped):
        # a prefix no pattern knows ("pod-7 stderr F ValueError: ..."): the first exception named
        name, wrapped = _leaf(m.group(1)), m.group(2)
        if wrapped and name.startswith("RayTaskError"):
            return wrapped, stripped[m.end() :]
        if not wrapped and name.endswith(_EXC_NAME_END):
            return name, stripped[m.end() :]
    return None


_REPR_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_REPR_WIDTHS = {"x": 2, "u": 4, "U": 8}


def unrepr(message: str) -> str:
    """A KeyError's message as raised: Python prints a KeyError's one argument as its repr
    (``KeyError: 'no model named x'``), so a traceback's line quotes the message and escapes what
    repr escapes; anything that is not one such quoted string is the message as it stands.
    search.js's ``unrepr`` alike."""
    quote = message[:1]
    if len(message) < 2 or quote not in ("'", '"') or message[-1] != quote:
        return message
    out: list[str] = []
    body, i = message[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == quote:
            return message  # a quote repr would have escaped: not one string
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _REPR_ESCAPES:
            out.append(_REPR_ESCAPES[nxt])
            i += 2
            continue
        width = _REPR_WIDTHS.get(nxt, 0)
        digits = body[i + 2 : i + 2 + width]
        if not width or len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
            return message
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return message  # no character a terminal or a page could show
        out.append(chr(code))
        i += 2 + width
    return "".join(out)


# Python prints an exception raised with several arguments as their tuple: ``raise
# ValueError("Unknown kind", kind)`` gives ``ValueError: ('Unknown kind', 'full')``. Its first
# element, a string's repr, is the message the catalogue keys (a template is the first argument).
_FIRST_OF_TUPLE = re.compile(r"""\(('[^'\\\n]{0,4096}(?:\\.[^'\\\n]{0,4096}){0,512}'|"[^"\\\n]{0,4096}(?:\\.[^"\\\n]{0,4096}){0,512}"), """)
#: Characters of a pasted tuple read for its first element.
MAX_TUPLE = 8192


def first_argument(message: str) -> str:
    """The first argument of an exception Python printed as the tuple of its arguments (``('Unknown
    kind', 'full')``, ``("...", 3)``): the repr of a string, read by ``unrepr`` (never evaluated)
    when the text is a tuple's, up to ``MAX_TUPLE`` characters; anything else as it stands.
    search.js's ``firstArgument`` alike."""
    if not (message.startswith("(") and message.endswith(")")) or len(message) > MAX_TUPLE:
        return message
    m = _FIRST_OF_TUPLE.match(message)
    if m is None:
        return message
    first = unrepr(m.group(1))
    return message if first == m.group(1) else first


def without_parameter(message: str) -> str:
    """The message without VLLMValidationError's ``(parameter=..., value=...)`` suffix."""
    return _PARAMETER.sub("", message)


#: Before a category's ": ": a Python warning's head as ``warnings`` prints it (``<file>.py:<line>:
#: <Category>``), ending the text (bounded: at most 1,000 characters of path, 100 of category).
#: ASCII classes spelled out, no ``\s``/``\d``/``\w``: Python's are Unicode and ECMA-262's are
#: not (nor alike in their spaces), and search.js's ``WARNING_HEAD`` is this very pattern.
_WARNING_HEAD = re.compile(r" (?:[^ \t\n\r\f\v:]{1,1000}\.py):[0-9]{1,9}: [A-Z][A-Za-z0-9_]{0,100}Warning$")
#: "Warning: " looked at per message, the first ones (each costs a bounded match at its left).
MAX_WARNING_MARKS = 8


def without_warning(message: str) -> str:
    """The message without a Python warning run on after it on the same line: an issue title
    whose newlines were lost (``... for the root cause. /x/resource_tracker.py:224: UserWarning:
    ...``). The message as it stands when no warning's head (``warnings``' format, a file, its
    line and a category ending in Warning) follows text of its own. Linear: only the first
    ``MAX_WARNING_MARKS`` occurrences of "Warning: " are read, each over a bounded window.
    search.js's ``withoutWarning`` alike."""
    at = -1
    for _ in range(MAX_WARNING_MARKS):
        at = message.find("Warning: ", at + 1)
        if at < 0:
            return message
        head = _WARNING_HEAD.search(message, max(0, at - 1120), at + len("Warning"))
        if head is not None and message[: head.start()].strip():
            return message[: head.start()].rstrip()
    return message


#: Digits are ASCII ([0-9]) in every pattern here, never \d (Unicode in Python, ASCII in search.js).
_FRAME_PARTS = re.compile(r'\s*File "([^"\n]{1,1000})", line ([0-9]{1,9}), in (\S{1,200})')
_RAISE = re.compile(r"\s*raise ([A-Za-z_][A-Za-z0-9_.]{0,200})\(")
# A string literal on a source line: the unrolled form, linear whatever the line; an unclosed
# one (a line cut in the middle) runs to the line's end.
_LITERAL = re.compile(r"""[rRbBfFuU]{0,2}(?:"([^"\\\n]*(?:\\.[^"\\\n]*)*)"?|'([^'\\\n]*(?:\\.[^'\\\n]*)*)'?)""")
#: Source lines after ``raise X(`` read for its message.
MAX_RAISE_LINES = 8


def candidates(text: str) -> list[Candidate]:
    """Every exception line of the (cleaned) paste, the last first, at most ``MAX_CANDIDATES``;
    and when the paste ends in a traceback cut before its exception line, the message of the
    ``raise`` it was cut at (its string literals), with its frame."""
    lines = text.split("\n")
    found: list[Candidate] = []
    frame: tuple[int, tuple[str, int, str, str]] | None = None  # the last frame since the last exception line
    for i, line in enumerate(lines):
        f = _FRAME_PARTS.match(line)
        if f:
            after = lines[i + 1] if i + 1 < len(lines) else ""
            code = after.strip() if after[:1] in (" ", "\t") and not _FRAME_PARTS.match(after) else ""
            frame = (i, (f.group(1), int(f.group(2)), f.group(3), code))
            continue
        parsed = exception_line(line)
        if parsed is None:
            bare = _BARE_EXC.fullmatch(line)
            # a bare "raise X" or "assert" prints the exception's name alone, just after its frame
            # (the frame's line, its code line and a line of carets at most)
            if not (bare and frame is not None and i - frame[0] <= 3 and bare.group(1).endswith(_EXC_NAME_END)):
                continue
            parsed = (_leaf(bare.group(1)), "")
        exc, message = parsed
        more: list[str] = []
        for nxt in lines[i + 1 : i + 1 + MAX_CONTINUATION]:
            if not nxt.strip() or _FRAME.match(nxt) or nxt.startswith(_CHAIN) or exception_line(nxt):
                break
            more.append(nxt)
        found.append(Candidate(exc, message.strip(), i, "\n".join([message, *more]).strip() if more else "", frame[1] if frame else None))
        frame = None
    if frame is not None:
        raised = _raise_message(lines[frame[0] + 1 : frame[0] + 2 + MAX_RAISE_LINES])
        if raised:
            found.append(Candidate(raised[0], raised[1], frame[0], "", frame[1], "raise"))
    return found[::-1][:MAX_CANDIDATES]


def _raise_message(lines: list[str]) -> tuple[str, str] | None:
    """(exception, message) of ``raise X("...", "...")`` spread over the first lines, or None."""
    if not lines:
        return None
    m = _RAISE.match(lines[0])
    if not m:
        return None
    parts: list[str] = []
    first = lines[0][m.end() :]
    for line in [first, *lines[1:]]:
        stripped = line.strip()
        if line is not first and not stripped.startswith(("'", '"', "f'", 'f"', "r'", 'r"')):
            break
        for lit in _LITERAL.finditer(stripped):
            parts.append(lit.group(1) if lit.group(1) is not None else lit.group(2) or "")
    message = "".join(parts).strip()
    return (_leaf(m.group(1)), message) if len(message) >= 4 else None


def is_umbrella(text: str, exception: str) -> bool:
    """An error whose message points at another one (the root cause logged before it)."""
    low = text.lower()
    return (
        exception == "EngineDeadError"
        or "root cause" in low
        or "see stack trace" in low
        or "check the logs for more details" in low
        or low.startswith("error raised in subprocess")
    )


# The release a paste names: a server's or an engine's startup line, a path with the release in
# it, a pin. ``{name}`` is the project's package name, escaped; each pattern is tried with
# ``finditer`` over the text once, bounded runs only.
_RELEASE = r"(v?[0-9]{1,4}(?:\.[0-9]{1,6}){1,3}(?:(?:\.?post|\.?dev|rc|a|b)[0-9]{1,6})?)(?:\+[A-Za-z0-9.]{1,40})?"
_NAMED_VERSION = (
    # "vLLM API server version 0.6.3", "vLLM version: 0.6.3", "vLLM Version: 0.6.3" (collect_env)
    r"\b{name}\b[A-Za-z0-9_ ]{{0,40}}? version:? {release}(?![A-Za-z0-9_.])",
    # "Initializing an LLM engine (v0.6.3) with config", "Initializing a V1 LLM engine (v0.8.5) ..."
    r"\bLLM engine \({release}\)",
    # site-packages/vllm-0.6.3.dist-info, vllm-0.6.3+cu118-cp38-abi3..., vllm==0.6.3, /vllm/0.6.3/
    # (never a release cut short: "vllm==0.6.3+cu!" is not 0.6)
    r"(?<![A-Za-z0-9_-]){name}(?:-|==|/){release}(?![0-9]|\.[0-9])(?=[./" + SPACE + r",;)\]'\"-]|$)",
)


def named_version(text: str, name: str) -> str | None:
    """The one release of project ``name`` (its package name, ``vllm``) that a paste names, as it
    writes it without a local tag (``0.6.3``, ``v0.8.5``): a server's startup line, an engine's,
    a wheel's path or a pin. None when it names none, or several that differ (a log of an
    upgrade is no single release)."""
    if not name or not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", name):
        return None
    escaped = re.escape(name)
    found: dict[tuple[int, ...], str] = {}
    for pattern in _NAMED_VERSION:
        # ASCII, as search.js's namedVersion reads it ("gi"): Unicode IGNORECASE folds "ſ" to "s"
        # and "K" to "k", and Unicode's \b is no ASCII one
        compiled = re.compile(pattern.format(name=escaped, release=_RELEASE), re.IGNORECASE | re.ASCII)
        for m in compiled.finditer(text):
            release = m.group(1)
            found.setdefault(tuple(int(n) for n in re.findall(r"[0-9]+", release)), release)
    return next(iter(found.values())) if len(found) == 1 else None
