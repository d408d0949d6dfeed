"""Round 45's changes read for hostile input (s46-sec): each test builds the hostile input (a
cache's memo, a crawled repository) and runs the real CLI on it.

* The sync's memo of retired records (``versions.carried``, read in place since round 45:
  ``Memo``, ``RowsOf``) is a file of the cache, which anyone who can write the cache can remake
  (its stamp is a digest of public facts). Its index and search rows go into index.json and
  search.json as they are kept, held there to their entry's id and the schema: rows that are not
  errcat's (not JSON, another entry's, not of the schema) cost rendering those records from
  their lines, as with no memo, never a sync refused on every run until the cache is cleared;
  and the memo is written anew from that render.
* Since round 45 the extractor reads, for each ``try``, the modules its body imports
  (``visitor._imported``, for ``guard_reads.IMPORTING`` and ``STUB``): a walk that took each
  statement off the front of a list, again for each ``try`` around it, was quadratic in a body's
  statements and again for each nesting. A crawled file of 800 KB (``x;`` 400,000 times in ten
  nested ``try`` statements) held the crawl over two minutes on one core; the walk is linear now.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from crawler.versions import carried
from tests.test_hostile45 import _repo
from tests.versions.test_history import tree
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired  # noqa: F401 (the fixture)

ROOT = Path(__file__).resolve().parent.parent

#: Rows a memo may hold that errcat never writes, as made of the row kept (its entry's id known).
HOSTILE_ROWS: dict[str, Callable[[carried.Carried], carried.Carried]] = {
    "index-not-json": lambda row: row._replace(index_row=b"not json]}"),
    "search-of-another-id": lambda row: row._replace(search_row=b'{"id":"../../../evil","title":"<img src=x onerror=alert(1)>"}'),
    "search-not-of-the-schema": lambda row: row._replace(search_row=row.search_row[: row.search_row.index(b',"anchors"')] + b"}"),
}


@pytest.mark.slow
@pytest.mark.parametrize("spoil", list(HOSTILE_ROWS.values()), ids=list(HOSTILE_ROWS))
def test_hostile_rows_in_the_carried_memo_cost_rendering_the_records(upstream, cli, tmp_path, retired, cache_dir, spoil):  # noqa: F811
    out, _, _ = retired
    repo = _repo(out / "acme" / "widgets")
    rows = carried.load(cache_dir, repo)
    kept = {digest: rows[digest] for digest in rows}
    assert kept and all(row.search_row.startswith(b'{"alternatives"') for row in kept.values())
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")  # an error added elsewhere: the dataset is written
    plain = tmp_path / "plain"
    shutil.copytree(out, plain)
    with pytest.MonkeyPatch.context() as mp:  # the sync as if no memo were there
        mp.setattr(carried, "load", lambda cache_dir, repo: carried.Memo())
        assert cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", plain).exit_code == 0
    carried.remember(cache_dir, repo, {digest: spoil(row) for digest, row in kept.items()}, {})
    result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.1", "--out", out)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "rendering them from their lines" in result.output
    assert tree(out) == tree(plain)
    again = carried.load(cache_dir, repo)  # the memo written anew, of the render: the next sync carries them
    assert {digest: again[digest] for digest in again} == kept


def _nested_tries(depth: int, statements: int) -> str:
    opened = "".join(" " * i + "try:\n" for i in range(depth))
    closed = "".join(" " * i + "except ImportError:\n" + " " * (i + 1) + "raise ValueError('no widgets')\n" for i in reversed(range(depth)))
    return opened + " " * depth + "import widgets;" + "x;" * statements + "\n" + closed


@pytest.mark.slow
def test_a_long_try_body_nested_costs_the_crawl_its_length(fixture_repo, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/big.py": _nested_tries(10, 400_000)}, tag="v1")
    env = {**os.environ, "ERRCAT_HOME": str(tmp_path / "home")}
    out, cache = tmp_path / "out", tmp_path / "c"
    args = ["crawl", "--repo", str(fixture_repo.path), "--ref", "v1", "--name", "acme/widgets", "--out", str(out), "--cache-dir", str(cache)]
    # (on the quadratic walk: over two minutes on one core; linear: a few seconds, the parse's)
    done = subprocess.run([sys.executable, "-m", "crawler", *args], capture_output=True, text=True, timeout=90, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "sites 10," in done.stdout  # each handler's raise is read
    (record,) = (orjson.loads(line) for line in gzip.open(out / "acme" / "widgets" / "errors.jsonl.gz"))
    assert any("`widgets`" in step for step in record["meaning"]["action"]["steps"])  # the walk found the import


@pytest.mark.slow
def test_many_quiet_trys_in_one_function_cost_the_extraction_their_number():
    # s46-rules' ``knob_passes.quiet`` looked, for each call, through every ``try`` body of its function:
    # 8,000 of them took 6 s, 40,000 would take minutes (one crafted file); the innermost body is found
    # by a sorted walk now (a second or two here, the parse's). The timeout is a hang guard only.
    script = (
        "import ast\n"
        "from crawler.extract.knob_passes import passes\n"
        "src = 'from pkg import envs\\n\\ndef f(config):\\n    x = envs.VLLM_X\\n' + ''.join(\n"
        "    f'    try:\\n        g{i}()\\n    except Exception:\\n        logger.debug(\"x\")\\n' for i in range(40_000))\n"
        "got = passes(ast.parse(src), src)['quiet']\n"
        "print(len(got), got['g0'], got['g39999'])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["40000", "1", "1"], done.stdout
