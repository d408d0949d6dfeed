"""What changed between two catalogues of one repository: the ``errcat diff`` report.

Ids are the backbone (see ``ids``): an id present on both sides is the same error, so a change
of its sites is a *move* (or sites added/removed), never a removal plus an addition. Ids present
on one side only are then paired where the code says they are one error that changed:

* exception changed -- the same normalized template, raised as another exception class;
* reworded -- the same exception, raised in the same function, with a similar template
  (``difflib`` ratio of the normalized templates at least ``REWORD_RATIO``).

Pairs are chosen greedily, best first, one to one, so the result does not depend on input
order. Whatever is left is added or removed. Retired records (kept by ``history``) are not part
of either side: they are gone already.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from crawler.extract.ids import entry_key, normalize_template
from crawler.model.diff import (
    KIND_ORDER,
    Change,
    ChangeKind,
    DiffCounts,
    DiffReport,
    Side,
    SiteChange,
    SiteRef,
)
from crawler.model.kinds import KINDS, RESPONSE, exception_word
from crawler.model.records import Manifest, Record, Site
from crawler.model.shapes import RecordData
from crawler.source.wheel import release_of

REWORD_RATIO = 0.6


# --------------------------------------------------------------------------- computing it


def live(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if not (r.history and r.history.retired)]


def _ref(site: Site) -> SiteRef:
    return SiteRef(path=site.path, line=site.line, qualname=site.qualname, permalink=site.permalink)


def _primary(record: Record) -> SiteRef:
    loc = record.location
    return SiteRef(path=loc.path, line=loc.line, qualname=loc.qualname, permalink=loc.permalink)


#: Characters of each wording a reworded change's summary shows.
WORDING = 60


def changed_wording(old: str, new: str, width: int = WORDING) -> tuple[str, str]:
    """Both wordings of a reworded message, shown from a word a little before where they first
    differ and cut to ``width``: the titles (each message's first 60 characters) are the same
    whenever the change is further on, and a summary of two equal titles says nothing."""
    same = len(os.path.commonprefix([old, new]))
    start = 0
    if same > width // 2:
        space = old.rfind(" ", same - width // 2, same - 12)
        start = space + 1 if space >= 0 else same - 12

    def cut(text: str) -> str:
        piece = text[start:]
        piece = piece if len(piece) <= width else piece[: width - 1] + "…"
        return ("…" if start else "") + piece

    return cut(old), cut(new)


def _where(ref: SiteRef) -> str:
    return f"{ref.path}:{ref.line}"


def match_sites(old: list[Site], new: list[Site]) -> tuple[list[tuple[Site, Site]], list[Site], list[Site]]:
    """(moved pairs, added, removed) between the sites of one id on two sides.

    Unchanged sites (same path and line) drop out; the rest pair by file and function, then by
    file name and function when that is unambiguous (a file moved to another package; not
    ``__getattr__`` of one module paired with another's), then by function alone when it raises
    as often on each side (a module split), then a lone site on each side (the raise went to
    another function). Leftovers are sites added or removed.
    """
    old_left = sorted(old, key=lambda s: (s.path, s.line))
    new_left = sorted(new, key=lambda s: (s.path, s.line))
    new_spots = {(s.path, s.line) for s in new_left}
    old_spots = {(s.path, s.line) for s in old_left}
    old_left = [s for s in old_left if (s.path, s.line) not in new_spots]
    new_left = [s for s in new_left if (s.path, s.line) not in old_spots]
    pairs: list[tuple[Site, Site]] = []
    # 1. same file, same function: in line order.
    waiting: dict[tuple[str, str], list[Site]] = defaultdict(list)
    for s in new_left:
        waiting[(s.path, s.qualname)].append(s)
    rest = []
    for s in old_left:
        bucket = waiting.get((s.path, s.qualname))
        if bucket:
            pairs.append((s, bucket.pop(0)))
        else:
            rest.append(s)
    taken = {id(n) for _, n in pairs}
    old_left, new_left = rest, [s for s in new_left if id(s) not in taken]

    # 2. the file moved (same file name, same function), when exactly one site on each side fits.
    def spot(s: Site) -> tuple[str, str]:
        return s.path.rpartition("/")[2], s.qualname

    old_names = Counter(spot(s) for s in old_left)
    new_names = Counter(spot(s) for s in new_left)
    moved = {k for k in old_names if old_names[k] == 1 and new_names.get(k) == 1}
    for k in sorted(moved):
        pairs.append((next(s for s in old_left if spot(s) == k), next(s for s in new_left if spot(s) == k)))
    old_left = [s for s in old_left if spot(s) not in moved]
    new_left = [s for s in new_left if spot(s) not in moved]

    # 2b. the function moved to another file (a module split: chat_utils.py to content_parser.py),
    # when it is raised from as often on each side: in line order. Not a module's own function
    # (``__getattr__``, ``<module>``): every module has one, and another's is another site.
    def function(s: Site) -> str | None:
        q = s.qualname
        return None if "." not in q and (q.startswith("<") or (q.startswith("__") and q.endswith("__"))) else q

    old_by = Counter(function(s) for s in old_left)
    new_by = Counter(function(s) for s in new_left)
    same = {q for q in old_by if q is not None and old_by[q] == new_by.get(q)}
    for q in sorted(same):
        pairs += list(zip([s for s in old_left if s.qualname == q], [s for s in new_left if s.qualname == q], strict=True))
    old_left = [s for s in old_left if function(s) not in same]
    new_left = [s for s in new_left if function(s) not in same]
    # 3. an entry with one site on each side: the raise went elsewhere.
    if len(old) == len(new) == 1 and len(old_left) == len(new_left) == 1:
        pairs += list(zip(old_left, new_left, strict=True))
        old_left, new_left = [], []
    pairs.sort(key=lambda p: (p[1].path, p[1].line))
    return pairs, new_left, old_left


def _status(record: Record) -> int | None:
    return record.response.status_code if record.response is not None else None


def answer(exception: str, kind: str | None, status: int | None) -> str:
    """What an entry raises, logs or answers with, as a reader says it: ``ValueError``, ``ERROR``,
    ``HTTP 404 NotFoundError``."""
    return f"HTTP {status} {exception}" if kind == RESPONSE and status is not None else exception


#: The words of an exception changed, by the kind of entry: a log's level, a response's answer.
CHANGED_WORDS = {name: spec.changed for name, spec in KINDS.items()}


def _normalized(record: Record) -> str:
    return normalize_template(record.message.text, [f.model_dump() for f in record.message.fields])


def _key(record: Record) -> tuple[str, ...]:
    return entry_key(record.sites[0].model_dump())


def _functions(record: Record) -> set[tuple[str, str]]:
    return {(s.module, s.qualname) for s in record.sites}


def link(removed: list[Record], added: list[Record]) -> list[tuple[ChangeKind, Record, Record, float]]:
    """Pair removed with added records that are one error changed: (kind, old, new, similarity)."""
    candidates: list[tuple[float, str, str, ChangeKind, Record, Record, float]] = []
    # Each added record's key once, filed by the two parts a pair must share: a removed record
    # meets only the added ones that can pair with it, not every one (a release of vLLM: hundreds
    # of each, and a history compares every release with the one before).
    by_rest: defaultdict[tuple[str, ...], list[tuple[Record, tuple[str, ...], set[tuple[str, str]]]]] = defaultdict(list)
    by_head: defaultdict[tuple[str, ...], list[tuple[Record, tuple[str, ...], set[tuple[str, str]]]]] = defaultdict(list)
    for new in added:
        nkey = _key(new)
        item = (new, nkey, _functions(new))
        by_rest[(nkey[0], *nkey[2:])].append(item)
        if nkey[0] == "message":
            by_head[nkey[:2]].append(item)
    for old in removed:
        okey, ofuncs = _key(old), _functions(old)
        for new, nkey, nfuncs in by_rest.get((okey[0], *okey[2:]), ()):
            if okey[1] != nkey[1]:
                # Same text (or same function for message-less entries): another exception class.
                candidates.append((2.0 + bool(ofuncs & nfuncs), old.id, new.id, ChangeKind.EXCEPTION_CHANGED, old, new, 1.0))
        if okey[0] != "message":
            continue
        otext = _normalized(old)
        for new, _, nfuncs in by_head.get(okey[:2], ()):
            if ofuncs & nfuncs:
                ratio = difflib.SequenceMatcher(None, otext, _normalized(new), autojunk=False).ratio()
                if ratio >= REWORD_RATIO:
                    candidates.append((ratio, old.id, new.id, ChangeKind.REWORDED, old, new, ratio))
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_old: set[str] = set()
    used_new: set[str] = set()
    links = []
    for _, oid, nid, kind, old, new, ratio in candidates:
        if oid in used_old or nid in used_new:
            continue
        used_old.add(oid)
        used_new.add(nid)
        links.append((kind, old, new, round(ratio, 3)))
    return links


#: A twin (``twins``): at least this share of the retired template's words, in order, in the live one.
TWIN_COVERAGE = 0.9
#: ...and at least this many words (``{}`` aside): a short template is contained in too many.
TWIN_MIN_WORDS = 5
_WORD = re.compile(r"\{\}|\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _named(word: str) -> bool:
    """A word that names something (``OpenVINO``, ``LoRA``, ``num_cpu_blocks``, ``fp8``): a twin
    keeps every one; a message that swaps one for another is another error (another platform,
    another setting), however alike the rest."""
    return word != "{}" and (any(c.isdigit() or c == "_" for c in word) or any(c.isupper() for c in word[1:]))


#: Words whose loss turns a message into its opposite ("non-batched" is not "batched").
_NEGATIONS = frozenset({"not", "non", "no", "never", "cannot", "without", "unless", "nor"})


def _kept_in_place(old: list[str], new: list[str], blocks: list[difflib.Match]) -> bool:
    """The retired words (``blocks``: (where in ``new``, where in ``old``, how many), the last the
    ends) kept as they were: words of ``old`` may be dropped (not a negation) and fields and words
    added after its last one; none put before its first one or between two of them, none in place
    of one. "Custom quick allreduce", "The encoder sequence length", "not supported with
    rocm_flash_attn" (was flashinfer), "in Pallas" (was Ipex) are other errors than the words they
    grew from, however many words they share."""
    if not blocks or any(w != "{}" for w in new[: blocks[0].a]):
        return False
    if any(w in _NEGATIONS for w in old[: blocks[0].b]):
        return False
    for one, two in zip(blocks, blocks[1:], strict=False):
        put = [w for w in new[one.a + one.size : two.a] if w != "{}"]
        dropped = old[one.b + one.size : two.b]
        last = two.size == 0  # the ends: words added after the last kept one are a rewording
        if (put and not last) or (put and dropped) or any(w in _NEGATIONS for w in dropped):
            return False
    return True


#: A retired entry more live entries of its exception hold the words of than this (each one
#: passing the cheap bound of ``twins``) gets no twin: words that common tell no one apart, and a
#: hostile repository of thousands of alike messages would make the pairwise comparison quadratic.
MAX_TWIN_CANDIDATES = 256


def twins(
    gone: Iterable[tuple[str, tuple[str, ...]]], live: Iterable[tuple[str, tuple[str, ...]]], capped: list[str] | None = None
) -> list[tuple[str, str, float]]:
    """(gone id, live id, coverage): each retired entry ``link`` gave no successor, with the live
    entry that raises the same error today, found among every entry live where it retired, not
    only those added there (a V1 check added releases before its V0 twin was removed; a check
    moved to another file or engine). Entries are given as (id, ``entry_key``). A twin has a
    message key of the same kind and exception, keeps at least ``TWIN_COVERAGE`` of the retired
    template's words in their order (``{}`` a word; case aside), and every word of it that names
    something (``_named``): "Failed to infer device type" lives on in "Failed to infer device
    type, please set ..."; "Pin memory is not supported on OpenVINO" is not "... on CPU". A
    character ratio does not tell these apart (0.85 for the second: the measure in
    bench/RESULTS.md). Best first, ties by id: a gone entry gets at most one, a live entry may
    succeed several.

    Exact, not pairwise: the live entries of each (kind, exception) a retired entry needs are
    indexed by word (``_TwinIndex``), and only those holding its rarest words are compared with it
    (one that holds none of them lacks too many of its words). A retired entry with more than
    ``MAX_TWIN_CANDIDATES`` candidates left after the word bound gets none; its id is added to
    ``capped``."""
    wanted: dict[tuple[str, ...], list[tuple[str, list[str]]]] = defaultdict(list)
    for oid, okey in sorted(gone):
        if okey[0] != "message":
            continue
        words = _words(okey[2])
        if sum(w != "{}" for w in words) >= TWIN_MIN_WORDS:
            wanted[(okey[0], okey[1], *okey[3:])].append((oid, words))
    if not wanted:
        return []
    indexes: dict[tuple[str, ...], _TwinIndex] = {}
    for eid, key in sorted(live):
        if key[0] == "message":
            head = (key[0], key[1], *key[3:])
            if head in wanted:
                indexes.setdefault(head, _TwinIndex()).add(eid, _words(key[2]))
    out = []
    for head, items in sorted(wanted.items()):
        index = indexes.get(head)
        if index is None:
            continue
        for oid, words in items:
            best = index.best(words, oid, capped)
            if best is not None:
                out.append((oid, best[1], round(best[0], 3)))
    out.sort(key=lambda t: t[0])
    return out


class _TwinIndex:
    """The live entries of one (kind, exception), in id order, with the entries holding each word
    (lowered, and as written for the words that name something)."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, list[str], set[str], set[str]]] = []
        self.lowered: defaultdict[str, list[int]] = defaultdict(list)
        self.cased: defaultdict[str, list[int]] = defaultdict(list)

    def add(self, eid: str, words: list[str]) -> None:
        n = len(self.entries)
        lowered = [w.lower() for w in words]
        nset, nlower = set(words), set(lowered)
        self.entries.append((eid, lowered, nset, nlower))
        for w in nlower:
            self.lowered[w].append(n)
        for w in nset:
            if _named(w):
                self.cased[w].append(n)

    def candidates(self, lower: list[str], named: set[str]) -> list[int]:
        """Every entry that may pass the cheap bound of ``best`` (a superset of them), in order:
        one that lacks a word naming something fails it, and so does one that lacks all of the
        rarest words whose occurrences in ``lower`` together are more than the bound lets an
        entry lack. The smaller of the two sets."""
        by_name: list[int] | None = None
        if named:
            by_name = self.cased.get(min(named, key=lambda w: (len(self.cased.get(w, ())), w)), [])
        counts = Counter(lower)
        allowed = len(lower) - math.ceil(TWIN_COVERAGE * len(lower))  # occurrences an entry may lack
        union: set[int] = set()
        lacked = 0
        for w in sorted(counts, key=lambda w: (len(self.lowered.get(w, ())), w)):
            if by_name is not None and len(by_name) <= len(union):
                return list(by_name)
            union.update(self.lowered.get(w, ()))
            lacked += counts[w]
            if lacked > allowed:
                break
        else:  # (not reached: fewer than all of a template's words are allowed to be lacked)
            union = set(range(len(self.entries)))
        if by_name is not None and len(by_name) <= len(union):
            return list(by_name)
        return sorted(union)

    def best(self, words: list[str], oid: str, capped: list[str] | None) -> tuple[float, str] | None:
        named = {w for w in words if _named(w)}
        lower = [w.lower() for w in words]
        passing = []
        for n in self.candidates(lower, named):
            nid, nwords, nset, nlower = self.entries[n]
            # the cheap bound first: the words of the retired template found anywhere in this one
            if not named <= nset or sum(w in nlower for w in lower) < TWIN_COVERAGE * len(lower):
                continue
            passing.append(n)
            if len(passing) > MAX_TWIN_CANDIDATES:
                if capped is not None:
                    capped.append(oid)
                return None
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(lower)
        best: tuple[float, str] | None = None
        for n in passing:
            nid, nwords, _, _ = self.entries[n]
            matcher.set_seq1(nwords)
            blocks = matcher.get_matching_blocks()
            coverage = sum(b.size for b in blocks) / len(lower)
            if coverage >= TWIN_COVERAGE and _kept_in_place(lower, nwords, blocks) and (best is None or (-coverage, nid) < (-best[0], best[1])):
                best = (coverage, nid)
        return best


def diff_records(old_records: Iterable[Record], new_records: Iterable[Record], *, old_side: Side, new_side: Side) -> DiffReport:
    """Classify every difference between two record sets of one repository."""
    old = {r.id: r for r in live(old_records)}
    new = {r.id: r for r in live(new_records)}
    changes: list[Change] = []
    counts = DiffCounts()

    def record_change(
        kind: ChangeKind,
        record: Record,
        summary: str,
        location: SiteRef,
        *,
        before: Record | None = None,
        similarity: float | None = None,
        sites: list[SiteChange] | None = None,
    ) -> None:
        label = CHANGED_WORDS[record.kind] if kind is ChangeKind.EXCEPTION_CHANGED else kind.label
        changes.append(
            Change(
                kind=kind,
                summary=f"{label}: {summary}",
                id=record.id,
                entry_kind=record.kind,
                status_code=_status(record),
                old_status_code=_status(before) if before is not None else None,
                old_id=before.id if before is not None else None,
                title=record.title,
                old_title=before.title if before is not None else None,
                exception=record.exception_word,
                old_exception=before.exception_word if before is not None else None,
                template=record.message.text,
                old_template=before.message.text if before is not None else None,
                location=location,
                similarity=similarity,
                sites=sites or [],
            )
        )
        setattr(counts, kind.name.lower(), counts.of(kind) + 1)

    for eid in sorted(old.keys() & new.keys()):
        before, after = old[eid], new[eid]
        pairs, added_sites, removed_sites = match_sites(before.sites, after.sites)
        if pairs:
            moved = [(_ref(a), _ref(b)) for a, b in pairs]
            text = ", ".join(f"{_where(o)} -> {n.line if o.path == n.path else _where(n)}" for o, n in moved)
            record_change(ChangeKind.MOVED, after, f"{after.title} ({text})", _primary(after), sites=[SiteChange(old=o, new=n) for o, n in moved])
        if added_sites:
            added = [_ref(s) for s in added_sites]
            record_change(
                ChangeKind.SITES_ADDED,
                after,
                f"{after.title} (+{len(added)}: {', '.join(_where(r) for r in added)})",
                added[0],
                sites=[SiteChange(new=r) for r in added],
            )
        if removed_sites:
            removed = [_ref(s) for s in removed_sites]
            record_change(
                ChangeKind.SITES_REMOVED,
                after,
                f"{after.title} (-{len(removed)}: {', '.join(_where(r) for r in removed)})",
                _primary(after),
                sites=[SiteChange(old=r) for r in removed],
            )
        # the same error answered with another HTTP status, or a raise whose class errcat named by
        # the variable it is held in and now knows it cannot tell ("(unknown)"): the id keeps, the answer changed
        answered = _status(before) != _status(after) or before.exception_word != after.exception_word
        if answered:
            summary = (
                f"{after.title} ({answer(before.exception_word, before.kind, _status(before))} -> "
                f"{answer(after.exception_word, after.kind, _status(after))}, {_where(_primary(after))})"
            )
            record_change(ChangeKind.EXCEPTION_CHANGED, after, summary, _primary(after), before=before)
        if not (pairs or added_sites or removed_sites or answered):
            counts.unchanged += 1

    gone = [old[i] for i in sorted(old.keys() - new.keys())]
    came = [new[i] for i in sorted(new.keys() - old.keys())]
    linked_old: set[str] = set()
    linked_new: set[str] = set()
    for kind, before, after, ratio in link(gone, came):
        linked_old.add(before.id)
        linked_new.add(after.id)
        if kind is ChangeKind.EXCEPTION_CHANGED:
            summary = (
                f"{after.title} ({answer(before.exception_word, before.kind, _status(before))} -> "
                f"{answer(after.exception_word, after.kind, _status(after))}, {_where(_primary(after))})"
            )
            record_change(kind, after, summary, _primary(after), before=before)
        else:
            was, now = changed_wording(before.message.text, after.message.text)
            summary = f"{was!r} -> {now!r} ({_where(_primary(after))})"
            record_change(kind, after, summary, _primary(after), before=before, similarity=ratio)
    for after in came:
        if after.id not in linked_new:
            where = _primary(after)
            record_change(
                ChangeKind.ADDED, after, f"{after.title} ({after.exception_word}, {_where(where)})", where, sites=[SiteChange(new=_ref(s)) for s in after.sites]
            )
    for before in gone:
        if before.id not in linked_old:
            where = _primary(before)
            record_change(
                ChangeKind.REMOVED,
                before,
                f"{before.title} ({before.exception_word}, {_where(where)})",
                where,
                sites=[SiteChange(old=_ref(s)) for s in before.sites],
            )

    changes.sort(key=lambda c: (KIND_ORDER[c.kind], c.location.path, c.location.line, c.id))
    return DiffReport(repo=new_side.repo, old=old_side, new=new_side, counts=counts, changes=changes)


def side_of(manifest: Manifest, records: list[Record]) -> Side:
    """The report's view of one dataset (a ``Manifest`` and its records)."""
    return side_with(manifest, len(live(records)))


def side_with(manifest: Manifest, entries: int) -> Side:
    """:func:`side_of`, given the number of live entries."""
    return Side(
        repo=f"{manifest.repo.owner}/{manifest.repo.name}",
        commit=manifest.commit,
        ref=manifest.ref,
        release=release_of(manifest.source),
        upstream_commit=manifest.upstream_commit,
        entries=entries,
    )


def live_data(records: Iterable[RecordData]) -> list[RecordData]:
    """:func:`live` of records as plain data."""
    return [r for r in records if not (r.get("history") or {}).get("retired")]


def _answered(record: RecordData) -> tuple[frozenset[tuple[str, int]], str, int | None]:
    """What :func:`diff_records` compares of an id on both sides: where its sites are, what it
    raises, the HTTP status it answers with. Equal on both sides: the id is unchanged."""
    response = record.get("response")
    return (frozenset((site["path"], site["line"]) for site in record["sites"]), exception_word(record), response.get("status_code") if response else None)


def diff_data(
    old_records: Iterable[RecordData],
    new_records: Iterable[RecordData],
    *,
    old_side: Side,
    new_side: Side,
    models: tuple[Callable[[RecordData], Record], Callable[[RecordData], Record]],
) -> DiffReport:
    """:func:`diff_records` of records as plain data (what ``sync`` reads and crawls): an id
    whose sites, exception and status are the same on both sides is unchanged (``diff_records``
    finds no move, no site added or removed, no answer changed), and only the rest become models
    (``models``: of each side, which validate them), so a sync of one changed file builds a few records, not
    two catalogues of them. The report is the one ``diff_records`` makes of the same records."""
    old = {r["id"]: r for r in live_data(old_records)}
    new = {r["id"]: r for r in live_data(new_records)}
    same = {eid for eid in old.keys() & new.keys() if _answered(old[eid]) == _answered(new[eid])}
    old_model, new_model = models
    report = diff_records(
        [old_model(r) for eid, r in old.items() if eid not in same],
        [new_model(r) for eid, r in new.items() if eid not in same],
        old_side=old_side,
        new_side=new_side,
    )
    report.counts.unchanged += len(same)
    return report
