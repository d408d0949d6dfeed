"""Deterministic JSON, the one way errcat writes it: keys sorted, two-space indent, UTF-8, newline.

Records are built as plain dicts on the crawl's hot path and serialized with orjson (a few
microseconds a record); anything written from a pydantic model goes through the same function,
so every writer produces the same bytes for the same data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel

_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
_LINE = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def _plain(data: Any) -> Any:
    return data.model_dump(mode="json") if isinstance(data, BaseModel) else data


def dumps(data: Any) -> bytes:
    """A pretty JSON document. orjson refuses lone surrogates; it writes NaN as null, which no
    schema of ours admits, so a NaN never gets past validation."""
    return orjson.dumps(_plain(data), option=_PRETTY)


def dumps_line(data: Any) -> bytes:
    """One compact JSON line."""
    return orjson.dumps(_plain(data), option=_LINE)


#: Where :func:`dumps_rows` puts the rows: a line of the pretty document, which no string value
#: can hold (a newline in a value is written as ``\n``).
_ROWS_AT = b'\n  "entries": []'


def dumps_rows(data: Any) -> bytes:
    """A document whose ``entries`` list (index.json, search.json: one row per entry) has one
    compact row per line, the rest as :func:`dumps`: a third smaller than fully indented, and a
    changed entry is one changed line in a diff."""
    data = _plain(data)
    return rows_document({**data, "entries": []}, (dumps_row(row) for row in data["entries"]))


def dumps_row(row: Any) -> bytes:
    """One row of a row document (:func:`dumps_rows`), as its line holds it."""
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS)


class RawRow(bytes):
    """A row of a row document given as its bytes (as :func:`dumps_row` made them) and the id of
    its entry: a row errcat wrote and validated before, for the same record, which the writer
    puts in the document as it is (``versions.carried``)."""

    id: str


def raw_row(data: bytes, entry_id: str) -> RawRow:
    """:class:`RawRow` of ``data`` for the entry ``entry_id``."""
    row = RawRow(data)
    row.id = entry_id
    return row


class KnownRow(bytes):
    """A row of a row document as its bytes, which this errcat made and validated for the same
    inputs and kept in a memo checked whole on the way in (``publish.row_bytes``): the writer puts
    it in as it is, neither parsed nor validated again (a :class:`RawRow` is both)."""

    id: str


def known_row(data: bytes, entry_id: str) -> KnownRow:
    """:class:`KnownRow` of ``data`` for the entry ``entry_id``."""
    row = KnownRow(data)
    row.id = entry_id
    return row


def rows_document(head: dict[str, Any], rows: Iterable[bytes]) -> bytes:
    """:func:`dumps_rows` of the document ``head`` (its ``entries`` left out or empty) with the
    rows ``rows`` (each as :func:`dumps_row` made it), taken one at a time: the rows are never
    all held, but as the document's bytes."""
    return b"".join(rows_pieces(head, rows))


#: How large the pieces of :func:`rows_pieces` grow before one is handed on.
PIECE = 1 << 20


def rows_pieces(head: dict[str, Any], rows: Iterable[bytes], piece: int | None = None) -> Iterator[bytes]:
    """:func:`rows_document`'s bytes as pieces of about ``piece`` bytes (None: ``PIECE``), one after
    another as the rows come: joined, they are that document (a writer that writes each piece as
    it is made never holds the document, tens of MB on a history of every release)."""
    piece = PIECE if piece is None else piece
    whole = orjson.dumps({**head, "entries": []}, option=_PRETTY)
    before, _, after = whole.partition(_ROWS_AT)
    out = bytearray(before)
    sep, first = b'\n  "entries": [\n    ', True
    for row in rows:
        out += sep
        out += row
        sep, first = b",\n    ", False
        if len(out) >= piece:
            yield bytes(out)
            out.clear()
    if first:  # no row: the document as it is
        yield whole
        return
    out += b"\n  ]"
    out += after
    yield bytes(out)


class Rows(NamedTuple):
    """A row document (index.json, search.json) as its head (the document without its entries)
    and ``rows``, which makes its rows one at a time as plain data: the writer validates and
    writes them as they come, so that no list of every row is ever held (on a history of every
    release, ~9 KiB of objects for each entry ever seen)."""

    head: dict[str, Any]
    rows: Callable[[], Iterator[Any]]
    #: Filled in by the writer when given: each row's bytes as written, by its entry's id.
    written: dict[str, bytes] | None = None


def dumps_record(data: Any) -> bytes:
    """A record file: one top-level field a line, each value compact, and one site a line.

    Half the size of :func:`dumps` (whose indentation was 8.6 MB of vLLM's 47 MB of records),
    and still a diff by field: a moved raise changes its ``location`` and ``sites`` lines, a new
    explanation its ``explanation`` line."""
    data = _plain(data)
    fields = []
    for key in sorted(data):
        value = data[key]
        if key == "sites" and isinstance(value, list) and value:
            shown = b"[\n    " + b",\n    ".join(orjson.dumps(site, option=orjson.OPT_SORT_KEYS) for site in value) + b"\n  ]"
        else:
            shown = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        fields.append(_field(key) + shown)
    return b"{\n" + b",\n".join(fields) + b"\n}\n"


def record_field(key: str, value: Any) -> bytes:
    """One top-level field of a record file as :func:`dumps_record` writes it (any but ``sites``),
    from the newline before it: a file without these bytes is not the file of that record."""
    return b"\n" + _field(key) + orjson.dumps(_plain(value), option=orjson.OPT_SORT_KEYS)


@functools.lru_cache(maxsize=256)
def _field(key: str) -> bytes:
    """A record file's field line up to its value (records have a few dozen field names)."""
    return b"  " + orjson.dumps(key) + b": "
