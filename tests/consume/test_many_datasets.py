"""A folder of many datasets (``--data ROOT``, searched at any depth): one that cannot be read (a
damaged manifest, one of another schema_version, a truncated errors.jsonl.gz) is skipped with one
line saying why, and the others answer; when none can be read, one line and exit 1. It stopped
``errcat match`` and ``errcat curate check`` whole before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import refused_in_one_line, run_errcat

CODE = """
def f(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
"""
PASTE = "ValueError: x must be positive, got -3"
SKIPPED = "skipped a dataset that cannot be read: "


@pytest.fixture
def root(fixture_repo, cli, tmp_path) -> Path:
    """Four crawls of one fixture repository under one output root, as acme/one ... acme/four;
    the crawls also build each one's match store in the cache, as a user's crawl does."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CODE}, tag="v1")
    for name in ("one", "two", "three", "four"):
        run = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", f"acme/{name}", "--include", "pkg/**/*.py", "--out", tmp_path / "out")
        assert run.exit_code == 0, run.output
    return tmp_path / "out"


def _damage(root: Path, *names: str) -> None:
    """two: a manifest cut short; three: a manifest of another schema_version (edited in place,
    after its store was built); four: its errors.jsonl.gz cut short, and no search.json."""
    acme = root / "acme"
    if "two" in names:
        (acme / "two" / "manifest.json").write_text("{", encoding="utf-8")
    if "three" in names:
        manifest = acme / "three" / "manifest.json"
        document = json.loads(manifest.read_text(encoding="utf-8"))
        document["schema_version"] = "2"
        manifest.write_text(json.dumps(document), encoding="utf-8")
    if "four" in names:
        data = (acme / "four" / "errors.jsonl.gz").read_bytes()
        (acme / "four" / "errors.jsonl.gz").write_bytes(data[:-12])
        (acme / "four" / "search.json").unlink()


def _id(dataset: Path) -> str:
    return json.loads((dataset / "search.json").read_text(encoding="utf-8"))["entries"][0]["id"]


@pytest.mark.slow
def test_match_answers_from_the_good_datasets_and_names_each_skipped_one(root, tmp_path):
    _damage(root, "two", "three", "four")
    good = _id(root / "acme" / "one")
    result = run_errcat(["match", "--json", "--data", root, PASTE], "as is", tmp_path)
    assert result.returncode == 0, result.stderr
    assert [m["id"] for m in json.loads(result.stdout)["matches"]] == [good]
    lines = result.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith(SKIPPED) for line in lines), result.stderr
    for line, why in zip(
        lines,
        ("acme/four/errors.jsonl.gz", "acme/three/manifest.json: not a valid manifest: schema_version", "acme/two/manifest.json: not a valid manifest"),
        strict=True,
    ):
        assert why in line, line


@pytest.mark.slow
def test_match_refuses_in_one_line_when_no_dataset_can_be_read(root, tmp_path):
    _damage(root, "two", "three", "four")
    import shutil

    shutil.rmtree(root / "acme" / "one")
    result = run_errcat(["match", "--data", root, PASTE], "as is", tmp_path)
    refused_in_one_line(result, f"errcat: none of the 3 datasets under {root} can be read")
    assert result.stdout == ""


@pytest.mark.slow
def test_a_manifest_edited_after_the_store_was_built_is_still_refused(root, tmp_path):
    """The crawl built the store; editing only the manifest made match copy that store (the
    sites' lines alone looked changed), reading no manifest: it answered from a dataset of
    another schema_version."""
    _damage(root, "three")
    result = run_errcat(["match", "--data", root / "acme" / "three", PASTE], "as is", tmp_path)
    refused_in_one_line(result, "errcat: ")
    assert "manifest.json: not a valid manifest: schema_version" in result.stderr and result.stdout == ""


@pytest.mark.slow
def test_show_finds_an_entry_of_a_good_dataset_beside_bad_ones(root, tmp_path):
    _damage(root, "two", "three", "four")
    result = run_errcat(["show", _id(root / "acme" / "one"), "--data", root, "--no-pager"], "as is", tmp_path)
    assert result.returncode == 0 and "x must be positive" in result.stdout, result.stderr
    # an entry of a bad dataset: that dataset's own error, in one line
    result = run_errcat(["show", _id(root / "acme" / "three"), "--data", root, "--no-pager"], "as is", tmp_path)
    refused_in_one_line(result, "errcat: ")
    assert "three/manifest.json" in result.stderr


@pytest.mark.slow
def test_curate_check_reports_the_good_datasets_and_fails_on_a_skipped_one(root, tmp_path):
    _damage(root, "four")
    curated = tmp_path / "curated"
    curated.mkdir()
    result = run_errcat(["curate", "check", "--data", root, "--curated", curated], "as is", tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [f"{SKIPPED}{root}/acme/four/errors.jsonl.gz: the gzip stream is cut short"]
    assert [line.split(" against ")[0] for line in result.stdout.splitlines() if " against " in line] == [
        f"{root}/acme/{name}" for name in ("one", "three", "two")
    ]
