"""Write a dataset (or any tree of files: ``errcat render``'s site) so that a failed or interrupted
run never damages the last good one.

Layout of ``<out>/<owner>/<name>/``::

    manifest.json      what was crawled, counts, skipped files with reasons, versions, digests
    index.json         one summary row per entry
    errors/<id>.json   one full record per entry (the /api/errors/<id> payload)
    errors.jsonl.gz    every record, one per line, gzip-compressed (``jsonl``)

and the documents the caller makes (search.json, foreign.json): ``base.dataset_files`` holds the
table of them all, and the writer refuses a further document the table does not name.

``render_dataset`` turns records into the bytes of every file and checks each document against
the JSON Schemas; nothing touches the disk unless all of it is valid. ``write_dataset`` writes
into a fresh hidden sibling directory and only then swaps it in: exchange the two in one atomic
``renameat2(RENAME_EXCHANGE)`` where Linux offers it (else: rename the old dataset aside, rename
the new one in), delete the old. A run killed before the swap leaves a stray temporary
directory (removed by the next run) and the old dataset as it was; one killed between the two
renames is repaired by the next run, which puts the old dataset back before anything else.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import gc
import glob
import hashlib
import os
import queue
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Container, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import orjson

from crawler.base.dataset_files import AGGREGATES, BY_NAME, ERRORS, INDEX, MANIFEST, ROW_DOCUMENTS, SUPPLIED, record_file, record_id_of
from crawler.base.errors import DataError, OutputError
from crawler.base.files import TMP_MARK, mkdirs
from crawler.base.jsonio import (
    KnownRow,
    RawRow,
    Rows,
    dumps,
    dumps_line,
    dumps_record,
    dumps_row,
    dumps_rows,
    known_row,
    raw_row,
    rows_pieces,
)
from crawler.extract.ids import check_id
from crawler.model.kinds import exception_word
from crawler.model.records import SCHEMA_VERSION, Manifest
from crawler.model.shapes import RecordData
from crawler.publish import forked, jsonl
from crawler.publish.record_memo import Identity, identity
from crawler.publish.validate import Problem, check

OLD_MARK = ".old-"


def index_for(records: Sequence[RecordData], repo: str, commit: str) -> dict[str, Any]:
    """index.json as one document (:func:`index_rows` makes it a row at a time, as it is written)."""
    return {"schema_version": SCHEMA_VERSION, "repo": repo, "commit": commit, "entries": [index_row(r) for r in records]}


def index_row(r: RecordData) -> dict[str, Any]:
    """The row of index.json of one record."""
    return {
        "id": r["id"],
        "title": r["title"],
        "exception": exception_word(r),
        "kind": r["kind"],
        "template": r["message"]["text"],
        "path": r["location"]["path"],
        "line": r["location"]["line"],
        "sites": len(r["sites"]),
        "explanation_status": r["explanation_status"],
        "retired": bool((r.get("history") or {}).get("retired")),
    }


def index_rows(
    records: Sequence[RecordData],
    repo: str,
    commit: str,
    carried: Mapping[str, bytes] | None = None,
    known: Mapping[str, bytes] | None = None,
    written: dict[str, bytes] | None = None,
) -> Rows:
    """index.json as its rows, made one at a time as the writer reads them (``jsonio.Rows``);
    ``carried``: the rows of records carried through as they were written (their bytes, by id);
    ``known``: rows this errcat made for the same inputs (``publish.row_bytes``), by id, taken as
    they are; ``written``: filled with each row's bytes as written, by id."""
    head = {"schema_version": SCHEMA_VERSION, "repo": repo, "commit": commit}
    if not carried and not known:
        return Rows(head, lambda: map(index_row, records), written)
    held, kept = carried or {}, known or {}

    def rows() -> Iterator[Any]:
        for r in records:
            rid = r["id"]
            if (same := kept.get(rid)) is not None:
                yield known_row(same, rid)
            elif (old := held.get(rid)) is not None:
                yield raw_row(old, rid)
            else:
                yield index_row(r)

    return Rows(head, rows, written)


def _index(records: Sequence[RecordData], manifest: Manifest, reuse: Reuse | None) -> Rows:
    """:func:`index_rows` of a dataset's records with what ``reuse`` carries, knows and takes back."""
    if reuse is None:
        return index_rows(records, f"{manifest.repo.owner}/{manifest.repo.name}", manifest.commit)
    return index_rows(records, f"{manifest.repo.owner}/{manifest.repo.name}", manifest.commit, reuse.index_rows, reuse.known_index_rows, reuse.index_written)


def content_digest(files: dict[str, bytes], known: Mapping[str, bytes] | None = None) -> str:
    """SHA-256 over every file of a dataset: relative path and content digest, in path order.

    The manifest counts as itself without its ``content_digest`` field (re-serialized the one
    deterministic way), so an edit to any file, the manifest included, changes the digest.
    ``known``: the SHA-256 of files not in ``files``, by relative path (``record_memo.vouched``).
    """
    digests = {rel: hashlib.sha256(data).digest() for rel, data in files.items() if rel != MANIFEST}
    if known:
        digests.update((rel, digest) for rel, digest in known.items() if rel != MANIFEST)
    if MANIFEST in files:
        try:
            manifest = orjson.loads(files[MANIFEST])
            manifest.pop("content_digest")
            digests[MANIFEST] = _manifest_digest(manifest, MANIFEST)
        except (ValueError, TypeError, AttributeError, KeyError):
            digests[MANIFEST] = b"unreadable"
    return _digest_of(digests)


def _manifest_digest(document: dict[str, Any], name: str) -> bytes:
    return hashlib.sha256(_dumps(dumps, document, name)).digest()


def _digest_of(digests: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(digests):
        h.update(rel.encode() + b"\0" + digests[rel])
    return h.hexdigest()


def read_dataset(directory: Path, skip: Container[str] = ()) -> dict[str, bytes]:
    """Every regular file of a written dataset by relative path (what ``content_digest`` hashes),
    but those ``skip`` names.

    ``os.scandir`` rather than ``Path.rglob``: half the time on vLLM's 8,000 files, which is
    most of an up-to-date crawl. Symlinks are not followed (nor are they part of a dataset).
    """
    files: dict[str, bytes] = {}
    for rel, entry in dataset_entries(directory):
        if rel not in skip:
            with open(entry.path, "rb") as fh:
                files[rel] = fh.read()
    return files


def dataset_entries(directory: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(relative path, directory entry) of every regular file under ``directory``, as
    :func:`read_dataset` reads them (symlinks not followed)."""
    root = len(str(directory)) + 1
    stack = [str(directory)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    yield entry.path[root:].replace(os.sep, "/"), entry


@contextmanager
def dataset_lock(target: Path) -> Iterator[None]:
    """Hold an flock on the dataset's parent directory (``<out>/<owner>/``): one process at a
    time may repair, write or swap a dataset there, so a second crawl never takes the first
    one's temporary directory for a stray. Locking the directory leaves no lock file behind in
    a published catalogue."""
    mkdirs(target.parent)
    fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def recover(target: Path) -> None:
    """Undo the traces of an interrupted run next to ``target``."""
    parent = target.parent
    if not parent.is_dir():
        return
    name = glob.escape(target.name)  # a name with [ or * must not take another tree's traces for its own
    olds = sorted(parent.glob(f".{name}{OLD_MARK}*"))
    if olds and not target.exists():
        os.replace(olds[-1], target)
        olds = olds[:-1]
    for stray in [*olds, *parent.glob(f".{name}{TMP_MARK}*")]:
        shutil.rmtree(stray, ignore_errors=True)


def _fail(problems: list[Problem]) -> DataError:
    listing = "\n".join(f"  {p}" for p in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    return DataError(f"{len(problems)} schema problem(s); nothing was written:\n{listing}{more}")


def _dumps(fn: Callable[[Any], bytes], document: Any, name: str) -> bytes:
    """Serialize one document; data JSON cannot carry (a lone surrogate) is a DataError, not a crash."""
    try:
        return fn(document)
    except TypeError as e:  # orjson.JSONEncodeError
        raise DataError(f"{name}: not serializable as JSON ({e}); nothing was written") from None


#: Further documents of a dataset: file name -> document (its schema is the table's: ``base.dataset_files``).
Extra = dict[str, Any]

#: What a fill of a temporary directory hands back through :func:`_swap_in`.
T = TypeVar("T")


class Published(NamedTuple):
    """What :func:`publish` wrote: the dataset's directory and its completed manifest."""

    target: Path
    manifest: Manifest


class OverLimit(Exception):
    """Files of the dataset would be larger than ``limit`` bytes. Raised after rendering and before
    anything is swapped in (the temporary directory is removed), so the caller can leave entries
    out and render again; ``files`` names each file over the limit with its size, ``lines`` holds
    every record's errors.jsonl.gz line (uncompressed) by id."""

    def __init__(self, limit: int, files: dict[str, int], lines: dict[str, int]) -> None:
        self.limit, self.files, self.lines = limit, files, lines
        super().__init__(", ".join(f"{name} would be {size} bytes" for name, size in sorted(files.items())) + f", over the limit of {limit}")

    def shares(self) -> list[tuple[str, int, dict[str, float]]]:
        """Per file over the limit: by how many bytes, and each record's share of the file."""
        out = []
        total = sum(self.lines.values()) or 1
        for name, size in sorted(self.files.items()):
            rid = record_id_of(name)
            if rid is not None:
                weights = {rid: float(size)}
            elif name in AGGREGATES:  # each record's share taken as proportional to its errors.jsonl line
                weights = {rid: line * size / total for rid, line in self.lines.items()}
            else:  # the manifest: no record to leave out
                weights = {}
            out.append((name, size - self.limit, weights))
        return out


def _check_sizes(limit: int | None, sizes: dict[str, int], ids: list[str], lines: Sequence[int]) -> None:
    """Raise OverLimit when any file's size is over ``limit`` (None: no limit); ``lines``: the
    size of each record's errors.jsonl line."""
    if limit is None:
        return
    over = {name: size for name, size in sizes.items() if size > limit}
    if over:
        raise OverLimit(limit, over, dict(zip(ids, lines, strict=True)))


def render_files(
    records: Sequence[RecordData],
    manifest: Manifest,
    extra: Extra | None = None,
    max_bytes: int | None = None,
    reuse: Reuse | None = None,
    jobs: int = 1,
    pieces: bool = False,
) -> Iterator[tuple[str, Data]]:
    """Every file of the dataset as (relative path, bytes), the manifest last.

    Each document is checked against its schema as it goes; when anything was invalid, the
    generator raises DataError at the end, before yielding the manifest, listing every problem
    (the writer then throws the half-written temporary directory away); likewise OverLimit when
    a file would be larger than ``max_bytes``. ``manifest`` is completed with the content digest.
    ``extra`` maps further file names to (schema name, document). ``reuse`` and ``jobs``: as
    :func:`render_dataset`'s (every file is yielded). ``pieces``: the whole-dataset files
    (index.json, search.json, errors.jsonl.gz) as :class:`Pieces`, made as the consumer reads
    them (which it does before it asks for the next file), rather than as bytes.
    """
    if reuse is not None:
        reuse.linked.clear()
    yield from _render(records, manifest, extra, max_bytes, reuse, jobs, pieces)


class Pieces:
    """A file's bytes as pieces made one after another as they are read (each once): a
    whole-dataset file of a history of every release is tens of MB, which a writer that writes
    each piece as it comes never holds. Its SHA-256 and size are known once it is read to its end."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self._pieces = iter(pieces)
        self._hash = hashlib.sha256()
        self.size = 0
        self.read = False

    def __iter__(self) -> Iterator[bytes]:
        for piece in self._pieces:
            self._hash.update(piece)
            self.size += len(piece)
            yield piece
        self.read = True

    def digest(self) -> bytes:
        if not self.read:
            raise RuntimeError("a file's pieces were not all read before the next file was asked for")
        return self._hash.digest()


#: A file's content as the renderer hands it on: its bytes, or its :class:`Pieces`.
Data = bytes | Pieces


def joined(data: Data) -> bytes:
    """A file's bytes, its pieces joined."""
    return data if isinstance(data, bytes) else b"".join(data)


def _render(
    records: Sequence[RecordData],
    manifest: Manifest,
    extra: Extra | None,
    max_bytes: int | None,
    reuse: Reuse | None = None,
    jobs: int = 1,
    pieces: bool = False,
) -> Generator[tuple[str, Data], None, Manifest]:
    """:func:`render_files`, returning the completed manifest once the last file is yielded
    (``jobs``: threads compressing errors.jsonl.gz, which changes none of its bytes)."""
    _check_ids(records)
    problems: list[Problem] = []
    digests: dict[str, bytes] = {}
    sizes: dict[str, int] = {}

    def emit(rel: str, data: bytes, digest: bytes | None = None, size: int = 0) -> tuple[str, bytes]:
        if rel in digests:
            raise DataError(f"two files named {rel}; nothing was written")
        digests[rel] = hashlib.sha256(data).digest() if digest is None else digest
        sizes[rel] = len(data) if digest is None else size
        return rel, data

    def read(rel: str, data: Pieces) -> None:
        """A file handed on as pieces, read by now: its digest and size."""
        if rel in digests:
            raise DataError(f"two files named {rel}; nothing was written")
        digests[rel], sizes[rel] = data.digest(), data.size

    index = _index(records, manifest, reuse)
    for name, (schema, document) in _documents(index, extra).items():
        if pieces and isinstance(document, Rows):
            made, found = _document_pieces(name, schema, document)
            yield name, made
            read(name, made)
            problems += sorted(found)  # complete once every row was made
            continue
        data, found = _document(name, schema, document)
        problems += found
        yield emit(name, data)
        del data  # written: not held while the next is made
    lines: list[bytes | None] = []
    line_sizes: list[int] = []
    line_digests = {}
    gone: list[bool] = []
    for record in records:
        done = _render_record(record, reuse)
        problems += done.problems
        item = emit(done.rel, done.data or b"", done.digest, done.size)
        if done.data is not None and (reuse is None or done.rel not in reuse.linked):
            yield item
        lines.append(done.line)
        line_sizes.append(done.line_size)
        line_digests[record["id"]] = done.line_digest
        gone.append(is_retired(record))
    # the live records' lines, then the retired ones' (``jsonl.in_file_order``)
    order, cut = jsonl.in_file_order(gone)
    make = _line_maker(records, reuse)
    in_order = [r["id"] for r in records]
    ids = [in_order[i] for i in order]
    lines = [lines[i] for i in order]
    previous = reuse.members if reuse is not None else None
    if pieces:
        # each member written as it is taken or made, none held; its size checked once written
        # (the temporary directory is thrown away when it is over the limit, as for any file)
        layout: list[tuple[bytes, int, int]] = []
        members = Pieces(jsonl.iter_members(ids, lines, previous, [line_digests[rid] for rid in ids], lambda k: make(order[k]), layout, cut))
        yield jsonl.NAME, members
        read(jsonl.NAME, members)
        _check_sizes(max_bytes, sizes, in_order, line_sizes)
    else:
        packed, layout = jsonl.pack_members(ids, lines, jobs, previous, [line_digests[rid] for rid in ids], lambda k: make(order[k]), cut)
        sizes[jsonl.NAME] = len(packed)
        _check_sizes(max_bytes, sizes, in_order, line_sizes)
        yield emit(jsonl.NAME, packed)
        del packed
    data, completed = _finish_manifest(manifest, digests, problems, max_bytes)
    if reuse is not None:
        _report(reuse, digests, line_digests, layout, ids, cut)
    yield MANIFEST, data
    return completed


def is_retired(record: RecordData) -> bool:
    """Whether a record is a retired one (a history's), whose line goes in errors.jsonl.gz's retired part."""
    return bool((record.get("history") or {}).get("retired"))


def _report(
    reuse: Reuse, digests: dict[str, bytes], line_digests: dict[str, bytes], layout: list[tuple[bytes, int, int]], ids: Sequence[str] = (), cut: int = 0
) -> None:
    """Hand back what the record memo keeps of the files written (see :class:`Reuse`)."""
    reuse.digests.update(digests)
    if reuse.line_digests is not None:
        reuse.line_digests.update(line_digests)
    if reuse.layout is not None:
        reuse.layout[:] = [(digests[jsonl.NAME], layout)]
    if reuse.retired_members is not None:
        reuse.retired_members[:] = [
            (at, size, [line_digests[rid] for rid in ids[start:end]])
            for (start, end), (_, at, size) in zip(jsonl.spans(ids, cut), layout, strict=True)
            if start >= cut
        ]


def _documents(index: Rows, extra: Extra | None) -> dict[str, tuple[str, Any]]:
    """index.json and the caller's further documents, by name: each one the table of a dataset's
    files has its caller make (``dataset_files.SUPPLIED``), with the table's schema."""
    for name in extra or {}:
        if name not in SUPPLIED:
            what = "the writer's own" if name in BY_NAME else "not a file of a dataset (base.dataset_files)"
            raise DataError(f"a further document named {name}: {what}; nothing was written")
    return {INDEX: (BY_NAME[INDEX].schema, index), **{name: (BY_NAME[name].schema, document) for name, document in (extra or {}).items()}}


def _writer_for(name: str) -> Callable[[Any], bytes]:
    return dumps_rows if name in ROW_DOCUMENTS else dumps


#: The rows of a row document validated together (``_document``): any number checks the same.
_ROW_BATCH = 256


def _document(name: str, schema: str, document: Any) -> tuple[bytes, list[Problem]]:
    """One document's bytes and its schema problems, those of the whole document in its order. A
    row document given as its rows (``jsonio.Rows``) is validated and serialized a batch of rows at
    a time as they are made: its head alone, then each batch in a document of its own (the
    schemas put no constraint on ``entries`` as a whole, only on each row), its problems' pointers
    numbered as in the whole document; so no list of its rows, nor the whole document, is ever
    held, but its bytes."""
    if not isinstance(document, Rows):
        return _dumps(_writer_for(name), document, name), check(schema, document, name, engine="fast")
    problems: list[Problem] = []
    data = b"".join(_row_bytes(name, schema, document, problems))
    return data, sorted(problems)


def _document_pieces(name: str, schema: str, document: Rows) -> tuple[Pieces, list[Problem]]:
    """:func:`_document` of a row document as its :class:`Pieces`: its bytes are made as they are
    read, and its problems (unsorted) are complete once they are all read."""
    problems: list[Problem] = []
    return Pieces(_row_bytes(name, schema, document, problems)), problems


def _row_bytes(name: str, schema: str, document: Rows, problems: list[Problem]) -> Iterator[bytes]:
    """The bytes of a row document (see :func:`_document`) in pieces (``jsonio.rows_pieces``), its
    schema problems added to ``problems`` as its rows are checked, a batch at a time."""
    head = {k: v for k, v in document.head.items() if k != "entries"}
    problems += check(schema, {**head, "entries": []}, name, engine="fast")

    def batches() -> Iterator[list[Any]]:
        batch: list[Any] = []
        for row in document.rows():
            batch.append(row)
            if len(batch) == _ROW_BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    written = document.written

    def rows() -> Iterator[bytes]:
        start = 0
        for batch in batches():
            # a row given as its bytes (``jsonio.RawRow``: read back from a cache, so hostile) is
            # parsed, held to its entry's id and validated like any other, then written anew; a
            # ``KnownRow`` (this errcat's, made for the same inputs: ``publish.row_bytes``) is
            # written as it is
            at = [n for n, row in enumerate(batch) if not isinstance(row, KnownRow)]
            checked = [_raw_row(row, name, start + n, problems) if isinstance(row, RawRow) else row for n, row in ((n, batch[n]) for n in at)]
            for problem in check(schema, {**head, "entries": checked}, name, engine="fast") if checked else ():
                if problem.pointer.startswith("/entries/"):  # (the head's are the head's own, checked above)
                    _, _, n, *rest = problem.pointer.split("/", 3)
                    problems.append(Problem(problem.file, "/".join(["", "entries", str(start + at[int(n)]), *rest]), problem.message))
            made = iter(checked)
            for row in batch:
                if isinstance(row, KnownRow):
                    data: bytes = row
                else:
                    row = next(made)
                    data = _dumps(dumps_row, row, name)
                if written is not None:
                    rid = row.id if isinstance(row, KnownRow) else row.get("id") if isinstance(row, dict) else None
                    if isinstance(rid, str):
                        written[rid] = data
                yield data
            start += len(batch)

    return rows_pieces(head, rows())


def _raw_row(row: RawRow, name: str, n: int, problems: list[Problem]) -> Any:
    """A row given as bytes (``versions.carried``'s memo) as data, or a problem when it is no JSON
    object of its own entry's id (the schema check then refuses what is left of it too)."""
    try:
        data = orjson.loads(bytes(row))  # (orjson takes no subclass of bytes)
    except orjson.JSONDecodeError:
        problems.append(Problem(name, f"/entries/{n}", "a carried row that is not JSON"))
        return None
    if not isinstance(data, dict) or data.get("id") != row.id:
        problems.append(Problem(name, f"/entries/{n}", f"a carried row that is not the row of entry {row.id}"))
    return data


def _check_ids(records: Sequence[RecordData]) -> None:
    """Ids become file names: nothing but 16 hex digits passes, and no two records share one.
    Checked before anything is rendered or forked."""
    seen: set[str] = set()
    for record in records:
        try:
            check_id(record["id"])
        except ValueError as e:
            raise DataError(f"{e}; nothing was written") from None
        if record["id"] in seen:
            raise DataError(f"two records with id {record['id']}; nothing was written")
        seen.add(record["id"])


class Reuse(NamedTuple):
    """What a crawl takes over from the dataset it replaces (see ``publish.pins``): the bytes of
    each record it kept unchanged (by id), the digests of record files this errcat has validated
    against the record schema before (``validated.load``), and the files already in
    place in the directory being written (by relative path) and the digest of every file written
    (by relative path), both filled in by the writer."""

    kept: Mapping[str, bytes]
    validated: frozenset[bytes]
    linked: set[str]
    digests: dict[str, bytes]
    #: The gzip members of the errors.jsonl.gz in place, by their key (``jsonl.member_digest``)
    #: (``jsonl.pack``'s ``previous``).
    members: Mapping[bytes, bytes]
    #: Records kept whose bytes are not at hand (the record memo vouched for the file): by id, the
    #: SHA-256 of the file and its size. Their file is linked, or else serialized again.
    vouched: Mapping[str, tuple[bytes, int]] = {}
    #: By id, a record's errors.jsonl line and its SHA-256, made already (``pins.Pinned.lines``);
    #: a line not kept (None) is made again only for a gzip member compressed anew, and its size
    #: is in ``line_sizes``.
    lines: Mapping[str, tuple[bytes | None, bytes]] = {}
    #: Filled in by the writer when given: by id, the SHA-256 of each record's errors.jsonl line;
    #: and errors.jsonl.gz's SHA-256 and its members (``jsonl.pack_members``), for the record memo.
    line_digests: dict[str, bytes] | None = None
    layout: list[tuple[bytes, list[tuple[bytes, int, int]]]] | None = None
    #: By id, the size of each line ``lines`` holds as None (``pins.Pinned.sizes``).
    line_sizes: Mapping[str, int] = {}
    #: By id, the SHA-256 of ``kept``'s bytes where the caller hashed them already (a history's
    #: completed record files, ``history_reuse.vouched``): not hashed a second time.
    kept_digests: Mapping[str, bytes] = {}
    #: The SHA-256 (``jsonl.line_digest``) of errors.jsonl lines found valid against this record
    #: schema as they were read (``dataset.iter_record_data``: a sync's dataset in place): a record
    #: whose line is one of them is that very JSON, and is not validated again.
    valid_lines: frozenset[bytes] = frozenset()
    #: By id, the index.json row of a record carried through as it was written (``versions.carried``):
    #: its bytes, taken as they are.
    index_rows: Mapping[str, bytes] = {}
    #: The errors.jsonl line of a record carried through that was not read, by id (None for any
    #: other): read from the dataset in place only for a gzip member compressed anew.
    line_of: Callable[[str], bytes | None] | None = None
    #: By id, the SHA-256 and size of a record file carried through in place (``versions.carried``:
    #: its bytes hashed as they were read, not held): not rendered nor yielded, only named in the
    #: manifest's digest; its writer links the file in place (or reads it again).
    in_place: Mapping[str, tuple[bytes, int]] = {}
    #: Filled in by the writer when given: the gzip members of errors.jsonl.gz's retired part
    #: (``jsonl.in_file_order``), each as its offset, its size and its lines' digests in order.
    retired_members: list[tuple[int, int, list[bytes]]] | None = None
    #: A record as it is written, when the caller left some pinned elsewhere than they hold
    #: (``pins.pinned_at``): asked for wherever the writer serializes or validates a record.
    pinned_at: Callable[[RecordData], RecordData] | None = None
    #: By id, the index.json row of a record this errcat made for the same inputs (``publish.row_bytes``):
    #: its bytes, taken as they are (neither parsed nor validated again).
    known_index_rows: Mapping[str, bytes] = {}
    #: Filled in by the writer when given: by id, each index.json row's bytes as written.
    index_written: dict[str, bytes] | None = None


def _as_written(record: RecordData, reuse: Reuse | None) -> RecordData:
    return reuse.pinned_at(record) if reuse is not None and reuse.pinned_at is not None else record


class _Rendered(NamedTuple):
    """One record rendered: its file's name, bytes (None: linked, not written), digest and size,
    its errors.jsonl line (None: made already and not kept, see ``Reuse.lines``), that line's
    digest and size, and its schema problems."""

    rel: str
    data: bytes | None
    digest: bytes
    size: int
    line: bytes | None
    line_digest: bytes
    problems: list[Problem]
    line_size: int


def _render_record(record: RecordData, reuse: Reuse | None = None) -> _Rendered:
    """A record rendered (its id is checked already, see :func:`_check_ids`).

    A record kept from the previous dataset is not serialized again: its bytes are the previous
    file's, which ``pins`` found equal to this serialization, and when its file is linked and the
    memo vouched for it, its digest stands for them. No record, kept or made, is validated again
    when this errcat has validated those very bytes against this record schema before (their
    digest is in ``reuse.validated``, or its line's in ``reuse.valid_lines``): validation is a
    function of the bytes and the schema alone."""
    rid = record["id"]
    rel = record_file(rid)
    data: bytes | None = None
    digest: bytes | None = None
    size = 0
    made: tuple[bytes | None, bytes] | None = None
    if reuse is not None:
        data = reuse.kept.get(rid)
        if data is None and rel in reuse.linked and rid in reuse.vouched:
            digest, size = reuse.vouched[rid]
        elif data is None and rid in reuse.in_place:
            digest, size = reuse.in_place[rid]
        made = reuse.lines.get(rid)
    if digest is None:
        if data is None:
            record = _as_written(record, reuse)
            data = _dumps(dumps_record, record, rel)
        elif reuse is not None:
            digest = reuse.kept_digests.get(rid)
        digest, size = digest or hashlib.sha256(data).digest(), len(data)
    if made is None:
        record = _as_written(record, reuse)
        line = _dumps(dumps_line, record, rel)
        made = line, jsonl.line_digest(line)
    if reuse is not None and ((reuse.validated and digest in reuse.validated) or made[1] in reuse.valid_lines):
        found: list[Problem] = []
    else:
        found = check("record", _as_written(record, reuse), rel, engine="fast")
    line_size = len(made[0]) if made[0] is not None else reuse.line_sizes[rid] if reuse is not None else 0
    return _Rendered(rel, data, digest, size, made[0], made[1], found, line_size)


def _line_maker(records: Sequence[RecordData], reuse: Reuse | None = None) -> Callable[[int], bytes]:
    """The errors.jsonl line of ``records[i]``, for a line the caller did not keep (see ``Reuse.lines``):
    a record carried through that was not read, its line as it is (``Reuse.line_of``)."""
    line_of = reuse.line_of if reuse is not None else None

    def make(i: int) -> bytes:
        record = records[i]
        line = line_of(record["id"]) if line_of is not None else None
        return line if line is not None else _dumps(dumps_line, _as_written(record, reuse), record_file(record["id"]))

    return make


def _finish_manifest(manifest: Manifest, digests: dict[str, bytes], problems: list[Problem], max_bytes: int | None) -> tuple[bytes, Manifest]:
    """(bytes, document) of the manifest with the content digest of every other file; raises
    DataError listing every problem found in the dataset when there is any."""
    document = manifest_document(manifest)
    document["content_digest"] = _digest_of({**digests, MANIFEST: _manifest_digest(document, MANIFEST)})
    problems = problems + check("manifest", document, MANIFEST, engine="fast")
    if problems:
        raise _fail(problems)
    data = _dumps(dumps, document, MANIFEST)
    _check_sizes(max_bytes, {MANIFEST: len(data)}, [], [])
    return data, manifest.model_copy(update={"content_digest": document["content_digest"]})


def manifest_document(manifest: Manifest) -> dict[str, Any]:
    """The manifest as manifest.json holds it, less its content digest. Of the counts, only those
    its maker set: ``retired`` and ``omitted`` are a history's, and a crawl's manifest has none.
    ``release`` only when the dataset is of a released package: a git dataset's has none to name."""
    document = manifest.model_dump(mode="json", exclude={"content_digest"} | ({"release"} if manifest.release is None else set()))
    document["counts"] = manifest.counts.model_dump(mode="json", exclude_unset=True)
    return document


def render_dataset(
    records: Sequence[RecordData], manifest: Manifest, extra: Extra | None = None, max_bytes: int | None = None, reuse: Reuse | None = None, jobs: int = 1
) -> dict[str, bytes]:
    """Every file of the dataset as bytes, by relative path; raises DataError if anything is
    invalid, OverLimit if any file would be larger than ``max_bytes``. ``reuse``: see
    :class:`Reuse` (nothing is linked here: every file is returned); ``jobs``: see ``_render``."""
    if reuse is not None:
        reuse.linked.clear()
    return {rel: joined(data) for rel, data in _render(records, manifest, extra, max_bytes, reuse, jobs)}  # (bytes: no pieces asked for)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: Any = None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically (Linux ``renameat2(RENAME_EXCHANGE)``).

    False when the platform or file system cannot, so the caller falls back to two renames
    (a kill between them leaves an ``.old-`` sibling that :func:`recover` puts back).
    """
    global _renameat2
    if _renameat2 is None:
        try:
            import ctypes

            _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
            _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        except (OSError, AttributeError, ImportError):
            _renameat2 = False
    if not _renameat2:
        return False
    import ctypes

    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _put(path: str, data: Data) -> None:
    """Write one file of the dataset being made (``data``: its bytes, or its :class:`Pieces`,
    each written as it is made). A file already there (one of a recycled
    dataset's, see :func:`_write_swap`) is rewritten in place, over its own blocks, but only when
    it is a plain file with no other link; anything else in its place (a symlink, a hard link to
    someone's ``cp -al`` copy of an old dataset, a FIFO, a directory) is removed and a new file
    made, never written through."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError:
        fd = -1
    st: os.stat_result | None = None
    if fd >= 0:
        st = os.fstat(fd)
        if st.st_nlink != 1 or not stat.S_ISREG(st.st_mode):
            os.close(fd)
            fd = -1
    if fd < 0:
        _remove(path)
        fd = os.open(path, flags | os.O_EXCL, 0o666)
        st = None
    try:
        size = 0
        for piece in (data,) if isinstance(data, bytes) else data:
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view) :]
            size += len(piece)
        if st is not None and st.st_size > size:
            os.ftruncate(fd, size)
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    """Whatever is at ``path``, gone (a directory with everything in it; symlinks not followed)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _write_all(tmp: Path, items: Iterable[tuple[str, Data]]) -> set[str]:
    """The names :func:`_write_rendered` wrote of plain (path, bytes) items."""
    return _write_rendered(tmp, _plain(items))[0]


def _plain(items: Iterable[tuple[str, Data]]) -> Generator[tuple[str, Data], None, None]:
    yield from items


def _write_rendered(tmp: Path, items: Generator[tuple[str, Data], None, T]) -> tuple[set[str], T]:
    """Write (path, bytes) items under tmp from one writer thread, so the kernel's work on the
    files overlaps the rendering that produces them (a generator, on this thread): the names
    written, and what the generator returned. A file given as :class:`Pieces` is written here,
    on this thread, as its pieces are made (before the generator is asked for the next file)."""
    pending: queue.Queue[tuple[str, bytes] | None] = queue.Queue(maxsize=512)
    failed: list[BaseException] = []
    written: set[str] = set()

    def writer() -> None:
        made: set[str] = set()
        while (item := pending.get()) is not None:
            if failed:
                continue  # drain after a failure, so the producer never blocks
            rel, data = item
            try:
                parent = rel.rpartition("/")[0]
                if parent and parent not in made:
                    (tmp / parent).mkdir(parents=True, exist_ok=True)
                    made.add(parent)
                _put(f"{tmp}/{rel}", data)
            except BaseException as e:  # noqa: BLE001 - handed to the producer below
                failed.append(e)

    thread = threading.Thread(target=writer, name="errcat-writer", daemon=True)
    thread.start()
    try:
        while not failed:
            try:
                item = next(items)
            except StopIteration as done:
                returned: T = done.value
                break
            if not _inside(item[0]):
                raise DataError(f"refusing to write {item[0]!r}: not a plain relative path; nothing was written")
            written.add(item[0])
            rel, data = item
            if isinstance(data, Pieces):
                parent = rel.rpartition("/")[0]
                if parent:
                    (tmp / parent).mkdir(parents=True, exist_ok=True)
                _put(f"{tmp}/{rel}", data)
                continue
            pending.put((rel, data))
    finally:
        pending.put(None)
        thread.join()
    if failed:
        raise failed[0]
    return written, returned


def _inside(rel: str) -> bool:
    """A relative path that stays inside the tree it is written into (names come from data)."""
    return all(part not in ("", ".", "..") for part in rel.split("/")) and "\0" not in rel


def write_dataset(
    target: Path, files: Mapping[str, bytes] | Iterable[tuple[str, Data]], spare_root: Path | None = None, links: Mapping[str, Identity] | None = None
) -> Path:
    """Write ``files`` (a mapping, or (path, bytes) pairs such as :func:`render_files` yields) into
    a temporary sibling of ``target``, then swap it in; on any failure the sibling is removed.
    With ``spare_root``, see :func:`_swap_in`. ``links``: the records (by id) whose files in
    ``target`` (of that identity each, ``record_memo.identity``) hold the bytes to write, linked instead (:func:`_link_kept`)."""
    items = files.items() if isinstance(files, Mapping) else files
    if not links:
        return write_tree(target, items, spare_root=spare_root)

    def fill(tmp: Path) -> tuple[set[str], Path]:
        linked = _link_kept(tmp, target, links)
        # a mapping's value is asked for only when it is written (``sync``'s files in place are read then)
        rest = (
            ((rel, files[rel]) for rel in files if rel not in linked)
            if isinstance(files, Mapping)
            else ((rel, data) for rel, data in items if rel not in linked)
        )
        return _write_all(tmp, rest) | linked, target

    return _write_swap(target, fill, spare_root)


def write_tree(
    target: Path,
    items: Iterable[tuple[str, Data]],
    *,
    what: str = "dataset",
    spare_root: Path | None = None,
    may_replace: Callable[[Path], None] | None = None,
) -> Path:
    """Make ``target`` hold exactly ``items`` ((relative path, bytes) pairs, possibly a generator),
    the way a dataset is written: into a hidden sibling, swapped in whole, so a reader sees the
    previous tree or the complete new one; nothing of the previous one survives (a file no longer
    made, a symlink planted in it). A path that would leave the tree is refused. ``may_replace``
    runs under the lock, before anything is written, and raises to refuse replacing what
    ``target`` is; ``what`` names the tree in the one-line error. ``spare_root``: see :func:`_swap_in`."""
    return _write_swap(target, lambda tmp: (_write_all(tmp, items), target), spare_root, what, may_replace)


def _write_swap(
    target: Path,
    fill: Callable[[Path], tuple[set[str], T]],
    spare_root: Path | None = None,
    what: str = "dataset",
    may_replace: Callable[[Path], None] | None = None,
    adopt: Callable[[Path], bool] | None = None,
) -> T:
    """:func:`_swap_in`, with what the system refuses (no space, no permission) as one line."""
    try:
        return _swap_in(target, fill, spare_root, may_replace, adopt)
    except OSError as e:
        where = f" ({e.filename})" if e.filename else ""
        raise OutputError(f"cannot write the {what} {target}: {e.strerror or e}{where}; the last one is as it was") from None


def _swap_in(
    target: Path,
    fill: Callable[[Path], tuple[set[str], T]],
    spare_root: Path | None = None,
    may_replace: Callable[[Path], None] | None = None,
    adopt: Callable[[Path], bool] | None = None,
) -> T:
    """Run ``fill`` on a temporary sibling of ``target`` (it returns the names it wrote and a
    result), swap the sibling in, get rid of the dataset it replaced, and return fill's result.

    With ``spare_root`` (a directory of the cache), the replaced dataset is not deleted but kept
    there, and the next write starts from it: its files are rewritten in place and the ones it no
    longer needs removed. On ext4, creating 8,000 files within minutes of deleting 8,000 others
    costs 1.5-2.5 s of kernel time (the allocator steps over recently freed inodes) against
    0.2 s otherwise; a crawl that recycles its files never pays it. Nothing of the spare is read:
    it only lends its inodes, so a damaged or missing spare only costs that time. ``adopt(spare)``
    False: the spare would lend nothing to this write (see :func:`_spare_lends`); it starts empty,
    and the spare stays as it is while the dataset replaced is deleted.
    """
    with dataset_lock(target):
        recover(target)
        if may_replace is not None:
            may_replace(target)
        spare = _spare_for(target, spare_root)
        declined = spare is not None and adopt is not None and not adopt(spare)
        tmp = _adopt(spare, target) if spare is not None and not declined else None
        recycled = tmp is not None
        if declined:
            spare = None  # kept as it is for a write it can lend to: the replaced dataset is deleted
        if tmp is None:
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}{TMP_MARK}", dir=target.parent))
        try:
            written, result = fill(tmp)
            if recycled:
                _prune(tmp, written)
            os.chmod(tmp, 0o755)
            if target.exists():
                if _exchange(tmp, target):  # one atomic step: target is always a whole dataset
                    _retire(tmp, spare)  # tmp now holds the old dataset
                else:
                    old = Path(tempfile.mkdtemp(prefix=f".{target.name}{OLD_MARK}", dir=target.parent))
                    os.replace(target, old)
                    os.replace(tmp, target)
                    _retire(old, spare)
            else:
                os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return result


def _spare_for(target: Path, spare_root: Path | None) -> Path | None:
    """Where the dataset a write replaces waits for the next write of ``target``: in the cache,
    when that is on the same file system (a spare can only lend its files by being renamed)."""
    if spare_root is None:
        return None
    try:
        spare_root.mkdir(parents=True, exist_ok=True)
        if os.stat(spare_root).st_dev != os.stat(target.parent).st_dev:
            return None
    except OSError:
        return None
    return spare_root / hashlib.sha256(os.fsencode(target.resolve())).hexdigest()[:16]


def _adopt(spare: Path, target: Path) -> Path | None:
    """Rename the spare into place as the temporary directory; None when there is none fit to use
    (only real directories: a symlinked ``errors`` would send the writes elsewhere)."""
    try:
        if not (stat.S_ISDIR(os.lstat(spare).st_mode)):
            return None
        errors_dir = spare / ERRORS
        if os.path.lexists(errors_dir) and not stat.S_ISDIR(os.lstat(errors_dir).st_mode):
            shutil.rmtree(spare, ignore_errors=True)
            return None
        tmp = target.parent / f".{target.name}{TMP_MARK}{os.urandom(6).hex()}"
        os.rename(spare, tmp)
        return tmp
    except OSError:
        return None


def _prune(tmp: Path, keep: set[str]) -> None:
    """Remove what a recycled spare held that this dataset does not (entries gone, stray files)."""
    root = len(str(tmp)) + 1
    stack = [str(tmp)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                rel = entry.path[root:].replace(os.sep, "/")
                if entry.is_dir(follow_symlinks=False):
                    if any(k.startswith(rel + "/") for k in keep):
                        stack.append(entry.path)
                    else:
                        shutil.rmtree(entry.path)
                elif rel not in keep:
                    os.unlink(entry.path)


def _retire(old: Path, spare: Path | None) -> None:
    """The replaced dataset: kept as the spare when there is a place for it, else deleted."""
    if spare is not None:
        try:
            if os.path.lexists(spare):
                shutil.rmtree(spare)
            os.rename(old, spare)
            return
        except OSError:
            pass
    shutil.rmtree(old, ignore_errors=True)


#: Below this many records to make (not kept) a second process costs more than it saves.
PARALLEL_MIN_RECORDS = 1_000


def publish(
    target: Path,
    records: Sequence[RecordData],
    manifest: Manifest,
    extra: Callable[[], Extra] | None = None,
    jobs: int = 1,
    spare_root: Path | None = None,
    max_bytes: int | None = None,
    reuse: Reuse | None = None,
    inodes: Mapping[str, Identity] | None = None,
) -> Published:
    """``write_dataset(target, render_files(records, manifest, extra()))``, with the records'
    files rendered, validated, hashed and written by ``jobs`` processes; the directory and the
    completed manifest.

    Those are most of a crawl's tail (8,000 files for vLLM). The helpers are forked, so they
    read the records without copying them, and send back only each file's digest, its
    errors.jsonl line and its schema problems; this process does its own share of the records,
    the other documents and the manifest. The bytes written are exactly what the serial path
    writes (a test holds the two equal), and a failure anywhere leaves the old dataset as it was.
    ``extra`` makes the further documents: a function, so that it runs while the helpers render.
    ``spare_root``: see :func:`_swap_in`. A file larger than ``max_bytes`` is OverLimit, raised
    before the swap. ``reuse``: the records kept from the dataset in place, whose files
    (``inodes``: the identity, ``record_memo.identity``, of each as it was read) are linked into the new dataset rather
    than written again, see :func:`_link_kept`.
    """
    # A kept record costs a helper no work worth its fork (its file is the previous one's bytes):
    # a crawl that keeps nearly every record, the daily sync's, paid 150-250 MB of pages a forked
    # helper copies, for ~0.1 s, on vLLM.
    fresh = len(records) if reuse is None else sum(1 for r in records if r["id"] not in reuse.kept and r["id"] not in reuse.vouched)
    # (a crawl's records: none retired, so its lines are in id order, as each block packs them)
    parallel = not (jobs <= 1 or fresh < PARALLEL_MIN_RECORDS or not forked.available() or any(map(is_retired, records)))

    def fill(tmp: Path) -> tuple[set[str], Manifest]:
        if reuse is not None:
            reuse.linked.clear()
            reuse.linked.update(_link_kept(tmp, target, inodes or {}))
        if parallel:
            written, completed = _fill_parallel(tmp, records, manifest, extra, jobs, max_bytes, reuse)
        else:
            written, completed = _write_rendered(tmp, _render(records, manifest, extra() if extra else None, max_bytes, reuse, jobs))
        return written | (reuse.linked if reuse is not None else set()), completed

    if parallel:
        _check_ids(records)
    # Everything alive now (the records, the crawl's results) outlives the write, and the write
    # itself makes no garbage cycles to speak of: no collection runs during it (full ones walked
    # every record again, 0.4-0.6 s of a cold crawl's write, and in a forked helper each walk
    # copies the pages it touches). Not gc.freeze(): what was garbage already would wait in the
    # permanent generation and then in the oldest one, long after the write.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return Published(target, _write_swap(target, fill, spare_root, adopt=lambda spare: _spare_lends(spare, records, inodes or {})))
    finally:
        if collecting:
            gc.enable()


#: How many kept records' files of a spare are looked at to tell whether it is the dataset in place's.
SPARE_SAMPLE = 16


def _spare_lends(spare: Path, records: Sequence[RecordData], inodes: Mapping[str, Identity]) -> bool:
    """Whether a write that links ``inodes`` (the kept records' files) should start from the spare.
    Not when most records are linked and the spare's files are not theirs (a dataset in place
    copied, checked out or restored: other inodes): :func:`_link_kept` would unlink each of the
    spare's files to put the link there, which costs more kernel time than linking into an empty
    directory, and the few records written gain little from recycled inodes. Nor is that spare
    replaced by the dataset this write replaces: deleting a spare frees every inode of it (as much
    kernel time again), while the replaced dataset's files are mostly links to the new one's, cheap
    to delete. Its files are only looked at, by a sample of the kept ids in sorted order."""
    if 2 * len(inodes) <= len(records) or not os.path.lexists(spare):
        return True
    sample = sorted(inodes)[:SPARE_SAMPLE]
    theirs = 0
    for rid in sample:
        try:
            st = os.lstat(f"{spare}/{record_file(rid)}")
        except OSError:
            continue
        theirs += (st.st_dev, st.st_ino) == inodes[rid][:2]
    return 2 * theirs > len(sample)


def _link_kept(tmp: Path, target: Path, inodes: Mapping[str, Identity]) -> set[str]:
    """Put each kept record's file of ``target`` into ``tmp`` as a hard link (relative paths of
    those in place): unchanged records cost no write, and the dataset the crawl replaces is not
    touched. Only the very regular file the record was read from is linked (same device and
    inode, not a symlink, in ``target``'s own errors directory), unchanged since (same size and modification and change times: a
    file edited in place after it was compared keeps its inode, and its edit would be taken
    over); a file of a recycled spare that is already that file stays. A file
    with other links is never written through (:func:`_put`), so neither dataset can change the
    other's files."""
    linked: set[str] = set()
    if not inodes:
        return linked
    try:
        if not stat.S_ISDIR(os.lstat(f"{target}/errors").st_mode):
            return linked  # a symlink: its files are outside the dataset, which others may change
    except OSError:
        return linked
    try:
        (tmp / ERRORS).mkdir()
        recycled = False  # made just now, empty: nothing in a place to look at
    except FileExistsError:
        recycled = True
    for rid, inode in inodes.items():
        rel = record_file(rid)
        source, place = f"{target}/{rel}", f"{tmp}/{rel}"
        try:
            st = os.lstat(source)
            if not stat.S_ISREG(st.st_mode) or identity(st) != inode:
                continue
            if recycled:
                try:
                    there = os.lstat(place)
                    if (there.st_dev, there.st_ino) == inode[:2]:
                        linked.add(rel)
                        continue
                    _remove(place)
                except FileNotFoundError:
                    pass
            os.link(source, place, follow_symlinks=False)
        except OSError:  # not linkable (another file system, a limit): it is written instead
            continue
        linked.add(rel)
    return linked


class _Blocks:
    """The next block of records to write, claimed under a lock by the processes that share it
    (made before they fork: the counter lives in shared memory). A block ends where a gzip member
    of errors.jsonl.gz does (``jsonl.spans``), so its writer compresses its own members."""

    def __init__(self, ids: Sequence[str], jobs: int) -> None:
        import multiprocessing

        # Small enough that the last blocks even out the processes' finish, large enough that
        # claiming costs nothing: a few dozen blocks each.
        size = max(1, len(ids) // (32 * jobs))
        bounds = [0]
        for start, _ in jsonl.spans(ids)[1:]:
            if start - bounds[-1] >= size:
                bounds.append(start)
        self.bounds = [*bounds, len(ids)] if ids else [0]
        self.next = multiprocessing.Value("q", 0)

    def take(self) -> tuple[int, int] | None:
        with self.next.get_lock():
            n = self.next.value
            if n >= len(self.bounds) - 1:
                return None
            self.next.value = n + 1
        return self.bounds[n], self.bounds[n + 1]


class _Block(NamedTuple):
    """What a block of records written hands back: each record file's digest, its errors.jsonl
    line's digest and size, the schema problems, the sizes of the record files larger than the
    limit, and the block's gzip members (``jsonl.packed``), not the lines themselves."""

    digests: list[bytes]
    line_digests: list[bytes]
    line_sizes: list[int]
    problems: list[Problem]
    over: dict[str, int]
    members: list[tuple[bytes, bytes]]


def _write_blocks(tmp: Path, records: Sequence[RecordData], blocks: _Blocks, max_bytes: int | None, reuse: Reuse | None = None) -> list[tuple[int, _Block]]:
    """Blocks of records written (:func:`_write_records`) until none is left, with their first index."""
    done: list[tuple[int, _Block]] = []
    while (block := blocks.take()) is not None:
        start, end = block
        done.append((start, _write_records(tmp, records[start:end], max_bytes, reuse)))
    return done


def _write_records(tmp: Path, records: Sequence[RecordData], max_bytes: int | None, reuse: Reuse | None = None) -> _Block:
    """Render, check and write records' files, and compress their errors.jsonl lines (see :class:`_Block`)."""
    digests, lines, line_digests, line_sizes, problems = [], [], [], [], []
    over: dict[str, int] = {}
    root = str(tmp)
    for record in records:
        done = _render_record(record, reuse)
        if done.data is not None and (reuse is None or done.rel not in reuse.linked):
            _put(f"{root}/{done.rel}", done.data)
        digests.append(done.digest)
        lines.append(done.line)
        line_digests.append(done.line_digest)
        line_sizes.append(done.line_size)
        problems += done.problems
        if max_bytes is not None and done.size > max_bytes:
            over[done.rel] = done.size
    members = jsonl.packed(
        [r["id"] for r in records], lines, previous=reuse.members if reuse is not None else None, line_digests=line_digests, make=_line_maker(records, reuse)
    )
    return _Block(digests, line_digests, line_sizes, problems, over, members)


def _fill_parallel(
    tmp: Path,
    records: Sequence[RecordData],
    manifest: Manifest,
    extra: Callable[[], Extra] | None,
    jobs: int,
    max_bytes: int | None,
    reuse: Reuse | None = None,
) -> tuple[set[str], Manifest]:
    """Write the dataset into ``tmp`` with ``jobs`` processes: the names written and the completed manifest."""
    (tmp / ERRORS).mkdir(exist_ok=True)
    check("record", records[0], "", engine="fast")  # build the validator once, before the fork
    # The records go in blocks to whichever process is free: this one first makes index.json and
    # search.json, whose cost depends on the row memo, and a fixed split left one process idle
    # for a third or more of the step whichever way it was tuned.
    claim = _Blocks([r["id"] for r in records], jobs)
    helpers: list[forked.Helper] = []
    try:
        for _ in range(1, jobs):
            helpers.append(forked.start(functools.partial(_write_blocks, tmp, records, claim, max_bytes, reuse)))
        digests: dict[str, bytes] = {}
        sizes: dict[str, int] = {}
        problems: list[Problem] = []
        index = _index(records, manifest, reuse)
        for name, (schema, document) in _documents(index, extra() if extra else None).items():
            data, found = _document(name, schema, document)
            problems += found
            _put(f"{tmp}/{name}", data)
            digests[name] = hashlib.sha256(data).digest()
            sizes[name] = len(data)
        blocks = _write_blocks(tmp, records, claim, max_bytes, reuse)
    finally:  # always wait for the helpers, whatever happened here
        answers = [forked.finish(helper) for helper in helpers]
    for answer in answers:
        blocks += forked.value(answer, "writing the dataset")
    line_sizes: list[int] = []
    line_digests = {}
    parts: list[tuple[bytes, bytes]] = []
    for start, block in sorted(blocks, key=lambda block: block[0]):
        for i, digest in enumerate(block.digests):
            digests[record_file(records[start + i]["id"])] = digest
            line_digests[records[start + i]["id"]] = block.line_digests[i]
        line_sizes += block.line_sizes
        problems += block.problems
        sizes.update(block.over)
        parts += block.members
    ids = [r["id"] for r in records]
    packed, layout = jsonl.join(parts)
    sizes[jsonl.NAME] = len(packed)
    _check_sizes(max_bytes, sizes, ids, line_sizes)
    _put(f"{tmp}/{jsonl.NAME}", packed)
    digests[jsonl.NAME] = hashlib.sha256(packed).digest()
    data, completed = _finish_manifest(manifest, digests, problems, max_bytes)
    if reuse is not None:
        _report(reuse, digests, line_digests, layout)
    _put(f"{tmp}/{MANIFEST}", data)
    return set(digests) | {MANIFEST}, completed
