"""errcat sync does each piece of work once: the catalogue in place is read once, as plain data
checked against the record schema; the new commit's records come from the crawl in memory, not
from a scratch dataset written and read back; a record becomes a model only where the diff needs
one. And what that must not lose: a damaged catalogue in place is one line, a sync over the
output limit leaves out source files as ``errcat crawl`` does."""

from __future__ import annotations

import gzip
import json
import re

import orjson
import pytest
from helpers import CHECK_CODE, jsonl_bytes, write_jsonl

from crawler.base.jsonio import dumps_record, record_field
from crawler.versions import history
from crawler.versions import sync as sync_module

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
MORE = "\n\ndef other(y):\n    if y is None:\n        raise TypeError('y is required')\n    return y\n"


def sync(cli, repo, out, *extra):
    return cli("sync", "--repo", repo.path, *ARGS, "--out", out, *extra)


@pytest.mark.slow
def test_a_sync_writes_no_scratch_dataset_and_reads_nothing_back(fixture_repo, cli, tmp_path, monkeypatch):
    """The crawl's records are handed over in memory: no dataset is published by the crawl (the
    scratch directory main's sync crawled into) and none is opened with the models afterwards;
    of the records, only those of the ids that changed become models."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE + MORE})
    out = tmp_path / "out"
    assert sync(cli, fixture_repo, out).exit_code == 0

    def refused(*_args, **_kwargs):
        raise AssertionError("a sync wrote a scratch dataset or read one back")

    import crawler.crawl
    import crawler.publish.dataset
    import crawler.versions.sides

    monkeypatch.setattr(crawler.crawl, "publish", refused)  # the crawl's writer of a dataset
    monkeypatch.setattr(crawler.versions.sides, "open_dataset", refused)
    monkeypatch.setattr(crawler.publish.dataset, "load_records", refused)
    modelled: list[str] = []
    real_model = sync_module.record_model

    def counted(data, where):
        modelled.append(data["id"])
        return real_model(data, where)

    monkeypatch.setattr(sync_module, "record_model", counted)
    fixture_repo.commit({"pkg/a.py": (CHECK_CODE + MORE).replace("far too large", "much too large")})
    report = tmp_path / "diff.json"
    result = sync(cli, fixture_repo, out, "--report", report)
    assert result.exit_code == 0, result.output
    changes = json.loads(report.read_text())["changes"]
    assert [c["kind"] for c in changes] == ["reworded"]
    assert json.loads(report.read_text())["counts"]["unchanged"] == 2
    # the reworded entry on each side; the two unchanged ones stay plain data
    assert sorted(modelled) == sorted([changes[0]["old_id"], changes[0]["id"]])
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_a_damaged_record_in_place_is_one_line_and_the_catalogue_stays(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    out = tmp_path / "out"
    assert sync(cli, fixture_repo, out).exit_code == 0
    dataset = out / "acme" / "widgets"
    lines = jsonl_bytes(dataset).splitlines(keepends=True)
    record = json.loads(lines[1])
    record["sites"][0]["line"] = "seven"  # of the wrong type: the record schema refuses it
    write_jsonl(dataset, lines[0] + json.dumps(record).encode() + b"\n")
    before = {p.relative_to(dataset): p.read_bytes() for p in dataset.rglob("*") if p.is_file()}
    fixture_repo.commit({"pkg/a.py": CHECK_CODE.replace("far too large", "much too large")})

    result = sync(cli, fixture_repo, out)
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("errcat: ")]
    assert "errors.jsonl.gz:2: not a valid record" in line and "/sites/0/line" in line, result.stderr
    assert {p.relative_to(dataset): p.read_bytes() for p in dataset.rglob("*") if p.is_file()} == before


@pytest.mark.slow
def test_a_history_the_model_completes_is_read_as_the_model_reads_it(fixture_repo, cli, tmp_path):
    """A history of no fields is valid (every field has a default): read as plain data it must
    still be the model's, not a KeyError further on."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    out = tmp_path / "out"
    assert sync(cli, fixture_repo, out).exit_code == 0
    dataset = out / "acme" / "widgets"
    records = [json.loads(line) for line in jsonl_bytes(dataset).splitlines()]
    for record in records:
        record["history"] = {}
    write_jsonl(dataset, b"".join(json.dumps(r).encode() + b"\n" for r in records))
    fixture_repo.commit({"pkg/a.py": CHECK_CODE.replace("far too large", "much too large")})
    result = sync(cli, fixture_repo, out)
    assert result.exit_code == 0, result.output
    assert cli("validate", out).exit_code == 0


def generated(count: int, words: int) -> str:
    filler = " ".join(f"w{i}" for i in range(words))
    return "".join(f"def f{i}(x):\n    raise ValueError(f'case {i}: {filler} {{x}}')\n\n\n" for i in range(count))


@pytest.mark.slow
def test_a_sync_over_the_output_limit_leaves_out_source_files_as_a_crawl_does(fixture_repo, cli, tmp_path):
    """The crawl in memory holds no file to max_output_bytes: when the sync's dataset would be
    over it, the commit is crawled again as ``errcat crawl`` writes one, and the generated file
    is left out (named in the manifest) rather than entries dropped."""
    small = {f"pkg/m{i}.py": CHECK_CODE.replace("positive", f"positive ({i})") for i in range(8)}
    fixture_repo.commit({"pkg/__init__.py": "", **small, "pkg/gen.py": generated(120, words=60)}, tag="v1")
    fresh = tmp_path / "fresh"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", *ARGS, "--out", fresh).exit_code == 0
    sizes = {p.name: p.stat().st_size for p in (fresh / "acme" / "widgets").iterdir() if p.is_file()}
    limit = max(sizes.values()) * 3 // 5
    config = tmp_path / "errcat.toml"
    config.write_text(f'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\nmax_output_bytes = {limit}\n')
    crawled, synced = tmp_path / "crawled", tmp_path / "synced"
    assert cli("crawl", "--repo", fixture_repo.path, "--config", config, "--ref", "v1", "--out", crawled).exit_code == 0
    result = cli("sync", "--repo", fixture_repo.path, "--config", config, "--ref", "v1", "--out", synced)
    assert result.exit_code == 0, result.output
    assert "crawling v1 again as a crawl writes it" in result.stderr
    want = json.loads((crawled / "acme" / "widgets" / "manifest.json").read_bytes())
    got = json.loads((synced / "acme" / "widgets" / "manifest.json").read_bytes())
    # (which files the generated entries take over the limit depends on how long each record is)
    assert got["skipped"] == want["skipped"] and [s["path"] for s in got["skipped"]] == ["pkg/gen.py"]
    assert re.fullmatch(rf"its entries would take (errors\.jsonl\.gz and )?search\.json over {limit} bytes \(max_output_bytes\)", got["skipped"][0]["reason"])
    assert got["counts"]["entries"] == want["counts"]["entries"] == 9 and got["counts"]["omitted"] == 0
    texts = {json.loads(line)["message"]["text"] for line in gzip.decompress((synced / "acme" / "widgets" / "errors.jsonl.gz").read_bytes()).splitlines()}
    assert len(texts) == 9 and not any(t.startswith("case ") for t in texts)
    assert cli("validate", synced).exit_code == 0


def test_a_record_file_holds_its_history_field_as_pins_look_for_it():
    """``pins`` passes over a previous file that lacks the record's history line (a sync over a
    dataset a crawl wrote: every record gains one) without serializing the record: only sound
    while ``dumps_record`` writes the field so."""
    history_value = {"first_seen": {"commit": "a" * 40, "version": "v1"}, "last_seen": None, "moved": [], "replaces": [], "retired": False}
    record = {"id": "0" * 16, "title": "t", "history": history_value, "sites": [{"path": "p", "line": 1}], "zz": 1}
    assert record_field("history", history_value) in dumps_record(record)
    assert record_field("history", None) not in dumps_record(record)
    assert record_field("history", None) in dumps_record({**record, "history": None})


def test_key_inputs_do_not_depend_on_key_order():
    """A crawl's record and the same record read from a dataset hold their template's keys in
    another order: the fold must see the same key inputs, and not normalize every template again."""
    site = {
        "exception_qualname": "builtins.ValueError",
        "exception": "ValueError",
        "kind": "raise",
        "module": "m",
        "qualname": "f",
        "template": {"text": "x", "fields": [], "form": "literal"},
    }
    reordered = {**site, "template": dict(reversed(list(site["template"].items())))}
    assert orjson.dumps(site["template"]) != orjson.dumps(reordered["template"])
    assert history._key_inputs({"sites": [site]}) == history._key_inputs({"sites": [reordered]})


@pytest.mark.slow
def test_a_catalogue_another_errcat_made_is_diffed_against_its_commit_crawled_again(fixture_repo, cli, tmp_path):
    """The stored records came from another errcat: the previous commit is crawled again by this
    one (handed back, not read back), so the changelog shows upstream's change alone."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    out = tmp_path / "out"
    assert sync(cli, fixture_repo, out).exit_code == 0
    manifest = out / "acme" / "widgets" / "manifest.json"
    document = json.loads(manifest.read_bytes())
    document["extractor_version"] = "0"
    manifest.write_text(json.dumps(document))
    fixture_repo.commit({"pkg/a.py": CHECK_CODE.replace("far too large", "much too large")})
    report = tmp_path / "diff.json"
    result = sync(cli, fixture_repo, out, "--report", report)
    assert result.exit_code == 0, result.output
    assert "re-crawling the previous commit" in result.stderr
    diff = json.loads(report.read_text())
    assert [c["kind"] for c in diff["changes"]] == ["reworded"] and diff["counts"]["unchanged"] == 1
    assert cli("validate", out).exit_code == 0
