"""A history run again takes over what the runs before it made, and writes the same bytes as a
run without any cache: releases folded from their cached lines (``release_cache.Kept``), record
files validated before not validated again, gzip members made before not compressed again, a
dataset in place with the same bytes left alone (``versions.history_reuse``)."""

from __future__ import annotations

import gzip
import os

import orjson
import pytest
from test_history import ARGS, tree, upstream  # noqa: F401 - the fixture

import crawler.publish.writer
from crawler.publish import jsonl, release_cache
from crawler.versions import history as history_module
from crawler.versions import sync as sync_module

REFS = ["v1.0", "v1.1", "v2.0"]


def run(cli, repo, out, *extra):
    result = cli("history", "--repo", repo.path, *ARGS, "--out", out, *extra, *REFS)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def counted(monkeypatch):
    """How often the run validates a record, compresses a gzip member, writes a dataset and folds
    a release from its lines."""
    counts = {"record checks": 0, "members": 0, "writes": 0, "from lines": 0}
    real_check, real_compress = crawler.publish.writer.check, jsonl._compress
    real_write, real_lines = sync_module.write_dataset, history_module.Fold.add_lines

    def check(schema, *a, **k):
        counts["record checks"] += schema == "record"
        return real_check(schema, *a, **k)

    def compress(data):
        counts["members"] += 1
        return real_compress(data)

    def write(*a, **k):
        counts["writes"] += 1
        return real_write(*a, **k)

    def add_lines(self, *a, **k):
        counts["from lines"] += 1
        return real_lines(self, *a, **k)

    monkeypatch.setattr(crawler.publish.writer, "check", check)
    monkeypatch.setattr(jsonl, "_compress", compress)
    monkeypatch.setattr(sync_module, "write_dataset", write)
    monkeypatch.setattr(history_module.Fold, "add_lines", add_lines)
    return counts


@pytest.mark.slow
def test_a_history_run_again_redoes_none_of_the_work_and_writes_the_same_bytes(upstream, cli, tmp_path, counted):  # noqa: F811
    run(cli, upstream, tmp_path / "first")
    assert counted["record checks"] > 0 and counted["members"] > 0 and counted["from lines"] == 0
    counted.update(dict.fromkeys(counted, 0))
    run(cli, upstream, tmp_path / "again")  # another directory: nothing in place to take over
    # the releases before the last are folded from their lines; every record file was validated
    # before, every member compressed before
    assert counted == {"record checks": 0, "members": 0, "writes": 1, "from lines": 2}
    counted.update(dict.fromkeys(counted, 0))
    run(cli, upstream, tmp_path / "again")  # the same directory: it holds these bytes already
    assert counted["writes"] == 0
    run(cli, upstream, tmp_path / "none", "--no-cache")
    assert tree(tmp_path / "first") == tree(tmp_path / "again") == tree(tmp_path / "none")


@pytest.mark.slow
def test_a_dataset_in_place_that_differs_is_written_again(upstream, cli, tmp_path, counted):  # noqa: F811
    run(cli, upstream, tmp_path / "out")
    expected = tree(tmp_path / "out")
    edited = next((tmp_path / "out").rglob("errors/*.json"))
    edited.write_bytes(edited.read_bytes() + b" ")
    (tmp_path / "out" / "acme" / "widgets" / "stray.txt").write_bytes(b"x")
    counted.update(dict.fromkeys(counted, 0))
    run(cli, upstream, tmp_path / "out")
    assert counted["writes"] == 1 and tree(tmp_path / "out") == expected


@pytest.mark.slow
def test_damaged_reuse_files_cost_only_the_work(upstream, cli, tmp_path, cache_dir, counted):  # noqa: F811
    """A cached release whose fold rows are not rows, a validated-digests file or a members copy
    that is damaged: each is a miss, and the bytes are those of a run without the cache."""
    run(cli, upstream, tmp_path / "first")
    kept = sorted((cache_dir / release_cache.DIRECTORY).glob("*/*.jsonl.gz"))
    lines = gzip.decompress(kept[0].read_bytes()).split(b"\n")
    lines[1] = orjson.dumps([["not", "rows"]])
    kept[0].write_bytes(gzip.compress(b"\n".join(lines)))
    for path in cache_dir.glob("validated-*.bin"):
        path.write_bytes(b"short")
    for path in (cache_dir / "history").iterdir():
        path.write_bytes(path.read_bytes()[:100])
    counted.update(dict.fromkeys(counted, 0))
    result = run(cli, upstream, tmp_path / "again")
    assert result.stderr.count("its records from the cache") == 2
    assert counted["record checks"] > 0 and counted["members"] > 0
    assert tree(tmp_path / "first") == tree(tmp_path / "again")


@pytest.mark.slow
def test_cached_lines_that_are_not_the_ones_saved_are_a_miss(upstream, cli, tmp_path, cache_dir):  # noqa: F811
    """The lines of a release before the last are folded unparsed: a cached release whose gzip is
    intact but whose lines are not the ones saved (edited by hand, recompressed) is a miss like a
    damaged file, and the release is assembled again, the bytes those of a run without the cache."""
    run(cli, upstream, tmp_path / "first")
    for path in (cache_dir / release_cache.DIRECTORY).glob("*/*.jsonl.gz"):
        lines = gzip.decompress(path.read_bytes()).split(b"\n")
        path.write_bytes(gzip.compress(b"\n".join([*lines[:2], *(b"[1]" for line in lines[2:] if line)]) + b"\n"))
    result = run(cli, upstream, tmp_path / "again")
    assert "its records from the cache" not in result.stderr
    assert tree(tmp_path / "first") == tree(tmp_path / "again")
    again = run(cli, upstream, tmp_path / "third")  # and saved again whole
    assert again.stderr.count("its records from the cache") == len(REFS)
    assert tree(tmp_path / "first") == tree(tmp_path / "third")


@pytest.mark.slow
def test_the_fold_runs_without_the_cycle_collector_and_gives_it_back(upstream, cli, tmp_path, monkeypatch):  # noqa: F811
    """The records are acyclic and freed by reference counting: a collection only walks them
    (half of a one-release vLLM history's time). Off while history folds and renders, on after."""
    import gc

    seen = []
    real_add, real_render = history_module.Fold.add, sync_module.render_state

    def add(self, *a, **k):
        seen.append(gc.isenabled())
        return real_add(self, *a, **k)

    def render(*a, **k):
        seen.append(gc.isenabled())
        return real_render(*a, **k)

    monkeypatch.setattr(history_module.Fold, "add", add)
    monkeypatch.setattr(sync_module, "render_state", render)
    assert gc.isenabled()
    run(cli, upstream, tmp_path / "out", "--no-cache")
    assert seen == [False] * 4 and gc.isenabled()


@pytest.mark.slow
def test_record_files_kept_in_the_cache_are_completed_not_serialized_again(upstream, cli, tmp_path, monkeypatch):  # noqa: F811
    """A release kept in the cache holds each record as its file with no history: the final
    render puts the history in (``history._with_history``) and serializes no record again, and
    the files are the bytes of a run without the cache (which serializes every one)."""
    run(cli, upstream, tmp_path / "first")
    made = []
    real = crawler.publish.writer.dumps_record

    def counted(record):
        made.append(record["id"])
        return real(record)

    monkeypatch.setattr(crawler.publish.writer, "dumps_record", counted)
    result = run(cli, upstream, tmp_path / "again")
    assert result.stderr.count("its records from the cache") == len(REFS) and made == []
    run(cli, upstream, tmp_path / "none", "--no-cache")
    assert made and tree(tmp_path / "again") == tree(tmp_path / "none") == tree(tmp_path / "first")


def test_a_record_file_is_completed_only_where_the_cache_left_its_history_out():
    """Bytes the fold packed itself (a dict's compact JSON) or with a history already in are
    serialized as usual; the completed file is the record's ``dumps_record``."""
    from crawler.base.jsonio import dumps_record

    record = {"id": "0123456789abcdef", "sites": [{"path": "a.py"}, {"path": "b.py"}], "title": 'x: "history": null'}
    history = {"first_seen": {"version": "v1", "commit": "0" * 40}, "retired": False}
    packed = release_cache.record_file(record)
    assert history_module._with_history(packed, history) == dumps_record({**record, "history": history})
    assert history_module._with_history(orjson.dumps({**record, "history": None}), history) is None
    assert history_module._with_history(dumps_record({**record, "history": history}), None) is None


@pytest.mark.slow
def test_a_history_written_again_links_the_record_files_in_place_that_it_would_write(upstream, cli, tmp_path):  # noqa: F811
    """A history written over one in place (a release added at the end) links the record files
    whose bytes did not change instead of writing them again; the files are those of a run into
    an empty directory, and the dataset it replaced is not touched."""
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "out", *REFS[:2])
    assert result.exit_code == 0, result.output
    errors = tmp_path / "out" / "acme" / "widgets" / "errors"
    before = {p.name: (p.stat().st_ino, p.read_bytes()) for p in errors.iterdir()}
    run(cli, upstream, tmp_path / "out")
    run(cli, upstream, tmp_path / "fresh")
    assert tree(tmp_path / "out") == tree(tmp_path / "fresh")
    after = {p.name: (p.stat().st_ino, p.read_bytes()) for p in errors.iterdir()}
    same = {name for name in before.keys() & after.keys() if before[name][1] == after[name][1]}
    assert same and all(before[name][0] == after[name][0] for name in same)
    assert all(after[name][0] != before.get(name, (None,))[0] for name in after.keys() - same)


@pytest.mark.slow
def test_a_record_file_edited_in_place_during_the_run_is_not_taken_over(upstream, cli, tmp_path, monkeypatch):  # noqa: F811
    """The dataset in place is read when a history starts and its unchanged record files are
    linked when it ends (all its releases later): a file edited in place meanwhile (the same
    inode, new bytes) is written afresh, never linked into the new dataset with its edit."""
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "out", *REFS[:2])
    assert result.exit_code == 0, result.output
    errors = tmp_path / "out" / "acme" / "widgets" / "errors"
    real = sync_module.write_dataset

    def edited_first(*a, **k):
        for path in errors.iterdir():
            with open(path, "r+b") as fh:  # in place: the inode stays
                fh.seek(0, 2)
                fh.write(b" ")
        return real(*a, **k)

    monkeypatch.setattr(sync_module, "write_dataset", edited_first)
    run(cli, upstream, tmp_path / "out")
    monkeypatch.setattr(sync_module, "write_dataset", real)
    run(cli, upstream, tmp_path / "fresh")
    assert tree(tmp_path / "out") == tree(tmp_path / "fresh")


@pytest.mark.slow
def test_cached_fold_rows_that_are_not_the_ones_saved_are_a_miss(upstream, cli, tmp_path, cache_dir):  # noqa: F811
    """The fold takes a cached release's rows (id, error key, sites' paths) as they are, like its
    lines: rows edited by hand (still rows; here, other paths, which the fold reads as moves) make
    the file a miss, and the history is the bytes of the first run."""
    run(cli, upstream, tmp_path / "first")
    for n, path in enumerate(sorted((cache_dir / release_cache.DIRECTORY).glob("*/*.jsonl.gz"))):
        head, index, body = gzip.decompress(path.read_bytes()).split(b"\n", 2)
        document = orjson.loads(index)
        document["rows"] = [[rid, key, [f"pkg/elsewhere{n}.py"]] for rid, key, _ in document["rows"]]
        path.write_bytes(gzip.compress(b"\n".join([head, orjson.dumps(document), body])))
    result = run(cli, upstream, tmp_path / "again")
    assert tree(tmp_path / "first") == tree(tmp_path / "again")
    assert "its records from the cache" not in result.stderr


@pytest.mark.slow
def test_a_history_with_no_cache_links_no_file_in_place(upstream, cli, tmp_path):  # noqa: F811
    """``--no-cache`` writes fresh files and links none (README, Output), as a crawl's does: the
    way out when anything kept is in doubt. The bytes are the same."""
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "out", *REFS[:2])
    assert result.exit_code == 0, result.output
    errors = tmp_path / "out" / "acme" / "widgets" / "errors"
    hold = tmp_path / "hold"  # the files in place stay alive, so a new file cannot get one of their inode numbers
    hold.mkdir()
    before = {}
    for p in errors.iterdir():
        os.link(p, hold / p.name)
        before[p.name] = p.stat().st_ino
    run(cli, upstream, tmp_path / "out", "--no-cache")
    run(cli, upstream, tmp_path / "fresh", "--no-cache")
    assert tree(tmp_path / "out") == tree(tmp_path / "fresh")
    assert not [p.name for p in errors.iterdir() if p.stat().st_ino == before.get(p.name)]


@pytest.mark.slow
def test_a_gzip_bomb_in_the_cache_is_a_miss_in_bounded_memory(upstream, cli, tmp_path, cache_dir, monkeypatch):  # noqa: F811
    """A kept release is read only up to what a release can be (``release_cache.MAX_BYTES``
    decompressed, here made 1 MiB): a file planted in the cache that decompresses to far more
    (64 MiB of zeros in 64 KB) is a miss, read in bounded memory, and the history is the bytes of
    the first run; a release over the bound is not kept in the first place."""
    import tracemalloc

    run(cli, upstream, tmp_path / "first")
    kept = sorted((cache_dir / release_cache.DIRECTORY).glob("*/*.jsonl.gz"))
    assert kept
    monkeypatch.setattr(release_cache, "MAX_BYTES", 1 << 20, raising=False)
    head = gzip.decompress(kept[-1].read_bytes()).split(b"\n", 2)
    bomb = gzip.compress(b"\n".join(head[:2]) + b"\n" + bytes(64 << 20), compresslevel=9, mtime=0)
    assert len(bomb) < 1 << 20
    for path in kept:
        path.write_bytes(bomb)
    generation, digest = kept[-1].parent.name, kept[-1].name.removesuffix(".jsonl.gz")
    tracemalloc.start()
    try:
        assert release_cache.load(cache_dir, generation, digest) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    result = run(cli, upstream, tmp_path / "again")
    assert "its records from the cache" not in result.stderr
    assert tree(tmp_path / "first") == tree(tmp_path / "again")


@pytest.mark.slow
def test_a_release_larger_than_one_can_be_is_not_kept(upstream, cli, tmp_path, cache_dir, monkeypatch):  # noqa: F811
    """``save`` keeps no release that ``load`` would refuse as too large."""
    real = getattr(release_cache, "MAX_BYTES", None)
    monkeypatch.setattr(release_cache, "MAX_BYTES", 1024, raising=False)
    run(cli, upstream, tmp_path / "out")
    assert not list((cache_dir / release_cache.DIRECTORY).glob("*/*.jsonl.gz"))
    monkeypatch.setattr(release_cache, "MAX_BYTES", real)
    run(cli, upstream, tmp_path / "kept")
    assert len(list((cache_dir / release_cache.DIRECTORY).glob("*/*.jsonl.gz"))) == len(REFS)
    assert tree(tmp_path / "out") == tree(tmp_path / "kept")


@pytest.mark.slow
def test_a_history_over_other_releases_validates_each_history_not_each_record(upstream, cli, tmp_path, counted):  # noqa: F811
    """A history over other releases writes record files never written before (their histories
    differ), but each is a bare record file validated before with a history put in: only the
    distinct histories are validated (``history_reuse.vouched``), no record whole, and the bytes
    are those of a run without the cache."""
    run(cli, upstream, tmp_path / "all")
    counted.update(dict.fromkeys(counted, 0))
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "last", REFS[-1])
    assert result.exit_code == 0, result.output
    assert counted["record checks"] == 0
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "none", "--no-cache", REFS[-1])
    assert result.exit_code == 0, result.output
    assert counted["record checks"] > 0
    assert tree(tmp_path / "last") == tree(tmp_path / "none")
    assert {p.name for p in (tmp_path / "all").rglob("errors/*.json")} >= {p.name for p in (tmp_path / "last").rglob("errors/*.json")}
    assert tree(tmp_path / "all") != tree(tmp_path / "last")


def test_a_record_is_vouched_for_only_by_a_bare_file_validated_and_a_valid_history(monkeypatch):
    """Each part must hold: the bare file's digest known, the history valid alone; and the record
    schema must constrain its fields one at a time, else nothing is vouched for."""
    import hashlib

    from crawler.versions import history_reuse

    bare, other = b'{\n  "history": null\n}\n', b'{\n  "history": null,\n  "x": 1\n}\n'
    good = orjson.dumps({"first_seen": None, "retired": False})
    bad = orjson.dumps({"retired": "yes"})
    known = frozenset({hashlib.sha256(bare).digest()})
    files = {name: hashlib.sha256(name.encode()).digest() for name in ("good", "bad", "unknown")}
    bare, other = hashlib.sha256(bare).digest(), hashlib.sha256(other).digest()
    parts = [(files["good"], bare, good), (files["bad"], bare, bad), (files["unknown"], other, good)]
    assert history_reuse.vouched(parts, known) == {files["good"]}
    assert history_reuse.vouched(parts, frozenset()) == set()
    schema = history_reuse.schema_for("record")
    monkeypatch.setattr(history_reuse, "schema_for", lambda name: {**schema, "allOf": [{"required": ["id"]}]})
    history_reuse._history_validator.cache_clear()
    try:
        assert history_reuse.vouched(parts, known) == set()
    finally:
        monkeypatch.undo()
        history_reuse._history_validator.cache_clear()


@pytest.mark.slow
def test_the_kept_members_are_cut_out_where_their_layout_says_only_from_that_very_file(upstream, cli, tmp_path, cache_dir, monkeypatch):  # noqa: F811
    """The copy of the last errors.jsonl.gz is not decompressed to find its members when the
    layout kept beside it names its SHA-256; a copy that is not that file (edited, here one
    member's bytes swapped for another's) is decompressed and keyed by its lines, and either way
    the history is the bytes of the first run."""
    run(cli, upstream, tmp_path / "first")
    split = []
    real = jsonl.split_members
    monkeypatch.setattr(jsonl, "split_members", lambda data: split.append(len(data)) or real(data))
    run(cli, upstream, tmp_path / "again")
    assert split == []
    assert tree(tmp_path / "first") == tree(tmp_path / "again")
    (copy,) = (cache_dir / "history").glob("*.errors.jsonl.gz")
    members = list(real(copy.read_bytes()).values())
    assert len(members) > 1
    copy.write_bytes(b"".join([members[1], members[0], *members[2:]]))
    run(cli, upstream, tmp_path / "third")
    assert split
    assert tree(tmp_path / "first") == tree(tmp_path / "third")


@pytest.mark.slow
def test_a_history_of_fewer_releases_takes_its_search_rows_and_leaves_the_memo(upstream, cli, tmp_path, cache_dir, monkeypatch):  # noqa: F811
    """The search rows of a history over fewer releases are all in the memo a longer one left
    (retired entries' rows too): none is made, the memo is not rewritten to drop rows the longer
    history needs again, and search.json is the bytes of a run without the cache."""
    import crawler.catalogue.search as search

    run(cli, upstream, tmp_path / "all")
    (memo,) = (cache_dir / "search").glob("*history*")
    before = memo.read_bytes()
    made = []
    real = search.entry_row
    monkeypatch.setattr(search, "entry_row", lambda record, primary=None: made.append(record["id"]) or real(record, primary))
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "last", REFS[-1])
    assert result.exit_code == 0, result.output
    assert made == [] and memo.read_bytes() == before
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "none", "--no-cache", REFS[-1])
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "last") == tree(tmp_path / "none")
    run(cli, upstream, tmp_path / "again")
    assert memo.read_bytes() == before


@pytest.mark.slow
def test_a_new_history_is_written_as_rendered_with_its_lines_packed_alongside(upstream, cli, tmp_path, monkeypatch):  # noqa: F811
    """With no dataset in place, the files go to the writer as they are rendered (not a mapping
    of them all) and errors.jsonl.gz's lines are made beside the render, not by the writer; the
    bytes are those the same history writes over a dataset in place (rendered whole, then
    written)."""
    given, lines_made = [], []
    real_write, real_line = sync_module.write_dataset, crawler.publish.writer.dumps_line
    monkeypatch.setattr(sync_module, "write_dataset", lambda target, files, **k: given.append(type(files)) or real_write(target, files, **k))
    monkeypatch.setattr(crawler.publish.writer, "dumps_line", lambda data: lines_made.append(1) or real_line(data))
    run(cli, upstream, tmp_path / "new")
    assert given and not any(issubclass(kind, dict) for kind in given) and lines_made == []
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "over", REFS[0])
    assert result.exit_code == 0, result.output
    given.clear()
    run(cli, upstream, tmp_path / "over", "--no-cache")
    assert given == [dict]
    assert tree(tmp_path / "new") == tree(tmp_path / "over")


@pytest.mark.slow
def test_a_first_render_of_a_history_from_cached_releases_is_the_bytes_of_a_run_without_the_cache(upstream, cli, tmp_path, cache_dir, counted):  # noqa: F811
    """What the bench times: every release from the cache, but no copy of the last history's
    errors.jsonl.gz to take members from (removed, as a history over other releases would leave
    none of these): every member is compressed, the releases are folded from their lines with
    their histories carried forward shared, and the bytes are those of a run without the cache."""
    import shutil

    run(cli, upstream, tmp_path / "first")
    shutil.rmtree(cache_dir / "history")
    counted.update(dict.fromkeys(counted, 0))
    run(cli, upstream, tmp_path / "again")
    assert counted["from lines"] == len(REFS) - 1 and counted["members"] > 0
    run(cli, upstream, tmp_path / "none", "--no-cache")
    assert tree(tmp_path / "again") == tree(tmp_path / "none") == tree(tmp_path / "first")
