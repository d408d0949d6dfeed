"""A sync carries a retired record through without rendering it (``versions.carried``): its file,
line, index.json row and search.json row are the bytes the last render wrote of its line, kept in
the cache by the line's digest. The dataset written is the one a sync that renders every record
writes, byte for byte; a row or a record file edited on disk between syncs is never taken
forward (the rows come from errcat's own memo, a file is carried only when its bytes have the
digest the memo names for its line), nor is a damaged memo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crawler.publish import writer
from crawler.versions import carried, history
from tests.versions.test_history import tree
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired, synced  # noqa: F401 (the fixture)


def rendering_every_record(monkeypatch) -> None:
    """The sync as it was before: no rows to carry a retired record by."""
    monkeypatch.setattr(carried, "load", lambda cache_dir, repo: carried.Memo())


def retired_ids(dataset: Path) -> list[str]:
    index = json.loads((dataset / "index.json").read_text())
    return [row["id"] for row in index["entries"] if row["retired"]]


def sync_out(cli, repo, out: Path, ref: str) -> str:
    result = cli("sync", "--repo", repo.path, *ARGS, "--ref", ref, "--out", out)
    assert result.exit_code == 0, result.output
    return result.output


def with_twin(repo, out: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """An upstream commit that adds an error elsewhere (v2.1: the dataset is written), and a copy
    of ``out`` to sync the other way: (out, its dataset, the copy)."""
    repo.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    twin = out.parent / "twin"
    shutil.copytree(out, twin)
    return out, out / "acme" / "widgets", twin


def edit_row(path: Path, rid: str, old: bytes, new: bytes) -> None:
    """Change one entry's row of a row document on disk (its line: one row a line)."""
    lines = path.read_bytes().split(b"\n")
    n = next(i for i, line in enumerate(lines) if f'"id":"{rid}"'.encode() in line)
    assert old in lines[n]
    lines[n] = lines[n].replace(old, new, 1)
    path.write_bytes(b"\n".join(lines))


@pytest.mark.slow
def test_retired_records_are_carried_through_and_the_dataset_is_a_full_render(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    from tests.versions.test_lineage_links import _links

    _links(retired[2], ("0123456789abcdef", "fedcba9876543210"))  # curated links, none of these records': applied, changing none
    out, dataset, twin = with_twin(upstream, retired[0], tmp_path)
    gone = retired_ids(dataset)
    assert gone
    made: list[str] = []
    real = writer.index_row
    monkeypatch.setattr(writer, "index_row", lambda record: made.append(record["id"]) or real(record))
    said = sync_out(cli, upstream, out, "v2.1")
    assert f"{len(gone)} retired entries carried through" in said
    assert not set(gone) & set(made)  # no row made of a retired record: taken as written
    assert "no such widget file: {p}" in (dataset / "index.json").read_text()

    rendering_every_record(monkeypatch)
    assert "carried through" not in sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_an_unchanged_day_carries_them_and_writes_nothing(upstream, cli, tmp_path, retired):  # noqa: F811
    out, _, _ = retired
    dataset = out / "acme" / "widgets"
    before = tree(dataset)
    upstream.commit({"pkg/v1/notes.txt": "no error here\n"}, tag="v2.1")
    said = sync_out(cli, upstream, out, "v2.1")
    assert "carried through" in said and "stays as it is" in said
    assert tree(dataset) == before


@pytest.mark.slow
@pytest.mark.parametrize("edit_file", [False, True])
def test_rows_and_files_edited_on_disk_are_never_taken_forward(upstream, cli, tmp_path, monkeypatch, retired, edit_file):  # noqa: F811
    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    rid = old["id"]
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    # between syncs, someone edits the retired entry's rows in place (and its record file)
    edit_row(dataset / "index.json", rid, b'"retired":true', b'"retired":false')
    edit_row(dataset / "search.json", rid, b'"id":"', b'"planted":"x","id":"')
    file = dataset / "errors" / f"{rid}.json"
    if edit_file:
        file.write_bytes(file.read_bytes().replace(b'"title": "', b'"title": "planted ', 1))
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    said = sync_out(cli, upstream, out, "v2.1")
    carried_now = len(retired_ids(twin / "acme" / "widgets")) - edit_file  # an edited file is not carried: rendered from its line
    assert (f"{carried_now} retired entries carried through" in said) if carried_now else ("carried through" not in said)

    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)  # the rows and the file as errcat writes them, not as edited
    assert b"planted" not in (dataset / "search.json").read_bytes() + file.read_bytes()
    assert rid in retired_ids(dataset)


@pytest.mark.slow
def test_a_damaged_memo_only_costs_rendering(upstream, cli, tmp_path, monkeypatch, retired, cache_dir):  # noqa: F811
    out, _, _ = retired
    memos = list((cache_dir / carried.DIRECTORY).glob("*.bin"))
    assert len(memos) == 1
    data = memos[0].read_bytes()
    memos[0].write_bytes(data[: len(data) // 2])
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    assert "carried through" not in sync_out(cli, upstream, out, "v2.1")
    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)


def test_the_memo_reads_back_what_it_kept_and_nothing_of_other_code(tmp_path, monkeypatch):
    from crawler.model.records import RepoRef

    repo = RepoRef(url="https://github.com/acme/widgets", owner="acme", name="widgets")
    rows = {bytes([n]) * 32: carried.Carried(bytes([n + 1]) * 32, 100 + n, 50 + n, b'{"id":"%d"}' % n, b'{"s":%d}' % n) for n in range(3)}
    carried.remember(tmp_path, repo, rows, {})
    assert carried.load(tmp_path, repo) == rows
    other = RepoRef(url="https://github.com/acme/gadgets", owner="acme", name="widgets")
    assert carried.load(tmp_path, other) == {}  # stamped with the repository it was made for
    monkeypatch.setattr(carried, "_stamp", lambda url: b"\0" * 32)
    assert carried.load(tmp_path, repo) == {}  # and with errcat's code


@pytest.mark.slow
def test_an_unread_record_whose_check_comes_back_is_read_and_revived(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    from tests.versions.test_lineage_links import V0

    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    sync_out(cli, upstream, out, "v2.0")  # the memo holds what a sync reads of it: the next one reads it not
    upstream.commit({"pkg/v0/cache.py": V0}, tag="v3.0")
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    read: list[set[str]] = []
    real = history.Fold.materialize
    monkeypatch.setattr(history.Fold, "materialize", lambda self, ids: read.append(set(ids) & self.unread_ids()) or real(self, ids))
    sync_out(cli, upstream, out, "v3.0")
    assert {old["id"]} in read  # read when its id came back
    back = json.loads((dataset / "errors" / f"{old['id']}.json").read_text())
    assert not back["history"]["retired"] and back["history"]["first_seen"]["version"] == "v1.0"

    monkeypatch.setattr(history.Fold, "materialize", real)
    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v3.0")
    assert tree(twin) == tree(out)


@pytest.mark.slow
def test_a_member_compressed_anew_takes_unread_lines_as_they_are(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    from crawler.publish import jsonl

    out, dataset, twin = with_twin(upstream, retired[0], tmp_path)
    monkeypatch.setattr(jsonl, "member_key", lambda record_id: "")  # one member: the day's change compresses it anew
    monkeypatch.setattr(jsonl, "in_file_order", lambda retired: (list(range(len(retired))), len(retired)))  # the retired lines in it too
    asked: list[str] = []
    real = history.Fold.line_of
    monkeypatch.setattr(history.Fold, "line_of", lambda self, eid: (asked.append(eid) if eid in self.unread_ids() else None) or real(self, eid))
    said = sync_out(cli, upstream, out, "v2.1")
    gone = retired_ids(dataset)
    assert f"{len(gone)} retired entries carried through" in said
    assert sorted(asked) == sorted(gone)  # their lines taken from the dataset in place, not made again

    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
