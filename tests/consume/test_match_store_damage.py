"""A match index in the cache whose rows no longer decode (a disk that filled while it was
written, a cache restored from elsewhere, an edit) is an optimisation lost, not an error: the
query that finds a bad row builds the index again from the dataset and answers. Such a row once
ended ``errcat match`` in a traceback."""

from __future__ import annotations

import sqlite3

import pytest

MESSAGE = "x must be non-negative, got {x}"

DAMAGE = {
    "an entry that is not JSON": "UPDATE entry SET data = 'not json {'",
    "an entry of another shape": "UPDATE entry SET data = '[1, 2]'",
    "an entry a lookup names that is gone": "DELETE FROM entry",
    "a foreign list of another shape": "UPDATE meta SET v = '[1]' WHERE k = 'foreign'",
    "a count that is no number": "UPDATE meta SET v = 'many' WHERE k = 'total'",
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_match_index_is_built_again_and_the_query_answered(cli, fixture_repo, cache_dir, tmp_path, damage):
    fixture_repo.commit({"pkg/a.py": "def f(x):\n    if x < 0:\n        raise ValueError(f'" + MESSAGE + "')\n"}, tag="v1")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
    data = out / "acme" / "widgets"
    first = cli("match", "--data", data, "x must be non-negative, got -1")
    assert first.exit_code == 0, first.output
    stores = sorted((cache_dir / "match").glob("*.sqlite"))
    assert stores
    for store in stores:
        with sqlite3.connect(store) as con:
            con.execute(DAMAGE[damage])
    again = cli("match", "--data", data, "x must be non-negative, got -1")
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout
    assert "Traceback" not in again.output
    # and the index is whole again: the next query reads it without building anything
    third = cli("match", "--data", data, "x must be non-negative, got -1")
    assert third.stdout == first.stdout and "building it again" not in third.stderr
