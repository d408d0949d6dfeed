"""A history's sync holds none of its retired records' files (#31 item 1, s44-syncmem): a retired
record carried through unread (``versions.carried``) has its file in place hashed as it is read and
kept as its digest (``dataset.previous_records``' ``carried``), left out of the files the render
hands the writer and linked into the new dataset (or, not linkable, read again and held to that
digest). errors.jsonl.gz holds the live records' lines, then the retired ones' (``jsonl.in_file_order``),
so that the retired part's gzip members, recorded as written (``carried.load_members``), are not
even decompressed by the next sync where their very bytes are. A hostile or stale memo (a wrong
digest, cut short, another repository's) only costs reading and rendering: the dataset is, byte
for byte, a sync's without any memo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import jsonl_bytes

from crawler.model.records import Manifest, RepoRef
from crawler.publish import jsonl, writer
from crawler.versions import carried, sync
from tests.versions.test_history import tree
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired, synced  # noqa: F401 (the fixtures)
from tests.versions.test_sync_carry import rendering_every_record, retired_ids, sync_out


def _repo(dataset: Path) -> RepoRef:
    return Manifest.model_validate_json((dataset / "manifest.json").read_bytes()).repo


def _previous_seen(monkeypatch) -> list[dict]:
    """Every ``previous_records`` the sync makes, as it made it."""
    seen: list[dict] = []
    real = sync.previous_records
    monkeypatch.setattr(sync, "previous_records", lambda *a, **k: seen.append(made := real(*a, **k)) or made)
    return seen


def _twin(out: Path, tmp_path: Path) -> Path:
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    return twin


@pytest.mark.slow
def test_a_carried_file_is_not_held_but_linked_and_the_dataset_is_a_full_render(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    gone = retired_ids(dataset)
    file = dataset / "errors" / f"{old['id']}.json"
    inode, before = file.stat().st_ino, file.read_bytes()
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")  # an error added elsewhere: the dataset is written
    twin = _twin(out, tmp_path)
    seen = _previous_seen(monkeypatch)
    said = sync_out(cli, upstream, out, "v2.1")
    assert f"{len(gone)} retired entries carried through" in said
    assert all(seen[0][rid].data is None and seen[0][rid].line is None for rid in gone)  # hashed as read, not held
    assert any(p.data is not None for rid, p in seen[0].items() if rid not in gone)  # the live ones' as before
    assert file.stat().st_ino == inode and file.read_bytes() == before  # the very file, linked

    rendering_every_record(monkeypatch)
    assert "carried through" not in sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_a_file_not_linkable_is_read_again_and_one_changed_meanwhile_stops_the_sync(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    twin, spoilt = _twin(out, tmp_path), tmp_path / "spoilt"
    shutil.copytree(out, spoilt)
    file = dataset / "errors" / f"{old['id']}.json"
    inode, before = file.stat().st_ino, file.read_bytes()
    monkeypatch.setattr(writer, "_link_kept", lambda tmp, target, inodes: set())  # another file system: nothing links
    assert "retired entries carried through" in sync_out(cli, upstream, out, "v2.1")
    assert file.stat().st_ino != inode and file.read_bytes() == before  # written anew, from the file in place

    # the file in place edited after the sync hashed it, before it is written: never taken over
    file = spoilt / "acme" / "widgets" / "errors" / f"{old['id']}.json"
    real = sync.only_upstream_moved

    def edit_then(*args, **kwargs):
        file.write_bytes(file.read_bytes().replace(b'"title": "', b'"title": "planted ', 1))
        return real(*args, **kwargs)

    monkeypatch.setattr(sync, "only_upstream_moved", edit_then)
    before = tree(spoilt)
    result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", spoilt)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "changed during the sync; run it again" in result.stderr, result.stderr
    assert {rel: data for rel, data in tree(spoilt).items() if "errors/" not in rel} == {rel: data for rel, data in before.items() if "errors/" not in rel}

    monkeypatch.undo()
    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)


def _wrong_digest(cache: Path, repo: RepoRef, memo: Path) -> None:
    rows = carried.load(cache, repo)
    carried.remember(cache, repo, {k: v._replace(file_digest=bytes(32)) for k, v in rows.items()}, {})


def _cut_short(cache: Path, repo: RepoRef, memo: Path) -> None:
    memo.write_bytes(memo.read_bytes()[:-7])


def _other_repository(cache: Path, repo: RepoRef, memo: Path) -> None:
    rows = carried.load(cache, repo)
    other = RepoRef(url="https://github.com/acme/gadgets", owner="acme", name="gadgets")
    carried.remember(cache, other, rows, {})
    shutil.copyfile(carried._path(cache, other), memo)  # its bytes, where this repository's memo is


@pytest.mark.slow
@pytest.mark.parametrize("spoil", [_wrong_digest, _cut_short, _other_repository], ids=["wrong-digest", "cut-short", "other-repository"])
def test_a_hostile_memo_falls_back_to_reading_and_rendering(upstream, cli, tmp_path, monkeypatch, retired, cache_dir, spoil):  # noqa: F811
    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    memo = carried._path(cache_dir, _repo(dataset))
    assert memo.is_file() and carried.load(cache_dir, _repo(dataset))
    spoil(cache_dir, _repo(dataset), memo)
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    twin = _twin(out, tmp_path)
    seen = _previous_seen(monkeypatch)
    said = sync_out(cli, upstream, out, "v2.1")
    assert "carried through" not in said
    assert seen[0][old["id"]].data is not None  # read and kept as before: nothing vouches for it
    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
    assert cli("validate", out).exit_code == 0


def _left_compressed(monkeypatch) -> list[jsonl.Member]:
    """Every gzip member a read leaves compressed."""
    left: list[jsonl.Member] = []
    real = jsonl._pieces_skipping
    monkeypatch.setattr(jsonl, "_pieces_skipping", lambda data, where, members: left.extend(members) or real(data, where, members))
    return left


@pytest.mark.slow
def test_the_retired_part_is_left_compressed_and_the_dataset_is_a_full_render(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    records = [json.loads(line) for line in jsonl_bytes(retired[0] / "acme" / "widgets").splitlines()]
    live, gone = ([r["id"] for r in records if r["history"]["retired"] is was] for was in (False, True))
    assert [r["id"] for r in records] == sorted(live) + sorted(gone) and live and gone  # the live lines in id order, then the retired ones
    out = retired[0]
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    twin = _twin(out, tmp_path)
    left = _left_compressed(monkeypatch)
    said = sync_out(cli, upstream, out, "v2.1")
    assert f"{len(gone)} retired entries carried through" in said and f"{len(gone)} retired entries' lines left compressed" in said
    assert sorted(d for member in left for d, _ in member.lines) == sorted(
        jsonl.line_digest(line) for line in jsonl_bytes(twin / "acme" / "widgets").splitlines(keepends=True) if json.loads(line)["id"] in gone
    )

    rendering_every_record(monkeypatch)
    monkeypatch.setattr(carried, "load_members", lambda cache_dir, repo: [])
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
    assert cli("validate", out).exit_code == 0


def _members_wrong_sha(cache: Path, repo: RepoRef) -> None:
    carried.remember_members(cache, repo, [(at, size, bytes(32), lines) for at, size, _, lines in carried.load_members(cache, repo)])


def _members_moved(cache: Path, repo: RepoRef) -> None:
    carried.remember_members(cache, repo, [(at + 1, size, sha, lines) for at, size, sha, lines in carried.load_members(cache, repo)])


def _members_cut_short(cache: Path, repo: RepoRef) -> None:
    path = carried._members_path(cache, repo)
    path.write_bytes(path.read_bytes()[:-5])


@pytest.mark.slow
@pytest.mark.parametrize("spoil", [_members_wrong_sha, _members_moved, _members_cut_short], ids=["wrong-sha", "moved", "cut-short"])
def test_a_hostile_member_memo_has_the_member_read(upstream, cli, tmp_path, monkeypatch, retired, cache_dir, spoil):  # noqa: F811
    out, _, _ = retired
    dataset = out / "acme" / "widgets"
    assert carried.load_members(cache_dir, _repo(dataset))
    spoil(cache_dir, _repo(dataset))
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    twin = _twin(out, tmp_path)
    left = _left_compressed(monkeypatch)
    assert "retired entries carried through" in sync_out(cli, upstream, out, "v2.1")  # by their lines, read
    assert not left
    rendering_every_record(monkeypatch)
    sync_out(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)
