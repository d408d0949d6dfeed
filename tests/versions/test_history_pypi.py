"""``errcat history --pypi``: releases of the package index, refused in one line before anything
is downloaded when they cannot make a history (the crawl itself: tests/test_workflows.py's
backfill from the index, tests/source/test_release.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawler.versions.history import release_order


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["0.5.5", "0.4.3"], "errcat: --pypi: 0.4.3 comes after 0.5.5; give the releases oldest first"),
        (["0.4.3", "vllm==0.4.3"], "errcat: --pypi: 0.4.3 comes twice; give the releases oldest first"),
        (["0.4.3", "six==1.16.0"], "errcat: --pypi: OLD and NEW name two packages (six, vllm); a diff is of one"),
        (["0.4.3", "--tag-pattern", "v.*"], "errcat: --tag-pattern picks git tags: --pypi releases are the index's"),
        (["vllm==0.4.3;rm"], "errcat: refusing --pypi 'vllm==0.4.3;rm': expected NAME==VERSION, e.g. vllm==0.33.0"),
        (["--fold", "x"], "errcat: --fold reads datasets: --pypi names releases to crawl"),
        (["--range", "0.33.0..0.4.0"], "errcat: --range '0.33.0..0.4.0': 0.33.0 comes after 0.4.0; give the older release first"),
        (["--range", "0.4..latest"], "errcat: --range '0.4..latest': OLD and NEW must be versions (0.4.0..0.33.0)"),
    ],
)
def test_a_history_of_releases_that_cannot_be_made_is_one_line(cli, tmp_path, args, said):
    result = cli("history", "--pypi", *args, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == said and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_the_plan_of_releases_keeps_their_spelling(cli):
    result = cli("history", "--pypi", "--plan", "2", "0.4.3", "0.5.5", "0.6.6.post1")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == ["0.4.3 0.5.5", "0.6.6.post1"]


def test_a_plan_refuses_what_is_no_release(cli):
    """What a plan prints reaches a workflow's scripts: only a release's characters pass."""
    from crawler.base.errors import UsageError
    from crawler.versions.tags import plan_groups

    result = cli("history", "--pypi", "--plan", "2", "0.4.3", "0.5;rm -rf")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "errcat: refusing --pypi 'vllm==0.5;rm -rf': expected NAME==VERSION, e.g. vllm==0.33.0\n"
    with pytest.raises(UsageError, match="is not a release"):
        plan_groups(["0.4.3", "$(id)"], 2, pypi=True)


def test_releases_fold_in_pep_440_order():
    versions = ["v0.10.0", "0.9.2", "0.6.6.post1", "0.6.6", "0.7.0rc1", "0.7.0", "0.10.1.1", "weird"]
    assert sorted(versions, key=release_order) == ["weird", "0.6.6", "0.6.6.post1", "0.7.0rc1", "0.7.0", "0.9.2", "v0.10.0", "0.10.1.1"]


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """Three releases of relpkg crawled from a package index on localhost, one dataset each: made
    once for the module (pip downloads each wheel), read by its tests; each test that folds them
    leaves them byte for byte as they were (checked after the module's last test)."""
    import os

    from click.testing import CliRunner

    from crawler.base import home
    from crawler.cli.main import main
    from tests.package_index import _Index, release_wheel, serving

    tmp = tmp_path_factory.mktemp("released")
    with serving(tmp / "index") as url, pytest.MonkeyPatch.context() as mp:
        for n, version in enumerate(["1.0", "1.2", "1.10"]):
            wheel = release_wheel(tmp / "index" / "files", version, None, f"bad value {n}")
            _Index.times[wheel.name] = f"2025-0{n + 1}-01T00:00:00Z"
        for name in [k for k in os.environ if k.startswith("PIP_")]:
            mp.delenv(name)
        mp.setenv("PIP_CONFIG_FILE", os.devnull)
        mp.setenv("PIP_INDEX_URL", url)
        mp.setenv("PIP_NO_CACHE_DIR", "1")
        # what the function-scoped fixtures (cache_dir, no_shared_home) give a test's cli
        mp.setenv("ERRCAT_CACHE_DIR", str(tmp / "cache"))
        mp.delenv("ERRCAT_HOME", raising=False)
        mp.setattr(home, "_checkout", lambda: None)
        mp.setenv("XDG_DATA_HOME", str(tmp / "xdg-data"))
        result = CliRunner().invoke(
            main,
            ["history", "--pypi", "--per-release", str(tmp / "releases"), "--include", "relpkg/**/*.py", "relpkg==1.10", "relpkg==1.0", "relpkg==1.2"],
            catch_exceptions=False,
        )  # given in any order: the directory names say which
    assert result.exit_code == 0, result.output
    releases = tmp / "releases"
    assert sorted(p.name for p in releases.iterdir()) == ["1.0", "1.10", "1.2"]
    before = _tree(releases)
    yield releases
    assert _tree(releases) == before, "a test changed the module's shared release datasets: copy them first"


@pytest.mark.slow
def test_a_fold_of_release_datasets_goes_by_pep_440_and_names_the_releases(released, cli, tmp_path):
    result = cli("history", "--fold", released, "--out", tmp_path / "out", "--changelog", tmp_path / "changelog.md")
    assert result.exit_code == 0, result.output
    assert "versions 3 (1.0, 1.2, 1.10)" in result.stdout
    changelog = (tmp_path / "changelog.md").read_text()
    assert "up to `relpkg==1.10`" in changelog  # the release, never its file digest as a commit
    manifest = json.loads((tmp_path / "out" / "acme" / "relpkg" / "manifest.json").read_text())
    assert manifest["commit"][:12] not in changelog and manifest["release"]["version"] == "1.10"


@pytest.mark.slow
def test_a_catalogue_in_place_of_an_older_release_is_refused_by_its_version(released, cli, tmp_path):
    import shutil

    shutil.copytree(released / "1.2", tmp_path / "in-place")
    result = cli("history", "--fold", released, "--catalogue", tmp_path / "in-place", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "(relpkg==1.2, uploaded 2025-02-01T00:00:00+00:00) is older than 1.10" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    shutil.rmtree(tmp_path / "in-place")
    shutil.copytree(released / "1.10", tmp_path / "in-place")
    result = cli("history", "--fold", released, "--catalogue", tmp_path / "in-place", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output


def test_the_newest_of_each_minor_is_the_last_patch_in_pep_440_order():
    from crawler.base.releases import newest_per_minor

    versions = ["0.1.7", "0.2.0", "0.2.1.post1", "0.2.7", "0.6.6", "0.6.6.post1", "0.10.1.1", "0.10.2", "1.0"]
    assert newest_per_minor(versions) == ["0.1.7", "0.2.7", "0.6.6.post1", "0.10.2", "1.0"]
    assert newest_per_minor(["v0.32.0", "v0.32.1", "v0.33.0"]) == ["v0.32.1", "v0.33.0"]  # tags alike


def test_a_plan_of_the_newest_per_minor_takes_the_last_patch_of_each_from_the_index(tmp_path, monkeypatch, cli):
    import os

    from tests.package_index import release_wheel, serving

    config = tmp_path / "errcat.toml"
    config.write_text('[upstreams.relpkg]\nurl = "https://github.com/acme/relpkg"\npypi = "relpkg"\ninclude = ["relpkg/**/*.py"]\n')
    with serving(tmp_path / "index") as url:
        for version in ["1.0", "1.0.post1", "1.2", "1.9", "1.10rc1", "1.10", "1.10.1", "2.0"]:
            release_wheel(tmp_path / "index" / "files", version, None)
        for name in [k for k in os.environ if k.startswith("PIP_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("PIP_INDEX_URL", url)
        args = ["history", "--pypi", "--config", config, "--upstream", "relpkg", "--range", "1.0..1.10.1", "--plan", "2"]
        every = cli(*args)
        newest = cli(*args, "--newest-per-minor")
    assert every.exit_code == 0 and newest.exit_code == 0, every.output + newest.output
    assert json.loads(every.stdout) == ["1.0 1.0.post1 1.2", "1.9 1.10 1.10.1"]
    assert json.loads(newest.stdout) == ["1.0.post1 1.2", "1.9 1.10.1"]  # no pre-release, 2.0 out of range


def test_the_newest_per_minor_needs_a_range(cli, tmp_path):
    result = cli("history", "--pypi", "--newest-per-minor", "0.4.3", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr == "errcat: --newest-per-minor picks from --range OLD..NEW: give the range\n"


@pytest.mark.slow
def test_a_fold_of_releases_that_record_no_commit_marks_every_release_and_no_page_shows_a_digest(released, cli, tmp_path):
    """Schema 7: each release's lifetime says its commit is a files digest (``"files": true``), so an
    older release's page shows the release alone, not only the newest one the manifest names."""
    result = cli("history", "--fold", released, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    data = tmp_path / "out" / "acme" / "relpkg"
    digests = {json.loads((released / v / "acme" / "relpkg" / "manifest.json").read_text())["commit"] for v in ("1.0", "1.2", "1.10")}
    assert len(digests) == 3
    records = [json.loads(p.read_text()) for p in sorted((data / "errors").glob("*.json"))]
    oldest = next(r for r in records if r["message"]["text"] == "bad value 0")
    h = oldest["history"]
    assert h["retired"] and h["first_seen"]["version"] == "1.0" and h["removed_in"]["version"] == "1.2"
    assert h["first_seen"]["files"] is True and h["last_seen"]["files"] is True and h["removed_in"]["files"] is True
    assert h["first_seen"]["commit"] in digests - {json.loads((data / "manifest.json").read_text())["commit"]}
    page = cli("show", oldest["id"], "--data", data, "--no-pager", "--color", "never")
    assert page.exit_code == 0, page.output
    assert "First seen: 1.0\n" in page.stdout and "Removed in: 1.2\n" in page.stdout, page.stdout
    assert not any(d[:12] in page.stdout for d in digests)
    for fmt in ("html", "markdown"):
        site = tmp_path / f"site-{fmt}"
        assert cli("render", "--data", data, "--out", site, "--format", fmt).exit_code == 0
        for path in (site / "errors").iterdir():
            text = path.read_text()
            assert not any(d[:12] in text for d in digests), (path.name, text)


@pytest.mark.slow
def test_a_fold_of_releases_that_record_their_commit_marks_none(tmp_path, monkeypatch, cli):
    """A release whose _version.py records its full commit is named by that commit: no ``files``."""
    import os

    from tests.package_index import release_wheel, serving

    commits = ["a" * 40, "b" * 40]
    config = tmp_path / "errcat.toml"
    config.write_text(
        '[upstreams.relpkg]\nurl = "https://github.com/acme/relpkg"\npypi = "relpkg"\ninclude = ["relpkg/**/*.py"]\n'
        'version_file = "relpkg/_version.py"\ntag = "v{version}"\n'
    )
    with serving(tmp_path / "index") as url:
        for n, version in enumerate(["1.0", "1.2"]):
            release_wheel(tmp_path / "index" / "files", version, f"__commit_id__ = commit_id = '{commits[n]}'\n", f"bad value {n}")
        for name in [k for k in os.environ if k.startswith("PIP_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("PIP_INDEX_URL", url)
        monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
        result = cli("history", "--pypi", "--config", config, "--upstream", "relpkg", "--out", tmp_path / "out", "relpkg==1.0", "relpkg==1.2")
    assert result.exit_code == 0, result.output
    records = [json.loads(p.read_text()) for p in (tmp_path / "out" / "acme" / "relpkg" / "errors").glob("*.json")]
    oldest = next(r for r in records if r["message"]["text"] == "bad value 0")
    assert oldest["history"]["first_seen"] == {"version": "1.0", "commit": commits[0]}
    assert oldest["history"]["removed_in"] == {"version": "1.2", "commit": commits[1]}


@pytest.mark.slow
def test_a_git_catalogue_of_the_newest_release_stands_for_its_wheel(released, cli, tmp_path):
    """A backfill folds the wheels behind the catalogue crawled from git at the newest release's
    tag: committed before that wheel was uploaded, yet the same release (what a maintainer
    publishes: the wheels' history, the tag's native checks and tests). Its wheel's dataset is
    left out, not the fold refused for the dates."""
    from tests.helpers import git

    repo = tmp_path / "upstream"
    (repo / "relpkg").mkdir(parents=True)
    (repo / "relpkg" / "__init__.py").write_text(
        "def f(x):\n    if x:\n        raise ValueError('bad value 2')\n    assert x is None, 'only git has this one'\n"
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "1.10", date="1700000000 +0000")  # 2023: before every upload
    git(repo, "tag", "v1.10")
    crawled = cli("crawl", "--repo", repo, "--ref", "v1.10", "--name", "acme/relpkg", "--include", "relpkg/**/*.py", "--out", tmp_path / "in-place")
    assert crawled.exit_code == 0, crawled.output
    result = cli("history", "--fold", released, "--catalogue", tmp_path / "in-place", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "1.10's dataset left out: the catalogue in place is of the same release" in result.stderr
    records = [json.loads(p.read_text()) for p in (tmp_path / "out" / "acme" / "relpkg" / "errors").glob("*.json")]
    live = {r["title"] for r in records if not r["history"]["retired"]}
    assert "only git has this one" in " ".join(live) and any("bad value 2" in t for t in live)
    assert json.loads((tmp_path / "out" / "acme" / "relpkg" / "manifest.json").read_text())["ref"] == "v1.10"  # the catalogue's
    # a catalogue of an older release than the range's newest is still refused
    older = cli("crawl", "--repo", repo, "--ref", "v1.10", "--name", "acme/relpkg", "--include", "relpkg/**/*.py", "--out", tmp_path / "older")
    assert older.exit_code == 0
    git(repo, "tag", "v1.2")
    again = cli("crawl", "--repo", repo, "--ref", "v1.2", "--name", "acme/relpkg", "--include", "relpkg/**/*.py", "--out", tmp_path / "v12")
    assert again.exit_code == 0, again.output
    refused = cli("history", "--fold", released, "--catalogue", tmp_path / "v12", "--out", tmp_path / "out2")
    assert refused.exit_code == 2 and "is older than 1.10" in refused.stderr, refused.output
