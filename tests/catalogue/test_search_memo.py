"""search.json's rows kept in the cache from the last crawl: a crawl makes only the rows whose
record changed, writes the bytes a --no-cache crawl writes, and a damaged memo is a miss."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import crawler.catalogue.search as search


@pytest.fixture
def rows_made(monkeypatch):
    made: list[str] = []
    real = search.entry_row

    def counted(record, primary=None):
        made.append(record["message"]["text"])
        return real(record, primary)

    monkeypatch.setattr(search, "entry_row", counted)
    return made


def crawl(cli, repo, config, out: Path, ref: str = "v1", *extra: str) -> bytes:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--config", config, "--upstream", "acme", "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return (out / "acme" / "widgets" / "search.json").read_bytes()


@pytest.mark.slow
def test_a_crawl_makes_only_the_rows_of_changed_records(parsing_meaning_repo, cli, tmp_path, rows_made):
    repo, config = parsing_meaning_repo
    first = crawl(cli, repo, config, tmp_path / "a")
    total = len(rows_made)
    assert total == len(json.loads(first)["entries"]) > 3
    rows_made.clear()
    assert crawl(cli, repo, config, tmp_path / "b") == first
    assert rows_made == []
    text = (repo.path / "pkg/unrelated.py").read_text()
    repo.commit({"pkg/unrelated.py": text.replace("no test reproduces", "no test ever reproduces")}, tag="v2")
    rows_made.clear()
    changed = crawl(cli, repo, config, tmp_path / "c", "v2")
    assert rows_made == ["lonely failure that no test ever reproduces"]
    rows_made.clear()
    assert changed == crawl(cli, repo, config, tmp_path / "d", "v2", "--no-cache")
    assert len(rows_made) == total


@pytest.mark.slow
@pytest.mark.parametrize("damage", [b"not json", b"[]", "salt", "ids"])
def test_a_damaged_memo_is_a_miss(parsing_meaning_repo, cli, tmp_path, cache_dir, rows_made, damage):
    repo, config = parsing_meaning_repo
    first = crawl(cli, repo, config, tmp_path / "a")
    [memo] = (cache_dir / "search").glob("*.json")
    kept = json.loads(memo.read_bytes())
    if damage == "salt":
        kept["salt"] = "another errcat"
    elif damage == "ids":  # every row under another row's key
        rows = list(kept["rows"].values())
        kept["rows"] = dict(zip(kept["rows"], rows[1:] + rows[:1], strict=True))
    memo.write_bytes(damage if isinstance(damage, bytes) else json.dumps(kept).encode())
    shutil.rmtree(cache_dir / "rows")  # (the rows' bytes, ``publish.row_bytes``, would serve every row)
    rows_made.clear()
    assert crawl(cli, repo, config, tmp_path / "b") == first
    assert len(rows_made) == len(json.loads(first)["entries"])


@pytest.mark.slow
def test_a_memo_a_read_only_mount_refuses_is_no_error(tmp_path):
    """On a read-only mount even removing a file that is not there fails (EROFS): the memo's
    clean-up after a refused write must not fail the crawl (it did, now and then, in
    tests/extract/test_cache.py::test_a_read_only_cache_directory, when the rows changed)."""
    import subprocess
    import sys

    from tests.extract.test_cache import _read_only

    directory = tmp_path / "cache"
    (directory / "search").mkdir(parents=True)  # (the kernel refuses the removal only once it has the parent)
    prefix = _read_only(directory)
    if not prefix:
        pytest.skip("a read-only mount needs root (file modes alone let a missing file's removal say ENOENT)")
    code = (
        "import sys; from pathlib import Path; from crawler.catalogue.search import RowMemo; "
        "memo = RowMemo(Path(sys.argv[1]) / 'search' / 'rows.json', 'salt'); memo.used['x'] = [1]; memo.save(); print('kept')"
    )
    proc = subprocess.run([*prefix, sys.executable, "-c", code, str(directory)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "kept" and not any((directory / "search").iterdir())
