"""The line memo (``publish.line_memo``): a crawl that keeps a record finds it unchanged by the
digest of its line kept by what the record is made of, unserialized; the dataset is byte for byte
the one a crawl without the cache writes over the same history, and a memo edited or damaged on
disk is not taken."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import crawler.publish.pins as pins
from crawler.publish import line_memo, record_memo

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
def history(fixture_repo):
    """v1, then two daily commits that each put a comment line first in pkg/other.py (its two
    records move, run.py's three are kept)."""
    fixture_repo.commit(TREE, tag="v1")
    fixture_repo.commit({"pkg/other.py": "\n        # other things" + TREE["pkg/other.py"]}, tag="v2")
    fixture_repo.commit({"pkg/other.py": "\n        # other things\n        # and more" + TREE["pkg/other.py"]}, tag="v3")
    return fixture_repo


@pytest.fixture
def serialized(monkeypatch):
    """The (id, pin) of each record ``pins`` serialized to compare it with its previous file."""
    found: list[str] = []
    real = pins.dumps_line

    def counted(record):
        found.append((record["id"], record["provenance"]["commit"]))
        return real(record)

    monkeypatch.setattr(pins, "dumps_line", counted)
    return found


def crawl(cli, repo, out: Path, ref: str, *extra: str) -> Path:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return out / "acme" / "widgets"


def files(dataset: Path) -> dict[str, bytes]:
    return {p.relative_to(dataset).as_posix(): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file()}


def without_cache(cli, repo, out: Path) -> dict[str, bytes]:
    """v3's dataset crawled with no cache over v1's then v2's, as the crawls with it were."""
    for ref in ("v1", "v2"):
        crawl(cli, repo, out, ref, "--no-cache")
    return files(crawl(cli, repo, out, "v3", "--no-cache"))


def memo_file(cache_dir: Path) -> Path:
    [path] = (cache_dir / "lines").iterdir()
    return path


@pytest.mark.slow
def test_kept_records_are_found_by_their_kept_lines_with_the_bytes_of_a_crawl_without_the_cache(history, cli, tmp_path, cache_dir, serialized):
    out = tmp_path / "out"
    crawl(cli, history, out, "v1")
    crawl(cli, history, out, "v2")  # (every kept record serialized: no memo yet)
    assert len({rid for rid, _ in serialized}) == 5
    # the lines of v2's three kept records, by their content and pin
    data = memo_file(cache_dir).read_bytes()
    head = len(line_memo.MAGIC) + line_memo._HEAD.size
    assert int.from_bytes(data[head - 16 : head - 8], "little") == 3
    serialized.clear()
    dataset = crawl(cli, history, out, "v3")
    # run.py's three records are kept unserialized; other.py's two moved and are made anew
    moved = {p.stem for p in (dataset / "errors").iterdir() if b'"path":"pkg/other.py"' in p.read_bytes()}
    assert len(moved) == 2 and {rid for rid, _ in serialized} == moved
    assert files(dataset) == without_cache(cli, history, tmp_path / "fresh")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["a line digest edited", "the checksum of an edited memo made again", "another stamp", "cut short", "empty"])
def test_a_memo_edited_or_damaged_on_disk_is_not_taken(history, cli, tmp_path, cache_dir, serialized, damage):
    out = tmp_path / "out"
    crawl(cli, history, out, "v1")
    crawl(cli, history, out, "v2")
    path = memo_file(cache_dir)
    data = path.read_bytes()
    head = len(line_memo.MAGIC) + line_memo._HEAD.size
    row = line_memo._ROW.size
    if damage == "a line digest edited":  # (each row's line digest now another row's, the checksum as it was)
        rows = [data[head + n * row : head + (n + 1) * row] for n in range(3)]
        moved = [r[:36] + rows[(n + 1) % 3][36:] for n, r in enumerate(rows)]
        data = data[:head] + b"".join(moved) + data[head + 3 * row :]
    elif damage == "the checksum of an edited memo made again":  # (the first row's line digest)
        body = data[: head + 36] + bytes([data[head + 36] ^ 1]) + data[head + 37 : -32]
        data = body + hashlib.sha256(body).digest()
    elif damage == "another stamp":
        body = data[: len(line_memo.MAGIC)] + b"\0" * 32 + data[len(line_memo.MAGIC) + 32 : -32]
        data = body + hashlib.sha256(body).digest()
    elif damage == "cut short":
        data = data[:-1]
    else:
        data = b""
    path.write_bytes(data)
    serialized.clear()
    dataset = crawl(cli, history, out, "v3")
    # A memo not taken: every record serialized; one row edited, its checksum made again (what
    # the checksum cannot catch): that line is not the file's, so its record is serialized and
    # compared as without the memo.
    assert len({rid for rid, _ in serialized}) == (3 if damage == "the checksum of an edited memo made again" else 5)
    assert files(dataset) == without_cache(cli, history, tmp_path / "fresh")


@pytest.mark.slow
def test_the_kept_files_of_a_recycled_dataset_are_not_read_to_remember_them(history, cli, tmp_path, cache_dir, monkeypatch):
    """A dataset written over the spare (``writer._swap_in``) makes no entry for the files it
    keeps, so its directory's change time says nothing of theirs: a kept file that still has the
    identity it had when the crawl compared it is that file, and is not read again to be
    remembered (``record_memo.remember``); a file written anew is."""
    out = tmp_path / "out"
    for ref in ("v1", "v2"):
        crawl(cli, history, out, ref)
    read: list[str] = []
    holds = record_memo._holds

    def counted(path, st, digest):
        read.append(Path(path).name)
        return holds(path, st, digest)

    monkeypatch.setattr(record_memo, "_holds", counted)
    dataset = crawl(cli, history, out, "v3")
    moved = {f"{p.name}" for p in (dataset / "errors").iterdir() if b'"path":"pkg/other.py"' in p.read_bytes()}
    assert len(moved) == 2
    assert set(read) <= moved | {"errors.jsonl.gz"}
    assert len(record_memo.load(cache_dir, dataset).records) == 5  # (every file remembered all the same)
