"""The one-file crawl's tail (issue #36 item 4, round 45).

A served source join keeps the settings' spelling whole: with the fields a settings class fills
itself (``SettingNames.filled``), which who acts reads, so a crawl whose joins are served gives
the actions of one without the cache (vLLM's ``KVTransferConfig.engine_id`` assert was
"internal" when the join was made and "setting" when it was served).

A cached result decoded but its ``REST_KEYS`` (``cache.decode_part``) is a ``cache.Part``: a reader
of one of those keys before ``runner.complete`` put them in fails loudly (``HalfDecoded``), where it
would have taken the empty default of a result without them and written a wrong catalogue.

The crawl builds its records without their pins and puts them in once the joins are merged: who
acts is keyed by each record without its pins, which then needs no copy of every site.
"""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import orjson
import pytest

import crawler.crawl as crawl_module
from crawler.catalogue.callers import Graph
from crawler.catalogue.cross_module_join import _applied
from crawler.catalogue.hierarchy import apply_init_templates
from crawler.catalogue.meaning import MeaningSettings, build_tables
from crawler.catalogue.meaning_join import shift
from crawler.extract.cache import REST_KEYS, HalfDecoded, Part, decode_part, decode_result, encode_result
from crawler.extract.runner import complete
from tests.catalogue.test_action_seed66 import ARGS, CONFIG, CONNECTOR
from tests.helpers import MEANING_TOML, action_of

#: A result as the extractor makes it, with each of ``REST_KEYS``: a call graph with one function,
#: a knob declaration, a test block.
_OWN = {"path": "pkg/a.py", "module": "pkg.a", "status": "ok", "reason": None, "sites": [], "classes": []}
_COUNTS = {"bare_asserts": 0, "reraises": 0, "calls": [], "declarations": {"classes": [], "functions": [], "assigns": []}, "exports": {}}
_JOINS = {"graph": {"defs": [["grow", 2, None]], "classes": [], "aliases": {}, "calls": []}, "tests": [{"line": 4, "raises": "ValueError"}], "imported": []}
RESULT = _OWN | _COUNTS | _JOINS


def half() -> tuple[Part, bytes]:
    parted = decode_part(encode_result(RESULT), "pkg/a.py")
    assert parted is not None and parted[1] is not None
    first, rest = parted
    assert type(first) is Part
    return first, rest


def test_a_rest_key_read_before_complete_fails_loudly_and_reads_whole_after():
    first, rest = half()
    for key in REST_KEYS:
        assert key not in first  # (what complete tells a half result by)
        with pytest.raises(HalfDecoded, match=f"'{key}' of the cached result of pkg/a.py"):
            first.get(key)
        with pytest.raises(HalfDecoded):
            first[key]
    assert first["sites"] == [] and first.get("exports") == {} and first.get("nothing", 1) == 1
    # the join readers: the call graph's and the knobs' tables, which take a missing key as "none"
    with pytest.raises(HalfDecoded):
        Graph([first])
    with pytest.raises(HalfDecoded):
        build_tables([first], MeaningSettings())
    # copies made on the way (the init templates', the join across modules') are guarded alike
    with pytest.raises(HalfDecoded):
        first.copy().get("graph")
    with pytest.raises(HalfDecoded):
        _applied([Part({**first, "imported": [["x"]]})], [])[0].get("graph")
    assert apply_init_templates([first])[0] is first
    # and so is one that crossed a process (a forked helper's answer)
    with pytest.raises(HalfDecoded):
        pickle.loads(pickle.dumps(first)).get("graph")
    complete([first], {"pkg/a.py": rest})
    assert first == decode_result(encode_result(RESULT), "pkg/a.py") == RESULT and list(first) == list(RESULT)
    assert first.get("graph") == RESULT["graph"] and first.copy()["tests"] == RESULT["tests"]
    assert "pkg.a.grow" in Graph([first]).defs
    assert pickle.loads(pickle.dumps(first))["declarations"] == RESULT["declarations"]
    # the moved join compares a completed result whole, a Part like any dict
    assert shift(first, {**RESULT}) == 0


def test_a_half_decoded_read_is_no_cache_symptom_the_crawl_would_take_for_damage():
    # (the crawl extracts every file again on a symptom, which would hide the bug behind a slow run)
    assert not issubclass(HalfDecoded, crawl_module._CACHE_SYMPTOMS)


def test_a_result_of_one_part_or_decoded_whole_is_a_plain_dict():
    plain = {k: v for k, v in RESULT.items() if k not in REST_KEYS}
    assert decode_part(encode_result(plain), "pkg/a.py") == (plain, None)
    assert type(decode_part(encode_result(plain), "pkg/a.py")[0]) is dict  # type: ignore[index]
    assert type(decode_result(encode_result(RESULT), "pkg/a.py")) is dict


#: A settings class that fills ``engine_id`` itself, a connector that asserts it is there, and a
#: file that v2 moves down by a line (both joins served, moved).
FILLED = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/distributed/kv_transfer/widget_connector.py": CONNECTOR,
    "pkg/other.py": "X = 1\n",
}


def _records(cli, repo, config: Path, out: Path, ref: str, *extra: str) -> tuple[list[dict], dict[str, bytes]]:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--upstream", "widgets", "--config", config, "--out", out, *extra)
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    files = {p.relative_to(dataset).as_posix(): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    files["errors.jsonl.gz"] = gzip.decompress(files["errors.jsonl.gz"])
    return [json.loads(line) for line in files["errors.jsonl.gz"].splitlines()], files


@pytest.mark.slow
def test_a_served_source_join_gives_who_acts_the_fields_a_settings_class_fills_itself(fixture_repo, cli, tmp_path, monkeypatch):
    (tmp_path / "errcat.toml").write_text(MEANING_TOML)
    config = tmp_path / "errcat.toml"
    fixture_repo.commit(FILLED, tag="v1")
    fixture_repo.commit({"pkg/other.py": "# moved\nX = 1\n"}, tag="v2")
    made, _ = _records(cli, fixture_repo, config, tmp_path / "out", "v1")
    assert "gives a value itself" in action_of(made, "widget engine id is unset")["basis"]
    import crawler.catalogue.meaning_join as meaning_join

    joined: list[object] = []
    monkeypatch.setattr(meaning_join, "callers_by_id", lambda *a, **k: joined.append(a) or {})
    served, files = _records(cli, fixture_repo, config, tmp_path / "out", "v2")
    assert joined == []  # the source join was served
    got = action_of(served, "widget engine id is unset")
    assert got["actor"] == "internal" and "gives a value itself" in got["basis"], got
    monkeypatch.undo()
    _records(cli, fixture_repo, config, tmp_path / "fresh", "v1", "--no-cache")
    assert _records(cli, fixture_repo, config, tmp_path / "fresh", "v2", "--no-cache")[1] == files


#: Two functions of one file, one error raised at two sites (one record of two sites), a log.
SOURCE = b"""import logging

logger = logging.getLogger(__name__)


def f(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    logger.warning("odd %s", x)


def g(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
"""


def test_records_built_without_their_pins_and_pinned_after_are_the_pinned_ones():
    """The crawl builds its records without the pins (``build_entries(pinned=False)``: who acts is
    keyed by each record without them, ``action_memo.pinless``, which then copies no site) and
    puts them in once the joins are merged (``pin_in_place``): the same records and bytes."""
    from crawler.base.jsonio import dumps_line, dumps_record
    from crawler.catalogue.action_memo import pinless
    from crawler.catalogue.entries import Identity, build_entries, pin_in_place
    from crawler.extract.visitor import extract_file
    from crawler.model.records import RepoRef

    sites = extract_file("pkg/mod.py", SOURCE)["sites"]
    repo = RepoRef(url="https://github.com/o/r", owner="o", name="r")
    for identity in (
        Identity(repo=repo, commit="a" * 40, commit_date="2026-01-01T00:00:00+00:00", upstream_commit=None, source="git"),
        Identity(repo=repo, commit="b" * 40, commit_date=None, upstream_commit="c" * 40, source="wheel", link_prefix="src/"),
        Identity(repo=repo, commit="b" * 40, commit_date=None, upstream_commit=None, source="wheel", permalinks={"basis": "none", "reason": "x"}),
    ):
        pinned = build_entries(identity, sites)
        bare = build_entries(identity, sites, pinned=False)
        assert sorted(len(r["sites"]) for r in pinned.records) == [1, 2] and bare.primaries == pinned.primaries
        # who acts' key: the bare record is the pinned one's pinless copy, to the byte
        assert [orjson.dumps(pinless(r)) for r in bare.records] == [orjson.dumps(pinless(r)) for r in pinned.records]
        assert all("permalink" not in s for r in bare.records for s in r["sites"]) and all(r["provenance"] == {"repo": "o/r"} for r in bare.records)
        pin_in_place(bare.records, identity)
        assert bare.records == pinned.records
        assert [dumps_record(r) for r in bare.records] == [dumps_record(r) for r in pinned.records]
        assert [dumps_line(r) for r in bare.records] == [dumps_line(r) for r in pinned.records]
