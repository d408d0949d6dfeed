"""A reviewed text whose code changed since (another guard) is shown as draft AND says so: the
record names the commit it was reviewed at, and every page says it may be out of date. Without
it the page read "Explained: draft" over a text naming the old guard as if it were today's."""

from __future__ import annotations

import json

import pytest

CODE = "def f(x):\n    if x {op} 0:\n        raise ValueError(f'x must be positive, got {{x}}')\n"


def drafted_at_v1(cli, fixture_repo, tmp_path):
    """One entry at tag v1 with a draft from the facts: (crawl argv without --ref, dataset, curated root, id, file)."""
    fixture_repo.commit({"pkg/a.py": CODE.format(op="<")}, tag="v1")
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl = ["crawl", "--repo", fixture_repo.path, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--curated", curated]
    assert cli(*crawl, "--ref", "v1").exit_code == 0
    data = out / "acme" / "widgets"
    eid = json.loads((data / "index.json").read_text(encoding="utf-8"))["entries"][0]["id"]
    assert cli("curate", "draft", eid, "--data", data, "--curated", curated).exit_code == 0
    return crawl, data, curated, eid, curated / "acme" / "widgets" / f"{eid}.yaml"


@pytest.mark.slow
def test_a_reviewed_text_whose_code_moved_on_says_so_on_every_page(cli, fixture_repo, tmp_path):
    crawl, data, curated, eid, _ = drafted_at_v1(cli, fixture_repo, tmp_path)
    assert cli("curate", "review", eid, "--read-and-accept-as-is", "--data", data, "--curated", curated).exit_code == 0
    assert cli(*crawl, "--ref", "v1").exit_code == 0
    record = json.loads((data / "errors" / f"{eid}.json").read_text(encoding="utf-8"))
    assert record["explanation_status"] == "curated" and "stale_since" not in record["explanation"]
    reviewed_at = record["provenance"]["commit"][:12]

    fixture_repo.commit({"pkg/a.py": CODE.format(op="<=")}, tag="v2")
    assert cli(*crawl, "--ref", "v2").exit_code == 0
    record = json.loads((data / "errors" / f"{eid}.json").read_text(encoding="utf-8"))
    assert record["explanation_status"] == "draft"
    assert reviewed_at.startswith(record["explanation"]["stale_since"]) or record["explanation"]["stale_since"].startswith(reviewed_at)
    note = "for code that has changed since: it may be out of date"
    shown = cli("show", eid, "--data", data)
    assert shown.exit_code == 0 and f"Explained:  draft (reviewed at {record['explanation']['stale_since']} {note})" in shown.stdout
    for fmt, suffix in (("html", "html"), ("markdown", "md")):
        site = tmp_path / f"site-{fmt}"
        assert cli("render", "--data", data, "--out", site, "--format", fmt).exit_code == 0
        page = (site / "errors" / f"{eid}.{suffix}").read_text(encoding="utf-8")
        assert note in page, page
