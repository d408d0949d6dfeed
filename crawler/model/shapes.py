"""The plain-data shapes that flow between the stages on the hot path, as TypedDicts.

A crawl of vLLM makes ~100k nested objects; pydantic would validate each one for nothing, since
every record is checked against the schema generated from ``records`` before it is written. So the
stages pass dicts, and these types say what is in them: extraction's per-file result and its sites
(``FileResult``, ``ExtractedSite``), and the records the catalogue builds and the writer renders
(``RecordData`` and its parts). Every shape named after a model holds exactly that model's fields
(tests/model/test_shapes.py): a field added to a model fails the test until it is added here.

The parts of a record that later joins fill in (explanation, meaning, related, history) stay
``dict[str, Any]`` here: the catalogue's joins build and merge them as plain data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

if TYPE_CHECKING:  # the extraction workers import these shapes, and need no pydantic
    from crawler.model.records import LogLevel, Record, SiteKind


class TemplateFieldData(TypedDict):
    expr: str
    name: str | None


class TemplateData(TypedDict):
    text: str
    fields: list[TemplateFieldData]
    pattern: str
    form: str
    opaque: bool
    alternatives: list[str]


class SnippetData(TypedDict):
    start_line: int
    end_line: int
    code: str


class FactsData(TypedDict):
    derived: Literal["machine"]
    guards: list[str]
    loops: list[str]
    handler: str | None
    cause: str | None
    reraise: bool
    decorators: list[str]
    docstring: str | None


class LogInfoData(TypedDict):
    level: LogLevel
    logger: str
    once: bool


class ExtractedResponseData(TypedDict):
    """A response site's facts as extraction reads them: the builder's resolved name is the
    site's ``exception_qualname`` until the record takes it (``catalogue.entries``)."""

    status_code: int | None
    error_type: str | None
    builder: str


class ResponseInfoData(ExtractedResponseData):
    builder_qualname: str


class NativeInfoData(TypedDict):
    macro: str
    #: one of records.NativeInfo's languages (the schema check on write holds it to them)
    language: str
    surfaces_as: str


class _SiteCore(TypedDict):
    """What a site is from extraction on (``ExtractedSite``) to the record (``SiteData``)."""

    path: str
    line: int
    end_line: int
    module: str
    qualname: str
    kind: SiteKind
    template: TemplateData
    snippet: SnippetData
    #: (the catalogue still fills in ``records.Facts``' defaults, for a site made by hand)
    facts: FactsData


class SiteData(_SiteCore):
    """A record's site (``records.Site``)."""

    exception: str | None
    exception_qualname: str | None
    condition: str | None
    permalink: str | None
    log: LogInfoData | None
    response: ResponseInfoData | None
    native: NativeInfoData | None


#: A raise of a value (``raise err``, ``raise make()``) whose class the code does not show: the
#: site's ``exception_qualname`` is empty and the entry's exception is named so, a name no class
#: can have, never the variable's (``crawler.extract.raised``).
UNKNOWN_EXCEPTION_QUALNAME = ""
UNKNOWN_EXCEPTION_NAME = "(unknown)"


class ExceptionData(TypedDict):
    name: str
    qualname: str
    builtin_ancestor: str | None
    bases: list[str]


class LocationData(TypedDict):
    path: str
    line: int
    end_line: int
    qualname: str
    permalink: str | None


class RepoData(TypedDict):
    url: str
    owner: str
    name: str


class ProvenanceData(TypedDict):
    repo: str
    commit: str
    commit_date: str | None
    upstream_commit: str | None
    source: str
    #: ``records.Permalinked`` or ``records.NoPermalinks`` as data
    permalinks: dict[str, str]


class RecordData(TypedDict):
    """A record as the catalogue builds it and the writer renders it (``records.Record``)."""

    schema_version: str
    id: str
    title: str
    repo: RepoData
    kind: SiteKind
    keyed_by: str
    exception: ExceptionData | None
    log: LogInfoData | None
    response: ResponseInfoData | None
    native: NativeInfoData | None
    message: TemplateData
    location: LocationData
    sites: list[SiteData]
    explanation_status: str
    explanation: dict[str, Any]
    related: list[dict[str, Any]]
    meaning: dict[str, Any]
    history: dict[str, Any] | None
    provenance: ProvenanceData


# ---------------------------------------------------------------------------------------------
# extraction's output: no model of its own (the catalogue makes records of it)


class ExtractedSite(_SiteCore):
    """A site as extraction makes it: a record's site less its permalink (the catalogue names the
    revision), with what only the later stages read."""

    #: what the site raises, as written and resolved; a log's level and a response's error type
    #: too (a record's site names them in log and response instead: ``catalogue.entries``)
    exception: str
    exception_qualname: str
    #: an assert with no message: its condition, normalized (``records.Site.condition``)
    condition: NotRequired[str]
    log: NotRequired[LogInfoData | None]
    response: NotRequired[ExtractedResponseData | None]
    native: NotRequired[NativeInfoData | None]
    #: a native check's title template: its message less what the macro puts before every message
    title_template: NotRequired[TemplateData]
    #: ``extract.derive``'s facts of the template (entry key, search tokens), stamped
    _derived: NotRequired[dict[str, Any]]
    #: what the check's own condition reads, by source (``extract.guard_reads``)
    _reads: NotRequired[dict[str, list[str]]]


class FileResult(TypedDict):
    """One file's extraction result (``extract.visitor``, ``extract.native``; test files
    ``extract.codefacts.read_test_file``), as the runner returns and caches it."""

    path: str
    module: str
    #: "over_limit": more sites than ``max_file_sites`` (``extract.limit``): no sites, its classes kept
    status: Literal["ok", "skipped", "over_limit"]
    reason: str | None
    sites: list[ExtractedSite]
    classes: list[dict[str, Any]]
    bare_asserts: int
    reraises: int
    calls: list[dict[str, Any]]
    #: the knobs the file declares (``extract.knobs``); not in a test file's result
    declarations: NotRequired[dict[str, Any]]
    #: the file's facts for the callers join (``extract.codefacts.graph_facts``)
    graph: NotRequired[dict[str, Any]]
    #: what the file's functions return as messages, and its sites that take what an imported
    #: function returns (``extract.cross_module_facts``; the join: ``catalogue.cross_module_join``)
    exports: NotRequired[dict[str, Any]]
    imported: NotRequired[list[dict[str, Any]]]
    #: a native file's language and whether its parse had errors
    native: NotRequired[dict[str, Any]]
    #: a test file's raises blocks
    tests: NotRequired[list[dict[str, Any]]]
    #: this machine could not decide (a timeout, a dead worker): never cached, the dataset provisional
    transient: NotRequired[bool]


def record_data(record: Record) -> RecordData:
    """A validated record as the plain data the stages pass (what the catalogue builds): pydantic's
    dump is a ``dict[str, Any]`` to a type checker, and ``RecordData`` holds exactly ``Record``'s
    fields (tests/model/test_shapes.py)."""
    return cast("RecordData", record.model_dump(mode="json"))
