"""How a page names an entry's kind (for a native check, what it is and what it surfaces as), and
what it says of an entry that is not a raise: how it is logged or answered, and the pieces an
assembled message is made of. One reading for the terminal, HTML and Markdown pages."""

from __future__ import annotations

from typing import Any

from crawler.model.kinds import KINDS, NATIVE, RAISE
from crawler.model.shapes import UNKNOWN_EXCEPTION_QUALNAME

LANGUAGES = {"cpp": "C++", "cuda": "CUDA", "rust": "Rust"}
#: What a native check that prints and ends the process surfaces as (``extract.native.EXIT_SURFACES``).
ENDS = frozenset({"exit", "abort"})


def kind_text(kind: str, native: dict[str, Any] | None) -> str:
    """``native: TORCH_CHECK in CUDA code, seen in Python as RuntimeError`` (a Rust error: its type,
    which is what its text is printed as; where it goes next depends on the upstream's design, so
    nothing here says; a macro that prints and exits: that); any other kind as it is."""
    if kind != NATIVE or not native:
        return kind
    language = LANGUAGES.get(native["language"], native["language"])
    if native["language"] == "rust":
        return f"native: {native['macro']} in Rust code, its error type {native['surfaces_as']}"
    if native["surfaces_as"] in ENDS:
        return f"native: {native['macro']} in {language} code, prints the message and ends the process ({native['surfaces_as']}), no Python exception"
    return f"native: {native['macro']} in {language} code, seen in Python as {native['surfaces_as']}"


#: What the commit a record names is: the one since which it reads as shown (a first crawl's own
#: commit, or the earlier one a record kept from the dataset in place is pinned at), not the
#: commit at which the error last changed in the upstream, which a crawl does not know.
SINCE = "the commit since which this entry is as shown"


_VOWELS = tuple("AEIOaeio")


def article(name: str) -> str:
    """``a`` or ``an`` before an exception's name as it is read aloud: an Exception, an OSError,
    a UnicodeError, a ValueError."""
    return "an" if name.startswith(_VOWELS) or name.startswith("U") and not name.startswith("Uni") else "a"


def shows_exception(record: dict[str, Any]) -> bool:
    """Whether a page names the entry's exception: not for a logged message, an error response or a
    native check that ends the process, which reach no caller as an exception (their record's
    ``exception`` is null, or for a native check the libc call, which the Kind and Logged/Answered
    rows already say; "Exception: logging.WARNING" read as something raised)."""
    kind = str(record.get("kind"))
    native = record.get("native") or {}
    return KINDS[kind].raises and not (kind == NATIVE and native.get("surfaces_as") in ENDS)


#: What a page says for the exception of a raise whose class the code does not show
#: (``extract.raised``): said in words, never the variable or function the code raises.
UNKNOWN_EXCEPTION_TEXT = "not known (the code raises a value and does not show its one class; see the source)"


def unknown_exception(record: dict[str, Any]) -> str | None:
    """For a raise of a value whose class errcat could not read, what a page says in place of a
    class; None for any other entry."""
    unknown = record.get("kind") == RAISE and record["exception"]["qualname"] == UNKNOWN_EXCEPTION_QUALNAME
    return UNKNOWN_EXCEPTION_TEXT if unknown else None


def trigger_label(record: dict[str, Any]) -> str:
    """The label of the derived trigger sentence, by what the entry does."""
    spec = KINDS[str(record.get("kind"))]
    if spec.raises and not shows_exception(record):
        return "When it happens"
    return spec.trigger_label


def explained_note(explanation: dict[str, Any]) -> str:
    """What a page adds to ``Explained: draft`` when the text was reviewed for code that has
    changed since (without it, a reader takes the old guards the text names for today's), and to
    either status when the text is a machine draft a reviewer accepted as is (not a person's text)."""
    since = explanation.get("stale_since")
    stale = f" (reviewed at {since} for code that has changed since: it may be out of date)" if since else ""
    return stale + accepted_note(explanation)


def accepted_note(explanation: dict[str, Any]) -> str:
    accepted = explanation.get("accepted_as_is")
    if not accepted:
        return ""
    who = f"the model {accepted['model']}" if accepted.get("model") else "errcat from the code's facts"
    return f" (drafted by {who}, accepted as is by a reviewer: not written by a person)"


def surface_rows(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) rows from a record as plain data; the texts came from a crawled repository
    and are escaped by each page for its own sink."""
    rows: list[tuple[str, str]] = []
    log = record.get("log")
    if log:
        once = " (once per process)" if log.get("once") else ""
        rows.append(("Logged", f"at {log['level'].upper()} by {log['logger']}{once}"))
    response = record.get("response")
    if response:
        status = response.get("status_code")
        etype = response.get("error_type")
        said = " ".join(x for x in (f"HTTP {status}" if status is not None else "HTTP status set at run time", etype or "(error type set at run time)"))
        rows.append(("Answered", f"{said}, built by {response['builder']}"))
    alternatives = (record.get("message") or {}).get("alternatives") or []
    for alt in alternatives:
        rows.append(("Piece", alt))
    return rows
