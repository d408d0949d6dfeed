"""What every page says of an entry's history (``Record.history``): one reading, three writers.

The HTML page, the Markdown page (``site.py``) and the terminal page (``page.py``) each write
the rows below their own way, escaping every text there: the rows hold the dataset's strings
as they are. The record is read as JSON data; keys this module does not know (a later schema's)
are shown by their own name, generically, so that no page drops what a record says.

A replacement says how (``diff.link`` pairs an error with its successor two ways: the
message reworded in the same function, or the same error raised as another exception; a
history also links a retired entry to its live twin elsewhere, ``diff.twins``: "a like message
raised elsewhere", with where; a reviewer may link one by hand, ``lineage_links``: "linked by review") when the page has the other record at hand (``others``: the site has every record, ``errcat show`` reads it), and that it
was one of the two when not. A retirement is said once: the "Removed in" row, with a note above
it only when the note says more than that row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crawler.model.kinds import read_exception_word

#: A piece of a row: ("code", text), ("entry", id), ("arrow", "") or ("text", text).
Piece = tuple[str, str]
Row = tuple[str, list[Piece]]

TITLE = "History"
#: Keys read into the rows below; any other is shown by its name.
_KNOWN = {"first_seen", "last_seen", "moved", "retired", "retired_note", "removed_in", "replaces", "replaced_by", "replaced_by_review"}
#: The row naming the entry that raises a retired entry's error today, when it is not the one it names as "Replaced by".
TODAY = "Raised today by"


def when(lifetime: Any, digests: frozenset[str] = frozenset()) -> list[Piece]:
    """A version and its commit (``v0.31.0 (4ba787ec9a1b)``), the commit alone when the version is
    unknown, the version alone when its commit is no commit: a wheel that records none, whose
    dataset is keyed by a digest of its files (``Release.commit`` "files"). ``digests``: the
    commits the page knows to be such digests; a lifetime may say so itself (``"files": true``)."""
    if isinstance(lifetime, dict) and lifetime.get("commit"):
        if lifetime.get("version") and (lifetime.get("files") is True or lifetime["commit"] in digests):
            return [("code", str(lifetime["version"]))]
        commit = [("code", str(lifetime["commit"])[:12])]
        return [("code", str(lifetime["version"])), ("text", " ("), *commit, ("text", ")")] if lifetime.get("version") else commit
    return [("text", "unknown" if lifetime in (None, "", [], {}) else _plain(lifetime))]


def _plain(value: Any) -> str:
    """Any other value, as text (a later schema's history key)."""
    if isinstance(value, list):
        return ", ".join(_plain(x) for x in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    return "yes" if value is True else str(value)


#: Another record, as JSON data, by id: those a page can read (the site's, ``errcat show``'s dataset).
Others = Mapping[str, Mapping[str, Any]]


def _exception(record: Mapping[str, Any] | None) -> str | None:
    return read_exception_word(record) or None


def _message(record: Mapping[str, Any] | None) -> str | None:
    """The other record's message as its own page shows it (``meaning_page.message_text``)."""
    from crawler.consume.meaning_page import message_text

    message = (record or {}).get("message")
    return message_text(message) if isinstance(message, dict) and isinstance(message.get("text"), str) else None


def _how(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, shown: Mapping[str, Any] | None) -> list[Piece]:
    """How ``new`` succeeded ``old``, with what ``shown`` (the other one, not this page's) said."""
    from crawler.consume.lineage import reviewed

    review = reviewed(old) if old is not None else None
    if review is not None:
        return _by_review(review, new, shown)
    before, after = _exception(old), _exception(new)
    if before is None or after is None:
        return [("text", "reworded or raised as another exception")]
    if before != after:
        return [("text", "raised as "), ("code", after), ("text", " instead of "), ("code", before)]
    text = _message(shown)
    if text and "\n" in text.strip("\n"):  # a row is one line: the message's first, the rest elided
        text = text.strip("\n").split("\n", 1)[0] + " …"
    said = [("text", ", now " if shown is new else ", was "), ("code", text)] if text else []
    place = _elsewhere(old, new, shown)
    if place is not None:
        # a twin (``diff.twins``): a like message in another function, not this one reworded
        return [("text", "a like message raised elsewhere, in "), ("code", place), *said]
    return [("text", "reworded"), *said]


def _by_review(review: Mapping[str, Any], new: Mapping[str, Any] | None, shown: Mapping[str, Any] | None) -> list[Piece]:
    """A successor a person linked (a curated lineage link): said to be a review's, not derived,
    with its reason, who read which code, and what the other entry says."""
    text = _message(shown)
    said = [("text", "; now " if shown is new else "; was "), ("code", _first_line(text))] if text else []
    return [
        ("text", "linked by review, not derived from the words: "),
        ("text", " ".join(str(review.get("why", "")).split())),
        ("text", f" (read by {review.get('reviewer')} in "),
        ("code", str(review.get("old_release"))),
        ("text", " and at "),
        ("code", str(review.get("commit"))[:12]),
        ("text", ")"),
        *said,
    ]


def _functions(record: Mapping[str, Any] | None) -> set[tuple[str, str]]:
    sites = (record or {}).get("sites")
    if not isinstance(sites, list):
        return set()
    return {(str(s.get("module")), str(s.get("qualname"))) for s in sites if isinstance(s, dict)}


def _elsewhere(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, shown: Mapping[str, Any] | None) -> str | None:
    """Where ``shown`` raised its message (its primary site's path and function) when ``old`` and
    ``new`` share no function: a successor ``diff.link`` never pairs (it pairs a rewording only in
    the same function), found as a twin; None when they share one, or a page cannot tell."""
    before, after = _functions(old), _functions(new)
    if not before or not after or before & after:
        return None
    site = ((shown or {}).get("sites") or [{}])[0]
    return f"{site.get('path')} ({site.get('qualname')})" if isinstance(site, dict) and site.get("path") else None


def _replaces(ids: list[Any], record: Mapping[str, Any] | None, others: Others) -> list[Piece]:
    pieces: list[Piece] = []
    for n, eid in enumerate(ids):
        old = others.get(str(eid))
        pieces += [("text", "; ")] * bool(n) + [("entry", str(eid)), ("text", ": "), *_how(old, record, old)]
    return pieces


def _read(others: Others) -> Any:
    return lambda eid: others.get(eid)


def successors(record: Mapping[str, Any] | None, others: Others | None) -> list[Mapping[str, Any]]:
    """The records that succeeded this one, in order, as far as ``others`` holds them (``lineage.chain``)."""
    from crawler.consume.lineage import chain

    return chain(record, _read(others)) if record is not None and others else []


def inherited(record: Mapping[str, Any], others: Others | None) -> tuple[Mapping[str, Any], str, str] | None:
    """For a page whose record has no curated explanation: the nearest successor that has one
    (an explanation written for an entry serves its earlier wordings), with that successor's
    message and this record's, so the page can say which wording differs; None otherwise."""
    if record.get("explanation_status") == "curated":
        return None
    for nxt in successors(record, others):
        if nxt.get("explanation_status") == "curated" and nxt.get("explanation"):
            return nxt, _message(nxt) or "", _message(record) or ""
    return None


def inherited_note(found: tuple[Mapping[str, Any], str, str]) -> list[Piece]:
    """ "Written for 0123456789abcdef, which raises this error today as `...`; this entry's message read `...`."."""
    nxt, now, was = found
    live = not (nxt.get("history") or {}).get("retired")
    pieces: list[Piece] = [("text", "Written for its successor "), ("entry", str(nxt.get("id")))]
    if now and now != was:
        pieces += [
            ("text", ", whose message reads " if live else ", whose message read "),
            ("code", _first_line(now)),
            ("text", "; this entry's read "),
            ("code", _first_line(was)),
        ]
    return pieces + [("text", ".")]


def _first_line(text: str) -> str:
    return text.strip("\n").split("\n", 1)[0] + (" …" if "\n" in text.strip("\n") else "")


def history_rows(
    h: dict[str, Any] | None, record: Mapping[str, Any] | None = None, others: Others | None = None, digests: frozenset[str] = frozenset()
) -> list[Row]:
    """First seen, last seen, moves, removal and rewording, in that order, then unknown keys.

    A live record leaves ``last_seen`` out (#18: the manifest's commit has it), so it reads
    "still present" (one that has it was not read by the crawls since: one of its files was
    skipped, and it is said so); a retired one says where it was last seen and removed. ``record``: the
    record whose history this is, ``others``: records the page can read, to say how a
    replacement changed the error (see the module's docstring); ``digests``: commits that are a
    wheel's files digest (``when``)."""
    if not h:
        return []
    from crawler.consume.lineage import releases

    rows: list[Row] = []
    span = releases(h)
    if span is not None and span.text():
        rows.append(("Raised in", [("text", span.text())]))
    if h.get("first_seen"):
        rows.append(("First seen", when(h["first_seen"], digests)))
    if h.get("last_seen") and not h.get("retired"):
        # Live, yet last seen before the dataset's commit: a crawl since did not read its file.
        rows.append(("Last seen", [*when(h["last_seen"], digests), ("text", "; not read since (a later crawl skipped one of its files)")]))
    elif h.get("last_seen") or h.get("retired"):
        rows.append(("Last seen", when(h.get("last_seen"), digests)))
    elif h.get("first_seen"):
        rows.append(("Last seen", [("text", "still present")]))
    moved = h.get("moved")
    for move in moved if isinstance(moved, list) else [moved] if moved else []:
        if isinstance(move, dict) and "from_path" in move and "to_path" in move:
            rows.append(("Moved", [("code", str(move["from_path"])), ("arrow", ""), ("code", str(move["to_path"])), ("text", " in "), *when(move, digests)]))
        else:
            rows.append(("Moved", [("text", _plain(move))]))
    if h.get("retired"):
        rows.append(("Removed in", when(h.get("removed_in"), digests)))
    others = others or {}
    if h.get("replaces"):
        rows.append(("Replaces", _replaces(h["replaces"] if isinstance(h["replaces"], list) else [h["replaces"]], record, others)))
    if h.get("replaced_by"):
        new = others.get(str(h["replaced_by"]))
        rows.append(("Replaced by", [("entry", str(h["replaced_by"])), ("text", ": "), *_how(record, new, new)]))
        chain = successors(record, others)
        if len(chain) > 1:
            last = chain[-1]
            gone = bool((last.get("history") or {}).get("retired"))
            rows.append(
                (
                    TODAY if not gone else "Last successor",
                    [
                        ("entry", str(last.get("id"))),
                        *([("text", " (retired too)")] if gone else []),
                        *([("text", ": "), ("code", _first_line(_message(last) or ""))] if _message(last) else []),
                    ],
                )
            )
    for key, value in h.items():
        if key not in _KNOWN and value not in (None, False, [], {}, ""):
            rows.append((key.replace("_", " ").capitalize(), [("text", _plain(value))]))
    return rows


def history_note(h: dict[str, Any] | None) -> str:
    """The human-readable note of a retired entry when it says more than its "Removed in" row
    ("removed after v2.0, by 4ba787ec9a1b"), else nothing: the default note, "removed in v0.31.0",
    is that row again."""
    h = h or {}
    note = str(h.get("retired_note") or "")
    removed = h.get("removed_in")
    if isinstance(removed, dict) and note.strip() in {f"removed in {removed.get('version') or ''}", f"removed in {str(removed.get('commit') or '')[:12]}"}:
        return ""
    return note
