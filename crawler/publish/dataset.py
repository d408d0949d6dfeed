"""Reading a written dataset back: the one reader every consumer command uses.

A dataset directory is input like any other: whoever wrote it may not be errcat, so nothing of it
is used before the pydantic models (``records``, ``search``) have validated it. Ids then match
``ID_PATTERN`` (they become file names and links), owners and names are single path segments,
and every permalink is https on the repository's own host. Anything else is a ``DataError``: one
line naming the file (and the line, for ``errors.jsonl.gz``), exit 1, never a traceback.

Files are opened without following them into devices or pipes (a FIFO would block forever) and
read at most ``MAX_DOCUMENT_BYTES`` a document, so a hostile dataset costs bounded time and
memory; ``errors.jsonl.gz`` is streamed a record at a time, and decompressed within a bound.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar, cast

import orjson
from pydantic import BaseModel, ValidationError

from crawler.base.dataset_files import CARRIED, ERRORS, FOREIGN, INDEX, MANIFEST, RECORDS, SEARCH
from crawler.base.errors import DataError, UsageError
from crawler.base.progress import Progress, quiet, task
from crawler.base.sink import visible
from crawler.model.records import (
    ID_PATTERN,
    ID_PREFIX_PATTERN,
    OLDER_SCHEMA_VERSIONS,
    Index,
    Manifest,
    Provenance,
    Record,
    RepoRef,
    off_repository,
)
from crawler.model.search import SearchIndex
from crawler.model.shapes import RecordData
from crawler.publish import jsonl, migrate
from crawler.publish.dataset_dirs import datasets_under
from crawler.publish.record_memo import Identity, identity
from crawler.publish.validate import check

#: The largest document (or ``errors.jsonl`` line) read: vLLM's largest is search.json, 11 MB.
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024

_ID = re.compile(ID_PATTERN)
_PREFIX = re.compile(ID_PREFIX_PATTERN)

M = TypeVar("M", bound=BaseModel)


# --------------------------------------------------------------------------- reading files


def printable(text: str, width: int = 80) -> str:
    """Hostile text in an error message: escaped to printable ASCII and cut short."""
    shown = "".join(c if c.isascii() and c.isprintable() else ascii(c)[1:-1] for c in text[:width])
    return shown + ("..." if len(text) > width else "")


def _why(exc: ValidationError) -> str:
    """The first problem pydantic found, as ``field.path: message``; values are not echoed."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return (f"{printable(where)}: " if where else "") + printable(first["msg"], 200) + more


def named(path: Path | str) -> str:
    """A dataset's path in the one line an error is: a dataset's directories and files are named
    by whoever made it (an artifact), so a newline or a control character in one is escaped."""
    return visible(str(path))


@contextmanager
def _open(path: Path) -> Iterator[IO[bytes]]:
    """A regular file for reading; a pipe, device, directory or missing file is a DataError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise DataError(f"{named(path)}: cannot read: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DataError(f"{named(path)}: not a regular file")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def _read(path: Path) -> bytes:
    with _open(path) as fh:
        data = fh.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DataError(f"{named(path)}: larger than {MAX_DOCUMENT_BYTES} bytes")
    return data


def _parse(model: type[M], data: bytes, where: str, what: str) -> M:
    """Strict: errcat writes exact JSON types, so nothing is coerced (a line "7" stays wrong)."""
    try:
        return model.model_validate_json(data, strict=True)
    except ValidationError as exc:
        raise DataError(f"{where}: not a valid {what}: {_why(exc)}") from None


def load_manifest(dataset: Path) -> Manifest:
    """The manifest; one of an older schema is read as this one (``migrate``), as is every
    document of its dataset."""
    path = dataset / MANIFEST
    return _parse(Manifest, migrate.document_bytes(_read(path)), named(path), "manifest")


def schema_of(dataset: Path) -> str | None:
    """The schema version the dataset's manifest says it is of, as written (None when it cannot
    be read): a reader that keeps files as they are keeps none of another schema."""
    try:
        return _written_schema(_read(dataset / MANIFEST))
    except DataError:
        return None


def _written_schema(data: bytes) -> str | None:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    version = document.get("schema_version") if isinstance(document, dict) else None
    return version if isinstance(version, str) else None


class Placed(NamedTuple):
    """A dataset's manifest read once for every question a sync asks of it: the manifest (read
    as this schema has it, ``load_manifest``) and the schema version it says it is of, as
    written (``schema_of``)."""

    manifest: Manifest
    schema: str | None


def load_placed(dataset: Path) -> Placed:
    """:class:`Placed` of the dataset, from one read of its manifest (a DataError as ``load_manifest``'s)."""
    path = dataset / MANIFEST
    data = _read(path)
    return Placed(_parse(Manifest, migrate.document_bytes(data), named(path), "manifest"), _written_schema(data))


def load_index(dataset: Path) -> Index:
    path = dataset / INDEX
    return _parse(Index, migrate.document_bytes(_read(path)), named(path), "index")


def load_record(path: Path) -> Record:
    """One ``errors/<id>.json``; its id must be its file name."""
    record = _parse(Record, migrate.record_bytes(_read(path)), named(path), "record")
    if record.id != path.stem:
        raise DataError(f"{named(path)}: the record's id is {record.id}, not the file's name")
    return record


def iter_records(dataset: Path, manifest: Manifest | None = None) -> Iterator[Record]:
    """Every record of ``errors.jsonl.gz``, one line at a time, in file order. Each must be of the
    manifest's repository (so its permalinks are on that repository's host), and no id may come
    twice.

    Lines are split on ``\\n`` only (a message may hold U+2028); blank lines are skipped.
    """
    manifest = manifest or load_manifest(dataset)
    tally = _Tally(manifest)
    for where, line in _record_lines(dataset):
        record = _parse(Record, migrate.record_bytes(line), where, "record")
        if record.repo != manifest.repo:
            raise DataError(f"{where}: the record is of another repository than the manifest's")
        p = record.provenance
        tally.add(record.id, record.history is not None and record.history.retired, p.repo, p.commit, p.commit_date, where)
        yield record
    tally.check(dataset)


def iter_record_data(
    dataset: Path,
    manifest: Manifest | None = None,
    valid: set[bytes] | None = None,
    known: frozenset[bytes] = frozenset(),
    lines: dict[str, tuple[bytes, int]] | None = None,
    carried: Callable[[bytes], Mapping[str, Any] | None] | None = None,
    unread: dict[str, tuple[bytes, int, Mapping[str, Any]]] | None = None,
    skip: Sequence[jsonl.Member] = (),
    skipped: list[int] | None = None,
) -> Iterator[RecordData]:
    """:func:`iter_records` as plain data (what the crawl's and the history's stages pass), for a
    reader of whole datasets: building a model of every record and dumping it again cost a
    history fold 1.7 s of CPU per vLLM release, against 0.5 s for this. Held to the same rules:
    each line is checked against the record schema (which carries the models' patterns), its
    repository must be the manifest's, and its links on that repository
    (``records.off_repository``, the record model's own check). ``valid``: filled with the
    ``jsonl.line_digest`` of each line found valid against the record schema (``writer.Reuse.valid_lines``).
    ``known``: the digests of bytes this errcat found valid against this record schema before
    (``validated.load``: validation is a function of the bytes and the schema alone); a line of
    one of them is not checked against the schema again (the other checks are made). ``lines``:
    filled with each valid record's line digest and size, by id (a line migrated from an older
    schema has none: it is not the line errcat writes). ``carried``: for a line's digest, what
    errcat kept of the retired record it rendered and validated that line of
    (``versions.carried``: its id and provenance), or None; such a line is not parsed nor yielded,
    but held to the manifest by those facts and put in ``unread`` by id (its digest, its size
    and the facts). ``skip``: gzip members of errors.jsonl.gz (its retired part, as ``versions.carried``
    recorded them) whose lines are all such lines: where their very bytes are, they are not even
    decompressed (``jsonl.iter_lines_skipping``), each line taken by its recorded digest; ``skipped``:
    its one number counts those lines."""
    manifest = manifest or load_manifest(dataset)
    repo = manifest.repo
    expected = repo.model_dump(mode="json")
    tally = _Tally(manifest)
    for where, line in _record_lines_skipping(dataset, skip if carried is not None and unread is not None else ()):
        seen: bytes | None = None
        if isinstance(line, jsonl.Skipped):
            assert carried is not None and unread is not None
            facts = carried(line.digest)
            if facts is None:  # (a member is left compressed only when every line of it is carried)
                raise DataError(f"{where}: the catalogue's memo changed during the sync; run it again")
            tally.add(facts["id"], True, facts["repo"], facts["commit"], facts["commit_date"], where)
            unread[facts["id"]] = (line.digest, line.size, facts)
            if valid is not None:
                valid.add(line.digest)
            if skipped is not None:
                skipped[0] += 1
            continue
        if carried is not None and unread is not None:
            seen = jsonl.line_digest(line)
            facts = carried(seen)
            if facts is not None:
                tally.add(facts["id"], True, facts["repo"], facts["commit"], facts["commit_date"], where)
                unread[facts["id"]] = (seen, len(line), facts)
                if valid is not None:
                    valid.add(seen)
                continue
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise DataError(f"{where}: not a valid record: {printable(str(exc), 200)}") from None
        migrated = migrate.is_previous(data)
        if migrated:
            data = migrate.record(data)
        digest = (seen or jsonl.line_digest(line)) if (valid is not None or known) and not migrated else None
        problems = [] if digest is not None and digest in known else check("record", data, where, engine="fast")
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            first = problems[0]
            raise DataError(f"{where}: not a valid record: {printable(first.pointer)}: {printable(first.message, 200)}{more}")
        if valid is not None and digest is not None:
            valid.add(digest)
        if lines is not None and digest is not None:
            lines[data["id"]] = (digest, len(line))
        if data["repo"] != expected:
            raise DataError(f"{where}: the record is of another repository than the manifest's")
        why = off_repository(
            repo,
            (data["location"]["permalink"], *(site["permalink"] for site in data["sites"])),
            (ev["url"] for ev in (data.get("explanation") or {}).get("evidence", ())),
        )
        if why:
            raise DataError(f"{where}: not a valid record: {printable(why, 200)}")
        p = data["provenance"]
        tally.add(data["id"], bool((data.get("history") or {}).get("retired")), p["repo"], p["commit"], p["commit_date"], where)
        yield cast("RecordData", data)  # of the record schema, checked above
    tally.check(dataset)


def record_model(data: RecordData, where: str) -> Record:
    """A record of plain data (one :func:`iter_record_data` read, or a crawl made) as the model,
    held to the model's rules as a record read from a file is: a DataError naming ``where``
    when it breaks one."""
    return _parse(Record, orjson.dumps(data), where, "record")


def record_lines(dataset: Path) -> Iterator[tuple[str, bytes]]:
    """(where, line) of each non-blank line of ``errors.jsonl.gz``, unparsed (bounded as every read is)."""
    return _record_lines(dataset)


def _record_lines(dataset: Path) -> Iterator[tuple[str, bytes]]:
    """(where, line) of each non-blank line of ``errors.jsonl.gz``."""
    path = dataset / RECORDS
    with _open(path) as fh:
        for n, line in jsonl.iter_lines(fh, named(path), MAX_DOCUMENT_BYTES):
            if line.strip():
                yield f"{named(path)}:{n}", line


def _record_lines_skipping(dataset: Path, skip: Sequence[jsonl.Member]) -> Iterator[tuple[str, bytes | jsonl.Skipped]]:
    """:func:`_record_lines`, but the lines of the members of ``skip`` left compressed where their
    very bytes are, each as ``jsonl.Skipped`` (see ``iter_record_data``)."""
    if not skip:
        yield from _record_lines(dataset)
        return
    path = dataset / RECORDS
    with _open(path) as fh:
        data = fh.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DataError(f"{named(path)}: larger than {MAX_DOCUMENT_BYTES} bytes")
    for n, line in jsonl.iter_lines_skipping(data, named(path), MAX_DOCUMENT_BYTES, skip):
        if isinstance(line, jsonl.Skipped) or line.strip():
            yield f"{named(path)}:{n}", line


class _Tally:
    """What the records of ``errors.jsonl.gz`` say of the manifest, gathered as they are read, so
    that a reader of every record (``render``, ``history``, ``sync``, ``adopt``) refuses a manifest
    that lies about them: no id twice; each record's provenance of the manifest's repository, and
    one pinned at the manifest's commit of its date (a crawl pins fresh records there); and once
    all are read (:meth:`check`), the manifest's counts those the records make."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self.slug = f"{manifest.repo.owner}/{manifest.repo.name}"
        self.seen: set[str] = set()
        self.retired = 0

    def add(self, rid: str, retired: bool, repo: str, commit: str, commit_date: str | None, where: str) -> None:
        if rid in self.seen:
            raise DataError(f"{where}: id {rid} occurs twice")
        self.seen.add(rid)
        self.retired += retired
        if repo != self.slug:
            raise DataError(f"{where}: the record's provenance names {printable(repo)}, not the manifest's {self.slug}")
        if commit == self.manifest.commit and commit_date != self.manifest.commit_date:
            raise DataError(
                f"{where}: the record's commit {commit} is dated {printable(str(commit_date))}, the manifest's {printable(str(self.manifest.commit_date))}"
            )

    def check(self, dataset: Path) -> None:
        """Every count of the manifest the records make: ``entries`` (the live ones) and
        ``retired``; and ``skipped``, the manifest's own list. (``files``, ``parsed``, ``sites``,
        ``bare_asserts``, ``reraises`` and ``omitted`` count what the crawl read or left out: no
        record holds them.)"""
        counts = self.manifest.counts
        found = {"entries": len(self.seen) - self.retired, "retired": self.retired, "skipped": len(self.manifest.skipped)}
        for name, count in found.items():
            if getattr(counts, name) != count:
                held = (
                    f"its skipped lists {count:,}" if name == "skipped" else f"{RECORDS} holds {count:,} {'retired' if name == 'retired' else 'live'} record(s)"
                )
                raise DataError(f"{named(dataset / MANIFEST)}: counts.{name} is {getattr(counts, name):,}, but {held}")


def load_records(dataset: Path, manifest: Manifest | None = None, progress: Progress = quiet, label: str | None = None) -> list[Record]:
    """Every record of a dataset, in file order (see ``iter_records``)."""
    total = manifest.counts.entries + manifest.counts.retired if manifest is not None else None
    records = []
    with task(progress, f"reading {label or dataset}", total, "records") as reading:
        for record in iter_records(dataset, manifest):
            records.append(record)
            reading.advance()
    return records


def load_record_data(
    dataset: Path, manifest: Manifest, progress: Progress = quiet, label: str | None = None, known: frozenset[bytes] = frozenset()
) -> list[RecordData]:
    """Every record of a dataset as plain data (:func:`iter_record_data`), for a reader that
    needs no model of each: building 11,590 models of vLLM's records cost 4.7 s of CPU, and
    dumping them to plain data again 1.3 s, against 2.1 s for this. A damaged dataset is refused
    with the very line :func:`load_records` gives (the models read it again, on that path only).
    ``known``: :func:`iter_record_data`'s (lines this errcat validated before, not checked against
    the schema again)."""
    total = manifest.counts.entries + manifest.counts.retired
    records: list[RecordData] = []
    try:
        with task(progress, f"reading {label or dataset}", total, "records") as reading:
            for record in iter_record_data(dataset, manifest, known=known):
                records.append(record)
                reading.advance()
    except DataError:
        load_records(dataset, manifest)  # raises its own DataError for the same damage
        raise
    return records


def load_search_index(dataset: Path, read: tuple[Manifest, list[Record]] | None = None) -> SearchIndex:
    """The dataset's search.json; built from errors.jsonl.gz when it has none (``errcat history``
    writes none), or from ``read``, its manifest and records when the caller has them."""
    path = dataset / SEARCH
    if path.exists() or path.is_symlink():
        return _parse(SearchIndex, migrate.document_bytes(_read(path)), named(path), "search index")
    from crawler.catalogue.search import build_search_index

    manifest, records = read or (load_manifest(dataset), None)
    records = records if records is not None else load_records(dataset, manifest)
    # in id order, as search.json is (errors.jsonl.gz holds a history's retired records last)
    return build_search_index(sorted(records, key=lambda r: r.id), f"{manifest.repo.owner}/{manifest.repo.name}", manifest.commit)


# --------------------------------------------------------------------------- whole datasets


@dataclass
class Dataset:
    """A dataset read and validated: its manifest and records (live and retired, file order)."""

    path: Path
    manifest: Manifest
    records: list[Record]
    by_id: dict[str, Record] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {r.id: r for r in self.records}

    @property
    def repo(self) -> str:
        return f"{self.manifest.repo.owner}/{self.manifest.repo.name}"

    @property
    def commit(self) -> str:
        """The upstream commit the permalinks point at (a release's own, else the crawled one)."""
        return self.manifest.upstream_commit or self.manifest.commit


def open_dataset(path: Path, progress: Progress = quiet, label: str | None = None) -> Dataset:
    """One dataset directory: the manifest, then every record, each validated."""
    manifest = load_manifest(path)
    return Dataset(path, manifest, load_records(path, manifest, progress, label))


# A page links to its record's file "as JSON", so that file must be the very record the page shows.
def check_record_files(dataset: Path, lines: Sequence[RecordData] | None = None) -> int:
    """The number of record files checked; a DataError naming the first ``errors/<id>.json`` of a
    line of ``errors.jsonl.gz`` that is missing, not a regular file (a symlink included), not
    JSON, or another record than the line's (compared as JSON values, not bytes: layout is no
    part of a record). The lines themselves are validated by whoever read them first.

    ``lines``: the records of ``errors.jsonl.gz`` as a reader of plain data just read them, every
    line in file order (:func:`load_record_data`), so they are not decompressed and parsed again
    (that was 1.2 s of the 1.7 s this took on vLLM's 11,590); on a problem the lines are read
    again, for the line number the error names."""
    if lines is not None:
        for record in lines:
            found = _read_record(str(dataset / ERRORS / f"{record['id']}.json"))
            try:
                same = found is not None and orjson.loads(found[0]) == record
            except orjson.JSONDecodeError:
                same = False
            if not same:
                return check_record_files(dataset)  # names the line and the file
        return len(lines)
    count = 0
    for where, line in _record_lines(dataset):
        try:
            record = orjson.loads(line)
            rid = record["id"]
        except (orjson.JSONDecodeError, TypeError, KeyError):
            raise DataError(f"{where}: not a valid record") from None
        path = dataset / ERRORS / f"{rid}.json"
        found = _read_record(str(path))
        if found is None:
            raise DataError(f"{named(path)}: missing, not a regular file or too large, where {where} has its record")
        try:
            same = orjson.loads(found[0]) == record
        except orjson.JSONDecodeError:
            raise DataError(f"{named(path)}: not valid JSON; {where} has its record") from None
        if not same:
            raise DataError(f"{named(path)}: not the record {where} holds (edited or left over from another crawl)")
        count += 1
    return count


@dataclass
class Consumed:
    """A dataset as ``render`` reads it (see :func:`read_consumed`)."""

    manifest: Manifest
    records: list[Record]  # (empty when read ``plain``: see ``data``)
    search: SearchIndex
    foreign: list[Any]
    data: list[RecordData] | None = None  # the records as plain data, when read ``plain``


def read_consumed(dataset: Path, progress: Progress = quiet, plain: bool = False) -> Consumed:
    """Every document of a dataset read as the consumer commands read them, and held to each other:
    the manifest; every record of ``errors.jsonl.gz`` as the model (``iter_records``: of the
    manifest's repository, links on it, no id twice, the manifest's counts and commit as they
    make them); each ``errors/<id>.json`` the record of its line (:func:`check_record_files`); index.json
    and search.json of the manifest's repository and commit, the index listing the manifest's
    count of entries; foreign.json. ``render`` reads a dataset with this, and ``adopt`` checks an
    artifact with it: whatever a consumer would refuse, adopt has refused first. A DataError
    names the file (and the line) of the first problem. ``plain``: the records are given as plain
    data (``data``), held to the same rules (:func:`load_record_data`), no model made of each."""
    manifest = load_manifest(dataset)
    data = load_record_data(dataset, manifest, progress) if plain else None
    records = load_records(dataset, manifest, progress) if data is None else []
    check_record_files(dataset, data)
    slug, counts = f"{manifest.repo.owner}/{manifest.repo.name}", manifest.counts
    index = load_index(dataset)
    _agrees(dataset / INDEX, slug, manifest.commit, index.repo, index.commit)
    rows = (len(index.entries), sum(row.retired for row in index.entries))
    if rows != (counts.entries + counts.retired, counts.retired):
        raise DataError(
            f"{named(dataset / INDEX)}: lists {rows[0]:,} entries ({rows[1]:,} retired), the manifest "
            f"{counts.entries + counts.retired:,} ({counts.retired:,} retired)"
        )
    search = load_search_index(dataset, (manifest, records) if data is None else None)
    if (dataset / SEARCH).exists():
        _agrees(dataset / SEARCH, slug, manifest.commit, search.repo, search.commit)
    return Consumed(manifest, records, search, load_foreign(dataset), data)


def _agrees(path: Path, slug: str, commit: str, repo: str, named_commit: str) -> None:
    """A document's repository and commit are the manifest's."""
    if repo != slug:
        raise DataError(f"{named(path)}: its repository {printable(repo)} is not the manifest's {slug}")
    if named_commit != commit:
        raise DataError(f"{named(path)}: its commit {named_commit[:12]} is not the manifest's {commit[:12]}")


def find_record(root: Path, entry_id: str) -> tuple[Path, Record]:
    """The record with this id, or the one whose id starts with this prefix (at least 4 digits)."""
    if not _PREFIX.fullmatch(entry_id):
        raise UsageError(f"not an entry id (4 to 16 lowercase hex digits): {printable(entry_id)}")
    matches: list[Path] = []
    for dataset in datasets_under(root):
        exact = dataset / ERRORS / f"{entry_id}.json"
        if exact.exists() or exact.is_symlink():
            matches.append(exact)
        elif len(entry_id) < 16:
            matches += sorted(p for p in (dataset / ERRORS).glob(f"{entry_id}*.json") if _ID.fullmatch(p.stem))
    if not matches:
        raise UsageError(f"no entry {entry_id} under {root}")
    if len(matches) > 1:
        raise UsageError(f"{entry_id} is ambiguous: " + ", ".join(p.stem for p in matches[:5]))
    load_manifest(matches[0].parent.parent)  # its dataset's, of this schema_version (as diff and render hold)
    return matches[0], load_record(matches[0])


def load_foreign(dataset: Path) -> list[Any]:
    """The dataset's foreign errors (``foreign.json``), validated like its other documents ([]
    when it has none); DataError naming the file when it is not a valid list."""
    from crawler.model.records import ForeignList

    path = dataset / FOREIGN
    if not path.is_file():
        return []
    return _parse(ForeignList, _read(path), named(path), "foreign error list").errors


def carried_documents(dataset: Path) -> dict[str, Any]:
    """The curated documents of a written dataset (``dataset_files.CARRIED``: foreign.json) that
    it has, each validated as its reader validates it, as the writer's further documents: what a
    sync or a fold, which render records themselves, writes again beside them."""
    from crawler.model.records import ForeignList

    carried: dict[str, Any] = {}
    for name in sorted(CARRIED):
        if name == FOREIGN and (dataset / FOREIGN).is_file():
            carried[FOREIGN] = ForeignList(errors=load_foreign(dataset)).model_dump(mode="json")
        elif name != FOREIGN:
            raise AssertionError(f"no reader of the carried document {name}")  # a row of dataset_files without one here
    return carried


# --------------------------------------------------------------------------- the previous dataset


@dataclass(frozen=True)
class PreviousRecord:
    """A record file of the dataset a crawl replaces: its bytes and the file's identity (device,
    inode, size, modification and change times, ``record_memo.identity``), for linking it into
    the next dataset unchanged: only the very file read, not written to since (a write in place
    keeps the inode but changes the change time), is linked. Its bytes are hostile: nothing of
    them is used but through :meth:`provenance`, or by comparing them with bytes errcat made
    (:meth:`holds`). A file the record memo vouches for (``record_memo``: unchanged since errcat
    wrote it) comes with the digest of its bytes instead, and is read only when they are needed."""

    data: bytes | None
    inode: Identity
    digest: bytes | None = None  # with data None: the SHA-256 of the file's bytes
    path: str = ""  # with data None: where it is, to read it (:meth:`read`)
    #: With data None: the SHA-256 of the errors.jsonl line errcat wrote with the file, which
    #: stands for the file's bytes (``record_memo``; None for a file hashed as it was read, a
    #: retired record's the sync carries through, ``previous_records``' ``carried``), and the file's size.
    line: bytes | None = None
    size: int = 0

    def holds(self, data: bytes) -> bool:
        """Whether the file's bytes are exactly ``data``."""
        if self.data is None:
            return hashlib.sha256(data).digest() == self.digest
        return data == self.data

    def read(self) -> bytes | None:
        """The file's bytes (read now when the memo vouched for them), None when it is no longer
        the file the memo named."""
        if self.data is not None:
            return self.data
        found = _read_record(self.path)
        if found is None or identity(found[1]) != self.inode or hashlib.sha256(found[0]).digest() != self.digest:
            return None
        return found[0]

    def provenance(self, record_id: str) -> Provenance | None:
        """The provenance the file states, validated by the model; None when the file is not a
        JSON object of that id with one."""
        import orjson

        data = self.read()
        if data is None:
            return None
        try:
            document = orjson.loads(data)
            if not isinstance(document, dict) or document.get("id") != record_id:
                return None
            return Provenance.model_validate(document.get("provenance"), strict=True)
        except (ValueError, ValidationError):
            return None


def previous_records(
    dataset: Path,
    repo: RepoRef,
    memo: Mapping[str, tuple[tuple[int, int, int, int, int], bytes, bytes]] | None = None,
    placed: Placed | None = None,
    carried: Mapping[str, tuple[bytes, int]] | None = None,
) -> dict[str, PreviousRecord]:
    """The record files of the dataset in place, by id, for a crawl of ``repo`` to keep those
    whose content it finds unchanged (``publish.pins``). Hostile input like any dataset: only
    regular files (never through a symlink) named by an id, at most ``MAX_RECORD_BYTES``; nothing
    when the manifest is not a valid one of ``repo``. They are not parsed here: the crawl keeps
    nothing it has not compared byte for byte with what it would write, and reads a file's
    provenance (:meth:`PreviousRecord.provenance`) only when that comparison needs it. A file
    whose identity is the one ``memo`` (``record_memo.Memo.records``) holds for its id is not
    read: the memo's digests stand for its bytes; nor kept in memory when it is another file
    holding those bytes (their SHA-256 is the memo's). ``placed``: the dataset's manifest as the
    caller read it already (``load_placed``), not read again. ``carried``: by id, the SHA-256 and
    size the sync's memo of retired records (``versions.carried``) names for a record file it
    would carry through unread: a file of those bytes (hashed as it is read) is kept as its digest,
    not its bytes (``PreviousRecord.data`` None, ``line`` None), so that a history's sync holds
    none of its retired records' files; any other file is kept as read."""
    try:
        placed = placed or load_placed(dataset)
        found_repo = placed.manifest.repo
        if (found_repo.owner, found_repo.name) != (repo.owner, repo.name):
            return {}
        names = os.listdir(dataset / ERRORS)
    except (DataError, OSError):
        return {}
    if placed.schema in OLDER_SCHEMA_VERSIONS:
        return _migrated_records(dataset, names)
    found: dict[str, PreviousRecord] = {}
    for name in names:
        stem, dot, ext = name.partition(".")
        if ext != "json" or not dot or not _ID.fullmatch(stem):
            continue
        path = f"{dataset}/{ERRORS}/{name}"
        known = memo.get(stem) if memo else None
        if known is not None:
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and identity(st) == known[0]:
                found[stem] = PreviousRecord(None, known[0], known[1], path, known[2], st.st_size)
                continue
        read = _read_record(path)
        if read is None:
            continue
        expected = carried.get(stem) if carried else None
        if expected is not None and len(read[0]) == expected[1] and hashlib.sha256(read[0]).digest() == expected[0]:
            found[stem] = PreviousRecord(None, identity(read[1]), expected[0], path, None, expected[1])
            continue
        if known is not None and hashlib.sha256(read[0]).digest() == known[1]:
            # The bytes errcat wrote with that line, as another file (a copy, a checkout): the
            # line's digest stands for them as for the file itself, and this file is the one to link.
            found[stem] = PreviousRecord(None, identity(read[1]), known[1], path, known[2], len(read[0]))
        else:
            found[stem] = PreviousRecord(read[0], identity(read[1]))
    return found


#: The file identity of a record migrated from an older schema: no file has it, so none is linked.
_NO_FILE: Identity = (-1, -1, -1, -1, -1)


def _migrated_records(dataset: Path, names: list[str]) -> dict[str, PreviousRecord]:
    """:func:`previous_records` of a dataset of an older schema: each file's record as this
    schema has it, in the bytes errcat writes it in (``dumps_record``), so that a record whose
    content is unchanged keeps its pin (its provenance); written anew, never linked (``_NO_FILE``)."""
    from crawler.base.jsonio import dumps_record

    found: dict[str, PreviousRecord] = {}
    for name in names:
        stem, dot, ext = name.partition(".")
        if ext != "json" or not dot or not _ID.fullmatch(stem):
            continue
        read = _read_record(f"{dataset}/{ERRORS}/{name}")
        if read is None:
            continue
        try:
            document = orjson.loads(read[0])
            found[stem] = PreviousRecord(dumps_record(migrate.record(document)) if migrate.is_previous(document) else read[0], _NO_FILE)
        except (orjson.JSONDecodeError, TypeError):
            continue
    return found


def _read_record(path: str) -> tuple[bytes, os.stat_result] | None:
    """A record file's bytes and status, when it is a regular file (not through a symlink) of at
    most ``MAX_RECORD_BYTES``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_RECORD_BYTES:
            return None
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return data, st


def previous_members(dataset: Path, memo: tuple[tuple[int, int, int, int, int], list[tuple[bytes, int, int]], bytes] | None = None) -> dict[bytes, bytes]:
    """The gzip members of the dataset's errors.jsonl.gz in place, by the digest of their content
    (see ``jsonl.split_members``); none when it is not a regular file errcat would read. When the
    file is still the one ``memo`` (``record_memo.Memo.members``) describes, or holds the bytes of
    the digest it names, its members are where errcat put them and hold the lines it recorded:
    they are cut out, not decompressed."""
    from crawler.publish.record_memo import identity

    try:
        with _open(dataset / RECORDS) as fh:
            if os.fstat(fh.fileno()).st_size > MAX_DOCUMENT_BYTES:
                return {}
            data = fh.read()
            if memo is not None and len(data) == memo[0][2] and (identity(os.fstat(fh.fileno())) == memo[0] or hashlib.sha256(data).digest() == memo[2]):
                return jsonl.members_at(data, memo[1])
            return jsonl.split_members(data)
    except (DataError, OSError):
        return {}


#: The largest record file a crawl compares with (vLLM's largest is about 100 KB).
MAX_RECORD_BYTES = 16 * 1024 * 1024
