"""Each record's meaning kept by what it read (``catalogue.meaning_memo``): a crawl whose source
join runs again makes anew exactly the meanings whose site or lookups changed, and gives the
bytes a crawl without the cache gives."""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib
from pathlib import Path

import pytest

import crawler.catalogue.meaning_join as meaning_join
import crawler.catalogue.meaning_memo as meaning_memo
import crawler.crawl
from crawler.catalogue.meaning_memo import _LOG, TracedDict, TracedSet, _Kept, _row

CONFIG = """
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
"""

ENVS = """
import os

environment_variables = {
    "ACME_DEBUG": lambda: os.getenv("ACME_DEBUG", "0") == "1",
}
"""

TREE = {
    "pkg/__init__.py": "",
    "pkg/envs.py": ENVS,
    "pkg/run.py": """
        from pkg import envs


        def run():
            if not envs.ACME_DEBUG:
                raise RuntimeError("debug mode is off")


        def trace():
            if envs.ACME_TRACE:
                raise RuntimeError("tracing is on")
        """,
    "pkg/other.py": """
        def other(x):
            if x > 3:
                raise ValueError("other failure over three")


        def third(y):
            if y is None:
                raise KeyError("third failure without y")
        """,
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


@pytest.mark.slow
def test_a_changed_lookup_or_site_makes_its_meaning_anew_and_the_rest_are_taken(fixture_repo, cli, tmp_path, made):
    fixture_repo.commit(TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG)
    crawl(cli, fixture_repo, config, tmp_path / "out", "v1")
    assert made == []  # a cold cache: the meanings made as without a memo, and none kept
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more")\n'}, tag="v1b")
    before = by_text(crawl(cli, fixture_repo, config, tmp_path / "out", "v1b"))
    assert sorted(made) == sorted(before)  # the join ran before with this code: every meaning made and kept
    assert before["debug mode is off"]["meaning"]["knobs"][0]["line"] == 4
    assert not before["tracing is on"]["meaning"]["knobs"]  # ACME_TRACE is no variable the table declares
    # envs.py declares ACME_TRACE above ACME_DEBUG: a lookup of each record of run.py gives
    # another value (one a key that was absent), though run.py did not change; other.py
    # changes one raise's message: its own site.
    made.clear()
    fixture_repo.commit(
        {
            "pkg/envs.py": ENVS.replace('    "ACME_DEBUG"', '    "ACME_TRACE": lambda: os.getenv("ACME_TRACE"),\n    "ACME_DEBUG"'),
            "pkg/other.py": TREE["pkg/other.py"].replace("other failure over three", "other failure above three"),
        },
        tag="v2",
    )
    after = by_text(crawl(cli, fixture_repo, config, tmp_path / "out", "v2"))
    assert sorted(made) == ["debug mode is off", "other failure above three", "tracing is on"]
    assert after["debug mode is off"]["meaning"]["knobs"][0]["line"] == 5
    assert [k["name"] for k in after["tracing is on"]["meaning"]["knobs"]] == ["ACME_TRACE"]
    assert after["third failure without y"]["meaning"] == before["third failure without y"]["meaning"]
    assert crawl(cli, fixture_repo, config, tmp_path / "fresh", "v2", "--no-cache") == crawl(
        cli, fixture_repo, config, tmp_path / "out", "v2"
    )  # (up to date: the incremental crawl's bytes)


@pytest.mark.slow
@pytest.mark.parametrize("damage", [b"not zlib", zlib.compress(b'{"reads": [], "sites": {"x": 1}}'), "every row kept for the sites of another repository"])
def test_a_damaged_memo_in_the_cache_is_a_miss(fixture_repo, cli, tmp_path, cache_dir, made, damage):
    fixture_repo.commit(TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG)
    crawl(cli, fixture_repo, config, tmp_path / "out", "v1")
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more")\n'}, tag="v1b")
    crawl(cli, fixture_repo, config, tmp_path / "out", "v1b")
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        kept_rows = db.execute("SELECT key, value FROM results WHERE key LIKE '%:meanings:%'").fetchall()
        assert len(kept_rows) == 1
        for key, value in kept_rows:
            damaged = damage
            if isinstance(damage, str):  # a memo that decodes and fits, whose rows name other sites
                kept = json.loads(zlib.decompress(value[4 + int.from_bytes(value[:4], "big") :]))
                kept["sites"] = {digest[::-1]: row for digest, row in kept["sites"].items()}
                damaged = value[: 4 + int.from_bytes(value[:4], "big")] + zlib.compress(json.dumps(kept).encode())
            db.execute("UPDATE results SET value = ? WHERE key = ?", (damaged, key))
    fixture_repo.commit({"pkg/other.py": TREE["pkg/other.py"].replace("over three", "above three")}, tag="v2")
    made.clear()
    after = crawl(cli, fixture_repo, config, tmp_path / "out", "v2")
    assert len(made) == len(by_text(after))  # every meaning made anew
    assert after == crawl(cli, fixture_repo, config, tmp_path / "fresh", "v2", "--no-cache")


@pytest.mark.parametrize(
    "damaged",
    [
        None,
        [],
        {"reads": "x", "sites": {}},
        {"reads": [["env", ["a", ["b"]], "d"]], "sites": {}},
        {"reads": [["env", "A", "d"], ["env", "A", "d"]], "sites": {}},
        {"reads": [["env", "A", 5]], "sites": {}},
        {"reads": [["env", "A", "d"]], "sites": {}},
    ],
)
def test_a_memo_this_module_did_not_write_holds_nothing(damaged):
    """What the cache holds is checked on the way in: a memo that does not fit is a miss for
    every meaning, never a failure (the crawl's own damaged rows: test_join_cache.py). Its
    lookups go too, so the run numbers its own from none (each once: a lookup numbered twice
    would make the next run's memo one that does not fit)."""
    kept = _Kept(damaged)
    assert (kept.sites, kept.reads, kept.prints, kept.index) == ({}, [], [], {})


@pytest.mark.parametrize(
    "row", [[], [[], "Raised.", None, [1]], [["no knob"], "Raised.", None, [0]], [[], 3, None, [0]], [[], "Raised.", None, [-1]], [[], "Raised.", None, "0"]]
)
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
    # (``sorted`` asks a set's size, then walks it: one read, numbered once)
    assert list(dict.fromkeys(log)) == [("t", "a"), ("t", ("p", 2)), ("t", "zz"), ("s", "x"), ("t*", None), ("s*", None)]


@pytest.mark.slow
def test_a_crawl_far_from_the_last_makes_the_meanings_without_a_memo(fixture_repo, cli, tmp_path, made, monkeypatch):
    """Keeping the meanings costs about half of making them: a crawl that changed more files than
    ``MEMO_FILES`` and ``MEMO_SHARE`` of them since the join last ran (a new release) neither
    takes nor keeps them, and gives the same bytes."""
    fixture_repo.commit(TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG)
    crawl(cli, fixture_repo, config, tmp_path / "out", "v1")
    monkeypatch.setattr(meaning_join, "MEMO_FILES", 0)
    monkeypatch.setattr(meaning_join, "MEMO_SHARE", 0.0)
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more")\n'}, tag="v2")
    data = crawl(cli, fixture_repo, config, tmp_path / "out", "v2")
    assert made == []
    assert data == crawl(cli, fixture_repo, config, tmp_path / "fresh", "v2", "--no-cache")
    monkeypatch.setattr(meaning_join, "MEMO_FILES", 1)  # one file changed: near enough
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more, again")\n'}, tag="v3")
    assert len(by_text(crawl(cli, fixture_repo, config, tmp_path / "out", "v3"))) == len(made)
