"""The record memo (publish.record_memo): the digest of each record file a crawl wrote, by the
file's identity, so the next crawl compares an untouched file unread and reads every other one."""

from __future__ import annotations

import gzip
import hashlib
import os

import orjson
import pytest

from crawler.model.records import RepoRef
from crawler.publish import jsonl, record_memo
from crawler.publish.dataset import previous_records

REPO = RepoRef(url="https://github.com/acme/widgets", owner="acme", name="widgets")
SOURCE = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    raise KeyError(f"no such key {x}")
"""


def _crawled(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": SOURCE}, tag="v1")
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    assert result.exit_code == 0, result.output
    return out / "acme" / "widgets"


@pytest.mark.slow
def test_untouched_files_are_vouched_for_and_touched_ones_read(fixture_repo, cli, cache_dir, tmp_path):
    dataset = _crawled(fixture_repo, cli, tmp_path)
    files = sorted((dataset / "errors").iterdir())
    assert len(files) == 2
    memo = record_memo.load(cache_dir, dataset).records
    assert {rid: digest for rid, (_, digest, _) in memo.items()} == {p.stem: hashlib.sha256(p.read_bytes()).digest() for p in files}
    lines = {
        orjson.loads(line)["id"]: hashlib.sha256(line).digest()
        for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines(keepends=True)
    }
    assert {rid: line for rid, (_, _, line) in memo.items()} == lines
    touched = files[0]
    touched.write_bytes(touched.read_bytes().replace(b'"raise"', b'"RAISE"', 1))  # edited: the memo knows nothing of it
    found = previous_records(dataset, REPO, memo)
    assert found[touched.stem].data == touched.read_bytes() and found[touched.stem].line is None
    vouched = found[files[1].stem]
    assert vouched.data is None and vouched.holds(files[1].read_bytes()) and not vouched.holds(b"{}")
    assert vouched.read() == files[1].read_bytes()
    assert vouched.provenance(files[1].stem) is not None
    assert all(r.data is not None for r in previous_records(dataset, REPO).values())  # no memo: every file read


def test_a_damaged_memo_vouches_for_nothing(fixture_repo, cli, cache_dir, tmp_path):
    dataset = _crawled(fixture_repo, cli, tmp_path)
    [path] = (cache_dir / "records").iterdir()
    good = path.read_bytes()
    memo = record_memo.load(cache_dir, dataset)
    assert len(memo.records) == 2 and memo.members is not None
    head = len(record_memo.MAGIC)
    damages = [
        b"",
        b"{not json",
        record_memo.MAGIC,
        good[:-1],
        good + b"\0",  # cut short, or longer than it says
        good[:head] + b"\0" * 32 + good[head + 32 :],  # of another serializer: its line digests stand for nothing
        b"errcat-record-memo-0\n" + good[head:],
    ]
    for damage in damages:
        path.write_bytes(damage)
        assert record_memo.load(cache_dir, dataset) == record_memo.EMPTY
    os.unlink(path)
    assert record_memo.load(cache_dir, dataset) == record_memo.EMPTY


@pytest.mark.slow
def test_a_file_replaced_after_the_memo_read_is_not_taken_for_it(fixture_repo, cli, cache_dir, tmp_path):
    """Between the memo check and a read of its provenance, the file was replaced: read() says so."""
    dataset = _crawled(fixture_repo, cli, tmp_path)
    found = previous_records(dataset, REPO, record_memo.load(cache_dir, dataset).records)
    rid, vouched = next(iter(found.items()))
    path = dataset / "errors" / f"{rid}.json"
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data.replace(b'"raise"', b'"RAISE"', 1))
    assert vouched.read() is None and vouched.provenance(rid) is None


@pytest.mark.slow
def test_a_file_edited_between_the_swap_and_the_memo_is_not_vouched_for(fixture_repo, cli, cache_dir, tmp_path, monkeypatch):
    """The memo records each file's identity after the dataset is swapped in; a file edited in
    place in between (same size, its modification time put back) must not get the digest of the
    bytes errcat wrote, or the next crawl keeps the edited file as unchanged."""
    remember = record_memo.remember
    edited: list[os.PathLike[str]] = []

    def edit_then_remember(cache, target, digests, *more):
        path = sorted((target / "errors").iterdir())[0]
        st = path.stat()
        data = path.read_bytes()
        path.write_bytes(data.replace(b'"raise"', b'"RAISE"', 1))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        edited.append(path)
        remember(cache, target, digests, *more)

    monkeypatch.setattr(record_memo, "remember", edit_then_remember)
    _crawled(fixture_repo, cli, tmp_path)
    monkeypatch.setattr(record_memo, "remember", remember)
    [path] = edited
    assert b'"RAISE"' in path.read_bytes()
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert b'"RAISE"' not in path.read_bytes()


def _crawl(cli, fixture_repo, out, *more):
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v2", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, *more)
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_a_record_the_memo_vouches_for_is_kept_unserialized_and_its_gzip_member_undecompressed(fixture_repo, cli, cache_dir, tmp_path, monkeypatch):
    """A crawl of a commit that changed nothing of a record compares it with its file by the
    digest of its errors.jsonl line alone (the memo holds the one written with the file), links the
    file, and takes its gzip member over where the memo says it is: the same bytes as a crawl that
    reads and decompresses everything."""
    import shutil

    from crawler.base import jsonio
    from crawler.publish import jsonl, pins, writer

    dataset = _crawled(fixture_repo, cli, tmp_path)
    fixture_repo.commit({"pkg/b.py": "# a comment, no error\n"}, tag="v2")
    shutil.copytree(tmp_path / "out", tmp_path / "plain", symlinks=True)
    before = {p.name: p.stat().st_ino for p in (dataset / "errors").iterdir()}
    serialized: list[str] = []

    def counted(record):
        serialized.append(record["id"])
        return jsonio.dumps_record(record)

    def no_decompressing(data):
        raise AssertionError("errors.jsonl.gz decompressed")

    with monkeypatch.context() as m:
        m.setattr(pins, "dumps_record", counted)
        m.setattr(writer, "dumps_record", counted)
        m.setattr(jsonl, "split_members", no_decompressing)
        compressed: list[bytes] = []
        m.setattr(jsonl, "_compress", lambda data: compressed.append(data) or b"")
        _crawl(cli, fixture_repo, tmp_path / "out")
    assert serialized == [] and compressed == []  # every member taken over as it was
    assert {p.name: p.stat().st_ino for p in (dataset / "errors").iterdir()} == before  # linked, not written
    _crawl(cli, fixture_repo, tmp_path / "plain", "--no-cache")
    plain = tmp_path / "plain" / "acme" / "widgets"
    assert writer.read_dataset(dataset) == writer.read_dataset(plain)


@pytest.mark.slow
def test_an_errors_jsonl_edited_in_place_is_decompressed_and_compared(fixture_repo, cli, cache_dir, tmp_path):
    """errors.jsonl.gz rewritten since the memo (another member in place of one of errcat's, same
    size): the memo vouches for none of its members, and the crawl writes what it would without it."""
    import gzip as gz

    dataset = _crawled(fixture_repo, cli, tmp_path)
    fixture_repo.commit({"pkg/b.py": "# a comment, no error\n"}, tag="v2")
    path = dataset / "errors.jsonl.gz"
    lines = gz.decompress(path.read_bytes())
    forged = lines.replace(b"positive", b"POSITIVE")
    assert forged != lines
    path.write_bytes(jsonl.pack([orjson.loads(line)["id"] for line in forged.splitlines()], forged.splitlines(keepends=True)))
    _crawl(cli, fixture_repo, tmp_path / "out")
    assert gz.decompress(path.read_bytes()) == lines


@pytest.mark.slow
def test_a_copy_of_the_files_errcat_wrote_is_vouched_for_by_their_bytes(fixture_repo, cli, cache_dir, tmp_path):
    """A dataset checked out of git or restored by CI is new files (new inodes, change times)
    holding the bytes errcat wrote: each is read, and when its SHA-256 is the memo's, the memo's
    line digest stands for it (it is compared unserialized and linked as the file it is now); a
    copy with other bytes is compared byte for byte."""
    import shutil

    dataset = _crawled(fixture_repo, cli, tmp_path)
    memo = record_memo.load(cache_dir, dataset)
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    shutil.rmtree(dataset)
    copy.rename(dataset)
    files = sorted((dataset / "errors").iterdir())
    edited = files[0]
    edited.write_bytes(edited.read_bytes().replace(b'"raise"', b'"RAISE"', 1))
    found = previous_records(dataset, REPO, memo.records)
    assert found[edited.stem].data == edited.read_bytes() and found[edited.stem].line is None
    vouched = found[files[1].stem]
    assert vouched.data is None and vouched.line == memo.records[files[1].stem][2]
    assert vouched.inode == record_memo.identity(os.lstat(files[1])) != memo.records[files[1].stem][0]
    assert vouched.read() == files[1].read_bytes()


@pytest.mark.slow
def test_a_restored_dataset_is_compared_by_lines_and_its_members_cut_out(fixture_repo, cli, cache_dir, tmp_path, monkeypatch):
    """The daily sync's case: the dataset in place is a copy of the one errcat wrote (a checkout),
    the cache restored. The crawl of a commit that changed none of its errors serializes no record
    file and decompresses no gzip member, and writes the bytes of a crawl that reads everything;
    a copied errors.jsonl.gz with other bytes is decompressed and compared."""
    import gzip as gz
    import shutil

    from crawler.base import jsonio
    from crawler.publish import pins, writer

    dataset = _crawled(fixture_repo, cli, tmp_path)
    fixture_repo.commit({"pkg/b.py": "# a comment, no error\n"}, tag="v2")
    shutil.copytree(tmp_path / "out", tmp_path / "plain", symlinks=True)
    shutil.copytree(dataset, tmp_path / "copy")
    shutil.rmtree(dataset)
    (tmp_path / "copy").rename(dataset)
    serialized: list[str] = []
    decompressed: list[bytes] = []
    split = jsonl.split_members

    def counted(record):
        serialized.append(record["id"])
        return jsonio.dumps_record(record)

    def splitting(data):
        decompressed.append(data)
        return split(data)

    with monkeypatch.context() as m:
        m.setattr(pins, "dumps_record", counted)
        m.setattr(writer, "dumps_record", counted)
        m.setattr(jsonl, "split_members", splitting)
        _crawl(cli, fixture_repo, tmp_path / "out")
    assert serialized == [] and decompressed == []
    _crawl(cli, fixture_repo, tmp_path / "plain", "--no-cache")
    plain = tmp_path / "plain" / "acme" / "widgets"
    assert writer.read_dataset(dataset) == writer.read_dataset(plain)

    # the copy's errors.jsonl.gz is not the file the memo names: its members are decompressed
    path = dataset / "errors.jsonl.gz"
    lines = gz.decompress(path.read_bytes())
    path.unlink()
    path.write_bytes(jsonl.pack([orjson.loads(line)["id"] for line in lines.splitlines()], lines.replace(b"positive", b"POSITIVE").splitlines(keepends=True)))
    fixture_repo.commit({"pkg/c.py": "# another comment\n"}, tag="v3")
    with monkeypatch.context() as m:
        m.setattr(jsonl, "split_members", splitting)
        result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v3", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", tmp_path / "out")
        assert result.exit_code == 0, result.output
    assert len(decompressed) == 1
    assert gz.decompress(path.read_bytes()) == lines


def test_the_up_to_date_check_takes_the_memo_s_digests_and_reads_what_it_cannot_vouch_for(fixture_repo, cli, cache_dir, tmp_path):
    """An up-to-date crawl checks the dataset in place by its content digest: the record files the
    memo vouches for by identity are not read for it (the whole of a warm crawl's work was reading
    them), and the digest is the one every file read gives."""
    from crawler.crawl import current_manifest
    from crawler.publish.dataset import load_manifest
    from crawler.publish.writer import content_digest, read_dataset

    dataset = _crawled(fixture_repo, cli, tmp_path)
    manifest = load_manifest(dataset)
    memo = record_memo.load(cache_dir, dataset)
    vouched = record_memo.vouched(dataset, memo)
    assert sorted(vouched) == sorted(f"errors/{rid}.json" for rid in memo.records) and len(vouched) == 2
    files = read_dataset(dataset, skip=vouched)
    assert not set(files) & set(vouched) and set(files) | set(vouched) == set(read_dataset(dataset))
    assert content_digest(files, vouched) == content_digest(read_dataset(dataset)) == manifest.content_digest
    assert current_manifest(dataset, manifest.input_digest, cache_dir) == manifest
    # a record file edited, its size and modification time put back: its change time moved, so it is read
    path = dataset / "errors" / f"{sorted(memo.records)[0]}.json"
    st = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"positive", b"POSITIVE", 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert sorted(record_memo.vouched(dataset, memo)) == [f"errors/{sorted(memo.records)[1]}.json"]
    assert current_manifest(dataset, manifest.input_digest, cache_dir) is None
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", tmp_path / "out")
    assert result.exit_code == 0 and "wrote " in result.output, result.output
    assert path.read_bytes() == data  # written again
    assert current_manifest(dataset, manifest.input_digest, cache_dir) == load_manifest(dataset)
