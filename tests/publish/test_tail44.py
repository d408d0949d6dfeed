"""The one-file crawl's tail and ``curate check`` (issue #36 items 4, 5, round 44).

A cached extraction result is kept in two parts (``extract.cache``): what every crawl reads (the
sites, classes, counts) and what only the joins read when they are made (``REST_KEYS``). A crawl
whose joins are served decodes only the first, and gives the bytes a crawl without the cache
gives; a join made again reads the rest; a damaged rest makes the crawl extract again.
``curate check`` validates against the record schema only the lines errcat never wrote.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import zlib
from pathlib import Path

import pytest

import crawler.catalogue.meaning_join as meaning_join
import crawler.extract.runner as runner
import crawler.publish.dataset as dataset_module
from crawler.extract.cache import REST_KEYS, completed, decode_part, decode_result, encode_result
from tests.helpers import MEANING_CONFIG, calls_of, jsonl_bytes, write_jsonl

TREE = {
    "pkg/__init__.py": "",
    "pkg/config.py": """
        from dataclasses import dataclass


        @dataclass
        class PoolConfig:
            size: int = 1
            drained: bool = False
        """,
    "pkg/pool.py": """
        def grow(pool, by):
            if by < 1:
                raise ValueError("the pool grows by at least one")
            if pool.drained:
                raise RuntimeError("the pool is drained")
            return pool.size + by
        """,
    "pkg/other.py": """
        def shrink(n):
            if n > 3:
                raise ValueError("cannot shrink by more than three")
        """,
    "tests/test_pool.py": """
        import pytest

        from pkg.other import shrink


        def test_shrink():
            with pytest.raises(ValueError, match="cannot shrink by more than three"):
                shrink(4)
        """,
}

#: A result as the extractor orders its keys, with two of ``REST_KEYS`` between others.
RESULT = {
    "path": "pkg/a.py",
    "module": "pkg.a",
    "status": "ok",
    "reason": None,
    "sites": [{"line": 3, "message": "x"}],
    "classes": [],
    "bare_asserts": 0,
    "reraises": 1,
    "calls": [],
    "declarations": {"classes": [{"name": "C", "line": 9}]},
    "exports": {"f": ["x"]},
    "graph": {"defs": [["f", 2]]},
}


def test_a_row_keeps_what_only_the_joins_read_apart_and_gives_the_result_back_in_order():
    raw = encode_result(RESULT)
    whole = decode_result(raw, "pkg/a.py")
    assert whole == RESULT and list(whole) == list(RESULT)
    parted = decode_part(raw, "pkg/a.py")
    assert parted is not None
    first, rest = parted
    assert rest is not None and not any(key in first for key in REST_KEYS)
    assert first["sites"] == RESULT["sites"] and first["exports"] == RESULT["exports"]
    again = completed(first, rest, "pkg/a.py")
    assert again == RESULT and list(again) == list(RESULT)
    # a result with none of them is one part, as rows were before (and such rows still decode)
    plain = {k: v for k, v in RESULT.items() if k not in REST_KEYS}
    assert decode_part(encode_result(plain), "pkg/a.py") == (plain, None)
    assert decode_result(zlib.compress(json.dumps(RESULT).encode()), "pkg/a.py") == RESULT
    assert decode_result(raw, "pkg/b.py") is None  # another file's row
    # damage: a length past the row's end, a rest that does not decode or is of another shape
    assert decode_part(raw[:4] + (10**9).to_bytes(4, "big") + raw[8:], "pkg/a.py") is None
    assert completed(first, b"\x78broken", "pkg/a.py") is None
    assert completed(first, zlib.compress(b'[["path"], {"sites": []}]'), "pkg/a.py") is None
    assert decode_result(raw[: len(raw) - len(rest)] + b"\x78broken", "pkg/a.py") is None
    with pytest.raises(ValueError, match="pkg/a.py is damaged"):
        runner.complete([dict(first)], {"pkg/a.py": b"\x78broken"})


def crawl(cli, repo, config: Path, out: Path, ref: str, *extra: str) -> Path:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--config", config, "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return out / "acme" / "widgets"


def files_of(dataset: Path) -> dict[str, bytes]:
    """Every file of a dataset but the manifest (whose digests name errcat's code and inputs),
    errors.jsonl.gz decompressed."""
    found = {p.relative_to(dataset).as_posix(): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    found["errors.jsonl.gz"] = gzip.decompress(found["errors.jsonl.gz"])
    return found


def without_cache(cli, repo, config: Path, out: Path, ref: str) -> dict[str, bytes]:
    crawl(cli, repo, config, out, "v1", "--no-cache")
    return files_of(crawl(cli, repo, config, out, ref, "--no-cache"))


@pytest.fixture
def widgets(fixture_repo, tmp_path):
    """v1, and v2: a comment line first in other.py (its sites move, nothing else changes: both
    joins are served); with the errcat.toml that reads its tests."""
    (tmp_path / "errcat.toml").write_text(MEANING_CONFIG)
    for tag, files in (("v1", TREE), ("v2", {"pkg/other.py": "\n        # shrinking" + TREE["pkg/other.py"]})):
        fixture_repo.commit(files, tag=tag)
    return fixture_repo, tmp_path / "errcat.toml"


def _reworded(fixture_repo) -> None:
    """v3 (after v2): a message reworded, so the source join is made again."""
    fixture_repo.commit({"pkg/pool.py": TREE["pkg/pool.py"].replace("at least one", "one or more")}, tag="v3")


@pytest.mark.slow
def test_a_crawl_whose_joins_are_served_decodes_none_of_the_rest_and_writes_the_bytes_of_one_without_the_cache(widgets, cli, tmp_path, monkeypatch):
    repo, config = widgets
    crawl(cli, repo, config, tmp_path / "out", "v1")
    made = calls_of(monkeypatch, runner, "completed")
    after = files_of(crawl(cli, repo, config, tmp_path / "out", "v2"))
    assert made == []  # both joins served (moved): no file's declarations, graph or tests decoded
    assert after == without_cache(cli, repo, config, tmp_path / "fresh", "v2")
    assert any((r.get("meaning") or {}).get("reproductions") for r in map(json.loads, after["errors.jsonl.gz"].splitlines()))  # (the test join's output)
    # back to v1 and to v2 again: other.py's result at v2 now comes from the cache too, and the
    # moved join compares it whole (a part of it differs from every result: no join was moved)
    crawl(cli, repo, config, tmp_path / "out", "v1")
    joined = calls_of(monkeypatch, meaning_join, "callers_by_id")
    assert files_of(crawl(cli, repo, config, tmp_path / "out", "v2")) == after
    assert joined == []


@pytest.mark.slow
def test_a_join_made_again_reads_the_rest_of_every_cached_result(widgets, cli, tmp_path, monkeypatch):
    repo, config = widgets
    _reworded(repo)
    crawl(cli, repo, config, tmp_path / "out", "v1")
    made = calls_of(monkeypatch, runner, "completed")
    after = files_of(crawl(cli, repo, config, tmp_path / "out", "v3"))
    # every cached result (pool.py and other.py are extracted anew), the test file's too
    assert sorted(r["path"] for r in made) == ["pkg/__init__.py", "pkg/config.py", "tests/test_pool.py"]
    assert after == without_cache(cli, repo, config, tmp_path / "fresh", "v3")


@pytest.mark.slow
def test_a_damaged_rest_makes_the_crawl_extract_again(widgets, cli, tmp_path, cache_dir):
    repo, config = widgets
    _reworded(repo)
    crawl(cli, repo, config, tmp_path / "out", "v1")
    with sqlite3.connect(cache_dir / "results.sqlite3") as db:
        for key, value in db.execute("SELECT key, value FROM results").fetchall():
            parted = decode_part(value, key.rsplit(":", 1)[-1])
            if parted is not None and parted[1] is not None:
                db.execute("UPDATE results SET value = ? WHERE key = ?", (value[: len(value) - len(parted[1])] + b"\x78broken", key))
    result = cli("crawl", "--repo", repo.path, "--ref", "v3", "--config", config, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "could not be used" in result.output and "is damaged" in result.output
    assert files_of(tmp_path / "out" / "acme" / "widgets") == without_cache(cli, repo, config, tmp_path / "fresh", "v3")


@pytest.mark.slow
def test_curate_check_validates_only_the_lines_errcat_did_not_write(widgets, cli, tmp_path, monkeypatch):
    repo, config = widgets
    dataset = crawl(cli, repo, config, tmp_path / "out", "v1")
    checked = calls_of(monkeypatch, dataset_module, "check")
    first = cli("curate", "check", tmp_path / "out")
    assert first.exit_code == 0, first.output
    assert checked == []  # every line is one the crawl wrote (and remembered)
    lines = jsonl_bytes(dataset).splitlines()
    edited = json.loads(lines[0])
    edited["title"] = edited["title"] + " (edited)"  # still a valid record: checked, and taken
    write_jsonl(dataset, b"\n".join([json.dumps(edited).encode(), *lines[1:]]) + b"\n")
    again = cli("curate", "check", tmp_path / "out")
    assert again.exit_code == 0, again.output
    assert checked == ["record"]
    edited["kind"] = "not a kind"  # hostile: refused in one line, as before
    write_jsonl(dataset, b"\n".join([json.dumps(edited).encode(), *lines[1:]]) + b"\n")
    refused = cli("curate", "check", tmp_path / "out")
    assert refused.exit_code != 0
    assert "not a valid record" in refused.output and "Traceback" not in refused.output


@pytest.mark.slow
def test_the_join_across_modules_made_again_reads_the_rest_of_the_cached_results(fixture_repo, cli, tmp_path):
    """The join across modules finds an imported function by the call graph's facts: with the
    caller's and the callee's results from the cache and the join made (another file's message
    reworded, not moved), their rest is read, and the messages are those of a crawl without it."""
    from tests.catalogue.test_imported import FILES
    from tests.extract.test_assembled import TOML

    config = tmp_path / "errcat.toml"
    config.write_text(TOML)
    extra = 'def extra(x):\n    raise ValueError("an extra failure")\n'
    fixture_repo.commit({**FILES, "srv/extra.py": extra}, tag="v1")
    fixture_repo.commit({"srv/extra.py": extra.replace("extra failure", "extra problem")}, tag="v2")
    for ref in ("v1", "v2"):
        assert cli("crawl", "--repo", fixture_repo.path, "--ref", ref, "--config", config, "--out", tmp_path / "out").exit_code == 0
    for ref in ("v1", "v2"):
        assert cli("crawl", "--repo", fixture_repo.path, "--ref", ref, "--config", config, "--out", tmp_path / "fresh", "--no-cache").exit_code == 0
    after, fresh = (files_of(tmp_path / out / "acme" / "server") for out in ("out", "fresh"))
    assert b"DCP not supported" in after["errors.jsonl.gz"]  # (an imported function's piece, joined)
    assert after == fresh
