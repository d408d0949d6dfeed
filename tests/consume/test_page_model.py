"""One page model (page_model.py), three renderers: the terminal page (``errcat show``), the HTML
page and the Markdown page show the same sections in the same order, for every kind of entry
(raise, assert, log, response, native), a curated entry, a retired one whose explanation is its
successor's, and an entry of several sites. The sections are read back from each output (its
headings), not from the model, so a renderer that drops, adds or reorders one fails here."""

from __future__ import annotations

import html
import json
import re

import consumer_data as cd
import pytest

from crawler.consume.page import render_text
from crawler.consume.page_model import build, file_digests
from crawler.consume.site import entry_html, entry_markdown
from tests.consume.test_issue_examples import FILES, TOML
from tests.helpers import crawl_with_config, jsonl_bytes

#: An assertion, and one error raised at two sites (one entry, "All 2 sites").
EXTRA = """
def check(n):
    assert n > 0, f"widget count must be positive, got {n}"


def first(x):
    raise ValueError("widget frame is broken beyond repair")


def second(x):
    raise ValueError("widget frame is broken beyond repair")
"""


def terminal_headings(page: str) -> list[str]:
    lines = page.split("\n")
    return [line for line, under in zip(lines, lines[1:], strict=False) if line and under == "-" * len(line)]


def html_headings(page: str) -> list[tuple[str, str]]:
    return [(key, html.unescape(title)) for key, title in re.findall(r'<section id="([^"]+)">\n<h2>(.*?)</h2>', page)]


def markdown_headings(page: str) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", line[3:]) for line in page.split("\n") if line.startswith("## ")]


def assert_same_sections(records: list[dict], manifest: dict | None = None) -> set[str]:
    """Each record's three pages against its model; returns every section key seen."""
    by_id = {r["id"]: r for r in records}
    titles = {r["id"]: r["title"] for r in records}
    digests = file_digests(manifest)
    seen: set[str] = set()
    for r in records:
        model = build(r, None)
        want = model.titled()
        assert [s.key for s in model.sections][:2] == ["summary", "message"], r["id"]
        from crawler.consume.page_model import Context

        model = build(r, Context(by_id, digests))
        want = model.titled()
        seen |= {s.key for s in model.sections}
        assert terminal_headings(render_text(r, others=by_id, digests=digests)) == [t for _, t in want], r["id"]
        assert html_headings(entry_html(r, "acme/widgets", titles, ".", by_id, digests)) == want, r["id"]
        assert markdown_headings(entry_markdown(r, titles, ".", by_id, digests)) == [t for _, t in want], r["id"]
    return seen


@pytest.mark.slow
def test_every_kind_shows_the_same_sections_in_the_same_order(fixture_repo, cli, tmp_path):
    data, records = crawl_with_config(fixture_repo, cli, tmp_path, {**FILES, "srv/extra.py": EXTRA}, TOML)
    every = [json.loads(x) for x in jsonl_bytes(data).splitlines()]
    assert {r["kind"] for r in every} >= {"raise", "assert", "log", "response", "native"}
    assert any(len(r["sites"]) > 1 for r in every)
    seen = assert_same_sections(every, json.loads((data / "manifest.json").read_text()))
    assert {"summary", "message", "source", "sites", "provenance"} <= seen


def test_curated_retired_and_many_sited_entries_show_the_same_sections_in_the_same_order(tmp_path):
    _, by_text = cd.write_rich(tmp_path)
    records = by_text["_ordered"]
    successor = records[0]  # the retired entry's (write_rich): its explanation serves the retired page
    successor["explanation_status"] = "curated"
    successor["explanation"] = {
        **by_text[cd.KV["text"]]["explanation"],
        "when_it_happens": {"trigger": "When a kind is unknown.", "common_situations": ["a typo"]},
    }
    assert any((r.get("history") or {}).get("retired") for r in records)
    assert any(r["explanation_status"] == "curated" for r in records)
    seen = assert_same_sections(records)
    assert {"history", "inherited", "what-it-means", "when-it-happens", "solutions", "example-fix", "derived", "not-explained", "related"} <= seen, seen


def test_the_sections_come_in_one_order():
    """What it means and when it happens before the code, the curated advice after what errcat
    derived, every site and the provenance last: the order the module's docstring gives."""
    records = cd.records()
    rich = json.loads(json.dumps(next(r for r in records if r["explanation_status"] == "curated")))
    rich["explanation"].update(
        when_it_happens={"trigger": "When the kind is unknown.", "common_situations": ["a typo"]},
        solutions=["Use a known kind."],
        prevention=["Check the config."],
    )
    keys = [s.key for s in build(rich).sections]
    order = ["summary", "message", "what-it-means", "when-it-happens", "source", "facts", "solutions", "prevention", "provenance"]
    assert [k for k in keys if k in order] == [k for k in order if k in keys] and "when-it-happens" in keys


def test_a_wheels_files_digest_is_shown_as_its_release_alone():
    """A history over wheels: a release that records no commit is keyed by a digest of its files,
    which the pages never show as a commit (#31); a git release keeps its commit."""
    from crawler.consume.history_page import history_rows

    digest, commit = "1196627" + "6" * 33, "a" * 40
    history = {
        "first_seen": {"version": "0.10.2", "commit": digest},
        "last_seen": {"version": "0.11.0", "commit": digest},
        "removed_in": {"version": "0.12.0", "commit": commit, "files": True},
        "retired": True,
    }
    rows = dict(history_rows(history, digests=frozenset({digest})))
    assert rows["First seen"] == [("code", "0.10.2")] and rows["Removed in"] == [("code", "0.12.0")]
    git = dict(history_rows({"first_seen": {"version": "v0.31.0", "commit": commit}}))
    assert git["First seen"] == [("code", "v0.31.0"), ("text", " ("), ("code", commit[:12]), ("text", ")")]
    manifest = {"commit": digest, "release": {"package": "vllm", "version": "0.11.0", "commit": "files"}}
    assert file_digests(manifest) == {digest} and file_digests({**manifest, "release": None}) == frozenset()
    record = json.loads(json.dumps(cd.records()[0]))
    record["history"] = history
    for page in (
        render_text(record, digests=file_digests(manifest)),
        entry_markdown(record, {}, ".", None, file_digests(manifest)),
        entry_html(record, "acme/widgets", {}, ".", None, file_digests(manifest)),
    ):
        assert "0.10.2" in page and digest[:12] not in page
