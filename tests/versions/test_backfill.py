"""A backfill over many machines: per-release datasets (``history --per-release``), folded later
(``history --fold``) into the same history a single run writes; ``--plan`` splits the releases
for a workflow's matrix, ``errcat upstreams`` lists the sync workflow's matrix."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil

import pytest
from helpers import CHECK_CODE

from crawler.base.errors import SourceError

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
V1 = CHECK_CODE
V2 = V1.replace("must be positive", "must be strictly positive")
V3 = V2.replace("far too large", "much too large") + "\n\ndef load(p):\n    raise FileNotFoundError(f'no such widget file: {p}')\n"
TAGS = ["v1.9", "v1.10", "v2.0"]  # v1.10 after v1.9: version order, not the names' order


def tree(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def releases(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": V1}, tag="v1.9")
    fixture_repo.commit({"pkg/a.py": V2}, tag="v1.10")
    fixture_repo.commit({"pkg/a.py": V3}, tag="v2.0")
    return fixture_repo


@pytest.mark.slow
def test_per_release_datasets_folded_anywhere_give_the_history_of_one_run(fixture_repo, cli, tmp_path):
    repo = releases(fixture_repo)
    one = cli("history", "--repo", repo.path, *ARGS, "--out", tmp_path / "one", *TAGS)
    assert one.exit_code == 0, one.output
    # Two "matrix jobs", each with its own releases and directory, in no particular order.
    for job, refs in (("job-b", ["v2.0"]), ("job-a", ["v1.9", "v1.10"])):
        result = cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / job, *refs)
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "job-a").iterdir()) == ["v1.10", "v1.9"]
    assert (tmp_path / "job-a" / "v1.9" / "acme" / "widgets" / "manifest.json").is_file()
    folded = cli("history", "--fold", tmp_path / "job-b", tmp_path / "job-a", "--out", tmp_path / "folded", "--changelog", tmp_path / "changelog.md")
    assert folded.exit_code == 0, folded.output
    assert folded.stdout == one.stdout
    assert tree(tmp_path / "folded") == tree(tmp_path / "one")
    changelog = (tmp_path / "changelog.md").read_text()
    assert changelog.startswith("## Error catalogue: `acme/widgets` history") and "3 version(s), `v1.9 … v2.0`" in changelog


@pytest.mark.slow
def test_a_fold_refuses_what_it_cannot_order_or_join(fixture_repo, cli, tmp_path):
    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", "v1.9", "v2.0").exit_code == 0
    assert cli("crawl", "--repo", repo.path, *ARGS, "--out", tmp_path / "head").exit_code == 0
    result = cli("history", "--fold", tmp_path / "r", tmp_path / "head", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "no release: a fold orders datasets by release" in result.output
    shutil.copytree(tmp_path / "r" / "v2.0", tmp_path / "again" / "v2.0")
    result = cli("history", "--fold", tmp_path / "r", tmp_path / "again", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "two datasets of v2.0" in result.output
    record = next((tmp_path / "r" / "v1.9" / "acme" / "widgets" / "errors").iterdir())
    record.write_text("{}")  # a dataset is untrusted input: validated as it is read
    jsonl = tmp_path / "r" / "v1.9" / "acme" / "widgets" / "errors.jsonl.gz"
    lines = gzip.decompress(jsonl.read_bytes()).decode().splitlines()
    jsonl.write_bytes(gzip.compress(("\n".join(["{}", *lines[1:]]) + "\n").encode()))
    restamp(jsonl.parent)  # its digest made to fit: the records themselves are still checked
    result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o")
    assert result.exit_code == 1 and "not a valid record" in result.output
    assert not (tmp_path / "o").exists()
    result = cli("history", "--fold", tmp_path / "nowhere")
    assert result.exit_code == 2 and "no such directory" in result.output


@pytest.mark.slow
def test_plan_splits_the_releases_into_matrix_groups(fixture_repo, cli, tmp_path, monkeypatch):
    repo = releases(fixture_repo)
    output = tmp_path / "github_output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    result = cli("history", "--repo", repo.path, *ARGS, "--range", "v1.9..v2.0", "--plan", "2")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == ["v1.9 v1.10", "v2.0"]
    assert output.read_text() == 'groups=["v1.9 v1.10","v2.0"]\n'
    result = cli("history", "--repo", repo.path, *ARGS, "--plan", "5", "v1.9", "main")
    assert result.exit_code == 2 and "'main' is not a release tag" in result.output


def test_upstreams_lists_the_configured_upstreams_for_the_matrix(cli, tmp_path, monkeypatch):
    config = tmp_path / "errcat.toml"
    config.write_text('[upstreams.widgets]\nurl = "https://github.com/acme/widgets"\n[upstreams.gadgets]\nurl = "https://github.com/acme/gadgets"\n')
    result = cli("upstreams", "--config", config, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == ["gadgets", "vllm", "widgets"]
    assert cli("upstreams", "--config", config).stdout == "gadgets\nvllm\nwidgets\n"
    config.write_text('[upstreams."a b"]\nurl = "https://github.com/acme/widgets"\n')
    result = cli("upstreams", "--config", config, "--json")
    assert result.exit_code == 2 and "cannot name a workflow job" in result.output


def test_a_remote_range_is_the_release_tags_between_by_version(monkeypatch):
    """A remote upstream has no history without a clone: its range is the tags whose versions lie
    between the two ends (what `git ls-remote --tags` lists), oldest first."""
    from crawler.versions import tags
    from crawler.versions.sides import SourceOptions

    listed = [("v0.8.5", "a" * 40), ("v0.9.0", "b" * 40), ("v0.9.1", "c" * 40), ("v0.10.0", "d" * 40), ("v0.11.0", "e" * 40)]
    monkeypatch.setattr(tags, "_git_for", lambda source: (None, "https://github.com/acme/widgets", None))
    monkeypatch.setattr(tags, "list_tags", lambda source, pattern: listed)
    source = SourceOptions(repo="https://github.com/acme/widgets")
    assert tags.tags_in_range(source, "v0.9.0..v0.10.0") == ["v0.9.0", "v0.9.1", "v0.10.0"]
    with pytest.raises(SourceError, match="unknown release tag 'v0.12.0'"):
        tags.tags_in_range(source, "v0.9.0..v0.12.0")


@pytest.mark.slow
def test_a_fold_reads_records_as_checked_data_not_models(fixture_repo, cli, tmp_path, monkeypatch):
    """A fold reads every record of every release: as schema-checked dicts (what the crawl passes),
    never a model built per record and dumped again (1.7 s of CPU per vLLM release, against 0.5 s)."""
    from crawler.model.records import Record

    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--out", tmp_path / "one", *TAGS).exit_code == 0
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    built = []
    real = Record.model_validate_json.__func__

    def counted(cls, *a, **k):
        built.append(cls)
        return real(cls, *a, **k)

    monkeypatch.setattr(Record, "model_validate_json", classmethod(counted))
    folded = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "folded")
    assert folded.exit_code == 0, folded.output
    assert built == [] and tree(tmp_path / "folded") == tree(tmp_path / "one")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda line: line.replace(b'"permalink":"https://github.com/', b'"permalink":"https://github.evil.example/', 1),
            "is not on the repository's host github.com",
        ),
        (lambda line: line.replace(b'"owner":"acme"', b'"owner":"other"', 1), "of another repository than the manifest's"),
        (lambda line: line.replace(b'"sites":[', b'"sites":7,"x":[', 1), "not a valid record"),
        (lambda line: line[:-5], "not a valid record"),
        (lambda line: line + b"\n" + line, "errors.jsonl.gz:2: id "),  # occurs twice
    ],
)
def test_a_fold_holds_each_record_line_to_the_record_rules(fixture_repo, cli, tmp_path, edit, message):
    """Read as data, a per-release dataset (another job's, untrusted) is still held to what the
    record model holds: the schema, its repository, links on that repository, ids once."""
    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    jsonl = tmp_path / "r" / "v1.10" / "acme" / "widgets" / "errors.jsonl.gz"
    first, *rest = gzip.decompress(jsonl.read_bytes()).split(b"\n")
    jsonl.write_bytes(gzip.compress(b"\n".join([edit(first), *rest])))
    restamp(jsonl.parent)  # its digest made to fit: the record lines themselves are still checked
    result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert message in result.output and "errors.jsonl.gz:" in result.output
    assert not (tmp_path / "o").exists()


def restamp(dataset):
    """Make the manifest's content digest fit the files again, as whoever edited them could."""
    from crawler.publish.writer import content_digest

    files = {p.relative_to(dataset).as_posix(): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file()}
    manifest = json.loads(files["manifest.json"])
    manifest["content_digest"] = content_digest(files)
    (dataset / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def _edit_a_record(ds, records):
    records[0].write_bytes(records[0].read_bytes().replace(b"must be", b"should be"))


def _cut_the_records_short(ds, records):
    packed = ds / "errors.jsonl.gz"
    packed.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) // 2])


def _add_a_file(ds, records):
    (ds / "evil.sh").write_text("echo pwned\n")


def _add_a_record_file(ds, records):
    (ds / "errors" / ("f" * 16 + ".json")).write_bytes(records[0].read_bytes())
    restamp(ds)


def _a_symlinked_record(ds, records):
    elsewhere = ds.parent.parent.parent / "elsewhere.json"
    elsewhere.write_bytes(records[0].read_bytes())
    records[0].unlink()
    records[0].symlink_to(elsewhere)


def _a_symlinked_dataset(ds, records):
    elsewhere = ds.parent.parent.parent.parent / "elsewhere"
    shutil.move(ds, elsewhere)
    ds.symlink_to(elsewhere, target_is_directory=True)


def _swap_two_records(ds, records):
    first, second = records[0].read_bytes(), records[1].read_bytes()
    records[0].write_bytes(second)
    records[1].write_bytes(first)
    restamp(ds)


def _a_fifo_for_a_record(ds, records):
    records[0].unlink()
    os.mkfifo(records[0])  # (a read of it would wait for a writer)


def _a_directory_for_a_record(ds, records):
    records[0].unlink()
    records[0].mkdir()


def _a_line_twice(ds, records):
    packed = ds / "errors.jsonl.gz"
    lines = gzip.decompress(packed.read_bytes()).splitlines(keepends=True)
    packed.write_bytes(gzip.compress(b"".join([*lines, lines[0]])))
    restamp(ds)


def _a_name_with_a_newline(ds, records):
    records[0].rename(records[0].with_name(records[0].name + "\n::error::x\x1b[2J"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (_a_fifo_for_a_record, r"v1.10 (.*): errors/[0-9a-f]{16}.json is not a regular file, not a file a dataset has"),
        (_a_directory_for_a_record, r"v1.10 (.*): errors/[0-9a-f]{16}.json is a directory, not a file a dataset has"),
        (_a_line_twice, r"v1.10/acme/widgets/errors.jsonl.gz:\d+: id [0-9a-f]{16} occurs twice"),
        (_a_name_with_a_newline, r"v1.10 (.*): errors/[0-9a-f]{16}.json\\n::error::x\\x1b\[2J is not a file a dataset has$"),
        (_edit_a_record, "v1.10 (.*): its files do not hash to its manifest's content_digest"),
        (_cut_the_records_short, "v1.10 (.*): its files do not hash to its manifest's content_digest"),
        (_add_a_file, r"v1.10 (.*): evil.sh is not a file a dataset has"),
        (_add_a_record_file, r"v1.10 (.*): errors/ffffffffffffffff.json is a record errors.jsonl.gz does not hold"),
        (_a_symlinked_record, r"errors/[0-9a-f]{16}.json is a symlink; a fold reads only directories and regular files"),
        (_a_symlinked_dataset, r"v1.10/acme/widgets is a symlink; a fold reads only directories and regular files"),
        (_swap_two_records, r"v1.10 (.*): errors/[0-9a-f]{16}.json is not the record errors.jsonl.gz holds for"),
    ],
    ids=lambda v: getattr(v, "__name__", "")[1:] or None,
)
def test_a_fold_holds_each_release_to_its_own_manifest(fixture_repo, cli, tmp_path, tamper, message):
    """A per-release dataset is another machine's (a backfill job's artifact): before it is folded,
    its files must be the ones its manifest's digest names, in the layout a crawl writes (regular
    files, no symlink), each record file the record of its name; else one line naming the release,
    exit 1, and the history in place stays as it was."""
    import re

    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    assert cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o").exit_code == 0
    before = tree(tmp_path / "o")
    ds = tmp_path / "r" / "v1.10" / "acme" / "widgets"
    tamper(ds, sorted((ds / "errors").iterdir()))
    result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("errcat:")]
    assert re.search(message, line), line
    assert tree(tmp_path / "o") == before


@pytest.mark.slow
def test_a_fold_goes_by_the_manifest_it_checked(fixture_repo, cli, tmp_path):
    """The fold reads the manifests first (to order the releases), then checks each dataset's files:
    a manifest.json changed between the two (another process, a second artifact unpacked over the
    first) is not the one checked, so the release is refused rather than folded under the first."""
    from crawler.base.errors import DataError
    from crawler.publish.dataset import load_manifest
    from crawler.versions.fold_check import check_release

    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    ds = tmp_path / "r" / "v1.10" / "acme" / "widgets"
    read_first = load_manifest(ds)
    assert check_release(ds, read_first)  # (as it is, it passes)
    claimed = read_first.model_copy(update={"ref": "v1.9"})  # the same content_digest, another release
    with pytest.raises(DataError, match=r"v1.9 \(.*\): its manifest.json is not the one read before"):
        check_release(ds, claimed)


@pytest.mark.slow
def test_a_record_file_read_again_must_be_the_bytes_checked(fixture_repo, cli, tmp_path):
    """The check keeps a digest of each record file, not its bytes: a line that is its file's
    record as a crawl writes it is that file by the digest; any other has its file read again,
    which must be the bytes hashed (a file changed since is refused), and then compared as data."""
    from crawler.base.errors import DataError
    from crawler.publish.dataset import iter_record_data, load_manifest
    from crawler.versions.fold_check import check_release, matching

    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    ds = tmp_path / "r" / "v1.10" / "acme" / "widgets"
    manifest = load_manifest(ds)
    records = list(iter_record_data(ds, manifest))
    digests = check_release(ds, manifest)
    assert all(len(d) == 32 for d in digests.values()) and list(matching(iter(records), dict(digests), "v1.10", ds)) == records
    changed = {**records[0], "title": records[0]["title"] + " (changed)"}
    with pytest.raises(DataError, match="is not the record errors.jsonl.gz holds for"):
        list(matching(iter([changed]), dict(digests), "v1.10", ds))
    file = ds / "errors" / f"{records[0]['id']}.json"
    file.write_bytes(file.read_bytes() + b" ")
    with pytest.raises(DataError, match="changed while the release was folded"):
        list(matching(iter([changed]), dict(digests), "v1.10", ds))


@pytest.mark.slow
def test_a_fold_reads_a_release_within_bounds(fixture_repo, cli, tmp_path, monkeypatch):
    """A release is read whole (hashed) before any of it is folded: a record file larger than the
    dataset reader takes one, or files larger than a release's together (sparse files cost no
    disk; an artifact's zip of zeros unpacks a thousandfold), stop it before they are read."""
    from crawler.versions import fold_check

    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    ds = tmp_path / "r" / "v1.10" / "acme" / "widgets"
    record = sorted((ds / "errors").iterdir())[0]
    with record.open("r+b") as fh:
        fh.truncate(32 * 2**20)  # sparse: 32 MiB of nothing on disk
    result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o")
    assert result.exit_code == 1 and re.search(rf"v1.10 \(.*\): {record.name} is larger than a dataset's file may be$", result.output.strip()), result.output
    record.unlink()
    first = tmp_path / "r" / "v1.9" / "acme" / "widgets"
    monkeypatch.setattr(fold_check, "MAX_TOTAL_BYTES", sum(p.stat().st_size for p in first.rglob("*") if p.is_file()) - 1, raising=False)
    result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o")
    assert result.exit_code == 1, result.output
    assert re.search(r"release v1.9 \(.*\): its files are larger than a release's may be together$", result.output.strip())
    assert not (tmp_path / "o").exists()


def _live_and_retired(dataset):
    records = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    return {r["id"]: r for r in records}


@pytest.mark.slow
def test_a_fold_goes_behind_the_catalogue_in_place_and_never_rolls_it_back(fixture_repo, cli, tmp_path):
    """A backfill merged after daily syncs: the catalogue the syncs made stays the newest state
    (its records, what they retired, its commit), with the releases' history behind it; the next
    sync has nothing to do. Before, the fold wrote v2.0's catalogue over it."""
    repo = releases(fixture_repo)
    out = tmp_path / "output"
    # Two daily syncs past v2.0 on the branch: the first (the catalogue's first state) has the
    # positive check reworded since v2.0 and the overflow check gone, the second retires the reworded load error, adding its successor.
    here = V3.replace("strictly positive", "strictly positive here").replace('raise OverflowError("x is much too large")', "return 10")
    assert here.count("return 10") == 1
    repo.commit({"pkg/b.py": "def b(n):\n    raise KeyError(f'no gadget {n}')\n", "pkg/a.py": here})
    assert cli("sync", "--repo", repo.path, *ARGS, "--out", out).exit_code == 0
    head = repo.commit({"pkg/a.py": here.replace("no such widget file", "no widget file")})
    assert cli("sync", "--repo", repo.path, *ARGS, "--out", out).exit_code == 0
    catalogue = out / "acme" / "widgets"
    before = _live_and_retired(catalogue)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0

    folded = cli("history", "--fold", tmp_path / "r", "--catalogue", out, "--out", tmp_path / "backfill", "--changelog", tmp_path / "changelog.md")
    assert folded.exit_code == 0, folded.output
    after = _live_and_retired(tmp_path / "backfill" / "acme" / "widgets")
    manifest = json.loads((tmp_path / "backfill" / "acme" / "widgets" / "manifest.json").read_text())
    assert manifest["commit"] == head  # not v2.0's
    live = {rid for rid, r in before.items() if not r["history"]["retired"]}
    assert {rid for rid, r in after.items() if not r["history"]["retired"]} == live
    for rid, record in before.items():  # every record the syncs wrote, as they wrote it but for its history
        assert {k: v for k, v in after[rid].items() if k != "history"} == {k: v for k, v in record.items() if k != "history"}
        mine, theirs = after[rid]["history"], record["history"]
        assert {k: mine[k] for k in ("retired", "removed_in", "replaced_by", "last_seen")} == {
            k: theirs[k] for k in ("retired", "removed_in", "replaced_by", "last_seen")
        }
    by_message = {r["message"]["text"]: r for r in after.values()}
    # First seen in the releases now, not at the syncs' first commit.
    assert by_message["x is far too large"]["history"]["first_seen"]["version"] == "v1.9"
    assert by_message["x is far too large"]["history"]["retired"] is True  # retired by v2.0, in the fold
    assert by_message["x is far too large"]["history"]["removed_in"]["version"] == "v2.0"
    reworded = [r for r in after.values() if r["message"]["text"].startswith("no such widget file")]
    assert len(reworded) == 1 and reworded[0]["history"]["first_seen"]["version"] == "v2.0"
    assert reworded[0]["history"]["retired"] and reworded[0]["history"]["removed_in"]["commit"] == head
    # v2.0's wording the catalogue never knew: retired after v2.0, linked to the catalogue's new wording.
    gone, successor = by_message["x must be strictly positive, got {x}"], by_message["x must be strictly positive here, got {x}"]
    assert successor["history"]["first_seen"] == before[successor["id"]]["history"]["first_seen"]  # the catalogue's own
    assert gone["history"]["retired"] and gone["history"]["removed_in"] == successor["history"]["first_seen"]
    assert gone["history"]["replaced_by"] == successor["id"] and successor["history"]["replaces"] == [gone["id"]]
    # One v2.0 had and the catalogue never knew, with no successor: removed after v2.0, by the catalogue's commit.
    unpaired = by_message["x is much too large"]["history"]
    assert unpaired["retired"] and unpaired["removed_in"]["commit"] == head and unpaired["retired_note"] == f"removed after v2.0, by {head[:12]}"
    assert "Folded behind the catalogue in place" in (tmp_path / "changelog.md").read_text()
    # Merged: the next sync finds the catalogue up to date, and re-lists nothing.
    shutil.rmtree(catalogue)
    shutil.copytree(tmp_path / "backfill" / "acme" / "widgets", catalogue)
    again = cli("sync", "--repo", repo.path, *ARGS, "--out", out)
    assert again.exit_code == 0 and "changed=false" in again.stdout, again.output


@pytest.mark.slow
def test_a_fold_refuses_a_catalogue_in_place_older_than_its_newest_release(fixture_repo, cli, tmp_path):
    repo = releases(fixture_repo)
    out = tmp_path / "output"
    assert cli("sync", "--repo", repo.path, *ARGS, "--ref", "v1.10", "--out", out).exit_code == 0
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", *TAGS).exit_code == 0
    result = cli("history", "--fold", tmp_path / "r", "--catalogue", out, "--out", tmp_path / "backfill")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "(v1.10, " in result.output and "is older than v2.0, the range's newest release" in result.output
    assert not (tmp_path / "backfill").exists()
    # Without a catalogue there (a first backfill), the fold writes the newest release's, as before.
    result = cli("history", "--fold", tmp_path / "r", "--catalogue", tmp_path / "empty", "--out", tmp_path / "first")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "first" / "acme" / "widgets" / "manifest.json").read_text())["ref"] == "v2.0"
