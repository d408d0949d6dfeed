"""Each record's meaning kept by what it read (``catalogue.meaning_memo``): a crawl whose source
join runs again makes anew exactly the meanings whose site or lookups changed, and gives the
bytes a crawl without the cache gives."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import crawler.catalogue.meaning_memo as meaning_memo
import crawler.crawl
from crawler.catalogue.meaning_memo import _LOG, TracedDict, TracedSet, _Kept, _row

CONFIG = '''
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
'''

ENVS = '''
import os

environment_variables = {
    "ACME_DEBUG": lambda: os.getenv("ACME_DEBUG", "0") == "1",
}
'''

TREE = {
    "pkg/__init__.py": "",
    "pkg/envs.py": ENVS,
    "pkg/run.py": '''
        from pkg import envs


        def run():
            if not envs.ACME_DEBUG:
                raise RuntimeError("debug mode is off")


        def trace():
            if envs.ACME_TRACE:
                raise RuntimeError("tracing is on")
        ''',
    "pkg/other.py": '''
        def other(x):
            if x > 3:
                raise ValueError("other failure over three")


        def third(y):
            if y is None:
                raise KeyError("third failure without y")
        ''',
}


@pytest.fixture
def made(monkeypatch):
    """The messages of the records whose meaning was made (not taken), per crawl; every join
    runs in this process (a crawl makes the meanings in a forked helper)."""
    found: list[str] = []
    real = meaning_memo.record_meaning

    def counted(tables, record, callers):
        found.append(record["message"]["text"])
        return real(tables, record, callers)

    monkeypatch.setattr(meaning_memo, "record_meaning", counted)
    monkeypatch.setattr(crawler.crawl, "_aside", lambda: None)
    return found


def crawl(cli, repo, config: Path, out: Path, ref: str, *extra: str) -> bytes:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--config", config, "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return gzip.decompress((out / "acme" / "widgets" / "errors.jsonl.gz").read_bytes())


def by_text(data: bytes) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, data.splitlines())}


def test_a_changed_lookup_or_site_makes_its_meaning_anew_and_the_rest_are_taken(fixture_repo, cli, tmp_path, made):
    fixture_repo.commit(TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG)
    before = by_text(crawl(cli, fixture_repo, config, tmp_path / "out", "v1"))
    assert sorted(made) == sorted(before)  # nothing kept yet: every meaning made
    assert before["debug mode is off"]["meaning"]["knobs"][0]["line"] == 4
    assert not before["tracing is on"]["meaning"]["knobs"]  # ACME_TRACE is no variable the table declares
    # envs.py declares ACME_TRACE above ACME_DEBUG: a lookup of each record of run.py gives
    # another value (one a key that was absent), though run.py did not change; other.py
    # changes one raise's message: its own site.
    fixture_repo.commit({
        "pkg/envs.py": ENVS.replace('    "ACME_DEBUG"', '    "ACME_TRACE": lambda: os.getenv("ACME_TRACE"),\n    "ACME_DEBUG"'),
        "pkg/other.py": TREE["pkg/other.py"].replace("other failure over three", "other failure above three"),
    }, tag="v2")
    made.clear()
    after = by_text(crawl(cli, fixture_repo, config, tmp_path / "out", "v2"))
    assert sorted(made) == ["debug mode is off", "other failure above three", "tracing is on"]
    assert after["debug mode is off"]["meaning"]["knobs"][0]["line"] == 5
    assert [k["name"] for k in after["tracing is on"]["meaning"]["knobs"]] == ["ACME_TRACE"]
    assert after["third failure without y"]["meaning"] == before["third failure without y"]["meaning"]
    assert crawl(cli, fixture_repo, config, tmp_path / "fresh", "v2", "--no-cache") == crawl(
        cli, fixture_repo, config, tmp_path / "out", "v2")  # (up to date: the incremental crawl's bytes)


@pytest.mark.parametrize("damaged", [None, [], {"reads": "x", "sites": {}}, {"reads": [["env", ["a", ["b"]], "d"]], "sites": {}},
                                     {"reads": [["env", "A", "d"], ["env", "A", "d"]], "sites": {}},
                                     {"reads": [["env", "A", 5]], "sites": {}}])
def test_a_memo_this_module_did_not_write_holds_nothing(damaged):
    """What the cache holds is checked on the way in: a memo that does not fit is a miss for
    every meaning, never a failure (the crawl's own damaged rows: test_join_cache.py)."""
    assert _Kept(damaged).sites == {}


@pytest.mark.parametrize("row", [[], [[], "Raised.", None, [1]], [["no knob"], "Raised.", None, [0]], [[], 3, None, [0]],
                                 [[], "Raised.", None, [-1]], [[], "Raised.", None, "0"]])
def test_a_kept_row_that_does_not_fit_is_not_taken(row):
    assert not _row(row, 1)
    assert _row([[{"kind": "env_var"}], "Raised.", None, [0]], 1)


def test_the_tables_log_every_lookup_and_walk():
    table, members = TracedDict("t", {"a": 1, ("p", 2): 3}), TracedSet("s", {"x"})
    log: list[tuple[str, object]] = []
    _LOG[0] = log
    try:
        table.get("a"), table[("p", 2)], "zz" in table, "x" in members
        list(table.items()), sorted(members)
    finally:
        _LOG[0] = None
    table.get("untraced")
    assert log == [("t", "a"), ("t", ("p", 2)), ("t", "zz"), ("s", "x"), ("t*", None), ("s*", None)]
