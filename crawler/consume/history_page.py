"""What every page says of an entry's history (``Record.history``): one reading, three writers.

The HTML page, the Markdown page (``site.py``) and the terminal page (``page.py``) each write
the rows below their own way, escaping every text there: the rows hold the dataset's strings
as they are. The record is read as JSON data; keys this module does not know (a later schema's)
are shown by their own name, generically, so that no page drops what a record says.
"""

from __future__ import annotations

from typing import Any

#: A piece of a row: ("code", text), ("entry", id), ("arrow", "") or ("text", text).
Piece = tuple[str, str]
Row = tuple[str, list[Piece]]

TITLE = "History"
#: Keys read into the rows below; any other is shown by its name.
_KNOWN = {"first_seen", "last_seen", "moved", "retired", "retired_note", "removed_in", "replaces", "replaced_by"}


def when(lifetime: Any) -> list[Piece]:
    """A version and its commit (``v0.31.0 (4ba787ec9a1b)``), the commit alone when the version is unknown."""
    if isinstance(lifetime, dict) and lifetime.get("commit"):
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


def _entries(ids: list[Any]) -> list[Piece]:
    pieces: list[Piece] = []
    for n, eid in enumerate(ids):
        pieces += [("text", ", ")] * bool(n) + [("entry", str(eid))]
    return pieces


def history_rows(h: dict[str, Any] | None) -> list[Row]:
    """First seen, last seen, moves, removal and rewording, in that order, then unknown keys.

    A live record leaves ``last_seen`` out (#18: the manifest's commit has it), so it reads
    "still present"; a retired one says where it was last seen and removed."""
    if not h:
        return []
    rows: list[Row] = []
    if h.get("first_seen"):
        rows.append(("First seen", when(h["first_seen"])))
    if h.get("last_seen") or h.get("retired"):
        rows.append(("Last seen", when(h.get("last_seen"))))
    elif h.get("first_seen"):
        rows.append(("Last seen", [("text", "still present")]))
    moved = h.get("moved")
    for move in moved if isinstance(moved, list) else [moved] if moved else []:
        if isinstance(move, dict) and "from_path" in move and "to_path" in move:
            rows.append(("Moved", [("code", str(move["from_path"])), ("arrow", ""), ("code", str(move["to_path"])),
                                   ("text", " in "), *when(move)]))
        else:
            rows.append(("Moved", [("text", _plain(move))]))
    if h.get("retired"):
        rows.append(("Removed in", when(h.get("removed_in"))))
    if h.get("replaces"):
        rows.append(("Replaces", _entries(h["replaces"] if isinstance(h["replaces"], list) else [h["replaces"]])))
    if h.get("replaced_by"):
        rows.append(("Replaced by", [("entry", str(h["replaced_by"]))]))
    for key, value in h.items():
        if key not in _KNOWN and value not in (None, False, [], {}, ""):
            rows.append((key.replace("_", " ").capitalize(), [("text", _plain(value))]))
    return rows


def history_note(h: dict[str, Any] | None) -> str:
    """The human-readable note of a retired entry ("removed in v0.31.0"), or nothing."""
    return str((h or {}).get("retired_note") or "")
