"""A crawl says when it reads no curated explanations, as a crawl run away from curated/ does."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import CHECK_CODE

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_crawl_with_no_curated_directory_says_so(fixture_repo, cli, tmp_path, monkeypatch, checkout_home):
    """The README's quick start run in an empty directory gave a catalogue without the curated
    explanations and foreign errors errcat ships, and said nothing of it. Run away from any errcat
    home, the crawl reads the curated/ of errcat's checkout (``base.home``), and says where it looked."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1")
    monkeypatch.chdir(tmp_path)
    args = ("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py")
    run = cli(*args, "--out", tmp_path / "a")
    assert run.exit_code == 0
    note = f"no curated explanations or foreign errors: no directory {ROOT / 'curated' / 'acme' / 'widgets'}"
    assert note in run.stderr and note not in run.stdout
    (tmp_path / "mine" / "acme" / "widgets").mkdir(parents=True)
    run = cli(*args, "--out", tmp_path / "b", "--curated", tmp_path / "mine")
    assert run.exit_code == 0 and "no curated explanations" not in run.stderr
