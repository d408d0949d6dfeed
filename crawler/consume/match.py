"""Find the catalogue entry for an error someone just hit (``errcat match``).

Input is whatever the user has: a bare message, ``SomeError: message``, a whole traceback
(chained ones included: the last exception is the one raised), a pydantic ValidationError listing
(``Value error, <message> [type=value_error, ...]``), or an OpenAI-compatible server's JSON error
body. ``read_query`` turns it into one or more readings (message, exception name, frame); the
``Matcher`` tries each against the search index and keeps the best result per entry.

Matching never runs an entry's ``pattern``: a template is literal text and fields, a field
matches any text, so a message matches when the literal fragments can be laid over it in order
(the first at the start unless a field comes first, the last at the end unless a field comes
last). Placing each fragment at its leftmost occurrence finds a placement whenever there is one,
and it is the one Python's regex engine finds for the pattern's lazy groups, so the gaps are the
field values the pattern would capture (in a run of adjacent fields the last takes the gap).
That costs a ``str.find`` per fragment, whatever the template: a pattern of adjacent lazy groups
backtracks exponentially on a message that almost matches. The site's search does the same in
JavaScript (``site.py``). An entry is only tried when the message contains its *anchor*, the
rarest word of its literal text that is a whole word in every message the pattern matches.

Input is bounded (``MAX_INPUT``: the last 256 KiB are read) and read in linear time: tracebacks,
log tails, pydantic listings and JSON bodies are each found in one pass, whatever the text.

Ranking, best first: the share of the message the entry's literal text covers; whether the
entry raises the exception named in the input (2) or a subclass of it (1, e.g. pydantic's "Value
error" for a ValueError subclass); whether the traceback's last frame is one of the entry's sites;
an entry that is not a Rust frontend's check (the frontend repeats the Python server's messages;
in a Python traceback its checks come last); a raise before a response before a log line; fewer
fields. Among weak candidates the Python entry a Rust check repeats comes just before it. Entries
equal on all of these are ties and are all shown. Weak candidates (no match) are ranked by
likeness of wording plus ``AGREE`` times their ``agreement`` with what the paste names (its
exception, a log line's level, a traceback's language), so of two worded within ``AGREE`` of each
other the one the paste names comes first; strength (match or weak) never depends on it.
The site's search box (site.py's search.js, with site_search.py's index fields) reads a paste
into the same readings and ranks by the same key and weak score: keep the two in step.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Protocol

from crawler.model.kinds import KINDS, LOG, NATIVE, RAISE, exception_word

if TYPE_CHECKING:  # the match path imports no models: match_store's rows stand in for entries
    from crawler.model.search import SearchEntry, SearchIndex


class MatchSite(Protocol):
    """What matching reads of an entry's site (``search.SearchSite``, ``match_store.StoredSite``)."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def qualname(self) -> str: ...


class MatchEntry(Protocol):
    """What matching and its output read of an entry: a ``search.SearchEntry`` of an index read
    whole, or a ``match_store.StoredEntry`` loaded from the store when first needed."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def exception(self) -> str: ...
    @property
    def catch_as(self) -> Sequence[str]: ...
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def fields(self) -> Sequence[str]: ...
    @property
    def fragments(self) -> Sequence[str]: ...
    @property
    def starts_literal(self) -> bool: ...
    @property
    def ends_literal(self) -> bool: ...
    @property
    def anchors(self) -> Sequence[str]: ...
    @property
    def opaque(self) -> bool: ...
    @property
    def sites(self) -> Sequence[MatchSite]: ...


WORD = re.compile(r"\w+")  # the same as search.WORD

ELLIPSIS = ("...", "…")
#: Entries (those sharing the rarest words) whose wording is compared with a message nothing matches.
NEAREST_POOL = 12
#: Lines a traceback's frame may be from a site and still point at it (``site_match``).
LINE_SLACK = 3
#: Entries sharing a message's rarest words tried for a match ignoring case (``full_matches``).
CASELESS_POOL = 200
#: A match needs its literal text to cover this share of the message (see ``Match.support``).
MIN_SUPPORT = 0.5
#: How much likeness of wording (difflib's ratio, or support) a weak candidate's agreement with
#: what the paste names is worth (``agreement``): candidates worded within this of each other are
#: ranked by it, a closer wording still wins over a wider gap. It never makes a candidate a match.
AGREE = 0.1
#: Characters of a field's value counted by ``Match.support``: a long value (a list of 200
#: architectures) is data, and must not make a template that says what it is a weak match.
FIELD_WEIGHT = 16
#: Fields whose value says what it is (a native check's ``__FILE__``/``__LINE__``: the source
#: path and line the compiler put in, a path with no space, digits): a value of that shape is
#: the entry's text as much as its literal words are, however long the path (``Match.support``).
_PLACE_FIELDS = {"__FILE__": re.compile(r"[^\s:'\"]+"), "__LINE__": re.compile(r"[0-9]+")}


# --------------------------------------------------------------------------- reading the input


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str
    #: the frame's code line as the traceback prints it (stripped): an assert with no message is
    #: told from another in its function by it (``site_match``); not part of what a reading is
    code: str = field(default="", compare=False)


@dataclass(frozen=True)
class Reading:
    """One interpretation of the user's text."""

    message: str
    exception: str | None = None
    source: str = "plain"  # plain, traceback, pydantic, json, line (one exception line of a paste)
    frame: Frame | None = None
    truncated: bool = False
    line: int = -1  # for a "line" reading: its line in the paste (a later line is nearer the end)


_TB_HEADER = "Traceback (most recent call last):"
# Horizontal space only before "File" and no newline inside the path: a pattern that can run
# across lines is tried again from every line start, quadratic on a text of blank lines.
_FRAME = re.compile(r'^[^\S\n]*File "([^"\n]{1,1000})", line ([0-9]{1,9}), in (\S{1,200})', re.M)
_EXC_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?::(?: (.*))?)?$", re.S)
_EXC_PREFIX = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration|Failure|Fault)): ?(.*)$", re.S)
_ANY_PREFIX = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): (.*)$", re.S)  # exception classes need not end in Error
# A pydantic listing: "  Value error, <message> [type=value_error, ...": the message runs to the
# first type marker after its header, and may span lines.
_PYDANTIC_HEAD = re.compile(r"^[^\S\n]*(Value error|Assertion failed), ", re.M)
_PYDANTIC_END = re.compile(r" \[type=(?:value_error|assertion_error)\b")
_PYDANTIC_TYPES = {"Value error": "ValueError", "Assertion failed": "AssertionError"}

#: Log lines (at WARNING or above) of a paste read as log messages, the last ones.
MAX_LOG_LINES = 12
#: Characters of input read; a longer input is cut to its end, where the error is.
MAX_INPUT = 256 * 1024
#: Readings tried (one pydantic listing gives one per error in it).
MAX_READINGS = 32
#: Objects handed to the JSON and Python-literal parsers, and characters in all of them.
MAX_BODIES, MAX_BODY_CHARS = 32, MAX_INPUT
#: Characters of a literal a truncated message may end inside (prefix matches).
MAX_OVERLAP = 1024


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


def _last_traceback(text: str) -> tuple[str | None, str, Frame | None]:
    """(exception name, message, last frame) of the last traceback in text; name None if none."""
    start = text.rfind(_TB_HEADER)
    if start < 0:
        return None, text, None
    block = text[start + len(_TB_HEADER) :]
    frame = None
    last = None
    for last in _FRAME.finditer(block):
        pass
    if last is not None:
        block = block[last.end() :]
    lines = block.split("\n")
    if last is not None:
        code = lines[1].strip() if len(lines) > 1 and lines[1][:1] in (" ", "\t") else ""
        frame = Frame(last.group(1), int(last.group(2)), last.group(3), code)
    # skip the frame's code line and carets: indented lines (or blank ones) after the last frame
    i = 1 if last is not None else 0
    while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t")):
        i += 1
    rest = "\n".join(lines[i:]).rstrip()
    m = _EXC_LINE.match(rest.split("\n", 1)[0])
    if not m:
        return None, rest, frame
    first_line_msg = m.group(2) or ""
    tail = rest.split("\n", 1)[1] if "\n" in rest else ""
    message = first_line_msg + ("\n" + tail if tail else "")
    return m.group(1), message, frame


def _pydantic_errors(message: str) -> Iterable[tuple[str, str]]:
    """(kind, message) of each error in a pydantic listing, in one pass over the text."""
    ends = _PYDANTIC_END.finditer(message)
    end = next(ends, None)
    pos = 0
    for head in _PYDANTIC_HEAD.finditer(message):
        if head.start() < pos:
            continue  # inside the previous error's message
        while end is not None and end.start() < head.end():
            end = next(ends, None)
        if end is None:
            return
        yield head.group(1), message[head.end() : end.start()]
        pos = end.end()


# pydantic v1 (LangChain's wrappers of vLLM, vLLM's own of 2023) lists an error as its message
# on an indented line with the type after it: "  Quantization is not supported for X. (type=value_error)".
_PYDANTIC_V1 = re.compile(r"^[^\S\n]{1,8}(\S[^\n]{0,4096}?) \(type=(value_error|assertion_error)[^()\n]{0,200}\)[^\S\n]*$", re.M)
_PYDANTIC_V1_TYPES = {"value_error": "ValueError", "assertion_error": "AssertionError"}
# FastAPI's 422 body as the openai client prints it, often cut: "'msg': 'Value error, <message>'".
_PYDANTIC_MSG = re.compile(r"""['"]msg['"]: (['"])(Value error|Assertion failed), ([^\n'"]{1,4096})\1""")
_PYDANTIC_LINE = re.compile(r"[^\S\n]*(Value error|Assertion failed), (.*)", re.S)
_PYDANTIC_MORE = re.compile(r"[^\S\n]*For further information visit \S*")


def _pydantic_unmarked(message: str) -> tuple[str, str] | None:
    """(kind, message) of a pydantic error's line pasted without its ``[type=...]`` marker (and
    often without the ``N validation error for X`` header above it): the last line of the text,
    "Value error, <message>" or "Assertion failed, <message>" (a "For further information"
    line after it set aside). The line runs to the end, so its message is all of it."""
    lines = message.rstrip().rsplit("\n", 2)
    if len(lines) > 1 and _PYDANTIC_MORE.fullmatch(lines[-1]):
        lines.pop()
    m = _PYDANTIC_LINE.fullmatch(lines[-1])
    if m is None or _PYDANTIC_END.search(m.group(2)):
        return None
    inner = m.group(2).strip()
    return (m.group(1), inner) if inner else None


_BRACE_SYNTAX = re.compile(r"""[{}"'\\]""")


def _json_bodies(text: str) -> Iterable[dict[str, Any]]:
    """JSON objects (or Python dict reprs, as the openai client prints them) in the text.

    Every ``{`` is a candidate, leftmost first, ending at its matching ``}`` (braces inside
    quotes skipped). The ends are found in one pass: an object nested in another ends where it
    would on its own, so each end is computed once and skipped over by the objects around it.
    """
    first = text.find("{")
    if first < 0:
        return
    marks = [(m.start(), m.group()) for m in _BRACE_SYNTAX.finditer(text, first)]
    ends = _brace_ends(marks)
    tried = chars = 0
    for k, (start, ch) in enumerate(marks):
        end = ends.get(k) if ch == "{" else None
        if end is None:
            continue
        candidate = text[start : marks[end][0] + 1]
        tried, chars = tried + 1, chars + len(candidate)
        if tried > MAX_BODIES or chars > MAX_BODY_CHARS:
            return
        for loader in (json.loads, ast.literal_eval):
            try:
                body = loader(candidate)
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                continue
            if isinstance(body, dict):
                yield body
                return


def _brace_ends(marks: list[tuple[int, str]]) -> dict[int, int | None]:
    """For each ``{`` in ``marks`` (by index), the index of its matching ``}``, or None: what a
    scan from that brace alone finds, in time linear in the marks.

    Scans from different braces disagree only on where quotes open; outside quotes at the same
    mark, two scans go on alike, so the innermost object of the later one closes where the earlier
    one's did. Each mark is therefore read outside quotes at most once (``seen``: the object that
    was innermost there), and a quoted string is jumped over, its end found once for every mark.
    """
    n = len(marks)
    closing = {q: _quote_closings(marks, q) for q in "\"'"}
    ends: dict[int, int | None] = {}
    seen: dict[int, int] = {}

    def unclosed(stack: list[int]) -> None:
        for k in stack:
            ends[k] = None

    for first in range(n):
        if marks[first][1] != "{" or first in ends:
            continue
        stack = [first]  # open objects, innermost last
        i = first + 1
        while stack:
            if i >= n:
                unclosed(stack)
                break
            if i in seen:  # an earlier scan was here outside quotes: this object ends where its did
                end = ends[seen[i]]
                if end is None:
                    unclosed(stack)
                    break
                ends[stack.pop()] = end
                i = end + 1
                continue
            seen[i] = stack[-1]
            ch = marks[i][1]
            if ch in "\"'":
                close = closing[ch][i + 1]
                if close is None:
                    unclosed(stack)
                    break
                i = close + 1
                continue
            if ch == "{":
                if i in ends:  # scanned from itself already
                    end = ends[i]
                    if end is None:
                        unclosed(stack)
                        break
                    i = end + 1
                    continue
                stack.append(i)
            elif ch == "}":
                ends[stack.pop()] = i
            i += 1  # a backslash outside quotes escapes nothing
    return ends


def _quote_closings(marks: list[tuple[int, str]], quote: str) -> list[int | None]:
    """For each mark index i, the index of the mark that ends a ``quote`` string read from mark i
    on (a backslash skips the character after it), or None; one pass from the end."""
    n = len(marks)
    out: list[int | None] = [None] * (n + 2)
    for i in range(n - 1, -1, -1):
        pos, ch = marks[i]
        if ch == quote:
            out[i] = i
        elif ch == "\\" and i + 1 < n and marks[i + 1][0] == pos + 1:
            out[i] = out[i + 2]
        else:
            out[i] = out[i + 1]
    return out


def _server_message(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    if isinstance(body.get("message"), str):
        return body["message"]
    if isinstance(body.get("detail"), str):
        return body["detail"]
    return None


def read_query(text: str) -> list[Reading]:
    """Every plausible reading of the user's text, most literal first (at most ``MAX_READINGS``).

    Only the last ``MAX_INPUT`` characters are read.
    """
    text = text[-MAX_INPUT:].replace("\r\n", "\n").strip("\n")
    readings: list[Reading] = []

    from crawler.consume.paste import without_parameter

    def add(message: str, exception: str | None, source: str, frame: Frame | None = None) -> None:
        message = message.strip()
        truncated = message.endswith(ELLIPSIS)
        reading = Reading(message, _leaf(exception) if exception else None, source, frame, truncated)
        # a message wrapping a server's JSON body or a pydantic listing: read what is inside too;
        # each also without the "(parameter=..., value=...)" that VLLMValidationError's str()
        # adds, which the server's error body carries as its message
        for r in (reading, *_inner_readings(message, reading)):
            bare = without_parameter(r.message)
            for one in (r, replace(r, message=bare)) if bare != r.message else (r,):
                if len(readings) < MAX_READINGS and one not in readings:
                    readings.append(one)

    exc, message, frame = _last_traceback(text)
    if exc is not None:
        add(message, exc, "traceback", frame)
    else:
        stripped = text.strip()
        m = _EXC_PREFIX.match(stripped) or _ANY_PREFIX.match(stripped)
        if m:
            add(m.group(2), m.group(1), "plain")
        else:
            # a log tail: the last line that looks like "SomeError: ..." starts the message
            lines = stripped.split("\n")
            for i in range(len(lines) - 1, 0, -1):
                m = _EXC_PREFIX.match(lines[i])  # the line alone: joining the rest for every line is quadratic
                if m:
                    add("\n".join([m.group(2), *lines[i + 1 :]]), m.group(1), "plain")
                    break
        add(stripped, None, "plain")
        # a message pasted alone under other lines (a server's startup line, a log line): the
        # last line by itself too, after the whole text
        last = stripped.rpartition("\n")[2].strip()
        if last and last != stripped:
            add(last, None, "plain")
    return readings


def _inner_readings(message: str, outer: Reading) -> list[Reading]:
    out: list[Reading] = []
    for kind, inner in itertools.islice(_pydantic_errors(message), MAX_READINGS):
        inner = inner.strip()
        out.append(Reading(inner, _PYDANTIC_TYPES[kind], "pydantic", outer.frame, inner.endswith(ELLIPSIS)))
    if "(type=" in message:
        for v1 in itertools.islice(_PYDANTIC_V1.finditer(message), MAX_READINGS):
            out.append(Reading(v1.group(1).strip(), _PYDANTIC_V1_TYPES[v1.group(2)], "pydantic", outer.frame))
    if "msg" in message:
        for listed in itertools.islice(_PYDANTIC_MSG.finditer(message), MAX_READINGS):
            out.append(Reading(listed.group(3).strip(), _PYDANTIC_TYPES[listed.group(2)], "pydantic", outer.frame))
    unmarked = _pydantic_unmarked(message)
    if unmarked is not None and len(out) < MAX_READINGS:
        kind, inner = unmarked
        out.append(Reading(inner, _PYDANTIC_TYPES[kind], "pydantic", outer.frame, inner.endswith(ELLIPSIS)))
    if "{" in message:
        for body in _json_bodies(message):
            said = _server_message(body)
            if said:
                # the server's "type" is an HTTP error class (BadRequestError), not the raised exception
                reading = Reading(said.strip(), None, "json", outer.frame, said.strip().endswith(ELLIPSIS))
                out.append(reading)
                out += _inner_readings(reading.message, reading)
                # "ValueError: msg" inside a body
                m = _EXC_PREFIX.match(reading.message)
                if m:
                    out.append(Reading(m.group(2).strip(), _leaf(m.group(1)), "json", outer.frame))
    return out


# --------------------------------------------------------------------------- matching


#: Among answers alike in every other way, a raised error before an error response before a
#: log line: a bare message pasted is most often an exception's (logs carry a level prefix).
_KIND_RANK = {name: spec.match_rank for name, spec in KINDS.items()}


@dataclass
class Match:
    entry: MatchEntry
    reading: Reading
    how: str  # "full" or "prefix"
    covered: int  # characters of the message that are the entry's literal text
    coverage: float
    exception_match: int  # 2 same class, 1 caught as an ancestor, 0 unknown or different
    site_match: int  # 3 same path and line, 2 within LINE_SLACK lines of it, 1 same path and function, 0 otherwise
    values: dict[str, str] = field(default_factory=dict)
    dataset: str = ""
    tied: bool = False
    support: float = 0.0  # share of the message the literal text covers, long field values counted as FIELD_WEIGHT
    anchored: bool = False  # a whole word of the entry's literal text is in the message
    role: str = ""  # "root cause" or "umbrella" when the paste holds both
    framed: bool = False  # the whole template fits and the traceback's last frame raised it (``Matcher._score``)
    held: bool = False  # the whole template fits a sentence a strong match's field swallowed (``_swallowed``)
    live_in: int = 0  # 1: release asked for (``match``'s version) raised the entry, -1: it did not, 0: unknown or none asked
    current: bool = True  # False: a retired entry of a history (its lineage says so, ``_prefer_release``)
    lineage: dict[str, Any] | None = None  # the releases that raised it and its successors (``lineage_of``)

    @property
    def strong(self) -> bool:
        return (self.anchored and self.support >= MIN_SUPPORT) or self.framed or self.held

    @property
    def key(self) -> tuple:
        return (
            self.strong,
            self.how == "full",
            self.live_in,
            round(self.coverage, 6),
            self.exception_match,
            self.site_match,
            _server_rank(self.entry, self.reading),
            _KIND_RANK[self.entry.kind],
            # alike in every way the paste shows, an entry raised today before a retired one of
            # the same words (a template that only gained a field since): the page of today's
            # release first, the retired one still answered (its lineage names that page too)
            self.current,
            -len(self.entry.fields),
        )

    def as_dict(self) -> dict[str, Any]:
        e = self.entry
        site = e.sites[0]
        return (
            {
                "id": e.id,
                "dataset": self.dataset,
                "title": e.title,
                "exception": e.exception,
                "template": e.text,
                "path": site.path,
                "line": site.line,
                "match": self.how,
                "coverage": round(self.coverage, 4),
                "exception_match": ["none", "ancestor", "same"][self.exception_match],
                "site_match": self.site_match > 0,
                "tied": self.tied,
                "strength": "match" if self.strong else "weak",
                "support": round(self.support, 4),
                "role": self.role or None,
                "fields": [{"expr": expr, "value": self.values.get(f"f{i}")} for i, expr in enumerate(e.fields)],
                "reading": {"source": self.reading.source, "exception": self.reading.exception, "message": self.reading.message},
            }
            | ({"raised_by_release": self.live_in > 0} if self.live_in else {})
            | ({"lineage": self.lineage} if self.lineage is not None else {})
        )


@dataclass
class Near:
    entry: MatchEntry
    similarity: float
    dataset: str = ""
    reading: Reading | None = None  # the reading whose message it is worded like
    #: as a weak ``Match``'s (``lineage_of``): what succeeds it today, if the paste is its error;
    #: not in the JSON answer (schema 8's NearEntry has no such field), said by ``errcat match``'s text
    lineage: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "id": e.id,
            "dataset": self.dataset,
            "title": e.title,
            "exception": e.exception,
            "template": e.text,
            "path": e.sites[0].path,
            "line": e.sites[0].line,
            "similarity": round(self.similarity, 4),
        }


@dataclass
class Result:
    readings: list[Reading]
    matches: list[Match]  # strong matches only: root causes before umbrellas
    nearest: list[Near]
    weak: list = field(default_factory=list)  # weak matches and near entries, best first: never a match
    foreign: list = field(default_factory=list)  # errors of other projects the paste holds (foreign_match.py)
    version: str | None = None  # the release the answer prefers (``match``'s version, or the one the paste names)
    version_from: str | None = None  # "option" or "paste"

    def as_dict(self) -> dict[str, Any]:
        r = self.readings[0] if self.readings else Reading("")
        return {
            "query": {"message": r.message, "exception": r.exception, "source": r.source, "version": self.version, "version_from": self.version_from},
            "matches": [m.as_dict() for m in self.matches],
            "nearest": [n.as_dict() for n in self.nearest],
            "weak": [w.as_dict() for w in self.weak],
            "foreign": [f.as_dict() for f in self.foreign],
        }


class Prepared:
    __slots__ = ("entry", "segs", "frags", "literal_len", "names", "sites", "tokens", "wordy", "_runs", "_folded", "_unticked")

    def __init__(self, entry: MatchEntry, fragments: list[str] | None = None) -> None:
        self.entry = entry
        self.frags = list(entry.fragments if fragments is None else fragments)
        self.segs = _segments_of(self.frags, entry.starts_literal, entry.ends_literal)
        self.literal_len = sum(map(len, self.frags))
        self.names = {entry.exception}
        self.tokens = entry.anchors
        self.wordy = any(ch.isalnum() for frag in self.frags for ch in frag)
        self._runs: list[int] | None = None
        self._folded: tuple[list[str], list] | None = None
        self._unticked: Prepared | None = self if fragments is not None else None  # None: not made yet; a variant is its own

    def as_pasted(self, message: str) -> Prepared:
        """The entry as a paste with no backtick at all may show it: an issue tracker's Markdown
        takes a pair of backticks for code and drops them (a template's ``max_model_len`` in
        backticks shows as plain max_model_len), so the template's backticks are read as absent;
        itself otherwise, and when dropping them would leave a fragment empty (two fields would
        run together). search.js's ``asPasted``."""
        if "`" in message:
            return self
        if self._unticked is None:
            bare = [f.replace("`", "") for f in self.frags]
            self._unticked = Prepared(self.entry, bare) if bare != self.frags and all(bare) else self
        return self._unticked

    def folded(self) -> tuple[list[str], list]:
        """The fragments and segments with ASCII letters in lower case (``fold_case``)."""
        if self._folded is None:
            self._folded = ([fold_case(f) for f in self.frags], [(k, t if t is None else fold_case(t)) for k, t in self.segs])
        return self._folded

    def field_runs(self, gaps: int) -> list[int] | None:
        """How many fields each of the ``gaps`` variable parts holds; None if the template disagrees
        with the index (then the values cannot be told apart)."""
        if self._runs is None:
            fields = len(self.entry.fields)
            if fields == gaps:  # nearly always: one field per gap, nothing to work out
                self._runs = [1] * gaps
            else:
                self._runs = _field_runs(self.entry)
        return self._runs if len(self._runs) == gaps and sum(self._runs) == len(self.entry.fields) else None

    def values(self, message: str, gaps: list[tuple[int, int]]) -> dict[str, str]:
        """Each field's value, as the pattern's lazy groups capture it: in a run of adjacent
        fields the last takes the whole gap and the others are empty."""
        runs = self.field_runs(len(gaps))
        if runs is None:
            return {}
        values: dict[str, str] = {}
        k = 0
        for (start, end), run in zip(gaps, runs):
            for j in range(run):
                values[f"f{k}"] = message[start:end] if j == run - 1 else ""
                k += 1
        return values


def _rust(entry: MatchEntry) -> bool:
    """A check in a Rust frontend: its errors reach a user as a JSON body or its own log, never
    in a Python traceback."""
    return entry.kind == NATIVE and any(s.path.endswith(".rs") for s in entry.sites)


def _python(reading: Reading) -> bool:
    """The reading comes from a Python traceback (or one of its frames)."""
    return reading.source in ("traceback", "raise") or reading.frame is not None


def _server_rank(entry: MatchEntry, reading: Reading) -> int:
    """2 for what the Python side raises; 1 for a Rust frontend's check, whose messages repeat
    the Python server's and which is the experimental alternative to it (so where the paste does
    not tell, as in a JSON body, the default server's entry comes first); 0 for a Rust check in
    a Python traceback, where its errors never appear."""
    if not _rust(entry):
        return 2
    return 0 if _python(reading) else 1


def _repeats(rust: MatchEntry, other: MatchEntry) -> bool:
    """The Rust frontend's check repeats the other entry's message: the other is no Rust check
    and its literal text starts with all of the check's (same fragments, the last one a start).
    A piece of an assembled message (``expanded``: no fields, placed anywhere) is compared by its
    fragments alone: a message set per branch is one of its pieces whole."""
    r, o = rust.fragments, other.fragments
    same_start = rust.starts_literal == other.starts_literal or not (other.fields or other.starts_literal)
    return bool(r) and not _rust(other) and same_start and len(o) >= len(r) and list(o[: len(r) - 1]) == list(r[:-1]) and o[len(r) - 1].startswith(r[-1])


def _repeated_first(weak: list) -> list:
    """Weak candidates with each Python entry a Rust check repeats moved to just before the
    check: a paste worded like both is the default server's message (``_server_rank``), even when
    the check's shorter text is worded more like it (the Python one goes on: "... in one prompt.
    Set `--limit-mm-per-prompt` to increase this limit.")."""
    out = list(weak)
    i = 0
    while i < len(out):
        e = out[i].entry
        j = next((k for k in range(i + 1, len(out)) if _rust(e) and _repeats(e, out[k].entry)), None)
        if j is not None:
            out.insert(i, out.pop(j))
            i += 1
        i += 1
    return out


def agreement(entry: MatchEntry, reading: Reading | None) -> float:
    """How well an entry's kind and exception agree with what the reading names, from -1 to 1.

    A log line's level names a log entry of that level. An exception named (``RuntimeError:
    ...``) agrees with an entry raising it (1) or a subclass caught as it (0.5: pydantic's "Value
    error"), a native check surfacing as it included; it disagrees with a log entry (a raised
    error, not a logged one) and, in a Python traceback, with a Rust frontend's check. A bare
    message disagrees with a log entry: a logged message is printed after its level.
    """
    if reading is None:
        return 0.0
    if reading.source == "log":
        return 1.0 if entry.kind == LOG and entry.exception == reading.exception else 0.0
    if entry.kind == LOG:
        return -1.0
    if _rust(entry) and _python(reading):
        return -1.0
    if reading.exception:
        if reading.exception == entry.exception:
            return 1.0
        if reading.exception in entry.catch_as:
            return 0.5
    return 0.0


_UPPER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def fold_case(text: str) -> str:
    """ASCII letters in lower case, nothing else changed (so every position stays where it was:
    a field's value is read off the message as pasted). search.js's ``foldCase``."""
    return text.translate(_UPPER)


def site_match(frame: Frame | None, entry: MatchEntry) -> int:
    """How a traceback's frame points at one of the entry's sites, a path ending in the site's
    (``.../site-packages/vllm/x.py`` is ``vllm/x.py``): 3 at its line, 2 within ``LINE_SLACK``
    lines of it (a release a few lines apart), 1 in its function (the line moved further), else 0."""
    if frame is None:
        return 0
    said = _condition_said(frame, entry)
    if said is False:
        return 0  # the frame's line asserts another condition: another entry's
    fpath = frame.path.replace("\\", "/")
    site = 0
    for s in entry.sites:
        if fpath.endswith("/" + s.path) or fpath == s.path:
            if s.line == frame.line:
                return 3
            if abs(s.line - frame.line) <= LINE_SLACK:
                site = 2
            elif _leaf(s.qualname) == _leaf(frame.function):
                site = max(site, 1)
    if said and (site or _in_named_function(frame, entry)):
        return 3 if site else 2  # its very check: in its file (lines moved), or in a function of its name (the file moved)
    return site


def _condition_said(frame: Frame, entry: MatchEntry) -> bool | None:
    """For a frame that shows its code line: whether that line asserts the condition of an assert
    with no message (``SearchEntry.condition``); False too for a raise at a line that asserts;
    None when the frame shows no line, for any other entry, or the
    line is the first of a condition spread over lines that may begin the entry's (its opening
    parentheses aside: the condition is read without them), which tells no two such apart."""
    condition = getattr(entry, "condition", None)
    code = " ".join(frame.code.split())
    if not code:
        return None
    if condition is None:  # a raise is not raised at a line that asserts
        return False if entry.kind == RAISE and code.startswith("assert ") else None
    if not code.startswith("assert "):
        return False  # the line is no assert (a ``raise AssertionError`` beside one)
    if code == f"assert {condition}":
        return True
    if not code.endswith(("(", "[", "{", "\\", ",")):
        return False
    begun = code[len("assert ") :].rstrip("\\ ").lstrip("( ")
    return None if condition.lstrip("( ").startswith(begun) else False


def _in_named_function(frame: Frame, entry: MatchEntry) -> bool:
    """One of the entry's sites is in a function of the frame's name (any file)."""
    name = _leaf(frame.function)
    return any(_leaf(s.qualname) == name for s in entry.sites)


def _same_function(frame: Frame | None, entry: MatchEntry) -> bool:
    """The frame is in one of the entry's functions, in the same file."""
    if frame is None:
        return False
    fpath = frame.path.replace("\\", "/")
    return any((fpath.endswith("/" + s.path) or fpath == s.path) and _leaf(s.qualname) == _leaf(frame.function) for s in entry.sites)


def _cut_values(values: dict[str, Any], gaps: list[tuple[int, int]], text: str, p: "Prepared") -> dict[str, Any]:
    """Field values of a message cut with an ellipsis: a value running into the mark ends where
    the cut is (marked "…"), and one wholly inside it (the ``..`` left when the template's final
    period takes the mark's last dot) is unknown (None). A reading cut with no mark (a cut
    traceback's ``raise``: the source's literals, ``{pool.free}`` where a value was) knows none."""
    mark = next((m for m in ELLIPSIS if text.rstrip().endswith(m)), None)
    if mark is None:
        return dict.fromkeys(values)
    cut_at = len(text.rstrip()) - len(mark)
    runs = p.field_runs(len(gaps)) or []
    k = 0
    for (start, end), run in zip(gaps, runs):
        k += run
        if end > cut_at:
            kept = text[start : max(start, cut_at)].rstrip()
            values[f"f{k - 1}"] = kept + "…" if kept else None
    return values


def _field_runs(entry: MatchEntry) -> list[int]:
    """Fields per variable part, from the template text (the index only has the literal parts)."""
    from crawler.extract.templates import parts_from_template

    runs: list[int] = []
    literals: list[str] = []
    after_field = False
    for part in parts_from_template({"text": entry.text, "fields": [{"expr": f} for f in entry.fields]}):
        if isinstance(part, str):
            literals.append(part)
            after_field = False
        elif after_field:
            runs[-1] += 1
        else:
            runs.append(1)
            after_field = True
    return runs if literals == list(entry.fragments) else []


def field_groups(m: "Match") -> list[tuple[list[str], str | None]]:
    """A match's fields as a reader takes them: each run of adjacent fields (``{a}{b}``, no text
    between) with the one value the run's gap holds, since which part of it is whose cannot be
    told (the pattern's lazy groups give it all to the last); a lone field with its own value."""
    fields = list(m.entry.fields)
    runs = (_field_runs(m.entry) or [1] * len(fields)) if any(not (m.values.get(f"f{i}") or "") for i in range(len(fields))) else []
    if sum(runs) != len(fields):
        runs = [1] * len(fields)
    out, k = [], 0
    for run in runs:
        out.append((fields[k : k + run], m.values.get(f"f{k + run - 1}")))
        k += run
    return out


def _dropped_tail(fragment: str) -> str:
    """The end of a template's last literal that a paste may have lost: its trailing whitespace,
    and a full stop before it (not an ellipsis: "..." left off is a cut message, for the prefix
    matches). ``droppedTail`` in the site's search (site.py) is the same function in JavaScript."""
    bare = fragment.rstrip()
    if bare.endswith(".") and not bare.endswith(".."):
        bare = bare[:-1]
    return fragment[len(bare) :]


def fragment_gaps(frags: list[str], starts_literal: bool, ends_literal: bool, message: str) -> list[tuple[int, int]] | None:
    """Where the variable parts of a template lie in ``message`` (start, end), or None if it does
    not match: each fragment at its leftmost occurrence after the previous one, the first at the
    start when ``starts_literal``, the last at the end when ``ends_literal``.

    Leftmost is always right: every fragment but a final one has a variable part after it, which
    absorbs whatever a later placement would have skipped. ``errcatGaps`` in the site's search
    (site.py) is the same function in JavaScript; keep the two identical.
    """
    n, k = len(message), len(frags)
    if not k:
        return [(0, n)]
    pos, first, limit, last = 0, 0, n, k
    if starts_literal:
        if not message.startswith(frags[0]):
            return None
        pos, first = len(frags[0]), 1
    if ends_literal:
        if starts_literal and k == 1:
            return [] if n == len(frags[0]) else None
        if not message.endswith(frags[-1]):
            return None
        limit, last = n - len(frags[-1]), k - 1
    gaps = []
    for i in range(first, last):
        j = message.find(frags[i], pos, limit)
        if j < 0:
            return None
        gaps.append((pos, j))
        pos = j + len(frags[i])
    if pos > limit:
        return None
    gaps.append((pos, limit))
    return gaps


def _segments_of(fragments: list[str], starts_literal: bool, ends_literal: bool) -> list:
    """The pattern's literal/variable sequence, rebuilt from the index (no regex parsing at load)."""
    if not fragments:
        return [("var", None)]
    segs: list = [] if starts_literal else [("var", None)]
    for i, frag in enumerate(fragments):
        if i:
            segs.append(("var", None))
        segs.append(("lit", frag))
    if not ends_literal:
        segs.append(("var", None))
    return segs


def _prefix_cover(segs: list, message: str) -> int | None:
    """Literal characters matched when ``message`` is a prefix of a message of this template.

    Fragments are matched in order; the message may end anywhere, even inside a fragment (its
    first ``MAX_OVERLAP`` characters are looked for at the message's end: each length tried costs
    a comparison, so a longer search would make a long literal and a long message quadratic).
    None when the message cannot be a prefix of such a message; ``-covered - 1`` when it ends
    inside a field's value with more of the template to come (a weaker reading: see the caller).
    """
    pos, covered, after_var = 0, 0, False
    n = len(message)
    for kind, text in segs:
        if kind == "var":
            after_var = True
            continue
        if pos >= n:
            return covered
        if not after_var:
            if message.startswith(text, pos):
                pos += len(text)
                covered += len(text)
            elif text.startswith(message[pos:]):
                return covered + n - pos
            else:
                return None
        else:
            i = message.find(text, pos)
            if i < 0:
                # the message ends inside the field or inside this fragment
                for k in range(min(len(text) - 1, n - pos, MAX_OVERLAP), 0, -1):
                    if message.endswith(text[:k]):
                        return covered + k
                return -covered - 1 if n - pos > 1 else covered  # negative: it ends inside the field
            pos = i + len(text)
            covered += len(text)
        after_var = False
    return covered if (after_var or pos == n) else None


#: Characters of a message's end that must stand in the entry's literal text, followed by more of
#: it, for a full stop there to be taken for where an older wording ended (``prefix_matches``).
STOPPED_TAIL = 24


def _stops_where_it_goes_on(frags: list[str], stopped: str) -> bool:
    """Whether a message (its full stop taken off) ends inside one of the entry's literal
    fragments, at a word's end, with more literal text after it that is not a full stop: the
    message's last ``STOPPED_TAIL`` characters (three words' worth or so) are in the fragment,
    followed by a character that is neither a letter or digit nor a full stop, and by more than
    white space before the fragment ends."""
    tail = stopped[-STOPPED_TAIL:]
    if len(tail) < STOPPED_TAIL or not tail[-1:].isalnum():
        return False
    for frag in frags:
        i = frag.find(tail)
        while i >= 0:
            rest = frag[i + len(tail) :]
            # (more words of the fragment, not a field's value next: "... the name {name}" may
            # have printed an empty one)
            if rest[:1] and not rest[:1].isalnum() and rest[:1] != "." and rest.strip():
                return True
            i = frag.find(tail, i + 1)
    return False


def expanded(index: SearchIndex) -> list[SearchEntry]:
    """The entries a matcher matches, numbered as its store numbers them: every entry, then one
    per piece of an assembled message with no literal text of its own ("\\n".join(errors)),
    matched by its pieces, each placed anywhere (the message may hold several)."""
    return [
        *index.entries,
        *(
            e.model_copy(
                update={"fragments": alt.fragments, "anchors": alt.anchors, "fields": [], "starts_literal": False, "ends_literal": False, "alternatives": []}
            )
            for e in index.entries
            for alt in e.alternatives
        ),
    ]


class Matcher:
    """Matches messages against one dataset's search index."""

    def __init__(self, index: SearchIndex, dataset: str = "") -> None:
        self.index = index
        self.repo = index.repo
        self.dataset = dataset or index.repo
        self.foreign: list = []  # ForeignError: what the dataset's project does not raise
        self._prepared = [Prepared(e) for e in expanded(index)]
        self.total = len(index.entries)
        df: dict[str, int] = {}
        for p in self.entries:
            for tok in p.tokens:
                df[tok] = df.get(tok, 0) + 1
        self.df = df
        self.buckets: dict[str, list[Prepared]] = {}
        self.loose: list[Prepared] = []  # literal text, but no whole word to anchor on
        self.blank: list[Prepared] = []  # no literal text: opaque or message-less
        self.by_function: dict[str, list[Prepared]] = {}
        for p in self.entries:
            if p.tokens:
                anchor = min(p.tokens, key=lambda t: (df[t], -len(t), t))
                self.buckets.setdefault(anchor, []).append(p)
            elif p.frags:
                self.loose.append(p)
            else:
                self.blank.append(p)
            for s in p.entry.sites:
                self.by_function.setdefault(_leaf(s.qualname), []).append(p)
        self._postings: dict[str, list[int]] | None = None
        self._posting_lists()  # built at load so the first miss costs what every other query does

    @property
    def entries(self) -> list[Prepared]:
        """Every entry, in index order (a store loads them all only when asked)."""
        return self._prepared

    @classmethod
    def load(cls, dataset: Path) -> "Matcher":
        from crawler.publish.dataset import load_foreign, load_manifest, load_search_index

        load_manifest(dataset)  # a dataset of another schema_version is refused, as diff and render refuse it
        matcher = cls(load_search_index(dataset), str(dataset))
        matcher.foreign = load_foreign(dataset)
        return matcher

    # -- the lookups a search needs (match_store.StoredMatcher answers them from disk)

    def _bucket(self, words: set[str]) -> list[Prepared]:
        """Entries anchored on one of the words, in index order."""
        return [p for tok in words for p in self.buckets.get(tok, ())]

    def _kind(self, kind: str) -> list[Prepared]:
        """ "loose": literal text but no whole word to anchor on; "blank": no literal text."""
        return self.loose if kind == "loose" else self.blank

    def _in_function(self, name: str) -> list[Prepared]:
        return self.by_function.get(name, [])

    def _posting_sizes(self, words: list[str]) -> dict[str, int]:
        """How many entries' literal text has each word (lowercase), for the words any entry has."""
        postings = self._posting_lists()
        return {w: len(postings[w]) for w in words if w in postings}

    def _posting(self, word: str) -> list[int]:
        """The numbers (index positions) of the entries whose literal text has the word, in order."""
        return self._posting_lists()[word]

    def _numbered(self, numbers: list[int]) -> list[Prepared]:
        return [self.entries[n] for n in numbers]

    def record(self, entry_id: str) -> dict[str, Any] | None:
        """The part of an entry's record its lineage reads (``lineage.read_record``); None when
        the matcher has no dataset on disk or the record cannot be read."""
        from crawler.consume.lineage import read_record

        records: dict[str, dict[str, Any] | None] = self.__dict__.setdefault("_records", {})
        if entry_id not in records:
            records[entry_id] = read_record(Path(self.dataset) / "errors", entry_id) if self.dataset else None
        return records[entry_id]

    # -- full matches

    def _candidates(self, reading: Reading) -> list[Prepared]:
        seen: dict[int, Prepared] = {}
        for p in self._bucket(set(WORD.findall(reading.message))):
            seen[id(p)] = p
        for p in self._kind("loose"):
            seen[id(p)] = p
        if reading.frame is not None:
            for p in self._in_function(_leaf(reading.frame.function)):
                seen[id(p)] = p
        if not reading.message:
            for p in self._kind("blank"):
                seen[id(p)] = p
        return list(seen.values())

    def _score(
        self, p: Prepared, reading: Reading, how: str, covered: int, values: dict[str, str], gaps: list[tuple[int, int]] | None = None, fold: bool = False
    ) -> Match:
        e = p.entry
        exc = 0
        if reading.exception:
            named = fold_case(reading.exception) if fold else reading.exception
            if named == (fold_case(e.exception) if fold else e.exception):
                exc = 2
            elif named in (map(fold_case, e.catch_as) if fold else e.catch_as):
                exc = 1
        site = site_match(reading.frame, e)
        n = len(reading.message)
        coverage = covered / n if n else 1.0
        weighed = n - sum(max(0, end - start - FIELD_WEIGHT) for start, end in gaps or ())
        places = [
            len(values.get(f"f{i}") or "")
            for i, expr in enumerate(e.fields)
            if expr in _PLACE_FIELDS and _PLACE_FIELDS[expr].fullmatch(values.get(f"f{i}") or "")
        ]
        covered_places = covered + sum(places)
        weighed += sum(max(0, k - FIELD_WEIGHT) for k in places)
        support = covered_places / weighed if weighed > 0 else 0.0
        if fold:
            anchored = bool(p.tokens) and not {fold_case(t) for t in p.tokens}.isdisjoint(WORD.findall(fold_case(reading.message)))
        else:
            anchored = bool(p.tokens) and not set(p.tokens).isdisjoint(WORD.findall(reading.message))
        if not p.frags and ((not n and (reading.frame is None or site) and (exc or not reading.exception or site == 3)) or (site and exc)):
            # nothing to cover: a bare raise for an empty message (where the traceback points,
            # when it gives a frame, and raising what it names unless at the frame's very line:
            # renamed since), or where the traceback points and with the exception it names
            support, anchored = 1.0, True
        # the last frame is evidence: the whole template fits, the exception agrees and the
        # frame is one of the entry's sites (its line, near it, or its function)
        framed = how == "full" and bool(site) and bool(exc)
        return Match(e, reading, how, covered, coverage, exc, site, values, self.dataset, support=support, anchored=anchored, framed=framed)

    def full_matches(self, reading: Reading, fold: bool = False) -> list[Match]:
        """Entries whose whole template fits the reading's message; ``fold``: ignoring the case of
        ASCII letters (``fold_case``), tried among the entries sharing its rarest words."""
        out = []
        msg = reading.message
        pool = [p for p in self._sharing_words(msg, CASELESS_POOL) if p.wordy] if fold else self._candidates(reading)
        for p in (p.as_pasted(msg) for p in pool):
            if reading.exception and p.entry.kind == LOG and reading.source != "log":
                continue  # the text names an exception: it was raised, not logged
            if not p.frags:
                # an opaque entry matches anything: only offered where the traceback points at it,
                # or for an empty message, and then only for the exception the input names
                if msg and not (reading.frame and _in_named_function(reading.frame, p.entry)):
                    continue
                if not msg and reading.frame is not None and not site_match(reading.frame, p.entry):
                    continue  # a message-less error raised elsewhere than this entry's sites
                if (
                    reading.exception
                    and reading.exception != p.entry.exception
                    and reading.exception not in p.entry.catch_as
                    and not _same_function(reading.frame, p.entry)
                ):
                    continue  # a traceback's frame in that very function may name an exception since renamed
            if p.frags and not p.wordy and not (reading.frame and _in_named_function(reading.frame, p.entry)):
                # no letter or digit in the literal text ("{a} {b}"): matches most messages, so only
                # offered for the exception the input names, or where the traceback points
                if not reading.exception or (reading.exception != p.entry.exception and reading.exception not in p.entry.catch_as):
                    continue
            text = msg
            if p.frags and p.entry.ends_literal:
                # a message ending in whitespace or a full stop loses it when copied, stripped or
                # quoted in a sentence ("... Valid kinds are: sliding, mamba"): give it back
                tail = _dropped_tail(p.frags[-1])
                if tail and not text.endswith(tail):
                    text = text.rstrip() + tail
            if not p.frags and not p.entry.fields and text:
                continue  # no message at all (a bare raise): only an empty one is this entry's
            if fold:
                gaps = fragment_gaps(p.folded()[0], p.entry.starts_literal, p.entry.ends_literal, fold_case(text))
            else:
                gaps = fragment_gaps(p.frags, p.entry.starts_literal, p.entry.ends_literal, text)
            if gaps is None:
                continue
            values = p.values(text, gaps)
            if reading.truncated and values:
                values = _cut_values(values, gaps, text, p)
            out.append(self._score(p, reading, "full", p.literal_len, values, gaps, fold))
        return out

    # -- truncated messages and near misses

    def _posting_lists(self) -> dict[str, list[int]]:
        if self._postings is None:
            postings: dict[str, list[int]] = {}
            for n, p in enumerate(self.entries):
                for tok in {t.lower() for t in WORD.findall(" ".join(p.frags))}:
                    postings.setdefault(tok, []).append(n)
            self._postings = postings
        return self._postings

    def _sharing_words(self, message: str, limit: int) -> list[Prepared]:
        total = self.total or 1
        scores: dict[int, float] = {}
        sizes = self._posting_sizes(sorted({t.lower() for t in WORD.findall(message)}))
        words = sorted(sizes, key=lambda t: sizes[t])
        for tok in words[:12]:  # the rarest words carry the signal; common ones cost the most
            plist = self._posting(tok)
            idf = math.log(1 + total / len(plist))
            for n in plist:
                scores[n] = scores.get(n, 0.0) + idf
        return self._numbered(sorted(scores, key=lambda k: -scores[k])[:limit])

    def prefix_matches(self, reading: Reading, fold: bool = False) -> list[Match]:
        msg = reading.message
        for mark in ELLIPSIS:
            if msg.endswith(mark):
                msg = msg[: -len(mark)].rstrip()
        if len(msg) < 4:
            return []
        out = []
        cut = Reading(msg, reading.exception, reading.source, reading.frame, True)
        # an older wording that ended its sentence where today's message goes on ("... when
        # initializing the engine." where the engine is now followed by " (this flag ..."): the
        # message without its full stop, when that is the beginning of an entry's literal text
        # up to a word's end (see ``_stops_where_it_goes_on``)
        stopped = msg[:-1] if msg.endswith(".") and not msg.endswith("..") and not reading.truncated else None
        for p in (p.as_pasted(msg) for p in self._sharing_words(msg, 200)):
            if reading.exception and p.entry.kind == LOG and reading.source != "log":
                continue
            frags, segs = p.folded() if fold else (p.frags, p.segs)
            found = _prefix_cover(segs, fold_case(msg) if fold else msg)
            if found is None and stopped is not None and _stops_where_it_goes_on(frags, fold_case(stopped) if fold else stopped):
                found = _prefix_cover(segs, fold_case(stopped) if fold else stopped)
            if found is None:
                continue
            in_field = found < 0
            covered = -found - 1 if in_field else found
            if covered < max(4, 0.4 * len(msg)):
                continue
            m = self._score(p, cut, "prefix", covered, {}, None, fold)
            if in_field and not reading.truncated:
                # an uncut message ending in a field's value where the template goes on: as likely
                # another message that shares this one's start ("... GPUs in the cluster.")
                m.anchored = False
            out.append(m)
        return out

    def nearest(self, message: str, limit: int = 5) -> list[Near]:
        """The ``limit`` entries worded most like the message (difflib's ratio), among the
        ``NEAREST_POOL`` sharing its rarest words. Each is bounded first by ``quick_ratio`` (never below the
        ratio) and the full ratio, the costly part, computed only while a bound could still
        enter the best ``limit``: the same answer as computing every one."""
        import difflib

        message = message[:500]
        bounded = []
        for p in self._sharing_words(message, NEAREST_POOL):
            # the template as a message would show it (fields as "…"), whole and cut to the
            # message's length: a pasted message may be a typo'd or truncated one
            literal = "…".join(p.frags) if p.frags else p.entry.text
            pair = (difflib.SequenceMatcher(None, message, literal[:500]), difflib.SequenceMatcher(None, message, literal[: len(message) + 5]))
            bounded.append((max(pair[0].quick_ratio(), 0.95 * pair[1].quick_ratio()), p, pair))
        bounded.sort(key=lambda b: -b[0])
        out: list[Near] = []
        for bound, p, (whole, cut) in bounded:
            if len(out) >= limit and bound < sorted(n.similarity for n in out)[-limit]:
                break
            out.append(Near(p.entry, max(whole.ratio(), 0.95 * cut.ratio()), self.dataset))
        out.sort(key=lambda n: (-n.similarity, n.entry.id))
        return out[:limit]


def rank(matches: list[Match], limit: int) -> list[Match]:
    """Best per entry, best first; everything tied with the last one shown is shown too."""
    best: dict[tuple[str, str], Match] = {}
    for m in matches:
        k = (m.dataset, m.entry.id)
        if k not in best or m.key > best[k].key:
            best[k] = m
    ordered = sorted(sorted(best.values(), key=lambda m: (m.dataset, m.entry.id)), key=lambda m: m.key, reverse=True)
    counts: dict[tuple, int] = {}
    for m in ordered:
        counts[m.key] = counts.get(m.key, 0) + 1
    for m in ordered:
        m.tied = counts[m.key] > 1
    if len(ordered) > limit:
        edge = ordered[limit - 1].key
        ordered = [m for i, m in enumerate(ordered) if i < limit or m.key == edge]
    return ordered


def paste_readings(text: str) -> list[Reading]:
    """The readings of a paste: the whole text read as before (prefixes stripped), then every
    exception line in it, alone and with the lines that continue it (``paste.py``); when the
    paste has typographic quotes, dashes or spaces (``paste.plain_typography``), then the readings
    of it in ASCII too (a message that has them itself still matches as pasted)."""
    from crawler.consume.paste import plain_typography

    text = text[-MAX_INPUT:]
    readings = _readings_of(text)
    plain = plain_typography(text)
    if plain != text:
        readings = readings[:MAX_READINGS]
        readings += [r for r in dict.fromkeys(_readings_of(plain)[:MAX_READINGS]) if r not in readings]
    return readings


def _readings_of(text: str) -> list[Reading]:
    from crawler.consume.paste import candidates, clean, exception_line, logged, without_parameter, without_warning

    cleaned = clean(text[-MAX_INPUT:])
    readings = read_query(cleaned)
    # a log line's level says what it is: the message of a log entry of that level
    lines = [line for line in text[-MAX_INPUT:].split("\n") if line.strip()][-MAX_LOG_LINES:]
    for line in reversed(lines):
        got = logged(line)
        if got is not None and exception_line(got[1]) is None:
            r = Reading(got[1].strip(), got[0], "log")
            if r not in readings:
                readings.append(r)
    for c in candidates(cleaned):
        for message in dict.fromkeys([c.message, without_parameter(c.message), without_warning(c.message), c.continued]):
            if message or (c.frame and message is c.message):  # a bare name after its frame: a message-less raise
                frame = Frame(*c.frame) if c.frame else None
                r = Reading(message, c.exception, c.source, frame, message.endswith(ELLIPSIS) or c.source == "raise", c.line)
                if r not in readings:
                    readings.append(r)
    return readings[: MAX_READINGS * 2]


def _before_traceback(text: str) -> set[str]:
    """The (cleaned) lines of a paste printed just before a traceback: a log call that prints the
    exception it handles (``logger.exception``, ``exc_info=True``) says only that something failed,
    the traceback after it says what."""
    from crawler.consume.paste import clean

    lines = [line.strip() for line in clean(text[-MAX_INPUT:]).split("\n") if line.strip()]
    return {line for line, nxt in zip(lines, lines[1:]) if nxt == _TB_HEADER}


#: Strong matches whose records are read for their lineage when a release is preferred (the
#: others keep their place): more than any paste matches but a template of fields alone.
MAX_LINEAGE = 200


def lineage_of(record: Mapping[str, Any], read: Callable[[str], dict[str, Any] | None]) -> dict[str, Any] | None:
    """What an answer says of an entry's lineage (``lineage.py``): the releases that raised it,
    its moves, the entries that succeeded it in order (``read`` gives a record by id) and the
    one that raises its error today; None when its record has no history."""
    from crawler.consume.lineage import chain, elsewhere, releases, reviewed

    history = record.get("history")
    if not isinstance(history, dict):
        return None
    span = releases(history)
    after = chain(record, read)
    succeeded = []
    before: Mapping[str, Any] = record
    for nxt in after:
        was, now = exception_word(before), exception_word(nxt)
        succeeded.append(
            {
                "id": nxt["id"],
                "exception": now,
                "template": nxt["message"]["text"],
                "how": "linked by review"
                if reviewed(before) is not None
                else "raised as another exception"
                if was != now
                else "reworded elsewhere"
                if elsewhere(before, nxt)
                else "reworded",
                "retired": bool((nxt.get("history") or {}).get("retired")),
                "raised_in": _raised_in(nxt.get("history")),
            }
        )
        before = nxt
    last = after[-1] if after else record
    live = not (last.get("history") or {}).get("retired")
    return {
        "raised_in": _raised_in(history),
        "releases": span.as_dict() if span else None,
        "retired": bool(history.get("retired")),
        "moved": [{"from_path": m["from_path"], "to_path": m["to_path"], "version": m.get("version")} for m in history.get("moved") or []],
        "succeeded_by": succeeded,
        "today": last["id"] if live else None,
    }


def _raised_in(history: Any) -> str | None:
    from crawler.consume.lineage import releases

    span = releases(history)
    return (span.text() or None) if span is not None else None


def _prefer_release(strong: list[Match], matchers: list[Matcher], version: str | None, shown: int) -> list[Match]:
    """The strong matches with their lineage, those the release ``version`` raised first (then
    those whose history does not say, then those it did not raise): read for every strong match
    when a release is asked for, else for the ``shown`` first and those alike with one of them in
    all but being retired (``Match.current``, which orders them)."""
    from crawler.consume.lineage import live_in

    by_dataset = {m.dataset: m for m in matchers}
    read = strong[: MAX_LINEAGE if version else shown]
    if not version:
        alike = {m.key[:-2] for m in read}
        read += [m for m in strong[shown:] if m.key[:-2] in alike][: max(0, MAX_LINEAGE - len(read))]
    for m in read:
        matcher = by_dataset.get(m.dataset)
        record = matcher.record(m.entry.id) if matcher is not None else None
        if record is None:
            continue
        m.lineage = lineage_of(record, matcher.record) if matcher is not None else None
        m.current = not (m.lineage or {}).get("retired")
        if version:
            m.live_in = {True: 1, False: -1, None: 0}[live_in(record.get("history"), version)]
    return rank(strong, len(strong) or 1) if version or not all(m.current for m in strong) else strong


def match(text: str, matchers: list[Matcher], limit: int = 10, version: str | None = None) -> Result:
    """The answer to a paste; ``version``: the release the user runs (``errcat match --version``),
    whose entries come first; without it, the one release the paste names (``paste.named_version``)."""
    from crawler.consume.foreign_match import foreign_hits
    from crawler.consume.paste import is_umbrella, named_version

    version_from = "option" if version else None
    if not version:
        named = {v for v in (named_version(text[-MAX_INPUT:], mt.repo.rpartition("/")[2]) for mt in matchers) if v}
        version, version_from = (named.pop(), "paste") if len(named) == 1 else (None, None)
    readings = paste_readings(text)
    before_traceback = _before_traceback(text)
    hits = foreign_hits(text, [r.message for r in readings], matchers)
    foreign_lines = {m for h in hits for m in h.messages}
    found: list[Match] = []
    for matcher in matchers:
        for reading in readings:
            full = matcher.full_matches(reading)
            if not any(m.strong for m in full):
                full += matcher.prefix_matches(reading)
            for fold in () if any(m.strong for m in full) else ("full", "prefix"):
                # another letter case (an issue's title: "valueerror: unknown kv cache ..."):
                # the same matches ignoring it, tried only when nothing matched as pasted
                full += matcher.full_matches(reading, True) if fold == "full" else matcher.prefix_matches(reading, True)
                if any(m.strong for m in full):
                    break
            found += full
    for m in found:
        if m.reading.message in foreign_lines:
            m.anchored = m.framed = False  # a line vLLM does not raise: whatever it resembles is only weak
    ranked = rank(found, len(found) or 1)
    strong = [m for m in ranked if m.strong]
    # a strong match's field swallows a sentence an entry's whole template fits ("Exception in
    # worker {p} while processing method {method}." around "NCCL error: ..."): that sentence is the
    # root cause the wrapper reports, the wrapper its umbrella
    swallowed = _swallowed(strong, [m for m in ranked if not m.strong])
    strong = _prefer_release(swallowed + strong, matchers, version, limit)
    weak = [m for m in ranked if not m.strong]
    wrappers = {id(m) for m in strong if m.how == "full" and any(s.reading.message in v for s in swallowed for v in m.values.values())}
    umbrellas = [
        m
        for m in strong
        if is_umbrella(m.entry.text, m.entry.exception) or (m.entry.kind == LOG and m.reading.message in before_traceback) or id(m) in wrappers
    ]
    causes = [m for m in strong if m not in umbrellas]
    if umbrellas and (causes or hits):
        for m in causes:
            m.role = "root cause"
        strong = causes + umbrellas
    for m in umbrellas:
        m.role = "umbrella"
    nearest: list[Near] = []
    if readings and not hits and not causes:
        # nothing but umbrellas (or nothing at all): the nearest entries to the other lines may
        # be the root cause, reworded since the release the paste came from; not the umbrellas
        # themselves, nor their lines read another way ("RuntimeError: <its message>")
        seen: set[str] = set()
        umbrella_lines = {m.reading.message for m in umbrellas}
        answered = {(m.dataset, m.entry.id) for m in umbrellas}
        for r in sorted(readings, key=lambda r: (r.source != "line", -r.line))[:4]:
            if r.message in seen or any(r.message.endswith(u) for u in umbrella_lines):
                continue
            seen.add(r.message)
            for matcher in matchers:
                for n in matcher.nearest(r.message):
                    if (n.dataset, n.entry.id) in answered:
                        continue
                    # the reading of this message that agrees best: a log line's is both its
                    # level's and the plain text's, and the level is what it says
                    n.reading = max((q for q in readings if q.message == r.message), key=lambda q: agreement(n.entry, q))
                    nearest.append(n)
        best: dict[str, Near] = {}
        for n in nearest:
            if n.entry.id not in best or _weak_score(n) > _weak_score(best[n.entry.id]):
                best[n.entry.id] = n
        nearest = sorted(best.values(), key=lambda n: (-n.similarity, n.entry.id))[:5]
    weak_all: list = _repeated_first(sorted([*weak[:limit], *nearest], key=lambda w: (-_weak_score(w), w.entry.id)))[:limit]
    _weak_lineage(weak_all, matchers)
    return Result(readings, _cap(strong, limit), nearest, weak_all, hits, version, version_from)


def _weak_lineage(weak: list, matchers: list[Matcher]) -> None:
    """The lineage of each weak candidate shown (as a strong match's, ``_prefer_release``): a
    retired entry worded like the paste, weakly, still names what raises its error today, so the
    answer leads to today's page either way; it stays a weak candidate (``strength`` "weak")."""
    by_dataset = {m.dataset: m for m in matchers}
    for w in weak:
        matcher = by_dataset.get(w.dataset)
        record = matcher.record(w.entry.id) if matcher is not None else None
        if matcher is not None and record is not None:
            w.lineage = lineage_of(record, matcher.record)


def _weak_score(w: "Match | Near") -> float:
    """Likeness of wording, then within ``AGREE`` of it what the paste names (``agreement``)."""
    if isinstance(w, Near):
        return w.similarity + AGREE * agreement(w.entry, w.reading)
    # a traceback frame in the entry's own function outweighs any likeness of wording
    return (1.0 if w.site_match else 0.0) + (max(w.support, w.coverage) if w.how == "full" else w.coverage) + AGREE * agreement(w.entry, w.reading)


def _cap(matches: list[Match], limit: int) -> list[Match]:
    if len(matches) <= limit:
        return matches
    edge = matches[limit - 1].key
    return [m for i, m in enumerate(matches) if i < limit or m.key == edge]


def _swallowed(strong: list[Match], weak: list[Match]) -> list[Match]:
    """The weak whole-template matches (anchored: a word of their literal text is in it) of a
    reading that a strong match's field value holds whole: the sentence a wrapper's field swallowed
    (``errcat match`` and the box alike: search.js ``swallowed``)."""
    held = [v for m in strong if m.how == "full" for v in m.values.values() if v]
    out = []
    for w in weak:
        message = w.reading.message
        if w.how == "full" and w.anchored and message and not any(w.entry.id == m.entry.id for m in strong) and any(message in v for v in held):
            w.held = True
            out.append(w)
    return out
