"""errcat render: escaping of everything from the crawled source, HTML and Markdown layouts."""

from __future__ import annotations

import json
import re

import pytest

import consumer_data as cd
from crawler.site import md_inline, script_json


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    from click.testing import CliRunner

    from crawler.cli import main

    tmp = tmp_path_factory.mktemp("render")
    dataset = cd.write(tmp)
    runner = CliRunner()
    for fmt in ("html", "markdown"):
        result = runner.invoke(main, ["render", "--data", str(tmp / "out"), "--out", str(tmp / fmt), "--format", fmt])
        assert result.exit_code == 0, result.output
    records = {r["message"]["text"]: r for r in (json.loads(x) for x in (dataset / "errors.jsonl").read_bytes().splitlines())}
    return tmp, dataset, records


def test_script_json_cannot_close_the_script_or_break_a_line():
    data = {"m": "</script><!-- & \u2028\u2029 >"}
    text = script_json(data)
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert json.loads(text) == data


def test_html_escapes_hostile_text(rendered):
    tmp, _, records = rendered
    evil = records[cd.HOSTILE["text"]]
    page = (tmp / "html" / "errors" / f"{evil['id']}.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<tag>" not in page
    assert page.count("<script") == 3
    assert "bad &lt;tag&gt; &amp; &quot;quote&quot;" in page
    index_js = (tmp / "html" / "search-index.js").read_text(encoding="utf-8")
    assert "</script" not in index_js and "\u2028" not in index_js


def test_html_site_layout(rendered):
    tmp, dataset, records = rendered
    site = tmp / "html"
    assert {p.name for p in site.iterdir()} == {"index.html", "errors", "search.js", "search-index.js", "search.json", "style.css"}
    kv = records[cd.KV["text"]]
    assert (site / "errors" / f"{kv['id']}.json").read_bytes() == (dataset / "errors" / f"{kv['id']}.json").read_bytes()
    page = (site / "errors" / f"{kv['id']}.html").read_text(encoding="utf-8")
    order = [page.index(f'id="{s}"') for s in ["title", "exception", "message", "what-it-means", "source", "solutions",
                                                 "example-fix", "defensive-patterns", "prevention", "when-it-happens",
                                                 "related", "provenance"]]
    assert order == sorted(order)
    assert "http" not in (site / "search.js").read_text() and "fetch(" not in (site / "search.js").read_text()


def test_markdown_pages(rendered):
    tmp, _, records = rendered
    evil = records[cd.HOSTILE["text"]]
    page = (tmp / "markdown" / "errors" / f"{evil['id']}.md").read_text(encoding="utf-8")
    assert "<script>" not in page.split("```")[0]  # outside code blocks nothing is raw HTML
    assert "*Not yet explained.*" in page and f"[This entry as JSON]({evil['id']}.json)" in page
    kv = records[cd.KV["text"]]
    kv_page = (tmp / "markdown" / "errors" / f"{kv['id']}.md").read_text(encoding="utf-8")
    assert "- Use one of the valid kinds &amp; retry\\." in kv_page
    index = (tmp / "markdown" / "index.md").read_text(encoding="utf-8")
    assert f"(errors/{kv['id']}.md)" in index
    assert md_inline("a `b` c") == "``a `b` c``"


def test_render_refuses_to_write_into_the_dataset(rendered, cli):
    _, dataset, _ = rendered
    result = cli("render", "--data", dataset, "--out", dataset / "site")
    assert result.exit_code == 2 and "outside the dataset" in result.stderr
