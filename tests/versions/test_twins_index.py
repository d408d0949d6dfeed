"""``diff.twins`` by an index of words: exactly the pairs the pairwise comparison it replaced
found (kept here as the oracle), over random fixtures made to be alike; far fewer comparisons
where few live entries share a retired one's rarest words; and a cap on a hostile repository
whose thousands of messages all hold the same words."""

from __future__ import annotations

import difflib
import random
from collections import defaultdict

import pytest

from crawler.versions import diff
from crawler.versions.diff import MAX_TWIN_CANDIDATES, TWIN_COVERAGE, TWIN_MIN_WORDS, _kept_in_place, _named, _words, twins


def pairwise_twins(gone, live):
    """``twins`` as it was before the index (round 41): every retired entry against every live
    entry of its (kind, exception). The oracle."""
    by_head = defaultdict(list)
    for eid, key in sorted(live):
        if key[0] == "message":
            words = _words(key[2])
            lowered = [w.lower() for w in words]
            by_head[(key[0], key[1], *key[3:])].append((eid, lowered, set(words), set(lowered)))
    out = []
    for oid, okey in sorted(gone):
        if okey[0] != "message":
            continue
        words = _words(okey[2])
        if sum(w != "{}" for w in words) < TWIN_MIN_WORDS:
            continue
        named = {w for w in words if _named(w)}
        lower = [w.lower() for w in words]
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(lower)
        best = None
        for nid, nwords, nset, nlower in by_head.get((okey[0], okey[1], *okey[3:]), ()):
            if not named <= nset or sum(w in nlower for w in lower) < TWIN_COVERAGE * len(lower):
                continue
            matcher.set_seq1(nwords)
            blocks = matcher.get_matching_blocks()
            coverage = sum(b.size for b in blocks) / len(lower)
            if coverage >= TWIN_COVERAGE and _kept_in_place(lower, nwords, blocks) and (best is None or (-coverage, nid) < (-best[0], best[1])):
                best = (coverage, nid)
        if best is not None:
            out.append((oid, best[1], round(best[0], 3)))
    return out


VOCAB = ["the", "model", "is", "not", "supported", "on", "LoRA", "fp8", "max_len", "{}", "cache", "Cache", "no", "blocks", "for", "a", "GPU"]


def _template(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def _mutated(rng: random.Random, text: str) -> str:
    words = text.split()
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        at = rng.randrange(len(words) + 1)
        op = rng.choice(["drop", "add", "swap", "case"])
        if op == "drop" and at < len(words) and len(words) > 1:
            del words[at]
        elif op == "add":
            words.insert(at, rng.choice(VOCAB))
        elif op == "swap" and at < len(words):
            words[at] = rng.choice(VOCAB)
        elif op == "case" and at < len(words):
            words[at] = words[at].upper()
    return " ".join(words)


def _fixture(seed: int) -> tuple[list, list]:
    rng = random.Random(seed)
    exceptions = ["ValueError", "RuntimeError"]
    gone, live = [], []
    ids = iter(f"{n:016x}" for n in rng.sample(range(1 << 40), 400))
    for _ in range(rng.randint(1, 30)):
        text = _template(rng, rng.randint(3, 14))
        exc = rng.choice(exceptions)
        kind = "message" if rng.random() > 0.05 else "site"
        gone.append((next(ids), (kind, exc, text, *(["x"] if rng.random() < 0.1 else []))))
        for _ in range(rng.randint(0, 5)):  # its near twins, and other errors alike
            live.append((next(ids), ("message", rng.choice(exceptions) if rng.random() < 0.2 else exc, _mutated(rng, text))))
    for _ in range(rng.randint(0, 20)):
        live.append((next(ids), ("message", rng.choice(exceptions), _template(rng, rng.randint(1, 16)))))
    rng.shuffle(gone)
    rng.shuffle(live)
    return gone, live


def test_the_index_finds_exactly_the_pairwise_twins_over_random_fixtures():
    found = 0
    for seed in range(400):
        gone, live = _fixture(seed)
        expected = pairwise_twins(gone, live)
        assert twins(gone, live) == expected, seed
        found += len(expected)
    assert found > 300  # the fixtures hold many twins, not only misses


@pytest.fixture
def looked_at(monkeypatch):
    """How many live entries ``twins`` held a retired one to (``candidates``), and how many it
    compared word by word (a sequence match): the work, counted rather than timed."""
    seen = {"candidates": 0, "compared": 0}
    candidates, blocks = diff._TwinIndex.candidates, difflib.SequenceMatcher.get_matching_blocks

    def counted_candidates(self, lower, named):
        found = candidates(self, lower, named)
        seen["candidates"] += len(found)
        return found

    def counted_blocks(self):
        seen["compared"] += 1
        return blocks(self)

    monkeypatch.setattr(diff._TwinIndex, "candidates", counted_candidates)
    monkeypatch.setattr(difflib.SequenceMatcher, "get_matching_blocks", counted_blocks)
    return seen


def test_the_index_looks_at_few_of_many_live_entries(looked_at):
    """2,000 retired and 2,000 live ValueErrors of plain words, each retired one reworded among
    them: the pairwise way held each of the 4,000,000 pairs to its word bound; the index holds a
    retired entry only to the live ones holding its rarest word."""
    rng = random.Random(7)
    words = [a + b + c for a in "bcdfghjklmnpqrstv" for b in "aeiou" for c in "bdgklmnprst"][:400]
    gone, live = [], []
    for n in range(2000):
        text = [rng.choice(words) for _ in range(8)]
        gone.append((f"{n:016x}", ("message", "ValueError", " ".join(text))))
        live.append((f"{n + 5000:016x}", ("message", "ValueError", " ".join([*text, "please", "retry"]))))
    got = twins(gone, live)
    assert looked_at["candidates"] < 2000 * 2000 / 20 and looked_at["compared"] == 2000
    assert got == pairwise_twins(gone, live) and len(got) == 2000


def test_a_hostile_repository_of_alike_messages_is_capped(looked_at):
    """Thousands of live messages holding every word of thousands of retired ones: each retired
    one has more candidates than ``MAX_TWIN_CANDIDATES``, gets no twin, and is said (``capped``);
    none is compared word by word."""
    n = MAX_TWIN_CANDIDATES * 8
    gone = [(f"{i:016x}", ("message", "ValueError", "the model is not supported here for {}")) for i in range(n)]
    live = [(f"{i + 10**6:016x}", ("message", "ValueError", f"the model is not supported here for {{}} case {i}")) for i in range(n)]
    capped: list[str] = []
    assert twins(gone[:5], live[:MAX_TWIN_CANDIDATES], capped) != [] and capped == []  # at the cap: found
    looked_at["compared"] = 0
    got = twins(gone, live, capped)
    assert looked_at["compared"] == 0 and got == [] and sorted(capped) == sorted(eid for eid, _ in gone)


@pytest.mark.parametrize("seed", range(3))
def test_input_order_does_not_matter(seed):
    gone, live = _fixture(1000 + seed)
    assert twins(list(reversed(gone)), list(reversed(live))) == twins(gone, live)
