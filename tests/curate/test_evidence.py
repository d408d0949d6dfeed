"""Evidence (curated/<owner>/<name>/evidence.yaml): validated, carried into records, ranked by check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_curate
from test_curate import MESSAGE_A, crawl, records, write_curated

upstream = test_curate.upstream  # the fixture: the same two-commit repository

OTHER = "Unsupported kv_role: {config.kv_role}"


def write_evidence(curated, body: str):
    path = curated / "acme" / "widgets" / "evidence.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def evidence_for(a: str, b: str) -> str:
    return f"""\
# reviewed by hand
{a}:
- url: https://github.com/acme/widgets/issues/2248
  title: 'ValueError: kv_transfer_config must be set'
  quote: 'ValueError: kv_transfer_config must be set for KVConnectorBase'
- url: https://github.com/acme/widgets/discussions/7#discussioncomment-12
{b}:
- url: https://github.com/acme/widgets/pull/10439
  title: Fix kv_role
"""


def crawled_with_evidence(cli, upstream, tmp_path: Path) -> tuple[Path, Path, str, str]:
    """v1 crawled with an evidence file naming MESSAGE_A's and OTHER's entries: (out, curated, a, b)."""
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    a, b = records(out)[MESSAGE_A]["id"], records(out)[OTHER]["id"]
    write_evidence(curated, evidence_for(a, b))
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    return out, curated, a, b


@pytest.mark.slow
def test_evidence_reaches_every_named_record_and_check_ranks_the_uncurated(upstream, cli, tmp_path):
    out, curated, a, b = crawled_with_evidence(cli, upstream, tmp_path)
    recs = records(out)
    assert [e["url"][-4:] for e in recs[MESSAGE_A]["explanation"]["evidence"]] == ["2248", "t-12"]
    assert recs[MESSAGE_A]["explanation_status"] == "absent"  # evidence alone is no explanation
    assert recs[OTHER]["explanation"]["evidence"] == [{"url": "https://github.com/acme/widgets/pull/10439", "title": "Fix kv_role", "quote": None}]
    assert all(not r["explanation"].get("evidence") for t, r in recs.items() if t not in (MESSAGE_A, OTHER))
    assert cli("validate", out).exit_code == 0  # the records hold to schema/record.schema.json

    report = cli("curate", "check", out, "--curated", curated)
    assert report.exit_code == 0, report.output
    hot = [line.split()[1] for line in report.stdout.splitlines() if line.strip().startswith("next ")]
    assert hot == [a, b]  # most reported first
    assert f"next     {a}  reported 2x (#2248, #7), absent" in report.stdout
    assert "evidence 2 entries with reports (0 curated, 2 not yet), 0 stale" in report.stdout
    assert "invalid" not in report.stdout.replace("0 invalid", "")  # evidence.yaml is no curated file

    write_curated(curated, a)
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    report = json.loads(cli("curate", "check", out, "--curated", curated, "--json").stdout)[0]
    assert [h["id"] for h in report["hot"]] == [b] and report["evidence"]["entries"] == 2
    curated_record = records(out)[MESSAGE_A]
    assert curated_record["explanation_status"] == "curated" and len(curated_record["explanation"]["evidence"]) == 2

    # the file is an input of the crawl: editing it alone makes a new dataset
    write_evidence(curated, evidence_for(a, b).replace("Fix kv_role", "Fix the kv_role check"))
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    assert records(out)[OTHER]["explanation"]["evidence"][0]["title"] == "Fix the kv_role check"


@pytest.mark.slow
def test_evidence_for_an_id_gone_from_the_dataset_is_reported_stale(upstream, cli, tmp_path):
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    a = records(out)[MESSAGE_A]["id"]
    write_evidence(curated, evidence_for(a, "0123456789abcdef"))
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    report = cli("curate", "check", out, "--curated", curated)
    assert report.exit_code == 0 and "evidence for 0123456789abcdef, which is not in this dataset" in report.stdout
    assert cli("curate", "check", out, "--curated", curated, "--strict").exit_code == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "edit, line, words",
    [
        (
            lambda t: t.replace("https://github.com/acme/widgets/issues/2248", "https://github.com/evil/widgets/issues/2248"),
            3,
            "is not an issue, pull request or discussion of https://github.com/acme/widgets",
        ),
        (
            lambda t: t.replace("https://github.com/acme/widgets/issues/2248", "https://evil.example/acme/widgets/issues/2248"),
            3,
            "is not an issue, pull request or discussion",
        ),
        (lambda t: t.replace("https://github.com/acme/widgets/issues/2248", "javascript://github.com/acme/widgets/issues/1"), 3, "url"),
        (lambda t: t.replace("https://github.com/acme/widgets/issues/2248", "http://github.com/acme/widgets/issues/2248"), 3, "url"),
        (lambda t: t.replace("issues/2248", "blob/main/setup.py"), 3, "url"),
        (lambda t: t.replace("issues/2248", 'issues/2248"onmouseover="x'), 3, "url"),
        (lambda t: t.replace("title: Fix kv_role", 'title: "Fix\\e]0;pwned\\a"'), 9, "control characters"),
        (lambda t: t.replace("discussions/7#discussioncomment-12", "issues/2248"), 6, "listed twice"),
        (lambda t: t.replace("  title: Fix kv_role", "  title: Fix kv_role\n  title: again"), 10, "duplicate"),
        (lambda t: t.replace("  title: Fix kv_role", "  note: x"), 9, "Extra inputs"),
        (lambda t: "../etc:\n- url: https://github.com/acme/widgets/issues/1\n", 1, "../etc"),
        (lambda t: t.replace("  quote: 'ValueError", "  quote: !!python/object 'ValueError"), 5, ""),
    ],
)
def test_an_invalid_evidence_file_stops_the_crawl_with_file_and_line(upstream, cli, tmp_path, edit, line, words):
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    before = test_curate.tree(out)
    path = write_evidence(curated, edit(evidence_for("0123456789abcdef", "fedcba9876543210")))
    result = crawl(cli, upstream, out, "v1", curated)
    err = result.stderr.strip()
    assert result.exit_code == 2 and len(err.splitlines()) == 1 and f"{path}:{line}:" in err and words in err, err
    assert test_curate.tree(out) == before  # the last good dataset stays
    check = cli("curate", "check", out, "--curated", curated)
    assert check.exit_code == 1 and f"invalid  {path}:{line}:" in check.stdout


@pytest.mark.slow
def test_a_dataset_whose_evidence_links_elsewhere_is_refused_when_read(upstream, cli, tmp_path):
    out, curated, a, b = crawled_with_evidence(cli, upstream, tmp_path)
    for path in (out / "acme" / "widgets").rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("https://github.com/acme/widgets/issues/2248", "https://github.com/evil/phish/issues/2248"), encoding="utf-8")
    shown = cli("show", a, "--data", out)
    err = shown.stderr.strip()
    assert shown.exit_code == 1 and len(err.splitlines()) == 1 and "evidence" in err and "is not an issue, pull request or discussion of" in err, err
