"""Sites -> entries -> records.

Plain data in (per-file extraction results, the snapshot's identity, resolved exception
classes), pydantic records out. Grouping is by entry id (see ``ids``); the primary site of an
entry is its first by path and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, cast
from urllib.parse import quote

from crawler.base.errors import DataError
from crawler.extract.derive import derived
from crawler.extract.ids import entry_id
from crawler.model.kinds import KINDS, RESPONSE
from crawler.model.records import SCHEMA_VERSION, Facts, RepoRef
from crawler.model.shapes import (
    UNKNOWN_EXCEPTION_NAME,
    UNKNOWN_EXCEPTION_QUALNAME,
    ExceptionData,
    ExtractedSite,
    FactsData,
    LocationData,
    ProvenanceData,
    RecordData,
    RepoData,
    ResponseInfoData,
    SiteData,
    TemplateData,
)

TITLE_WIDTH = 60


@dataclass(frozen=True)
class Identity:
    """What a record needs to know about where its sites came from."""

    repo: RepoRef
    commit: str
    commit_date: str | None
    upstream_commit: str | None
    source: str
    #: ``records.Permalinks`` as data: the revision permalinks name, or why there are none
    #: (default: the upstream commit the release records, else the crawled commit).
    permalinks: dict[str, str] | None = None
    #: What the repository puts before a path of the source (a wheel's ``src/``).
    link_prefix: str = ""

    @property
    def slug(self) -> str:
        return f"{self.repo.owner}/{self.repo.name}"

    @property
    def links(self) -> dict[str, str]:
        return self.permalinks or {"basis": "commit", "rev": self.upstream_commit or self.commit}

    def permalink(self, path: str, line: int) -> str | None:
        links = self.links
        if links["basis"] == "none":
            return None
        return f"{self.repo.url}/blob/{_quoted(links['rev'], 'strict')}/{_quoted(self.link_prefix + path, 'backslashreplace')}#L{line}"


@lru_cache(maxsize=65536)
def _quoted(part: str, errors: str) -> str:
    """A path or revision as a URL path (a path may hold '#', '?' or '%'); memoised: a crawl makes
    a permalink for every site and reproduction, and re-pinning makes them again, over a few
    thousand paths."""
    return quote(part, safe="/", errors=errors)


#: The only characters a cut point depends on: the others are stepped over in one search.
_MARKS = re.compile(r"[{} ]")


def _cut_points(text: str, end: int) -> list[int]:
    """Where a title may end, up to ``end``: before a space, before a template field or after
    one, never inside a field (``{x if y else z}``) or a word. Literal braces are doubled in
    template text. (A point depends only on the text before it and the character after.)"""
    points, depth, i = [], 0, 0
    stop = min(len(text), end)
    while (mark := _MARKS.search(text, i, stop)) is not None:
        i = mark.start()
        c = text[i]
        if depth == 0 and text.startswith(("{{", "}}"), i):
            i += 2
            continue
        if c == "{":
            if depth == 0:
                points.append(i)
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                points.append(i + 1)
        elif c == " " and depth == 0:
            points.append(i)
        i += 1
    return points


def cut_title(text: str, width: int = TITLE_WIDTH) -> str:
    """``text`` in at most ``width`` characters, cut at a word or field boundary and marked "…";
    a text whose first half is one word (a long path, a long field) is cut inside it instead,
    which keeps more of it than a cut at its start would."""
    if len(text) <= width:
        return text
    fits = [p for p in _cut_points(text, width) if width // 2 <= p <= width - 1]
    return text[: fits[-1] if fits else width - 1].rstrip() + "…"


def title_for(template: TemplateData, exception: str, qualname: str, condition: str | None = None) -> str:
    """The template cut to 60 characters; an assert with no message is named by its condition, any
    other message-less entry by where it is raised."""
    text = " ".join(template["text"].split())
    if condition is not None:
        text = f"assert {condition}"
    elif template.get("opaque") or not text:
        text = f"{exception} in {qualname}"
    return cut_title(text)


def group_sites(identity: Identity, sites: Iterable[ExtractedSite]) -> dict[str, list[ExtractedSite]]:
    """Group site dicts by entry id; two different keys with one id is a hard error."""
    groups: dict[str, list[ExtractedSite]] = {}
    keys: dict[str, tuple[str, ...]] = {}
    for site in sites:
        key = tuple(derived(site)["key"])
        eid = entry_id(identity.slug, key)
        seen = keys.setdefault(eid, key)
        if seen != key:
            raise DataError(f"id collision: {eid} names two different errors: {seen!r} and {key!r}")
        groups.setdefault(eid, []).append(site)
    for members in groups.values():
        members.sort(key=lambda s: (s["path"], s["line"]))
    return groups


#: What each entry key's first word (``extract.ids.entry_key``) says the entry is keyed by.
KEYED_BY = {"message": "message", "condition": "condition", "site": "place"}


def _exception_info(site: ExtractedSite, exceptions: Mapping[str, ExceptionData]) -> ExceptionData | None:
    qualname = site["exception_qualname"]
    if not KINDS[site["kind"]].raises:  # a level (WARNING) or an error type, no class: log and response say them
        return None
    if qualname == UNKNOWN_EXCEPTION_QUALNAME:  # a raise of a value whose class the code does not show
        return {"name": UNKNOWN_EXCEPTION_NAME, "qualname": UNKNOWN_EXCEPTION_QUALNAME, "builtin_ancestor": None, "bases": []}
    known = exceptions.get(qualname)
    if known is not None:
        return known.copy()
    name = qualname.rpartition(".")[2] or site["exception"]
    builtin = name if qualname.startswith("builtins.") else None
    return {"name": name, "qualname": qualname, "builtin_ancestor": builtin, "bases": []}


def empty_meaning() -> dict[str, Any]:
    """The derived meaning before anything is read into it (``records.Meaning``)."""
    return {"derived": "machine", "trigger": "", "fix": None, "knobs": [], "reproductions": [], "callers": [], "action": None}


def empty_explanation() -> dict[str, Any]:
    """``records.Explanation()`` as plain data (a test holds the two equal)."""
    return {
        "what_it_means": "",
        "solutions": [],
        "example_fix": None,
        "defensive_patterns": [],
        "prevention": [],
        "when_it_happens": {"trigger": "", "common_situations": []},
    }


# A boundary: the pydantic model's dump is the TypedDict that mirrors it (tests/model/test_shapes.py
# holds the two to one shape), which mypy cannot see.
_FACTS_DEFAULTS = cast(FactsData, Facts().model_dump(mode="json"))


def _template(template: TemplateData) -> TemplateData:
    # (a site made by hand, not extracted, may leave the defaults out)
    return {
        "text": template["text"],
        "fields": [{"expr": f["expr"], "name": f.get("name")} for f in template.get("fields", ())],
        "pattern": template["pattern"],
        "form": template["form"],
        "opaque": template.get("opaque", False),
        "alternatives": template.get("alternatives", []),
    }


def _site(identity: Identity | None, s: ExtractedSite) -> SiteData:
    """A record's site of an extracted one; without ``identity``, without its permalink (:func:`pin_in_place`)."""
    raises = KINDS[s["kind"]].raises
    found = s.get("response")
    response: ResponseInfoData | None = None
    if found is not None and s["kind"] == RESPONSE:  # the builder as resolved, where schema 5 had it as the exception
        response = {**found, "builder_qualname": s["exception_qualname"]}
    site: dict[str, Any] = {
        "path": s["path"],
        "line": s["line"],
        "end_line": s["end_line"],
        "module": s["module"],
        "qualname": s["qualname"],
        "kind": s["kind"],
        "exception": s["exception"] if raises else None,
        "exception_qualname": s["exception_qualname"] if raises else None,
        "template": _template(s["template"]),
        "condition": s.get("condition"),
    }
    if identity is not None:
        site["permalink"] = identity.permalink(s["path"], s["line"])
    site |= {
        "snippet": s["snippet"],
        "facts": {**_FACTS_DEFAULTS, **s["facts"]},
        # null when absent, as the models write it: a record reads back to the same bytes
        "log": s.get("log"),
        "response": response,
        "native": s.get("native"),
    }
    return cast(SiteData, site)


class Entries(NamedTuple):
    """The records of a crawl, and each entry's primary site as extracted (with its derived
    facts, see ``derive``), by id: the joins that follow read the facts the records do not keep."""

    records: list[RecordData]
    primaries: dict[str, ExtractedSite]


def build_records(
    identity: Identity,
    sites: Iterable[ExtractedSite],
    exceptions: Mapping[str, ExceptionData] | None = None,
) -> list[RecordData]:
    """The records of :func:`build_entries`."""
    return build_entries(identity, sites, exceptions).records


def _provenance(identity: Identity) -> ProvenanceData:
    return {
        "repo": identity.slug,
        "commit": identity.commit,
        "commit_date": identity.commit_date,
        "upstream_commit": identity.upstream_commit,
        "source": identity.source,
        "permalinks": identity.links,
    }


def build_entries(
    identity: Identity,
    sites: Iterable[ExtractedSite],
    exceptions: Mapping[str, ExceptionData] | None = None,
    pinned: bool = True,
) -> Entries:
    """One record per distinct error, sorted by id, as plain data shaped like ``records.Record``,
    with each one's primary site.

    The crawl builds dicts rather than models: pydantic would validate ~100k nested objects on
    vLLM for nothing, since every record is checked against the schema generated from the
    models before it is written (and a test holds dict and model to the same shape).

    Not ``pinned``: each record as ``action_memo.pinless`` has it (no provenance but its repo, no
    permalink), which who acts is keyed by without a copy of every site; :func:`pin_in_place`
    puts the rest in once the joins are merged (every file the dataset writes sorts its keys).
    """
    exceptions = exceptions or {}
    # a boundary, as for _FACTS_DEFAULTS: a model's dump as its TypedDict
    repo = cast(RepoData, identity.repo.model_dump(mode="json"))
    provenance = _provenance(identity) if pinned else cast(ProvenanceData, {"repo": identity.slug})
    at = identity if pinned else None
    records: list[RecordData] = []
    primaries: dict[str, ExtractedSite] = {}
    for eid, members in sorted(group_sites(identity, sites).items()):
        site_dicts = [_site(at, s) for s in members]
        primaries[eid] = members[0]
        primary = site_dicts[0]
        exception = _exception_info(members[0], exceptions)
        named = exception["name"] if exception is not None else members[0]["exception"]
        records.append(
            {
                "schema_version": SCHEMA_VERSION,
                "id": eid,
                # a native check's title leaves out what its macro puts before every message
                "title": title_for(members[0].get("title_template") or members[0]["template"], named, primary["qualname"], primary["condition"]),
                "repo": repo,
                "kind": primary["kind"],
                "keyed_by": KEYED_BY[derived(members[0])["key"][0]],
                "exception": exception,
                "log": primary["log"],
                "response": primary["response"],
                "native": primary["native"],
                "message": primary["template"],
                "location": cast(
                    LocationData,
                    {"path": primary["path"], "line": primary["line"], "end_line": primary["end_line"], "qualname": primary["qualname"]}
                    | ({"permalink": primary["permalink"]} if pinned else {}),
                ),
                "sites": site_dicts,
                "explanation_status": "absent",
                "explanation": empty_explanation(),
                "related": [],
                "meaning": empty_meaning(),
                "history": None,
                "provenance": provenance,
            }
        )
    return Entries(records, primaries)


def pin_in_place(records: Iterable[RecordData], identity: Identity) -> None:
    """Put in records built not ``pinned`` (:func:`build_entries`) the provenance and the
    permalinks of the crawled commit: the records ``pinned`` ones are, but for the order of their
    keys (one provenance for all, as there)."""
    provenance = _provenance(identity)
    permalink = identity.permalink
    for record in records:
        record["provenance"] = provenance
        location = record["location"]
        location["permalink"] = permalink(location["path"], location["line"])
        for site in record["sites"]:
            site["permalink"] = permalink(site["path"], site["line"])
