"""A sync carries the catalogue's retired records through as they were read (``history.Fold.keep``
holds them: not packed, not keyed, their history as read): each one's file, errors.jsonl line and
rows are the bytes a sync that decoded every record wrote, its file the very file in place
(linked, not written again); and an id a sync names again, revived by upstream or linked to a
successor by review, is updated like any other entry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import calls_of, jsonl_bytes, write_jsonl

from crawler.versions import history
from tests.versions.test_history import by_template, tree
from tests.versions.test_lineage_links import ARGS, NEW_TEXT, OLD_TEXT, REVIEW, V0, _links, upstream  # noqa: F401 (the fixture)

OTHER = '\ndef load(p):\n    raise FileNotFoundError(f"no such widget file: {p}")\n'


def synced(cli, repo, out: Path, *refs: str) -> None:
    for ref in refs:
        result = cli("sync", "--repo", repo.path, *ARGS, "--ref", ref, "--out", out)
        assert result.exit_code == 0, result.output


def decoding_every_record(self, records, histories=None):
    """``Fold.keep`` as it was before retired records were held: every record keyed and packed."""
    for record in records:
        h = record.get("history")
        self._entries[record["id"]] = history._Entry(
            history._record_key(record),
            history._key_inputs(record),
            history.History.model_validate(h) if h else None,
            history._paths(record),
            self._store.put(history._pack(record)),
        )


@pytest.fixture
def retired(upstream, cli, tmp_path, monkeypatch):  # noqa: F811 (the fixture)
    """The catalogue synced through v1.0, v1.1 and v2.0 (V0's check removed: retired), with no curated links."""
    home = tmp_path / "home"
    (home / "curated").mkdir(parents=True)
    monkeypatch.setenv("ERRCAT_HOME", str(home))
    out = tmp_path / "out"
    synced(cli, upstream, out, "v1.0", "v1.1", "v2.0")
    old = by_template(out / "acme" / "widgets")[OLD_TEXT]
    assert old["history"]["retired"] and old["history"]["removed_in"]["version"] == "v2.0"
    return out, old, home


@pytest.mark.slow
def test_a_retired_record_passes_through_a_sync_as_it_was(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    file = dataset / "errors" / f"{old['id']}.json"
    before, inode = file.read_bytes(), file.stat().st_ino
    line = next(ln for ln in jsonl_bytes(dataset).splitlines() if json.loads(ln)["id"] == old["id"])
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")  # an error added elsewhere: the dataset is written
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)

    keyed: list[str] = []
    real_key = history._record_key
    monkeypatch.setattr(history, "_record_key", lambda record: keyed.append(record["id"]) or real_key(record))
    synced(cli, upstream, out, "v2.1")
    records = by_template(dataset)
    assert "no such widget file: {p}" in records  # the sync wrote the new commit's catalogue
    assert old["id"] not in keyed and keyed  # the live ones were keyed; the retired one never
    assert records[OLD_TEXT] == old
    assert file.read_bytes() == before and file.stat().st_ino == inode  # the very file, linked
    assert line in jsonl_bytes(dataset).splitlines()

    # the same sync decoding every record, as before: the same bytes, every file
    monkeypatch.setattr(history.Fold, "keep", decoding_every_record)
    synced(cli, upstream, twin, "v2.1")
    assert tree(twin) == tree(out)


@pytest.mark.slow
def test_a_sync_that_links_or_revives_a_retired_record_updates_it(upstream, cli, tmp_path, retired):  # noqa: F811
    out, old, home = retired
    dataset = out / "acme" / "widgets"
    new = by_template(dataset)[NEW_TEXT]

    # linked to its successor by review: the sync writes the link into the retired record
    _links(home, (old["id"], new["id"]))
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    synced(cli, upstream, out, "v2.1")
    records = by_template(dataset)
    linked = records[OLD_TEXT]
    assert linked["history"]["retired"] and linked["history"]["replaced_by"] == new["id"] and linked["history"]["replaced_by_review"] == REVIEW
    assert records[NEW_TEXT]["history"]["replaces"] == [old["id"]]
    written = json.loads((dataset / "errors" / f"{old['id']}.json").read_text())
    assert written["history"] == linked["history"]

    # its check back upstream: the same id live again, first seen where it was
    _links(home)
    upstream.commit({"pkg/v0/cache.py": V0}, tag="v3.0")
    synced(cli, upstream, out, "v3.0")
    back = by_template(dataset)[OLD_TEXT]
    assert back["id"] == old["id"] and not back["history"]["retired"] and back["history"]["removed_in"] is None
    assert back["history"]["first_seen"]["version"] == "v1.0"
    assert json.loads((dataset / "errors" / f"{old['id']}.json").read_text())["history"] == back["history"]
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_a_line_validated_before_is_not_validated_again_and_a_changed_one_is(upstream, cli, tmp_path, monkeypatch, retired):  # noqa: F811
    from crawler.publish import dataset as dataset_module

    out, old, _ = retired
    dataset = out / "acme" / "widgets"
    checked = calls_of(monkeypatch, dataset_module, "check")
    upstream.commit({"pkg/v1/load.py": OTHER}, tag="v2.1")
    synced(cli, upstream, out, "v2.1")  # its lines were read (and found valid) by the sync before
    assert not [schema for schema in checked if schema == "record"]

    # a line whose bytes are not the ones found valid is validated: the sync stops in one line
    lines = jsonl_bytes(dataset).splitlines(keepends=True)
    n = next(i for i, ln in enumerate(lines) if json.loads(ln)["id"] == old["id"])
    lines[n] = lines[n].replace(b'"kind":"', b'"kind":"no such kind ', 1)
    write_jsonl(dataset, b"".join(lines))
    upstream.commit({"pkg/v1/load.py": OTHER + "\n"}, tag="v2.2")
    result = cli("sync", "--repo", upstream.path, *ARGS, "--ref", "v2.2", "--out", out)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"errors.jsonl.gz:{n + 1}: not a valid record: /kind" in result.output
