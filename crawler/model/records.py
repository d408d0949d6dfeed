"""The catalogue's data model: the single source of truth for records, index and manifest.

Every JSON file errcat writes is one of these models dumped in field order; the JSON Schemas
under ``schema/`` are generated from them (``errcat schema``). Field order is the order of a
catalogue page, so the files read top to bottom like the page they feed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, SerializerFunctionWrapHandler, model_serializer, model_validator

from crawler.model.kinds import KINDS, LEVEL_NAMES, LOG, RESPONSE, KeyedBy, response_word

#: Bumped whenever a consumer validating against the previous schemas would notice. 2: meaning,
#: nullable permalinks and provenance.permalinks, manifest limits and counts.omitted, identity,
#: link and whole-string id/commit patterns. 3: entry kinds log, response and native with their
#: facts and assembled messages (template alternatives); a record names the commit at which it
#: last changed (provenance, permalinks), no longer repeats its primary site's snippet and facts
#: nor names the errcat version, and a live record's history.last_seen is null (the manifest's
#: commit); explanation evidence and model; errors.jsonl.gz. 4: meaning.action, what to do about
#: the error (who acts, the message's own remedy, the steps), derived on every record. 5: a
#: dataset made from a released package names the release (manifest.release: package, version,
#: upload time, what its commit is) and no commit date (manifest and provenance commit_date null):
#: a wheel has none, and a content hash is said to be one. 6: a record says what its kind is: a log
#: line's and an error response's ``exception`` (record and site) is null, where 5 held the level
#: (WARNING, logging.WARNING) and the error type and builder; a response names its builder as
#: resolved (response.builder_qualname); ``keyed_by`` says what an entry's id is keyed by, and an
#: assert with no message is an entry keyed by its condition (site.condition). Readers migrate a
#: dataset of schema 5 (``crawler.publish.migrate``). 7: a lifetime or move of a release read
#: from a package that records no commit says so (``"files": true``, absent otherwise): its commit
#: is a digest of the release's files, never shown as a commit (a fold of wheel releases had only
#: the newest manifest to tell it by). Readers migrate datasets of schema 5 and 6, one step at a
#: time (``crawler.publish.migrate``). 8: a retired entry's successor may be a link made by review
#: (``history.replaced_by_review``: a curated lineage link, ``curated/<owner>/<name>/lineage/links.yaml``,
#: when no word rule links a check worded anew), absent otherwise; an answer's successor says so
#: (``how``: "linked by review"). Readers migrate datasets of schema 5, 6 and 7.
SCHEMA_VERSION: Final = "8"
SchemaVersion = Literal["8"]
#: The schemas a reader still reads, oldest first, each migrated to this one as it is read.
OLDER_SCHEMA_VERSIONS: Final = ("5", "6", "7")

# Ids and commits, written once: the models, the JSON Schemas generated from them and every
# check in code (``*_RE.fullmatch``, never ``match``: ``$`` also matches before a newline) use
# these. Lowercase only: ids become file names and commits URLs.
ID_HEX = "[0-9a-f]{16}"
ID_PATTERN = f"^{ID_HEX}$"
COMMIT_PATTERN = r"^[0-9a-f]{40}$"
#: Releases often record an abbreviated upstream commit (vLLM's _version.py: 'g4ba787ec9').
UPSTREAM_COMMIT_HEX = "[0-9a-f]{7,40}"
UPSTREAM_COMMIT_PATTERN = f"^{UPSTREAM_COMMIT_HEX}$"
#: A SHA-256 in hex (a curated draft's digest of the text its drafter wrote).
SHA256_PATTERN = r"^[0-9a-f]{64}$"
ID_RE = re.compile(ID_PATTERN)
ID_PREFIX_RE = re.compile(r"^[0-9a-f]{4,16}$")  # what `errcat show` takes for an id
COMMIT_RE = re.compile(COMMIT_PATTERN)
ABBREVIATED_COMMIT_RE = re.compile(r"^[0-9a-f]{4,39}$")  # what git reads as an abbreviated commit
UPSTREAM_COMMIT_RE = re.compile(UPSTREAM_COMMIT_PATTERN)

# A repository's identity, by GitHub's rules: an owner (user or organisation) is 1-39 letters,
# digits and hyphens, with no hyphen first, last or next to another; a name is 1-100 letters,
# digits, '.', '_' and '-', and not '.' or '..'. Identities become directories
# (<out>/<owner>/<name>/) and URLs, so nothing else passes, wherever one comes from. They end
# in (?![\s\S]), not $: Python's re (the jsonschema library's engine) lets $ match before a
# final newline, and "name\n" must fail there as it does in ECMA-262.
_END = r"(?![\s\S])"
_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}"
_NAME = rf"(?!\.\.?{_END})[A-Za-z0-9._-]{{1,100}}"
OWNER_PATTERN = rf"^{_OWNER}{_END}"
NAME_PATTERN = rf"^{_NAME}{_END}"
REPO_PATTERN = rf"^{_OWNER}/{_NAME}{_END}"
#: What a user may type for an entry: its id or the first 4 or more of its digits.
ID_PREFIX_PATTERN = r"^[0-9a-f]{4,16}$"
#: A link errcat writes into pages: https only, a lowercase host, and only characters that are
#: inert in an HTML attribute and a Markdown ``<...>`` link (no quotes, spaces, angle brackets).
URL_PATTERN = r"^https://[a-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%!$&()*+,;=:@/?#-]*)?" + _END
#: Where users reported an error: an issue, pull request or discussion of a repository, by
#: number (the record's validator and the evidence loader also hold it to the upstream's own
#: host, owner and name), with an optional comment anchor.
EVIDENCE_URL_PATTERN = (
    rf"^https://[a-z0-9.-]+(?::[0-9]{{1,5}})?/{_OWNER}/{_NAME}/(?:issues|pull|discussions)/[1-9][0-9]{{0,8}}"
    rf"(?:#[A-Za-z0-9_-]{{1,80}})?{_END}"
)
#: One line of text a person wrote about an error (an issue title, a pasted message): no control
#: characters, so it cannot reach a terminal or a CI log as a command.
LINE_PATTERN = r"^[^\x00-\x1f\x7f\x85\u2028\u2029]*" + _END

# The string types that carry those patterns. JSON Schema's ``pattern`` is a search, and in the
# reference validator's engine (Python's re, like Java's) ``$`` also matches before a final
# newline, so the pattern alone let "<40 hex digits>\n" through. Lengths close that for the
# fixed-length strings; where the length varies, "no newline" is said outright. Both stay in JSON
# Schema's interoperable regex subset: lookaround would read the same in Python and jsonschema-rs,
# but RE2-based validators refuse it and pydantic's own regex engine cannot compile it.
EntryId = Annotated[str, Field(pattern=ID_PATTERN, min_length=16, max_length=16)]
Commit = Annotated[str, Field(pattern=COMMIT_PATTERN, min_length=40, max_length=40)]
Sha256 = Annotated[str, Field(pattern=SHA256_PATTERN, min_length=64, max_length=64)]
ShortCommit = Annotated[str, Field(pattern=UPSTREAM_COMMIT_PATTERN, min_length=7, max_length=40, json_schema_extra={"not": {"pattern": r"\n"}})]

SiteKind = Literal["raise", "assert", "log", "response", "native"]
ExplanationStatus = Literal["curated", "draft", "absent"]


def identity_problem(owner: str, name: str) -> str | None:
    """Why ``owner/name`` is not a GitHub repository identity, or None when it is one."""
    if re.fullmatch(OWNER_PATTERN, owner) is None:
        return f"{owner!r} is not a GitHub owner (1-39 letters, digits and single hyphens, no hyphen first or last)"
    if re.fullmatch(NAME_PATTERN, name) is None:
        return f"{name!r} is not a GitHub repository name (1-100 letters, digits, '.', '_', '-'; not '.' or '..')"
    return None


def shown_source(prov: Mapping[str, Any]) -> tuple[str, str]:
    """What a page names a record's provenance or a manifest by, and its date in words: the
    upstream commit a release records, else the commit and ", committed <date>"; a dataset made
    from a released package that records no commit is named by its release (its commit is a
    digest of its files, never shown as one), with ", uploaded <time>" when the manifest knows it."""
    upstream = prov.get("upstream_commit")
    release = prov.get("release")
    source = str(prov.get("source") or "")
    if prov.get("commit_date") is None and (release is not None or source.startswith("pypi:")):
        spec = f"{release['package']}=={release['version']}" if isinstance(release, Mapping) else source.removeprefix("pypi:").split(" ", 1)[0]
        uploaded = release.get("uploaded") if isinstance(release, Mapping) else None
        named = f"{spec} (upstream commit {upstream})" if upstream else spec
        return named, f", uploaded {uploaded}" if uploaded else ""
    return str(upstream or prov["commit"]), f", committed {prov['commit_date']}"


def _full_match(pattern: str, what: str) -> Callable[[str], str]:
    # pydantic's own `pattern` runs Rust's regex engine, which has no look-ahead; the schema
    # carries the same pattern for every other validator.
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if compiled.fullmatch(value) is None:
            raise ValueError(f"{value!r} is not {what}")
        return value

    return check


Owner = Annotated[str, AfterValidator(_full_match(OWNER_PATTERN, "a GitHub owner")), Field(json_schema_extra={"pattern": OWNER_PATTERN})]
RepoName = Annotated[str, AfterValidator(_full_match(NAME_PATTERN, "a GitHub repository name")), Field(json_schema_extra={"pattern": NAME_PATTERN})]
RepoSlug = Annotated[str, AfterValidator(_full_match(REPO_PATTERN, "a GitHub OWNER/NAME")), Field(json_schema_extra={"pattern": REPO_PATTERN})]
Url = Annotated[str, AfterValidator(_full_match(URL_PATTERN, "an https link")), Field(json_schema_extra={"pattern": URL_PATTERN})]
EvidenceUrl = Annotated[
    str,
    AfterValidator(_full_match(EVIDENCE_URL_PATTERN, "an https link to an issue, pull request or discussion")),
    Field(json_schema_extra={"pattern": EVIDENCE_URL_PATTERN}),
]
Line = Annotated[str, AfterValidator(_full_match(LINE_PATTERN, "one line without control characters")), Field(json_schema_extra={"pattern": LINE_PATTERN})]


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
    form: str = Field(
        description="How the message is built in source: literal, fstring, percent, format, concat, variable, constant, join, keyword, helper, init, assembled, opaque, none."
    )
    opaque: bool = Field(default=False, description="True when the whole message is one unresolved field, or there is no message.")
    alternatives: list[str] = Field(
        default_factory=list,
        description="For form 'assembled': the pieces that may appear in the joined part (each a template text with {expr} fields, literal braces doubled); the pattern matches any of them, joined with the separator.",
    )


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


LogLevel = Literal["warning", "error", "exception", "critical"]


class LogInfo(Model):
    """What a site of kind ``log`` logs at: a warning or worse (info and below are no errors)."""

    level: LogLevel
    logger: str = Field(description="The logger expression as written, e.g. 'logger'.")
    once: bool = Field(default=False, description="Logged once per process (warning_once and the like).")


class ResponseInfo(Model):
    """What a site of kind ``response`` answers with: an HTTP error response built without raising."""

    status_code: int | None = Field(default=None, ge=100, le=599, description="The HTTP status, when static.")
    error_type: str | None = Field(default=None, description="The error type of the body (BadRequestError, NotFoundError), when static.")
    builder: str = Field(description="The call that builds the response, as configured: create_error_response, ErrorResponse, ...")
    builder_qualname: str = Field(
        description="The builder resolved through the module's imports (pkg.errors.create_error_response); the builder as configured when the module does not import it."
    )


class NativeInfo(Model):
    """A check in native code (kind ``native``): how it is written and what a user sees of it."""

    macro: str = Field(
        description="The check as written: TORCH_CHECK, STD_TORCH_CHECK, throw std::runtime_error, #[error] (a Rust error type's message), bail! ..."
    )
    language: Literal["cpp", "cuda", "rust"]
    surfaces_as: str = Field(
        description="The Python exception a user sees (RuntimeError for TORCH_CHECK, ValueError for TORCH_CHECK_VALUE, ...); for Rust, which runs in a process of its own, the error type whose text a user reads; for a macro that prints its message and ends the process (vLLM's CUDACHECK), exit or abort: no Python exception is raised."
    )


class Site(Model):
    """One place in the source where the error is raised (or logged, or answered)."""

    path: str
    line: int = Field(ge=1, description="Line of the raise/assert keyword.")
    end_line: int = Field(ge=1)
    module: str
    qualname: str = Field(description="Enclosing qualified name (Class.method), '<module>' at top level.")
    kind: SiteKind
    exception: str | None = Field(
        description="The exception as written at the site; null for a kind that raises none (log, response: see log.level, response.error_type)."
    )
    exception_qualname: str | None = Field(description="The exception resolved through the module's imports; null when exception is.")
    template: Template
    condition: str | None = Field(
        default=None,
        description="An assert with no message: its condition's source text, white space collapsed (what the entry is keyed by, see keyed_by); null otherwise.",
    )
    permalink: Url | None = Field(
        description="This line in the repository on GitHub; null when no revision of it can be named (provenance.permalinks says why)."
    )
    snippet: Snippet
    facts: Facts
    log: LogInfo | None = Field(default=None, description="Kind 'log': the level, logger and once-ness; null otherwise.")
    response: ResponseInfo | None = Field(default=None, description="Kind 'response': status code and error type; null otherwise.")
    native: NativeInfo | None = Field(default=None, description="Kind native only: the macro, language and the exception it surfaces as.")


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
    permalink: Url | None = Field(
        description="This line in the repository on GitHub; null when no revision of it can be named (provenance.permalinks says why)."
    )


class ExampleFix(Model):
    before: str = ""
    after: str = ""


class DefensivePattern(Model):
    strategy: str
    code: str = ""


class WhenItHappens(Model):
    trigger: str = ""
    common_situations: list[str] = Field(default_factory=list)


class Evidence(Model):
    """A public report of the error: shown as "reported in #N"."""

    url: EvidenceUrl = Field(description="The issue, pull request or discussion, on the upstream's own repository.")
    title: Line | None = Field(
        default=None, min_length=1, max_length=300, description="Its title as written there (null when not recorded: pages then cite the number alone)."
    )
    quote: Line | None = Field(default=None, min_length=1, max_length=500, description="The message as the reporter pasted it (short).")


class AcceptedDraft(Model):
    """A machine draft a reviewer read and accepted without editing it: reviewed, but not written by a person."""

    drafted_by: Literal["facts", "model"] = Field(
        description="facts: errcat's draft from the machine-derived facts (errcat curate draft); model: the model named in `model`."
    )
    model: Line | None = Field(default=None, min_length=1, max_length=200, description="The model that wrote the draft (only when drafted_by is model).")


class Explanation(Model):
    what_it_means: str = ""
    solutions: list[str] = Field(default_factory=list)
    example_fix: ExampleFix | None = None
    defensive_patterns: list[DefensivePattern] = Field(default_factory=list)
    prevention: list[str] = Field(default_factory=list)
    when_it_happens: WhenItHappens = Field(default_factory=WhenItHappens)
    evidence: list[Evidence] = Field(
        default_factory=list,
        description="Where users reported this error (reviewed human data, curated/<owner>/<name>/evidence.yaml), with or without a curated text.",
    )
    model: str | None = Field(
        default=None, description="Machine-written, not reviewed: the model that drafted this text (only while explanation_status is draft)."
    )
    stale_since: ShortCommit | None = Field(
        default=None,
        description="Reviewed at this commit for code whose message template or guards have changed since: the text may be out of date (only while explanation_status is draft).",
    )
    accepted_as_is: AcceptedDraft | None = Field(
        default=None,
        description="The text is a machine draft a reviewer accepted as is (errcat curate review --read-and-accept-as-is) and nobody has edited since; absent for text a person wrote or edited.",
    )

    @model_serializer(mode="wrap")
    def _omit_unused(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # absent rather than empty: an entry nobody reported and no model wrote serialises as
        # before these fields existed, so adding them rewrote no record
        out = handler(self)
        if not self.evidence:
            out.pop("evidence", None)
        if self.model is None:
            out.pop("model", None)
        if self.stale_since is None:
            out.pop("stale_since", None)
        if self.accepted_as_is is None:
            out.pop("accepted_as_is", None)
        return out


class Related(Model):
    id: EntryId
    title: str
    reason: str = Field(description="Why it is related: curated, same function, same class, same module, same package, shared terms.")


class RepoRef(Model):
    url: Url
    owner: Owner
    name: RepoName

    @property
    def host(self) -> str:
        return url_host(self.url)


def url_host(url: str) -> str:
    """The host (and port) of a URL that matched ``URL_PATTERN``."""
    return url.split("/", 3)[2]


def on_repository(url: str, repo: RepoRef) -> bool:
    """Whether an evidence link (``EVIDENCE_URL_PATTERN``) is on ``repo``'s own host, owner and
    name (GitHub's owner and names are case-insensitive)."""
    parts = url.split("/")
    return url_host(url) == repo.host and parts[3].lower() == repo.owner.lower() and parts[4].lower() == repo.name.lower()


def off_repository(repo: RepoRef, permalinks: Iterable[str | None], evidence: Iterable[str]) -> str | None:
    """Why a record's links (already of ``URL_PATTERN`` and ``EVIDENCE_URL_PATTERN``) leave its
    repository, or None: a record is read as a model or, where models cost too much, as data
    checked against the schema, and both hold it to this."""
    host = repo.host
    for url in permalinks:
        if url is not None and url_host(url) != host:
            return f"permalink {url!r} is not on the repository's host {host}"
    for url in evidence:
        if not on_repository(url, repo):
            return f"evidence {url!r} is not an issue, pull request or discussion of {repo.url}"
    return None


class Permalinked(Model):
    """The revision every permalink of a record names."""

    basis: Literal["commit", "tag"] = Field(
        description="commit: the crawled commit, or the upstream commit the release records; tag: the release's tag, named by the upstream's configured tag pattern."
    )
    rev: str = Field(min_length=1, description="The commit id (possibly abbreviated) or the tag.")


class NoPermalinks(Model):
    """A record whose permalinks are null: no revision of the repository is known to hold its files."""

    basis: Literal["none"]
    reason: str = Field(min_length=1, description="Why, e.g. the release records no upstream commit and no tag pattern is configured.")


Permalinks = Annotated[Permalinked | NoPermalinks, Field(discriminator="basis")]


class Provenance(Model):
    """Where the record's content comes from: the commit at which it last changed (a crawl that
    finds the record as it was in the previous dataset keeps it as it was, pinned there). The
    manifest names the commit crawled and the errcat that crawled it."""

    repo: RepoSlug = Field(description="owner/name")
    commit: Commit = Field(
        description="The commit at which this record's content last changed (its permalinks name the same code at the same lines there); the manifest names the crawled commit."
    )
    commit_date: str | None = Field(
        description="Committer date of the commit, ISO 8601; null when the files were read from a released package (source pypi:...), which dates no commit."
    )
    upstream_commit: ShortCommit | None = Field(
        default=None,
        description="The upstream commit the release records (vllm/_version.py; possibly abbreviated), when the crawled commit is not itself upstream's; permalinks use it. Pinned with commit.",
    )
    source: str = Field(description="Where the files were read from: git, or pypi:<name>==<version>.")
    permalinks: Permalinks


#: What a lifetime's or move's ``files`` says, written once for both.
_FILES = (
    "True when the commit is no commit but a digest of the release's files: the release was read from a package that "
    "records no commit (its manifest's release.commit is files), so a page shows the release alone and links nothing "
    "by it. Absent when false (a commit of the repository, or one the release records)."
)


class _OmitNoFiles(Model):
    """A lifetime or move: ``files`` is written only when true, so that every record of a
    repository's history (and of a release that records its commit) reads as in schema 6."""

    @model_serializer(mode="wrap")
    def _omit_no_files(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        out = handler(self)
        if not out.get("files"):
            out.pop("files", None)
        return out


class Lifetime(_OmitNoFiles):
    version: str | None = None
    commit: Commit
    files: bool = Field(default=False, description=_FILES)


class Move(_OmitNoFiles):
    """The error left the file it was raised in for another between two covered versions (a file
    renamed, the raise moved to another module). Lines shifting within a file are no move: a
    record changes only when its error does."""

    version: str | None = Field(default=None, description="The first covered version with the new path.")
    commit: Commit
    from_path: str = Field(description="The primary site's path before, where the error no longer is.")
    to_path: str = Field(description="Where it is raised now: the first of its sites, by path, in a file it was not raised in before.")
    files: bool = Field(default=False, description=_FILES)


class LinkReview(Model):
    """Who linked a retired entry to its successor by review, and on what reading (a curated
    lineage link): no word rule of ``diff`` links them, a person read both checks' code."""

    why: str = Field(min_length=1, max_length=2000, description="Why the successor raises the same error: what both checks test, in a reviewer's words.")
    reviewer: Line = Field(min_length=1, max_length=200, description="Who read both checks' code.")
    old_release: Line = Field(min_length=1, max_length=200, description="The release whose code the retired check was read in (e.g. 0.6.6.post1).")
    commit: ShortCommit = Field(description="The upstream commit the successor's check was read at.")


class _OmitNoReview(Model):
    """A history: ``replaced_by_review`` is written only when there is one, so that every record
    whose successor no review linked reads as in schema 7."""

    @model_serializer(mode="wrap")
    def _omit_no_review(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        out = handler(self)
        if out.get("replaced_by_review") is None:
            out.pop("replaced_by_review", None)
        return out


class History(_OmitNoReview):
    """When an entry was seen, over the versions a history run covered (``errcat history``/``sync``).

    Ids are never reused: an entry that goes away stays in the catalogue as a retired record
    (its last seen sites and text), and a reworded message gets a new id that points back here.
    """

    first_seen: Lifetime | None = Field(default=None, description="The earliest covered version that has this entry.")
    last_seen: Lifetime | None = Field(
        default=None,
        description="The latest covered version that has this entry; null while the entry is live (the manifest's commit has it), so that a record changes only when its error does. A live entry the newest crawl did not read (one of its files in the manifest's skipped) keeps the last version that had it.",
    )
    moved: list[Move] = Field(
        default_factory=list, description="Each time the file the entry was raised in lost it to another file, oldest first; line shifts are no move."
    )
    retired: bool = Field(default=False, description="True when the newest covered version no longer has this entry.")
    retired_note: str | None = Field(default=None, description="Human-readable, e.g. 'removed in v0.31.0'.")
    removed_in: Lifetime | None = Field(default=None, description="The first version without the entry, when retired.")
    replaces: list[EntryId] = Field(default_factory=list, description="Ids this entry succeeded: the same error reworded, or raised as another exception.")
    replaced_by: EntryId | None = Field(default=None, description="When retired: the id that succeeded it, if any.")
    replaced_by_review: LinkReview | None = Field(
        default=None,
        description="When ``replaced_by`` is a link made by review (a curated lineage link), not derived from the words: why, who, at what commit; absent otherwise.",
    )


# --------------------------------------------------------------------------- meaning (derived)

KnobKind = Literal["cli_flag", "config_field", "request_param", "env_var", "message_name"]


class Knob(Model):
    """A user-facing setting that leads to the error, read statically from the crawled commit."""

    kind: KnobKind = Field(
        description="cli_flag: a command-line option; config_field: a field of a config class; request_param: a parameter of a server request; env_var: an environment variable; message_name: a name the message itself quotes."
    )
    name: str = Field(min_length=1, description="How a user writes it: '--gpu-memory-utilization', 'backend_per_kind', 'temperature', 'VLLM_USE_V1'.")
    flags: list[str] = Field(default_factory=list, description="Command-line spellings that set it, aliases included (['--attention-config', '-ac']).")
    owner: str | None = Field(default=None, description="The class that declares it (a config class, a request model), when there is one.")
    field: str | None = Field(default=None, description="The field of ``owner`` (or of the option's value) the error is about.")
    path: str | None = Field(default=None, description="Where it is declared.")
    line: int | None = Field(default=None, ge=1)


class Reproduction(Model):
    """A test of the upstream's own that raises this error (pytest.raises / assertRaises)."""

    path: str
    line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    qualname: str = Field(description="The test function, e.g. 'test_invalid_kind' or 'TestConfig.test_kind'.")
    match: str | None = Field(default=None, description="The test's message pattern (match=, assertRaisesRegex), when it gives one.")
    permalink: Url | None = None
    code: str = Field(description="The test's code around the raises block.")


class Caller(Model):
    """A place in the repository that calls the function raising the error (static, by name and
    import resolution: an edge errcat cannot see is left out, never guessed)."""

    qualname: str
    path: str
    line: int = Field(ge=1)
    entry_point: str | None = Field(
        default=None, description="When the caller is a public entry point: cli, library (a public class such as LLM), route (a server endpoint)."
    )


Actor = Literal["setting", "request", "model", "environment", "caller", "internal"]


class Action(Model):
    """Whose move it is and what to do, derived from the record itself (``catalogue.actions``):
    the page opens with ``says``, then ``steps``. Never curated text: a page labels it derived."""

    actor: Actor = Field(
        description="Who must act: setting (a setting of the user's: an option, a config field, an environment variable), request (the request sent to the server or the arguments of a request object), model (the model or checkpoint loaded), environment (hardware, driver, platform, an installed package), caller (the user's code calling the library, or a plugin implementing one of its interfaces), internal (nobody outside the project: a state its code does not expect, likely a bug)."
    )
    basis: str = Field(
        min_length=1,
        description="What in the code the actor was read from, in words ('the setting `--max-model-len` leads to it', 'an assert with no user-facing setting').",
    )
    says: str = Field(min_length=1, description="The opening sentence, in the user's terms: whose move it is.")
    remedy: str | None = Field(
        default=None,
        description="The remedy the message itself gives ('Try increasing `gpu_memory_utilization` (`--gpu-memory-utilization`)'), settings it names resolved to their flags; null when it gives none.",
    )
    steps: list[str] = Field(
        default_factory=list, description="What to do, concretely, in order: the message's remedy, the fix direction on the setting, what to check or report."
    )


class Meaning(Model):
    """What the code itself says about the error: derived by errcat, never curated text."""

    derived: Literal["machine"] = "machine"
    trigger: str = Field(default="", description="When the error is raised, in words, from guards, loops, handlers and early returns, with knob names put in.")
    fix: str | None = Field(default=None, description="A fix direction: the guard negated and stated on the knob, when the guard gives one.")
    knobs: list[Knob] = Field(default_factory=list)
    reproductions: list[Reproduction] = Field(default_factory=list)
    callers: list[Caller] = Field(default_factory=list, description="Nearest first, up to public entry points.")
    action: Action | None = Field(
        default=None,
        description="Who must act and what to do (every record a crawl writes has one; null only in a record built before its meaning was joined).",
    )


class Record(Model):
    """One catalogue entry: a distinct error (same exception, same template) and all its sites."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    id: EntryId
    title: str
    repo: RepoRef
    kind: SiteKind
    keyed_by: KeyedBy = Field(
        description="What the id is keyed by: message, the template's literal text (with the exception); condition, the condition of an assert with no message (the primary site's condition, with its module); place, the module and function, for a raise or an assert whose message has no literal text."
    )
    exception: ExceptionInfo | None = Field(
        description="The exception a caller sees; null for a kind that raises none (log: see log.level; response: response.error_type and builder)."
    )
    log: LogInfo | None = Field(default=None, description="The primary site's log level and logger (kind 'log'); null otherwise.")
    response: ResponseInfo | None = Field(default=None, description="The primary site's status code and error type (kind 'response'); null otherwise.")
    native: NativeInfo | None = Field(default=None, description="Kind native only: the primary site's native facts.")
    message: Template
    location: Location
    sites: list[Site] = Field(
        min_length=1, description="Every place the error is raised; the first is the primary site (``location``), whose snippet and facts pages show."
    )
    explanation_status: ExplanationStatus = "absent"
    explanation: Explanation = Field(default_factory=Explanation)
    related: list[Related] = Field(default_factory=list)
    meaning: Meaning = Field(
        default_factory=Meaning,
        description="Derived from the code (labelled as such on pages): the setting, the trigger, a fix direction, reproductions, callers.",
    )
    history: History | None = None
    provenance: Provenance

    @property
    def exception_word(self) -> str:
        """What the entry raises, logs or answers with, as pages and diffs name it
        (``kinds.exception_word``): its exception's name, a log's level, a response's error type."""
        if self.kind == LOG and self.log is not None:
            return LEVEL_NAMES[self.log.level]
        if self.kind == RESPONSE and self.response is not None:
            return response_word(self.response.error_type)
        return self.exception.name if self.exception is not None else ""

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> Record:
        spec = KINDS[self.kind]
        if (self.exception is not None) != spec.raises:
            raise ValueError(f"a record of kind {self.kind} {'names' if spec.raises else 'names no'} exception")
        if self.keyed_by not in spec.keyed_by:
            raise ValueError(f"a record of kind {self.kind} is not keyed by {self.keyed_by}")
        return self

    @model_validator(mode="after")
    def _links_stay_on_the_repository(self) -> Record:
        why = off_repository(self.repo, (self.location.permalink, *(s.permalink for s in self.sites)), (ev.url for ev in self.explanation.evidence))
        if why:
            raise ValueError(why)
        return self


class IndexRow(Model):
    id: EntryId
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
    schema_version: SchemaVersion = SCHEMA_VERSION
    repo: RepoSlug
    commit: Commit
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
    omitted: int = Field(
        default=0,
        description="Entries a history left out so that no file of the dataset is larger than limits.max_output_bytes: retired ones first, the largest first (not counted in entries or retired). A crawl leaves out whole source files instead, listed in skipped.",
    )


class Limits(Model):
    """Bounds on what a crawl reads and writes, so that no upstream, however large or hostile,
    makes a dataset too large to publish. Set per crawl (options) or per upstream (errcat.toml)."""

    max_file_bytes: int = Field(default=2_000_000, ge=1, description="Source files larger than this are skipped, never read.")
    max_file_sites: int = Field(
        default=1_000, ge=1, description="A source file with more raise and assert sites than this is skipped: none of its sites are entries."
    )
    max_output_bytes: int = Field(
        default=50 * 1024 * 1024,
        ge=1,
        description="No file of the dataset is larger than this (GitHub warns above 50 MiB and refuses files above 100 MiB): the source files whose entries would make one larger are skipped, the largest share first.",
    )


#: A PEP 440 version as the package index spells a release (0.6.6.post1, 1.0rc2, 2!1.0+local).
RELEASE_VERSION_PATTERN = rf"^[0-9][0-9A-Za-z.!+_-]{{0,63}}{_END}"
#: A package's one spelling on the index (PEP 503: lowercase, runs of -_. as one hyphen).
PACKAGE_PATTERN = rf"^[a-z0-9](?:[a-z0-9-]{{0,98}}[a-z0-9])?{_END}"
#: An upload time as errcat writes it: ISO 8601 in UTC, to the second or finer.
UTC_TIME_PATTERN = rf"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}(?:\.[0-9]{{1,6}})?\+00:00{_END}"
#: A wheel's file name as an index serves it.
WHEEL_NAME_PATTERN = rf"^[A-Za-z0-9._+!-]{{1,251}}\.whl{_END}"
#: A source distribution's file name as an index serves it (the releases that have no wheel).
SDIST_NAME_PATTERN = rf"^[A-Za-z0-9._+!-]{{1,248}}\.tar\.gz{_END}"


ReleaseVersion = Annotated[
    str, AfterValidator(_full_match(RELEASE_VERSION_PATTERN, "a release version")), Field(json_schema_extra={"pattern": RELEASE_VERSION_PATTERN})
]
PackageName = Annotated[str, AfterValidator(_full_match(PACKAGE_PATTERN, "a normalized package name")), Field(json_schema_extra={"pattern": PACKAGE_PATTERN})]
UtcTime = Annotated[str, AfterValidator(_full_match(UTC_TIME_PATTERN, "an ISO 8601 time in UTC")), Field(json_schema_extra={"pattern": UTC_TIME_PATTERN})]
WheelName = Annotated[str, AfterValidator(_full_match(WHEEL_NAME_PATTERN, "a wheel's file name")), Field(json_schema_extra={"pattern": WHEEL_NAME_PATTERN})]
SdistName = Annotated[str, AfterValidator(_full_match(SDIST_NAME_PATTERN, "an sdist's file name")), Field(json_schema_extra={"pattern": SDIST_NAME_PATTERN})]


class Release(Model):
    """What a dataset made from a released package (``errcat crawl --pypi``) is: the release, when
    the package index says it was uploaded, and what the manifest's ``commit`` is. A wheel holds
    no git history: it names no commit date, and only the upstream commit the release records
    (vllm/_version.py) is a commit of the repository."""

    package: PackageName = Field(description="The package's name on the index, PEP 503 normalized (vllm).")
    version: ReleaseVersion = Field(description="The release's version as the index spells it (0.6.6.post1); histories order releases by it (PEP 440).")
    uploaded: UtcTime | None = Field(
        default=None,
        description="When the crawled wheel was uploaded, as the package index reports it (the JSON simple API's upload-time), ISO 8601 in UTC; null when the index reports none (a find-links directory, an index without PEP 700).",
    )
    wheel: WheelName | None = Field(default=None, description="The file name of the wheel the files were read from; null for a release read from its sdist.")
    sdist: SdistName | None = Field(
        default=None,
        description="The file name of the source distribution the files were read from, for a release "
        "that has no wheel (vLLM 0.0.1 to 0.1.3); read as an archive, never built or run. Null when a wheel was read.",
    )
    commit: Literal["recorded", "files"] = Field(
        description="What the manifest's commit is: recorded, the full upstream commit the release records; files, no commit at all but a SHA-1 "
        "over the wheel's selected paths and blob ids (the release records none, or only an abbreviated one: see upstream_commit), "
        "which keys the dataset and its caches and is never shown as a commit."
    )

    @model_serializer(mode="wrap")
    def _omit_the_other_file(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # the one file read is named, the other absent: a wheel's release reads as it did in schema 5
        out = handler(self)
        out.pop("sdist" if self.sdist is None else "wheel", None)
        return out

    @model_validator(mode="after")
    def _one_file(self) -> Release:
        if (self.wheel is None) == (self.sdist is None):
            raise ValueError("a release names the one file it was read from: a wheel or an sdist")
        return self


class Manifest(Model):
    schema_version: SchemaVersion = SCHEMA_VERSION
    errcat_version: str
    extractor_version: str
    repo: RepoRef
    commit: Commit = Field(description="The crawled commit; for a released package, see release.commit for what it is.")
    commit_date: str | None = Field(
        description="The crawled commit's committer date, ISO 8601; null for a released package (a wheel dates no commit: see release.uploaded)."
    )
    upstream_commit: ShortCommit | None = None
    ref: str | None = None
    release: Release | None = Field(default=None, description="The release a dataset made from a released package is of; absent for a dataset made from git.")
    source: str
    include: list[str]
    exclude: list[str]
    counts: Counts
    limits: Limits = Field(default_factory=Limits, description="The bounds the dataset was made under; what they left out is in skipped.")
    skipped: list[Skipped]
    curated_digest: str | None = None
    input_digest: str = Field(
        description="SHA-256 over everything the dataset is made from (versions, commit, selected blobs, curated files): a crawl whose inputs match leaves the dataset alone."
    )
    content_digest: str = Field(description="SHA-256 over every other file of the dataset (see publish.writer.content_digest).")


# --------------------------------------------------------------------------- curated files

CuratedStatus = Literal["draft", "reviewed", "retired"]


class ReviewedCode(Model):
    """Code of an earlier release that a curated text was read against and still holds for (``CuratedReview.also``)."""

    commit: ShortCommit = Field(description="The commit that code was reviewed at.")
    template: str = Field(description="The message template at that commit.")
    guards: list[str] = Field(default_factory=list, description="The guards leading to the raise at that commit.")


class CuratedReview(Model):
    """What a curated explanation was written for, so a check can tell when upstream moved on."""

    status: CuratedStatus = Field(
        description="draft: not yet checked against the code; reviewed: checked at `commit`; retired: the error is gone upstream, the text is kept."
    )
    commit: ShortCommit = Field(description="The commit the text was reviewed (or drafted) at.")
    exception: str = Field(min_length=1, description="Exception class name at that commit.")
    template: str = Field(description="The message template at that commit (Record.message.text).")
    guards: list[str] = Field(default_factory=list, description="The guards leading to the raise at that commit (the primary site's facts.guards).")
    path: str = Field(min_length=1, description="Primary site's file at that commit.")
    qualname: str = Field(min_length=1, description="Primary site's enclosing function at that commit.")
    note: str | None = Field(default=None, description="Free text, e.g. why an entry was retired.")
    model: Line | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The model that wrote a draft (errcat curate draft --llm); cleared by a review, kept by one that accepts the draft as is.",
    )
    drafted: Sha256 | None = Field(
        default=None,
        description="SHA-256 of the sections as errcat curate draft wrote them, taken in their words (white space and "
        "invisible characters aside; an older file's, of the exact strings): errcat curate review refuses a text "
        "that still hashes to it (no person rewrote it) unless told it was read and accepted as is; "
        "cleared by a review, kept by one that accepts the text as is (so an edit after it shows).",
    )
    accepted_as_is: Literal[True] | None = Field(
        default=None, description="A person read the drafter's text and accepted it unedited (errcat curate review --read-and-accept-as-is); absent otherwise."
    )
    also: list[ReviewedCode] | None = Field(
        default=None,
        max_length=16,
        description="Earlier code (an older release's template and guards) the same text was read against and still holds for "
        "(errcat curate review --still-holds-for-earlier): a crawl of that release gives it curated too, not stale; absent otherwise.",
    )


class CuratedFile(Model):
    """One curated explanation: ``curated/<owner>/<name>/<id>.yaml``. The sections of a catalogue
    page, a hand-picked see-also list, and review metadata."""

    id: EntryId = Field(description="The entry id; must equal the file name's stem.")
    what_it_means: str = Field(min_length=1)
    when_it_happens: WhenItHappens = Field(default_factory=WhenItHappens)
    solutions: list[str] = Field(default_factory=list)
    example_fix: ExampleFix | None = None
    defensive_patterns: list[DefensivePattern] = Field(default_factory=list)
    prevention: list[str] = Field(default_factory=list)
    related: list[EntryId] = Field(default_factory=list, description="Ids a curator links as see-also; listed before computed ones.")
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


# --------------------------------------------------------------------------- foreign errors

#: A foreign error's name (torch-cuda-oom): lowercase words joined by hyphens.
FOREIGN_NAME_PATTERN = rf"^[a-z0-9][a-z0-9-]{{0,63}}{_END}"
ForeignName = Annotated[
    str, AfterValidator(_full_match(FOREIGN_NAME_PATTERN, "a lowercase-hyphenated name")), Field(json_schema_extra={"pattern": FOREIGN_NAME_PATTERN})
]


class ForeignError(Model):
    """An error users meet running the crawled project that the project does not raise (torch,
    CUDA, transformers, ...): how to recognise it and what it usually means there."""

    name: ForeignName = Field(description="A short stable name, e.g. torch-cuda-oom.")
    origin: str = Field(min_length=1, max_length=64, description="Who raises it: torch, cuda, nccl, transformers, ...")
    match: list[Annotated[str, Field(min_length=4, max_length=200)]] = Field(
        min_length=1,
        max_length=8,
        description="Literal text, in order: a paste holding every piece, in this order, shows this error. Never a regular expression.",
    )
    example: str = Field(min_length=1, max_length=2000, description="A message as users paste it.")
    urls: list[Url] = Field(default_factory=list, description="Issues where users reported it.")
    explanation: str = Field(min_length=1, max_length=4000, description="What it usually means for the crawled project.")
    check: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(default_factory=list, description="What to check in the project's settings.")


class EvidenceFile(RootModel[dict[EntryId, Annotated[list[Evidence], Field(min_length=1, max_length=50)]]]):
    """``curated/<owner>/<name>/evidence.yaml``: entry id -> the public reports of that error."""

    # patternProperties alone lets any other key through in a schema validator
    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})


class ForeignList(Model):
    """``curated/<owner>/<name>/foreign/errors.yaml`` and the dataset's ``foreign.json``."""

    errors: list[ForeignError] = Field(max_length=1000)

    @model_validator(mode="after")
    def _names_unique(self) -> ForeignList:
        names = [e.name for e in self.errors]
        if len(set(names)) != len(names):
            raise ValueError(f"names must be unique: {sorted({n for n in names if names.count(n) > 1})}")
        return self


class CuratedLink(Model):
    """One reviewed lineage link: the retired entry ``old`` is succeeded by ``new``."""

    old: EntryId = Field(description="The retired entry (an id of a history catalogue).")
    new: EntryId = Field(description="The entry that raises its error now (or raised it after it: a chain is followed to today).")
    review: LinkReview


class CuratedLinks(Model):
    """``curated/<owner>/<name>/lineage/links.yaml``: successors no word rule can find (a check
    worded anew, such as a V0-engine check and the V1 check that took its place), each read by a
    person in both releases' code. A history, fold or sync writes each as the retired record's
    ``history.replaced_by`` (with ``replaced_by_review``) and the successor's ``history.replaces``;
    ``errcat curate check`` refuses a link whose ids are unknown, whose old entry is live, or
    that makes a cycle."""

    links: list[CuratedLink] = Field(max_length=10_000)

    @model_validator(mode="after")
    def _one_successor_each(self) -> CuratedLinks:
        olds = [link.old for link in self.links]
        if len(set(olds)) != len(olds):
            raise ValueError(f"an entry has one successor: {sorted({o for o in olds if olds.count(o) > 1})[0]} is linked twice")
        same = [link.old for link in self.links if link.old == link.new]
        if same:
            raise ValueError(f"{same[0]} is linked to itself")
        return self


# --------------------------------------------------------------------------- errcat match --json


class MatchReading(Model):
    source: Literal["plain", "traceback", "pydantic", "json", "line", "raise", "log"] = Field(
        description="Where the message was read: the whole text, a traceback's end, a pydantic listing, a JSON error body, "
        "one exception line of a paste, the string literals of the raise a cut traceback ends at, or a log line at "
        "WARNING or above (its exception: the level)."
    )
    exception: str | None = Field(description="The exception class the input names, if any.")
    message: str


class MatchField(Model):
    expr: str
    value: str | None = Field(description="The field's value in the message; null when unknown (the message was cut before it ended).")


class _MatchEntry(Model):
    id: EntryId
    dataset: str = Field(description="The dataset directory the entry is from.")
    title: str
    exception: str
    template: str
    path: str = Field(description="The primary site's file.")
    line: int


class LineageReleases(Model):
    """The covered releases that raised an entry (``consume.lineage.Releases``)."""

    first: str | None = Field(description="The first covered release with the entry.")
    last: str | None = Field(description="The last one, when retired; null while live (to the catalogue's newest).")
    retired: bool
    removed_in: str | None = Field(description="The first covered release without it, when retired.")


class LineageMove(Model):
    from_path: str
    to_path: str
    version: str | None


class LineageSuccessor(Model):
    """An entry that succeeded the matched one (``history.replaced_by``, followed in order)."""

    id: EntryId
    exception: str
    template: str
    how: Literal["reworded", "reworded elsewhere", "raised as another exception", "linked by review"] = Field(
        description="'reworded': in the same function; 'reworded elsewhere': a like message raised in another function, a twin a history linked (the check moved to another file or engine); "
        "'linked by review': a person read both checks and linked them (a curated lineage link: the check was worded anew), not derived."
    )
    retired: bool
    raised_in: str | None = Field(description="Its releases as text ('since v0.33.0', 'v0.32.0 to v0.32.1').")


class MatchLineage(Model):
    """What a history catalogue's record says of a matched entry: which releases raised it, where
    it moved, and the entries that succeeded it down to the one raising the error today."""

    raised_in: str | None = Field(description="'v0.32.0', 'v0.32.0 to v0.32.5' (retired), 'since v0.32.0' (live); null when its history names no release.")
    releases: LineageReleases | None
    retired: bool
    moved: list[LineageMove]
    succeeded_by: list[LineageSuccessor] = Field(description="Successors in order; the last is what raises the error today when it is live.")
    today: EntryId | None = Field(description="The live entry that raises this error today (this one when live); null when the whole chain is retired.")


class MatchedEntry(_MatchEntry):
    """An entry that fits the message (``strength`` says whether it is a match or only weak)."""

    match: Literal["full", "prefix"] = Field(description="full: the whole message fits; prefix: the message is the start of one (cut).")
    coverage: float = Field(ge=0, description="Share of the message that is the entry's literal text.")
    exception_match: Literal["none", "ancestor", "same"]
    site_match: bool
    tied: bool
    strength: Literal["match", "weak"] = Field(description="match: enough literal support (support >= 0.5 and an anchor word); weak: never a claim.")
    support: float = Field(ge=0, description="Share of the message covered by literal text, each field's value counted as at most 16 characters.")
    role: Literal["root cause", "umbrella"] | None = Field(
        description="When the paste holds an umbrella error (one pointing at a root cause logged before it) and another: which is which."
    )
    fields: list[MatchField]
    reading: MatchReading
    raised_by_release: bool | None = Field(
        default=None, description="Whether the release the answer prefers (query.version) raised this entry, when its history says; absent otherwise."
    )
    lineage: MatchLineage | None = Field(default=None, description="Absent when the entry's record has no history (a crawl of one commit).")


class NearEntry(_MatchEntry):
    """An entry worded like the message without fitting it."""

    similarity: float = Field(ge=0, le=1)


class ForeignMatch(Model):
    """An error the paste holds that the catalogued project does not raise."""

    name: ForeignName
    origin: str
    explanation: str
    check: list[str]
    urls: list[Url]
    message: str = Field(description="The reading it was found in; empty when only the whole paste holds it.")
    project: RepoSlug = Field(description="The project that does not raise it.")


class MatchQuery(Model):
    message: str
    exception: str | None
    source: str
    version: str | None = Field(default=None, description="The release whose entries come first: --version, or the one release the paste names.")
    version_from: Literal["option", "paste"] | None = Field(default=None, description="Where version came from.")


class MatchResult(Model):
    """``errcat match --json``."""

    query: MatchQuery
    matches: list[MatchedEntry] = Field(description="Matches only (strength 'match'), best first; root causes before umbrellas.")
    nearest: list[NearEntry] = Field(description="Entries worded like the message, when nothing matches it.")
    weak: list[MatchedEntry | NearEntry] = Field(description="Weak candidates and near entries, best first: never a match.")
    foreign: list[ForeignMatch] = Field(description="Errors of other projects (torch, CUDA, ...) the paste holds.")
