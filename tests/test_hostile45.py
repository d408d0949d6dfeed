"""Round 44's changes read for hostile input (s45-sec): each test builds the hostile input (a
cache's memo, a crawled repository) and runs the real CLI or script on it.

* The sync's memo of retired records (``versions.carried``) is a file of the cache, which anyone
  who can write the cache can remake (its stamp is a digest of public facts): facts that are no
  JSON object of the keys and types errcat writes cost reading the line, never a traceback, and the
  sync writes what a sync without the memo writes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crawler.model.records import Manifest, RepoRef
from crawler.versions import carried
from tests.versions.test_history import tree
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired  # noqa: F401 (the fixture)


def _repo(dataset: Path) -> RepoRef:
    return Manifest.model_validate_json((dataset / "manifest.json").read_bytes()).repo


#: Facts a memo may hold that errcat never writes: not JSON, no object, keys missing, the keys
#: with other types (the repository an object: it was hashed as a set), ids that are no ids.
HOSTILE_FACTS = {
    "not-json": b"not json",
    "a-list": b"[]",
    "keys-missing": b'{"id":"0000000000000000"}',
    "other-types": b'{"id":"0000000000000000","repo":{},"commit":"a","commit_date":"b","source":"git",'
    b'"upstream_commit":null,"replaced_by":null,"reviewed":false,"replaces":[]}',
    "no-id": b'{"id":"../../x","repo":"acme/widgets","commit":"a","commit_date":null,"source":"git",'
    b'"upstream_commit":null,"replaced_by":null,"reviewed":false,"replaces":["../y"]}',
}


@pytest.mark.slow
def test_hostile_facts_in_the_carried_memo_cost_reading_the_line(upstream, cli, tmp_path, retired, cache_dir):  # noqa: F811
    out, _, _ = retired
    repo = _repo(out / "acme" / "widgets")
    rows = carried.load(cache_dir, repo)
    assert rows and all(row.facts for row in rows.values())
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")  # an error added elsewhere: the dataset is written
    plain = tmp_path / "plain"
    shutil.copytree(out, plain)
    with pytest.MonkeyPatch.context() as mp:  # the sync as if no memo were there
        mp.setattr(carried, "load", lambda cache_dir, repo: {})
        assert cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", plain).exit_code == 0
    for name, facts in HOSTILE_FACTS.items():
        copy = tmp_path / name
        shutil.copytree(out, copy)
        carried.remember(cache_dir, repo, {digest: row._replace(facts=facts) for digest, row in rows.items()}, {})
        assert {row.facts for row in carried.load(cache_dir, repo).values()} == {facts}
        result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", copy)
        assert result.exit_code == 0 and "Traceback" not in result.output, (name, result.output)
        assert tree(copy) == tree(plain), name
