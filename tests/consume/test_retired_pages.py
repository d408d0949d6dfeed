"""A retired entry's page helps as much as a live one (#31 item 3): it says which releases raised
it and names what raises the error today, shows the explanation written for its successor (said
as such, with the wording that differs), and `curate check` follows the lineage, so a rewording
orphans no explanation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_match_lineage import V1, V2, V11

BASE = 'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\n'
WHAT = "The widget's size is checked before it is framed: a size below zero never fits a frame."


def _records(out: Path) -> dict[str, dict]:
    records = [json.loads(p.read_text()) for p in (out / "acme" / "widgets" / "errors").glob("*.json")]
    return {r["message"]["text"]: r for r in records}


def _curated(record: dict) -> dict:
    site = record["sites"][0]
    return {
        "id": record["id"],
        "what_it_means": WHAT,
        "solutions": ["Pass a size of zero or more."],
        "review": {
            "status": "reviewed",
            "commit": record["provenance"]["commit"][:12],
            "exception": record["exception"]["name"],
            "template": record["message"]["text"],
            "guards": site["facts"]["guards"],
            "path": site["path"],
            "qualname": site["qualname"],
        },
    }


@pytest.fixture
def explained(fixture_repo, cli, tmp_path, monkeypatch):
    """A history over v1.0, v1.1, v2.0 with a reviewed explanation for today's wording only."""
    fixture_repo.commit(V1, tag="v1.0")
    fixture_repo.commit(V11, tag="v1.1")
    fixture_repo.commit(V2, tag="v2.0")
    work = tmp_path / "work"
    work.mkdir()
    (work / "errcat.toml").write_text(BASE)
    monkeypatch.chdir(work)
    first = cli("history", "--repo", fixture_repo.path, "--out", tmp_path / "first", "v1.0", "v1.1", "v2.0")
    assert first.exit_code == 0, first.output
    today = _records(tmp_path / "first")["widget size must be strictly positive and whole, got {x}"]
    curated = work / "curated" / "acme" / "widgets"
    curated.mkdir(parents=True)
    (curated / f"{today['id']}.yaml").write_text(yaml.safe_dump(_curated(today), sort_keys=False))
    out = tmp_path / "out"
    result = cli("history", "--repo", fixture_repo.path, "--out", out, "v1.0", "v1.1", "v2.0")
    assert result.exit_code == 0, result.output
    records = _records(out)
    assert records["widget size must be strictly positive and whole, got {x}"]["explanation_status"] == "curated"
    return out, records, curated


def _ids(records: dict) -> tuple[str, str, str]:
    return (
        records["widget size must be positive, got {x}"]["id"],
        records["widget size must be strictly positive, got {x}"]["id"],
        records["widget size must be strictly positive and whole, got {x}"]["id"],
    )


@pytest.mark.slow
def test_the_terminal_page_of_the_oldest_wording(cli, explained):
    out, records, _ = explained
    first, second, today = _ids(records)
    page = cli("show", first, "--data", out).stdout
    assert "Raised in: v1.0" in page and "Removed in: v1.1" in page
    assert f"Replaced by: {second}: reworded, now widget size must be strictly positive, got {{x}}" in page
    assert f"Raised today by: {today}: widget size must be strictly positive and whole, got {{x}}" in page
    assert (
        f"Written for its successor {today}, whose message reads widget size must be strictly positive and whole, got {{x}}; "
        "this entry's read widget size must be positive, got {x}."
    ) in page
    assert WHAT in page and "Explained:  not yet by a person" in page  # its own status stays what it is: the text is its successor's
    live = cli("show", today, "--data", out).stdout
    assert "Raised in: since v2.0" in live and "Written for its successor" not in live and WHAT in live


@pytest.mark.slow
def test_the_html_and_markdown_pages_of_a_retired_wording(cli, explained, tmp_path):
    out, records, _ = explained
    first, second, today = _ids(records)
    html_site, md_site = tmp_path / "site", tmp_path / "md"
    assert cli("render", "--data", out, "--out", html_site).exit_code == 0
    assert cli("render", "--data", out, "--out", md_site, "--format", "markdown").exit_code == 0
    page = (html_site / "errors" / f"{first}.html").read_text()
    assert "<dt>Raised in</dt><dd>v1.0</dd>" in page
    assert f'<dt>Raised today by</dt><dd><a href="{today}.html"' in page
    inherited = page.split('<p class="inherited" id="inherited">', 1)[1].split("</p>", 1)[0]
    assert f'href="{today}.html"' in inherited and "<code>widget size must be positive, got {x}</code>" in inherited
    assert page.index('id="inherited"') < page.index(WHAT)
    middle = (html_site / "errors" / f"{second}.html").read_text()
    assert "<dt>Raised in</dt><dd>v1.1</dd>" in middle and "Raised today by" not in middle and WHAT in middle  # its successor is today's
    assert 'id="inherited"' not in (html_site / "errors" / f"{today}.html").read_text()
    md = (md_site / "errors" / f"{first}.md").read_text()
    assert "- **Raised in:** v1\\.0" in md and "- **Raised today by:** [" in md and f"({today}.md)" in md
    assert "*Written for its successor [" in md and "checked before it is framed" in md


@pytest.mark.slow
def test_a_hostile_successor_chain_is_escaped_and_ends(cli, explained, tmp_path):
    """A record whose successor names itself back (a loop) and a message with markup: the page
    ends the chain and escapes the text."""
    from crawler.consume.site import entry_html

    out, records, _ = explained
    first, second, today = _ids(records)
    others = {r["id"]: r for r in records.values()}
    loop = {
        **others[today],
        "message": {**others[today]["message"], "text": "<script>alert(1)</script>"},
        "history": {**(others[today]["history"] or {}), "retired": True, "replaced_by": first},
    }
    others[today] = loop
    page = entry_html(others[first], "acme/widgets", {}, ".", others)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert "Last successor" in page  # the chain's end is retired too


@pytest.mark.slow
def test_curate_check_follows_the_lineage(cli, explained, tmp_path):
    out, records, curated = explained
    first, second, today = _ids(records)
    # an explanation written for the oldest wording, before the rewordings: not an orphan
    (curated / f"{first}.yaml").write_text(yaml.safe_dump({**_curated(records["widget size must be positive, got {x}"])}, sort_keys=False))
    report = cli("curate", "check", out, "--curated", curated.parent.parent)
    assert report.exit_code == 0, report.output
    assert (
        # the successor has a text of its own (the fixture's): no `move` onto it (it would refuse to overwrite it)
        f"reworded {curated / (first + '.yaml')}: {first} was succeeded by {today}, which has a curated file of its own; {first}'s "
        f"page keeps this text for the releases that raise it: `errcat curate retire {first}` says so"
    ) in report.stdout
    assert "0 orphan(s)" in report.stdout and "1 reworded" in report.stdout
    got = json.loads(cli("curate", "check", out, "--curated", curated.parent.parent, "--json").stdout)[0]
    assert got["succeeded"] == [{"file": str(curated / f"{first}.yaml"), "id": first, "successor": today}] and got["orphans"] == []
    # an id no history knows stays an orphan
    (curated / "0123456789abcdef.yaml").write_text(
        yaml.safe_dump({**_curated(records["widget size must be positive, got {x}"]), "id": "0123456789abcdef"}, sort_keys=False)
    )
    assert cli("curate", "check", out, "--curated", curated.parent.parent).exit_code == 1
