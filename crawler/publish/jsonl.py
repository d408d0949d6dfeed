"""``errors.jsonl.gz``: every record of a dataset as one compact JSON line, gzip-compressed.

The lines repeat what ``errors/<id>.json`` hold (one download for a consumer that wants them
all), so they are stored compressed: on vLLM v0.33.0, 38.7 MB of lines become about 6.5 MB.
The bytes are deterministic: records in id order, one gzip member per two-digit id prefix
(so a member's bytes depend only on its records, not on how many processes compressed them),
each made by zlib at a fixed level with no file name and a zero modification time. Any gzip
reader reads the members as one stream (RFC 1952 allows several).

Reading is bounded: a line at most ``max_line`` bytes and the whole stream at most
``MAX_TOTAL_BYTES`` decompressed, so a hostile file (a "zip bomb") costs bounded memory and time;
a damaged stream is a DataError, never a traceback.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO

from crawler.base.dataset_files import RECORDS
from crawler.base.errors import DataError

NAME = RECORDS
#: zlib's level: 6 gives 6.3 MB in 1.8 s on vLLM's lines, 9 gives 6.2 MB in 2.7 s, 1 gives 8.1 MB in 0.7 s
#: (one loaded core); the member bytes are part of the output, so this is fixed, not an option.
LEVEL = 6
#: gzip framing for zlib (RFC 1952): mtime 0, no file name, so the same lines give the same bytes.
_GZIP = 16 + zlib.MAX_WBITS
#: The most a dataset's errors.jsonl.gz may decompress to: 20x vLLM's, and still bounded.
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
#: Blank lines a stream may hold (errcat writes none): each is a turn of a reader's loop, so a
#: stream of newlines alone (1 GiB from 1 MB of gzip) cost three minutes of CPU, found wrong by nothing.
MAX_BLANK_LINES = 1000


def member_key(record_id: str) -> str:
    """Which gzip member a record's line goes in (records are written in id order)."""
    return record_id[:2]


def _compress(data: bytes) -> bytes:
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, _GZIP)
    return packer.compress(data) + packer.flush()


#: The gzip header every member errcat writes begins with.
_HEADER = _compress(b"")[:10]


def spans(ids: Sequence[str]) -> list[tuple[int, int]]:
    """Where each member's lines are, in order: (start, end) of consecutive ids with one prefix."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(ids)):
        if member_key(ids[i]) != member_key(ids[i - 1]):
            out.append((start, i))
            start = i
    if ids:
        out.append((start, len(ids)))
    return out


def line_digest(line: bytes) -> bytes:
    """The digest of one line, which the record memo keeps and a member's key is made of."""
    return hashlib.sha256(line).digest()


def member_digest(line_digests: Sequence[bytes]) -> bytes:
    """A member's key: the digest of its lines' digests, in order (so an unchanged member is found
    without joining or hashing its 150 KB of lines again)."""
    return hashlib.sha256(b"".join(line_digests)).digest()


def pack(ids: Sequence[str], lines: Sequence[bytes], jobs: int = 1, previous: Mapping[bytes, bytes] | None = None) -> bytes:
    """The file's bytes; members are compressed on ``jobs`` threads (zlib releases the GIL),
    which changes nothing in the bytes. ``previous`` maps a member's key (:func:`member_digest`) to the
    member of the file this one replaces (:func:`split_members`): such a member is taken as it
    is, since it decompresses to exactly that content, and only the members whose lines changed
    are compressed."""
    return pack_members(ids, lines, jobs, previous)[0]


def pack_members(
    ids: Sequence[str],
    lines: Sequence[bytes | None],
    jobs: int = 1,
    previous: Mapping[bytes, bytes] | None = None,
    line_digests: Sequence[bytes] | None = None,
    make: Callable[[int], bytes] | None = None,
) -> tuple[bytes, list[tuple[bytes, int, int]]]:
    """:func:`pack`, and each member's (:func:`member_digest`, offset, length) in the file."""
    if not ids:
        return _compress(b""), []
    return join(packed(ids, lines, jobs, previous, line_digests, make))


def packed(
    ids: Sequence[str],
    lines: Sequence[bytes | None],
    jobs: int = 1,
    previous: Mapping[bytes, bytes] | None = None,
    line_digests: Sequence[bytes] | None = None,
    make: Callable[[int], bytes] | None = None,
) -> list[tuple[bytes, bytes]]:
    """Each member of the lines (see :func:`pack`) as (:func:`member_digest`, its bytes); ``line_digests``:
    each line's :func:`line_digest`, when the caller has them. Lines cut between members give the
    members of the whole, one part after the other. A line the caller did not keep (None; its
    digest is in ``line_digests``) is made by ``make`` (its index), only for a member that is
    not in ``previous``."""
    if len(ids) != len(lines):
        raise ValueError("as many lines as ids")
    if line_digests is None:
        if any(line is None for line in lines):
            raise ValueError("a line not kept needs its digest")
        digests: Sequence[bytes] = [line_digest(line) for line in lines if line is not None]
    else:
        digests = line_digests
    where = spans(ids)
    keys = [member_digest(digests[start:end]) for start, end in where]
    previous = previous or {}

    def line_at(i: int) -> bytes:
        line = lines[i]
        if line is not None:
            return line
        if make is None:
            raise ValueError("a line not kept needs a maker")
        return make(i)

    todo = [b"".join(map(line_at, range(start, end))) for (start, end), key in zip(where, keys, strict=True) if key not in previous]
    if jobs <= 1 or len(todo) <= 1:
        made = list(map(_compress, todo))
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            made = list(pool.map(_compress, todo))
    fresh = iter(made)
    return [(key, previous[key] if key in previous else next(fresh)) for key in keys]


def iter_members(
    ids: Sequence[str],
    lines: Sequence[bytes | None],
    previous: Mapping[bytes, bytes] | None,
    line_digests: Sequence[bytes],
    make: Callable[[int], bytes],
    layout: list[tuple[bytes, int, int]],
) -> Iterator[bytes]:
    """:func:`pack_members`'s file as its members, one after another, each taken from ``previous``
    or compressed (on this thread) as it is reached: joined, they are that file, and no more than
    one is held at a time. ``layout`` is filled with where each member is, as ``pack_members`` says."""
    if len(ids) != len(lines) or len(ids) != len(line_digests):
        raise ValueError("as many lines and digests as ids")
    if not ids:
        yield _compress(b"")
        return
    previous = previous or {}
    at = 0
    for start, end in spans(ids):
        key = member_digest(line_digests[start:end])
        kept = previous.get(key)
        member = (
            kept
            if kept is not None
            else _compress(b"".join(line if line is not None else make(i) for i, line in zip(range(start, end), lines[start:end], strict=True)))
        )
        layout.append((key, at, len(member)))
        at += len(member)
        yield member


def join(parts: Sequence[tuple[bytes, bytes]]) -> tuple[bytes, list[tuple[bytes, int, int]]]:
    """The file of members made by :func:`packed`, and where each is in it."""
    if not parts:
        return _compress(b""), []
    layout, at = [], 0
    for key, part in parts:
        layout.append((key, at, len(part)))
        at += len(part)
    return b"".join(part for _, part in parts), layout


def members_at(data: bytes, layout: Sequence[tuple[bytes, int, int]]) -> dict[bytes, bytes]:
    """The members of a file errcat wrote, by their key (:func:`member_digest`), from where
    :func:`pack_members` said it put them (only for a file known to be that very file)."""
    return {key: data[at : at + size] for key, at, size in layout if at + size <= len(data)}


def split_members(data: bytes) -> dict[bytes, bytes]:
    """Each whole gzip member of ``data`` by the :func:`member_digest` of its lines (what ``pack`` may reuse).
    Hostile bytes cost bounded work: decompression stops at ``MAX_TOTAL_BYTES``, and a damaged or
    cut member ends the list (the members before it are whole and checked by zlib's CRC)."""
    found: dict[bytes, bytes] = {}
    view = memoryview(data)
    pos = total = 0
    try:
        while pos < len(view):
            unpacker, start, parts = zlib.decompressobj(_GZIP), pos, []
            while not unpacker.eof:
                if pos >= len(view):
                    return found  # cut short
                piece = view[pos : pos + (1 << 16)]
                pos += len(piece)
                out = unpacker.decompress(piece, MAX_TOTAL_BYTES - total + 1)
                total += len(out)
                if unpacker.unconsumed_tail or total > MAX_TOTAL_BYTES:
                    return found
                parts.append(out)
            pos -= len(unpacker.unused_data)
            # Only a member framed as errcat frames its own is taken over: a header with a time,
            # a name, a comment or another OS would carry bytes a fresh run does not write.
            if view[start : start + len(_HEADER)] == _HEADER:
                found[member_digest([line_digest(line) for line in _lines(b"".join(parts))])] = bytes(view[start:pos])
    except zlib.error:
        pass
    return found


def _lines(content: bytes) -> list[bytes]:
    """The lines of a member's content, each with its newline (as the writer's lines are)."""
    parts = content.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _decompressed(fh: IO[bytes], where: str) -> Iterator[bytes]:
    """The decompressed bytes of every member, in pieces of at most 1 MiB."""
    unpacker = zlib.decompressobj(_GZIP)
    fed = False  # whether the current member has begun
    total = 0
    data = b""
    try:
        while True:
            if not data:
                data = fh.read(1 << 16)
                if not data:
                    break
            out = unpacker.decompress(data, 1 << 20)
            fed = True
            if unpacker.eof:  # a member ended: what follows it is the next one
                data = unpacker.unused_data
                unpacker, fed = zlib.decompressobj(_GZIP), False
            else:
                data = unpacker.unconsumed_tail
            total += len(out)
            if total > MAX_TOTAL_BYTES:
                raise DataError(f"{where}: decompresses to more than {MAX_TOTAL_BYTES} bytes")
            yield out
    except zlib.error as exc:
        raise DataError(f"{where}: not a valid gzip stream ({exc})") from None
    if fed:
        raise DataError(f"{where}: the gzip stream is cut short")


def iter_lines(fh: IO[bytes], where: str, max_line: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a gzip stream of JSON lines, split on ``\\n`` only (a message may
    hold U+2028); a line longer than ``max_line`` bytes is a DataError naming it, and so are more
    than ``MAX_BLANK_LINES`` blank lines."""
    # The pieces of the line not yet ended, joined once its newline comes: adding each piece to
    # one bytes object would copy the line so far each time (a 256 MiB line took 26 s).
    parts: list[bytes] = []
    size = 0
    n = 0
    blank = 0
    for out in _decompressed(fh, where):
        parts.append(out)
        size += len(out)
        if b"\n" not in out:
            if size > max_line:
                raise DataError(f"{where}:{n + 1}: longer than {max_line} bytes")
            continue
        *complete, pending = b"".join(parts).split(b"\n")
        parts, size = [pending], len(pending)
        for line in complete:
            n += 1
            if len(line) + 1 > max_line:
                raise DataError(f"{where}:{n}: longer than {max_line} bytes")
            if not line.strip():
                blank += 1
                if blank > MAX_BLANK_LINES:
                    raise DataError(f"{where}:{n}: more than {MAX_BLANK_LINES} blank lines (a dataset's record lines have none)")
            yield n, line + b"\n"
    if size:
        if size > max_line:
            raise DataError(f"{where}:{n + 1}: longer than {max_line} bytes")
        yield n + 1, b"".join(parts)
