"""The diff report's models: the kinds of change (``ChangeKind``), each change and the report (``DiffReport``)."""

from __future__ import annotations

import enum

from pydantic import Field

from crawler.model.records import (
    SCHEMA_VERSION,
    Commit,
    EntryId,
    Model,
    RepoSlug,
    SchemaVersion,
    ShortCommit,
    SiteKind,
)


class ChangeKind(enum.StrEnum):
    """A class of change; the value is its stable machine name, as the JSON report and
    ``--fail-on`` spell it."""

    # Most telling first: the order of the report, the changelog and the annotations.
    REMOVED = "removed"
    REWORDED = "reworded"
    EXCEPTION_CHANGED = "exception-changed"
    ADDED = "added"
    SITES_REMOVED = "sites-removed"
    SITES_ADDED = "sites-added"
    MOVED = "moved"

    @property
    def label(self) -> str:
        """The message a maintainer sees: ``exception changed``."""
        return LABELS[self]


LABELS = {
    ChangeKind.REMOVED: "error removed",
    ChangeKind.REWORDED: "message reworded",
    ChangeKind.EXCEPTION_CHANGED: "exception changed",
    ChangeKind.ADDED: "error added",
    ChangeKind.SITES_REMOVED: "sites removed",
    ChangeKind.SITES_ADDED: "sites added",
    ChangeKind.MOVED: "error moved",
}
KIND_ORDER = {kind: n for n, kind in enumerate(ChangeKind)}


# --------------------------------------------------------------------------- the report model


class SiteRef(Model):
    path: str
    line: int = Field(ge=1)
    qualname: str
    permalink: str | None = Field(description="As in the record: null when the crawl could name no revision.")


class SiteChange(Model):
    """One site's fate: both sides for a move, one side for an added or removed site."""

    old: SiteRef | None = None
    new: SiteRef | None = None


class Change(Model):
    kind: ChangeKind
    summary: str = Field(description="One line a maintainer reads, e.g. 'error moved: a.py:219 -> a.py:256'.")
    id: EntryId = Field(description="The entry's id on the new side (the old side for a removal).")
    old_id: EntryId | None = Field(default=None, description="For reworded / exception changed: the predecessor's id, so curated text can follow.")
    title: str
    old_title: str | None = None
    exception: str
    old_exception: str | None = None
    template: str
    old_template: str | None = None
    location: SiteRef = Field(description="Where to look: the new primary site (the old one for a removal).")
    similarity: float | None = Field(default=None, ge=0, le=1, description="For reworded: how alike the normalized templates are.")
    sites: list[SiteChange] = Field(default_factory=list)
    entry_kind: SiteKind | None = Field(
        default=None,
        description="The entry's kind (raise, assert, log, response, native): for a log, exception and old_exception are levels; for a response, error types.",
    )
    status_code: int | None = Field(default=None, ge=100, le=599, description="For a response: the HTTP status it answers with, when static.")
    old_status_code: int | None = Field(default=None, ge=100, le=599, description="For a response whose answer changed: the status before.")


class Side(Model):
    repo: RepoSlug
    commit: Commit
    ref: str | None = None
    release: str | None = Field(default=None, description="NAME==VERSION when this side is a release read from the package index.")
    upstream_commit: ShortCommit | None = None
    entries: int = Field(ge=0)

    @property
    def label(self) -> str:
        """The side as a report names it, on one line: a dataset's ref is its manifest's to say, and
        a line break in it split the summary a CI log shows in two."""
        return " ".join((self.ref or self.release or self.commit[:12]).split())


class DiffCounts(Model):
    removed: int = 0
    reworded: int = 0
    exception_changed: int = 0
    added: int = 0
    sites_removed: int = 0
    sites_added: int = 0
    moved: int = 0
    unchanged: int = Field(default=0, description="Ids on both sides with the same sites.")

    def of(self, kind: ChangeKind) -> int:
        count: int = getattr(self, kind.name.lower())
        return count


class DiffReport(Model):
    """``errcat diff --format json``: every change between two catalogues, most telling first."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    repo: RepoSlug
    old: Side
    new: Side
    counts: DiffCounts
    changes: list[Change]

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def kinds(self) -> set[ChangeKind]:
        return {c.kind for c in self.changes}
