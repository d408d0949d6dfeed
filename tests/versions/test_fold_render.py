"""The fold's final render reads its records one at a time (``history.Written``), decoded from the
fold's packed store by each pass, rather than listed all at once: the files are byte for byte
those of every record listed and rendered together, as the render did before; the fold holds
none of the records' bytes (its store's file does); the catalogue in place's manifest is read once."""

from __future__ import annotations

import orjson
import pytest
from helpers import CHECK_CODE, calls_of

from crawler.catalogue.search import search_file
from crawler.extract.runner import default_jobs
from crawler.model.records import Counts
from crawler.publish import dataset as dataset_module
from crawler.publish.writer import read_dataset, render_dataset
from crawler.versions import history
from crawler.versions.sync import fold_datasets

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
LOAD = "\n\ndef load(p):\n    raise FileNotFoundError(f'{word}: {{p}}')\n"
#: Four releases: an entry reworded (retired, linked to its successor), a file renamed (a move),
#: reworded again, and a wording come back, so the fold holds live and retired records of several kinds.
RELEASES = {
    "v1.0": {"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE + LOAD.format(word="no such widget file")},
    "v1.1": {"pkg/a.py": CHECK_CODE.replace("must be positive", "must be strictly positive") + LOAD.format(word="no such widget file")},
    "v1.2": {"pkg/a.py": LOAD.format(word="no widget file"), "pkg/checks.py": CHECK_CODE.replace("must be positive", "must be strictly positive")},
    "v2.0": {"pkg/a.py": LOAD.format(word="no such widget file"), "pkg/checks.py": CHECK_CODE.replace("must be positive", "must not be negative")},
}


def folded(fixture_repo, cli, tmp_path):
    for tag, files in RELEASES.items():
        fixture_repo.commit(files, tag=tag)
    result = cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", *RELEASES)
    assert result.exit_code == 0, result.output
    return fold_datasets([tmp_path / "r"], tmp_path / "folded")


def listed_at_once(fold: history.Fold, manifest) -> dict[str, bytes]:
    """The render as it was: every record of the fold listed as a dict, then rendered together."""
    records = [history._written(r, manifest.commit) for r in fold.records()]
    retired = sum(1 for r in records if r["history"]["retired"])
    counts = Counts(**{**manifest.counts.model_dump(), "entries": len(records) - retired, "retired": retired, "omitted": 0})
    data = manifest.model_copy(update={"counts": counts, "content_digest": ""})
    return render_dataset(records, data, search_file(records, data), max_bytes=manifest.limits.max_output_bytes, jobs=default_jobs())


@pytest.mark.slow
def test_the_render_one_record_at_a_time_writes_what_listing_them_all_wrote(fixture_repo, cli, tmp_path):
    target, fold, labels = folded(fixture_repo, cli, tmp_path)
    assert labels == list(RELEASES)
    records = [fold.record(eid) for eid in sorted(fold._entries)]
    assert sum(1 for r in records if r["history"]["retired"]) >= 2  # reworded, and gone
    assert any(r["history"]["moved"] for r in records) and any(r["history"]["replaced_by"] for r in records)
    manifest = dataset_module.load_manifest(target)
    newest = dataset_module.load_manifest(tmp_path / "r" / "v2.0" / "acme" / "widgets")
    expected = listed_at_once(fold, newest)
    # written as rendered (a new dataset) and rendered into memory (one in place to compare with)
    assert read_dataset(target) == expected
    assert history.render_state(fold, newest) == expected
    assert manifest.counts.retired == sum(1 for r in records if r["history"]["retired"])


@pytest.mark.slow
def test_the_records_are_made_as_read_and_the_fold_holds_none_of_their_bytes(fixture_repo, cli, tmp_path):
    _, fold, _ = folded(fixture_repo, cli, tmp_path)
    written = history.Written(fold, fold.steps[-1].commit)
    assert written[0] == written[0] and written[0] is not written[0]  # made anew by each read, held by none
    assert [r["id"] for r in written] == sorted(fold._entries) == written.ids
    assert written[1:].ids == written.ids[1:]
    retired = 0
    for eid, entry in fold._entries.items():
        # the record is in the store's file, the entry says where; of its key's inputs, a digest
        assert not any(isinstance(value, bytes) and len(value) > 32 for value in (getattr(entry, f) for f in entry.__slots__ if f != "kept"))
        assert fold.packed(eid) == orjson.dumps({k: v for k, v in fold.record(eid).items() if k != "history"})
        if entry.retired:
            # a retired id keeps no key (made again from its record when asked for) and its history as JSON
            retired += 1
            assert entry.key == () and entry.key_inputs == b"" and orjson.loads(entry.kept) == fold.record(eid)["history"]
            assert fold._key(eid) == history._record_key(fold.record(eid)) == entry.key != ()
        else:
            assert len(entry.key_inputs) == 32 and entry.history is entry.model is entry.kept
    assert retired >= 2


@pytest.mark.slow
def test_the_fold_reads_the_catalogue_in_places_manifest_once(fixture_repo, cli, tmp_path, monkeypatch):
    for tag, files in list(RELEASES.items())[:2]:
        fixture_repo.commit(files, tag=tag)
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", "v1.0", "v1.1").exit_code == 0
    fixture_repo.commit(RELEASES["v1.2"], tag="v1.2")
    out = tmp_path / "catalogue"
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--ref", "v1.2", "--out", out).exit_code == 0
    catalogue = out / "acme" / "widgets"
    reads = calls_of(monkeypatch, dataset_module, "load_manifest")
    _, fold, _ = fold_datasets([tmp_path / "r"], tmp_path / "folded", catalogue=out)
    assert fold.gap is not None and fold.gap.at.version == "v1.2"
    assert [w for w in reads if str(w) == str(catalogue)] == [catalogue]

    # and the sync: its --ref checked against the manifest its records are then held to and the
    # record files are read by (``previous_records``, the crawl's reader of them), read once
    fixture_repo.commit(RELEASES["v2.0"], tag="v2.0")
    read = calls_of(monkeypatch, dataset_module, "_read")
    result = cli("sync", "--repo", fixture_repo.path, *ARGS, "--ref", "v2.0", "--out", out)
    assert result.exit_code == 0, result.output
    assert [w for w in read if str(w) == str(catalogue / "manifest.json")] == [catalogue / "manifest.json"]


@pytest.mark.slow
def test_the_folds_index_and_search_written_as_rows_are_the_whole_documents_and_valid(fixture_repo, cli, tmp_path):
    """The fold's index.json and search.json are made, validated and written a row at a time: byte
    for byte what the whole-document writer makes of the records written, and valid for both
    validators against the schemas."""
    from crawler.base.jsonio import dumps_rows
    from crawler.catalogue.search import search_document
    from crawler.publish.validate import validate_dataset
    from crawler.publish.writer import index_for

    target, fold, _ = folded(fixture_repo, cli, tmp_path)
    manifest = dataset_module.load_manifest(target)
    records = sorted(dataset_module.iter_record_data(target, manifest), key=lambda r: r["id"])  # (the file: the live ones, then the retired)
    assert len(records) == len(fold) and any(r["history"]["retired"] for r in records)
    assert (target / "index.json").read_bytes() == dumps_rows(index_for(records, "acme/widgets", manifest.commit))
    assert (target / "search.json").read_bytes() == dumps_rows(search_document(records, "acme/widgets", manifest.commit))
    assert validate_dataset(target, engine="fast") == [] and validate_dataset(target, engine="reference") == []


def deleted_files_open() -> set[str]:
    """The files this process holds open that have no name (the fold's store is one, while it lives)."""
    import os

    links = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            links.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return {link for link in links if link.endswith("(deleted)")}


@pytest.mark.slow
def test_a_failed_fold_leaves_the_last_good_output_and_no_scratch(fixture_repo, cli, tmp_path):
    """A fold stopped after it has folded releases into its store (the newest release is refused)
    leaves the history in place as it was, nothing beside it, and no store: its file has no name
    and is closed once the fold fails."""
    from test_backfill import tree

    for tag, files in RELEASES.items():
        fixture_repo.commit(files, tag=tag)
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", *RELEASES).exit_code == 0
    out = tmp_path / "o"
    assert cli("history", "--fold", tmp_path / "r", "--out", out).exit_code == 0
    before, around, held = tree(out), sorted(p.name for p in tmp_path.iterdir()), deleted_files_open()
    newest = tmp_path / "r" / "v2.0" / "acme" / "widgets"
    record = sorted((newest / "errors").iterdir())[0]
    record.write_bytes(record.read_bytes().replace(b'"title": "', b'"title": "changed ', 1))
    result = cli("history", "--fold", tmp_path / "r", "--out", out)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "v2.0" in result.output and "content_digest" in result.output
    assert tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == around
    assert sorted(p.name for p in out.rglob("*") if p.name.startswith(".")) == []
    assert deleted_files_open() <= held


@pytest.mark.slow
def test_the_folds_files_are_the_same_whatever_their_pieces(fixture_repo, cli, tmp_path, monkeypatch):
    """index.json, search.json and errors.jsonl.gz are written a piece at a time as they are made
    (``writer.Pieces``), never held whole: the fold's catalogue through the CLI is byte for byte the
    same whatever the pieces' size and the rows' batches, and is what rendering every record
    listed at once makes; no file of the fold's (its store, its members) is left open."""
    from test_backfill import tree

    from crawler.base import jsonio
    from crawler.publish import writer

    for tag, files in RELEASES.items():
        fixture_repo.commit(files, tag=tag)
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", *RELEASES).exit_code == 0
    pieces: list[int] = []
    whole = writer.rows_pieces

    def counted(*args, **kwargs):
        made = list(whole(*args, **kwargs))
        pieces.append(len(made))
        yield from made

    monkeypatch.setattr(writer, "rows_pieces", counted)
    held = deleted_files_open()
    trees = []
    default = jsonio.PIECE
    for piece, batch in ((1, 1), (200, 3), (default, writer._ROW_BATCH)):
        monkeypatch.setattr(jsonio, "PIECE", piece)
        monkeypatch.setattr(writer, "_ROW_BATCH", batch)
        pieces.clear()
        result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / f"o{piece}")
        assert result.exit_code == 0, result.output
        assert len(pieces) == 2  # index.json and search.json, in pieces
        assert min(pieces) > 2 if piece == 1 else max(pieces) == 1 if piece == default else min(pieces) > 1, (piece, pieces)
        trees.append(tree(tmp_path / f"o{piece}"))
        assert deleted_files_open() <= held
    assert trees[0] == trees[1] == trees[2]
    target, fold, _ = fold_datasets([tmp_path / "r"], tmp_path / "again")
    newest = dataset_module.load_manifest(tmp_path / "r" / "v2.0" / "acme" / "widgets")
    assert listed_at_once(fold, newest) == read_dataset(target)
    assert {rel.split("/", 2)[2]: data for rel, data in trees[0].items()} == read_dataset(target)


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["invalid", "over"])
def test_a_write_that_fails_after_its_pieces_leaves_the_last_good_output_and_nothing_beside(fixture_repo, cli, tmp_path, failure):
    """A dataset written with its whole-dataset files in pieces that fails once they are written (a
    record the schema refuses, found at the end; errors.jsonl.gz over the limit, known once
    written) leaves the dataset in place as it was and nothing beside it."""
    from test_backfill import tree

    from crawler.base.errors import DataError
    from crawler.catalogue.search import search_rows
    from crawler.publish.writer import OverLimit, render_files, write_dataset

    for tag, files in RELEASES.items():
        fixture_repo.commit(files, tag=tag)
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", *RELEASES).exit_code == 0
    source = tmp_path / "r" / "v2.0" / "acme" / "widgets"
    manifest = dataset_module.load_manifest(source)
    records = list(dataset_module.iter_record_data(source, manifest))
    target = tmp_path / "o" / "acme" / "widgets"
    write_dataset(target, render_files(records, manifest, search_rows(records, manifest), pieces=True))
    assert read_dataset(target) == read_dataset(source)  # the same files as the crawl wrote, made in pieces
    before, around = tree(tmp_path / "o"), sorted(p.name for p in target.parent.iterdir())
    limit = None
    if failure == "invalid":
        records[-1] = {**records[-1], "kind": 12}
    else:
        limit = max(len((target / "errors" / f"{r['id']}.json").read_bytes()) for r in records) + 1
        assert (target / "errors.jsonl.gz").stat().st_size > limit
    with pytest.raises(DataError if failure == "invalid" else OverLimit):
        write_dataset(target, render_files(records, manifest, search_rows(records, manifest), max_bytes=limit, pieces=True))
    assert tree(tmp_path / "o") == before and sorted(p.name for p in target.parent.iterdir()) == around
