"""A machine draft a reviewer accepted as is (``errcat curate review --read-and-accept-as-is``) is
reviewed but not a person's text: the record says so (``explanation.accepted_as_is``, with who
drafted it), every page says so where it says "curated", ``curate check`` counts such texts apart,
and the mark lasts exactly as long as the text is still the draft: a re-review for changed code
keeps it, an edit drops it. Without this the record and its pages showed the draft as text a
person wrote."""

from __future__ import annotations

import json

import pytest
from test_stale_label import CODE, drafted_at_v1

NOTE = "(drafted by errcat from the code's facts, accepted as is by a reviewer: not written by a person)"


def _record(data, eid):
    return json.loads((data / "errors" / f"{eid}.json").read_text(encoding="utf-8"))


def _pages(cli, data, tmp_path, eid) -> dict[str, str]:
    shown = cli("show", eid, "--data", data)
    assert shown.exit_code == 0, shown.output
    pages = {"show": shown.stdout}
    for fmt, suffix in (("html", "html"), ("markdown", "md")):
        site = tmp_path / f"site-{fmt}"
        assert cli("render", "--data", data, "--out", site, "--format", fmt).exit_code == 0
        pages[fmt] = (site / "errors" / f"{eid}.{suffix}").read_text(encoding="utf-8")
        if fmt == "html":
            pages["index"] = (site / "index.html").read_text(encoding="utf-8")
    return pages


def _search_row(data, eid) -> dict:
    return next(row for row in json.loads((data / "search.json").read_text(encoding="utf-8"))["entries"] if row["id"] == eid)


def _check(cli, data, curated) -> tuple[str, dict]:
    text = cli("curate", "check", data, "--curated", curated)
    as_json = cli("curate", "check", data, "--curated", curated, "--json")
    assert text.exit_code == 0 and as_json.exit_code == 0, text.output
    reports = json.loads(as_json.stdout)
    assert len(reports) == 1
    return text.stdout, reports[0]


@pytest.mark.slow
def test_an_accepted_draft_is_labelled_as_such_until_a_person_edits_it(cli, fixture_repo, tmp_path):
    crawl, data, curated, eid, path = drafted_at_v1(cli, fixture_repo, tmp_path)
    assert cli("curate", "review", eid, "--read-and-accept-as-is", "--data", data, "--curated", curated).exit_code == 0
    assert cli(*crawl, "--ref", "v1").exit_code == 0
    record = _record(data, eid)
    assert record["explanation_status"] == "curated"
    assert record["explanation"]["accepted_as_is"] == {"drafted_by": "facts"}
    assert cli("validate", data).exit_code == 0
    assert _search_row(data, eid)["accepted_as_is"] is True
    pages = _pages(cli, data, tmp_path, eid)
    assert f"Explained:  curated {NOTE}" in pages["show"]
    assert "yes, reviewed by a person" in pages["html"] and "yes, by a person" not in pages["html"]
    assert "accepted as is by a reviewer: not written by a person" in pages["html"]
    assert "- **Explained:** curated" in pages["markdown"] and "accepted as is by a reviewer" in pages["markdown"]
    assert "explained by a machine draft a person accepted as is" in pages["index"]
    text, report = _check(cli, data, curated)
    assert "1/1 entries curated (100.00%; 1 of them machine drafts accepted as is)" in text
    assert report["curated_entries"] == 1 and report["accepted_as_is_entries"] == 1

    # a person edits the accepted text: it is theirs now, no new review needed for that
    path.write_text(path.read_text(encoding="utf-8").replace("solutions:\n", "solutions:\n- Pass a positive x.\n", 1), encoding="utf-8")
    assert cli(*crawl, "--ref", "v1").exit_code == 0
    record = _record(data, eid)
    assert record["explanation_status"] == "curated" and "accepted_as_is" not in record["explanation"]
    assert "accepted_as_is" not in _search_row(data, eid)  # a row kept from the crawl before is not reused
    pages = _pages(cli, data, tmp_path, eid)
    assert "accepted as is" not in pages["show"] + pages["html"] + pages["markdown"] + pages["index"]
    assert "yes, by a person" in pages["html"]
    text, report = _check(cli, data, curated)
    assert "1/1 entries curated (100.00%)" in text and report["accepted_as_is_entries"] == 0


@pytest.mark.slow
def test_re_reviewing_a_stale_accepted_draft_keeps_the_mark_while_the_text_is_the_draft(cli, fixture_repo, tmp_path):
    crawl, data, curated, eid, path = drafted_at_v1(cli, fixture_repo, tmp_path)
    assert cli("curate", "review", eid, "--read-and-accept-as-is", "--data", data, "--curated", curated).exit_code == 0

    fixture_repo.commit({"pkg/a.py": CODE.format(op="<=")}, tag="v2")
    assert cli(*crawl, "--ref", "v2").exit_code == 0
    record = _record(data, eid)
    assert record["explanation_status"] == "draft" and record["explanation"]["stale_since"]
    assert record["explanation"]["accepted_as_is"] == {"drafted_by": "facts"}  # stale, and still a machine's text
    assert "it may be out of date) " + NOTE in _pages(cli, data, tmp_path, eid)["show"]

    review = cli("curate", "review", eid, "--data", data, "--curated", curated)
    assert review.exit_code == 0, review.output
    assert "accepted_as_is: true" in path.read_text(encoding="utf-8")
    assert cli(*crawl, "--ref", "v2").exit_code == 0
    record = _record(data, eid)
    assert record["explanation_status"] == "curated" and record["explanation"]["accepted_as_is"] == {"drafted_by": "facts"}

    # the code moves again and this time the reviewer rewrites the text: a fresh review without the mark
    fixture_repo.commit({"pkg/a.py": CODE.format(op="<")}, tag="v3")
    assert cli(*crawl, "--ref", "v3").exit_code == 0
    path.write_text(path.read_text(encoding="utf-8").replace("solutions:\n", "solutions:\n- Pass a positive x.\n", 1), encoding="utf-8")
    assert cli("curate", "review", eid, "--data", data, "--curated", curated).exit_code == 0
    assert "accepted_as_is" not in path.read_text(encoding="utf-8")
    assert cli(*crawl, "--ref", "v3").exit_code == 0
    record = _record(data, eid)
    assert record["explanation_status"] == "curated" and "accepted_as_is" not in record["explanation"]
