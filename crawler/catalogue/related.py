"""Related errors for every entry: raised nearby, or sharing rare terms.

Two inverted indexes, never all pairs:

* by place: entries of the same function, class, module and package, each list sorted by
  position, so a record looks only at its nearest neighbours in each (``_WINDOW`` on each side);
* by rare term: words of the message template (``kv_transfer_config``, ``kv_role``,
  ``tensor_parallel_size``) that occur in at least two and at most ``rare_cap`` (N/400) entries; a record follows the postings of its ``_TERMS`` rarest terms only.
  A field's expression gives only the names spelled as names (``offload_prefetch_step``, not
  ``self``, ``args`` or ``join``): its plain words are code, not what the message is about.
  Sharing one plain word ("here", "correct", "kind") relates nothing by itself: an entry related by
  terms alone shares a name spelled as one (an underscore, a digit or an inner capital:
  ``kv_role``, ``WNA16``, ``CuTe``) or two words; one plain word counts within a package.
* in a package of more than ``_BIG_PACKAGE`` entries, being near is no relation by itself.

Each candidate is scored: raised by a caller of the entry's function 12, 13 when the caller raises
it before the line it calls on (see ``meaning.callers``: a factory's own checks are what a
connector's constructor error is most related to, and those a user meets on the way to it come
first; the graph follows a call through a name typed by a base class or bound from a registry
getter, ``connector_cls(config, role)``, to every subclass's constructor), raised by
a function it calls 6, same function 8, same class 4, same module 2, same package 1, plus for
every shared rare term 4 x its inverse document frequency relative to log(N) (so one very rare
shared term outranks a module neighbour, and two outrank a class neighbour). The top ``LIMIT`` by
score, then id, are kept, each with a reason naming its place and up to two shared terms. On
vLLM v0.33.0 (8,248 entries) the whole computation takes 0.35-0.5 s on a shared 2-core machine
(``python bench/related_bench.py output/vllm-project/vllm``); about a quarter of it is the term
index, the rest is the per-entry bookkeeping every entry needs anyway. A call path costs each
entry a few of its records however long it is (``call_paths``).
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from crawler.extract.templates import Field, parts_from_template
from crawler.model.kinds import KINDS
from crawler.model.shapes import RecordData

#: Each record's callers by id (``callers.callers_by_id``), what the call paths are made of.
Callers = Mapping[str, Sequence[Mapping[str, Any]]]

LIMIT = 5
_WINDOW = 3
#: A package with more entries than this is many subsystems (vLLM's ``vllm.model_executor.models``
#: holds 769, a model per module): its entries are not related by being near each other alone.
_BIG_PACKAGE = 100
_TERMS = 3
#: Raised on the same call path: in a caller (its own checks, the most related of all), or in
#: a function this one calls.
_CALLER = ("raised by a caller", 12.0)
#: ... and of a caller's own, those it raises before it makes the call: what a user meets on the
#: way to this one, so first of all.
_ON_THE_WAY = ("raised on the way here, by a caller", 13.0)
_CALLEE = ("raised by a function it calls", 6.0)
#: What a related entry that is not raised does, in a call path's label ("logged by a caller").
_DONE = {name: spec.done for name, spec in KINDS.items() if spec.done is not None}
_PLACE = (("same function", 8.0), ("same class", 4.0), ("same module", 2.0), ("same package", 1.0))
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
#: Words too plain to relate two errors even when rare in one repository.
_STOP = frozenset(
    "the and for not are but with must when from this that have has can cannot should only "
    "got given expected found use using set none true false value values type invalid support "
    "supported unsupported please".split()
)


def terms(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


#: In a word: what makes it a name (``kv_role``, ``WNA16``, ``CuTe``, ``DCP``), not an English word.
_NAME_MARK = re.compile(r"[_0-9]|.[A-Z]")


def message_terms(message: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(terms, the ones spelled as names) of a message template: every word of its literal text,
    and of its fields' expressions only the words spelled as names."""
    if message.get("opaque"):
        return set(), set()
    literal: list[str] = []
    code: list[str] = []
    for part in parts_from_template(message):
        (code if isinstance(part, Field) else literal).append(part.expr if isinstance(part, Field) else part)
    mark = _NAME_MARK.search
    seen = set(_WORD.findall(" ".join(literal)))
    names = {w.lower() for w in seen if mark(w)}
    names.update(w.lower() for w in set(_WORD.findall(" ".join(code))) if mark(w))
    names -= _STOP
    return {w.lower() for w in seen} - _STOP | names, names


PlaceKey = tuple[str, str] | tuple[()]  # () where a record has no such place (no class)
#: (function, class, module, package): a record always has a function, a module and a package
PlaceKeys = tuple[tuple[str, str], PlaceKey, tuple[str, str], tuple[str, str]]


def _place_keys(record: RecordData) -> PlaceKeys:
    """(function, class, module, package) keys of a record's primary site; () when it has none."""
    loc = record["location"]
    path, qualname = loc["path"], loc["qualname"]
    head, dot, _ = qualname.partition(".")
    return (
        ("f", path + "\0" + qualname),
        ("c", path + "\0" + head) if dot and head[:1].isupper() else (),
        ("m", path),
        ("p", record["sites"][0]["module"].rpartition(".")[0]),
    )


def call_paths(records: Sequence[RecordData], keys: list[PlaceKeys], callers: Callers, limit: int = LIMIT, every: bool = False) -> Any:
    """For record i, the records raised on its call paths (``callers``, see ``catalogue.callers``)
    with a label and a weight: raised in a function that calls i's (a caller's own checks: they
    come first), or raised in a function i's function calls. A record on both is the caller's.

    Only those that can rank among i's ``limit`` related, so a function of thousands of entries
    costs each of them a few, not thousands (quadratic before: 6,000 records on one path took
    9-16 s): ``paths(i, special)`` gives every record of ``special`` on a path (those that score
    more than the path: a shared term, a place), and of the rest, all of one path's score alike,
    those first by id: the ``limit + 1`` first of each caller function's (the caller's weight
    outranks the callee's), and of the callees' only when the callers give fewer than that.
    The answer is the one all of them give: what is left out could not outrank ``limit`` kept
    ones, and the kept ones are more than ``limit`` whenever all of them are (which the package
    neighbours' rule reads). ``every``: all of them, as before (what the tests compare with)."""
    ids = [r["id"] for r in records]
    by_function: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        by_function.setdefault(k[0][1], []).append(i)
    below: dict[str, list[int]] = {}  # a caller's function -> the records raised in what it calls
    for j, record in enumerate(records):
        for caller in callers.get(record["id"], ()):
            below.setdefault(caller["path"] + "\0" + caller["qualname"], []).append(j)
    keep = limit + 2  # the limit + 1 first, and i itself, which is never its own
    first: dict[tuple[str, int], list[int]] = {}  # (a function, a call's line) -> its first ``keep`` records
    below_first: dict[str, list[int]] = {}  # a function -> the records it calls, by id
    below_sets: dict[str, set[int]] = {}

    lines = [r["location"]["line"] for r in records]

    def firsts(fn: str, line: int) -> list[int]:
        """A caller function's first ``keep`` records: those before its call at ``line`` (which
        score more), then by id."""
        if (fn, line) not in first:
            first[(fn, line)] = heapq.nsmallest(keep, by_function.get(fn, ()), key=lambda j: (lines[j] >= line, ids[j]))
        return first[(fn, line)]

    def caller_label(j: int, line: int) -> tuple[str, float]:
        return said(j, _ON_THE_WAY if lines[j] < line else _CALLER)

    def said(j: int, label: tuple[str, float]) -> tuple[str, float]:
        done = _DONE.get(records[j]["kind"])
        return (label[0].replace("raised", done, 1), label[1]) if done else label

    def paths(i: int, special: Callable[[], Iterable[int]] = tuple) -> list[tuple[int, tuple[str, float]]]:
        mine = keys[i][0][1]
        at: dict[str, int] = {}  # each caller function -> the last line it calls on (what comes before is on the way)
        for c in callers.get(ids[i], ()):
            fn = c["path"] + "\0" + c["qualname"]
            at[fn] = max(at.get(fn, 0), c.get("line") or 0)
        fns = list(at)
        out: list[tuple[int, tuple[str, float]]] = []
        called = below.get(mine, ())
        if not fns and not called:
            return out
        groups = [(fn, by_function.get(fn, ())) for fn in fns]
        if every or (len(called) <= keep and all(len(g) <= keep for _, g in groups)):  # (most) nothing to leave out
            out = [(j, caller_label(j, at[fn])) for fn, g in groups for j in g]
            out += [(j, said(j, _CALLEE)) for j in called]
            return out
        seen = {i}
        on_callers = 0  # records of the caller functions, i left out
        for fn in fns:
            on_callers += len(by_function.get(fn, ())) - (fn == mine)
            for j in firsts(fn, at[fn]):
                if j not in seen:
                    seen.add(j)
                    out.append((j, caller_label(j, at[fn])))
        callers_of = set(fns)
        if called and mine not in below_sets:
            below_sets[mine] = set(called)
        for j in special():
            if j not in seen:
                if keys[j][0][1] in callers_of:
                    seen.add(j)
                    out.append((j, caller_label(j, at[keys[j][0][1]])))
                elif called and j in below_sets[mine]:
                    seen.add(j)
                    out.append((j, said(j, _CALLEE)))
        if on_callers <= limit and called:  # few by the callers: the callees' first may rank
            if mine not in below_first:
                below_first[mine] = sorted(set(called), key=ids.__getitem__)
            count = 0
            for j in below_first[mine]:
                if j == i or keys[j][0][1] in callers_of:
                    continue
                if j not in seen:
                    seen.add(j)
                    out.append((j, said(j, _CALLEE)))
                count += 1
                if count > limit:
                    break
        return out

    return paths


def compute(records: Sequence[RecordData], callers: Callers | None = None, limit: int = LIMIT, every_path: bool = False) -> dict[str, list[dict[str, str]]]:
    """id -> related list (``records.Related`` as dicts), for every record. ``every_path``: walk
    every record on a call path (``call_paths``), for the tests that hold the answer the same.

    An assert with no message (keyed by its condition) has related entries, but is related to no
    other entry: vLLM has thousands, internal checks a user rarely meets, which would crowd out
    the errors a page links to, and shift every other entry's terms and neighbours."""
    told = [r for r in records if r.get("keyed_by") != "condition"]
    if len(told) == len(records):
        return _compute(records, callers, limit, every_path)
    out = _compute(records, callers, limit, every_path, [i for i, r in enumerate(records) if r.get("keyed_by") == "condition"])
    out.update(_compute(told, callers, limit, every_path))
    return out


def _compute(
    records: Sequence[RecordData], callers: Callers | None, limit: int, every_path: bool, of: Sequence[int] | None = None
) -> dict[str, list[dict[str, str]]]:
    """:func:`compute` over ``records``, for those at the positions ``of`` (default: all)."""
    n = len(records)
    if n < 2:
        return {r["id"]: [] for r in records}
    order = [i for *_, i in sorted((r["location"]["path"], r["location"]["line"], r["id"], i) for i, r in enumerate(records))]
    rank = [0] * n
    for k, i in enumerate(order):
        rank[i] = k
    keys = [_place_keys(r) for r in records]
    places: dict[tuple[str, ...], list[int]] = {}  # key -> ranks of its members, ascending
    for k, i in enumerate(order):
        for key in keys[i]:
            if key:
                places.setdefault(key, []).append(k)

    split = [message_terms(r["message"]) for r in records]
    words = [w for w, _ in split]
    named = [n for _, n in split]
    df: dict[str, int] = {}
    for ws in words:
        for word in ws:
            df[word] = df.get(word, 0) + 1
    rare_cap = max(8, n // 400)
    postings: dict[str, list[int]] = {}
    chosen: list[list[str]] = []
    for i, ws in enumerate(words):
        rare = sorted((t for t in ws if 2 <= df[t] <= rare_cap), key=lambda t: (df[t], t))[:_TERMS]
        chosen.append(rare)
        for term in rare:
            postings.setdefault(term, []).append(i)
    log_n = math.log(n)
    weight = {w: 4.0 * math.log(n / df[w]) / log_n for w in postings}

    ids = [r["id"] for r in records]
    paths = call_paths(records, keys, callers or {}, limit, every_path)
    out: dict[str, list[dict[str, str]]] = {}
    for i in range(n) if of is None else of:
        me = rank[i]
        near: list[list[int]] = []  # each place's members near i (ranks), in _PLACE's order
        for key in keys[i]:
            if not key:
                near.append([])
                continue
            members = places[key]
            if len(members) > 2 * _WINDOW + 1:
                k = bisect_left(members, me)
                members = members[max(0, k - _WINDOW) : k + _WINDOW + 1]
            near.append(members)

        # what may score more than a call path alone: a shared term, a place
        def special(i: int = i, near: list[list[int]] = near) -> Iterable[int]:
            return itertools.chain((j for t in chosen[i] for j in postings[t]), (order[m] for members in near for m in members))

        score: dict[int, float] = {}
        onpath: dict[int, str] = {}
        for j, (label, w) in paths(i, special):
            if j != i and j not in onpath:
                onpath[j] = label
                score[j] = score.get(j, 0.0) + w
        plain: dict[int, float] = {}
        twice: set[int] = set()
        for t in chosen[i]:
            wt = weight[t]
            if t in named[i]:
                for j in postings[t]:
                    score[j] = score.get(j, 0.0) + wt
            else:
                for j in postings[t]:
                    if j in plain:
                        plain[j] += wt
                        twice.add(j)
                    else:
                        plain[j] = wt
        weak: dict[int, float] = {}  # sharing one plain word only: counted for a neighbour or within the package
        for j, s in plain.items():
            if j in score or j in twice:  # a name shared too, on a call path, or two words
                score[j] = score.get(j, 0.0) + s
            else:
                weak[j] = s
        place: dict[int, str] = {}
        for key, members, (label, w) in zip(keys[i], near, _PLACE):
            if not key:
                continue
            if w == 1.0:
                if len(score) > limit or len(places[key]) > _BIG_PACKAGE:
                    # a package neighbour with no shared term cannot outrank what is already here;
                    # in a big package (a model per module) being near says nothing at all
                    members = [m for m in members if order[m] in score]
                # one plain word shared within the package relates ("patches" among the models)
                members = [*members, *(rank[j] for j in weak if keys[j][3] == key)]
            for m in members:
                j = order[m]
                if j not in place:
                    place[j] = label
                    score[j] = score.get(j, 0.0) + w + weak.pop(j, 0.0)
        score.pop(i, None)
        ranked = [(-s, ids[j], j) for j, s in score.items()]
        best = heapq.nsmallest(limit, ranked) if len(ranked) > 4 * limit else sorted(ranked)[:limit]
        related = []
        for _, rid, j in best:
            reasons = [where[j] for where in (onpath, place) if j in where]
            common = [t for t in chosen[i] if t in chosen[j]][:2]
            if common:
                reasons.append("shares " + ", ".join(common))
            related.append({"id": rid, "title": records[j]["title"], "reason": "; ".join(reasons)})
        out[ids[i]] = related
    return out
