"""Reproductions from the upstream's own tests (issue #15, part 4): the crawl through the real
CLI on a repository built here, and the parts that must stay sound on hostile patterns."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from crawler.catalogue.reproductions import _hits
from crawler.extract.codefacts import pattern_fragments, read_test_file
from tests.helpers import jsonl_bytes


def crawl(cli, repo, config, out):
    result = cli("crawl", "--repo", repo.path, "--ref", "v1", "--config", config, "--upstream", "acme", "--out", out)
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    records = [json.loads(line) for line in jsonl_bytes(dataset).splitlines()]
    return {r["message"]["text"]: r for r in records}, json.loads((dataset / "manifest.json").read_text())


@pytest.mark.slow
def test_tests_link_to_the_entries_their_patterns_and_calls_name(meaning_repo, cli, tmp_path):
    repo, config = meaning_repo
    records, _ = crawl(cli, repo, config, tmp_path / "out")
    size = records["size must be at least 0, got {size}"]["meaning"]["reproductions"]
    assert [(r["qualname"], r["match"]) for r in size] == [
        ("test_size", r"must be at least \d+, got -1"),  # a pattern first
        ("TestWidgets.test_callable", None),  # then the callable form, its call resolved
    ]
    first = size[0]
    assert first["path"] == "tests/test_widgets.py" and first["line"] == 15 and first["end_line"] == 16
    assert first["permalink"].startswith("https://github.com/acme/widgets/blob/") and first["permalink"].endswith("/tests/test_widgets.py#L15")
    assert "check_size(-1)" in first["code"] and "def test_size" in first["code"]
    name = records["name is required for a widget"]["meaning"]["reproductions"]
    assert [(r["qualname"], r["match"]) for r in name] == [("TestWidgets.test_regex", "required for a widget"), ("test_name_plain", None)]


@pytest.mark.slow
def test_test_files_give_no_entries_and_a_bad_one_is_skipped(meaning_repo, cli, tmp_path):
    repo, config = meaning_repo
    records, manifest = crawl(cli, repo, config, tmp_path / "out")
    assert not any(r["location"]["path"].startswith("tests/") for r in records.values())
    assert "raised inside a test file, never an entry" not in records
    skipped = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert skipped["tests/test_broken.py"].startswith("test file: syntax error")
    assert records["lonely failure that no test reproduces"]["meaning"]["reproductions"] == []


@pytest.mark.slow
def test_a_hostile_pattern_is_never_run(meaning_repo, tmp_path):
    """``^(a+)+$`` against the entry's 69 a's and a '!' would backtrack for ages; the crawl
    only parses it (it has no literal text, so it links nothing)."""
    repo, config = meaning_repo
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "crawler", "crawl", "--repo", str(repo.path), "--ref", "v1", "--config", str(config), "--upstream", "acme", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={"ERRCAT_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").decode("utf-8").splitlines()]
    shout = next(r for r in records if r["message"]["text"].startswith("aaaa"))
    assert shout["meaning"]["reproductions"] == []


@pytest.mark.slow
def test_unchanged_test_files_come_from_the_cache(meaning_repo, tmp_path):
    from crawler.extract.runner import extract_all
    from crawler.source.config import load_config
    from crawler.source.opener import open_snapshot

    repo, config = meaning_repo
    upstream = load_config(config).upstreams["acme"]
    served_each = []
    for _ in range(2):
        with open_snapshot(repo=str(repo.path), ref="v1", pypi=None, upstream=upstream, include=list(upstream.include), exclude=[]) as snapshot:
            assert [f.path for f in snapshot.tests] == ["tests/test_broken.py", "tests/test_widgets.py"]
            assert not any(f.path.startswith("tests/") for f in snapshot.files)
            _, tests, served = extract_all(snapshot, cache_dir=tmp_path / "c", tests=True, jobs=1)
            served_each.append(sorted(p for p in served if p.startswith("tests/")))
            assert len(tests[1]["tests"]) == 5
    assert served_each == [[], ["tests/test_broken.py", "tests/test_widgets.py"]]  # (a bad file's skip too)


def test_pattern_fragments_are_what_every_match_contains():
    assert pattern_fragments(r"must be at least \d+, got -1") == (["must be at least ", ", got -1"], False)
    assert pattern_fragments(r"Invalid (value|key) x\.y") == (["Invalid ", " x.y"], False)
    assert pattern_fragments(r"(?i)Bad Thing") == (["bad thing"], True)
    assert pattern_fragments(r"colou?r") == (["colo", "r"], False)
    assert pattern_fragments("(unclosed") is None
    assert pattern_fragments("a" * 5000) is None  # over the size cap: not even parsed


def test_fragments_align_with_literal_runs_and_fields():
    lits = ["must have exactly ", " ids, got ", "."]
    assert _hits("exactly 4 ids, got 8", lits, False, False) == 18
    assert _hits("4 ids, got 8.", lits, False, False) == 11
    assert _hits("xmust have exactly", lits, False, False) == 0  # no field before the message's start
    assert _hits("xmust have exactly", lits, True, False) == 17
    assert _hits("an unrelated sentence", lits, False, False) == 0
    assert _hits("zzzzzzzzzz ids", lits, False, False) == 0  # mostly a field's value: says nothing


def test_a_test_file_is_read_not_run(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\nimport pytest\nwith pytest.raises(ValueError, match='x y z w v u'):\n    pass\n"
    result = read_test_file("tests/test_x.py", code.encode())
    assert result["status"] == "ok" and len(result["tests"]) == 1
    assert not marker.exists()


@pytest.mark.slow
def test_pages_show_them_as_derived_and_escaped(meaning_repo, cli, tmp_path):
    repo, config = meaning_repo
    records, _ = crawl(cli, repo, config, tmp_path / "out")
    rid = records["size must be at least 0, got {size}"]["id"]
    dataset = tmp_path / "out" / "acme" / "widgets"
    page = cli("show", rid, "--data", dataset)
    assert page.exit_code == 0, page.output
    assert "Reproduction from the tests (derived from the code)" in page.output
    assert "tests/test_widgets.py:15 in test_size  (match: must be at least \\d+, got -1)" in page.output
    assert "Where it is reached from (derived from the code)" in page.output
    assert "pkg/api.py:6 in Engine.start [entry point: library]" in page.output
    for fmt in ("html", "markdown"):
        assert cli("render", "--data", dataset, "--out", tmp_path / fmt, "--format", fmt).exit_code == 0
    html = (tmp_path / "html" / "errors" / f"{rid}.html").read_text()
    assert '<section id="reproductions">' in html and '<section id="callers">' in html
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert 'href="https://github.com/acme/widgets/blob/' in html
    md = (tmp_path / "markdown" / "errors" / f"{rid}.md").read_text()
    assert "## Reproduction from the tests \\(derived from the code\\)" in md
    assert "Engine.start" in md and "entry point: library" in md  # (the page model says it as the terminal page does)


def test_the_literal_runs_of_the_derived_facts_are_the_messages():
    """The index takes each entry's literal runs from its primary site's derived facts (made in
    the extraction workers) rather than parsing the message again: the same runs and the same
    fields at either end, for every shape of message (fields first or last, only a field, a
    message the code builds at run time)."""
    from crawler.catalogue.entries import Identity, build_entries
    from crawler.catalogue.reproductions import _Entry
    from crawler.extract.derive import derive_result
    from crawler.extract.visitor import extract_file
    from crawler.model.records import RepoRef

    source = b"""
def f(a, b, msg):
    if a:
        raise ValueError(f"{a} first, then text")
    if b:
        raise ValueError(f"text, then {b}")
    if a and b:
        raise ValueError(f"{a}")
    if msg:
        raise ValueError(msg)
    raise ValueError("only text, twice: " "joined")
"""
    result = derive_result(extract_file("pkg/m.py", source))
    identity = Identity(RepoRef(url="https://github.com/acme/widgets", owner="acme", name="widgets"), "0" * 40, "2026-01-01T00:00:00+00:00", None, "git")
    records, primaries = build_entries(identity, result["sites"])
    assert len(records) == 4  # (`{a}` and `msg`: one entry, a message known only at run time)
    for record in records:
        derived, parsed = _Entry(record, set(), primaries[record["id"]]), _Entry(record, set())
        assert (derived.lits, derived.head_field, derived.tail_field) == (parsed.lits, parsed.head_field, parsed.tail_field)
    shapes = {(tuple(e.lits), e.head_field, e.tail_field) for e in (_Entry(r, set(), primaries[r["id"]]) for r in records)}
    assert ((" first, then text",), True, False) in shapes and (("text, then ",), False, True) in shapes
