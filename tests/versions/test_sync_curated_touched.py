"""What the sync's pull request and ``errcat curate check`` tell a maintainer about the reviewed
texts an upstream change touches: an entry with a reviewed text that upstream removed (its page
keeps the text for the releases that raise it) or reworded (its successor's page shows none of it
until the text is moved or written for it), each with the command that settles it."""

from __future__ import annotations

import json

import pytest
from helpers import CHECK_CODE, jsonl_bytes, write_jsonl

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]


def _reviewed(cli, out, eid):
    data = out / "acme" / "widgets"
    for step in (["draft", eid], ["review", eid, "--read-and-accept-as-is"]):
        done = cli("curate", *step, "--data", data)
        assert done.exit_code == 0, done.output


@pytest.mark.slow
def test_a_sync_that_removes_and_rewords_reviewed_entries_says_what_to_do_with_their_texts(fixture_repo, cli, tmp_path, monkeypatch):
    (tmp_path / "curated").mkdir()  # the working directory holds curated/: it is the errcat home
    monkeypatch.chdir(tmp_path)
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    out, changelog = tmp_path / "out", tmp_path / "changelog.md"
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0
    ids = {r["message"]["text"]: r["id"] for r in map(json.loads, jsonl_bytes(out / "acme" / "widgets").splitlines())}
    positive, large = ids["x must be positive, got {x}"], ids["x is far too large"]
    _reviewed(cli, out, positive)
    _reviewed(cli, out, large)
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0  # the reviewed texts merged

    fixture_repo.commit(
        {"pkg/a.py": CHECK_CODE.replace("far too large", "much too large").replace('raise ValueError(f"x must be positive, got {x}")', "return 0")}
    )
    synced = cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out, "--changelog", changelog)
    assert synced.exit_code == 0, synced.output
    text = changelog.read_text()
    new = {r["message"]["text"]: r["id"] for r in map(json.loads, jsonl_bytes(out / "acme" / "widgets").splitlines())}["x is much too large"]
    section = text[text.index("### Curated texts to look at (2)") : text.index("### Error removed")]
    assert f"`errcat curate retire {positive}`" in section and f"`{positive}` (`x must be positive, got {{x}}`) was removed upstream" in section
    assert f"`errcat curate move {large} {new}`" in section
    assert text.index("| Change | Count |") < text.index("### Curated texts to look at")  # after the counts, before the lists

    checked = cli("curate", "check", "--data", out)
    assert checked.exit_code == 0, checked.output  # listed, not failed: the retired page still shows the text
    gone = [line for line in checked.stdout.splitlines() if line.strip().startswith("gone ")]
    assert len(gone) == 1 and positive in gone[0] and f"errcat curate retire {positive}" in gone[0]
    assert any(line.strip().startswith("reworded ") and f"errcat curate move {large} {new}" in line for line in checked.stdout.splitlines())
    assert "1 gone" in checked.stdout
    assert cli("curate", "check", "--strict", "--data", out).exit_code == 1  # strict fails it, as it fails a stale text

    retired = cli("curate", "retire", positive, "--data", out)
    assert retired.exit_code == 0, retired.output
    assert not [line for line in cli("curate", "check", "--data", out).stdout.splitlines() if line.strip().startswith("gone ")]


def test_a_changelog_names_no_curated_text_when_none_is_touched(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    out, changelog = tmp_path / "out", tmp_path / "changelog.md"
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0
    fixture_repo.commit({"pkg/a.py": CHECK_CODE.replace("far too large", "much too large")})
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out, "--changelog", changelog).exit_code == 0
    assert "Curated texts" not in changelog.read_text() and "### Message reworded (1)" in changelog.read_text()


@pytest.mark.slow
def test_a_dataset_title_of_any_length_keeps_the_curated_section_within_the_changelog_budget(fixture_repo, cli, tmp_path, monkeypatch):
    # the dataset in place is hostile: a title edited to 70,000 characters must not carry the pull
    # request's body past GitHub's 65,536 (the changelog's budget holds every other section to 60,000)
    (tmp_path / "curated").mkdir()
    monkeypatch.chdir(tmp_path)
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    out, changelog = tmp_path / "out", tmp_path / "changelog.md"
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0
    data = out / "acme" / "widgets"
    ids = {r["message"]["text"]: r["id"] for r in map(json.loads, jsonl_bytes(data).splitlines())}
    positive = ids["x must be positive, got {x}"]
    _reviewed(cli, out, positive)
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0
    long_title = "A" * 70_000
    lines = []
    for line in jsonl_bytes(data).splitlines():
        record = json.loads(line)
        if record["id"] == positive:
            record["title"] = long_title
            page = data / "errors" / f"{positive}.json"
            on_disk = json.loads(page.read_text())
            on_disk["title"] = long_title
            page.write_text(json.dumps(on_disk))
        lines.append(json.dumps(record).encode())
    write_jsonl(data, b"\n".join(lines) + b"\n")

    fixture_repo.commit({"pkg/a.py": CHECK_CODE.replace('raise ValueError(f"x must be positive, got {x}")', "return 0")})
    synced = cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out, "--changelog", changelog)
    assert synced.exit_code == 0, synced.output
    text = changelog.read_text()
    assert "### Curated texts to look at (1)" in text and f"`errcat curate retire {positive}`" in text
    assert len(text) < 65_536, len(text)
