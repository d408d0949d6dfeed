"""The whole-repository joins of the derived meaning, cached by a digest of their inputs: a crawl
whose inputs to a join are unchanged takes its output from the cache (and gives the same bytes),
a changed input runs the join again, and a damaged row is a miss, never a failure."""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib
from pathlib import Path

import pytest

import crawler.catalogue.meaning_join as meaning_join
import crawler.crawl


@pytest.fixture
def joins_run(monkeypatch):
    """Which joins ran (were not taken from the cache), per crawl."""
    ran: list[str] = []
    graph, reproductions = meaning_join.Graph, meaning_join.reproductions_by_id

    def counted_graph(results):
        ran.append("graph")
        return graph(results)

    def counted_reproductions(*args):
        ran.append("reproductions")
        return reproductions(*args)

    monkeypatch.setattr(meaning_join, "Graph", counted_graph)
    monkeypatch.setattr(meaning_join, "reproductions_by_id", counted_reproductions)
    # The test join runs in this process, where it is counted (a crawl runs it in a forked
    # helper: see the tests of ``aside`` below).
    monkeypatch.setattr(crawler.crawl, "_aside", lambda: None)
    return ran


def crawl(cli, repo, config, out: Path, ref: str = "v1", *extra: str) -> bytes:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--config", config, "--upstream", "acme", "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return gzip.decompress((out / "acme" / "widgets" / "errors.jsonl.gz").read_bytes())


def records(data: bytes) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, data.splitlines())}


@pytest.mark.slow
def test_a_crawl_with_the_same_inputs_takes_every_join_from_the_cache(parsing_meaning_repo, cli, tmp_path, joins_run):
    repo, config = parsing_meaning_repo
    first = crawl(cli, repo, config, tmp_path / "a")
    assert joins_run == ["graph", "reproductions"]
    joins_run.clear()
    again = crawl(cli, repo, config, tmp_path / "b")  # no dataset in place: everything is written again
    assert joins_run == []
    assert again == first
    fresh = crawl(cli, repo, config, tmp_path / "c", "v1", "--no-cache")
    assert fresh == first
    size = records(first)["size must be at least 0, got {size}"]["meaning"]
    assert size["reproductions"] and size["callers"] and size["trigger"]


@pytest.mark.slow
def test_the_joins_run_aside_give_the_records_they_give_run_here(parsing_meaning_repo, cli, tmp_path, monkeypatch):
    """The source join's meanings run in a forked helper while this process finds the callers
    and related errors and then makes the test join (a crawl's tail was one core's work; a second
    helper for the test join was the cold crawl's peak of memory): the records are the same bytes
    as when all run here."""
    repo, config = parsing_meaning_repo
    real = crawler.crawl._aside
    asides: list[str] = []
    answers: list[str] = []

    def counted():
        run = real()

        def counted_run(fn):
            asides.append(fn.__code__.co_name)
            waiting = run(fn)

            def answered():
                found = waiting()
                answers.append(type(found).__name__)
                return found

            return answered

        return counted_run

    monkeypatch.setattr(crawler.crawl, "_aside", counted)
    aside = crawl(cli, repo, config, tmp_path / "a", "v1", "--no-cache")
    assert asides == ["made"]  # the meanings alone (the test join ran here meanwhile)
    assert answers == ["dict"]  # the helper answered: nothing was made again here
    monkeypatch.setattr(crawler.crawl, "_aside", lambda: None)
    here = crawl(cli, repo, config, tmp_path / "b", "v1", "--no-cache")
    assert aside == here
    size = records(aside)["size must be at least 0, got {size}"]["meaning"]
    assert size["reproductions"] and size["trigger"].startswith("Raised in `check_size`, when")


@pytest.mark.slow
def test_a_failed_aside_helper_runs_the_joins_here(parsing_meaning_repo, cli, tmp_path, monkeypatch):
    repo, config = parsing_meaning_repo
    here = crawl(cli, repo, config, tmp_path / "a", "v1", "--no-cache")
    monkeypatch.setattr(crawler.crawl, "_aside", lambda: lambda fn: lambda: None)  # the helper gave nothing
    failed = crawl(cli, repo, config, tmp_path / "b", "v1", "--no-cache")
    assert failed == here
    size = records(failed)["size must be at least 0, got {size}"]["meaning"]
    assert size["reproductions"] and size["trigger"].startswith("Raised in `check_size`, when")


@pytest.mark.slow
def test_a_changed_test_file_runs_only_the_test_join_and_a_changed_source_file_both(parsing_meaning_repo, cli, tmp_path, joins_run):
    repo, config = parsing_meaning_repo
    crawl(cli, repo, config, tmp_path / "a")
    repo.commit(
        {
            "tests/test_more.py": """
        import pytest

        from pkg.unrelated import lonely


        def test_lonely():
            with pytest.raises(RuntimeError, match="lonely failure that no test"):
                lonely(1)
        """
        },
        tag="v2",
    )
    joins_run.clear()
    data = records(crawl(cli, repo, config, tmp_path / "b", "v2"))
    assert joins_run == ["graph", "reproductions"]  # the graph only for the reproductions
    assert data == records(crawl(cli, repo, config, tmp_path / "c", "v2", "--no-cache"))
    lonely = data["lonely failure that no test reproduces"]["meaning"]["reproductions"]
    assert [r["path"] for r in lonely] == ["tests/test_more.py"]
    repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("a new source file")\n'}, tag="v3")
    joins_run.clear()
    data = records(crawl(cli, repo, config, tmp_path / "d", "v3"))
    assert joins_run == ["graph", "reproductions"]
    assert "a new source file" in data


@pytest.mark.slow
def test_reproductions_from_the_cache_link_to_the_commit_crawled(parsing_meaning_repo, cli, tmp_path, joins_run):
    repo, config = parsing_meaning_repo
    crawl(cli, repo, config, tmp_path / "a")
    v2 = repo.commit({"README.md": "not selected: every joined input is the same\n"}, tag="v2")
    joins_run.clear()
    data = records(crawl(cli, repo, config, tmp_path / "b", "v2"))
    assert joins_run == []
    reps = data["size must be at least 0, got {size}"]["meaning"]["reproductions"]
    assert reps and all(f"/blob/{v2}/" in r["permalink"] for r in reps)


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        b"not zlib at all",
        b"x\x9c\x03\x00\x00\x00\x00\x01",  # zlib of nothing
        "json",
    ],
)
def test_a_damaged_join_row_is_a_miss(parsing_meaning_repo, cli, tmp_path, cache_dir, joins_run, damage):
    repo, config = parsing_meaning_repo
    first = crawl(cli, repo, config, tmp_path / "a")
    value = damage if isinstance(damage, bytes) else zlib.compress(json.dumps({"ids": ["x"], "records": [["not", "the", "parts"]]}).encode())
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        rows = db.execute("UPDATE results SET value = ?", (value,)).rowcount
    # the source join, the test join and who acts (a cold cache keeps no meanings: see
    # test_meaning_memo.py; who acts: test_action_memo.py)
    assert rows == 3
    joins_run.clear()
    assert crawl(cli, repo, config, tmp_path / "b") == first
    assert joins_run == ["graph", "reproductions"]


@pytest.mark.slow
def test_the_store_keeps_the_last_few_outputs_of_each_join(parsing_meaning_repo, cli, tmp_path, cache_dir, joins_run):
    repo, config = parsing_meaning_repo
    for n in range(meaning_join.KEEP + 2):
        repo.commit({"pkg/extra.py": f'def extra():\n    raise ValueError("extra number {n}")\n'}, tag=f"x{n}")
        crawl(cli, repo, config, tmp_path / f"out{n}", f"x{n}")
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        keys = [key for (key,) in db.execute("SELECT key FROM results")]
    # (the kept meanings and who acts are one row each, replaced by each run: see test_meaning_memo.py, test_action_memo.py)
    assert sorted(key.split(":")[1] for key in keys) == ["actions", "meanings"] + ["source"] * meaning_join.KEEP + ["tests"] * meaning_join.KEEP
    joins_run.clear()
    crawl(cli, repo, config, tmp_path / "again", f"x{meaning_join.KEEP + 1}")  # the last one is still there
    assert joins_run == []


@pytest.mark.slow
def test_other_kinds_of_sites_never_take_the_joins_of_another_crawl(parsing_meaning_repo, cli, tmp_path, joins_run):
    """The kinds read change the records the joins see though no file changed: no hit across them."""
    repo, config = parsing_meaning_repo
    crawl(cli, repo, config, tmp_path / "a")
    joins_run.clear()
    config.write_text(config.read_text().replace("[upstreams.acme]", '[upstreams.acme]\nkinds = ["raise"]', 1))
    only_raises = records(crawl(cli, repo, config, tmp_path / "b"))
    assert joins_run == ["graph", "reproductions"]
    assert {r["kind"] for r in only_raises.values()} == {"raise"}


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def full_and_incremental(cli, repo, config, tmp_path: Path, ref: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The dataset of ``ref`` crawled over v1's with the cache, and crawled with ``--no-cache`` over
    another copy of v1's: what an incremental crawl writes must be what a full one does."""
    for name in ("incremental", "full"):
        crawl(cli, repo, config, tmp_path / name)
    crawl(cli, repo, config, tmp_path / "incremental", ref)
    crawl(cli, repo, config, tmp_path / "full", ref, "--no-cache")
    return files_of(tmp_path / "incremental"), files_of(tmp_path / "full")


@pytest.mark.slow
def test_code_moved_down_a_file_reuses_the_joins_with_its_lines_moved(parsing_meaning_repo, cli, tmp_path, joins_run):
    """A comment and a blank line put first in two files move every line of each (the daily
    sync's usual change): no join runs, and the dataset is byte for byte a full crawl's."""
    repo, config = parsing_meaning_repo
    before = records(crawl(cli, repo, config, tmp_path / "v1"))
    tree = repo.path
    repo.commit(
        {
            "pkg/config.py": "# moved down by two\n\n" + (tree / "pkg/config.py").read_text(),
            "pkg/core.py": "# moved down by one\n" + (tree / "pkg/core.py").read_text(),
        },
        tag="v2",
    )
    joins_run.clear()
    incremental, full = full_and_incremental(cli, repo, config, tmp_path, "v2")
    assert joins_run == ["graph", "reproductions"]  # the --no-cache crawl's only
    assert incremental == full
    after = records(gzip.decompress(incremental["acme/widgets/errors.jsonl.gz"]))
    size_before, size_after = (r["size must be at least 0, got {size}"] for r in (before, after))
    assert size_after["location"]["line"] == size_before["location"]["line"] + 2
    callers = {c["path"]: c["line"] for c in size_after["meaning"]["callers"]}
    assert callers["pkg/core.py"] == {c["path"]: c["line"] for c in size_before["meaning"]["callers"]}["pkg/core.py"] + 1


@pytest.mark.slow
def test_a_kept_output_whose_files_did_not_just_move_is_not_decoded(parsing_meaning_repo, cli, tmp_path, monkeypatch):
    """A kept output is tried for a move by its inputs alone: one whose changed files did more
    than move is passed over before its output (vLLM's: a tenth of a second) is decoded."""
    import sys

    repo, config = parsing_meaning_repo
    crawl(cli, repo, config, tmp_path / "v1")
    text = (repo.path / "pkg/config.py").read_text()
    repo.commit({"pkg/config.py": text.replace("def check_name", "\ndef check_name", 1)}, tag="v2")
    decoded, real = [], meaning_join._decoded

    def counted(raw, header=False):
        decoded.append((sys._getframe(1).f_code.co_name, header))
        return real(raw, header)

    monkeypatch.setattr(meaning_join, "_decoded", counted)
    crawl(cli, repo, config, tmp_path / "v2", "v2")
    assert ("moved", True) in decoded  # each kept output's inputs were read
    assert ("moved", False) not in decoded


@pytest.mark.slow
def test_lines_moved_unevenly_run_the_joins_again(parsing_meaning_repo, cli, tmp_path, joins_run):
    """A blank line between two functions moves one raise and not the other: not a move of the
    whole file, so the joins run again (and give a full crawl's bytes)."""
    repo, config = parsing_meaning_repo
    crawl(cli, repo, config, tmp_path / "v1")
    text = (repo.path / "pkg/config.py").read_text()
    repo.commit({"pkg/config.py": text.replace("def check_name", "\ndef check_name", 1)}, tag="v2")
    joins_run.clear()
    incremental, full = full_and_incremental(cli, repo, config, tmp_path, "v2")
    assert joins_run == ["graph", "reproductions"] * 2
    assert incremental == full
