"""Validate a dataset the way an outside consumer would: the JSON Schemas and a standard validator.

Two engines implement the same JSON Schema 2020-12 check: ``fast`` is jsonschema-rs, what the
crawl uses to check every record it writes and what ``errcat validate`` runs by default;
``reference`` is the Python jsonschema library, what most consumers use (~20x slower over a
whole dataset: 26 s against 1.3 s on vLLM's 8,248 records). Tests show both report the same
problems, record by record and over whole corrupted datasets.

Every problem is collected, not just the first: one per schema error, with the file and the JSON
pointer of the offending value, plus the dataset's own consistency (the index, the record files
and the JSONL dataset name the same ids; a record file is named by its id).
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Self

import jsonschema_rs

from crawler.base.dataset_files import BY_NAME, ERRORS, FILES, INDEX, RECORD_FILE, RECORDS, record_file
from crawler.base.errors import DataError
from crawler.base.progress import Progress, quiet, task
from crawler.base.sink import visible
from crawler.model.records import ID_RE
from crawler.model.schemas import schema_for
from crawler.publish import jsonl


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    pointer: str
    message: str

    def __str__(self) -> str:
        # One line: a file's name is the dataset's (a newline or a control character in it is escaped).
        where = f"{self.file}#{self.pointer}" if self.pointer else self.file
        return visible(f"{where}: {self.message}")


@cache
def validator(name: str) -> Any:
    from jsonschema import (
        Draft202012Validator,  # the reference engine; the crawl never needs it
    )

    schema = schema_for(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@cache
def fast_validator(name: str) -> Any:
    return jsonschema_rs.validator_for(schema_for(name))


def pointer(path: Iterable[Any]) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def _fast_errors(name: str, data: Any) -> Iterable[tuple[Iterable[Any], str]]:
    return ((err.instance_path, err.message) for err in fast_validator(name).iter_errors(data))


def _reference_errors(name: str, data: Any) -> Iterable[tuple[Iterable[Any], str]]:
    return ((err.absolute_path, err.message) for err in validator(name).iter_errors(data))


#: Every engine by the name ``errcat validate --engine`` takes, the default first.
ENGINES: dict[str, Callable[[str, Any], Iterable[tuple[Iterable[Any], str]]]] = {
    "fast": _fast_errors,
    "reference": _reference_errors,
}


def check(name: str, data: Any, file: str, engine: str = "fast") -> list[Problem]:
    """Schema problems of one document, ordered by location."""
    return sorted(Problem(file, pointer(path), message) for path, message in ENGINES[engine](name, data))


#: The most validate reads of one file: errors.jsonl, the largest, is 45 MB for vLLM's 8,248 entries.
MAX_FILE_BYTES = 1 << 30
#: The most it reads of one record file (vLLM's largest is 0.1 MB).
MAX_RECORD_BYTES = 16 << 20

_KINDS = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


class NotRead(Exception):
    """Why a file of the dataset was not read (a problem of the dataset, not of validate)."""


def open_regular(directory: int, name: str, limit: int) -> int:
    """A descriptor of the regular file ``name`` in the open directory ``directory``.

    A dataset is hostile until validated: nothing but a regular file is opened (a FIFO would block
    forever, a symlink to /dev/zero never ends, a symlink may point anywhere), and none larger than
    ``limit`` bytes. Raises NotRead saying why not, FileNotFoundError when it is absent.
    """
    st = os.stat(name, dir_fd=directory, follow_symlinks=False)
    if not stat.S_ISREG(st.st_mode):
        raise NotRead(f"{_KINDS.get(stat.S_IFMT(st.st_mode), 'not a regular file')}, not a regular file; not read")
    if st.st_size > limit:
        raise NotRead(f"{st.st_size:,} bytes, more than the {limit:,} validate reads; not read")
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise NotRead("replaced while being read; not read")
    return fd


def read_regular(directory: int, name: str, limit: int) -> bytes:
    """The bytes of the regular file ``name`` in the open directory ``directory`` (see
    :func:`open_regular`), no more than ``limit`` of them."""
    fd = open_regular(directory, name, limit)
    try:
        chunks, left = [], limit + 1
        while left and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if not left:
        raise NotRead(f"more than the {limit:,} bytes validate reads; not read")
    return b"".join(chunks)


class _Capped(io.RawIOBase):
    """A file's bytes up to ``limit`` (it may grow while read): then a NotRead."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd, self.limit, self.left = fd, limit, limit + 1

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = os.read(self.fd, min(self.left, len(buffer))) if self.left else b""
        self.left -= len(chunk)
        if not self.left:
            raise NotRead(f"more than the {self.limit:,} bytes validate reads; not read")
        buffer[: len(chunk)] = chunk
        return len(chunk)


#: The most problems validate keeps of a dataset; the rest are counted (a hostile errors.jsonl.gz
#: of 1 GiB of "0" lines is 512 million of them).
MAX_PROBLEMS = 1000


class Problems(list[Problem]):
    """The problems of a dataset: the first ``MAX_PROBLEMS`` kept, ``more`` counts the others;
    ``stopped``: the line of errors.jsonl.gz past which it was not checked (None: all of it)."""

    def __init__(self) -> None:
        super().__init__()
        self.more = 0
        self.stopped: int | None = None

    def append(self, problem: Problem) -> None:
        if len(self) < MAX_PROBLEMS:
            super().append(problem)
        else:
            self.more += 1

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.append(problem)

    def __iadd__(self, problems: Iterable[Problem]) -> Self:  # type: ignore[override,misc]
        self.extend(problems)
        return self

    @property
    def total(self) -> int:
        return len(self) + self.more

    @property
    def full(self) -> bool:
        return len(self) >= MAX_PROBLEMS


def _not_read(label: str, exc: NotRead | OSError) -> Problem:
    if isinstance(exc, FileNotFoundError):
        return Problem(label, "", "missing")
    if isinstance(exc, NotRead):
        return Problem(label, "", str(exc))
    return Problem(label, "", f"cannot be read: {exc.strerror or exc}")


def _read(directory: int, name: str, label: str, limit: int = MAX_FILE_BYTES) -> tuple[bytes | None, list[Problem]]:
    try:
        return read_regular(directory, name, limit), []
    except (NotRead, OSError) as exc:
        return None, [_not_read(label, exc)]


def _load(directory: int, name: str, label: str, limit: int = MAX_FILE_BYTES) -> tuple[Any, list[Problem]]:
    data, problems = _read(directory, name, label, limit)
    if data is None:
        return None, problems
    try:
        return _json(data), []
    except (ValueError, UnicodeDecodeError) as exc:
        return None, [Problem(label, "", f"not valid JSON: {exc}")]


def _json(data: bytes | str) -> Any:
    """``json.loads``, whose decoder recurses: arrays nested past the interpreter's recursion
    limit are a ValueError like any other JSON it cannot read."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def validate_dataset(directory: Path, engine: str = "fast", progress: Progress = quiet) -> Problems:
    """Every problem in one dataset directory (the one holding manifest.json), the first
    ``MAX_PROBLEMS`` kept (see :class:`Problems`). Its files are read through an open descriptor
    of the directory (see :func:`read_regular`); errors.jsonl.gz a line at a time."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        problems = Problems()
        problems.append(Problem(".", "", f"cannot be read: {exc.strerror or exc}"))
        return problems
    try:
        return _validate(fd, engine, progress, directory)
    finally:
        os.close(fd)


def _record_files(directory: int) -> tuple[int | None, list[str], list[Problem]]:
    """An open descriptor of ``errors/`` and the ``*.json`` names in it, in order; or why not
    (a symlinked ``errors`` is not followed)."""
    try:
        st = os.stat(ERRORS, dir_fd=directory, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "a file")
            return None, [], [Problem(ERRORS, "", f"{kind}, not a directory; not read")]
        fd = os.open(ERRORS, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    except FileNotFoundError:
        return None, [], []
    except OSError as exc:
        return None, [], [Problem(ERRORS, "", f"cannot be read: {exc.strerror or exc}")]
    try:
        return fd, sorted(name for name in os.listdir(fd) if name.endswith(".json")), []
    except OSError as exc:
        os.close(fd)
        return None, [], [Problem(ERRORS, "", f"cannot be read: {exc.strerror or exc}")]


def _validate(directory: int, engine: str, progress: Progress, shown: Path) -> Problems:
    problems = Problems()
    errors, names, found = _record_files(directory)
    problems += found
    # (a dataset has a line of errors.jsonl.gz per record file: the count of documents is a guess)
    documents = task(progress, f"validating {shown}", 3 + 2 * len(names), "documents")
    with documents:
        loaded: dict[str, Any] = {}
        for file in FILES:
            if file.per_record or file.name == RECORDS:  # a file or a line per record: below
                continue
            loaded[file.name], found = _load(directory, file.name, file.name)
            if not file.required and found == [Problem(file.name, "", "missing")]:
                continue  # (search.json: histories of errcat before it wrote one; foreign.json: only with a curated list)
            problems += found or check(file.schema, loaded[file.name], file.name, engine)
        index = loaded[INDEX]
        documents.advance(3)

        record_ids: set[str] = set()
        try:
            for name in names:
                if errors is None:  # (names come only with an open errors/)
                    break
                documents.advance()
                label = f"{ERRORS}/{name}"
                data, found = _load(errors, name, label, MAX_RECORD_BYTES)
                if found:
                    problems += found
                    continue
                stem = name[: -len(".json")]
                problems += check(BY_NAME[RECORD_FILE].schema, data, label, engine)
                if not ID_RE.fullmatch(stem) or not isinstance(data, dict) or data.get("id") != stem:
                    problems.append(Problem(label, "/id", "file name is not the record's id"))
                record_ids.add(stem)
        finally:
            if errors is not None:
                os.close(errors)

        index_ids = (
            {row.get("id") for row in index["entries"] if isinstance(row, dict)} if isinstance(index, dict) and isinstance(index.get("entries"), list) else None
        )
        jsonl_ids, unlisted = _check_lines(directory, engine, problems, documents, index_ids)

    if index_ids is not None and problems.stopped is None:
        for eid in sorted(index_ids - record_ids, key=str):
            problems.append(Problem(INDEX, "/entries", f"{eid} has no file {record_file(str(eid))}"))
        for eid in sorted(record_ids - index_ids):
            problems.append(Problem(record_file(eid), "", f"not listed in {INDEX}"))
        for eid in sorted((index_ids - jsonl_ids) | unlisted, key=str):
            problems.append(Problem(jsonl.NAME, "", f"{eid} is in one of index.json and {jsonl.NAME} only"))
    return problems


def _check_lines(directory: int, engine: str, problems: Problems, documents: Any, index_ids: set[Any] | None) -> tuple[set[str], set[str]]:
    """Checks errors.jsonl.gz a line at a time into ``problems``; the ids of its lines that the
    index lists, and those it does not (both bounded: the index's ids, and at most
    ``MAX_PROBLEMS`` others). Once ``problems`` holds ``MAX_PROBLEMS``, the rest is not read:
    ``problems.stopped`` says where."""
    listed: set[str] = set()
    unlisted: set[str] = set()
    try:
        fd = open_regular(directory, jsonl.NAME, MAX_FILE_BYTES)
    except (NotRead, OSError) as exc:
        problems.append(_not_read(jsonl.NAME, exc))
        return listed, unlisted
    try:
        with io.BufferedReader(_Capped(fd, MAX_FILE_BYTES)) as fh:
            for n, line in jsonl.iter_lines(fh, jsonl.NAME, MAX_RECORD_BYTES):
                if problems.full:
                    problems.stopped = n - 1
                    break
                documents.advance()
                where = f"{jsonl.NAME}:{n}"
                try:
                    data = _json(line)
                except ValueError as exc:
                    problems.append(Problem(where, "", f"not valid JSON: {exc}"))
                    continue
                problems += check(BY_NAME[RECORDS].schema, data, where, engine)
                if index_ids is not None and isinstance(data, dict) and isinstance(data.get("id"), str):
                    if data["id"] in index_ids:
                        listed.add(data["id"])
                    elif len(unlisted) < MAX_PROBLEMS:
                        unlisted.add(data["id"])
                    else:
                        problems.more += 1
    except DataError as exc:
        problems.append(Problem(jsonl.NAME, "", str(exc).removeprefix(f"{jsonl.NAME}: ")))
    except (NotRead, OSError) as exc:
        problems.append(_not_read(jsonl.NAME, exc))
    finally:
        os.close(fd)
    return listed, unlisted
