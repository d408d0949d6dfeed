"""The catalogue's data model: the single source of truth for records, index and manifest.

Every JSON file errcat writes is one of these models dumped in field order; the JSON Schemas
under ``schema/`` are generated from them (``errcat schema``). Field order is the order of a
catalogue page, so the files read top to bottom like the page they feed.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1"
ID_PATTERN = r"^[0-9a-f]{16}$"
COMMIT_PATTERN = r"^[0-9a-f]{40}$"
#: Releases often record an abbreviated upstream commit (vLLM's _version.py: 'g4ba787ec9').
UPSTREAM_COMMIT_PATTERN = r"^[0-9a-f]{7,40}$"

SiteKind = Literal["raise", "assert"]
ExplanationStatus = Literal["curated", "draft", "absent"]


class Model(BaseModel):
    """Strict base: unknown keys are errors, so a typo in data never passes silently."""

    model_config = ConfigDict(extra="forbid", frozen=False)


class TemplateField(Model):
    """One ``{...}`` field of a message template."""

    expr: str = Field(description="The expression's source text, exactly as written (conversion and format spec included).")
    name: str | None = Field(default=None, description="The variable name when the expression is a simple name.")


class Template(Model):
    """A message as it can be known from source: literal text with ``{expression}`` fields."""

    text: str = Field(description="Literal text with each field as {expression}; literal braces doubled, so it round-trips.")
    fields: list[TemplateField] = Field(default_factory=list, description="The fields in order of appearance.")
    pattern: str = Field(description="Anchored regular expression matching a runtime message; one named group per field (f0, f1, ...).")
    form: str = Field(description="How the message is built in source: literal, fstring, percent, format, concat, variable, constant, join, keyword, helper, init, opaque, none.")
    opaque: bool = Field(default=False, description="True when the whole message is one unresolved field, or there is no message.")


class Snippet(Model):
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    code: str


class Facts(Model):
    """Machine-derived facts about a raise site: how the code gets there."""

    derived: Literal["machine"] = "machine"
    guards: list[str] = Field(default_factory=list, description="if/elif/while conditions on the path to the raise, else branches negated, outermost first.")
    loops: list[str] = Field(default_factory=list, description="Headers of loops the raise sits in, outermost first.")
    handler: str | None = Field(default=None, description="The except clause the raise sits in, e.g. 'except ImportError as e'.")
    cause: str | None = Field(default=None, description="The expression after 'from', when the raise chains one.")
    reraise: bool = Field(default=False, description="A re-raise of the handled exception (bare raise, raise e).")
    decorators: list[str] = Field(default_factory=list, description="Decorators of the enclosing function, as written.")
    docstring: str | None = Field(default=None, description="First paragraph of the enclosing function's docstring.")


class Site(Model):
    """One place in the source where the error is raised."""

    path: str
    line: int = Field(ge=1, description="Line of the raise/assert keyword.")
    end_line: int = Field(ge=1)
    module: str
    qualname: str = Field(description="Enclosing qualified name (Class.method), '<module>' at top level.")
    kind: SiteKind
    exception: str = Field(description="The exception as written at the site.")
    exception_qualname: str = Field(description="The exception resolved through the module's imports.")
    template: Template
    permalink: str
    snippet: Snippet
    facts: Facts


class ExceptionInfo(Model):
    name: str = Field(description="Class name, e.g. ValueError.")
    qualname: str = Field(description="Qualified name, e.g. vllm.exceptions.VLLMValidationError or builtins.ValueError.")
    builtin_ancestor: str | None = Field(default=None, description="The nearest builtin exception class users catch.")
    bases: list[str] = Field(default_factory=list, description="Base chain resolved from source, nearest first.")


class Location(Model):
    path: str
    line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    qualname: str
    permalink: str


class ExampleFix(Model):
    before: str = ""
    after: str = ""


class DefensivePattern(Model):
    strategy: str
    code: str = ""


class WhenItHappens(Model):
    trigger: str = ""
    common_situations: list[str] = Field(default_factory=list)


class Explanation(Model):
    what_it_means: str = ""
    solutions: list[str] = Field(default_factory=list)
    example_fix: ExampleFix | None = None
    defensive_patterns: list[DefensivePattern] = Field(default_factory=list)
    prevention: list[str] = Field(default_factory=list)
    when_it_happens: WhenItHappens = Field(default_factory=WhenItHappens)


class Related(Model):
    id: str = Field(pattern=ID_PATTERN)
    title: str
    reason: str = Field(description="Why it is related: curated, same function, same class, same module, same package, shared terms.")


class RepoRef(Model):
    url: str
    owner: str
    name: str


class Provenance(Model):
    repo: str = Field(description="owner/name")
    commit: str = Field(pattern=COMMIT_PATTERN)
    commit_date: str = Field(description="Committer date of the commit, ISO 8601.")
    upstream_commit: str | None = Field(default=None, pattern=UPSTREAM_COMMIT_PATTERN, description="The upstream commit the release records (vllm/_version.py; possibly abbreviated), when the crawled commit is not itself upstream's; permalinks use it.")
    errcat_version: str
    source: str = Field(description="Where the files were read from: git, or pypi:<name>==<version>.")


class Lifetime(Model):
    version: str | None = None
    commit: str = Field(pattern=COMMIT_PATTERN)


class History(Model):
    """When an entry was seen, over the versions a history run covered (``errcat history``/``sync``).

    Ids are never reused: an entry that goes away stays in the catalogue as a retired record
    (its last seen sites and text), and a reworded message gets a new id that points back here.
    """

    first_seen: Lifetime | None = Field(default=None, description="The earliest covered version that has this entry.")
    last_seen: Lifetime | None = Field(default=None, description="The latest covered version that has this entry.")
    retired: bool = Field(default=False, description="True when the newest covered version no longer has this entry.")
    retired_note: str | None = Field(default=None, description="Human-readable, e.g. 'removed in v0.31.0'.")
    removed_in: Lifetime | None = Field(default=None, description="The first version without the entry, when retired.")
    replaces: list[Annotated[str, Field(pattern=ID_PATTERN)]] = Field(default_factory=list, description="Ids this entry succeeded: the same error reworded, or raised as another exception.")
    replaced_by: str | None = Field(default=None, pattern=ID_PATTERN, description="When retired: the id that succeeded it, if any.")


class Record(Model):
    """One catalogue entry: a distinct error (same exception, same template) and all its sites."""

    schema_version: Literal["1"] = SCHEMA_VERSION
    id: str = Field(pattern=ID_PATTERN)
    title: str
    repo: RepoRef
    kind: SiteKind
    exception: ExceptionInfo
    message: Template
    location: Location
    snippet: Snippet
    facts: Facts
    sites: list[Site] = Field(min_length=1)
    explanation_status: ExplanationStatus = "absent"
    explanation: Explanation = Field(default_factory=Explanation)
    related: list[Related] = Field(default_factory=list)
    history: History | None = None
    provenance: Provenance


class IndexRow(Model):
    id: str = Field(pattern=ID_PATTERN)
    title: str
    exception: str
    kind: SiteKind
    template: str
    path: str
    line: int
    sites: int
    explanation_status: ExplanationStatus
    retired: bool = Field(default=False, description="A retired entry: gone from the crawled commit, kept so its id is never reused.")


class Index(Model):
    schema_version: Literal["1"] = SCHEMA_VERSION
    repo: str
    commit: str = Field(pattern=COMMIT_PATTERN)
    entries: list[IndexRow]


class Skipped(Model):
    path: str
    reason: str


class Counts(Model):
    files: int = Field(description="Files selected by the include/exclude globs.")
    parsed: int
    skipped: int
    sites: int
    entries: int
    bare_asserts: int = 0
    reraises: int = 0
    retired: int = Field(default=0, description="Retired entries kept from earlier versions (not counted in entries).")
    omitted: int = Field(default=0, description="Entries a history left out so that no file of the dataset is larger than limits.max_output_bytes: retired ones first, the largest first (not counted in entries or retired). A crawl leaves out whole source files instead, listed in skipped.")


class Limits(Model):
    """Bounds on what a crawl reads and writes, so that no upstream, however large or hostile,
    makes a dataset too large to publish. Set per crawl (options) or per upstream (errcat.toml)."""

    max_file_bytes: int = Field(default=2_000_000, ge=1, description="Source files larger than this are skipped, never read.")
    max_file_sites: int = Field(default=1_000, ge=1, description="A source file with more raise and assert sites than this is skipped: none of its sites are entries.")
    max_output_bytes: int = Field(default=50 * 1024 * 1024, ge=1, description="No file of the dataset is larger than this (GitHub warns above 50 MiB and refuses files above 100 MiB): the source files whose entries would make one larger are skipped, the largest share first.")


class Manifest(Model):
    schema_version: Literal["1"] = SCHEMA_VERSION
    errcat_version: str
    extractor_version: str
    repo: RepoRef
    commit: str = Field(pattern=COMMIT_PATTERN)
    commit_date: str
    upstream_commit: str | None = Field(default=None, pattern=UPSTREAM_COMMIT_PATTERN)
    ref: str | None = None
    source: str
    include: list[str]
    exclude: list[str]
    counts: Counts
    limits: Limits = Field(default_factory=Limits, description="The bounds the dataset was made under; what they left out is in skipped.")
    skipped: list[Skipped]
    curated_digest: str | None = None
    input_digest: str = Field(description="SHA-256 over everything the dataset is made from (versions, commit, selected blobs, curated files): a crawl whose inputs match leaves the dataset alone.")
    content_digest: str = Field(description="SHA-256 over every other file of the dataset (see output.content_digest).")


# --------------------------------------------------------------------------- curated files

CuratedStatus = Literal["draft", "reviewed", "retired"]


class CuratedReview(Model):
    """What a curated explanation was written for, so a check can tell when upstream moved on."""

    status: CuratedStatus = Field(description="draft: not yet checked against the code; reviewed: checked at `commit`; retired: the error is gone upstream, the text is kept.")
    commit: str = Field(pattern=UPSTREAM_COMMIT_PATTERN, description="The commit the text was reviewed (or drafted) at.")
    exception: str = Field(min_length=1, description="Exception class name at that commit.")
    template: str = Field(description="The message template at that commit (Record.message.text).")
    guards: list[str] = Field(default_factory=list, description="The guards leading to the raise at that commit (Record.facts.guards).")
    path: str = Field(min_length=1, description="Primary site's file at that commit.")
    qualname: str = Field(min_length=1, description="Primary site's enclosing function at that commit.")
    note: str | None = Field(default=None, description="Free text, e.g. why an entry was retired.")


class CuratedFile(Model):
    """One curated explanation: ``curated/<owner>/<name>/<id>.yaml``. The sections of a catalogue
    page, a hand-picked see-also list, and review metadata."""

    id: str = Field(pattern=ID_PATTERN, description="The entry id; must equal the file name's stem.")
    what_it_means: str = Field(min_length=1)
    when_it_happens: WhenItHappens = Field(default_factory=WhenItHappens)
    solutions: list[str] = Field(default_factory=list)
    example_fix: ExampleFix | None = None
    defensive_patterns: list[DefensivePattern] = Field(default_factory=list)
    prevention: list[str] = Field(default_factory=list)
    related: list[Annotated[str, Field(pattern=ID_PATTERN)]] = Field(default_factory=list, description="Ids a curator links as see-also; listed before computed ones.")
    review: CuratedReview

    def explanation(self) -> Explanation:
        return Explanation(
            what_it_means=self.what_it_means,
            solutions=self.solutions,
            example_fix=self.example_fix,
            defensive_patterns=self.defensive_patterns,
            prevention=self.prevention,
            when_it_happens=self.when_it_happens,
        )
