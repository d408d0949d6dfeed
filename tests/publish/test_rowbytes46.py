"""The index.json and search.json rows of the records whose row key the last dataset written holds
are written as their bytes (``publish.row_bytes``): a one-file crawl makes, validates and
serializes only the rows of the records that changed, and writes the bytes of a crawl without
the cache; a curated file changes its record's rows; a memo damaged on disk, of another stamp or
holding another entry's rows is not taken."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from crawler.catalogue import search
from crawler.publish import row_bytes, writer
from tests.curate.test_curate import CONNECTORS, MESSAGE_A, write_curated
from tests.publish.test_line_memo import crawl, files, history, without_cache

__all__ = ["history"]  # (a fixture: v1, then two commits that each move other.py's two records)


@pytest.fixture
def made(monkeypatch):
    """The ids of the index.json rows and of the search.json rows made (not taken as bytes): a
    search row made anew or taken from the search rows' memo (``search.RowMemo``)."""
    found: dict[str, list[str]] = {"index": [], "search": []}
    index_row, memo_row, entry_row = writer.index_row, search.RowMemo.row, search.entry_row

    def counted_index(record):
        found["index"].append(record["id"])
        return index_row(record)

    def counted_memo(self, record, primary=None):
        found["search"].append(record["id"])
        return memo_row(self, record, primary)

    def counted_entry(record, primary=None):
        if record["id"] not in found["search"]:  # (not one the memo asked for)
            found["search"].append(record["id"])
        return entry_row(record, primary)

    monkeypatch.setattr(writer, "index_row", counted_index)
    monkeypatch.setattr(search.RowMemo, "row", counted_memo)
    monkeypatch.setattr(search, "entry_row", counted_entry)
    return found


def memo_file(cache_dir: Path) -> Path:
    [path] = (cache_dir / "rows").iterdir()
    return path


def moved(dataset: Path) -> set[str]:
    return {p.stem for p in (dataset / "errors").iterdir() if b'"path":"pkg/other.py"' in p.read_bytes()}


@pytest.mark.slow
def test_the_rows_of_records_unchanged_are_written_as_their_bytes(history, cli, tmp_path, cache_dir, made):
    out = tmp_path / "out"
    crawl(cli, history, out, "v1")
    crawl(cli, history, out, "v2")
    made["index"].clear(), made["search"].clear()
    dataset = crawl(cli, history, out, "v3")
    # run.py's three records: their rows as the memo holds them; other.py's two moved: made
    # (the old code made all five rows of each document)
    assert sorted(made["index"]) == sorted(made["search"]) == sorted(moved(dataset))
    fresh = tmp_path / "fresh"
    assert files(dataset) == without_cache(cli, history, fresh)
    # back and forth: the bytes of crawls without the cache over the same commits, each way
    for ref in ("v2", "v3"):
        made["index"].clear(), made["search"].clear()
        dataset = crawl(cli, history, out, ref)
        assert made["index"] == made["search"] == []  # (the memo holds the rows of both commits)
        assert files(dataset) == files(crawl(cli, history, fresh, ref, "--no-cache"))


@pytest.mark.slow
def test_a_curated_file_makes_its_records_rows_again(fixture_repo, cli, tmp_path, cache_dir, made):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/connector.py": CONNECTORS}, tag="v1")
    out, curated = tmp_path / "out", tmp_path / "curated"
    curated.mkdir()
    args = ("--curated", curated)
    dataset = crawl(cli, fixture_repo, out, "v1", *args)
    rows = orjson.loads((dataset / "index.json").read_bytes())["entries"]
    eid = next(r["id"] for r in rows if r["template"] == MESSAGE_A)
    write_curated(curated, eid, commit=fixture_repo.repo.commit("v1").hexsha)
    made["index"].clear(), made["search"].clear()
    dataset = crawl(cli, fixture_repo, out, "v1", *args)
    assert made["index"] == made["search"] == [eid]  # (the others' rows as their bytes)
    [row] = [r for r in orjson.loads((dataset / "index.json").read_bytes())["entries"] if r["id"] == eid]
    assert row["explanation_status"] != "absent"
    assert files(dataset) == files(crawl(cli, fixture_repo, tmp_path / "fresh", "v1", *args, "--no-cache"))


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["a byte flipped", "another stamp", "cut short", "empty", "rows swapped, checksum made again"])
def test_a_memo_damaged_on_disk_is_not_taken(history, cli, tmp_path, cache_dir, made, damage):
    out = tmp_path / "out"
    for ref in ("v1", "v2"):
        crawl(cli, history, out, ref)
    data = damaged(memo_file(cache_dir).read_bytes(), damage)
    memo_file(cache_dir).write_bytes(data)
    made["index"].clear(), made["search"].clear()
    dataset = crawl(cli, history, out, "v3")
    assert len(made["index"]) == len(made["search"]) == 5  # every row made as without the memo
    assert files(dataset) == without_cache(cli, history, tmp_path / "fresh")
    assert memo_file(cache_dir).read_bytes() != data  # (written whole again)


def damaged(data: bytes, damage: str) -> bytes:
    head = len(row_bytes.MAGIC) + row_bytes._HEAD.size
    if damage == "a byte flipped":  # (in the last row's bytes: the checksum no longer holds)
        data = data[:-40] + bytes([data[-40] ^ 1]) + data[-39:]
    elif damage == "another stamp":
        data = data[: len(row_bytes.MAGIC)] + b"\0" * 32 + data[len(row_bytes.MAGIC) + 32 :]
    elif damage == "cut short":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = b""
    else:  # each row's id now the next row's, its checksum made whole again: a row holds another entry's id
        size = row_bytes._ROW.size
        count = int.from_bytes(data[head - 16 : head - 8], "little")
        table = [data[head + n * size : head + (n + 1) * size] for n in range(count)]
        table = [r[:32] + table[(n + 1) % count][32:48] + r[48:] for n, r in enumerate(table)]
        body = data[:head] + b"".join(table) + data[head + count * size : -32]
        data = body + hashlib.sha256(body).digest()
    return data


@pytest.mark.slow
def test_a_crawl_that_made_every_row_reads_them_back_only_as_written(history, cli, tmp_path, cache_dir):
    """The first crawl (no memo) writes its rows without capturing them, and the memo takes them
    from index.json and search.json read back: only when each is the bytes the writer wrote."""
    from crawler.base.dataset_files import INDEX, SEARCH

    dataset = crawl(cli, history, tmp_path / "out", "v1")
    assert memo_file(cache_dir).is_file()
    records = [{"id": r["id"]} for r in orjson.loads((dataset / INDEX).read_bytes())["entries"]]
    document = orjson.loads((dataset / SEARCH).read_bytes())
    keys = {r["id"]: hashlib.sha256(r["id"].encode()).digest() for r in records}
    written = {name: hashlib.sha256((dataset / name).read_bytes()).digest() for name in (INDEX, SEARCH)}
    held = row_bytes.from_files(dataset, written, records, keys, document)
    assert held is not None and sorted(row.id for row in held.values()) == sorted(keys)
    assert all(orjson.loads(row.index_row)["id"] == row.id == orjson.loads(row.search_row)["id"] for row in held.values())
    assert row_bytes.from_files(dataset, {**written, SEARCH: b"\0" * 32}, records, keys, document) is None  # (not the bytes written)
    assert row_bytes.from_files(dataset, written, records[1:], keys, document) is None  # (not these records' rows)
