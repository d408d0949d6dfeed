"""Reproductions: the upstream's own tests that raise an entry's error, joined after extraction.

Each test file's result lists its raises blocks (``codefacts.read_test_file``, cached with the
file). A block is linked to an entry when

- its exception is compatible: the entry's exception, or a class the entry's exception info
  names among its ``bases`` or as its ``builtin_ancestor``; and
- with a message pattern: every literal fragment of the pattern (text any message it matches
  must contain, read by the regex *parser*: the pattern is never run) can occur in a message of
  the entry's template (see :func:`_hits`), the template's literal text giving at least half of
  each fragment and ``MIN_LITERAL`` characters in all. Among the entries that fit, those whose
  function the block runs (through the calls the graph resolves) win; when the block runs
  repository code and none of it raises a fitting entry, only a pattern of ``STRONG_LITERAL``
  characters links. Then the entries whose template gives the most of the pattern, then those
  of the very class the test expects; a pattern that still fits more than ``MAX_AMBIGUOUS``
  entries says too little and links none (a test raises one error, not several);
- without a pattern: the block calls (by resolved name) a function of the repository that
  raises exactly one compatible entry.

Comparing literal text bounds the work by the lengths involved, whatever the pattern.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from typing import Any

from crawler.catalogue.callers import Graph
from crawler.extract.derive import derived
from crawler.extract.segments import template_segments
from crawler.model.kinds import NATIVE, exception_qualname
from crawler.model.shapes import ExtractedSite, FileResult, RecordData

MIN_LITERAL = 8
ANCHOR = 8
STRONG_LITERAL = 30
MAX_AMBIGUOUS = 1
MAX_PER_ENTRY = 3
MAX_SPANNING = 200  # longer fragments must sit in one literal run (bounds the work)


def _hits(frag: str, lits: list[str], head_field: bool = True, tail_field: bool = True, joined: str | None = None) -> int:
    """How many of ``frag``'s characters the template's literal runs give when ``frag`` occurs
    in a message of the template (0: it cannot, or mostly through fields' values).

    ``lits`` are the template's literal runs, a field between each two; ``head_field`` and
    ``tail_field`` say whether a field also comes before the first and after the last. ``frag``
    occurs in a message when it lies in one run, or when it is: the end of a run (or, after a
    field, nothing), then runs in order each after a field's value, then the start of a run
    (or a field's value). The runs are placed at their earliest occurrence, which finds an
    alignment whenever one exists. ``joined``, the runs joined by NULs, finds a fragment
    without a NUL in one run with one search.
    """
    if joined is None or "\0" in frag:
        joined = None
        for lit in lits:
            if frag in lit:
                return len(frag)
    elif frag in joined:
        return len(frag)
    n = len(frag)
    if n > MAX_SPANNING or not _may_span(frag, lits, joined):
        return 0
    best = 0
    for i in range(len(lits)):
        lit = lits[i]
        starts = []  # (where the rest begins, characters covered): the end of lit, then a field
        p = lit.find(frag[0], max(0, len(lit) - n + 1))
        while p >= 0:
            if lit.endswith(frag[: len(lit) - p]):
                starts.append((len(lit) - p, len(lit) - p))
            p = lit.find(frag[0], p + 1)
        if head_field or i > 0:  # the fragment may begin in the value of the field before lits[i]
            starts.append((0, 0))
        for pos, covered in starts:
            j = i + 1 if pos else i
            while True:
                if j >= len(lits):
                    if tail_field:
                        best = max(best, covered)
                    break
                nxt = lits[j]
                k = frag.find(nxt[0], pos)  # the rest: a field's value, then the start of lits[j]
                while k >= 0 and not nxt.startswith(frag[k:]):
                    k = frag.find(nxt[0], k + 1)
                best = max(best, covered + (n - k if k >= 0 else 0))
                at = frag.find(nxt, pos)
                if at < 0:
                    break
                covered += len(nxt)
                pos = at + len(nxt)
                j += 1
                if pos == n:
                    best = max(best, covered)
                    break
    # the literal text must carry most of the fragment: a field's value is anyone's guess
    return best if best * 2 >= n else 0


def _may_span(frag: str, lits: list[str], joined: str | None = None) -> bool:
    """A quick necessary condition for ``_hits``: with half of ``frag`` from literal text, its
    first or last quarter lies in a run, or the runs lying whole inside it make up the rest.
    (``joined``: as for ``_hits``, given only for a fragment without a NUL.)"""
    n = len(frag)
    q = max(1, n // 4)
    head, tail = frag[:q], frag[-q:]
    if head in joined or tail in joined if joined is not None else any(head in lit or tail in lit for lit in lits):
        return True
    return 2 * sum(len(lit) for lit in lits if lit in frag) >= n - 4 * (q - 1)


class _Entry:
    __slots__ = ("record", "lits", "folded", "joined", "exceptions", "functions", "head_field", "tail_field")

    def __init__(self, record: RecordData, functions: set[str], primary: ExtractedSite | None = None):
        self.record = record
        template = record["message"]
        if template.get("opaque"):
            self.lits, self.head_field, self.tail_field = [], True, True
        elif primary is not None:  # the literal runs the extraction derived of the primary site's template, the message
            facts = derived(primary)
            self.lits = list(facts["fragments"])
            self.head_field, self.tail_field = not facts["starts_literal"], not facts["ends_literal"]
        else:
            segs = template_segments(template)
            self.lits = [text for kind, text in segs if kind == "lit" and text]
            self.head_field = not segs or segs[0][0] != "lit"
            self.tail_field = not segs or segs[-1][0] != "lit"
        self.folded = [lit.casefold() for lit in self.lits]
        self.joined = {False: "\0".join(self.lits), True: "\0".join(self.folded)}
        exc = record["exception"] or {"qualname": exception_qualname(record)}  # (a log or response: its level, its builder)
        self.exceptions = {exc["qualname"], *exc.get("bases", ())}
        if exc.get("builtin_ancestor"):
            self.exceptions.add(f"builtins.{exc['builtin_ancestor']}")
        self.functions = functions


class _Index:
    """Every entry's literal runs in one string per case (runs apart by NUL, entries by SOH), so
    the entries whose text holds a piece are found with ``str.find``, at C speed."""

    def __init__(self, records: list[RecordData], primaries: Mapping[str, ExtractedSite] | None = None):
        self.entries: list[_Entry] = []
        self.by_function: dict[str, list[int]] = {}
        self.by_exception: dict[str, list[int]] = {}
        for record in records:
            entry = _Entry(record, {f"{s['module']}.{s['qualname']}" for s in record["sites"]}, primaries.get(record["id"]) if primaries is not None else None)
            for fq in entry.functions:
                self.by_function.setdefault(fq, []).append(len(self.entries))
            for name in entry.exceptions:
                self.by_exception.setdefault(name, []).append(len(self.entries))
            self.entries.append(entry)
        # Per set of exceptions a block expects, the texts of the entries compatible with one
        # of them (the only ones it can link to), and the pieces already looked for there.
        self._texts: dict[tuple[frozenset[str], bool], tuple[str, list[int], list[int]]] = {}
        self._held: dict[tuple[str, bool, frozenset[str]], set[int]] = {}
        self._compatible: dict[frozenset[str], set[int]] = {}

    def _text(self, exceptions: frozenset[str], fold: bool) -> tuple[str, list[int], list[int]]:
        """(text, where each entry's runs start in it, which entry each is)."""
        key = (exceptions, fold)
        if key not in self._texts:
            members = sorted({k for name in exceptions for k in self.by_exception.get(name, ())})
            starts, pos, parts = [], 0, []
            for k in members:
                entry = self.entries[k]
                starts.append(pos)
                text = entry.joined[fold]
                parts.append(text)
                pos += len(text) + 1
            self._texts[key] = ("\1".join(parts), starts, members)
            self._compatible[exceptions] = set(members)
        return self._texts[key]

    def compatible(self, exceptions: frozenset[str]) -> set[int]:
        """The entries whose exception is one of ``exceptions`` or derives from one."""
        if exceptions not in self._compatible:
            self._text(exceptions, False)
        return self._compatible[exceptions]

    def holding(self, piece: str, fold: bool, exceptions: frozenset[str]) -> set[int]:
        """The entries compatible with ``exceptions`` one of whose literal runs holds ``piece``."""
        if not piece or "\0" in piece or "\1" in piece:
            return set()
        key = (piece, fold, exceptions)
        if key in self._held:
            return self._held[key]
        text, starts, members = self._text(exceptions, fold)
        out: set[int] = set()
        at = text.find(piece)
        while at >= 0:
            k = bisect_right(starts, at) - 1
            out.add(members[k])
            at = text.find(piece, starts[k + 1]) if k + 1 < len(starts) else -1
        self._held[key] = out
        return out

    def in_functions(self, functions: set[str]) -> set[int]:
        return {k for fq in functions for k in self.by_function.get(fq, ())}


def reproductions_by_id(
    records: list[RecordData], tests: list[FileResult], graph: Graph | None, permalink: Any, primaries: Mapping[str, ExtractedSite] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The ``meaning.reproductions`` of each record some test reproduces, by id; deterministic.
    ``primaries``: each record's primary site as extracted (``entries.Entries``), whose derived
    facts hold the message's literal runs (else they are read from the message again)."""
    index = _Index(records, primaries)
    found: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {}
    # Blocks that expect the same text of the same exceptions from the same calls link the same
    # entries (a quarter of vLLM's blocks repeat another's: the same check tested many ways).
    linked: dict[tuple[Any, ...], list[tuple[_Entry, int]]] = {}
    for result in tests:
        if result.get("status") != "ok":
            continue
        for block in result.get("tests", ()):
            frags = block.get("fragments")
            asked = (
                tuple(frags) if frags is not None else None,
                block.get("fold", False),
                tuple(block["exceptions"]),
                tuple(block["calls"]),
                block["match"] is None,
            )
            links = linked.get(asked)
            if links is None:
                links = linked[asked] = _links(block, index, graph)
            for entry, score in links:
                rep = {
                    "path": result["path"],
                    "line": block["line"],
                    "end_line": block["end_line"],
                    "qualname": block["qualname"],
                    "match": block["match"],
                    "permalink": permalink(result["path"], block["line"]),
                    "code": block["code"],
                }
                key = (0 if block["match"] is not None else 1, -score, result["path"], block["line"])
                found.setdefault(entry.record["id"], []).append((key, rep))
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        reps = found.get(record["id"])
        if reps:
            reps.sort(key=lambda kr: kr[0])
            out[record["id"]] = [rep for _, rep in reps[:MAX_PER_ENTRY]]
    return out


def _links(block: dict[str, Any], index: _Index, graph: Graph | None) -> list[tuple[_Entry, int]]:
    frags = block.get("fragments")
    exceptions = set(block["exceptions"])
    if block["match"] is None:
        called = {fq for fq in (graph.find(c) for c in block["calls"]) if fq is not None} if graph is not None else set()
        candidates = [index.entries[k] for k in sorted(index.in_functions(called))]
        candidates = [e for e in candidates if not e.exceptions.isdisjoint(exceptions)]
        return [(candidates[0], 0)] if len(candidates) == 1 else []
    if not frags or sum(len(f) for f in frags) < MIN_LITERAL:
        return []
    fold = block.get("fold", False)
    reach = graph.reach(block["calls"]) if graph is not None else set()
    # Where the longest fragment can be: an entry whose runs hold its first or last quarter
    # (a fragment across fields is looked for no further), or one the block runs.
    longest = max(frags, key=len)
    q = max(ANCHOR, len(longest) // 4)
    expected = frozenset(exceptions)
    pool = index.holding(longest[:q], fold, expected) | index.holding(longest[-q:], fold, expected) | (index.in_functions(reach) & index.compatible(expected))
    matched = []
    for k in sorted(pool):
        entry = index.entries[k]
        lits = entry.folded if fold else entry.lits
        joined = entry.joined[fold]
        score = 0
        for frag in frags:
            got = _hits(frag, lits, entry.head_field, entry.tail_field, joined)
            if not got:
                break
            score += got
        else:
            if score >= MIN_LITERAL:
                matched.append((entry, score))
    if not matched:
        return []
    reached = [(e, s) for e, s in matched if e.functions & reach]
    if reached:  # the block runs the code that raises it: the strongest evidence there is
        matched = reached
    elif reach:
        # The block runs repository code the graph follows, and none of it raises a matching
        # entry: only a pattern long enough to name the message alone links (the raise may sit
        # behind a call the graph cannot see), or a native check: the graph never sees the calls
        # into native code (``torch.ops...``).
        matched = [(e, s) for e, s in matched if s >= STRONG_LITERAL or e.record["kind"] == NATIVE]
    if len(matched) > 1:  # the template that gives more of the pattern's text is the likelier
        top = max(s for _, s in matched)
        matched = [(e, s) for e, s in matched if s == top]
    if len(matched) > 1:  # and the error of the very class the test expects
        exact = [(e, s) for e, s in matched if exception_qualname(e.record) in exceptions]
        matched = exact or matched
    if len(matched) > MAX_AMBIGUOUS:
        return []
    return matched
