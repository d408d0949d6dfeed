"""A history's sync holds none of the retired records' rows (#31 item 1, s45-histsync): the memo of
what the last render wrote of each retired record (``versions.carried``) is read as its rows'
fixed parts alone (the record file's digest and size, the line's size); a row's facts, index row
and search row stay in the memo's file and are read from it when the sync asks for them, through
the file as it was opened. The dataset is, byte for byte, the one a sync without any memo renders;
a memo replaced meanwhile changes nothing (the file opened is read), one cut short in place
meanwhile stops the sync in one line, and one whose rows do not add up to its size is not taken."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from crawler.model.records import Manifest, RepoRef
from crawler.versions import carried, history
from tests.versions.test_history import tree
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired, synced  # noqa: F401 (the fixtures)
from tests.versions.test_sync_carry import rendering_every_record, retired_ids, sync_out

REPO = RepoRef(url="https://github.com/acme/widgets", owner="acme", name="widgets")


def _rows(n: int = 3) -> dict[bytes, carried.Carried]:
    return {
        bytes([k]) * 32: carried.Carried(bytes([k + 1]) * 32, 100 + k, 50 + k, b'{"id":"%d"}' % k + b" " * 600, b'{"s":%d}' % k + b" " * 900, b'{"f":%d}' % k)
        for k in range(n)
    }


def _repo(dataset: Path) -> RepoRef:
    return Manifest.model_validate_json((dataset / "manifest.json").read_bytes()).repo


def test_the_memo_holds_its_rows_fixed_parts_and_reads_the_rest_when_asked(tmp_path):
    rows = _rows()
    carried.remember(tmp_path, REPO, rows, {})
    memo = carried.load(tmp_path, REPO)
    held = [value for fixed in memo._rows.values() for value in fixed]
    assert not any(isinstance(v, bytes) and len(v) > 32 for v in held)  # no row's bytes: digests and numbers
    for digest, row in rows.items():
        assert memo.file_of(digest) == (row.file_digest, row.file_size) and memo.line_size(digest) == row.line_size
        assert (memo.facts(digest), memo.index_row(digest), memo.search_row(digest)) == (row.facts, row.index_row, row.search_row)
    assert memo == rows and dict(memo.items()) == rows  # got whole, a row is the row kept
    assert memo.file_of(b"\1" * 31) is None and memo.facts(b"\1" * 31) == b""


def test_a_row_carried_through_is_kept_again_from_the_memo_file(tmp_path):
    rows = _rows()
    carried.remember(tmp_path, REPO, rows, {})
    memo = carried.load(tmp_path, REPO)
    more = _rows(4)
    written = {d: (None if d in rows else row) for d, row in more.items()}  # as a render gives them: None, the memo's
    carried.remember(tmp_path, REPO, written, memo)
    assert carried.load(tmp_path, REPO) == more


def test_a_memo_replaced_meanwhile_is_read_as_it_was_opened_and_one_cut_short_in_place_stops(tmp_path):
    rows = _rows()
    carried.remember(tmp_path, REPO, rows, {})
    memo = carried.load(tmp_path, REPO)
    carried.remember(tmp_path, REPO, {d: r._replace(index_row=b'{"planted":1}') for d, r in _rows(2).items()}, {})  # replaced: another file
    assert all(memo.index_row(d) == r.index_row for d, r in rows.items())
    memo = carried.load(tmp_path, REPO)
    path = carried._path(tmp_path, REPO)
    with open(path, "r+b") as fh:  # cut short where it is, the same file
        fh.truncate(os.path.getsize(path) - 40)
    last = max(memo)  # (the replaced memo's rows: its last row's facts end the file)
    with pytest.raises(carried.DataError, match="changed during the sync; run it again"):
        memo.facts(last)


@pytest.mark.parametrize("tail", [b"x", b""], ids=["bytes-after-its-rows", "its-last-byte-gone"])
def test_a_memo_whose_rows_do_not_add_up_to_its_size_is_not_taken(tmp_path, tail):
    carried.remember(tmp_path, REPO, _rows(), {})
    path = carried._path(tmp_path, REPO)
    data = path.read_bytes()
    path.write_bytes(data + tail if tail else data[:-1])
    assert carried.load(tmp_path, REPO) == {} and not carried.load(tmp_path, REPO)


def _row_reads(monkeypatch) -> list[str]:
    """What the sync asks the memo for, by kind ("whole": a row got with all its bytes)."""
    asked: list[str] = []
    for name in ("facts", "index_row", "search_row", "__getitem__"):
        real = getattr(carried.Memo, name)
        monkeypatch.setattr(carried.Memo, name, lambda self, d, _real=real, _name=name: asked.append(_name) or _real(self, d))
    return asked


@pytest.mark.slow
def test_a_history_sync_reads_each_carried_row_once_and_writes_a_full_render(upstream, cli, tmp_path, monkeypatch, retired, cache_dir):  # noqa: F811
    out, _, _ = retired
    dataset = out / "acme" / "widgets"
    gone = retired_ids(dataset)
    assert gone and carried.load(cache_dir, _repo(dataset))
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")  # an error added elsewhere: the dataset is written
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    memo_before = carried._path(cache_dir, _repo(dataset)).read_bytes()
    asked = _row_reads(monkeypatch)
    assert f"{len(gone)} retired entries carried through" in sync_out(cli, upstream, out, "v2.1")
    assert "__getitem__" not in asked  # no row read whole: each part where it is used
    assert asked.count("index_row") == asked.count("search_row") == len(gone) and asked.count("facts") >= len(gone)
    assert carried._path(cache_dir, _repo(dataset)).read_bytes() == memo_before  # the same retired lines: kept as it was

    rendering_every_record(monkeypatch)  # (the counting wrappers call the real reads)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_a_memo_cut_short_during_the_sync_stops_it_in_one_line(upstream, cli, tmp_path, monkeypatch, retired, cache_dir):  # noqa: F811
    out, _, _ = retired
    dataset = out / "acme" / "widgets"
    path = carried._path(cache_dir, _repo(dataset))
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    real = history._carried

    def cut_then(*args, **kwargs):
        found = real(*args, **kwargs)
        with open(path, "r+b") as fh:  # as the render begins: the rows' bytes gone from the file opened
            fh.truncate(len(carried.MAGIC) + carried._HEAD.size)
        return found

    monkeypatch.setattr(history, "_carried", cut_then)
    before = tree(out)
    result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", out)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "the memo of retired records changed during the sync; run it again" in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("errcat: ")  # said in one line, the last
    assert tree(out) == before
    monkeypatch.setattr(history, "_carried", real)  # (not undo: that would take the test's cache and home away too)
    assert "carried through" not in sync_out(cli, upstream, out, "v2.1")  # the memo cut short: not taken, every record rendered
    assert cli("validate", out).exit_code == 0
