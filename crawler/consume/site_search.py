"""What the site's search box needs of each entry beyond its wording, so that it ranks as
``errcat match`` does (``match.Match.key``, ``match.agreement``): the entry's kind, how many
fields its template has, the ancestors its exception is caught as, and where it is raised.

Kept small, since every page loads the index: the kind only when it is not a raise or an
assert, the field count only when the fragments do not imply it, the ancestors once per
exception name (the same name has the same ancestors across a dataset), and each site as a 24-bit
code of its path with its function's name (``s``: a traceback frame ``File ".../vllm/x.py",
line N, in fn`` is in the entry's function when a suffix of its path with ``fn`` gives the code,
``match._score``'s ``site_match``). Only an entry with no words of its own (``raise
ValueError(msg)``, ``"{a}: {b}"``) also has the code of each function's name alone (``n``): it
is offered where a frame is in a function of that name in any file
(``match._in_named_function``); an entry with words is tried when the paste has them. A code is
a fingerprint, not a name (a name table would cost twice the bytes): a frame's code is another
function's once in 16 million for each entry it is compared with, and only entries whose wording
the paste already has (or opaque ones, whose exception it must name) are compared. The line is
left out: a paste's line numbers come from the user's release, rarely this one. An assert with
no message has its condition (``q``; ``true`` when its title is ``assert <condition>`` whole),
which tells it from the bare raise beside it by the frame's code line (``match._condition_said``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.model.kinds import KINDS, NATIVE

if TYPE_CHECKING:
    from crawler.model.search import SearchEntry, SearchIndex

_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def code(text: str) -> str:
    """Four characters for ``text``: FNV-1a (32 bits) over its UTF-8, folded to 24 bits.
    ``siteCode`` in the site's search.js is the same function; keep the two identical."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    h = (h >> 24) ^ (h & 0xFFFFFF)
    return "".join(_DIGITS[(h >> shift) & 63] for shift in (18, 12, 6, 0))


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


def site_codes(entry: SearchEntry) -> dict[str, str]:
    """``s``: each distinct (path, function) of the entry's sites as ``code(path + "\\0" + fn)``,
    in the sites' order; ``n``, for an entry or piece with no letter or digit in its literal
    text: each distinct function's ``code(fn)``."""
    pairs = dict.fromkeys((s.path, _leaf(s.qualname)) for s in entry.sites)
    out = {"s": "".join(code(f"{path}\0{fn}") for path, fn in pairs)}
    shapes = [entry.fragments, *(a.fragments for a in entry.alternatives)]
    if any(not any(ch.isalnum() for frag in frags for ch in frag) for frags in shapes):
        out["n"] = "".join(code(fn) for fn in dict.fromkeys(fn for _, fn in pairs))
    return out


def _implied_fields(entry: SearchEntry) -> int:
    """Fields a template with these fragments has when each variable part is one field."""
    k = len(entry.fragments)
    return k - 1 + (not entry.starts_literal) + (not entry.ends_literal) if k else 1


def ranking_fields(entry: SearchEntry) -> dict[str, Any]:
    """The entry's part of the box's index beyond its wording (see the module's text)."""
    out: dict[str, Any] = site_codes(entry)
    if KINDS[entry.kind].box_kind:
        # a Rust frontend's check is told apart: its errors never appear in a Python traceback
        rust = entry.kind == NATIVE and any(s.path.endswith(".rs") for s in entry.sites)
        out["k"] = "rust" if rust else entry.kind
    if len(entry.fields) != _implied_fields(entry):
        out["f"] = len(entry.fields)
    if entry.condition is not None:
        # an assert with no message: the condition a frame's code line shows (match._condition_said),
        # true when the title ("assert <condition>", not cut) holds it whole
        out["q"] = True if entry.title == f"assert {entry.condition}" else entry.condition
    return out


def caught_as(index: SearchIndex) -> dict[str, list[str]]:
    """Each exception name's ancestors (``SearchEntry.catch_as``), once per name; an entry
    whose list differs from its name's first is given its own (``ranking_fields`` cannot know)."""
    out: dict[str, list[str]] = {}
    for e in index.entries:
        if e.catch_as:
            out.setdefault(e.exception, list(e.catch_as))
    return out


def own_ancestors(entry: SearchEntry, table: dict[str, list[str]]) -> dict[str, Any]:
    """``{"c": [...]}`` when the entry's ancestors are not its exception name's in ``table``."""
    return {} if table.get(entry.exception, []) == list(entry.catch_as) else {"c": list(entry.catch_as)}
