"""The errors.jsonl line of each record kept by what the record is made of, so that a crawl that
keeps nearly every record (the daily sync's one-file commit) need not serialize each one to find
it unchanged (``publish.pins``: 18,075 records serialized and hashed for vLLM, to keep 18,039).

A record's *content key* is made where the record is (``crawl._assemble``): the key of its
action (``catalogue.action_memo``: the SHA-256 of the record without where it is pinned, what
its check reads and what its callers pass, before who acts is put in) with what is merged in
after it (the curated part and the evidence). Who acts is a function of that key and of the
action memo's stamp (errcat's code, the Python, the settings' spelling), so the record without
its pins is a function of the content key and that stamp; the record pinned at a commit is then
a function of those, the commit and its date, and the identity the permalinks are made of (the
repository, the source, the path prefix), and so is its line. The memo maps each content key of
the records the last crawl kept to the pin it kept the record at (the commit and its date) and
the line's SHA-256 and size there, under a stamp of the action memo's stamp, the serializer
(``record_memo.stamp``) and that identity: another of any of them vouches for nothing.

What it is used for is narrow: a record whose previous file the record memo vouches for by its
line's digest (``PreviousRecord.line``) is that file at the memo's pin when the memo's line
digest for it is that digest (``pins.repinned`` keeps it there as comparing would); in any other case (no line kept, or another one) the record is serialized
and compared as without the memo, so a line that is wrong costs that serialization, unless it
is wrong so as to equal the file's: then a record that changed would be kept. So the memo is
checked whole on the way in (its magic, its stamp, its length and the SHA-256 of its body, which
an edit that leaves the checksum alone breaks) and is empty when anything does not fit. It is
errcat's own cache, like the extraction results (whose sites a crawl takes as they are).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from pathlib import Path

import orjson

from crawler.base.cachedir import checked, keep, sealed

MAGIC = b"errcat-line-memo-1\n"
#: The stamp, the number of rows and the size of the pins' table (JSON: [commit, date] pairs).
_HEAD = struct.Struct("<32sQQ")
#: A row: the content key, its pin (an index into the pins' table), the line's SHA-256 and size.
_ROW = struct.Struct("<32sI32sQ")

#: A memo's lines: by content key, the pin the record was kept at (commit, date) and its line's
#: SHA-256 and size there.
Lines = dict[bytes, tuple[str, str | None, bytes, int]]


def content_key(action_key: str, curated: object, evidence: object) -> bytes | None:
    """The content key of a record whose action key is ``action_key`` and whose curated part and
    evidence (each None when there is none) are these; None when they are not JSON data."""
    try:
        tail = orjson.dumps([curated, evidence], option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    return hashlib.sha256(action_key.encode() + b"\0" + tail).digest()


def stamp(action_stamp: str, identity: Mapping[str, object]) -> bytes:
    """What a memo's lines stand for besides their keys (see the module's note)."""
    from crawler.publish.record_memo import stamp as serializer

    return hashlib.sha256(f"{action_stamp}\0{serializer()}\0".encode() + orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)).digest()


def path(cache_dir: Path, repo: str) -> Path:
    return cache_dir / "lines" / f"{hashlib.sha256(repo.encode()).hexdigest()[:16]}.bin"


def load(where: Path, stamped: bytes) -> Lines:
    """The lines kept at ``where`` under this stamp; none when there is no memo, it is of another
    stamp, or it is not whole (its length, its checksum, its pins' table)."""
    found_whole = checked(where, MAGIC, _HEAD)
    if found_whole is None:
        return {}
    data, (mark, count, table) = found_whole
    head = len(MAGIC) + _HEAD.size
    body = data[: len(data) - 32]
    if mark != stamped or len(data) != head + count * _ROW.size + table + 32:
        return {}
    try:
        pinned = orjson.loads(body[head + count * _ROW.size :])
    except orjson.JSONDecodeError:
        return {}
    if type(pinned) is not list or not all(type(p) is list and len(p) == 2 and type(p[0]) is str and type(p[1]) in (str, type(None)) for p in pinned):
        return {}
    found: Lines = {}
    for key, at, digest, size in _ROW.iter_unpack(body[head : head + count * _ROW.size]):
        if at >= len(pinned):
            return {}
        found[key] = (pinned[at][0], pinned[at][1], digest, size)
    return found


def save(where: Path, stamped: bytes, lines: Lines) -> None:
    """Keep ``lines`` (this crawl's alone) for the next crawl; failures are ignored."""
    pins: dict[tuple[str, str | None], int] = {}
    rows = [_ROW.pack(key, pins.setdefault((commit, date), len(pins)), digest, size) for key, (commit, date, digest, size) in sorted(lines.items())]
    table = orjson.dumps([list(p) for p in pins])
    keep(where, sealed([MAGIC, _HEAD.pack(stamped, len(rows), len(table)), *rows, table]))
