"""Reading a dataset of the previous schema (5) as one of this schema (6).

Schema 6 moved what a record says of its kind: a log line's and an error response's
``exception`` (the record's and each site's) is null, where schema 5 held the level (WARNING,
logging.WARNING) or the error type and the builder; a response names its builder as resolved in
``response.builder_qualname`` (schema 5's exception qualname); ``keyed_by`` says what the id is
keyed by; a site has a ``condition`` (null for every entry schema 5 could hold: it had no
entries of bare asserts). Every value of schema 6 is read from the schema-5 record, so a record
migrated is the record errcat 6 makes of the same code, byte for byte (tests/versions/test_migrate.py):
``diff``, ``history`` (``--fold`` too), ``sync``, ``show``, ``render`` and the match store read
a dataset of schema 5 through :mod:`crawler.publish.dataset`, which migrates each document as it
reads it. Nothing is written back: the next crawl or sync writes the dataset in schema 6.

The data is hostile like any dataset's: a migration only moves values, and what it gives is then
validated against schema 6 exactly as a document of schema 6 is. Data not of the shape schema 5
had is left as it is, for that validation to refuse.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from crawler.extract.ids import has_literal_text, normalize_template
from crawler.model.kinds import KINDS, RESPONSE
from crawler.model.records import PREVIOUS_SCHEMA_VERSION, SCHEMA_VERSION

#: A document whose text says it is of the previous schema somewhere (then parsed to see whether
#: its own top-level field says so): a document of this schema never costs a second parse.
_PREVIOUS = re.compile(rb'"schema_version"\s*:\s*"' + PREVIOUS_SCHEMA_VERSION.encode() + rb'"')


def is_previous(document: Any) -> bool:
    return isinstance(document, dict) and document.get("schema_version") == PREVIOUS_SCHEMA_VERSION


def _previous(data: bytes) -> dict[str, Any] | None:
    """The document ``data`` holds when it is one of the previous schema, else None."""
    if _PREVIOUS.search(data) is None:
        return None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return document if is_previous(document) else None


def document_bytes(data: bytes) -> bytes:
    """A manifest, index or search index of the previous schema as one of this one (only the
    version changed between them); any other bytes as they are."""
    document = _previous(data)
    if document is None:
        return data
    return orjson.dumps({**document, "schema_version": SCHEMA_VERSION})


def record_bytes(data: bytes) -> bytes:
    """A record (a line of errors.jsonl.gz, an ``errors/<id>.json``) of the previous schema as one
    of this one; any other bytes as they are."""
    document = _previous(data)
    return data if document is None else orjson.dumps(record(document))


def record(data: Any) -> Any:
    """A record of schema 5 as plain data, as schema 6 has it (a new dict; ``data`` is left as it
    is). Anything that is not a record of schema 5's shape is returned as it is."""
    if not is_previous(data):
        return data
    try:
        spec = KINDS[data["kind"]]
        sites = data["sites"]
        primary = sites[0]
        template = primary["template"]
        normalized = normalize_template(template["text"], template["fields"])
        keyed_by = "message" if not template.get("opaque") and has_literal_text(normalized) else "place"
        new_sites = [_site(site, spec.raises) for site in sites]
        out = {**data, "schema_version": SCHEMA_VERSION, "keyed_by": keyed_by, "sites": new_sites}
        if not spec.raises:
            out["exception"] = None
        if data["kind"] == RESPONSE and isinstance(data.get("response"), dict):
            out["response"] = {**data["response"], "builder_qualname": data["exception"]["qualname"]}
        return out
    except (KeyError, IndexError, TypeError, AttributeError):
        return data  # not of schema 5's shape: the schema check says what is wrong


def _site(site: dict[str, Any], raises: bool) -> dict[str, Any]:
    out = {**site, "condition": None}
    if site.get("kind") == RESPONSE and isinstance(site.get("response"), dict):
        out["response"] = {**site["response"], "builder_qualname": site["exception_qualname"]}
    if not raises:
        out["exception"] = out["exception_qualname"] = None
    return out
