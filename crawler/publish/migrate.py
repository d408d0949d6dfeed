"""Reading a dataset of an older schema (5, 6 or 7) as one of this schema (8), one step at a time.

Each step takes a document of one schema to the next (:data:`STEPS`); a document of schema 5 goes
5 to 6, then 6 to 7, then 7 to 8. The readers call this module only: ``diff``, ``history`` (``--fold`` too),
``sync``, ``show``, ``render`` and the match store read an older dataset through
:mod:`crawler.publish.dataset`, which migrates each document as it reads it. Nothing is written
back: the next crawl or sync writes the dataset in schema 8.

* **5 to 6** moved what a record says of its kind: a log line's and an error response's
  ``exception`` (the record's and each site's) is null, where schema 5 held the level (WARNING,
  logging.WARNING) or the error type and the builder; a response names its builder as resolved in
  ``response.builder_qualname`` (schema 5's exception qualname); ``keyed_by`` says what the id is
  keyed by; a site has a ``condition`` (null for every entry schema 5 could hold: it had no
  entries of bare asserts). Every value of schema 6 is read from the schema-5 record, so a record
  migrated is the record errcat makes of the same code, byte for byte (tests/versions/test_migrate.py).
* **6 to 7** added ``files`` to a history's lifetimes and moves, true when the commit is a
  digest of a release's files (a release that records no commit). Absent means false, which is
  what every lifetime of a history over a repository's commits is: such a record of schema 6 is
  the record of schema 7 but for its version. A schema-6 fold of wheel releases cannot say which
  older release's commit was a digest (the record does not hold it, and only the newest
  manifest survives the fold): its pages still know the newest manifest's digest
  (``page_model.file_digests``), and a fold made again marks every release.
* **7 to 8** added ``replaced_by_review`` to a history: a retired entry's successor linked by
  review (a curated lineage link), absent otherwise. Schema 7 had no reviewed links, so a record
  of schema 7 is the record of schema 8 but for its version; a fold made again over datasets of
  schema 7 applies the curated links.

The data is hostile like any dataset's: a migration only moves values, and what it gives is then
validated against schema 8 exactly as a document of schema 8 is. Data not of the shape its schema
had is left as it is, for that validation to refuse.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from crawler.extract.ids import has_literal_text, normalize_template
from crawler.model.kinds import KINDS, RESPONSE
from crawler.model.records import OLDER_SCHEMA_VERSIONS, SCHEMA_VERSION

#: A document whose text says it is of an older schema somewhere (then parsed to see whether its
#: own top-level field says so): a document of this schema never costs a second parse.
_OLDER = re.compile(rb'"schema_version"\s*:\s*"(?:' + b"|".join(re.escape(v.encode()) for v in OLDER_SCHEMA_VERSIONS) + rb')"')


def is_previous(document: Any) -> bool:
    """Whether ``document`` is a document of a schema older than this one that a reader migrates."""
    return isinstance(document, dict) and document.get("schema_version") in OLDER_SCHEMA_VERSIONS


def _previous(data: bytes) -> dict[str, Any] | None:
    """The document ``data`` holds when it is one of an older schema, else None."""
    if _OLDER.search(data) is None:
        return None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return document if is_previous(document) else None


def document_bytes(data: bytes) -> bytes:
    """A manifest, index or search index of an older schema as one of this one (only the version
    changed between them, at every step); any other bytes as they are."""
    document = _previous(data)
    if document is None:
        return data
    return orjson.dumps({**document, "schema_version": SCHEMA_VERSION})


def record_bytes(data: bytes) -> bytes:
    """A record (a line of errors.jsonl.gz, an ``errors/<id>.json``) of an older schema as one of
    this one; any other bytes as they are."""
    document = _previous(data)
    return data if document is None else orjson.dumps(record(document))


def record(data: Any) -> Any:
    """A record of an older schema as plain data, as this schema has it (a new dict; ``data`` is
    left as it is), through each step from its schema on. Anything that is not a record of its
    schema's shape is returned as it is, at the step that could not read it."""
    if not is_previous(data):
        return data
    while isinstance(data, dict) and data.get("schema_version") in STEPS:
        step = STEPS[data["schema_version"]]
        moved = step(data)
        if moved is data:
            return data  # not of its schema's shape: the schema check says what is wrong
        data = moved
    return data


def _five_to_six(data: dict[str, Any]) -> dict[str, Any]:
    """A record of schema 5 as schema 6 has it; ``data`` itself when it is not of schema 5's shape."""
    try:
        spec = KINDS[data["kind"]]
        sites = data["sites"]
        primary = sites[0]
        template = primary["template"]
        normalized = normalize_template(template["text"], template["fields"])
        keyed_by = "message" if not template.get("opaque") and has_literal_text(normalized) else "place"
        new_sites = [_site(site, spec.raises) for site in sites]
        out = {**data, "schema_version": "6", "keyed_by": keyed_by, "sites": new_sites}
        if not spec.raises:
            out["exception"] = None
        if data["kind"] == RESPONSE and isinstance(data.get("response"), dict):
            out["response"] = {**data["response"], "builder_qualname": data["exception"]["qualname"]}
        return out
    except (KeyError, IndexError, TypeError, AttributeError):
        return data


def _site(site: dict[str, Any], raises: bool) -> dict[str, Any]:
    out = {**site, "condition": None}
    if site.get("kind") == RESPONSE and isinstance(site.get("response"), dict):
        out["response"] = {**site["response"], "builder_qualname": site["exception_qualname"]}
    if not raises:
        out["exception"] = out["exception_qualname"] = None
    return out


def _six_to_seven(data: dict[str, Any]) -> dict[str, Any]:
    """A record of schema 6 as schema 7 has it: the same record (``files`` absent is false; see
    the module's docstring for what a schema-6 record cannot say). A record that already says
    ``files`` is not of schema 6, which had no such key: it is left as it is, for the validation
    against schema 7 to refuse, as schema 6 would have."""
    history = data.get("history")
    if isinstance(history, dict):
        lifetimes = [history.get(k) for k in ("first_seen", "last_seen", "removed_in")] + list(history.get("moved") or [])
        if any(isinstance(t, dict) and "files" in t for t in lifetimes):
            return data
    return {**data, "schema_version": "7"}


def _seven_to_eight(data: dict[str, Any]) -> dict[str, Any]:
    """A record of schema 7 as schema 8 has it: the same record (no link of schema 7 was made by
    review). One whose history already says ``replaced_by_review`` is not of schema 7, which had
    no such key: left as it is, for the validation against schema 8 to refuse, as schema 7 would have."""
    history = data.get("history")
    if isinstance(history, dict) and "replaced_by_review" in history:
        return data
    return {**data, "schema_version": "8"}


#: Each older schema's step to the next, by the schema it reads; the last step gives this one.
STEPS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"5": _five_to_six, "6": _six_to_seven, "7": _seven_to_eight}
