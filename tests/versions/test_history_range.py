"""A history range or REFs given newest first are refused: folding releases in reverse would call every
error the newer release added retired in the older one."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_a_reversed_range_is_refused_and_writes_nothing(cli, fixture_repo, tmp_path):
    fixture_repo.commit({"pkg/a.py": "def f():\n    raise ValueError('old error')\n"}, tag="v1.0.0")
    fixture_repo.commit({"pkg/b.py": "def g():\n    raise ValueError('new error')\n"}, tag="v1.1.0")
    out = tmp_path / "out"
    args = ["history", "--repo", fixture_repo.path, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out]
    result = cli(*args, "--range", "v1.1.0..v1.0.0")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("errcat: ") and "v1.0.0..v1.1.0" in lines[0], result.stderr
    assert not out.exists()
    # the same releases in order: nothing retired
    result = cli(*args, "--range", "v1.0.0..v1.1.0")
    assert result.exit_code == 0, result.output
    assert "versions 2 (v1.0.0, v1.1.0)" in result.stdout and "retired 0" in result.stdout


@pytest.mark.slow
def test_a_range_of_one_release_is_that_release(cli, fixture_repo, tmp_path):
    fixture_repo.commit({"pkg/a.py": "def f():\n    raise ValueError('old error')\n"}, tag="v1.0.0")
    result = cli(
        "history", "--repo", fixture_repo.path, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", tmp_path / "out", "--range", "v1.0.0..v1.0.0"
    )
    assert result.exit_code == 0, result.output
    assert "versions 1 (v1.0.0)" in result.stdout


@pytest.mark.slow
def test_refs_given_newest_first_are_refused(cli, fixture_repo, tmp_path):
    old = fixture_repo.commit({"pkg/a.py": "def f():\n    raise ValueError('old error')\n"}, tag="v1.0.0")
    new = fixture_repo.commit({"pkg/b.py": "def g():\n    raise ValueError('new error')\n"}, tag="v1.1.0")
    out = tmp_path / "out"
    args = ["history", "--repo", fixture_repo.path, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out]
    for refs in (["v1.1.0", "v1.0.0"], [new, old]):  # release tags by version, any refs by ancestry
        result = cli(*args, *refs)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("errcat: REFs go oldest first: "), result.stderr
        assert not out.exists()
    assert cli(*args, old, new).exit_code == 0
