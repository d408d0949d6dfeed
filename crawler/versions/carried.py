"""The rows a sync wrote for each retired record, by the digest of its errors.jsonl line, so that the
next sync carries a retired record through as it is instead of rendering it again.

A retired record never changes in a sync unless its id comes back or a curated lineage link
changes it: its record file, its line, its index.json row and its search.json row are the bytes
the last render made of that line. The render takes them from here, kept in the cache per
repository: for each line digest, the SHA-256 and size of the record file errcat writes for that
line, and the index and search rows it writes for it, as their bytes in the document. A row read
back from the dataset in place would be hostile (edited on disk between syncs); these are
errcat's own, written only after a render that validated them, and stamped with errcat's code
(``crawl.code_digest``, which covers the models the schemas are made from) and orjson's version:
other code vouches for nothing. A record file in place is carried only when its bytes have the
digest held here for its line (hashed as it is taken), so an edited file is rendered anew.

The file is rewritten with the rows of the last render's retired records alone: it holds what
one history needs, never more. A damaged or missing file only costs rendering those records.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from crawler.base.cachedir import keep
from crawler.base.errors import DataError
from crawler.model.records import RepoRef
from crawler.model.shapes import RecordData
from crawler.publish.dataset import PreviousRecord

DIRECTORY = "carried"
MAGIC = b"errcat-carried-2\n"
#: The head: the stamp (32 bytes), the number of rows; each row's fixed part: the line digest,
#: the record file's digest, the file's and the line's sizes, the index and search rows' and the facts' lengths.
_HEAD = struct.Struct("<32sQ")
_ROW = struct.Struct("<32s32sQQIII")
#: Rows kept at most: far more than any history's retired records (vLLM's whole history: ~10,400).
MAX_ROWS = 1_000_000


class Carried(NamedTuple):
    """What the last render wrote of one retired record's line (see the module)."""

    file_digest: bytes
    file_size: int
    line_size: int
    index_row: bytes
    search_row: bytes
    #: What a sync reads of the record instead of its line (``facts``), as JSON.
    facts: bytes = b""


@functools.cache
def _stamp(repo_url: str) -> bytes:
    from crawler.crawl import code_digest

    return hashlib.sha256(f"{code_digest()}\0{orjson.__version__}\0{repo_url}".encode()).digest()


def facts(record: RecordData) -> bytes:
    """What a sync reading the record's line takes from it when the line is carried (not parsed):
    its id, what the reader holds its provenance to (``dataset._Tally``), the commit a crawl may be
    asked to vouch for, and the lineage a curated link reads (``lineage_links.apply``)."""
    p, h = record["provenance"], record.get("history") or {}
    return orjson.dumps(
        {
            "id": record["id"],
            "repo": p["repo"],
            "commit": p["commit"],
            "commit_date": p["commit_date"],
            "source": p["source"],
            "upstream_commit": p.get("upstream_commit"),
            "replaced_by": h.get("replaced_by"),
            "reviewed": h.get("replaced_by_review") is not None,
            "replaces": h.get("replaces") or [],
        }
    )


#: The facts :func:`facts` writes that are strings, or strings and null (the others: ``reviewed`` a
#: bool, ``replaces`` a list of ids); ``id`` and ``replaced_by`` are ids.
_STRINGS = ("id", "repo", "commit", "source")
_OPTIONAL = ("commit_date", "upstream_commit", "replaced_by")
_FACT_KEYS = frozenset((*_STRINGS, *_OPTIONAL, "reviewed", "replaces"))
#: A record id (``ids.ID_RE``), as a whole string: ``fullmatch`` it.
_ID = re.compile(r"[0-9a-f]{16}")


def read_facts(raw: bytes) -> dict[str, Any] | None:
    """A row's facts (:func:`facts`) as a sync takes them, or None when they are not what
    :func:`facts` writes: the memo is hostile like any file of the cache (its stamp is a digest
    anyone can make again), so facts that are no JSON object of those keys and types, or whose
    ids are no record ids, only cost reading the line (it is parsed and validated instead)."""
    try:
        found = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(found) is not dict or found.keys() != _FACT_KEYS or type(found["reviewed"]) is not bool or type(found["replaces"]) is not list:
        return None
    for key in _STRINGS:
        if type(found[key]) is not str:
            return None
    for key in _OPTIONAL:
        if found[key] is not None and type(found[key]) is not str:
            return None
    for rid in (found["id"], *found["replaces"], found["replaced_by"] or found["id"]):
        if type(rid) is not str or _ID.fullmatch(rid) is None:
            return None
    return found


def _repo(repo: RepoRef) -> str:
    """The repository a row was written for, as a record names it (its url, owner and name)."""
    return f"{repo.url}\0{repo.owner}\0{repo.name}"


def _path(cache_dir: Path, repo: RepoRef) -> Path:
    name = hashlib.sha256(f"{repo.owner}/{repo.name}".encode()).hexdigest()[:16]
    return cache_dir / DIRECTORY / f"{name}.bin"


class Memo(Mapping[bytes, Carried]):
    """The rows kept for a repository (:func:`load`), by line digest, their variable parts left in
    the file: what a row's fixed part names (its record file's digest and size, its line's size)
    is held, ~200 bytes a row; its facts and its index and search rows (~1.4 KB a retired vLLM
    record) are read from the file when asked for (``facts``, ``index_row``, ``search_row``; a
    row got whole, ``memo[digest]``, has them read too), so that a sync does not hold a history's
    rows through its crawl and render beside the documents they are copied into. Read through
    the file as it was opened (a memo written meanwhile replaces the file, never this one's
    bytes: ``cachedir.keep``), each read its length or nothing (a memo cut short meanwhile is
    said so: DataError, "run it again")."""

    def __init__(self, rows: dict[bytes, tuple[bytes, int, int, int, int, int, int]] | None = None, fd: int | None = None, where: str = "") -> None:
        #: By line digest: the record file's digest and size, the line's size, then where the
        #: row's index row begins in the file and the lengths of its index row, search row and facts.
        self._rows = rows or {}
        self._fd = fd
        self._where = where

    def __getitem__(self, digest: bytes) -> Carried:
        file_digest, file_size, line_size, at, index_len, search_len, facts_len = self._rows[digest]
        blob = self._read(at, index_len + search_len + facts_len)
        return Carried(file_digest, file_size, line_size, blob[:index_len], blob[index_len : index_len + search_len], blob[index_len + search_len :])

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, digest: object) -> bool:
        return digest in self._rows

    def file_of(self, digest: bytes) -> tuple[bytes, int] | None:
        """The SHA-256 and size of the record file written with the line ``digest`` (None: not kept)."""
        row = self._rows.get(digest)
        return (row[0], row[1]) if row is not None else None

    def line_size(self, digest: bytes) -> int:
        """The size of the line ``digest`` (KeyError: not kept)."""
        return self._rows[digest][2]

    def facts(self, digest: bytes) -> bytes:
        """The facts kept of the line ``digest`` (``facts``; b"" when none or not kept)."""
        row = self._rows.get(digest)
        return self._read(row[3] + row[4] + row[5], row[6]) if row is not None else b""

    def index_row(self, digest: bytes) -> bytes:
        file_digest, file_size, line_size, at, index_len, search_len, facts_len = self._rows[digest]
        return self._read(at, index_len)

    def search_row(self, digest: bytes) -> bytes:
        file_digest, file_size, line_size, at, index_len, search_len, facts_len = self._rows[digest]
        return self._read(at + index_len, search_len)

    def _read(self, at: int, size: int) -> bytes:
        if not size:
            return b""
        assert self._fd is not None  # (a memo with rows has its file)
        try:
            data = os.pread(self._fd, size, at)
        except OSError as exc:
            raise MemoChanged(f"{self._where}: the memo of retired records could not be read ({exc.strerror}); run it again") from None
        if len(data) != size:
            raise MemoChanged(f"{self._where}: the memo of retired records changed during the sync; run it again")
        return data

    def close(self) -> None:
        """Let the file go (its rows can no longer be read)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()


class MemoChanged(DataError):
    """The memo file open could not be read as its table says (cut or rewritten in place meanwhile):
    the sync stops, to be run again (not :class:`RowsRefused`)."""


class RowsRefused(DataError):
    """A render that carried rows of the memo through (:class:`RowsOf`) found the dataset wrong:
    those rows, held to their entry and the schema as they are written (``writer._raw_row``), may
    be what is wrong (the memo is the cache's, hostile like it), so the sync renders again
    without them (``sync``)."""


class RowsOf(Mapping[str, bytes]):
    """One kind of row (``Memo.index_row`` or ``Memo.search_row``) of the records carried
    through, by id, each read from the memo when the writer takes it (``writer.index_rows``'s and
    ``search.search_rows``' ``carried``): not held, a document's rows taken one at a time."""

    def __init__(self, read: Callable[[bytes], bytes], lines: Mapping[str, bytes]) -> None:
        self._read = read
        #: By id, the digest of the record's line (the memo's key).
        self._lines = lines

    def __getitem__(self, rid: str) -> bytes:
        return self._read(self._lines[rid])

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def __contains__(self, rid: object) -> bool:
        return rid in self._lines


def load(cache_dir: Path, repo: RepoRef) -> Memo:
    """The rows kept for ``repo``, by line digest (:class:`Memo`); none when missing, damaged or of
    other code. Only the head and the rows' fixed parts are read; the file's size is held to
    what they say its rows take."""
    path = _path(cache_dir, repo)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return Memo()
    try:
        found = _table(fd, repo)
    except OSError:
        found = None
    if not found:
        os.close(fd)
        return Memo()
    return Memo(found, fd, str(path))


def _table(fd: int, repo: RepoRef) -> dict[bytes, tuple[bytes, int, int, int, int, int, int]] | None:
    """The rows' fixed parts of the memo open as ``fd`` (see :class:`Memo`), or None when it is
    damaged, of other code or of another repository."""
    total = os.fstat(fd).st_size
    head = os.pread(fd, len(MAGIC) + _HEAD.size, 0)
    if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _HEAD.size:
        return None
    stamp, count = _HEAD.unpack_from(head, len(MAGIC))
    at = len(MAGIC) + _HEAD.size
    if stamp != _stamp(_repo(repo)) or count > MAX_ROWS or total < at + count * _ROW.size:
        return None
    table = os.pread(fd, count * _ROW.size, at)
    if len(table) != count * _ROW.size:
        return None
    at += count * _ROW.size
    found: dict[bytes, tuple[bytes, int, int, int, int, int, int]] = {}
    for line, file_digest, file_size, line_size, index_len, search_len, facts_len in _ROW.iter_unpack(table):
        found[line] = (file_digest, file_size, line_size, at, index_len, search_len, facts_len)
        at += index_len + search_len + facts_len
    return found if at == total else None


def remember(cache_dir: Path, repo: RepoRef, rows: Mapping[bytes, Carried | None], held: Mapping[bytes, Carried]) -> None:
    """Keep ``rows`` (the last render's retired records) as the repository's, unless they are
    ``held`` already (what ``load`` gave); a row given as None is ``held``'s (carried through as
    it was kept: read from the memo file now). A refused write is no error."""
    if rows.keys() == held.keys() or len(rows) > MAX_ROWS:
        return
    order = sorted(rows)
    whole = [row if (row := rows[d]) is not None else held[d] for d in order]
    table = b"".join(
        _ROW.pack(d, row.file_digest, row.file_size, row.line_size, len(row.index_row), len(row.search_row), len(row.facts))
        for d, row in zip(order, whole, strict=True)
    )
    blobs = b"".join(row.index_row + row.search_row + row.facts for row in whole)
    keep(_path(cache_dir, repo), MAGIC + _HEAD.pack(_stamp(_repo(repo)), len(order)) + table + blobs)


@dataclass
class Carry:
    """A sync's render's use of the rows (``history.render_state``'s ``carry``): ``rows`` the memo
    as loaded, ``lines`` the line digest and size of each retired record held as read, by id.
    Filled by the render: ``carried``, the ids it carried through; ``written``, the rows of every
    retired record it wrote, for the next sync (empty when it wrote no dataset in memory; None for
    a row carried through, which is ``rows``' as kept: see ``remember``); ``in_place``, see below."""

    rows: Memo
    lines: Mapping[str, tuple[bytes, int]]
    carried: set[str] = field(default_factory=set)
    written: dict[bytes, Carried | None] = field(default_factory=dict)
    #: Filled by the render: the carried records whose file in place was vouched for by its digest
    #: as it was read and is not held (``dataset.previous_records``' ``carried``), by id, each
    #: ``PreviousRecord`` as read: the render's files leave them out; they are linked, or read again.
    in_place: dict[str, PreviousRecord] = field(default_factory=dict)


MEMBERS_MAGIC = b"errcat-carried-members-1\n"
#: Each member's fixed part: its offset and size in errors.jsonl.gz, the SHA-256 of its bytes, its number of lines.
_MEMBER = struct.Struct("<QQ32sI")


def _members_path(cache_dir: Path, repo: RepoRef) -> Path:
    return _path(cache_dir, repo).with_suffix(".members")


def load_members(cache_dir: Path, repo: RepoRef) -> list[tuple[int, int, bytes, list[bytes]]]:
    """The gzip members of errors.jsonl.gz's retired part (``jsonl.in_file_order``) as the last
    render wrote them, kept for ``repo``: each one's offset, size, the SHA-256 of its bytes and
    its lines' digests, in order; none when missing, damaged or of other code. A reader leaves a
    member compressed only where those very bytes are (``jsonl.iter_lines_skipping``)."""
    try:
        data = _members_path(cache_dir, repo).read_bytes()
    except OSError:
        return []
    if not data.startswith(MEMBERS_MAGIC) or len(data) < len(MEMBERS_MAGIC) + _HEAD.size:
        return []
    stamp, count = _HEAD.unpack_from(data, len(MEMBERS_MAGIC))
    at = len(MEMBERS_MAGIC) + _HEAD.size
    if stamp != _stamp(_repo(repo)) or count > MAX_ROWS:
        return []
    found = []
    for _ in range(count):
        if at + _MEMBER.size > len(data):
            return []
        offset, size, digest, lines = _MEMBER.unpack_from(data, at)
        at += _MEMBER.size
        if lines > MAX_ROWS or at + 32 * lines > len(data):
            return []
        found.append((offset, size, digest, [data[n : n + 32] for n in range(at, at + 32 * lines, 32)]))
        at += 32 * lines
    return found if at == len(data) else []


def remember_members(cache_dir: Path, repo: RepoRef, members: list[tuple[int, int, bytes, list[bytes]]]) -> None:
    """Keep ``members`` (see :func:`load_members`) as the repository's; a refused write is no error."""
    if len(members) > MAX_ROWS:
        return
    body = MEMBERS_MAGIC + _HEAD.pack(_stamp(_repo(repo)), len(members))
    body += b"".join(_MEMBER.pack(offset, size, digest, len(lines)) + b"".join(lines) for offset, size, digest, lines in members)
    path = _members_path(cache_dir, repo)
    try:
        if path.read_bytes() == body:
            return
    except OSError:
        pass
    keep(path, body)
