"""Where the joins' outputs go into the records: each join returns its part of the records, by
id, and :func:`merge` is the one place that writes them in.

    meaning_join.join_meaning  -> Joined: SourcePart of every record (callers, knobs, trigger,
                                  fix, related), reproductions of those a test reproduces
    explanations.curated_parts -> CuratedPart of each record a curated file explains
    evidence.evidence_by_id    -> the reports of each record a curated evidence file lists
    actions.action             -> meaning.action of every record, from what the joins put in

A join that reads another's output takes it as an argument (related errors read the callers,
a curated see-also list goes before the computed related errors), never from the records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, NotRequired, TypedDict

from crawler.catalogue.action_memo import Act, plain
from crawler.catalogue.actions import reviewed
from crawler.catalogue.meaning import SettingNames
from crawler.model.shapes import ExtractedSite, RecordData


class SourcePart(TypedDict):
    """A record's part of the source join: ``meaning``'s callers, knobs, trigger and fix, and
    the record's ``related``."""

    callers: list[dict[str, Any]]
    knobs: list[dict[str, Any]]
    trigger: str
    fix: str | None
    related: list[dict[str, Any]]
    #: who acts, [actor, basis], from what every call of the check's function passes the
    #: parameters it tests (``callers.passed_by_id``): kept off the record, ``actions`` reads it
    passed: list[str] | None


class Joined(NamedTuple):
    """The whole-repository joins' parts, by id: ``source`` holds every record's,
    ``reproductions`` those of the records some test reproduces (``records.Reproduction`` dicts)."""

    source: dict[str, SourcePart]
    reproductions: dict[str, list[dict[str, Any]]]
    #: how the settings are spelled for the user (``meaning.setting_names``): who acts names a
    #: setting by its option
    names: SettingNames | None = None


class CuratedPart(TypedDict):
    """What a curated file gives its record: the explanation and its status, and, when the file
    links see-also entries, the related list with those first."""

    explanation: dict[str, Any]
    explanation_status: str
    related: NotRequired[list[dict[str, Any]]]


def merge(
    records: list[RecordData],
    joined: Joined,
    curated: Mapping[str, CuratedPart],
    evidence: Mapping[str, list[dict[str, Any]]],
    primaries: Mapping[str, ExtractedSite] | None = None,
    act: Act | None = None,
) -> None:
    """Put every join's part into its record (records are built once, then completed here);
    ``primaries``: each record's primary site as extracted, whose traced reads who acts takes
    (without them, the record's snippet is traced); ``act`` makes who acts (``action_memo``:
    ``Memo.action`` takes an unchanged record's from the last crawl; without it, ``action_memo.plain``
    with ``joined.names``)."""
    for record in records:
        rid = record["id"]
        part = joined.source[rid]
        meaning = record["meaning"]
        meaning["callers"], meaning["knobs"], meaning["trigger"], meaning["fix"] = part["callers"], part["knobs"], part["trigger"], part["fix"]
        record["related"] = part["related"]
        reproductions = joined.reproductions.get(rid)
        if reproductions:
            meaning["reproductions"] = reproductions
        primary = primaries.get(rid) if primaries is not None else None
        # (reads the meaning and related just put in)
        meaning["action"] = act(record, primary, part.get("passed")) if act is not None else plain(record, primary, part.get("passed"), joined.names)
        explained = curated.get(rid)
        if explained is not None:
            record["explanation"] = explained["explanation"]
            record["explanation_status"] = explained["explanation_status"]
            meaning["action"] = reviewed(meaning["action"], record["explanation"], record["explanation_status"])
            if "related" in explained:
                record["related"] = explained["related"]
        reports = evidence.get(rid)
        if reports:
            record["explanation"]["evidence"] = reports
