"""Every command that writes a dataset writes the files of the one table of them
(``crawler/base/dataset_files.py``): crawl of a git ref and of a wheel, sync (first and over its
own catalogue), history, a backfill's per-release datasets and their fold (alone and under the
catalogue in place), adopt of a job's artifact, each with the curated list of foreign errors and
without it. sync, history
and the fold once dropped foreign.json: they render the records themselves, and each spelled the
dataset's files on its own."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from helpers import FOREIGN_YAML

from crawler.base.dataset_files import BY_NAME, CARRIED, FILES, MATCHED, SUPPLIED, TOP_LEVEL, Maker, expected_files, record_id_of
from crawler.model.schemas import MODELS
from tests.package_index import pip_uses, release_wheel

CODE = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    return x
"""
ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]


def files_of(dataset: Path) -> set[str]:
    return {p.relative_to(dataset).as_posix() for p in dataset.rglob("*") if p.is_file() or p.is_symlink()}


def ids_of(dataset: Path) -> set[str]:
    return {json.loads(line)["id"] for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines() if line}


def mismatches(datasets: dict[str, Path], curated: frozenset[str]) -> list[str]:
    """Every dataset whose files are not the table's for its records, each with what differs."""
    found = []
    for command, dataset in datasets.items():
        have, want = files_of(dataset), expected_files(ids_of(dataset), curated)
        if have != want:
            found.append(f"{command}: lacks {sorted(want - have)}, has besides {sorted(have - want)}")
    return found


def test_the_table_names_each_file_once_with_a_schema_and_its_readers_sets_follow():
    assert len(BY_NAME) == len(FILES)
    assert {f.schema for f in FILES} <= set(MODELS)
    assert [f.name for f in FILES if f.per_record] == ["errors/{id}.json"]
    assert record_id_of("errors/0123456789abcdef.json") == "0123456789abcdef"
    assert record_id_of("errors/.json") is None and record_id_of("index.json") is None
    assert SUPPLIED == {"search.json", "foreign.json"} and CARRIED == {"foreign.json"}
    assert MATCHED == ("manifest.json", "search.json", "foreign.json")  # the match store's key hashes them in this order
    assert all(f.required for f in FILES if f.maker is Maker.WRITER)  # what the writer makes, every dataset has
    assert TOP_LEVEL == {"manifest.json", "index.json", "errors.jsonl.gz", "search.json", "foreign.json"}


def test_the_writer_refuses_a_document_the_table_does_not_name(tmp_path):
    from crawler.base.errors import DataError
    from crawler.publish.writer import render_dataset
    from tests.publish.test_output import manifest_for, many_records

    records = many_records(2)
    for extra, words in (
        ({"notes.json": {}}, "not a file of a dataset"),
        ({"index.json": {}}, "the writer's own"),
        ({"foreign.json": {"entries": []}}, "foreign.json: .errors. is a required property"),  # checked against the table's schema for it
    ):
        with pytest.raises(DataError, match=words):
            render_dataset(records, manifest_for(records), extra)


def _commands(cli, repo: Path, tmp_path: Path) -> dict[str, Path]:
    """Each command that writes a dataset of a git repository, run over ``repo`` (tags v1.0, v2.0): its dataset."""
    out = {}

    def run(name: str, *args: object, dataset: Path) -> None:
        result = cli(*args)
        assert result.exit_code == 0, f"{name}: {result.output}"
        out[name] = dataset

    run(
        "crawl",
        "crawl",
        "--repo",
        repo,
        "--ref",
        "v2.0",
        *ARGS,
        "--out",
        tmp_path / "crawled",
        "--curated",
        tmp_path / "curated",
        dataset=tmp_path / "crawled" / "acme" / "widgets",
    )
    for n, ref in enumerate(("v1.0", "v2.0"), start=1):  # the first sync, then one over the catalogue it wrote
        run(f"sync {n}", "sync", "--repo", repo, *ARGS, "--ref", ref, "--out", tmp_path / "synced", dataset=tmp_path / "synced" / "acme" / "widgets")
        if n == 1:  # kept as it was, before the second sync replaces it
            out["sync 1"] = Path(shutil.copytree(out["sync 1"], tmp_path / "first-sync"))
    run("history", "history", "--repo", repo, *ARGS, "--out", tmp_path / "history", "v1.0", "v2.0", dataset=tmp_path / "history" / "acme" / "widgets")
    run(
        "history --per-release",
        "history",
        "--repo",
        repo,
        *ARGS,
        "--per-release",
        tmp_path / "releases",
        "v1.0",
        "v2.0",
        dataset=tmp_path / "releases" / "v1.0" / "acme" / "widgets",
    )
    out["history --per-release (v2.0)"] = tmp_path / "releases" / "v2.0" / "acme" / "widgets"
    run("history --fold", "history", "--fold", tmp_path / "releases", "--out", tmp_path / "folded", dataset=tmp_path / "folded" / "acme" / "widgets")
    run(
        "history --fold --catalogue",
        "history",
        "--fold",
        tmp_path / "releases",
        "--catalogue",
        tmp_path / "synced",
        "--out",
        tmp_path / "folded-under",
        dataset=tmp_path / "folded-under" / "acme" / "widgets",
    )
    # the backfill's and the sync's last step: the artifact of a job adopted into the checkout's output/
    artifact = tmp_path / "artifact"
    shutil.copytree(tmp_path / "folded-under", artifact / "output")
    (artifact / "changelog.md").write_text("## Error catalogue: acme/widgets\n\nA history.\n", encoding="utf-8")
    run(
        "adopt",
        "adopt",
        artifact,
        "--out",
        tmp_path / "checkout" / "output",
        "--name",
        "acme/widgets",
        "--changelog",
        tmp_path / "changelog.md",
        dataset=tmp_path / "checkout" / "output" / "acme" / "widgets",
    )
    return out


@pytest.mark.slow
@pytest.mark.parametrize("with_list", [True, False], ids=["with a foreign list", "without one"])
def test_every_command_that_writes_a_dataset_writes_the_tables_files(fixture_repo, cli, tmp_path, monkeypatch, with_list):
    monkeypatch.chdir(tmp_path)  # curated/ next to the (absent) config: the working directory
    if with_list:
        path = tmp_path / "curated" / "acme" / "widgets" / "foreign" / "errors.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(FOREIGN_YAML)
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CODE}, tag="v1.0")
    fixture_repo.commit({"pkg/a.py": CODE.replace("must be positive", "must be strictly positive")}, tag="v2.0")
    datasets = _commands(cli, fixture_repo.path, tmp_path)
    curated = CARRIED if with_list else frozenset()
    assert not mismatches(datasets, curated), "\n".join(mismatches(datasets, curated))
    for command, dataset in datasets.items():
        assert cli("validate", dataset).exit_code == 0, command
        if with_list:  # the list itself, carried as the crawl wrote it
            assert (dataset / "foreign.json").read_bytes() == (datasets["crawl"] / "foreign.json").read_bytes(), command


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A package index on localhost that pip downloads from and errcat asks; nothing else."""
    with pip_uses(tmp_path / "index", monkeypatch) as files:
        yield files


@pytest.mark.slow
def test_a_crawl_and_a_history_of_wheels_write_the_tables_files(index, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "curated" / "acme" / "relpkg" / "foreign" / "errors.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(FOREIGN_YAML)
    release_wheel(index, "1.0", None)
    release_wheel(index, "2.0", None, message="worse value")
    datasets = {}
    for name, args, out in (
        ("crawl --pypi", ["crawl", "--pypi", "relpkg==2.0"], "crawled"),
        ("history --pypi", ["history", "--pypi", "relpkg==1.0", "relpkg==2.0"], "history"),
    ):
        result = cli(*args, "--include", "relpkg/**/*.py", "--out", tmp_path / out)
        assert result.exit_code == 0, f"{name}: {result.output}"
        datasets[name] = tmp_path / out / "acme" / "relpkg"
    assert not mismatches(datasets, CARRIED), "\n".join(mismatches(datasets, CARRIED))
