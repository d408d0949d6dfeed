"""The site's front page (``consume.site_index``): the search box first, the errors people report
most, the entries counted by kind, by who must act and by area, each count a way into the list."""

from __future__ import annotations

import re

from crawler.consume.site_index import index_html

MANIFEST = {"commit": "c" * 40, "commit_date": "2026-01-01T00:00:00+00:00", "ref": "v1.0"}


def record(
    n: int, *, kind: str = "raise", actor: str = "setting", path: str = "pkg/config/a.py", reports: int = 0, title: str | None = None, text: str | None = None
) -> dict:
    evidence = [{"url": f"https://github.com/acme/widgets/issues/{100 * n + i}"} for i in range(reports)]
    return {
        "id": f"{n:016x}",
        "title": title or f"error number {n}",
        "kind": kind,
        "exception": None if kind == "log" else {"name": "ValueError"},
        "log": {"level": "warning"} if kind == "log" else None,
        "message": {"text": text or title or f"error number {n}"},
        "location": {"path": path, "line": n},
        "meaning": {"action": {"actor": actor}},
        "explanation_status": "curated" if reports else "absent",
        "explanation": {"evidence": evidence} if reports else None,
        "history": {"retired": False},
    }


def test_the_search_box_comes_first_then_the_most_reported_then_the_counts():
    cut = "Total number of attention heads (\u2026"
    records = [
        record(1, reports=2),
        record(2, reports=5, title=cut, text="Total number of attention heads ({n}) must be divisible by tensor parallel size ({tp})"),
        record(3, kind="log", actor="internal", path="pkg/engine/b.py"),
        record(4, kind="log", actor="internal"),
        record(5, kind="assert", actor="environment", path="pkg/x.py"),
    ]
    page = index_html(records, MANIFEST, "acme/widgets")
    order = [page.index(mark) for mark in ('id="search"', "<h1>", 'id="most-reported"', 'id="overview"', 'id="browse"')]
    assert order == sorted(order)
    reported = re.findall(r'<li><a href="errors/(\w+)\.html">([^<]*)</a>', page.split('id="most-reported"')[1].split("</ol>")[0])
    # most reports first; a title cut at a field is shown as the template, as errcat match prints it
    assert reported == [
        (f"{2:016x}", "Total number of attention heads ({n}) must be divisible by tensor parallel size ({tp})"),
        (f"{1:016x}", "error number 1"),
    ]
    assert 'reported 5 times, first in <a href="https://github.com/acme/widgets/issues/200">#200</a>' in page
    overview = page.split('id="overview"')[1].split("</section>")[0]
    facets = {
        key: re.findall(r'open=([^"#]+)#browse">([^<]+)</a> <span class="count">(\d+)</span>', block)
        for key, block in re.findall(r'<div class="facet" id="by-(\w)">(.*?)</div>', overview)
    }
    assert facets["k"] == [("raise", "raised exceptions", "2"), ("assert", "assertions", "1"), ("log", "logged warnings and errors", "2")]
    assert [(key, n) for key, _, n in facets["w"]] == [("internal", "2"), ("setting", "2"), ("environment", "1")]
    assert dict((key, n) for key, _, n in facets["a"]) == {"pkg/config": "3", "pkg/engine": "1", "pkg": "1"}
    # every count links into the list, which index.js groups by it (data-k, data-w on each entry)
    assert all(f'data-{key}="' in page for key in "kw") and '<option value="w">who must act</option>' in page
    assert '<p id="counts">5 entries: 2 explained by a person' in page


def test_a_catalogue_nobody_reported_has_no_such_section_and_text_from_it_is_escaped():
    page = index_html([record(1, title="<script>alert(1)</script>", actor="<b>")], MANIFEST, "acme/widgets")
    assert 'id="most-reported"' not in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'open=%3Cb%3E#browse">&lt;b&gt;</a>' in page  # an actor the labels do not know: shown as it is, escaped
