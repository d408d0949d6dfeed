"""A carried record's rows come back from the cache's memo (``versions.carried``): hostile, like
anything read from disk. A row edited there, with the memo's stamp made anew (anyone who can write
the cache can), never reaches index.json or search.json: the writer holds it to its entry's id and
to the schema like every row, and the sync stops with the schema's problems, the last good catalogue as it was
(s43-sec's finding)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.model.records import Manifest
from crawler.versions import carried
from tests.versions.test_lineage_links import ARGS, upstream  # noqa: F401 (the fixture)
from tests.versions.test_sync_carried import OTHER, retired, synced  # noqa: F401 (the fixtures)


@pytest.mark.slow
def test_an_edited_carried_row_never_reaches_the_documents(upstream, cli, tmp_path, retired):  # noqa: F811
    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    synced(cli, upstream, out, "v2.1")
    bins = list(Path(tmp_path).rglob("carried/*.bin"))
    assert bins
    repo = Manifest.model_validate_json((dataset / "manifest.json").read_bytes()).repo
    cache = bins[0].parent.parent
    rows = carried.load(cache, repo)
    assert rows
    evil = b'{"id":"' + old["id"].encode() + b'","title":"<img src=x onerror=alert(1)>\\u001b[31m","injected":true}'
    carried.remember(cache, repo, {k: v._replace(index_row=evil, search_row=evil) for k, v in rows.items()}, {})
    upstream.commit({"pkg/v1/load.py": OTHER + "\n\ndef other():\n    raise KeyError('nope')\n"}, tag="v2.2")
    result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.2", "--out", out)
    # (s46-sec: hostile rows cost rendering those records from their lines, not every sync: the rows never reach the documents)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "the memo of retired records holds rows this errcat did not write" in result.output, result.output
    for name in ("index.json", "search.json"):
        text = (dataset / name).read_bytes()
        assert b"injected" not in text and b"onerror" not in text and old["id"].encode() in text, name
