"""A dataset of schema 5 (tests/data/v5: made by errcat before schema 6, from the fixture tree in
tests/data/v5/tree.py), one of schema 6 (tests/data/v6: a history errcat made before schema 7,
from the trees in tests/data/v6/tree.py) and one of schema 7 (tests/data/v7: the same history made
before schema 8) are read by every command that reads datasets as the
datasets errcat makes of the same code today: the readers migrate each document, one schema at a
time (``crawler.publish.migrate``).

Each dataset is committed as the older errcat wrote it rather than made here by migrating a new one
backwards: a reverse migration written for the test would only show that two functions of this
code agree with each other, not that the files an older errcat wrote are read right."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest

from crawler.model.records import OLDER_SCHEMA_VERSIONS, SCHEMA_VERSION
from crawler.publish import migrate
from crawler.publish.dataset import iter_record_data, iter_records, load_index, load_manifest, load_search_index
from tests.helpers import jsonl_bytes

pytestmark = pytest.mark.slow

V5 = Path(__file__).resolve().parent.parent / "data" / "v5"
V6 = Path(__file__).resolve().parent.parent / "data" / "v6"
V7 = Path(__file__).resolve().parent.parent / "data" / "v7"
sys.path.insert(0, str(V5))
from tree import TOML, TREE  # noqa: E402

sys.path.remove(str(V5))
del sys.modules["tree"]  # v6's tree.py is another module of the same name
sys.path.insert(0, str(V6))
from tree import FIRST, SECOND  # noqa: E402
from tree import TOML as TOML_V6  # noqa: E402

sys.path.remove(str(V6))
del sys.modules["tree"]

#: The one entry schema 5 had no place for: the bare assert of check_name, keyed by its condition.
BARE_ASSERT = "assert name.isidentifier()"


def _copy(data: Path, root: Path) -> Path:
    """A copy of a committed dataset as an output root (its files are not the test's to change)."""
    shutil.copytree(data / "acme", root / "acme")
    return root


@pytest.fixture
def v5(tmp_path: Path) -> Path:
    """A copy of the schema-5 dataset."""
    return _copy(V5, tmp_path / "v5")


@pytest.fixture
def v6(fixture_repo, cli, tmp_path: Path) -> tuple[Path, Path]:
    """The same tree synced by this errcat, as make.py did: (errcat.toml, the output root)."""
    fixture_repo.commit(TREE, tag="v1.0")
    config = tmp_path / "errcat.toml"
    config.write_text(TOML)
    out = tmp_path / "v6"
    result = cli("sync", "--repo", fixture_repo.path, "--ref", "v1.0", "--upstream", "acme", "--config", config, "--out", out, "--catch-up")
    assert result.exit_code == 0, result.output
    return config, out


def _records(dataset: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}


def _but_the_action(record: dict) -> dict:
    """The record without ``meaning.action``: who acts is derived by the rules of the errcat that
    wrote the record, which change from release to release of errcat; a migration carries it as
    written (validated against today's schema), so only the rest must read as today's errcat makes it."""
    meaning = {k: v for k, v in record["meaning"].items() if k != "action"}
    return {**record, "meaning": meaning}


def _all_but_actions(records: dict[str, dict]) -> dict[str, dict]:
    return {rid: _but_the_action(r) for rid, r in records.items()}


def test_every_record_of_schema_5_reads_as_the_record_errcat_makes_of_the_same_code(v5, v6):
    old, new = v5 / "acme" / "server", v6[1] / "acme" / "server"
    made = _records(new)
    assert json.loads((old / "manifest.json").read_text())["schema_version"] == "5"
    assert load_manifest(old).commit == load_manifest(new).commit  # (the fixture repository commits the same commit)
    read = {r["id"]: r for r in iter_record_data(old)}
    assert {r["kind"] for r in read.values()} == {"raise", "assert", "log", "response"}
    extra = {rid for rid, r in made.items() if r["title"] == BARE_ASSERT}
    assert len(extra) == 1 and set(made) - set(read) == extra
    for rid, record in read.items():
        assert _but_the_action(record) == _but_the_action({**made[rid], "related": record["related"]}), rid
        assert record["meaning"]["action"]["actor"], rid
        # the new entry is related to its neighbours (in the place of a farther one), which schema 5 could not know
        if made[rid]["related"] != record["related"]:
            assert any(r["id"] in extra for r in made[rid]["related"]), rid
    models = {r.id: r.model_dump(mode="json") for r in iter_records(old)}
    assert models == read
    logged = [r for r in read.values() if r["kind"] == "log"]
    assert logged and all(r["exception"] is None and r["sites"][0]["exception"] is None for r in logged)
    assert {r["response"]["builder_qualname"] for r in read.values() if r["kind"] == "response"} == {"pkg.errors.create_error_response"}
    assert load_index(old).schema_version == load_search_index(old).schema_version == SCHEMA_VERSION


def test_a_diff_of_a_schema_5_and_a_schema_6_dataset_of_one_commit_shows_only_the_new_entry(v5, v6, cli):
    result = cli("diff", v5 / "acme" / "server", v6[1] / "acme" / "server", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [(c["kind"], c["title"]) for c in report["changes"]] == [("added", BARE_ASSERT)]
    assert report["counts"]["unchanged"] == len(_records(v5 / "acme" / "server"))


def test_validate_says_a_schema_5_dataset_is_one_that_every_command_reads(v5, cli):
    result = cli("validate", v5)
    assert result.exit_code == 1
    assert (
        result.stdout.rstrip()
        .splitlines()[-1]
        .endswith(f"made at schema 5, which every command still reads; `errcat sync` or `errcat crawl` writes it anew at schema {SCHEMA_VERSION}")
    )


def test_show_and_match_read_a_schema_5_dataset(v5, cli):
    data = v5 / "acme" / "server"
    logged = next(r for r in _records(data).values() if r["kind"] == "log" and "large; it" in r["message"]["text"])
    shown = cli("show", logged["id"], "--data", data, "--json")
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    assert record["schema_version"] == SCHEMA_VERSION and record["exception"] is None and record["log"]["level"] == "warning"
    page = cli("show", logged["id"], "--data", data, "--no-pager", "--color", "never")
    assert page.exit_code == 0 and "at WARNING by logger" in page.stdout, page.output
    got = json.loads(cli("match", "--data", data, "--json", "WARNING 12-02 06:30:00 config.py:10] size 12 is large; it may be slow").stdout)
    assert got["matches"][0]["id"] == logged["id"] and got["matches"][0]["exception"] == "WARNING"
    site = data.parent.parent.parent / "site"
    rendered = cli("render", "--data", data, "--out", site)
    assert rendered.exit_code == 0, rendered.output
    assert "at WARNING by logger" in (site / "errors" / f"{logged['id']}.html").read_text()


def test_a_sync_over_a_schema_5_dataset_keeps_each_unchanged_record_pinned_where_it_was(v5, v6, fixture_repo, cli):
    config, fresh = v6
    first = fixture_repo.repo.head.commit.hexsha
    data = v5 / "acme" / "server"
    # what errcat makes of the first commit now: a record the same there as the old one migrated is unchanged
    made = _records(fresh / "acme" / "server")
    unchanged = {rid for rid, r in iter_record_data_by_id(data).items() if r == made[rid]}
    assert unchanged and len(unchanged) < len(made)
    fixture_repo.commit({"README.md": "widgets\n"})
    result = cli("sync", "--repo", fixture_repo.path, "--ref", "main", "--upstream", "acme", "--config", config, "--out", v5, "--catch-up")
    assert result.exit_code == 0, result.output
    manifest = json.loads((data / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION and manifest["commit"] != first
    records = _records(data)
    assert all(r["schema_version"] == SCHEMA_VERSION for r in records.values())
    assert {rid for rid, r in records.items() if r["provenance"]["commit"] == first} == unchanged
    assert all(not (data / "errors" / f"{rid}.json").read_bytes().count(b'"schema_version": "5"') for rid in records)


def iter_record_data_by_id(dataset: Path) -> dict[str, dict]:
    return {r["id"]: r for r in iter_record_data(dataset)}


def test_a_fold_of_a_schema_5_release_and_a_schema_6_one_is_the_fold_of_two_of_schema_6(v5, fixture_repo, cli, tmp_path):
    fixture_repo.commit(TREE, tag="v1.0")
    fixture_repo.commit({"pkg/extra.py": 'def f():\n    raise KeyError("a key that is not there")\n'}, tag="v2.0")
    config = tmp_path / "errcat.toml"
    config.write_text(TOML)
    made = cli("history", "--repo", fixture_repo.path, "--upstream", "acme", "--config", config, "--per-release", tmp_path / "six", "v1.0", "v2.0")
    assert made.exit_code == 0, made.output
    # the same releases, v1.0 as errcat wrote it at schema 5
    shutil.copytree(tmp_path / "six" / "v2.0", tmp_path / "mixed" / "v2.0")
    shutil.copytree(v5, tmp_path / "mixed" / "v1.0")
    for job in ("six", "mixed"):
        result = cli("history", "--fold", tmp_path / job, "--out", tmp_path / f"folded-{job}")
        assert result.exit_code == 0, result.output
    six, mixed = (_records(tmp_path / f"folded-{job}" / "acme" / "server") for job in ("six", "mixed"))
    assert set(six) == set(mixed)
    differ = {rid for rid in six if six[rid] != mixed[rid]}
    # only what errcat 5 could not know: the assert with no message, first seen in v1.0 or (unknown to schema 5) v2.0
    assert [six[rid]["title"] for rid in differ] == [BARE_ASSERT]
    (rid,) = differ
    assert (six[rid]["history"]["first_seen"]["version"], mixed[rid]["history"]["first_seen"]["version"]) == ("v1.0", "v2.0")
    assert {**six[rid], "history": None} == {**mixed[rid], "history": None}


def test_the_steps_chain_every_older_schema_to_this_one():
    """Each older schema has a step, and following them from any one ends at this schema."""
    assert set(migrate.STEPS) == set(OLDER_SCHEMA_VERSIONS) and SCHEMA_VERSION not in OLDER_SCHEMA_VERSIONS
    record = json.loads(next((V5 / "acme" / "server" / "errors").glob("*.json")).read_text())
    seen = [record["schema_version"]]
    while record["schema_version"] in migrate.STEPS:
        record = migrate.STEPS[record["schema_version"]](record)
        seen.append(record["schema_version"])
    assert seen == [*OLDER_SCHEMA_VERSIONS, SCHEMA_VERSION]


@pytest.fixture
def v6_history(tmp_path: Path) -> Path:
    """A copy of the schema-6 history."""
    return _copy(V6, tmp_path / "v6")


@pytest.fixture
def v7_history(fixture_repo, cli, tmp_path: Path) -> Path:
    """The same two releases' history made by this errcat, as tests/data/v6/make.py made it: the output root."""
    for tree, tag in ((FIRST, "v1.0"), (SECOND, "v2.0")):
        fixture_repo.commit(tree, tag=tag)
    (tmp_path / "v7.toml").write_text(TOML_V6)
    made = cli("history", "--repo", fixture_repo.path, "--upstream", "acme", "--config", tmp_path / "v7.toml", "--out", tmp_path / "v7", "v1.0", "v2.0")
    assert made.exit_code == 0, made.output
    return tmp_path / "v7"


def test_every_record_of_a_schema_6_history_reads_as_the_record_errcat_makes_of_the_same_releases(v6_history, v7_history):
    old, new = v6_history / "acme" / "server", v7_history / "acme" / "server"
    assert json.loads((old / "manifest.json").read_text())["schema_version"] == "6"
    assert load_manifest(old).commit == load_manifest(new).commit and load_manifest(old).schema_version == SCHEMA_VERSION
    made = _records(new)
    read = {r["id"]: r for r in iter_record_data(old)}
    assert _all_but_actions(read) == _all_but_actions(made)  # every field, the histories' lifetimes and moves included
    histories = [r["history"] for r in read.values()]
    assert any(h["retired"] and h["replaced_by"] for h in histories) and any(h["retired"] and not h["replaced_by"] for h in histories)
    assert any(h["moved"] for h in histories) and {r["keyed_by"] for r in read.values()} == {"message", "condition"}
    assert all("files" not in (h[k] or {}) for h in histories for k in ("first_seen", "last_seen", "removed_in"))  # a repository's commits
    assert {r.id: r.model_dump(mode="json") for r in iter_records(old)} == read
    assert load_index(old).schema_version == load_search_index(old).schema_version == SCHEMA_VERSION


def test_every_command_reads_a_schema_6_history(v6_history, v7_history, cli, tmp_path):
    data = v6_history / "acme" / "server"
    diffed = cli("diff", data, v7_history / "acme" / "server", "--format", "json")
    assert diffed.exit_code == 0, diffed.output
    assert json.loads(diffed.stdout)["changes"] == []
    validated = cli("validate", v6_history)
    assert validated.exit_code == 1 and validated.stdout.rstrip().endswith(
        f"made at schema 6, which every command still reads; `errcat sync` or `errcat crawl` writes it anew at schema {SCHEMA_VERSION}"
    )
    retired = next(r for r in _records(data).values() if r["history"]["replaced_by"])
    page = cli("show", retired["id"], "--data", data, "--no-pager", "--color", "never")
    assert page.exit_code == 0, page.output
    assert "Removed in: v2.0 (698cd284b2f2)" in page.stdout  # a repository's commit, shown as one
    got = json.loads(cli("match", "--data", data, "--json", "ValueError: depth must be at least 1, got 0").stdout)
    assert got["matches"][0]["id"] == retired["id"] and got["matches"][0]["lineage"]["today"] == retired["history"]["replaced_by"]
    rendered = cli("render", "--data", data, "--out", tmp_path / "site")
    assert rendered.exit_code == 0, rendered.output
    assert "698cd284b2f2" in (tmp_path / "site" / "errors" / f"{retired['id']}.html").read_text()
    folded = cli("history", "--fold", v6_history, "--out", tmp_path / "folded")
    assert folded.exit_code == 0, folded.output


def test_a_schema_6_record_that_already_says_files_is_refused_as_schema_6_would(v6_history):
    """Schema 6 had no ``files`` on a lifetime: a record of schema 6 that carries one is not
    migrated into a valid record of schema 7, but left for the validation to refuse."""
    from crawler.base.errors import DataError

    data = v6_history / "acme" / "server"
    path = next(p for p in sorted((data / "errors").glob("*.json")) if json.loads(p.read_text())["history"]["first_seen"])
    record = json.loads(path.read_text())
    assert migrate.STEPS["6"](record)["schema_version"] == "7"  # as written: migrated
    record["history"]["first_seen"]["files"] = True
    assert migrate.STEPS["6"](record) == record  # left as it is
    path.write_text(json.dumps(record))
    lines = gzip.decompress((data / "errors.jsonl.gz").read_bytes()).decode().splitlines()
    lines = [json.dumps(record) if json.loads(line)["id"] == record["id"] else line for line in lines]
    (data / "errors.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(DataError, match="not a valid record"):
        list(iter_records(data))


@pytest.fixture
def v7_data(tmp_path: Path) -> Path:
    """A copy of the schema-7 history (tests/data/v7/make.py)."""
    return _copy(V7, tmp_path / "v7-data")


def test_every_record_of_a_schema_7_history_reads_as_the_record_errcat_makes_of_the_same_releases(v7_data, v7_history, cli, tmp_path):
    old, new = v7_data / "acme" / "server", v7_history / "acme" / "server"
    assert json.loads((old / "manifest.json").read_text())["schema_version"] == "7"
    assert load_manifest(old).schema_version == SCHEMA_VERSION == "8"
    read = {r["id"]: r for r in iter_record_data(old)}
    assert _all_but_actions(read) == _all_but_actions(_records(new))  # every field: schema 8 adds only a key absent without a reviewed link
    assert all("replaced_by_review" not in r["history"] for r in read.values())
    assert {r.id: r.model_dump(mode="json") for r in iter_records(old)} == read
    assert load_index(old).schema_version == load_search_index(old).schema_version == SCHEMA_VERSION
    diffed = cli("diff", old, new, "--format", "json")
    assert diffed.exit_code == 0 and json.loads(diffed.stdout)["changes"] == []
    folded = cli("history", "--fold", v7_data, "--out", tmp_path / "folded")
    assert folded.exit_code == 0, folded.output


def test_a_schema_7_record_that_already_says_it_was_linked_by_review_is_refused_as_schema_7_would(v7_data):
    """Schema 7 had no ``replaced_by_review``: a record of schema 7 carrying one is left for the
    validation against schema 8 to refuse, not migrated into a valid record."""
    from crawler.base.errors import DataError

    data = v7_data / "acme" / "server"
    path = next(p for p in sorted((data / "errors").glob("*.json")) if json.loads(p.read_text())["history"]["replaced_by"])
    record = json.loads(path.read_text())
    assert migrate.STEPS["7"](record)["schema_version"] == SCHEMA_VERSION
    record["history"]["replaced_by_review"] = {"why": "x", "reviewer": "y", "old_release": "v1.0", "commit": "0123456"}
    assert migrate.STEPS["7"](record) == record
    lines = gzip.decompress((data / "errors.jsonl.gz").read_bytes()).decode().splitlines()
    lines = [json.dumps(record) if json.loads(line)["id"] == record["id"] else line for line in lines]
    (data / "errors.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(DataError, match="not a valid record"):
        list(iter_records(data))
