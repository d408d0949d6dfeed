"""``errors.jsonl.gz``: every record of a dataset as one compact JSON line, gzip-compressed.

The lines repeat what ``errors/<id>.json`` hold (one download for a consumer that wants them
all), so they are stored compressed: on vLLM v0.33.0, 38.7 MB of lines become about 6.5 MB.
The bytes are deterministic: the live records' lines in id order, then the retired records' in
id order (a history's: :func:`in_file_order`), one gzip member per two-digit id prefix within
each part (so a member's bytes depend only on its records, not on how many processes compressed
them, and a sync that reads the catalogue in place can leave the retired part's members, which a
day seldom changes, compressed: ``versions.carried``), each made by zlib at a fixed level with no
file name and a zero modification time. Any gzip reader reads the members as one stream (RFC
1952 allows several).

Reading is bounded: a line at most ``max_line`` bytes and the whole stream at most
``MAX_TOTAL_BYTES`` decompressed, so a hostile file (a "zip bomb") costs bounded memory and time;
a damaged stream is a DataError, never a traceback.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, NamedTuple

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


def in_file_order(retired: Sequence[bool]) -> tuple[list[int], int]:
    """The order of records' lines in the file, given whether each record (in id order) is
    retired: the indices of the live ones, then of the retired ones; and how many live ones
    there are (where the retired part begins, a member's end: :func:`spans`' ``cut``)."""
    live = [i for i, gone in enumerate(retired) if not gone]
    return live + [i for i, gone in enumerate(retired) if gone], len(live)


def spans(ids: Sequence[str], cut: int | None = None) -> list[tuple[int, int]]:
    """Where each member's lines are, in order: (start, end) of consecutive ids with one prefix;
    ``cut``: an index where a member ends whatever the prefixes (the retired part's start)."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(ids)):
        if i == cut or member_key(ids[i]) != member_key(ids[i - 1]):
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
    cut: int | None = None,
) -> tuple[bytes, list[tuple[bytes, int, int]]]:
    """:func:`pack`, and each member's (:func:`member_digest`, offset, length) in the file
    (``cut``: see :func:`spans`)."""
    if not ids:
        return _compress(b""), []
    return join(packed(ids, lines, jobs, previous, line_digests, make, cut))


def packed(
    ids: Sequence[str],
    lines: Sequence[bytes | None],
    jobs: int = 1,
    previous: Mapping[bytes, bytes] | None = None,
    line_digests: Sequence[bytes] | None = None,
    make: Callable[[int], bytes] | None = None,
    cut: int | None = None,
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
    where = spans(ids, cut)
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
    cut: int | None = None,
) -> Iterator[bytes]:
    """:func:`pack_members`'s file as its members, one after another, each taken from ``previous``
    or compressed (on this thread) as it is reached: joined, they are that file, and no more than
    one is held at a time. ``layout`` is filled with where each member is, as ``pack_members`` says
    (``cut``: see :func:`spans`)."""
    if len(ids) != len(lines) or len(ids) != len(line_digests):
        raise ValueError("as many lines and digests as ids")
    if not ids:
        yield _compress(b"")
        return
    previous = previous or {}
    at = 0
    for start, end in spans(ids, cut):
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


def _decompressed(fh: IO[bytes], where: str, spent: list[int] | None = None) -> Iterator[bytes]:
    """The decompressed bytes of every member, in pieces of at most 1 MiB (``spent``: the bytes
    decompressed before, of the same file, which count towards the bound)."""
    unpacker = zlib.decompressobj(_GZIP)
    fed = False  # whether the current member has begun
    spent = spent if spent is not None else [0]
    total = spent[0]
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
            spent[0] = total
            if total > MAX_TOTAL_BYTES:
                raise DataError(f"{where}: decompresses to more than {MAX_TOTAL_BYTES} bytes")
            yield out
    except zlib.error as exc:
        raise DataError(f"{where}: not a valid gzip stream ({exc})") from None
    if fed:
        raise DataError(f"{where}: the gzip stream is cut short")


class Skipped(NamedTuple):
    """A line of a gzip member left compressed (:func:`iter_lines_skipping`): its digest and size,
    as the one who wrote the member recorded them."""

    digest: bytes
    size: int


class Member(NamedTuple):
    """A gzip member a reader may leave compressed: where it is in the file, its size, the SHA-256
    of its compressed bytes, and its lines' digests and sizes, in order, as its writer recorded them."""

    offset: int
    size: int
    sha256: bytes
    lines: Sequence[tuple[bytes, int]]


def iter_lines(fh: IO[bytes], where: str, max_line: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a gzip stream of JSON lines, split on ``\\n`` only (a message may
    hold U+2028); a line longer than ``max_line`` bytes is a DataError naming it, and so are more
    than ``MAX_BLANK_LINES`` blank lines."""
    for n, line in _split(_decompressed(fh, where), where, max_line):
        assert isinstance(line, bytes)
        yield n, line


def iter_lines_skipping(data: bytes, where: str, max_line: int, members: Sequence[Member]) -> Iterator[tuple[int, bytes | Skipped]]:
    """:func:`iter_lines` of a file's bytes, but that each of ``members`` (their writer's record
    of them, hostile as the cache it is kept in) whose bytes are there, at its offset, with its
    SHA-256, is not decompressed: its lines come as :class:`Skipped` (their digest and size, as
    recorded), numbered as they would be. Any other member is read as ``iter_lines`` reads it; a
    stream that does not end where a member left compressed begins (a line or a member cut
    there: no file errcat wrote) is a DataError."""
    found: list[Member] = []
    at = 0
    for member in sorted(members, key=lambda m: m.offset):
        if member.offset >= at and member.size > 0 and member.offset + member.size <= len(data):
            if hashlib.sha256(memoryview(data)[member.offset : member.offset + member.size]).digest() == member.sha256:
                found.append(member)
                at = member.offset + member.size
    return _split(_pieces_skipping(data, where, found), where, max_line)


def _pieces_skipping(data: bytes, where: str, members: Sequence[Member]) -> Iterator[bytes | Sequence[Skipped]]:
    """The decompressed bytes of ``data`` but ``members`` (found at their offsets), each of those
    as its lines (:class:`Skipped`) in its place."""
    import io

    spent = [0]
    at = 0
    for member in members:
        if member.offset > at:
            yield from _decompressed(io.BytesIO(data[at : member.offset]), where, spent)
        spent[0] += sum(size for _, size in member.lines)
        if spent[0] > MAX_TOTAL_BYTES:
            raise DataError(f"{where}: decompresses to more than {MAX_TOTAL_BYTES} bytes")
        yield [Skipped(digest, size) for digest, size in member.lines]
        at = member.offset + member.size
    if at < len(data) or not members:
        yield from _decompressed(io.BytesIO(data[at:]), where, spent)


def _split(pieces: Iterable[bytes | Sequence[Skipped]], where: str, max_line: int) -> Iterator[tuple[int, bytes | Skipped]]:
    """The lines of decompressed pieces (see :func:`iter_lines`), and of lines left compressed
    (:class:`Skipped`, each a line of its own: what comes before them must end with a line)."""
    # The pieces of the line not yet ended, joined once its newline comes: adding each piece to
    # one bytes object would copy the line so far each time (a 256 MiB line took 26 s).
    parts: list[bytes] = []
    size = 0
    n = 0
    blank = 0
    for out in pieces:
        if not isinstance(out, bytes):
            if size:
                raise DataError(f"{where}:{n + 1}: a line cut short where a gzip member begins")
            for skipped in out:
                n += 1
                yield n, skipped
            continue
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
