"""The errcat home: where output/ and curated/ are found when no option names them, the same
wherever a command runs (``crawler.base.home``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE

from crawler.base.home import default_out, home

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A working directory that is no errcat home, nor is any directory above it."""
    where = tmp_path / "nowhere" / "deeper"
    where.mkdir(parents=True)
    monkeypatch.chdir(where)
    monkeypatch.delenv("ERRCAT_HOME", raising=False)
    return where


def test_the_home_is_the_env_var_else_the_project_here_or_above_else_errcats_checkout(elsewhere, tmp_path, monkeypatch, checkout_home):
    # this test runs from errcat's checkout: the package finds it, so output/ is the checkout's
    assert home() == ROOT and default_out() == ROOT / "output"
    project = tmp_path / "nowhere"
    (project / "errcat.toml").write_text("")
    assert home() == project  # found from a subdirectory, as git finds its repository
    monkeypatch.chdir(project)
    assert home() == project and default_out() == Path("output")  # paths read as they always did
    monkeypatch.setenv("ERRCAT_HOME", str(tmp_path / "mine"))
    assert home() == tmp_path / "mine"


def test_outside_any_home_and_checkout_the_home_is_the_user_data_directory(elsewhere, tmp_path):
    assert home() == tmp_path / "xdg-data" / "errcat"  # (conftest: XDG_DATA_HOME, and no checkout to fall back to)


@pytest.mark.parametrize("marker", ["output", "curated", "pyproject"])
def test_a_directory_is_a_home_by_what_it_holds(elsewhere, marker):
    if marker == "pyproject":
        (elsewhere / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        assert home() != elsewhere  # a pyproject.toml alone is any Python project's
        (elsewhere / "pyproject.toml").write_text("[tool.errcat]\ndefault = 'vllm'\n")
    else:
        (elsewhere / marker).mkdir()
    assert home() == elsewhere


def test_commands_run_anywhere_read_and_write_the_same_home(fixture_repo, cli, elsewhere, tmp_path, monkeypatch):
    """A crawl and a match run from a directory that is no home use $ERRCAT_HOME's output/ and
    curated/, and make no ./output of the working directory."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1")
    mine = tmp_path / "mine"
    monkeypatch.setenv("ERRCAT_HOME", str(mine))
    crawled = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "me/toy")
    assert crawled.exit_code == 0, crawled.output
    manifest = json.loads((mine / "output" / "me" / "toy" / "manifest.json").read_text())
    assert manifest["include"] == ["**/*.py"] and not (elsewhere / "output").exists()
    assert f"no directory {mine / 'curated' / 'me' / 'toy'}" in crawled.stderr  # where it looked for curated text
    found = cli("match", "ValueError: x is far too large")
    assert found.exit_code == 0 and "x is far too large" in found.stdout, found.output


def test_a_chdir_between_two_crawls_reads_the_curated_files_of_the_new_home(fixture_repo, cli, tmp_path, monkeypatch):
    """Two crawls in one process, each run from its own home: each reads its own curated files
    (the home is an absolute path, so nothing read by the path of one stands for the other)."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1")
    args = ("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py")
    first, second = tmp_path / "first", tmp_path / "second"
    for home_dir in (first, second):
        (home_dir / "curated" / "acme" / "widgets").mkdir(parents=True)
    (first / "curated" / "acme" / "widgets" / "foreign").mkdir()
    (first / "curated" / "acme" / "widgets" / "foreign" / "errors.yaml").write_text(
        "errors:\n- name: torch-oom\n  origin: torch\n  match: ['CUDA out of memory']\n"
        "  example: 'torch.OutOfMemoryError: CUDA out of memory.'\n  explanation: The allocator ran out.\n"
    )
    digests = []
    for home_dir in (first, second):
        monkeypatch.chdir(home_dir)
        assert cli(*args).exit_code == 0
        digests.append(json.loads((home_dir / "output" / "acme" / "widgets" / "manifest.json").read_text())["input_digest"])
    assert (first / "output" / "acme" / "widgets" / "foreign.json").is_file()
    assert not (second / "output" / "acme" / "widgets" / "foreign.json").exists() and digests[0] != digests[1]


def test_a_match_with_no_catalogue_says_what_to_do(cli, elsewhere, tmp_path, monkeypatch):
    monkeypatch.setenv("ERRCAT_HOME", str(tmp_path / "empty"))
    result = cli("match", "ValueError: x")
    assert result.exit_code == 2
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("errcat: ")]
    assert line == (
        f"errcat: no such directory: {tmp_path / 'empty' / 'output'}: no catalogue there; make one with "
        "`errcat crawl` (it writes under the same place), or name one with --data DIR or $ERRCAT_HOME"
    )
