"""Committer dates git stores unchecked in a crawled repository's commit objects: an offset of
+9959 is the same instant in UTC; a date past year 9999, which ISO 8601 cannot write, is one
line and exit 2. Each once ended the crawl in a traceback from ``datetime``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest


def dated_repo(path: Path, date: str) -> Path:
    path.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
        GIT_AUTHOR_NAME="a",
        GIT_AUTHOR_EMAIL="a@example.invalid",
        GIT_COMMITTER_NAME="a",
        GIT_COMMITTER_EMAIL="a@example.invalid",
    )
    (path / "pkg").mkdir()
    (path / "pkg" / "a.py").write_text("def f():\n    raise ValueError('dated')\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"], ["tag", "v1"]):
        subprocess.run(["git", "-C", str(path), *args], check=True, env=env)
    return path


def crawl(cli, repo: Path, out: Path):
    return cli("crawl", "--repo", repo, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)


@pytest.mark.slow
def test_an_offset_no_clock_has_is_the_instant_in_utc(cli, tmp_path):
    repo = dated_repo(tmp_path / "repo", "@1700000000 +9959")
    result = crawl(cli, repo, tmp_path / "out")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "acme" / "widgets" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["commit_date"] == "2023-11-14T22:13:20+00:00"


def test_a_date_past_year_9999_is_one_line(cli, tmp_path):
    repo = dated_repo(tmp_path / "repo", "@253402300800 +0000")
    result = crawl(cli, repo, tmp_path / "out")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("errcat: commit ") and "past what ISO 8601 writes" in lines[0]
    assert not (tmp_path / "out").exists()
