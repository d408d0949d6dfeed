"""search.json's models: one row per entry, with the pattern, fragments and anchors matching reads."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from crawler.model.records import (
    SCHEMA_VERSION,
    Commit,
    EntryId,
    Model,
    RepoSlug,
    SchemaVersion,
    SiteKind,
)


class SearchSite(Model):
    path: str
    line: int = Field(ge=1)
    qualname: str


class SearchAlternative(Model):
    """One piece of an assembled message with no literal text around it (``"\\n".join(errors)``):
    the message holds one or more pieces, so a message matches when one piece's fragments occur
    in it in order, anywhere."""

    fragments: list[str] = Field(min_length=1)
    anchors: list[str] = Field(default_factory=list, description="Whole words of the piece's literal text.")


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
    anchors: list[str] = Field(
        default_factory=list,
        description="Words of the literal text that are whole words in every matching message (case kept): a message lacking one cannot match.",
    )
    tokens: list[str] = Field(default_factory=list, description="Lowercase words of the title, template and exception, for a search box.")
    opaque: bool = False
    alternatives: list[SearchAlternative] = Field(
        default_factory=list,
        description="An assembled message's pieces, each matched on its own: in the place of its assembled field when the message has text of its own around one.",
    )
    explanation_status: Literal["curated", "draft", "absent"]
    sites: list[SearchSite]
    accepted_as_is: Literal[True] | None = Field(
        default=None,
        description="The explanation is a machine draft a reviewer accepted as is (the record's explanation.accepted_as_is): reviewed, not written by a person; absent otherwise.",
    )
    condition: str | None = Field(
        default=None,
        description="An assert with no message (keyed by its condition): the condition, white space collapsed, which a traceback's last frame shows on its code line; absent otherwise.",
    )

    @model_serializer(mode="wrap")
    def _omit_unused(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # absent rather than null: the rows of every other entry stay as they were
        out = handler(self)
        if self.accepted_as_is is None:
            out.pop("accepted_as_is", None)
        if self.condition is None:
            out.pop("condition", None)
        return out


class SearchIndex(Model):
    """``search.json``: every entry of a dataset in the form a search needs, in id order."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    repo: RepoSlug
    commit: Commit
    entries: list[SearchEntry]
