"""The store of validated digests (``publish.validated``) holds what a sync of a whole history
remembers, with room to spare: nothing of it starts over between two such syncs."""

from __future__ import annotations

import hashlib

from crawler.publish import validated

#: What a sync of vLLM's whole history remembers (its record files, their bare forms and its lines): ~85,000.
HISTORY = 85_000


def digests(start: int, count: int) -> list[bytes]:
    return [hashlib.sha256(str(n).encode()).digest() for n in range(start, start + count)]


def test_a_history_and_the_next_days_fit(tmp_path):
    first = digests(0, HISTORY)
    validated.remember(tmp_path, frozenset(), first)
    known = validated.load(tmp_path)
    assert known == frozenset(first)
    # the next days each add what changed, and a changed errcat a whole history again
    later = digests(HISTORY, HISTORY)
    validated.remember(tmp_path, known, later)
    assert validated.load(tmp_path) == frozenset(first + later)


def test_past_its_bound_it_starts_over_from_what_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setattr(validated, "MAX_DIGESTS", 10)
    validated.remember(tmp_path, frozenset(), digests(0, 8))
    new = digests(100, 4)
    validated.remember(tmp_path, validated.load(tmp_path), new)
    assert validated.load(tmp_path) == frozenset(new)
