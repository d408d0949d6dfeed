"""A record kept by its known line at an earlier commit is copied there (``pins.repin``) only where
the writer serializes it (``pins.pinned_at``): a one-file crawl re-pins none of the records it
links, and writes the bytes of a crawl without the cache; a record the writer does serialize (its
file not linkable, its gzip member compressed anew) is written pinned where it was kept."""

from __future__ import annotations

from pathlib import Path

import pytest

import crawler.publish.pins as pins
from crawler.publish import writer
from tests.publish.test_line_memo import crawl, files, without_cache


@pytest.fixture
def repinned(monkeypatch):
    """The (id, commit) of each record copied to another pin."""
    made: list[tuple[str, str]] = []
    real = pins.repin

    def counted(record, identity, commit, *args, **kw):
        made.append((record["id"], commit))
        return real(record, identity, commit, *args, **kw)

    monkeypatch.setattr(pins, "repin", counted)
    return made


@pytest.fixture
def history(fixture_repo):
    from tests.publish.test_line_memo import TREE

    fixture_repo.commit(TREE, tag="v1")
    fixture_repo.commit({"pkg/other.py": "\n        # other things" + TREE["pkg/other.py"]}, tag="v2")
    fixture_repo.commit({"pkg/other.py": "\n        # other things\n        # and more" + TREE["pkg/other.py"]}, tag="v3")
    return fixture_repo


def kept_at(dataset: Path, commit: str) -> set[str]:
    return {p.stem for p in (dataset / "errors").iterdir() if f'"commit":"{commit}"'.encode() in p.read_bytes()}


@pytest.mark.slow
def test_records_kept_by_their_lines_are_not_copied_to_their_pin_unless_written(history, cli, tmp_path, cache_dir, repinned):
    out = tmp_path / "out"
    v1 = history.repo.tags["v1"].commit.hexsha
    crawl(cli, history, out, "v1")
    crawl(cli, history, out, "v2")  # (no line memo yet: every kept record compared, so copied to v1)
    assert {commit for _, commit in repinned} == {v1} and len(repinned) >= 3
    repinned.clear()
    dataset = crawl(cli, history, out, "v3")
    kept = kept_at(dataset, v1)
    assert len(kept) == 3  # run.py's three, still pinned at v1
    # linked, their lines the memo's, their members (none holds a moved record) taken as they were:
    # none was copied to v1 (the old code copied all three); the two moved records are compared
    # with their files at the pins tried (v1, v2), as before
    assert not {rid for rid, _ in repinned} & kept  # (the two moved records are tried at v1 and v2)
    assert files(dataset) == without_cache(cli, history, tmp_path / "fresh")


@pytest.mark.slow
def test_a_record_kept_by_its_line_that_is_written_after_all_is_written_at_its_pin(history, cli, tmp_path, cache_dir, repinned, monkeypatch):
    """No file linked and no member kept (a new directory on another device, say): every record is
    serialized by the writer, the kept ones through ``pinned_at``, at v1, with the bytes of a crawl
    without the cache."""
    out = tmp_path / "out"
    v1 = history.repo.tags["v1"].commit.hexsha
    crawl(cli, history, out, "v1")
    crawl(cli, history, out, "v2")
    repinned.clear()
    monkeypatch.setattr(writer, "_link_kept", lambda tmp, target, inodes: set())
    real = writer.jsonl.pack_members
    monkeypatch.setattr(writer.jsonl, "pack_members", lambda ids, lines, jobs=1, previous=None, *a, **k: real(ids, lines, jobs, None, *a, **k))
    dataset = crawl(cli, history, out, "v3")
    kept = kept_at(dataset, v1)
    assert len(kept) == 3
    assert sorted((rid, commit) for rid, commit in repinned if rid in kept) == sorted((rid, v1) for rid in kept)  # each once, as written
    assert files(dataset) == without_cache(cli, history, tmp_path / "fresh")
