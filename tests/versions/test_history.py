"""errcat history: first/last seen over tags, retired records, ids never reused, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE, jsonl_bytes

from crawler.base.errors import DataError
from crawler.catalogue.entries import Identity, build_records
from crawler.model.records import Record, RepoRef
from crawler.versions.history import advance, version_of

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

V1 = CHECK_CODE
V2 = V1.replace("must be positive", "must be strictly positive")  # reworded
V3 = V2.replace('''    if x > 10:
        raise OverflowError("x is far too large")
''', "") + "\n\ndef load(p):\n    raise FileNotFoundError(f'no such widget file: {p}')\n"


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": V1}, tag="v1.0")
    fixture_repo.commit({"pkg/a.py": V2}, tag="v1.1")
    fixture_repo.commit({"pkg/a.py": V3}, tag="v2.0")
    return fixture_repo


def by_template(dataset: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_history_over_tags(upstream, cli, tmp_path):
    out = tmp_path / "out"
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "versions 3 (v1.0, v1.1, v2.0), entries 2, retired 2, first_seen 4/4"
    dataset = out / "acme" / "widgets"
    assert cli("validate", out).exit_code == 0
    records = by_template(dataset)
    commits = {t.name: t.commit.hexsha for t in upstream.repo.tags}

    strict = records["x must be strictly positive, got {x}"]["history"]
    assert strict["first_seen"] == {"version": "v1.1", "commit": commits["v1.1"]}
    assert strict["last_seen"] is None  # live: the manifest's commit (v2.0) has it; the record need not change
    assert not strict["retired"]

    old = records["x must be positive, got {x}"]
    assert old["history"]["retired"] and old["history"]["retired_note"] == "removed in v1.1"
    assert old["history"]["last_seen"]["version"] == "v1.0"
    assert old["history"]["replaced_by"] == records["x must be strictly positive, got {x}"]["id"]
    assert strict["replaces"] == [old["id"]]
    assert old["provenance"]["commit"] == commits["v1.0"]  # the retired page shows where it last was

    large = records["x is far too large"]["history"]
    assert large["first_seen"]["version"] == "v1.0" and large["last_seen"]["version"] == "v1.1"
    assert large["retired_note"] == "removed in v2.0" and large["removed_in"]["commit"] == commits["v2.0"]

    assert records["no such widget file: {p}"]["history"]["first_seen"]["version"] == "v2.0"

    index = json.loads((dataset / "index.json").read_text())
    assert sorted(row["retired"] for row in index["entries"]) == [False, False, True, True]
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["commit"] == commits["v2.0"]
    assert (manifest["counts"]["entries"], manifest["counts"]["retired"]) == (2, 2)


def test_range_and_list_give_the_same_bytes(upstream, cli, tmp_path):
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "a", "v1.0", "v1.1", "v2.0").exit_code == 0
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "b", "--range", "v1.0..v2.0", "--no-cache")
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_a_retired_error_that_comes_back_keeps_its_id_and_first_seen(upstream, cli, tmp_path):
    upstream.commit({"pkg/a.py": V1}, tag="v3.0")
    out = tmp_path / "out"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", out, "--range", "v1.0..v3.0").exit_code == 0
    back = by_template(out / "acme" / "widgets")["x is far too large"]["history"]
    assert not back["retired"] and back["removed_in"] is None
    assert back["first_seen"]["version"] == "v1.0" and back["last_seen"] is None


def test_an_id_is_never_reused_for_another_error():
    identity = Identity(RepoRef(url="https://github.com/o/n", owner="o", name="n"), "a" * 40, "2026-01-01T00:00:00+00:00", None, "git")
    site = {
        "path": "pkg/m.py", "line": 3, "end_line": 3, "module": "pkg.m", "qualname": "f", "kind": "raise",
        "exception": "ValueError", "exception_qualname": "builtins.ValueError",
        "template": {"text": "bad", "fields": [], "pattern": "^bad$", "form": "literal"},
        "snippet": {"start_line": 3, "end_line": 3, "code": "raise ValueError('bad')"}, "facts": {},
    }
    (record,) = [Record.model_validate(r) for r in build_records(identity, [site])]
    state = advance({}, [record], "v1", "a" * 40)
    impostor = record.model_copy(deep=True)
    impostor.sites[0].template.text = "something else entirely"
    with pytest.raises(DataError, match="ids are never reused"):
        advance(state, [impostor], "v2", "b" * 40)


@pytest.mark.parametrize("ref, version", [("v0.33.0", "v0.33.0"), ("1.2", "1.2"), ("v2.0rc1", "v2.0rc1"), ("main", None), (None, None)])
def test_version_of(ref, version):
    assert version_of(ref) == version


def test_a_history_dataset_has_its_search_index_and_validates_and_matches(upstream, cli, tmp_path):
    """history (and sync, which writes through it) wrote no search.json: match and render fell
    back to rebuilding it from errors.jsonl on every use. Its entries, retired ones too, are there."""
    out = tmp_path / "out"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v2.0").exit_code == 0
    dataset = out / "acme" / "widgets"
    search = json.loads((dataset / "search.json").read_text())
    records = [json.loads(line) for line in jsonl_bytes(dataset).decode("utf-8").splitlines()]
    assert [e["id"] for e in search["entries"]] == sorted(r["id"] for r in records)
    assert cli("validate", out).exit_code == 0
    result = cli("match", "--data", dataset, "no such widget file: /tmp/w")
    assert result.exit_code == 0, result.output
    assert by_template(dataset)["no such widget file: {p}"]["id"] in result.stdout
