"""The site kinds: one spec per kind, which every stage reads.

A site is a raise, an assert, a logged warning or error, an HTTP error response built without
raising, or a check in native code. What differs between them (whether the record names an
exception, which field of a record holds the kind's own facts, how a sentence, a diff or a page
says what the entry does, how a match ranks it, whether its id is kept apart from a raise of the
same words) is written here once. A consumer builds its tables from :data:`KINDS`; a test
(tests/model/test_kinds.py) fails when a consumer spells a kind that is not registered, or
leaves one out.

Adding a kind: add its spec here, give ``SiteKind`` (``records``) the name, regenerate the
schemas, then run the test: it lists the tables that do not cover the new kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

#: The kinds' names, for comparisons in code (``kind == LOG``): a name spelled here only.
RAISE: Final = "raise"
ASSERT: Final = "assert"
LOG: Final = "log"
RESPONSE: Final = "response"
NATIVE: Final = "native"

#: What an entry is keyed by (``Record.keyed_by``): its message template's literal text; the
#: condition of an assert that has no message; the place (module and function) of a raise or an
#: assert whose message has no literal text.
KeyedBy = Literal["message", "condition", "place"]


@dataclass(frozen=True)
class KindSpec:
    """What one site kind is, for every stage that treats kinds differently."""

    name: str
    #: What the front page calls entries of the kind, in a list ("raised exceptions").
    label: str
    #: Whether a record of the kind names an exception a caller can catch (``Record.exception``):
    #: a log line and an error response reach no caller as one, and their ``exception`` is null.
    raises: bool
    #: The field of a record (and of its sites) that holds the kind's own facts, or None.
    info: str | None
    #: The trigger sentence's verb for an entry that is not raised ("Logged ..."), else None.
    verb: str | None
    #: A related entry's call-path label ("logged by a caller"), else None (raised).
    done: str | None
    #: Among matches alike in every other way, the lower goes last (a bare message pasted is most
    #: often an exception's: logs carry a level prefix).
    match_rank: int
    #: What a diff calls a change of the entry's exception word (a log's level, a response's answer).
    changed: str
    #: How the Markdown diff says what the entry was before ("was logged at ``WARNING``").
    was: str
    #: A different id from a raise of the same words and the same exception word: a kind whose
    #: exception word is no class (a level, an error type) adds its name to the entry's key.
    keyed_apart: bool
    #: The page's label of the derived trigger sentence.
    trigger_label: str
    #: What an entry of the kind may be keyed by (``KeyedBy``).
    keyed_by: tuple[str, ...]
    #: Whether the site index names the kind (``k``, the search box's kind); a raise is not named.
    #: An assert is: the box tells a raise from an assert by a frame's code line (``assert ...``
    #: is no raise's: ``match._condition_said``).
    box_kind: bool


KINDS: Final[Mapping[str, KindSpec]] = {
    spec.name: spec
    for spec in (
        KindSpec(
            RAISE,
            "raised exceptions",
            raises=True,
            info=None,
            verb=None,
            done=None,
            match_rank=2,
            changed="exception changed",
            was="was {was}",
            keyed_apart=False,
            trigger_label="When it is raised",
            keyed_by=("message", "place"),
            box_kind=False,
        ),
        KindSpec(
            ASSERT,
            "assertions",
            raises=True,
            info=None,
            verb=None,
            done=None,
            match_rank=2,
            changed="exception changed",
            was="was {was}",
            keyed_apart=False,
            trigger_label="When it is raised",
            keyed_by=("message", "condition", "place"),
            box_kind=True,
        ),
        KindSpec(
            LOG,
            "logged warnings and errors",
            raises=False,
            info="log",
            verb="Logged",
            done="logged",
            match_rank=0,
            changed="log level changed",
            was="was logged at {was}",
            keyed_apart=True,
            trigger_label="When it is logged",
            keyed_by=("message",),
            box_kind=True,
        ),
        KindSpec(
            RESPONSE,
            "HTTP error responses",
            raises=False,
            info="response",
            verb="Answered",
            done="answered",
            match_rank=1,
            changed="error response changed",
            was="answered {was} before",
            keyed_apart=True,
            trigger_label="When it is answered",
            keyed_by=("message",),
            box_kind=True,
        ),
        KindSpec(
            NATIVE,
            "checks in native code (C++/CUDA, Rust)",
            raises=True,
            info="native",
            verb=None,
            done=None,
            match_rank=2,
            changed="exception changed",
            was="was {was}",
            keyed_apart=False,
            trigger_label="When it is raised",
            keyed_by=("message", "place"),
            box_kind=True,
        ),
    )
}

#: The kinds whose records hold a field of their own facts: the fields' names.
INFO_FIELDS: Final = tuple(spec.info for spec in KINDS.values() if spec.info is not None)


def spec(kind: str) -> KindSpec:
    """The spec of ``kind``; a KeyError names a kind no spec is registered for."""
    return KINDS[kind]


# --------------------------------------------------------------------------- exception words

#: How Python's logging names each level errcat reads (``LogInfo.level``): what a log line shows.
LEVEL_NAMES: Final[Mapping[str, str]] = {"warning": "WARNING", "error": "ERROR", "exception": "ERROR", "critical": "CRITICAL"}
#: What an error response is called when its error type is not one static name.
RESPONSE_WORD: Final = "ErrorResponse"
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def response_word(error_type: str | None) -> str:
    """The word an error response is named by: its error type when that is one name of at most
    100 characters (``BadRequestError``), else ``ErrorResponse``."""
    if error_type and len(error_type) <= 100 and not error_type[0].isdigit() and set(error_type) <= _NAME_CHARS:
        return error_type
    return RESPONSE_WORD


def exception_word(record: Mapping[str, Any]) -> str:
    """The word a record (or a site, as plain data) raises, logs or answers with, as pages,
    diffs, the index and the matcher show it: its exception's name; a log's level (``WARNING``);
    an error response's error type. Schema 5 held this word in ``exception`` for every kind."""
    kind = record.get("kind")
    if kind == LOG:
        return LEVEL_NAMES[record["log"]["level"]]
    if kind == RESPONSE:
        return response_word(record["response"].get("error_type"))
    exception = record["exception"]
    return exception if isinstance(exception, str) else str(exception["name"])


def exception_qualname(record: Mapping[str, Any]) -> str:
    """The qualified counterpart of :func:`exception_word`: a log's ``logging.WARNING``, a
    response's builder as resolved through its module's imports."""
    kind = record.get("kind")
    if kind == LOG:
        return f"logging.{LEVEL_NAMES[record['log']['level']]}"
    if kind == RESPONSE:
        return str(record["response"]["builder_qualname"])
    exception = record["exception"]
    return str(exception["qualname"]) if isinstance(exception, Mapping) else str(record["exception_qualname"])


def read_exception_word(data: Any) -> str | None:
    """:func:`exception_word` of a record read as JSON that no schema has checked (a page reading
    another record's file): None when it does not hold the fields the word is read from."""
    if not isinstance(data, Mapping):
        return None
    kind, exception = data.get("kind"), data.get("exception")
    if isinstance(exception, Mapping):  # (schema 5: every kind's word, a log's level too)
        name = exception.get("name")
        return name if isinstance(name, str) else None
    if kind == LOG and isinstance(data.get("log"), Mapping):
        return LEVEL_NAMES.get(str(data["log"].get("level")))
    if kind == RESPONSE and isinstance(data.get("response"), Mapping):
        error_type = data["response"].get("error_type")
        return response_word(error_type if isinstance(error_type, str) else None)
    return None
