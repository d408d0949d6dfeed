"""The joins return their parts of the records by id and leave the records alone; ``joined.merge``
is the one place that puts the parts in."""

from __future__ import annotations

import copy

from crawler.catalogue.entries import build_records
from crawler.catalogue.joined import CuratedPart, Joined, SourcePart, merge
from crawler.catalogue.meaning_join import join_meaning
from tests.consumer_data import IDENTITY, SITES


def test_the_meaning_joins_return_every_records_part_and_change_no_record():
    records = build_records(IDENTITY, SITES, {})
    before = copy.deepcopy(records)
    joined = join_meaning(records, {}, [], [], IDENTITY.permalink)
    assert records == before
    assert sorted(joined.source) == sorted(r["id"] for r in records)
    assert all(part["trigger"] for part in joined.source.values())
    assert joined.reproductions == {}  # no test file


def test_merge_puts_each_part_into_its_record_and_nothing_else():
    records = build_records(IDENTITY, SITES[:2], {})
    first, second = (r["id"] for r in records)
    related = [{"id": second, "title": "t", "reason": "shares x"}]
    source = {rid: SourcePart(callers=[], knobs=[], trigger=f"Raised for {rid}.", fix=None, related=[], passed=None) for rid in (first, second)}
    source[first]["related"] = related
    reps = {second: [{"path": "tests/t.py", "line": 3, "end_line": 4, "qualname": "test_x", "match": None, "permalink": None, "code": "x"}]}
    curated = {second: CuratedPart(explanation={"what_it_means": "w"}, explanation_status="draft")}
    untouched = copy.deepcopy(records[0]["explanation"])
    merge(records, Joined(source, reps), curated, {second: [{"url": "https://example.org/1"}]})
    one, two = records
    assert one["meaning"]["trigger"] == f"Raised for {first}." and one["related"] == related
    assert one["meaning"]["reproductions"] == [] and one["explanation"] == untouched
    assert two["meaning"]["reproductions"] == reps[second]
    assert two["explanation"] == {"what_it_means": "w", "evidence": [{"url": "https://example.org/1"}]}
    assert two["explanation_status"] == "draft" and two["related"] == []
