"""The result cache is an optimisation: no damage to it, and no refusal to write it, fails a crawl.

Each test plants one kind of damage in a real cache directory, crawls through the real CLI, and
holds the crawl to one line about the cache and a dataset byte-identical to a ``--no-cache``
crawl of the same commit.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.extract.cache import decode_result, encode_result

ROOT = Path(__file__).resolve().parents[2]
CODE = """
class WidgetError(ValueError):
    def __init__(self, name):
        super().__init__(f"no widget named {name!r}")


def find(name, widgets):
    if name not in widgets:
        raise WidgetError(name)
    if len(name) > 40:
        raise ValueError(f"name too long: {len(name)} characters")
    return widgets[name]
"""


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit(
        {"pkg/__init__.py": "", "pkg/widgets.py": CODE, **{f"pkg/m{i}.py": f"def f(x):\n    raise KeyError(f'm{i}: {{x}}')\n" for i in range(10)}}, tag="v1"
    )
    return fixture_repo


def crawl_args(repo, out, *extra):
    return ["crawl", "--repo", str(repo.path), "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", str(out), *extra]


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def cache_lines(stderr: str) -> list[str]:
    """What a crawl said about its result cache (and no traceback)."""
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if any(words in line for words in ("the result cache", "from the cache", "cached result(s)"))]


@pytest.fixture
def no_cache_output(upstream, cli, tmp_path) -> dict[str, bytes]:
    assert cli(*crawl_args(upstream, tmp_path / "fresh", "--no-cache")).exit_code == 0
    return tree(tmp_path / "fresh")


def warm(cli, upstream, tmp_path, cache_dir) -> Path:
    assert cli(*crawl_args(upstream, tmp_path / "first")).exit_code == 0
    db = cache_dir / "results.sqlite3"
    assert db.is_file() and not (cache_dir / "results.sqlite3-wal").exists()
    return db


def garble_header(db: Path) -> None:
    with open(db, "r+b") as fh:
        fh.write(b"this is not what sqlite wrote" * 4)


def truncate(db: Path) -> None:
    os.truncate(db, db.stat().st_size // 2 + 100)


def garble_pages(db: Path) -> None:
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = bytes(range(256)) * ((len(data) - page) // 256) + b"\xff" * ((len(data) - page) % 256)
    db.write_bytes(bytes(data))


def foreign_table(db: Path) -> None:
    db.unlink()
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE results (key TEXT PRIMARY KEY, data BLOB)")  # not errcat's table
        con.execute("INSERT INTO results VALUES ('k', x'00')")


@pytest.mark.slow
@pytest.mark.parametrize("damage", [garble_header, truncate, garble_pages, foreign_table])
def test_a_damaged_cache_file_is_moved_aside(upstream, cli, cache_dir, tmp_path, no_cache_output, damage):
    db = warm(cli, upstream, tmp_path, cache_dir)
    damage(db)
    result = cli(*crawl_args(upstream, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    said = cache_lines(result.stderr)
    assert len(said) == 1 and "is damaged" in said[0] and "moved aside to results.sqlite3.damaged" in said[0], result.stderr
    assert tree(tmp_path / "out") == no_cache_output
    assert (cache_dir / "results.sqlite3.damaged").is_file()
    # the new cache holds this crawl's results: the next crawl takes every file from it
    again = cli(*crawl_args(upstream, tmp_path / "again"))
    assert "extracting (12 cached): 0 files" in again.stderr and not cache_lines(again.stderr)
    assert tree(tmp_path / "again") == no_cache_output


def _rewrite_rows(db: Path, edit) -> int:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT key, value FROM results").fetchall()
        changed = 0
        for key, value in rows:
            if key.endswith(":pkg/widgets.py"):  # (a row is in two parts: ``cache.encode_result``)
                result = decode_result(value, "pkg/widgets.py")
                edit(result)
                con.execute("UPDATE results SET value = ? WHERE key = ?", (encode_result(result), key))
                changed += 1
    return changed


ROW_EDITS = {
    "no sites": lambda r: r.pop("sites"),
    "no bare_asserts (a count read with a default)": lambda r: r.pop("bare_asserts"),
    "sites not a list": lambda r: r.update(sites={"a": 1}),
    "a site without its template": lambda r: r["sites"][-1].pop("template"),
    "a site whose line is text": lambda r: r["sites"][-1].update(line="seven"),
    "a call naming a site that is not there": lambda r: r["calls"][0].update(site=99),
    "a class without bases": lambda r: r["classes"][0].pop("bases"),
}


@pytest.mark.slow
@pytest.mark.parametrize("edit", list(ROW_EDITS))
def test_a_row_that_decodes_but_is_not_a_result(upstream, cli, cache_dir, tmp_path, no_cache_output, edit):
    db = warm(cli, upstream, tmp_path, cache_dir)
    assert _rewrite_rows(db, ROW_EDITS[edit]) == 1
    result = cli(*crawl_args(upstream, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    said = cache_lines(result.stderr)
    assert len(said) == 1 and ("damaged" in said[0] or "could not be used" in said[0]), result.stderr
    assert tree(tmp_path / "out") == no_cache_output
    # the row is whole again
    again = cli(*crawl_args(upstream, tmp_path / "again"))
    assert "extracting (12 cached): 0 files" in again.stderr and not cache_lines(again.stderr)


def run_crawl(upstream, out: Path, cache: Path, *, prefix: list[str] = (), preexec=None):
    env = dict(os.environ, ERRCAT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [*prefix, sys.executable, "-m", "crawler", *crawl_args(upstream, out)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=preexec,
    )


@pytest.mark.slow
def test_a_full_disk_while_saving_results(fixture_repo, tmp_path):
    """The cache cannot grow (RLIMIT_FSIZE: writes past the size fail as on a full disk) while
    the dataset, much smaller, can: the crawl says so once and writes what --no-cache writes."""
    classes = "".join(f"class C{i * 7919 % 100003:05x}Q{i}(Exception):\n    pass\n" for i in range(20000))
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/widgets.py": CODE, "pkg/many.py": classes}, tag="v1")
    cache = tmp_path / "cache"
    limit = 64 * 1024

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    full = run_crawl(fixture_repo, tmp_path / "out", cache, preexec=small_files)
    assert full.returncode == 0, full.stderr
    said = cache_lines(full.stderr)
    assert len(said) == 1 and "failed saving results" in said[0] and "going on without it" in said[0], full.stderr
    fresh = run_crawl(fixture_repo, tmp_path / "fresh", tmp_path / "other-cache")
    assert fresh.returncode == 0 and tree(tmp_path / "out") == tree(tmp_path / "fresh")
    again = run_crawl(fixture_repo, tmp_path / "again", cache)  # the cache was left sound
    assert again.returncode == 0 and not cache_lines(again.stderr) and tree(tmp_path / "again") == tree(tmp_path / "fresh")


def _read_only(directory: Path) -> list[str]:
    """A command prefix under which ``directory`` is read-only, also for root (who ignores file
    modes): a private mount namespace with a read-only bind mount. Skips where there is none."""
    if os.geteuid() != 0:
        return []
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"', str(directory)], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private read-only mount here: {probe.stderr.decode(errors='replace').strip()}")
    return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"', str(directory)]


@pytest.mark.slow
def test_a_read_only_cache_directory(upstream, cli, cache_dir, tmp_path, no_cache_output):
    warm(cli, upstream, tmp_path, cache_dir)
    prefix = _read_only(cache_dir)
    modes = {p: p.stat().st_mode for p in [cache_dir, *cache_dir.rglob("*")]}
    if not prefix:
        for p in modes:
            p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        result = run_crawl(upstream, tmp_path / "out", cache_dir, prefix=prefix)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert result.returncode == 0, result.stderr
    said = cache_lines(result.stderr)
    assert len(said) == 1 and "going on without it" in said[0], result.stderr
    assert tree(tmp_path / "out") == no_cache_output
    assert not (cache_dir / "results.sqlite3.damaged").exists()  # not damage: nothing is set aside


def test_pruning_keeps_every_row_of_this_version_test_files_and_header_macros_too(tmp_path):
    from crawler.extract.cache import ResultCache, result_key
    from crawler.extract.runner import _macros_row, cache_version

    version = cache_version()
    kept = [result_key("b1", "pkg/a.py", version), result_key("b2", "tests/test_a.py", f"test.{version}"), _macros_row([("csrc/a.h", "b3")])]
    gone = [result_key("b1", "pkg/a.py", "2.0123456789abcdef"), result_key("b2", "tests/test_a.py", "test.2.0123456789abcdef")]
    with ResultCache(tmp_path) as cache:
        cache.put_encoded((key, b"x") for key in kept + gone)
        assert cache.prune(version) == len(gone)
        assert sorted(cache.get_raw(kept + gone)) == sorted(kept)
