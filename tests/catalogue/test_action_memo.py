"""Who acts kept by its inputs (``catalogue.action_memo``): a crawl of a commit that changed one
file makes anew only the actions of the records whose inputs changed, a change to errcat's code
(a rule) makes every one anew, a memo that does not fit is ignored whole, and every crawl gives
the bytes a crawl without the cache gives."""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib
from pathlib import Path

import pytest

import crawler.catalogue.action_memo as action_memo
import crawler.catalogue.actions as actions
import crawler.crawl
from crawler.catalogue.action_memo import Memo, decoded, pinless, stamp
from crawler.catalogue.entries import Identity
from crawler.model.records import RepoRef
from crawler.publish.pins import repin

CONFIG = """
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
"""

TREE = {
    "pkg/__init__.py": "",
    "pkg/run.py": """
        import logging

        logger = logging.getLogger(__name__)


        def run(cfg):
            if cfg.workers < 1:
                raise ValueError("workers must be at least one")
            if cfg.closed:
                raise RuntimeError("the engine has already stopped")
            logger.warning("running with %d workers", cfg.workers)
        """,
    "pkg/other.py": """
        def other(x):
            if x > 3:
                raise ValueError("other failure over three")


        def third(y):
            assert y is not None, "third failure without y"
        """,
}


@pytest.fixture
def made(monkeypatch):
    """The messages of the records whose action was made (not taken from the memo), per crawl."""
    found: list[str] = []
    real = action_memo.action

    def counted(record, *args):
        found.append(record["message"]["text"])
        return real(record, *args)

    monkeypatch.setattr(action_memo, "action", counted)
    return found


def crawl(cli, repo, config: Path, out: Path, ref: str, *extra: str) -> bytes:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--config", config, "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return gzip.decompress((out / "acme" / "widgets" / "errors.jsonl.gz").read_bytes())


def without_cache(cli, repo, config: Path, out: Path) -> bytes:
    """v2's bytes crawled with no cache (no memo) over v1's dataset, as the crawls with it were
    (an unchanged record stays pinned at v1)."""
    crawl(cli, repo, config, out, "v1", "--no-cache")
    return crawl(cli, repo, config, out, "v2", "--no-cache")


def by_text(data: bytes) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, data.splitlines())}


def rows(cache_dir: Path) -> list[tuple[str, bytes]]:
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        return db.execute("SELECT key, value FROM results WHERE key LIKE ?", (f"%:{action_memo.ROW}:%",)).fetchall()


def kept_value(raw: bytes) -> dict:
    return json.loads(zlib.decompress(raw[4 + int.from_bytes(raw[:4], "big") :]))


def put_value(cache_dir: Path, key: str, raw: bytes, payload: bytes) -> None:
    """The row ``key`` with ``payload`` (compressed) as its output, its inputs header kept."""
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        db.execute("UPDATE results SET value = ? WHERE key = ?", (raw[: 4 + int.from_bytes(raw[:4], "big")] + payload, key))


@pytest.fixture
def widgets(fixture_repo, tmp_path):
    fixture_repo.commit(TREE, tag="v1")
    # (a comment line put first: other.py's sites move, nothing else changes)
    fixture_repo.commit({"pkg/other.py": "\n        # other things" + TREE["pkg/other.py"]}, tag="v2")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG)
    return fixture_repo, config


@pytest.mark.slow
def test_a_new_commit_makes_only_the_changed_records_actions_with_the_bytes_of_a_crawl_without_it(widgets, cli, tmp_path, cache_dir, made):
    repo, config = widgets
    first = by_text(crawl(cli, repo, config, tmp_path / "out", "v1"))
    assert sorted(made) == sorted(first)  # a cold cache: every action made
    assert len(rows(cache_dir)) == 1
    made.clear()
    after = crawl(cli, repo, config, tmp_path / "out", "v2")
    # Every record of v2 names another commit than v1's (its provenance, its permalinks): only
    # those whose sites moved are made, though; the others are taken.
    assert sorted(made) == ["other failure over three", "third failure without y"]
    assert by_text(after)["the engine has already stopped"]["meaning"]["action"]["actor"] == "internal"
    assert after == without_cache(cli, repo, config, tmp_path / "fresh")
    assert len(rows(cache_dir)) == 1  # (one row, replaced: this crawl's actions alone)
    made.clear()
    crawl(cli, repo, config, tmp_path / "other-out", "v2")  # the dataset elsewhere: written anew, nothing made
    assert made == []


@pytest.mark.slow
def test_a_changed_rule_makes_every_action_anew(widgets, cli, tmp_path, cache_dir, made, monkeypatch):
    """errcat's code digest stamps the memo (and names its row): the rules edited (here in the
    process, with the digest an edit would give) make every action anew, none kept from before."""
    repo, config = widgets
    crawl(cli, repo, config, tmp_path / "out", "v1")
    crawl(cli, repo, config, tmp_path / "fresh", "v1", "--no-cache")
    made.clear()
    monkeypatch.setattr(actions, "_SAYS", {key: f"{says} (edited)" for key, says in actions._SAYS.items()})
    monkeypatch.setattr(crawler.crawl, "code_digest", lambda: "0" * 64)
    after = crawl(cli, repo, config, tmp_path / "out", "v2")
    assert sorted(made) == sorted(by_text(after))
    assert all(r["meaning"]["action"]["says"].endswith(" (edited)") for r in by_text(after).values())
    assert after == crawl(cli, repo, config, tmp_path / "fresh", "v2", "--no-cache")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["not zlib", "not json", "another stamp", "one action of another shape", "a key of another form"])
def test_a_damaged_memo_is_ignored_whole(widgets, cli, tmp_path, cache_dir, made, damage):
    repo, config = widgets
    crawl(cli, repo, config, tmp_path / "out", "v1")
    [(key, raw)] = rows(cache_dir)
    value = kept_value(raw)
    first = next(iter(value["actions"]))
    if damage == "another stamp":
        value["stamp"] = stamp("another code")
    elif damage == "one action of another shape":
        value["actions"][first] = {**value["actions"][first], "steps": "one step, not a list"}
    elif damage == "a key of another form":
        value["actions"]["not a digest"] = value["actions"][first]
    payload = b"\x78\x9c broken" if damage == "not zlib" else zlib.compress(b"{not json" if damage == "not json" else json.dumps(value).encode())
    put_value(cache_dir, key, raw, payload)
    made.clear()
    after = crawl(cli, repo, config, tmp_path / "out", "v2")
    assert sorted(made) == sorted(by_text(after))  # nothing taken from a memo that does not fit
    assert after == without_cache(cli, repo, config, tmp_path / "fresh")


@pytest.mark.slow
def test_a_kept_action_of_the_right_shape_is_what_the_crawl_writes(widgets, cli, tmp_path, cache_dir):
    """The memo is the cache's, as the extraction's is: what a row that fits holds is taken as
    it is (so a test can see it is taken, not made again), each field of the shape ``Action``
    has; the crawl's own validation checks the record it goes into."""
    repo, config = widgets
    crawl(cli, repo, config, tmp_path / "out", "v1")
    [(key, raw)] = rows(cache_dir)
    value = kept_value(raw)
    for kept in value["actions"].values():
        kept["steps"] = [*kept["steps"], "A step only the memo holds."]
    put_value(cache_dir, key, raw, zlib.compress(json.dumps(value).encode()))
    after = by_text(crawl(cli, repo, config, tmp_path / "out", "v2"))
    assert after["workers must be at least one"]["meaning"]["action"]["steps"][-1] == "A step only the memo holds."
    assert after["other failure over three"]["meaning"]["action"]["steps"][-1] != "A step only the memo holds."


@pytest.mark.slow
def test_who_acts_reads_nothing_of_where_a_record_is_pinned(widgets, cli, tmp_path):
    """The memo makes each action from the record without its pins (``pinless``): the actions of
    every record are those of the whole record, and of the record pinned at another commit; the
    record itself is not changed."""
    repo, config = widgets
    records = list(by_text(crawl(cli, repo, config, tmp_path / "out", "v2", "--no-cache")).values())
    repo_ref = RepoRef(owner="acme", name="widgets", url="https://github.com/acme/widgets")
    identity = Identity(repo=repo_ref, commit=records[0]["provenance"]["commit"], commit_date=None, upstream_commit=None, source="git")
    for record in records:
        before = json.dumps(record, sort_keys=True)
        own = pinless(record)
        assert json.dumps(record, sort_keys=True) == before
        assert "permalink" not in own["location"] and not any("permalink" in s for s in own["sites"])
        assert actions.action(own) == actions.action(record) == record["meaning"]["action"]
        moved = repin(record, identity, "f" * 40, "2020-01-01T00:00:00+00:00")
        assert moved["location"]["permalink"] != record["location"]["permalink"]
        assert pinless(moved) == own


def test_a_memo_checks_each_kept_action():
    ok = {"actor": "internal", "basis": "b", "says": "s", "remedy": None, "steps": ["one"]}
    key = "a" * 64
    assert decoded({"stamp": stamp("c"), "actions": {key: ok}}, stamp("c")) == {key: ok}
    for bad in (
        None,
        [],
        {"stamp": stamp("c")},
        {"stamp": stamp("d"), "actions": {key: ok}},
        {"stamp": stamp("c"), "actions": {key: {**ok, "steps": [1]}}},
        {"stamp": stamp("c"), "actions": {key: {**ok, "remedy": 3}}},
        {"stamp": stamp("c"), "actions": {key: {**ok, "more": "x"}}},
        {"stamp": stamp("c"), "actions": {key: ok, "b" * 63: ok}},
    ):
        assert decoded(bad, stamp("c")) == {}
    memo = Memo({}, stamp("c"))
    assert not memo.changed() and memo.value() == {"stamp": stamp("c"), "actions": {}}


def test_the_memo_is_stamped_with_how_the_repository_spells_its_settings() -> None:
    # who acts names a setting by its option (meaning.setting_names): a commit that adds or renames
    # an option changes no record's own inputs, so the memo's stamp must change instead
    from crawler.catalogue.action_memo import stamp
    from crawler.catalogue.meaning import SettingNames

    spelled = SettingNames(flags={"parallel_config.enable_eplb": "--enable-eplb"}, fields={"model_config": frozenset({"model"})})
    renamed = SettingNames(flags={"parallel_config.enable_eplb": "--eplb"}, fields={"model_config": frozenset({"model"})})
    assert stamp("code", spelled) != stamp("code", renamed) != stamp("code")
    assert stamp("code", spelled) == stamp("code", SettingNames(flags=dict(spelled.flags), fields=dict(spelled.fields)))
    # (s46-rules: which config objects are declared always there decides who acts on a "`model_config is None`" page)
    required = SettingNames(flags=dict(spelled.flags), fields=dict(spelled.fields), required=frozenset({"vllm_config.model_config"}))
    assert stamp("code", required) != stamp("code", spelled)


def test_a_kept_source_join_without_the_required_objects_is_made_anew() -> None:
    # a join kept by the code before ``required`` (s46-rules) would give a warm crawl's who acts other
    # names than a fresh one's: it is not taken; one with them gives them back as they were kept
    from crawler.catalogue.meaning import SettingNames
    from crawler.catalogue.meaning_join import _names, _names_row

    names = SettingNames(flags={"a_config.b": "--b"}, fields={"a_config": frozenset({"b"})}, required=frozenset({"vllm_config.a_config"}))
    row = _names_row(names)
    assert _names({"names": row}) == names
    assert _names({"names": {k: v for k, v in row.items() if k != "required"}}) is None
    assert _names({"names": {**row, "required": [1]}}) is None
