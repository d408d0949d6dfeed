"""Stable records (#18): a record's file changes only when its error changed.

Each record names the commit at which its content last changed and pins its permalinks there; a
crawl with the previous dataset in place keeps every record whose content it finds unchanged,
byte for byte. The previous dataset is hostile input: whatever is wrong with it costs a fresh
record, never a wrong one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import git

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

A = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    return x


def other(y):
    raise KeyError(f"no such key {y}")
"""

B = """
def load(name):
    if not name:
        raise RuntimeError("a name is needed")
    return name


def store(value):
    if value is None:
        raise TypeError("nothing to store")
    return value
"""

#: ``store``'s raise one line further down; ``load`` and its raise as they were.
B_MOVED = B.replace("def store(value):\n", "def store(value):\n    value = value or None\n")


def crawl(cli, repo, out: Path, ref: str, *extra: str):
    result = cli("crawl", "--repo", repo.path, "--ref", ref, *ARGS, "--out", out, *extra)
    assert result.exit_code == 0, result.output
    return out / "acme" / "widgets"


def record_files(dataset: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted((dataset / "errors").iterdir())}


def by_template(dataset: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, record_files(dataset).values())}


@pytest.fixture
def releases(fixture_repo):
    """v1; v2 adds a comment line at the end of a file (no raise or snippet moves); v3 moves one raise."""
    v1 = fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": A, "pkg/b.py": B}, tag="v1", date="1767323045 +0000")
    v2 = fixture_repo.commit({"pkg/a.py": A + "\n\n\n\n\n\n\n\n# a comment, far from every raise\n"}, tag="v2", date="1767409445 +0000")
    v3 = fixture_repo.commit({"pkg/b.py": B_MOVED}, tag="v3", date="1767495845 +0000")
    return fixture_repo, {"v1": v1, "v2": v2, "v3": v3}


@pytest.mark.slow
def test_a_comment_changes_no_record_file(releases, cli, tmp_path):
    repo, commits = releases
    out = tmp_path / "out"
    dataset = crawl(cli, repo, out, "v1")
    before = record_files(dataset)
    inodes = {p.name: p.stat().st_ino for p in (dataset / "errors").iterdir()}
    crawl(cli, repo, out, "v2")
    assert record_files(dataset) == before  # not one byte of a record changed
    # ... and no record file was even written again: the same files, linked into the new dataset
    assert {p.name: p.stat().st_ino for p in (dataset / "errors").iterdir()} == inodes
    manifest = json.loads((dataset / "manifest.json").read_bytes())
    assert manifest["commit"] == commits["v2"]  # the manifest names the crawled commit
    for record in by_template(dataset).values():
        assert record["provenance"]["commit"] == commits["v1"]
        assert "errcat_version" not in record["provenance"]
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_moving_one_raise_changes_exactly_its_record(releases, cli, tmp_path):
    repo, commits = releases
    out = tmp_path / "out"
    dataset = crawl(cli, repo, out, "v1")
    crawl(cli, repo, out, "v2")
    before = record_files(dataset)
    crawl(cli, repo, out, "v3")
    after = record_files(dataset)
    changed = {rid for rid in before if before[rid] != after[rid]}
    records = by_template(dataset)
    assert changed == {records["nothing to store"]["id"]}
    moved = records["nothing to store"]
    assert moved["provenance"]["commit"] == commits["v3"]
    assert moved["location"]["permalink"].endswith(f"/blob/{commits['v3']}/pkg/b.py#L10")
    assert records["a name is needed"]["provenance"]["commit"] == commits["v1"]
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_a_kept_record_validates_and_links_to_its_commit(releases, cli, tmp_path):
    """A record kept from an older commit is what a crawl of that commit wrote: valid, with every
    permalink on the older commit, where the code it shows is at the lines it names."""
    repo, commits = releases
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    crawl(cli, repo, out, "v1")
    dataset = crawl(cli, repo, out, "v3")
    at_v1 = record_files(crawl(cli, repo, fresh, "v1"))
    for rid, data in record_files(dataset).items():
        record = json.loads(data)
        if record["message"]["text"] == "nothing to store":
            continue
        assert data == at_v1[rid]
        links = [record["location"]["permalink"], *(s["permalink"] for s in record["sites"])]
        assert all(f"/blob/{commits['v1']}/" in link for link in links), links
        site = record["sites"][0]
        shown = git(repo.path, "show", f"{commits['v1']}:{site['path']}").splitlines()
        snippet = site["snippet"]
        assert "\n".join(shown[snippet["start_line"] - 1 : snippet["end_line"]]) == snippet["code"]
    assert cli("validate", out).exit_code == 0
    assert cli("show", "--data", out, json.loads(next(iter(record_files(dataset).values())))["id"]).exit_code == 0


def _side_commit(repo, base: str) -> str:
    """A commit the repository has that is not an ancestor of v2 (a branch off v1)."""
    git(repo.path, "checkout", "-q", "-b", "side", base)
    side = repo.commit({"pkg/side.py": "X = 1\n"}, date="1767409000 +0000")
    git(repo.path, "checkout", "-q", "main")
    return side


def _set_commit(commit_of):
    def damage(path: Path, repo, commits) -> None:
        record = json.loads(path.read_bytes())
        record["provenance"]["commit"] = commit_of(repo, commits)
        record["provenance"]["permalinks"]["rev"] = record["provenance"]["commit"]
        path.write_bytes(json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n")

    return damage


def _edit_in_place(path: Path) -> None:
    """The same file (inode), the same size and modification time, other bytes: only its change
    time tells (the crawl's record memo must not take it for the file it wrote)."""
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b'"raise"', b'"RAISE"', 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_ino, path.stat().st_size, path.stat().st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)


DAMAGES = {
    "garbage": lambda path, repo, commits: path.write_bytes(b"{not json"),
    "content edited": lambda path, repo, commits: path.write_bytes(path.read_bytes().replace(b'"raise"', b'"assert"', 1)),
    "edited in place, same size and time": lambda path, repo, commits: _edit_in_place(path),
    "a commit the repository lacks": _set_commit(lambda repo, commits: "f" * 40),
    "a commit that is not an ancestor": _set_commit(lambda repo, commits: _side_commit(repo, commits["v1"])),
    "a later date": lambda path, repo, commits: path.write_bytes(path.read_bytes().replace(b"2026-01-02", b"2026-01-01")),
    "a symlink": lambda path, repo, commits: (path.unlink(), path.symlink_to(path.parent.parent / "manifest.json")),
    "a directory": lambda path, repo, commits: (path.unlink(), path.mkdir()),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_previous_record_gives_the_fresh_one(releases, cli, tmp_path, damage):
    repo, commits = releases
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    dataset = crawl(cli, repo, out, "v1")
    target = dataset / "errors" / f"{by_template(dataset)['a name is needed']['id']}.json"
    DAMAGES[damage](target, repo, commits)
    crawl(cli, repo, out, "v2")
    fresh_files = record_files(crawl(cli, repo, fresh, "v2"))
    files = record_files(dataset)
    assert files[target.stem] == fresh_files[target.stem]  # pinned at v2, as if there were no previous dataset
    assert json.loads(files[target.stem])["provenance"]["commit"] == commits["v2"]
    others = {rid for rid in files if rid != target.stem}
    assert all(json.loads(files[rid])["provenance"]["commit"] == commits["v1"] for rid in others)
    assert not os.path.islink(target) and cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_a_damaged_previous_manifest_gives_fresh_records(releases, cli, tmp_path):
    repo, commits = releases
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    dataset = crawl(cli, repo, out, "v1")
    (dataset / "manifest.json").write_text('{"repo": "elsewhere"}')
    crawl(cli, repo, out, "v2")
    assert record_files(dataset) == record_files(crawl(cli, repo, fresh, "v2"))


@pytest.mark.slow
def test_kept_records_are_the_same_whatever_the_jobs_and_cache(releases, cli, tmp_path, monkeypatch):
    """The forked writers and the serial one keep the same records; --no-cache writes them anew
    (no file linked from the previous dataset) with the same bytes: every file of the dataset is
    the same, whether the crawl compared the files in place with what it made or took the record
    memo's digests for them (v2, then v3: the memo of a dataset that itself kept records)."""
    from crawler.publish import writer
    from crawler.publish.writer import read_dataset

    monkeypatch.setattr(writer, "PARALLEL_MIN_RECORDS", 1)
    repo, _ = releases
    results = []
    for n, extra in enumerate([("--jobs", "1"), ("--jobs", "2"), ("--no-cache",)]):
        out = tmp_path / f"out{n}"
        dataset = crawl(cli, repo, out, "v1", *extra)
        inodes = {p.name: p.stat().st_ino for p in (dataset / "errors").iterdir()}
        hold = tmp_path / f"hold{n}"  # v1's files stay alive, so a new file cannot get one of their inode numbers
        hold.mkdir()
        for p in (dataset / "errors").iterdir():
            os.link(p, hold / p.name)
        crawl(cli, repo, out, "v2", *extra)
        crawl(cli, repo, out, "v3", *extra)
        results.append(read_dataset(dataset))
        same = {p.name for p in (dataset / "errors").iterdir() if p.stat().st_ino == inodes.get(p.name)}
        assert (len(same) == 3) if extra != ("--no-cache",) else not same
    assert results[0] == results[1] == results[2]


@pytest.mark.slow
def test_sync_changes_only_the_records_whose_error_changed(fixture_repo, cli, tmp_path):
    """The scheduled sync: a comment upstream changes no record file; a moved raise changes its
    record alone; a live record's history does not name the newest commit (the manifest does)."""
    repo = fixture_repo
    repo.commit({"pkg/__init__.py": "", "pkg/a.py": A, "pkg/b.py": B}, date="1767323045 +0000")
    out = tmp_path / "out"

    def sync() -> Path:
        result = cli("sync", "--repo", repo.path, *ARGS, "--out", out)
        assert result.exit_code == 0, result.output
        return out / "acme" / "widgets"

    dataset = sync()
    before = record_files(dataset)
    repo.commit({"pkg/a.py": A + "\n\n\n\n\n\n\n\n# a comment\n"}, date="1767409445 +0000")
    assert record_files(sync()) == before
    third = repo.commit({"pkg/b.py": B_MOVED}, date="1767495845 +0000")
    after = record_files(sync())
    records = by_template(dataset)
    assert {rid for rid in before if before[rid] != after[rid]} == {records["nothing to store"]["id"]}
    assert records["nothing to store"]["provenance"]["commit"] == third
    assert all(r["history"]["last_seen"] is None and r["history"]["first_seen"] for r in records.values())
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_history_keeps_the_records_of_the_dataset_in_place(releases, cli, tmp_path):
    repo, commits = releases
    out = tmp_path / "out"
    assert cli("history", "--repo", repo.path, *ARGS, "--out", out, "v1", "v2").exit_code == 0
    dataset = out / "acme" / "widgets"
    before = record_files(dataset)
    result = cli("history", "--repo", repo.path, *ARGS, "--out", out, "v1", "v2", "v3")
    assert result.exit_code == 0, result.output
    after = record_files(dataset)
    records = by_template(dataset)
    assert {rid for rid in before if before[rid] != after[rid]} == {records["nothing to store"]["id"]}
    assert records["a name is needed"]["provenance"]["commit"] == commits["v2"]


def test_pin_returns_the_pinned_records_and_leaves_its_input_alone():
    import copy

    from crawler.base.jsonio import dumps_record
    from crawler.catalogue.entries import build_records
    from crawler.publish.dataset import PreviousRecord
    from crawler.publish.pins import pin, repin
    from tests.consumer_data import IDENTITY, SITES

    records = build_records(IDENTITY, SITES[:2], {})
    before = copy.deepcopy(records)
    older, date = "b" * 40, "2020-01-01T00:00:00+00:00"
    old_file = dumps_record(repin(records[0], IDENTITY, older, date))
    previous = {records[0]["id"]: PreviousRecord(old_file, (0, 0))}
    pinned, kept, *_ = pin(records, previous, IDENTITY, {older: date}.get)
    assert records == before
    assert list(kept) == [records[0]["id"]]
    assert dumps_record(pinned[0]) == old_file and pinned[0]["provenance"]["commit"] == older
    assert pinned[1] is records[1]


def test_a_changed_record_does_not_keep_the_unchanged_ones_after_it_from_their_pin():
    """Records pinned at the same older commit: the first one changed since, the others did not.
    Each unchanged one is kept at that commit (the first record's miss once hid the pin from all
    the records after it, and a release-to-release sync rewrote every record file)."""
    from crawler.base.jsonio import dumps_record
    from crawler.catalogue.entries import build_records
    from crawler.publish.dataset import PreviousRecord
    from crawler.publish.pins import pin, repin
    from tests.consumer_data import IDENTITY, SITES

    records = build_records(IDENTITY, SITES[:3], {})
    older, date = "b" * 40, "2020-01-01T00:00:00+00:00"
    files = [dumps_record(repin(r, IDENTITY, older, date)) for r in records]
    changed = json.loads(files[0])
    changed["message"]["text"] += " (reworded since)"
    files[0] = json.dumps(changed).encode()
    previous = {r["id"]: PreviousRecord(f, (0, 0)) for r, f in zip(records, files, strict=True)}
    pinned, kept, *_ = pin(records, previous, IDENTITY, {older: date}.get)
    assert sorted(kept) == sorted(r["id"] for r in records[1:])
    assert pinned[0]["provenance"]["commit"] == IDENTITY.commit
    assert [dumps_record(p) for p in pinned[1:]] == files[1:]


@pytest.mark.slow
def test_a_record_file_edited_in_place_after_it_was_compared_is_not_linked(releases, cli, tmp_path, monkeypatch):
    """A kept record's file is compared when the crawl starts and linked when it writes: one
    edited in place in between (the same inode, new bytes) is written afresh, not linked with its
    edit into the new dataset."""
    import crawler.crawl
    from crawler.publish.writer import read_dataset

    repo, _ = releases
    dataset = crawl(cli, repo, tmp_path / "out", "v1")
    real = crawler.crawl.publish

    def edited_first(*a, **k):
        for path in (dataset / "errors").iterdir():
            with open(path, "r+b") as fh:  # in place: the inode stays
                fh.seek(0, 2)
                fh.write(b" ")
        return real(*a, **k)

    monkeypatch.setattr(crawler.crawl, "publish", edited_first)
    crawl(cli, repo, tmp_path / "out", "v2")
    monkeypatch.setattr(crawler.crawl, "publish", real)
    crawl(cli, repo, tmp_path / "fresh", "v1")
    fresh = crawl(cli, repo, tmp_path / "fresh", "v2")
    assert read_dataset(dataset) == read_dataset(fresh)
    assert cli("validate", tmp_path / "out").exit_code == 0
