"""The dataset's search index (``search.json``): what a client needs to find an entry offline.

One compact row per entry: id, title, exception (and the names it can be caught as), the
template, its anchored pattern, the pattern's literal fragments in order, lowercase word tokens
for a search box, and the sites (path, line, function) to tell apart entries a traceback names.
``errcat match`` and the static site's search box both work from this file alone.

Fragments come from parsing the pattern itself (not the template text), so they agree with what
the pattern matches: a message matches an entry only if every fragment occurs in it, in order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from crawler.base.cachedir import keep
from crawler.base.dataset_files import SEARCH
from crawler.base.errors import DataError
from crawler.base.jsonio import Rows, known_row, raw_row
from crawler.extract.segments import (
    anchor_tokens,
    fragments,
    search_tokens,
    template_segments,
    template_segments_of,
)
from crawler.extract.templates import Field, parts_from_template, text_parts
from crawler.model.kinds import exception_word
from crawler.model.records import SCHEMA_VERSION, Manifest, Record
from crawler.model.search import SearchEntry, SearchIndex
from crawler.model.shapes import ExtractedSite, RecordData, record_data


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


def catch_names(exception: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for name in [*exception.get("bases", []), exception.get("builtin_ancestor") or ""]:
        leaf = _leaf(name)
        if leaf and leaf != exception["name"] and leaf not in names:
            names.append(leaf)
    return names


def entry_row(record: RecordData, primary: ExtractedSite | None = None) -> dict[str, Any]:
    """The search row of one record dict, as plain data shaped like ``SearchEntry``.

    The crawl builds rows as dicts (a model per entry would cost more than the rest of the
    row); ``render_dataset`` validates search.json against the schema generated from the model.
    ``primary`` is the entry's primary site as extracted: its derived facts (``derive``), made
    in the extraction workers, spare the template pass here.
    """
    message = record["message"]
    opaque = bool(message.get("opaque"))
    if primary is not None:
        from crawler.extract.derive import derived

        pieces = derived(primary)
        exc = exception_word(record)
        tokens = list(dict.fromkeys([*search_tokens(record["title"]), *pieces["tokens"], *search_tokens(exc)]))
        return _row(record, pieces["fragments"], pieces["starts_literal"], pieces["ends_literal"], pieces["anchors"], tokens)
    segs = template_segments(message)
    tokens = search_tokens(record["title"], "" if opaque else message["text"], exception_word(record))
    return _row(
        record, fragments(segs), bool(segs) and segs[0][0] == "lit", bool(segs) and segs[-1][0] == "lit", list(dict.fromkeys(anchor_tokens(segs))), tokens
    )


def alternative_rows(alternatives: list[str], message: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``SearchAlternative`` rows of an assembled message's pieces that have literal text. In a
    message with text of its own around its one assembled field (``Cannot load: {msg}``), each
    piece stands in its place: the template's own words and the piece's together are what a
    pasted message holds, so a short text around a long piece still counts as support."""
    before, after = _around_assembled(message) if message is not None else ([], [])
    rows = []
    for text in alternatives:
        segs = template_segments_of([*before, *text_parts(text), *after])
        frags = fragments(segs)
        if frags:
            # a piece sits anywhere in the message: a word at either end of it may run into the next piece
            edged = [("var", None), *segs, ("var", None)]
            rows.append({"fragments": frags, "anchors": list(dict.fromkeys(anchor_tokens(edged)))})
    return rows


def _around_assembled(message: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """The template's parts before and after its one assembled field (the one whose group in the
    pattern is not the plain ``.*?``); nothing around when it has none or several (then which
    field a piece belongs to is not recorded)."""
    pattern = message.get("pattern") or ""
    parts = parts_from_template(message)
    fields = [i for i, p in enumerate(parts) if isinstance(p, Field)]
    assembled = [at for k, at in enumerate(fields) if f"(?P<f{k}>.*?)" not in pattern]
    if len(assembled) != 1:
        return [], []
    return parts[: assembled[0]], parts[assembled[0] + 1 :]


def _row(record: RecordData, frags: list[str], starts: bool, ends: bool, anchors: list[str], tokens: list[str]) -> dict[str, Any]:
    message = record["message"]
    return (
        {
            "id": record["id"],
            "title": record["title"],
            "exception": exception_word(record),
            "catch_as": catch_names(record["exception"]) if record["exception"] is not None else [],
            "kind": record["kind"],
            "text": message["text"],
            "fields": [f["expr"] for f in message.get("fields", [])],
            "pattern": message["pattern"],
            "fragments": frags,
            "starts_literal": starts,
            "ends_literal": ends,
            "anchors": anchors,
            "tokens": tokens,
            "opaque": bool(message.get("opaque")),
            "alternatives": alternative_rows(message.get("alternatives") or [], message),
            "explanation_status": record.get("explanation_status", "absent"),
            "sites": [{"path": s["path"], "line": s["line"], "qualname": s["qualname"]} for s in record["sites"]],
        }
        | ({"accepted_as_is": True} if (record.get("explanation") or {}).get("accepted_as_is") else {})
        | ({"condition": condition} if (condition := record["sites"][0].get("condition")) is not None else {})
    )


def entry_for(record: RecordData | Record) -> SearchEntry:
    """The search row of one record (a record dict as the crawl builds it, or a Record)."""
    return SearchEntry.model_validate(entry_row(record_data(record) if isinstance(record, Record) else record))


def build_search_index(records: Sequence[RecordData] | Sequence[Record], repo: str, commit: str) -> SearchIndex:
    """The search index of a dataset's records, in id order like the index."""
    entries = sorted((entry_for(r) for r in records), key=lambda e: e.id)
    return SearchIndex(repo=repo, commit=commit, entries=entries)


def search_document(
    records: Sequence[RecordData], repo: str, commit: str, primaries: Mapping[str, ExtractedSite] | None = None, memo: RowMemo | None = None
) -> dict[str, Any]:
    """search.json as plain data (``SearchIndex`` shape), from record dicts; ``memo`` keeps rows
    made before (see :class:`RowMemo`)."""
    primaries = primaries or {}
    make = memo.row if memo is not None else entry_row
    rows = sorted((make(r, primaries.get(r["id"])) for r in records), key=lambda row: row["id"])
    if memo is not None:
        memo.save()
    return {"schema_version": SCHEMA_VERSION, "repo": repo, "commit": commit, "entries": rows}


def search_file(
    records: Sequence[RecordData], manifest: Manifest, primaries: Mapping[str, ExtractedSite] | None = None, memo: RowMemo | None = None
) -> dict[str, Any]:
    """``render_dataset``'s ``extra`` argument that adds search.json to a dataset."""
    repo = f"{manifest.repo.owner}/{manifest.repo.name}"
    return {SEARCH: search_document(records, repo, manifest.commit, primaries, memo)}


def search_rows(
    records: Sequence[RecordData],
    manifest: Manifest,
    memo: RowMemo | None = None,
    carried: Mapping[str, bytes] | None = None,
    capture: dict[str, Any] | None = None,
    known: Mapping[str, bytes] | None = None,
    primaries: Mapping[str, ExtractedSite] | None = None,
    written: dict[str, bytes] | None = None,
    made_rows: dict[str, Any] | None = None,
) -> dict[str, Rows]:
    """:func:`search_file` as its rows (``jsonio.Rows``), each made as the writer reads it, of
    records in id order (a history's ``Written``): no row is held once written. The memo is saved
    once the last row is made; records out of id order stop the render (search.json is in id order).
    ``carried``: the rows of records carried through as they were written (their bytes, by id),
    taken as they are (``jsonio.RawRow``). ``capture``: filled with the row made of each retired
    record, by id (what ``versions.carried`` keeps). ``known``: rows this errcat made for the same
    inputs (``publish.row_bytes``), by id, written as they are (``jsonio.KnownRow``).
    ``primaries``: as :func:`search_document`'s.
    ``written``: filled with each row's bytes as written, by id; ``made_rows``: with each row made
    (not given as bytes), by id."""
    make = memo.row if memo is not None else entry_row
    held, same, first = carried or {}, known or {}, primaries or {}

    def rows() -> Iterator[Any]:
        last = ""
        for record in records:
            rid = record["id"]
            row: Any
            if (kept := same.get(rid)) is not None:
                row, eid = known_row(kept, rid), rid
            elif (kept := held.get(rid)) is not None:
                row, eid = raw_row(kept, rid), rid
            else:
                row = made = make(record, first.get(rid))
                eid = made["id"]
                if made_rows is not None:
                    made_rows[rid] = made
                if capture is not None and (record.get("history") or {}).get("retired"):
                    capture[rid] = made
            if eid <= last:
                raise DataError(f"{SEARCH}: the records are not in id order ({eid} after {last}); nothing was written")
            last = eid
            yield row
        if memo is not None:
            memo.save()

    head = {"schema_version": SCHEMA_VERSION, "repo": f"{manifest.repo.owner}/{manifest.repo.name}", "commit": manifest.commit}
    return {SEARCH: Rows(head, rows, written)}


def shape_piece(entry: Mapping[str, Any]) -> tuple[bytes, list[Any], int]:
    """What the match store's shape reads of one search.json row (``match_store._shape``): the row
    but its sites' lines, as bytes; those lines; the number of its alternatives."""
    sites = entry["sites"]
    row = {key: value for key, value in entry.items() if key != "sites"}
    piece = orjson.dumps([row, [[s["path"], s["qualname"]] for s in sites]], option=orjson.OPT_SORT_KEYS)
    return piece, [s["line"] for s in sites], len(entry.get("alternatives") or ())


class Shaped(NamedTuple):
    """search.json as the match store's shape reads it (``match_store._shape``), handed over by the
    crawl that wrote it: its head but the commit, and each row's :func:`shape_piece` in order."""

    rest: dict[str, Any]
    pieces: list[tuple[bytes, list[Any], int]]


class RowMemo:
    """The search rows of the last crawl, in a file of the cache, by a digest of everything a row
    is made of (the record's title, exception, kind, message, explanation status and whether it
    is a draft accepted as is, sites, the primary site's template and exception, and ``salt``:
    errcat's code). A crawl of a commit
    that changed a few files builds a few rows and takes the other ten thousand from here.
    Our own JSON; a memo that cannot be read is empty, a row not of the record's id is made
    again, and one that cannot be written is not kept."""

    def __init__(self, path: Path, salt: str) -> None:
        self.path = path
        self.salt = salt
        self._rows: dict[str, Any] | None = None
        self.used: dict[str, Any] = {}

    @property
    def rows(self) -> dict[str, Any]:
        """The rows kept, read when first asked for (a crawl that takes its rows as bytes,
        ``publish.row_bytes``, never asks: 16 MB of JSON for vLLM)."""
        if self._rows is None:
            self._rows = {}
            try:
                found = orjson.loads(self.path.read_bytes())
            except (OSError, ValueError):
                return self._rows
            if type(found) is dict and found.get("salt") == self.salt and type(found.get("rows")) is dict:
                self._rows = found["rows"]
        return self._rows

    def row(self, record: RecordData, primary: ExtractedSite | None = None) -> dict[str, Any]:
        made_of = [
            record["id"],
            record["title"],
            record["exception"],
            record["kind"],
            record["message"],
            record.get("explanation_status", "absent"),
            bool((record.get("explanation") or {}).get("accepted_as_is")),
            [[s["path"], s["line"], s["qualname"]] for s in record["sites"]],
            None if primary is None else [primary["template"], primary["exception_qualname"]],
        ]
        try:
            # keys sorted: a record made by a crawl and the same record read back from JSON have
            # their fields in another order, and are the same row
            key = hashlib.sha256(orjson.dumps(made_of, option=orjson.OPT_SORT_KEYS)).hexdigest()
        except TypeError:  # text orjson refuses (a lone surrogate): made, not kept
            return entry_row(record, primary)
        row = self.rows.get(key)
        if type(row) is not dict or row.get("id") != record["id"]:
            row = entry_row(record, primary)
        self.used[key] = row
        return row

    def save(self) -> None:
        """Keep this crawl's rows only (rows of entries gone are left behind), unless the memo
        held every one already: rewriting it (20 MB for vLLM) would only drop rows, which a
        history over more releases needs again."""
        if self.used.keys() <= self.rows.keys():
            return
        try:
            data = orjson.dumps({"salt": self.salt, "rows": self.used})
        except TypeError:
            return
        keep(self.path, data)
