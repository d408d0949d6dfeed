"""The index.json and search.json rows of each record as their bytes, by what the rows are made of,
so that a crawl that keeps nearly every record (the daily sync's one-file commit) neither makes,
validates nor serializes again the rows of the records whose inputs did not change (for vLLM:
18,039 of 18,075 rows of each document, ~0.4 s of a ~4 s crawl).

A record's rows are keyed by its content key (``publish.line_memo``: who acts' key, the curated
part and the evidence), which with the line memo's stamp makes the record without its pins
(neither row holds a pin). An index.json row is a function of the record alone
(``writer.index_row``), a search.json row of the record and of what its primary site as
extracted derives (``search.entry_row``: ``derive``'s fragments, ends, anchors and tokens, made of
the template's text, its fields' expressions and its opacity alone); the record's first site is
that site (``entries.build_entries``: its message and its first site's template are the primary's,
as ``_template`` copies them, and no later stage rewrites either), so both rows are functions of
the content key under errcat's code. The memo's stamp is the line memo's (the action memo's
stamp, the serializer, the identity) with errcat's code digest. Another stamp or a changed
record (a join that moved a site, an edited curated file, a changed evidence file, anything
who acts reads: each changes the content key) is a row made and validated as without the memo.

The memo holds the rows of the last dataset written and, up to as many again, of those before it
(a crawl flipping between two commits finds both), each as the writer wrote it once it had
validated the whole dataset (it is saved only after the dataset is in place). It is errcat's own
cache, like the line memo: checked whole on the way in (its magic, its stamp, its length, each
row's id, 16 hex digits its rows hold, and the SHA-256 of its body, which an edit that leaves the
checksum alone breaks) and empty when anything does not fit; a row it gives is written as it is
(``jsonio.KnownRow``).
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from crawler.base.cachedir import checked, keep, sealed

MAGIC = b"errcat-row-bytes-1\n"
#: The stamp, the number of rows and the size of the rows' bytes.
_HEAD = struct.Struct("<32sQQ")
#: A row: its key, its entry's id (16 hex digits), the sizes of its index.json and search.json
#: rows and of its search row's shape piece, its number of alternatives and of its sites.
_ROW = struct.Struct("<32s16sIIIII")
_LINE = struct.Struct("<Q")
#: The entries' ids, one after another: 16 hex digits each.
_IDS = re.compile(rb"(?:[0-9a-f]{16})*")


class Row(NamedTuple):
    """A record's rows as written: its id, its index.json and search.json rows, and what the match
    store's shape reads of the search row (``search.shape_piece``: the piece, the sites' lines,
    the number of alternatives)."""

    id: str
    index_row: bytes
    search_row: bytes
    piece: bytes
    lines: list[int]
    alternatives: int


#: By row key, the rows of a record.
Held = dict[bytes, Row]


def stamp(code: str, lines_stamp: bytes) -> bytes:
    """What a memo's rows stand for besides their keys (see the module's note)."""
    return hashlib.sha256(MAGIC + code.encode() + b"\0" + lines_stamp).digest()


def path(cache_dir: Path, repo: str) -> Path:
    return cache_dir / "rows" / f"{hashlib.sha256(repo.encode()).hexdigest()[:16]}.bin"


def load(where: Path, stamped: bytes) -> Held:
    """The rows kept at ``where`` under this stamp; none when there is no memo, it is of another
    stamp, or it is not whole (its length, its checksum, an id that is not 16 hex digits or that
    its rows do not hold)."""
    whole = checked(where, MAGIC, _HEAD)
    if whole is None:
        return {}
    data, (mark, count, size) = whole
    head = len(MAGIC) + _HEAD.size
    table = head + count * _ROW.size
    if mark != stamped or len(data) != table + size + 32:
        return {}
    found: Held = {}
    at = table
    end = table + size
    view = memoryview(data)
    counts: dict[int, struct.Struct] = {}
    rows = list(_ROW.iter_unpack(view[head:table]))
    if not _IDS.fullmatch(b"".join(row[1] for row in rows)):
        return {}
    for key, rid, index_size, search_size, piece_size, alternatives, sites in rows:
        a = at + index_size
        b = a + search_size
        c = b + piece_size
        start, at = at, c + 8 * sites
        if at > end:
            return {}
        index_row, search_row, piece = data[start:a], data[a:b], data[b:c]
        held = b'"id":"' + rid + b'"'  # (a row of another entry is no row of this one)
        if held not in index_row or held not in search_row or held not in piece:
            return {}
        lines = counts.get(sites) or counts.setdefault(sites, struct.Struct(f"<{sites}Q"))
        found[key] = Row(rid.decode("ascii"), index_row, search_row, piece, list(lines.unpack_from(data, c)), alternatives)
    if at != end:
        return {}
    return found


def save(where: Path, stamped: bytes, rows: Held) -> None:
    """Keep ``rows`` (this dataset's alone) for the next crawl; failures are ignored."""
    table: list[bytes] = []
    blob: list[bytes] = []
    try:
        for key, row in sorted(rows.items()):
            table.append(_ROW.pack(key, row.id.encode("ascii"), len(row.index_row), len(row.search_row), len(row.piece), row.alternatives, len(row.lines)))
            blob += (row.index_row, row.search_row, row.piece, b"".join(_LINE.pack(n) for n in row.lines))
    except (struct.error, UnicodeEncodeError):  # (a line or a size no row the schema admits has): not kept
        return
    keep(where, sealed([MAGIC, _HEAD.pack(stamped, len(table), sum(map(len, blob))), *table, *blob]))


def collect(
    records: Sequence[Mapping[str, Any]],
    keys: Mapping[str, bytes],
    held: Held,
    index_written: Mapping[str, bytes],
    search_written: Mapping[str, bytes],
    made: Mapping[str, Any],
) -> tuple[Held | None, list[tuple[bytes, list[Any], int]] | None]:
    """What the memo keeps after this dataset (None: what it holds already, nothing new), and each
    search row's shape piece in the records' order (``search.Shaped``; None when a row is neither
    made here nor held). The memo keeps the rows it held with this dataset's new ones (a crawl
    flipping between two commits then finds both), unless that is more than twice this dataset's
    rows: then this dataset's alone. ``made``: the search rows made (not given as bytes), by id."""
    from crawler.catalogue.search import shape_piece

    new: Held = {}
    pieces: list[tuple[bytes, list[Any], int]] | None = []
    for record in records:
        rid = record["id"]
        key = keys.get(rid)
        old = held.get(key) if key is not None else None
        if old is not None and old.id == rid and search_written.get(rid) is not None and rid not in made:
            piece: tuple[bytes, list[Any], int] | None = (old.piece, old.lines, old.alternatives)
        elif rid in made:
            piece = shape_piece(made[rid])
            if key is not None and rid in index_written and rid in search_written:
                new[key] = Row(rid, index_written[rid], search_written[rid], *piece)
        else:
            piece = None
        if piece is None:
            pieces = None
        elif pieces is not None:
            pieces.append(piece)
    if not new:
        return None, pieces
    if len(held) + len(new) <= 2 * len(keys) + 64:
        return {**held, **new}, pieces
    mine = {keys[rid]: held[keys[rid]] for rid in keys if keys[rid] in held and held[keys[rid]].id == rid and rid not in made}
    return {**mine, **new}, pieces


def from_files(
    target: Path, digests: Mapping[str, bytes], records: Sequence[Mapping[str, Any]], keys: Mapping[str, bytes], document: Mapping[str, Any]
) -> Held | None:
    """The rows of the dataset just written at ``target`` as the memo keeps them, read back from its
    index.json and search.json when they hold exactly the bytes the writer wrote (their SHA-256 is
    in ``digests``, the writer's), their rows those of ``records`` in order and of ``document``
    (search.json as made, ``search.search_file``'s); None when they do not. For a crawl that made
    every row (nothing to carry): its rows are not captured as they are written, which for
    vLLM's 18,075 search rows held ~180 MB more at the crawl's peak."""
    from crawler.base.dataset_files import INDEX, SEARCH
    from crawler.catalogue.search import shape_piece

    try:
        index, search = (target / INDEX).read_bytes(), (target / SEARCH).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(index).digest() != digests.get(INDEX) or hashlib.sha256(search).digest() != digests.get(SEARCH):
        return None
    index_rows, search_rows, entries = _rows_of(index), _rows_of(search), document.get("entries")
    if not isinstance(entries, list) or not len(index_rows) == len(search_rows) == len(entries) == len(records):
        return None
    held: Held = {}
    for record, index_row, search_row, entry in zip(records, index_rows, search_rows, entries, strict=True):
        rid = record["id"]
        if entry.get("id") != rid:
            return None
        if (key := keys.get(rid)) is not None:
            held[key] = Row(rid, index_row, search_row, *shape_piece(entry))
    return held


def _rows_of(data: bytes) -> list[bytes]:
    """The rows of a row document as ``jsonio.rows_pieces`` writes them: one a line, after four
    spaces, a comma after each but the last (no row holds a newline: JSON writes it ``\\n``)."""
    return [line[4:].removesuffix(b",") for line in data.split(b"\n") if line.startswith(b"    {")]
