"""The dataset's search index (``search.json``): what a client needs to find an entry offline.

One compact row per entry: id, title, exception (and the names it can be caught as), the
template, its anchored pattern, the pattern's literal fragments in order, lowercase word tokens
for a search box, and the sites (path, line, function) to tell apart entries a traceback names.
``errcat match`` and the static site's search box both work from this file alone.

Fragments come from parsing the pattern itself (not the template text), so they agree with what
the pattern matches: a message matches an entry only if every fragment occurs in it, in order.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field

from .models import SCHEMA_VERSION, Commit, EntryId, Model, Record, RepoSlug, SiteKind
from .templates import parts_from_template

WORD = re.compile(r"\w+")


class SearchSite(Model):
    path: str
    line: int = Field(ge=1)
    qualname: str


class SearchEntry(Model):
    id: EntryId
    title: str
    exception: str = Field(description="Class name of the exception raised.")
    catch_as: list[str] = Field(default_factory=list, description="Names of the exception's ancestors (nearest first), ending with the builtin users catch.")
    kind: SiteKind
    text: str = Field(description="The message template, fields as {expression}.")
    fields: list[str] = Field(default_factory=list, description="Each field's expression, in the order of the pattern's groups f0, f1, ...")
    pattern: str = Field(description="Anchored Python regular expression matching a runtime message.")
    fragments: list[str] = Field(default_factory=list, description="Literal text of the pattern, in order; every one occurs in a matching message.")
    starts_literal: bool = Field(description="The message starts with fragments[0] (no field before it).")
    ends_literal: bool = Field(description="The message ends with the last fragment (no field after it).")
    anchors: list[str] = Field(default_factory=list, description="Words of the literal text that are whole words in every matching message (case kept): a message lacking one cannot match.")
    tokens: list[str] = Field(default_factory=list, description="Lowercase words of the title, template and exception, for a search box.")
    opaque: bool = False
    explanation_status: Literal["curated", "draft", "absent"]
    sites: list[SearchSite]


class SearchIndex(Model):
    """``search.json``: every entry of a dataset in the form a search needs, in id order."""

    schema_version: Literal["1"] = SCHEMA_VERSION
    repo: RepoSlug
    commit: Commit
    entries: list[SearchEntry]


Segment = tuple[str, str | None]  # ("lit", text) or ("var", None)


def template_segments(template: dict[str, Any]) -> list[Segment]:
    """The template as alternating literal runs and variable parts.

    These are exactly the literal runs of the template's ``pattern``, which is built from the
    same parts (literals escaped, each field ``.*?``); tests/test_match.py checks the two agree
    by parsing patterns, which the crawl never needs to do.
    """
    out: list[Segment] = []
    for part in parts_from_template(template):
        if isinstance(part, str):
            if part:
                out.append(("lit", part))
        elif not out or out[-1][0] != "var":
            out.append(("var", None))
    return out


def fragments(segs: list[Segment]) -> list[str]:
    return [text for kind, text in segs if kind == "lit" and text]


def anchor_tokens(segs: list[Segment]) -> list[str]:
    """Words of the literal text that are whole words in every matching message.

    A word touching a field (``{prefix}foo``) may run into the field's value, so it is left out.
    """
    tokens: list[str] = []
    for i, (kind, text) in enumerate(segs):
        if kind != "lit" or not text:
            continue
        var_before = i > 0 and segs[i - 1][0] == "var"
        var_after = i + 1 < len(segs) and segs[i + 1][0] == "var"
        for m in WORD.finditer(text):
            if (m.start() == 0 and var_before) or (m.end() == len(text) and var_after):
                continue
            tokens.append(m.group())
    return tokens


def search_tokens(*texts: str) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for word in WORD.findall(text.lower()):
            if len(word) > 1 or word.isdigit():
                seen.setdefault(word, None)
    return list(seen)


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


def catch_names(exception: dict) -> list[str]:
    names: list[str] = []
    for name in [*exception.get("bases", []), exception.get("builtin_ancestor") or ""]:
        leaf = _leaf(name)
        if leaf and leaf != exception["name"] and leaf not in names:
            names.append(leaf)
    return names


def entry_row(record: dict[str, Any], primary: dict[str, Any] | None = None) -> dict[str, Any]:
    """The search row of one record dict, as plain data shaped like ``SearchEntry``.

    The crawl builds rows as dicts (a model per entry would cost more than the rest of the
    row); ``render_dataset`` validates search.json against the schema generated from the model.
    ``primary`` is the entry's primary site as extracted: its derived facts (``derive``), made
    in the extraction workers, spare the template pass here.
    """
    message = record["message"]
    opaque = bool(message.get("opaque"))
    if primary is not None:
        from .derive import derived

        pieces = derived(primary)
        exc = record["exception"]["name"]
        tokens = list(dict.fromkeys([*search_tokens(record["title"]), *pieces["tokens"], *search_tokens(exc)]))
        return _row(record, pieces["fragments"], pieces["starts_literal"], pieces["ends_literal"], pieces["anchors"], tokens)
    segs = template_segments(message)
    tokens = search_tokens(record["title"], "" if opaque else message["text"], record["exception"]["name"])
    return _row(record, fragments(segs), bool(segs) and segs[0][0] == "lit", bool(segs) and segs[-1][0] == "lit",
                list(dict.fromkeys(anchor_tokens(segs))), tokens)


def _row(record: dict[str, Any], frags: list[str], starts: bool, ends: bool, anchors: list[str], tokens: list[str]) -> dict[str, Any]:
    message = record["message"]
    return {
        "id": record["id"],
        "title": record["title"],
        "exception": record["exception"]["name"],
        "catch_as": catch_names(record["exception"]),
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
        "explanation_status": record.get("explanation_status", "absent"),
        "sites": [{"path": s["path"], "line": s["line"], "qualname": s["qualname"]} for s in record["sites"]],
    }


def entry_for(record: dict[str, Any] | Record) -> SearchEntry:
    """The search row of one record (a record dict as the crawl builds it, or a Record)."""
    if isinstance(record, Record):
        record = record.model_dump(mode="json")
    return SearchEntry.model_validate(entry_row(record))


def build_search_index(records: list[dict[str, Any]] | list[Record], repo: str, commit: str) -> SearchIndex:
    """The search index of a dataset's records, in id order like the index."""
    entries = sorted((entry_for(r) for r in records), key=lambda e: e.id)
    return SearchIndex(repo=repo, commit=commit, entries=entries)


def search_document(records: list[dict[str, Any]], repo: str, commit: str,
                    primaries: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """search.json as plain data (``SearchIndex`` shape), from record dicts."""
    primaries = primaries or {}
    rows = sorted((entry_row(r, primaries.get(r["id"])) for r in records), key=lambda row: row["id"])
    return {"schema_version": SCHEMA_VERSION, "repo": repo, "commit": commit, "entries": rows}


def search_file(records: list[dict[str, Any]], manifest: dict[str, Any],
                primaries: dict[str, dict[str, Any]] | None = None) -> dict[str, tuple[str, Any]]:
    """``render_dataset``'s ``extra`` argument that adds search.json to a dataset."""
    repo = manifest["repo"]["owner"] + "/" + manifest["repo"]["name"]
    return {"search.json": ("search", search_document(records, repo, manifest["commit"], primaries))}
