"""The site across a history's releases (#31 item 5): every entry's page says which releases
raised it, the index filters by release, and the search box gets what it needs to read retired
wordings and a named release as errcat match does (test_search_parity.py holds it to that)."""

from __future__ import annotations

import html
import json
import re

import consumer_data as cd

from crawler.consume.lineage import live_in, releases
from crawler.consume.site import render_site


def test_every_page_names_its_releases_and_the_index_filters_by_them(tmp_path):
    dataset, by_text = cd.write_rich(tmp_path)
    records = by_text["_ordered"]
    render_site(dataset, tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    options = re.findall(r'<option value="(\d+)">([^<]*)</option>', index.split('id="release"', 1)[1].split("</select>", 1)[0])
    covered = [html.unescape(v) for _, v in options]
    assert covered == ["v0.9.0", "v0.10.0", "v0.11.0"] and [int(n) for n, _ in options] == [0, 1, 2]
    rows = {eid: span for span, eid in re.findall(r'<li data-s="[^"]*"[^>]*? data-v="(\d+-\d+)"><a href="errors/([0-9a-f]{16})\.html"', index)}
    assert len(rows) == len(records)
    for r in records:
        raised = [n for n, v in enumerate(covered) if live_in(r["history"], v)]
        assert rows[r["id"]] == f"{raised[0]}-{raised[-1]}", r["id"]
        page = (tmp_path / "site" / "errors" / f"{r['id']}.html").read_text(encoding="utf-8")
        span = releases(r["history"])
        assert span is not None and f"<dt>Raised in</dt><dd>{html.escape(span.text())}</dd>" in page, r["id"]
    retired = [r for r in records if r["history"].get("retired")]
    assert retired and all(rows[r["id"]] == "0-1" or rows[r["id"]] == "1-1" for r in retired)


def test_the_search_index_says_the_releases_and_what_succeeds_a_retired_entry(tmp_path):
    dataset, by_text = cd.write_rich(tmp_path)
    records = by_text["_ordered"]
    render_site(dataset, tmp_path / "site")
    script = (tmp_path / "site" / "search-index.js").read_text(encoding="utf-8")
    payload = json.loads(script.removeprefix("window.ERRCAT_SEARCH = ").rstrip().removesuffix(";"))
    assert payload["releases"] == ["v0.9.0", "v0.10.0", "v0.11.0"]
    by_id = {e["id"]: e for e in payload["entries"]}
    retired, successor = records[-1], records[0]
    assert by_id[retired["id"]]["r"] == 1 and by_id[retired["id"]]["t"] == successor["id"]
    assert by_id[retired["id"]]["v"] == [payload["releases"].index(retired["history"]["first_seen"]["version"]), 1, 2]
    assert "r" not in by_id[successor["id"]] and "t" not in by_id[successor["id"]] and by_id[successor["id"]]["v"][1:] == [-1, -1]


def test_a_catalogue_of_one_commit_has_no_release_filter(tmp_path):
    render_site(cd.write(tmp_path), tmp_path / "site")
    assert 'id="release"' not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert '"releases"' not in (tmp_path / "site" / "search-index.js").read_text(encoding="utf-8")
