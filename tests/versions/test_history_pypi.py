"""``errcat history --pypi``: releases of the package index, refused in one line before anything
is downloaded when they cannot make a history (the crawl itself: tests/test_workflows.py's
backfill from the index, tests/source/test_release.py)."""

from __future__ import annotations

import json

import pytest

from crawler.versions.history import release_order


@pytest.mark.parametrize(("args", "said"), [
    (["0.5.5", "0.4.3"], "errcat: --pypi: 0.4.3 comes after 0.5.5; give the releases oldest first"),
    (["0.4.3", "vllm==0.4.3"], "errcat: --pypi: 0.4.3 comes twice; give the releases oldest first"),
    (["0.4.3", "six==1.16.0"], "errcat: --pypi: OLD and NEW name two packages (six, vllm); a diff is of one"),
    (["0.4.3", "--tag-pattern", "v.*"], "errcat: --tag-pattern picks git tags: --pypi releases are the index's"),
    (["vllm==0.4.3;rm"], "errcat: refusing --pypi 'vllm==0.4.3;rm': expected NAME==VERSION, e.g. vllm==0.33.0"),
    (["--fold", "x"], "errcat: --fold reads datasets: --pypi names releases to crawl"),
    (["--range", "0.33.0..0.4.0"], "errcat: --range '0.33.0..0.4.0': 0.33.0 comes after 0.4.0; give the older release first"),
    (["--range", "0.4..latest"], "errcat: --range '0.4..latest': OLD and NEW must be versions (0.4.0..0.33.0)"),
])
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
