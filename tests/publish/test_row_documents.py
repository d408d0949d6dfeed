"""index.json and search.json written a row at a time (``jsonio.Rows``): the writer validates the
rows in batches and serializes them as they come, so no list of every row is held. What it
writes and what it finds wrong must be exactly the whole document's: its bytes as
``dumps_rows`` writes them, its problems as the real validator reports them over the whole
document (same pointers, same order), across batch boundaries."""

from __future__ import annotations

import pytest
from test_output import COMMIT, IDENTITY, manifest_for, many_records

from crawler.base.jsonio import Rows, dumps_rows
from crawler.catalogue.search import search_document, search_rows
from crawler.model.records import SCHEMA_VERSION
from crawler.publish import writer
from crawler.publish.validate import check, validate_dataset

HEAD = {"schema_version": SCHEMA_VERSION, "repo": "o/n", "commit": COMMIT}
#: rows over three batches, the last one short
N = 2 * writer._ROW_BATCH + 7


def rows_of(records):
    return [writer.index_row(r) for r in records]


def broken(rows):
    """Rows wrong in several ways, on both sides of each batch boundary."""
    rows = [dict(r) for r in rows]
    batch = writer._ROW_BATCH
    rows[3]["line"] = "three"
    del rows[batch - 1]["title"]
    rows[batch]["sites"] = -1
    rows[batch]["surprise"] = True
    rows[2 * batch + 1]["kind"] = 7
    rows[-1]["id"] = "not an id"
    return rows


@pytest.mark.parametrize("head", [HEAD, {**HEAD, "commit": "not a commit"}], ids=["head valid", "head invalid"])
@pytest.mark.parametrize("bad", [False, True], ids=["rows valid", "rows invalid"])
def test_a_row_document_written_as_rows_is_the_whole_document(head, bad):
    rows = rows_of(many_records(N))
    if bad:
        rows = broken(rows)
    whole = {**head, "entries": rows}
    data, problems = writer._document("index.json", "index", Rows(head, lambda: iter(rows)))
    assert data == dumps_rows(whole)
    assert problems == check("index", whole, "index.json")
    assert bool(problems) == (bad or head is not HEAD)
    if bad:
        assert {p.pointer.split("/")[2] for p in problems if p.pointer.startswith("/entries/")} == {
            str(n) for n in (3, writer._ROW_BATCH - 1, writer._ROW_BATCH, 2 * writer._ROW_BATCH + 1, N - 1)
        }


def test_a_row_document_of_no_rows_is_the_whole_document():
    data, problems = writer._document("index.json", "index", Rows(HEAD, lambda: iter([])))
    assert data == dumps_rows({**HEAD, "entries": []}) and problems == []


def test_the_search_rows_are_search_documents_rows_and_refuse_records_out_of_order():
    from crawler.base.errors import DataError

    records = sorted(many_records(N), key=lambda r: r["id"])
    manifest = manifest_for(records, len(records))
    (rows,) = search_rows(records, manifest).values()
    data, problems = writer._document("search.json", "search", rows)
    assert problems == [] and data == dumps_rows(search_document(records, "o/n", COMMIT))
    (backwards,) = search_rows(records[::-1], manifest).values()
    with pytest.raises(DataError, match="not in id order"):
        writer._document("search.json", "search", backwards)


def test_a_dataset_rendered_with_streamed_rows_validates_with_both_engines(tmp_path):
    records = sorted(many_records(N), key=lambda r: r["id"])
    manifest = manifest_for(records, len(records))
    target = writer.write_dataset(tmp_path / "o" / "n", writer.render_files(records, manifest, search_rows(records, manifest)))
    assert (target / "index.json").read_bytes() == dumps_rows(writer.index_for(records, "o/n", COMMIT))
    assert (target / "search.json").read_bytes() == dumps_rows(search_document(records, "o/n", COMMIT))
    assert validate_dataset(target, engine="fast") == [] and validate_dataset(target, engine="reference") == []
    assert IDENTITY.commit == COMMIT
