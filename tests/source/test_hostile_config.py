"""Configuration a user or a checkout hands errcat that the parsers below it choke on: each is one
``errcat:`` line and exit 2 through the real CLI, never a traceback, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.base.errors import UsageError
from crawler.source.globs import PathFilter


def crawl(cli, repo: Path, out: Path, *extra: str):
    return cli("crawl", "--repo", repo, "--ref", "v1", "--name", "acme/widgets", "--out", out, *extra)


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/a.py": "def f():\n    raise ValueError('boom')\n"}, tag="v1")
    return fixture_repo


def assert_one_line(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("errcat: "), result.stderr
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize("glob", ["pkg/[z-a].py", "[a-\\]", "pkg/**/[9-0]*"])
def test_a_glob_the_regex_engine_refuses_is_one_line(cli, upstream, tmp_path, glob):
    out = tmp_path / "out"
    assert_one_line(crawl(cli, upstream.path, out, "--include", glob), "bad glob")
    assert_one_line(crawl(cli, upstream.path, out, "--include", "pkg/**/*.py", "--exclude", glob), "bad glob")
    assert not out.exists()


def test_a_bad_range_in_a_configured_glob_names_the_file(cli, upstream, tmp_path):
    config = tmp_path / "errcat.toml"
    config.write_text("[upstreams.w]\nurl = 'https://github.com/acme/widgets'\ninclude = ['pkg/[z-a].py']\n")
    out = tmp_path / "out"
    assert_one_line(crawl(cli, upstream.path, out, "--config", config), str(config), "bad glob")
    assert not out.exists()


def test_a_sane_range_still_selects(upstream):
    keep = PathFilter(["pkg/[a-c].py"])
    assert keep("pkg/a.py") and not keep("pkg/d.py")
    with pytest.raises(UsageError, match="bad glob"):
        PathFilter(["pkg/[c-a].py"])


def test_a_config_nested_past_the_parsers_recursion_is_one_line(cli, upstream, tmp_path):
    # tomllib reads nested arrays recursively: 20,000 levels is a RecursionError inside it
    config = tmp_path / "errcat.toml"
    config.write_text("[upstreams.w]\nurl = 'https://github.com/acme/widgets'\ninclude = " + "[" * 20_000 + "]" * 20_000 + "\n")
    out = tmp_path / "out"
    assert_one_line(crawl(cli, upstream.path, out, "--config", config), str(config), "not valid TOML")
    assert not out.exists()


@pytest.mark.slow
def test_a_pyproject_whose_tool_is_no_table_is_no_crash(cli, upstream, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("tool = 3\n")
    out = tmp_path / "out"
    result = crawl(cli, upstream.path, out, "--config", pyproject, "--include", "pkg/**/*.py")
    assert result.exit_code == 0, result.output
    assert (out / "acme" / "widgets" / "manifest.json").is_file()


def test_a_config_file_not_named_pyproject_is_not_called_a_tool_table(cli, upstream, tmp_path):
    config = tmp_path / "upstreams.toml"
    config.write_text("[upstreams.w]\nurl = 'https://github.com/acme/widgets'\ncolour = 1\n")
    result = crawl(cli, upstream.path, tmp_path / "out", "--config", config)
    assert_one_line(result, f"{config}: upstreams.w.colour")
    assert "[tool.errcat]" not in result.stderr
