"""Round 44's changes read for hostile input (s45-sec): each test builds the hostile input (a
cache's memo, a crawled repository) and runs the real CLI or script on it.

* The sync's memo of retired records (``versions.carried``) is a file of the cache, which anyone
  who can write the cache can remake (its stamp is a digest of public facts): facts that are no
  JSON object of the keys and types errcat writes cost reading the line, never a traceback, and the
  sync writes what a sync without the memo writes.
* Its memo of errors.jsonl.gz's retired members (``carried/<repo>.members``) vouches for a member
  by the SHA-256 of its bytes, which anyone can compute: a memo that names bytes of the file for
  lines they do not hold costs reading every line, and the sync writes what it writes with no memo.
* ``bench/actions_bench.py --sample``/``--open-sample`` print a page's basis and steps, which since
  s44-rules quote a crawled warning's text as it was written (``actions._instead``): that text
  reaches the terminal or CI log with its controls and lines shown, not acting.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crawler.model.records import Manifest, RepoRef
from crawler.versions import carried
from tests.versions.test_history import tree
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired  # noqa: F401 (the fixture)

ROOT = Path(__file__).resolve().parents[1]


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


WARNING = """import logging

logger = logging.getLogger(__name__)


def load(name):
    if name:
        logger.warning("Backend missing: \\x1b[2J\\x1b]0;owned\\x07 falling back to pickle instead.\\n::error::owned", name)
"""


@pytest.mark.slow
def test_the_actions_bench_sample_shows_a_warnings_quoted_text_inert(crawl_once):
    out = crawl_once({"pkg/__init__.py": "", "pkg/mod.py": WARNING}, "--name", "acme/widgets")
    dataset = out / "acme" / "widgets"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "actions_bench.py"), str(dataset), "--sample", "1"], capture_output=True, check=True, cwd=ROOT)
    said = run.stdout.decode()
    assert "falling back to pickle instead" in said  # the basis quotes it (the test reaches it)
    assert "\x1b" not in said and "\x07" not in said
    assert not any(line.lstrip().startswith("::") for line in said.splitlines()), said
    assert "\\x1b[2J" in said  # shown, as errcat shows a control


def _claims_the_live_part(cache: Path, repo: RepoRef, data: bytes) -> None:
    """The members' memo made anew to name the first bytes of the file (the live records' member)
    as a member holding the retired lines: their SHA-256 is right, what it says they hold is not."""
    members = carried.load_members(cache, repo)
    first = members[0][0]
    carried.remember_members(cache, repo, [(0, first, hashlib.sha256(data[:first]).digest(), [d for *_, held in members for d in held])])


def _claims_too_few_lines(cache: Path, repo: RepoRef, data: bytes) -> None:
    """The retired member named with its bytes' SHA-256, but none of its lines."""
    carried.remember_members(cache, repo, [(at, size, sha, []) for at, size, sha, _ in carried.load_members(cache, repo)])


@pytest.mark.slow
@pytest.mark.parametrize("spoil", [_claims_the_live_part, _claims_too_few_lines], ids=["live-part", "too-few-lines"])
def test_a_members_memo_naming_the_wrong_lines_costs_reading_them(upstream, cli, tmp_path, retired, cache_dir, spoil):  # noqa: F811
    out, _, _ = retired
    dataset = out / "acme" / "widgets"
    repo = _repo(dataset)
    assert carried.load_members(cache_dir, repo)
    spoil(cache_dir, repo, (dataset / "errors.jsonl.gz").read_bytes())
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    plain = tmp_path / "plain"
    shutil.copytree(out, plain)
    result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", out)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "retired members does not hold for the file in place; reading every line" in result.output
    with pytest.MonkeyPatch.context() as mp:  # the sync as if no memo were there
        mp.setattr(carried, "load", lambda cache_dir, repo: {})
        mp.setattr(carried, "load_members", lambda cache_dir, repo: [])
        assert cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", plain).exit_code == 0
    assert tree(out) == tree(plain)
