"""The match store of a crawl whose code only moved down a file is the previous store with its
entry rows written again: the same bytes of every table as a store built anew, and the previous
store, whose dataset was replaced, goes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import crawler.consume.match_store as match_store
from crawler.catalogue.search import Shaped
from tests.helpers import MEANING_CONFIG, MEANING_TREE


@pytest.fixture
def loads(monkeypatch):
    """How many stores were built from a whole Matcher."""
    made: list[Path] = []
    real = match_store.Matcher.load

    def counted(dataset):
        made.append(dataset)
        return real(dataset)

    monkeypatch.setattr(match_store.Matcher, "load", counted)
    return made


def tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as con:
        return sorted(line for line in con.iterdump() if "'shape'" not in line)


def crawl(cli, repo, config, out: Path, ref: str) -> Path:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--config", config, "--upstream", "acme", "--out", out)
    assert result.exit_code == 0, result.output
    return out / "acme" / "widgets"


def crawled_then_moved(cli, repo, tmp_path: Path) -> tuple[Path, Path]:
    """The dataset of a crawl of tag v1, and the config; tag v2 moves pkg/config.py's code down a line."""
    repo.commit({k: v for k, v in MEANING_TREE.items() if k != "tests/test_broken.py"}, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    dataset = crawl(cli, repo, config, tmp_path / "out", "v1")
    repo.commit({"pkg/config.py": "# moved down\n" + (repo.path / "pkg/config.py").read_text()}, tag="v2")
    return dataset, config


@pytest.mark.slow
def test_moved_code_moves_the_store(fixture_repo, cli, tmp_path, cache_dir, loads):
    tree = {k: v for k, v in MEANING_TREE.items() if k != "tests/test_broken.py"}
    fixture_repo.commit(tree, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    dataset = crawl(cli, fixture_repo, config, tmp_path / "out", "v1")
    first = match_store.store_path(dataset, cache_dir)
    assert first.is_file() and len(loads) == 1
    before = tables(first)
    text = (fixture_repo.path / "pkg/config.py").read_text()
    fixture_repo.commit({"pkg/config.py": "# moved down\n" + text}, tag="v2")
    crawl(cli, fixture_repo, config, tmp_path / "out", "v2")
    moved = match_store.store_path(dataset, cache_dir)
    assert len(loads) == 1  # no Matcher: the previous store, its rows written again
    assert moved.is_file() and not first.exists()
    anew = tmp_path / "anew.sqlite"
    match_store.build(dataset, anew)
    assert len(loads) == 2
    assert tables(moved) == tables(anew)
    assert tables(moved) != before  # the lines of pkg/config.py's sites moved

    fixture_repo.commit({"pkg/config.py": text.replace("size must be at least 0", "size must not be negative")}, tag="v3")
    crawl(cli, fixture_repo, config, tmp_path / "out", "v3")
    assert len(loads) == 3  # a message changed: built anew
    assert match_store.store_path(dataset, cache_dir).is_file() and not moved.exists()


@pytest.mark.slow
def test_moved_code_reads_no_search_index_and_a_forged_line_is_validated(fixture_repo, cli, tmp_path, cache_dir, loads, monkeypatch):
    """The previous store's rows were validated when it was built: a store of the same shape takes
    them with only the sites' lines new, without validating the whole index again; a line that is
    not one the index admits sends the build through the validating reader, which refuses it."""
    import orjson

    from crawler.base.errors import DataError
    from crawler.publish import dataset as reader

    dataset, config = crawled_then_moved(cli, fixture_repo, tmp_path)
    validated: list[Path] = []
    real = reader.load_search_index

    def counted(where, *a, **k):
        validated.append(where)
        return real(where, *a, **k)

    monkeypatch.setattr(reader, "load_search_index", counted)
    crawl(cli, fixture_repo, config, tmp_path / "out", "v2")
    assert validated == [] and len(loads) == 1

    index = dataset / "search.json"
    for forged in (0, -3, "7", 2.0):
        document = orjson.loads(index.read_bytes())
        document["entries"][0]["sites"][0]["line"] = forged
        index.write_bytes(orjson.dumps(document))
        with pytest.raises(DataError):
            match_store.build(dataset, tmp_path / "forged.sqlite")
        assert not (tmp_path / "forged.sqlite").exists()


@pytest.mark.slow
def test_the_crawl_hands_over_the_search_index_it_wrote(fixture_repo, cli, tmp_path, cache_dir, loads, monkeypatch):
    """The crawl gives the store search.json as it wrote it (the document and the SHA-256 of its
    bytes), so the store's shape is read without parsing the file again: the same shape as read
    from the file, and the moved store is the same. A document whose digest is not the file's
    (the file replaced since) is not taken: the file is read."""
    import hashlib

    dataset, config = crawled_then_moved(cli, fixture_repo, tmp_path)
    handed: list[object] = []
    real = match_store.build

    def spied(where, path, written=None):
        handed.append(written)
        return real(where, path, written)

    monkeypatch.setattr(match_store, "build", spied)
    crawl(cli, fixture_repo, config, tmp_path / "out", "v2")
    [written] = handed
    assert written is not None and written[0] == hashlib.sha256((dataset / "search.json").read_bytes()).digest()
    assert match_store._shape(dataset, written) == match_store._shape(dataset) is not None
    assert len(loads) == 1  # and it was the moved store
    anew = tmp_path / "anew.sqlite"
    real(dataset, anew)
    assert tables(match_store.store_path(dataset, cache_dir)) == tables(anew)

    # (what the crawl hands over is what the shape reads of the rows it wrote, ``search.Shaped``:
    # its memo of rows' bytes, ``publish.row_bytes``, keeps each row's piece of it)
    assert isinstance(written[1], Shaped)
    other = Shaped(written[1].rest, written[1].pieces[1:])
    assert match_store._shape(dataset, (written[0], other)) != match_store._shape(dataset)  # the bytes vouch for it
    assert match_store._shape(dataset, (b"\0" * 32, other)) == match_store._shape(dataset)  # not those bytes: read
