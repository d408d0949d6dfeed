"""errcat sync: follow an upstream, say whether anything changed, carry history forward."""

from __future__ import annotations

import json

import pytest
from helpers import CHECK_CODE, jsonl_bytes, release_tree

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

CODE = CHECK_CODE


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CODE})
    return fixture_repo


def sync(cli, upstream, out, *extra):
    return cli("sync", "--repo", upstream.path, *ARGS, "--out", out, *extra)


@pytest.mark.slow
def test_sync_follows_the_upstream(upstream, cli, tmp_path, monkeypatch):
    out, changelog = tmp_path / "out", tmp_path / "changelog.md"
    github_output = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    first = upstream.repo.head.commit.hexsha

    result = sync(cli, upstream, out, "--changelog", changelog)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"changed=true commit={first}")
    assert "First catalogue of `" in changelog.read_text() and "2 entries" in changelog.read_text()
    assert github_output.read_text() == f"changed=true\ncommit={first}\ndataset=acme/widgets\n"

    again = sync(cli, upstream, out, "--changelog", changelog, "--exit-code")
    assert again.exit_code == 0 and again.stdout.startswith("changed=false")
    assert "up to date" in again.stderr and "crawling" not in again.stderr  # resolved, not crawled
    assert github_output.read_text().endswith(f"changed=false\ncommit={first}\ndataset=acme/widgets\n")
    assert "No changes." in changelog.read_text()

    second = upstream.commit(
        {
            "pkg/a.py": "import os\n"
            + CODE.replace("far too large", "much too large").replace('raise ValueError(f"x must be positive, got {x}")', 'raise ValueError("negative")')
        }
    )
    report = tmp_path / "diff.json"
    moved = sync(cli, upstream, out, "--changelog", changelog, "--report", report, "--exit-code")
    assert moved.exit_code == 1 and moved.stdout.startswith(f"changed=true commit={second}")
    kinds = sorted(c["kind"] for c in json.loads(report.read_text())["changes"])
    assert kinds == ["added", "removed", "reworded"]
    text = changelog.read_text()
    assert text.startswith(f"## Error catalogue: `acme/widgets` `{first[:12]}` → `{second[:12]}`\n")
    assert "### Message reworded (1)" in text and "### Error removed (1)" in text

    dataset = out / "acme" / "widgets"
    assert cli("validate", out).exit_code == 0
    records = {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}
    gone = records["x must be positive, got {x}"]["history"]
    assert gone["retired"] and gone["retired_note"] == f"removed in {second[:12]}"
    assert gone["first_seen"] == gone["last_seen"] == {"version": None, "commit": first}
    reworded = records["x is much too large"]["history"]
    assert reworded["first_seen"]["commit"] == second and reworded["replaces"] == [records["x is far too large"]["id"]]
    assert records["x is far too large"]["history"]["replaced_by"] == records["x is much too large"]["id"]


@pytest.mark.slow
def test_latest_tag_follows_releases(upstream, cli, tmp_path):
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('v1 key')\n"}, tag="v1.9.0")
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('v10 key')\n"}, tag="v1.10.0")
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('rc key')\n"}, tag="v2.0.0rc1")
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('main key')\n"})
    out = tmp_path / "out"
    result = sync(cli, upstream, out, "--latest-tag")
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "acme" / "widgets" / "manifest.json").read_text())
    assert manifest["ref"] == "v1.10.0"
    records = [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]
    assert {r["history"]["first_seen"]["version"] for r in records} == {"v1.10.0"}


@pytest.mark.slow
def test_latest_tag_passes_over_a_tag_in_other_digits(upstream, cli, tmp_path):
    """A hostile upstream's tag whose digits are no ASCII (v\u0661.\u0662.\u0663: Python's \\d
    reads them as digits, PEP 440 does not) is no release tag: the latest release is the real
    one's, never a traceback (InvalidVersion)."""
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('v1 key')\n"}, tag="v1.9.0")
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('odd key')\n"}, tag="v\u0661.\u0662.\u0663")
    out = tmp_path / "out"
    result = sync(cli, upstream, out, "--latest-tag")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "acme" / "widgets" / "manifest.json").read_text())["ref"] == "v1.9.0"


def test_sync_refuses_ref_with_latest_tag(upstream, cli, tmp_path):
    result = sync(cli, upstream, tmp_path / "out", "--ref", "main", "--latest-tag")
    assert result.exit_code == 2 and result.stderr.startswith("errcat: ")


@pytest.mark.slow
def test_sync_drops_cached_results_an_older_errcat_made(upstream, cli, cache_dir, tmp_path):
    """The workflow keeps the cache across errcat upgrades: what another version made is dead weight."""
    import sqlite3

    from crawler.extract.runner import cache_version

    assert sync(cli, upstream, tmp_path / "a").exit_code == 0
    with sqlite3.connect(cache_dir / "results.sqlite3") as db:
        current = db.execute("SELECT key, value FROM results").fetchall()
        db.executemany("INSERT INTO results VALUES (?, ?)", [("0.old:" + k.split(":", 1)[1], v) for k, v in current])
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('new')\n"})
    result = sync(cli, upstream, tmp_path / "a")
    assert result.exit_code == 0, result.output
    assert f"dropped {len(current)} cached result(s) of other errcat versions" in result.stderr
    with sqlite3.connect(cache_dir / "results.sqlite3") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM results")]
    assert keys and all(k.startswith(cache_version() + ":") for k in keys)
    assert len(keys) == len(current) + 1  # this version's results all kept, pkg/b.py added


def files_of(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_sync_refuses_to_move_a_catalogue_back_to_an_older_release(upstream, cli, tmp_path):
    """A history folded up to a newer release (the wheel of 0.34.0) synced to an older tag would
    retire the newer release's entries "in" the older one: refused in one line, nothing written;
    a newer tag, a branch or a bare commit are synced as before."""
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('one')\n"}, tag="v1.9.0")
    upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('two')\n"}, tag="v1.10.0")
    out = tmp_path / "out"
    assert sync(cli, upstream, out, "--ref", "v1.10.0").exit_code == 0
    before = files_of(out)
    back = sync(cli, upstream, out, "--ref", "v1.9.0")
    assert back.exit_code != 0 and "Traceback" not in back.output
    assert back.stderr.startswith("errcat: ") and back.stderr.count("\n") == 1
    assert "is at v1.10.0, newer than v1.9.0: a sync moves a catalogue forward" in back.stderr
    assert files_of(out) == before
    newer = upstream.commit({"pkg/b.py": "def f():\n    raise KeyError('three')\n"})
    assert sync(cli, upstream, out, "--ref", newer).exit_code == 0


@pytest.mark.slow
def test_sync_over_release_tags_writes_a_changelog_and_never_writes_the_repository(fixture_repo, cli, tmp_path):
    """Releases record their upstream commit abbreviated ('5df63a720'): sync once failed on the
    diff and wrote no changelog. The local repository is only read."""
    fixture_repo.commit(release_tree("5df63a720"), tag="v0.32.0")
    newest = fixture_repo.commit(release_tree("7e2b1c9d4", CHECK_CODE.replace("far too large", "much too large")), tag="v0.33.0")
    before = files_of(fixture_repo.path)
    out, changelog = tmp_path / "out", tmp_path / "CHANGELOG.md"
    common = ["--repo", fixture_repo.path, "--name", "acme/widgets", "--out", out, "--changelog", changelog]
    assert cli("sync", *common, "--ref", "v0.32.0").exit_code == 0
    result = cli("sync", *common, "--latest-tag")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"changed=true commit={newest} (1 change(s) v0.32.0 -> v0.33.0)")
    text = changelog.read_text()
    assert text.startswith("## Error catalogue: `acme/widgets` `v0.32.0` → `v0.33.0`\n")
    assert "### Message reworded (1)" in text and "/blob/7e2b1c9d4/vllm/check.py#L" in text
    manifest = json.loads((out / "acme" / "widgets" / "manifest.json").read_text())
    assert (manifest["ref"], manifest["upstream_commit"], manifest["counts"]["retired"]) == ("v0.33.0", "7e2b1c9d4", 1)
    assert files_of(fixture_repo.path) == before


@pytest.mark.slow
def test_sync_publishes_a_curated_change_when_upstream_did_not_move(upstream, cli, tmp_path, monkeypatch):
    """The daily sync after a maintainer merged a curated explanation: the upstream commit is the
    one in place, but the catalogue must carry the new text (and its pull request show it)."""
    (tmp_path / "curated").mkdir()  # the working directory holds curated/: it is the errcat home
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert sync(cli, upstream, out).exit_code == 0
    eid = json.loads(jsonl_bytes(out / "acme" / "widgets").splitlines()[0])["id"]
    drafted = cli("curate", "draft", eid, "--data", out / "acme" / "widgets")
    assert drafted.exit_code == 0, drafted.output
    assert (tmp_path / "curated" / "acme" / "widgets" / f"{eid}.yaml").is_file()

    changelog = tmp_path / "changelog.md"
    again = sync(cli, upstream, out, "--exit-code", "--changelog", changelog)
    assert again.exit_code == 1 and again.stdout.startswith("changed=true"), again.output
    # the pull request says why its one record changed: not "regenerated" by an errcat that did not change
    assert changelog.read_text().endswith(f"No changes.\n\nThe curated files changed, and with them the explanation of 1 entry: `{eid}`.\n")
    records = {r["id"]: r for r in map(json.loads, jsonl_bytes(out / "acme" / "widgets").splitlines())}
    assert records[eid]["explanation_status"] == "draft" and records[eid]["explanation"]["what_it_means"]
    assert sync(cli, upstream, out, "--exit-code").stdout.startswith("changed=false")  # and then it is up to date


@pytest.mark.slow
def test_a_commit_that_changes_no_error_opens_no_pull_request(upstream, cli, tmp_path, monkeypatch):
    """An upstream commit that only adds a comment changes no entry: the sync says changed=false
    and writes nothing (a daily pull request that only moves the manifest's commit is noise),
    and the next real change brings the manifest to the newest commit."""
    out = tmp_path / "out"
    github_output = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    first = upstream.repo.head.commit.hexsha
    assert sync(cli, upstream, out).exit_code == 0
    before = files_of(out / "acme" / "widgets")
    second = upstream.commit({"pkg/a.py": CODE + "# only a comment\n"})
    result = sync(cli, upstream, out, "--exit-code")
    assert result.exit_code == 0 and result.stdout.startswith(f"changed=false commit={second} (0 change(s)"), result.output
    assert "no entry, explanation or errcat version changed" in result.stderr
    assert github_output.read_text().endswith(f"changed=false\ncommit={second}\ndataset=acme/widgets\n")
    assert files_of(out / "acme" / "widgets") == before
    assert json.loads(before["manifest.json"])["commit"] == first

    third = upstream.commit({"pkg/a.py": CODE.replace("far too large", "much too large") + "# only a comment\n"})
    moved = sync(cli, upstream, out, "--exit-code")
    assert moved.exit_code == 1 and moved.stdout.startswith(f"changed=true commit={third} (1 change(s)"), moved.output
    assert json.loads(files_of(out / "acme" / "widgets")["manifest.json"])["commit"] == third


@pytest.mark.slow
def test_catch_up_writes_a_commit_that_changes_no_error_and_says_so_in_the_changelog(upstream, cli, tmp_path):
    """With --catch-up (a maintainer's weekly schedule, say) the commit is written anyway: the
    manifest, index and search index name it, and the changelog says that is all that changed
    (not that errcat made the catalogue again)."""
    out, changelog = tmp_path / "out", tmp_path / "changelog.md"
    first = upstream.repo.head.commit.hexsha
    assert sync(cli, upstream, out).exit_code == 0
    before = files_of(out / "acme" / "widgets")
    second = upstream.commit({"pkg/a.py": CODE + "# only a comment\n"})
    result = sync(cli, upstream, out, "--changelog", changelog, "--catch-up")
    assert result.exit_code == 0 and result.stdout.startswith(f"changed=true commit={second} (0 change(s)")
    after = files_of(out / "acme" / "widgets")
    assert sorted(p for p in after if after[p] != before.get(p)) == ["index.json", "manifest.json", "search.json"]
    text = changelog.read_text()
    assert text.endswith(
        f"No changes.\n\nUpstream moved from `{first[:12]}` to `{second[:12]}` and no error changed: the catalogue now names `{second[:12]}`.\n"
    ), text
    assert "errcat" not in text.split("No changes.")[1]
