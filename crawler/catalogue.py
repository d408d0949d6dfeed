"""Sites -> entries -> records.

Plain data in (per-file extraction results, the snapshot's identity, resolved exception
classes), pydantic records out. Grouping is by entry id (see ``ids``); the primary site of an
entry is its first by path and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from . import __version__
from .errors import DataError
from .ids import entry_id, entry_key
from .models import (
    ExceptionInfo,
    Facts,
    Location,
    Provenance,
    Record,
    RepoRef,
    Site,
    Snippet,
    Template,
)

TITLE_WIDTH = 60


@dataclass(frozen=True)
class Identity:
    """What a record needs to know about where its sites came from."""

    repo: RepoRef
    commit: str
    commit_date: str
    upstream_commit: str | None
    source: str

    @property
    def slug(self) -> str:
        return f"{self.repo.owner}/{self.repo.name}"

    def permalink(self, path: str, line: int) -> str:
        commit = self.upstream_commit or self.commit
        return f"https://github.com/{self.repo.owner}/{self.repo.name}/blob/{commit}/{path}#L{line}"


def title_for(template: dict[str, Any], exception: str, qualname: str) -> str:
    """The template cut at 60 characters; a message-less entry is named by where it is raised."""
    text = " ".join(template["text"].split())
    if template.get("opaque") or not text:
        text = f"{exception} in {qualname}"
    if len(text) > TITLE_WIDTH:
        text = text[: TITLE_WIDTH - 1].rstrip() + "…"
    return text


def group_sites(identity: Identity, sites: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Group site dicts by entry id; two different keys with one id is a hard error."""
    groups: dict[str, list[dict[str, Any]]] = {}
    keys: dict[str, tuple[str, ...]] = {}
    for site in sites:
        key = entry_key(site)
        eid = entry_id(identity.slug, key)
        seen = keys.setdefault(eid, key)
        if seen != key:
            raise DataError(f"id collision: {eid} names two different errors: {seen!r} and {key!r}")
        groups.setdefault(eid, []).append(site)
    for members in groups.values():
        members.sort(key=lambda s: (s["path"], s["line"]))
    return groups


def _exception_info(site: dict[str, Any], exceptions: dict[str, dict[str, Any]]) -> ExceptionInfo:
    qualname = site["exception_qualname"]
    known = exceptions.get(qualname)
    if known is not None:
        return ExceptionInfo.model_validate(known)
    name = qualname.rpartition(".")[2] or site["exception"]
    builtin = name if qualname.startswith("builtins.") else None
    return ExceptionInfo(name=name, qualname=qualname, builtin_ancestor=builtin)


def build_records(
    identity: Identity,
    sites: Iterable[dict[str, Any]],
    exceptions: dict[str, dict[str, Any]] | None = None,
) -> list[Record]:
    """One record per distinct error, sorted by id."""
    exceptions = exceptions or {}
    provenance = Provenance(
        repo=identity.slug,
        commit=identity.commit,
        commit_date=identity.commit_date,
        upstream_commit=identity.upstream_commit,
        errcat_version=__version__,
        source=identity.source,
    )
    records = []
    for eid, members in sorted(group_sites(identity, sites).items()):
        site_models = [
            Site(
                path=s["path"],
                line=s["line"],
                end_line=s["end_line"],
                module=s["module"],
                qualname=s["qualname"],
                kind=s["kind"],
                exception=s["exception"],
                exception_qualname=s["exception_qualname"],
                template=Template.model_validate(s["template"]),
                permalink=identity.permalink(s["path"], s["line"]),
                snippet=Snippet.model_validate(s["snippet"]),
                facts=Facts.model_validate(s["facts"]),
            )
            for s in members
        ]
        primary = site_models[0]
        exception = _exception_info(members[0], exceptions)
        records.append(
            Record(
                id=eid,
                title=title_for(members[0]["template"], exception.name, primary.qualname),
                repo=identity.repo,
                kind=primary.kind,
                exception=exception,
                message=primary.template,
                location=Location(
                    path=primary.path,
                    line=primary.line,
                    end_line=primary.end_line,
                    qualname=primary.qualname,
                    permalink=primary.permalink,
                ),
                snippet=primary.snippet,
                facts=primary.facts,
                sites=site_models,
                provenance=provenance,
            )
        )
    return records
