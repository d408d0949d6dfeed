"""Reproductions: the upstream's own tests that raise an entry's error, joined after extraction.

Each test file's result lists its raises blocks (``codefacts.test_facts``, cached with the
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

import re
from typing import Any

from .callers import Graph
from .search import template_segments

MIN_LITERAL = 8
STRONG_LITERAL = 30
MAX_AMBIGUOUS = 1
MAX_PER_ENTRY = 3
MAX_SPANNING = 200  # longer fragments must sit in one literal run (bounds the work)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def _hits(frag: str, lits: list[str], head_field: bool = True, tail_field: bool = True) -> int:
    """How many of ``frag``'s characters the template's literal runs give when ``frag`` occurs
    in a message of the template (0: it cannot, or mostly through fields' values).

    ``lits`` are the template's literal runs, a field between each two; ``head_field`` and
    ``tail_field`` say whether a field also comes before the first and after the last. ``frag``
    occurs in a message when it lies in one run, or when it is: the end of a run (or, after a
    field, nothing), then runs in order each after a field's value, then the start of a run
    (or a field's value). The runs are placed at their earliest occurrence, which finds an
    alignment whenever one exists.
    """
    for lit in lits:
        if frag in lit:
            return len(frag)
    n = len(frag)
    if n > MAX_SPANNING:
        return 0
    best = 0
    for i in range(len(lits)):
        starts = [(cut, cut) for cut in range(min(len(lits[i]), n - 1), 0, -1) if lits[i].endswith(frag[:cut])]
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
                for k in range(pos, n + 1):  # the rest: a field's value, then the start of lits[j]
                    if nxt.startswith(frag[k:]):
                        best = max(best, covered + n - k)
                        break
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


class _Entry:
    __slots__ = ("record", "lits", "folded", "exceptions", "functions", "words", "head_field", "tail_field")

    def __init__(self, record: dict[str, Any], functions: set[str]):
        self.record = record
        template = record["message"]
        segs = [] if template.get("opaque") else template_segments(template)
        self.lits = [text for kind, text in segs if kind == "lit" and text]
        self.head_field = not segs or segs[0][0] != "lit"
        self.tail_field = not segs or segs[-1][0] != "lit"
        self.folded = [lit.casefold() for lit in self.lits]
        exc = record["exception"]
        self.exceptions = {exc["qualname"], *exc.get("bases", ())}
        if exc.get("builtin_ancestor"):
            self.exceptions.add(f"builtins.{exc['builtin_ancestor']}")
        self.functions = functions
        self.words = set(_WORD.findall(" ".join(self.folded)))


def _compatible(entry: _Entry, exceptions: list[str]) -> bool:
    return any(e in entry.exceptions for e in exceptions)


def apply(records: list[dict[str, Any]], tests: list[dict[str, Any]], graph: Graph | None,
          permalink: Any) -> None:
    """Fill ``meaning.reproductions`` of each record (in place); deterministic."""
    entries = []
    by_function: dict[str, list[_Entry]] = {}
    by_word: dict[str, list[_Entry]] = {}
    for record in records:
        functions = {f"{s['module']}.{s['qualname']}" for s in record["sites"]}
        entry = _Entry(record, functions)
        entries.append(entry)
        for fq in functions:
            by_function.setdefault(fq, []).append(entry)
        for word in entry.words:
            by_word.setdefault(word, []).append(entry)
    found: dict[str, list[tuple[tuple, dict[str, Any]]]] = {}
    for result in tests:
        if result.get("status") != "ok":
            continue
        for block in result.get("tests", ()):
            for entry, score in _links(block, entries, by_word, by_function, graph):
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
    for record in records:
        reps = found.get(record["id"])
        if reps:
            reps.sort(key=lambda kr: kr[0])
            record["meaning"]["reproductions"] = [rep for _, rep in reps[:MAX_PER_ENTRY]]


def _called(block: dict[str, Any], graph: Graph | None) -> set[str]:
    if graph is None:
        return set()
    return {fq for fq in (graph.find(c) for c in block["calls"]) if fq is not None}


def _links(block: dict[str, Any], entries: list[_Entry], by_word: dict[str, list[_Entry]],
           by_function: dict[str, list[_Entry]], graph: Graph | None) -> list[tuple[_Entry, int]]:
    frags = block.get("fragments")
    exceptions = block["exceptions"]
    if block["match"] is None:
        called = _called(block, graph)
        candidates = {id(e): e for fq in sorted(called) for e in by_function.get(fq, ()) if _compatible(e, exceptions)}
        return [(e, 0) for e in candidates.values()] if len(candidates) == 1 else []
    if not frags or sum(len(f) for f in frags) < MIN_LITERAL:
        return []
    fold = block.get("fold", False)
    words = [w.casefold() for f in frags for w in _inner_words(f)]
    if words:
        pool = min((by_word.get(w, []) for w in words), key=len)
    else:
        pool = entries
    matched = []
    for entry in pool:
        if not _compatible(entry, exceptions):
            continue
        lits = entry.folded if fold else entry.lits
        score = 0
        for frag in frags:
            got = _hits(frag, lits, entry.head_field, entry.tail_field)
            if not got:
                break
            score += got
        else:
            if score >= MIN_LITERAL:
                matched.append((entry, score))
    if not matched:
        return []
    reach = graph.reach(block["calls"]) if graph is not None else set()
    reached = [(e, s) for e, s in matched if e.functions & reach]
    if reached:  # the block runs the code that raises it: the strongest evidence there is
        matched = reached
    elif reach:
        # The block runs repository code the graph follows, and none of it raises a matching
        # entry: only a pattern long enough to name the message alone links (the raise may sit
        # behind a call the graph cannot see).
        matched = [(e, s) for e, s in matched if s >= STRONG_LITERAL]
    if len(matched) > 1:  # the template that gives more of the pattern's text is the likelier
        top = max(s for _, s in matched)
        matched = [(e, s) for e, s in matched if s == top]
    if len(matched) > 1:  # and the error of the very class the test expects
        exact = [(e, s) for e, s in matched if e.record["exception"]["qualname"] in exceptions]
        matched = exact or matched
    if len(matched) > MAX_AMBIGUOUS:
        return []
    return matched


def _inner_words(frag: str) -> list[str]:
    """Words of a fragment with a non-word character (or nothing) on neither side cut off: a
    word at an end of the fragment may be part of a longer word of the message."""
    out = []
    for m in _WORD.finditer(frag):
        start, end = m.span()
        if start > 0 and end < len(frag) and not frag[start - 1].isalnum() and frag[start - 1] != "_" \
                and not frag[end].isalnum() and frag[end] != "_":
            out.append(m.group())
    return out
