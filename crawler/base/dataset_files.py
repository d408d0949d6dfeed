"""The files of a dataset, in one table: every module that writes, reads, checks or copies a
dataset takes their names and what it needs to know of them from here.

A dataset directory (``<out>/<owner>/<name>/``) holds exactly the files of :data:`FILES`. The
writer (``publish.writer``) makes those whose ``maker`` is ``WRITER`` itself and takes the others
from its caller, refusing a name the table does not hold; the validator (``publish.validate``)
checks each against its schema and reports a required one that is missing; the reader
(``publish.dataset``), the fold check (``versions.fold_check``), ``adopt``, the match store, sync
and history all take their names from here. A new document is a new row, and
``tests/publish/test_dataset_files.py`` then fails for every command that does not write it.

Standard library only, in ``base`` rather than ``model``: ``errcat match`` imports it, and the match
path imports neither pydantic nor the model package (``tests/consume/test_match_store.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class Maker(Enum):
    """Who makes a file of a dataset."""

    #: The writer, from the records and the manifest it is given.
    WRITER = "writer"
    #: The writer's caller, from the records (``catalogue.search.search_file``), in every dataset.
    CALLER = "caller"
    #: The writer's caller, from curated input: written only when there is some. A sync or a fold
    #: that renders records itself carries it over from the newest dataset it read
    #: (``publish.dataset.carried_documents``).
    CURATED = "curated"


@dataclass(frozen=True)
class DatasetFile:
    """One file of a dataset: its relative path, the schema it is checked against, who makes it
    and what its readers rely on."""

    #: The path relative to the dataset directory; one file per record names it ``errors/{id}.json``.
    name: str
    #: Its schema's name (``model.schemas.MODELS``, the file ``schema/<schema>.schema.json``).
    schema: str
    maker: Maker
    #: One file per record (``errors/<id>.json``) rather than one for the whole dataset.
    per_record: bool = False
    #: A dataset without it is invalid (``errcat validate`` says "missing"). search.json is not:
    #: histories of errcat before it wrote one lack it, and readers build it from the records.
    required: bool = True
    #: Made of every record's bytes, each record's share about its line of errors.jsonl.gz
    #: (what an entry left out to fit ``max_output_bytes`` saves there).
    of_records: bool = False
    #: Written a row a line (``base.jsonio.dumps_rows``) rather than indented.
    rows: bool = False
    #: Names the dataset's commit at its top level, as the manifest does (a sync compares a new
    #: dataset with the one in place without it; a reader holds it to the manifest's).
    names_commit: bool = False
    #: Read by the match store (``consume.match_store``): a change to it builds the store again.
    matched: bool = False
    #: What it holds: the reference page's text (Markdown).
    about: str = ""


MANIFEST = "manifest.json"
INDEX = "index.json"
SEARCH = "search.json"
FOREIGN = "foreign.json"
RECORDS = "errors.jsonl.gz"
#: The directory of the record files.
ERRORS = "errors"
RECORD_FILE = f"{ERRORS}/{{id}}.json"

#: Every file of a dataset, in the order the reference page lists them (docs/reference/dataset.md).
FILES: tuple[DatasetFile, ...] = (
    DatasetFile(
        MANIFEST,
        "manifest",
        Maker.WRITER,
        names_commit=True,
        matched=True,
        about="What was crawled (repository, commit, date, ref), the counts, the limits it was made under, "
        "the files skipped with their reasons, the errcat that made it and the digest of every other file.",
    ),
    DatasetFile(
        INDEX,
        "index",
        Maker.WRITER,
        of_records=True,
        rows=True,
        names_commit=True,
        about="One summary row per entry: id, title, exception, template, path, line.",
    ),
    DatasetFile(RECORD_FILE, "record", Maker.WRITER, per_record=True, about="One full record per entry: the `/api/errors/<id>` payload."),
    DatasetFile(
        RECORDS,
        "record",
        Maker.WRITER,
        of_records=True,
        about="Every record, one per line, gzip-compressed: several gzip members, which every gzip reader "
        "reads as one stream. The live records come first, in id order, then the retired ones (a history's), "
        "in id order. Split on `\\n` only: a message may contain U+2028, which `str.splitlines()` "
        "also splits on.",
    ),
    DatasetFile(
        SEARCH,
        "search",
        Maker.CALLER,
        required=False,
        of_records=True,
        rows=True,
        names_commit=True,
        matched=True,
        about="The search index: per entry its literal fragments, anchors and tokens (see [Use the dataset](../how-to/use-the-dataset.md)).",
    ),
    DatasetFile(
        FOREIGN,
        "foreign",
        Maker.CURATED,
        required=False,
        matched=True,
        about="The errors people paste that the upstream does not raise (torch's, CUDA's), from the curated list.",
    ),
)

#: The files of a dataset by name.
BY_NAME = {f.name: f for f in FILES}
#: The files at the top of the dataset directory (all but the record files).
TOP_LEVEL = frozenset(f.name for f in FILES if not f.per_record)
#: What the writer's caller hands in (the writer's ``extra``).
SUPPLIED = frozenset(f.name for f in FILES if f.maker is not Maker.WRITER)
#: What a sync or a fold carries over from the newest dataset it read.
CARRIED = frozenset(f.name for f in FILES if f.maker is Maker.CURATED)
#: The whole-dataset files made of every record's bytes.
AGGREGATES = frozenset(f.name for f in FILES if f.of_records and not f.per_record)
ROW_DOCUMENTS = frozenset(f.name for f in FILES if f.rows)
#: The files besides the manifest that name the dataset's commit.
NAMING_COMMIT = frozenset(f.name for f in FILES if f.names_commit and f.name != MANIFEST)
#: What the match store is built from, in this order.
MATCHED = tuple(f.name for f in FILES if f.matched)


def record_file(record_id: str) -> str:
    """The relative path of a record's file."""
    return RECORD_FILE.format(id=record_id)


def record_id_of(rel: str) -> str | None:
    """The id a relative path names when it is a record file's (``errors/<id>.json``), else None."""
    head, _, tail = RECORD_FILE.partition("{id}")
    if rel.startswith(head) and rel.endswith(tail) and len(rel) > len(head) + len(tail):
        return rel[len(head) : -len(tail)]
    return None


def expected_files(record_ids: Iterable[str], curated: frozenset[str] = frozenset()) -> set[str]:
    """The relative paths of every file a dataset of these records holds: each file of the table
    errcat always writes, the curated ones named in ``curated``, and a record file per id."""
    top = {f.name for f in FILES if not f.per_record and (f.maker is not Maker.CURATED or f.name in curated)}
    return top | {record_file(rid) for rid in record_ids}
