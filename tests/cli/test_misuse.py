"""Every command's misuse is one line that says what to do next (issue #33 item 8): run with no
catalogue in reach, an empty message, a repository that is not there."""

from __future__ import annotations

import pytest

CASES = [
    (["match", "ValueError: x"], "make one with `errcat crawl`"),
    (["match", ""], "give it as an argument (errcat match 'ValueError: ...'), a log file, or pipe a log in"),
    (["show", "0123456789abcdef"], "make one with `errcat crawl`"),
    (["render"], "make one with `errcat crawl`"),
    (["validate"], "name the directory a crawl wrote (errcat validate DIR), or make one with `errcat crawl`"),
    (["curate", "check"], "make one with `errcat crawl`"),
    (["crawl", "--repo", "{tmp}/absent"], "--repo takes a local git repository or an https:// git URL"),
]


@pytest.mark.parametrize(("args", "next_step"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_misuse_is_one_line_that_says_what_to_do(cli, tmp_path, monkeypatch, args, next_step):
    monkeypatch.setenv("ERRCAT_HOME", str(tmp_path / "empty-home"))
    monkeypatch.chdir(tmp_path)
    result = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("errcat: ") and "Traceback" not in result.stderr, result.stderr
    assert next_step in lines[0], lines[0]
