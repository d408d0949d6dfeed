"""Stable entry ids.

An entry is a distinct error: the same exception and the same message template. Its id is the
first 16 hex digits of a SHA-256 over the repo, the exception's class name and the *normalized*
template (whitespace collapsed, each field reduced to ``{}``), so moving a line or renaming a
variable keeps the id. A message with no literal text at all (a bare ``raise
NotImplementedError``, an unresolvable ``raise ValueError(msg)``) carries nothing to key on, so it
is keyed by module and qualified name instead: such sites do not collapse into one giant entry.
An assert with no message is keyed by its condition (normalized) and its module: the same check
in one module is one entry, wherever it moves within the module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from crawler.extract.templates import Field, parts_from_template
from crawler.model.kinds import KINDS, exception_word
from crawler.model.records import ID_RE


def normalize_template(text: str, fields: list[dict[str, Any]]) -> str:
    """Template text with each field reduced to ``{}`` and whitespace collapsed.

    Literal braces stay doubled, so ``{}`` always means a field.
    """
    parts = parts_from_template({"text": text, "fields": fields})
    joined = "".join("{}" if isinstance(p, Field) else p.replace("{", "{{").replace("}", "}}") for p in parts)
    return " ".join(joined.split())


def has_literal_text(normalized: str) -> bool:
    """True when the template says something beyond its fields (letters or digits outside them)."""
    return any(ch.isalnum() for ch in normalized.replace("{}", ""))


def entry_key(site: Mapping[str, Any]) -> tuple[str, ...]:
    """The identity of the error a site raises (see module docstring)."""
    # (a raise whose class is unknown, ``exception_qualname`` empty, keeps the key of the name
    # it raises as written: its id is the one it had before errcat knew it names no class)
    kind = site.get("kind")
    if kind is not None and KINDS[kind].keyed_apart:  # never one entry with a raise of the same words
        # (a record's site of schema 6 names no exception: its level or error type is the word)
        exception = site["exception"] if site["exception"] is not None else exception_word(site)
        tail: tuple[str, ...] = (kind,)
    else:
        exception = (site["exception_qualname"] or site["exception"]).rpartition(".")[2]
        tail = ()
    condition = site.get("condition")
    if condition is not None:
        return ("condition", exception, site["module"], condition)
    template = site["template"]
    normalized = normalize_template(template["text"], template["fields"])
    if not template.get("opaque") and has_literal_text(normalized):
        return ("message", exception, normalized, *tail)
    return ("site", exception, site["module"], site["qualname"], *tail)


def entry_id(repo: str, key: tuple[str, ...]) -> str:
    """16 lowercase hex digits from repo (owner/name) and an entry key."""
    payload = "\x1f".join((repo, *key)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()[:16]


def check_id(value: str) -> str:
    """Return ``value`` if it is a well-formed id; ids become file names, so nothing else passes."""
    if not ID_RE.fullmatch(value):
        raise ValueError(f"not an errcat id (16 lowercase hex digits): {value!r}")
    return value
